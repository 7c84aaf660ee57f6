// RUN: seam-opt %s -split-input-file -seam-overlap-independent -verify-diagnostics | FileCheck %s
// RUN: seam-opt %s -split-input-file -seam-overlap-independent="remarks=false" -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// (Counters add up over both inputs: the reshape of the second moves too.)

// Two blocks of adaLN: the second block's modulation (silu(vec) @ W, one
// row, only arguments) moves behind the first block's layer_norm, before
// the first block's linear; the token work stays where it was.
// CHECK-LABEL: func.func @two_blocks
// CHECK: %[[M1:.+]] = seam.linear %{{.+}}, %arg2
// CHECK: %[[N1:.+]] = seam.layer_norm %arg0
// CHECK-NEXT: %[[S2:.+]] = seam.silu %arg1
// CHECK-NEXT: %[[M2:.+]] = seam.linear %[[S2]], %arg3
// CHECK-NEXT: %[[R2:.+]] = seam.reshape %[[M2]]
// CHECK-NEXT: %[[Y1:.+]] = seam.linear %[[N1]], %arg4
// CHECK: seam.layer_norm %{{.+}} scale %[[R2]]
// STATS: seam-overlap-independent
// STATS: 4 moved
// STATS: 2 norms-overlapped
func.func @two_blocks(%x: tensor<1x256x64xbf16>, %vec: tensor<1x64xbf16>, %wm1: tensor<64x64xbf16>, %wm2: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<1x256x64xbf16> {
  %s1 = seam.silu %vec : tensor<1x64xbf16>
  %m1 = seam.linear %s1, %wm1 : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %r1 = seam.reshape %m1 : tensor<1x64xbf16> -> tensor<64xbf16>
  %n1 = seam.layer_norm %x scale %r1 : (tensor<1x256x64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  %y1 = seam.linear %n1, %w : (tensor<1x256x64xbf16>, tensor<64x64xbf16>) -> tensor<1x256x64xbf16>
  %h = seam.add %x, %y1 : (tensor<1x256x64xbf16>, tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  // expected-remark @+1 {{seam-overlap-independent: seam.silu moved behind the layer_norm at}}
  %s2 = seam.silu %vec : tensor<1x64xbf16>
  // expected-remark @+1 {{seam.linear moved behind the layer_norm}}
  %m2 = seam.linear %s2, %wm2 : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %r2 = seam.reshape %m2 : tensor<1x64xbf16> -> tensor<64xbf16>
  %n2 = seam.layer_norm %h scale %r2 : (tensor<1x256x64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  return %n2 : tensor<1x256x64xbf16>
}

// -----

// Nothing moves but a view: work on every token (more than one row) stays
// even when it reads only arguments, and a chain already ahead of the norm
// stays there. The reshape, used after the norm, moves behind it (a view:
// no remark).
// CHECK-LABEL: func.func @stays
// CHECK: seam.silu %arg1
// CHECK-NEXT: seam.linear
// CHECK-NEXT: seam.layer_norm %arg0
// CHECK-NEXT: seam.reshape
// CHECK-NEXT: seam.gelu %arg0
// CHECK-NEXT: seam.add
func.func @stays(%x: tensor<1x256x64xbf16>, %vec: tensor<1x64xbf16>, %wm: tensor<64x64xbf16>) -> (tensor<1x256x64xbf16>, tensor<1x256x64xbf16>) {
  %s = seam.silu %vec : tensor<1x64xbf16>
  %m = seam.linear %s, %wm : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %n = seam.layer_norm %x : (tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  %g = seam.gelu %x : tensor<1x256x64xbf16>
  %r = seam.reshape %m : tensor<1x64xbf16> -> tensor<1x1x64xbf16>
  %a = seam.add %n, %r : (tensor<1x256x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16>
  return %a, %g : tensor<1x256x64xbf16>, tensor<1x256x64xbf16>
}
