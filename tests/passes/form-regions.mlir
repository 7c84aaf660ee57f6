// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-form-regions="mode=eager" | FileCheck %s --check-prefix=EAGER
// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-form-regions="mode=compile" | FileCheck %s --check-prefix=COMPILE
// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-fuse-qkv -seam-insert-kernels="kernels=qkv" -seam-form-regions="mode=eager" -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=EAGER-QKV
// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-fuse-qkv -seam-insert-kernels="kernels=qkv" -seam-form-regions="mode=compile" -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE-QKV
// RUN: not seam-opt %S/Inputs/two-blocks.mlir -seam-form-regions="mode=lazy" 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: seam-opt %s -split-input-file -seam-form-regions="mode=eager" -verify-diagnostics

// Eager: one region per block; the FNet block's host-fallback fourier_mix
// stays outside any region. Parameters are hoisted: loaded once.
// EAGER-LABEL: func.func @forward
// EAGER-SAME: attributes {seam.blocks = 3 : i64}
// EAGER-COUNT-10: seam.param
// EAGER: seam.fusion "attn.0.p0" -> tensor<1x128x256xbf16> {
// EAGER: seam.fusion "attn.1.p0" -> tensor<1x128x256xbf16> {
// EAGER-NOT: seam.fusion
// EAGER: seam.fourier_mix
// EAGER: seam.fusion "fnet.2.p0"
// EAGER-NOT: seam.block

// Compile: one region for the step, split only by the host op.
// COMPILE: seam.fusion "step" -> tensor<1x128x256xbf16> {
// COMPILE-NOT: seam.fusion
// COMPILE: seam.fourier_mix
// COMPILE: seam.fusion "step.p1"

// With the qkv kernel, eager splits each attention block around the call:
// 2 blocks x 2 fragments + the FNet tail; kernels are launches of their own.
// EAGER-QKV: seam-form-regions
// EAGER-QKV-DAG: 2 kernel-calls
// EAGER-QKV-DAG: 7 launches-per-step
// EAGER-QKV-DAG: 5 regions
// EAGER-QKV-DAG: 1 host-fallback-ops

// Compile keeps the calls inside: 2 launches (split only by the host op).
// COMPILE-QKV: seam-form-regions
// COMPILE-QKV-DAG: 2 kernel-calls
// COMPILE-QKV-DAG: 2 launches-per-step
// COMPILE-QKV-DAG: 2 regions

// BADMODE: for the --mode option: Cannot find option named 'lazy'!

func.func @remarks(%x: tensor<4x256xf32>, %c: tensor<4x256xcomplex<f32>>) -> (tensor<4x256xf32>, tensor<4x256xcomplex<f32>>) {
  %y:2 = seam.block "mix" 0 -> tensor<4x256xf32>, tensor<4x256xcomplex<f32>> {
    // expected-remark @+1 {{seam-form-regions: region 'mix.0.p0' (eager): 1 ops, ends at host-fallback op seam.fft}}
    %g = seam.gelu %x : tensor<4x256xf32>
    // expected-remark @+1 {{seam-form-regions: seam.fft runs on the host (no kernel replaces it): the region splits here}}
    %f = seam.fft %c axis 1 : tensor<4x256xcomplex<f32>> -> tensor<4x256xcomplex<f32>>
    // expected-remark @+1 {{region 'mix.0.p1' (eager): 1 ops, ends at the end of mix.0}}
    %s = seam.silu %g : tensor<4x256xf32>
    seam.yield %s, %f : tensor<4x256xf32>, tensor<4x256xcomplex<f32>>
  }
  return %y#0, %y#1 : tensor<4x256xf32>, tensor<4x256xcomplex<f32>>
}
