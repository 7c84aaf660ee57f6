// RUN: seam-opt %s -split-input-file -verify-diagnostics

// Absurd sizes in IR get a clear error at verification, before any pass or
// allocation sizes anything from them (seam: 2^36 elements per tensor; ncore:
// 2^36 elements per tile). A 2^40-element tensor is 4 TiB of f32.

func.func @seam_operand(%a: tensor<1099511627776xf32>, %b: tensor<1099511627776xf32>) -> tensor<1099511627776xf32> {
  // expected-error @+1 {{operand [1099511627776] x f32 has more than 2^36 elements: too large for any device}}
  %c = seam.add %a, %b : (tensor<1099511627776xf32>, tensor<1099511627776xf32>) -> tensor<1099511627776xf32>
  return %c : tensor<1099511627776xf32>
}

// -----

func.func @seam_overflowing_shape() {
  // expected-error @+1 {{result [4294967296, 4294967296, 4294967296] x f32 has more than 2^36 elements: too large for any device}}
  %c = seam.param "w" init zeros(0.0) seed 0 : tensor<4294967296x4294967296x4294967296xf32>
  return
}

// -----

ncore.program @hbm_tile() {
  // expected-error @+1 {{hbm tile [1048576, 1048576] has more than 2^36 elements: too large for any device}}
  %t = ncore.alloc : !ncore.tile<hbm, 1048576x1048576xf32>
}

// -----

ncore.program @sbuf_tile() {
  // expected-error @+1 {{sbuf tile [128, 8589934592] has more than 2^36 elements: too large for any device}}
  %t = ncore.alloc : !ncore.tile<sbuf, 128x8589934592xf32>
}

// -----

ncore.program @psum_overflow() {
  // The free-size product would overflow int64 (and pass the bank check).
  // expected-error @+1 {{psum tile [128, 4294967296, 4294967296, 4294967296] has more than 2^36 elements: too large for any device}}
  %t = ncore.alloc : !ncore.tile<psum, 128x4294967296x4294967296x4294967296xf32>
}
