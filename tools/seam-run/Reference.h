//===- Reference.h - a float64 reference interpreter of seam ----*- C++ -*-===//
//
// A plain evaluator of the seam dialect in double precision: the model's
// step function as written (before any graph pass), op by op, with the
// semantics of SeamOps.td that the lowering implements. `seam-run
// --reference` and seam-smith compare a functional run's outputs against it.
//
// What it assumes of a run, as the device does it:
//  - parameters are seam.param's seeded values (evalLoadTime, the ones the
//    device loads), rounded to bf16 where the param is bf16; step inputs
//    are rounded to bf16 where the input is bf16; everything after that
//    stays float64 (no rounding of intermediates);
//  - TP: the IR is one rank's shard and every rank runs it on the same
//    parameters and inputs, so all_reduce (sum) is ranks * x and all_gather
//    is `ranks` copies concatenated rank-major along its dim;
//  - a seam.kernel_call computes what its kernel replaces (the registry's
//    kernels, configured by `config`), or its `callee`'s body.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_REFERENCE_H
#define SEAM_TOOLS_SEAM_RUN_REFERENCE_H

#include "runtime/Expected.h"
#include "runtime/Host.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace seamrun {

/// A tensor of the reference: float64, complex values as interleaved
/// (re, im) pairs (`data` then holds twice the element count).
struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  bool complex = false;
  int64_t count() const;
};

/// The relative L2 error a comparison accepts: 1e-5 when every value the
/// output depends on is f32 (or complex<f32>), 1e-2 when one is bf16; or,
/// when the output is more sensitive to rounding than that (a sum that
/// cancels, a norm over two elements, a softmax of large scores),
/// kReferenceNoiseFactor times the error that the device's arithmetic makes
/// on the same ops (the largest of three models: f32 accumulation with
/// results rounded to their dtype, and two fixed pseudo-random
/// perturbations of the terms of every sum and of every result by their
/// rounding errors).
constexpr double kReferenceToleranceF32 = 1e-5;
constexpr double kReferenceToleranceBf16 = 1e-2;
constexpr double kReferenceNoiseFactor = 4;

/// How the reference treats each op's results.
enum class ReferenceRounding {
  Exact, ///< float64 throughout
  /// The device's arithmetic: reductions accumulate in f32 (each product
  /// and partial sum rounded), results rounded to their element type (bf16,
  /// f32) to nearest.
  Nearest,
  /// Each of a reduction's n terms multiplied by (1 + r u sqrt(n)), u =
  /// 2^-24 (f32 accumulation), and each result by (1 + r u'), u' its
  /// dtype's unit roundoff; r in [-1, 1) from fixed sequence `sequence`
  /// (data movement is exact).
  Perturbed,
};

/// Evaluates `step` on `inputs` (one per argument, in order, as the host
/// gives them to the device: f32 values, complex interleaved); `ranks` is
/// the run's TP degree. Returns one tensor per result of the function, or
/// an error naming the op (and its location) that could not be evaluated.
seam::rt::Expected<std::vector<RefTensor>>
evaluateReference(mlir::func::FuncOp step,
                  llvm::ArrayRef<seam::rt::HostTensor> inputs, int ranks,
                  ReferenceRounding rounding = ReferenceRounding::Exact,
                  uint64_t sequence = 0);

/// Evaluates one op on float64 operands (for tests and tools): `op`'s
/// results, or an error. Regions (seam.block, seam.fusion) and calls are
/// evaluated through their bodies.
seam::rt::Expected<std::vector<RefTensor>>
evaluateReferenceOp(mlir::Operation *op, llvm::ArrayRef<RefTensor> operands,
                    int ranks);

/// One output of the step against the reference.
struct ReferenceOutput {
  std::string name; ///< "output<i>", as --output-dir names its files
  std::vector<int64_t> shape;
  bool complex = false;
  bool bf16 = false; ///< a bf16 value on its path: the looser tolerance
  double relL2 = 0, maxAbs = 0, refNorm = 0;
  double diffNorm = 0, noiseNorm = 0; ///< absolute L2 norms
  /// The rel-L2 error rounding alone makes (ReferenceRounding; worked out
  /// only for an output beyond its dtype's tolerance, else 0), and the
  /// tolerance: the dtype's, or kReferenceNoiseFactor x noise if larger.
  double noise = 0, tolerance = 0;
  uint64_t nonFinite = 0; ///< NaN/Inf in the device's output
  bool pass = false;
};

struct ReferenceReport {
  std::vector<ReferenceOutput> outputs;
  double seconds = 0; ///< wall time of the reference evaluation
  bool pass() const;
};

/// The function of `module text` that is the step (the first function with
/// a body that is neither an outlined program nor a kernel boundary body).
mlir::func::FuncOp findStepFunction(mlir::Operation *module);

/// Parses `irText`, evaluates its step function on `inputs` and compares
/// each result with `outputs` (the device's, in order). An error when the
/// text does not parse, an op cannot be evaluated or the counts differ.
seam::rt::Expected<ReferenceReport>
checkAgainstReference(const std::string &irText,
                      llvm::ArrayRef<seam::rt::HostTensor> inputs,
                      llvm::ArrayRef<seam::rt::HostTensor> outputs, int ranks);

/// Compares one device output (f32, complex interleaved) with its reference
/// (`tolerance` as the output's dtype gives it); `rounded` are the reference
/// with rounding (ReferenceRounding), whose distance from `ref` is the
/// noise.
ReferenceOutput compareOutput(const seam::rt::HostTensor &device,
                              const RefTensor &ref, double tolerance,
                              llvm::ArrayRef<const RefTensor *> rounded = {});

/// The comparison as seam-run prints it (one line per output).
void printReference(const ReferenceReport &r, llvm::raw_ostream &os);

/// `reference` in --json.
llvm::json::Value referenceJson(const ReferenceReport &r);

} // namespace seamrun

#endif
