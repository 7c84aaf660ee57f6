// seam-smith found: the four-step fftconv kernel (fft_size > 128) left the
// PSUM rows of absent sequences unwritten when the channels are not a
// multiple of a group (G = 128 / n2 sequences), and its block-diagonal
// stages contract over every row: 0 x a NaN that the program before it left
// in PSUM (here the attention's) is NaN. Stage 1 now zeroes those rows
// (BatchedDft::Config::partialGroups, also for the fft kernel).
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --kernels fftconv
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --kernels fftconv --mode eager
module attributes {seam.tp = 1 : i64} {
  func.func @forward(%a0: tensor<128x1x1x1xf32> {seam.input = "x0"}, %a1: tensor<128x1x1x4xf32> {seam.input = "x1"}, %a2: tensor<128x1x1xf32> {seam.input = "x2"}) -> tensor<128x1x128xf32> {
    %b0 = seam.block "smith" 0 -> tensor<128x1x128xf32> {
      %p0 = seam.param "p0" init normal(1.000000e+00) seed 259635113 : tensor<1x4xf32>
      %v3 = seam.linear %a2, %p0 : (tensor<128x1x1xf32>, tensor<1x4xf32>) -> tensor<128x1x4xf32>
      %v4 = seam.reshape %v3 : tensor<128x1x4xf32> -> tensor<128x1x1x4xf32>
      %v12 = seam.attention %v4, %a1, %a0 {scale = 5.000000e-01 : f64} : (tensor<128x1x1x4xf32>, tensor<128x1x1x4xf32>, tensor<128x1x1x1xf32>) -> tensor<128x1x1x1xf32>
      %v14 = seam.reshape %v12 : tensor<128x1x1x1xf32> -> tensor<128x1x1xf32>
      %p1 = seam.param "p1" init normal(1.000000e+00) seed 209472270 : tensor<1x128xf32>
      %v15 = seam.linear %v14, %p1 : (tensor<128x1x1xf32>, tensor<1x128xf32>) -> tensor<128x1x128xf32>
      %p2 = seam.param "p2" init normal(8.838835e-02) seed 666172536 : tensor<1x128xf32>
      %p3 = seam.param "p3" init normal(1.000000e+00) seed 666172537 : tensor<1xf32>
      %v16 = seam.fftconv %v15, %p2, %p3 {fft_size = 256 : i64} : (tensor<128x1x128xf32>, tensor<1x128xf32>, tensor<1xf32>) -> tensor<128x1x128xf32>
      seam.yield %v16 : tensor<128x1x128xf32>
    }
    return %b0 : tensor<128x1x128xf32>
  }
}
