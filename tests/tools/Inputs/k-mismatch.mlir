// Parses, but the linear's K does not match: the verifier's error.
func.func @forward(%x: tensor<256x1024xf32> {seam.input = "x"}) -> tensor<256x2048xf32> {
  %w = seam.param "w" init normal(2.0e-02) seed 1 : tensor<512x2048xf32>
  %l = seam.linear %x, %w : (tensor<256x1024xf32>, tensor<512x2048xf32>) -> tensor<256x2048xf32>
  return %l : tensor<256x2048xf32>
}
