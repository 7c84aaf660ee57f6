// RUN: seam-opt %s -split-input-file --convert-seam-to-ncore -verify-diagnostics

// convert-seam-to-ncore carries out the pairings seam-plan-pairings records
// (lowering/conversion/Pairing.h); a malformed or inconsistent one is an
// error naming the attribute, before anything is emitted.

func.func private @not_an_id(%x: tensor<256x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_host' must be an integer pair id, not "zero"}}
  %y = seam.linear %x, %w {seam.interleave_host = "zero"} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %y : tensor<256x256xbf16>
}

// -----

func.func private @no_guest(%x: tensor<256x256xbf16>, %w: tensor<256x256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_host' = 4 has no op with 'seam.interleave_guest' = 4}}
  %y = seam.linear %x, %w {seam.interleave_host = 4 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %y : tensor<256x256xbf16>
}

// -----

func.func private @no_consumer(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.row_producer' = 0 has no op with 'seam.row_consumer' = 0}}
  %h = seam.add %a, %a {seam.row_producer = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %h : tensor<256x256xbf16>
}

// -----

func.func private @twice(%vec: tensor<1x256xbf16>, %w: tensor<256x256xbf16>, %x: tensor<256x256xbf16>) -> (tensor<1x256xbf16>, tensor<1x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  %m = seam.linear %vec, %w {seam.interleave_guest = 0 : i64} : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  // expected-error @+1 {{convert-seam-to-ncore: pair id 0 of 'seam.interleave_guest' is also on the op at}}
  %m2 = seam.linear %vec, %w {seam.interleave_guest = 0 : i64} : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  %y = seam.linear %x, %w {seam.interleave_host = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %m, %m2, %y : tensor<1x256xbf16>, tensor<1x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @guest_after_host(%vec: tensor<1x256xbf16>, %w: tensor<256x256xbf16>, %x: tensor<256x256xbf16>) -> (tensor<1x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  %y = seam.linear %x, %w {seam.interleave_host = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_guest' = 0 must come before the op with 'seam.interleave_host'}}
  %m = seam.linear %vec, %w {seam.interleave_guest = 0 : i64} : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  return %m, %y : tensor<1x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @not_a_host(%a: tensor<1x256xbf16>, %vec: tensor<1x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<1x256xbf16>, tensor<1x256xbf16>) attributes {seam.program} {
  %m = seam.linear %vec, %w {seam.interleave_guest = 0 : i64} : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_host' = 0 on an op whose lowering takes no guest}}
  %s = seam.silu %a {seam.interleave_host = 0 : i64} : tensor<1x256xbf16>
  return %m, %s : tensor<1x256xbf16>, tensor<1x256xbf16>
}

// -----

func.func private @not_a_guest(%vec: tensor<1x256xbf16>, %w: tensor<256x256xbf16>, %b: tensor<256xbf16>, %x: tensor<256x256xbf16>) -> (tensor<1x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_guest' = 0 on an op that cannot be a guest}}
  %m = seam.linear %vec, %w, %b {seam.interleave_guest = 0 : i64} : (tensor<1x256xbf16>, tensor<256x256xbf16>, tensor<256xbf16>) -> tensor<1x256xbf16>
  %y = seam.linear %x, %w {seam.interleave_host = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %m, %y : tensor<1x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @guest_read_early(%vec: tensor<1x256xbf16>, %w: tensor<256x256xbf16>, %x: tensor<256x256xbf16>) -> (tensor<1x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_guest' = 0: its result is read before its host}}
  %m = seam.linear %vec, %w {seam.interleave_guest = 0 : i64} : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  %g = seam.gelu %m : tensor<1x256xbf16>
  %y = seam.linear %x, %w {seam.interleave_host = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %g, %y : tensor<1x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @materialized_guest(%vec: tensor<1x256xbf16>, %w: tensor<256x256xbf16>, %x: tensor<256x256xbf16>) -> (tensor<1x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_guest' = 0 on an op marked 'seam.materialize'}}
  %m = seam.linear %vec, %w {seam.interleave_guest = 0 : i64, seam.materialize} : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  %y = seam.linear %x, %w {seam.interleave_host = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %m, %y : tensor<1x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @not_a_row_producer(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.row_producer' = 0 on an op that cannot produce rows}}
  %s = seam.silu %a {seam.row_producer = 0 : i64} : tensor<256x256xbf16>
  %n = seam.layer_norm %s {epsilon = 1.0e-5 : f64, seam.row_consumer = 0 : i64} : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %n : tensor<256x256xbf16>
}

// -----

func.func private @not_a_row_consumer(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  %h = seam.add %a, %a {seam.row_producer = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.row_consumer' = 0 on an op that does not consume rows}}
  %s = seam.silu %h {seam.row_consumer = 0 : i64} : tensor<256x256xbf16>
  return %s : tensor<256x256xbf16>
}

// -----

func.func private @consumer_reads_other(%a: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  %h = seam.add %a, %a {seam.row_producer = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.row_consumer' = 0 does not read its producer's result as its first operand (only)}}
  %n = seam.layer_norm %a {epsilon = 1.0e-5 : f64, seam.row_consumer = 0 : i64} : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %h, %n : tensor<256x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @producer_read_early(%a: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.row_producer' = 0: its result is read before its consumer}}
  %h = seam.add %a, %a {seam.row_producer = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %s = seam.silu %h : tensor<256x256xbf16>
  %n = seam.layer_norm %h {epsilon = 1.0e-5 : f64, seam.row_consumer = 0 : i64} : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %s, %n : tensor<256x256xbf16>, tensor<256x256xbf16>
}

// -----

func.func private @no_fuse_rows(%a: tensor<256x256xbf16>) -> tensor<256x256xbf16> attributes {seam.program} {
  %h = seam.add %a, %a {seam.row_producer = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.row_consumer' = 0 pairs an op marked 'seam.no_fuse'}}
  %n = seam.layer_norm %h {epsilon = 1.0e-5 : f64, seam.no_fuse, seam.row_consumer = 0 : i64} : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %n : tensor<256x256xbf16>
}

// -----

func.func private @not_its_collective(%x: tensor<1x128x64xf32>, %w: tensor<64x256xf32>) -> (tensor<1x128x256xf32>, tensor<1x128x64xf32>) attributes {seam.program} {
  %p = seam.linear %x, %w {seam.column_producer = 0 : i64} : (tensor<1x128x64xf32>, tensor<64x256xf32>) -> tensor<1x128x256xf32>
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.column_consumer' = 0 must be an all_reduce of its producer's linear result, which nothing else reads}}
  %s = seam.all_reduce %x ranks 4 {seam.column_consumer = 0 : i64} : tensor<1x128x64xf32>
  return %p, %s : tensor<1x128x256xf32>, tensor<1x128x64xf32>
}

// -----

func.func private @two_roles(%a: tensor<256x256xbf16>, %x: tensor<256x256xbf16>, %w: tensor<256x256xbf16>) -> (tensor<256x256xbf16>, tensor<256x256xbf16>) attributes {seam.program} {
  // expected-error @+1 {{convert-seam-to-ncore: 'seam.interleave_guest' and 'seam.row_producer' on one op: it cannot be lowered in both pairs}}
  %h = seam.add %a, %a {seam.interleave_guest = 0 : i64, seam.row_producer = 1 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %n = seam.layer_norm %h {epsilon = 1.0e-5 : f64, seam.row_consumer = 1 : i64} : (tensor<256x256xbf16>) -> tensor<256x256xbf16>
  %y = seam.linear %x, %w {seam.interleave_host = 0 : i64} : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return %n, %y : tensor<256x256xbf16>, tensor<256x256xbf16>
}
