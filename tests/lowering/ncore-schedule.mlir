// RUN: seam-opt %s -split-input-file -ncore-assign-engines -ncore-schedule | FileCheck %s
// RUN: seam-opt %s -split-input-file -ncore-assign-engines -ncore-schedule -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// Engines hand data over through semaphores: the producer signals its
// engine's semaphore (id = engine code: tensor 0, vector 1, scalar 2,
// gpsimd 3, dma 4, sync 5), the consumer waits for the count after the
// producer. A store (on chip -> HBM) leaves from the Sync engine's DMA
// queue, loads from the DMA queue: a store waiting for compute holds up no
// load behind it.
// CHECK-LABEL: ncore.program @handover
ncore.program @handover(%x: !ncore.tile<hbm, 128x512xf32>, %y: !ncore.tile<hbm, 128x512xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // CHECK: ncore.dma_copy %[[A:.+]], %{{.+}} :
  // CHECK-NEXT: ncore.sem_signal 4 on dma
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
  // CHECK-NEXT: ncore.sem_wait 4 ge 1 on scalar
  // CHECK-NEXT: ncore.activation exp %[[B:.+]], %[[A]] :
  // CHECK-NEXT: ncore.sem_signal 2 on scalar
  ncore.activation exp %b, %a : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  // CHECK-NEXT: ncore.sem_wait 2 ge 1 on sync
  // CHECK-NEXT: ncore.dma_copy %{{.+}}, %[[B]] on sync :
  // CHECK-NOT: ncore.sem
  ncore.dma_copy %y, %b : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

// Within one compute engine the stream order is the dependency: no
// semaphore between two vector instructions.
// CHECK-LABEL: ncore.program @same_engine
ncore.program @same_engine(%x: !ncore.tile<hbm, 128x512xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // CHECK: ncore.sem_signal 4 on dma
  // CHECK-NEXT: ncore.sem_wait 4 ge 1 on vector
  // CHECK-NEXT: ncore.tensor_tensor add
  // CHECK-NEXT: ncore.tensor_tensor multiply
  // CHECK-NEXT: ncore.tensor_scalar multiply
  // CHECK-NOT: ncore.sem
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
  ncore.tensor_tensor add %b, %a, %a on vector : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  ncore.tensor_tensor multiply %b, %b, %b on vector : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  ncore.tensor_scalar multiply %a, %b imm 2.0 on vector : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

// Independent work goes to different engines (balanced by estimated cost)
// and needs no semaphore at all.
// CHECK-LABEL: ncore.program @balance
ncore.program @balance() {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // CHECK: ncore.memset %{{.+}}, 1.000000e+00 on scalar
  // CHECK: ncore.memset %{{.+}}, 2.000000e+00 on gpsimd
  // CHECK: ncore.memset %{{.+}}, 3.000000e+00 :
  // CHECK-NOT: ncore.sem
  ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %b, 2.0 : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %c, 3.0 : !ncore.tile<sbuf, 128x512xf32>
}

// -----

// Loops stay loops: waits step with the iterations they share. The DMA of
// iteration k+1 into %wt must wait for the matmul of iteration k that read it
// (loop-carried, the step-1 wait on the tensor engine), and the matmul waits
// for both DMAs of its own iteration (count 2 more per iteration). The
// loop-carried waits are marked `carried 1`: they hold in iteration 0, which
// has no earlier iteration (their affine value there would name whatever the
// producer's engine did before the loop). The semaphore of the DMA engine
// still starts pre-signalled by 1 so that every value is non-negative.
// CHECK-LABEL: ncore.program @k_loop
ncore.program @k_loop(%x: !ncore.tile<hbm, 512x128xbf16>, %w: !ncore.tile<hbm, 512x128xbf16>) {
  // CHECK: ncore.sem_signal 4 on dma
  %xt = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %wt = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %acc = ncore.alloc : !ncore.tile<psum, 128x128xf32>
  // CHECK: ncore.loop
  ncore.loop %k trips 4 {
    %xv = ncore.view %x[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
    // CHECK: ncore.sem_wait 4 ge 0 steps [2] carried 1 on dma
    // CHECK-NEXT: ncore.sem_wait 0 ge 0 steps [1] carried 1 on dma
    // CHECK-NEXT: ncore.dma_copy
    ncore.dma_copy %xt, %xv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
    %wv = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
    ncore.dma_copy %wt, %wv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
    // CHECK: ncore.sem_wait 4 ge 3 steps [2] on tensor
    // CHECK-NEXT: ncore.matmul
    // CHECK-NEXT: ncore.sem_signal 0 on tensor
    ncore.matmul %acc, %wt, %xt accumulate : !ncore.tile<psum, 128x128xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>
  }
}

// -----

// Nothing is ordered across an opaque kernel call: the emitter puts a full
// barrier there, so the schedule tracks no dependency across it (the DMA
// after the call reads %t, written before the call, yet gets no wait).
// CHECK-LABEL: ncore.program @barrier
ncore.program private @kernel(!ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>)
ncore.program @barrier(%x: !ncore.tile<hbm, 128x64xf32>, %y: !ncore.tile<hbm, 128x64xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.activation exp %t, %t : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  // CHECK: ncore.call_kernel @kernel
  // CHECK-NOT: ncore.sem_wait
  // CHECK: ncore.dma_copy
  // CHECK-NOT: ncore.sem_wait
  ncore.call_kernel @kernel(%x, %y) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %y, %t : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}

// -----

// Dependencies follow the bytes, not the alloc: once ncore-allocate lets two
// tiles share bytes, refilling the second waits for the last reader of the
// first (write-after-read on another engine).
// CHECK-LABEL: ncore.program @shared_bytes
ncore.program @shared_bytes(%x: !ncore.tile<hbm, 128x64xf32>, %y: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  %c = ncore.alloc offset 256 : !ncore.tile<sbuf, 128x64xf32>
  %b = ncore.alloc offset 128 : !ncore.tile<sbuf, 128x32xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  // CHECK: ncore.activation exp
  // CHECK-NEXT: ncore.sem_signal 2 on scalar
  ncore.activation exp %c, %a : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  // CHECK: ncore.sem_wait 2 ge 1 on dma
  // CHECK-NEXT: ncore.dma_copy
  %xv = ncore.view %x offsets affine_map<() -> (0, 0)> : !ncore.tile<hbm, 128x64xf32> to !ncore.tile<hbm, 128x32xf32>
  ncore.dma_copy %b, %xv : !ncore.tile<sbuf, 128x32xf32>, !ncore.tile<hbm, 128x32xf32>
}

// -----

// A DMA in a loop nest that moves to new bytes in every iteration does not
// wait for its own earlier iterations (DMAs may complete out of order, so such
// a wait would serialise the nest, one transfer at a time). Here the load
// fills column block 3i + j of %t, and the store writes the 128 rows of that
// block in HBM: the rows interleave with the other blocks' rows but never
// share a byte. When the outer loop does not move the access (@rewrite),
// iteration i + 1 rewrites the bytes of iteration i and must wait for it.
// CHECK-LABEL: ncore.program @nest_disjoint
ncore.program @nest_disjoint(%x: !ncore.tile<hbm, 768x128xbf16>, %y: !ncore.tile<hbm, 128x768xbf16>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x768xbf16>
  // CHECK: ncore.loop
  ncore.loop %i trips 2 {
    ncore.loop %j trips 3 {
      %xv = ncore.view %x[%i, %j] offsets affine_map<(d0, d1) -> (d0 * 384 + d1 * 128, 0)> : !ncore.tile<hbm, 768x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
      %tv = ncore.view %t[%i, %j] offsets affine_map<(d0, d1) -> (0, d0 * 384 + d1 * 128)> : !ncore.tile<sbuf, 128x768xbf16> to !ncore.tile<sbuf, 128x128xbf16>
      // CHECK-NOT: ncore.sem_wait
      // CHECK: ncore.dma_copy
      ncore.dma_copy %tv, %xv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
      %yv = ncore.view %y[%i, %j] offsets affine_map<(d0, d1) -> (0, d0 * 384 + d1 * 128)> : !ncore.tile<hbm, 128x768xbf16> to !ncore.tile<hbm, 128x128xbf16>
      // CHECK: ncore.sem_wait 4
      // CHECK-NEXT: ncore.dma_copy
      ncore.dma_copy %yv, %tv : !ncore.tile<hbm, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>
      // CHECK-NOT: ncore.sem_wait
    }
  }
}

// -----

// CHECK-LABEL: ncore.program @rewrite
ncore.program @rewrite(%x: !ncore.tile<hbm, 384x128xbf16>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x384xbf16>
  ncore.loop %i trips 2 {
    ncore.loop %j trips 3 {
      %xv = ncore.view %x[%j] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 384x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
      %tv = ncore.view %t[%j] offsets affine_map<(d0) -> (0, d0 * 128)> : !ncore.tile<sbuf, 128x384xbf16> to !ncore.tile<sbuf, 128x128xbf16>
      // CHECK: ncore.sem_wait 4 ge {{[0-9]+}} steps [3, 1] carried 2 on dma
      // CHECK-NEXT: ncore.dma_copy
      ncore.dma_copy %tv, %xv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
    }
  }
}

// -----

// The copies of a transfer that a dmaLoop issues per iteration (kernels'
// KernelBuilder::dmaLoop): in iteration (b, i) copy u stores sequence
// 2 u + i of batch b. The hulls of the two copies over both loops overlap
// (the batch loop spans them), but the copies are the same window a fixed
// 2 sequences apart, and windows, steps and that offset number the bytes
// one-to-one: no wait between them (they run on two queues together). In
// @shifted_overlap the second copy is half a window after the first, so
// it waits for it.
// CHECK-LABEL: ncore.program @shifted_copies
ncore.program @shifted_copies(%y: !ncore.tile<hbm, 4096xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 64x64xf32>
  ncore.loop %b trips 4 {
    ncore.loop %i trips 2 {
      %y0 = ncore.view %y[%b, %i] offsets affine_map<(d0, d1) -> ((d0 * 4 + d1) * 256)> : !ncore.tile<hbm, 4096xf32> to !ncore.tile<hbm, 256xf32>
      %r0 = ncore.reshape %y0 : !ncore.tile<hbm, 256xf32> to !ncore.tile<hbm, 64x4xf32>
      %t0 = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 4)> : !ncore.tile<sbuf, 64x64xf32> to !ncore.tile<sbuf, 64x4xf32>
      // CHECK: ncore.dma_copy
      ncore.dma_copy %r0, %t0 : !ncore.tile<hbm, 64x4xf32>, !ncore.tile<sbuf, 64x4xf32>
      %y1 = ncore.view %y[%b, %i] offsets affine_map<(d0, d1) -> ((d0 * 4 + d1 + 2) * 256)> : !ncore.tile<hbm, 4096xf32> to !ncore.tile<hbm, 256xf32>
      %r1 = ncore.reshape %y1 : !ncore.tile<hbm, 256xf32> to !ncore.tile<hbm, 64x4xf32>
      %t1 = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 4 + 8)> : !ncore.tile<sbuf, 64x64xf32> to !ncore.tile<sbuf, 64x4xf32>
      // CHECK-NOT: ncore.sem_wait
      // CHECK: ncore.dma_copy
      ncore.dma_copy %r1, %t1 : !ncore.tile<hbm, 64x4xf32>, !ncore.tile<sbuf, 64x4xf32>
    }
  }
}

// -----

// CHECK-LABEL: ncore.program @shifted_overlap
ncore.program @shifted_overlap(%y: !ncore.tile<hbm, 4096xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 64x64xf32>
  ncore.loop %b trips 4 {
    ncore.loop %i trips 2 {
      %y0 = ncore.view %y[%b, %i] offsets affine_map<(d0, d1) -> ((d0 * 4 + d1) * 256)> : !ncore.tile<hbm, 4096xf32> to !ncore.tile<hbm, 256xf32>
      %r0 = ncore.reshape %y0 : !ncore.tile<hbm, 256xf32> to !ncore.tile<hbm, 64x4xf32>
      %t0 = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 4)> : !ncore.tile<sbuf, 64x64xf32> to !ncore.tile<sbuf, 64x4xf32>
      ncore.dma_copy %r0, %t0 : !ncore.tile<hbm, 64x4xf32>, !ncore.tile<sbuf, 64x4xf32>
      %y1 = ncore.view %y[%b, %i] offsets affine_map<(d0, d1) -> ((d0 * 4 + d1) * 256 + 128)> : !ncore.tile<hbm, 4096xf32> to !ncore.tile<hbm, 256xf32>
      %r1 = ncore.reshape %y1 : !ncore.tile<hbm, 256xf32> to !ncore.tile<hbm, 64x4xf32>
      %t1 = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 4 + 8)> : !ncore.tile<sbuf, 64x64xf32> to !ncore.tile<sbuf, 64x4xf32>
      // CHECK: ncore.sem_wait 5
      // CHECK-NEXT: ncore.dma_copy
      ncore.dma_copy %r1, %t1 : !ncore.tile<hbm, 64x4xf32>, !ncore.tile<sbuf, 64x4xf32>
    }
  }
}

// -----

// Accesses that move with their loop by the same step are compared at the
// iterations a wait would order: an instruction later in the body
// (loop-carried) only in the iterations before. In @apart the Vector
// engine fills window i at the start of iteration i and the store of its
// first half ends it: the store of iteration i - 1 read window i - 1, so the
// fill does not wait for it (the hulls over the loop overlap, the windows
// differ). In @carried the
// store reads window i + 1, which iteration i + 1 fills: that fill waits
// for it.
// CHECK-LABEL: ncore.program @apart
ncore.program @apart(%y: !ncore.tile<hbm, 128x320xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x320xf32>
  ncore.loop %i trips 4 {
    %a = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 64)> : !ncore.tile<sbuf, 128x320xf32> to !ncore.tile<sbuf, 128x64xf32>
    // CHECK-NOT: ncore.sem_wait
    // CHECK: ncore.memset
    ncore.memset %a, 1.0 on vector : !ncore.tile<sbuf, 128x64xf32>
    %h = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 64)> : !ncore.tile<sbuf, 128x320xf32> to !ncore.tile<sbuf, 128x32xf32>
    %yv = ncore.view %y[%i] offsets affine_map<(d0) -> (0, d0 * 64)> : !ncore.tile<hbm, 128x320xf32> to !ncore.tile<hbm, 128x32xf32>
    // CHECK: ncore.sem_wait 1
    // CHECK-NEXT: ncore.dma_copy
    ncore.dma_copy %yv, %h : !ncore.tile<hbm, 128x32xf32>, !ncore.tile<sbuf, 128x32xf32>
  }
}

// -----

// CHECK-LABEL: ncore.program @carried
ncore.program @carried(%y: !ncore.tile<hbm, 128x320xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x320xf32>
  ncore.loop %i trips 4 {
    %a = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 64)> : !ncore.tile<sbuf, 128x320xf32> to !ncore.tile<sbuf, 128x64xf32>
    // CHECK: ncore.sem_wait 5 ge {{[0-9]+}} steps [1] carried 1 on vector
    // CHECK-NEXT: ncore.memset
    ncore.memset %a, 1.0 on vector : !ncore.tile<sbuf, 128x64xf32>
    %b = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 64 + 64)> : !ncore.tile<sbuf, 128x320xf32> to !ncore.tile<sbuf, 128x64xf32>
    %yv = ncore.view %y[%i] offsets affine_map<(d0) -> (0, d0 * 64)> : !ncore.tile<hbm, 128x320xf32> to !ncore.tile<hbm, 128x64xf32>
    ncore.dma_copy %yv, %b : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  }
}

// -----

// Two loops in sequence over the same row tiles (an op and the elementwise
// op after it): iteration i of the second loop waits for iteration i of the
// first (a wait that steps with the loop), not for the whole first loop, so
// the two run as a pipeline.
// CHECK-LABEL: ncore.program @aligned_loops
ncore.program @aligned_loops(%x: !ncore.tile<hbm, 128x512xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %u = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.loop %i trips 4 {
    %tv = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 128)> : !ncore.tile<sbuf, 128x512xf32> to !ncore.tile<sbuf, 128x128xf32>
    // CHECK: ncore.activation exp
    // CHECK-NEXT: ncore.sem_signal 2 on scalar
    ncore.activation exp %tv, %tv on scalar : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
  }
  ncore.loop %j trips 4 {
    %tv = ncore.view %t[%j] offsets affine_map<(d0) -> (0, d0 * 128)> : !ncore.tile<sbuf, 128x512xf32> to !ncore.tile<sbuf, 128x128xf32>
    %uv = ncore.view %u[%j] offsets affine_map<(d0) -> (0, d0 * 128)> : !ncore.tile<sbuf, 128x512xf32> to !ncore.tile<sbuf, 128x128xf32>
    // CHECK: ncore.sem_wait 2 ge 1 steps [1] on vector
    // CHECK-NEXT: ncore.tensor_copy
    ncore.tensor_copy %uv, %tv on vector : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
  }
}

// -----

// Engines on an estimated timeline: the Scalar engine has a long memset
// queued first, but the three PSUM evacuations can only start when the
// 1024 matmuls are done, long after it. Counting the work queued so far
// would put all three on the Vector engine; on the timeline both engines
// are free when the evacuations start, so they alternate.
// CHECK-LABEL: ncore.program @after_a_long_tensor_phase
// CHECK: ncore.tensor_copy {{.+}} on scalar
// CHECK: ncore.tensor_copy %{{[0-9]+}}, %{{[0-9]+}} : <sbuf
// CHECK: ncore.tensor_copy {{.+}} on scalar
ncore.program @after_a_long_tensor_phase(%x: !ncore.tile<hbm, 128x512xbf16>) {
  %big = ncore.alloc : !ncore.tile<sbuf, 128x16384xf32>
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  %acc = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %r = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %o1 = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %o2 = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.memset %big, 0.0 on scalar : !ncore.tile<sbuf, 128x16384xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<hbm, 128x512xbf16>
  %st = ncore.view %a offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x512xbf16> to !ncore.tile<sbuf, 128x128xbf16>
  ncore.loop %i trips 1024 {
    ncore.matmul %acc, %st, %a accumulate : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
  }
  ncore.tensor_copy %o1, %acc : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  ncore.tensor_copy %o2, %acc : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  ncore.tensor_copy %r, %acc : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

// A vector engine's writes set a time for the readers after its loop: the
// Vector engine copies row by row for a long loop, then two adds read the
// result. With only the Tensor engine's writes timed, both looked ready at
// once on GpSimd (idle during the loop) and went there; on the timeline
// they start when the loop ends, where the Vector engine is as free as
// GpSimd: one each (GpSimd first, its clock is the faster).
// CHECK-LABEL: ncore.program @after_a_long_vector_loop
// CHECK: ncore.loop
// CHECK: }
// CHECK: ncore.tensor_tensor add {{.+}} on gpsimd
// CHECK: ncore.tensor_tensor add %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : !ncore.tile<sbuf
ncore.program @after_a_long_vector_loop(%x: !ncore.tile<hbm, 128x512xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %o1 = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %o2 = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
  ncore.loop %i trips 1024 {
    ncore.tensor_copy %b, %a on vector : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  }
  ncore.tensor_tensor add %o1, %b, %a : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  ncore.tensor_tensor add %o2, %b, %a : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

// The dependency boundary (ncore.boundary = "dependency", set by
// convert-seam-to-ncore{kernel-boundary=dependency}): dependencies are
// tracked across the call (the load of %t after it waits for the scalar
// engine's read of %t before it). Each body instruction that meets the
// caller's memory waits for the caller engines that touched it: the body's
// load (ordinal 0, reads %a and writes SBUF 1024..1280, where %u was) and
// its scalar multiply (ordinal 3) wait for scalar and sync (mask 36). After
// the call, the load from %w meets nothing of the call and waits for
// nothing; the load of the call's output waits for the body's DMA engine.
// CHECK-LABEL: ncore.program @dependency
// CHECK: ncore.call_kernel @scale(%{{.+}}, %{{.+}}) {ncore.boundary = "dependency", ncore.call_id = 0 : i64, ncore.entry_waits = array<i64: 0, 36, 3, 36>
// CHECK-NEXT: ncore.dma_copy %[[V:.+]], %arg1
// CHECK-NEXT: ncore.sem_signal 4 on dma
// CHECK-NEXT: ncore.kernel_wait 0 for [4] on dma
// CHECK-NEXT: ncore.sem_wait 4 ge 1 on dma
// CHECK-NEXT: ncore.sem_wait 2 ge 1 on dma
// CHECK-NEXT: ncore.dma_copy %{{.+}}, %[[B:.+]] :
// CHECK-NOT: ncore.kernel_wait
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
ncore.program @dependency(%x: !ncore.tile<hbm, 128x64xf32>, %w: !ncore.tile<hbm, 128x64xf32>,
                          %y: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output"}) {
  %a = ncore.alloc offset 0 {name = "a"} : !ncore.tile<hbm, 128x64xf32>
  %b = ncore.alloc offset 32768 {name = "b"} : !ncore.tile<hbm, 128x64xf32>
  %t = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  %u = ncore.alloc offset 1024 : !ncore.tile<sbuf, 128x64xf32>
  %v = ncore.alloc offset 2048 : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.activation exp %u, %t : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %a, %u : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.call_kernel @scale(%a, %b) {ncore.boundary = "dependency", ncore.sbuf_base = 1024 : i64} : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %v, %w : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %t, %b : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.tensor_tensor add %v, %v, %t : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %y, %v : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}

// STATS: ncore-assign-engines
// STATS: 6 engine-moves
// STATS: stores-on-sync
// STATS: ncore-schedule
// STATS: 1 kernel-waits
// STATS: 6 loop-carried-waits
// STATS: signals
// STATS: waits
