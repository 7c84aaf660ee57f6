//===- SeamOps.cpp - verifiers and folders of the seam dialect ------------===//
//
// Every shape and type rule lives here, each with a message that names the
// shapes involved.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::seam;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}
static std::string shapeOf(Value v) { return describeType(v.getType()); }

/// All listed values share one element type.
static LogicalResult verifySameElementType(Operation *op,
                                           llvm::ArrayRef<Value> values) {
  Type first;
  for (Value v : values) {
    if (!v)
      continue;
    Type et = tensorOf(v).getElementType();
    if (!first)
      first = et;
    else if (et != first)
      return op->emitOpError() << "element types differ: " << first << " vs "
                               << et << " (" << shapeOf(v) << ")";
  }
  return success();
}

static LogicalResult expectShape(Operation *op, Value v, llvm::StringRef what,
                                 llvm::ArrayRef<int64_t> expected) {
  if (tensorOf(v).getShape() != expected)
    return op->emitOpError()
           << what << " must be " << describeShape(expected) << ", got "
           << describeShape(tensorOf(v).getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// param
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("parameter name must not be empty");
  if (getScale().convertToDouble() < 0)
    return emitOpError() << "init scale must be >= 0, got "
                         << getScale().convertToDouble();
  if (int64_t(getSeed()) < 0)
    return emitOpError() << "seed must be >= 0, got " << int64_t(getSeed());
  auto t = getType();
  if ((getInit() == ParamInit::data) != bool(getValueAttr()))
    return emitOpError() << (getValueAttr()
                                 ? "a value attribute needs init data"
                                 : "init data needs a value attribute");
  if (auto v = getValueAttr()) {
    auto vt = dyn_cast<RankedTensorType>(v.getType());
    if (!vt || vt.getShape() != t.getShape() || !vt.getElementType().isF32())
      return emitOpError() << "value must hold f32 elements of shape "
                           << describeShape(t.getShape()) << ", got "
                           << describeType(v.getType());
  }
  if (getInit() == ParamInit::rope_cos || getInit() == ParamInit::rope_sin) {
    if (t.getRank() != 2 || t.getDimSize(1) % 2 != 0)
      return emitOpError() << "rope table must be [S, D] with D even, got "
                           << describeType(t);
    if (getScale().convertToDouble() <= 1.0)
      return emitOpError() << "rope table base (scale) must be > 1, got "
                           << getScale().convertToDouble();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

/// seam.linear's activations: the names of GeluOp, GeluTanhOp, SiluOp.
static constexpr llvm::StringLiteral kLinearActivations[] = {
    "gelu", "gelu_tanh", "silu"};

std::optional<llvm::StringRef> mlir::seam::linearActivationName(Operation *op) {
  if (isa<GeluOp>(op))
    return kLinearActivations[0];
  if (isa<GeluTanhOp>(op))
    return kLinearActivations[1];
  if (isa<SiluOp>(op))
    return kLinearActivations[2];
  return std::nullopt;
}

LogicalResult LinearOp::verify() {
  auto x = getInput().getType(), w = getWeight().getType();
  if (x.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  if (w.getRank() != 2)
    return emitOpError() << "weight must be [K, N], got " << describeType(w);
  int64_t k = x.getShape().back(), n = w.getDimSize(1);
  if (w.getDimSize(0) != k)
    return emitOpError() << "input's last dimension K = " << k
                         << " does not match weight rows: input "
                         << describeType(x) << ", weight " << describeType(w);
  if (getBias() && failed(expectShape(*this, getBias(), "bias", {n})))
    return failure();
  if (Value s = getScale()) {
    auto st = cast<RankedTensorType>(s.getType());
    if (st.getRank() < 1 || st.getShape().back() != n ||
        st.getNumElements() != n)
      return emitOpError() << "scale must be a row of N = " << n
                           << " elements (all dims but the last of size 1), "
                              "got "
                           << describeType(st);
  }
  if (auto act = getActivation();
      act && !llvm::is_contained(kLinearActivations, *act))
    return emitOpError() << "activation must be gelu, gelu_tanh or silu, got '"
                         << *act << "'";
  SmallVector<int64_t> expected(x.getShape().drop_back());
  expected.push_back(n);
  if (failed(expectShape(*this, getResult(), "result", expected)))
    return failure();
  return verifySameElementType(
      *this, {getInput(), getWeight(), getBias(), getScale(), getResult()});
}

//===----------------------------------------------------------------------===//
// norms
//===----------------------------------------------------------------------===//

static LogicalResult verifyNorm(Operation *op, Value input, Value scale,
                                Value bias, Value result, double eps) {
  auto x = tensorOf(input);
  if (x.getRank() < 1)
    return op->emitOpError("input must have rank >= 1");
  if (tensorOf(result) != x)
    return op->emitOpError() << "result " << shapeOf(result)
                             << " must equal input " << shapeOf(input);
  int64_t d = x.getShape().back();
  if (scale && failed(expectShape(op, scale, "scale", {d})))
    return failure();
  if (bias && failed(expectShape(op, bias, "bias", {d})))
    return failure();
  if (!(eps > 0))
    return op->emitOpError() << "epsilon must be > 0, got " << eps;
  return verifySameElementType(op, {input, scale, bias});
}

LogicalResult LayerNormOp::verify() {
  double offset = getScaleOffset().convertToDouble();
  if (offset != 0.0 && !getScale())
    return emitOpError() << "scale_offset " << offset << " needs a scale";
  if (!std::isfinite(offset))
    return emitOpError() << "scale_offset must be finite, got " << offset;
  return verifyNorm(*this, getInput(), getScale(), getBias(), getResult(),
                    getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput(), getScale(), Value(), getResult(),
                    getEpsilon().convertToDouble());
}

//===----------------------------------------------------------------------===//
// add / mul
//===----------------------------------------------------------------------===//

static LogicalResult verifyBroadcast(Operation *op, Value lhs, Value rhs,
                                     Value result) {
  auto b = broadcastShapes(tensorOf(lhs).getShape(), tensorOf(rhs).getShape());
  if (failed(b))
    return op->emitOpError() << "operands do not broadcast: " << shapeOf(lhs)
                             << " and " << shapeOf(rhs);
  if (failed(expectShape(op, result, "result (the broadcast shape)", *b)))
    return failure();
  return verifySameElementType(op, {lhs, rhs, result});
}

LogicalResult AddOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}
LogicalResult MulOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}

LogicalResult SubOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}
LogicalResult DivOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}
LogicalResult PowOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}
LogicalResult MaxOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}
LogicalResult MinOp::verify() {
  return verifyBroadcast(*this, getLhs(), getRhs(), getResult());
}

//===----------------------------------------------------------------------===//
// matmul / softmax / reduce (primitives)
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
mlir::seam::matmulShape(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  if (a.empty() || b.empty())
    return failure();
  SmallVector<int64_t> sa(a), sb(b);
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), 1);
  if (vecB)
    sb.push_back(1);
  if (sa.back() != sb[sb.size() - 2])
    return failure();
  auto batch = broadcastShapes(llvm::ArrayRef(sa).drop_back(2),
                               llvm::ArrayRef(sb).drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> out(*batch);
  if (!vecA)
    out.push_back(sa[sa.size() - 2]);
  if (!vecB)
    out.push_back(sb.back());
  return out;
}

LogicalResult MatmulOp::verify() {
  auto s =
      matmulShape(tensorOf(getLhs()).getShape(), tensorOf(getRhs()).getShape());
  if (failed(s))
    return emitOpError() << "operands do not multiply: " << shapeOf(getLhs())
                         << " and " << shapeOf(getRhs());
  if (failed(expectShape(*this, getResult(), "result", *s)))
    return failure();
  return verifySameElementType(*this, {getLhs(), getRhs(), getResult()});
}

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getType().getRank();
  if (int64_t(getAxis()) < 0 || int64_t(getAxis()) >= rank)
    return emitOpError() << "axis " << int64_t(getAxis())
                         << " is out of range for " << shapeOf(getInput());
  return success();
}

LogicalResult ReduceOp::verify() {
  auto in = tensorOf(getInput()).getShape();
  SmallVector<int64_t> expected;
  ArrayRef<int64_t> axes = getAxes();
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= int64_t(in.size()) ||
        (i && axes[i] <= axes[i - 1]))
      return emitOpError() << "axes must be sorted, distinct and in [0, "
                           << in.size() << ")";
  for (int64_t d = 0; d < int64_t(in.size()); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (!reduced)
      expected.push_back(in[d]);
    else if (getKeepdims())
      expected.push_back(1);
  }
  if (failed(expectShape(*this, getResult(), "result", expected)))
    return failure();
  return verifySameElementType(*this, {getInput(), getResult()});
}

//===----------------------------------------------------------------------===//
// data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "element type changes: " << describeType(in)
                         << " -> " << describeType(out);
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "element count changes: " << describeType(in)
                         << " has " << in.getNumElements() << ", "
                         << describeType(out) << " has "
                         << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult TransposeOp::verify() {
  auto in = getInput().getType();
  ArrayRef<int64_t> perm = getPerm();
  if ((int64_t)perm.size() != in.getRank())
    return emitOpError() << "perm has " << perm.size()
                         << " entries for an input of rank " << in.getRank();
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError() << "perm " << describeShape(perm)
                           << " is not a permutation of 0.."
                           << in.getRank() - 1;
    seen[p] = true;
    expected.push_back(in.getDimSize(p));
  }
  if (failed(expectShape(*this, getResult(), "result", expected)))
    return failure();
  return verifySameElementType(*this, {getInput(), getResult()});
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  auto first = tensorOf(getInputs().front());
  int64_t rank = first.getRank(), dim = int64_t(getDim());
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim " << dim << " out of range for rank " << rank;
  SmallVector<int64_t> expected(first.getShape());
  expected[dim] = 0;
  for (Value v : getInputs()) {
    auto t = tensorOf(v);
    if (t.getRank() != rank)
      return emitOpError() << "inputs have different ranks: "
                           << describeType(first) << " and " << describeType(t);
    for (int64_t i = 0; i < rank; ++i)
      if (i != dim && t.getDimSize(i) != first.getDimSize(i))
        return emitOpError()
               << "inputs differ outside dim " << dim << ": "
               << describeType(first) << " and " << describeType(t);
    expected[dim] += t.getDimSize(dim);
  }
  if (failed(expectShape(*this, getResult(), "result", expected)))
    return failure();
  SmallVector<Value> all(getInputs());
  all.push_back(getResult());
  return verifySameElementType(*this, all);
}

LogicalResult SliceOp::verify() {
  auto in = getInput().getType(), out = getType();
  ArrayRef<int64_t> off = getOffsets();
  if (in.getRank() != out.getRank() || (int64_t)off.size() != in.getRank())
    return emitOpError() << "input " << describeType(in) << ", result "
                         << describeType(out) << " and offsets "
                         << describeShape(off) << " must have the same rank";
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (off[i] < 0 || off[i] + out.getDimSize(i) > in.getDimSize(i))
      return emitOpError() << "slice of " << describeShape(out.getShape())
                           << " at offsets " << describeShape(off)
                           << " exceeds input " << describeType(in)
                           << " in dim " << i;
  return verifySameElementType(*this, {getInput(), getResult()});
}

//===----------------------------------------------------------------------===//
// rope / attention
//===----------------------------------------------------------------------===//

/// [S, D] tables for an input whose sequence and head dims are s and d.
static LogicalResult verifyRopeTables(Operation *op, Value cos, Value sin,
                                      int64_t s, int64_t d) {
  if (d % 2 != 0)
    return op->emitOpError() << "rope needs an even head_dim, got " << d;
  if (failed(expectShape(op, cos, "rope cos table [S, D]", {s, d})) ||
      failed(expectShape(op, sin, "rope sin table [S, D]", {s, d})))
    return failure();
  return success();
}

LogicalResult RopeOp::verify() {
  auto x = getInput().getType();
  if (x.getRank() != 4)
    return emitOpError() << "input must be [B, H, S, D], got "
                         << describeType(x);
  if (failed(verifyRopeTables(*this, getCos(), getSin(), x.getDimSize(2),
                              x.getDimSize(3))))
    return failure();
  if (getType() != x)
    return emitOpError() << "result " << describeType(getType())
                         << " must equal input " << describeType(x);
  return verifySameElementType(*this, {getInput(), getCos(), getSin()});
}

LogicalResult AttentionOp::verify() {
  auto q = getQ().getType(), k = getK().getType(), v = getV().getType();
  for (auto [t, name] : {std::pair{q, "q"}, {k, "k"}, {v, "v"}})
    if (t.getRank() != 4)
      return emitOpError() << name << " must be [B, H, S, D], got "
                           << describeType(t);
  if (q.getDimSize(0) != k.getDimSize(0) || k.getDimSize(0) != v.getDimSize(0))
    return emitOpError() << "batch sizes differ: q " << describeType(q)
                         << ", k " << describeType(k) << ", v "
                         << describeType(v);
  if (k.getDimSize(1) != v.getDimSize(1))
    return emitOpError() << "k and v head counts differ: k " << describeType(k)
                         << ", v " << describeType(v);
  if (q.getDimSize(1) % k.getDimSize(1) != 0)
    return emitOpError() << "q heads " << q.getDimSize(1)
                         << " are not a multiple of k/v heads "
                         << k.getDimSize(1);
  if (q.getDimSize(3) != k.getDimSize(3))
    return emitOpError() << "q and k head_dim differ: q " << describeType(q)
                         << ", k " << describeType(k);
  if (k.getDimSize(2) != v.getDimSize(2))
    return emitOpError() << "k and v sequence lengths differ: k "
                         << describeType(k) << ", v " << describeType(v);
  if (!(getScale().convertToDouble() > 0))
    return emitOpError() << "scale must be > 0, got "
                         << getScale().convertToDouble();
  if ((getRopeCos() == nullptr) != (getRopeSin() == nullptr))
    return emitOpError("fused rope needs both a cos and a sin table");
  if (getRopeCos()) {
    if (q.getDimSize(2) != k.getDimSize(2))
      return emitOpError() << "fused rope needs equal q and k sequence "
                              "lengths, got "
                           << q.getDimSize(2) << " and " << k.getDimSize(2);
    if (failed(verifyRopeTables(*this, getRopeCos(), getRopeSin(),
                                q.getDimSize(2), q.getDimSize(3))))
      return failure();
  }
  if (failed(expectShape(*this, getResult(), "result [B, H, Sq, Dv]",
                         {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2),
                          v.getDimSize(3)})))
    return failure();
  return verifySameElementType(
      *this, {getQ(), getK(), getV(), getRopeCos(), getRopeSin(), getResult()});
}

//===----------------------------------------------------------------------===//
// Fourier
//===----------------------------------------------------------------------===//

LogicalResult FourierMixOp::verify() {
  auto rank = getType().getRank();
  ArrayRef<int64_t> dims = getDims();
  if (dims.empty())
    return emitOpError("dims must list at least one dimension");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return emitOpError() << "dim " << d << " out of range for "
                           << describeType(getType());
    if (!seen.insert(d).second)
      return emitOpError() << "dim " << d << " listed twice in "
                           << describeShape(dims);
  }
  return success();
}

static LogicalResult verifyFftAxis(Operation *op, Value in, Value out,
                                   int64_t axis) {
  auto t = tensorOf(in);
  if (axis < 0 || axis >= t.getRank())
    return op->emitOpError()
           << "axis " << axis << " out of range for " << describeType(t);
  if (tensorOf(out).getShape() != t.getShape())
    return op->emitOpError()
           << "result " << shapeOf(out) << " must have the input's shape "
           << describeShape(t.getShape());
  return success();
}

LogicalResult FftOp::verify() {
  if (failed(verifyFftAxis(*this, getInput(), getResult(), int64_t(getAxis()))))
    return failure();
  if (auto pad = getPadTo()) {
    int64_t n = tensorOf(getInput()).getDimSize(int64_t(getAxis()));
    if (int64_t(*pad) < n)
      return emitOpError() << "pad_to " << int64_t(*pad)
                           << " is smaller than the axis size " << n;
  }
  return success();
}
LogicalResult IfftOp::verify() {
  return verifyFftAxis(*this, getInput(), getResult(), int64_t(getAxis()));
}

/// `pairs` is `complex` with a trailing axis of 2.
static LogicalResult verifyComplexPairs(Operation *op, RankedTensorType pairs,
                                        RankedTensorType complex) {
  ArrayRef<int64_t> p = pairs.getShape(), c = complex.getShape();
  if (p.empty() || p.back() != 2 || p.drop_back() != c)
    return op->emitOpError()
           << "the real tensor " << describeType(pairs)
           << " must be the complex one " << describeType(complex)
           << " with a trailing axis of 2 (real, imaginary)";
  return success();
}
LogicalResult AsComplexOp::verify() {
  return verifyComplexPairs(*this, getInput().getType(), getType());
}
LogicalResult AsRealOp::verify() {
  return verifyComplexPairs(*this, getType(), getInput().getType());
}

int64_t FftConvOp::defaultFftSize(int64_t l) {
  return std::max<int64_t>(16, (int64_t)llvm::PowerOf2Ceil(2 * l));
}

LogicalResult FftConvOp::verify() {
  auto u = getU().getType();
  if (u.getRank() != 3)
    return emitOpError() << "u must be [B, H, L], got " << describeType(u);
  int64_t b = u.getDimSize(0), h = u.getDimSize(1), l = u.getDimSize(2);
  auto k = getK().getType();
  if (k.getRank() != 2 || k.getDimSize(0) != h || k.getDimSize(1) > l)
    return emitOpError() << "filter k must be [H = " << h << ", Lk <= " << l
                         << "], got " << describeType(k);
  if (failed(expectShape(*this, getD(), "D", {h})))
    return failure();
  if (getV() && failed(expectShape(*this, getV(), "v", u.getShape())))
    return failure();
  if (getQ() && failed(expectShape(*this, getQ(), "q", u.getShape())))
    return failure();
  if (getDropoutMask() &&
      failed(expectShape(*this, getDropoutMask(), "dropout mask", {b, h})))
    return failure();
  int64_t n = int64_t(getFftSize());
  if (n < 16 || n > 16384 || !llvm::isPowerOf2_64(n))
    return emitOpError() << "fft_size " << n
                         << " must be a power of two in [16, 16384]";
  if (l > n / 2)
    return emitOpError() << "seq_len L = " << l
                         << " exceeds fft_size / 2 = " << n / 2
                         << " (the circular convolution would wrap)";
  if (int64_t(getHeadDim()) < 1 || h % int64_t(getHeadDim()) != 0)
    return emitOpError() << "head_dim " << int64_t(getHeadDim())
                         << " must be >= 1 and divide H = " << h;
  if (getType() != u)
    return emitOpError() << "result " << describeType(getType())
                         << " must equal u " << describeType(u);
  return verifySameElementType(
      *this, {getU(), getK(), getD(), getV(), getQ(), getDropoutMask()});
}

//===----------------------------------------------------------------------===//
// collectives
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (int64_t(getRanks()) < 1)
    return emitOpError() << "ranks must be >= 1, got " << int64_t(getRanks());
  return success();
}

LogicalResult AllGatherOp::verify() {
  auto in = getInput().getType();
  if (int64_t(getRanks()) < 1)
    return emitOpError() << "ranks must be >= 1, got " << int64_t(getRanks());
  if (int64_t(getDim()) < 0 || int64_t(getDim()) >= in.getRank())
    return emitOpError() << "dim " << int64_t(getDim()) << " out of range for "
                         << describeType(in);
  SmallVector<int64_t> expected(in.getShape());
  expected[int64_t(getDim())] *= int64_t(getRanks());
  if (failed(expectShape(*this, getResult(), "result", expected)))
    return failure();
  return verifySameElementType(*this, {getInput(), getResult()});
}

//===----------------------------------------------------------------------===//
// kernel_call / regions
//===----------------------------------------------------------------------===//

LogicalResult KernelCallOp::verify() {
  if (getKernel().empty())
    return emitOpError("kernel name must not be empty");
  if (auto &hook =
          cast<SeamDialect>((*this)->getDialect())->getKernelCallHook())
    return hook(getOperation());
  return success();
}

LogicalResult
KernelCallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = getCalleeAttr();
  if (!callee)
    return success();
  auto body = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      getOperation(), callee);
  if (!body || body.isExternal() || !body->hasAttr(kBoundaryBodyAttrName))
    return emitOpError() << "callee " << callee
                         << " is not a func.func with a body tagged "
                         << kBoundaryBodyAttrName;
  if (TypeRange(body.getArgumentTypes()) != TypeRange(getArgs().getTypes()) ||
      TypeRange(body.getResultTypes()) != TypeRange(getResultTypes()))
    return emitOpError() << "callee " << callee << " has type "
                         << body.getFunctionType() << ", not the call's";
  return success();
}

static LogicalResult verifyRegionResults(Operation *op, Region &body) {
  if (body.empty() || body.front().empty())
    return op->emitOpError("region must end with seam.yield");
  auto yield = dyn_cast<YieldOp>(body.front().getTerminator());
  if (!yield)
    return op->emitOpError("region must end with seam.yield");
  if (yield.getValues().getTypes() != op->getResultTypes())
    return op->emitOpError() << "yields " << yield.getValues().size()
                             << " values whose types do not match the "
                             << op->getNumResults() << " results";
  return success();
}

YieldOp BlockOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}
YieldOp FusionOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult BlockOp::verify() {
  if (getKind().empty())
    return emitOpError("block kind must not be empty");
  if (int64_t(getIndex()) < 0)
    return emitOpError() << "block index must be >= 0, got "
                         << int64_t(getIndex());
  return verifyRegionResults(*this, getBody());
}

LogicalResult FusionOp::verify() {
  return verifyRegionResults(*this, getBody());
}

#define GET_OP_CLASSES
#include "dialect/seam/SeamOps.cpp.inc"
