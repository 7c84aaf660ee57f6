// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s
// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s --check-prefix=COUNT
// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// With remarks=false (seam-run) the decisions are silent; the IR is the same.
// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore="remarks=false" 2>&1 >/dev/null | count 0
// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore="remarks=false" | FileCheck %s
// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// A [1, 768, 3072] x [3072, 768] linear streams its weight: W is read once,
// in slabs of 256 columns (each one 1.5 MiB DMA: W reshaped to [128, 24, N],
// K = 128 partitions x 24 blocks), software-pipelined over two buffers (the
// DMA of slab s + 1 comes before the matmuls of slab s), while X^T of all six
// token tiles stays in SBUF. Nothing is unrolled: the three slabs are a
// prologue load, one pipelined step and a last step, each a loop over token
// tiles (two accumulators) around a K loop.

// REMARK: remark: convert-seam-to-ncore: linear [768 x 3072] x [3072 x 768]: weight streamed once in 3 slab(s) of 256 columns (1.50 MiB per DMA, two buffers), K = 128 x 24, X^T of 6 row tile(s) resident
// STATS: 0 linears-blocked
// STATS-NEXT: 9 linears-streamed
// STATS: 9 weight-passes
// STATS-NEXT: 0 written-to-hbm
// STATS-NEXT: 2 xt-reused
// STATS-NEXT: 1 yt-handoffs

// COUNT-LABEL: ncore.program @prog_mlp
// COUNT-COUNT-3: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x24x256xbf16>, <hbm, 128x24x256xbf16>
// COUNT-NOT: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x24x256xbf16>
// COUNT: // -----

// CHECK-LABEL: func.func private @prog_mlp
// CHECK-SAME: seam.ncore_program = @ncore::@prog_mlp
// CHECK-LABEL: ncore.program @prog_mlp
// CHECK-SAME: %[[X:[^:]+]]: !ncore.tile<hbm, 1x768x3072xbf16> {ncore.role = "input"}
// CHECK-SAME: %[[W:[^:]+]]: !ncore.tile<hbm, 3072x768xbf16> {ncore.role = "param"}
// CHECK-SAME: %[[Y:[^:]+]]: !ncore.tile<hbm, 1x768x768xbf16> {ncore.role = "output"}
// X^T: per token tile one DMA of [128, 3072], 24 transposes of the strided
// columns j, j + 24, ... (two PSUM tiles alternate).
// CHECK: %[[XT:.+]] = ncore.alloc : <sbuf, 128x18432xbf16>
// CHECK: %[[W3:.+]] = ncore.reshape %[[W]] : <hbm, 3072x768xbf16> to <hbm, 128x24x768xbf16>
// CHECK: ncore.loop %{{.+}} trips 3 {
// CHECK:   ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x3072xbf16>, <hbm, 128x3072xbf16>
// CHECK:   ncore.loop %{{.+}} trips 12 {
// CHECK:     ncore.view %{{.+}} offsets #{{.+}} strides [1, 24] : <sbuf, 128x3072xbf16> to <sbuf, 128x128xbf16>
// CHECK:     ncore.transpose
// CHECK:     ncore.tensor_copy
// Prologue: slab 0; then slab 1 is loaded before slab 0's matmuls.
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x24x256xbf16>, <hbm, 128x24x256xbf16>
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x24x256xbf16>, <hbm, 128x24x256xbf16>
// CHECK: ncore.loop %{{.+}} trips 3 {
// CHECK:   ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x256xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x256xbf16>
// CHECK:   ncore.loop %{{.+}} trips 23 {
// CHECK:     ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} accumulate : <psum, 128x256xf32>
// CHECK:   ncore.tensor_copy
// CHECK:   ncore.dma_copy
func.func private @prog_mlp(%x: tensor<1x768x3072xbf16>, %w: tensor<3072x768xbf16>) -> tensor<1x768x768xbf16> attributes {seam.program} {
  %y = seam.linear %x, %w : (tensor<1x768x3072xbf16>, tensor<3072x768xbf16>) -> tensor<1x768x768xbf16>
  return %y : tensor<1x768x768xbf16>
}
func.func @forward(%x: tensor<1x768x3072xbf16>) -> tensor<1x768x768xbf16> {
  %w = seam.param "w" init normal(0.02) seed 1 : tensor<3072x768xbf16>
  %y = call @prog_mlp(%x, %w) : (tensor<1x768x3072xbf16>, tensor<3072x768xbf16>) -> tensor<1x768x768xbf16>
  return %y : tensor<1x768x768xbf16>
}

// -----

// Bias, a partial token tile (200 = 128 + 72), K < 128, an intermediate in
// SBUF feeding a second linear (no HBM round trip).

// CHECK-LABEL: ncore.program @prog_bias
// CHECK-SAME: {ncore.role = "input"}
// CHECK-SAME: {ncore.role = "input"}
// CHECK-SAME: {ncore.role = "input"}
// CHECK: %[[H:.+]] = ncore.alloc : <sbuf, 128x128xf32>
// CHECK: ncore.transpose %{{.+}}, %{{.+}} : <psum, 64x128xf32>, <sbuf, 128x64xf32>
// CHECK: ncore.transpose %{{.+}}, %{{.+}} : <psum, 64x72xf32>, <sbuf, 72x64xf32>
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 64x1x64xf32>, <hbm, 64x1x64xf32>
// The bias is broadcast once per slab (ones column x row on the TE).
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 1x64xf32>, <hbm, 1x64xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x64xf32>, <sbuf, 1x128xf32>, <sbuf, 1x64xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x64xf32>, <sbuf, 64x128xf32>, <sbuf, 64x64xf32>
// CHECK: %[[V:.+]] = ncore.view %[[H]] offsets #{{.+}} : <sbuf, 128x128xf32> to <sbuf, 128x64xf32>
// CHECK: ncore.tensor_tensor add %[[V]], %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<psum, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 72x64xf32>, <sbuf, 64x72xf32>, <sbuf, 64x64xf32>
// The second linear reads the SBUF intermediate through the view the first
// one's evacuation wrote (one view op per window of a block).
// CHECK-NOT: ncore.view %[[H]] offsets #{{.+}} : <sbuf, 128x128xf32> to <sbuf, 128x64xf32>
// CHECK: ncore.transpose %{{.+}}, %[[V]]
func.func private @prog_bias(%x: tensor<200x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<200x64xf32> attributes {seam.program} {
  %h = seam.linear %x, %w, %b : (tensor<200x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<200x64xf32>
  %y = seam.linear %h, %w : (tensor<200x64xf32>, tensor<64x64xf32>) -> tensor<200x64xf32>
  return %y : tensor<200x64xf32>
}

// -----

// An activation of the linear rides on the PSUM evacuation: one
// activation per output block reading PSUM (here after the bias add), no
// separate pass.

// CHECK-LABEL: ncore.program @prog_act
// CHECK: ncore.matmul %[[ACC:.+]], %{{.+}}, %{{.+}} : <psum, 128x64xf32>, <sbuf, 64x128xf32>, <sbuf, 64x64xf32>
// CHECK: ncore.activation gelu_tanh %{{.+}}, %[[ACC]] : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<psum, 128x64xf32>
// CHECK: ncore.matmul
// CHECK: ncore.tensor_tensor add %[[O:.+]], %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<psum, 128x64xf32>
// CHECK: ncore.activation silu %[[O]], %[[O]] :
func.func private @prog_act(%x: tensor<128x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<128x64xf32> attributes {seam.program} {
  %h = seam.linear %x, %w {activation = "gelu_tanh"} : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %y = seam.linear %h, %w, %b {activation = "silu"} : (tensor<128x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

// One row without a bias (adaLN's modulation matvec): Y^T on partitions.
// X^T by one DMA (no transposes), W blocks stationary against the single
// moving column, every output in one PSUM tile evacuated once after the
// last slab, and one DMA per slab writes its [128, nbs] outputs back as a
// row.
// REMARK: remark: convert-seam-to-ncore: linear [1 x 3072] x [3072 x 2304]: weight streamed once in 9 slab(s) of 256 columns {{.+}}; one row: Y^T on partitions, W stationary
// CHECK-LABEL: ncore.program @prog_mv
// CHECK: %[[XT:.+]] = ncore.alloc : <sbuf, 128x24xbf16>
// CHECK-NEXT: ncore.dma_copy %[[XT]], %arg0 : <sbuf, 128x24xbf16>, <hbm, 1x3072xbf16>
// CHECK: %[[ACC:.+]] = ncore.alloc : <psum, 128x18xf32>
// CHECK-NOT: ncore.transpose
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x1xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x1xbf16>
// CHECK-NOT: ncore.tensor_copy
// CHECK: ncore.tensor_copy %[[OUT:.+]], %[[ACC]] : <sbuf, 128x18xbf16>, <psum, 128x18xf32>
// CHECK: ncore.loop
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <hbm, 1x256xbf16>, <sbuf, 128x2xbf16>
func.func private @prog_mv(%x: tensor<1x3072xbf16>, %w: tensor<3072x2304xbf16>) -> tensor<1x2304xbf16> attributes {seam.program} {
  %y = seam.linear %x, %w : (tensor<1x3072xbf16>, tensor<3072x2304xbf16>) -> tensor<1x2304xbf16>
  return %y : tensor<1x2304xbf16>
}

// -----

// Two linears of one input (the single-stream block's QKV and MLP
// projections): the second reuses the first's X^T (kept while the input
// lives, in place of the input's own bytes: only linears read it), so only
// the first transposes.
// COUNT-LABEL: ncore.program @prog_two
// COUNT-COUNT-4: ncore.transpose
// COUNT-NOT: ncore.transpose
// COUNT: ncore.activation silu
// COUNT-NOT: ncore.transpose
func.func private @prog_two(%x: tensor<256x192xbf16>, %w1: tensor<192x128xbf16>, %w2: tensor<192x320xbf16>) -> (tensor<256x128xbf16>, tensor<256x320xbf16>) attributes {seam.program} {
  %a = seam.linear %x, %w1 : (tensor<256x192xbf16>, tensor<192x128xbf16>) -> tensor<256x128xbf16>
  %s = seam.silu %a : tensor<256x128xbf16>
  %b = seam.linear %x, %w2 {activation = "silu"} : (tensor<256x192xbf16>, tensor<192x320xbf16>) -> tensor<256x320xbf16>
  return %s, %b : tensor<256x128xbf16>, tensor<256x320xbf16>
}

// -----

// An MLP (the first linear's only reader is the second's input): the first
// keeps its weight resident and stationary and computes Y^T, 128 features
// (p * 2 + j of block j, the second's K split) by 512 tokens per PSUM
// block, with its bias per partition in the gelu's evacuation; the second
// reads it as its X^T, so only the first linear's input is transposed.
// COUNT-LABEL: ncore.program @prog_mlp
// COUNT-COUNT-8: ncore.transpose
// COUNT-NOT: ncore.transpose
// COUNT: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x512xf32>, <sbuf, 96x128xf32>, <sbuf, 96x512xf32>
// COUNT: ncore.activation gelu_tanh %{{.+}}, %{{.+}} bias %{{.+}} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
// COUNT-NOT: ncore.transpose
// REMARK: remark: convert-seam-to-ncore: linear [1200 x 192] x [192 x 256]: weight resident and stationary, Y^T handed to the next linear as its X^T (2 blocks of 128 features; no transposes there)
func.func private @prog_mlp(%x: tensor<1200x192xf32>, %w1: tensor<192x256xf32>, %b1: tensor<256xf32>, %w2: tensor<256x320xf32>) -> tensor<1200x320xf32> attributes {seam.program} {
  %h = seam.linear %x, %w1, %b1 {activation = "gelu_tanh"} : (tensor<1200x192xf32>, tensor<192x256xf32>, tensor<256xf32>) -> tensor<1200x256xf32>
  %y = seam.linear %h, %w2 : (tensor<1200x256xf32>, tensor<256x320xf32>) -> tensor<1200x320xf32>
  return %y : tensor<1200x320xf32>
}
