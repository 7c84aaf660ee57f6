//===- ShardTp.cpp - seam-shard-tp: Megatron TP over a recognised graph ---===//
//
// A config import builds one rank's shard directly (tools/seam-import:
// q/k/v and the first MLP linear column parallel, the output projections
// row parallel followed by seam.all_reduce). An imported ONNX graph arrives
// whole; after seam-recognize this pass finds the same structure and
// shards it:
//  - every linear not yet placed seeds a region as a column-parallel linear
//    (its weight's columns, or of a packed QKV each part's columns, split
//    over the ranks);
//  - the region grows through the sharded values' producers and users:
//    reshape and transpose (the sharded axis followed, a reshape that splits
//    it into heads needs the head count divisible by tp), elementwise ops
//    (an operand broadcast along the axis stays whole, any other is sharded
//    too), norms over another axis, rope, attention (sharded by heads),
//    slices of a packed linear's parts, concatenation along another axis;
//  - it closes at row-parallel linears (weight rows split): their partial
//    sums are completed by seam.all_reduce, their bias added after.
// A region that reaches anything else (a step input or output, a primitive
// matmul, a reduction over the sharded axis, ...) fails the pass with a
// one-line reason: the model runs with --tp 1. Parameters are sliced for
// real: rank 0's slice is the param's value and `seam.rank_values` holds
// every rank's, so a functional run across ranks computes the unsharded
// model's numbers.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "llvm/Support/FormatVariadic.h"
#include <deque>
#include <optional>

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMSHARDTP
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

std::string shapeStr(llvm::ArrayRef<int64_t> s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string opName(Operation *op) {
  std::string n = op->getName().getStringRef().str();
  if (auto nl = dyn_cast<NameLoc>(op->getLoc()))
    n += " ('" + nl.getName().str() + "')";
  return n;
}

/// A value split over the ranks along `axis` (rank r holds block r); a
/// packed linear's output (`parts` > 1, fused QKV) is split part by part.
struct Shard {
  int64_t axis = 0, parts = 1;
  bool operator==(const Shard &o) const {
    return axis == o.axis && parts == o.parts;
  }
};

/// The axis of `out` a reshape from `in` (split along `axis`) keeps split
/// as contiguous per-rank blocks, if any.
std::optional<int64_t> reshapeAxis(llvm::ArrayRef<int64_t> in, int64_t axis,
                                   llvm::ArrayRef<int64_t> out) {
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= in[i];
  int64_t prod = 1;
  for (size_t b = 0; b < out.size(); ++b) {
    if (prod == outer && out[b] > 1)
      return int64_t(b);
    prod *= out[b];
    if (prod > outer)
      return std::nullopt;
  }
  return std::nullopt;
}

bool isUnary(Operation *op) {
  return isa<GeluOp, GeluTanhOp, SiluOp, ExpOp, LogOp, SqrtOp, TanhOp, ErfOp,
             SigmoidOp, NegOp, ReciprocalOp, ReluOp, AbsOp>(op);
}
bool isBinary(Operation *op) {
  return isa<AddOp, MulOp, SubOp, DivOp, PowOp, MaxOp, MinOp>(op);
}

class Sharder {
public:
  explicit Sharder(int64_t tp) : tp(tp) {}

  /// Grows the region seeded by `seed` as a column-parallel linear; on
  /// failure `why` says what did not hold and nothing is kept.
  bool region(LinearOp seed) {
    shard.clear();
    visited.clear();
    rows.clear();
    cols.clear();
    work.clear();
    why.clear();
    Value out = seed.getResult();
    int64_t parts = packedParts(seed);
    if (!require(out, {int64_t(shapeOf(out).size()) - 1, parts}, seed))
      return false;
    while (!work.empty()) {
      Value v = work.front();
      work.pop_front();
      if (Operation *d = v.getDefiningOp())
        if (!visit(d))
          return false;
      for (Operation *u : v.getUsers())
        if (!visit(u))
          return false;
    }
    if (rows.empty())
      return fail(seed, "no row-parallel linear closes the region");
    return true;
  }

  llvm::DenseMap<Value, Shard> shard;
  llvm::SetVector<Operation *> rows, cols;
  std::string why;
  int64_t heads = 0;

private:
  bool fail(Operation *op, const llvm::Twine &reason) {
    if (why.empty())
      why = (reason + " (at " + opName(op) + ")").str();
    return false;
  }

  /// A linear read only by equal slices of its last axis (a packed QKV):
  /// the number of parts, else 1.
  static int64_t packedParts(LinearOp l) {
    int64_t n = shapeOf(l.getResult()).back(),
            last = shapeOf(l.getResult()).size() - 1, width = 0;
    if (l.getResult().use_empty())
      return 1;
    for (Operation *u : l.getResult().getUsers()) {
      auto s = dyn_cast<SliceOp>(u);
      if (!s)
        return 1;
      int64_t w = shapeOf(s.getResult())[last];
      if ((width && w != width) || s.getOffsets()[last] % w != 0)
        return 1;
      width = w;
    }
    return width && n % width == 0 ? n / width : 1;
  }

  bool require(Value v, Shard s, Operation *at) {
    auto it = shard.find(v);
    if (it != shard.end()) {
      if (it->second == s)
        return true;
      return fail(at, "a value split along two different axes");
    }
    llvm::ArrayRef<int64_t> sh = shapeOf(v);
    if (s.axis < 0 || s.axis >= int64_t(sh.size()))
      return fail(at, "no axis to split");
    if (sh[s.axis] % (tp * s.parts) != 0)
      return fail(
          at,
          llvm::formatv(
              "dimension {0} of {1} ({2}) is not "
              "divisible by --tp {3}{4}",
              s.axis, shapeStr(sh), sh[s.axis], tp,
              s.parts > 1
                  ? llvm::formatv(" times its {0} packed parts", s.parts).str()
                  : std::string()));
    if (isa<BlockArgument>(v))
      return fail(at, "the split reaches a step input (" + shapeStr(sh) +
                          "), which every rank holds whole");
    shard[v] = s;
    work.push_back(v);
    return true;
  }

  std::optional<Shard> get(Value v) const {
    auto it = shard.find(v);
    if (it == shard.end())
      return std::nullopt;
    return it->second;
  }

  bool visit(Operation *op) {
    if (!visited.insert(op).second)
      return true;
    if (isa<ParamOp>(op))
      return true;
    if (auto r = dyn_cast<ReshapeOp>(op))
      return visitReshape(r);
    if (auto t = dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> perm = t.getPerm();
      if (auto s = get(t.getInput())) {
        int64_t out = llvm::find(perm, s->axis) - perm.begin();
        return require(t.getResult(), {out, s->parts}, op);
      }
      Shard s = *get(t.getResult());
      return require(t.getInput(), {perm[s.axis], s.parts}, op);
    }
    if (isUnary(op)) {
      auto s = get(op->getOperand(0));
      if (!s)
        s = get(op->getResult(0));
      return single(*s, op) && require(op->getOperand(0), *s, op) &&
             require(op->getResult(0), *s, op);
    }
    if (isBinary(op))
      return visitBinary(op);
    if (isa<LayerNormOp, RmsNormOp>(op)) {
      Value x = op->getOperand(0);
      auto s = get(x);
      if (!s)
        s = get(op->getResult(0));
      bool affineSplit = false;
      for (Value v : op->getOperands().drop_front())
        affineSplit |= bool(get(v));
      if (!s || s->axis == int64_t(shapeOf(x).size()) - 1 || affineSplit)
        return fail(op, "a norm over the split axis");
      return single(*s, op) && require(x, *s, op) &&
             require(op->getResult(0), *s, op);
    }
    if (auto r = dyn_cast<RopeOp>(op)) {
      auto s = get(r.getInput());
      if (!s)
        s = get(r.getResult());
      if (!s || get(r.getCos()) || get(r.getSin()) ||
          s->axis >= int64_t(shapeOf(r.getInput()).size()) - 2)
        return fail(op, "rope over the split axis");
      return single(*s, op) && require(r.getInput(), *s, op) &&
             require(r.getResult(), *s, op);
    }
    if (auto a = dyn_cast<AttentionOp>(op)) {
      if (a.getRopeCos() || a.getRopeSin() || op->getNumOperands() != 3)
        return fail(op, "attention with more than q, k and v");
      for (Value v : op->getOperands())
        if (auto s = get(v); s && s->axis != 1)
          return fail(op, "attention split along another axis than heads");
      int64_t h = shapeOf(a.getQ())[1];
      if (h % tp != 0 || shapeOf(a.getK())[1] % tp != 0)
        return fail(op, llvm::formatv("{0} attention heads are not divisible "
                                      "by --tp {1}",
                                      h, tp));
      heads += h;
      return require(a.getQ(), {1, 1}, op) && require(a.getK(), {1, 1}, op) &&
             require(a.getV(), {1, 1}, op) &&
             require(a.getResult(), {1, 1}, op);
    }
    if (auto sl = dyn_cast<SliceOp>(op)) {
      auto in = get(sl.getInput());
      if (!in)
        return fail(op, "a slice whose input is whole but its result split");
      int64_t a = in->axis, n = shapeOf(sl.getInput())[a],
              w = shapeOf(sl.getResult())[a];
      if (w == n)
        return require(sl.getResult(), *in, op);
      if (in->parts > 1 && w == n / in->parts)
        return require(sl.getResult(), {a, 1}, op);
      return fail(op, "a slice of part of the split axis");
    }
    if (auto c = dyn_cast<ConcatOp>(op)) {
      std::optional<Shard> s = get(c.getResult());
      for (Value v : c.getInputs())
        if (!s)
          s = get(v);
      if (int64_t(c.getDim()) == s->axis)
        return fail(op, "a concatenation along the split axis");
      if (!single(*s, op))
        return false;
      for (Value v : c.getInputs())
        if (!require(v, *s, op))
          return false;
      return require(c.getResult(), *s, op);
    }
    if (auto l = dyn_cast<LinearOp>(op))
      return visitLinear(l);
    if (isa<func::ReturnOp>(op))
      return fail(op, "a split value reaches the step's output without a "
                      "row-parallel linear");
    if (isa<MatmulOp>(op))
      return fail(op, "a primitive matmul (not recognised as a linear or "
                      "attention) reads a split value");
    return fail(op, "an op the TP rules do not cover reads a split value");
  }

  bool single(Shard s, Operation *op) {
    if (s.parts == 1)
      return true;
    return fail(op, "a packed linear's output read other than by its part "
                    "slices");
  }

  bool visitReshape(ReshapeOp r) {
    llvm::ArrayRef<int64_t> in = shapeOf(r.getInput()),
                            out = shapeOf(r.getResult());
    bool forward = bool(get(r.getInput()));
    Shard s = forward ? *get(r.getInput()) : *get(r.getResult());
    if (!single(s, r))
      return false;
    std::optional<int64_t> b =
        forward ? reshapeAxis(in, s.axis, out) : reshapeAxis(out, s.axis, in);
    llvm::ArrayRef<int64_t> to = forward ? out : in;
    if (!b)
      return fail(r, "a reshape " + shapeStr(in) + " -> " + shapeStr(out) +
                         " that scatters the split axis");
    if (to[*b] % tp != 0)
      return fail(r, llvm::formatv("a reshape {0} -> {1} splits the split "
                                   "axis into {2} (heads), not divisible by "
                                   "--tp {3}",
                                   shapeStr(in), shapeStr(out), to[*b], tp));
    return forward ? require(r.getResult(), {*b, 1}, r)
                   : require(r.getInput(), {*b, 1}, r);
  }

  bool visitBinary(Operation *op) {
    Value res = op->getResult(0);
    int64_t rank = shapeOf(res).size();
    std::optional<Shard> s = get(res);
    for (Value v : op->getOperands())
      if (auto vs = get(v); vs && !s)
        s = Shard{vs->axis + rank - int64_t(shapeOf(v).size()), vs->parts};
    if (!single(*s, op) || !require(res, *s, op))
      return false;
    for (Value v : op->getOperands()) {
      int64_t lead = rank - int64_t(shapeOf(v).size()), a = s->axis - lead;
      bool broadcast = a < 0 || shapeOf(v)[a] == 1;
      if (broadcast) {
        if (get(v))
          return fail(op, "an operand split along a broadcast axis");
        continue;
      }
      if (!require(v, {a, 1}, op))
        return false;
    }
    return true;
  }

  bool visitLinear(LinearOp l) {
    int64_t last = int64_t(shapeOf(l.getResult()).size()) - 1;
    auto x = get(l.getInput()), w = get(l.getWeight()),
         out = get(l.getResult());
    std::optional<Shard> b = l.getBias() ? get(l.getBias()) : std::nullopt;
    bool row = (x && x->axis == last) || (w && w->axis == 0 && !out && !b);
    if (row) {
      if (out || b)
        return fail(l, "a linear both row and column parallel");
      if (l.getScale() || l.getActivation())
        return fail(l, "a row-parallel linear with a fused scale or "
                       "activation (it applies to the partial sum)");
      rows.insert(l);
      int64_t xl = int64_t(shapeOf(l.getInput()).size()) - 1;
      return require(l.getInput(), {xl, 1}, l) &&
             require(l.getWeight(), {0, 1}, l);
    }
    if (x)
      return fail(l, "a linear whose input is split along a batch axis");
    int64_t parts = out ? out->parts : w ? w->parts : b->parts;
    if ((w && w->axis != 1) || (out && out->axis != last))
      return fail(l, "a linear split along neither its rows nor columns");
    cols.insert(l);
    if (!require(l.getWeight(), {1, parts}, l) ||
        !require(l.getResult(), {last, parts}, l))
      return false;
    return !l.getBias() || require(l.getBias(), {0, parts}, l);
  }

  int64_t tp;
  llvm::DenseSet<Operation *> visited;
  std::deque<Value> work;
};

/// Rank r's block of `data` (shape `shape`) split along `s`.
std::vector<float> rankSlice(llvm::ArrayRef<float> data,
                             llvm::ArrayRef<int64_t> shape, Shard s, int64_t tp,
                             int64_t r) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < s.axis; ++i)
    outer *= shape[i];
  for (size_t i = s.axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
  int64_t n = shape[s.axis], part = n / s.parts, chunk = part / tp;
  std::vector<float> out;
  out.reserve(size_t(outer * n / tp * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < s.parts; ++p) {
      const float *begin = data.data() + (o * n + p * part + r * chunk) * inner;
      out.insert(out.end(), begin, begin + chunk * inner);
    }
  return out;
}

ElementsAttr makeValue(RankedTensorType type, std::vector<float> &data,
                       llvm::StringRef key) {
  if (data.size() <= 16)
    return DenseElementsAttr::get(type, llvm::ArrayRef<float>(data));
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(
      llvm::ArrayRef<float>(data));
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

struct ShardTpPass : mlir::seam::impl::SeamShardTpBase<ShardTpPass> {
  using SeamShardTpBase::SeamShardTpBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t tp = this->tp;
    if (tp < 1 || tp > 64) {
      module.emitError() << "seam-shard-tp: tp must be in [1, 64], got " << tp;
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    if (auto cur = module->getAttrOfType<IntegerAttr>("seam.tp");
        cur && cur.getInt() != 1) {
      module.emitError() << "seam-shard-tp: the module is already one rank's "
                            "shard of seam.tp = "
                         << cur.getInt();
      return signalPassFailure();
    }
    llvm::DenseMap<Value, Shard> all;
    llvm::SetVector<Operation *> rows;
    int regions = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      llvm::DenseSet<Operation *> placed;
      SmallVector<LinearOp> linears;
      fn.walk([&](LinearOp l) { linears.push_back(l); });
      for (LinearOp l : linears) {
        if (placed.count(l))
          continue;
        Sharder s(tp);
        if (!s.region(l)) {
          l.emitError() << "--tp " << tp << ": cannot shard the linear "
                        << shapeStr(shapeOf(l.getWeight())) << ": " << s.why
                        << "; run it with --tp 1";
          return signalPassFailure();
        }
        ++regions;
        for (Operation *op : s.cols)
          placed.insert(op);
        for (Operation *op : s.rows)
          placed.insert(op);
        for (auto &[v, sh] : s.shard)
          all[v] = sh;
        rows.insert(s.rows.begin(), s.rows.end());
        auto rem = decisionRemark(remarks, l.getLoc());
        rem << "seam-shard-tp: " << s.cols.size() << " column-parallel linear"
            << (s.cols.size() == 1 ? "" : "s");
        if (s.heads)
          rem << " (attention, " << s.heads << " heads: " << s.heads / tp
              << " per rank)";
        rem << ", " << s.rows.size() << " row-parallel + all_reduce";
      }
    }
    if (regions == 0) {
      module.emitError() << "--tp " << tp
                         << ": the model has no linear to shard; run it with "
                            "--tp 1";
      return signalPassFailure();
    }

    // Types, slice offsets and parameters.
    OpBuilder b(module.getContext());
    for (auto &[v, s] : all) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(t.getShape());
      std::vector<int64_t> full(shape.begin(), shape.end());
      shape[s.axis] /= tp;
      auto nt = RankedTensorType::get(shape, t.getElementType());
      v.setType(nt);
      auto p = v.getDefiningOp<ParamOp>();
      if (!p)
        continue;
      if (p.getInit() != ParamInit::data)
        continue; // zeros / ones / seeded: the same per rank, by shape
      std::vector<float> data;
      ElementsAttr value = *p.getValue();
      if (auto dense = dyn_cast<DenseElementsAttr>(value))
        data.assign(dense.getValues<float>().begin(),
                    dense.getValues<float>().end());
      else if (auto blob = dyn_cast<DenseF32ResourceElementsAttr>(value))
        if (auto a = blob.tryGetAsArrayRef())
          data.assign(a->begin(), a->end());
      int64_t n = 1;
      for (int64_t d : full)
        n *= d;
      if (int64_t(data.size()) != n) {
        p.emitError() << "seam-shard-tp: parameter '" << p.getName()
                      << "' has no data to slice";
        return signalPassFailure();
      }
      SmallVector<Attribute> perRank;
      for (int64_t r = 0; r < tp; ++r) {
        std::vector<float> slice = rankSlice(data, full, s, tp, r);
        std::string key = "tp.";
        for (char c : p.getName())
          key += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                         c == '.'
                     ? c
                     : '_';
        key += ".rank" + std::to_string(r);
        perRank.push_back(makeValue(nt, slice, key));
      }
      p.setValueAttr(cast<ElementsAttr>(perRank[0]));
      p->setAttr("seam.rank_values", b.getArrayAttr(perRank));
    }
    for (auto &[v, s] : all)
      if (auto sl = v.getDefiningOp<SliceOp>()) {
        SmallVector<int64_t> offs(sl.getOffsets());
        if (auto in = all.find(sl.getInput()); in != all.end())
          offs[in->second.axis] /= tp;
        sl.setOffsets(offs);
      }

    // Row-parallel linears: partial sums completed, bias after.
    for (Operation *op : rows) {
      auto l = cast<LinearOp>(op);
      b.setInsertionPoint(l);
      auto partial =
          b.create<LinearOp>(l.getLoc(), l.getResult().getType(), l.getInput(),
                             l.getWeight(), Value(), Value(), StringAttr());
      Value sum = b.create<AllReduceOp>(l.getLoc(), partial.getType(),
                                        partial.getResult(), uint64_t(tp));
      if (Value bias = l.getBias())
        sum = b.create<AddOp>(l.getLoc(), l.getResult().getType(), sum, bias);
      l.getResult().replaceAllUsesWith(sum);
      l.erase();
    }
    module->setAttr("seam.tp", b.getI64IntegerAttr(tp));
  }
};

} // namespace
