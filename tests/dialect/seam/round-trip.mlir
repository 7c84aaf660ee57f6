// RUN: seam-opt %s | seam-opt | FileCheck %s
// RUN: seam-opt %s --mlir-print-op-generic | seam-opt | FileCheck %s

// CHECK-LABEL: func.func @dense
func.func @dense(%x: tensor<1x128x768xf32>) -> tensor<1x128x3072xf32> {
  // CHECK: %[[W:.+]] = seam.param "w" init normal(2.000000e-02) seed 17 : tensor<768x3072xf32>
  %w = seam.param "w" init normal(2.0e-02) seed 17 : tensor<768x3072xf32>
  // CHECK: %[[B:.+]] = seam.param "b" init zeros(0.000000e+00) seed 0 : tensor<3072xf32>
  %b = seam.param "b" init zeros(0.0) seed 0 : tensor<3072xf32>
  // CHECK: %[[Y:.+]] = seam.linear %{{.+}}, %[[W]], %[[B]] : (tensor<1x128x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<1x128x3072xf32>
  %y = seam.linear %x, %w, %b : (tensor<1x128x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<1x128x3072xf32>
  // CHECK: seam.linear %[[Y]], %{{.+}} : (tensor<1x128x3072xf32>, tensor<3072x3072xf32>) -> tensor<1x128x3072xf32>
  %w2 = seam.param "w2" init uniform(1.0e-01) seed 3 : tensor<3072x3072xf32>
  %z = seam.linear %y, %w2 : (tensor<1x128x3072xf32>, tensor<3072x3072xf32>) -> tensor<1x128x3072xf32>
  // CHECK: seam.gelu %{{.+}} : tensor<1x128x3072xf32>
  %g = seam.gelu %z : tensor<1x128x3072xf32>
  // CHECK: seam.linear %{{.+}}, %{{.+}} {activation = "gelu_tanh"} : (tensor<1x128x3072xf32>, tensor<3072x3072xf32>) -> tensor<1x128x3072xf32>
  %a = seam.linear %g, %w2 {activation = "gelu_tanh"} : (tensor<1x128x3072xf32>, tensor<3072x3072xf32>) -> tensor<1x128x3072xf32>
  // A column scale (a row of N), with a bias and an activation.
  // CHECK: seam.linear %{{.+}}, %{{.+}}, %[[B]] scale %{{.+}} {activation = "silu"} : (tensor<1x128x3072xf32>, tensor<3072x3072xf32>, tensor<3072xf32>, tensor<1x1x3072xf32>) -> tensor<1x128x3072xf32>
  %row = seam.param "row" init ones(1.0) seed 0 : tensor<1x1x3072xf32>
  %sc = seam.linear %g, %w2, %b scale %row {activation = "silu"} : (tensor<1x128x3072xf32>, tensor<3072x3072xf32>, tensor<3072xf32>, tensor<1x1x3072xf32>) -> tensor<1x128x3072xf32>
  // CHECK: seam.gelu_tanh
  %g2 = seam.gelu_tanh %g : tensor<1x128x3072xf32>
  // CHECK: seam.silu
  %g3 = seam.silu %g2 : tensor<1x128x3072xf32>
  return %g3 : tensor<1x128x3072xf32>
}

// CHECK-LABEL: func.func @norms_and_broadcast
func.func @norms_and_broadcast(%x: tensor<1x256x64xbf16>, %m: tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16> {
  %g = seam.param "g" init ones(1.0) seed 0 : tensor<64xbf16>
  %b = seam.param "beta" init zeros(0.0) seed 0 : tensor<64xbf16>
  // CHECK: seam.layer_norm %{{.+}} scale %{{.+}} bias %{{.+}} {epsilon = 9.9999999999999998E-13 : f64}
  %n = seam.layer_norm %x scale %g bias %b {epsilon = 1.0e-12 : f64} : (tensor<1x256x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  // CHECK: seam.layer_norm %{{.+}} : (tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  %n2 = seam.layer_norm %n : (tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  // adaLN's n * (1 + s) + h folded into the norm; scale_offset prints only
  // when it is not 0.
  // CHECK: seam.layer_norm %{{.+}} scale %{{.+}} bias %{{.+}} {scale_offset = 1.000000e+00 : f64}
  %n3 = seam.layer_norm %n2 scale %g bias %b {scale_offset = 1.0 : f64} : (tensor<1x256x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  // CHECK: seam.rms_norm %{{.+}} scale %{{.+}}
  %r = seam.rms_norm %n3 scale %g : (tensor<1x256x64xbf16>, tensor<64xbf16>) -> tensor<1x256x64xbf16>
  // CHECK: seam.mul %{{.+}}, %{{.+}} : (tensor<1x256x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16>
  %s = seam.mul %r, %m : (tensor<1x256x64xbf16>, tensor<1x1x64xbf16>) -> tensor<1x256x64xbf16>
  // CHECK: seam.add
  %a = seam.add %s, %x : (tensor<1x256x64xbf16>, tensor<1x256x64xbf16>) -> tensor<1x256x64xbf16>
  return %a : tensor<1x256x64xbf16>
}

// CHECK-LABEL: func.func @attention
func.func @attention(%x: tensor<1x256x768xbf16>, %t: tensor<1x512x768xbf16>) -> tensor<1x768x768xbf16> {
  // CHECK: seam.concat %{{.+}}, %{{.+}} dim 1 : (tensor<1x512x768xbf16>, tensor<1x256x768xbf16>) -> tensor<1x768x768xbf16>
  %s = seam.concat %t, %x dim 1 : (tensor<1x512x768xbf16>, tensor<1x256x768xbf16>) -> tensor<1x768x768xbf16>
  // CHECK: seam.reshape %{{.+}} : tensor<1x768x768xbf16> -> tensor<1x768x6x128xbf16>
  %h = seam.reshape %s : tensor<1x768x768xbf16> -> tensor<1x768x6x128xbf16>
  // CHECK: seam.transpose %{{.+}} perm [0, 2, 1, 3] : tensor<1x768x6x128xbf16> -> tensor<1x6x768x128xbf16>
  %q = seam.transpose %h perm [0, 2, 1, 3] : tensor<1x768x6x128xbf16> -> tensor<1x6x768x128xbf16>
  %cos = seam.param "cos" init rope_cos(1.0e+04) seed 0 : tensor<768x128xbf16>
  %sin = seam.param "sin" init rope_sin(1.0e+04) seed 0 : tensor<768x128xbf16>
  // CHECK: seam.rope %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x6x768x128xbf16>
  %qr = seam.rope %q, %cos, %sin : (tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x6x768x128xbf16>
  // CHECK: seam.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 0.0883{{[0-9]+}} : f64}
  %o = seam.attention %qr, %qr, %q {scale = 0.08838834764831845 : f64, causal} : (tensor<1x6x768x128xbf16>, tensor<1x6x768x128xbf16>, tensor<1x6x768x128xbf16>) -> tensor<1x6x768x128xbf16>
  // CHECK: seam.attention %{{.+}}, %{{.+}}, %{{.+}} rope(%{{.+}}, %{{.+}}) {scale
  %o2 = seam.attention %o, %q, %q rope(%cos, %sin) {scale = 0.08838834764831845 : f64} : (tensor<1x6x768x128xbf16>, tensor<1x6x768x128xbf16>, tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x6x768x128xbf16>
  %t2 = seam.transpose %o2 perm [0, 2, 1, 3] : tensor<1x6x768x128xbf16> -> tensor<1x768x6x128xbf16>
  %f = seam.reshape %t2 : tensor<1x768x6x128xbf16> -> tensor<1x768x768xbf16>
  // CHECK: seam.slice %{{.+}} offsets [0, 512, 0] : tensor<1x768x768xbf16> -> tensor<1x256x768xbf16>
  %img = seam.slice %f offsets [0, 512, 0] : tensor<1x768x768xbf16> -> tensor<1x256x768xbf16>
  // CHECK: seam.all_reduce %{{.+}} ranks 4 : tensor<1x256x768xbf16>
  %ar = seam.all_reduce %img ranks 4 : tensor<1x256x768xbf16>
  // CHECK: seam.all_gather %{{.+}} dim 2 ranks 4 : tensor<1x256x768xbf16> -> tensor<1x256x3072xbf16>
  %ag = seam.all_gather %ar dim 2 ranks 4 : tensor<1x256x768xbf16> -> tensor<1x256x3072xbf16>
  return %f : tensor<1x768x768xbf16>
}

// CHECK-LABEL: func.func @fourier
func.func @fourier(%x: tensor<1x512x768xf32>, %c: tensor<4x768xcomplex<f32>>) -> tensor<4x768xf32> {
  // CHECK: seam.fourier_mix %{{.+}} dims [1, 2] : tensor<1x512x768xf32>
  %m = seam.fourier_mix %x dims [1, 2] : tensor<1x512x768xf32>
  // CHECK: seam.fft %{{.+}} axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xcomplex<f32>>
  %f = seam.fft %c axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xcomplex<f32>>
  // CHECK: seam.ifft %{{.+}} axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xf32>
  %r = seam.ifft %f axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xf32>
  return %r : tensor<4x768xf32>
}

// CHECK-LABEL: func.func @fftconv
func.func @fftconv(%u: tensor<2x8x1000xf32>, %k: tensor<8x1000xf32>, %d: tensor<8xf32>, %m: tensor<2x8xf32>) -> tensor<2x8x1000xf32> {
  // CHECK: seam.fftconv %{{.+}}, %{{.+}}, %{{.+}} {fft_size = 2048 : i64, gelu} : (tensor<2x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>) -> tensor<2x8x1000xf32>
  %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64, gelu} : (tensor<2x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>) -> tensor<2x8x1000xf32>
  // CHECK: seam.fftconv %{{.+}}, %{{.+}}, %{{.+}} v %{{.+}} q %{{.+}} dropout %{{.+}} {fft_size = 2048 : i64, gelu_inp, gelu_q, head_dim = 2 : i64}
  %y2 = seam.fftconv %y, %k, %d v %u q %u dropout %m {fft_size = 2048 : i64, head_dim = 2 : i64, gelu_inp, gelu_q} : (tensor<2x8x1000xf32>, tensor<8x1000xf32>, tensor<8xf32>, tensor<2x8x1000xf32>, tensor<2x8x1000xf32>, tensor<2x8xf32>) -> tensor<2x8x1000xf32>
  return %y2 : tensor<2x8x1000xf32>
}

// CHECK-LABEL: func.func @structure
func.func @structure(%x: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  // CHECK: %[[B:.+]] = seam.block "fnet" 0 -> tensor<1x128x768xf32> {
  // CHECK:   seam.fourier_mix
  // CHECK:   seam.yield %{{.+}} : tensor<1x128x768xf32>
  %y = seam.block "fnet" 0 -> tensor<1x128x768xf32> {
    %m = seam.fourier_mix %x dims [1, 2] : tensor<1x128x768xf32>
    seam.yield %m : tensor<1x128x768xf32>
  }
  // CHECK: seam.fusion "step" attributes {launches = 1 : i64} -> tensor<1x128x768xf32> {
  %z = seam.fusion "step" attributes {launches = 1 : i64} -> tensor<1x128x768xf32> {
    // CHECK: seam.kernel_call "fourier-mix"(%[[B]]) {config = {dims = array<i64: 1, 2>}} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
    %k = seam.kernel_call "fourier-mix"(%y) {config = {dims = array<i64: 1, 2>}} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
    seam.yield %k : tensor<1x128x768xf32>
  }
  return %z : tensor<1x128x768xf32>
}
