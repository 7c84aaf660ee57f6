// RUN: seam-opt %s --convert-seam-to-ncore | FileCheck %s

// A row-parallel linear's partial sums are written to HBM and all-reduced
// there; the consumer loads the reduced tensor. The all_reduce is the
// partial sums' only reader, so the linear writes them to HBM slab by slab
// (no SBUF copy of the whole tensor, no store after the linear).
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
// CHECK: %[[SRC:.+]] = ncore.reshape %[[P]] : <hbm, 128x256xf32> to <hbm, 1x128x256xf32>
// CHECK: %[[CC:.+]] = ncore.alloc {name = "cc{{[0-9]+}}"} : <hbm, 128x256xf32>
// CHECK: %[[DST:.+]] = ncore.reshape %[[CC]] : <hbm, 128x256xf32> to <hbm, 1x128x256xf32>
// CHECK: ncore.all_reduce add %[[DST]], %[[SRC]] ranks 4
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
