// RUN: seam-opt %s -split-input-file -ncore-double-buffer | FileCheck %s
// RUN: seam-opt %s -split-input-file -ncore-double-buffer -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// A K loop refilling one weight tile by DMA: unrolled by two, the second
// copy on a second tile; the odd fifth iteration follows the loop; the start
// flag stays on the first copy only.
// CHECK-LABEL: ncore.program @k_loop
// CHECK: %[[W0:.+]] = ncore.alloc : <sbuf, 128x128xbf16>
// CHECK-NEXT: %[[W1:.+]] = ncore.alloc : <sbuf, 128x128xbf16>
// CHECK: ncore.loop %[[I:.+]] trips 2 {
// CHECK-NEXT: ncore.view %{{.+}}[%[[I]]] offsets #[[M0:.+]] :
// CHECK-NEXT: ncore.dma_copy %[[W0]]
// CHECK-NEXT: ncore.matmul %{{.+}}, %[[W0]], %{{.+}} accumulate {start_level = 0 : i64}
// CHECK-NEXT: ncore.view %{{.+}}[%[[I]]] offsets #[[M1:.+]] :
// CHECK-NEXT: ncore.dma_copy %[[W1]]
// CHECK-NEXT: ncore.matmul %{{.+}}, %[[W1]], %{{.+}} accumulate :
// CHECK-NEXT: }
// CHECK-NEXT: ncore.view %{{.+}} offsets #[[M2:.+]] :
// CHECK-NEXT: ncore.dma_copy %[[W0]]
// CHECK-NEXT: ncore.matmul %{{.+}}, %[[W0]], %{{.+}} accumulate :
ncore.program @k_loop(%w: !ncore.tile<hbm, 640x128xbf16> {ncore.role = "input", ncore.name = "w"},
                  %x: !ncore.tile<hbm, 128x256xbf16> {ncore.role = "input", ncore.name = "x"},
                  %y: !ncore.tile<hbm, 128x256xf32> {ncore.role = "output", ncore.name = "y"}) {
  %xt = ncore.alloc : !ncore.tile<sbuf, 128x256xbf16>
  %wt = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %acc = ncore.alloc : !ncore.tile<psum, 128x256xf32>
  %o = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.dma_copy %xt, %x : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<hbm, 128x256xbf16>
  ncore.loop %k trips 5 {
    %wv = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 640x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
    ncore.dma_copy %wt, %wv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
    ncore.matmul %acc, %wt, %xt accumulate {start_level = 0 : i64} : !ncore.tile<psum, 128x256xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x256xbf16>
  }
  ncore.tensor_copy %o, %acc : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<psum, 128x256xf32>
  ncore.dma_copy %y, %o : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
}

// -----

// A tile read before the DMA refills it carries a value across iterations:
// not double-buffered.
// CHECK-LABEL: ncore.program @carried
// CHECK: ncore.loop %{{.+}} trips 4 {
// CHECK-NOT: ncore.loop
ncore.program @carried(%x: !ncore.tile<hbm, 512x64xf32>, %y: !ncore.tile<hbm, 128x64xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.memset %s, 0.0 : !ncore.tile<sbuf, 128x64xf32>
  ncore.loop %i trips 4 {
    ncore.tensor_tensor add %s, %s, %t : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
    %xv = ncore.view %x[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x64xf32> to !ncore.tile<hbm, 128x64xf32>
    ncore.dma_copy %t, %xv : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  }
  ncore.dma_copy %y, %s : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}

// A tile drained by DMA (an elementwise op whose result lives in HBM):
// computed whole in each iteration, then stored. With a second tile the
// add of row tile i + 1 does not wait for the store of row tile i.
// CHECK-LABEL: ncore.program @drained
// CHECK: %[[O0:.+]] = ncore.alloc : <sbuf, 128x256xf32>
// CHECK-NEXT: %[[O1:.+]] = ncore.alloc : <sbuf, 128x256xf32>
// CHECK: ncore.loop %{{.+}} trips 2 {
// CHECK: ncore.tensor_tensor add %[[O0]]
// CHECK: ncore.dma_copy %{{.+}}, %[[O0]]
// CHECK: ncore.tensor_tensor add %[[O1]]
// CHECK: ncore.dma_copy %{{.+}}, %[[O1]]
// CHECK-NEXT: }
ncore.program @drained(%a: !ncore.tile<hbm, 512x256xf32>, %y: !ncore.tile<hbm, 512x256xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x1024xf32>
  %o = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.loop %i trips 4 {
    %tv = ncore.view %t[%i] offsets affine_map<(d0) -> (0, d0 * 256)> : !ncore.tile<sbuf, 128x1024xf32> to !ncore.tile<sbuf, 128x256xf32>
    ncore.tensor_tensor add %o, %tv, %tv : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
    %yv = ncore.view %y[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x256xf32> to !ncore.tile<hbm, 128x256xf32>
    ncore.dma_copy %yv, %o : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
  }
}

// -----

// A drained tile that the body reads before writing it (an accumulation
// stored every iteration) carries a value across iterations: not
// double-buffered.
// CHECK-LABEL: ncore.program @drained_carried
// CHECK: ncore.loop %{{.+}} trips 4 {
// CHECK-NOT: ncore.loop
ncore.program @drained_carried(%y: !ncore.tile<hbm, 512x256xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  %o = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.loop %i trips 4 {
    ncore.tensor_tensor add %o, %o, %t : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
    %yv = ncore.view %y[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x256xf32> to !ncore.tile<hbm, 128x256xf32>
    ncore.dma_copy %yv, %o : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
  }
}

// STATS: ncore-double-buffer
// STATS: 4 loops
// STATS: 4 tiles

// -----

// Second buffers live only inside their loop: each of two loops gets the
// SBUF left by the program's peak, though the two together would not fit
// (50,000 bytes per partition left, 40,000 per second buffer).
// CHECK-LABEL: ncore.program @sequential_loops
// CHECK: ncore.loop %{{.+}} trips 2 {
// CHECK: ncore.loop %{{.+}} trips 2 {
ncore.program @sequential_loops(%x: !ncore.tile<hbm, 512x10000xf32>, %y: !ncore.tile<hbm, 512x10000xf32>) attributes {seam.sbuf_peak_bytes = 146608 : i64} {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x10000xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x10000xf32>
  ncore.loop %i trips 4 {
    %xv = ncore.view %x[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x10000xf32> to !ncore.tile<hbm, 128x10000xf32>
    ncore.dma_copy %a, %xv : !ncore.tile<sbuf, 128x10000xf32>, !ncore.tile<hbm, 128x10000xf32>
    %yv = ncore.view %y[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x10000xf32> to !ncore.tile<hbm, 128x10000xf32>
    ncore.dma_copy %yv, %a : !ncore.tile<hbm, 128x10000xf32>, !ncore.tile<sbuf, 128x10000xf32>
  }
  ncore.loop %j trips 4 {
    %xv = ncore.view %y[%j] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x10000xf32> to !ncore.tile<hbm, 128x10000xf32>
    ncore.dma_copy %b, %xv : !ncore.tile<sbuf, 128x10000xf32>, !ncore.tile<hbm, 128x10000xf32>
    %yv = ncore.view %x[%j] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x10000xf32> to !ncore.tile<hbm, 128x10000xf32>
    ncore.dma_copy %yv, %b : !ncore.tile<hbm, 128x10000xf32>, !ncore.tile<sbuf, 128x10000xf32>
  }
}
