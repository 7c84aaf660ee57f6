// Two attentions the compiler runs as the stable pipeline
// (lowering/recipes/AttentionPipeline.h): %a reads q, k, v and the rope
// tables from HBM (the step's inputs), %b reads them from SBUF (computed by
// elementwise ops first). Scale 2 on rows of 64: scores reach the tens, so
// an exp without the row max subtracted would lose the small ones.
func.func @forward(%q: tensor<1x2x512x64xf32> {seam.input = "q"}, %k: tensor<1x2x512x64xf32> {seam.input = "k"}, %v: tensor<1x2x512x64xf32> {seam.input = "v"}, %c: tensor<512x64xf32> {seam.input = "cos"}, %s: tensor<512x64xf32> {seam.input = "sin"}) -> (tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>) {
  %o = seam.block "attn" 0 -> tensor<1x2x512x64xf32> {
    %a = seam.attention %q, %k, %v rope(%c, %s) {scale = 2.0 : f64} : (tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<1x2x512x64xf32>
    seam.yield %a : tensor<1x2x512x64xf32>
  }
  %p = seam.block "attn" 1 -> tensor<1x2x512x64xf32> {
    %q2 = seam.mul %q, %v : (tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>) -> tensor<1x2x512x64xf32>
    %k2 = seam.add %k, %q : (tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>) -> tensor<1x2x512x64xf32>
    %v2 = seam.mul %v, %k : (tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>) -> tensor<1x2x512x64xf32>
    %c2 = seam.mul %c, %c : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
    %s2 = seam.mul %s, %c : (tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<512x64xf32>
    %b = seam.attention %q2, %k2, %v2 rope(%c2, %s2) {scale = 2.0 : f64} : (tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>) -> tensor<1x2x512x64xf32>
    seam.yield %b : tensor<1x2x512x64xf32>
  }
  return %o, %p : tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>
}
