// A small fp32 model with no parameters, so tests can compute its exact
// reference from the .npy inputs: y = silu(layer_norm(x)) * v + x, and
// z = Re(FFT2(x)) over (seq, hidden), a host fallback op unless the
// fourier-mix kernel is inserted.
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
