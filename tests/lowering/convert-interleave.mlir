// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore 2>&1 | FileCheck %s
// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

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
// The statistic over all programs: every one interleaves.
// STATS: 4 interleaved
func.func private @prog_guest(%x: tensor<768x256xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<256x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %a = seam.linear %x, %w1 : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %b = seam.linear %x, %w2 {activation = "gelu_tanh"} : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %a, %b, %o : tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>
}

// -----

// A linear read before the attention (by the add) cannot move into it: it
// is lowered in place, streamed. The one before it, read only after the
// attention, is its guest (their input lives until the attention: a
// guest's operands live until its host).
// CHECK: remark: convert-seam-to-ncore: linear [768 x 256] x [256 x 256]: weight streamed once
// CHECK: remark: convert-seam-to-ncore: linear [768 x 256] x [256 x 256]: interleaved into a later op's pipeline
// CHECK: remark: convert-seam-to-ncore: seam.attention takes the independent seam.linear at {{.+}} as its guest
// CHECK-LABEL: ncore.program @prog_read_before
func.func private @prog_read_before(%x: tensor<768x256xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<256x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %a = seam.linear %x, %w1 : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %b = seam.linear %x, %w2 {activation = "gelu_tanh"} : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %c = seam.add %b, %b : (tensor<768x256xbf16>, tensor<768x256xbf16>) -> tensor<768x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %a, %c, %o : tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>
}

// -----

// A one-row linear (adaLN's modulation) right before a linear of 768 rows
// whose matmuls bound it runs inside that linear: the host's plan takes
// slabs that split the guest's 8 output blocks evenly (4 of 256 columns),
// each guest slab is loaded right after the host's, and the guest's matmuls
// (its output on partitions: one PSUM column per block) follow each host
// slab's. (Y^T is evacuated once, after the host's last slab.)
// CHECK: remark: convert-seam-to-ncore: linear [1 x 512] x [512 x 1024]: interleaved into a later op's pipeline as Y^T: 4 slab(s) of 256 columns (0.25 MiB per DMA, two buffers), 2 output block(s) per unit
// CHECK: remark: convert-seam-to-ncore: seam.linear takes the independent seam.linear at {{.+}} as its guest: 4 x 1 units between its own steps
// CHECK: remark: convert-seam-to-ncore: linear [768 x 2048] x [2048 x 1024]: weight streamed once in 4 slab(s) of 256 columns
// CHECK-LABEL: ncore.program @prog_matvec_in_linear
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x16x256xbf16>, <hbm, 128x16x256xbf16>
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x4x256xbf16>, <hbm, 128x4x256xbf16>
// CHECK: ncore.tensor_copy %{{.+}}, %{{.+}} : <sbuf, 128x256xbf16>, <psum, 128x256xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x1xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x1xbf16>
func.func private @prog_matvec_in_linear(%vec: tensor<1x512xbf16>, %wm: tensor<512x1024xbf16>, %x: tensor<768x2048xbf16>, %w: tensor<2048x1024xbf16>) -> (tensor<1x1024xbf16>, tensor<768x1024xbf16>) attributes {seam.program} {
  %m = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %o = seam.linear %x, %w : (tensor<768x2048xbf16>, tensor<2048x1024xbf16>) -> tensor<768x1024xbf16>
  return %m, %o : tensor<1x1024xbf16>, tensor<768x1024xbf16>
}

// -----

// An attention hosts a one-row linear too: one 128-column slab per head (2
// heads of 6 query tiles). With fewer output blocks per slab than steps,
// the steps split the K blocks instead: the accumulators are cleared once
// by a matmul of zeros (only the Tensor engine writes PSUM) and every guest
// matmul accumulates.
// CHECK: remark: convert-seam-to-ncore: linear [1 x 768] x [768 x 256]: interleaved into a later op's pipeline as Y^T: 2 slab(s) of 128 columns (0.19 MiB per DMA, two buffers), 1 K block(s) of every output block per unit
// CHECK: remark: convert-seam-to-ncore: seam.attention takes the independent seam.linear at {{.+}} as its guest: 2 x 6 units between its own steps
// CHECK-LABEL: ncore.program @prog_matvec_in_attention
// CHECK: ncore.memset
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x2xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x2xbf16>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} accumulate : <psum, 128x1xf32>, <sbuf, 128x128xbf16>, <sbuf, 128x1xbf16>
func.func private @prog_matvec_in_attention(%vec: tensor<1x768xbf16>, %wm: tensor<768x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<1x256xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %m = seam.linear %vec, %wm : (tensor<1x768xbf16>, tensor<768x256xbf16>) -> tensor<1x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %m, %o : tensor<1x256xbf16>, tensor<1x2x768x128xbf16>
}
