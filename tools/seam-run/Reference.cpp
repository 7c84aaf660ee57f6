//===- Reference.cpp - a float64 reference interpreter of seam ------------===//
//
// Every op is computed from its definition in SeamOps.td, in double, with
// plain loops: the point is to be obviously right, not fast. DFTs are direct
// sums over an exact twiddle table (index k * n mod N), fftconv a direct
// causal convolution (what the FFT route computes when L <= fft_size / 2).
//
//===----------------------------------------------------------------------===//
#include "tools/seam-run/Reference.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "runtime/Numerics.h"
#include "tools/common/NestingGuard.h"
#include "tools/seam-run/HostValues.h"
#include "tools/seam-run/Primitives.h"
#include "tools/seam-run/Registration.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include <chrono>
#include <cmath>
#include <complex>
#include <limits>

using namespace mlir;
using namespace seamrun;
namespace rt = ::seam::rt;
namespace sm = ::mlir::seam;

int64_t RefTensor::count() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool ReferenceReport::pass() const {
  for (const ReferenceOutput &o : outputs)
    if (!o.pass)
      return false;
  return true;
}

namespace {

using Shape = std::vector<int64_t>;
using cplx = std::complex<double>;

int64_t countOf(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape shapeOf(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return Shape(tt.getShape().begin(), tt.getShape().end());
}

bool isComplexType(Type t) {
  return isa<ComplexType>(cast<RankedTensorType>(t).getElementType());
}

bool isBf16Type(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  return tt && tt.getElementType().isBF16();
}

Shape stridesOf(llvm::ArrayRef<int64_t> shape) {
  Shape s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Calls fn(flat, index) for every element of `shape`, in row-major order.
template <typename Fn> void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn fn) {
  Shape idx(shape.size(), 0);
  int64_t n = countOf(shape);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(flat, idx);
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

RefTensor makeTensor(Shape shape, bool complex = false) {
  RefTensor t;
  t.shape = std::move(shape);
  t.complex = complex;
  t.data.assign(size_t(t.count() * (complex ? 2 : 1)), 0.0);
  return t;
}

/// The tensor as complex numbers (real ones promoted).
std::vector<cplx> toComplex(const RefTensor &t) {
  std::vector<cplx> c(size_t(t.count()));
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = t.complex ? cplx(t.data[2 * i], t.data[2 * i + 1])
                     : cplx(t.data[i], 0.0);
  return c;
}

RefTensor fromComplex(const std::vector<cplx> &c, Shape shape,
                      bool keepComplex) {
  RefTensor t = makeTensor(std::move(shape), keepComplex);
  for (size_t i = 0; i < c.size(); ++i) {
    if (keepComplex) {
      t.data[2 * i] = c[i].real();
      t.data[2 * i + 1] = c[i].imag();
    } else {
      t.data[i] = c[i].real();
    }
  }
  return t;
}

/// The arithmetic being modelled (ReferenceRounding), set by
/// evaluateReference for one evaluation: in f32 (Nearest: every product and
/// partial sum of a reduction rounded to f32, as PSUM and the engines
/// accumulate), or with perturbed terms (Perturbed: each of a reduction's n
/// terms times 1 + r (u' + u sqrt(n)), u = 2^-24, r in [-1, 1) from a fixed
/// sequence: about the error of summing them in f32, cancellation included,
/// and, in an op of a bf16 result (u' = 2^-8), of operands the device holds
/// in bf16 that the reference has exact: DFT matrices, softmax
/// probabilities).
thread_local bool f32Arithmetic = false;
thread_local bool perturbedTerms = false;
thread_local double operandUnit = 0;    ///< u' of the op being evaluated
thread_local uint64_t perturbation = 0; ///< position in the fixed sequence

/// The next r in [-1, 1) (splitmix64 of the position).
double nextPerturbation() {
  uint64_t z = (++perturbation) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1p-52 - 1.0;
}

/// `v` in the arithmetic being modelled.
double f32(double v) { return f32Arithmetic ? double(float(v)) : v; }
std::complex<double> f32(std::complex<double> v) {
  return f32Arithmetic ? std::complex<double>(float(v.real()), float(v.imag()))
                       : v;
}

/// One of `n` terms of a sum, in the arithmetic being modelled.
double term(double v, int64_t n) {
  if (perturbedTerms)
    return v * (1.0 + nextPerturbation() *
                          (operandUnit + 0x1p-24 * std::sqrt(double(n))));
  return f32(v);
}
std::complex<double> term(std::complex<double> v, int64_t n) {
  if (perturbedTerms)
    return {term(v.real(), n), term(v.imag(), n)};
  return f32(v);
}

// The activations, in the arithmetic being modelled: in f32 each step of
// the formula rounds (1 + tanh(...) of a negative argument cancels: gelu_tanh
// is off by ~1e-5 of itself there in f32).
double gelu(double x) {
  if (f32Arithmetic) {
    float xf = float(x);
    return 0.5f * xf * (1.0f + std::erf(xf * float(M_SQRT1_2)));
  }
  return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
}
double geluTanh(double x) {
  if (f32Arithmetic) {
    float xf = float(x), k = float(std::sqrt(2.0 / M_PI));
    return 0.5f * xf * (1.0f + std::tanh(k * (xf + 0.044715f * xf * xf * xf)));
  }
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double silu(double x) {
  if (f32Arithmetic) {
    float xf = float(x);
    return xf / (1.0f + std::exp(-xf));
  }
  return x / (1.0 + std::exp(-x));
}

/// The activation named as seam.linear spells it.
double activate(llvm::StringRef name, double x) {
  if (name == "gelu")
    return gelu(x);
  if (name == "gelu_tanh")
    return geluTanh(x);
  if (name == "silu")
    return silu(x);
  return x;
}

//===-- Dense and normalisation -------------------------------------------===//

/// y = act(x W (+ b)) (* scale), over the last dimension.
RefTensor linear(const RefTensor &x, const RefTensor &w, const RefTensor *b,
                 const RefTensor *scale, llvm::StringRef act) {
  int64_t k = w.shape[0], n = w.shape[1];
  int64_t m = x.count() / std::max<int64_t>(k, 1);
  Shape out = x.shape;
  out.back() = n;
  RefTensor y = makeTensor(out);
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t kk = 0; kk < k; ++kk) {
      double a = x.data[i * k + kk];
      const double *wr = &w.data[kk * n];
      for (int64_t j = 0; j < n; ++j)
        row[j] = f32(row[j] + term(a * wr[j], k));
    }
    for (int64_t j = 0; j < n; ++j) {
      double v = row[j] + (b ? b->data[j] : 0.0);
      v = activate(act, v);
      if (scale)
        v *= scale->data[j];
      y.data[i * n + j] = v;
    }
  }
  return y;
}

RefTensor layerNorm(const RefTensor &x, const RefTensor *scale,
                    const RefTensor *bias, double eps, double offset) {
  int64_t d = x.shape.back(), rows = x.count() / std::max<int64_t>(d, 1);
  RefTensor y = makeTensor(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *in = &x.data[r * d];
    double mean = 0;
    for (int64_t i = 0; i < d; ++i)
      mean = f32(mean + term(in[i], d));
    mean /= double(d);
    double var = 0;
    for (int64_t i = 0; i < d; ++i)
      var = f32(var + term(f32(in[i] - mean) * f32(in[i] - mean), d));
    var /= double(d);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i) {
      double v = (in[i] - mean) * inv;
      if (scale)
        v *= scale->data[i] + offset;
      if (bias)
        v += bias->data[i];
      y.data[r * d + i] = v;
    }
  }
  return y;
}

RefTensor rmsNorm(const RefTensor &x, const RefTensor *scale, double eps) {
  int64_t d = x.shape.back(), rows = x.count() / std::max<int64_t>(d, 1);
  RefTensor y = makeTensor(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *in = &x.data[r * d];
    double ms = 0;
    for (int64_t i = 0; i < d; ++i)
      ms = f32(ms + term(in[i] * in[i], d));
    double inv = 1.0 / std::sqrt(ms / double(d) + eps);
    for (int64_t i = 0; i < d; ++i)
      y.data[r * d + i] = in[i] * inv * (scale ? scale->data[i] : 1.0);
  }
  return y;
}

//===-- Elementwise -------------------------------------------------------===//

template <typename Fn> RefTensor unary(const RefTensor &x, Fn fn) {
  RefTensor y = makeTensor(x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    y.data[i] = fn(x.data[i]);
  return y;
}

/// Numpy broadcasting: shapes right-aligned, a dimension of 1 stretches.
template <typename Fn>
RefTensor binary(const RefTensor &a, const RefTensor &b, const Shape &out,
                 Fn fn) {
  RefTensor y = makeTensor(out);
  size_t rank = out.size();
  auto bstrides = [&](const RefTensor &t) {
    Shape s(rank, 0), own = stridesOf(t.shape);
    size_t lead = rank - t.shape.size();
    for (size_t d = 0; d < t.shape.size(); ++d)
      s[lead + d] = t.shape[d] == 1 ? 0 : own[d];
    return s;
  };
  Shape sa = bstrides(a), sb = bstrides(b);
  forEachIndex(out, [&](int64_t flat, const Shape &idx) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < rank; ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    y.data[flat] = fn(a.data[ia], b.data[ib]);
  });
  return y;
}

//===-- Data movement (complex-aware) -------------------------------------===//

RefTensor reshape(const RefTensor &x, Shape out) {
  RefTensor y = x;
  y.shape = std::move(out);
  return y;
}

RefTensor transpose(const RefTensor &x, llvm::ArrayRef<int64_t> perm) {
  Shape out(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    out[d] = x.shape[perm[d]];
  RefTensor y = makeTensor(out, x.complex);
  int w = x.complex ? 2 : 1;
  Shape in = stridesOf(x.shape);
  forEachIndex(out, [&](int64_t flat, const Shape &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += idx[d] * in[perm[d]];
    for (int k = 0; k < w; ++k)
      y.data[flat * w + k] = x.data[src * w + k];
  });
  return y;
}

RefTensor slice(const RefTensor &x, llvm::ArrayRef<int64_t> offsets,
                const Shape &out) {
  RefTensor y = makeTensor(out, x.complex);
  int w = x.complex ? 2 : 1;
  Shape in = stridesOf(x.shape);
  forEachIndex(out, [&](int64_t flat, const Shape &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (idx[d] + offsets[d]) * in[d];
    for (int k = 0; k < w; ++k)
      y.data[flat * w + k] = x.data[src * w + k];
  });
  return y;
}

RefTensor concat(llvm::ArrayRef<const RefTensor *> xs, int64_t dim) {
  Shape out = xs.front()->shape;
  out[dim] = 0;
  for (const RefTensor *t : xs)
    out[dim] += t->shape[dim];
  bool complex = xs.front()->complex;
  RefTensor y = makeTensor(out, complex);
  int w = complex ? 2 : 1;
  Shape os = stridesOf(out);
  int64_t base = 0;
  for (const RefTensor *t : xs) {
    forEachIndex(t->shape, [&](int64_t flat, const Shape &idx) {
      int64_t dst = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        dst += (idx[d] + (int64_t(d) == dim ? base : 0)) * os[d];
      for (int k = 0; k < w; ++k)
        y.data[dst * w + k] = t->data[flat * w + k];
    });
    base += t->shape[dim];
  }
  return y;
}

//===-- Attention ---------------------------------------------------------===//

/// Rotate-half RoPE of [B, H, S, D] with [S, D] tables.
RefTensor rope(const RefTensor &x, const RefTensor &cos, const RefTensor &sin) {
  int64_t s = x.shape[2], d = x.shape[3], half = d / 2;
  int64_t rows = x.count() / std::max<int64_t>(d, 1);
  RefTensor y = makeTensor(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t pos = r % s;
    const double *in = &x.data[r * d];
    for (int64_t i = 0; i < d; ++i) {
      double rot = i < half ? -in[i + half] : in[i - half];
      y.data[r * d + i] =
          in[i] * cos.data[pos * d + i] + rot * sin.data[pos * d + i];
    }
  }
  return y;
}

/// softmax(scale q k^T [+ causal mask]) v per (batch, head); query head h
/// reads kv head h / (H / Hkv).
RefTensor attention(const RefTensor &q, const RefTensor &k, const RefTensor &v,
                    double scale, bool causal) {
  int64_t b = q.shape[0], h = q.shape[1], sq = q.shape[2], d = q.shape[3];
  int64_t hkv = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  int64_t group = h / std::max<int64_t>(hkv, 1);
  RefTensor y = makeTensor({b, h, sq, dv});
  std::vector<double> p(static_cast<size_t>(sk));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi) {
      int64_t kh = hi / group;
      const double *qb = &q.data[((bi * h + hi) * sq) * d];
      const double *kb = &k.data[((bi * hkv + kh) * sk) * d];
      const double *vb = &v.data[((bi * hkv + kh) * sk) * dv];
      double *yb = &y.data[((bi * h + hi) * sq) * dv];
      for (int64_t i = 0; i < sq; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        int64_t keys = causal ? std::min(sk, i + 1) : sk;
        for (int64_t j = 0; j < keys; ++j) {
          double s = 0;
          for (int64_t c = 0; c < d; ++c)
            s = f32(s + term(qb[i * d + c] * kb[j * d + c], d));
          p[j] = s * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < keys; ++j) {
          p[j] = f32(std::exp(f32(p[j] - mx)));
          sum = f32(sum + term(p[j], keys));
        }
        for (int64_t c = 0; c < dv; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < keys; ++j)
            acc = f32(acc + term(p[j] * vb[j * dv + c], keys));
          yb[i * dv + c] = acc / sum;
        }
      }
    }
  return y;
}

//===-- Fourier -----------------------------------------------------------===//

/// The DFT along `axis` of every line: y[k] = sum_n x[n] w^(k n) with w =
/// exp(-+2 pi i / P), P = padTo (or the axis size N), k < N; the inverse is
/// 1/N normalised. Twiddles come from one exact table of P entries.
void dftAxis(std::vector<cplx> &data, const Shape &shape, int64_t axis,
             bool inverse, int64_t padTo = 0) {
  int64_t n = shape[axis], p = padTo > 0 ? padTo : n;
  if (n == 0)
    return;
  std::vector<cplx> tw(static_cast<size_t>(p));
  for (int64_t j = 0; j < p; ++j) {
    double a = 2.0 * M_PI * double(j) / double(p);
    tw[j] = cplx(std::cos(a), inverse ? std::sin(a) : -std::sin(a));
  }
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t outer = countOf(shape) / (n * inner);
  std::vector<cplx> line(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * n * inner + in;
      for (int64_t t = 0; t < n; ++t)
        line[t] = data[base + t * inner];
      for (int64_t kk = 0; kk < n; ++kk) {
        cplx acc = 0;
        for (int64_t t = 0; t < n; ++t)
          acc = f32(acc + term(line[t] * tw[(kk * t) % p], n));
        out[kk] = inverse ? acc / double(n) : acc;
      }
      for (int64_t t = 0; t < n; ++t)
        data[base + t * inner] = out[t];
    }
}

/// fft / ifft along `axis` (real input promoted); the result complex, or
/// its real part.
RefTensor dft(const RefTensor &x, int64_t axis, bool inverse, int64_t padTo,
              bool complexResult) {
  std::vector<cplx> c = toComplex(x);
  dftAxis(c, x.shape, axis, inverse, padTo);
  return fromComplex(c, x.shape, complexResult);
}

/// Re(DFT over `dims`) of real x.
RefTensor fourierMix(const RefTensor &x, llvm::ArrayRef<int64_t> dims) {
  std::vector<cplx> c = toComplex(x);
  for (int64_t d : dims)
    dftAxis(c, x.shape, d, false);
  return fromComplex(c, x.shape, false);
}

/// Hyena fftconv: y = (u' conv k)[:L] + u' d, u' = gelu?(u * v?), then
/// gelu?, * mask, * gelu?(q). The FFT route is a circular convolution of
/// fft_size >= 2L points, which does not wrap for the first L outputs.
RefTensor fftconv(const RefTensor &u, const RefTensor &k, const RefTensor &d,
                  const RefTensor *v, const RefTensor *q, const RefTensor *mask,
                  bool geluOut, bool geluInp, bool geluQ) {
  int64_t b = u.shape[0], h = u.shape[1], l = u.shape[2], lk = k.shape[1];
  RefTensor y = makeTensor(u.shape);
  std::vector<double> up(static_cast<size_t>(l));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi) {
      int64_t row = (bi * h + hi) * l;
      for (int64_t t = 0; t < l; ++t) {
        double x = u.data[row + t] * (v ? v->data[row + t] : 1.0);
        up[t] = geluInp ? gelu(x) : x;
      }
      for (int64_t t = 0; t < l; ++t) {
        double acc = 0;
        for (int64_t j = 0; j <= t && j < lk; ++j)
          acc = f32(acc + term(k.data[hi * lk + j] * up[t - j], lk));
        double val = acc + up[t] * d.data[hi];
        if (geluOut)
          val = gelu(val);
        if (mask)
          val *= mask->data[bi * h + hi];
        if (q)
          val *= geluQ ? gelu(q->data[row + t]) : q->data[row + t];
        y.data[row + t] = val;
      }
    }
  return y;
}

RefTensor fromHost(const rt::HostTensor &h, Shape shape, bool complex,
                   bool bf16) {
  RefTensor t;
  t.shape = std::move(shape);
  t.complex = complex;
  t.data.resize(h.data.size());
  for (size_t i = 0; i < h.data.size(); ++i)
    t.data[i] = bf16 ? double(rt::roundToBf16(h.data[i])) : double(h.data[i]);
  return t;
}

//===-- The interpreter ---------------------------------------------------===//

/// Evaluates ops in program order over a map of live values; a value is
/// freed after its last use. An error is kept in `error` (the first one,
/// naming its op) and every step after it stops.
class Interpreter {
public:
  Interpreter(int ranks, ReferenceRounding rounding)
      : ranks(ranks), rounding(rounding) {}

  std::string error;

  /// Evaluates a function body on `args`; its results in order.
  bool callFunction(func::FuncOp f, std::vector<RefTensor> args,
                    std::vector<RefTensor> &results) {
    if (f.isExternal())
      return fail("function @" + f.getSymName().str() + " has no body");
    if (depth >= 64)
      return fail("calls nest deeper than 64");
    ++depth;
    Block &body = f.getBody().front();
    for (auto [arg, t] : llvm::zip(body.getArguments(), args))
      define(arg, std::move(t));
    bool ok = runBlock(body, results);
    --depth;
    return ok;
  }

  /// One op on given operand values.
  bool evalOne(Operation *op, llvm::ArrayRef<RefTensor> operands,
               std::vector<RefTensor> &results) {
    for (auto [v, t] : llvm::zip(op->getOperands(), operands))
      define(v, t);
    if (!evalOp(op))
      return false;
    for (Value r : op->getResults())
      results.push_back(values.lookup(r));
    return true;
  }

private:
  int ranks;
  ReferenceRounding rounding;
  int depth = 0;
  llvm::DenseMap<Value, RefTensor> values;
  /// Uses left for each value.
  llvm::DenseMap<Value, int64_t> usesLeft;

  bool fail(const std::string &message) {
    if (error.empty())
      error = message;
    return false;
  }

  void define(Value v, RefTensor t) {
    values[v] = std::move(t);
    usesLeft[v] = std::distance(v.use_begin(), v.use_end());
  }

  /// The value of `v` (defined before its uses: the IR is verified).
  const RefTensor &get(Value v) {
    auto it = values.find(v);
    assert(it != values.end() && "a value used before it is defined");
    return it->second;
  }

  const RefTensor *optional(Value v) { return v ? &get(v) : nullptr; }

  /// After `op` ran: its operands have one use less (freed at zero).
  void release(Operation *op) {
    for (Value v : op->getOperands()) {
      auto it = usesLeft.find(v);
      if (it != usesLeft.end() && --it->second <= 0) {
        values.erase(v);
        usesLeft.erase(it);
      }
    }
  }

  /// The ops of `block` in order; the terminator's operands (seam.yield,
  /// func.return) are the results.
  bool runBlock(Block &block, std::vector<RefTensor> &results) {
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        for (Value v : op.getOperands())
          results.push_back(get(v));
        release(&op);
        return true;
      }
      if (!evalOp(&op))
        return false;
    }
    return fail("a block without a terminator");
  }

  bool set(Operation *op, unsigned i, RefTensor t) {
    Type type = op->getResult(i).getType();
    if (t.shape != shapeOf(type) || t.complex != isComplexType(type))
      return fail("internal: computed " + sm::describeShape(t.shape) +
                  (t.complex ? " complex" : "") + " for a result of type " +
                  sm::describeType(type));
    round(op, type, t);
    define(op->getResult(i), std::move(t));
    return true;
  }

  /// ReferenceRounding of an op's result `t` of `type`. Regions and calls
  /// pass on what their ops rounded; data movement is exact.
  void round(Operation *op, Type type, RefTensor &t) {
    if (rounding == ReferenceRounding::Exact ||
        isa<sm::BlockOp, sm::FusionOp, func::CallOp, sm::ParamOp>(op))
      return;
    bool bf16 = isBf16Type(type);
    if (rounding == ReferenceRounding::Nearest) {
      for (double &v : t.data)
        v = bf16 ? double(rt::roundToBf16(float(v))) : double(float(v));
      return;
    }
    if (isa<sm::ReshapeOp, sm::TransposeOp, sm::SliceOp, sm::ConcatOp,
            sm::AllGatherOp>(op))
      return;
    // Each result is stored in its dtype (its sums' error is in the terms).
    double u = bf16 ? 0x1p-8 : 0x1p-24;
    for (double &v : t.data)
      v *= 1.0 + nextPerturbation() * u;
  }

  bool setAll(Operation *op, std::vector<RefTensor> out) {
    if (out.size() != op->getNumResults())
      return fail("internal: result count differs");
    for (unsigned i = 0; i < out.size(); ++i)
      if (!set(op, i, std::move(out[i])))
        return false;
    return true;
  }

  bool evalOp(Operation *op) {
    size_t before = error.size();
    operandUnit = op->getNumResults() && isBf16Type(op->getResult(0).getType())
                      ? 0x1p-8
                      : 0.0;
    bool ok = dispatch(op);
    if (!ok && before == 0 && !error.empty() && !located) {
      // The innermost op that failed names itself.
      std::string where;
      llvm::raw_string_ostream os(where);
      os << op->getLoc();
      error = "'" + op->getName().getStringRef().str() + "' at " + where +
              ": " + error;
      located = true;
    }
    if (ok)
      release(op);
    return ok;
  }
  bool located = false;

  bool dispatch(Operation *op) {
    using namespace mlir::seam;
    if (auto p = dyn_cast<ParamOp>(op)) {
      FailureOr<rt::HostTensor> h = evalLoadTime(op, {});
      if (failed(h))
        return fail("cannot evaluate the parameter");
      return set(
          op, 0,
          fromHost(*h, shapeOf(p.getType()), false, isBf16Type(p.getType())));
    }
    if (isPrimitiveOp(op)) {
      std::vector<RefTensor> operands;
      operands.reserve(op->getNumOperands());
      for (Value v : op->getOperands())
        operands.push_back(get(v));
      std::vector<const RefTensor *> ptrs;
      ptrs.reserve(operands.size());
      for (const RefTensor &t : operands)
        ptrs.push_back(&t);
      FailureOr<RefTensor> r = evalPrimitive(op, ptrs);
      if (failed(r))
        return fail("cannot evaluate the primitive");
      return set(op, 0, std::move(*r));
    }
    if (auto l = dyn_cast<LinearOp>(op))
      return set(op, 0,
                 linear(get(l.getInput()), get(l.getWeight()),
                        optional(l.getBias()), optional(l.getScale()),
                        l.getActivation().value_or("")));
    if (auto n = dyn_cast<LayerNormOp>(op))
      return set(op, 0,
                 layerNorm(get(n.getInput()), optional(n.getScale()),
                           optional(n.getBias()),
                           n.getEpsilon().convertToDouble(),
                           n.getScaleOffset().convertToDouble()));
    if (auto n = dyn_cast<RmsNormOp>(op))
      return set(op, 0,
                 rmsNorm(get(n.getInput()), optional(n.getScale()),
                         n.getEpsilon().convertToDouble()));
    if (isa<GeluOp>(op))
      return set(op, 0, unary(get(op->getOperand(0)), gelu));
    if (isa<GeluTanhOp>(op))
      return set(op, 0, unary(get(op->getOperand(0)), geluTanh));
    if (isa<SiluOp>(op))
      return set(op, 0, unary(get(op->getOperand(0)), silu));
    if (isa<AddOp, MulOp>(op)) {
      bool add = isa<AddOp>(op);
      Shape out = shapeOf(op->getResult(0).getType());
      return set(
          op, 0,
          binary(get(op->getOperand(0)), get(op->getOperand(1)), out,
                 [add](double a, double b) { return add ? a + b : a * b; }));
    }
    if (auto r = dyn_cast<ReshapeOp>(op))
      return set(op, 0, reshape(get(r.getInput()), shapeOf(r.getType())));
    if (auto t = dyn_cast<TransposeOp>(op))
      return set(op, 0, transpose(get(t.getInput()), t.getPerm()));
    if (auto s = dyn_cast<SliceOp>(op))
      return set(
          op, 0,
          slice(get(s.getInput()), s.getOffsets(), shapeOf(s.getType())));
    if (auto c = dyn_cast<ConcatOp>(op)) {
      SmallVector<const RefTensor *> xs;
      for (Value v : c.getInputs())
        xs.push_back(&get(v));
      return set(op, 0, concat(xs, int64_t(c.getDim())));
    }
    if (auto r = dyn_cast<RopeOp>(op))
      return set(op, 0,
                 rope(get(r.getInput()), get(r.getCos()), get(r.getSin())));
    if (auto a = dyn_cast<AttentionOp>(op)) {
      if (!a.getRopeCos())
        return set(op, 0,
                   attention(get(a.getQ()), get(a.getK()), get(a.getV()),
                             a.getScale().convertToDouble(), a.getCausal()));
      const RefTensor &cos = get(a.getRopeCos()), &sin = get(a.getRopeSin());
      return set(op, 0,
                 attention(rope(get(a.getQ()), cos, sin),
                           rope(get(a.getK()), cos, sin), get(a.getV()),
                           a.getScale().convertToDouble(), a.getCausal()));
    }
    if (auto m = dyn_cast<FourierMixOp>(op))
      return set(op, 0, fourierMix(get(m.getInput()), m.getDims()));
    if (isa<AsComplexOp, AsRealOp>(op)) {
      RefTensor t = get(op->getOperand(0));
      t.shape = shapeOf(op->getResult(0).getType());
      t.complex = isa<AsComplexOp>(op);
      return set(op, 0, std::move(t));
    }
    if (auto f = dyn_cast<FftOp>(op))
      return set(op, 0,
                 dft(get(f.getInput()), int64_t(f.getAxis()), false,
                     f.getPadTo() ? int64_t(*f.getPadTo()) : 0,
                     isComplexType(f.getType())));
    if (auto f = dyn_cast<IfftOp>(op))
      return set(op, 0,
                 dft(get(f.getInput()), int64_t(f.getAxis()), true, 0,
                     isComplexType(f.getType())));
    if (auto c = dyn_cast<FftConvOp>(op)) {
      if (int64_t(c.getHeadDim()) != 1)
        return fail("head_dim " + std::to_string(int64_t(c.getHeadDim())) +
                    ": the multi-head variant has no definition in "
                    "SeamOps.td (the host fallback ignores head_dim)");
      return set(op, 0,
                 fftconv(get(c.getU()), get(c.getK()), get(c.getD()),
                         optional(c.getV()), optional(c.getQ()),
                         optional(c.getDropoutMask()), c.getGelu(),
                         c.getGeluInp(), c.getGeluQ()));
    }
    if (auto a = dyn_cast<AllReduceOp>(op)) {
      if (!checkRanks(int64_t(a.getRanks())))
        return false;
      RefTensor y = get(a.getInput());
      for (double &v : y.data)
        v *= double(ranks);
      return set(op, 0, std::move(y));
    }
    if (auto g = dyn_cast<AllGatherOp>(op)) {
      if (!checkRanks(int64_t(g.getRanks())))
        return false;
      SmallVector<const RefTensor *> copies(size_t(ranks), &get(g.getInput()));
      return set(op, 0, concat(copies, int64_t(g.getDim())));
    }
    if (auto k = dyn_cast<KernelCallOp>(op))
      return kernelCall(k);
    if (isa<BlockOp, FusionOp>(op)) {
      std::vector<RefTensor> out;
      return runBlock(op->getRegion(0).front(), out) &&
             setAll(op, std::move(out));
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto f = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          op, call.getCalleeAttr());
      if (!f)
        return fail("no function @" + call.getCallee().str());
      std::vector<RefTensor> args, out;
      for (Value v : call.getOperands())
        args.push_back(get(v));
      return callFunction(f, std::move(args), out) &&
             setAll(op, std::move(out));
    }
    return fail("the reference has no semantics for this op");
  }

  bool checkRanks(int64_t opRanks) {
    if (opRanks == ranks)
      return true;
    return fail(llvm::formatv("the op says {0} ranks, the run has {1} "
                              "(seam.tp)",
                              opRanks, ranks)
                    .str());
  }

  /// What a registered kernel computes: the op it replaces, configured by
  /// the call's `config` (or its callee's body).
  bool kernelCall(sm::KernelCallOp k) {
    Operation *op = k.getOperation();
    std::vector<const RefTensor *> a;
    for (Value v : k.getArgs())
      a.push_back(&get(v));
    if (auto callee = k.getCalleeAttr()) {
      auto f = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, callee);
      if (!f)
        return fail("no callee @" + callee.getValue().str());
      std::vector<RefTensor> args, out;
      for (const RefTensor *t : a)
        args.push_back(*t);
      return callFunction(f, std::move(args), out) &&
             setAll(op, std::move(out));
    }
    DictionaryAttr cfg = k.getConfig().value_or(DictionaryAttr());
    auto cfgInt = [&](llvm::StringRef key, int64_t dflt) -> int64_t {
      if (cfg)
        if (auto i = cfg.getAs<IntegerAttr>(key))
          return i.getInt();
      return dflt;
    };
    auto has = [&](llvm::StringRef key) { return cfg && cfg.get(key); };
    llvm::StringRef name = k.getKernel();
    if (op->getNumResults() != 1)
      return fail("kernel '" + name.str() + "' with " +
                  std::to_string(op->getNumResults()) + " results");
    Type resultType = op->getResult(0).getType();
    auto arity = [&](size_t lo, size_t hi) {
      if (a.size() >= lo && a.size() <= hi)
        return true;
      return fail("kernel '" + name.str() + "' with " +
                  std::to_string(a.size()) + " operands");
    };
    if (name == "qkv")
      return arity(2, 3) &&
             set(op, 0,
                 linear(*a[0], *a[1], a.size() > 2 ? a[2] : nullptr, nullptr,
                        ""));
    if (name == "rope")
      return arity(3, 3) && set(op, 0, rope(*a[0], *a[1], *a[2]));
    if (name == "flash-attn" || name == "flash-attn-stable") {
      if (!arity(3, 3))
        return false;
      double scale = 1.0 / std::sqrt(double(a[0]->shape[3]));
      if (cfg)
        if (auto s = cfg.getAs<FloatAttr>("scale"))
          scale = s.getValueAsDouble();
      return set(op, 0, attention(*a[0], *a[1], *a[2], scale, has("causal")));
    }
    if (name == "fft" || name == "ifft") {
      bool inverse = name == "ifft";
      return arity(1, 1) && set(op, 0,
                                dft(*a[0], cfgInt("axis", 0), inverse,
                                    inverse ? 0 : cfgInt("pad_to", 0),
                                    isComplexType(resultType)));
    }
    if (name == "fourier-mix") {
      auto dims =
          cfg ? cfg.getAs<DenseI64ArrayAttr>("dims") : DenseI64ArrayAttr();
      if (!dims)
        return fail("kernel 'fourier-mix' without 'dims' in its config");
      return arity(1, 1) && set(op, 0, fourierMix(*a[0], dims.asArrayRef()));
    }
    if (name == "fftconv") {
      if (!arity(3, 6))
        return false;
      if (cfgInt("head_dim", 1) != 1)
        return fail("kernel 'fftconv' with head_dim != 1");
      // Its optional operands as the kernel reads them.
      sm::FftconvOperands roles = sm::fftconvOperands(sm::signatureOfCall(op));
      auto at = [&](int i) { return i >= 0 ? a[i] : nullptr; };
      const RefTensor *v = at(roles.v), *q = at(roles.q),
                      *mask = at(roles.mask);
      return set(op, 0,
                 fftconv(*a[0], *a[1], *a[2], v, q, mask, has("gelu"),
                         has("gelu_inp"), has("gelu_q")));
    }
    return fail("the reference does not know kernel '" + name.str() + "'");
  }
};

/// Whether a value of `v`'s computation is bf16: its own type, its
/// operands', through region results and kernel calls.
bool dependsOnBf16(Value v, llvm::DenseMap<Value, bool> &memo) {
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  memo[v] = false; // no cycles in SSA; a guard all the same
  bool bf16 = isBf16Type(v.getType());
  if (!bf16)
    if (Operation *def = v.getDefiningOp()) {
      if (def->getNumRegions() == 1 && !def->getRegion(0).empty()) {
        Operation *term = def->getRegion(0).front().getTerminator();
        unsigned i = cast<OpResult>(v).getResultNumber();
        bf16 = term && i < term->getNumOperands() &&
               dependsOnBf16(term->getOperand(i), memo);
      }
      for (Value o : def->getOperands())
        bf16 = bf16 || dependsOnBf16(o, memo);
    }
  memo[v] = bf16;
  return bf16;
}

} // namespace

rt::Expected<std::vector<RefTensor>>
seamrun::evaluateReference(func::FuncOp step,
                           llvm::ArrayRef<rt::HostTensor> inputs, int ranks,
                           ReferenceRounding rounding, uint64_t sequence) {
  using Result = rt::Expected<std::vector<RefTensor>>;
  if (inputs.size() != step.getNumArguments())
    return Result::failure(llvm::formatv("the step takes {0} inputs, {1} given",
                                         step.getNumArguments(), inputs.size())
                               .str());
  std::vector<RefTensor> args;
  for (auto [i, arg] : llvm::enumerate(step.getArguments())) {
    Shape shape = shapeOf(arg.getType());
    bool complex = isComplexType(arg.getType());
    if (int64_t(inputs[i].data.size()) != countOf(shape) * (complex ? 2 : 1))
      return Result::failure(llvm::formatv("input {0} holds {1} values, its "
                                           "type {2} needs {3}",
                                           i, inputs[i].data.size(),
                                           sm::describeType(arg.getType()),
                                           countOf(shape) * (complex ? 2 : 1))
                                 .str());
    args.push_back(
        fromHost(inputs[i], shape, complex, isBf16Type(arg.getType())));
  }
  Interpreter interp(ranks, rounding);
  std::vector<RefTensor> results;
  f32Arithmetic = rounding == ReferenceRounding::Nearest;
  perturbedTerms = rounding == ReferenceRounding::Perturbed;
  perturbation = sequence << 40;
  bool ok = interp.callFunction(step, std::move(args), results);
  f32Arithmetic = perturbedTerms = false;
  if (!ok)
    return Result::failure("reference: " + interp.error);
  return Result(std::move(results));
}

rt::Expected<std::vector<RefTensor>>
seamrun::evaluateReferenceOp(Operation *op, llvm::ArrayRef<RefTensor> operands,
                             int ranks) {
  using Result = rt::Expected<std::vector<RefTensor>>;
  if (operands.size() != op->getNumOperands())
    return Result::failure("reference: operand count differs");
  Interpreter interp(ranks, ReferenceRounding::Exact);
  std::vector<RefTensor> results;
  if (!interp.evalOne(op, operands, results))
    return Result::failure("reference: " + interp.error);
  return Result(std::move(results));
}

func::FuncOp seamrun::findStepFunction(Operation *module) {
  func::FuncOp step;
  module->walk([&](func::FuncOp f) {
    if (!step && !f.isExternal() && !f->hasAttr(sm::kProgramAttrName) &&
        !f->hasAttr(sm::kBoundaryBodyAttrName))
      step = f;
  });
  return step;
}

ReferenceOutput
seamrun::compareOutput(const rt::HostTensor &device, const RefTensor &ref,
                       double tolerance,
                       llvm::ArrayRef<const RefTensor *> rounded) {
  ReferenceOutput o;
  o.shape = ref.shape;
  o.complex = ref.complex;
  double diff2 = 0, ref2 = 0;
  size_t n = std::min(device.data.size(), ref.data.size());
  for (size_t i = 0; i < n; ++i) {
    double d = double(device.data[i]), r = ref.data[i];
    ref2 += r * r;
    if (!std::isfinite(d)) {
      ++o.nonFinite;
      continue;
    }
    diff2 += (d - r) * (d - r);
    o.maxAbs = std::max(o.maxAbs, std::abs(d - r));
  }
  o.refNorm = std::sqrt(ref2);
  o.diffNorm = std::sqrt(diff2);
  auto relative = [&](double norm) {
    if (o.refNorm > 0)
      return norm / o.refNorm;
    return norm == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  };
  o.relL2 = o.nonFinite ? std::numeric_limits<double>::infinity()
                        : relative(o.diffNorm);
  for (const RefTensor *r : rounded) {
    double noise2 = 0;
    for (size_t i = 0; i < r->data.size() && i < ref.data.size(); ++i)
      noise2 += (r->data[i] - ref.data[i]) * (r->data[i] - ref.data[i]);
    o.noiseNorm = std::max(o.noiseNorm, std::sqrt(noise2));
  }
  o.noise = relative(o.noiseNorm);
  o.tolerance = tolerance;
  if (std::isfinite(o.noise))
    o.tolerance = std::max(tolerance, kReferenceNoiseFactor * o.noise);
  // No output of the reference's size (a launch that faulted gives none).
  bool sized = device.data.size() == ref.data.size();
  if (!sized)
    o.relL2 = std::numeric_limits<double>::infinity();
  // Within the dtype's tolerance, or within the noise (in absolute terms:
  // an output whose reference is 0, a norm of a constant row, has no
  // relative error).
  o.pass = sized && o.nonFinite == 0 &&
           ((std::isfinite(o.relL2) && o.relL2 <= o.tolerance) ||
            o.diffNorm <= kReferenceNoiseFactor * o.noiseNorm);
  return o;
}

rt::Expected<ReferenceReport> seamrun::checkAgainstReference(
    const std::string &irText, llvm::ArrayRef<rt::HostTensor> inputs,
    llvm::ArrayRef<rt::HostTensor> outputs, int ranks) {
  using Result = rt::Expected<ReferenceReport>;
  auto t0 = std::chrono::steady_clock::now();
  if (rt::Status nesting = sm::checkNesting(irText); !nesting)
    return Result::failure("reference: the model IR does not parse: " +
                           nesting.error());
  MLIRContext ctx(seamRunRegistry(), MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  std::string diagText;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      diagText += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(irText, &ctx);
  if (!module)
    return Result::failure("reference: the model IR does not parse: " +
                           diagText);
  func::FuncOp step = findStepFunction(*module);
  if (!step)
    return Result::failure("reference: the model has no step function");
  // The interpreter runs one rank (all_reduce: the same shard times the
  // ranks); a model whose ranks hold different slices (seam-shard-tp) is
  // checked against its --tp 1 run instead.
  bool perRankParams = false;
  step.walk(
      [&](sm::ParamOp p) { perRankParams |= p->hasAttr("seam.rank_values"); });
  if (perRankParams && ranks > 1)
    return Result::failure(
        "reference: the ranks hold different parameter slices (the model "
        "was sharded by seam-shard-tp); compare its outputs with a --tp 1 "
        "run (--output-dir)");
  auto refs = evaluateReference(step, inputs, ranks);
  if (!refs)
    return Result::failure(refs.error());
  if (refs->size() != outputs.size())
    return Result::failure(llvm::formatv("reference: {0} results, the device "
                                         "gave {1}",
                                         refs->size(), outputs.size())
                               .str());
  ReferenceReport report;
  auto ret = step.getBody().front().getTerminator();
  llvm::DenseMap<Value, bool> memo;
  std::vector<double> base;
  for (size_t i = 0; i < refs->size(); ++i) {
    bool bf16 = dependsOnBf16(ret->getOperand(i), memo);
    base.push_back(bf16 ? kReferenceToleranceBf16 : kReferenceToleranceF32);
    ReferenceOutput o = compareOutput(outputs[i], (*refs)[i], base.back());
    // The graph's name for the result (seam.output), as the output files.
    auto named = step.getResultAttrOfType<StringAttr>(i, "seam.output");
    o.name = named ? named.str() : "output" + std::to_string(i);
    o.bf16 = bf16;
    report.outputs.push_back(std::move(o));
  }
  // Outputs beyond their dtype's tolerance: is it their sensitivity to
  // rounding (the same ops, rounded, move them as much)?
  if (!report.pass()) {
    auto nearest =
        evaluateReference(step, inputs, ranks, ReferenceRounding::Nearest);
    auto perturbed =
        evaluateReference(step, inputs, ranks, ReferenceRounding::Perturbed);
    auto perturbed2 =
        evaluateReference(step, inputs, ranks, ReferenceRounding::Perturbed, 1);
    for (auto *r : {&nearest, &perturbed, &perturbed2})
      if (!*r)
        return Result::failure(r->error());
    for (size_t i = 0; i < refs->size(); ++i) {
      ReferenceOutput &o = report.outputs[i];
      if (o.pass)
        continue;
      ReferenceOutput again =
          compareOutput(outputs[i], (*refs)[i], base[i],
                        {&(*nearest)[i], &(*perturbed)[i], &(*perturbed2)[i]});
      again.name = o.name;
      again.bf16 = o.bf16;
      o = std::move(again);
    }
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return report;
}

/// "1e-02", or "3.1e-02 = 8 x rounding noise 3.9e-03" when the noise sets
/// it.
static std::string tolerance(const ReferenceOutput &o) {
  double base = o.bf16 ? kReferenceToleranceBf16 : kReferenceToleranceF32;
  if (o.refNorm == 0 && o.noiseNorm > 0)
    return llvm::formatv("abs-L2 {0:e1} against {1:F0} x rounding noise "
                         "{2:e1}: the reference is 0",
                         o.diffNorm, kReferenceNoiseFactor, o.noiseNorm)
        .str();
  if (o.tolerance <= base)
    return llvm::formatv("{0:e0}", o.tolerance).str();
  return llvm::formatv("{0:e1} = {1:F0} x rounding noise {2:e1}", o.tolerance,
                       kReferenceNoiseFactor, o.noise)
      .str();
}

void seamrun::printReference(const ReferenceReport &r, llvm::raw_ostream &os) {
  os << llvm::formatv("  reference (float64, {0:F3} s): {1}\n", r.seconds,
                      r.pass() ? "PASS" : "FAIL");
  for (const ReferenceOutput &o : r.outputs)
    os << llvm::formatv(
        "    {0} {1}{2}: rel-L2 {3:e2}, max abs {4:e2}, "
        "tolerance {5} ({6}){7} {8}\n",
        o.name, sm::describeShape(o.shape), o.complex ? " complex" : "",
        o.relL2, o.maxAbs, tolerance(o), o.bf16 ? "bf16 on its path" : "f32",
        o.nonFinite ? llvm::formatv(", {0} non-finite", o.nonFinite).str()
                    : std::string(),
        o.pass ? "PASS" : "FAIL");
}

llvm::json::Value seamrun::referenceJson(const ReferenceReport &r) {
  llvm::json::Array outs;
  for (const ReferenceOutput &o : r.outputs)
    outs.push_back(llvm::json::Object{
        {"name", o.name},
        {"shape", llvm::json::Array(o.shape)},
        {"complex", o.complex},
        {"bf16", o.bf16},
        {"rel_l2", std::isfinite(o.relL2) ? llvm::json::Value(o.relL2)
                                          : llvm::json::Value(nullptr)},
        {"max_abs", o.maxAbs},
        {"rounding_noise", std::isfinite(o.noise) ? llvm::json::Value(o.noise)
                                                  : llvm::json::Value(nullptr)},
        {"tolerance", o.tolerance},
        {"non_finite", int64_t(o.nonFinite)},
        {"pass", o.pass}});
  return llvm::json::Object{
      {"pass", r.pass()}, {"seconds", r.seconds}, {"outputs", std::move(outs)}};
}
