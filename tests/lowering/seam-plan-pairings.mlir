// RUN: seam-opt %s -split-input-file --seam-plan-pairings | FileCheck %s

// seam-plan-pairings records which ops convert-seam-to-ncore lowers together
// (lowering/conversion/Pairing.h): two integer attributes with one pair id,
// numbered in program order.

// Interleaving: the attention takes the linear %b (no bias, its weight a
// program argument, read only after the attention) as its guest. %a is
// nearer but read before the attention (by the add): not a guest.
// CHECK-LABEL: func.func private @attention_guest
// CHECK: %[[B:.+]] = seam.linear %arg0, %arg2 {seam.interleave_guest = 0 : i64} :
// CHECK: %[[A:.+]] = seam.linear %arg0, %arg1 : (
// CHECK: seam.add %[[A]], %[[A]] : (
// CHECK: seam.attention %arg3, %arg4, %arg5 {scale = {{.+}}, seam.interleave_host = 0 : i64} :
func.func private @attention_guest(%x: tensor<768x256xbf16>, %w1: tensor<256x256xbf16>, %w2: tensor<256x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %b = seam.linear %x, %w2 : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %a = seam.linear %x, %w1 : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %c = seam.add %a, %a : (tensor<768x256xbf16>, tensor<768x256xbf16>) -> tensor<768x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %b, %c, %o : tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>
}

// -----

// Near misses: a linear with a bias is no guest; one whose weight is
// computed in the program is no guest; an attention does not look past
// another attention (the second one's nearest earlier op is the first).
// CHECK-LABEL: func.func private @no_guest
// CHECK-NOT: seam.interleave
// CHECK: return
func.func private @no_guest(%x: tensor<768x256xbf16>, %w: tensor<256x256xbf16>, %bias: tensor<256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>) -> (tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) attributes {seam.program} {
  %ws = seam.add %w, %w : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %a = seam.linear %x, %ws : (tensor<768x256xbf16>, tensor<256x256xbf16>) -> tensor<768x256xbf16>
  %b = seam.linear %x, %w, %bias : (tensor<768x256xbf16>, tensor<256x256xbf16>, tensor<256xbf16>) -> tensor<768x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  %o2 = seam.attention %q, %k, %v {scale = 0.088388347648318433 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  return %a, %b, %o, %o2 : tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>
}

// -----

// A one-row linear (adaLN's modulation) just before a linear of many rows,
// views aside (the reshape of the host's input), is that linear's guest. A
// materialized one is not, nor one with another op between, nor one before
// a one-row linear, nor one read before the host (by the reshape).
// CHECK-LABEL: func.func private @matvec_guest
// CHECK: seam.linear %arg0, %arg1 {seam.interleave_guest = 0 : i64} : (tensor<1x512xbf16>
// CHECK: seam.reshape %arg2
// CHECK: seam.linear %{{.+}}, %arg3 {seam.interleave_host = 0 : i64} : (tensor<768x512xbf16>
// CHECK: seam.linear %arg0, %arg1 {seam.materialize} : (tensor<1x512xbf16>
// CHECK: seam.linear %arg2, %arg3 : (tensor<768x512xbf16>
// CHECK: seam.linear %arg0, %arg1 : (tensor<1x512xbf16>
// CHECK: seam.silu
// CHECK: seam.linear %arg2, %arg3 : (tensor<768x512xbf16>
// CHECK: seam.linear %arg0, %arg1 : (tensor<1x512xbf16>
// CHECK: seam.linear %arg0, %arg1 : (tensor<1x512xbf16>
// CHECK: seam.linear %arg0, %arg1 : (tensor<1x512xbf16>
// CHECK: seam.reshape
// CHECK: seam.linear %arg2, %arg3 : (tensor<768x512xbf16>
// CHECK: return
func.func private @matvec_guest(%vec: tensor<1x512xbf16>, %wm: tensor<512x1024xbf16>, %x: tensor<768x512xbf16>, %w: tensor<512x1024xbf16>) -> (tensor<1x1024xbf16>, tensor<768x1024xbf16>, tensor<1x1024xbf16>, tensor<768x1024xbf16>, tensor<1x1024xbf16>, tensor<768x512xbf16>, tensor<768x1024xbf16>, tensor<1x1024xbf16>, tensor<1x1024xbf16>, tensor<2x512xbf16>, tensor<768x1024xbf16>) attributes {seam.program} {
  %m = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %xr = seam.reshape %x : tensor<768x512xbf16> -> tensor<768x512xbf16>
  %o = seam.linear %xr, %w : (tensor<768x512xbf16>, tensor<512x1024xbf16>) -> tensor<768x1024xbf16>
  %m2 = seam.linear %vec, %wm {seam.materialize} : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %o2 = seam.linear %x, %w : (tensor<768x512xbf16>, tensor<512x1024xbf16>) -> tensor<768x1024xbf16>
  %m3 = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %s = seam.silu %x : tensor<768x512xbf16>
  %o3 = seam.linear %x, %w : (tensor<768x512xbf16>, tensor<512x1024xbf16>) -> tensor<768x1024xbf16>
  %m4 = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %m5 = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %m6 = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %mr = seam.reshape %m6 : tensor<1x1024xbf16> -> tensor<2x512xbf16>
  %o4 = seam.linear %x, %w : (tensor<768x512xbf16>, tensor<512x1024xbf16>) -> tensor<768x1024xbf16>
  return %m, %o, %m2, %o2, %m3, %s, %o3, %m4, %m5, %mr, %o4 : tensor<1x1024xbf16>, tensor<768x1024xbf16>, tensor<1x1024xbf16>, tensor<768x1024xbf16>, tensor<1x1024xbf16>, tensor<768x512xbf16>, tensor<768x1024xbf16>, tensor<1x1024xbf16>, tensor<1x1024xbf16>, tensor<2x512xbf16>, tensor<768x1024xbf16>
}

// -----

// Row production: the residual add whose first reader is the norm (reading
// it as its input) is produced in the norm's row loop; the other reader
// (the return) comes after. A multiply pairs too.
// CHECK-LABEL: func.func private @rows
// CHECK: seam.add %{{.+}}, %{{.+}} {seam.row_producer = 0 : i64}
// CHECK: seam.layer_norm %{{.+}} scale %arg2 {seam.row_consumer = 0 : i64}
// CHECK: seam.mul %{{.+}}, %{{.+}} {seam.row_producer = 1 : i64}
// CHECK: seam.rms_norm %{{.+}} {seam.row_consumer = 1 : i64}
func.func private @rows(%a: tensor<384x256xbf16>, %b: tensor<384x256xbf16>, %g: tensor<256xbf16>) -> (tensor<384x256xbf16>, tensor<384x256xbf16>, tensor<384x256xbf16>) attributes {seam.program} {
  %h = seam.add %a, %b : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %n = seam.layer_norm %h scale %g {epsilon = 1.0e-5 : f64} : (tensor<384x256xbf16>, tensor<256xbf16>) -> tensor<384x256xbf16>
  %p = seam.mul %n, %b : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %r = seam.rms_norm %p {epsilon = 1.0e-6 : f64} : (tensor<384x256xbf16>) -> tensor<384x256xbf16>
  return %h, %n, %r : tensor<384x256xbf16>, tensor<384x256xbf16>, tensor<384x256xbf16>
}

// -----

// Near misses: an add read first by another op (the silu); an add whose
// norm is marked seam.no_fuse; a silu (no row producer) before a norm; an
// add read by a norm that is not a row consumer's first reader of it.
// CHECK-LABEL: func.func private @no_rows
// CHECK-NOT: seam.row_
// CHECK: return
func.func private @no_rows(%a: tensor<384x256xbf16>, %b: tensor<384x256xbf16>) -> (tensor<384x256xbf16>, tensor<384x256xbf16>, tensor<384x256xbf16>, tensor<384x256xbf16>) attributes {seam.program} {
  %h = seam.add %a, %b : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %s = seam.silu %h : tensor<384x256xbf16>
  %n = seam.layer_norm %h {epsilon = 1.0e-5 : f64} : (tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %h2 = seam.add %a, %a : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %n2 = seam.layer_norm %h2 {epsilon = 1.0e-5 : f64, seam.no_fuse} : (tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %s3 = seam.silu %b : tensor<384x256xbf16>
  %n3 = seam.layer_norm %s3 {epsilon = 1.0e-5 : f64} : (tensor<384x256xbf16>) -> tensor<384x256xbf16>
  return %s, %n, %n2, %n3 : tensor<384x256xbf16>, tensor<384x256xbf16>, tensor<384x256xbf16>, tensor<384x256xbf16>
}

// -----

// Column consumption: the all_reduce of a linear's result that nothing
// else reads. A linear host (of a one-row guest) is a column producer too.
// CHECK-LABEL: func.func private @columns
// CHECK: seam.linear %arg0, %arg1 {seam.interleave_guest = 0 : i64}
// CHECK: %[[P:.+]] = seam.linear %arg2, %arg3 {seam.column_producer = 1 : i64, seam.interleave_host = 0 : i64}
// CHECK: seam.all_reduce %[[P]] ranks 4 {seam.column_consumer = 1 : i64}
func.func private @columns(%vec: tensor<1x512xbf16>, %wm: tensor<512x1024xbf16>, %x: tensor<1x768x512xbf16>, %w: tensor<512x1024xbf16>) -> (tensor<1x1024xbf16>, tensor<1x768x1024xbf16>) attributes {seam.program} {
  %m = seam.linear %vec, %wm : (tensor<1x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x1024xbf16>
  %p = seam.linear %x, %w : (tensor<1x768x512xbf16>, tensor<512x1024xbf16>) -> tensor<1x768x1024xbf16>
  %s = seam.all_reduce %p ranks 4 : tensor<1x768x1024xbf16>
  return %m, %s : tensor<1x1024xbf16>, tensor<1x768x1024xbf16>
}

// -----

// Near misses: a linear result read by the all_reduce and the gelu; an
// all_reduce marked seam.no_fuse; an all_reduce of a program argument.
// CHECK-LABEL: func.func private @no_columns
// CHECK-NOT: seam.column_
// CHECK: return
func.func private @no_columns(%x: tensor<1x128x64xf32>, %w: tensor<64x256xf32>) -> (tensor<1x128x256xf32>, tensor<1x128x256xf32>, tensor<1x128x256xf32>, tensor<1x128x64xf32>) attributes {seam.program} {
  %p = seam.linear %x, %w : (tensor<1x128x64xf32>, tensor<64x256xf32>) -> tensor<1x128x256xf32>
  %s = seam.all_reduce %p ranks 4 : tensor<1x128x256xf32>
  %g = seam.gelu %p : tensor<1x128x256xf32>
  %p2 = seam.linear %x, %w : (tensor<1x128x64xf32>, tensor<64x256xf32>) -> tensor<1x128x256xf32>
  %s2 = seam.all_reduce %p2 ranks 4 {seam.no_fuse} : tensor<1x128x256xf32>
  %s3 = seam.all_reduce %x ranks 4 : tensor<1x128x64xf32>
  return %s, %g, %s2, %s3 : tensor<1x128x256xf32>, tensor<1x128x256xf32>, tensor<1x128x256xf32>, tensor<1x128x64xf32>
}

// -----

// Pairings recorded before are replaced (the stale row pair on the silu and
// the norm is gone), and a func that is no program is left alone.
// CHECK-LABEL: func.func private @replanned
// CHECK: seam.silu
// CHECK-NOT: seam.row_
// CHECK: seam.add %{{.+}}, %{{.+}} {seam.row_producer = 0 : i64}
// CHECK: seam.layer_norm %{{.+}} {seam.row_consumer = 0 : i64}
// CHECK-LABEL: func.func @not_a_program
// CHECK: seam.silu %{{.+}} {seam.row_producer = 5 : i64}
func.func private @replanned(%a: tensor<384x256xbf16>) -> (tensor<384x256xbf16>, tensor<384x256xbf16>) attributes {seam.program} {
  %s = seam.silu %a {seam.row_producer = 3 : i64} : tensor<384x256xbf16>
  %h = seam.add %s, %a : (tensor<384x256xbf16>, tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %n = seam.layer_norm %h {epsilon = 1.0e-5 : f64, seam.row_consumer = 3 : i64} : (tensor<384x256xbf16>) -> tensor<384x256xbf16>
  return %h, %n : tensor<384x256xbf16>, tensor<384x256xbf16>
}
func.func @not_a_program(%a: tensor<384x256xbf16>) -> tensor<384x256xbf16> {
  %s = seam.silu %a {seam.row_producer = 5 : i64} : tensor<384x256xbf16>
  return %s : tensor<384x256xbf16>
}
