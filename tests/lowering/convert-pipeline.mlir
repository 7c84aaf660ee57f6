// Whole models through the graph pipeline and the conversion: every program
// converts and the result verifies (compile and eager modes, with kernels).
// RUN: seam-opt %S/../passes/Inputs/two-blocks.mlir --seam-pipeline="mode=compile kernels=qkv" 2>/dev/null | seam-opt --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s --check-prefix=COMPILE
// RUN: seam-opt %S/../passes/Inputs/two-blocks.mlir --seam-pipeline="mode=eager kernels=qkv,rope" 2>/dev/null | seam-opt --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s --check-prefix=EAGER
// RUN: seam-import --model flux2-klein --tp 4 --layers 1 | seam-opt --seam-pipeline="mode=compile" 2>/dev/null | seam-opt --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s --check-prefix=FLUX
// RUN: seam-import --model flux2-klein --tp 4 --layers 1 | seam-opt --seam-pipeline="mode=eager kernels=qkv,rope,flash-attn" 2>/dev/null | seam-opt --seam-plan-pairings --convert-seam-to-ncore -o /dev/null
// RUN: seam-import --model fnet-base --layers 1 | seam-opt --seam-pipeline="mode=compile" 2>/dev/null | seam-opt --seam-plan-pairings --convert-seam-to-ncore -o /dev/null
// RUN: seam-import --model hyena --layers 1 | seam-opt --seam-pipeline="mode=compile" 2>/dev/null | seam-opt --seam-plan-pairings --convert-seam-to-ncore -o /dev/null

// COMPILE: func.func private @prog_step({{.*}}seam.ncore_program = @ncore::@prog_step
// COMPILE: module @ncore {
// COMPILE: ncore.program @prog_step(
// COMPILE-SAME: {ncore.role = "input"}
// COMPILE-SAME: {ncore.role = "param"}
// COMPILE-SAME: {ncore.role = "output"}
// COMPILE: ncore.call_kernel @kernel_qkv_
// COMPILE: ncore.program @kernel_qkv_
// COMPILE: ncore.program @prog_step_p1(

// Eager: top-level kernel calls name their kernel program.
// EAGER: seam.kernel_call "qkv"({{.*}}seam.ncore_program = @ncore::@kernel_qkv_
// EAGER: seam.kernel_call "rope"({{.*}}seam.ncore_program = @ncore::@kernel_rope_
// EAGER: ncore.program @prog_attn_0_p0(

// FLUX: ncore.program @prog_step(
// FLUX: ncore.all_reduce add {{.*}} ranks 4
