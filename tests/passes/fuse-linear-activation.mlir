// RUN: seam-opt %s -split-input-file -seam-fuse-linear-activation -verify-diagnostics | FileCheck %s

// gelu_tanh, gelu and silu of a linear used only by them move into the
// linear (applied as its output leaves PSUM).
// CHECK-LABEL: func.func @folded
// CHECK: %[[A:.+]] = seam.linear %arg0, %arg1 {activation = "gelu_tanh"}
// CHECK: %[[B:.+]] = seam.linear %arg0, %arg1, %arg2 {activation = "silu"}
// CHECK: %[[C:.+]] = seam.linear %arg0, %arg1 {activation = "gelu"}
// CHECK-NOT: seam.gelu
// CHECK-NOT: seam.silu
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @folded(%x: tensor<1x256x64xbf16>, %w: tensor<64x96xbf16>, %b: tensor<96xbf16>) -> (tensor<1x256x96xbf16>, tensor<1x256x96xbf16>, tensor<1x256x96xbf16>) {
  // expected-remark @+1 {{seam-fuse-linear-activation: gelu_tanh applied as the linear's output leaves PSUM (1x256x96)}}
  %y = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  %g = seam.gelu_tanh %y : tensor<1x256x96xbf16>
  // expected-remark @+1 {{silu applied}}
  %y2 = seam.linear %x, %w, %b : (tensor<1x256x64xbf16>, tensor<64x96xbf16>, tensor<96xbf16>) -> tensor<1x256x96xbf16>
  %s = seam.silu %y2 : tensor<1x256x96xbf16>
  // expected-remark @+1 {{gelu applied}}
  %y3 = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  %e = seam.gelu %y3 : tensor<1x256x96xbf16>
  return %g, %s, %e : tensor<1x256x96xbf16>, tensor<1x256x96xbf16>, tensor<1x256x96xbf16>
}

// -----

// The pre-activation value is also used: nothing moves.
// CHECK-LABEL: func.func @other_user
// CHECK: seam.linear %arg0, %arg1 :
// CHECK: seam.gelu_tanh
func.func @other_user(%x: tensor<1x256x64xf32>, %w: tensor<64x96xf32>) -> (tensor<1x256x96xf32>, tensor<1x256x96xf32>) {
  %y = seam.linear %x, %w : (tensor<1x256x64xf32>, tensor<64x96xf32>) -> tensor<1x256x96xf32>
  // expected-remark @+1 {{seam-fuse-linear-activation: gelu_tanh not folded into its linear: the linear's result has other users}}
  %g = seam.gelu_tanh %y : tensor<1x256x96xf32>
  return %y, %g : tensor<1x256x96xf32>, tensor<1x256x96xf32>
}

// -----

// A second activation after a folded one stays an op.
// CHECK-LABEL: func.func @twice
// CHECK: seam.linear %arg0, %arg1 {activation = "silu"}
// CHECK: seam.gelu
func.func @twice(%x: tensor<1x256x64xf32>, %w: tensor<64x96xf32>) -> tensor<1x256x96xf32> {
  %y = seam.linear %x, %w {activation = "silu"} : (tensor<1x256x64xf32>, tensor<64x96xf32>) -> tensor<1x256x96xf32>
  // expected-remark @+1 {{gelu not folded into its linear: the linear already applies silu}}
  %g = seam.gelu %y : tensor<1x256x96xf32>
  return %g : tensor<1x256x96xf32>
}

// -----

// seam.no_fuse (a kernel site's counterfactual in seam-run
// --explain-kernels) keeps the op out of every fusion.
// CHECK-LABEL: func.func @no_fuse
// CHECK: seam.linear %arg0, %arg1 {seam.no_fuse} :
// CHECK: seam.gelu
func.func @no_fuse(%x: tensor<1x256x64xf32>, %w: tensor<64x96xf32>) -> tensor<1x256x96xf32> {
  %y = seam.linear %x, %w {seam.no_fuse} : (tensor<1x256x64xf32>, tensor<64x96xf32>) -> tensor<1x256x96xf32>
  // expected-remark @+1 {{seam-fuse-linear-activation: gelu not folded into its linear: an op is marked seam.no_fuse}}
  %g = seam.gelu %y : tensor<1x256x96xf32>
  return %g : tensor<1x256x96xf32>
}

// -----

// A linear that scales its result: gelu(x W * s) is not gelu(x W) * s, so
// nothing moves (found by seam-smith).
// CHECK-LABEL: func.func @scaled
// CHECK: %[[Y:.+]] = seam.linear %arg0, %arg1 scale %arg2 :
// CHECK: seam.gelu %[[Y]]
func.func @scaled(%x: tensor<1x4x8xf32>, %w: tensor<8x16xf32>, %s: tensor<16xf32>) -> tensor<1x4x16xf32> {
  %y = seam.linear %x, %w scale %s : (tensor<1x4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
  // expected-remark @+1 {{seam-fuse-linear-activation: gelu not folded into its linear: the linear scales its result, and its activation would apply before the scale}}
  %g = seam.gelu %y : tensor<1x4x16xf32>
  return %g : tensor<1x4x16xf32>
}
