//===- InsertKernels.cpp - seam-insert-kernels ----------------------------===//
//
// Replaces each op matched by a requested kernel with an opaque
// seam.kernel_call, only where the kernel's published constraints hold. The
// check is the registry's, the same one the kernel_call verifier runs.
//
//===----------------------------------------------------------------------===//
#include "kernels/Registry.h"
#include "passes/Passes.h"
#include "passes/Statistics.h"
#include "passes/Profitability.h"
#include "mlir/IR/Builders.h"

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

  void runOnOperation() override {
    SmallVector<const KernelInfo *> requested;
    for (const std::string &name : kernels) {
      if (name.empty()) // `kernels=` with nothing listed
        continue;
      const KernelInfo *k = lookupKernel(name);
      if (!k) {
        getOperation().emitError()
            << "seam-insert-kernels: unknown kernel '" << name
            << "'; registered kernels: " << knownKernelNames();
        return signalPassFailure();
      }
      requested.push_back(k);
    }
    if (requested.empty())
      return;
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : ops)
      for (const KernelInfo *k : requested)
        if (op->getName().getStringRef() == k->rootOp && tryInsert(op, *k))
          break;
  }

  /// True when `op` was replaced.
  bool tryInsert(Operation *op, const KernelInfo &k) {
    if (auto why = k.isSite(op)) {
      if (!why->empty()) {
        emitRemark(op->getLoc()) << "seam-insert-kernels: kernel '" << k.name
                         << "' not inserted: " << *why;
        ++numRejected;
      }
      return false;
    }
    KernelSignature sig = signatureOfRoot(op);
    if (auto why = k.check(sig)) {
      emitRemark(op->getLoc()) << "seam-insert-kernels: kernel '" << k.name
                       << "' not inserted: " << *why;
      ++numRejected;
      return false;
    }
    std::string why;
    if (!isProfitable(op, ("kernel:" + k.name).str(), why)) {
      emitRemark(op->getLoc()) << "seam-insert-kernels: kernel '" << k.name
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
    emitRemark(call.getLoc()) << "seam-insert-kernels: kernel '" << k.name
                      << "' inserted: " << k.describe(sig);
    op->replaceAllUsesWith(call.getResults());
    op->erase();
    ++numInserted;
    return true;
  }
};

} // namespace
