// One bf16 linear [256 x 1024] x [1024 x 2048], the roofline test's graph.
// On trn2 with one rank its floor is worked out by hand in
// seam-run-roofline.test.
func.func @forward(%x: tensor<256x1024xbf16> {seam.input = "x"}) -> tensor<256x2048xbf16> {
  %y = seam.block "mlp" 0 -> tensor<256x2048xbf16> {
    %w = seam.param "w" init normal(2.0e-02) seed 1 : tensor<1024x2048xbf16>
    %l = seam.linear %x, %w : (tensor<256x1024xbf16>, tensor<1024x2048xbf16>) -> tensor<256x2048xbf16>
    seam.yield %l : tensor<256x2048xbf16>
  }
  return %y : tensor<256x2048xbf16>
}
