// RUN: seam-opt %s -split-input-file -ncore-assign-engines -ncore-schedule | FileCheck %s

// A spill store reads a tile, then ncore-allocate gives its bytes to a
// larger tile: its first write (the scalar memset of block 0) does not touch
// them, but the gpsimd memset of block 1 does, while the store may still be
// reading. Writes to a placed tile wait for what used its bytes before it
// was live, found over the hull of all the tile's accesses: bytes 0..512
// here, not the 128x128 window of its first access at byte 0 (which
// looked apart from the store's window of the same shape at byte 256, and
// no write waited for the store or for the load before it).
// CHECK-LABEL: ncore.program @spill_store_then_reuse
// CHECK: ncore.dma_copy %{{.+}}, %[[A:.+]] on sync :
// CHECK-NEXT: ncore.sem_signal 5 on sync
// CHECK: ncore.sem_wait 4 ge 1 on scalar
// CHECK-NEXT: ncore.sem_wait 5 ge 1 on scalar
// CHECK-NEXT: ncore.memset %{{.+}}, 1.000000e+00 on scalar
// CHECK: ncore.sem_wait 4 ge 1 on gpsimd
// CHECK-NEXT: ncore.sem_wait 5 ge 1 on gpsimd
// CHECK-NEXT: ncore.memset %{{.+}}, 2.000000e+00 on gpsimd
ncore.program @spill_store_then_reuse(%x: !ncore.tile<hbm, 128x128xbf16>, %s: !ncore.tile<hbm, 128x128xbf16>) {
  %a = ncore.alloc offset 256 : !ncore.tile<sbuf, 128x128xbf16>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
  ncore.dma_copy %s, %a on sync : !ncore.tile<hbm, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>
  %big = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x1024xbf16>
  %b0 = ncore.view %big offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x1024xbf16> to !ncore.tile<sbuf, 128x128xbf16>
  ncore.memset %b0, 1.0 on scalar : !ncore.tile<sbuf, 128x128xbf16>
  %b1 = ncore.view %big offsets affine_map<() -> (0, 128)> : !ncore.tile<sbuf, 128x1024xbf16> to !ncore.tile<sbuf, 128x128xbf16>
  ncore.memset %b1, 2.0 on gpsimd : !ncore.tile<sbuf, 128x128xbf16>
}

// -----

// The same for the on-chip range of a dependency-boundary call's body (every
// byte of its extent): two calls of one kernel whose ranges overlap by half
// (SBUF 1024..1280 and 1152..1408). The second body's load (ordinal 0) and
// scalar multiply (ordinal 3) wait for the first body's DMA and scalar
// engines (mask 20); taken for one byte at their bases, the ranges looked
// apart and the second call waited for nothing.
// CHECK-LABEL: ncore.program @overlapping_calls
// CHECK: ncore.call_kernel @scale(%{{.+}}, %{{.+}}) {ncore.boundary = "dependency", ncore.call_id = 0 : i64, ncore.entry_waits = array<i64>,
// CHECK: ncore.call_kernel @scale(%{{.+}}, %{{.+}}) {ncore.boundary = "dependency", ncore.call_id = 1 : i64, ncore.entry_waits = array<i64: 0, 20, 3, 20>,
ncore.program private @scale(%i: !ncore.tile<hbm, 128x64xf32>,
                             %o: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output"}) attributes {ncore.psum_extent = 0 : i64, ncore.sbuf_extent = 256 : i64} {
  %t = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.sem_signal 7 on dma
  ncore.sem_wait 7 ge 1 on scalar
  ncore.tensor_scalar multiply %t, %t imm 2.0 on scalar : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.sem_signal 3 on scalar
  ncore.sem_wait 3 ge 1 on dma
  ncore.dma_copy %o, %t : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}
ncore.program @overlapping_calls(%x: !ncore.tile<hbm, 128x64xf32>, %w: !ncore.tile<hbm, 128x64xf32>,
                                 %y: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output"},
                                 %z: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output"}) {
  ncore.call_kernel @scale(%x, %y) {ncore.boundary = "dependency", ncore.sbuf_base = 1024 : i64} : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.call_kernel @scale(%w, %z) {ncore.boundary = "dependency", ncore.sbuf_base = 1152 : i64} : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
