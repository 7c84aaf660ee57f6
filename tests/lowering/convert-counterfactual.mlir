// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=remarks=false | FileCheck %s
// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=remarks=false -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// The counterfactual markers of seam-run --explain-kernels, in the lowering.
// @fused: the layer_norm builds its reader's X^T (a lowering fusion).
// @no_fuse: the linear marked seam.no_fuse takes plain X: no X^T.
// @materialize: the linear marked seam.materialize reads its operand from an
// HBM copy ("materialized") and writes its result to HBM, as a kernel would;
// the norm, whose only reader it is, writes its rows to HBM ("hbm").
// CHECK-LABEL: ncore.program @fused
// CHECK-NOT: name = "materialized
// CHECK-LABEL: ncore.program @no_fuse
// CHECK-NOT: name = "materialized
// CHECK-LABEL: ncore.program @materialize
// CHECK-DAG: ncore.alloc {name = "hbm{{[0-9]+}}"} : <hbm, 256x256xbf16>
// CHECK-DAG: ncore.alloc {name = "hbm{{[0-9]+}}"} : <hbm, 256x384xbf16>
// STATS: 1 norm-xt
// STATS: 2 written-to-hbm
func.func private @fused(%x: tensor<256x256xbf16>, %w: tensor<256x384xbf16>) -> tensor<256x384xbf16> attributes {seam.program} {
  %n = seam.layer_norm %x : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %y = seam.linear %n, %w : (tensor<256x256xbf16>, tensor<256x384xbf16>) -> tensor<256x384xbf16>
  %z = seam.gelu %y : tensor<256x384xbf16>
  return %z : tensor<256x384xbf16>
}
func.func private @no_fuse(%x: tensor<256x256xbf16>, %w: tensor<256x384xbf16>) -> tensor<256x384xbf16> attributes {seam.program} {
  %n = seam.layer_norm %x : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %y = seam.linear %n, %w {seam.no_fuse} : (tensor<256x256xbf16>, tensor<256x384xbf16>) -> tensor<256x384xbf16>
  %z = seam.gelu %y : tensor<256x384xbf16>
  return %z : tensor<256x384xbf16>
}
func.func private @materialize(%x: tensor<256x256xbf16>, %w: tensor<256x384xbf16>) -> tensor<256x384xbf16> attributes {seam.program} {
  %n = seam.layer_norm %x : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %y = seam.linear %n, %w {seam.no_fuse, seam.materialize} : (tensor<256x256xbf16>, tensor<256x384xbf16>) -> tensor<256x384xbf16>
  %z = seam.gelu %y : tensor<256x384xbf16>
  return %z : tensor<256x384xbf16>
}
