// seam-smith found: seam-overlap-independent moved an argument-only matvec
// before an attention that was itself argument-only (one query row) and
// moved later, past the matvec's readers: "operand does not dominate this
// use". An argument-only attention hosts nothing now, and a host must still
// precede the first use where it stands.
// RUN: seam-run %s --functional --reference --steps 1 --runs 1
// RUN: seam-opt %s --seam-pipeline="mode=compile remarks=false" -o /dev/null
module attributes {seam.tp = 1 : i64} {
  func.func @forward(%a0: tensor<1x1x1xf32> {seam.input = "x0"}, %a1: tensor<1x1x1xf32> {seam.input = "x1"}, %a2: tensor<1x1x4xf32> {seam.input = "x2"}, %a3: tensor<1x4x1x1xf32> {seam.input = "x3"}, %a4: tensor<1x4x1x24xf32> {seam.input = "x4"}, %a5: tensor<1x1x1x4xf32> {seam.input = "x5"}, %a6: tensor<1x1x1x4xf32> {seam.input = "x6"}) -> (tensor<1x1x1xf32>, tensor<1x2x1xf32>) {
    %b0:2 = seam.block "smith" 0 -> tensor<1x1x1xf32>, tensor<1x2x1xf32> {
      %p0 = seam.param "p0" init normal(1.000000e+00) seed 814224350 : tensor<1x4xf32>
      %v1 = seam.linear %a0, %p0 : (tensor<1x1x1xf32>, tensor<1x4xf32>) -> tensor<1x1x4xf32>
      %v2 = seam.reshape %v1 : tensor<1x1x4xf32> -> tensor<1x1x1x4xf32>
      %v10 = seam.attention %v2, %a6, %a5 {scale = 5.000000e-01 : f64} : (tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
      %v12 = seam.reshape %v10 : tensor<1x1x1x4xf32> -> tensor<1x1x4xf32>
      %p1 = seam.param "p1" init normal(1.000000e+00) seed 199603925 : tensor<1x96xf32>
      %v21 = seam.linear %a1, %p1 : (tensor<1x1x1xf32>, tensor<1x96xf32>) -> tensor<1x1x96xf32>
      %v22 = seam.reshape %v21 : tensor<1x1x96xf32> -> tensor<1x1x4x24xf32>
      %v23 = seam.transpose %v22 perm [0, 2, 1, 3] : tensor<1x1x4x24xf32> -> tensor<1x4x1x24xf32>
      %v27 = seam.attention %a4, %v23, %a3 {scale = 2.041241e-01 : f64} : (tensor<1x4x1x24xf32>, tensor<1x4x1x24xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
      %v28 = seam.transpose %v27 perm [0, 2, 1, 3] : tensor<1x4x1x1xf32> -> tensor<1x1x4x1xf32>
      %v29 = seam.reshape %v28 : tensor<1x1x4x1xf32> -> tensor<1x1x4xf32>
      %p2 = seam.param "p2" init normal(5.000000e-01) seed 468122451 : tensor<4x1xf32>
      %v30 = seam.linear %v29, %p2 : (tensor<1x1x4xf32>, tensor<4x1xf32>) -> tensor<1x1x1xf32>
      %v33 = seam.concat %v12, %a2 dim 1 : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x2x4xf32>
      %v34 = seam.slice %v33 offsets [0, 0, 2] : tensor<1x2x4xf32> -> tensor<1x2x1xf32>
      seam.yield %v30, %v34 : tensor<1x1x1xf32>, tensor<1x2x1xf32>
    }
    return %b0#0, %b0#1 : tensor<1x1x1xf32>, tensor<1x2x1xf32>
  }
}
