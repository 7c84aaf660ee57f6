// A bad pass option is one error line and no IR: the kernel list is checked
// before any function is touched and the error is not attached to an op
// (MLIR would print the whole op with it), `mode` is an enum option
// checked by the option parser, and a report file that cannot be written is
// reported with no location (the model is not at fault: no line of it is
// quoted), as one line naming the tool.

// RUN: not seam-opt %s --seam-pipeline=kernels=bogus 2>&1 | FileCheck %s --check-prefix=KERNELS --implicit-check-not=func.func --implicit-check-not=seam.
// KERNELS: error: seam-insert-kernels: unknown kernel 'bogus'; registered kernels: qkv, rope,

// RUN: not seam-opt %s -seam-insert-kernels=kernels=bogus 2>&1 | FileCheck %s --check-prefix=KERNELS --implicit-check-not=func.func --implicit-check-not=seam.

// RUN: not seam-opt %s --seam-pipeline=mode=lazy 2>&1 | FileCheck %s --check-prefix=MODE --implicit-check-not=func.func --implicit-check-not=seam.
// RUN: not seam-opt %s -seam-form-regions=mode=lazy 2>&1 | FileCheck %s --check-prefix=MODE --implicit-check-not=func.func --implicit-check-not=seam.
// MODE: Cannot find option named 'lazy'!

// RUN: not seam-opt %s -seam-report=file=%t.nodir/report.txt -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT --implicit-check-not=func.func --implicit-check-not=seam.
// REPORT: seam-opt: error: seam-report: cannot open output file '{{.*}}report.txt': No such file or directory
// REPORT-NOT: ^

// The enum option prints back as its name.
// RUN: seam-opt %s --seam-pipeline="mode=eager kernels=none" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// PRINT: func.func(seam-form-regions{mode=eager remarks=true})

func.func @forward(%x: tensor<1x128x64xf32>) -> tensor<1x128x64xf32> {
  %y = seam.block "mlp" 0 -> tensor<1x128x64xf32> {
    %s = seam.silu %x : tensor<1x128x64xf32>
    seam.yield %s : tensor<1x128x64xf32>
  }
  return %y : tensor<1x128x64xf32>
}

// remarks=false silences the decisions, not the warnings; the nesting the
// README shows for --pass-pipeline works.
// RUN: seam-opt %s --seam-pipeline="mode=eager kernels=fft remarks=false" -seam-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --implicit-check-not=remark
// QUIET: warning: seam-insert-kernels: kernel 'fft' matches no site in @forward
// QUIET: seam report: @forward
// QUIET: program regions per step           1
// RUN: seam-opt %s --pass-pipeline="builtin.module(func.func(seam-fuse-qkv, seam-insert-kernels{kernels=qkv}, seam-form-regions{mode=eager}), seam-outline-regions, seam-report)" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: remark: seam-form-regions: region 'mlp.0.p0' (eager)
// NESTED: seam report: @forward
