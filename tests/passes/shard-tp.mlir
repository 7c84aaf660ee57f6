// RUN: seam-opt %s -split-input-file -seam-shard-tp="tp=2" -verify-diagnostics | FileCheck %s

// A recognised encoder block: packed QKV (column parallel part by part, its
// bias sliced for real), heads split, attention on one head per rank, the
// output projection row parallel + all_reduce with its bias after; the MLP's
// first linear column parallel, its second row parallel.
// CHECK: module attributes {seam.tp = 2 : i64}
// CHECK-LABEL: func.func @block
// CHECK: seam.param "bqkv" init data{{.*}}seam.rank_values = [dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01]> : tensor<12xf32>, dense<[4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 2.000000e+01, 2.100000e+01, 2.200000e+01, 2.300000e+01]>
// CHECK: %[[QKV:.+]] = seam.linear %arg0, %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<4x12xf32>
// CHECK: seam.slice %[[QKV]] offsets [0, 0] : tensor<4x12xf32> -> tensor<4x4xf32>
// CHECK: seam.slice %[[QKV]] offsets [0, 4] : tensor<4x12xf32> -> tensor<4x4xf32>
// CHECK: seam.slice %[[QKV]] offsets [0, 8] : tensor<4x12xf32> -> tensor<4x4xf32>
// CHECK: seam.reshape %{{.+}} : tensor<4x4xf32> -> tensor<4x1x4xf32>
// CHECK: seam.attention {{.*}} -> tensor<1x1x4x4xf32>
// CHECK: %[[P:.+]] = seam.linear %{{.+}}, %{{.+}} : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[S:.+]] = seam.all_reduce %[[P]]
// CHECK: %[[O:.+]] = seam.add %[[S]], %{{.+}} : (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: seam.add %arg0, %[[O]]
// CHECK: seam.linear %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: seam.gelu %{{.+}} : tensor<4x8xf32>
// CHECK: seam.linear %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: seam.all_reduce
func.func @block(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = seam.param "wqkv" init normal(0.02) seed 1 : tensor<8x24xf32>
  %b = seam.param "bqkv" init data(0.0) seed 0 {value = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0]> : tensor<24xf32>} : tensor<24xf32>
  %wo = seam.param "wo" init normal(0.02) seed 2 : tensor<8x8xf32>
  %bo = seam.param "bo" init normal(0.02) seed 3 : tensor<8xf32>
  %w1 = seam.param "w1" init normal(0.02) seed 4 : tensor<8x16xf32>
  %w2 = seam.param "w2" init normal(0.02) seed 5 : tensor<16x8xf32>
  // expected-remark @+1 {{seam-shard-tp: 1 column-parallel linear (attention, 2 heads: 1 per rank), 1 row-parallel + all_reduce}}
  %qkv = seam.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<4x24xf32>
  %q = seam.slice %qkv offsets [0, 0] : tensor<4x24xf32> -> tensor<4x8xf32>
  %k = seam.slice %qkv offsets [0, 8] : tensor<4x24xf32> -> tensor<4x8xf32>
  %v = seam.slice %qkv offsets [0, 16] : tensor<4x24xf32> -> tensor<4x8xf32>
  %q1 = seam.reshape %q : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %q2 = seam.transpose %q1 perm [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
  %q3 = seam.reshape %q2 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %k1 = seam.reshape %k : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %k2 = seam.transpose %k1 perm [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
  %k3 = seam.reshape %k2 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %v1 = seam.reshape %v : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %v2 = seam.transpose %v1 perm [1, 0, 2] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
  %v3 = seam.reshape %v2 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %a = seam.attention %q3, %k3, %v3 {scale = 5.000000e-01 : f64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a1 = seam.reshape %a : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %a2 = seam.transpose %a1 perm [1, 0, 2] : tensor<2x4x4xf32> -> tensor<4x2x4xf32>
  %a3 = seam.reshape %a2 : tensor<4x2x4xf32> -> tensor<4x8xf32>
  %o = seam.linear %a3, %wo, %bo : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = seam.add %x, %o : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{seam-shard-tp: 1 column-parallel linear, 1 row-parallel + all_reduce}}
  %h = seam.linear %r, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %g = seam.gelu %h : tensor<4x16xf32>
  %y = seam.linear %g, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %z = seam.add %r, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// SwiGLU: gate and up both column parallel (the product joins them), down
// row parallel.
// CHECK-LABEL: func.func @swiglu
// CHECK-COUNT-2: seam.linear %arg0, %{{.+}} : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
// CHECK: seam.linear %{{.+}}, %{{.+}} : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: seam.all_reduce
func.func @swiglu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %wg = seam.param "wg" init normal(0.02) seed 1 : tensor<8x12xf32>
  %wu = seam.param "wu" init normal(0.02) seed 2 : tensor<8x12xf32>
  %wd = seam.param "wd" init normal(0.02) seed 3 : tensor<12x8xf32>
  // expected-remark @+1 {{seam-shard-tp: 2 column-parallel linears, 1 row-parallel + all_reduce}}
  %g = seam.linear %x, %wg : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %s = seam.silu %g : tensor<4x12xf32>
  %u = seam.linear %x, %wu : (tensor<4x8xf32>, tensor<8x12xf32>) -> tensor<4x12xf32>
  %m = seam.mul %s, %u : (tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x12xf32>
  %y = seam.linear %m, %wd : (tensor<4x12xf32>, tensor<12x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Near miss: 3 heads do not split over 2 ranks.
func.func @heads(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %w = seam.param "wqkv" init normal(0.02) seed 1 : tensor<6x18xf32>
  %wo = seam.param "wo" init normal(0.02) seed 2 : tensor<6x6xf32>
  // expected-error @+1 {{--tp 2: cannot shard the linear [6, 18]: a reshape [4, 6] -> [4, 3, 2] splits the split axis into 3 (heads), not divisible by --tp 2}}
  %qkv = seam.linear %x, %w : (tensor<4x6xf32>, tensor<6x18xf32>) -> tensor<4x18xf32>
  %q = seam.slice %qkv offsets [0, 0] : tensor<4x18xf32> -> tensor<4x6xf32>
  %k = seam.slice %qkv offsets [0, 6] : tensor<4x18xf32> -> tensor<4x6xf32>
  %v = seam.slice %qkv offsets [0, 12] : tensor<4x18xf32> -> tensor<4x6xf32>
  %q1 = seam.reshape %q : tensor<4x6xf32> -> tensor<4x3x2xf32>
  %q2 = seam.transpose %q1 perm [1, 0, 2] : tensor<4x3x2xf32> -> tensor<3x4x2xf32>
  %q3 = seam.reshape %q2 : tensor<3x4x2xf32> -> tensor<1x3x4x2xf32>
  %k1 = seam.reshape %k : tensor<4x6xf32> -> tensor<4x3x2xf32>
  %k2 = seam.transpose %k1 perm [1, 0, 2] : tensor<4x3x2xf32> -> tensor<3x4x2xf32>
  %k3 = seam.reshape %k2 : tensor<3x4x2xf32> -> tensor<1x3x4x2xf32>
  %v1 = seam.reshape %v : tensor<4x6xf32> -> tensor<4x3x2xf32>
  %v2 = seam.transpose %v1 perm [1, 0, 2] : tensor<4x3x2xf32> -> tensor<3x4x2xf32>
  %v3 = seam.reshape %v2 : tensor<3x4x2xf32> -> tensor<1x3x4x2xf32>
  %a = seam.attention %q3, %k3, %v3 {scale = 5.000000e-01 : f64} : (tensor<1x3x4x2xf32>, tensor<1x3x4x2xf32>, tensor<1x3x4x2xf32>) -> tensor<1x3x4x2xf32>
  %a1 = seam.reshape %a : tensor<1x3x4x2xf32> -> tensor<3x4x2xf32>
  %a2 = seam.transpose %a1 perm [1, 0, 2] : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  %a3 = seam.reshape %a2 : tensor<4x3x2xf32> -> tensor<4x6xf32>
  %o = seam.linear %a3, %wo : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  return %o : tensor<4x6xf32>
}

// -----

// Near miss: an unrecognised op (a softmax over the split axis) between the
// two linears.
func.func @softmax_between(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w1 = seam.param "w1" init normal(0.02) seed 1 : tensor<8x16xf32>
  %w2 = seam.param "w2" init normal(0.02) seed 2 : tensor<16x8xf32>
  // expected-error @+1 {{--tp 2: cannot shard the linear [8, 16]: an op the TP rules do not cover reads a split value (at seam.softmax)}}
  %h = seam.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %s = seam.softmax %h axis 1 : tensor<4x16xf32>
  %y = seam.linear %s, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Near miss: a lone linear's split output would reach the step's output.
func.func @lone(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<8x16xf32>
  // expected-error @+1 {{--tp 2: cannot shard the linear [8, 16]: a split value reaches the step's output without a row-parallel linear (at func.return)}}
  %h = seam.linear %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}
