// seam-smith found: an fftconv with q and no v became a kernel call whose
// operands no longer said which was which (the segment sizes are not in a
// kernel signature), and the fftconv kernel read the lone [B, H, L] operand
// as v (u * q before the convolution) unless the config had gelu_q.
// signatureOfRoot now says `with_q`; the kernel, its roofline and the
// reference read operands alike (fftconvOperands).
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --kernels fftconv
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
func.func @forward(%u: tensor<1x4x32xf32> {seam.input = "u"}, %q: tensor<1x4x32xf32> {seam.input = "q"}, %v: tensor<1x4x32xf32> {seam.input = "v"}) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %r:3 = seam.block "hyena" 0 -> tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32> {
    %k = seam.param "k" init normal(0.2) seed 3 : tensor<4x32xf32>
    %d = seam.param "d" init normal(1.0) seed 4 : tensor<4xf32>
    %m = seam.param "m" init uniform(1.0) seed 5 : tensor<1x4xf32>
    %a = seam.fftconv %u, %k, %d q %q {fft_size = 64 : i64} : (tensor<1x4x32xf32>, tensor<4x32xf32>, tensor<4xf32>, tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
    %b = seam.fftconv %u, %k, %d q %q dropout %m {fft_size = 128 : i64, gelu} : (tensor<1x4x32xf32>, tensor<4x32xf32>, tensor<4xf32>, tensor<1x4x32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
    %c = seam.fftconv %u, %k, %d v %v {fft_size = 64 : i64, gelu_inp} : (tensor<1x4x32xf32>, tensor<4x32xf32>, tensor<4xf32>, tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
    seam.yield %a, %b, %c : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>
}
