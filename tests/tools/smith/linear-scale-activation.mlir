// seam-smith found: seam-fuse-linear-activation folded gelu(linear{scale})
// into the linear, whose evacuation applies the activation before the
// scale: gelu(x W) * s instead of gelu(x W * s).
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --mode eager --target trn2
func.func @forward(%x: tensor<1x3x16xf32> {seam.input = "x"}) -> (tensor<1x3x24xf32>, tensor<1x3x24xf32>) {
  %r:2 = seam.block "mlp" 0 -> tensor<1x3x24xf32>, tensor<1x3x24xf32> {
    %w = seam.param "w" init normal(0.25) seed 1 : tensor<16x24xf32>
    %s = seam.param "s" init normal(1.0) seed 2 : tensor<24xf32>
    %y = seam.linear %x, %w scale %s : (tensor<1x3x16xf32>, tensor<16x24xf32>, tensor<24xf32>) -> tensor<1x3x24xf32>
    %g = seam.gelu_tanh %y : tensor<1x3x24xf32>
    %s2 = seam.param "s2" init normal(1.0) seed 3 : tensor<1x1x24xf32>
    %y2 = seam.linear %x, %w scale %s2 : (tensor<1x3x16xf32>, tensor<16x24xf32>, tensor<1x1x24xf32>) -> tensor<1x3x24xf32>
    %h = seam.silu %y2 : tensor<1x3x24xf32>
    seam.yield %g, %h : tensor<1x3x24xf32>, tensor<1x3x24xf32>
  }
  return %r#0, %r#1 : tensor<1x3x24xf32>, tensor<1x3x24xf32>
}
