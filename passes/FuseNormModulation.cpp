//===- FuseNormModulation.cpp - seam-fuse-norm-modulation -----------------===//
//
// Folds a per-feature affine modulation of a non-affine layer_norm into the
// norm's own scale and bias, so that the lowering applies it in the pass
// that already scales by 1 / std instead of in separate elementwise passes
// over the whole activation:
//
//   n * (1 + s) + h, written n + n * s + h (adaLN, DiT and Flux blocks) or
//   as diffusers writes it, n * (1 + s) + h (the 1 + s read by nothing else)
//                       -> layer_norm scale s bias h {scale_offset = 1}
//   n * s + h           -> layer_norm scale s bias h
//   n * s, n + h        -> layer_norm scale s, layer_norm bias h
//
// s and h must be per-feature: D elements on the last dimension (any leading
// dims of size 1), so that they broadcast over every row of n. Every
// intermediate value must have no other user (else it would still be
// computed, and the norm too).
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Builders.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMFUSENORMMODULATION
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

/// D elements on the last dimension, every other dimension 1.
bool perFeature(Value v, int64_t d) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getRank() >= 1 && t.getShape().back() == d &&
         t.getNumElements() == d;
}

/// The operand of a binary `op` other than `known` (null when neither or
/// both are `known`).
Value otherOperand(Operation *op, Value known) {
  Value l = op->getOperand(0), r = op->getOperand(1);
  if (l == known && r != known)
    return r;
  if (r == known && l != known)
    return l;
  return Value();
}

/// The single user of `v` when it is an `OpTy` with the same result type as
/// `v` (no broadcast beyond v's shape).
template <typename OpTy> OpTy soleUser(Value v) {
  if (!v.hasOneUse())
    return OpTy();
  auto op = dyn_cast<OpTy>(*v.getUsers().begin());
  if (!op || op.getResult().getType() != v.getType())
    return OpTy();
  return op;
}

/// A constant 1 (every element), through reshapes: a seam.param with init
/// ones, or init data holding only 1.0.
bool isOne(Value v) {
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  auto p = v.getDefiningOp<ParamOp>();
  if (!p)
    return false;
  if (p.getInit() == ParamInit::ones)
    return true;
  if (p.getInit() != ParamInit::data || !p.getValue())
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(*p.getValue());
  return dense && dense.getElementType().isF32() &&
         llvm::all_of(dense.getValues<float>(),
                      [](float f) { return f == 1.0f; });
}

struct Modulation {
  Value scale, bias;
  double offset = 0.0;
  SmallVector<Operation *> ops; ///< Folded, in program order.
};

/// The modulation applied to `n` (a layer_norm result), or why there is
/// none foldable. Returns nullopt with an empty `why` when n feeds no
/// elementwise add or mul at all (not a candidate).
std::optional<Modulation> matchModulation(Value n, int64_t d,
                                          std::string &why) {
  Modulation m;
  Value cur = n;
  auto users = llvm::to_vector(n.getUsers());
  bool feedsElementwise =
      llvm::any_of(users, [](Operation *u) { return isa<AddOp, MulOp>(u); });
  if (!feedsElementwise)
    return std::nullopt;
  auto sameType = [&](Operation *op) {
    return op->getResult(0).getType() == n.getType();
  };
  auto notPerFeature = [&](StringRef what) {
    why =
        ("n is " + what + " a value that is not per-feature [" + Twine(d) + "]")
            .str();
    return std::nullopt;
  };
  if (users.size() == 2) {
    // n + n * s: a mul by a per-feature s whose only user adds n back.
    if (isa<MulOp>(users[1]))
      std::swap(users[0], users[1]);
    auto mul = dyn_cast<MulOp>(users[0]);
    auto add = dyn_cast<AddOp>(users[1]);
    if (!mul || !add) {
      why = "the normalised value has two users that are not n * s and "
            "n + n * s";
      return std::nullopt;
    }
    Value s = otherOperand(mul, n);
    if (!s || !perFeature(s, d) || !sameType(mul))
      return notPerFeature("multiplied by");
    if (!mul->hasOneUse() || otherOperand(add, n) != mul.getResult() ||
        !sameType(add)) {
      why = "n * s is used other than in n + n * s";
      return std::nullopt;
    }
    m.scale = s;
    m.offset = 1.0;
    m.ops = {mul, add};
    cur = add.getResult();
  } else if (users.size() == 1) {
    if (auto mul = soleUser<MulOp>(n)) {
      Value s = otherOperand(mul, n);
      if (!s || !perFeature(s, d))
        return notPerFeature("multiplied by");
      m.scale = s;
      m.ops = {mul};
      // n * (1 + s), as diffusers writes adaLN: the 1 + s folds into the
      // offset when the sum has no other reader.
      if (auto plus = s.getDefiningOp<AddOp>(); plus && plus->hasOneUse()) {
        for (unsigned i = 0; i < 2; ++i) {
          Value one = plus->getOperand(i), inner = plus->getOperand(1 - i);
          if (isOne(one) && perFeature(inner, d) &&
              inner.getType() == s.getType()) {
            m.scale = inner;
            m.offset = 1.0;
            m.ops = {plus, mul};
            break;
          }
        }
      }
      cur = mul.getResult();
    }
  } else {
    why = "the normalised value has " + std::to_string(users.size()) + " users";
    return std::nullopt;
  }
  // Then + h.
  if (auto add = soleUser<AddOp>(cur)) {
    Value h = otherOperand(add, cur);
    if (h && perFeature(h, d)) {
      m.bias = h;
      m.ops.push_back(add);
    }
  }
  if (m.ops.empty())
    return notPerFeature("added to or multiplied by");
  return m;
}

struct FuseNormModulationPass
    : public seam::impl::SeamFuseNormModulationBase<FuseNormModulationPass> {
  using SeamFuseNormModulationBase::SeamFuseNormModulationBase;
  PassCounter numFused{"seam-fuse-norm-modulation", "fused",
                       "Norms that absorbed their modulation"};
  PassCounter numOpsRemoved{"seam-fuse-norm-modulation", "ops-removed",
                            "Elementwise ops folded into norms"};
  PassCounter numRejected{"seam-fuse-norm-modulation", "rejected",
                          "Modulated norms not fused"};

  void runOnOperation() override {
    SmallVector<LayerNormOp> norms;
    getOperation().walk([&](LayerNormOp ln) {
      if (!ln.getScale() && !ln.getBias())
        norms.push_back(ln);
    });
    for (LayerNormOp ln : norms)
      tryFuse(ln);
  }

  void tryFuse(LayerNormOp ln) {
    auto type = cast<RankedTensorType>(ln.getType());
    int64_t d = type.getShape().back();
    std::string why;
    std::optional<Modulation> m = matchModulation(ln.getResult(), d, why);
    if (!m) {
      if (!why.empty()) {
        decisionRemark(remarks, ln.getLoc())
            << "seam-fuse-norm-modulation: not fused: " << why;
        ++numRejected;
      }
      return;
    }
    if (!fusible(ln) || !llvm::all_of(m->ops, fusible)) {
      decisionRemark(remarks, ln.getLoc())
          << "seam-fuse-norm-modulation: not fused: an op is marked "
          << kNoFuseAttrName;
      ++numRejected;
      return;
    }
    // The fused norm replaces the last folded op, where s and h (which
    // dominate their own uses) and x are all available.
    Operation *last = m->ops.back();
    OpBuilder b(last);
    Location loc = ln.getLoc();
    auto feature = RankedTensorType::get({d}, type.getElementType());
    auto asFeature = [&](Value v) -> Value {
      if (!v || v.getType() == feature)
        return v;
      return b.create<ReshapeOp>(loc, feature, v);
    };
    auto fused = b.create<LayerNormOp>(
        loc, type, ln.getInput(), asFeature(m->scale), asFeature(m->bias),
        ln.getEpsilonAttr(),
        m->offset != 0.0 ? b.getF64FloatAttr(m->offset) : FloatAttr());
    last->getResult(0).replaceAllUsesWith(fused.getResult());
    for (Operation *op : llvm::reverse(m->ops))
      op->erase();
    ln.erase();
    const char *form =
        m->scale && m->bias
            ? (m->offset != 0.0 ? "n * (1 + s) + h" : "n * s + h")
        : m->scale ? (m->offset != 0.0 ? "n * (1 + s)" : "n * s")
                   : "n + h";
    decisionRemark(remarks, fused.getLoc())
        << "seam-fuse-norm-modulation: folded " << form
        << " into layer_norm over " << d << " features (" << m->ops.size()
        << " elementwise op" << (m->ops.size() == 1 ? "" : "s") << " removed)";
    ++numFused;
    numOpsRemoved += m->ops.size();
  }
};

} // namespace
