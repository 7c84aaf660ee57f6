// RUN: seam-opt %s -split-input-file -verify-diagnostics -ncore-allocate
// RUN: seam-opt %S/Inputs/ncore-big-tile.mlir -ncore-allocate=target=trn2 | FileCheck %s --check-prefix=TRN2
// RUN: not seam-opt %S/Inputs/ncore-big-tile.mlir -ncore-allocate=target=trn9 2>&1 | FileCheck %s --check-prefix=TARGET

// A single tile larger than a partition's SBUF (trn1: 192 KiB = 196608 B)
// is a compile error, not an emulator fault. On trn2 (224 KiB) it fits.
// TRN2: ncore.alloc offset 0 : <sbuf, 128x50000xf32>
// TARGET: ncore-allocate: unknown target 'trn9' (trn1 or trn2)
ncore.program @too_big(%x: !ncore.tile<hbm, 128x50000xf32>) {
  // expected-error@+1 {{tile [128, 50000] x f32 in sbuf needs 200000 bytes per partition, more than the 196608 bytes per partition of SBUF}}
  %t = ncore.alloc : !ncore.tile<sbuf, 128x50000xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x50000xf32>, !ncore.tile<hbm, 128x50000xf32>
}

// -----

// Each tile fits, but both are live at once: the error names the peak.
ncore.program @oversubscribed(%x: !ncore.tile<hbm, 128x30000xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x30000xf32>
  // expected-error@+1 {{SBUF over-subscribed: tile [128, 30000] x f32 in sbuf (120000 bytes per partition) does not fit next to 1 live tiles (240000 bytes live here; peak 240000 of 196608 bytes per partition)}}
  %b = ncore.alloc : !ncore.tile<sbuf, 128x30000xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x30000xf32>, !ncore.tile<hbm, 128x30000xf32>
  ncore.dma_copy %b, %x : !ncore.tile<sbuf, 128x30000xf32>, !ncore.tile<hbm, 128x30000xf32>
  ncore.tensor_tensor add %a, %a, %b : !ncore.tile<sbuf, 128x30000xf32>, !ncore.tile<sbuf, 128x30000xf32>, !ncore.tile<sbuf, 128x30000xf32>
}

