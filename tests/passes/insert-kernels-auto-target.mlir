// kernels=auto times its windows on the profile the module is compiled for:
// the module's ncore.target attribute (dialect/ncore/NcoreTarget.h; seam-run
// puts its target and --set overrides there), not the built-in profile of
// the pass's `target` option. Here a Tensor engine clocked 10^6 times slower than
// trn1's makes the fourier-mix kernel (its DFT is a TE matmul) slower than
// the host fallback it replaces, so the decision flips.

// RUN: seam-opt %s -seam-insert-kernels="kernels=auto mode=compile" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUILTIN
// BUILTIN: remark: seam-insert-kernels: kernel 'fourier-mix' inserted: {{.*}}; kernels=auto at fnet.0: kernel {{[0-9.]+}} ms vs without {{[0-9.]+}} ms (-{{[0-9.]+}}%): inserted

// RUN: sed 's/^module {/module attributes {ncore.target = {name = "trn1", overrides = {te_clock_ghz = 2.8e-06 : f64}}} {/' %s > %t.slow.mlir
// RUN: seam-opt %t.slow.mlir -seam-insert-kernels="kernels=auto mode=compile" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
// SLOW: remark: seam-insert-kernels: kernel 'fourier-mix' not inserted: kernels=auto at fnet.0: kernel {{[0-9.]+}} ms vs without {{[0-9.]+}} ms (+{{[0-9.]+}}%): not inserted

// The attribute and the option must agree on the target.
// RUN: sed 's/^module {/module attributes {ncore.target = {name = "trn2"}} {/' %s > %t.trn2.mlir
// RUN: not seam-opt %t.trn2.mlir -seam-insert-kernels="kernels=auto target=trn1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CONTRA
// CONTRA: error: seam-insert-kernels:

module {
func.func @forward(%x: tensor<1x256x256xf32> {seam.input = "x"}) -> tensor<1x256x256xf32> {
  %z = seam.block "fnet" 0 -> tensor<1x256x256xf32> {
    %f = seam.fourier_mix %x dims [1, 2] : tensor<1x256x256xf32>
    seam.yield %f : tensor<1x256x256xf32>
  }
  return %z : tensor<1x256x256xf32>
}
}
