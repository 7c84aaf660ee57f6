// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s

// layer_norm with scale and bias over 300 rows (2 full tiles and one of
// 44): two-pass statistics in fp32, rsqrt(s / D + eps) in one activation,
// gamma/beta broadcast once, after the first tile's statistics (which do
// not need them). The row tiles are software pipelined over two sets of
// working tiles: the statistics of tile i + 1 are issued before the
// scaling of tile i (with 3 tiles, no loop is left). The program's input,
// read by the norm, is loaded whole before anything else (a loop over the
// two full row tiles, then the partial one).

// CHECK-LABEL: ncore.program @prog_ln
// CHECK-SAME: {ncore.role = "param"}
// CHECK-SAME: {ncore.role = "param"}
// CHECK: %[[XS:.+]] = ncore.alloc : <sbuf, 128x288xf32>
// CHECK-NEXT: ncore.loop %{{.+}} trips 2 {
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x96xf32>, <hbm, 128x96xf32>
// CHECK: }
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 44x96xf32>, <hbm, 44x96xf32>
// CHECK-NOT: ncore.loop
// Statistics of tile 0 (set 0).
// CHECK: ncore.tensor_reduce add %[[S1:.+]], %[[X:.+]] : <sbuf, 128x1xf32>, <sbuf, 128x96xf32>
// CHECK: ncore.tensor_scalar multiply %[[S1]], %[[S1]] imm -0.010416
// The sum of squares centres x inside the activation (bias -mean); the
// centred row comes after the statistics.
// CHECK: ncore.activation square %{{.+}}, %[[X]] bias %[[S1]] reduce %[[S2:[^ ]+]] :
// CHECK: ncore.activation rsqrt %[[R:.+]], %[[S2]] {bias = 9.99999974E-6 : f32, scale = 0.010416
// CHECK: ncore.activation identity %[[C:.+]], %[[X]] bias %[[S1]]
// gamma and beta broadcast (a ones column times the row on the TE).
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x96xf32>, <sbuf, 1x128xf32>, <sbuf, 1x96xf32>
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 128x96xf32>, <sbuf, 1x128xf32>, <sbuf, 1x96xf32>
// Statistics of tile 1 (set 1) ...
// CHECK: ncore.tensor_reduce add %{{.+}}, %{{.+}} : <sbuf, 128x1xf32>, <sbuf, 128x96xf32>
// CHECK: ncore.activation rsqrt %[[R1:[^ ]+]], %{{.+}} {bias
// CHECK: ncore.activation identity %[[C1:.+]], %{{.+}} bias
// ... then the scaling of tile 0: (c * rstd) * gamma in one pass, + beta.
// CHECK: ncore.scalar_tensor_tensor multiply %[[C]], %[[C]], %{{.+}}, %[[R]] :
// CHECK: ncore.tensor_tensor add
// CHECK: ncore.dma_copy
// Statistics of the last tile (44 rows), the scaling of tiles 1 and 2.
// CHECK: ncore.tensor_reduce add %{{.+}}, %{{.+}} : <sbuf, 44x1xf32>, <sbuf, 44x96xf32>
// CHECK: ncore.scalar_tensor_tensor multiply %[[C1]], %[[C1]], %{{.+}}, %[[R1]] :
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}} : !ncore.tile<sbuf, 44x96xf32>
// CHECK-NOT: ncore.loop
func.func private @prog_ln(%x: tensor<3x100x96xf32>, %g: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<3x100x96xf32> attributes {seam.program} {
  %y = seam.layer_norm %x scale %g bias %b : (tensor<3x100x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<3x100x96xf32>
  return %y : tensor<3x100x96xf32>
}
func.func @forward(%x: tensor<3x100x96xf32>) -> tensor<3x100x96xf32> {
  %g = seam.param "g" init normal(1.0) seed 1 : tensor<96xf32>
  %b = seam.param "b" init normal(1.0) seed 2 : tensor<96xf32>
  %y = call @prog_ln(%x, %g, %b) : (tensor<3x100x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<3x100x96xf32>
  return %y : tensor<3x100x96xf32>
}

// -----

// rms_norm per head (rows = b * h * s = 12 row tiles), software pipelined
// over three sets (tile i + 2's statistics before tile i's scaling; three
// whole tiles or more). The Scalar engine squares and sums the tiles of
// sets 0 and 2 (activation square with an add-reduce), the vector engines
// those of set 1 (a product and an add-reduce), so the statistics run on
// both.

// CHECK-LABEL: ncore.program @prog_rms
// Statistics of tiles 0 and 1.
// CHECK: ncore.activation square %{{.+}}, %[[X0:[^ ]+]] reduce %[[S0:[^ ]+]] :
// CHECK: ncore.activation rsqrt %[[R0:[^ ]+]], %[[S0]] {bias = 9.99999997E-7 : f32, scale = 7.812500e-03 : f32}
// CHECK: ncore.tensor_tensor multiply %[[Q:[^ ]+]], %[[X1:[^ ]+]], %[[X1]] :
// CHECK-NEXT: ncore.tensor_reduce add %[[S1:[^ ]+]], %[[Q]] :
// CHECK-NEXT: ncore.activation rsqrt %[[R1:[^ ]+]], %[[S1]]
// Steps t = 0 .. 8, three per iteration: statistics of t + 2, scaling of t.
// CHECK: ncore.loop %{{.+}} trips 3 {
// CHECK: ncore.activation square %{{.+}}, %[[X2:[^ ]+]] reduce %[[S2:[^ ]+]] :
// CHECK-NEXT: ncore.activation rsqrt %[[R2:[^ ]+]], %[[S2]]
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %[[X0]], %{{.+}}, %[[R0]] : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x1xf32>
// CHECK: ncore.activation square %{{.+}}, %[[X0]] reduce %[[S0]] :
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %[[X1]], %{{.+}}, %[[R1]] :
// CHECK: ncore.tensor_tensor multiply %{{.+}}, %[[X1]], %[[X1]] :
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %[[X2]], %{{.+}}, %[[R2]] :
// CHECK: }
// Step 9, then the scaling of tiles 10 and 11.
// CHECK: ncore.activation square %{{.+}}, %[[X2]] reduce %[[S2]] :
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %[[X0]], %{{.+}}, %[[R0]] :
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %[[X1]], %{{.+}}, %[[R1]] :
// CHECK: ncore.scalar_tensor_tensor multiply %{{.+}}, %[[X2]], %{{.+}}, %[[R2]] :
// CHECK-NOT: ncore.activation square
func.func private @prog_rms(%x: tensor<1x6x256x128xbf16>, %g: tensor<128xbf16>) -> tensor<1x6x256x128xbf16> attributes {seam.program} {
  %y = seam.rms_norm %x scale %g : (tensor<1x6x256x128xbf16>, tensor<128xbf16>) -> tensor<1x6x256x128xbf16>
  return %y : tensor<1x6x256x128xbf16>
}

// -----

// A bf16 layer_norm (adaLN's, with scale_offset): the statistics stay fp32,
// the centred row and gamma + 1 are bf16 like the output, so both affine
// passes stream bf16 (one element per cycle).
// CHECK-LABEL: ncore.program @prog_ln_bf16
// CHECK: ncore.activation square %{{.+}}, %[[X:[^ ]+]] bias %[[M:[^ ]+]] reduce %{{.+}} : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
// CHECK: ncore.activation identity %{{.+}}, %[[X]] bias %[[M]] : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x1xf32>
// CHECK: ncore.tensor_scalar add %[[G:[^ ]+]], %[[G]] imm 1.000000e+00 : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>
// CHECK: ncore.scalar_tensor_tensor multiply {{.+}} : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x1xf32>
// CHECK: ncore.tensor_tensor add {{.+}} : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x256xbf16>
func.func private @prog_ln_bf16(%x: tensor<256x256xbf16>, %s: tensor<256xbf16>, %h: tensor<256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  %y = seam.layer_norm %x scale %s bias %h {epsilon = 1.0e-6 : f64, scale_offset = 1.0 : f64} : (tensor<256x256xbf16>, tensor<256xbf16>, tensor<256xbf16>) -> tensor<256x256xbf16>
  return %y : tensor<256x256xbf16>
}

// -----

// A norm read only by a streamed linear builds the linear's X^T itself,
// each row tile transposed (K = 192 = 96 x 2, two PSUM tiles) right after
// it is normalised; the linear then transposes nothing. gamma goes where
// the features are on partitions: one DMA puts it in the K split ([96, 2],
// feature p * 2 + j at partition p, column j), and each block's evacuation
// multiplies by its column. The row pass is (x - mean) * rstd, one
// two-operation tensor_scalar.
// CHECK-LABEL: ncore.program @prog_norm_xt
// CHECK: ncore.dma_copy %[[G:.+]], %{{.+}} : <sbuf, 96x2xf32>, <hbm, 1x192xf32>
// CHECK-NOT: scalar_tensor_tensor
// CHECK: ncore.tensor_scalar add %[[N:.+]], %{{.+}}, %{{.+}} then multiply with %{{.+}} :
// CHECK-NEXT: ncore.view %[[N]] offsets #{{.+}} strides [1, 2]
// CHECK-NEXT: ncore.transpose %[[P:.+]], %{{.+}} : <psum, 96x128xf32>, <sbuf, 128x96xf32>
// CHECK-NEXT: ncore.view
// CHECK-NEXT: %[[GC:.+]] = ncore.view %[[G]]
// CHECK-NEXT: ncore.tensor_scalar multiply %{{.+}}, %[[P]], %[[GC]] : !ncore.tile<sbuf, 96x128xf32>, !ncore.tile<psum, 96x128xf32>, !ncore.tile<sbuf, 96x1xf32>
// CHECK-NOT: scalar_tensor_tensor
// CHECK: ncore.matmul
// CHECK-NOT: ncore.transpose
// CHECK: }
func.func private @prog_norm_xt(%x: tensor<300x192xf32>, %g: tensor<192xf32>, %w: tensor<192x128xf32>) -> tensor<300x128xf32> attributes {seam.program} {
  %n = seam.layer_norm %x scale %g {epsilon = 1.0e-5 : f64} : (tensor<300x192xf32>, tensor<192xf32>) -> tensor<300x192xf32>
  %y = seam.linear %n, %w : (tensor<300x192xf32>, tensor<192x128xf32>) -> tensor<300x128xf32>
  return %y : tensor<300x128xf32>
}

// -----

// A linear that does not read the norm comes first (adaLN's modulation,
// placed there by seam-overlap-independent): the Tensor engine does it
// during the norm, and the norm's reader transposes its input itself.
// CHECK-LABEL: ncore.program @prog_norm_no_xt
// CHECK-NOT: ncore.transpose
// CHECK: ncore.scalar_tensor_tensor multiply
// CHECK-NOT: ncore.transpose
// CHECK: ncore.matmul %{{.+}}, %{{.+}}, %{{.+}} : <psum, 1x64xf32>
// CHECK: ncore.transpose
func.func private @prog_norm_no_xt(%x: tensor<300x192xf32>, %g: tensor<192xf32>, %w: tensor<192x128xf32>, %m: tensor<1x192xf32>, %wm: tensor<192x64xf32>) -> (tensor<300x128xf32>, tensor<1x64xf32>) attributes {seam.program} {
  %n = seam.layer_norm %x scale %g {epsilon = 1.0e-5 : f64} : (tensor<300x192xf32>, tensor<192xf32>) -> tensor<300x192xf32>
  %v = seam.linear %m, %wm : (tensor<1x192xf32>, tensor<192x64xf32>) -> tensor<1x64xf32>
  %y = seam.linear %n, %w : (tensor<300x192xf32>, tensor<192x128xf32>) -> tensor<300x128xf32>
  return %y, %v : tensor<300x128xf32>, tensor<1x64xf32>
}

// -----

// A residual add whose first reader is the norm is emitted row tile by row
// tile in the norm's loop (RowProducer): the first tile's statistics wait
// for one tile of the sum, not all of it; the second tile's add comes
// before the first tile's scaling (the norm's software pipeline). The sum
// is a result too (stored as it is made).
// CHECK-LABEL: ncore.program @prog_add_norm
// CHECK: ncore.tensor_tensor add
// CHECK-NOT: ncore.tensor_tensor
// CHECK: ncore.tensor_reduce add
// CHECK: ncore.tensor_tensor add
// CHECK: ncore.tensor_reduce add
// CHECK: ncore.scalar_tensor_tensor multiply
func.func private @prog_add_norm(%a: tensor<384x256xbf16>, %b: tensor<384x256xbf16>, %g: tensor<256xbf16>) -> (tensor<384x256xbf16>, tensor<384x256xbf16>) attributes {seam.program} {
  %h = seam.add %a, %b : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %n = seam.layer_norm %h scale %g {epsilon = 1.0e-5 : f64} : (tensor<384x256xbf16>, tensor<256xbf16>) -> tensor<384x256xbf16>
  return %h, %n : tensor<384x256xbf16>, tensor<384x256xbf16>
}

// -----

// Read by another op before the norm, the add is lowered whole, in place.
// CHECK-LABEL: ncore.program @prog_add_read_first
// CHECK: ncore.tensor_tensor add
// CHECK: ncore.tensor_tensor add
// CHECK: ncore.tensor_tensor add
// CHECK: ncore.tensor_reduce add
func.func private @prog_add_read_first(%a: tensor<384x256xbf16>, %b: tensor<384x256xbf16>) -> (tensor<384x256xbf16>, tensor<384x256xbf16>) attributes {seam.program} {
  %h = seam.add %a, %b : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %s = seam.silu %h : tensor<384x256xbf16>
  %n = seam.layer_norm %h {epsilon = 1.0e-5 : f64} : (tensor<384x256xbf16>) -> tensor<384x256xbf16>
  return %s, %n : tensor<384x256xbf16>, tensor<384x256xbf16>
}
