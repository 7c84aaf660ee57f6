// RUN: seam-opt %s -split-input-file --convert-seam-to-ncore | FileCheck %s

// Causal GQA attention with fused rope, 4 query heads over 2 kv heads, 768
// positions: loops over kv heads (2), query groups (2) and pairs of query
// tiles (3); K^T built once per kv head; the causal mask is one
// affine_select before the loops, read at a column that moves with the query
// tile; the two tiles of a pair are interleaved phase by phase (both Q K^T,
// both softmaxes, both P V) so the engines overlap; stable softmax; P V
// accumulated in PSUM over a loop of key blocks.

// CHECK-LABEL: ncore.program @prog_attn
// CHECK: %[[MASK:.+]] = ncore.alloc : <sbuf, 128x1408xf32>
// CHECK: ncore.memset %[[MASK]], 0.0
// CHECK: ncore.affine_select is_ge %[[MASK]], %[[MASK]] base 6.400000e+02 partition_step 1.000000e+00 free_step -1.000000e+00 else -1.000000e+30
// CHECK: %[[KT:.+]] = ncore.alloc : <sbuf, 128x768xbf16>
// CHECK: ncore.loop %[[KV:.+]] trips 2 {
// CHECK:   ncore.loop %{{.+}} trips 6 {
// CHECK:     ncore.tensor_tensor subtract
// CHECK:     ncore.tensor_tensor add
// CHECK:     ncore.transpose
// CHECK:     ncore.tensor_copy
// CHECK:   }
// CHECK:   ncore.loop %[[G:.+]] trips 2 {
// CHECK:     ncore.loop %[[QT:.+]] trips 3 {
// First tile of the pair: scores.
// CHECK:       ncore.transpose
// CHECK:       ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x512xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x512xbf16>
// CHECK:       ncore.activation identity %{{.+}}, %{{.+}} {scale = 0.0879
// CHECK:       ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x256xf32>
// CHECK:       %[[M:.+]] = ncore.view %[[MASK]][%[[KV]], %[[G]], %[[QT]]] offsets #{{.+}} : <sbuf, 128x1408xf32> to <sbuf, 128x768xf32>
// CHECK:       ncore.tensor_tensor add %[[S:.+]], %[[S]], %[[M]]
// Second tile: scores before the first tile's softmax.
// CHECK:       ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x512xf32>
// CHECK:       ncore.tensor_tensor add %[[S2:.+]], %[[S2]], %{{.+}}
// CHECK:       ncore.tensor_reduce max %[[MX:.+]], %[[S]]
// CHECK:       ncore.tensor_scalar multiply %[[MX]], %[[MX]] imm -1.0
// CHECK:       ncore.activation exp %[[P:.+]], %[[S]] bias %[[MX]] reduce %[[SUM:[^ ]+]] :
// CHECK:       ncore.reciprocal %[[R:.+]], %[[SUM]]
// CHECK:       ncore.tensor_reduce max %{{.+}}, %[[S2]]
// CHECK:       ncore.matmul %[[O:.+]], %{{.+}}, %{{.+}} : <psum, 128x128xf32>
// CHECK:       ncore.loop %{{.+}} trips 5 {
// CHECK:         ncore.transpose
// CHECK:         ncore.matmul %[[O]], %{{.+}}, %{{.+}} accumulate
// CHECK:       }
// CHECK:       ncore.tensor_scalar multiply %{{.+}}, %[[O]], %[[R]]
// CHECK:       ncore.dma_copy
// CHECK:       ncore.loop %{{.+}} trips 5 {
func.func private @prog_attn(%q: tensor<1x4x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>, %c: tensor<768x128xbf16>, %s: tensor<768x128xbf16>) -> tensor<1x4x768x128xbf16> attributes {seam.program} {
  %o = seam.attention %q, %k, %v rope(%c, %s) {scale = 0.088 : f64, causal} : (tensor<1x4x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x4x768x128xbf16>
  return %o : tensor<1x4x768x128xbf16>
}

// -----

// Without causal mask and rope: no affine_select, no rope arithmetic.

// CHECK-LABEL: ncore.program @prog_plain
// CHECK-NOT: ncore.affine_select
// CHECK-NOT: ncore.tensor_tensor subtract
// CHECK: ncore.activation exp
func.func private @prog_plain(%q: tensor<2x1x128x64xf32>, %k: tensor<2x1x128x64xf32>, %v: tensor<2x1x128x64xf32>) -> tensor<2x1x128x64xf32> attributes {seam.program} {
  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<2x1x128x64xf32>, tensor<2x1x128x64xf32>, tensor<2x1x128x64xf32>) -> tensor<2x1x128x64xf32>
  return %o : tensor<2x1x128x64xf32>
}
