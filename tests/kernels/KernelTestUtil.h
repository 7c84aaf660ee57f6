//===- KernelTestUtil.h - build, emit and run kernel programs ---*- C++ -*-===//
//
// runProgram compiles a kernel's ncore.program with the real codegen
// (compileNcoreProgram: ncore-double-buffer, ncore-allocate, ncore-schedule,
// ncore-split-dma, emission; constants from their `seam.constant`
// descriptions) and runs it on the emulated device.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TESTS_KERNELS_KERNELTESTUTIL_H
#define SEAM_TESTS_KERNELS_KERNELTESTUTIL_H

#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Constants.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/Host.h"

#include <complex>
#include <gtest/gtest.h>
#include <random>

namespace seam::kt {

struct RunResult {
  bool ok = false;
  std::string error;
  /// Output arguments by program argument index (rank 0's).
  std::map<unsigned, std::vector<float>> outputs;
  /// Every rank's outputs, in rank order (runProgramOnRanks).
  std::vector<std::map<unsigned, std::vector<float>>> rankOutputs;
  uint64_t nonFinite = 0;       ///< NaN/Inf stores anywhere in the run.
  uint64_t nonFiniteOutput = 0; ///< NaN/Inf values in the outputs.
  size_t instructions = 0;
  double deviceNs = 0;     ///< Simulated device time of the launch.
  double tensorBusyNs = 0; ///< Tensor engine busy time (core 0).
};

/// Verifies, compiles and runs `prog` on one core of `target` with `inputs`
/// (by program argument index; none needed in timing-only mode).
RunResult runProgram(mlir::ncore::ProgramOp prog,
                     const std::map<unsigned, std::vector<float>> &inputs,
                     rt::ExecMode mode = rt::ExecMode::Functional,
                     rt::Target target = rt::Target::Trn1);
/// The same on one core per rank (tensor parallel: the program's
/// collectives span them), rank r with `inputsPerRank[r]`.
RunResult runProgramOnRanks(
    mlir::ncore::ProgramOp prog,
    const std::vector<std::map<unsigned, std::vector<float>>> &inputsPerRank,
    rt::ExecMode mode = rt::ExecMode::Functional,
    rt::Target target = rt::Target::Trn1);

/// A context with the seam and ncore dialects and an empty module.
struct KernelEnv {
  KernelEnv();
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::OpBuilder builder;
  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape,
                                mlir::Type elt = {});
  mlir::Type f32() { return builder.getF32Type(); }
  mlir::Type bf16() { return builder.getBF16Type(); }
  mlir::Type c64() { return mlir::ComplexType::get(f32()); }
  /// Builds kernel `name` for `sig` through the registry's build hook.
  mlir::ncore::ProgramOp build(llvm::StringRef kernel,
                               const ::mlir::seam::KernelSignature &sig);
};

inline double relL2(const std::vector<float> &got,
                    const std::vector<double> &want) {
  if (got.size() != want.size())
    return 1e300;
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

inline std::vector<float> randomValues(size_t n, unsigned seed,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Rounds to bf16 (nearest even), as the device stores it.
inline float toBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  float y;
  std::memcpy(&y, &u, 4);
  return y;
}

} // namespace seam::kt

#endif // SEAM_TESTS_KERNELS_KERNELTESTUTIL_H
