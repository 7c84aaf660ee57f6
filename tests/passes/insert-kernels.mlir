// RUN: seam-opt %s -split-input-file -seam-insert-kernels="kernels=rope,flash-attn,fft,fourier-mix,fftconv" -verify-diagnostics | FileCheck %s
// RUN: not seam-opt %s -split-input-file -seam-insert-kernels="kernels=warp-speed" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// UNKNOWN: error: seam-insert-kernels: unknown kernel 'warp-speed'; registered kernels: qkv, rope, flash-attn, flash-attn-stable, fft, ifft, fourier-mix, fftconv

// A requested kernel that replaces nothing in a function gets a warning:
// here each function holds the sites of some of the five kernels only.

// The published RoPE constraints: head_dim in {64, 128}, seq <= 512,
// heads per rank <= 16. 512 is the boundary and fits.
// CHECK-LABEL: func.func @rope_sites
// CHECK: seam.kernel_call "rope"(%arg0, %{{.+}}, %{{.+}}) : (tensor<1x6x256x128xbf16>
// CHECK: seam.kernel_call "rope"(%arg1, %{{.+}}, %{{.+}}) : (tensor<1x6x512x128xbf16>
// CHECK: seam.rope %arg2
// CHECK: seam.rope %arg3
// CHECK: seam.rope %arg4
// expected-warning @+4 {{seam-insert-kernels: kernel 'flash-attn' matches no site in @rope_sites (no seam.attention it applies to)}}
// expected-warning @+3 {{seam-insert-kernels: kernel 'fft' matches no site in @rope_sites (no seam.fft it applies to)}}
// expected-warning @+2 {{seam-insert-kernels: kernel 'fourier-mix' matches no site in @rope_sites (no seam.fourier_mix it applies to)}}
// expected-warning @+1 {{seam-insert-kernels: kernel 'fftconv' matches no site in @rope_sites (no seam.fftconv it applies to)}}
func.func @rope_sites(%img: tensor<1x6x256x128xbf16>, %txt: tensor<1x6x512x128xbf16>, %joint: tensor<1x6x768x128xbf16>, %wide: tensor<1x24x256x128xbf16>, %d96: tensor<1x6x256x96xbf16>) {
  %c256 = seam.param "c256" init rope_cos(1.0e+04) seed 0 : tensor<256x128xbf16>
  %s256 = seam.param "s256" init rope_sin(1.0e+04) seed 0 : tensor<256x128xbf16>
  %c512 = seam.param "c512" init rope_cos(1.0e+04) seed 0 : tensor<512x128xbf16>
  %s512 = seam.param "s512" init rope_sin(1.0e+04) seed 0 : tensor<512x128xbf16>
  %c768 = seam.param "c768" init rope_cos(1.0e+04) seed 0 : tensor<768x128xbf16>
  %s768 = seam.param "s768" init rope_sin(1.0e+04) seed 0 : tensor<768x128xbf16>
  %c96 = seam.param "c96" init rope_cos(1.0e+04) seed 0 : tensor<256x96xbf16>
  %s96 = seam.param "s96" init rope_sin(1.0e+04) seed 0 : tensor<256x96xbf16>
  // expected-remark @+1 {{seam-insert-kernels: kernel 'rope' inserted: head_dim 128 in {64, 128}, seq 256 <= 512, heads per rank 6 <= 16}}
  %a = seam.rope %img, %c256, %s256 : (tensor<1x6x256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>) -> tensor<1x6x256x128xbf16>
  // expected-remark @+1 {{kernel 'rope' inserted: head_dim 128 in {64, 128}, seq 512 <= 512}}
  %b = seam.rope %txt, %c512, %s512 : (tensor<1x6x512x128xbf16>, tensor<512x128xbf16>, tensor<512x128xbf16>) -> tensor<1x6x512x128xbf16>
  // expected-remark @+1 {{seam-insert-kernels: kernel 'rope' not inserted: seq 768 > 512}}
  %c = seam.rope %joint, %c768, %s768 : (tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x6x768x128xbf16>
  // expected-remark @+1 {{kernel 'rope' not inserted: heads per rank 24 > 16}}
  %d = seam.rope %wide, %c256, %s256 : (tensor<1x24x256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>) -> tensor<1x24x256x128xbf16>
  // expected-remark @+1 {{kernel 'rope' not inserted: head_dim 96 not in {64, 128}}}
  %e = seam.rope %d96, %c96, %s96 : (tensor<1x6x256x96xbf16>, tensor<256x96xbf16>, tensor<256x96xbf16>) -> tensor<1x6x256x96xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @attention_sites
// CHECK: seam.kernel_call "flash-attn"(%arg0, %arg0, %arg0) {config = {scale = 1.250000e-01 : f64}}
// CHECK: seam.attention %arg1
// CHECK: seam.attention %arg0, %arg0, %arg0 rope
// expected-warning @+4 {{seam-insert-kernels: kernel 'rope' matches no site in @attention_sites (no seam.rope it applies to)}}
// expected-warning @+3 {{seam-insert-kernels: kernel 'fft' matches no site in @attention_sites (no seam.fft it applies to)}}
// expected-warning @+2 {{seam-insert-kernels: kernel 'fourier-mix' matches no site in @attention_sites (no seam.fourier_mix it applies to)}}
// expected-warning @+1 {{seam-insert-kernels: kernel 'fftconv' matches no site in @attention_sites (no seam.fftconv it applies to)}}
func.func @attention_sites(%q: tensor<1x2x256x64xf32>, %odd: tensor<1x2x200x64xf32>) {
  // expected-remark @+1 {{kernel 'flash-attn' inserted: 2 heads, seq 256 (multiple of 128), head_dim 64}}
  %o = seam.attention %q, %q, %q {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  // expected-remark @+1 {{kernel 'flash-attn' not inserted: q seq 200 is not a multiple of BLOCK_Q = 128}}
  %p = seam.attention %odd, %odd, %odd {scale = 0.125 : f64} : (tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>, tensor<1x2x200x64xf32>) -> tensor<1x2x200x64xf32>
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<256x64xf32>
  // expected-remark @+1 {{kernel 'flash-attn' not inserted: attention has a fused rope; the kernel has none}}
  %r = seam.attention %q, %q, %q rope(%c, %c) {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x2x256x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @fourier_sites
// CHECK: seam.kernel_call "fourier-mix"(%arg0) {config = {dims = array<i64: 1, 2>}}
// CHECK: seam.kernel_call "fft"(%arg1) {config = {axis = 1 : i64}}
// CHECK: seam.fft %arg2
// CHECK: seam.kernel_call "fftconv"
// expected-warning @+2 {{seam-insert-kernels: kernel 'rope' matches no site in @fourier_sites (no seam.rope it applies to)}}
// expected-warning @+1 {{seam-insert-kernels: kernel 'flash-attn' matches no site in @fourier_sites (no seam.attention it applies to)}}
func.func @fourier_sites(%x: tensor<1x512x768xf32>, %c: tensor<4x768xcomplex<f32>>, %p: tensor<4x131xcomplex<f32>>, %u: tensor<1x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<8xf32>) {
  // expected-remark @+1 {{kernel 'fourier-mix' inserted: Re(DFT) of [1, 512, 768] as C X C - S X S matmuls}}
  %m = seam.fourier_mix %x dims [1, 2] : tensor<1x512x768xf32>
  // expected-remark @+1 {{kernel 'fft' inserted: 768-point DFT as 2 TE matmul stage(s)}}
  %f = seam.fft %c axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xcomplex<f32>>
  // expected-remark @+1 {{kernel 'fft' not inserted: size 131 does not factor into at most three DFTs of <= 128 points}}
  %g = seam.fft %p axis 1 : tensor<4x131xcomplex<f32>> -> tensor<4x131xcomplex<f32>>
  // expected-remark @+1 {{kernel 'fftconv' inserted: L = 1000, fft_size 2048}}
  %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64} : (tensor<1x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>) -> tensor<1x8x1000xf32>
  return
}

// -----

// A site the check accepts must build: the fourier-mix kernel is FNet's
// mixing over (sequence, hidden), so a mix over the sequence alone stays on
// the compiler's path (a host fallback) with the reason. The fft kernels
// serve any axis (a middle axis through in-kernel transposes) and the FNet
// source's radix-2 variant with its padding.

// CHECK-LABEL: func.func @check_is_build
// CHECK: seam.fourier_mix %arg0 dims [1]
// CHECK: seam.kernel_call "fft"(%arg1) {config = {axis = 1 : i64}}
// CHECK: seam.kernel_call "fft"(%arg2) {config = {axis = 2 : i64, pad_to = 1024 : i64, variant = "radix2"}}
// CHECK: seam.fft %arg2 axis 2 {pad_to = 2048 : i64, variant = "radix2"}
// CHECK: seam.kernel_call "fft"(%arg3) {config = {axis = 0 : i64}}
// expected-warning @+4 {{seam-insert-kernels: kernel 'rope' matches no site in @check_is_build (no seam.rope it applies to)}}
// expected-warning @+3 {{seam-insert-kernels: kernel 'flash-attn' matches no site in @check_is_build (no seam.attention it applies to)}}
// expected-warning @+2 {{seam-insert-kernels: kernel 'fourier-mix' inserted at none of its 1 site(s) in @check_is_build (the kernel is FNet's mixing of [B, S, D] over dims [1, 2] (sequence and hidden), not dims [1] of a rank-3 tensor at 1 site(s))}}
// expected-warning @+1 {{seam-insert-kernels: kernel 'fftconv' matches no site in @check_is_build (no seam.fftconv it applies to)}}
func.func @check_is_build(%x: tensor<1x16384x4xf32>, %s: tensor<2x1000x3xf32>, %h: tensor<1x128x768xf32>, %c: tensor<12288x2xcomplex<f32>>) {
  // expected-remark @+1 {{kernel 'fourier-mix' not inserted: the kernel is FNet's mixing of [B, S, D] over dims [1, 2] (sequence and hidden), not dims [1] of a rank-3 tensor}}
  %m = seam.fourier_mix %x dims [1] : tensor<1x16384x4xf32>
  // expected-remark @+1 {{kernel 'fft' inserted: 1000-point DFT as 2 TE matmul stage(s)}}
  %f = seam.fft %s axis 1 : tensor<2x1000x3xf32> -> tensor<2x1000x3xcomplex<f32>>
  // expected-remark @+1 {{kernel 'fft' inserted: 768 points zero-padded to 1024, radix-2 (the FNet source's; not the 768-point DFT)}}
  %p = seam.fft %h axis 2 {pad_to = 1024 : i64, variant = "radix2"} : tensor<1x128x768xf32> -> tensor<1x128x768xcomplex<f32>>
  // expected-remark @+1 {{kernel 'fft' not inserted: the radix-2 variant is the source's 128-point DFT groups and radix-2 butterflies: 128, 256, 512 or 1024 points, not 2048}}
  %q = seam.fft %h axis 2 {pad_to = 2048 : i64, variant = "radix2"} : tensor<1x128x768xf32> -> tensor<1x128x768xcomplex<f32>>
  // expected-remark @+1 {{kernel 'fft' inserted: 12288-point DFT as 2 TE matmul stage(s)}}
  %i = seam.fft %c axis 0 : tensor<12288x2xcomplex<f32>> -> tensor<12288x2xcomplex<f32>>
  return
}
