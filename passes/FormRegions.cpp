//===- FormRegions.cpp - seam-form-regions --------------------------------===//
//
// Decides what is compiled and launched as one program:
//  - eager: lazy-tensor semantics. Each block is traced into its own graph,
//    and a kernel call is a graph break: the fragments before and after it
//    are separate programs and the kernel is a launch of its own.
//  - compile: the whole step is one program; kernel calls stay inside as
//    opaque sub-programs (through HBM, a barrier for the scheduler).
// In both modes a host-fallback op (an FFT op left without a kernel) ends
// the region: its inputs go to the host and its outputs come back.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Builders.h"
#include "passes/Accounting.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMFORMREGIONS
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

bool isHostFallback(Operation *op) {
  auto fc = dyn_cast<FusionClassInterface>(op);
  return fc && fc.needsHostFallback();
}

bool isLoadTimeOp(Operation *op) {
  return op->getNumResults() == 1 && isLoadTimeValue(op->getResult(0));
}

struct FormRegionsPass
    : public seam::impl::SeamFormRegionsBase<FormRegionsPass> {
  using SeamFormRegionsBase::SeamFormRegionsBase;
  PassCounter numRegions{"seam-form-regions", "regions",
                         "Fusion regions formed"};
  PassCounter numKernelCalls{"seam-form-regions", "kernel-calls",
                             "Opaque kernel calls per step"};
  PassCounter numHostOps{"seam-form-regions", "host-fallback-ops",
                         "Ops run on the host per step"};
  PassCounter numLaunches{"seam-form-regions", "launches-per-step",
                          "Program launches per step"};
  PassCounter boundaryBytes{
      "seam-form-regions", "boundary-bytes",
      "Bytes crossing opaque boundaries (kernels, host ops) per step"};
  PassCounter regionIoBytes{
      "seam-form-regions", "region-io-bytes",
      "Activation bytes through HBM at region boundaries per step"};

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func->hasAttr(kProgramAttrName) || func.getBody().empty())
      return;
    bool already = false;
    func.walk([&](FusionOp) { already = true; });
    if (already)
      return;

    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, std::string> blockOf;
    int64_t blocks = flattenBlocks(body, blockOf);
    func->setAttr("seam.blocks", OpBuilder(func).getI64IntegerAttr(blocks));
    hoistLoadTimeOps(body);
    formRegions(body, blockOf);

    StepAccount acc = accountStep(func);
    numRegions += acc.regions;
    numKernelCalls += acc.kernelCalls;
    numHostOps += acc.hostOps;
    numLaunches += acc.launches;
    boundaryBytes += acc.boundaryBytes;
    regionIoBytes += acc.regionIoBytes;
  }

  /// Inlines every seam.block into the function body, remembering each op's
  /// block ("double_stream.3"). Returns the number of blocks.
  int64_t flattenBlocks(Block &body,
                        llvm::DenseMap<Operation *, std::string> &blockOf) {
    SmallVector<BlockOp> blockOps;
    for (Operation &op : body)
      if (auto b = dyn_cast<BlockOp>(op))
        blockOps.push_back(b);
    for (BlockOp b : blockOps) {
      std::string label =
          (b.getKind() + "." + std::to_string(int64_t(b.getIndex()))).str();
      YieldOp yield = b.getYield();
      for (Operation &inner : llvm::make_early_inc_range(
               b.getBody().front().without_terminator())) {
        blockOf[&inner] = label;
        inner.moveBefore(b);
      }
      b.replaceAllUsesWith(yield.getValues());
      b.erase();
    }
    return blockOps.size();
  }

  /// Parameters and expressions of parameters only are load-time values:
  /// they go to HBM once, before any program runs.
  void hoistLoadTimeOps(Block &body) {
    Operation *anchor = nullptr;
    for (Operation &op : body)
      if (!isLoadTimeOp(&op)) {
        anchor = &op;
        break;
      }
    if (!anchor)
      return;
    // Everything after the anchor, in order: no isBeforeInBlock, whose op
    // order each move invalidates (that made the pass quadratic in blocks).
    for (Operation &op : llvm::make_early_inc_range(
             llvm::make_range(std::next(anchor->getIterator()), body.end())))
      if (isLoadTimeOp(&op))
        op.moveBefore(anchor);
  }

  void formRegions(Block &body,
                   llvm::DenseMap<Operation *, std::string> &blockOf) {
    bool eager = mode == RegionMode::Eager;
    SmallVector<Operation *> segment;
    std::string segmentKey;
    llvm::StringMap<int> fragmentCount;

    auto flush = [&](llvm::StringRef endReason) {
      if (segment.empty())
        return;
      std::string name = segmentKey;
      int part = fragmentCount[segmentKey]++;
      if (part > 0 || eager)
        name += ".p" + std::to_string(part);
      FusionOp f = makeRegion(segment, name);
      decisionRemark(remarks, f.getLoc())
          << "seam-form-regions: region '" << name << "' ("
          << (eager ? "eager" : "compile") << "): " << segment.size()
          << " ops, ends at " << endReason;
      segment.clear();
    };

    for (Operation &op :
         llvm::make_early_inc_range(body.without_terminator())) {
      if (isLoadTimeOp(&op))
        continue;
      bool host = isHostFallback(&op);
      auto kc = dyn_cast<KernelCallOp>(op);
      if (host || (eager && kc)) {
        std::string why =
            host ? "host-fallback op " + op.getName().getStringRef().str()
                 : "kernel_call '" + kc.getKernel().str() + "'";
        flush(why);
        if (host)
          decisionRemark(remarks, op.getLoc())
              << "seam-form-regions: " << op.getName()
              << " runs on the host (no kernel replaces it): the region "
                 "splits here";
        continue;
      }
      std::string key =
          eager ? (blockOf.count(&op) ? blockOf[&op] : "top") : "step";
      if (key != segmentKey) {
        flush("the end of " + (segmentKey.empty() ? "?" : segmentKey));
        segmentKey = key;
      }
      segment.push_back(&op);
    }
    flush(eager ? "the end of " + segmentKey : "the end of the step");
  }

  /// Moves `ops` (contiguous, in order) into a new seam.fusion that yields
  /// every value used after it.
  FusionOp makeRegion(ArrayRef<Operation *> ops, llvm::StringRef name) {
    llvm::SetVector<Operation *> inside(ops.begin(), ops.end());
    SmallVector<Value> escaping;
    for (Operation *op : ops)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) {
              return !inside.contains(u) &&
                     !llvm::any_of(ops, [&](Operation *o) {
                       return o->isProperAncestor(u);
                     });
            }))
          escaping.push_back(r);
    OpBuilder b(ops.front());
    SmallVector<Type> types;
    for (Value v : escaping)
      types.push_back(v.getType());
    auto f =
        b.create<FusionOp>(ops.front()->getLoc(), types, b.getStringAttr(name));
    Block *blk = new Block();
    f.getBody().push_back(blk);
    for (Operation *op : ops)
      op->moveBefore(blk, blk->end());
    b.setInsertionPointToEnd(blk);
    b.create<YieldOp>(f.getLoc(), escaping);
    for (auto [i, v] : llvm::enumerate(escaping))
      v.replaceUsesWithIf(f.getResult(i), [&](OpOperand &use) {
        return !f->isProperAncestor(use.getOwner());
      });
    return f;
  }
};

} // namespace
