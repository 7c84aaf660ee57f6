// RUN: seam-opt %s -split-input-file -verify-diagnostics -ncore-allocate
// RUN: seam-opt %S/Inputs/ncore-big-tile.mlir -ncore-allocate=target=trn2 | FileCheck %s --check-prefix=TRN2
// RUN: not seam-opt %S/Inputs/ncore-big-tile.mlir -ncore-allocate=target=trn9 2>&1 | FileCheck %s --check-prefix=TARGET

// A single tile larger than a partition's SBUF (trn1: 192 KiB = 196608 B)
// is a compile error, not an emulator fault. On trn2 (224 KiB) it fits.
// TRN2: ncore.alloc offset 0 : <sbuf, 128x50000xf32>
// TARGET: ncore-allocate: unknown target 'trn9' (expected trn1 or trn2)
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

// -----

// Placement fails at one over-subscribed point (b1 + b2 = 200000 bytes)
// while the peak is at another (a1 + a2 = 210000): the error is on the tile
// that did not fit, and a note names where the peak is reached and its
// largest tiles (in a whole model those are rarely the same place).
ncore.program @peak_elsewhere(%x: !ncore.tile<hbm, 128x25000xf32>, %y: !ncore.tile<hbm, 128x27500xf32>) {
  %b1 = ncore.alloc : !ncore.tile<sbuf, 128x25000xf32>
  // expected-error@+1 {{SBUF over-subscribed: tile [128, 25000] x f32 in sbuf (100000 bytes per partition) does not fit next to 1 live tiles (200000 bytes live here; peak 210000 of 196608 bytes per partition)}}
  %b2 = ncore.alloc : !ncore.tile<sbuf, 128x25000xf32>
  ncore.dma_copy %b1, %x : !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<hbm, 128x25000xf32>
  ncore.dma_copy %b2, %x : !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<hbm, 128x25000xf32>
  ncore.tensor_tensor add %b1, %b1, %b2 : !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<sbuf, 128x25000xf32>
  ncore.dma_copy %x, %b1 : !ncore.tile<hbm, 128x25000xf32>, !ncore.tile<sbuf, 128x25000xf32>
  %a1 = ncore.alloc : !ncore.tile<sbuf, 128x25000xf32>
  // expected-note@+1 {{the peak of 210000 bytes per partition is reached here, 2 tiles live; the largest: 110000 bytes}}
  %a2 = ncore.alloc : !ncore.tile<sbuf, 128x27500xf32>
  ncore.dma_copy %a1, %x : !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<hbm, 128x25000xf32>
  ncore.dma_copy %a2, %y : !ncore.tile<sbuf, 128x27500xf32>, !ncore.tile<hbm, 128x27500xf32>
  %a2v = ncore.view %a2 offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x27500xf32> to !ncore.tile<sbuf, 128x25000xf32>
  ncore.tensor_tensor add %a1, %a1, %a2v : !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<sbuf, 128x25000xf32>, !ncore.tile<sbuf, 128x25000xf32>
  ncore.dma_copy %x, %a1 : !ncore.tile<hbm, 128x25000xf32>, !ncore.tile<sbuf, 128x25000xf32>
}
