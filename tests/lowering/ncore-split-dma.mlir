// RUN: seam-opt %s -split-input-file -ncore-split-dma=target=trn2 | FileCheck %s
// RUN: seam-opt %s -split-input-file -ncore-split-dma="target=trn2 min-piece-bytes=8192" | FileCheck %s --check-prefix=SMALL
// RUN: seam-opt %s -split-input-file -ncore-allocate=target=trn2 -ncore-assign-engines=target=trn2 -ncore-schedule -ncore-split-dma=target=trn2 | FileCheck %s --check-prefix=SCHED
// RUN: seam-opt %s -split-input-file -ncore-split-dma=target=trn2 -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// Prologue loads cut into another count than alone: @prologue 3, @balance
// 1, @balance_next 2.
// STATS: 6 prologue-rebalanced

// A 768 KiB weight slab loaded after some compute (a prefetch): pieces of
// at least 4 x 600 ns x 23 B/ns (~55 KB on trn2) allow 8 pieces of 16 rows
// (96 KiB each), not 16 of 48 KiB.
// CHECK-LABEL: ncore.program @slab
// CHECK: ncore.tensor_copy
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 16x3072xbf16{{(, start = [0-9]+)?}}>, <hbm, 16x3072xbf16>
// CHECK-NOT: ncore.dma_copy
// SMALL-LABEL: ncore.program @slab
// SMALL-COUNT-16: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 8x3072xbf16{{(, start = [0-9]+)?}}>, <hbm, 8x3072xbf16>
// SMALL-NOT: ncore.dma_copy
ncore.program @slab(%w: !ncore.tile<hbm, 128x3072xbf16> {ncore.role = "param"}) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
  ncore.tensor_copy %b, %a on vector : !ncore.tile<sbuf, 128x8xf32>, !ncore.tile<sbuf, 128x8xf32>
  %t = ncore.alloc : !ncore.tile<sbuf, 128x3072xbf16>
  ncore.dma_copy %t, %w : !ncore.tile<sbuf, 128x3072xbf16>, !ncore.tile<hbm, 128x3072xbf16>
}

// -----

// A store of 192 KiB (the last slab of a linear's result, which a
// collective waits for): pieces of at least 600 ns x 23 B/ns (~14 KB on
// trn2) allow 8 of 24 KiB (not 16 of 12 KiB), where a load of the same size
// after some compute takes 2 of 96 KiB.
// CHECK-LABEL: ncore.program @store
// CHECK: ncore.tensor_copy
// CHECK-COUNT-2: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 64x768xbf16{{(, start = [0-9]+)?}}>, <hbm, 64x768xbf16>
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <hbm, 16x768xbf16>, <sbuf, 16x768xbf16{{(, start = [0-9]+)?}}>
// CHECK-NOT: ncore.dma_copy
// SMALL-LABEL: ncore.program @store
ncore.program @store(%w: !ncore.tile<hbm, 128x768xbf16> {ncore.role = "param"}, %y: !ncore.tile<hbm, 128x768xbf16> {ncore.role = "output"}) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
  ncore.tensor_copy %b, %a on vector : !ncore.tile<sbuf, 128x8xf32>, !ncore.tile<sbuf, 128x8xf32>
  %t = ncore.alloc : !ncore.tile<sbuf, 128x768xbf16>
  ncore.dma_copy %t, %w : !ncore.tile<sbuf, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
  ncore.dma_copy %y, %t : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<sbuf, 128x768xbf16>
}

// -----

// Loads before any compute (outside loops) have nothing to overlap: their
// piece counts are chosen together, down to store-sized pieces, so that the
// round-robin queues finish them early and together. Here 64 + 32 + 32 KiB
// become 4 pieces of 16 KiB and 2 of 16 KiB each (8 queues, 1.3 us), where
// the 64 KiB load after the first compute stays whole.
// CHECK-LABEL: ncore.program @prologue
// CHECK-COUNT-4: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 32x256xbf16{{(, start = [0-9]+)?}}>, <hbm, 32x256xbf16>
// CHECK-COUNT-4: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 64x128xbf16{{(, start = [0-9]+)?}}>, <hbm, 64x128xbf16>
// CHECK: ncore.tensor_copy
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x256xbf16>, <hbm, 128x256xbf16>
// CHECK-NOT: ncore.dma_copy
// SMALL-LABEL: ncore.program @prologue
ncore.program @prologue(%m: !ncore.tile<hbm, 128x256xbf16> {ncore.role = "constant"}, %x: !ncore.tile<hbm, 256x128xbf16> {ncore.role = "input"}, %w: !ncore.tile<hbm, 128x256xbf16> {ncore.role = "param"}) {
  %c = ncore.alloc : !ncore.tile<sbuf, 128x256xbf16>
  ncore.dma_copy %c, %m : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<hbm, 128x256xbf16>
  %r0 = ncore.view %x offsets affine_map<() -> (0, 0)> : !ncore.tile<hbm, 256x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
  %r1 = ncore.view %x offsets affine_map<() -> (128, 0)> : !ncore.tile<hbm, 256x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
  %t0 = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %t1 = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  ncore.dma_copy %t0, %r0 : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
  ncore.dma_copy %t1, %r1 : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
  %u = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  ncore.tensor_copy %u, %t0 on vector : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>
  %v = ncore.alloc : !ncore.tile<sbuf, 128x256xbf16>
  ncore.dma_copy %v, %w : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<hbm, 128x256xbf16>
}

// -----

// A prologue of a 128 KiB input and a 1 MiB constant (a kernel's rows and
// its DFT matrices). Each cut on its own (pieces of >= ~55 KB) gives 2 + 16
// pieces of 64 KiB, and the round-robin queues 0 and 1 take two of them:
// done at 2 x 3.45 us. Chosen together, the input takes 8 pieces of 16 KiB
// and the constant 16 of 64 KiB: no queue carries more than 1.3 + 3.45 us.
// CHECK-LABEL: ncore.program @balance
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 16x256xf32{{(, start = [0-9]+)?}}>, <hbm, 16x256xf32>
// CHECK-COUNT-16: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 8x4096xbf16{{(, start = [0-9]+)?}}>, <hbm, 8x4096xbf16>
// CHECK-NOT: ncore.dma_copy
// SMALL-LABEL: ncore.program @balance
ncore.program @balance(%x: !ncore.tile<hbm, 128x256xf32> {ncore.role = "input"}, %w: !ncore.tile<hbm, 128x4096xbf16> {ncore.role = "constant"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<hbm, 128x256xf32>
  %u = ncore.alloc : !ncore.tile<sbuf, 128x4096xbf16>
  ncore.dma_copy %u, %w : !ncore.tile<sbuf, 128x4096xbf16>, !ncore.tile<hbm, 128x4096xbf16>
  %v = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.tensor_copy %v, %t on vector : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
}

// -----

// The same prologue, followed by the loads a loop issues before the stream
// first waits (4 iterations, 2 pieces of 64 KiB each): they take the queues
// next, so they are weighed too. The constant now takes 8 pieces of 128 KiB
// (queues 8-15, 6.3 us) and the loop's loads go to queues 0-7 after the
// input's pieces (4.8 us); 16 pieces of the constant would leave queues
// 8-15 with two 64 KiB pieces each (6.9 us).
// CHECK-LABEL: ncore.program @balance_next
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 16x256xf32{{(, start = [0-9]+)?}}>, <hbm, 16x256xf32>
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 16x4096xbf16{{(, start = [0-9]+)?}}>, <hbm, 16x4096xbf16>
// CHECK: ncore.tensor_copy
// CHECK: ncore.loop
// CHECK-COUNT-2: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 64x256xf32{{(, start = [0-9]+)?}}>, <hbm, 64x256xf32>
// CHECK-NOT: ncore.dma_copy
// SMALL-LABEL: ncore.program @balance_next
ncore.program @balance_next(%x: !ncore.tile<hbm, 128x256xf32> {ncore.role = "input"}, %w: !ncore.tile<hbm, 128x4096xbf16> {ncore.role = "constant"}, %y: !ncore.tile<hbm, 512x256xf32> {ncore.role = "input"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<hbm, 128x256xf32>
  %u = ncore.alloc : !ncore.tile<sbuf, 128x4096xbf16>
  ncore.dma_copy %u, %w : !ncore.tile<sbuf, 128x4096xbf16>, !ncore.tile<hbm, 128x4096xbf16>
  %v = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.tensor_copy %v, %t on vector : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
  ncore.loop %i trips 4 {
    %r = ncore.view %y[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x256xf32> to !ncore.tile<hbm, 128x256xf32>
    ncore.dma_copy %v, %r : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<hbm, 128x256xf32>
  }
}

// -----

// Rows of the second piece start after the first: partitions on chip, row
// offsets in HBM (also through a 3-D view, the layout of a weight slab).
// CHECK-LABEL: ncore.program @offsets
// SMALL-LABEL: ncore.program @offsets
// CHECK: %[[D0:.+]] = ncore.view %{{.+}} offsets #{{.+}} : <sbuf, 128x24x512xbf16> to <sbuf, 8x24x512xbf16>
// CHECK: %[[S0:.+]] = ncore.view %{{.+}} offsets #{{.+}} : <hbm, 128x24x512xbf16> to <hbm, 8x24x512xbf16>
// CHECK: ncore.dma_copy %[[D0]], %[[S0]]
// CHECK: ncore.view %{{.+}} offsets #{{.+}} : <sbuf, 128x24x512xbf16> to <sbuf, 8x24x512xbf16, start = 8>
// CHECK-COUNT-15: ncore.dma_copy
ncore.program @offsets(%w: !ncore.tile<hbm, 128x24x9216xbf16> {ncore.role = "param"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x12288xbf16>
  %d = ncore.reshape %t : !ncore.tile<sbuf, 128x12288xbf16> to !ncore.tile<sbuf, 128x24x512xbf16>
  %s = ncore.view %w offsets affine_map<() -> (0, 0, 512)> : !ncore.tile<hbm, 128x24x9216xbf16> to !ncore.tile<hbm, 128x24x512xbf16>
  ncore.dma_copy %d, %s : !ncore.tile<sbuf, 128x24x512xbf16>, !ncore.tile<hbm, 128x24x512xbf16>
}

// -----

// Left whole: a load too small for two pieces, and rows that no piece count
// divides.
// CHECK-LABEL: ncore.program @kept
// CHECK: ncore.tensor_copy
// CHECK-COUNT-2: ncore.dma_copy
// CHECK-NOT: ncore.dma_copy
ncore.program @kept(%a: !ncore.tile<hbm, 128x64xf32>, %b: !ncore.tile<hbm, 127x4096xf32>) {
  %c = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
  %d = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
  ncore.tensor_copy %d, %c on vector : !ncore.tile<sbuf, 128x8xf32>, !ncore.tile<sbuf, 128x8xf32>
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %t, %a : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  %u = ncore.alloc : !ncore.tile<sbuf, 127x4096xf32>
  ncore.dma_copy %u, %b : !ncore.tile<sbuf, 127x4096xf32>, !ncore.tile<hbm, 127x4096xf32>
}

// -----

// Each endpoint is cut along its first dim of size > 1: here 128 rows of
// 4096 against 64 rows of 8192 (the same 16 consecutive ranges of elements),
// and an HBM copy whose row dim is 1 (a concat into [1, 768, 3072]) along
// its 768 rows, against a flat source.
// CHECK-LABEL: ncore.program @outer
// CHECK-COUNT-16: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 8x4096xf32{{.*}}>, <hbm, 4x8192xf32>
// CHECK-COUNT-16: ncore.dma_copy %{{.+}}, %{{.+}} : <hbm, 1x48x2304xbf16>, <hbm, 1x110592xbf16>
ncore.program @outer(%c: !ncore.tile<hbm, 64x8192xf32>, %x: !ncore.tile<hbm, 1x1769472xbf16>, %y: !ncore.tile<hbm, 1x768x3072xbf16> {ncore.role = "output"}) {
  %v = ncore.alloc : !ncore.tile<sbuf, 128x4096xf32>
  ncore.dma_copy %v, %c : !ncore.tile<sbuf, 128x4096xf32>, !ncore.tile<hbm, 64x8192xf32>
  %d = ncore.view %y offsets affine_map<() -> (0, 0, 768)> : !ncore.tile<hbm, 1x768x3072xbf16> to !ncore.tile<hbm, 1x768x2304xbf16>
  ncore.dma_copy %d, %x : !ncore.tile<hbm, 1x768x2304xbf16>, !ncore.tile<hbm, 1x1769472xbf16>
}

// -----

// After ncore-schedule the pieces take the transfer's place (and its queue:
// the stores' is the Sync engine's): the waits that preceded it precede the
// first piece, its signal follows the last one.
// CHECK-LABEL: ncore.program @sync
// SCHED-LABEL: ncore.program @sync
// SCHED-COUNT-16: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 8x4096xf32{{.*}}>, <hbm, 8x4096xf32>
// SCHED-NEXT: ncore.sem_signal 4 on dma
// SCHED-NEXT: ncore.sem_wait 4 ge 1 on vector
// SCHED-NEXT: ncore.tensor_copy
// SCHED-NEXT: ncore.sem_signal 1 on vector
// SCHED-NEXT: ncore.sem_wait 1 ge 1 on sync
// SCHED-NOT: ncore.sem_
// SCHED-COUNT-16: ncore.dma_copy %{{.+}}, %{{.+}} on sync : <hbm, 8x4096xf32>, <sbuf
// SCHED-NEXT: ncore.sem_wait 4 ge 1 on sync
ncore.program @sync(%x: !ncore.tile<hbm, 128x4096xf32>, %y: !ncore.tile<hbm, 128x4096xf32> {ncore.role = "output"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x4096xf32>
  %u = ncore.alloc : !ncore.tile<sbuf, 128x4096xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x4096xf32>, !ncore.tile<hbm, 128x4096xf32>
  ncore.tensor_copy %u, %t on vector : !ncore.tile<sbuf, 128x4096xf32>, !ncore.tile<sbuf, 128x4096xf32>
  ncore.dma_copy %y, %u : !ncore.tile<hbm, 128x4096xf32>, !ncore.tile<sbuf, 128x4096xf32>
  ncore.dma_copy %x, %u : !ncore.tile<hbm, 128x4096xf32>, !ncore.tile<sbuf, 128x4096xf32>
}
