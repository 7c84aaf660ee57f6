// seam-smith found: add/mul took an operand of one row against a result of
// one row ([N] against [1, N]) for a row broadcast, which replicates the
// whole row onto the partitions at once: a 33280-element f32 row
// over-subscribed SBUF at code generation. Such an operand is the result's
// matrix (no broadcast), and a true row broadcast whose row is longer than
// the working space replicates it a column chunk at a time.
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
// RUN: seam-run %s --functional --reference --steps 1 --runs 1 --mode eager --target trn2
func.func @forward(%a: tensor<33280xf32> {seam.input = "a"}, %b: tensor<1x33280xf32> {seam.input = "b"}, %c: tensor<2x32768xf32> {seam.input = "c"}, %d: tensor<32768xf32> {seam.input = "d"}, %e: tensor<3x20000xbf16> {seam.input = "e"}, %f: tensor<1x20000xbf16> {seam.input = "f"}) -> (tensor<1x33280xf32>, tensor<2x32768xf32>, tensor<3x20000xbf16>) {
  %r:3 = seam.block "b" 0 -> tensor<1x33280xf32>, tensor<2x32768xf32>, tensor<3x20000xbf16> {
    %x = seam.mul %a, %b : (tensor<33280xf32>, tensor<1x33280xf32>) -> tensor<1x33280xf32>
    %y = seam.add %c, %d : (tensor<2x32768xf32>, tensor<32768xf32>) -> tensor<2x32768xf32>
    %z = seam.mul %f, %e : (tensor<1x20000xbf16>, tensor<3x20000xbf16>) -> tensor<3x20000xbf16>
    seam.yield %x, %y, %z : tensor<1x33280xf32>, tensor<2x32768xf32>, tensor<3x20000xbf16>
  }
  return %r#0, %r#1, %r#2 : tensor<1x33280xf32>, tensor<2x32768xf32>, tensor<3x20000xbf16>
}
