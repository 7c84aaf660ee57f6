// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s

// Column slices and last-dim-preserving reshapes are free: the q slice of a
// fused projection is a view of its SBUF tile. Splitting the last dim needs
// the rows on other partitions: the tile goes to HBM once (relayout), the
// reshape is free there, and the head transpose is a loop of strided DMAs
// ([256, 128] blocks, one per head).

// CHECK-LABEL: ncore.program @prog_heads
// CHECK: %[[QKV:.+]] = ncore.alloc : <sbuf, 128x768xbf16>
// CHECK: %[[RL:.+]] = ncore.alloc {name = "relayout{{[0-9]+}}"} : <hbm, 256x128xbf16>
// CHECK: %[[QV:.+]] = ncore.view %[[QKV]][%{{.+}}] offsets #{{.+}} : <sbuf, 128x768xbf16> to <sbuf, 128x128xbf16>
// CHECK: ncore.dma_copy %{{.+}}, %[[QV]] : <hbm, 128x128xbf16>, <sbuf, 128x128xbf16>
// CHECK: %[[R4:.+]] = ncore.reshape %[[RL]] : <hbm, 256x128xbf16> to <hbm, 1x256x128xbf16>
// CHECK: %[[R2:.+]] = ncore.reshape %[[R4]] : <hbm, 1x256x128xbf16> to <hbm, 512x64xbf16>
// CHECK-NOT: ncore.dma_copy
// CHECK: ncore.reshape %[[R2]] : <hbm, 512x64xbf16> to <hbm, 1x256x2x64xbf16>
// CHECK: ncore.loop %[[H:.+]] trips 2 {
// CHECK-DAG:   %[[S:.+]] = ncore.view %{{.+}}[%[[H]]] offsets #{{.+}} : <hbm, 1x256x2x64xbf16> to <hbm, 1x256x1x64xbf16>
// CHECK-DAG:   %[[D:.+]] = ncore.view %{{.+}}[%[[H]]] offsets #{{.+}} : <hbm, 1x2x256x64xbf16> to <hbm, 1x1x256x64xbf16>
// CHECK:   ncore.dma_copy %[[D]], %[[S]]
func.func private @prog_heads(%x: tensor<1x256x64xbf16>, %w: tensor<64x384xbf16>) -> tensor<1x2x256x64xbf16> attributes {seam.program} {
  %qkv = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x384xbf16>) -> tensor<1x256x384xbf16>
  %q = seam.slice %qkv offsets [0, 0, 0] : tensor<1x256x384xbf16> -> tensor<1x256x128xbf16>
  %h = seam.reshape %q : tensor<1x256x128xbf16> -> tensor<1x256x2x64xbf16>
  %t = seam.transpose %h perm [0, 2, 1, 3] : tensor<1x256x2x64xbf16> -> tensor<1x2x256x64xbf16>
  return %t : tensor<1x2x256x64xbf16>
}

// -----

// The same split and head transpose when the heads stay in SBUF (read by an
// op of the program, not returned): row s of [S, H * D] and row h * S + s of
// [H * S, D] sit on the same partition, so the swap is one on-chip copy per
// head ([128, S / 128, D] windows), with no round trip through HBM. Back
// again ([H, S, D] -> [S, H, D] read by a reshape that merges [H, D]) the
// result keeps the [S, H * D] rows of the linear that reads it.

// CHECK-LABEL: ncore.program @prog_heads_on_chip
// CHECK-NOT: relayout
// CHECK: ncore.loop %[[H:.+]] trips 2 {
// CHECK:   %[[A:.+]] = ncore.view %{{.+}}[%[[H]]] offsets #{{.+}} : <sbuf, 128x2x384xbf16> to <sbuf, 128x2x64xbf16>
// CHECK:   %[[B:.+]] = ncore.view %{{.+}}[%[[H]]] offsets #{{.+}} : <sbuf, 128x4x64xbf16> to <sbuf, 128x2x64xbf16>
// CHECK:   ncore.tensor_copy %[[B]], %[[A]] : <sbuf, 128x2x64xbf16>, <sbuf, 128x2x64xbf16>
// CHECK: ncore.activation
// CHECK: ncore.loop %[[H2:.+]] trips 2 {
// CHECK:   %[[C:.+]] = ncore.view %{{.+}}[%[[H2]]] offsets #{{.+}} : <sbuf, 128x2x128xbf16> to <sbuf, 128x2x64xbf16>
// CHECK:   %[[D:.+]] = ncore.view %{{.+}}[%[[H2]]] offsets #{{.+}} : <sbuf, 128x4x64xbf16> to <sbuf, 128x2x64xbf16>
// CHECK:   ncore.tensor_copy %[[C]], %[[D]] : <sbuf, 128x2x64xbf16>, <sbuf, 128x2x64xbf16>
// CHECK-NOT: relayout
// CHECK: ncore.matmul
func.func private @prog_heads_on_chip(%x: tensor<1x256x64xbf16>, %w: tensor<64x384xbf16>, %w2: tensor<128x64xbf16>) -> tensor<1x256x64xbf16> attributes {seam.program} {
  %qkv = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x384xbf16>) -> tensor<1x256x384xbf16>
  %q = seam.slice %qkv offsets [0, 0, 128] : tensor<1x256x384xbf16> -> tensor<1x256x128xbf16>
  %h = seam.reshape %q : tensor<1x256x128xbf16> -> tensor<1x256x2x64xbf16>
  %t = seam.transpose %h perm [0, 2, 1, 3] : tensor<1x256x2x64xbf16> -> tensor<1x2x256x64xbf16>
  %e = seam.silu %t : tensor<1x2x256x64xbf16>
  %b = seam.transpose %e perm [0, 2, 1, 3] : tensor<1x2x256x64xbf16> -> tensor<1x256x2x64xbf16>
  %m = seam.reshape %b : tensor<1x256x2x64xbf16> -> tensor<1x256x128xbf16>
  %y = seam.linear %m, %w2 : (tensor<1x256x128xbf16>, tensor<128x64xbf16>) -> tensor<1x256x64xbf16>
  return %y : tensor<1x256x64xbf16>
}

// -----

// Concat along the columns into SBUF: each row stays on its partition. The
// linear writes its result straight into columns [0, 64) of the result (its
// evacuations go to views of the concatenation's tile: no copy); the operand
// in HBM (an argument) is a DMA per row tile into columns [64, 192). No HBM
// scratch.

// CHECK-LABEL: ncore.program @prog_concat_cols
// CHECK-NOT: relayout
// CHECK: %[[C:.+]] = ncore.alloc : <sbuf, 128x384xbf16>
// CHECK-NOT: relayout
// CHECK: %[[V:.+]] = ncore.view %[[C]]
// CHECK: ncore.tensor_copy %[[V]], %{{.+}} : <sbuf, 128x64xbf16>, <psum, 128x64xf32>
// CHECK-NOT: ncore.tensor_copy %{{.+}}, %{{.+}} : <sbuf, 128x2x64xbf16>, <sbuf, 128x2x64xbf16>
// CHECK: ncore.loop %{{.+}} trips 2 {
// CHECK:   ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x128xbf16>, <hbm, 128x128xbf16>
// CHECK-NOT: relayout
// CHECK: ncore.matmul
func.func private @prog_concat_cols(%x: tensor<1x256x64xbf16>, %w: tensor<64x64xbf16>, %z: tensor<1x256x128xbf16>, %w2: tensor<192x64xbf16>) -> tensor<1x256x64xbf16> attributes {seam.program} {
  %a = seam.linear %x, %w : (tensor<1x256x64xbf16>, tensor<64x64xbf16>) -> tensor<1x256x64xbf16>
  %c = seam.concat %a, %z dim 2 : (tensor<1x256x64xbf16>, tensor<1x256x128xbf16>) -> tensor<1x256x192xbf16>
  %y = seam.linear %c, %w2 : (tensor<1x256x192xbf16>, tensor<192x64xbf16>) -> tensor<1x256x64xbf16>
  return %y : tensor<1x256x64xbf16>
}

// -----

// Concat along the sequence of per-head tensors: one N-d DMA per operand;
// a row slice of an HBM tensor is free.

// CHECK-LABEL: ncore.program @prog_concat
// CHECK: %[[OUT:.+]] = ncore.reshape %{{.+}} : <hbm, 1x6x768x128xbf16> to <hbm, 4608x128xbf16>
// CHECK: %[[O4:.+]] = ncore.reshape %[[OUT]] : <hbm, 4608x128xbf16> to <hbm, 1x6x768x128xbf16>
// CHECK: %[[A:.+]] = ncore.view %[[O4]] offsets #{{.+}} : <hbm, 1x6x768x128xbf16> to <hbm, 1x6x512x128xbf16>
// CHECK: ncore.dma_copy %[[A]], %{{.+}} : <hbm, 1x6x512x128xbf16>, <hbm, 1x6x512x128xbf16>
// CHECK: %[[B:.+]] = ncore.view %[[O4]] offsets #{{.+}} : <hbm, 1x6x768x128xbf16> to <hbm, 1x6x256x128xbf16>
// CHECK: ncore.dma_copy %[[B]], %{{.+}} : <hbm, 1x6x256x128xbf16>, <hbm, 1x6x256x128xbf16>
func.func private @prog_concat(%a: tensor<1x6x512x128xbf16>, %b: tensor<1x6x256x128xbf16>, %s: tensor<1x768x64xf32>) -> (tensor<1x6x768x128xbf16>, tensor<1x256x64xf32>) attributes {seam.program} {
  %c = seam.concat %a, %b dim 2 : (tensor<1x6x512x128xbf16>, tensor<1x6x256x128xbf16>) -> tensor<1x6x768x128xbf16>
  %r = seam.slice %s offsets [0, 512, 0] : tensor<1x768x64xf32> -> tensor<1x256x64xf32>
  %g = seam.gelu %r : tensor<1x256x64xf32>
  return %c, %g : tensor<1x6x768x128xbf16>, tensor<1x256x64xf32>
}

// -----

// Concat of SBUF intermediates along the rows (per-head blocks aligned to
// 128 rows) stays in SBUF: row-tile copies on the Vector engine.

// CHECK-LABEL: ncore.program @prog_rows
// CHECK: %[[C:.+]] = ncore.alloc : <sbuf, 128x384xf32>
// CHECK: ncore.loop %[[H:.+]] trips 2 {
// CHECK:   ncore.loop %{{.+}} trips 2 {
// CHECK:     ncore.tensor_copy %{{.+}}, %{{.+}} : <sbuf, 128x64xf32>, <sbuf, 128x64xf32>
// CHECK: ncore.loop %{{.+}} trips 2 {
// CHECK:   ncore.tensor_copy %{{.+}}, %{{.+}} : <sbuf, 128x64xf32>, <sbuf, 128x64xf32>
// CHECK-NOT: relayout
func.func private @prog_rows(%a: tensor<1x2x256x64xf32>, %b: tensor<1x2x128x64xf32>) -> tensor<1x2x384x64xf32> attributes {seam.program} {
  %ga = seam.gelu %a : tensor<1x2x256x64xf32>
  %gb = seam.gelu %b : tensor<1x2x128x64xf32>
  %c = seam.concat %ga, %gb dim 2 : (tensor<1x2x256x64xf32>, tensor<1x2x128x64xf32>) -> tensor<1x2x384x64xf32>
  %y = seam.silu %c : tensor<1x2x384x64xf32>
  return %y : tensor<1x2x384x64xf32>
}

// -----

// Column concatenation in SBUF: the silu and the mul write their columns of
// the result directly (views of one [128, 2 x 128] tile); only the operand
// that is a program input is copied in.

// CHECK-LABEL: ncore.program @prog_concat_in_place
// CHECK: %[[C:.+]] = ncore.alloc : <sbuf, 128x256xf32>
// CHECK: ncore.loop %[[I:.+]] trips 2 {
// CHECK:   %[[S:.+]] = ncore.view %[[C]][%[[I]]] offsets #[[MAP:.+]] : <sbuf, 128x256xf32> to <sbuf, 128x64xf32>
// CHECK:   ncore.activation silu %[[S]], %{{.+}} :
// The two row tiles of the mul are two instructions (a pair).
// CHECK: %[[M:.+]] = ncore.view %[[C]] offsets #{{.+}} : <sbuf, 128x256xf32> to <sbuf, 128x32xf32>
// CHECK: ncore.tensor_tensor multiply %[[M]]
// The input's columns: one DMA per row tile; nothing else is copied.
// CHECK: ncore.loop %{{.+}} trips 2 {
// CHECK:   ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x32xf32>, <hbm, 128x32xf32>
// CHECK: }
// CHECK-NOT: ncore.tensor_copy
// CHECK: ncore.tensor_tensor add
func.func private @prog_concat_in_place(%x: tensor<256x64xf32>, %y: tensor<256x32xf32>) -> tensor<256x128xf32> attributes {seam.program} {
  %s = seam.silu %x : tensor<256x64xf32>
  %m = seam.mul %y, %y : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
  %c = seam.concat %s, %m, %y dim 1 : (tensor<256x64xf32>, tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x128xf32>
  %o = seam.add %c, %c : (tensor<256x128xf32>, tensor<256x128xf32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// -----

// A concatenation that takes most of the SBUF budget (100 KB of each
// partition's 128 KB): its operand placed it in SBUF, and the concat itself
// then counts it as placed (not as a second 100 KB that would not fit), so
// it stays on chip: the input's columns are one DMA into it, and nothing is
// copied out to HBM and back.

// CHECK-LABEL: ncore.program @prog_concat_fills_sbuf
// CHECK-NOT: relayout
// CHECK: ncore.activation silu
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x12500xf32>, <hbm, 128x12500xf32>
// CHECK-NOT: <hbm, 128x12500xf32>, <sbuf
// CHECK-NOT: <hbm, 128x12500xf32>, <hbm
// CHECK: ncore.tensor_tensor add
func.func private @prog_concat_fills_sbuf(%x: tensor<128x12500xf32>, %y: tensor<128x12500xf32>) -> tensor<128x25000xf32> attributes {seam.program} {
  %s = seam.silu %x : tensor<128x12500xf32>
  %c = seam.concat %s, %y dim 1 : (tensor<128x12500xf32>, tensor<128x12500xf32>) -> tensor<128x25000xf32>
  %o = seam.add %c, %c : (tensor<128x25000xf32>, tensor<128x25000xf32>) -> tensor<128x25000xf32>
  return %o : tensor<128x25000xf32>
}

// -----

// A swap of the last two dims of a tensor in HBM (a kernel's [B, H, L]
// output turned back into tokens): every [128, 1024] row block arrives in
// one DMA (spread over the queues by ncore-split-dma), all issued before
// the transposes (no block waits for a buffer), not as 128 x 128 blocks
// that each pay a transfer's fixed cost; the transposes alternate two PSUM
// tiles.
// CHECK-LABEL: ncore.program @prog_swap_last
// CHECK: %[[T0:.+]] = ncore.alloc : <psum, 128x128xf32>
// CHECK-NEXT: %[[T1:.+]] = ncore.alloc : <psum, 128x128xf32>
// CHECK: ncore.loop %{{.+}} trips 2 {
// CHECK-NEXT: ncore.view
// CHECK-NEXT: ncore.view
// CHECK-NEXT: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x1024xf32>, <hbm, 128x1024xf32>
// CHECK-NEXT: }
// CHECK-NEXT: ncore.loop %{{.+}} trips 2 {
// CHECK-NOT: ncore.dma_copy
// CHECK: ncore.transpose %[[T0]], %{{.+}} : <psum, 128x128xf32>
// CHECK-NOT: ncore.dma_copy
// CHECK: ncore.transpose %[[T1]], %{{.+}} : <psum, 128x128xf32>
// CHECK-NOT: ncore.dma_copy
// CHECK: }
func.func private @prog_swap_last(%x: tensor<1x256x1024xf32>, %w: tensor<256x256xf32>) -> tensor<1x1024x256xf32> attributes {seam.program} {
  %t = seam.transpose %x perm [0, 2, 1] : tensor<1x256x1024xf32> -> tensor<1x1024x256xf32>
  %y = seam.linear %t, %w : (tensor<1x1024x256xf32>, tensor<256x256xf32>) -> tensor<1x1024x256xf32>
  return %y : tensor<1x1024x256xf32>
}
