// RUN: seam-opt %s -split-input-file --convert-seam-to-ncore 2>&1 | FileCheck %s
// RUN: seam-opt %s -split-input-file --convert-seam-to-ncore -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// Interleaving (ConvertSeamToNcore.h, InterleavedWork): the attention takes
// the MLP-style linear %b, which reads the same input as %a (whose X^T it
// reuses) and is read only after the attention, as its guest. The guest's
// group 0 (columns 0..127: one slab DMA, two buffers) runs before the
// attention's prologue; group 1 loads there too and runs in head 0's steps,
// one row tile after each softmax, its gelu evacuation following the
// attention's exp in the Scalar engine's queue.
// CHECK: remark: convert-seam-to-ncore: linear [768 x 256] x [256 x 256]: interleaved into a later op's pipeline: 2 slab(s) of 128 columns
// CHECK: remark: convert-seam-to-ncore: seam.attention takes the independent seam.linear at {{.+}} as its guest: 2 x 6 units between its own steps
// CHECK-LABEL: ncore.program @prog_guest
// The guest's two slabs.
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x2x128xbf16>, <hbm, 128x2x128xbf16>
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x2x128xbf16>, <hbm, 128x2x128xbf16>
// Group 0, before the attention's K^T: six row tiles, two per iteration.
// CHECK: ncore.loop %{{.+}} trips 3 {
// CHECK: ncore.activation gelu_tanh
// CHECK: ncore.activation gelu_tanh
// CHECK: ncore.transpose
// Group 1 in head 0's steps: after a softmax's exp, a guest unit.
// CHECK: ncore.activation exp
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x128xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x128xbf16>
// CHECK: ncore.activation gelu_tanh
// The statistic over both programs: only the first interleaves.
// STATS: 1 interleaved
func.func private @prog_guest(%x: tensor<768x256xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<256x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %a = seam.linear %x, %w1 : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %b = seam.linear %x, %w2 {activation = "gelu_tanh"} : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %a, %b, %o : tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>
}

// -----

// A linear read before the attention (by the add) cannot move into it: it
// is lowered in place, streamed.
// CHECK: remark: convert-seam-to-ncore: linear [768 x 256] x [256 x 256]: weight streamed once
// CHECK: remark: convert-seam-to-ncore: linear [768 x 256] x [256 x 256]: weight streamed once
// CHECK-NOT: takes the independent
// CHECK-LABEL: ncore.program @prog_read_before
func.func private @prog_read_before(%x: tensor<768x256xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<256x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %a = seam.linear %x, %w1 : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %b = seam.linear %x, %w2 {activation = "gelu_tanh"} : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %c = seam.add %b, %b : (tensor<768x256xbf16>, tensor<768x256xbf16>) -> tensor<768x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %a, %c, %o : tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>
}
