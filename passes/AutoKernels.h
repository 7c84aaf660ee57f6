//===- AutoKernels.h - kernels=auto: kernel or fusion by simulation -*- C++
//-*-===//
//
// The decision behind `seam-insert-kernels{kernels=auto}`:
//  1. Every legal (site, candidate kernel) pair is grouped by its window:
//     the `seam.block` holding the site (or the site alone outside blocks).
//  2. Structurally identical windows (same ops, types, attributes; parameter
//     names, seeds and block indices aside) are decided once, on the first.
//  3. Per distinct window, candidates are tried greedily in list order, each
//     against the best set so far; a kernel replacing the same op kind as an
//     accepted one is tried in its place. A candidate stays only when the
//     step model (KernelCostModel.h) times the window strictly faster.
// Greedy in list order rather than jointly over all subsets: with k
// candidates it costs k + 1 simulations per distinct window instead of 2^k,
// and the kernels of one window interact only through the op kinds they
// replace (rope vs fused attention, flash-attn vs flash-attn-stable), which
// the in-place trial covers.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_AUTOKERNELS_H
#define SEAM_PASSES_AUTOKERNELS_H

#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/KernelCostModel.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::seam {

/// A legal site of a candidate kernel (constraints hold).
struct AutoCandidate {
  Operation *site;
  const KernelInfo *kernel;
};

/// One decision: a candidate kernel in one distinct window.
struct AutoDecision {
  unsigned group = 0; ///< the distinct window it decides (AutoPlan)
  std::string window; ///< the first window of its kind ("double_stream.0")
  int windows = 0;    ///< identical windows the decision covers
  std::string kernel;
  std::string replaces;   ///< the op kind it replaces ("seam.attention")
  int sites = 0;          ///< sites per window
  StepCost with, without; ///< window step with the kernel, and without it
  std::string versus;     ///< kernel it displaced in the trial, if any
  bool inserted = false;  ///< kept in the end
  std::string reason;     ///< the parts of the step that moved most
  /// "kernel 0.912 ms vs fused 0.874 ms (+4.3%): not inserted (...)"
  std::string describe() const;
};

/// What the decision keeps: the candidates to insert, and every decision.
struct AutoPlan {
  llvm::SmallVector<AutoCandidate> insert;
  std::vector<AutoDecision> decisions;
  /// Per candidate site: its window ("double_stream.3") and the distinct
  /// window (group) deciding it.
  llvm::DenseMap<Operation *, std::string> windowOf;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  int simulations = 0;
};

/// Decides the candidates of `func` (see above). Fails with `error` when no
/// step model is installed or a window without kernels cannot be timed; a
/// trial that cannot be timed is a rejection with that reason.
FailureOr<AutoPlan> decideKernels(func::FuncOp func,
                                  llvm::ArrayRef<AutoCandidate> candidates,
                                  llvm::ArrayRef<const KernelInfo *> order,
                                  const CostQuery &query, std::string &error);

/// The op a site is decided in: its outermost enclosing seam.block, or the
/// site itself outside blocks (also --explain-kernels' class of a site).
Operation *windowRoot(Operation *site);
/// "double_stream.3" for a block, else the op's name and location.
std::string windowLabel(Operation *root);

/// Replaces `site` by a `seam.kernel_call` of `kernel` (constraints already
/// checked). Returns the call.
Operation *replaceWithKernelCall(Operation *site, const KernelInfo &kernel);

/// The attribute on the step function recording the decisions.
constexpr llvm::StringLiteral kKernelDecisionsAttr = "seam.kernel_decisions";
ArrayAttr decisionsAttr(MLIRContext *ctx,
                        llvm::ArrayRef<AutoDecision> decisions);
/// The decisions recorded on a step function (empty without the attribute);
/// of the times, only the steps (`with.stepNs`, `without.stepNs`) are kept.
std::vector<AutoDecision> decisionsOf(Operation *step);

/// Sites a requested kernel could not take (its published constraints fail,
/// or the site is not one it supports), grouped by kernel and reason; the
/// step function carries them (`seam.kernel_rejections`, fixed and automatic
/// kernel lists alike) so that seam-report and seam-run report them.
struct KernelRejection {
  std::string kernel;
  std::string replaces; ///< the op kind ("seam.rope")
  std::string reason;   ///< "seq 768 > 512"
  int sites = 0;
};
constexpr llvm::StringLiteral kKernelRejectionsAttr = "seam.kernel_rejections";
ArrayAttr rejectionsAttr(MLIRContext *ctx,
                         llvm::ArrayRef<KernelRejection> rejections);
std::vector<KernelRejection> rejectionsOf(Operation *step);

} // namespace mlir::seam

#endif // SEAM_PASSES_AUTOKERNELS_H
