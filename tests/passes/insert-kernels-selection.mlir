// The kernel list: `none` and an empty list insert nothing, spaces around
// names are ignored, a repeated name counts once; a kernel that replaces
// nothing gets a warning saying why (no site, every site rejected, or
// shadowed by a kernel listed before it for the same op).

// RUN: seam-opt %s -split-input-file -seam-insert-kernels="kernels=none" -verify-diagnostics | FileCheck %s --check-prefix=NONE
// RUN: seam-opt %s -split-input-file -seam-insert-kernels="kernels=" -verify-diagnostics | FileCheck %s --check-prefix=NONE
// RUN: seam-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(seam-insert-kernels{kernels={flash-attn, flash-attn,rope }}))" 2>/dev/null | FileCheck %s --check-prefix=SPACES
// RUN: seam-opt %s -split-input-file -seam-insert-kernels="kernels=flash-attn,flash-attn-stable,rope" 2>/dev/null | FileCheck %s --check-prefix=SHADOW-IR
// RUN: seam-opt %s -split-input-file -seam-insert-kernels="kernels=flash-attn,flash-attn-stable,rope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHADOW
// RUN: not seam-opt %s -seam-insert-kernels="kernels=none,rope" 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not seam-opt %s -seam-insert-kernels="kernels=rope,warp" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// NONE-LABEL: func.func @attention
// NONE-NOT: seam.kernel_call
// SPACES-LABEL: func.func @attention
// SPACES: seam.kernel_call "flash-attn"
// SHADOW: warning: seam-insert-kernels: kernel 'flash-attn-stable' is shadowed by 'flash-attn' at 1 site(s) in @attention (both replace seam.attention; the first listed wins)
// SHADOW: warning: seam-insert-kernels: kernel 'rope' matches no site in @attention (no seam.rope it applies to)
// SHADOW-IR-LABEL: func.func @attention
// SHADOW-IR: seam.kernel_call "flash-attn"
// SHADOW: warning: seam-insert-kernels: kernel 'rope' inserted at none of its 1 site(s) in @long_rope (seq 768 > 512 at 1 site(s))
// MIXED: error: seam-insert-kernels: 'none' cannot be combined with kernel names
// UNKNOWN: error: seam-insert-kernels: unknown kernel 'warp'; registered kernels: qkv, rope,
func.func @attention(%q: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %o = seam.attention %q, %q, %q {scale = 0.125 : f64} : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}

// -----

// NONE-LABEL: func.func @long_rope
// NONE-NOT: seam.kernel_call
func.func @long_rope(%x: tensor<1x6x768x128xbf16>) -> tensor<1x6x768x128xbf16> {
  %c = seam.param "c768" init rope_cos(1.0e+04) seed 0 : tensor<768x128xbf16>
  %s = seam.param "s768" init rope_sin(1.0e+04) seed 0 : tensor<768x128xbf16>
  %r = seam.rope %x, %c, %s : (tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>) -> tensor<1x6x768x128xbf16>
  return %r : tensor<1x6x768x128xbf16>
}
