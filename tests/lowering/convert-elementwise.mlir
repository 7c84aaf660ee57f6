// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s

// adaLN modulation: every intermediate stays in SBUF (one [128, 2 x 3072]
// tile each, rows on partitions); the [1, 1, 3072] vectors are broadcast onto
// the partitions once, before the row loop: the row is DMA'd to one
// partition and multiplied by a ones column on the Tensor engine. The ones
// column is set once, at the program's start.

// CHECK-LABEL: ncore.program @prog_mod
// CHECK-SAME: seam.spills = 0
// CHECK-NEXT: %[[ONES:.+]] = ncore.alloc : <sbuf, 1x128xbf16>
// CHECK-NEXT: ncore.memset %[[ONES]], 1.0
// CHECK: %[[N:.+]] = ncore.alloc : <sbuf, 128x6144xbf16>
// CHECK-COUNT-2: ncore.activation square
// CHECK: %[[M:.+]] = ncore.alloc : <sbuf, 128x6144xbf16>
// CHECK: %[[S:.+]] = ncore.alloc : <sbuf, 128x3072xbf16>
// CHECK: %[[ROW:.+]] = ncore.alloc : <sbuf, 1x3072xbf16>
// CHECK: ncore.dma_copy %[[ROW]], %{{.+}} : <sbuf, 1x3072xbf16>, <hbm, 1x3072xbf16>
// CHECK-NOT: ncore.memset
// CHECK: ncore.loop %{{.+}} trips 6 {
// CHECK:   ncore.matmul %{{.+}}, %[[ONES]], %{{.+}} : <psum, 128x512xf32>, <sbuf, 1x128xbf16>, <sbuf, 1x512xbf16>
// CHECK:   ncore.tensor_copy
// CHECK: }
// CHECK: ncore.loop %[[I:.+]] trips 2 {
// CHECK:   %[[NV:.+]] = ncore.view %[[N]][%[[I]]] offsets #{{.+}} : <sbuf, 128x6144xbf16> to <sbuf, 128x3072xbf16>
// CHECK:   %[[MV:.+]] = ncore.view %[[M]][%[[I]]]
// CHECK:   ncore.tensor_tensor multiply %[[MV]], %[[NV]], %[[S]]
// CHECK: }
// The equal-shape add takes its two row tiles as a pair of instructions
// (ncore-schedule may put them on two engines); the broadcast add loops.
// CHECK-COUNT-2: ncore.tensor_tensor add
// CHECK: ncore.loop
// CHECK:   ncore.tensor_tensor add
// The result goes to the output binding in 2048-element chunks.
// CHECK: ncore.loop
// CHECK:   ncore.activation gelu_tanh %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x2048xbf16>, !ncore.tile<sbuf, 128x2048xbf16>
// CHECK:   ncore.dma_copy %{{.+}}, %{{.+}} : <hbm, 128x2048xbf16>, <sbuf, 128x2048xbf16>
// CHECK:   ncore.activation gelu_tanh %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x1024xbf16>
func.func private @prog_mod(%x: tensor<1x256x3072xbf16>, %shift: tensor<1x1x3072xbf16>, %scale: tensor<1x1x3072xbf16>) -> tensor<1x256x3072xbf16> attributes {seam.program} {
  %n = seam.layer_norm %x {epsilon = 1.0e-6 : f64} : (tensor<1x256x3072xbf16>) -> tensor<1x256x3072xbf16>
  %m = seam.mul %n, %scale : (tensor<1x256x3072xbf16>, tensor<1x1x3072xbf16>) -> tensor<1x256x3072xbf16>
  %a = seam.add %n, %m : (tensor<1x256x3072xbf16>, tensor<1x256x3072xbf16>) -> tensor<1x256x3072xbf16>
  %b = seam.add %shift, %a : (tensor<1x1x3072xbf16>, tensor<1x256x3072xbf16>) -> tensor<1x256x3072xbf16>
  %g = seam.gelu_tanh %b : tensor<1x256x3072xbf16>
  return %g : tensor<1x256x3072xbf16>
}

// -----

// A broadcast vector computed in the program (SBUF, one partition) is
// replicated on the Tensor engine: ones[1, P]^T x row[1, N].

// CHECK-LABEL: ncore.program @prog_silu
// CHECK: %[[ONES:.+]] = ncore.alloc : <sbuf, 1x64xf32>
// CHECK: ncore.memset %[[ONES]], 1.000000e+00
// CHECK: ncore.activation silu
// CHECK: ncore.activation gelu
// CHECK: ncore.matmul %{{.+}}, %[[ONES]], %{{.+}} : <psum, 64x32xf32>, <sbuf, 1x64xf32>, <sbuf, 1x32xf32>
// CHECK: ncore.tensor_copy
// CHECK: ncore.tensor_tensor multiply
func.func private @prog_silu(%x: tensor<64x32xf32>, %v: tensor<1x32xf32>) -> tensor<64x32xf32> attributes {seam.program} {
  %s = seam.silu %v : tensor<1x32xf32>
  %g = seam.gelu %x : tensor<64x32xf32>
  %y = seam.mul %g, %s : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// -----

// An operand in HBM of at most one 64 KiB piece per DMA queue (here 512 KiB,
// a program input) is loaded whole before the op's row loop, one DMA per row
// tile issued together, instead of one row tile per iteration (silu's input,
// the add's first operand); the add then reads SBUF only. A larger operand
// (@prog_streamed, 2 MiB) streams row tile by row tile.
// CHECK-LABEL: ncore.program @prog_staged
// CHECK: ncore.loop %{{.+}} trips 4 {
// CHECK-NEXT: ncore.view
// CHECK-NEXT: ncore.view
// CHECK-NEXT: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x256xf32>, <hbm, 128x256xf32>
// CHECK-NEXT: }
// CHECK: ncore.activation silu
// CHECK: ncore.loop %{{.+}} trips 4 {
// CHECK-NEXT: ncore.view
// CHECK-NEXT: ncore.view
// CHECK-NEXT: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x256xf32>, <hbm, 128x256xf32>
// CHECK-NEXT: }
// CHECK-NEXT: ncore.loop %{{.+}} trips 2 {
// CHECK-NOT: ncore.dma_copy
// CHECK: ncore.tensor_tensor add
// CHECK-NOT: ncore.dma_copy
// CHECK: ncore.tensor_tensor add
// CHECK-NEXT: }
func.func private @prog_staged(%x: tensor<512x256xf32>, %y: tensor<512x256xf32>) -> tensor<512x256xf32> attributes {seam.program} {
  %s = seam.silu %y : tensor<512x256xf32>
  %o = seam.add %x, %s : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<512x256xf32>
  %g = seam.gelu %o : tensor<512x256xf32>
  return %g : tensor<512x256xf32>
}

// -----

// CHECK-LABEL: ncore.program @prog_streamed
// CHECK: ncore.loop %{{.+}} trips 16 {
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x256xf32>, <hbm, 128x256xf32>
// CHECK-NEXT: ncore.activation silu
func.func private @prog_streamed(%y: tensor<2048x256xf32>) -> tensor<2048x256xf32> attributes {seam.program} {
  %s = seam.silu %y : tensor<2048x256xf32>
  return %s : tensor<2048x256xf32>
}
