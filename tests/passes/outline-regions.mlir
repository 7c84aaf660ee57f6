// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-fuse-qkv -seam-insert-kernels="kernels=qkv" -seam-form-regions="mode=eager" -seam-outline-regions 2>/dev/null | FileCheck %s
// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-fuse-qkv -seam-insert-kernels="kernels=qkv" -seam-form-regions="mode=eager" -seam-outline-regions -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: seam-opt %S/Inputs/two-blocks.mlir -seam-form-regions="mode=eager" -seam-outline-regions 2>/dev/null | seam-opt | FileCheck %s --check-prefix=ROUNDTRIP

// The two attention blocks are the same program with the same shapes: they
// share it (program sharing); the step calls each program twice.
// CHECK-LABEL: func.func @forward
// CHECK: %[[A:.+]] = call @prog_attn_0_p0(%arg0) {seam.region = "attn.0.p0"}
// CHECK: %[[K:.+]] = seam.kernel_call "qkv"(%[[A]]
// CHECK: %[[B:.+]] = call @prog_attn_0_p1(%[[K]], {{.*}}) {seam.region = "attn.0.p1"}
// CHECK: call @prog_attn_0_p0(%[[B]]) {seam.region = "attn.1.p0"}
// CHECK: call @prog_attn_0_p1({{.*}}) {seam.region = "attn.1.p1"}
// CHECK: seam.fourier_mix
// CHECK: call @prog_fnet_2_p0
// CHECK-NOT: seam.fusion
// CHECK: func.func private @prog_attn_0_p0(%arg0: tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16> attributes {seam.program, seam.region = "attn.0.p0"}
// CHECK-NEXT: seam.layer_norm %arg0
// CHECK: func.func private @prog_attn_0_p1(
// CHECK: seam.rope
// CHECK: seam.attention
// CHECK-NOT: func.func private @prog_attn_1

// STATS: seam-outline-regions
// STATS-NEXT: 3 distinct-programs
// STATS-NEXT: 5 regions-outlined
// STATS-NEXT: 2 shared-calls

// ROUNDTRIP: func.func private @prog_attn_0_p0
