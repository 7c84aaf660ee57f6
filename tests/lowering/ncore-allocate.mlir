// RUN: seam-opt %s -split-input-file -ncore-allocate | FileCheck %s
// RUN: seam-opt %s -split-input-file -ncore-allocate -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// Placement is next fit: the search starts after the previous tile and
// wraps, so freed bytes are not refilled at once (every reuse is a
// dependency the scheduler must honour). When the search wraps, tiles whose
// live ranges do not overlap share bytes; overlapping ones do not.
// CHECK-LABEL: ncore.program @reuse
ncore.program @reuse(%x: !ncore.tile<hbm, 128x20000xf32>, %y: !ncore.tile<hbm, 128x20000xf32>) {
  // CHECK: ncore.alloc offset 0 : <sbuf, 128x20000xf32>
  // CHECK: ncore.alloc offset 80000 : <sbuf, 128x20000xf32>
  // CHECK: ncore.alloc offset 0 : <sbuf, 128x20000xf32>
  %a = ncore.alloc : !ncore.tile<sbuf, 128x20000xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x20000xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x20000xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x20000xf32>, !ncore.tile<hbm, 128x20000xf32>
  ncore.activation exp %b, %a : !ncore.tile<sbuf, 128x20000xf32>, !ncore.tile<sbuf, 128x20000xf32>
  // %a is dead from here on: %c wraps around into its bytes.
  ncore.activation exp %c, %b : !ncore.tile<sbuf, 128x20000xf32>, !ncore.tile<sbuf, 128x20000xf32>
  ncore.dma_copy %y, %c : !ncore.tile<hbm, 128x20000xf32>, !ncore.tile<sbuf, 128x20000xf32>
}

// -----

// A tile used inside a loop it is not defined in stays live for the whole
// loop: %late (first used after %early's last use in the body) may not take
// %early's bytes, because the next iteration reads %early again.
// CHECK-LABEL: ncore.program @loop_liveness
ncore.program @loop_liveness(%x: !ncore.tile<hbm, 128x256xf32>, %y: !ncore.tile<hbm, 128x256xf32>) {
  // CHECK: ncore.alloc offset 0 : <sbuf, 128x256xf32>
  // CHECK: ncore.alloc offset 1024 : <sbuf, 128x256xf32>
  %early = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  %late = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.loop %i trips 4 {
    ncore.dma_copy %early, %x : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<hbm, 128x256xf32>
    ncore.activation exp %late, %early : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
    ncore.dma_copy %y, %late : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
  }
  // A tile defined inside the loop body lives within one iteration.
  // CHECK: ncore.loop
  // CHECK: ncore.alloc offset 2048 : <sbuf, 128x256xf32>
  // CHECK: ncore.alloc offset 3072 : <sbuf, 128x256xf32>
  ncore.loop %j trips 2 {
    %t = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
    %u = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
    ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<hbm, 128x256xf32>
    ncore.activation exp %u, %t : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
    ncore.dma_copy %y, %u : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
  }
}

// -----

// PSUM: a tile never crosses a 2 KiB bank. After a 1536-byte tile, a
// 1024-byte tile would straddle the bank boundary at 2048: it goes to 2048;
// a 512-byte tile still fits behind the first one.
// CHECK-LABEL: ncore.program @psum_banks
ncore.program @psum_banks(%y: !ncore.tile<hbm, 128x384xf32>) {
  // CHECK: ncore.alloc offset 0 : <psum, 128x384xf32>
  // CHECK: ncore.alloc offset 2048 : <psum, 128x256xf32>
  // CHECK: ncore.alloc offset 1536 : <psum, 128x128xf32>
  %p0 = ncore.alloc : !ncore.tile<psum, 128x384xf32>
  %p1 = ncore.alloc : !ncore.tile<psum, 128x256xf32>
  %p2 = ncore.alloc : !ncore.tile<psum, 128x128xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x384xf32>
  // Only the Tensor engine writes PSUM: matmuls of %s fill the tiles.
  ncore.memset %s, 1.0 : !ncore.tile<sbuf, 128x384xf32>
  %st = ncore.view %s offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x384xf32> to !ncore.tile<sbuf, 128x128xf32>
  %m1 = ncore.view %s offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x384xf32> to !ncore.tile<sbuf, 128x256xf32>
  ncore.matmul %p0, %st, %s : !ncore.tile<psum, 128x384xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x384xf32>
  ncore.matmul %p1, %st, %m1 : !ncore.tile<psum, 128x256xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x256xf32>
  ncore.matmul %p2, %st, %st : !ncore.tile<psum, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
  ncore.tensor_copy %s, %p0 : !ncore.tile<sbuf, 128x384xf32>, !ncore.tile<psum, 128x384xf32>
  %s1 = ncore.view %s offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x384xf32> to !ncore.tile<sbuf, 128x256xf32>
  ncore.tensor_tensor add %s1, %s1, %p1 : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<psum, 128x256xf32>
  %s2 = ncore.view %s offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x384xf32> to !ncore.tile<sbuf, 128x128xf32>
  ncore.tensor_tensor add %s2, %s2, %p2 : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<psum, 128x128xf32>
  ncore.dma_copy %y, %s : !ncore.tile<hbm, 128x384xf32>, !ncore.tile<sbuf, 128x384xf32>
}

// -----

// Offsets already placed are kept and avoided; HBM scratch (spills) is
// numbered in the program's scratch region.
// CHECK-LABEL: ncore.program @fixed_and_scratch
ncore.program @fixed_and_scratch(%x: !ncore.tile<hbm, 128x64xf32>) {
  // CHECK: ncore.alloc offset 0 : <sbuf, 128x64xf32>
  // CHECK: ncore.alloc offset 256 : <sbuf, 128x64xf32>
  // CHECK: ncore.alloc offset 0 {name = "spill0"} : <hbm, 128x64xf32>
  // CHECK: ncore.alloc offset 32768 {name = "spill1"} : <hbm, 128x64xf32>
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %s0 = ncore.alloc {name = "spill0"} : !ncore.tile<hbm, 128x64xf32>
  %s1 = ncore.alloc {name = "spill1"} : !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %b, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %s0, %a : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %s1, %b : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}

// STATS: ncore-allocate
// STATS: 3072 psum-peak-bytes
// STATS: 1 repaired
// STATS: 160000 sbuf-peak-bytes
// STATS: 2 spills

// -----

// Program-order placement can fragment SBUF: %s2 lands after %b1, so when
// %b1 dies the 128 KiB %b2 finds no 128 KiB hole although only 144 KiB of
// the 192 KiB are live. %b2 alone is then placed again ahead of the tiles
// live with it (%s2), and next fit runs again: %b2 takes %b1's bytes and %s2
// goes after it (statistic `repaired`; the other tiles keep their places,
// no repack of the whole memory).
// CHECK-LABEL: ncore.program @fragmented
ncore.program @fragmented(%x8: !ncore.tile<hbm, 128x2048xf32>, %x96: !ncore.tile<hbm, 128x24576xf32>, %x128: !ncore.tile<hbm, 128x32768xf32>) {
  // CHECK: ncore.alloc offset 0 : <sbuf, 128x2048xf32>
  // CHECK: ncore.alloc offset 8192 : <sbuf, 128x24576xf32>
  // CHECK: ncore.alloc offset 139264 : <sbuf, 128x2048xf32>
  // CHECK: ncore.alloc offset 8192 : <sbuf, 128x32768xf32>
  %s1 = ncore.alloc : !ncore.tile<sbuf, 128x2048xf32>
  %b1 = ncore.alloc : !ncore.tile<sbuf, 128x24576xf32>
  %s2 = ncore.alloc : !ncore.tile<sbuf, 128x2048xf32>
  %b2 = ncore.alloc : !ncore.tile<sbuf, 128x32768xf32>
  ncore.dma_copy %s1, %x8 : !ncore.tile<sbuf, 128x2048xf32>, !ncore.tile<hbm, 128x2048xf32>
  ncore.dma_copy %b1, %x96 : !ncore.tile<sbuf, 128x24576xf32>, !ncore.tile<hbm, 128x24576xf32>
  ncore.activation exp %s2, %s1 : !ncore.tile<sbuf, 128x2048xf32>, !ncore.tile<sbuf, 128x2048xf32>
  ncore.dma_copy %x96, %b1 : !ncore.tile<hbm, 128x24576xf32>, !ncore.tile<sbuf, 128x24576xf32>
  ncore.dma_copy %b2, %x128 : !ncore.tile<sbuf, 128x32768xf32>, !ncore.tile<hbm, 128x32768xf32>
  ncore.dma_copy %x128, %b2 : !ncore.tile<hbm, 128x32768xf32>, !ncore.tile<sbuf, 128x32768xf32>
  ncore.activation exp %s1, %s2 : !ncore.tile<sbuf, 128x2048xf32>, !ncore.tile<sbuf, 128x2048xf32>
}

// -----

// A kernel call is placed like a tile live at the call: the callee (allocated
// first, from offset 0) records its extents, and the call gets bases clear of
// the caller's tiles live across it (%live, %acc); the emitter adds them to
// the inlined callee's on-chip accesses. PSUM bases are whole banks.
// CHECK-LABEL: ncore.program private @callee
// CHECK-SAME: ncore.psum_extent = 512 : i64, ncore.sbuf_extent = 512 : i64
// CHECK-LABEL: ncore.program @calls
// CHECK: ncore.call_kernel @callee(%{{.*}}) {ncore.psum_base = 2048 : i64, ncore.sbuf_base = 256 : i64}
ncore.program private @callee(%i: !ncore.tile<hbm, 128x128xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  %p = ncore.alloc : !ncore.tile<psum, 128x128xf32>
  ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<hbm, 128x128xf32>
  ncore.transpose %p, %t : !ncore.tile<psum, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
}
ncore.program @calls(%x: !ncore.tile<hbm, 128x64xf32>, %h: !ncore.tile<hbm, 128x128xf32>) {
  %live = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %dead = ncore.alloc : !ncore.tile<sbuf, 64x128xf32>
  %acc = ncore.alloc : !ncore.tile<psum, 64x128xf32>
  ncore.dma_copy %live, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.transpose %acc, %live : !ncore.tile<psum, 64x128xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.call_kernel @callee(%h) : !ncore.tile<hbm, 128x128xf32>
  ncore.tensor_copy %dead, %acc : !ncore.tile<sbuf, 64x128xf32>, !ncore.tile<psum, 64x128xf32>
  ncore.dma_copy %x, %live : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}
