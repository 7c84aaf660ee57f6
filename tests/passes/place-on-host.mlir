// RUN: seam-opt %s -split-input-file -seam-place-on-host -verify-diagnostics | FileCheck %s

// A transpose that moves the last dimension and a broadcast of a scalar run
// on the host; a head swap and a row broadcast stay on the device.
// CHECK-LABEL: func.func @place
// CHECK: seam.transpose %arg0 perm [2, 0, 1] {seam.on_host}
// CHECK: seam.transpose %arg0 perm [0, 2, 1] :
// CHECK: seam.add %arg1, %arg2 {seam.on_host}
// CHECK: seam.add %arg1, %arg3 :
func.func @place(%x: tensor<2x3x4xf32>, %a: tensor<2x3x4xf32>, %s: tensor<1xf32>, %row: tensor<4xf32>) -> (tensor<4x2x3xf32>, tensor<2x4x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // expected-remark @+1 {{seam-place-on-host: seam.transpose runs on the host: the device lowers transposes that keep the last dimension or swap the last two}}
  %t = seam.transpose %x perm [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %u = seam.transpose %x perm [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  // expected-remark @+1 {{seam-place-on-host: seam.add runs on the host: the device lowers equal shapes or one operand broadcast over all rows, not [2, 3, 4] x f32 and [1] x f32}}
  %b = seam.add %a, %s : (tensor<2x3x4xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
  %c = seam.add %a, %row : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %t, %u, %b, %c : tensor<4x2x3xf32>, tensor<2x4x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// A primitive left unrecognised is announced.
// CHECK-LABEL: func.func @primitive
func.func @primitive(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{seam-place-on-host: seam.exp runs on the host: no fused op took it (seam-recognize) and it has no device lowering of its own}}
  %e = seam.exp %x : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
