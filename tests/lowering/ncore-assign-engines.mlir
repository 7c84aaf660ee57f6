// RUN: seam-opt %s -split-input-file -ncore-assign-engines | FileCheck %s
// RUN: seam-opt %s -split-input-file -ncore-assign-engines -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// The decision alone, recorded in the IR: a moved instruction names its
// engine (`on <engine>`); nothing is synchronised (that is ncore-schedule's).
// Independent work that VE, SE and GpSimd can all run spreads over them by
// estimated finish time; a store leaves from the Sync engine's DMA queue, a
// load from the DMA engine's (its default: no attribute).
// CHECK-LABEL: ncore.program @spread
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf
// CHECK: ncore.memset %{{.+}}, 1.000000e+00 on scalar
// CHECK: ncore.memset %{{.+}}, 2.000000e+00 on gpsimd
// CHECK: ncore.memset %{{.+}}, 3.000000e+00 :
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} on sync : <hbm
// CHECK-NOT: ncore.sem
ncore.program @spread(%x: !ncore.tile<hbm, 128x512xf32>, %y: !ncore.tile<hbm, 128x512xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.dma_copy %d, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
  ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %b, 2.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %c, 3.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.dma_copy %y, %a : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

// Near misses. An instruction whose engine is already named keeps it (the
// same memsets, pinned to the Vector engine; a store pinned to the DMA
// queue).
// CHECK-LABEL: ncore.program @pinned
// CHECK-COUNT-3: ncore.memset %{{.+}} on vector :
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} on dma : <hbm
ncore.program @pinned(%y: !ncore.tile<hbm, 128x512xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %a, 1.0 on vector : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %b, 2.0 on vector : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %c, 3.0 on vector : !ncore.tile<sbuf, 128x512xf32>
  ncore.dma_copy %y, %a on dma : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

// Copies out of PSUM never go to GpSimd, which cannot read it: three
// independent evacuations share the Vector and Scalar engines (where
// memsets would take GpSimd too, as in @spread).
// CHECK-LABEL: ncore.program @psum
// CHECK-NOT: gpsimd
// CHECK: ncore.tensor_copy
// CHECK-NOT: gpsimd
// CHECK: ncore.tensor_copy
// CHECK-NOT: gpsimd
// CHECK: ncore.tensor_copy
// CHECK-NOT: gpsimd
// CHECK: }
ncore.program @psum() {
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.tensor_copy %a, %p : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  ncore.tensor_copy %b, %p : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  ncore.tensor_copy %c, %p : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

// A program that synchronises itself is left as it is: the same memsets
// and store as @spread, all on their default engines.
// CHECK-LABEL: ncore.program @synchronised
// CHECK-NOT: on scalar
// CHECK-NOT: on gpsimd
// CHECK-NOT: on sync
// CHECK: }
ncore.program @synchronised(%y: !ncore.tile<hbm, 128x512xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %b, 2.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %c, 3.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.sem_signal 1 on vector
  ncore.sem_wait 1 ge 1 on dma
  ncore.dma_copy %y, %a : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

// So is a program already scheduled.
// CHECK-LABEL: ncore.program @scheduled
// CHECK-NOT: on scalar
// CHECK-NOT: on gpsimd
// CHECK: }
ncore.program @scheduled() attributes {ncore.scheduled} {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %b, 2.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %c, 3.0 : !ncore.tile<sbuf, 128x512xf32>
}

// Two moves in @spread, two in @psum; the one unpinned store in @spread.
// STATS: ncore-assign-engines
// STATS-NEXT: (S) 4 engine-moves
// STATS-NEXT: (S) 1 stores-on-sync
