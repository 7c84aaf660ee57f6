// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore -verify-diagnostics | FileCheck %s

// complex<f32> on the device: an HBM tensor of interleaved (re, im) f32, a
// trailing dim of 2, at program boundaries (arguments, results) and kernel
// boundaries (operands, results); a kernel's complex result is HBM scratch
// the next kernel reads.

// CHECK-LABEL: ncore.program @prog_c
// CHECK-SAME: %[[X:.+]]: !ncore.tile<hbm, 4x768x2xf32> {ncore.role = "input"}
// CHECK-SAME: %[[Y:.+]]: !ncore.tile<hbm, 4x768xf32> {ncore.role = "output"}
// CHECK: %[[S:.+]] = ncore.alloc {name = "kernel{{[0-9]+}}"} : <hbm, 3072x2xf32>
// CHECK: %[[F:.+]] = ncore.reshape %[[S]] : <hbm, 3072x2xf32> to <hbm, 4x768x2xf32>
// CHECK: ncore.call_kernel @[[FFT:kernel_fft_[0-9a-f]+]](%{{.+}}, %[[F]]
// CHECK: ncore.call_kernel @[[IFFT:kernel_ifft_[0-9a-f]+]]({{.*}}) : !ncore.tile<hbm, 4x768x2xf32>, !ncore.tile<hbm, 4x768xf32>,
// CHECK: ncore.program @[[FFT]](
// CHECK-SAME: !ncore.tile<hbm, 4x768x2xf32> {ncore.role = "input"}
// CHECK-SAME: !ncore.tile<hbm, 4x768x2xf32> {ncore.role = "output"}
func.func private @prog_c(%x: tensor<4x768xcomplex<f32>>) -> tensor<4x768xf32> attributes {seam.program} {
  %f = seam.kernel_call "fft"(%x) {config = {axis = 1 : i64}} : (tensor<4x768xcomplex<f32>>) -> tensor<4x768xcomplex<f32>>
  %y = seam.kernel_call "ifft"(%f) {config = {axis = 1 : i64}} : (tensor<4x768xcomplex<f32>>) -> tensor<4x768xf32>
  return %y : tensor<4x768xf32>
}

// -----

// A complex result leaves the program as its own output (f32 [..., 2]).

// CHECK-LABEL: ncore.program @prog_out
// CHECK-SAME: !ncore.tile<hbm, 2x16x3xf32> {ncore.role = "input"}
// CHECK-SAME: !ncore.tile<hbm, 2x16x3x2xf32> {ncore.role = "output"}
// CHECK: ncore.call_kernel @{{kernel_fft_[0-9a-f]+}}
func.func private @prog_out(%x: tensor<2x16x3xf32>) -> tensor<2x16x3xcomplex<f32>> attributes {seam.program} {
  %f = seam.kernel_call "fft"(%x) {config = {axis = 1 : i64}} : (tensor<2x16x3xf32>) -> tensor<2x16x3xcomplex<f32>>
  return %f : tensor<2x16x3xcomplex<f32>>
}

// -----

// Moving complex data on the device (reshape, slice, ...) is not lowered:
// a diagnostic, not a crash.

func.func private @complex_reshape(%x: tensor<4x768xcomplex<f32>>) -> tensor<3072xcomplex<f32>> attributes {seam.program} {
  // expected-error @+1 {{has element type 'complex<f32>', which the device holds only in HBM at program and kernel boundaries (interleaved re, im f32); it must run on the host or in a kernel}}
  %r = seam.reshape %x : tensor<4x768xcomplex<f32>> -> tensor<3072xcomplex<f32>>
  return %r : tensor<3072xcomplex<f32>>
}
