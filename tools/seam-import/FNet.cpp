//===- FNet.cpp - FNet encoder (google/fnet-base, fnet-large) -------------===//
//
// Hugging Face FNetLayer, from hidden states (embeddings are out of scope):
//   x = LayerNorm(Re(DFT_{S,D}(x)) + x)
//   x = LayerNorm(W2 act(W1 x + b1) + b2 + x)
// With --tp the FFN is column/row parallel (the Fourier mix needs the whole
// hidden dimension, so it is replicated).
//
// --fourier seed builds the mixing as the FNet source computes it: a 1-D
// FFT over the hidden dim (real -> complex), then one over the sequence
// (complex -> its real part), each a call of the source's radix-2 kernels
// (config variant = "radix2") when --kernels fft is given; a size that is
// not a power of two is zero-padded to the next one and the first bins kept
// (pad_to: D = 768 -> 1024), which is not the DFT: seam reports its error.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-import/Import.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace seamimport;

namespace {
struct FNetConfig {
  Dim hidden, layers, intermediate, maxPositions, seq, batch;
  double eps, initRange;
  std::string act;
  int64_t tp;
  Type dtype;
};
} // namespace

llvm::Error seamimport::importFNet(ConfigReader &r, const ImportOptions &opt,
                                   ModuleOp module) {
  FNetConfig c;
  c.hidden = r.positiveInt("hidden_size");
  c.layers = ConfigReader::withOption(r.positiveInt("num_hidden_layers"),
                                      opt.layers, "--layers");
  c.intermediate = r.positiveInt("intermediate_size");
  // The longest sequence the model takes; absent, --seq is taken for it.
  c.maxPositions =
      r.has("max_position_embeddings")
          ? r.positiveInt("max_position_embeddings")
      : opt.seq ? Dim{*opt.seq, "--seq"}
                : r.missingField("max_position_embeddings", "or give --seq");
  c.eps = r.positiveNumber("layer_norm_eps");
  c.act = r.string("hidden_act");
  c.initRange = r.positiveNumber("initializer_range", 0.02);
  if (r.has("type_vocab_size"))
    (void)r.positiveInt("type_vocab_size");
  bool tpuFourier = r.boolean("use_tpu_fourier_optimizations", false);
  c.dtype = resolveDtype(r, opt, module.getContext(), "float32");
  c.seq = ConfigReader::withOption(c.maxPositions, opt.seq, "--seq");
  c.batch = Dim{opt.batch.value_or(1), "--batch"};
  c.tp = opt.tp.value_or(1);
  if (r.failed())
    return r.takeError();

  if (c.act != "gelu_new" && c.act != "gelu" && c.act != "gelu_pytorch_tanh")
    r.fail("field 'hidden_act' must be \"gelu_new\", \"gelu_pytorch_tanh\" "
           "or \"gelu\", got \"" +
           c.act + "\"");
  else if (c.seq.value > c.maxPositions.value)
    r.fail("--seq " + llvm::Twine(c.seq.value) + " exceeds " +
           c.maxPositions.origin + " (" + llvm::Twine(c.maxPositions.value) +
           ")");
  else if (c.intermediate.value % c.tp != 0)
    r.fail("field 'intermediate_size' (" + llvm::Twine(c.intermediate.value) +
           ") is not divisible by --tp " + llvm::Twine(c.tp));
  checkAtMost(r, c.layers, kMaxBlocks, "blocks");
  // Hugging Face's FNet then mixes by DFT matrix products sized by
  // tpu_short_seq_length (meant for TPUs) instead of FFTs: the same real
  // part of the 2-D DFT. seam has one mix either way; the user is told.
  if (tpuFourier && opt.onWarning && !r.failed())
    opt.onWarning(
        "field 'use_tpu_fourier_optimizations' is true: Hugging Face then "
        "computes the same 2-D DFT as matrix products (a TPU layout); seam "
        "imports it as its one Fourier mix (" +
        std::string(opt.fourier && *opt.fourier == "seed"
                        ? "--fourier seed: the source's FFT passes"
                        : "seam.fourier_mix, the exact 2-D DFT") +
        "), so the field changes nothing here");
  checkTensorSize(r, "the hidden states", {c.batch, c.seq, c.hidden});
  checkTensorSize(r, "the FFN activation", {c.batch, c.seq, c.intermediate});
  checkTensorSize(r, "the FFN weight", {c.hidden, c.intermediate});
  if (r.failed())
    return r.takeError();

  OpBuilder b(module.getContext());
  GraphBuilder g(b, c.dtype, c.initRange, c.tp);
  g.onBlock = opt.onBlock;
  int64_t d = c.hidden.value;
  auto func = createForward(
      b, module,
      {{"hidden_states", g.tensor({c.batch.value, c.seq.value, d})}});
  Value x = func.getArgument(0);
  bool tanhGelu = c.act != "gelu";
  bool seed = opt.fourier && *opt.fourier == "seed";
  // The source's padding: the next power of two of a size that is not one.
  auto padOf = [](int64_t n) -> int64_t {
    return llvm::isPowerOf2_64(uint64_t(n)) ? 0
                                            : int64_t(llvm::NextPowerOf2(n));
  };
  auto mix = [&](Value v) -> Value {
    if (!seed)
      return g.fourierMix(v, {1, 2});
    Value h = g.fft(v, 2, /*realResult=*/false, padOf(d), "radix2");
    return g.fft(h, 1, /*realResult=*/true, padOf(c.seq.value), "radix2");
  };

  for (int64_t i = 0; i < c.layers.value; ++i) {
    std::string p = "encoder.layer." + std::to_string(i);
    x = g.block("fnet", i, p, [&]() -> SmallVector<Value> {
      Value mixed = mix(x);
      Value h =
          g.layerNorm(g.add(mixed, x), c.eps, p + ".fourier.output.LayerNorm");
      Value f = g.columnLinear(h, p + ".intermediate.dense",
                               c.intermediate.value, /*bias=*/true);
      f = tanhGelu ? g.geluTanh(f) : g.gelu(f);
      f = g.rowLinear(f, p + ".output.dense", d, /*bias=*/true);
      return {g.layerNorm(g.add(f, h), c.eps, p + ".output.LayerNorm")};
    })[0];
  }
  finishForward(b, func, {{"hidden_states", x}});
  return llvm::Error::success();
}
