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
//
// A matvec's weight stream is long, though (28 MB per rank for a
// double-stream block's modulation, ~77 us on trn2's queues), longer than a
// norm. The lowering can run a matvec inside another op instead (see
// InterleavedWork in ConvertSeamToNcore.h): an attention, whose DMA queues
// are otherwise idle, or a streamed linear of many rows, whose matmuls
// leave its queues room. So a matvec goes just before the last attention
// before its first use that has no guest of its own (a linear of the
// tokens read only after it, the single-stream block's MLP projection), or
// else just before the last linear of >= 512 rows; its readers go just
// before their first use, the all_gather itself just after the last
// all_reduce that first use depends on: the collective engine takes it
// after the collective the next norm waits for anyway, not before (where
// it would wait for the matvec), and not after collectives the norm does
// not need (a double-stream block's image norm does not wait for the text
// stream's last all_reduce: the gather behind it held the norm's affine
// columns, and the row loads queued behind those, ~20 us per block).
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

/// Rows (tokens) from which a bf16 linear's matmuls take well over its
/// weight's DMA time: per weight element, 2 x rows FLOPs at 128 x 128 x 2 x
/// 2.4 GHz against 2 bytes at 16 x 23 GB/s (trn2, hardware.md) is
/// rows / 213; at 512 rows, 2.4x.
constexpr int64_t kHostRows = 512;

int64_t rowsOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getRank() == 0)
    return 1;
  return t.getNumElements() / t.getShape().back();
}

struct OverlapIndependentPass
    : public seam::impl::SeamOverlapIndependentBase<OverlapIndependentPass> {
  using SeamOverlapIndependentBase::SeamOverlapIndependentBase;
  PassCounter numMoved{
      "seam-overlap-independent", "moved",
      "Argument-only ops moved (behind a norm, before a host, to a use)"};
  PassCounter numAnchors{"seam-overlap-independent", "norms-overlapped",
                         "Norms that argument-only work was moved behind"};
  PassCounter numHosts{"seam-overlap-independent", "attentions-hosting",
                       "Matvecs moved before an attention to run inside it"};
  PassCounter numLinearHosts{
      "seam-overlap-independent", "linears-hosting",
      "Matvecs moved before a linear of many rows to stream with it"};

  /// The last all_reduce (in program order) that `user` depends on, in
  /// `block`: a collective issued after it does not hold up `user`.
  static Operation *lastAllReduceNeededBy(Block &block, Operation *user) {
    Operation *last = nullptr;
    llvm::SmallPtrSet<Operation *, 32> seen;
    SmallVector<Operation *> stack{user};
    while (!stack.empty()) {
      Operation *o = stack.pop_back_val();
      for (Value v : o->getOperands()) {
        Operation *d = v.getDefiningOp();
        if (!d || d->getBlock() != &block || !seen.insert(d).second)
          continue;
        if (isa<AllReduceOp>(d) && (!last || last->isBeforeInBlock(d)))
          last = d;
        stack.push_back(d);
      }
    }
    return last;
  }

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
    // Attentions that can take an argument-only matvec as their guest (see
    // the lowering's InterleavedWork): the lowering pairs an attention with
    // the nearest earlier linear (not past another attention) whose results
    // are all read after it. One whose stretch already holds such a linear
    // of the tokens (the single-stream block's MLP projection, which fills
    // the Tensor engine better) is not offered.
    SmallVector<Operation *> freeHosts;
    llvm::DenseSet<Operation *> attentionGuests;
    {
      Operation *prevHost = nullptr;
      for (Operation *op : ops) {
        auto attn = dyn_cast<AttentionOp>(op);
        // An argument-only attention (one query row) moves itself: it
        // cannot hold a place for another.
        if (!attn || argOnly.contains(op))
          continue;
        bool taken = false;
        for (Operation *p = attn->getPrevNode(); p && p != prevHost;
             p = p->getPrevNode())
          if (isa<LinearOp>(p) && !argOnly.contains(p) &&
              llvm::all_of(p->getUsers(), [&](Operation *u) {
                Operation *a = block.findAncestorOpInBlock(*u);
                return a && attn->isBeforeInBlock(a);
              })) {
            taken = true;
            attentionGuests.insert(p);
          }
        if (!taken)
          freeHosts.push_back(attn);
        prevHost = attn;
      }
    }
    llvm::DenseSet<Operation *> linearHosts;
    DenseMap<Operation *, Operation *> hostOf;
    llvm::DenseSet<Operation *> atUse;
    // Move in program order: an op's operands are placed before it.
    DenseMap<Operation *, Operation *> lastPlacedAfter;
    // The last all_gather placed just after each all_reduce.
    DenseMap<Operation *, Operation *> lastGatherAfter;
    for (Operation *op : ops) {
      if (!argOnly.contains(op))
        continue;
      int64_t use = firstUse.lookup(op);
      // A matvec streaming a weight argument goes just before the last free
      // attention before its first use: the attention's pipeline runs it
      // slab by slab between its own steps, its DMA queues being idle
      // otherwise. Its readers go to their first use (below).
      auto lin = dyn_cast<LinearOp>(op);
      // Moves `op` just before `host` when its operands are defined there.
      auto hostedBy = [&](Operation *host, PassCounter &counter,
                          llvm::StringRef what, llvm::StringRef why) {
        // Operands defined before the host, and the host (where it is now)
        // before the first use.
        if (!host || !llvm::all_of(op->getOperands(), [&](Value v) {
              Operation *d = v.getDefiningOp();
              return !d || d->isBeforeInBlock(host);
            }))
          return false;
        if (use < int64_t(ops.size()) && !host->isBeforeInBlock(ops[use]))
          return false;
        op->moveBefore(host);
        hostOf[op] = host;
        ++numMoved;
        ++counter;
        decisionRemark(remarks, op->getLoc())
            << "seam-overlap-independent: " << op->getName() << " moved before "
            << what << " at " << host->getLoc()
            << ": it depends only on the program's arguments, and " << why;
        return true;
      };
      if (lin && !lin.getBias() && !lin.getScale() &&
          isa<BlockArgument>(lin.getWeight())) {
        Operation *host = nullptr;
        for (Operation *h : freeHosts)
          if (pos.lookup(h) < use)
            host = h;
        if (hostedBy(host, numHosts, "the attention",
                     "the attention's pipeline can run its matmuls between "
                     "its own steps while its DMA queues, otherwise idle, "
                     "stream the weight")) {
          llvm::erase(freeHosts, host);
          continue;
        }
        // Else just before the last linear of many tokens before the first
        // use: its matmuls take several times its weight's DMA time, and
        // the matvec's weight streams in that slack, slab by slab with the
        // linear's (the lowering's choice; it lowers the matvec first, in
        // place, when their slabs do not fit together).
        Operation *linHost = nullptr;
        for (Operation *l : ops) {
          if (pos.lookup(l) >= use)
            break;
          auto candidate = dyn_cast<LinearOp>(l);
          if (candidate && !argOnly.contains(l) &&
              !attentionGuests.contains(l) && !linearHosts.contains(l) &&
              rowsOf(candidate.getInput()) >= kHostRows)
            linHost = l;
        }
        if (hostedBy(linHost, numLinearHosts, "the linear",
                     "that linear's matmuls leave its DMA queues room for "
                     "this weight")) {
          linearHosts.insert(linHost);
          continue;
        }
      }
      // The readers of a matvec moved before its host (its all_gather, and
      // their views) go just before their first use (the all_gather just
      // after the last all_reduce that use depends on): the lowering
      // requires a guest's readers after its host, and there the collective
      // engine takes them after the collectives of the host's block that
      // the next norm waits for, not before.
      if (use < int64_t(ops.size()) && llvm::any_of(
                                           op->getOperands(),
                                           [&](Value v) {
                                             Operation *d = v.getDefiningOp();
                                             return hostOf.count(d) ||
                                                    atUse.contains(d);
                                           })) {
        Operation *reduce = nullptr, *after = nullptr;
        if (isa<AllGatherOp>(op))
          reduce = lastAllReduceNeededBy(block, ops[use]);
        if (reduce) {
          // Gathers placed behind the same all_reduce keep their order.
          after = reduce;
          if (Operation *prev = lastGatherAfter.lookup(reduce))
            after = prev;
        }
        if (after && after->isBeforeInBlock(ops[use]) &&
            llvm::all_of(op->getOperands(), [&](Value v) {
              Operation *d = v.getDefiningOp();
              return !d || d->getBlock() != &block || d->isBeforeInBlock(after);
            })) {
          op->moveAfter(after);
          lastGatherAfter[reduce] = op;
        } else {
          op->moveBefore(ops[use]);
        }
        atUse.insert(op);
        ++numMoved;
        continue;
      }
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
