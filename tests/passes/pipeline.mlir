// RUN: seam-opt %S/Inputs/two-blocks.mlir --seam-pipeline="mode=eager kernels=qkv" -seam-report 2>&1 -o /dev/null | FileCheck %s --check-prefix=EAGER
// RUN: seam-opt %S/Inputs/two-blocks.mlir --seam-pipeline="mode=compile kernels=qkv" -seam-report 2>&1 -o /dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: seam-opt %S/Inputs/two-blocks.mlir --seam-pipeline="mode=compile" -seam-report 2>&1 -o /dev/null | FileCheck %s --check-prefix=VANILLA
// RUN: seam-opt %S/Inputs/two-blocks.mlir --seam-pipeline="mode=compile kernels=fourier-mix" | FileCheck %s --check-prefix=FNET

// EAGER: seam report: @forward
// EAGER-NEXT: blocks 3
// EAGER-NEXT: program regions per step 5
// EAGER-NEXT: distinct programs (module) 3
// EAGER-NEXT: kernel calls per step 2
// EAGER-NEXT: qkv 2
// EAGER-NEXT: host-fallback ops per step 1
// EAGER-NEXT: launches per step 7

// COMPILE: seam report: @forward
// COMPILE: program regions per step 2
// COMPILE: kernel calls per step 2
// COMPILE: launches per step 2

// VANILLA: program regions per step 2
// VANILLA: kernel calls per step 0
// VANILLA: launches per step 2

// With the FNet kernel nothing runs on the host: one program for the step.
// FNET: func.func @forward
// FNET-NEXT: seam.param
// FNET: call @prog_step
// FNET-NOT: call
// FNET: func.func private @prog_step
// FNET: seam.kernel_call "fourier-mix"
