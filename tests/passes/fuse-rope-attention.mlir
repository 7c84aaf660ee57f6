// RUN: seam-opt %s -split-input-file -seam-fuse-rope-attention -verify-diagnostics | FileCheck %s

// q and k rotated with the same tables: the rope moves into the attention.
// CHECK-LABEL: func.func @direct
// CHECK-NOT: seam.rope
// CHECK: seam.attention %arg0, %arg1, %arg2 rope(%{{.+}}, %{{.+}}) {scale
func.func @direct(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<256x64xf32>
  %qr = seam.rope %q, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  %kr = seam.rope %k, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  // expected-remark @+1 {{seam-fuse-rope-attention: fused rope into attention over 256 tokens}}
  %o = seam.attention %qr, %kr, %v {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}

// -----

// Two streams rotated separately, then concatenated (Flux double-stream).
// CHECK-LABEL: func.func @through_concat
// CHECK-DAG: %[[Q:.+]] = seam.concat %arg0, %arg1 dim 2 : (tensor<1x2x512x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x768x64xf32>
// CHECK-DAG: %[[K:.+]] = seam.concat %arg2, %arg3 dim 2
// CHECK-DAG: %[[C:.+]] = seam.concat %{{.+}}, %{{.+}} dim 0 : (tensor<512x64xf32>, tensor<256x64xf32>) -> tensor<768x64xf32>
// CHECK: seam.attention %[[Q]], %[[K]], %arg4 rope(%[[C]], %{{.+}})
// CHECK-NOT: seam.rope
func.func @through_concat(%qt: tensor<1x2x512x64xf32>, %qi: tensor<1x2x256x64xf32>, %kt: tensor<1x2x512x64xf32>, %ki: tensor<1x2x256x64xf32>, %v: tensor<1x2x768x64xf32>) -> tensor<1x2x768x64xf32> {
  %ct = seam.param "cos_t" init rope_cos(1.0e+04) seed 0 : tensor<512x64xf32>
  %st = seam.param "sin_t" init rope_sin(1.0e+04) seed 0 : tensor<512x64xf32>
  %ci = seam.param "cos_i" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  %si = seam.param "sin_i" init rope_sin(1.0e+04) seed 0 : tensor<256x64xf32>
  %qtr = seam.rope %qt, %ct, %st : (tensor<1x2x512x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<1x2x512x64xf32>
  %qir = seam.rope %qi, %ci, %si : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  %ktr = seam.rope %kt, %ct, %st : (tensor<1x2x512x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<1x2x512x64xf32>
  %kir = seam.rope %ki, %ci, %si : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  %q = seam.concat %qtr, %qir dim 2 : (tensor<1x2x512x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x768x64xf32>
  %k = seam.concat %ktr, %kir dim 2 : (tensor<1x2x512x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x768x64xf32>
  // expected-remark @+1 {{fused rope into attention over 768 tokens (through a concatenation of 2 rotated streams)}}
  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x768x64xf32>, tensor<1x2x768x64xf32>, tensor<1x2x768x64xf32>) -> tensor<1x2x768x64xf32>
  return %o : tensor<1x2x768x64xf32>
}

// -----

// Only q is rotated: nothing to fold.
// CHECK-LABEL: func.func @only_q
// CHECK: seam.rope
// CHECK: seam.attention %{{.+}}, %arg1, %arg2 {scale
func.func @only_q(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<256x64xf32>
  %qr = seam.rope %q, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  // expected-remark @+1 {{seam-fuse-rope-attention: not fused: only q is rotated by seam.rope}}
  %o = seam.attention %qr, %k, %v {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}

// -----

// Different tables for q and k.
// CHECK-LABEL: func.func @different_tables
// CHECK-COUNT-2: seam.rope
func.func @different_tables(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<256x64xf32>
  %c2 = seam.param "cos2" init rope_cos(5.0e+02) seed 0 : tensor<256x64xf32>
  %qr = seam.rope %q, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  %kr = seam.rope %k, %c2, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  // expected-remark @+1 {{not fused: q and k use different rope tables}}
  %o = seam.attention %qr, %kr, %v {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}

// -----

// The rotated q is also returned: the rope must stay, so no fusion.
// CHECK-LABEL: func.func @other_users
// CHECK: seam.attention %{{.+}}, %{{.+}}, %arg2 {scale
func.func @other_users(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) {
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<256x64xf32>
  %qr = seam.rope %q, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  %kr = seam.rope %k, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  // expected-remark @+1 {{not fused: a rotated value has other users}}
  %o = seam.attention %qr, %kr, %v {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o, %qr : tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>
}

// -----

// seam.no_fuse on the attention or on a rope (a kernel site's counterfactual
// in seam-run --explain-kernels) keeps the rope out of the attention.
// CHECK-LABEL: func.func @no_fuse
// CHECK: seam.rope
// CHECK: seam.attention %{{.+}}, %{{.+}}, %arg2 {scale = 1.250000e-01 : f64, seam.no_fuse}
func.func @no_fuse(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>, %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<256x64xf32>
  %qr = seam.rope %q, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  %kr = seam.rope %k, %c, %s : (tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  // expected-remark @+1 {{seam-fuse-rope-attention: not fused: an op is marked seam.no_fuse}}
  %o = seam.attention %qr, %kr, %v {scale = 0.125 : f64, seam.no_fuse} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}
