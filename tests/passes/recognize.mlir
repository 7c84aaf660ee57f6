// RUN: seam-opt %s -split-input-file -seam-recognize -verify-diagnostics | FileCheck %s

// MatMul + Add with parameter weight and bias: linear with bias.
// CHECK-LABEL: func.func @linear
// CHECK: %[[L:.+]] = seam.linear %arg0, %{{.+}}, %{{.+}} : (tensor<2x8x16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
// CHECK-NOT: seam.matmul
// CHECK-NOT: seam.add
// CHECK: return %[[L]]
func.func @linear(%x: tensor<2x8x16xf32>) -> tensor<2x8x4xf32> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<16x4xf32>
  %b = seam.param "b" init normal(0.02) seed 2 : tensor<4xf32>
  // expected-remark @+1 {{seam-recognize: matmul + add recognised as linear (K = 16, N = 4)}}
  %m = seam.matmul %x, %w : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %y = seam.add %m, %b : (tensor<2x8x4xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
  return %y : tensor<2x8x4xf32>
}

// -----

// Gemm's transB: the weight is a transpose of a parameter (load-time).
// CHECK-LABEL: func.func @linear_transposed_weight
// CHECK: %[[T:.+]] = seam.transpose
// CHECK: seam.linear %arg0, %[[T]] :
func.func @linear_transposed_weight(%x: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<4x16xf32>
  %t = seam.transpose %w perm [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  // expected-remark @+1 {{matmul recognised as linear (K = 16, N = 4)}}
  %m = seam.matmul %x, %t : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// Near miss: a computed right operand (q k^T outside attention) stays a
// matmul.
// CHECK-LABEL: func.func @matmul_of_activations
// CHECK: seam.matmul
func.func @matmul_of_activations(%x: tensor<8x16xf32>, %y: tensor<16x8xf32>) -> tensor<8x8xf32> {
  // expected-remark @+1 {{matmul not recognised as linear: its right operand is computed, not a parameter}}
  %m = seam.matmul %x, %y : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

// torch's GELU export: (x * (erf(x / sqrt 2) + 1)) * 0.5.
// CHECK-LABEL: func.func @gelu
// CHECK: %[[G:.+]] = seam.gelu %arg0 : tensor<4x8xf32>
// CHECK-NOT: seam.erf
// CHECK: return %[[G]]
func.func @gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = seam.param "s" init data(0.0) seed 0 {value = dense<1.41421354> : tensor<f32>} : tensor<f32>
  %one = seam.param "one" init data(0.0) seed 0 {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %half = seam.param "half" init data(0.0) seed 0 {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %d = seam.div %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{x (1 + erf(x / sqrt 2)) / 2 recognised as gelu}}
  %e = seam.erf %d : tensor<4x8xf32>
  %a = seam.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = seam.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = seam.mul %m, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Near miss: erf(x / 2) is not GELU's.
// CHECK-LABEL: func.func @not_gelu
// CHECK: seam.erf
func.func @not_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = seam.param "s" init data(0.0) seed 0 {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %d = seam.div %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{erf not recognised as gelu: its input is not x / sqrt(2)}}
  %e = seam.erf %d : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// x * sigmoid(x): silu; sigmoid(x) * y is not.
// CHECK-LABEL: func.func @silu
// CHECK: %[[S:.+]] = seam.silu %arg0
// CHECK: seam.sigmoid %arg1
// CHECK: return %[[S]]
func.func @silu(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-remark @+1 {{x * sigmoid(x) recognised as silu}}
  %s = seam.sigmoid %x : tensor<4x8xf32>
  %y = seam.mul %s, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{sigmoid not recognised as silu: its only user is not x * sigmoid(x)}}
  %s2 = seam.sigmoid %z : tensor<4x8xf32>
  %y2 = seam.mul %s2, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The expanded layer norm of an exporter before opset 17, with its affine.
// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[N:.+]] = seam.layer_norm %arg0 scale %{{.+}} bias %{{.+}} {epsilon = 9.99999974{{.*}}E-6 : f64}
// CHECK-NOT: seam.reduce
// CHECK: return %[[N]]
func.func @layer_norm(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %two = seam.param "two" init data(0.0) seed 0 {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %eps = seam.param "eps" init data(0.0) seed 0 {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %g = seam.param "g" init normal(0.02) seed 1 : tensor<8xf32>
  %b = seam.param "b" init normal(0.02) seed 2 : tensor<8xf32>
  // expected-remark @+1 {{(x - mean) / sqrt(var + eps) recognised as layer_norm with its affine}}
  %m = seam.reduce mean %x axes [2] keepdims : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %c = seam.sub %x, %m : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %p = seam.pow %c, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %v = seam.reduce mean %p axes [2] keepdims : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %ve = seam.add %v, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %sd = seam.sqrt %ve : tensor<2x4x1xf32>
  %n = seam.div %c, %sd : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %ng = seam.mul %n, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %y = seam.add %ng, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Near miss: the centred value is also returned (another user). What is
// left, c / sqrt(mean(c^2) + eps), is the RMS norm of c.
// CHECK-LABEL: func.func @layer_norm_shared
// CHECK: %[[M:.+]] = seam.reduce mean
// CHECK: %[[C:.+]] = seam.sub %arg0, %[[M]]
// CHECK: %[[N:.+]] = seam.rms_norm %[[C]]
// CHECK: return %[[N]], %[[C]]
func.func @layer_norm_shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = seam.param "two" init data(0.0) seed 0 {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %eps = seam.param "eps" init data(0.0) seed 0 {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  // expected-remark @+1 {{x - mean(x) not recognised as layer_norm: it is not divided by sqrt(mean((x - mean)^2) + eps), or an intermediate has other users}}
  %m = seam.reduce mean %x axes [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %c = seam.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %p = seam.pow %c, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{x / sqrt(mean(x^2) + eps) recognised as rms_norm}}
  %v = seam.reduce mean %p axes [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %ve = seam.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %sd = seam.sqrt %ve : tensor<4x1xf32>
  %n = seam.div %c, %sd : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Llama's RMSNorm export: x * (1 / sqrt(mean(x^2) + eps)) * w.
// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[N:.+]] = seam.rms_norm %arg0 scale %{{.+}} {epsilon = 9.99999997{{.*}}E-7 : f64}
// CHECK-NOT: seam.reduce
// CHECK: return %[[N]]
func.func @rms_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = seam.param "two" init data(0.0) seed 0 {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %eps = seam.param "eps" init data(0.0) seed 0 {value = dense<1.0e-6> : tensor<f32>} : tensor<f32>
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<8xf32>
  %p = seam.pow %x, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{x / sqrt(mean(x^2) + eps) recognised as rms_norm with its scale}}
  %v = seam.reduce mean %p axes [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %ve = seam.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %sd = seam.sqrt %ve : tensor<4x1xf32>
  %r = seam.reciprocal %sd : tensor<4x1xf32>
  %n = seam.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = seam.mul %n, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// softmax(q k^T / sqrt(D)) v over [B, H, S, D].
// CHECK-LABEL: func.func @attention
// CHECK: %[[A:.+]] = seam.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64}
// CHECK-NOT: seam.softmax
// CHECK: return %[[A]]
func.func @attention(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %s = seam.param "s" init data(0.0) seed 0 {value = dense<4.0> : tensor<f32>} : tensor<f32>
  %kt = seam.transpose %k perm [0, 1, 3, 2] : tensor<1x2x8x16xf32> -> tensor<1x2x16x8xf32>
  %qk = seam.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %sc = seam.div %qk, %s : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  // expected-remark @+1 {{softmax(q k^T * 0.25) v recognised as attention ([1, 2, 8, 16])}}
  %p = seam.softmax %sc axis 3 : tensor<1x2x8x8xf32>
  %o = seam.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Near miss: a softmax over another axis is not attention's.
// CHECK-LABEL: func.func @softmax_other_axis
// CHECK: seam.softmax
func.func @softmax_other_axis(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-remark @+1 {{softmax not recognised as attention: not over the last axis of [B, H, Sq, Sk]}}
  %p = seam.softmax %x axis 2 : tensor<1x2x8x8xf32>
  return %p : tensor<1x2x8x8xf32>
}

// -----

// A packed in_proj: one linear read by three equal column slices that feed
// an attention's q, k and v (through the head reshapes) is marked
// seam.fused_qkv (the qkv kernel's site).
// CHECK-LABEL: func.func @packed_qkv
// CHECK: seam.linear %arg0, %{{.+}}, %{{.+}} {seam.fused_qkv = ["q", "k", "v"]}
func.func @packed_qkv(%x: tensor<1x8x16xf32>) -> tensor<1x2x8x8xf32> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<16x48xf32>
  %b = seam.param "b" init normal(0.02) seed 2 : tensor<48xf32>
  // expected-remark @+2 {{matmul + add recognised as linear (K = 16, N = 48)}}
  // expected-remark @+1 {{the linear's three slices of 16 columns recognised as a packed QKV projection}}
  %m = seam.matmul %x, %w : (tensor<1x8x16xf32>, tensor<16x48xf32>) -> tensor<1x8x48xf32>
  %y = seam.add %m, %b : (tensor<1x8x48xf32>, tensor<48xf32>) -> tensor<1x8x48xf32>
  %q = seam.slice %y offsets [0, 0, 0] : tensor<1x8x48xf32> -> tensor<1x8x16xf32>
  %k = seam.slice %y offsets [0, 0, 16] : tensor<1x8x48xf32> -> tensor<1x8x16xf32>
  %v = seam.slice %y offsets [0, 0, 32] : tensor<1x8x48xf32> -> tensor<1x8x16xf32>
  %q4 = seam.reshape %q : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %k4 = seam.reshape %k : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %v4 = seam.reshape %v : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %qh = seam.transpose %q4 perm [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %kh = seam.transpose %k4 perm [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %vh = seam.transpose %v4 perm [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %o = seam.attention %qh, %kh, %vh {scale = 0.35355339 : f64} : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}

// -----

// Near miss: adaLN's modulation (one linear of silu(vec), read by three
// equal slices: shift, scale and gate) feeds no attention: a linear, not a
// packed QKV.
// CHECK-LABEL: func.func @three_slices_no_attention
// CHECK: seam.linear
// CHECK-NOT: seam.fused_qkv
func.func @three_slices_no_attention(%x: tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<16x48xf32>
  // expected-remark @+2 {{matmul recognised as linear (K = 16, N = 48)}}
  // expected-remark @+1 {{the linear's three slices of 16 columns not marked as a packed QKV projection: they do not feed an attention's q, k and v one each}}
  %y = seam.matmul %x, %w : (tensor<1x16xf32>, tensor<16x48xf32>) -> tensor<1x48xf32>
  %shift = seam.slice %y offsets [0, 0] : tensor<1x48xf32> -> tensor<1x16xf32>
  %scale = seam.slice %y offsets [0, 16] : tensor<1x48xf32> -> tensor<1x16xf32>
  %gate = seam.slice %y offsets [0, 32] : tensor<1x48xf32> -> tensor<1x16xf32>
  return %shift, %scale, %gate : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
}

// -----

// torch's GELU(approximate="tanh"): 0.5 (x (1 + tanh(c (x + 0.044715 x^3)))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: %[[G:.+]] = seam.gelu_tanh %arg0 : tensor<4x8xf32>
// CHECK-NOT: seam.tanh
// CHECK: return %[[G]]
func.func @gelu_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = seam.param "a" init data(0.0) seed 0 {value = dense<0.044715> : tensor<f32>} : tensor<f32>
  %c = seam.param "c" init data(0.0) seed 0 {value = dense<0.797884583> : tensor<f32>} : tensor<f32>
  %one = seam.param "one" init data(0.0) seed 0 {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %half = seam.param "half" init data(0.0) seed 0 {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %x2 = seam.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %x3 = seam.mul %x, %x2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ax3 = seam.mul %a, %x3 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = seam.add %x, %ax3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cs = seam.mul %c, %s : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) recognised as gelu_tanh}}
  %t = seam.tanh %cs : tensor<4x8xf32>
  %p = seam.add %one, %t : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = seam.mul %x, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = seam.mul %half, %m : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Near miss: tanh of a plain input.
// CHECK-LABEL: func.func @plain_tanh
// CHECK: seam.tanh
func.func @plain_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{tanh not recognised as gelu_tanh: its input is not sqrt(2 / pi) (x + 0.044715 x^3)}}
  %t = seam.tanh %x : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

// Rotate-half RoPE as Llama code writes it and torch exports it.
// CHECK-LABEL: func.func @rope
// CHECK: %[[R:.+]] = seam.rope %arg0, %{{.+}}, %{{.+}} : (tensor<1x2x8x16xf32>
// CHECK-NOT: seam.concat
// CHECK: return %[[R]]
func.func @rope(%x: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %cos = seam.param "cos" init rope_cos(10000.0) seed 0 : tensor<8x16xf32>
  %sin = seam.param "sin" init rope_sin(10000.0) seed 0 : tensor<8x16xf32>
  %x2 = seam.slice %x offsets [0, 0, 0, 8] : tensor<1x2x8x16xf32> -> tensor<1x2x8x8xf32>
  %n = seam.neg %x2 : tensor<1x2x8x8xf32>
  %x1 = seam.slice %x offsets [0, 0, 0, 0] : tensor<1x2x8x16xf32> -> tensor<1x2x8x8xf32>
  // expected-remark @+1 {{x cos + concat(-x2, x1) sin recognised as rope ([1, 2, 8, 16])}}
  %r = seam.concat %n, %x1 dim 3 : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32>
  %xc = seam.mul %x, %cos : (tensor<1x2x8x16xf32>, tensor<8x16xf32>) -> tensor<1x2x8x16xf32>
  %rs = seam.mul %r, %sin : (tensor<1x2x8x16xf32>, tensor<8x16xf32>) -> tensor<1x2x8x16xf32>
  %y = seam.add %xc, %rs : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %y : tensor<1x2x8x16xf32>
}

// -----

// Near miss: the halves are swapped the other way (rotate by -90 degrees).
// CHECK-LABEL: func.func @not_rope
// CHECK: seam.concat
func.func @not_rope(%x: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %x1 = seam.slice %x offsets [0, 0, 0, 0] : tensor<1x2x8x16xf32> -> tensor<1x2x8x8xf32>
  %n = seam.neg %x1 : tensor<1x2x8x8xf32>
  %x2 = seam.slice %x offsets [0, 0, 0, 8] : tensor<1x2x8x16xf32> -> tensor<1x2x8x8xf32>
  // expected-remark @+1 {{concatenation not recognised as rope: it is not concat(-x[..., D/2:], x[..., :D/2])}}
  %r = seam.concat %n, %x2 dim 3 : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x16xf32>
  return %r : tensor<1x2x8x16xf32>
}
