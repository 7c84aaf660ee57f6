//===- HostValues.cpp - load-time values and host fallback ops ------------===//
#include "tools/seam-run/HostValues.h"
#include "dialect/seam/SeamOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "runtime/Functional.h"
#include "runtime/HostFallback.h"
#include "tools/seam-run/Primitives.h"
#include <cmath>
#include <complex>

using namespace mlir;
using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

std::vector<int64_t> shapeOf(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return std::vector<int64_t>(tt.getShape().begin(), tt.getShape().end());
}

int64_t count(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool isComplex(Type t) {
  return isa<ComplexType>(cast<RankedTensorType>(t).getElementType());
}

std::vector<int64_t> strides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Calls fn(outIndex, multi-index) for every element of `shape`.
template <typename Fn> void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn fn) {
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t n = count(shape);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(flat, idx);
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

HostTensor paramValue(mlir::seam::ParamOp p) {
  HostTensor t;
  t.shape = shapeOf(p.getType());
  int64_t n = count(t.shape);
  double scale = p.getScale().convertToDouble();
  switch (p.getInit()) {
  case mlir::seam::ParamInit::zeros:
    t.data.assign(n, 0.0f);
    break;
  case mlir::seam::ParamInit::ones:
    t.data.assign(n, 1.0f);
    break;
  case mlir::seam::ParamInit::normal:
  case mlir::seam::ParamInit::uniform: {
    rt::Constant c;
    c.kind = p.getInit() == mlir::seam::ParamInit::normal
                 ? rt::ConstantKind::SeededNormal
                 : rt::ConstantKind::SeededUniform;
    c.seed = p.getSeed();
    c.scale = float(scale);
    t.data = rt::seededValues(c, n);
    break;
  }
  case mlir::seam::ParamInit::data: {
    // The verifier checked: f32 elements of the param's shape.
    ElementsAttr value = *p.getValue();
    if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      t.data.assign(dense.getValues<float>().begin(),
                    dense.getValues<float>().end());
    } else if (auto blob = dyn_cast<DenseF32ResourceElementsAttr>(value)) {
      std::optional<ArrayRef<float>> data = blob.tryGetAsArrayRef();
      if (data && int64_t(data->size()) == n)
        t.data.assign(data->begin(), data->end());
    }
    if (int64_t(t.data.size()) != n) {
      // A dense_resource whose blob is missing (or was dropped): the
      // parameter cannot be materialised; the caller reports it.
      t.data.clear();
      t.shape.clear();
    }
    break;
  }
  case mlir::seam::ParamInit::rope_cos:
  case mlir::seam::ParamInit::rope_sin: {
    // [S, D] rotate-half tables: angle(s, i) = s * base^(-2i/D) for the
    // first half, repeated for the second.
    int64_t s = t.shape[0], d = t.shape[1], half = d / 2;
    bool cos = p.getInit() == mlir::seam::ParamInit::rope_cos;
    t.data.resize(n);
    for (int64_t pos = 0; pos < s; ++pos)
      for (int64_t i = 0; i < d; ++i) {
        double freq = std::pow(scale, -2.0 * double(i % half) / double(d));
        double a = double(pos) * freq;
        t.data[pos * d + i] = float(cos ? std::cos(a) : std::sin(a));
      }
    break;
  }
  }
  return t;
}

} // namespace

HostTensor seamrun::syntheticInput(llvm::ArrayRef<int64_t> shape, uint64_t seed,
                                   bool complex) {
  rt::Constant c;
  c.kind = rt::ConstantKind::SeededUniform;
  c.seed = seed;
  c.scale = 1.0f;
  HostTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.data = rt::seededValues(c, count(shape) * (complex ? 2 : 1));
  return t;
}

FailureOr<HostTensor>
seamrun::evalLoadTime(Operation *op, llvm::ArrayRef<const HostTensor *> in) {
  if (auto p = dyn_cast<mlir::seam::ParamOp>(op)) {
    HostTensor t = paramValue(p);
    if (t.shape.empty() && !p.getType().getShape().empty())
      return op->emitError() << "seam-run: parameter '" << p.getName()
                             << "' has no data (its dense_resource blob is "
                                "missing from the file)",
             failure();
    return t;
  }
  std::vector<int64_t> outShape = shapeOf(op->getResult(0).getType());
  int64_t width = isComplex(op->getResult(0).getType()) ? 2 : 1;
  HostTensor out;
  out.shape = outShape;
  out.data.resize(count(outShape) * width);
  if (isa<mlir::seam::ReshapeOp>(op)) {
    out.data = in[0]->data;
    return out;
  }
  if (auto t = dyn_cast<mlir::seam::TransposeOp>(op)) {
    auto inStr = strides(in[0]->shape);
    ArrayRef<int64_t> perm = t.getPerm();
    forEachIndex(outShape, [&](int64_t flat, const std::vector<int64_t> &idx) {
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        src += idx[d] * inStr[perm[d]];
      for (int64_t w = 0; w < width; ++w)
        out.data[flat * width + w] = in[0]->data[src * width + w];
    });
    return out;
  }
  if (auto s = dyn_cast<mlir::seam::SliceOp>(op)) {
    auto inStr = strides(in[0]->shape);
    ArrayRef<int64_t> off = s.getOffsets();
    forEachIndex(outShape, [&](int64_t flat, const std::vector<int64_t> &idx) {
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        src += (idx[d] + off[d]) * inStr[d];
      for (int64_t w = 0; w < width; ++w)
        out.data[flat * width + w] = in[0]->data[src * width + w];
    });
    return out;
  }
  if (auto c = dyn_cast<mlir::seam::ConcatOp>(op)) {
    int64_t dim = int64_t(c.getDim()), base = 0;
    auto outStr = strides(outShape);
    for (const HostTensor *t : in) {
      forEachIndex(
          t->shape, [&](int64_t flat, const std::vector<int64_t> &idx) {
            int64_t dst = 0;
            for (size_t d = 0; d < idx.size(); ++d)
              dst += (idx[d] + (int64_t(d) == dim ? base : 0)) * outStr[d];
            for (int64_t w = 0; w < width; ++w)
              out.data[dst * width + w] = t->data[flat * width + w];
          });
      base += t->shape[dim];
    }
    return out;
  }
  return op->emitError("seam-run: cannot evaluate this op at load time"),
         failure();
}

FailureOr<HostTensor>
seamrun::evalHostOp(Operation *op, llvm::ArrayRef<const HostTensor *> in) {
  std::vector<int64_t> shape = shapeOf(op->getResult(0).getType());
  HostTensor out;
  out.shape = shape;
  // Data movement seam-place-on-host sent here: as at load time.
  if (isa<mlir::seam::TransposeOp, mlir::seam::ReshapeOp, mlir::seam::SliceOp,
          mlir::seam::ConcatOp>(op))
    return evalLoadTime(op, in);
  if (isPrimitiveOp(op) || isa<mlir::seam::AddOp, mlir::seam::MulOp>(op)) {
    // Evaluated in float64 from the f32 operands, then rounded once.
    std::vector<RefTensor> refs(in.size());
    std::vector<const RefTensor *> ptrs;
    for (size_t i = 0; i < in.size(); ++i) {
      refs[i].shape = in[i]->shape;
      refs[i].data.assign(in[i]->data.begin(), in[i]->data.end());
      ptrs.push_back(&refs[i]);
    }
    FailureOr<RefTensor> r = evalPrimitive(op, ptrs);
    if (failed(r))
      return failure();
    out.data.assign(r->data.begin(), r->data.end());
    return out;
  }
  // (re, im) pairs <-> complex: the same interleaved values.
  if (isa<mlir::seam::AsComplexOp, mlir::seam::AsRealOp>(op)) {
    out.data = in[0]->data;
    return out;
  }
  if (auto m = dyn_cast<mlir::seam::FourierMixOp>(op)) {
    std::vector<unsigned> axes(m.getDims().begin(), m.getDims().end());
    out.data = rt::fourierMixReal(in[0]->data, in[0]->shape, axes);
    return out;
  }
  auto fftLike = [&](int64_t axis, bool inverse, bool inComplex,
                     bool outComplex, int64_t padTo = 0) {
    int64_t n = count(shape);
    std::vector<std::complex<float>> buf(n);
    for (int64_t i = 0; i < n; ++i)
      buf[i] = inComplex ? std::complex<float>(in[0]->data[2 * i],
                                               in[0]->data[2 * i + 1])
                         : std::complex<float>(in[0]->data[i], 0.0f);
    rt::fftAlongAxis(buf, shape, unsigned(axis), inverse, padTo);
    out.data.resize(n * (outComplex ? 2 : 1));
    for (int64_t i = 0; i < n; ++i) {
      if (outComplex) {
        out.data[2 * i] = buf[i].real();
        out.data[2 * i + 1] = buf[i].imag();
      } else {
        out.data[i] = buf[i].real();
      }
    }
  };
  if (auto f = dyn_cast<mlir::seam::FftOp>(op)) {
    fftLike(int64_t(f.getAxis()), false, isComplex(f.getInput().getType()),
            isComplex(f.getType()),
            f.getPadTo() ? int64_t(*f.getPadTo()) : int64_t(0));
    return out;
  }
  if (auto f = dyn_cast<mlir::seam::IfftOp>(op)) {
    fftLike(int64_t(f.getAxis()), true, true, isComplex(f.getType()));
    return out;
  }
  if (auto c = dyn_cast<mlir::seam::FftConvOp>(op)) {
    // u [B, H, L], k [H, Lk], d [H]: y = irfft(rfft(u', n) rfft(k, n) / n)
    // [:L] + u' d, with the optional v, gelu and q gating of the reference.
    int64_t b = shape[0], h = shape[1], l = shape[2];
    int64_t n = int64_t(c.getFftSize());
    int64_t lk = in[1]->shape[1];
    auto gelu = [](float x) {
      return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
    };
    unsigned next = 3;
    const HostTensor *v = c.getV() ? in[next++] : nullptr;
    const HostTensor *q = c.getQ() ? in[next++] : nullptr;
    const HostTensor *mask = c.getDropoutMask() ? in[next++] : nullptr;
    out.data.assign(b * h * l, 0.0f);
    std::vector<std::complex<float>> ku(n), kk(n);
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t hi = 0; hi < h; ++hi) {
        std::vector<float> u(l);
        for (int64_t t = 0; t < l; ++t) {
          int64_t i = (bi * h + hi) * l + t;
          float x = in[0]->data[i];
          if (v)
            x *= v->data[i];
          u[t] = c.getGeluInp() ? gelu(x) : x;
        }
        std::fill(ku.begin(), ku.end(), 0.0f);
        std::fill(kk.begin(), kk.end(), 0.0f);
        for (int64_t t = 0; t < l; ++t)
          ku[t] = u[t];
        for (int64_t t = 0; t < lk; ++t)
          kk[t] = in[1]->data[hi * lk + t];
        rt::fftAlongAxis(ku, {n}, 0, false);
        rt::fftAlongAxis(kk, {n}, 0, false);
        for (int64_t f = 0; f < n; ++f)
          ku[f] *= kk[f];
        rt::fftAlongAxis(ku, {n}, 0, true); // 1/n normalised
        for (int64_t t = 0; t < l; ++t) {
          int64_t i = (bi * h + hi) * l + t;
          float y = ku[t].real() + u[t] * in[2]->data[hi];
          if (c.getGelu())
            y = gelu(y);
          if (mask)
            y *= mask->data[bi * h + hi];
          if (q)
            y *= c.getGeluQ() ? gelu(q->data[i]) : q->data[i];
          out.data[i] = y;
        }
      }
    return out;
  }
  return op->emitError("seam-run: no host implementation for this op"),
         failure();
}
