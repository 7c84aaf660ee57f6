// RUN: seam-opt %s -split-input-file --convert-seam-to-ncore | FileCheck %s
// RUN: seam-opt %s -split-input-file --convert-seam-to-ncore | FileCheck %s --check-prefix=COUNT

// A [1, 768, 3072] x [3072, 768] linear: a loop over 6 token tiles; N = 768
// is a 512 block and a 256 block; K = 3072 is 24 blocks: one peeled
// non-accumulating matmul and a loop of 23 accumulating ones. Nothing is
// unrolled: 4 matmul ops in all, not 6 x 2 x 24.

// COUNT-LABEL: ncore.program @prog_mlp
// COUNT-COUNT-4: ncore.matmul
// COUNT-NOT: ncore.matmul
// COUNT: // -----

// CHECK-LABEL: func.func private @prog_mlp
// CHECK-SAME: seam.ncore_program = @ncore::@prog_mlp
// CHECK-LABEL: ncore.program @prog_mlp
// CHECK-SAME: %[[X:[^:]+]]: !ncore.tile<hbm, 1x768x3072xbf16> {ncore.role = "input"}
// CHECK-SAME: %[[W:[^:]+]]: !ncore.tile<hbm, 3072x768xbf16> {ncore.role = "param"}
// CHECK-SAME: %[[Y:[^:]+]]: !ncore.tile<hbm, 1x768x768xbf16> {ncore.role = "output"}
// CHECK: ncore.loop %[[T:.+]] trips 6 {
// CHECK:   ncore.loop %{{.+}} trips 24 {
// CHECK:     ncore.transpose
// CHECK:     ncore.tensor_copy
// CHECK:   }
// CHECK:   ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x512xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x512xbf16>
// CHECK:   ncore.loop %{{.+}} trips 23 {
// CHECK:     ncore.dma_copy
// CHECK:     ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} accumulate : <psum, 128x512xf32>
// CHECK:   }
// CHECK:   ncore.tensor_copy
// CHECK:   ncore.dma_copy
// CHECK:   ncore.matmul %{{.+}} : <psum, 128x256xf32>
// CHECK:   ncore.loop %{{.+}} trips 23 {
// CHECK:     ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} accumulate : <psum, 128x256xf32>
func.func private @prog_mlp(%x: tensor<1x768x3072xbf16>, %w: tensor<3072x768xbf16>) -> tensor<1x768x768xbf16> attributes {seam.program} {
  %y = seam.linear %x, %w : (tensor<1x768x3072xbf16>, tensor<3072x768xbf16>) -> tensor<1x768x768xbf16>
  return %y : tensor<1x768x768xbf16>
}
func.func @forward(%x: tensor<1x768x3072xbf16>) -> tensor<1x768x768xbf16> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<3072x768xbf16>
  %y = call @prog_mlp(%x, %w) : (tensor<1x768x3072xbf16>, tensor<3072x768xbf16>) -> tensor<1x768x768xbf16>
  return %y : tensor<1x768x768xbf16>
}

// -----

// Bias, a partial token tile (200 = 128 + 72), K < 128, an intermediate in
// SBUF feeding a second linear (no HBM round trip).

// CHECK-LABEL: ncore.program @prog_bias
// CHECK-SAME: {ncore.role = "input"}
// CHECK-SAME: {ncore.role = "input"}
// CHECK-SAME: {ncore.role = "input"}
// CHECK: %[[H:.+]] = ncore.alloc : <sbuf, 128x128xf32>
// CHECK: ncore.transpose %{{.+}}, %{{.+}} : <psum, 64x128xf32>, <sbuf, 128x64xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x64xf32>, <sbuf, 64x128xf32>, <sbuf, 64x64xf32>
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 1x64xf32>, <hbm, 1x64xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x64xf32>, <sbuf, 1x128xf32>, <sbuf, 1x64xf32>
// CHECK: ncore.tensor_tensor add %{{.+}}, %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<psum, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
// CHECK: ncore.transpose %{{.+}}, %{{.+}} : <psum, 64x72xf32>, <sbuf, 72x64xf32>
// The second linear reads the SBUF intermediate through views.
// CHECK: %[[V:.+]] = ncore.view %[[H]] offsets #{{.+}} : <sbuf, 128x128xf32> to <sbuf, 128x64xf32>
// CHECK: ncore.transpose %{{.+}}, %[[V]]
func.func private @prog_bias(%x: tensor<200x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<200x64xf32> attributes {seam.program} {
  %h = seam.linear %x, %w, %b : (tensor<200x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<200x64xf32>
  %y = seam.linear %h, %w : (tensor<200x64xf32>, tensor<64x64xf32>) -> tensor<200x64xf32>
  return %y : tensor<200x64xf32>
}
