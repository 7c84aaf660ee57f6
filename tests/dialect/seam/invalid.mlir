// RUN: seam-opt %s -split-input-file -verify-diagnostics

func.func @linear_k(%x: tensor<1x128x768xf32>, %w: tensor<1024x3072xf32>) {
  // expected-error @+1 {{input's last dimension K = 768 does not match weight rows: input [1, 128, 768] x f32, weight [1024, 3072] x f32}}
  %y = seam.linear %x, %w : (tensor<1x128x768xf32>, tensor<1024x3072xf32>) -> tensor<1x128x3072xf32>
  return
}

// -----

func.func @linear_activation(%x: tensor<1x128x768xf32>, %w: tensor<768x64xf32>) {
  // expected-error @+1 {{activation must be gelu, gelu_tanh or silu, got 'relu'}}
  %y = seam.linear %x, %w {activation = "relu"} : (tensor<1x128x768xf32>, tensor<768x64xf32>) -> tensor<1x128x64xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<1x128x768xf32>, %w: tensor<768xf32>) {
  // expected-error @+1 {{weight must be [K, N], got [768] x f32}}
  %y = seam.linear %x, %w : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<1x128x768xf32>, %w: tensor<768x64xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{bias must be [64], got [32]}}
  %y = seam.linear %x, %w, %b : (tensor<1x128x768xf32>, tensor<768x64xf32>, tensor<32xf32>) -> tensor<1x128x64xf32>
  return
}

// -----

func.func @linear_scale(%x: tensor<1x128x768xf32>, %w: tensor<768x64xf32>, %s: tensor<2x64xf32>) {
  // expected-error @+1 {{scale must be a row of N = 64 elements (all dims but the last of size 1), got [2, 64] x f32}}
  %y = seam.linear %x, %w scale %s : (tensor<1x128x768xf32>, tensor<768x64xf32>, tensor<2x64xf32>) -> tensor<1x128x64xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<1x128x768xf32>, %w: tensor<768x64xf32>) {
  // expected-error @+1 {{result must be [1, 128, 64], got [1, 128, 32]}}
  %y = seam.linear %x, %w : (tensor<1x128x768xf32>, tensor<768x64xf32>) -> tensor<1x128x32xf32>
  return
}

// -----

func.func @linear_dtype(%x: tensor<1x128x768xf32>, %w: tensor<768x64xbf16>) {
  // expected-error @+1 {{element types differ: 'f32' vs 'bf16'}}
  %y = seam.linear %x, %w : (tensor<1x128x768xf32>, tensor<768x64xbf16>) -> tensor<1x128x64xf32>
  return
}

// -----

func.func @bad_element_type(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or bfloat16 type values}}
  %y = seam.gelu %x : tensor<4xi32>
  return
}

// -----

func.func @param_rope(%x: tensor<4xf32>) {
  // expected-error @+1 {{rope table must be [S, D] with D even, got [16, 7] x f32}}
  %c = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<16x7xf32>
  return
}

// -----

func.func @param_scale() {
  // expected-error @+1 {{init scale must be >= 0, got -1}}
  %c = seam.param "w" init normal(-1.0) seed 0 : tensor<16x8xf32>
  return
}

// -----

func.func @param_empty_name() {
  // expected-error @+1 {{parameter name must not be empty}}
  %c = seam.param "" init zeros(0.0) seed 0 : tensor<16x8xf32>
  return
}

// -----

func.func @huge() {
  // expected-error @+1 {{result [1099511627776] x f32 has more than 2^36 elements: too large for any device}}
  %c = seam.param "w" init zeros(0.0) seed 0 : tensor<1099511627776xf32>
  return
}

// -----

func.func @norm_scale(%x: tensor<1x8x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{scale must be [64], got [32]}}
  %y = seam.layer_norm %x scale %g : (tensor<1x8x64xf32>, tensor<32xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @norm_offset_without_scale(%x: tensor<1x8x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{scale_offset 1.000000e+00 needs a scale}}
  %y = seam.layer_norm %x bias %b {scale_offset = 1.0 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @norm_offset_nan(%x: tensor<1x8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{scale_offset must be finite, got nan}}
  %y = seam.layer_norm %x scale %g {scale_offset = 0x7FF8000000000000 : f64} : (tensor<1x8x64xf32>, tensor<64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @norm_eps(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{epsilon must be > 0, got 0}}
  %y = seam.rms_norm %x {epsilon = 0.0 : f64} : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @norm_result(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{result [1, 8, 32] x f32 must equal input [1, 8, 64] x f32}}
  %y = seam.layer_norm %x : (tensor<1x8x64xf32>) -> tensor<1x8x32xf32>
  return
}

// -----

func.func @broadcast(%x: tensor<1x8x64xf32>, %y: tensor<1x3x64xf32>) {
  // expected-error @+1 {{operands do not broadcast: [1, 8, 64] x f32 and [1, 3, 64] x f32}}
  %z = seam.add %x, %y : (tensor<1x8x64xf32>, tensor<1x3x64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @broadcast_result(%x: tensor<1x8x64xf32>, %y: tensor<1x1x64xf32>) {
  // expected-error @+1 {{result (the broadcast shape) must be [1, 8, 64], got [1, 1, 64]}}
  %z = seam.mul %x, %y : (tensor<1x8x64xf32>, tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{element count changes: [1, 8, 64] x f32 has 512, [8, 8] x f32 has 64}}
  %z = seam.reshape %x : tensor<1x8x64xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{perm [0, 0, 1] is not a permutation of 0..2}}
  %z = seam.transpose %x perm [0, 0, 1] : tensor<1x8x64xf32> -> tensor<1x1x8xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{result must be [1, 64, 8], got [1, 8, 64]}}
  %z = seam.transpose %x perm [0, 2, 1] : tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  return
}

// -----

func.func @concat_dims(%x: tensor<1x8x64xf32>, %y: tensor<1x8x32xf32>) {
  // expected-error @+1 {{inputs differ outside dim 1: [1, 8, 64] x f32 and [1, 8, 32] x f32}}
  %z = seam.concat %x, %y dim 1 : (tensor<1x8x64xf32>, tensor<1x8x32xf32>) -> tensor<1x16x64xf32>
  return
}

// -----

func.func @concat_dim_range(%x: tensor<1x8x64xf32>) {
  // expected-error @+1 {{dim 3 out of range for rank 3}}
  %z = seam.concat %x dim 3 : (tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<1x768x64xf32>) {
  // expected-error @+1 {{slice of [1, 512, 64] at offsets [0, 512, 0] exceeds input [1, 768, 64] x f32 in dim 1}}
  %z = seam.slice %x offsets [0, 512, 0] : tensor<1x768x64xf32> -> tensor<1x512x64xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<6x256x128xf32>, %c: tensor<256x128xf32>) {
  // expected-error @+1 {{input must be [B, H, S, D], got [6, 256, 128] x f32}}
  %z = seam.rope %x, %c, %c : (tensor<6x256x128xf32>, tensor<256x128xf32>, tensor<256x128xf32>) -> tensor<6x256x128xf32>
  return
}

// -----

func.func @rope_table(%x: tensor<1x6x256x128xf32>, %c: tensor<512x128xf32>) {
  // expected-error @+1 {{rope cos table [S, D] must be [256, 128], got [512, 128]}}
  %z = seam.rope %x, %c, %c : (tensor<1x6x256x128xf32>, tensor<512x128xf32>, tensor<512x128xf32>) -> tensor<1x6x256x128xf32>
  return
}

// -----

func.func @rope_odd(%x: tensor<1x6x256x7xf32>, %c: tensor<256x7xf32>) {
  // expected-error @+1 {{rope needs an even head_dim, got 7}}
  %z = seam.rope %x, %c, %c : (tensor<1x6x256x7xf32>, tensor<256x7xf32>, tensor<256x7xf32>) -> tensor<1x6x256x7xf32>
  return
}

// -----

func.func @attn_heads(%q: tensor<1x6x256x128xf32>, %k: tensor<1x4x256x128xf32>) {
  // expected-error @+1 {{q heads 6 are not a multiple of k/v heads 4}}
  %o = seam.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x4x256x128xf32>, tensor<1x4x256x128xf32>) -> tensor<1x6x256x128xf32>
  return
}

// -----

func.func @attn_kv_heads(%q: tensor<1x6x256x128xf32>, %k: tensor<1x6x256x128xf32>, %v: tensor<1x3x256x128xf32>) {
  // expected-error @+1 {{k and v head counts differ: k [1, 6, 256, 128] x f32, v [1, 3, 256, 128] x f32}}
  %o = seam.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<1x3x256x128xf32>) -> tensor<1x6x256x128xf32>
  return
}

// -----

func.func @attn_head_dim(%q: tensor<1x6x256x128xf32>, %k: tensor<1x6x256x64xf32>) {
  // expected-error @+1 {{q and k head_dim differ: q [1, 6, 256, 128] x f32, k [1, 6, 256, 64] x f32}}
  %o = seam.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x6x256x64xf32>, tensor<1x6x256x64xf32>) -> tensor<1x6x256x64xf32>
  return
}

// -----

func.func @attn_seq(%q: tensor<1x6x256x128xf32>, %k: tensor<1x6x256x128xf32>, %v: tensor<1x6x128x128xf32>) {
  // expected-error @+1 {{k and v sequence lengths differ}}
  %o = seam.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<1x6x128x128xf32>) -> tensor<1x6x256x128xf32>
  return
}

// -----

func.func @attn_batch(%q: tensor<2x6x256x128xf32>, %k: tensor<1x6x256x128xf32>) {
  // expected-error @+1 {{batch sizes differ}}
  %o = seam.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<2x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>) -> tensor<2x6x256x128xf32>
  return
}

// -----

func.func @attn_scale(%q: tensor<1x6x256x128xf32>) {
  // expected-error @+1 {{scale must be > 0, got 0}}
  %o = seam.attention %q, %q, %q {scale = 0.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>) -> tensor<1x6x256x128xf32>
  return
}

// -----

func.func @attn_rope_table(%q: tensor<1x6x256x128xf32>, %c: tensor<256x64xf32>) {
  // expected-error @+1 {{rope cos table [S, D] must be [256, 128], got [256, 64]}}
  %o = seam.attention %q, %q, %q rope(%c, %c) {scale = 1.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<1x6x256x128xf32>
  return
}

// -----

func.func @attn_result(%q: tensor<1x6x256x128xf32>) {
  // expected-error @+1 {{result [B, H, Sq, Dv] must be [1, 6, 256, 128], got [1, 6, 128, 128]}}
  %o = seam.attention %q, %q, %q {scale = 1.0 : f64} : (tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>, tensor<1x6x256x128xf32>) -> tensor<1x6x128x128xf32>
  return
}

// -----

func.func @fourier_dims(%x: tensor<1x128x768xf32>) {
  // expected-error @+1 {{dim 3 out of range for [1, 128, 768] x f32}}
  %m = seam.fourier_mix %x dims [1, 3] : tensor<1x128x768xf32>
  return
}

// -----

func.func @fourier_dup(%x: tensor<1x128x768xf32>) {
  // expected-error @+1 {{dim 1 listed twice in [1, 1]}}
  %m = seam.fourier_mix %x dims [1, 1] : tensor<1x128x768xf32>
  return
}

// -----

func.func @fourier_empty(%x: tensor<1x128x768xf32>) {
  // expected-error @+1 {{dims must list at least one dimension}}
  %m = seam.fourier_mix %x dims [] : tensor<1x128x768xf32>
  return
}

// -----

func.func @fft_axis(%x: tensor<4x768xcomplex<f32>>) {
  // expected-error @+1 {{axis 2 out of range for [4, 768] x complex<f32>}}
  %f = seam.fft %x axis 2 : tensor<4x768xcomplex<f32>> -> tensor<4x768xcomplex<f32>>
  return
}

// -----

func.func @fft_shape(%x: tensor<4x768xcomplex<f32>>) {
  // expected-error @+1 {{result [4, 384] x complex<f32> must have the input's shape [4, 768]}}
  %f = seam.ifft %x axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x384xcomplex<f32>>
  return
}

// -----

func.func @fftconv_pow2(%u: tensor<1x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{fft_size 3000 must be a power of two in [16, 16384]}}
  %y = seam.fftconv %u, %k, %d {fft_size = 3000 : i64} : (tensor<1x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>) -> tensor<1x8x1000xf32>
  return
}

// -----

func.func @fftconv_range(%u: tensor<1x8x8xf32>, %k: tensor<8x8xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{fft_size 8 must be a power of two in [16, 16384]}}
  %y = seam.fftconv %u, %k, %d {fft_size = 8 : i64} : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x8x8xf32>
  return
}

// -----

func.func @fftconv_seq(%u: tensor<1x8x1100xf32>, %k: tensor<8x1100xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{seq_len L = 1100 exceeds fft_size / 2 = 1024 (the circular convolution would wrap)}}
  %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64} : (tensor<1x8x1100xf32>, tensor<8x1100xf32>, tensor<8xf32>) -> tensor<1x8x1100xf32>
  return
}

// -----

func.func @fftconv_filter(%u: tensor<1x8x1000xf32>, %k: tensor<4x1000xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{filter k must be [H = 8, Lk <= 1000], got [4, 1000] x f32}}
  %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64} : (tensor<1x8x1000xf32>, tensor<4x1000xf32>, tensor<8xf32>) -> tensor<1x8x1000xf32>
  return
}

// -----

func.func @fftconv_d(%u: tensor<1x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<4xf32>) {
  // expected-error @+1 {{D must be [8], got [4]}}
  %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64} : (tensor<1x8x1000xf32>, tensor<8x1000xf32>, tensor<4xf32>) -> tensor<1x8x1000xf32>
  return
}

// -----

func.func @fftconv_head_dim(%u: tensor<1x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{head_dim 3 must be >= 1 and divide H = 8}}
  %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64, head_dim = 3 : i64} : (tensor<1x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>) -> tensor<1x8x1000xf32>
  return
}

// -----

func.func @fftconv_mask(%u: tensor<2x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<8xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{dropout mask must be [2, 8], got [8]}}
  %y = seam.fftconv %u, %k, %d dropout %m {fft_size = 2048 : i64} : (tensor<2x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1000xf32>
  return
}

// -----

func.func @all_gather(%x: tensor<1x256x768xf32>) {
  // expected-error @+1 {{result must be [1, 256, 3072], got [1, 256, 768]}}
  %g = seam.all_gather %x dim 2 ranks 4 : tensor<1x256x768xf32> -> tensor<1x256x768xf32>
  return
}

// -----

func.func @all_reduce(%x: tensor<1x256x768xf32>) {
  // expected-error @+1 {{ranks must be >= 1, got 0}}
  %g = seam.all_reduce %x ranks 0 : tensor<1x256x768xf32>
  return
}

// -----

func.func @kernel_name(%x: tensor<1x256x768xf32>) {
  // expected-error @+1 {{kernel name must not be empty}}
  %g = seam.kernel_call ""(%x) : (tensor<1x256x768xf32>) -> tensor<1x256x768xf32>
  return
}

// -----

func.func @block_yield(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{yields 1 values whose types do not match the 1 results}}
  %y = seam.block "fnet" 0 -> tensor<1x4xf32> {
    seam.yield %x : tensor<1x8xf32>
  }
  return
}

// -----

func.func @block_index(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{block index must be >= 0, got -1}}
  %y = seam.block "fnet" -1 -> tensor<1x8xf32> {
    seam.yield %x : tensor<1x8xf32>
  }
  return
}

// -----

func.func @yield_parent(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{expects parent op to be one of 'seam.block, seam.fusion'}}
  seam.yield %x : tensor<1x8xf32>
}

// -----

func.func @dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{operand [?, 8] x f32 must have a static shape}}
  %y = seam.gelu %x : tensor<?x8xf32>
  return
}
