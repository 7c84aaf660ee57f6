// kernels=auto: seam-insert-kernels decides per site from simulated cost
// (seam-run's step model, installed by seam-opt). Each decision is a remark
// with both times and the parts of the step that moved, and the step
// function records them in seam.kernel_decisions.

// A site kept: in compile mode, the fourier-mix kernel against the host
// fallback the op otherwise needs (a graph break with transfers both ways).
// RUN: seam-opt %s -seam-insert-kernels="kernels=auto mode=compile" 2>%t.err | FileCheck %s --check-prefix=KEPT-IR
// RUN: FileCheck %s --check-prefix=KEPT < %t.err
// KEPT: remark: seam-insert-kernels: kernel 'fourier-mix' inserted: Re(DFT) of [1, 256, 256] {{.*}}; kernels=auto at fnet.1: kernel {{[0-9.]+}} ms vs without {{[0-9.]+}} ms (-{{[0-9.]+}}%): inserted (host -{{.*}})
// KEPT-IR: func.func @forward
// KEPT-IR-SAME: seam.kernel_decisions = [{inserted = true, kernel = "fourier-mix", kernel_ns = {{.*}}, replaces = "seam.fourier_mix", sites = 1 : i64, window = "fnet.1", windows = 1 : i64, without_ns = {{.*}}}]
// KEPT-IR: seam.block "mlp" 0
// KEPT-IR-NOT: seam.kernel_call
// KEPT-IR: seam.kernel_call "fourier-mix"

// The same site rejected in eager mode: there the framework's host time per
// kernel call (kernel_call_host_ns, 50.25 ms) is paid every step.
// RUN: seam-opt %s -seam-insert-kernels="kernels=auto mode=eager" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EAGER
// EAGER: remark: seam-insert-kernels: kernel 'fourier-mix' not inserted: kernels=auto at fnet.1: kernel {{[0-9.]+}} ms vs without {{[0-9.]+}} ms (+{{[0-9.]+}}%): not inserted (host +{{[0-9.]+}} ms

// Sites rejected: in eager mode each kernel call is a graph break with
// launches and a sync of its own; on this small flux model every candidate
// makes its block slower. Identical blocks are decided once.
// RUN: sed 's/"num_layers": 1/"num_layers": 2/' %S/../tools/Inputs/flux-tiny.json > %t.json
// RUN: seam-import --config %t.json -o %t.flux.mlir
// RUN: seam-opt %t.flux.mlir -seam-fuse-qkv -seam-insert-kernels="kernels=auto:qkv,flash-attn-stable mode=eager target=trn2" 2>%t.flux.err | FileCheck %s --check-prefix=REJECTED-IR
// RUN: FileCheck %s --check-prefix=REJECTED < %t.flux.err
// REJECTED: remark: seam-insert-kernels: kernel 'qkv' not inserted: kernels=auto at double_stream.0: kernel {{[0-9.]+}} ms vs without {{[0-9.]+}} ms (+{{[0-9.]+}}%): not inserted ({{.*}}+{{[0-9]+}} launches)
// REJECTED: remark: seam-insert-kernels: kernel 'flash-attn-stable' not inserted: kernels=auto at double_stream.0: kernel
// REJECTED: remark: seam-insert-kernels: kernel 'qkv' not inserted: kernels=auto at double_stream.1 (decided on double_stream.0): kernel
// REJECTED-IR: seam.kernel_decisions = [{{.*}}kernel = "qkv"{{.*}}window = "double_stream.0", windows = 2
// REJECTED-IR-NOT: seam.kernel_call

// seam-report tabulates the decisions recorded on the step.
// RUN: seam-opt %t.flux.mlir --seam-pipeline="kernels=auto:qkv mode=eager target=trn2 remarks=false" -seam-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: kernels=auto decisions (one per distinct window; times: one warm step of the window)
// REPORT-NEXT: kernel window windows sites kernel ms without ms change decision (what moved)
// REPORT-NEXT: qkv double_stream.0 2 2 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}% not inserted (
// REPORT-NEXT: qkv single_stream.0 1 1

// Bad lists and options fail before any function is touched.
// RUN: not seam-opt %s -seam-insert-kernels="kernels=qkv,auto" 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: seam-insert-kernels: 'auto' must come first in a kernel list ('auto' or 'auto:qkv,flash-attn')
// RUN: not seam-opt %s -seam-insert-kernels="kernels=auto:" 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: seam-insert-kernels: 'auto:' names no candidate kernel
// RUN: not seam-opt %s -seam-insert-kernels="kernels=auto:warp" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: seam-insert-kernels: unknown kernel 'warp'; registered kernels:
// RUN: not seam-opt %s -seam-insert-kernels="kernels=auto target=trn9" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: seam-insert-kernels: target must be 'trn1' or 'trn2', got 'trn9'

func.func @forward(%x: tensor<1x256x256xf32> {seam.input = "x"}, %v: tensor<1x256xf32> {seam.input = "v"}) -> (tensor<1x256x256xf32>, tensor<1x256x256xf32>) {
  %y = seam.block "mlp" 0 -> tensor<1x256x256xf32> {
    %n = seam.layer_norm %x : (tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %s = seam.silu %n : tensor<1x256x256xf32>
    %b = seam.reshape %v : tensor<1x256xf32> -> tensor<1x1x256xf32>
    %m = seam.mul %s, %b : (tensor<1x256x256xf32>, tensor<1x1x256xf32>) -> tensor<1x256x256xf32>
    %r = seam.add %m, %x : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    seam.yield %r : tensor<1x256x256xf32>
  }
  %z = seam.block "fnet" 1 -> tensor<1x256x256xf32> {
    %f = seam.fourier_mix %y dims [1, 2] : tensor<1x256x256xf32>
    seam.yield %f : tensor<1x256x256xf32>
  }
  return %y, %z : tensor<1x256x256xf32>, tensor<1x256x256xf32>
}
