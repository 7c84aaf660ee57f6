// seam-smith found: attention whose v has another head dim than q and k
// (the result is [B, H, Sq, Dv]) was lowered with q's head dim for V, its
// PSUM accumulator and the output: a compile error when Dv < D, wrong
// values when Dv > D. The flash-attention kernels are built for Dv == D
// only and now refuse such a site (the compiler's attention runs it).
// Small keys (one block), 256 keys (V resident in SBUF, two blocks), and
// grouped queries.
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --mode eager --kernels flash-attn,flash-attn-stable --target trn2
func.func @forward(%q: tensor<1x2x1x2xf32> {seam.input = "q"}, %k: tensor<1x2x2x2xf32> {seam.input = "k"}, %v: tensor<1x2x2x1xf32> {seam.input = "v"},
                   %q2: tensor<1x2x128x64xf32> {seam.input = "q2"}, %k2: tensor<1x2x256x64xf32> {seam.input = "k2"}, %v2: tensor<1x2x256x96xf32> {seam.input = "v2"},
                   %q3: tensor<1x4x130x32xbf16> {seam.input = "q3"}, %k3: tensor<1x2x130x32xbf16> {seam.input = "k3"}, %v3: tensor<1x2x130x8xbf16> {seam.input = "v3"})
    -> (tensor<1x2x1x1xf32>, tensor<1x2x128x96xf32>, tensor<1x4x130x8xbf16>) {
  %r:3 = seam.block "attn" 0 -> tensor<1x2x1x1xf32>, tensor<1x2x128x96xf32>, tensor<1x4x130x8xbf16> {
    %o1 = seam.attention %q, %k, %v {scale = 0.7 : f64} : (tensor<1x2x1x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x1x1xf32>
    %o2 = seam.attention %q2, %k2, %v2 {scale = 0.125 : f64} : (tensor<1x2x128x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x96xf32>) -> tensor<1x2x128x96xf32>
    %o3 = seam.attention %q3, %k3, %v3 {scale = 0.17 : f64, causal} : (tensor<1x4x130x32xbf16>, tensor<1x2x130x32xbf16>, tensor<1x2x130x8xbf16>) -> tensor<1x4x130x8xbf16>
    seam.yield %o1, %o2, %o3 : tensor<1x2x1x1xf32>, tensor<1x2x128x96xf32>, tensor<1x4x130x8xbf16>
  }
  return %r#0, %r#1, %r#2 : tensor<1x2x1x1xf32>, tensor<1x2x128x96xf32>, tensor<1x4x130x8xbf16>
}
