// seam-smith found: seam-run's host fallback ops read parameters and step
// inputs from the host's copies, which kept full f32 precision for bf16
// tensors the device holds in bf16 (and host ops' bf16 results likewise):
// an fftconv on the host computed with k[0] + D un-rounded, and where the
// two nearly cancel its bf16 result was off by 11% of itself. The host now
// holds bf16 tensors as the device does (rounded to bf16).
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
module attributes {seam.tp = 1 : i64} {
  func.func @forward(%a0: tensor<1x1x1xbf16> {seam.input = "x0"}) -> tensor<1x1x1xbf16> {
    %b0 = seam.block "smith" 0 -> tensor<1x1x1xbf16> {
      %p0 = seam.param "p0" init normal(1.000000e+00) seed 771011771 : tensor<1x1xbf16>
      %p1 = seam.param "p1" init normal(1.000000e+00) seed 771011772 : tensor<1xbf16>
      %v22 = seam.fftconv %a0, %p0, %p1 {fft_size = 16 : i64} : (tensor<1x1x1xbf16>, tensor<1x1xbf16>, tensor<1xbf16>) -> tensor<1x1x1xbf16>
      seam.yield %v22 : tensor<1x1x1xbf16>
    }
    return %b0 : tensor<1x1x1xbf16>
  }
}
