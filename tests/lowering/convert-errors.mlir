// RUN: seam-opt %s -split-input-file --seam-plan-pairings --convert-seam-to-ncore -verify-diagnostics

// Shapes the lowering cannot tile get a diagnostic naming the op and the
// sizes, never a crash.

func.func private @head_dim(%q: tensor<1x1x128x256xf32>) -> tensor<1x1x128x256xf32> attributes {seam.program} {
  // expected-error @+1 {{head dim 256 exceeds 128}}
  %o = seam.attention %q, %q, %q {scale = 0.0625 : f64} : (tensor<1x1x128x256xf32>, tensor<1x1x128x256xf32>, tensor<1x1x128x256xf32>) -> tensor<1x1x128x256xf32>
  return %o : tensor<1x1x128x256xf32>
}

// -----

func.func private @long_rows(%x: tensor<128x65536xf32>) -> tensor<128x65536xf32> attributes {seam.program} {
  // expected-error @+1 {{rows of 65536 elements are too long to normalise in SBUF}}
  %y = seam.rms_norm %x : (tensor<128x65536xf32>) -> tensor<128x65536xf32>
  return %y : tensor<128x65536xf32>
}

// -----

func.func private @huge_k(%x: tensor<128x65536xf32>, %w: tensor<65536x64xf32>) -> tensor<128x64xf32> attributes {seam.program} {
  // expected-remark @+2 {{blocked order (W read once per token tile): no weight-streaming plan fits}}
  // expected-error @+1 {{K = 65536 is too large}}
  %y = seam.linear %x, %w : (tensor<128x65536xf32>, tensor<65536x64xf32>) -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}

// -----

func.func private @many_keys(%q: tensor<1x1x128x64xf32>, %k: tensor<1x1x32768x64xf32>) -> tensor<1x1x128x64xf32> attributes {seam.program} {
  // expected-error @+1 {{32768 keys are too many for one score row in SBUF}}
  %o = seam.attention %q, %k, %k {scale = 0.125 : f64} : (tensor<1x1x128x64xf32>, tensor<1x1x32768x64xf32>, tensor<1x1x32768x64xf32>) -> tensor<1x1x128x64xf32>
  return %o : tensor<1x1x128x64xf32>
}

// -----

func.func private @causal_cross(%q: tensor<1x1x128x64xf32>, %k: tensor<1x1x256x64xf32>) -> tensor<1x1x128x64xf32> attributes {seam.program} {
  // expected-error @+1 {{causal attention needs Sq == Sk, got 128 and 256}}
  %o = seam.attention %q, %k, %k {scale = 0.125 : f64, causal} : (tensor<1x1x128x64xf32>, tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>) -> tensor<1x1x128x64xf32>
  return %o : tensor<1x1x128x64xf32>
}

// -----

func.func private @last_dim_transpose(%x: tensor<4x64x32xf32>) -> tensor<32x4x64xf32> attributes {seam.program} {
  // expected-error @+1 {{transpose perm [2, 0, 1] moves the last dimension elsewhere than a swap of the last two}}
  %t = seam.transpose %x perm [2, 0, 1] : tensor<4x64x32xf32> -> tensor<32x4x64xf32>
  return %t : tensor<32x4x64xf32>
}

// -----

func.func private @broadcast(%x: tensor<4x64x32xf32>, %c: tensor<4x1x32xf32>) -> tensor<4x64x32xf32> attributes {seam.program} {
  // expected-error @+1 {{broadcast of [4, 1, 32] and [4, 64, 32] to [4, 64, 32] is not lowered}}
  %y = seam.add %c, %x : (tensor<4x1x32xf32>, tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %y : tensor<4x64x32xf32>
}

// -----

func.func private @host_op(%x: tensor<1x128x64xf32>) -> tensor<1x128x64xf32> attributes {seam.program} {
  // expected-error @+1 {{runs on the host and cannot be lowered inside a device program}}
  %m = seam.fourier_mix %x dims [1, 2] : tensor<1x128x64xf32>
  return %m : tensor<1x128x64xf32>
}

