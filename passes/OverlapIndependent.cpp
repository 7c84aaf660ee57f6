//===- OverlapIndependent.cpp - seam-overlap-independent ------------------===//
//
// Program-order scheduling at the graph level. Engines issue their
// instructions in program order, so where an op sits decides what it can
// overlap. Work that depends only on the program's arguments (weights and
// the step's inputs, e.g. adaLN's modulation: silu(vec) @ W_mod, gathered
// across ranks) can sit anywhere before its first use. Lowered where the
// import put it, right before its use, its weight stream is on the critical
// path: the DMA queues stream W_mod while the Tensor engine waits, and the
// vector engines wait for both.
//
// This pass moves each such chain back to just after the last layer_norm
// before its first use: a norm keeps the Vector, Scalar and GpSimd engines
// busy and leaves the DMA queues and the Tensor engine idle, which is
// exactly what a matvec streaming its weights needs (the linear lowering
// keeps such a matvec off the vector engines until its single evacuation).
// "Depends only on the arguments" is taken per sample: every result has one
// row (the conditioning vector's work, not the tokens').
// Moving never crosses a use nor an operand's definition, so the program
// computes the same values; only the issue order changes.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"

#include <limits>

#include "llvm/ADT/DenseMap.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMOVERLAPINDEPENDENT
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

struct OverlapIndependentPass
    : public seam::impl::SeamOverlapIndependentBase<OverlapIndependentPass> {
  using SeamOverlapIndependentBase::SeamOverlapIndependentBase;
  PassCounter numMoved{"seam-overlap-independent", "moved",
                       "Argument-only ops moved next to an earlier norm"};
  PassCounter numAnchors{"seam-overlap-independent", "norms-overlapped",
                         "Norms that argument-only work was moved behind"};

  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      schedule(block);
  }

  void schedule(Block &block) {
    // Positions, and which ops depend on the block's arguments alone.
    DenseMap<Operation *, int64_t> pos;
    llvm::DenseSet<Operation *> argOnly;
    int64_t i = 0;
    for (Operation &op : block) {
      pos[&op] = i++;
      if (op.hasTrait<OpTrait::IsTerminator>() || op.getNumRegions() ||
          op.getNumResults() == 0)
        continue;
      // One row: work per sample, not per token (a weight operand, an
      // argument, may have any shape).
      bool oneRow = llvm::all_of(op.getResultTypes(), [](Type t) {
        auto rt = dyn_cast<RankedTensorType>(t);
        return rt && rt.hasStaticShape() &&
               rt.getNumElements() == (rt.getRank() ? rt.getShape().back() : 1);
      });
      bool only = oneRow && llvm::all_of(op.getOperands(), [&](Value v) {
                    if (auto arg = dyn_cast<BlockArgument>(v))
                      return arg.getOwner() == &block;
                    return argOnly.contains(v.getDefiningOp());
                  });
      if (only)
        argOnly.insert(&op);
    }
    // The first use of each argument-only op by other work, in program
    // order (a use through another argument-only op counts at that op's
    // first use), computed backwards.
    DenseMap<Operation *, int64_t> firstUse;
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      if (!argOnly.contains(op))
        continue;
      int64_t first = std::numeric_limits<int64_t>::max();
      for (Operation *user : op->getUsers()) {
        Operation *u = block.findAncestorOpInBlock(*user);
        if (!u)
          continue;
        first = std::min(first, argOnly.contains(u) ? firstUse.lookup(u)
                                                    : pos.lookup(u));
      }
      firstUse[op] = first;
    }
    // layer_norms in program order. (rms_norm, over the heads of q and k, is
    // short and comes just before the attention: moving work behind it
    // measured slower on flux2-klein.)
    SmallVector<Operation *> norms;
    for (Operation *op : ops)
      if (isa<LayerNormOp>(op))
        norms.push_back(op);
    // Move in program order: an op's operands are placed before it.
    DenseMap<Operation *, Operation *> lastPlacedAfter;
    for (Operation *op : ops) {
      if (!argOnly.contains(op))
        continue;
      int64_t use = firstUse.lookup(op);
      // The last norm before the first use.
      Operation *anchor = nullptr;
      for (Operation *n : norms)
        if (pos.lookup(n) < use)
          anchor = n;
      if (!anchor || op->isBeforeInBlock(anchor))
        continue;
      // After the anchor and after every operand's definition; chains moved
      // to the same anchor keep their order.
      Operation *after = anchor;
      if (Operation *prev = lastPlacedAfter.lookup(anchor))
        after = prev;
      for (Value v : op->getOperands())
        if (Operation *d = v.getDefiningOp())
          if (after->isBeforeInBlock(d))
            after = d;
      op->moveAfter(after);
      if (!lastPlacedAfter.count(anchor))
        ++numAnchors;
      lastPlacedAfter[anchor] = op;
      ++numMoved;
      if (!isa<ReshapeOp, SliceOp>(op))
        decisionRemark(remarks, op->getLoc())
            << "seam-overlap-independent: " << op->getName()
            << " moved behind the layer_norm at " << anchor->getLoc()
            << ": it depends only on the program's arguments, so its work "
               "(DMA, Tensor engine) overlaps the norm's (vector engines)";
    }
  }
};

} // namespace
