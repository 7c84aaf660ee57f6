// RUN: seam-opt %s -split-input-file -seam-fuse-qkv -verify-diagnostics | FileCheck %s
// RUN: seam-opt %s -split-input-file -seam-fuse-qkv -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// Three projections of one input feeding q, k and v: fused.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[WQ:.+]] = seam.param "wq"
// CHECK: %[[WK:.+]] = seam.param "wk"
// CHECK: %[[WV:.+]] = seam.param "wv"
// CHECK: %[[W:.+]] = seam.concat %[[WQ]], %[[WK]], %[[WV]] dim 1 : (tensor<256x128xf32>, tensor<256x128xf32>, tensor<256x128xf32>) -> tensor<256x384xf32>
// CHECK: %[[F:.+]] = seam.linear %arg0, %[[W]] {seam.fused_qkv = ["q", "k", "v"]} : (tensor<1x128x256xf32>, tensor<256x384xf32>) -> tensor<1x128x384xf32>
// CHECK: seam.slice %[[F]] offsets [0, 0, 0] : tensor<1x128x384xf32> -> tensor<1x128x128xf32>
// CHECK: seam.slice %[[F]] offsets [0, 0, 128] : tensor<1x128x384xf32> -> tensor<1x128x128xf32>
// CHECK: seam.slice %[[F]] offsets [0, 0, 256] : tensor<1x128x384xf32> -> tensor<1x128x128xf32>
// CHECK-NOT: seam.linear %arg0
func.func @qkv(%x: tensor<1x128x256xf32>) -> tensor<1x1x128x128xf32> {
  %wq = seam.param "wq" init normal(0.02) seed 1 : tensor<256x128xf32>
  // expected-remark @+1 {{seam-fuse-qkv: fused 3 linears (q, k, v) reading [1, 128, 256] x f32 into one linear with N = 384}}
  %q = seam.linear %x, %wq : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %wk = seam.param "wk" init normal(0.02) seed 2 : tensor<256x128xf32>
  %k = seam.linear %x, %wk : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %wv = seam.param "wv" init normal(0.02) seed 3 : tensor<256x128xf32>
  %v = seam.linear %x, %wv : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %q4 = seam.reshape %q : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %k4 = seam.reshape %k : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %v4 = seam.reshape %v : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %qn = seam.rms_norm %q4 : (tensor<1x1x128x128xf32>) -> tensor<1x1x128x128xf32>
  %o = seam.attention %qn, %k4, %v4 {scale = 0.088 : f64} : (tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>) -> tensor<1x1x128x128xf32>
  return %o : tensor<1x1x128x128xf32>
}

// -----

// Three linears with different inputs: nothing to fuse.
// CHECK-LABEL: func.func @different_inputs
// CHECK-COUNT-3: seam.linear %arg
// CHECK-NOT: seam.concat
func.func @different_inputs(%a: tensor<1x128x256xf32>, %b: tensor<1x128x256xf32>, %c: tensor<1x128x256xf32>) -> tensor<1x1x128x128xf32> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<256x128xf32>
  %q = seam.linear %a, %w : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %k = seam.linear %b, %w : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %v = seam.linear %c, %w : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %q4 = seam.reshape %q : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %k4 = seam.reshape %k : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %v4 = seam.reshape %v : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %o = seam.attention %q4, %k4, %v4 {scale = 0.088 : f64} : (tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>) -> tensor<1x1x128x128xf32>
  return %o : tensor<1x1x128x128xf32>
}

// -----

// k and v from one input (cross attention): the two-linear case, with bias.
// CHECK-LABEL: func.func @kv
// CHECK: seam.concat %{{.+}}, %{{.+}} dim 1 : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x64xf32>
// CHECK: seam.concat %{{.+}}, %{{.+}} dim 0 : (tensor<32xf32>, tensor<32xf32>) -> tensor<64xf32>
// CHECK: seam.linear %arg1, %{{.+}}, %{{.+}} {seam.fused_qkv = ["k", "v"]}
func.func @kv(%q: tensor<1x1x16x32xf32>, %ctx: tensor<1x16x64xf32>) -> tensor<1x1x16x32xf32> {
  %wk = seam.param "wk" init normal(0.02) seed 2 : tensor<64x32xf32>
  %bk = seam.param "bk" init zeros(0.0) seed 0 : tensor<32xf32>
  // expected-remark @+1 {{fused 2 linears (k, v)}}
  %k = seam.linear %ctx, %wk, %bk : (tensor<1x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %wv = seam.param "wv" init normal(0.02) seed 3 : tensor<64x32xf32>
  %bv = seam.param "bv" init zeros(0.0) seed 0 : tensor<32xf32>
  %v = seam.linear %ctx, %wv, %bv : (tensor<1x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %k4 = seam.reshape %k : tensor<1x16x32xf32> -> tensor<1x1x16x32xf32>
  %v4 = seam.reshape %v : tensor<1x16x32xf32> -> tensor<1x1x16x32xf32>
  %o = seam.attention %q, %k4, %v4 {scale = 0.17 : f64} : (tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32>) -> tensor<1x1x16x32xf32>
  return %o : tensor<1x1x16x32xf32>
}

// -----

// Legality: bias on some projections only.
// CHECK-LABEL: func.func @mixed_bias
// CHECK-NOT: seam.concat
func.func @mixed_bias(%q: tensor<1x1x16x32xf32>, %ctx: tensor<1x16x64xf32>) -> tensor<1x1x16x32xf32> {
  %wk = seam.param "wk" init normal(0.02) seed 2 : tensor<64x32xf32>
  %bk = seam.param "bk" init zeros(0.0) seed 0 : tensor<32xf32>
  // expected-remark @+1 {{seam-fuse-qkv: not fused (k, v): some linears have a bias and some do not}}
  %k = seam.linear %ctx, %wk, %bk : (tensor<1x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %wv = seam.param "wv" init normal(0.02) seed 3 : tensor<64x32xf32>
  %v = seam.linear %ctx, %wv : (tensor<1x16x64xf32>, tensor<64x32xf32>) -> tensor<1x16x32xf32>
  %k4 = seam.reshape %k : tensor<1x16x32xf32> -> tensor<1x1x16x32xf32>
  %v4 = seam.reshape %v : tensor<1x16x32xf32> -> tensor<1x1x16x32xf32>
  %o = seam.attention %q, %k4, %v4 {scale = 0.17 : f64} : (tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32>, tensor<1x1x16x32xf32>) -> tensor<1x1x16x32xf32>
  return %o : tensor<1x1x16x32xf32>
}

// -----

// A projection of the same input that feeds no attention stays apart.
// CHECK-LABEL: func.func @mlp_sibling
// CHECK: seam.linear %arg0, %{{.+}} {seam.fused_qkv = ["q", "k", "v"]}
// CHECK: seam.linear %arg0, %{{.+}} : (tensor<1x128x256xf32>, tensor<256x512xf32>)
func.func @mlp_sibling(%x: tensor<1x128x256xf32>) -> (tensor<1x1x128x128xf32>, tensor<1x128x512xf32>) {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<256x128xf32>
  // expected-remark @+1 {{fused 3 linears}}
  %q = seam.linear %x, %w : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %k = seam.linear %x, %w : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %v = seam.linear %x, %w : (tensor<1x128x256xf32>, tensor<256x128xf32>) -> tensor<1x128x128xf32>
  %wm = seam.param "wm" init normal(0.02) seed 1 : tensor<256x512xf32>
  // expected-remark @+1 {{seam-fuse-qkv: linear not fused with the q/k/v projections of the same input: it feeds no attention}}
  %m = seam.linear %x, %wm : (tensor<1x128x256xf32>, tensor<256x512xf32>) -> tensor<1x128x512xf32>
  %q4 = seam.reshape %q : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %k4 = seam.reshape %k : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %v4 = seam.reshape %v : tensor<1x128x128xf32> -> tensor<1x1x128x128xf32>
  %o = seam.attention %q4, %k4, %v4 {scale = 0.088 : f64} : (tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>) -> tensor<1x1x128x128xf32>
  return %o, %m : tensor<1x1x128x128xf32>, tensor<1x128x512xf32>
}

// STATS: seam-fuse-qkv
// STATS-DAG: 3 fused-groups
// STATS-DAG: 8 fused-linears
// STATS-DAG: 1 rejected-groups
