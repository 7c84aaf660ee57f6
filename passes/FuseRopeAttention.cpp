//===- FuseRopeAttention.cpp - seam-fuse-rope-attention -------------------===//
#include "mlir/IR/Builders.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMFUSEROPEATTENTION
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

/// How q (or k) was rotated: one rope, or a sequence concatenation of
/// per-stream ropes.
struct RopeSource {
  SmallVector<RopeOp> ropes;
  ConcatOp concat; ///< null for a single rope
};

std::optional<RopeSource> ropeSource(Value v) {
  if (auto r = v.getDefiningOp<RopeOp>())
    return RopeSource{{r}, nullptr};
  auto cat = v.getDefiningOp<ConcatOp>();
  if (!cat || int64_t(cat.getDim()) != 2)
    return std::nullopt;
  RopeSource src{{}, cat};
  for (Value in : cat.getInputs()) {
    auto r = in.getDefiningOp<RopeOp>();
    if (!r)
      return std::nullopt;
    src.ropes.push_back(r);
  }
  return src;
}

/// Legality: same tables position by position, nothing else uses the
/// rotated values (else the rope would still be computed: no gain, and the
/// fused attention would recompute it).
std::optional<std::string> checkLegality(AttentionOp att, RopeSource &q,
                                         RopeSource &k) {
  if (q.ropes.size() != k.ropes.size())
    return std::string("q and k are rotated in different pieces");
  for (auto [rq, rk] : llvm::zip(q.ropes, k.ropes)) {
    if (rq.getCos() != rk.getCos() || rq.getSin() != rk.getSin())
      return std::string("q and k use different rope tables");
    if (rq.getInput().getType().getDimSize(2) !=
        rk.getInput().getType().getDimSize(2))
      return std::string("q and k pieces have different sequence lengths");
  }
  for (RopeSource *s : {&q, &k}) {
    for (RopeOp r : s->ropes)
      if (!r->hasOneUse() && !(s == &k && r.getResult() == att.getQ()))
        return std::string("a rotated value has other users");
    if (s->concat && !s->concat->hasOneUse() &&
        !(s == &k && s->concat.getResult() == att.getQ()))
      return std::string("the concatenated rotated value has other users");
  }
  return std::nullopt;
}

/// Concatenates pieces along `dim` (or returns the single piece).
Value concatOrSingle(OpBuilder &b, Location loc, ArrayRef<Value> pieces,
                     int64_t dim) {
  if (pieces.size() == 1)
    return pieces.front();
  auto first = cast<RankedTensorType>(pieces.front().getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (Value p : pieces)
    shape[dim] += cast<RankedTensorType>(p.getType()).getDimSize(dim);
  return b.create<ConcatOp>(
      loc, RankedTensorType::get(shape, first.getElementType()), pieces,
      b.getI64IntegerAttr(dim));
}

struct FuseRopeAttentionPass
    : public seam::impl::SeamFuseRopeAttentionBase<FuseRopeAttentionPass> {
  using SeamFuseRopeAttentionBase::SeamFuseRopeAttentionBase;
  PassCounter numFused{"seam-fuse-rope-attention", "fused",
                       "Attentions that absorbed their rope"};
  PassCounter numRejected{"seam-fuse-rope-attention", "rejected",
                          "Attentions fed by rope, not fused"};
  void runOnOperation() override {
    SmallVector<AttentionOp> atts;
    getOperation().walk([&](AttentionOp a) {
      if (!a.getRopeCos())
        atts.push_back(a);
    });
    for (AttentionOp att : atts)
      tryFuse(att);
  }

  void tryFuse(AttentionOp att) {
    auto q = ropeSource(att.getQ()), k = ropeSource(att.getK());
    if (!q && !k)
      return; // not a candidate
    if (!q || !k) {
      decisionRemark(remarks, att.getLoc())
          << "seam-fuse-rope-attention: not fused: only " << (q ? "q" : "k")
          << " is rotated by seam.rope";
      ++numRejected;
      return;
    }
    SmallVector<Operation *> parts{att};
    for (RopeSource *s : {&*q, &*k})
      llvm::append_range(parts, s->ropes);
    if (!llvm::all_of(parts, fusible)) {
      decisionRemark(remarks, att.getLoc())
          << "seam-fuse-rope-attention: not fused: an op is marked "
          << kNoFuseAttrName;
      ++numRejected;
      return;
    }
    if (auto why = checkLegality(att, *q, *k)) {
      decisionRemark(remarks, att.getLoc())
          << "seam-fuse-rope-attention: not fused: " << *why;
      ++numRejected;
      return;
    }
    OpBuilder b(att);
    Location loc = att.getLoc();
    SmallVector<Value> qs, ks, coss, sins;
    for (auto [rq, rk] : llvm::zip(q->ropes, k->ropes)) {
      qs.push_back(rq.getInput());
      ks.push_back(rk.getInput());
      coss.push_back(rq.getCos());
      sins.push_back(rq.getSin());
    }
    Value newQ = concatOrSingle(b, loc, qs, 2);
    Value newK = concatOrSingle(b, loc, ks, 2);
    Value cos = concatOrSingle(b, loc, coss, 0);
    Value sin = concatOrSingle(b, loc, sins, 0);
    auto fused =
        b.create<AttentionOp>(loc, att.getType(), newQ, newK, att.getV(), cos,
                              sin, att.getScaleAttr(), att.getCausalAttr());
    att.replaceAllUsesWith(fused.getResult());
    att.erase();
    // q and k may share ops (self-attention on one rotated value).
    llvm::SetVector<Operation *> dead;
    for (RopeSource *s : {&*q, &*k})
      if (s->concat)
        dead.insert(s->concat);
    for (RopeSource *s : {&*q, &*k})
      for (RopeOp r : s->ropes)
        dead.insert(r);
    for (Operation *op : dead)
      if (op->use_empty())
        op->erase();
    decisionRemark(remarks, fused.getLoc())
        << "seam-fuse-rope-attention: fused rope into "
           "attention over "
        << fused.getQ().getType().getDimSize(2) << " tokens"
        << (q->ropes.size() > 1
                ? " (through a concatenation of " +
                      std::to_string(q->ropes.size()) + " rotated streams)"
                : std::string());
    ++numFused;
  }
};

} // namespace
