// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s

// A standalone rope (x, cos, sin and y in HBM, S a multiple of 128): whole
// heads, the rope kernel's emitter (kernels/Rope.cpp emitRopeWholeHeads).
// The identity for the Tensor engine's sums, the tables once (four pieces
// each, fixed: ncore-split-dma leaves them), every head's load up front,
// sw = [sin2, -sin1] slot by slot; per head two all-bf16 multiplies over
// its two slots, per slot x cos plus the halves of x sw swapped, summed in
// PSUM against the identity and copied out by the Scalar engine; the
// head's store once it is done.

// CHECK-LABEL: ncore.program @prog_rope(
// CHECK:     ncore.memset %[[ID:[0-9]+]], 1.0
// CHECK:     ncore.affine_select is_equal %[[ID]], %[[ID]] base 0.0{{.*}} partition_step 1.0{{.*}} free_step -1.0{{.*}} else 0.0
// CHECK-COUNT-8: ncore.dma_copy {{.*}} {ncore.fixed_pieces} : <sbuf, 32x256xbf16{{.*}}>, <hbm, 32x256xbf16>
// CHECK:     ncore.dma_copy {{.*}} {ncore.fixed_pieces} : <sbuf, 43x256xbf16>, <hbm, 43x256xbf16>
// CHECK:     ncore.tensor_copy {{.*}} : <sbuf, 128x1x64xbf16>, <sbuf, 128x1x64xbf16>
// CHECK:     ncore.tensor_scalar multiply {{.*}} imm -1.0
// CHECK:     ncore.tensor_tensor multiply {{.*}} : !ncore.tile<sbuf, 128x2x128xbf16>, !ncore.tile<sbuf, 128x2x128xbf16>, !ncore.tile<sbuf, 128x2x128xbf16>
// CHECK:     ncore.tensor_tensor multiply {{.*}} : !ncore.tile<sbuf, 128x2x128xbf16>, !ncore.tile<sbuf, 128x2x128xbf16>, !ncore.tile<sbuf, 128x2x128xbf16>
// CHECK:     ncore.matmul %[[ACC:[0-9]+]], %[[ID]], %{{[0-9]+}} : <psum, 128x1x128xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x1x128xbf16>
// CHECK:     ncore.matmul %{{[0-9]+}}, %[[ID]], %{{[0-9]+}} accumulate : <psum, 128x1x64xf32>
// CHECK:     ncore.matmul %{{[0-9]+}}, %[[ID]], %{{[0-9]+}} accumulate : <psum, 128x1x64xf32>
// CHECK:     ncore.tensor_copy %{{[0-9]+}}, %[[ACC]] on scalar : <sbuf, 128x1x128xbf16>, <psum, 128x1x128xf32>
// CHECK:     ncore.dma_copy {{.*}} {ncore.fixed_pieces} : <hbm, 32x256xbf16>, <sbuf, 32x256xbf16>
// CHECK-NOT: ncore.loop
func.func private @prog_rope(%x: tensor<1x6x256x128xbf16>, %c: tensor<256x128xbf16>, %s: tensor<256x128xbf16>) -> tensor<1x6x256x128xbf16> attributes {seam.program} {
  %y = seam.rope %x, %c, %s : (tensor<1x6x256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>) -> tensor<1x6x256x128xbf16>
  return %y : tensor<1x6x256x128xbf16>
}

// S not a multiple of 128: 6 heads x row tiles of 128 and 72 rows: x * cos,
// then the halves (x1 cos1 - x2 sin1, x2 cos2 + x1 sin2) on [P, D/2] views;
// the products in the dtype of the output (bf16 here: every operand bf16).

// CHECK-LABEL: ncore.program @prog_rope_rows
// CHECK: ncore.loop %[[H:.+]] trips 6 {
// CHECK:   ncore.tensor_tensor multiply %[[XC:.+]], %[[X:.+]], %[[C:.+]] : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>
// CHECK:   ncore.tensor_tensor multiply %[[TMP:.+]], %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x64xbf16>
// CHECK:   ncore.tensor_tensor subtract %{{.+}}, %{{.+}}, %[[TMP]]
// CHECK:   ncore.tensor_tensor multiply %[[TMP]]
// CHECK:   ncore.tensor_tensor add %{{.+}}, %{{.+}}, %[[TMP]]
// CHECK:   ncore.dma_copy
// CHECK:   ncore.tensor_tensor multiply %{{.+}} : !ncore.tile<sbuf, 72x128xbf16>
func.func private @prog_rope_rows(%x: tensor<1x6x200x128xbf16>, %c: tensor<200x128xbf16>, %s: tensor<200x128xbf16>) -> tensor<1x6x200x128xbf16> attributes {seam.program} {
  %y = seam.rope %x, %c, %s : (tensor<1x6x200x128xbf16>, tensor<200x128xbf16>, tensor<200x128xbf16>) -> tensor<1x6x200x128xbf16>
  return %y : tensor<1x6x200x128xbf16>
}
