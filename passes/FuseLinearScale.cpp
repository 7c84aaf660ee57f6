//===- FuseLinearScale.cpp - seam-fuse-linear-scale
//------------------------===//
//
// Epilogue fusion of a column scale: `linear(x, W) * g`, with g a row (N
// elements, broadcast over the tokens: adaLN's gate), becomes
// `linear(x, W) scale g`. The lowering multiplies each output block by g as
// it leaves PSUM: without a bias or an activation that multiply is the
// evacuation itself (a tensor_tensor reading PSUM costs what the copy it
// replaces costs), instead of a separate pass over the whole result.
//
// Through an all_reduce too: all_reduce(linear(x, W)) * g is
// all_reduce(linear(x, W) * g) when g is the same on every rank (the sum is
// linear), which holds when g comes from a collective (all_gather,
// all_reduce), through views. A row-parallel projection's gate then rides
// in its evacuation before the reduction.
//
// Legal when the product is the linear's (and the all_reduce's) only use
// and the linear has no scale yet. A row computed after the linear by views
// alone (an exporter's unsqueeze of the gate, placed at its use) moves up.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Builders.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMFUSELINEARSCALE
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

/// Whether `v` (through reshapes and slices) is a collective's result: the
/// same on every rank.
bool replicated(Value v) {
  while (Operation *d = v.getDefiningOp()) {
    if (isa<AllGatherOp, AllReduceOp>(d))
      return true;
    if (!isa<ReshapeOp, SliceOp>(d))
      return false;
    v = d->getOperand(0);
  }
  return false;
}

/// Whether `g` is a row of `n` elements (every dim but the last of size 1).
bool isRow(Value g, int64_t n) {
  auto t = dyn_cast<RankedTensorType>(g.getType());
  return t && t.hasStaticShape() && t.getRank() >= 1 &&
         t.getShape().back() == n && t.getNumElements() == n;
}

/// When `g` is computed after `at` (an op of g's block) only by views
/// (reshape, slice: an exporter's unsqueeze of an adaLN chunk placed where
/// it is used) of a value defined before `at`, lists those views, first
/// first, into `views` (moving them before `at` keeps the program's
/// meaning) and returns true.
bool viewsToHoist(Value g, Operation *at, SmallVectorImpl<Operation *> &views) {
  Block *block = at->getBlock();
  Value v = g;
  SmallVector<Operation *> chain;
  while (Operation *d = v.getDefiningOp()) {
    if (d->getBlock() != block || d->isBeforeInBlock(at))
      break; // defined before `at` (or in an enclosing block)
    if (!isa<ReshapeOp, SliceOp>(d) || chain.size() >= 8)
      return false;
    chain.push_back(d);
    v = d->getOperand(0);
  }
  if (chain.empty())
    return false;
  views.assign(chain.rbegin(), chain.rend());
  return true;
}

struct FuseLinearScalePass
    : public seam::impl::SeamFuseLinearScaleBase<FuseLinearScalePass> {
  using SeamFuseLinearScaleBase::SeamFuseLinearScaleBase;
  PassCounter numFused{"seam-fuse-linear-scale", "fused",
                       "Column scales folded into their linear"};
  PassCounter numThroughReduce{"seam-fuse-linear-scale", "through-all-reduce",
                               "Of them, moved before an all_reduce"};
  PassCounter numRejected{"seam-fuse-linear-scale", "rejected",
                          "Products of a linear not folded"};

  void runOnOperation() override {
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp m) { muls.push_back(m); });
    for (MulOp m : muls)
      tryFuse(m);
  }

  void tryFuse(MulOp mul) {
    for (unsigned i = 0; i < 2; ++i) {
      Value y = mul->getOperand(i), g = mul->getOperand(1 - i);
      auto reduce = y.getDefiningOp<AllReduceOp>();
      auto lin = reduce ? reduce->getOperand(0).getDefiningOp<LinearOp>()
                        : y.getDefiningOp<LinearOp>();
      if (!lin || y.getType() != mul.getType())
        continue;
      int64_t n = lin.getType().getShape().back();
      if (!isRow(g, n))
        continue;
      auto reject = [&](const Twine &why) {
        decisionRemark(remarks, mul.getLoc())
            << "seam-fuse-linear-scale: product not folded into its linear: "
            << why.str();
        ++numRejected;
      };
      if (!fusible(lin) || !fusible(mul) || (reduce && !fusible(reduce)))
        return reject(Twine("an op is marked ") + kNoFuseAttrName);
      if (lin.getScale())
        return reject("the linear already scales its columns");
      if (!lin->hasOneUse() || (reduce && !reduce->hasOneUse()))
        return reject("the linear's result has other users");
      if (reduce && !replicated(g))
        return reject("the scale is not known to be the same on every rank "
                      "(it does not come from a collective), so it cannot "
                      "move before the all_reduce");
      // The linear gets g as an operand: g must be defined before it, or be
      // views (reshape, slice) of a value that is, which move up.
      SmallVector<Operation *> hoist;
      if (Operation *gDef = g.getDefiningOp()) {
        Operation *at = gDef->getBlock()->findAncestorOpInBlock(*lin);
        if (!at || (!gDef->isBeforeInBlock(at) && !viewsToHoist(g, at, hoist)))
          return reject("the scale is computed after the linear");
      }
      if (!hoist.empty()) {
        Operation *at = hoist.front()->getBlock()->findAncestorOpInBlock(*lin);
        for (Operation *v : hoist)
          v->moveBefore(at);
      }
      OpBuilder b(lin);
      auto fused = b.create<LinearOp>(
          lin.getLoc(), lin.getType(), lin.getInput(), lin.getWeight(),
          lin.getBias(), g, lin.getActivationAttr());
      for (NamedAttribute a : lin->getDiscardableAttrs())
        fused->setAttr(a.getName(), a.getValue());
      lin.getResult().replaceAllUsesWith(fused.getResult());
      lin.erase();
      Value result = reduce ? reduce->getResult(0) : Value(fused.getResult());
      mul.getResult().replaceAllUsesWith(result);
      mul.erase();
      decisionRemark(remarks, fused.getLoc())
          << "seam-fuse-linear-scale: the product by a row of " << n
          << " applied as the linear's output leaves PSUM"
          << (reduce ? " (before the all_reduce: the row comes from a "
                       "collective, the same on every rank)"
                     : "");
      ++numFused;
      if (reduce)
        ++numThroughReduce;
      return;
    }
  }
};

} // namespace
