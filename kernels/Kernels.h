//===- Kernels.h - the kernels' program builders ----------------*- C++ -*-===//
//
// One builder per kernel (each in its own file). The registry entries call
// the `build*` functions with a call-site signature; tests may also call the
// lower-level entry points with explicit parameters.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_KERNELS_KERNELS_H
#define SEAM_KERNELS_KERNELS_H

#include "dialect/ncore/NcoreBuilder.h"
#include "kernels/Registry.h"

namespace mlir::seam {

#define SEAM_KERNEL_BUILD(fn)                                                  \
  FailureOr<ncore::ProgramOp> fn(OpBuilder &b, ModuleOp module,                \
                                 const KernelSignature &sig, StringRef name);
SEAM_KERNEL_BUILD(buildQkvKernel)
SEAM_KERNEL_BUILD(buildRopeKernel)
SEAM_KERNEL_BUILD(buildFlashAttnKernel)
SEAM_KERNEL_BUILD(buildFlashAttnStableKernel)
SEAM_KERNEL_BUILD(buildFftKernel)
SEAM_KERNEL_BUILD(buildIfftKernel)
SEAM_KERNEL_BUILD(buildFourierMixKernel)
SEAM_KERNEL_BUILD(buildFftconvKernel)
#undef SEAM_KERNEL_BUILD

/// The rope of whole heads, shared by the rope kernel and the compiler's
/// lowering of seam.rope (lowering/conversion/ConvertRope.cpp): x and y
/// [heads, seq, d] HBM tiles (any grouping of those dims, contiguous), cos
/// and sin [seq, d]; seq a multiple of 128, d even.
struct RopeHeads {
  Value x, cos, sin, y;
  int64_t heads = 0, seq = 0, headDim = 0;
};
/// SBUF bytes per partition emitRopeWholeHeads allocates for `r`.
int64_t ropeWholeHeadsBytes(const RopeHeads &r);
void emitRopeWholeHeads(ncore::NcoreBuilder &nb, const RopeHeads &r);

/// The NKI tutorials' kernels (kernels/NkiTutorials.cpp): hardware-profiled
/// references for validating the timing model, built standalone (they
/// replace no graph op, so they are not in the kernel registry).
/// result[M, N] = lhsT[K, M]^T rhs[K, N], fp32.
struct NkiMatmulParams {
  int version = 2; ///< 2..5
  int64_t k = 0, m = 0, n = 0;
  /// v5's blocks in tiles (the tutorial's meta-parameters).
  int64_t blockM = 16, blockN = 2, blockK = 8;
};
std::optional<std::string> nkiMatmulError(const NkiMatmulParams &p);
FailureOr<ncore::ProgramOp> buildNkiMatmul(OpBuilder &b, ModuleOp module,
                                           StringRef name,
                                           const NkiMatmulParams &p);
/// out[b, c, s] of the fused Mamba SSM: inputs delta, u [b, c, s], A [c, n],
/// B, C [b, n, s], fp32.
struct NkiMambaParams {
  int version = 1; ///< 1..3
  int64_t batch = 1, seq = 0, channels = 0, state = 0;
  /// SBUF bytes per partition the kernel may fill; v2 spills delta, u and
  /// its accumulator to HBM beyond it. Default: trn1's 192 KiB (the
  /// smaller SBUF of the profiles), twice the planning budget.
  int64_t sbufBytes = 2 * 96 * 1024;
};
std::optional<std::string> nkiMambaError(const NkiMambaParams &p);
/// Whether `p` is v2 with more live tiles than `sbufBytes` (built spilled).
bool nkiMambaSpills(const NkiMambaParams &p);
FailureOr<ncore::ProgramOp> buildNkiMamba(OpBuilder &b, ModuleOp module,
                                          StringRef name,
                                          const NkiMambaParams &p);
struct NkiTutorialKernel {
  StringRef name; ///< "nki-matmul-v2" .. "nki-mamba-v3"
  bool mamba;
  int version;
  StringRef summary;
};
ArrayRef<NkiTutorialKernel> nkiTutorialKernels();
const NkiTutorialKernel *lookupNkiTutorialKernel(StringRef name);

/// How the FFT kernels compute sizes of 256 and 512.
enum class FftVariant {
  /// Four-step N = N1 x N2 with DFT matmuls on both factors.
  FourStep,
  /// The FNet source's algorithm: groups of 128-point DFT matmuls and
  /// radix-2 butterfly levels on the Vector engine (N = 128 x 2^k up to
  /// 1024: the source's 128/256/512 kernels and the 1024 its padding of
  /// D = 768 needs).
  Radix2,
};

/// Parameters of the 1-D FFT kernel over the last axis of [batch, n].
struct FftParams {
  int64_t n = 128;
  int64_t batch = 1;
  bool complexInput = false; ///< Input [batch, n, 2] f32, else [batch, n].
  bool inverse = false;      ///< Inverse DFT with 1/n (numpy ifft).
  bool realOutput = false;   ///< Output [batch, n] real part (ifft -> f32).
  Type dtype;                ///< Matmul operand dtype (f32 or bf16).
  FftVariant variant = FftVariant::FourStep;
  /// The FNet source's pad-to-next-power-of-two (radix-2 only): the n
  /// input points are zero-padded to padTo, the padTo-point DFT is taken
  /// and its first n bins kept (not the n-point DFT). 0: no padding.
  int64_t padTo = 0;
};

/// Why the kernel cannot be built for `p` (nullopt: it can). The registry's
/// check and the builder share it, so a site the check accepts builds.
std::optional<std::string> fftParamsError(const FftParams &p);
/// Why the fft / ifft kernel cannot serve the call site `sig` (nullopt: it
/// can): the axis, the variant, padding and the size.
std::optional<std::string> fftSiteError(const KernelSignature &sig,
                                        bool inverse);
/// Why the fourier-mix kernel cannot serve `x` mixed over `dims` (nullopt:
/// it can). Shared by the registry's check and the builder.
std::optional<std::string> fourierMixSiteError(RankedTensorType x,
                                               ArrayRef<int64_t> dims);
/// Why the qkv kernel cannot serve `sig` (K tiling, the SBUF plan).
std::optional<std::string> qkvSiteError(const KernelSignature &sig);
/// The sizes of the radix-2 variant: 128, 256, 512, 1024.
bool isRadix2Size(int64_t n);

/// Builds the FFT program for explicit parameters. Input and output HBM
/// types: real [batch, n] x dtype, complex [batch, n, 2] x f32.
FailureOr<ncore::ProgramOp> buildFftProgram(OpBuilder &b, ModuleOp module,
                                            StringRef name, const FftParams &p);

/// N = n1 * n2 with both factors <= 128 (n1 as large as possible); nullopt
/// when two factors do not suffice.
std::optional<std::pair<int64_t, int64_t>> fftFactors(int64_t n);

} // namespace mlir::seam

#endif // SEAM_KERNELS_KERNELS_H
