// RUN: seam-opt %s -split-input-file -seam-overlap-independent -verify-diagnostics | FileCheck %s
// RUN: seam-opt %s -split-input-file -seam-overlap-independent="remarks=false" -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// (Counters add up over all inputs: the reshape of the second moves too.)

// Two blocks of adaLN: the second block's modulation (silu(vec) @ W, one
// row, only arguments) moves behind the first block's layer_norm, before
// the first block's linear; the token work stays where it was.
// CHECK-LABEL: func.func @two_blocks
// CHECK: %[[M1:.+]] = seam.linear %{{.+}}, %arg2
// CHECK: %[[N1:.+]] = seam.layer_norm %arg0
// CHECK-NEXT: %[[S2:.+]] = seam.silu %arg1
// CHECK-NEXT: %[[M2:.+]] = seam.linear %[[S2]], %arg3
// CHECK-NEXT: %[[R2:.+]] = seam.reshape %[[M2]]
// CHECK-NEXT: %[[Y1:.+]] = seam.linear %[[N1]], %arg4
// CHECK: seam.layer_norm %{{.+}} scale %[[R2]]
// STATS: seam-overlap-independent
// STATS: 2 attentions-hosting
// STATS: 1 linears-hosting
// STATS: 16 moved
// STATS: 2 norms-overlapped
func.func @two_blocks(%x: tensor<1x256x64xbf16>, %vec: tensor<1x64xbf16>, %wm1: tensor<64x64xbf16>, %wm2: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<1x256x64xbf16> {
  %s1 = seam.silu %vec : tensor<1x64xbf16>
  %m1 = seam.linear %s1, %wm1 : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %r1 = seam.reshape %m1 : tensor<1x64xbf16> -> tensor<64xbf16>
  %n1 = seam.layer_norm %x scale %r1 : (tensor<1x256x64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  %y1 = seam.linear %n1, %w : (tensor<1x256x64xbf16>, tensor<64x64xbf16>) -> tensor<1x256x64xbf16>
  %h = seam.add %x, %y1 : (tensor<1x256x64xbf16>, tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  // expected-remark @+1 {{seam-overlap-independent: seam.silu moved behind the layer_norm at}}
  %s2 = seam.silu %vec : tensor<1x64xbf16>
  // expected-remark @+1 {{seam.linear moved behind the layer_norm}}
  %m2 = seam.linear %s2, %wm2 : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %r2 = seam.reshape %m2 : tensor<1x64xbf16> -> tensor<64xbf16>
  %n2 = seam.layer_norm %h scale %r2 : (tensor<1x256x64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  return %n2 : tensor<1x256x64xbf16>
}

// -----

// Nothing moves but a view: work on every token (more than one row) stays
// even when it reads only arguments, and a chain already ahead of the norm
// stays there. The reshape, used after the norm, moves behind it (a view:
// no remark).
// CHECK-LABEL: func.func @stays
// CHECK: seam.silu %arg1
// CHECK-NEXT: seam.linear
// CHECK-NEXT: seam.layer_norm %arg0
// CHECK-NEXT: seam.reshape
// CHECK-NEXT: seam.gelu %arg0
// CHECK-NEXT: seam.add
func.func @stays(%x: tensor<1x256x64xbf16>, %vec: tensor<1x64xbf16>, %wm: tensor<64x64xbf16>) -> (tensor<1x256x64xbf16>, tensor<1x256x64xbf16>) {
  %s = seam.silu %vec : tensor<1x64xbf16>
  %m = seam.linear %s, %wm : (tensor<1x64xbf16>, tensor<64x64xbf16>) -> tensor<1x64xbf16>
  %n = seam.layer_norm %x : (tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  %g = seam.gelu %x : tensor<1x256x64xbf16>
  %r = seam.reshape %m : tensor<1x64xbf16> -> tensor<1x1x64xbf16>
  %a = seam.add %n, %r : (tensor<1x256x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16>
  return %a, %g : tensor<1x256x64xbf16>, tensor<1x256x64xbf16>
}

// -----

// A double-stream block in small: the next block's two modulations. The
// first goes before the attention (free: no linear of the tokens between it
// and the previous attention is read only after it), to run inside the
// attention's pipeline; the attention takes one, so the second goes before
// the last linear of >= 512 rows before its first use, to stream with that
// linear's slabs. Their all_gathers go just before their first use (after
// the host block's all_reduce), not right after the matvec.
// CHECK-LABEL: func.func @hosts
// CHECK: %[[M1:.+]] = seam.linear %{{.+}}, %arg5
// CHECK-NEXT: seam.attention
// CHECK-NEXT: %[[M2:.+]] = seam.linear %{{.+}}, %arg6
// CHECK-NEXT: %[[Y:.+]] = seam.linear %{{.+}}, %arg7
// CHECK-NEXT: seam.all_reduce %[[Y]]
// CHECK-NEXT: %[[G1:.+]] = seam.all_gather %[[M1]]
// CHECK-NEXT: %[[G2:.+]] = seam.all_gather %[[M2]]
// CHECK-NEXT: seam.slice %[[G1]]
// CHECK: seam.layer_norm
func.func @hosts(%x: tensor<1x768x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>, %vec: tensor<1x256xbf16>, %wa: tensor<256x512xbf16>, %wb: tensor<256x512xbf16>, %w: tensor<256x256xbf16>) -> (tensor<1x768x256xbf16>, tensor<1x2x768x128xbf16>) {
  %s = seam.silu %vec : tensor<1x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  %y = seam.linear %x, %w : (tensor<1x768x256xbf16>, tensor<256x256xbf16>) -> tensor<1x768x256xbf16>
  %r = seam.all_reduce %y ranks 2 : tensor<1x768x256xbf16>
  // expected-remark @+1 {{seam-overlap-independent: seam.linear moved before the attention at}}
  %m1 = seam.linear %s, %wa : (tensor<1x256xbf16>, tensor<256x512xbf16>) -> tensor<1x512xbf16>
  %g1 = seam.all_gather %m1 dim 1 ranks 2 : tensor<1x512xbf16> -> tensor<1x1024xbf16>
  // expected-remark @+1 {{seam-overlap-independent: seam.linear moved before the linear at}}
  %m2 = seam.linear %s, %wb : (tensor<1x256xbf16>, tensor<256x512xbf16>) -> tensor<1x512xbf16>
  %g2 = seam.all_gather %m2 dim 1 ranks 2 : tensor<1x512xbf16> -> tensor<1x1024xbf16>
  %sc = seam.slice %g1 offsets [0, 0] : tensor<1x1024xbf16> -> tensor<1x256xbf16>
  %sh = seam.slice %g2 offsets [0, 0] : tensor<1x1024xbf16> -> tensor<1x256xbf16>
  %scr = seam.reshape %sc : tensor<1x256xbf16> -> tensor<256xbf16>
  %shr = seam.reshape %sh : tensor<1x256xbf16> -> tensor<256xbf16>
  %n = seam.layer_norm %r scale %scr bias %shr : (tensor<1x768x256xbf16>, tensor<256xbf16>, tensor<256xbf16>) -> tensor<1x768x256xbf16>
  return %n, %o : tensor<1x768x256xbf16>, tensor<1x2x768x128xbf16>
}

// -----

// Two streams: the next block's modulation feeds a norm of the first
// stream, which depends on that stream's all_reduce and not on the second
// stream's later one. The matvec runs inside the attention; its all_gather
// goes just after the all_reduce the norm depends on, not behind the second
// stream's (the collective engine is in order), and its views stay at the
// norm.
// CHECK-LABEL: func.func @gather_after_its_reduce
// CHECK: %[[M:.+]] = seam.linear %{{.+}}, %arg6
// CHECK-NEXT: seam.attention
// CHECK-NEXT: seam.linear %arg0
// CHECK-NEXT: %[[R1:.+]] = seam.all_reduce
// CHECK-NEXT: %[[G:.+]] = seam.all_gather %[[M]]
// CHECK-NEXT: seam.linear %arg1
// CHECK-NEXT: %[[R2:.+]] = seam.all_reduce
// CHECK-NEXT: seam.slice %[[G]]
// CHECK-NEXT: seam.reshape
// CHECK-NEXT: seam.layer_norm %[[R1]]
func.func @gather_after_its_reduce(%x: tensor<1x768x256xbf16>, %x2: tensor<1x768x256xbf16>, %q: tensor<1x2x768x128xbf16>, %k: tensor<1x2x768x128xbf16>, %v: tensor<1x2x768x128xbf16>, %vec: tensor<1x256xbf16>, %wa: tensor<256x512xbf16>, %w: tensor<256x256xbf16>, %w2: tensor<256x256xbf16>) -> (tensor<1x768x256xbf16>, tensor<1x768x256xbf16>, tensor<1x2x768x128xbf16>) {
  %s = seam.silu %vec : tensor<1x256xbf16>
  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>, tensor<1x2x768x128xbf16>) -> tensor<1x2x768x128xbf16>
  %y = seam.linear %x, %w : (tensor<1x768x256xbf16>, tensor<256x256xbf16>) -> tensor<1x768x256xbf16>
  %r = seam.all_reduce %y ranks 2 : tensor<1x768x256xbf16>
  %y2 = seam.linear %x2, %w2 : (tensor<1x768x256xbf16>, tensor<256x256xbf16>) -> tensor<1x768x256xbf16>
  %r2 = seam.all_reduce %y2 ranks 2 : tensor<1x768x256xbf16>
  // expected-remark @+1 {{seam-overlap-independent: seam.linear moved before the attention at}}
  %m = seam.linear %s, %wa : (tensor<1x256xbf16>, tensor<256x512xbf16>) -> tensor<1x512xbf16>
  %g = seam.all_gather %m dim 1 ranks 2 : tensor<1x512xbf16> -> tensor<1x1024xbf16>
  %sc = seam.slice %g offsets [0, 0] : tensor<1x1024xbf16> -> tensor<1x256xbf16>
  %scr = seam.reshape %sc : tensor<1x256xbf16> -> tensor<256xbf16>
  %n = seam.layer_norm %r scale %scr : (tensor<1x768x256xbf16>, tensor<256xbf16>) -> tensor<1x768x256xbf16>
  return %n, %r2, %o : tensor<1x768x256xbf16>, tensor<1x768x256xbf16>, tensor<1x2x768x128xbf16>
}
