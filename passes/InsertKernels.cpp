//===- InsertKernels.cpp - seam-insert-kernels ----------------------------===//
//
// Replaces each op matched by a requested kernel with an opaque
// seam.kernel_call, only where the kernel's published constraints hold. The
// check is the registry's, the same one the kernel_call verifier runs.
//
//===----------------------------------------------------------------------===//
#include "kernels/Registry.h"
#include "mlir/IR/Builders.h"
#include "passes/KernelSelection.h"
#include "passes/Passes.h"
#include "passes/Profitability.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMINSERTKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

struct InsertKernelsPass
    : public seam::impl::SeamInsertKernelsBase<InsertKernelsPass> {
  using SeamInsertKernelsBase::SeamInsertKernelsBase;
  PassCounter numInserted{"seam-insert-kernels", "kernel-calls", "Kernel calls inserted"};
  PassCounter numRejected{"seam-insert-kernels", "rejected-sites", "Sites whose constraints fail"};

  /// What happened to one requested kernel in this function.
  struct Outcome {
    int sites = 0;    ///< ops of its root kind that are sites
    int inserted = 0; ///< of which replaced by a call
    int shadowed = 0; ///< root ops already taken by a kernel listed earlier
    const KernelInfo *shadowedBy = nullptr;
  };

  /// A bad kernel list fails here, before any function is touched, with an
  /// error not attached to an op (which would print the whole function).
  LogicalResult initialize(MLIRContext *ctx) override {
    std::string error;
    if (!selectKernels(kernels, error))
      return emitError(UnknownLoc::get(ctx))
             << "seam-insert-kernels: " << error;
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::string error;
    auto requested = selectKernels(kernels, error);
    if (!requested) // reported by initialize
      return signalPassFailure();
    // Outlined programs hold what an earlier run decided.
    if (requested->empty() || func->hasAttr(kProgramAttrName) ||
        func.isExternal())
      return;
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) { ops.push_back(op); });
    SmallVector<Outcome> outcomes(requested->size());
    for (Operation *op : ops) {
      // The op is gone once a kernel replaces it; its name is the context's.
      StringRef opName = op->getName().getStringRef();
      const KernelInfo *taken = nullptr;
      for (auto [k, outcome] : llvm::zip(*requested, outcomes)) {
        if (opName != k->rootOp)
          continue;
        if (taken) {
          ++outcome.shadowed;
          outcome.shadowedBy = taken;
          continue;
        }
        if (tryInsert(op, *k, outcome))
          taken = k;
      }
    }
    // A kernel that replaced nothing is worth a warning: remarks are off in
    // most runs (seam-run), and a misspelt model or a shadowing list is
    // otherwise silent.
    for (auto [k, o] : llvm::zip(*requested, outcomes)) {
      if (o.shadowed)
        func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                           << "' is shadowed by '" << o.shadowedBy->name
                           << "' at " << o.shadowed << " site(s) in @"
                           << func.getSymName() << " (both replace "
                           << k->rootOp << "; the first listed wins)";
      else if (o.sites == 0)
        func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                           << "' matches no site in @" << func.getSymName()
                           << " (no " << k->rootOp << " it applies to)";
      else if (o.inserted == 0)
        func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                           << "' inserted at none of its " << o.sites
                           << " site(s) in @" << func.getSymName()
                           << " (the remarks say why)";
    }
  }

  /// True when `op` was replaced.
  bool tryInsert(Operation *op, const KernelInfo &k, Outcome &outcome) {
    if (auto why = k.isSite(op)) {
      if (!why->empty()) {
        ++outcome.sites;
        decisionRemark(remarks, op->getLoc())
            << "seam-insert-kernels: kernel '" << k.name
            << "' not inserted: " << *why;
        ++numRejected;
      }
      return false;
    }
    ++outcome.sites;
    KernelSignature sig = signatureOfRoot(op);
    if (auto why = k.check(sig)) {
      decisionRemark(remarks, op->getLoc())
          << "seam-insert-kernels: kernel '" << k.name
          << "' not inserted: " << *why;
      ++numRejected;
      return false;
    }
    std::string why;
    if (!isProfitable(op, ("kernel:" + k.name).str(), why)) {
      decisionRemark(remarks, op->getLoc())
          << "seam-insert-kernels: kernel '" << k.name
          << "' legal but not profitable: " << why;
      ++numRejected;
      return false;
    }
    OpBuilder b(op);
    auto call = b.create<KernelCallOp>(op->getLoc(), op->getResultTypes(),
                                       b.getStringAttr(k.name),
                                       op->getOperands(),
                                       sig.config.empty() ? DictionaryAttr()
                                                          : sig.config);
    decisionRemark(remarks, call.getLoc())
        << "seam-insert-kernels: kernel '" << k.name
        << "' inserted: " << k.describe(sig);
    op->replaceAllUsesWith(call.getResults());
    op->erase();
    ++numInserted;
    ++outcome.inserted;
    return true;
  }
};

} // namespace
