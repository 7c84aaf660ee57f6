//===- Kernels.h - the kernels' program builders ----------------*- C++ -*-===//
//
// One builder per kernel (each in its own file). The registry entries call
// the `build*` functions with a call-site signature; tests may also call the
// lower-level entry points with explicit parameters.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_KERNELS_KERNELS_H
#define SEAM_KERNELS_KERNELS_H

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

/// How the FFT kernels compute sizes of 256 and 512.
enum class FftVariant {
  /// Four-step N = N1 x N2 with DFT matmuls on both factors.
  FourStep,
  /// The FNet source's algorithm: groups of 128-point DFT matmuls and
  /// radix-2 butterfly levels on the Vector engine (N = 256, 512).
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
};

/// Builds the FFT program for explicit parameters. Input and output HBM
/// types: real [batch, n] x dtype, complex [batch, n, 2] x f32.
FailureOr<ncore::ProgramOp> buildFftProgram(OpBuilder &b, ModuleOp module,
                                            StringRef name, const FftParams &p);

/// N = n1 * n2 with both factors <= 128 (n1 as large as possible); nullopt
/// when two factors do not suffice.
std::optional<std::pair<int64_t, int64_t>> fftFactors(int64_t n);

} // namespace mlir::seam

#endif // SEAM_KERNELS_KERNELS_H
