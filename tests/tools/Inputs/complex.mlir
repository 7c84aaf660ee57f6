// complex<f32> across boundaries, with an exact float64 reference
// (npy.py check-complex): a complex model input and output, an fft over a
// middle axis and a non-power-of-two size (768), its ifft back to the real
// part, a device op on that, and a real-input fft of 1000 points (the last
// axis). With --kernels fft,ifft every FFT is a kernel call; without, a
// host fallback; mixed lists split them.
func.func @forward(%c: tensor<2x768x3xcomplex<f32>> {seam.input = "c"}, %x: tensor<4x1000xf32> {seam.input = "x"}) -> (tensor<2x768x3xcomplex<f32>>, tensor<2x768x3xf32>, tensor<4x1000xcomplex<f32>>) {
  %y:3 = seam.block "mix" 0 -> tensor<2x768x3xcomplex<f32>>, tensor<2x768x3xf32>, tensor<4x1000xcomplex<f32>> {
    %f = seam.fft %c axis 1 : tensor<2x768x3xcomplex<f32>> -> tensor<2x768x3xcomplex<f32>>
    %i = seam.ifft %f axis 1 : tensor<2x768x3xcomplex<f32>> -> tensor<2x768x3xf32>
    %s = seam.add %i, %i : (tensor<2x768x3xf32>, tensor<2x768x3xf32>) -> tensor<2x768x3xf32>
    %h = seam.fft %x axis 1 : tensor<4x1000xf32> -> tensor<4x1000xcomplex<f32>>
    seam.yield %f, %s, %h : tensor<2x768x3xcomplex<f32>>, tensor<2x768x3xf32>, tensor<4x1000xcomplex<f32>>
  }
  return %y#0, %y#1, %y#2 : tensor<2x768x3xcomplex<f32>>, tensor<2x768x3xf32>, tensor<4x1000xcomplex<f32>>
}
