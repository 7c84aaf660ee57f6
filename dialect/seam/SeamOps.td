//===- SeamOps.td - seam graph ops -------------------------*- tablegen -*-===//

#ifndef SEAM_OPS_TD
#define SEAM_OPS_TD

include "dialect/seam/SeamBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Seam_RealTensor : RankedTensorOf<[F32, BF16]>;
def Seam_ComplexTensor : RankedTensorOf<[Complex<F32>]>;
def Seam_AnyTensor : RankedTensorOf<[F32, BF16, Complex<F32>]>;

/// Every seam compute op: fusion class trait + the interface that reads it.
class Seam_Op<string mnemonic, Trait fusion, list<Trait> traits = []>
    : Op<Seam_Dialect, mnemonic,
         !listconcat([Pure, fusion, Seam_BoundedSize,
                      DeclareOpInterfaceMethods<Seam_FusionClassInterface>],
                     traits)> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Seam_ParamOp : Seam_Op<"param", Seam_InjectiveFusion> {
  let summary = "a named model parameter with a deterministic initialiser";
  let description = [{
    A weight of the model. It is materialised once in HBM and shared by every
    program that reads it. `init` with `scale` and `seed` define its value
    exactly (counter-based generator), so a model file is self-contained:
    `normal`/`uniform` draw with standard deviation / half-width `scale`;
    `rope_cos`/`rope_sin` fill an [S, D] rotary table with base `scale`.
    `data` takes the values of the `value` attribute (f32 elements of the
    result's shape, usually a `dense_resource` blob): an imported model's
    real weights (seam-import of an ONNX initializer); scale and seed are 0.

    ```mlir
    %w = seam.param "blocks.0.attn.qkv.weight" init normal(2.0e-02) seed 17
         : tensor<3072x2304xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name, Seam_ParamInit:$init, F64Attr:$scale,
                       I64Attr:$seed, OptionalAttr<ElementsAttr>:$value);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $name `init` $init `(` $scale `)` `seed` $seed attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Dense
//===----------------------------------------------------------------------===//

def Seam_LinearOp : Seam_Op<"linear", Seam_OutputFusableFusion,
                            [AttrSizedOperandSegments]> {
  let summary = "y = x W (+ b) over the last dimension";
  let description = [{
    `input` is [..., K], `weight` is [K, N], optional `bias` is [N]; the
    result is [..., N]. All element types match. With `activation` (`gelu`,
    `gelu_tanh` or `silu`), the result is that activation of x W (+ b):
    seam-fuse-linear-activation folds a following activation into the
    linear, whose lowering applies it as it moves each block out of PSUM.
    With `scale` (N elements, all its dims but the last of size 1: a row
    broadcast over the tokens), the result is then multiplied by it, column
    by column (adaLN's gate, folded the same way).

    ```mlir
    %y = seam.linear %x, %w, %b
         : (tensor<1x256x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>)
           -> tensor<1x256x3072xf32>
    %g = seam.linear %x, %w {activation = "gelu_tanh"}
         : (tensor<1x256x768xf32>, tensor<768x3072xf32>)
           -> tensor<1x256x3072xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, Seam_RealTensor:$weight,
                       Optional<Seam_RealTensor>:$bias,
                       Optional<Seam_RealTensor>:$scale,
                       OptionalAttr<StrAttr>:$activation);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`scale` $scale^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Seam_LayerNormOp : Seam_Op<"layer_norm", Seam_ReductionFusion,
                               [AttrSizedOperandSegments]> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    (x - mean) / sqrt(var + epsilon), then optionally
    `* (scale + scale_offset) + bias` (scale and bias both [D] where D is the
    last dimension; scale_offset a constant, 0 unless given, and only with a
    scale). Without scale and bias this is the non-affine norm that adaLN
    modulates; `scale_offset = 1` is that modulation, `n * (1 + scale) +
    shift`, which seam-fuse-norm-modulation folds into the norm.

    ```mlir
    %n = seam.layer_norm %x scale %g bias %b {epsilon = 1.0e-12 : f64}
         : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>)
           -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input,
                       Optional<Seam_RealTensor>:$scale,
                       Optional<Seam_RealTensor>:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$scale_offset);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Seam_RmsNormOp : Seam_Op<"rms_norm", Seam_ReductionFusion> {
  let summary = "RMS normalisation over the last dimension";
  let description = [{
    x / sqrt(mean(x^2) + epsilon), optionally `* scale` ([D]).

    ```mlir
    %n = seam.rms_norm %q scale %g {epsilon = 1.0e-6 : f64}
         : (tensor<1x6x256x128xbf16>, tensor<128xbf16>) -> tensor<1x6x256x128xbf16>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input,
                       Optional<Seam_RealTensor>:$scale,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Seam_UnaryOp<string mnemonic, string formula>
    : Seam_Op<mnemonic, Seam_ElementwiseFusion, [SameOperandsAndResultType]> {
  let summary = "elementwise " # formula;
  let description = "Elementwise `" # formula # "`; result type = operand type.\n\n"
    # "```mlir\n%y = seam." # mnemonic # " %x : tensor<1x128x3072xbf16>\n```";
  let arguments = (ins Seam_RealTensor:$input);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 0;
}

def Seam_GeluOp : Seam_UnaryOp<"gelu", "gelu(x) = x * Phi(x) (erf form)">;
def Seam_GeluTanhOp : Seam_UnaryOp<"gelu_tanh",
    "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))">;
def Seam_SiluOp : Seam_UnaryOp<"silu", "silu(x) = x * sigmoid(x)">;

class Seam_BinaryOp<string mnemonic, string formula>
    : Seam_Op<mnemonic, Seam_ElementwiseFusion> {
  let summary = "elementwise " # formula # " with numpy-style broadcasting";
  let description = "`" # formula # "` with numpy broadcasting (shapes are"
    # " right-aligned; a dimension of 1 stretches). The result has the"
    # " broadcast shape and the operands' element type.\n\n```mlir\n"
    # "%y = seam." # mnemonic # " %x, %shift : (tensor<1x256x3072xbf16>,"
    # " tensor<1x1x3072xbf16>) -> tensor<1x256x3072xbf16>\n```";
  let arguments = (ins Seam_RealTensor:$lhs, Seam_RealTensor:$rhs);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Seam_AddOp : Seam_BinaryOp<"add", "lhs + rhs">;
def Seam_MulOp : Seam_BinaryOp<"mul", "lhs * rhs">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Seam_ReshapeOp : Seam_Op<"reshape", Seam_InjectiveFusion> {
  let summary = "reinterpret a tensor with another shape of equal size";
  let description = [{
    Row-major reshape; element counts and types must match.

    ```mlir
    %h = seam.reshape %x : tensor<1x256x768xbf16> -> tensor<1x256x6x128xbf16>
    ```
  }];
  let arguments = (ins Seam_AnyTensor:$input);
  let results = (outs Seam_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Seam_TransposeOp : Seam_Op<"transpose", Seam_InjectiveFusion> {
  let summary = "permute dimensions";
  let description = [{
    `result.shape[i] = input.shape[perm[i]]`.

    ```mlir
    %t = seam.transpose %h perm [0, 2, 1, 3]
         : tensor<1x256x6x128xbf16> -> tensor<1x6x256x128xbf16>
    ```
  }];
  let arguments = (ins Seam_AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Seam_AnyTensor:$result);
  let assemblyFormat = [{
    $input `perm` $perm attr-dict `:` type($input) `->` type($result)
  }];
}

def Seam_ConcatOp : Seam_Op<"concat", Seam_InjectiveFusion> {
  let summary = "concatenate tensors along one dimension";
  let description = [{
    All inputs have the same rank, element type and sizes except along `dim`.

    ```mlir
    %s = seam.concat %txt, %img dim 1
         : (tensor<1x512x3072xbf16>, tensor<1x256x3072xbf16>) -> tensor<1x768x3072xbf16>
    ```
  }];
  let arguments = (ins Variadic<Seam_AnyTensor>:$inputs, I64Attr:$dim);
  let results = (outs Seam_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` functional-type($inputs, $result)
  }];
}

def Seam_SliceOp : Seam_Op<"slice", Seam_InjectiveFusion> {
  let summary = "static unit-stride slice";
  let description = [{
    Takes `result.shape` elements starting at `offsets` in every dimension.

    ```mlir
    %img = seam.slice %s offsets [0, 512, 0]
           : tensor<1x768x3072xbf16> -> tensor<1x256x3072xbf16>
    ```
  }];
  let arguments = (ins Seam_AnyTensor:$input, DenseI64ArrayAttr:$offsets);
  let results = (outs Seam_AnyTensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Primitives: what a framework exports (ONNX), before fusion is recovered
//===----------------------------------------------------------------------===//
//
// One op per exported primitive. The graph passes (seam-recognize-*) rewrite
// the patterns they form into the fused ops above (linear, layer_norm,
// attention, ...); what is left runs on the host (Seam_HostFallback), with a
// remark that names it, so an imported graph always runs.

class Seam_PrimitiveUnaryOp<string mnemonic, string formula>
    : Seam_Op<mnemonic, Seam_ElementwiseFusion,
              [Seam_HostFallback, SameOperandsAndResultType]> {
  let summary = "elementwise " # formula # " (primitive)";
  let description = "Elementwise `" # formula # "`; result type = operand "
    # "type. A primitive: no device lowering of its own.\n\n```mlir\n"
    # "%y = seam." # mnemonic # " %x : tensor<2x8xf32>\n```";
  let arguments = (ins Seam_RealTensor:$input);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 0;
}

def Seam_ExpOp : Seam_PrimitiveUnaryOp<"exp", "exp(x)">;
def Seam_LogOp : Seam_PrimitiveUnaryOp<"log", "log(x)">;
def Seam_SqrtOp : Seam_PrimitiveUnaryOp<"sqrt", "sqrt(x)">;
def Seam_TanhOp : Seam_PrimitiveUnaryOp<"tanh", "tanh(x)">;
def Seam_ErfOp : Seam_PrimitiveUnaryOp<"erf", "erf(x)">;
def Seam_SigmoidOp : Seam_PrimitiveUnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Seam_NegOp : Seam_PrimitiveUnaryOp<"neg", "-x">;
def Seam_ReciprocalOp : Seam_PrimitiveUnaryOp<"reciprocal", "1 / x">;
def Seam_ReluOp : Seam_PrimitiveUnaryOp<"relu", "max(x, 0)">;
def Seam_AbsOp : Seam_PrimitiveUnaryOp<"abs", "|x|">;

class Seam_PrimitiveBinaryOp<string mnemonic, string formula>
    : Seam_Op<mnemonic, Seam_ElementwiseFusion, [Seam_HostFallback]> {
  let summary = "elementwise " # formula # " with numpy-style broadcasting "
    # "(primitive)";
  let description = "`" # formula # "` with numpy broadcasting, as seam.add."
    # " A primitive: no device lowering of its own.\n\n```mlir\n"
    # "%y = seam." # mnemonic # " %x, %c : (tensor<2x8xf32>, tensor<8xf32>)"
    # " -> tensor<2x8xf32>\n```";
  let arguments = (ins Seam_RealTensor:$lhs, Seam_RealTensor:$rhs);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Seam_SubOp : Seam_PrimitiveBinaryOp<"sub", "lhs - rhs">;
def Seam_DivOp : Seam_PrimitiveBinaryOp<"div", "lhs / rhs">;
def Seam_PowOp : Seam_PrimitiveBinaryOp<"pow", "lhs ^ rhs">;
def Seam_MaxOp : Seam_PrimitiveBinaryOp<"max", "max(lhs, rhs)">;
def Seam_MinOp : Seam_PrimitiveBinaryOp<"min", "min(lhs, rhs)">;

def Seam_MatmulOp : Seam_Op<"matmul", Seam_OutputFusableFusion,
                            [Seam_HostFallback]> {
  let summary = "numpy matmul (primitive)";
  let description = [{
    numpy.matmul: the last two dimensions multiply ([..., M, K] x [..., K,
    N]); the leading ones broadcast. A rank-1 operand is a vector (a 1 is
    prepended to the lhs or appended to the rhs, then dropped). seam-recognize
    turns `matmul(x, W)` with a load-time W [K, N] into seam.linear.

    ```mlir
    %y = seam.matmul %x, %w : (tensor<1x8x16xf32>, tensor<16x4xf32>)
         -> tensor<1x8x4xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$lhs, Seam_RealTensor:$rhs);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Seam_SoftmaxOp : Seam_Op<"softmax", Seam_ReductionFusion,
                             [Seam_HostFallback, SameOperandsAndResultType]> {
  let summary = "softmax along one axis (primitive)";
  let description = [{
    exp(x - max) / sum(exp(x - max)) along `axis` (0 <= axis < rank).

    ```mlir
    %p = seam.softmax %s axis 3 : tensor<1x2x8x8xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, I64Attr:$axis);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($result)";
}

def Seam_ReduceOp : Seam_Op<"reduce", Seam_ReductionFusion,
                            [Seam_HostFallback]> {
  let summary = "sum, mean or max over some axes (primitive)";
  let description = [{
    Reduces `axes` (sorted, distinct, in range); with `keepdims` they stay
    as 1s, otherwise they are dropped.

    ```mlir
    %m = seam.reduce mean %x axes [2] keepdims : tensor<1x8x16xf32> -> tensor<1x8x1xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, Seam_ReduceKind:$kind,
                       DenseI64ArrayAttr:$axes, UnitAttr:$keepdims);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $kind $input `axes` $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Seam_RopeOp : Seam_Op<"rope", Seam_ElementwiseFusion> {
  let summary = "rotary position embedding (rotate-half form)";
  let description = [{
    `input` is [B, H, S, D] (the layout of the published RoPE kernel), `cos`
    and `sin` are [S, D] tables. With x1 = x[..., :D/2], x2 = x[..., D/2:]:
    `y = x * cos + concat(-x2, x1) * sin`. D must be even.

    ```mlir
    %qr = seam.rope %q, %cos, %sin
          : (tensor<1x6x256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>)
            -> tensor<1x6x256x128xbf16>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, Seam_RealTensor:$cos,
                       Seam_RealTensor:$sin);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)
  }];
}

def Seam_AttentionOp : Seam_Op<"attention", Seam_OpaqueFusion,
                               [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention, optionally with fused RoPE";
  let description = [{
    softmax(scale * q k^T [+ causal mask]) v per head. `q` is [B, H, Sq, D],
    `k` and `v` are [B, Hkv, Sk, D] with H a multiple of Hkv (grouped
    queries); the result is [B, H, Sq, D]. With `rope(cos, sin)` ([S, D]
    tables, Sq == Sk == S) the rotary embedding of q and k happens inside.

    ```mlir
    %o = seam.attention %q, %k, %v rope(%cos, %sin) {scale = 0.0883 : f64}
         : (tensor<1x6x768x128xbf16>, tensor<1x6x768x128xbf16>,
            tensor<1x6x768x128xbf16>, tensor<768x128xbf16>, tensor<768x128xbf16>)
           -> tensor<1x6x768x128xbf16>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$q, Seam_RealTensor:$k,
                       Seam_RealTensor:$v,
                       Optional<Seam_RealTensor>:$rope_cos,
                       Optional<Seam_RealTensor>:$rope_sin,
                       F64Attr:$scale, UnitAttr:$causal);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`rope` `(` $rope_cos^ `,` $rope_sin `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Fourier
//===----------------------------------------------------------------------===//

def Seam_FourierMixOp : Seam_Op<"fourier_mix", Seam_OpaqueFusion,
                                [Seam_HostFallback, SameOperandsAndResultType]> {
  let summary = "FNet mixing: real part of the N-D DFT over the listed dims";
  let description = [{
    `Re(DFT_{dims}(x))` for real x; the dims are distinct and in range. FNet
    mixes over (sequence, hidden): `dims [1, 2]` of a [B, S, D] tensor, i.e.
    `Re(F_S X F_D) = C_S X C_D - S_S X S_D`. Exact for every size (no padding).

    ```mlir
    %m = seam.fourier_mix %x dims [1, 2] : tensor<1x512x768xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($result)";
}

def Seam_FftOp : Seam_Op<"fft", Seam_OpaqueFusion, [Seam_HostFallback]> {
  let summary = "1-D forward DFT along one axis";
  let description = [{
    `y[k] = sum_n x[n] exp(-2 pi i k n / N)` along `axis` (N = its size, any
    N). Real input is promoted to complex; the result is complex<f32> of the
    same shape, or f32 holding its real part.

    With `pad_to = P` (P >= N) the N points are zero-padded to P and the
    first N bins of the P-point DFT are kept:
    `y[k] = sum_n x[n] exp(-2 pi i k n / P)`, k < N. That is the FNet
    source's pad-to-next-power-of-two, not the N-point DFT (its error is
    what seam measures); without `pad_to` the transform is exact.

    ```mlir
    %f = seam.fft %x axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xcomplex<f32>>
    %p = seam.fft %x axis 1 {pad_to = 1024 : i64} : tensor<4x768xf32> -> tensor<4x768xcomplex<f32>>
    ```
  }];
  let arguments = (ins Seam_AnyTensor:$input, I64Attr:$axis,
                       OptionalAttr<I64Attr>:$pad_to);
  let results = (outs RankedTensorOf<[F32, Complex<F32>]>:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($input) `->` type($result)";
}

def Seam_IfftOp : Seam_Op<"ifft", Seam_OpaqueFusion, [Seam_HostFallback]> {
  let summary = "1-D inverse DFT along one axis (1/N normalised)";
  let description = [{
    `x[n] = 1/N sum_k y[k] exp(2 pi i k n / N)` along `axis`. The result is
    complex<f32>, or f32 holding the real part.

    ```mlir
    %x = seam.ifft %f axis 1 : tensor<4x768xcomplex<f32>> -> tensor<4x768xf32>
    ```
  }];
  let arguments = (ins Seam_ComplexTensor:$input, I64Attr:$axis);
  let results = (outs RankedTensorOf<[F32, Complex<F32>]>:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($input) `->` type($result)";
}

def Seam_AsComplexOp : Seam_Op<"as_complex", Seam_OpaqueFusion,
                               [Seam_HostFallback]> {
  let summary = "f32 [..., 2] (real, imaginary) pairs as complex<f32> [...]";
  let description = [{
    ONNX's complex convention (DFT's input and output: a trailing axis of
    2) as seam's complex<f32>: the same values in the same order (a complex
    tensor is interleaved (re, im) on the host and the device), the last
    axis dropped.

    ```mlir
    %c = seam.as_complex %x : tensor<1x10x10x2xf32> -> tensor<1x10x10xcomplex<f32>>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input);
  let results = (outs Seam_ComplexTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Seam_AsRealOp : Seam_Op<"as_real", Seam_OpaqueFusion,
                            [Seam_HostFallback]> {
  let summary = "complex<f32> [...] as f32 [..., 2] (real, imaginary) pairs";
  let description = [{
    The inverse of seam.as_complex: a trailing axis of 2 holds each
    element's real and imaginary parts (ONNX's DFT output).

    ```mlir
    %x = seam.as_real %c : tensor<1x10x10xcomplex<f32>> -> tensor<1x10x10x2xf32>
    ```
  }];
  let arguments = (ins Seam_ComplexTensor:$input);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Seam_FftConvOp : Seam_Op<"fftconv", Seam_OpaqueFusion,
                             [Seam_HostFallback, AttrSizedOperandSegments]> {
  let summary = "Hyena long convolution through the FFT";
  let description = [{
    The hyena-dna `fftconv` reference semantics. `u` is [B, H, L], the filter
    `k` is [H, Lk] with Lk <= L, `d` is [H]:

    ```
    n = fft_size (a power of two in [16, 16384], L <= n / 2)
    y = irfft(rfft(u', n) * rfft(k, n) / n, n, norm=forward)[..., :L] + u' * d
    ```

    where `u' = gelu(u)` if `gelu_inp`, then `y = gelu(y)` if `gelu`; with
    `dropout` ([B, H] mask) `y *= mask`; with `v` ([B, H, L]) the input is
    `u * v`; with `q` ([B, H, L]) `y *= (gelu(q) if gelu_q else q)`.
    `head_dim` > 1 (multi-head variant) must divide H.

    ```mlir
    %y = seam.fftconv %u, %k, %d {fft_size = 2048 : i64, gelu}
         : (tensor<1x256x1024xf32>, tensor<256x1024xf32>, tensor<256xf32>)
           -> tensor<1x256x1024xf32>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$u, Seam_RealTensor:$k,
                       Seam_RealTensor:$d,
                       Optional<Seam_RealTensor>:$v,
                       Optional<Seam_RealTensor>:$q,
                       Optional<Seam_RealTensor>:$dropout_mask,
                       I64Attr:$fft_size,
                       DefaultValuedAttr<I64Attr, "1">:$head_dim,
                       UnitAttr:$gelu, UnitAttr:$gelu_inp, UnitAttr:$gelu_q);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $u `,` $k `,` $d (`v` $v^)? (`q` $q^)? (`dropout` $dropout_mask^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The FFT size the reference picks for sequence length `l`: 2L rounded
    /// up to a power of two, at least 16.
    static int64_t defaultFftSize(int64_t l);
  }];
}

//===----------------------------------------------------------------------===//
// Tensor parallelism
//===----------------------------------------------------------------------===//

def Seam_AllReduceOp : Seam_Op<"all_reduce", Seam_OpaqueFusion,
                               [SameOperandsAndResultType]> {
  let summary = "sum over the tensor-parallel ranks";
  let description = [{
    Follows a row-parallel linear: every rank holds a partial sum.

    ```mlir
    %s = seam.all_reduce %p ranks 4 : tensor<1x256x3072xbf16>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, I64Attr:$ranks);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = "$input `ranks` $ranks attr-dict `:` type($result)";
}

def Seam_AllGatherOp : Seam_Op<"all_gather", Seam_OpaqueFusion> {
  let summary = "concatenate the ranks' shards along one dimension";
  let description = [{
    ```mlir
    %g = seam.all_gather %p dim 2 ranks 4
         : tensor<1x256x768xbf16> -> tensor<1x256x3072xbf16>
    ```
  }];
  let arguments = (ins Seam_RealTensor:$input, I64Attr:$dim, I64Attr:$ranks);
  let results = (outs Seam_RealTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `ranks` $ranks attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Structure: blocks, kernels, fusion regions
//===----------------------------------------------------------------------===//

def Seam_KernelCallOp : Seam_Op<"kernel_call", Seam_OpaqueFusion,
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "opaque call to a registered NKI-style kernel";
  let description = [{
    The graph compiler cannot see inside: inputs come from HBM, outputs go
    to HBM, and nothing is scheduled across the call. `kernel` names an
    entry of the kernel registry, which checks the signature; `config`
    carries the matched op's attributes (scale, fft_size, ...).

    `callee`, when present, names a private `func.func` (tagged
    `seam.boundary_body`) whose ops the compiler lowers as the call's body
    instead of the registered kernel's: the compiler's own code placed behind
    the same opaque boundary. It is the counterfactual `seam-run
    --explain-kernels` compiles to tell a kernel's body from its boundary; its
    type must be the call's.

    ```mlir
    %qkv = seam.kernel_call "qkv"(%x, %w) : (tensor<1x256x3072xbf16>,
           tensor<3072x2304xbf16>) -> tensor<1x256x2304xbf16>
    %y = seam.kernel_call "qkv"(%x, %w) {callee = @boundary_qkv_0}
           : (tensor<1x256x3072xbf16>, tensor<3072x2304xbf16>)
           -> tensor<1x256x2304xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<Seam_AnyTensor>:$args,
                       OptionalAttr<DictionaryAttr>:$config,
                       OptionalAttr<FlatSymbolRefAttr>:$callee);
  let results = (outs Variadic<Seam_AnyTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
}

def Seam_YieldOp : Op<Seam_Dialect, "yield",
                      [Pure, Terminator,
                       ParentOneOf<["BlockOp", "FusionOp"]>]> {
  let summary = "results of a seam.block or seam.fusion region";
  let description = [{
    ```mlir
    seam.yield %x : tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

class Seam_RegionOp<string mnemonic, list<Trait> traits = []>
    : Op<Seam_Dialect, mnemonic,
         !listconcat([RecursiveMemoryEffects, SingleBlock], traits)> {
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    YieldOp getYield();
  }];
}

def Seam_BlockOp : Seam_RegionOp<"block"> {
  let summary = "one transformer (or mixer) block of a model";
  let description = [{
    Names a model's block: `kind` (e.g. "fnet", "double_stream",
    "single_stream", "hyena") and `index`. Values from above are used
    directly; the region's `seam.yield` gives the results. Eager-mode region
    formation makes one program per block.

    ```mlir
    %y = seam.block "fnet" 0 -> tensor<1x128x768xf32> {
      %m = seam.fourier_mix %x dims [1, 2] : tensor<1x128x768xf32>
      seam.yield %m : tensor<1x128x768xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, I64Attr:$index);
  let assemblyFormat = [{
    $kind $index attr-dict-with-keyword (`->` type($results)^)? $body
  }];
}

def Seam_FusionOp : Seam_RegionOp<"fusion"> {
  let summary = "a region compiled and launched as one program";
  let description = [{
    Intermediates inside stay on chip when they fit; values crossing the
    region boundary go through HBM. `name` identifies the program (e.g.
    "block3.part1"). Opaque `seam.kernel_call`s inside (compile mode) are
    sub-programs the scheduler does not reorder across.

    ```mlir
    %y = seam.fusion "step" -> tensor<1x128x768xf32> {
      %g = seam.gelu %x : tensor<1x128x768xf32>
      seam.yield %g : tensor<1x128x768xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let assemblyFormat = [{
    $name attr-dict-with-keyword (`->` type($results)^)? $body
  }];
}

#endif // SEAM_OPS_TD
