// RUN: seam-opt %s -split-input-file -seam-fuse-norm-modulation -verify-diagnostics | FileCheck %s

// adaLN (Flux, DiT): n + n * s + h with [1, 1, D] shift and scale becomes one
// layer_norm with scale s, bias h and scale_offset 1; the vectors are
// reshaped to [D].
// CHECK-LABEL: func.func @ada_ln
// CHECK-DAG: %[[S:.+]] = seam.reshape %arg1 : tensor<1x1x64xbf16> -> tensor<64xbf16>
// CHECK-DAG: %[[H:.+]] = seam.reshape %arg2 : tensor<1x1x64xbf16> -> tensor<64xbf16>
// CHECK: %[[N:.+]] = seam.layer_norm %arg0 scale %[[S]] bias %[[H]] {epsilon = 9.9999999999999995E-7 : f64, scale_offset = 1.000000e+00 : f64}
// CHECK-NOT: seam.mul
// CHECK-NOT: seam.add
// CHECK: return %[[N]]
func.func @ada_ln(%x: tensor<1x256x64xbf16>, %s: tensor<1x1x64xbf16>, %h: tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16> {
  // expected-remark @+1 {{seam-fuse-norm-modulation: folded n * (1 + s) + h into layer_norm over 64 features (3 elementwise ops removed)}}
  %n = seam.layer_norm %x {epsilon = 1.0e-6 : f64} : (tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  %m = seam.mul %n, %s : (tensor<1x256x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16>
  %a = seam.add %n, %m : (tensor<1x256x64xbf16>, tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  %o = seam.add %a, %h : (tensor<1x256x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16>
  return %o : tensor<1x256x64xbf16>
}

// -----

// Operands in either order; [D] vectors need no reshape; n * s + h has no
// offset.
// CHECK-LABEL: func.func @scale_then_shift
// CHECK-NOT: seam.reshape
// CHECK: %[[N:.+]] = seam.layer_norm %arg0 scale %arg1 bias %arg2 : (
// CHECK-NOT: scale_offset
// CHECK: return %[[N]]
func.func @scale_then_shift(%x: tensor<2x8x32xf32>, %s: tensor<32xf32>, %h: tensor<32xf32>) -> tensor<2x8x32xf32> {
  // expected-remark @+1 {{folded n * s + h into layer_norm over 32 features (2 elementwise ops removed)}}
  %n = seam.layer_norm %x : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %m = seam.mul %s, %n : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %o = seam.add %h, %m : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}

// -----

// n * (1 + s) without a shift; a shift alone.
// CHECK-LABEL: func.func @partial
// CHECK: seam.layer_norm %arg0 scale %{{.+}} {scale_offset = 1.000000e+00 : f64}
// CHECK: seam.layer_norm %arg0 bias %{{.+}} :
// CHECK-NOT: seam.add
func.func @partial(%x: tensor<1x16x32xf32>, %s: tensor<1x32xf32>, %h: tensor<1x1x32xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  // expected-remark @+1 {{folded n * (1 + s) into layer_norm over 32 features (2 elementwise ops removed)}}
  %n = seam.layer_norm %x : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %m = seam.mul %n, %s : (tensor<1x16x32xf32>, tensor<1x32xf32>) -> tensor<1x16x32xf32>
  %a = seam.add %m, %n : (tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  // expected-remark @+1 {{folded n + h into layer_norm over 32 features (1 elementwise op removed)}}
  %n2 = seam.layer_norm %x : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %b = seam.add %n2, %h : (tensor<1x16x32xf32>, tensor<1x1x32xf32>) -> tensor<1x16x32xf32>
  return %a, %b : tensor<1x16x32xf32>, tensor<1x16x32xf32>
}

// -----

// The normalised value is also returned: it must still be computed, so
// nothing is folded.
// CHECK-LABEL: func.func @other_user
// CHECK: seam.layer_norm %arg0 {epsilon
// CHECK: seam.mul
// CHECK: seam.add
func.func @other_user(%x: tensor<1x16x32xf32>, %s: tensor<32xf32>, %h: tensor<32xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  // expected-remark @+1 {{seam-fuse-norm-modulation: not fused: the normalised value has two users that are not n * s and n + n * s}}
  %n = seam.layer_norm %x {epsilon = 1.0e-6 : f64} : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %m = seam.mul %n, %s : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %o = seam.add %m, %h : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  return %n, %o : tensor<1x16x32xf32>, tensor<1x16x32xf32>
}

// -----

// A full-size gate is not a per-feature modulation; neither is a per-token
// one ([S, 1] broadcasts over the features).
// CHECK-LABEL: func.func @not_per_feature
// CHECK-COUNT-2: seam.mul
func.func @not_per_feature(%x: tensor<1x16x32xf32>, %g: tensor<1x16x32xf32>, %t: tensor<1x16x1xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  // expected-remark @+1 {{not fused: n is multiplied by a value that is not per-feature [32]}}
  %n = seam.layer_norm %x : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %m = seam.mul %n, %g : (tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  // expected-remark @+1 {{not fused: n is multiplied by a value that is not per-feature [32]}}
  %n2 = seam.layer_norm %x : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %m2 = seam.mul %n2, %t : (tensor<1x16x32xf32>, tensor<1x16x1xf32>) -> tensor<1x16x32xf32>
  return %m, %m2 : tensor<1x16x32xf32>, tensor<1x16x32xf32>
}

// -----

// A norm that already has a scale, and one that feeds no elementwise op,
// are not candidates: no remark.
// CHECK-LABEL: func.func @not_candidates
// CHECK: seam.layer_norm %arg0 scale %arg1 :
// CHECK: seam.mul
func.func @not_candidates(%x: tensor<1x16x32xf32>, %g: tensor<32xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  %n = seam.layer_norm %x scale %g : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %m = seam.mul %n, %g : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %n2 = seam.layer_norm %x : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %r = seam.rms_norm %n2 : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  return %m, %r : tensor<1x16x32xf32>, tensor<1x16x32xf32>
}

// -----

// adaLN as diffusers writes it (and torch exports it): n * (1 + s) + h, the
// 1 a constant (a splat param or init ones, through a reshape): the sum
// folds into scale_offset 1.
// CHECK-LABEL: func.func @one_plus_scale
// CHECK-DAG: %[[S:.+]] = seam.reshape %arg1 : tensor<1x1x64xf32> -> tensor<64xf32>
// CHECK-DAG: %[[H:.+]] = seam.reshape %arg2 : tensor<1x1x64xf32> -> tensor<64xf32>
// CHECK: %[[N:.+]] = seam.layer_norm %arg0 scale %[[S]] bias %[[H]] {epsilon = 9.9999999999999995E-7 : f64, scale_offset = 1.000000e+00 : f64}
// CHECK-NOT: seam.add
// CHECK: %[[N2:.+]] = seam.layer_norm %arg0 scale %{{.+}} {scale_offset = 1.000000e+00 : f64}
// CHECK-NOT: seam.add
// CHECK: return %[[N]], %[[N2]]
func.func @one_plus_scale(%x: tensor<1x256x64xf32>, %s: tensor<1x1x64xf32>, %h: tensor<1x1x64xf32>) -> (tensor<1x256x64xf32>, tensor<1x256x64xf32>) {
  %one = seam.param "one" init data(0.0) seed 0 {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %p = seam.add %s, %one : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<1x1x64xf32>
  // expected-remark @+1 {{seam-fuse-norm-modulation: folded n * (1 + s) + h into layer_norm over 64 features (3 elementwise ops removed)}}
  %n = seam.layer_norm %x {epsilon = 1.0e-6 : f64} : (tensor<1x256x64xf32>) -> tensor<1x256x64xf32>
  %m = seam.mul %n, %p : (tensor<1x256x64xf32>, tensor<1x1x64xf32>) -> tensor<1x256x64xf32>
  %o = seam.add %m, %h : (tensor<1x256x64xf32>, tensor<1x1x64xf32>) -> tensor<1x256x64xf32>
  %ones = seam.param "ones" init ones(1.0) seed 0 : tensor<1x64xf32>
  %one3 = seam.reshape %ones : tensor<1x64xf32> -> tensor<1x1x64xf32>
  %p2 = seam.add %one3, %s : (tensor<1x1x64xf32>, tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  // expected-remark @+1 {{folded n * (1 + s) into layer_norm over 64 features (2 elementwise ops removed)}}
  %n2 = seam.layer_norm %x : (tensor<1x256x64xf32>) -> tensor<1x256x64xf32>
  %m2 = seam.mul %p2, %n2 : (tensor<1x1x64xf32>, tensor<1x256x64xf32>) -> tensor<1x256x64xf32>
  return %o, %m2 : tensor<1x256x64xf32>, tensor<1x256x64xf32>
}

// -----

// Near misses: 2 + s, and a 1 + s read elsewhere too, stay computed: the
// norm takes the sum as its scale (no offset) and the add remains.
// CHECK-LABEL: func.func @not_one_plus_scale
// CHECK: %[[P:.+]] = seam.add %arg1, %{{.+}}
// CHECK: seam.layer_norm %arg0 scale %{{.+}} :
// CHECK-NOT: scale_offset
// CHECK: %[[Q:.+]] = seam.add %{{.+}}, %arg1
// CHECK: seam.layer_norm %arg0 scale %{{.+}} :
// CHECK-NOT: scale_offset
func.func @not_one_plus_scale(%x: tensor<1x256x64xf32>, %s: tensor<1x1x64xf32>) -> (tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x1x64xf32>) {
  %two = seam.param "two" init data(0.0) seed 0 {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %p = seam.add %s, %two : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<1x1x64xf32>
  // expected-remark @+1 {{folded n * s into layer_norm over 64 features (1 elementwise op removed)}}
  %n = seam.layer_norm %x : (tensor<1x256x64xf32>) -> tensor<1x256x64xf32>
  %m = seam.mul %n, %p : (tensor<1x256x64xf32>, tensor<1x1x64xf32>) -> tensor<1x256x64xf32>
  %one = seam.param "one" init data(0.0) seed 0 {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %q = seam.add %one, %s : (tensor<f32>, tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  // expected-remark @+1 {{folded n * s into layer_norm over 64 features (1 elementwise op removed)}}
  %n2 = seam.layer_norm %x : (tensor<1x256x64xf32>) -> tensor<1x256x64xf32>
  %m2 = seam.mul %n2, %q : (tensor<1x256x64xf32>, tensor<1x1x64xf32>) -> tensor<1x256x64xf32>
  return %m, %m2, %q : tensor<1x256x64xf32>, tensor<1x256x64xf32>, tensor<1x1x64xf32>
}
