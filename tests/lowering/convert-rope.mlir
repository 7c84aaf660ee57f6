// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s

// rope over 6 heads x 2 position tiles: x * cos, then the halves
// (x1 cos1 - x2 sin1, x2 cos2 + x1 sin2) on [P, D/2] views; the products
// in the dtype of the output (bf16 here: every operand bf16).

// CHECK-LABEL: ncore.program @prog_rope
// CHECK: ncore.loop %[[H:.+]] trips 6 {
// CHECK:   ncore.loop %[[T:.+]] trips 2 {
// CHECK:     ncore.tensor_tensor multiply %[[XC:.+]], %[[X:.+]], %[[C:.+]] : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>
// CHECK:     ncore.tensor_tensor multiply %[[TMP:.+]], %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x64xbf16>
// CHECK:     ncore.tensor_tensor subtract %{{.+}}, %{{.+}}, %[[TMP]]
// CHECK:     ncore.tensor_tensor multiply %[[TMP]]
// CHECK:     ncore.tensor_tensor add %{{.+}}, %{{.+}}, %[[TMP]]
// CHECK:     ncore.dma_copy
func.func private @prog_rope(%x: tensor<1x6x256x128xbf16>, %c: tensor<256x128xbf16>, %s: tensor<256x128xbf16>) -> tensor<1x6x256x128xbf16> attributes {seam.program} {
  %y = seam.rope %x, %c, %s : (tensor<1x6x256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>) -> tensor<1x6x256x128xbf16>
  return %y : tensor<1x6x256x128xbf16>
}
