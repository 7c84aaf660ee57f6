// RUN: seam-opt %s -split-input-file | seam-opt -split-input-file | FileCheck %s
// RUN: seam-opt %s -split-input-file --mlir-print-op-generic | seam-opt -split-input-file | FileCheck %s

// Every ncore op, printed and parsed back.

// CHECK-LABEL: ncore.program private @kernel_rmsnorm
// CHECK-SAME: (!ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>)
ncore.program private @kernel_rmsnorm(!ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>)

// CHECK-LABEL: ncore.program @mlp
// CHECK-SAME: %[[X:[^:]+]]: !ncore.tile<hbm, 512x768xbf16> {ncore.role = "input"}
// CHECK-SAME: %[[W:[^:]+]]: !ncore.tile<hbm, 768x512xbf16> {ncore.role = "param"}
// CHECK-SAME: %[[Y:[^:]+]]: !ncore.tile<hbm, 512x512xbf16> {ncore.role = "output"}
ncore.program @mlp(%x: !ncore.tile<hbm, 512x768xbf16> {ncore.role = "input"},
                   %w: !ncore.tile<hbm, 768x512xbf16> {ncore.role = "param"},
                   %y: !ncore.tile<hbm, 512x512xbf16> {ncore.role = "output"}) {
  // CHECK: %[[XT:.+]] = ncore.alloc : <sbuf, 128x128xbf16>
  // CHECK: %[[WT:.+]] = ncore.alloc offset 256 : <sbuf, 128x512xbf16>
  // CHECK: %[[ACC:.+]] = ncore.alloc offset 2048 : <psum, 128x512xf32>
  // CHECK: %[[SP:.+]] = ncore.alloc {name = "spill0"} : <hbm, 512x512xbf16>
  %xt = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %wt = ncore.alloc offset 256 : !ncore.tile<sbuf, 128x512xbf16>
  %acc = ncore.alloc offset 2048 : !ncore.tile<psum, 128x512xf32>
  %spill = ncore.alloc {name = "spill0"} : !ncore.tile<hbm, 512x512xbf16>
  // CHECK: ncore.loop %[[M:.+]] trips 4 {
  ncore.loop %m trips 4 {
    // CHECK: ncore.loop %[[K:.+]] trips 6 {
    ncore.loop %k trips 6 {
      // CHECK: %[[XV:.+]] = ncore.view %[[X]][%[[M]], %[[K]]] offsets #{{.+}} : <hbm, 512x768xbf16> to <hbm, 128x128xbf16>
      %xv = ncore.view %x[%m, %k] offsets affine_map<(d0, d1) -> (d0 * 128, d1 * 128)>
            : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x128xbf16>
      // CHECK: ncore.dma_copy %[[XT]], %[[XV]] : <sbuf, 128x128xbf16>, <hbm, 128x128xbf16>
      ncore.dma_copy %xt, %xv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
      %wv = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 128, 0)>
            : !ncore.tile<hbm, 768x512xbf16> to !ncore.tile<hbm, 128x512xbf16>
      // CHECK: ncore.dma_copy %[[WT]], %{{.+}} on dma
      ncore.dma_copy %wt, %wv on dma : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<hbm, 128x512xbf16>
      // CHECK: ncore.sem_wait 1 ge 1 steps [6, 1] on tensor
      ncore.sem_wait 1 ge 1 steps [6, 1] on tensor
      // CHECK: ncore.sem_wait 2 ge 0 steps [6, 1] carried 2 on tensor
      ncore.sem_wait 2 ge 0 steps [6, 1] carried 2 on tensor
      // CHECK: ncore.matmul %[[ACC]], %[[XT]], %[[WT]] accumulate on tensor : <psum, 128x512xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x512xbf16>
      ncore.matmul %acc, %xt, %wt accumulate on tensor
          : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
      // CHECK: ncore.sem_signal 2 on tensor
      ncore.sem_signal 2 on tensor
    }
    // CHECK: ncore.matmul %[[ACC]], %[[XT]], %[[WT]] :
    ncore.matmul %acc, %xt, %wt
        : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
    // CHECK: ncore.tensor_copy %[[WT]], %[[ACC]] on scalar : <sbuf, 128x512xbf16>, <psum, 128x512xf32>
    ncore.tensor_copy %wt, %acc on scalar : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<psum, 128x512xf32>
    %yv = ncore.view %spill[%m] offsets affine_map<(d0) -> (d0 * 128, 0)>
          : !ncore.tile<hbm, 512x512xbf16> to !ncore.tile<hbm, 128x512xbf16>
    // CHECK: ncore.dma_copy %{{.+}}, %[[WT]] :
    ncore.dma_copy %yv, %wt : !ncore.tile<hbm, 128x512xbf16>, !ncore.tile<sbuf, 128x512xbf16>
    // CHECK: ncore.sem_signal 4 count 2 on dma
    ncore.sem_signal 4 count 2 on dma
  }
  // CHECK: ncore.call_kernel @kernel_rmsnorm(%{{.+}}, %{{.+}}) : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
  %x0 = ncore.view %x offsets affine_map<() -> (0, 0)> : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x768xbf16>
  %x1 = ncore.view %x offsets affine_map<() -> (128, 0)> : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x768xbf16>
  ncore.call_kernel @kernel_rmsnorm(%x0, %x1) : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
  // CHECK: ncore.sem_wait 4 ge 8
  ncore.sem_wait 4 ge 8
  // CHECK: ncore.kernel_wait 0 for [0, 4] on vector
  ncore.kernel_wait 0 for [0, 4] on vector
  // CHECK: ncore.inlined_call @kernel_rmsnorm(%{{.+}}, %{{.+}}) : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16> {
  // CHECK-NEXT: ^bb0(%[[A:.+]]: !ncore.tile<hbm, 128x768xbf16>, %{{.+}}: !ncore.tile<hbm, 128x768xbf16>):
  // CHECK-NEXT: ncore.alloc offset 0 : <sbuf, 128x768xbf16>
  // CHECK-NEXT: ncore.dma_copy %{{.+}}, %[[A]]
  // CHECK-NEXT: ncore.sem_signal 0 on dma
  // CHECK-NEXT: }
  ncore.inlined_call @kernel_rmsnorm(%x0, %x1) : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16> {
  ^bb0(%a: !ncore.tile<hbm, 128x768xbf16>, %b: !ncore.tile<hbm, 128x768xbf16>):
    %t = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x768xbf16>
    ncore.dma_copy %t, %a : !ncore.tile<sbuf, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
    ncore.sem_signal 0 on dma
  }
}

// -----

// CHECK-LABEL: ncore.program @softmax
ncore.program @softmax(%x: !ncore.tile<hbm, 128x512xf32>) {
  %s = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %e = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  %sum = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  %r = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_reduce max %{{.+}}, %{{.+}} : <sbuf, 128x1xf32>, <psum, 128x512xf32>
  ncore.tensor_reduce max %m, %s : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<psum, 128x512xf32>
  // CHECK: ncore.tensor_scalar multiply %{{.+}}, %{{.+}} imm -1.000000e+00 : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.tensor_scalar multiply %m, %m imm -1.0 : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.activation exp %{{.+}}, %{{.+}} bias %{{.+}} reduce %{{.+}} {scale = 1.250000e-01 : f32} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.activation exp %e, %s bias %m reduce %sum {scale = 0.125 : f32}
      : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.activation gelu_tanh %{{.+}}, %{{.+}} {bias = 1.000000e+00 : f32} :
  ncore.activation gelu_tanh %e, %e {bias = 1.0 : f32} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  // CHECK: ncore.reciprocal %{{.+}}, %{{.+}} on gpsimd : <sbuf, 128x1xf32>, <sbuf, 128x1xf32>
  ncore.reciprocal %r, %sum on gpsimd : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.scalar_tensor_tensor multiply %r, %sum, %m, %r : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_tensor_scan multiply then add %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.tensor_tensor_scan multiply then add %r, %sum, %m, %r : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_tensor_scan add then multiply %{{.+}}, %{{.+}}, %{{.+}} imm 0.000000e+00 :
  ncore.tensor_tensor_scan add then multiply %r, %sum, %m imm 0.0 : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.scalar_tensor_tensor add %{{.+}}, %{{.+}}, %{{.+}} imm 2.000000e+00 on gpsimd :
  ncore.scalar_tensor_tensor add %r, %sum, %m imm 2.0 on gpsimd : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_scalar multiply %{{.+}}, %{{.+}}, %{{.+}} :
  ncore.tensor_scalar multiply %e, %e, %r : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_scalar subtract %{{.+}}, %{{.+}} imm 1.000000e+00 reverse on scalar :
  ncore.tensor_scalar subtract %e, %e imm 1.0 reverse on scalar : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  // Two operations in one pass: (x - m) * r, and from PSUM x * 2 + r.
  // CHECK: ncore.tensor_scalar subtract %{{.+}}, %{{.+}}, %{{.+}} then multiply with %{{.+}} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.tensor_scalar subtract %e, %e, %m then multiply with %r : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_scalar multiply %{{.+}}, %{{.+}} imm 2.000000e+00 then add with %{{.+}} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.tensor_scalar multiply %e, %s imm 2.0 then add with %r : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_scalar add %{{.+}}, %{{.+}}, %{{.+}} then max imm1 0.000000e+00 on gpsimd :
  ncore.tensor_scalar add %e, %e, %m then max imm1 0.0 on gpsimd : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.tensor_tensor add %{{.+}}, %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  ncore.tensor_tensor add %e, %e, %s : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  // CHECK: ncore.tensor_tensor max %{{.+}}, %{{.+}}, %{{.+}} on gpsimd :
  ncore.tensor_tensor max %e, %e, %e on gpsimd : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  // CHECK: ncore.memset %{{.+}}, 0.000000e+00 : <sbuf, 128x512xf32>
  ncore.memset %e, 0.0 : !ncore.tile<sbuf, 128x512xf32>
  // CHECK: ncore.memset %{{.+}}, -3.000000e+38 on gpsimd : <sbuf, 128x512xf32>
  ncore.memset %e, -3.0e38 on gpsimd : !ncore.tile<sbuf, 128x512xf32>
}

// -----

// CHECK-LABEL: ncore.program @masks_and_layout
ncore.program @masks_and_layout(%x: !ncore.tile<hbm, 1x6x256x128xbf16>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x4x64xbf16>
  %pt = ncore.alloc : !ncore.tile<psum, 64x128xf32>
  // CHECK: ncore.iota %{{.+}} base 0.000000e+00 partition_step 1.000000e+00 free_step 0.000000e+00 : <sbuf, 128x1xf32>
  ncore.iota %c base 0.0 partition_step 1.0 free_step 0.0 : !ncore.tile<sbuf, 128x1xf32>
  // CHECK: ncore.affine_select is_ge %{{.+}}, %{{.+}} base 0.000000e+00 partition_step 1.000000e+00 free_step -1.000000e+00 else -3.000000e+38 on gpsimd : <sbuf, 128x128xf32>, <sbuf, 128x128xf32>
  ncore.affine_select is_ge %t, %t base 0.0 partition_step 1.0 free_step -1.0 else -3.0e38 on gpsimd
      : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
  // CHECK: %[[Q:.+]] = ncore.view %{{.+}} offsets #{{.+}} : <sbuf, 128x4x64xbf16> to <sbuf, 32x4x32xbf16, start = 64>
  %q = ncore.view %b offsets affine_map<() -> (64, 0, 32)> : !ncore.tile<sbuf, 128x4x64xbf16> to !ncore.tile<sbuf, 32x4x32xbf16, start = 64>
  // CHECK: ncore.reshape %[[Q]] : <sbuf, 32x4x32xbf16, start = 64> to <sbuf, 32x128xbf16, start = 64>
  %q2 = ncore.reshape %q : !ncore.tile<sbuf, 32x4x32xbf16, start = 64> to !ncore.tile<sbuf, 32x128xbf16, start = 64>
  // CHECK: ncore.view %{{.+}} offsets #{{.+}} strides [1, 0] : <sbuf, 128x1xf32> to <sbuf, 128x128xf32>
  %bc = ncore.view %c offsets affine_map<() -> (0, 0)> strides [1, 0] : !ncore.tile<sbuf, 128x1xf32> to !ncore.tile<sbuf, 128x128xf32>
  ncore.tensor_tensor multiply %t, %t, %bc : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
  // CHECK: ncore.reshape %{{.+}} : <hbm, 1x6x256x128xbf16> to <hbm, 1536x128xbf16>
  %flat = ncore.reshape %x : !ncore.tile<hbm, 1x6x256x128xbf16> to !ncore.tile<hbm, 1536x128xbf16>
  %tb = ncore.alloc : !ncore.tile<sbuf, 128x64xbf16>
  // CHECK: ncore.transpose %{{.+}}, %{{.+}} : <psum, 64x128xf32>, <sbuf, 128x64xbf16>
  ncore.transpose %pt, %tb : !ncore.tile<psum, 64x128xf32>, !ncore.tile<sbuf, 128x64xbf16>
}

// -----

// CHECK-LABEL: ncore.program @collectives
ncore.program @collectives(%x: !ncore.tile<hbm, 128x768xf32>, %y: !ncore.tile<hbm, 128x768xf32>,
                           %g: !ncore.tile<hbm, 512x768xf32>) {
  // CHECK: ncore.all_reduce add %{{.+}}, %{{.+}} ranks 4 : <hbm, 128x768xf32>, <hbm, 128x768xf32>
  ncore.all_reduce add %y, %x ranks 4 : !ncore.tile<hbm, 128x768xf32>, !ncore.tile<hbm, 128x768xf32>
  // CHECK: ncore.all_gather %{{.+}}, %{{.+}} ranks 4 on collective : <hbm, 512x768xf32>, <hbm, 128x768xf32>
  ncore.all_gather %g, %x ranks 4 on collective : !ncore.tile<hbm, 512x768xf32>, !ncore.tile<hbm, 128x768xf32>
}
