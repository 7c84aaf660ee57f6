//===- Primitives.cpp - seam's primitive ops, evaluated on the host -------===//
#include "tools/seam-run/Primitives.h"
#include "dialect/seam/SeamOps.h"
#include <cmath>

using namespace mlir;
using namespace seamrun;
namespace sm = mlir::seam;

namespace {

std::vector<int64_t> shapeOfType(Type t) {
  auto s = cast<RankedTensorType>(t).getShape();
  return std::vector<int64_t>(s.begin(), s.end());
}

int64_t product(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Strides of `shape` read as broadcast to `out` (right-aligned; a
/// stretched or absent dimension has stride 0).
std::vector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<int64_t> out) {
  std::vector<int64_t> own = stridesOf(shape), s(out.size(), 0);
  size_t off = out.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    s[off + d] = shape[d] == 1 ? 0 : own[d];
  return s;
}

/// fn(flat output index, offset into a, offset into b) over `out`.
template <typename Fn>
void forEachBroadcast(llvm::ArrayRef<int64_t> out,
                      const std::vector<int64_t> &sa,
                      const std::vector<int64_t> &sb, Fn fn) {
  int64_t n = product(out);
  std::vector<int64_t> idx(out.size(), 0);
  int64_t oa = 0, ob = 0;
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(flat, oa, ob);
    for (int d = int(out.size()) - 1; d >= 0; --d) {
      ++idx[d];
      oa += sa[d];
      ob += sb[d];
      if (idx[d] < out[d])
        break;
      oa -= sa[d] * out[d];
      ob -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

double unary(Operation *op, double x) {
  if (isa<sm::ExpOp>(op))
    return std::exp(x);
  if (isa<sm::LogOp>(op))
    return std::log(x);
  if (isa<sm::SqrtOp>(op))
    return std::sqrt(x);
  if (isa<sm::TanhOp>(op))
    return std::tanh(x);
  if (isa<sm::ErfOp>(op))
    return std::erf(x);
  if (isa<sm::SigmoidOp>(op))
    return 1.0 / (1.0 + std::exp(-x));
  if (isa<sm::NegOp>(op))
    return -x;
  if (isa<sm::ReciprocalOp>(op))
    return 1.0 / x;
  if (isa<sm::ReluOp>(op))
    return x > 0 ? x : 0.0;
  return std::fabs(x); // AbsOp
}

double binary(Operation *op, double a, double b) {
  if (isa<sm::AddOp>(op))
    return a + b;
  if (isa<sm::MulOp>(op))
    return a * b;
  if (isa<sm::SubOp>(op))
    return a - b;
  if (isa<sm::DivOp>(op))
    return a / b;
  if (isa<sm::PowOp>(op))
    return std::pow(a, b);
  if (isa<sm::MaxOp>(op))
    return std::fmax(a, b);
  return std::fmin(a, b); // MinOp
}

RefTensor matmul(const RefTensor &a0, const RefTensor &b0,
                 llvm::ArrayRef<int64_t> outShape) {
  std::vector<int64_t> sa = a0.shape, sb = b0.shape;
  if (sa.size() == 1)
    sa.insert(sa.begin(), 1);
  if (sb.size() == 1)
    sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  auto batch = sm::broadcastShapes(llvm::ArrayRef(sa).drop_back(2),
                                   llvm::ArrayRef(sb).drop_back(2));
  std::vector<int64_t> bs(batch->begin(), batch->end());
  std::vector<int64_t> aBatch(sa.begin(), sa.end() - 2),
      bBatch(sb.begin(), sb.end() - 2);
  auto stA = broadcastStrides(aBatch, bs), stB = broadcastStrides(bBatch, bs);
  RefTensor out;
  out.shape.assign(outShape.begin(), outShape.end());
  out.data.assign(product(bs) * m * n, 0.0);
  forEachBroadcast(bs, stA, stB, [&](int64_t flat, int64_t oa, int64_t ob) {
    const double *aMat = a0.data.data() + oa * m * k;
    const double *bMat = b0.data.data() + ob * k * n;
    double *cMat = out.data.data() + flat * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        double av = aMat[i * k + p];
        for (int64_t j = 0; j < n; ++j)
          cMat[i * n + j] += av * bMat[p * n + j];
      }
  });
  return out;
}

} // namespace

bool seamrun::isPrimitiveOp(Operation *op) {
  return isa<sm::ExpOp, sm::LogOp, sm::SqrtOp, sm::TanhOp, sm::ErfOp,
             sm::SigmoidOp, sm::NegOp, sm::ReciprocalOp, sm::ReluOp, sm::AbsOp,
             sm::SubOp, sm::DivOp, sm::PowOp, sm::MaxOp, sm::MinOp,
             sm::MatmulOp, sm::SoftmaxOp, sm::ReduceOp>(op);
}

FailureOr<RefTensor>
seamrun::evalPrimitive(Operation *op, llvm::ArrayRef<const RefTensor *> in) {
  std::vector<int64_t> outShape = shapeOfType(op->getResult(0).getType());
  RefTensor out;
  out.shape = outShape;
  int64_t n = product(outShape);
  if (op->getNumOperands() == 1 &&
      op->hasTrait<OpTrait::seam::ElementwiseFusion>()) {
    out.data.resize(n);
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = unary(op, in[0]->data[i]);
    return out;
  }
  if (isa<sm::AddOp, sm::MulOp, sm::SubOp, sm::DivOp, sm::PowOp, sm::MaxOp,
          sm::MinOp>(op)) {
    out.data.resize(n);
    auto sa = broadcastStrides(in[0]->shape, outShape);
    auto sb = broadcastStrides(in[1]->shape, outShape);
    forEachBroadcast(outShape, sa, sb, [&](int64_t f, int64_t a, int64_t b) {
      out.data[f] = binary(op, in[0]->data[a], in[1]->data[b]);
    });
    return out;
  }
  if (isa<sm::MatmulOp>(op))
    return matmul(*in[0], *in[1], outShape);
  if (auto s = dyn_cast<sm::SoftmaxOp>(op)) {
    int64_t axis = int64_t(s.getAxis());
    int64_t len = outShape[axis];
    int64_t inner = product(llvm::ArrayRef(outShape).drop_front(axis + 1));
    int64_t outer = product(llvm::ArrayRef(outShape).take_front(axis));
    out.data.resize(n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const double *x = in[0]->data.data() + o * len * inner + i;
        double *y = out.data.data() + o * len * inner + i;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len; ++j)
          mx = std::fmax(mx, x[j * inner]);
        for (int64_t j = 0; j < len; ++j)
          sum += (y[j * inner] = std::exp(x[j * inner] - mx));
        for (int64_t j = 0; j < len; ++j)
          y[j * inner] /= sum;
      }
    return out;
  }
  if (auto r = dyn_cast<sm::ReduceOp>(op)) {
    const RefTensor &x = *in[0];
    llvm::ArrayRef<int64_t> axes = r.getAxes();
    // Output index of each input element: the kept dimensions' strides.
    std::vector<int64_t> keptShape;
    keptShape.reserve(x.shape.size());
    for (int64_t d = 0; d < int64_t(x.shape.size()); ++d)
      keptShape.push_back(llvm::is_contained(axes, d) ? 1 : x.shape[d]);
    auto st = broadcastStrides(keptShape, x.shape);
    bool isMax = r.getKind() == sm::ReduceKind::max;
    out.data.assign(n, isMax ? -INFINITY : 0.0);
    std::vector<int64_t> zero(x.shape.size(), 0);
    forEachBroadcast(x.shape, st, zero, [&](int64_t f, int64_t o, int64_t) {
      out.data[o] =
          isMax ? std::fmax(out.data[o], x.data[f]) : out.data[o] + x.data[f];
    });
    if (r.getKind() == sm::ReduceKind::mean) {
      double cnt = double(product(x.shape)) / double(std::max<int64_t>(n, 1));
      for (double &v : out.data)
        v /= cnt;
    }
    return out;
  }
  return op->emitError("no host evaluation for this primitive"), failure();
}
