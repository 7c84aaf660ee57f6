//===- Roofline.cpp - the graph's work and the floor it implies -----------===//
//
// The work model: what each seam op costs at least, per rank, counted from
// its types and attributes alone. Every convention is chosen so that the
// floor stays a lower bound for any lowering or kernel on the emulated ISA
// (runtime/Isa.def):
//
// Tensor Engine (flops = 2 per multiply-add, by operand dtype; fp32 runs at
// 1 / matmul_fp32_factor of the bf16 peak):
//  - linear: 2 M K N. Its bias and the PSUM evacuation fold into the pass of
//    whatever consumes the result, so they add no elementwise work.
//  - attention: Q K^T and P V, 2 B H P D each, P = the (query, key) pairs
//    computed (Sq Sk, or the causal triangle). Scores can be produced
//    key-major (S^T = K Q^T), so P needs no transpose.
//  - DFTs (fft, ifft, fourier_mix, the rfft/irfft of fftconv) are real
//    matmuls, as the device computes them: 2 x (real outputs) x K, where the
//    contraction K is the dense one (N, or 2N for complex input) when
//    N <= te_array_rows and otherwise te_array_rows per stage of the
//    four-step decomposition with the fewest factors <= te_array_rows (a
//    stage cannot produce more than te_array_cols results per cycle, however
//    small its factor). The smaller of the two is charged. Real input keeps
//    only the N/2 + 1 non-redundant outputs of its first transform; an
//    output of which only the real part is needed costs half; twiddle
//    multiplications and DFT matrices (constants) are not charged. So the
//    dense C X C - S X S of the FNet kernel is above this floor for N > 128:
//    the floor is the four-step's.
//
// Elementwise (element operations by the engines able to run them: ACT-only
// functions on SE; tensor_tensor/tensor_reduce on VE or GpSimd;
// tensor_scalar/tensor_copy and add-reductions (activation accumulate) on
// any of VE, SE, GpSimd). Passes are the fewest Isa.def instructions per
// element:
//  - gelu, gelu_tanh, silu: 1 pass on SE (activation functions).
//  - add, mul: 1 pass; on any engine when one operand broadcasts (it is then
//    a per-partition scalar in a suitable layout), else VE or GpSimd.
//  - layer_norm: 2 statistics passes (sum, sum of squares) and 2 to
//    normalise (subtract the mean, scale by 1/std), plus 1 per affine
//    operand; all on any engine (the layout decides which is a scalar).
//  - rms_norm: 1 statistics pass, 1 to normalise, 1 for the scale.
//  - rope: 3 passes (x cos, rotate(x) sin, add) on VE or GpSimd.
//  - attention: exp of every computed score on SE (the scale is the
//    activation's input scale, the row sum its accumulate; the running max
//    of a stable softmax is optional, so not charged), 1/sum per row and the
//    normalisation of the [Sq, D] output (not of P); a fused rope adds the
//    rope passes on q and k.
//  - fftconv: u * v, the gelus, the complex product of the spectra (4
//    multiplies and 2 adds per frequency, VE or GpSimd), + u * D, the
//    dropout and q gates.
//
// Bytes that must cross HBM: a launch's parameters, inputs and outputs, each
// once (an input that is only sliced: its largest slice; an unused one: 0).
// Collectives (all_reduce, all_gather) and host fallback ops are not in the
// floor; kernel constants (DFT matrices) are not either.
//
// Peaks (EnginePeaks::fromProfile) are the hardware's, from the profile: TE
// rows x columns x 2 x clock; VE/SE/GpSimd lanes x clock. They can be above
// what the emulator's cost formulas (hardware.md "Instruction costs", one
// element per partition per cycle) let a program reach: trn2's Vector engine
// has 512 bf16 / 256 other lanes where an emulated VE instruction moves 128
// elements per cycle, so an elementwise-bound trn2 program stays below 100%.
//
//===----------------------------------------------------------------------===//
#include "passes/Roofline.h"
#include "dialect/seam/SeamOps.h"
#include "mlir/IR/SymbolTable.h"
#include "passes/Accounting.h"
#include "runtime/Profile.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::seam;

double GraphWork::elementwiseOps() const {
  double n = 0;
  for (double v : elementOps)
    n += v;
  return n;
}

GraphWork &GraphWork::operator+=(const GraphWork &o) {
  teFlopsBf16 += o.teFlopsBf16;
  teFlopsF32 += o.teFlopsF32;
  for (size_t i = 0; i < elementOps.size(); ++i)
    elementOps[i] += o.elementOps[i];
  elementwiseBf16 |= o.elementwiseBf16;
  hbmBytes += o.hbmBytes;
  return *this;
}

namespace {

bool isBf16(Type t) {
  if (auto tt = dyn_cast<ShapedType>(t))
    t = tt.getElementType();
  return t.isBF16();
}

double elements(RankedTensorType t) {
  return t && t.hasStaticShape() ? static_cast<double>(t.getNumElements())
                                 : 0.0;
}

/// Accumulates the work of one op.
struct WorkBuilder {
  explicit WorkBuilder(int64_t teRows) : teRows(teRows) {}
  GraphWork w;
  int64_t teRows;

  void matmul(double flops, Type operandType) {
    (isBf16(operandType) ? w.teFlopsBf16 : w.teFlopsF32) += flops;
  }
  void passes(double n, double elems, unsigned engines, Type dtype) {
    if (n <= 0 || elems <= 0)
      return;
    w.elementOps[engines] += n * elems;
    w.elementwiseBf16 |= isBf16(dtype);
  }

  /// Fewest factors <= teRows whose product is n (none: max int), memoised
  /// over the divisors of n.
  int fourStepStages(int64_t n) {
    if (n <= teRows)
      return 1;
    if (auto it = stages.find(n); it != stages.end())
      return it->second;
    int best = std::numeric_limits<int>::max();
    for (int64_t a = std::min(teRows, n / 2); a >= 2 && best > 2; --a) {
      if (n % a)
        continue;
      int rest = fourStepStages(n / a);
      if (rest != std::numeric_limits<int>::max())
        best = std::min(best, 1 + rest);
    }
    return stages[n] = best;
  }
  llvm::DenseMap<int64_t, int> stages;

  /// The charged contraction of one N-point DFT stage set whose dense form
  /// contracts over `denseK` real values.
  double dftContraction(int64_t n, double denseK) {
    int stages = fourStepStages(n);
    if (n <= teRows || stages == std::numeric_limits<int>::max())
      return denseK;
    return std::min(denseK, static_cast<double>(stages) * teRows);
  }

  /// A DFT of size n as a real matmul producing `realOutputs` values from a
  /// contraction of `denseK` real inputs per output (f32 unless bf16 input).
  void dft(int64_t n, double realOutputs, double denseK, Type dtype) {
    matmul(2.0 * realOutputs * dftContraction(n, denseK), dtype);
  }
};

int64_t intAttr(DictionaryAttr d, StringRef key, int64_t dflt) {
  if (!d)
    return dflt;
  if (auto a = d.getAs<IntegerAttr>(key))
    return a.getInt();
  return dflt;
}

bool hasAttr(DictionaryAttr d, StringRef key) { return d && d.get(key); }

/// Number of (query, key) pairs of one head.
double attentionPairs(int64_t sq, int64_t sk, bool causal) {
  if (!causal)
    return static_cast<double>(sq) * sk;
  // Query i sees keys j <= i + (Sk - Sq), clipped to [0, Sk].
  double pairs = 0;
  for (int64_t i = 0; i < sq; ++i)
    pairs += std::clamp<int64_t>(i + 1 + (sk - sq), 0, sk);
  return pairs;
}

void ropeWork(WorkBuilder &b, RankedTensorType x) {
  b.passes(3, elements(x), kVEorGP, x);
}

void attentionWork(WorkBuilder &b, const KernelSignature &sig) {
  if (sig.args.size() < 3 || sig.results.empty())
    return;
  RankedTensorType q = sig.args[0], k = sig.args[1], v = sig.args[2];
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return;
  int64_t batch = q.getDimSize(0), heads = q.getDimSize(1),
          sq = q.getDimSize(2), d = q.getDimSize(3), sk = k.getDimSize(2),
          dv = v.getDimSize(3);
  double rows = static_cast<double>(batch) * heads;
  double pairs = rows * attentionPairs(sq, sk, hasAttr(sig.config, "causal"));
  b.matmul(2.0 * pairs * d, q);       // Q K^T
  b.matmul(2.0 * pairs * dv, v);      // P V
  b.passes(1, pairs, kSE, q);         // exp, with the row sum as its accumulate
  b.passes(1, rows * sq, kVEorGP, q); // 1 / row sum
  b.passes(1, rows * sq * dv, kAnyEW, q); // output * (1 / row sum)
  if (sig.args.size() >= 5) {             // fused rope on q and k
    ropeWork(b, q);
    ropeWork(b, k);
  }
}

/// Re(DFT) over `dims` of a real tensor, in the cheapest order of the dims.
void fourierMixWork(WorkBuilder &b, RankedTensorType x,
                    ArrayRef<int64_t> dims) {
  SmallVector<int64_t> order(dims.begin(), dims.end());
  llvm::sort(order);
  if (order.empty() ||
      llvm::any_of(order, [&](int64_t d) { return d < 0 || d >= x.getRank(); }))
    return;
  double e = elements(x);
  double best = std::numeric_limits<double>::max();
  // Every order of up to four dims; beyond that (never in the models) the
  // sorted one.
  bool permute = order.size() <= 4;
  do {
    WorkBuilder trial(b.teRows);
    // Complex values per vector along the transformed dims so far.
    double complexFraction = 1.0;
    for (size_t i = 0; i < order.size(); ++i) {
      int64_t n = x.getDimSize(order[i]);
      bool first = i == 0, last = i + 1 == order.size();
      double vectors = e / n;
      int64_t bins = n / 2 + 1; // non-redundant outputs of a real DFT
      if (first && last) {      // Re(DFT(real)) = C X, symmetric: N/2 + 1 rows
        trial.dft(n, vectors * bins, n, x);
      } else if (first) { // real -> the N/2 + 1 non-redundant outputs
        complexFraction = bins / static_cast<double>(n);
        trial.dft(n, 2.0 * vectors * bins, n, x);
      } else {
        // Complex input (the non-redundant part); complex output, or only
        // the real part at the last dim.
        double in = e * complexFraction;
        double outputs = last ? e : 2.0 * in;
        trial.dft(n, outputs, 2.0 * n, x);
      }
    }
    best = std::min(best, trial.w.teFlops());
  } while (permute && std::next_permutation(order.begin(), order.end()));
  b.matmul(best, x);
}

void fftconvWork(WorkBuilder &b, const KernelSignature &sig) {
  if (sig.args.size() < 3 || sig.results.empty())
    return;
  RankedTensorType u = sig.args[0], k = sig.args[1], y = sig.results[0];
  if (u.getRank() != 3 || k.getRank() != 2)
    return;
  int64_t n = intAttr(sig.config, "fft_size", 0);
  if (n <= 0)
    return;
  double batch = u.getDimSize(0), heads = u.getDimSize(1);
  double len = u.getDimSize(2), klen = k.getDimSize(1);
  int64_t bins = n / 2 + 1; // non-redundant outputs of a real DFT
  double seqElems = elements(u), freqs = static_cast<double>(bins);
  // Optional operands as the kernel reads them (fftconvOperands).
  FftconvOperands roles = fftconvOperands(sig);
  bool mask = roles.mask >= 0, hasV = roles.v >= 0, hasQ = roles.q >= 0;
  if (hasV)
    b.passes(1, seqElems, kVEorGP, u); // u * v
  if (hasAttr(sig.config, "gelu_inp"))
    b.passes(1, seqElems, kSE, u);
  // rfft of the input (L real values, zero-padded to n) and of the filter.
  b.dft(n, 2.0 * batch * heads * freqs, len, u);
  b.dft(n, 2.0 * heads * freqs, klen, k);
  // Spectrum product: 4 multiplies and 2 adds per complex frequency.
  b.passes(6, batch * heads * freqs, kVEorGP, u);
  // irfft, of which only the first L real outputs are kept.
  b.dft(n, batch * heads * len, 2.0 * freqs, u);
  b.passes(1, seqElems, kAnyEW, u);  // u * D (D per channel)
  b.passes(1, seqElems, kVEorGP, u); // + the convolution
  if (hasAttr(sig.config, "gelu"))
    b.passes(1, elements(y), kSE, y);
  if (mask)
    b.passes(1, elements(y), kAnyEW, y);
  if (hasQ) {
    if (hasAttr(sig.config, "gelu_q"))
      b.passes(1, elements(y), kSE, y);
    b.passes(1, elements(y), kVEorGP, y);
  }
}

} // namespace

GraphWork mlir::seam::workOf(StringRef opName, const KernelSignature &sig,
                             int64_t teRows) {
  WorkBuilder b(std::max<int64_t>(1, teRows));
  if (sig.results.empty())
    return b.w;
  RankedTensorType out = sig.results[0];
  double outElems = elements(out);
  auto arg = [&](size_t i) {
    return i < sig.args.size() ? sig.args[i] : RankedTensorType();
  };
  // A norm's operands after the input: its scale and bias.
  double affineOperands =
      sig.args.empty() ? 0.0 : static_cast<double>(sig.args.size() - 1);
  if (opName == LinearOp::getOperationName()) {
    RankedTensorType x = arg(0), w = arg(1);
    if (x && w && w.getRank() == 2)
      b.matmul(2.0 * outElems * w.getDimSize(0), x);
    if (hasAttr(sig.config, "activation")) // folded gelu / silu
      b.passes(1, outElems, kSE, out);
  } else if (opName == GeluOp::getOperationName() ||
             opName == GeluTanhOp::getOperationName() ||
             opName == SiluOp::getOperationName()) {
    b.passes(1, outElems, kSE, out);
  } else if (opName == AddOp::getOperationName() ||
             opName == MulOp::getOperationName()) {
    bool broadcast = llvm::any_of(sig.args, [&](RankedTensorType t) {
      return t.getShape() != out.getShape();
    });
    b.passes(1, outElems, broadcast ? kAnyEW : kVEorGP, out);
  } else if (opName == LayerNormOp::getOperationName()) {
    b.passes(4 + affineOperands, outElems, kAnyEW, out);
  } else if (opName == RmsNormOp::getOperationName()) {
    b.passes(2 + affineOperands, outElems, kAnyEW, out);
  } else if (opName == RopeOp::getOperationName()) {
    ropeWork(b, out);
  } else if (opName == AttentionOp::getOperationName()) {
    attentionWork(b, sig);
  } else if (opName == FourierMixOp::getOperationName()) {
    auto dims = sig.config ? sig.config.getAs<DenseI64ArrayAttr>("dims")
                           : DenseI64ArrayAttr();
    if (arg(0) && dims)
      fourierMixWork(b, arg(0), dims.asArrayRef());
  } else if (opName == FftOp::getOperationName() ||
             opName == IfftOp::getOperationName()) {
    RankedTensorType x = arg(0);
    int64_t axis = intAttr(sig.config, "axis", -1);
    if (x && axis >= 0 && axis < x.getRank()) {
      int64_t n = x.getDimSize(axis);
      bool complexIn = isa<ComplexType>(x.getElementType());
      bool complexOut = isa<ComplexType>(out.getElementType());
      // Real input: the TE makes the N/2 + 1 non-redundant outputs, the
      // rest are their conjugates (copies, not charged).
      int64_t bins = n / 2 + 1;
      double outputs = !complexOut ? outElems
                       : complexIn ? 2.0 * outElems
                                   : 2.0 * (outElems / n) * bins;
      b.dft(n, outputs, complexIn ? 2.0 * n : n, x);
    }
  } else if (opName == FftConvOp::getOperationName()) {
    fftconvWork(b, sig);
  }
  // param, reshape, transpose, concat, slice, all_reduce, all_gather: none.
  return b.w;
}

GraphWork mlir::seam::workOf(Operation *op, int64_t teRows) {
  if (auto kc = dyn_cast<KernelCallOp>(op)) {
    const KernelInfo *k = lookupKernel(kc.getKernel());
    if (!k)
      return {};
    return workOf(k->rootOp, signatureOfCall(op), teRows);
  }
  if (!isa<FusionClassInterface>(op))
    return {};
  return workOf(op->getName().getStringRef(), signatureOfRoot(op), teRows);
}

/// Bytes of a program argument that must be read: none when unused; when
/// it is only sliced, at least its largest slice; else all of it.
static double argumentBytes(BlockArgument arg) {
  if (arg.use_empty())
    return 0;
  double largestSlice = 0;
  for (Operation *user : arg.getUsers()) {
    if (!isa<SliceOp>(user))
      return bytesOf(arg.getType());
    largestSlice =
        std::max<double>(largestSlice, bytesOf(user->getResult(0).getType()));
  }
  return largestSlice;
}

GraphWork mlir::seam::launchWork(Operation *launch, int64_t teRows) {
  GraphWork w;
  // Bytes each distinct operand value must bring in (once, however many
  // arguments it feeds).
  llvm::MapVector<Value, double> inBytes;
  if (isa<KernelCallOp>(launch)) {
    w = workOf(launch, teRows);
    for (Value v : launch->getOperands())
      inBytes[v] = bytesOf(v.getType());
  } else if (auto call = dyn_cast<func::CallOp>(launch)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal() ||
        callee.getNumArguments() != call.getNumOperands())
      return w;
    callee.walk([&](Operation *op) {
      if (isa_and_nonnull<SeamDialect>(op->getDialect()))
        w += workOf(op, teRows);
      if (auto p = dyn_cast<ParamOp>(op)) // a parameter inside the program
        w.hbmBytes += bytesOf(p.getType());
    });
    for (auto [v, arg] : llvm::zip(call.getOperands(), callee.getArguments()))
      inBytes[v] = std::max(inBytes.lookup(v), argumentBytes(arg));
  } else {
    return w;
  }
  for (auto &[v, bytes] : inBytes)
    w.hbmBytes += bytes;
  for (Type t : launch->getResultTypes())
    w.hbmBytes += bytesOf(t);
  return w;
}

EnginePeaks
mlir::seam::EnginePeaks::fromProfile(const ::seam::rt::Profile &profile,
                                     unsigned activeCoresPerChip) {
  using ::seam::rt::Engine;
  EnginePeaks p;
  p.teFlopsPerNsBf16 = profile.teFlopsPerNs(/*fp32=*/false);
  p.teFlopsPerNsF32 = profile.teFlopsPerNs(/*fp32=*/true);
  p.veBf16PerNs = profile.elementsPerNs(Engine::Vector, /*bf16=*/true);
  p.vePerNs = profile.elementsPerNs(Engine::Vector, /*bf16=*/false);
  p.sePerNs = profile.elementsPerNs(Engine::Scalar, false);
  p.gpPerNs = profile.elementsPerNs(Engine::GpSimd, false);
  p.dmaBytesPerNs = profile.dmaBytesPerNs(activeCoresPerChip);
  p.teRows = profile.teArrayRows;
  return p;
}

RooflineFloor mlir::seam::rooflineFloor(const GraphWork &work,
                                        const EnginePeaks &peaks) {
  RooflineFloor f;
  auto div = [](double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; };
  f.teNs = div(work.teFlopsBf16, peaks.teFlopsPerNsBf16) +
           div(work.teFlopsF32, peaks.teFlopsPerNsF32);
  f.dmaNs = div(work.hbmBytes, peaks.dmaBytesPerNs);
  // A lower bound uses each engine's fastest rate for the dtypes present.
  const std::pair<unsigned, const char *> engines[] = {
      {kVE, "VE"}, {kSE, "SE"}, {kGP, "GP"}};
  auto rate = [&](unsigned e) {
    if (e == kVE)
      return work.elementwiseBf16 ? std::max(peaks.veBf16PerNs, peaks.vePerNs)
                                  : peaks.vePerNs;
    return e == kSE ? peaks.sePerNs : peaks.gpPerNs;
  };
  for (unsigned subset = 1; subset < 8; ++subset) {
    double ops = 0, r = 0;
    for (unsigned mask = 1; mask < 8; ++mask)
      if ((mask & ~subset) == 0)
        ops += work.elementOps[mask];
    for (auto [e, name] : engines)
      if (subset & e)
        r += rate(e);
    double ns = div(ops, r);
    if (ns > f.elementwiseNs) {
      f.elementwiseNs = ns;
      f.elementwiseEngines.clear();
      for (auto [e, name] : engines)
        if (subset & e)
          f.elementwiseEngines +=
              (f.elementwiseEngines.empty() ? "" : "+") + std::string(name);
    }
  }
  f.ns = std::max({f.teNs, f.elementwiseNs, f.dmaNs});
  if (f.ns <= 0)
    f.bound = "none";
  else if (f.ns == f.teNs)
    f.bound = "TE";
  else if (f.ns == f.dmaNs)
    f.bound = "DMA";
  else
    f.bound = f.elementwiseEngines;
  return f;
}
