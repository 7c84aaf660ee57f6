// RUN: seam-opt %s -split-input-file -seam-fuse-linear-scale -verify-diagnostics | FileCheck %s

// adaLN's gate after a row-parallel projection: all_reduce(linear) * g with
// g a slice of an all_gather (the same on every rank) becomes
// all_reduce(linear scale g); a product of a linear by a row directly too.
// CHECK-LABEL: func.func @gate
// CHECK: %[[G:.+]] = seam.all_gather
// CHECK: %[[R:.+]] = seam.reshape
// CHECK: %[[L:.+]] = seam.linear %arg0, %arg1 scale %[[R]] :
// CHECK-NEXT: %[[A:.+]] = seam.all_reduce %[[L]]
// CHECK-NOT: seam.mul
// CHECK: %[[L2:.+]] = seam.linear %arg0, %arg1 scale %arg3 {activation = "gelu_tanh"}
// CHECK-NOT: seam.mul
// CHECK: return %[[A]], %[[L2]]
func.func @gate(%x: tensor<1x256x64xbf16>, %w: tensor<64x96xbf16>, %m: tensor<1x24xbf16>, %row: tensor<96xbf16>) -> (tensor<1x256x96xbf16>, tensor<1x256x96xbf16>) {
  %all = seam.all_gather %m dim 1 ranks 4 : tensor<1x24xbf16> -> tensor<1x96xbf16>
  %g = seam.reshape %all : tensor<1x96xbf16> -> tensor<1x1x96xbf16>
  // expected-remark @+1 {{seam-fuse-linear-scale: the product by a row of 96 applied as the linear's output leaves PSUM (before the all_reduce: the row comes from a collective, the same on every rank)}}
  %y = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  %r = seam.all_reduce %y ranks 4 : tensor<1x256x96xbf16>
  %o = seam.mul %r, %g : (tensor<1x256x96xbf16>, tensor<1x1x96xbf16>) -> tensor<1x256x96xbf16>
  // expected-remark @+1 {{the product by a row of 96 applied as the linear's output leaves PSUM}}
  %y2 = seam.linear %x, %w {activation = "gelu_tanh"} : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  %o2 = seam.mul %row, %y2 : (tensor<96xbf16>, tensor<1x256x96xbf16>) -> tensor<1x256x96xbf16>
  return %o, %o2 : tensor<1x256x96xbf16>, tensor<1x256x96xbf16>
}

// -----

// Not folded: a row that may differ between ranks cannot move before the
// all_reduce; a linear with another user; a full-size operand (not a row).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: seam.mul
func.func @kept(%x: tensor<1x256x64xbf16>, %w: tensor<64x96xbf16>, %row: tensor<1x1x96xbf16>, %full: tensor<1x256x96xbf16>) -> (tensor<1x256x96xbf16>, tensor<1x256x96xbf16>, tensor<1x256x96xbf16>, tensor<1x256x96xbf16>) {
  %y = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  %r = seam.all_reduce %y ranks 4 : tensor<1x256x96xbf16>
  // expected-remark @+1 {{not folded into its linear: the scale is not known to be the same on every rank}}
  %o = seam.mul %r, %row : (tensor<1x256x96xbf16>, tensor<1x1x96xbf16>) -> tensor<1x256x96xbf16>
  %y2 = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  // expected-remark @+1 {{not folded into its linear: the linear's result has other users}}
  %o2 = seam.mul %y2, %row : (tensor<1x256x96xbf16>, tensor<1x1x96xbf16>) -> tensor<1x256x96xbf16>
  %y3 = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x96xbf16>) -> tensor<1x256x96xbf16>
  %o3 = seam.mul %y3, %full : (tensor<1x256x96xbf16>, tensor<1x256x96xbf16>) -> tensor<1x256x96xbf16>
  return %o, %o2, %y2, %o3 : tensor<1x256x96xbf16>, tensor<1x256x96xbf16>, tensor<1x256x96xbf16>, tensor<1x256x96xbf16>
}

// -----

// torch's export places the gate's unsqueeze where it is used, after the
// projection: views (slice, reshape) of a value defined before the linear
// move up, and the product folds.
// CHECK-LABEL: func.func @gate_view_after
// CHECK: %[[S:.+]] = seam.slice %arg2
// CHECK-NEXT: %[[G:.+]] = seam.reshape %[[S]]
// CHECK-NEXT: %[[L:.+]] = seam.linear %arg0, %arg1 scale %[[G]] :
// CHECK-NOT: seam.mul
// CHECK: return %[[L]]
func.func @gate_view_after(%x: tensor<1x128x64xf32>, %w: tensor<64x32xf32>, %m: tensor<1x96xf32>) -> tensor<1x128x32xf32> {
  // expected-remark @+1 {{the product by a row of 32 applied as the linear's output leaves PSUM}}
  %y = seam.linear %x, %w : (tensor<1x128x64xf32>, tensor<64x32xf32>) -> tensor<1x128x32xf32>
  %s = seam.slice %m offsets [0, 64] : tensor<1x96xf32> -> tensor<1x32xf32>
  %g = seam.reshape %s : tensor<1x32xf32> -> tensor<1x1x32xf32>
  %o = seam.mul %g, %y : (tensor<1x1x32xf32>, tensor<1x128x32xf32>) -> tensor<1x128x32xf32>
  return %o : tensor<1x128x32xf32>
}

// -----

// Near miss: a row computed after the linear by arithmetic (not views)
// stays where it is, and so does the product.
// CHECK-LABEL: func.func @gate_computed_after
// CHECK: seam.linear %arg0, %arg1 :
// CHECK: seam.mul
func.func @gate_computed_after(%x: tensor<1x128x64xf32>, %w: tensor<64x32xf32>, %m: tensor<1x1x32xf32>) -> tensor<1x128x32xf32> {
  %y = seam.linear %x, %w : (tensor<1x128x64xf32>, tensor<64x32xf32>) -> tensor<1x128x32xf32>
  %g = seam.add %m, %m : (tensor<1x1x32xf32>, tensor<1x1x32xf32>) -> tensor<1x1x32xf32>
  // expected-remark @+1 {{product not folded into its linear: the scale is computed after the linear}}
  %o = seam.mul %g, %y : (tensor<1x1x32xf32>, tensor<1x128x32xf32>) -> tensor<1x128x32xf32>
  return %o : tensor<1x128x32xf32>
}
