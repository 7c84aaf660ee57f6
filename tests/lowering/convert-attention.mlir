// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s

// Causal GQA attention with fused rope, 4 query heads over 2 kv heads, 768
// positions: the rope tables are read into SBUF once; loops over kv heads
// (2) and query groups (2); K^T built once per kv head; the causal mask is
// one affine_select before the loops, read at a column that moves with the
// query tile. The 6 query tiles of a head are software pipelined over two
// sets of buffers: scores and softmax of tile 0, then steps t = 0 .. 4 (a
// loop over pairs of steps) each issue the first P^T group of tile t, the
// scores of tile t + 1, the rest of the P V of tile t, the softmax of tile
// t + 1; the P V of tile 5 last. P V transposes four 128-key blocks of P
// into one PSUM bank, evacuates them with one copy, transposes the
// remaining two blocks into the other bank (while that copy runs), then
// accumulates the six matmuls.

// CHECK-LABEL: ncore.program @prog_attn
// CHECK: %[[MASK:.+]] = ncore.alloc : <sbuf, 128x1408xf32>
// CHECK: ncore.memset %[[MASK]], 0.0
// CHECK: ncore.affine_select is_ge %[[MASK]], %[[MASK]] base 6.400000e+02 partition_step 1.000000e+00 free_step -1.000000e+00 else -1.000000e+30
// CHECK: %[[KT:.+]] = ncore.alloc : <sbuf, 128x768xbf16>
// Rope tables (cos, sin) into SBUF once.
// CHECK: ncore.loop %{{.+}} trips 6 {
// CHECK:   ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x128xbf16>, <hbm, 128x128xbf16>
// CHECK: ncore.loop %{{.+}} trips 6 {
// CHECK:   ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x128xbf16>, <hbm, 128x128xbf16>
// CHECK: ncore.loop %[[KV:.+]] trips 2 {
// CHECK:   ncore.loop %{{.+}} trips 6 {
// CHECK:     ncore.tensor_tensor subtract
// CHECK:     ncore.tensor_tensor add
// CHECK:     ncore.transpose
// CHECK:     ncore.tensor_copy
// CHECK:   }
// CHECK:   ncore.loop %[[G:.+]] trips 2 {
// Tile 0: scores (two chunks of keys), mask, softmax.
// CHECK:     ncore.transpose
// CHECK:     ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x512xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x512xbf16>
// CHECK:     ncore.activation identity %{{.+}}, %{{.+}} {scale = 0.0879
// CHECK:     ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x256xf32>
// The odd chunk is evacuated by a tensor_scalar (Vector engine allowed).
// CHECK:     ncore.tensor_scalar multiply %{{.+}}, %{{.+}} imm 0.0879
// CHECK:     ncore.tensor_tensor add %[[S:.+]], %[[S]], %{{.+}}
// CHECK:     ncore.tensor_reduce max %[[MX:.+]], %[[S]]
// CHECK:     ncore.tensor_scalar multiply %[[MX]], %[[MX]] imm -1.0
// CHECK:     ncore.activation exp %{{.+}}, %[[S]] bias %[[MX]] reduce %[[SUM:[^ ]+]] :
// CHECK:     ncore.reciprocal %[[R:.+]], %[[SUM]]
// Steps 0 .. 3 in a loop over pairs: four blocks of tile t's P^T in one
// bank, one copy ...
// CHECK:     ncore.loop %[[T:.+]] trips 2 {
// CHECK-COUNT-4: ncore.transpose %{{.+}} : <psum, 128x128xf32>, <sbuf, 128x128xbf16>
// CHECK:       ncore.tensor_copy %{{.+}}, %{{.+}} : <sbuf, 128x512xbf16>, <psum, 128x512xf32>
// ... scores of tile t + 1 ...
// CHECK:       ncore.transpose
// CHECK:       ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x512xf32>
// The causal mask moves with the query tile only (a view takes the induction
// variables its offsets use).
// CHECK:       %[[M:.+]] = ncore.view %[[MASK]][%[[T]]] offsets #{{.+}} : <sbuf, 128x1408xf32> to <sbuf, 128x768xf32>
// CHECK:       ncore.tensor_tensor add %[[S2:.+]], %[[S2]], %[[M]]
// ... the other two blocks of P^T in the other bank, then P V of tile t ...
// CHECK-COUNT-2: ncore.transpose
// CHECK:       ncore.tensor_copy %{{.+}}, %{{.+}} : <sbuf, 128x256xbf16>, <psum, 128x256xf32>
// CHECK:       ncore.matmul %[[O:.+]], %{{.+}}, %{{.+}} : <psum, 128x128xf32>
// CHECK-COUNT-5: ncore.matmul %[[O]], %{{.+}}, %{{.+}} accumulate
// CHECK:       ncore.tensor_scalar multiply %{{.+}}, %[[O]], %[[R]]
// CHECK:       ncore.dma_copy
// ... softmax of tile t + 1.
// CHECK:       ncore.tensor_reduce max %{{.+}}, %[[S2]]
// CHECK:       ncore.activation exp
// Step 4, then the P V of tile 5.
// CHECK:     }
// CHECK:     ncore.tensor_reduce max
// CHECK:     ncore.tensor_scalar multiply %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK:     ncore.dma_copy
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

// -----

// Without GQA, causal mask or guest, in whole blocks (3 heads of 512
// positions, rope fused): the stable pipeline of the flash-attn-stable
// kernel (lowering/recipes/AttentionPipeline.h). The rope tables come in
// once, head 0's q, k and v one DMA per 128-row block; q and k are roped on
// the GpSimd engine as the transposes read them, four blocks to a PSUM bank
// (Q^T copied out by the Scalar engine, K^T by the Vector engine); V' =
// [V | 1] by the GpSimd engine. Then per query block, in steps: scores and
// their row max (Vector) and -scale m (GpSimd), exp from PSUM, the
// transposes of P, P V' and O = O' / l, stored block by block.
// (The all-heads lowering with a guest: convert-interleave.mlir.)

// CHECK-LABEL: ncore.program @prog_heads
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x128xbf16>, <hbm, 128x128xbf16>
// CHECK: ncore.memset %{{.+}}, 1.000000e+00 on gpsimd : <sbuf, 128x4x1xbf16>
// CHECK-COUNT-12: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x128xbf16>, <hbm, 128x128xbf16>
// CHECK: ncore.tensor_tensor multiply %{{.+}} on gpsimd : !ncore.tile<sbuf, 128x4x128xbf16>
// CHECK-COUNT-4: ncore.transpose
// CHECK: ncore.tensor_copy %{{.+}} on scalar : <sbuf, 128x4x128xbf16>, <psum, 128x512xf32>
// CHECK: ncore.tensor_tensor multiply %{{.+}} on gpsimd : !ncore.tile<sbuf, 128x4x128xbf16>
// CHECK-COUNT-4: ncore.transpose
// CHECK: ncore.tensor_copy %{{.+}} on vector : <sbuf, 128x4x128xbf16>, <psum, 128x512xf32>
// CHECK: ncore.tensor_copy %{{.+}} on gpsimd : <sbuf, 128x4x128xbf16>, <sbuf, 128x4x128xbf16>
// Stage A of block 0: scores from PSUM, no evacuation before the max.
// CHECK: ncore.matmul %[[S:.+]], %{{.+}}, %{{.+}} : <psum, 128x512xf32>, <sbuf, 128x1x128xbf16>, <sbuf, 128x4x128xbf16>
// CHECK: ncore.tensor_reduce max %{{.+}}, %[[S]] on vector
// CHECK: ncore.tensor_scalar multiply %[[NEGM:.+]], %{{.+}} imm -0.08{{[0-9]+}} on gpsimd
// Step 1: B of block 0 (exp straight from the scores' PSUM), A of block 1.
// CHECK: ncore.activation exp %{{.+}}, %[[S]] bias %[[NEGM]]
// CHECK: ncore.matmul %{{.+}} : <psum, 128x512xf32>, <sbuf, 128x1x128xbf16>, <sbuf, 128x4x128xbf16>
// Step 3: D and E of block 0: P V' over four key blocks, O' / l, stored.
// CHECK: ncore.matmul %[[O:.+]], %{{.+}}, %{{.+}} : <psum, 128x129xf32>, <sbuf, 128x1x128xbf16>, <sbuf, 128x1x129xbf16>
// CHECK-COUNT-3: ncore.matmul %[[O]], %{{.+}}, %{{.+}} accumulate
// CHECK: ncore.tensor_scalar divide %[[OUT:.+]], %{{.+}}, %{{.+}} on vector : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<psum, 128x128xf32>, !ncore.tile<psum, 128x1xf32>
// CHECK: ncore.dma_copy %{{.+}}, %[[OUT]] : <hbm, 128x128xbf16>, <sbuf, 128x128xbf16>
// 12 blocks in all, each with its store.
// CHECK-COUNT-11: ncore.tensor_scalar divide
func.func private @prog_heads(%q: tensor<1x3x512x128xbf16>, %k: tensor<1x3x512x128xbf16>, %v: tensor<1x3x512x128xbf16>, %c: tensor<512x128xbf16>, %s: tensor<512x128xbf16>) -> tensor<1x3x512x128xbf16> attributes {seam.program} {
  %o = seam.attention %q, %k, %v rope(%c, %s) {scale = 0.088 : f64} : (tensor<1x3x512x128xbf16>, tensor<1x3x512x128xbf16>, tensor<1x3x512x128xbf16>, tensor<512x128xbf16>, tensor<512x128xbf16>) -> tensor<1x3x512x128xbf16>
  return %o : tensor<1x3x512x128xbf16>
}
