//===- Registry.cpp - the kernel table and its constraint checks ----------===//
//
// Constraints are the published ones (see ../shared/reference/
// seed-results.json and DESIGN.md "Kernels"):
//  - rope (NKI RoPE kernel used in the Flux2-klein experiments): head_dim in
//    {64, 128}, seq <= 512, heads per rank <= 16, layout [B, H, S, D].
//  - flash-attn / flash-attn-stable: BLOCK_Q = BLOCK_K = 128, so both
//    sequence lengths are multiples of 128; head_dim <= 128 (one partition
//    tile); no fused RoPE inside the kernel; no causal mask.
//  - fftconv (hyena-dna csrc/fftconv): fft_size a power of two in
//    [16, 16384], L <= fft_size / 2; fp16 FFT only for head_dim 8 (we have no
//    fp16 path, so head_dim must be 1).
//  - fft / fourier-mix: each transformed size must factor into DFT matmuls of
//    at most 128 points with at most three factors (four-step / Monarch), and
//    be at most 16384.
//  - qkv: the contraction dim K is tiled over 128 partitions (K % 128 == 0).
//
//===----------------------------------------------------------------------===//
#include "kernels/Registry.h"
#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Kernels.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"
#include <atomic>
#include <chrono>

using namespace mlir;
using namespace mlir::seam;

namespace {

constexpr int64_t kRopeMaxSeq = 512;
constexpr int64_t kRopeMaxHeadsPerRank = 16;
constexpr int64_t kFlashBlock = 128;
constexpr int64_t kPartitions = 128;
constexpr int64_t kMaxFftSize = 16384;

std::optional<std::string> fail(const llvm::Twine &t) { return t.str(); }

int64_t intConfig(const KernelSignature &sig, llvm::StringRef key,
                  int64_t dflt = 0) {
  if (!sig.config)
    return dflt;
  if (auto a = sig.config.getAs<IntegerAttr>(key))
    return a.getInt();
  return dflt;
}

bool hasConfig(const KernelSignature &sig, llvm::StringRef key) {
  return sig.config && sig.config.get(key);
}

std::optional<std::string> arity(const KernelSignature &sig, size_t minArgs,
                                 size_t maxArgs, size_t results) {
  if (sig.args.size() < minArgs || sig.args.size() > maxArgs)
    return fail(llvm::formatv("takes {0}{1} operands, got {2}", minArgs,
                              maxArgs == minArgs
                                  ? std::string()
                                  : llvm::formatv("..{0}", maxArgs).str(),
                              sig.args.size()));
  if (sig.results.size() != results)
    return fail(llvm::formatv("produces {0} result(s), got {1}", results,
                              sig.results.size()));
  return std::nullopt;
}

/// Smallest number of factors <= 128 whose product is n (0: impossible).
int dftFactorCount(int64_t n) {
  if (n <= 0)
    return 0;
  if (n <= kPartitions)
    return 1;
  for (int64_t a = kPartitions; a >= 2; --a)
    if (n % a == 0 && n / a <= kPartitions)
      return 2;
  for (int64_t a = kPartitions; a >= 2; --a)
    if (n % a == 0 && dftFactorCount(n / a) == 2)
      return 3;
  return 0;
}

std::optional<std::string> checkDftSize(int64_t n, llvm::StringRef what) {
  if (n > kMaxFftSize)
    return fail(llvm::formatv("{0} {1} > {2}", what, n, kMaxFftSize));
  if (dftFactorCount(n) == 0)
    return fail(llvm::formatv("{0} {1} does not factor into at most three "
                              "DFTs of <= 128 points",
                              what, n));
  return std::nullopt;
}

//===-- qkv ---------------------------------------------------------------===//

/// A site is a linear produced by seam-fuse-qkv; other linears are silently
/// not sites (an empty reason).
std::optional<std::string> qkvIsSite(Operation *root) {
  if (!root->hasAttr("seam.fused_qkv"))
    return std::string();
  if (root->hasAttr("activation"))
    return std::string("the projection applies an activation the kernel "
                       "does not");
  return std::nullopt;
}

std::optional<std::string> qkvCheck(const KernelSignature &sig) {
  if (auto e = arity(sig, 2, 3, 1))
    return e;
  int64_t k = sig.args[1].getDimSize(0);
  if (k % kPartitions != 0)
    return fail(llvm::formatv("contraction dim K = {0} is not a multiple of "
                              "{1} partitions",
                              k, kPartitions));
  return qkvSiteError(sig);
}

std::string qkvDescribe(const KernelSignature &sig) {
  return llvm::formatv("x {0} times fused weight {1}",
                       describeShape(sig.args[0].getShape()),
                       describeShape(sig.args[1].getShape()));
}

//===-- rope --------------------------------------------------------------===//

std::optional<std::string> alwaysSite(Operation *) { return std::nullopt; }

std::optional<std::string> ropeCheck(const KernelSignature &sig) {
  if (auto e = arity(sig, 3, 3, 1))
    return e;
  auto x = sig.args[0];
  if (x.getRank() != 4)
    return fail(llvm::formatv("layout must be [B, n_heads, S, d_head], got {0}",
                              describeShape(x.getShape())));
  int64_t h = x.getDimSize(1), s = x.getDimSize(2), d = x.getDimSize(3);
  if (d != 64 && d != 128)
    return fail(llvm::formatv("head_dim {0} not in {{64, 128}", d));
  if (s > kRopeMaxSeq)
    return fail(llvm::formatv("seq {0} > {1}", s, kRopeMaxSeq));
  if (h > kRopeMaxHeadsPerRank)
    return fail(
        llvm::formatv("heads per rank {0} > {1}", h, kRopeMaxHeadsPerRank));
  return std::nullopt;
}

std::string ropeDescribe(const KernelSignature &sig) {
  auto x = sig.args[0];
  return llvm::formatv("head_dim {0} in {{64, 128}, seq {1} <= {2}, heads per "
                       "rank {3} <= {4}",
                       x.getDimSize(3), x.getDimSize(2), kRopeMaxSeq,
                       x.getDimSize(1), kRopeMaxHeadsPerRank);
}

//===-- flash attention ---------------------------------------------------===//

std::optional<std::string> flashIsSite(Operation *root) {
  if (cast<AttentionOp>(root).getRopeCos())
    return fail("attention has a fused rope; the kernel has none");
  return std::nullopt;
}

std::optional<std::string> flashCheck(const KernelSignature &sig) {
  if (auto e = arity(sig, 3, 3, 1))
    return e;
  auto q = sig.args[0], k = sig.args[1];
  if (q.getRank() != 4 || k.getRank() != 4)
    return fail("q, k, v must be [B, H, S, D]");
  if (q.getDimSize(3) > kPartitions)
    return fail(
        llvm::formatv("head_dim {0} > {1}", q.getDimSize(3), kPartitions));
  if (q.getDimSize(2) % kFlashBlock != 0)
    return fail(llvm::formatv("q seq {0} is not a multiple of BLOCK_Q = {1}",
                              q.getDimSize(2), kFlashBlock));
  if (k.getDimSize(2) % kFlashBlock != 0)
    return fail(llvm::formatv("k seq {0} is not a multiple of BLOCK_K = {1}",
                              k.getDimSize(2), kFlashBlock));
  if (q.getDimSize(1) != k.getDimSize(1))
    return fail("grouped-query attention is not supported by the kernel");
  if (sig.args[2].getRank() != 4 ||
      sig.args[2].getDimSize(3) != q.getDimSize(3))
    return fail(llvm::formatv(
        "v head_dim {0} differs from q's {1}: the "
        "kernel's V and output tiles have q's",
        sig.args[2].getRank() == 4 ? sig.args[2].getDimSize(3) : int64_t(-1),
        q.getDimSize(3)));
  if (hasConfig(sig, "causal"))
    return fail("causal: the kernel has no mask (as the source's)");
  return std::nullopt;
}

std::string flashDescribe(const KernelSignature &sig) {
  auto q = sig.args[0];
  return llvm::formatv("{0} heads, seq {1} (multiple of 128), head_dim {2}",
                       q.getDimSize(1), q.getDimSize(2), q.getDimSize(3));
}

//===-- FFT family --------------------------------------------------------===//

std::optional<std::string> fftCheckDir(const KernelSignature &sig,
                                       bool inverse) {
  if (auto e = arity(sig, 1, 1, 1))
    return e;
  int64_t axis = intConfig(sig, "axis", -1);
  auto x = sig.args[0];
  if (axis < 0 || axis >= x.getRank())
    return fail("config has no valid 'axis'");
  int64_t pad = intConfig(sig, "pad_to", 0);
  if (auto e = checkDftSize(pad ? pad : x.getDimSize(axis), "size"))
    return e;
  return fftSiteError(sig, inverse);
}

std::optional<std::string> fftCheck(const KernelSignature &sig) {
  return fftCheckDir(sig, /*inverse=*/false);
}
std::optional<std::string> ifftCheck(const KernelSignature &sig) {
  return fftCheckDir(sig, /*inverse=*/true);
}

std::string fftDescribe(const KernelSignature &sig) {
  int64_t n = sig.args[0].getDimSize(intConfig(sig, "axis"));
  if (int64_t pad = intConfig(sig, "pad_to", 0))
    return llvm::formatv("{0} points zero-padded to {1}, radix-2 (the FNet "
                         "source's; not the {0}-point DFT)",
                         n, pad);
  if (hasConfig(sig, "variant"))
    return llvm::formatv("{0}-point DFT, radix-2 (the FNet source's)", n);
  return llvm::formatv("{0}-point DFT as {1} TE matmul stage(s)", n,
                       dftFactorCount(n));
}

std::optional<std::string> fourierCheck(const KernelSignature &sig) {
  if (auto e = arity(sig, 1, 1, 1))
    return e;
  auto x = sig.args[0];
  auto dims = sig.config ? sig.config.getAs<DenseI64ArrayAttr>("dims")
                         : DenseI64ArrayAttr();
  if (!dims)
    return fail("config has no 'dims'");
  for (int64_t d : dims.asArrayRef()) {
    if (d < 0 || d >= x.getRank())
      return fail(llvm::formatv("dim {0} out of range", d));
    if (auto e = checkDftSize(x.getDimSize(d),
                              llvm::formatv("dim {0} size", d).str()))
      return e;
  }
  // What the builder serves (FourierMix.cpp): the FNet mixing itself.
  return fourierMixSiteError(x, dims.asArrayRef());
}

std::string fourierDescribe(const KernelSignature &sig) {
  return llvm::formatv("Re(DFT) of {0} as C X C - S X S matmuls",
                       describeShape(sig.args[0].getShape()));
}

std::optional<std::string> fftconvCheck(const KernelSignature &sig) {
  if (auto e = arity(sig, 3, 6, 1))
    return e;
  int64_t n = intConfig(sig, "fft_size"), l = sig.args[0].getDimSize(2);
  if (n < 16 || n > kMaxFftSize || !llvm::isPowerOf2_64(n))
    return fail(llvm::formatv("fft_size {0} is not a power of two in [16, "
                              "16384]",
                              n));
  if (l > n / 2)
    return fail(llvm::formatv("seq_len {0} > fft_size / 2 = {1}", l, n / 2));
  if (!sig.args[0].getElementType().isF32())
    return fail("the kernel is built for f32 only");
  if (sig.args[1].getRank() != 2 || sig.args[1].getDimSize(1) > n)
    return fail(llvm::formatv("the filter must be [H, Lk] with Lk <= "
                              "fft_size {0}",
                              n));
  if (intConfig(sig, "head_dim", 1) != 1)
    return fail(llvm::formatv("head_dim {0}: only head_dim 1 (the fp16 "
                              "multi-head path needs head_dim 8 and fp16)",
                              intConfig(sig, "head_dim", 1)));
  return std::nullopt;
}

std::string fftconvDescribe(const KernelSignature &sig) {
  return llvm::formatv("L = {0}, fft_size {1}", sig.args[0].getDimSize(2),
                       intConfig(sig, "fft_size"));
}

const KernelInfo kKernels[] = {
    {"qkv", "seam.linear",
     "fused QKV projection: one matmul over the concatenated weights",
     qkvIsSite, qkvCheck, qkvDescribe, buildQkvKernel},
    {"rope", "seam.rope", "rotary embedding, NKI RoPE kernel constraints",
     alwaysSite, ropeCheck, ropeDescribe, buildRopeKernel},
    {"flash-attn", "seam.attention",
     "the source's flash attention: single pass, exp only, no row max, "
     "heads looped in one instance",
     flashIsSite, flashCheck, flashDescribe, buildFlashAttnKernel},
    {"flash-attn-stable", "seam.attention",
     "flash attention with an online-softmax running max, heads interleaved",
     flashIsSite, flashCheck, flashDescribe, buildFlashAttnStableKernel},
    {"fft", "seam.fft", "1-D DFT as Tensor Engine matmuls (four-step)",
     alwaysSite, fftCheck, fftDescribe, buildFftKernel},
    {"ifft", "seam.ifft", "1-D inverse DFT as Tensor Engine matmuls",
     alwaysSite, ifftCheck, fftDescribe, buildIfftKernel},
    {"fourier-mix", "seam.fourier_mix",
     "FNet mixing Re(F_S X F_D) = C_S X C_D - S_S X S_D", alwaysSite,
     fourierCheck, fourierDescribe, buildFourierMixKernel},
    {"fftconv", "seam.fftconv", "Hyena FFT long convolution", alwaysSite,
     fftconvCheck, fftconvDescribe, buildFftconvKernel},
};

SmallVector<RankedTensorType> tensorTypes(TypeRange types) {
  SmallVector<RankedTensorType> out;
  for (Type t : types)
    if (auto tt = dyn_cast<RankedTensorType>(t))
      out.push_back(tt);
  return out;
}

} // namespace

ArrayRef<KernelInfo> seam::allKernels() { return kKernels; }

const KernelInfo *seam::lookupKernel(StringRef name) {
  for (const KernelInfo &k : kKernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

std::string seam::knownKernelNames() {
  std::string s;
  for (const KernelInfo &k : kKernels)
    s += (s.empty() ? "" : ", ") + k.name.str();
  return s;
}

KernelSignature seam::signatureOfRoot(Operation *root) {
  NamedAttrList attrs(root->getAttrDictionary());
  attrs.erase("operandSegmentSizes");
  // Without the segment sizes a lone [B, H, L] operand of fftconv reads as
  // v: say when it is q (fftconvOperands).
  if (auto c = dyn_cast<FftConvOp>(root); c && c.getQ() && !c.getV())
    attrs.set("with_q", UnitAttr::get(root->getContext()));
  return {tensorTypes(root->getOperandTypes()),
          tensorTypes(root->getResultTypes()),
          attrs.getDictionary(root->getContext())};
}

FftconvOperands seam::fftconvOperands(const KernelSignature &sig) {
  FftconvOperands o;
  SmallVector<int> seq;
  for (int i = 3, e = int(sig.args.size()); i < e; ++i) {
    if (sig.args[i].getRank() == 2)
      o.mask = i;
    else
      seq.push_back(i);
  }
  bool q = sig.config && (sig.config.get("with_q") || sig.config.get("gelu_q"));
  if (seq.size() >= 2) {
    o.v = seq[0];
    o.q = seq[1];
  } else if (seq.size() == 1) {
    (q ? o.q : o.v) = seq[0];
  }
  return o;
}

KernelSignature seam::signatureOfCall(Operation *call) {
  auto kc = cast<KernelCallOp>(call);
  return {tensorTypes(kc.getArgs().getTypes()),
          tensorTypes(kc.getResultTypes()),
          kc.getConfig().value_or(DictionaryAttr())};
}

std::string seam::signatureKey(StringRef kernel, const KernelSignature &sig) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << kernel << "(";
  llvm::interleaveComma(sig.args, os);
  os << ")->(";
  llvm::interleaveComma(sig.results, os);
  os << ")";
  if (sig.config)
    os << sig.config;
  return s;
}

/// kernelBuildStats(): lowering may build kernels on several threads.
static std::atomic<uint64_t> bodiesBuilt{0}, buildNs{0};

FailureOr<StringAttr>
seam::getOrBuildKernelProgram(ModuleOp module, StringRef kernel,
                              const KernelSignature &sig) {
  const KernelInfo *k = lookupKernel(kernel);
  if (!k)
    return module.emitError()
           << "unknown kernel '" << kernel
           << "'; registered kernels: " << knownKernelNames();
  if (auto why = k->check(sig))
    return module.emitError()
           << "kernel '" << kernel << "' constraint violated: " << *why;
  constexpr StringLiteral kKeyAttr = "seam.kernel_signature";
  std::string key = signatureKey(kernel, sig);
  for (auto prog : module.getOps<ncore::ProgramOp>())
    if (auto a = prog->getAttrOfType<StringAttr>(kKeyAttr))
      if (a.getValue() == key)
        return prog.getSymNameAttr();
  // kernel_<name>_<hash of the key>, made unique in the module. xxh3 is
  // stable across processes, so names (and compile-cache keys) are too.
  std::string base = "kernel_" + kernel.str();
  std::replace(base.begin(), base.end(), '-', '_');
  base += "_" + llvm::utohexstr(llvm::xxh3_64bits(key) & 0xffffffffu,
                                /*LowerCase=*/true);
  std::string name = base;
  SymbolTable symbols(module);
  for (unsigned i = 1; symbols.lookup(name); ++i)
    name = base + "_" + std::to_string(i);
  OpBuilder b(module.getContext());
  auto t0 = std::chrono::steady_clock::now();
  FailureOr<ncore::ProgramOp> prog = k->build(b, module, sig, name);
  buildNs.fetch_add(uint64_t(std::chrono::duration<double, std::nano>(
                                 std::chrono::steady_clock::now() - t0)
                                 .count()));
  bodiesBuilt.fetch_add(1);
  if (failed(prog))
    return failure();
  (*prog)->setAttr(kKeyAttr, b.getStringAttr(key));
  return (*prog).getSymNameAttr();
}

KernelBuildStats seam::kernelBuildStats() {
  return {bodiesBuilt.load(), double(buildNs.load())};
}

void seam::registerKernelRegistry(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, SeamDialect *dialect) {
    dialect->setKernelCallHook([](Operation *op) -> LogicalResult {
      auto call = cast<KernelCallOp>(op);
      const KernelInfo *k = lookupKernel(call.getKernel());
      if (!k)
        return call.emitOpError()
               << "unknown kernel '" << call.getKernel()
               << "'; registered kernels: " << knownKernelNames();
      if (auto why = k->check(signatureOfCall(op)))
        return call.emitOpError()
               << "kernel '" << k->name << "' constraint violated: " << *why;
      return success();
    });
  });
}
