//===- Roofline.h - a program's floor from its graph ------------*- C++ -*-===//
//
// The roofline is the bar for generated code (docs/architecture.md,
// "Choices behind the numbers"): a program's floor comes from the work of the
// seam graph it computes, never from the instructions it was lowered to, so a
// wasteful program cannot raise its own floor. It is a lower bound:
//
//   floor = max(TE flops / TE peak,
//               elementwise work / the VE, SE and GpSimd peaks,
//               bytes that must cross HBM / per-core DMA bandwidth).
//
// `workOf` is the one per-op work model; the table of conventions is at the
// top of Roofline.cpp. A `seam.kernel_call` does the work of the op it
// replaced (the kernel registry's `rootOp` at the call's signature), so a
// kernel and the compiler's lowering of the same op share one floor.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_ROOFLINE_H
#define SEAM_PASSES_ROOFLINE_H

#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include <array>
#include <string>

namespace seam::rt {
struct Profile;
}

namespace mlir::seam {

/// The engines that may run an elementwise pass, as a bit set: the index of
/// `GraphWork::elementOps`.
enum EngineSet : unsigned {
  kVE = 1,                  ///< Vector engine
  kSE = 2,                  ///< Scalar (activation) engine
  kGP = 4,                  ///< GpSimd
  kVEorGP = kVE | kGP,      ///< tensor_tensor, tensor_reduce, reciprocal
  kAnyEW = kVE | kSE | kGP, ///< tensor_scalar, tensor_copy (and add-reduce)
};

/// Work of a piece of graph, per rank (the IR is one rank's shard).
struct GraphWork {
  /// Tensor Engine flops (2 per multiply-add) by operand dtype.
  double teFlopsBf16 = 0, teFlopsF32 = 0;
  /// Element operations (one element through one instruction) by the set of
  /// engines able to run them, indexed by an EngineSet mask.
  std::array<double, 8> elementOps{};
  /// Some elementwise work is on bf16 (the Vector engine's wide mode).
  bool elementwiseBf16 = false;
  /// Bytes that must cross HBM at least once: the program's parameters,
  /// inputs and outputs.
  double hbmBytes = 0;

  double teFlops() const { return teFlopsBf16 + teFlopsF32; }
  double elementwiseOps() const;
  GraphWork &operator+=(const GraphWork &o);
};

/// Work of one op. Seam compute ops follow the conventions of Roofline.cpp;
/// a seam.kernel_call is the work of the op it replaced; structure, data
/// movement (reshape, transpose, concat, slice), params and collectives do
/// none. `teRows` is the Tensor Engine's contraction height (profile figure
/// te_array_rows): the DFT convention depends on it.
GraphWork workOf(Operation *op, int64_t teRows);
/// Work of an op named `opName` ("seam.linear", ...) at `sig`: operand and
/// result types and its attributes (a kernel call's config).
GraphWork workOf(llvm::StringRef opName, const KernelSignature &sig,
                 int64_t teRows);

/// Work of one launch, with the bytes that must cross HBM: a func.call of a
/// `seam.program` func (every seam op inside it, kernel sub-programs
/// included) or a top-level seam.kernel_call; its distinct operands and its
/// results cross HBM once each.
GraphWork launchWork(Operation *launch, int64_t teRows);

/// Peaks of one core (one rank), the floor's denominators.
struct EnginePeaks {
  double teFlopsPerNsBf16 = 0, teFlopsPerNsF32 = 0;
  /// Elements per ns of the Vector engine for bf16 and for other dtypes,
  /// and of the Scalar engine and GpSimd.
  double veBf16PerNs = 0, vePerNs = 0, sePerNs = 0, gpPerNs = 0;
  /// HBM bytes per ns: DMA engines x per-engine rate, capped by the core's
  /// share of the chip's HBM bandwidth.
  double dmaBytesPerNs = 0;
  int64_t teRows = 0;

  /// From a hardware profile, with `activeCoresPerChip` cores of a chip
  /// streaming at once (the ranks placed on it).
  static EnginePeaks fromProfile(const ::seam::rt::Profile &profile,
                                 unsigned activeCoresPerChip);
};

/// A floor and what sets it.
struct RooflineFloor {
  double ns = 0; ///< max of the three terms
  double teNs = 0, elementwiseNs = 0, dmaNs = 0;
  /// The elementwise term's engines ("SE", "VE+GP", "VE+SE+GP", ...).
  std::string elementwiseEngines;
  /// "TE", "DMA" or the elementwise engines; "none" when there is no work.
  std::string bound;
};

/// The floor of `work`. The elementwise term is the least time in which VE,
/// SE and GpSimd, running at once, can finish the element operations when
/// each may go to any engine of its set: the maximum over engine subsets S of
/// (operations that only engines in S can run) / (S's combined rate), which
/// is exact for divisible work (Hall's condition of the transport problem).
RooflineFloor rooflineFloor(const GraphWork &work, const EnginePeaks &peaks);

} // namespace mlir::seam

#endif // SEAM_PASSES_ROOFLINE_H
