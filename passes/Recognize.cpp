//===- Recognize.cpp - seam-recognize: fused ops from primitive graphs ----===//
//
// A framework exports primitives (an ONNX MatMul, Add, Erf, ReduceMean,
// Softmax ...). This pass finds the patterns they form and rewrites each
// into the fused seam op the compiler lowers well, as XLA's fusion recovers
// structure from HLO:
//  - matmul(x, W) (+ b), W [K, N] and b [N] load-time values -> linear;
//  - x * 0.5 * (1 + erf(x / sqrt 2)) -> gelu; its tanh form -> gelu_tanh;
//    x * sigmoid(x) -> silu;
//  - x cos + concat(-x2, x1) sin (rotate-half) -> rope;
//  - (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) (* g) (+ b) ->
//    layer_norm; x / sqrt(mean(x^2) + eps) (* g) -> rms_norm;
//  - matmul(softmax(matmul(q, k^T) * s), v) over [B, H, S, D] -> attention.
// Every match is checked for its exact constants and for single use of
// its intermediates; a near miss keeps its primitives (they run on the
// host) and gets a remark that says what did not hold.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/DeviceSupport.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <map>

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMRECOGNIZE
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// A value computed from parameters alone (params and data movement of
/// params): seam-run evaluates it once at load time.
bool isLoadTime(Value v) {
  Operation *d = v.getDefiningOp();
  if (!d)
    return false;
  if (isa<ParamOp>(d))
    return true;
  if (isa<TransposeOp, ReshapeOp, SliceOp>(d))
    return isLoadTime(d->getOperand(0));
  return false;
}

/// The value of a one-valued constant (every element equal), through
/// reshapes: a seam.param with init data, zeros or ones.
std::optional<double> splat(Value v) {
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  auto p = v.getDefiningOp<ParamOp>();
  if (!p)
    return std::nullopt;
  if (p.getInit() == ParamInit::zeros)
    return 0.0;
  if (p.getInit() == ParamInit::ones)
    return 1.0;
  if (p.getInit() != ParamInit::data)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(*p.getValue());
  if (!dense)
    return std::nullopt;
  auto values = dense.getValues<float>();
  float first = *values.begin();
  for (float f : values)
    if (f != first)
      return std::nullopt;
  return double(first);
}

bool near(std::optional<double> v, double want, double rel = 1e-5) {
  return v && std::fabs(*v - want) <= rel * std::fabs(want);
}

/// The operand of binary `op` other than `x`, when one operand is `x`.
Value other(Operation *op, Value x) {
  if (op->getOperand(0) == x)
    return op->getOperand(1);
  if (op->getOperand(1) == x)
    return op->getOperand(0);
  return {};
}

/// The single user of `v`, if it has exactly one use.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// A row of `n` elements: [n] or [1, ..., 1, n].
bool isRowOf(Value v, int64_t n) {
  auto s = shapeOf(v);
  if (s.empty() || s.back() != n)
    return false;
  for (int64_t d : s.drop_back())
    if (d != 1)
      return false;
  return true;
}

/// A reduce mean over the last axis only, dims kept.
bool isLastAxisMean(Operation *op, Value x) {
  auto r = dyn_cast_or_null<ReduceOp>(op);
  int64_t rank = int64_t(shapeOf(x).size());
  return r && r.getInput() == x && r.getKind() == ReduceKind::mean &&
         r.getKeepdims() && r.getAxes().size() == 1 &&
         r.getAxes()[0] == rank - 1;
}

struct RecognizePass : public seam::impl::SeamRecognizeBase<RecognizePass> {
  using SeamRecognizeBase::SeamRecognizeBase;
  PassCounter numLinear{"seam-recognize", "linear",
                        "matmul (+ add) recognised as linear"};
  PassCounter numActivation{"seam-recognize", "activation",
                            "Activations (gelu, silu) recognised"};
  PassCounter numNorm{"seam-recognize", "norm",
                      "Norms (layer_norm, rms_norm) recognised"};
  PassCounter numAttention{"seam-recognize", "attention",
                           "softmax(q k^T s) v recognised as attention"};
  PassCounter numRope{"seam-recognize", "rope", "Rotate-half RoPE recognised"};
  PassCounter numPackedQkv{"seam-recognize", "packed-qkv",
                           "Linears split three ways marked as fused QKV"};
  PassCounter numMissed{"seam-recognize", "near-miss",
                        "Partial patterns left as primitives"};

  void missed(Location loc, const Twine &why) {
    decisionRemark(remarks, loc) << "seam-recognize: " << why.str();
    ++numMissed;
  }
  /// A rewrite made: its remark, and one more of `kind` (the fused op).
  void recognised(Location loc, llvm::StringRef kind, const Twine &what) {
    decisionRemark(remarks, loc) << "seam-recognize: " << what.str();
    ++tally[kind.str()];
  }
  /// What this run recognised, by fused op: recorded on the function as
  /// `seam.recognised` (seam-run reports it).
  std::map<std::string, int64_t> tally;

  /// Ops the rewrites erased (the walks' lists may still hold them).
  llvm::DenseSet<Operation *> erased;

  void runOnOperation() override {
    erased.clear();
    tally.clear();
    recogniseAll();
    if (tally.empty())
      return;
    getOperation()->setAttr(kRecognisedAttrName,
                            countsAttr(&getContext(), tally));
  }

  void recogniseAll() {
    // Norms and activations first: their multiplies and adds must not be
    // taken as a linear's bias.
    SmallVector<ReduceOp> reduces;
    getOperation().walk([&](ReduceOp r) { reduces.push_back(r); });
    for (ReduceOp r : reduces)
      if (!erased.contains(r))
        recogniseNorm(r);
    SmallVector<Operation *> acts;
    getOperation().walk([&](Operation *op) {
      if (isa<ErfOp, SigmoidOp, TanhOp>(op))
        acts.push_back(op);
    });
    SmallVector<ConcatOp> concats;
    getOperation().walk([&](ConcatOp c) { concats.push_back(c); });
    for (ConcatOp c : concats)
      if (!erased.contains(c))
        recogniseRope(c);
    for (Operation *op : acts)
      if (!erased.contains(op))
        recogniseActivation(op);
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp s) { softmaxes.push_back(s); });
    for (SoftmaxOp s : softmaxes)
      if (!erased.contains(s))
        recogniseAttention(s);
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp m) { matmuls.push_back(m); });
    for (MatmulOp m : matmuls)
      if (!erased.contains(m))
        recogniseLinear(m);
  }

  // linear ------------------------------------------------------------------
  void recogniseLinear(MatmulOp mm) {
    Value x = mm.getLhs(), w = mm.getRhs();
    if (shapeOf(w).size() != 2 || shapeOf(x).size() < 2)
      return missed(mm.getLoc(),
                    "matmul not recognised as linear: the weight is not a "
                    "matrix or the input not at least 2-D");
    if (!isLoadTime(w))
      return missed(mm.getLoc(),
                    "matmul not recognised as linear: its right operand is "
                    "computed, not a parameter");
    int64_t n = shapeOf(w)[1];
    Value bias;
    Operation *add = soleUser(mm.getResult());
    if (add && isa<AddOp>(add)) {
      Value b = other(add, mm.getResult());
      if (b && isLoadTime(b) && isRowOf(b, n) &&
          add->getResult(0).getType() == mm.getType())
        bias = b;
    }
    OpBuilder builder(bias ? add : mm.getOperation());
    if (bias && shapeOf(bias).size() != 1)
      bias = builder.create<ReshapeOp>(
          bias.getLoc(),
          RankedTensorType::get({n}, mm.getType().getElementType()), bias);
    auto lin = builder.create<LinearOp>(mm.getLoc(), mm.getType(), x, w, bias,
                                        Value(), StringAttr());
    ++numLinear;
    recognised(mm.getLoc(), "linear",
               Twine("matmul") + (bias ? " + add" : "") +
                   " recognised as linear (K = " + Twine(shapeOf(w)[0]) +
                   ", N = " + Twine(n) + ")");
    if (bias) {
      add->getResult(0).replaceAllUsesWith(lin.getResult());
      add->erase();
    } else {
      mm.getResult().replaceAllUsesWith(lin.getResult());
    }
    mm.erase();
    markPackedQkv(lin);
  }

  /// A packed in_proj (nn.MultiheadAttention's, GPT's c_attn): one linear
  /// whose only readers are three slices of N / 3 columns at 0, N / 3 and
  /// 2 N / 3, the query, key and value. It is marked as seam-fuse-qkv marks
  /// the projection it builds, so the qkv kernel can take it.
  void markPackedQkv(LinearOp lin) {
    int64_t n = shapeOf(lin.getResult()).back();
    SmallVector<int64_t> starts;
    for (Operation *u : lin->getUsers()) {
      auto s = dyn_cast<SliceOp>(u);
      if (!s)
        return;
      auto offs = s.getOffsets();
      auto size = shapeOf(s.getResult());
      for (size_t d = 0; d + 1 < offs.size(); ++d)
        if (offs[d] != 0 || size[d] != shapeOf(lin.getResult())[d])
          return;
      if (size.back() * 3 != n)
        return;
      starts.push_back(offs.back());
    }
    llvm::sort(starts);
    if (starts.size() != 3 || starts[0] != 0 || starts[1] != n / 3 ||
        starts[2] != 2 * n / 3)
      return;
    // Three thirds alone are not a QKV (adaLN's shift, scale and gate are
    // too): each part must reach one role of an attention, q, k and v.
    unsigned all = 0;
    bool single = true;
    for (Operation *u : lin->getUsers()) {
      unsigned r = attentionRoles(u->getResult(0));
      single &= llvm::popcount(r) == 1;
      all |= r;
    }
    if (!single || all != 7u)
      return missed(lin.getLoc(),
                    "the linear's three slices of " + Twine(n / 3) +
                        " columns not marked as a packed QKV projection: "
                        "they do not feed an attention's q, k and v one "
                        "each");
    Builder b(lin.getContext());
    lin->setAttr("seam.fused_qkv",
                 b.getArrayAttr({b.getStringAttr("q"), b.getStringAttr("k"),
                                 b.getStringAttr("v")}));
    ++numPackedQkv;
    recognised(lin.getLoc(), "packed_qkv",
               "the linear's three slices of " + Twine(n / 3) +
                   " columns recognised as a packed QKV "
                   "projection");
  }

  // activations ---------------------------------------------------------------
  void recogniseActivation(Operation *op) {
    if (auto sig = dyn_cast<SigmoidOp>(op)) {
      Value x = sig.getInput();
      Operation *mul = soleUser(sig.getResult());
      if (!mul || !isa<MulOp>(mul) || other(mul, sig.getResult()) != x)
        return missed(op->getLoc(), "sigmoid not recognised as silu: its "
                                    "only user is not x * sigmoid(x)");
      replaceWith<SiluOp>(mul, x, op->getLoc(),
                          "x * sigmoid(x) recognised as silu");
      return;
    }
    if (auto t = dyn_cast<TanhOp>(op))
      return recogniseTanhGelu(t);
    // (x * (erf(x / sqrt 2) + 1)) * 0.5, or 0.5 x (...) in either order.
    auto erf = cast<ErfOp>(op);
    Operation *scaled = erf.getInput().getDefiningOp();
    Value x;
    if (auto div = dyn_cast_or_null<DivOp>(scaled);
        div && near(splat(div.getRhs()), std::sqrt(2.0), 1e-4))
      x = div.getLhs();
    else if (auto mul = dyn_cast_or_null<MulOp>(scaled)) {
      for (unsigned i = 0; i < 2; ++i)
        if (near(splat(mul->getOperand(i)), std::sqrt(0.5), 1e-4))
          x = mul->getOperand(1 - i);
    }
    if (!x)
      return missed(op->getLoc(), "erf not recognised as gelu: its input is "
                                  "not x / sqrt(2)");
    Operation *add = soleUser(erf.getResult());
    Value one = add && isa<AddOp>(add) ? other(add, erf.getResult()) : Value();
    if (!one || !near(splat(one), 1.0))
      return missed(op->getLoc(), "erf not recognised as gelu: its only user "
                                  "is not erf(...) + 1");
    Operation *mul1 = soleUser(add->getResult(0));
    if (!mul1 || !isa<MulOp>(mul1))
      return missed(op->getLoc(), "erf not recognised as gelu: 1 + erf(...) "
                                  "is not multiplied");
    Operation *last;
    Value rest = other(mul1, add->getResult(0));
    if (rest == x) { // x * (1 + erf) then * 0.5
      last = soleUser(mul1->getResult(0));
      if (!last || !isa<MulOp>(last) ||
          !near(splat(other(last, mul1->getResult(0))), 0.5))
        return missed(op->getLoc(), "erf not recognised as gelu: x (1 + "
                                    "erf(x / sqrt 2)) is not halved");
    } else { // (0.5 x) * (1 + erf)
      auto half = rest ? rest.getDefiningOp<MulOp>() : MulOp();
      if (!half || !near(splat(other(half, x)), 0.5))
        return missed(op->getLoc(), "erf not recognised as gelu: (1 + "
                                    "erf(x / sqrt 2)) is not multiplied by "
                                    "x / 2");
      last = mul1;
    }
    if (last->getResult(0).getType() != x.getType())
      return missed(op->getLoc(), "erf not recognised as gelu: the product "
                                  "broadcasts x to another shape");
    replaceWith<GeluOp>(last, x, op->getLoc(),
                        "x (1 + erf(x / sqrt 2)) / 2 recognised as gelu");
  }

  /// x (x^2) or x^3 (pow): the cube of x.
  static bool isCubeOf(Value v, Value x) {
    Operation *d = v.getDefiningOp();
    if (auto p = dyn_cast_or_null<PowOp>(d))
      return p.getLhs() == x && near(splat(p.getRhs()), 3.0);
    if (auto m = dyn_cast_or_null<MulOp>(d)) {
      Value sq = other(m, x);
      auto sqm = sq ? sq.getDefiningOp<MulOp>() : MulOp();
      return sqm && sqm.getLhs() == x && sqm.getRhs() == x;
    }
    return false;
  }

  /// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): gelu_tanh (torch's
  /// GELU(approximate="tanh") export), in any operand order.
  void recogniseTanhGelu(TanhOp t) {
    Location loc = t.getLoc();
    auto outer = t.getInput().getDefiningOp<MulOp>();
    Value inner;
    if (outer)
      for (unsigned i = 0; i < 2; ++i)
        if (near(splat(outer->getOperand(i)), std::sqrt(2.0 / M_PI), 1e-4))
          inner = outer->getOperand(1 - i);
    auto sum = inner ? inner.getDefiningOp<AddOp>() : AddOp();
    Value x;
    if (sum)
      for (unsigned i = 0; i < 2; ++i) {
        auto cm = sum->getOperand(1 - i).getDefiningOp<MulOp>();
        if (!cm)
          continue;
        for (unsigned j = 0; j < 2; ++j)
          if (near(splat(cm->getOperand(j)), 0.044715, 1e-4) &&
              isCubeOf(cm->getOperand(1 - j), sum->getOperand(i)))
            x = sum->getOperand(i);
      }
    if (!x)
      return missed(loc, "tanh not recognised as gelu_tanh: its input is "
                         "not sqrt(2 / pi) (x + 0.044715 x^3)");
    Operation *add = soleUser(t.getResult());
    Value one = add && isa<AddOp>(add) ? other(add, t.getResult()) : Value();
    if (!one || !near(splat(one), 1.0))
      return missed(loc, "tanh not recognised as gelu_tanh: its only user "
                         "is not tanh(...) + 1");
    Operation *m1 = soleUser(add->getResult(0));
    if (!m1 || !isa<MulOp>(m1))
      return missed(loc, "tanh not recognised as gelu_tanh: 1 + tanh(...) "
                         "is not multiplied");
    Operation *last = nullptr;
    Value rest = other(m1, add->getResult(0));
    if (rest == x) {
      Operation *h = soleUser(m1->getResult(0));
      if (h && isa<MulOp>(h) && near(splat(other(h, m1->getResult(0))), 0.5))
        last = h;
    } else if (auto half = rest ? rest.getDefiningOp<MulOp>() : MulOp();
               half && near(splat(other(half, x)), 0.5)) {
      last = m1;
    }
    if (!last || last->getResult(0).getType() != x.getType())
      return missed(loc, "tanh not recognised as gelu_tanh: x (1 + tanh(...)) "
                         "is not halved");
    replaceWith<GeluTanhOp>(last, x, loc,
                            "0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 "
                            "x^3))) recognised as gelu_tanh");
  }

  /// The rotate-half RoPE of an exporter: x cos + concat(-x2, x1) sin with
  /// x1, x2 the halves of x's last dim and cos, sin load-time [S, D] tables
  /// (any leading 1s) -> seam.rope (x [B, H, S, D]).
  void recogniseRope(ConcatOp cat) {
    auto shape = shapeOf(cat.getResult());
    int64_t rank = int64_t(shape.size());
    if (cat.getInputs().size() != 2 || int64_t(cat.getDim()) != rank - 1 ||
        rank != 4)
      return;
    auto neg = cat.getInputs()[0].getDefiningOp<NegOp>();
    auto second = neg ? neg.getInput().getDefiningOp<SliceOp>() : SliceOp();
    auto first = cat.getInputs()[1].getDefiningOp<SliceOp>();
    if (!second || !first || second.getInput() != first.getInput())
      return;
    Value x = first.getInput();
    int64_t d = shape.back(), half = d / 2;
    auto isHalf = [&](SliceOp sl, int64_t at) {
      auto off = sl.getOffsets();
      auto sz = shapeOf(sl.getResult());
      for (int64_t i = 0; i + 1 < rank; ++i)
        if (off[i] != 0 || sz[i] != shape[i])
          return false;
      return off.back() == at && sz.back() == half;
    };
    Location loc = cat.getLoc();
    if (x.getType() != cat.getType() || d % 2 || !isHalf(first, 0) ||
        !isHalf(second, half))
      return missed(loc, "concatenation not recognised as rope: it is not "
                         "concat(-x[..., D/2:], x[..., :D/2])");
    auto table = [&](Value t) -> Value {
      if (!t || !isLoadTime(t))
        return {};
      auto ts = shapeOf(t);
      if (ts.size() < 2 || ts[ts.size() - 2] != shape[2] || ts.back() != d)
        return {};
      for (size_t i = 0; i + 2 < ts.size(); ++i)
        if (ts[i] != 1)
          return {};
      return t;
    };
    Operation *mulSin = soleUser(cat.getResult());
    Value sin = mulSin && isa<MulOp>(mulSin)
                    ? table(other(mulSin, cat.getResult()))
                    : Value();
    Operation *add = sin ? soleUser(mulSin->getResult(0)) : nullptr;
    Value xcos =
        add && isa<AddOp>(add) ? other(add, mulSin->getResult(0)) : Value();
    auto mulCos = xcos ? xcos.getDefiningOp<MulOp>() : MulOp();
    Value cos = mulCos ? table(other(mulCos, x)) : Value();
    if (!cos || !mulCos->hasOneUse() ||
        add->getResult(0).getType() != x.getType())
      return missed(loc, "concatenation not recognised as rope: the rotated "
                         "half is not combined as x cos + rot sin with "
                         "[S, D] parameter tables");
    OpBuilder b(add);
    Type et = cast<RankedTensorType>(x.getType()).getElementType();
    auto flat = [&](Value t) -> Value {
      if (shapeOf(t).size() == 2)
        return t;
      return b.create<ReshapeOp>(t.getLoc(),
                                 RankedTensorType::get({shape[2], d}, et), t);
    };
    Value c = flat(cos), s2 = flat(sin);
    auto rope = b.create<RopeOp>(loc, x.getType(), x, c, s2);
    add->getResult(0).replaceAllUsesWith(rope.getResult());
    eraseDeadChain(add);
    ++numRope;
    recognised(loc, "rope",
               "x cos + concat(-x2, x1) sin recognised as rope (" +
                   describeShape(shape) + ")");
  }

  template <typename OpT>
  void replaceWith(Operation *root, Value x, Location anchor,
                   const Twine &what) {
    OpBuilder b(root);
    auto act = b.create<OpT>(root->getLoc(), x.getType(), x);
    root->getResult(0).replaceAllUsesWith(act.getResult());
    eraseDeadChain(root);
    ++numActivation;
    recognised(anchor, OpT::getOperationName().drop_front(5), what);
  }

  /// Erases `op` and the ops it used that are now dead (the pattern's
  /// intermediates), but never a block argument or a parameter in use.
  void eraseDeadChain(Operation *op) {
    SmallVector<Operation *> work{op};
    while (!work.empty()) {
      Operation *o = work.pop_back_val();
      if (!o->getBlock() || !o->use_empty())
        continue;
      SmallVector<Operation *> defs;
      for (Value v : o->getOperands())
        if (Operation *d = v.getDefiningOp())
          defs.push_back(d);
      erased.insert(o);
      o->erase();
      for (Operation *d : defs)
        if (d->use_empty())
          work.push_back(d);
    }
  }

  // norms ---------------------------------------------------------------------
  /// The optional `* g` (a row of d) and `+ b` after a norm's result `y`;
  /// returns the last op of the chain (or nullptr when none).
  Operation *affineTail(Value y, int64_t d, Value &g, Value &bias) {
    Operation *last = nullptr;
    Operation *mul = soleUser(y);
    if (mul && isa<MulOp>(mul)) {
      Value s = other(mul, y);
      if (s && isLoadTime(s) && isRowOf(s, d) &&
          mul->getResult(0).getType() == y.getType()) {
        g = s;
        last = mul;
        y = mul->getResult(0);
      }
    }
    Operation *add = soleUser(y);
    if (add && isa<AddOp>(add)) {
      Value s = other(add, y);
      if (s && isLoadTime(s) && isRowOf(s, d) &&
          add->getResult(0).getType() == y.getType()) {
        bias = s;
        last = add;
      }
    }
    return last;
  }

  /// 1 / sqrt(v + eps) applied to `num`: div(num, sqrt(add(v, eps))) or
  /// mul(num, reciprocal(sqrt(add(v, eps)))). Returns the normalised
  /// value's op and eps.
  Operation *normalisedBy(Value v, double &eps) {
    Operation *add = soleUser(v);
    if (!add || !isa<AddOp>(add))
      return nullptr;
    auto e = splat(other(add, v));
    if (!e || *e < 0)
      return nullptr;
    eps = *e;
    Operation *sq = soleUser(add->getResult(0));
    if (!sq || !isa<SqrtOp>(sq))
      return nullptr;
    Operation *use = soleUser(sq->getResult(0));
    bool oneOver = use && isa<DivOp>(use) &&
                   use->getOperand(1) == sq->getResult(0) &&
                   near(splat(use->getOperand(0)), 1.0);
    if (use && isa<DivOp>(use) && use->getOperand(1) == sq->getResult(0) &&
        !oneOver)
      return use;
    if (use && (isa<ReciprocalOp>(use) || oneOver)) {
      Operation *mul = soleUser(use->getResult(0));
      if (mul && isa<MulOp>(mul))
        return mul;
    }
    return nullptr;
  }

  /// `p` is x^2 (pow(x, 2) or x * x).
  static bool isSquareOf(Operation *p, Value x) {
    if (auto pw = dyn_cast_or_null<PowOp>(p))
      return pw.getLhs() == x && near(splat(pw.getRhs()), 2.0);
    if (auto m = dyn_cast_or_null<MulOp>(p))
      return m.getLhs() == x && m.getRhs() == x;
    return false;
  }

  void recogniseNorm(ReduceOp mean) {
    Value x = mean.getInput();
    if (!isLastAxisMean(mean, x))
      return;
    int64_t d = shapeOf(x).back();
    Location loc = mean.getLoc();
    // RMS: mean(x^2) where the square's input is x.
    if (Operation *sq = x.getDefiningOp(); sq && isa<PowOp, MulOp>(sq)) {
      Value base = sq->getOperand(0);
      if (isSquareOf(sq, base) && sq->hasOneUse()) {
        double eps;
        Operation *norm = normalisedBy(mean.getResult(), eps);
        bool ofBase =
            norm &&
            (isa<DivOp>(norm) ? norm->getOperand(0) == base
                              : llvm::is_contained(norm->getOperands(), base));
        if (!ofBase)
          return missed(loc, "mean(x^2) not recognised as rms_norm: it does "
                             "not normalise x by 1 / sqrt(mean + eps)");
        if (norm->getResult(0).getType() != base.getType())
          return missed(loc, "mean(x^2) not recognised as rms_norm: the "
                             "result broadcasts to another shape");
        Value g, bias;
        Operation *last = affineTail(norm->getResult(0), d, g, bias);
        if (last && bias) // rms_norm has no bias: keep only the scale
          last = g ? soleUser(norm->getResult(0)) : nullptr;
        OpBuilder b(last ? last : norm);
        Value scale = g ? rowVector(b, g, d) : Value();
        auto rms = b.create<RmsNormOp>(loc, base.getType(), base, scale,
                                       b.getF64FloatAttr(eps));
        (last ? last : norm)->getResult(0).replaceAllUsesWith(rms.getResult());
        eraseDeadChain(last ? last : norm);
        ++numNorm;
        recognised(loc, "rms_norm",
                   "x / sqrt(mean(x^2) + eps) recognised as rms_norm" +
                       Twine(g ? " with its scale" : ""));
        return;
      }
    }
    // Layer norm: c = x - mean(x); c / sqrt(mean(c^2) + eps).
    Operation *sub = nullptr;
    for (Operation *u : mean->getUsers())
      if (isa<SubOp>(u) && u->getOperand(0) == x &&
          u->getOperand(1) == mean.getResult())
        sub = u;
    if (!sub || !mean->hasOneUse())
      return;
    Value c = sub->getResult(0);
    Operation *sq = nullptr, *norm = nullptr;
    for (Operation *u : c.getUsers()) {
      if (isSquareOf(u, c))
        sq = u;
      else if (isa<DivOp, MulOp>(u))
        norm = u;
    }
    auto var = sq && sq->hasOneUse()
                   ? dyn_cast<ReduceOp>(*sq->getResult(0).getUsers().begin())
                   : ReduceOp();
    double eps = 0;
    Operation *normalised = var && isLastAxisMean(var, sq->getResult(0))
                                ? normalisedBy(var.getResult(), eps)
                                : nullptr;
    if (!normalised || normalised != norm ||
        !(llvm::hasNItems(c.getUses(), 2) ||
          (isa<MulOp>(sq) && llvm::hasNItems(c.getUses(), 3))) ||
        norm->getResult(0).getType() != x.getType())
      return missed(loc, "x - mean(x) not recognised as layer_norm: it is "
                         "not divided by sqrt(mean((x - mean)^2) + eps), or "
                         "an intermediate has other users");
    Value g, bias;
    Operation *last = affineTail(norm->getResult(0), d, g, bias);
    OpBuilder b(last ? last : norm);
    auto ln = b.create<LayerNormOp>(
        loc, x.getType(), x, g ? rowVector(b, g, d) : Value(),
        bias ? rowVector(b, bias, d) : Value(), b.getF64FloatAttr(eps),
        b.getF64FloatAttr(0.0));
    (last ? last : norm)->getResult(0).replaceAllUsesWith(ln.getResult());
    eraseDeadChain(last ? last : norm);
    ++numNorm;
    recognised(loc, "layer_norm",
               Twine("(x - mean) / sqrt(var + eps) recognised as "
                     "layer_norm") +
                   (g || bias ? " with its affine" : ""));
  }

  Value rowVector(OpBuilder &b, Value v, int64_t d) {
    if (shapeOf(v).size() == 1)
      return v;
    return b.create<ReshapeOp>(
        v.getLoc(),
        RankedTensorType::get(
            {d}, cast<RankedTensorType>(v.getType()).getElementType()),
        v);
  }

  // attention
  // -------------------------------------------------------------------
  /// A scaling of `v` by a one-valued constant (v * s, s * v, v / s):
  /// sets the factor and returns the scaled value, or null.
  static Value unscaled(Value v, double &factor) {
    Operation *op = v.getDefiningOp();
    if (!op || !isa<MulOp, DivOp>(op) || !op->hasOneUse())
      return {};
    for (unsigned i = 0; i < 2; ++i) {
      if (isa<DivOp>(op) && i == 0)
        continue;
      std::optional<double> s = splat(op->getOperand(i));
      if (!s || *s == 0 || op->getOperand(1 - i).getType() != v.getType())
        continue;
      factor = isa<DivOp>(op) ? 1.0 / *s : *s;
      return op->getOperand(1 - i);
    }
    return {};
  }

  /// k from k^T: the transpose that swaps k^T's last two dims, composed
  /// with the transpose that made k^T when there is one.
  Value untransposed(OpBuilder &b, Value kt) {
    auto ks = shapeOf(kt);
    int64_t rank = int64_t(ks.size());
    SmallVector<int64_t> perm;
    Value src = kt;
    if (auto t = kt.getDefiningOp<TransposeOp>()) {
      perm.assign(t.getPerm().begin(), t.getPerm().end());
      src = t.getInput();
    } else {
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d);
    }
    std::swap(perm[rank - 1], perm[rank - 2]);
    bool identity = true;
    for (int64_t d = 0; d < rank; ++d)
      identity &= perm[d] == d;
    if (identity)
      return src;
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(shapeOf(src)[p]);
    return b.create<TransposeOp>(
        kt.getLoc(),
        RankedTensorType::get(
            shape, cast<RankedTensorType>(kt.getType()).getElementType()),
        src, b.getDenseI64ArrayAttr(perm));
  }

  void recogniseAttention(SoftmaxOp sm) {
    Location loc = sm.getLoc();
    auto shape = shapeOf(sm.getResult());
    int64_t rank = int64_t(shape.size());
    if ((rank != 3 && rank != 4) || int64_t(sm.getAxis()) != rank - 1)
      return missed(loc, "softmax not recognised as attention: not over the "
                         "last axis of [B, H, Sq, Sk] (or [B H, Sq, Sk]) "
                         "scores");
    // Scores: matmul(q, k^T), scaled after (scores * s) or before (q * s).
    double scale = 1.0;
    Value scores = sm.getInput();
    if (Value u = unscaled(scores, scale))
      scores = u;
    auto qk = scores.getDefiningOp<MatmulOp>();
    Operation *pvOp = soleUser(sm.getResult());
    auto pv = dyn_cast_or_null<MatmulOp>(pvOp);
    if (!qk || !pv || pv.getLhs() != sm.getResult() || !qk->hasOneUse() ||
        !sm->hasOneUse())
      return missed(loc, "softmax not recognised as attention: it is not "
                         "between two matmuls (q k^T, then with v) that "
                         "nothing else reads");
    Value q = qk.getLhs(), kt = qk.getRhs(), v = pv.getRhs();
    double qScale = 1.0;
    if (Value u = unscaled(q, qScale)) {
      q = u;
      scale *= qScale;
    }
    auto qs = shapeOf(q), kts = shapeOf(kt), vs = shapeOf(v);
    if (int64_t(qs.size()) != rank || int64_t(kts.size()) != rank ||
        int64_t(vs.size()) != rank || kts[rank - 2] != qs[rank - 1] ||
        kts[rank - 1] != vs[rank - 2] || vs[rank - 1] != qs[rank - 1] ||
        qs.drop_back(2) != vs.drop_back(2) || pv.getType() != q.getType())
      return missed(loc, "softmax not recognised as attention: q, k and v "
                         "are not [.., S, D] alike (" +
                             describeShape(qs) + ", k^T " + describeShape(kts) +
                             ", " + describeShape(vs) + ")");
    OpBuilder b(pv);
    Value k = untransposed(b, kt);
    // seam.attention is [B, H, S, D]: a [B H, S, D] batch gets a leading 1.
    auto to4 = [&](Value x) -> Value {
      if (rank == 4)
        return x;
      auto xs = shapeOf(x);
      return b.create<ReshapeOp>(
          x.getLoc(),
          RankedTensorType::get(
              {1, xs[0], xs[1], xs[2]},
              cast<RankedTensorType>(x.getType()).getElementType()),
          x);
    };
    Value q4 = to4(q), k4 = to4(k), v4 = to4(v);
    auto att = b.create<AttentionOp>(loc, q4.getType(), q4, k4, v4, Value(),
                                     Value(), b.getF64FloatAttr(scale),
                                     /*causal=*/UnitAttr());
    Value out = att.getResult();
    if (rank == 3)
      out = b.create<ReshapeOp>(loc, pv.getType(), out);
    pv.getResult().replaceAllUsesWith(out);
    eraseDeadChain(pv);
    ++numAttention;
    std::string scaleText = llvm::formatv("{0}", scale).str();
    recognised(loc, "attention",
               "softmax(q k^T * " + scaleText +
                   ") v recognised as attention (" +
                   describeShape(shapeOf(q4)) + ")");
  }
};

} // namespace
