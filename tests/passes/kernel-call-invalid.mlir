// RUN: seam-opt %s -split-input-file -verify-diagnostics

// The kernel registry checks every seam.kernel_call: a call whose published
// constraints do not hold is invalid IR, whoever wrote it.

func.func @unknown(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{unknown kernel 'nope'; registered kernels: qkv, rope, flash-attn, flash-attn-stable, fft, ifft, fourier-mix, fftconv}}
  %y = seam.kernel_call "nope"(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return
}

// -----

func.func @rope_seq(%x: tensor<1x6x768x128xbf16>, %c: tensor<768x128xbf16>) {
  // expected-error @+1 {{kernel 'rope' constraint violated: seq 768 > 512}}
  %y = seam.kernel_call "rope"(%x, %c, %c) : (tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x6x768x128xbf16>
  return
}

// -----

func.func @arity(%x: tensor<1x6x256x128xbf16>) {
  // expected-error @+1 {{kernel 'rope' constraint violated: takes 3 operands, got 1}}
  %y = seam.kernel_call "rope"(%x) : (tensor<1x6x256x128xbf16>) -> tensor<1x6x256x128xbf16>
  return
}

// -----

func.func @fftconv_size(%u: tensor<1x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{kernel 'fftconv' constraint violated: fft_size 1000 is not a power of two in [16, 16384]}}
  %y = seam.kernel_call "fftconv"(%u, %k, %d) {config = {fft_size = 1000 : i64}} : (tensor<1x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>) -> tensor<1x8x1000xf32>
  return
}

// -----

func.func @qkv_k(%x: tensor<1x8x100xf32>, %w: tensor<100x300xf32>) {
  // expected-error @+1 {{kernel 'qkv' constraint violated: contraction dim K = 100 is not a multiple of 128 partitions}}
  %y = seam.kernel_call "qkv"(%x, %w) : (tensor<1x8x100xf32>, tensor<100x300xf32>) -> tensor<1x8x300xf32>
  return
}

// -----

// A kernel call with a callee (the compiler's body behind the boundary,
// seam-run --explain-kernels) names a func tagged seam.boundary_body of the
// call's own type.
func.func private @untagged(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  return %x : tensor<1x8xf32>
}
func.func @callee_untagged(%x: tensor<1x128x4096xbf16>, %w: tensor<4096x1536xbf16>) {
  // expected-error @+1 {{callee @untagged is not a func.func with a body tagged seam.boundary_body}}
  %y = seam.kernel_call "qkv"(%x, %w) {callee = @untagged} : (tensor<1x128x4096xbf16>, tensor<4096x1536xbf16>) -> tensor<1x128x1536xbf16>
  return
}

// -----

func.func private @body(%x: tensor<1x8xf32>) -> tensor<1x8xf32> attributes {seam.boundary_body, seam.program} {
  return %x : tensor<1x8xf32>
}
func.func @callee_type(%x: tensor<1x128x4096xbf16>, %w: tensor<4096x1536xbf16>) {
  // expected-error @+1 {{callee @body has type '(tensor<1x8xf32>) -> tensor<1x8xf32>', not the call's}}
  %y = seam.kernel_call "qkv"(%x, %w) {callee = @body} : (tensor<1x128x4096xbf16>, tensor<4096x1536xbf16>) -> tensor<1x128x1536xbf16>
  return
}

// -----

func.func @callee_missing(%x: tensor<1x128x4096xbf16>, %w: tensor<4096x1536xbf16>) {
  // expected-error @+1 {{callee @nowhere is not a func.func}}
  %y = seam.kernel_call "qkv"(%x, %w) {callee = @nowhere} : (tensor<1x128x4096xbf16>, tensor<4096x1536xbf16>) -> tensor<1x128x1536xbf16>
  return
}
