// seam-smith found: an attention took the independent linear before it as
// its guest (emitted between the attention's own steps), but the guest's
// input (a layer_norm's X^T, gamma applied in it) was released after its
// last reader in program order, a linear before the attention, and its
// bytes were reused before the guest read them: rel-L2 2.9. A guest's (and
// a row producer's) operands now live until its host (consumer).
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --mode eager --target trn2
module attributes {seam.tp = 1 : i64} {
  func.func @forward(%a0: tensor<1x2x2xf32> {seam.input = "x0"}, %a1: tensor<1x2x256x1xf32> {seam.input = "x1"}, %a2: tensor<1x2x256x128xf32> {seam.input = "x2"}) -> (tensor<1x2x1xf32>, tensor<1x2x2xf32>) {
    %b0:2 = seam.block "smith" 0 -> tensor<1x2x1xf32>, tensor<1x2x2xf32> {
      %p0 = seam.param "p0" init uniform(1.000000e+00) seed 268789838 : tensor<2xf32>
      %v2 = seam.layer_norm %a0 scale %p0 {epsilon = 1.000000e-06 : f64} : (tensor<1x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2xf32>
      %p1 = seam.param "p1" init normal(7.071068e-01) seed 108459834 : tensor<2x1xf32>
      %v3 = seam.linear %v2, %p1 : (tensor<1x2x2xf32>, tensor<2x1xf32>) -> tensor<1x2x1xf32>
      %p2 = seam.param "p2" init normal(7.071068e-01) seed 283582248 : tensor<2x256xf32>
      %v4 = seam.linear %v2, %p2 : (tensor<1x2x2xf32>, tensor<2x256xf32>) -> tensor<1x2x256xf32>
      %v5 = seam.reshape %v4 : tensor<1x2x256xf32> -> tensor<1x2x2x128xf32>
      %v15 = seam.attention %v5, %a2, %a1 {scale = 8.838835e-02 : f64} : (tensor<1x2x2x128xf32>, tensor<1x2x256x128xf32>, tensor<1x2x256x1xf32>) -> tensor<1x2x2x1xf32>
      %v17 = seam.reshape %v15 : tensor<1x2x2x1xf32> -> tensor<1x2x2xf32>
      seam.yield %v3, %v17 : tensor<1x2x1xf32>, tensor<1x2x2xf32>
    }
    return %b0#0, %b0#1 : tensor<1x2x1xf32>, tensor<1x2x2xf32>
  }
}
