//===- HostValues.h - load-time values and host fallback ops ----*- C++ -*-===//
//
// What seam-run computes on the host: parameters (seam.param with its seeded
// initialiser) and expressions of parameters only (the concatenated QKV
// weight), evaluated once at load time; and the host-fallback ops (FFT ops
// left without a kernel), run for real with Eigen's FFT.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_HOSTVALUES_H
#define SEAM_TOOLS_SEAM_RUN_HOSTVALUES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "runtime/Host.h"

namespace seamrun {

/// Values of a seam tensor on the host: complex tensors keep re/im
/// interleaved in `data` (so their size is twice the element count).
using HostTensor = seam::rt::HostTensor;

/// Evaluates a load-time op (seam.param, or concat/reshape/transpose/slice
/// of load-time values) given its operands' values.
mlir::FailureOr<HostTensor> evalLoadTime(mlir::Operation *op,
                                         llvm::ArrayRef<const HostTensor *> in);

/// Runs a host-fallback op (fft, ifft, fourier_mix, fftconv) for real.
mlir::FailureOr<HostTensor> evalHostOp(mlir::Operation *op,
                                       llvm::ArrayRef<const HostTensor *> in);

/// A deterministic input of `shape` (uniform in [-1, 1), seeded by `seed`).
HostTensor syntheticInput(llvm::ArrayRef<int64_t> shape, uint64_t seed,
                          bool complex = false);

} // namespace seamrun

#endif
