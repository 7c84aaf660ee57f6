// Two identical attention blocks and an FNet mixing block: the input of the
// form-regions, outline-regions and pipeline tests.
func.func @forward(%x: tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16> {
  %b0 = seam.block "attn" 0 -> tensor<1x128x256xbf16> {
    %n = seam.layer_norm %x : (tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
    %wq = seam.param "b0.wq" init normal(0.02) seed 1 : tensor<256x128xbf16>
    %q = seam.linear %n, %wq : (tensor<1x128x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128x128xbf16>
    %wk = seam.param "b0.wk" init normal(0.02) seed 2 : tensor<256x128xbf16>
    %k = seam.linear %n, %wk : (tensor<1x128x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128x128xbf16>
    %wv = seam.param "b0.wv" init normal(0.02) seed 3 : tensor<256x128xbf16>
    %v = seam.linear %n, %wv : (tensor<1x128x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128x128xbf16>
    %q4 = seam.reshape %q : tensor<1x128x128xbf16> -> tensor<1x1x128x128xbf16>
    %k4 = seam.reshape %k : tensor<1x128x128xbf16> -> tensor<1x1x128x128xbf16>
    %v4 = seam.reshape %v : tensor<1x128x128xbf16> -> tensor<1x1x128x128xbf16>
    %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<128x128xbf16>
    %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<128x128xbf16>
    %qr = seam.rope %q4, %c, %s : (tensor<1x1x128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<1x1x128x128xbf16>
    %kr = seam.rope %k4, %c, %s : (tensor<1x1x128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<1x1x128x128xbf16>
    %o = seam.attention %qr, %kr, %v4 {scale = 0.088 : f64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16>
    %o3 = seam.reshape %o : tensor<1x1x128x128xbf16> -> tensor<1x128x128xbf16>
    %wo = seam.param "b0.wo" init normal(0.02) seed 4 : tensor<128x256xbf16>
    %p = seam.linear %o3, %wo : (tensor<1x128x128xbf16>, tensor<128x256xbf16>) -> tensor<1x128x256xbf16>
    %r = seam.add %x, %p : (tensor<1x128x256xbf16>, tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
    seam.yield %r : tensor<1x128x256xbf16>
  }
  %b1 = seam.block "attn" 1 -> tensor<1x128x256xbf16> {
    %n = seam.layer_norm %b0 : (tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
    %wq = seam.param "b1.wq" init normal(0.02) seed 5 : tensor<256x128xbf16>
    %q = seam.linear %n, %wq : (tensor<1x128x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128x128xbf16>
    %wk = seam.param "b1.wk" init normal(0.02) seed 6 : tensor<256x128xbf16>
    %k = seam.linear %n, %wk : (tensor<1x128x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128x128xbf16>
    %wv = seam.param "b1.wv" init normal(0.02) seed 7 : tensor<256x128xbf16>
    %v = seam.linear %n, %wv : (tensor<1x128x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128x128xbf16>
    %q4 = seam.reshape %q : tensor<1x128x128xbf16> -> tensor<1x1x128x128xbf16>
    %k4 = seam.reshape %k : tensor<1x128x128xbf16> -> tensor<1x1x128x128xbf16>
    %v4 = seam.reshape %v : tensor<1x128x128xbf16> -> tensor<1x1x128x128xbf16>
    %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<128x128xbf16>
    %s = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<128x128xbf16>
    %qr = seam.rope %q4, %c, %s : (tensor<1x1x128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<1x1x128x128xbf16>
    %kr = seam.rope %k4, %c, %s : (tensor<1x1x128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<1x1x128x128xbf16>
    %o = seam.attention %qr, %kr, %v4 {scale = 0.088 : f64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>) -> tensor<1x1x128x128xbf16>
    %o3 = seam.reshape %o : tensor<1x1x128x128xbf16> -> tensor<1x128x128xbf16>
    %wo = seam.param "b1.wo" init normal(0.02) seed 8 : tensor<128x256xbf16>
    %p = seam.linear %o3, %wo : (tensor<1x128x128xbf16>, tensor<128x256xbf16>) -> tensor<1x128x256xbf16>
    %r = seam.add %b0, %p : (tensor<1x128x256xbf16>, tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
    seam.yield %r : tensor<1x128x256xbf16>
  }
  %b2 = seam.block "fnet" 2 -> tensor<1x128x256xbf16> {
    %m = seam.fourier_mix %b1 dims [1, 2] : tensor<1x128x256xbf16>
    %r = seam.add %b1, %m : (tensor<1x128x256xbf16>, tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
    %n = seam.layer_norm %r : (tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
    seam.yield %n : tensor<1x128x256xbf16>
  }
  return %b2 : tensor<1x128x256xbf16>
}
