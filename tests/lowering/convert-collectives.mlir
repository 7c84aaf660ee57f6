// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s
// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A row-parallel linear's partial sums are written to HBM and all-reduced
// there; the consumer loads the reduced tensor. The all_reduce is the
// partial sums' only reader, so the linear writes them to HBM slab by slab
// (no SBUF copy of the whole tensor, no store after the linear), and the
// linear emits the all_reduce itself after its last store: one slab's
// reduction (a collective's hop latency) would take longer than a slab's
// Tensor-engine time here.
// REMARK: remark: convert-seam-to-ncore: all_reduce emitted in the linear at {{.+}}, once after its last store
// all_gather along the last dim of a [2, 64, 32] tensor gathers rank-major
// and scatters by DMA.

// CHECK-LABEL: ncore.program @prog_tp
// CHECK: %[[P:.+]] = ncore.alloc {name = "hbm{{[0-9]+}}"} : <hbm, 128x256xf32>
// CHECK-NOT: relayout
// CHECK: ncore.matmul
// CHECK: %[[S0:.+]] = ncore.view %[[P]] offsets #{{.+}} : <hbm, 128x256xf32> to <hbm, 128x128xf32>
// CHECK-NEXT: ncore.dma_copy %[[S0]], %{{.+}} : <hbm, 128x128xf32>, <sbuf, 128x128xf32>
// CHECK: ncore.matmul
// CHECK: %[[S1:.+]] = ncore.view %[[P]] offsets #{{.+}} : <hbm, 128x256xf32> to <hbm, 128x128xf32>
// CHECK-NEXT: ncore.dma_copy %[[S1]], %{{.+}} : <hbm, 128x128xf32>, <sbuf, 128x128xf32>
// CHECK-NOT: relayout
// CHECK: %[[CC:.+]] = ncore.alloc {name = "cc{{[0-9]+}}"} : <hbm, 128x256xf32>
// CHECK: ncore.all_reduce add %[[CC]], %[[P]] ranks 4
// CHECK: ncore.activation gelu
// CHECK: ncore.all_gather %{{.+}}, %{{.+}} ranks 4 : <hbm, 4x2x64x32xf32>, <hbm, 2x64x32xf32>
// CHECK-COUNT-4: ncore.dma_copy %{{.+}}, %{{.+}} : <hbm, 2x64x32xf32>, <hbm, 2x64x32xf32>
func.func private @prog_tp(%x: tensor<1x128x64xf32>, %w: tensor<64x256xf32>, %g: tensor<2x64x32xf32>) -> (tensor<1x128x256xf32>, tensor<2x64x128xf32>) attributes {seam.program} {
  %p = seam.linear %x, %w : (tensor<1x128x64xf32>, tensor<64x256xf32>) -> tensor<1x128x256xf32>
  %s = seam.all_reduce %p ranks 4 : tensor<1x128x256xf32>
  %y = seam.gelu %s : tensor<1x128x256xf32>
  %a = seam.all_gather %g dim 2 ranks 4 : tensor<2x64x32xf32> -> tensor<2x64x128xf32>
  return %y, %a : tensor<1x128x256xf32>, tensor<2x64x128xf32>
}

// -----

// A Tensor-engine-bound row-parallel projection (flux2-klein's single-stream
// proj_out per rank: 768 x 3072 by 3072 x 3072, bf16): the linear reduces
// each 256-column slab as soon as it is stored, inside its slab loop (two
// slabs per iteration: 5 iterations, then the last two slabs), while the
// Tensor engine computes the next slab.
// CHECK-LABEL: ncore.program @prog_slabs
// CHECK: ncore.loop %{{.+}} trips 5 {
// CHECK: ncore.all_reduce add %{{.+}}, %{{.+}} ranks 4 : <hbm, 768x256xbf16>, <hbm, 768x256xbf16>
// CHECK: ncore.all_reduce add %{{.+}}, %{{.+}} ranks 4 : <hbm, 768x256xbf16>, <hbm, 768x256xbf16>
// CHECK-NEXT: }
// CHECK-COUNT-2: ncore.all_reduce add %{{.+}}, %{{.+}} ranks 4 : <hbm, 768x256xbf16>, <hbm, 768x256xbf16>
// CHECK-NOT: ncore.all_reduce
// CHECK: ncore.activation gelu
// REMARK: remark: convert-seam-to-ncore: all_reduce emitted in the linear at {{.+}}, slab by slab
func.func private @prog_slabs(%x: tensor<1x768x3072xbf16>, %w: tensor<3072x3072xbf16>) -> tensor<1x768x3072xbf16> attributes {seam.program} {
  %p = seam.linear %x, %w : (tensor<1x768x3072xbf16>, tensor<3072x3072xbf16>) -> tensor<1x768x3072xbf16>
  %s = seam.all_reduce %p ranks 4 : tensor<1x768x3072xbf16>
  %y = seam.gelu %s : tensor<1x768x3072xbf16>
  return %y : tensor<1x768x3072xbf16>
}
