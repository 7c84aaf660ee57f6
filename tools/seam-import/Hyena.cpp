//===- Hyena.cpp - HyenaDNA-style blocks (order-2 Hyena operator) ---------===//
//
// Per block, from hidden states x [B, L, D]:
//   u = in_proj(LayerNorm(x))           [B, L, 3D] -> x1, x2, v
//   y = fftconv((v * x1)^T, filter, bias) over [B, D, L]
//   x = x + out_proj(y^T * x2)
//   x = x + fc2(gelu_tanh(fc1(LayerNorm(x))))
// The implicit filter MLP (positional features -> filter) is replaced by an
// explicit [D, L] filter parameter, and the short depthwise convolution of
// in_proj's output is left out; models/README.md says why.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-import/Import.h"

using namespace mlir;
using namespace seamimport;

llvm::Error seamimport::importHyena(ConfigReader &r, const ImportOptions &opt,
                                    ModuleOp module) {
  Dim hidden = r.positiveInt("d_model");
  Dim layers = ConfigReader::withOption(r.positiveInt("n_layer"), opt.layers,
                                        "--layers");
  Dim innerDim = r.positiveInt("d_inner");
  // The longest sequence: `l_max` (hyena-dna's HyenaOperator), else
  // `layer.l_max` (the original hyena-dna configs nest the operator's
  // options under "layer"), else `max_seq_len` (the Hugging Face HyenaDNA
  // configs), else --seq.
  std::optional<Dim> nestedLMax = r.nestedPositiveInt("layer", "l_max");
  Dim lMax = r.has("l_max")         ? r.positiveInt("l_max")
             : nestedLMax           ? *nestedLMax
             : r.has("max_seq_len") ? r.positiveInt("max_seq_len")
             : opt.seq
                 ? Dim{*opt.seq, "--seq"}
                 : r.missingField("l_max", "or 'layer.l_max' or "
                                           "'max_seq_len', or give --seq");
  // HyenaDNA's order (number of gates); the importer builds order 2.
  std::optional<Dim> nestedOrder = r.nestedPositiveInt("layer", "order");
  Dim order = r.has("hyena_order") || !nestedOrder
                  ? r.positiveInt("hyena_order", 2)
                  : *nestedOrder;
  double eps = r.positiveNumber("layer_norm_epsilon", 1e-5);
  double initRange = r.positiveNumber("initializer_range", 0.02);
  Type dtype = resolveDtype(r, opt, module.getContext(), "float32");
  Dim seq = ConfigReader::withOption(lMax, opt.seq, "--seq");
  Dim batch{opt.batch.value_or(1), "--batch"};
  int64_t tp = opt.tp.value_or(1);
  if (r.failed())
    return r.takeError();

  // fftconv: fft_size = 2L rounded up to a power of two must be <= 16384.
  constexpr int64_t kMaxConvLength = 8192;
  if (order.value != 2)
    r.fail(order.origin + " (" + llvm::Twine(order.value) +
           ") is not supported: the importer builds the order-2 operator");
  else if (seq.value > lMax.value)
    r.fail("--seq " + llvm::Twine(seq.value) + " exceeds " + lMax.origin +
           " (" + llvm::Twine(lMax.value) + ")");
  else if (seq.value > kMaxConvLength)
    r.fail(seq.origin + " (" + llvm::Twine(seq.value) +
           ") is too long for fftconv: L must be <= " +
           llvm::Twine(kMaxConvLength) + " (fft_size 2L <= 16384)" +
           (opt.seq ? ""
                    : "; give --seq " + llvm::Twine(kMaxConvLength) +
                          " (or less) to import a shorter sequence"));
  else if (hidden.value % tp != 0)
    r.fail("field 'd_model' (" + llvm::Twine(hidden.value) +
           ") is not divisible by --tp " + llvm::Twine(tp));
  else if (innerDim.value % tp != 0)
    r.fail("field 'd_inner' (" + llvm::Twine(innerDim.value) +
           ") is not divisible by --tp " + llvm::Twine(tp));
  checkAtMost(r, layers, kMaxBlocks, "blocks");
  checkTensorSize(r, "the in_proj activation",
                  {batch, seq, hidden, Dim{3, "3"}});
  checkTensorSize(r, "the MLP activation", {batch, seq, innerDim});
  checkTensorSize(r, "the MLP weight", {hidden, innerDim});
  // in_proj's weight [D, 3D] (it also bounds out_proj's [D, D]); the filter
  // [D, L] is bounded by the in_proj activation.
  checkTensorSize(r, "the in_proj weight", {hidden, hidden, Dim{3, "3"}});
  if (r.failed())
    return r.takeError();

  OpBuilder b(module.getContext());
  GraphBuilder g(b, dtype, initRange, tp);
  g.onBlock = opt.onBlock;
  int64_t bs = batch.value, d = hidden.value, l = seq.value;
  int64_t dr = d / tp; // channels of this rank
  int64_t fftSize = mlir::seam::FftConvOp::defaultFftSize(l);
  auto func =
      createForward(b, module, {{"hidden_states", g.tensor({bs, l, d})}});
  Value x = func.getArgument(0);

  for (int64_t i = 0; i < layers.value; ++i) {
    std::string p = "backbone.layers." + std::to_string(i);
    x = g.block("hyena", i, p, [&]() -> SmallVector<Value> {
      std::string mixer = p + ".mixer";
      Value u = g.layerNorm(x, eps, p + ".norm1");
      // Column parallel: this rank's dr channels of each of x1, x2, v.
      u = g.columnLinear(u, mixer + ".in_proj", 3 * d, /*bias=*/true);
      Value x1 = g.slice(u, {0, 0, 0}, {bs, l, dr});
      Value x2 = g.slice(u, {0, 0, dr}, {bs, l, dr});
      Value v = g.slice(u, {0, 0, 2 * dr}, {bs, l, dr});
      Value vt = g.transpose(g.mul(v, x1), {0, 2, 1}); // [B, D, L]
      Value filter = g.weight(mixer + ".filter_fn.filter", {dr, l});
      Value bias = g.weight(mixer + ".filter_fn.bias", {dr});
      Value y = g.fftConv(vt, filter, bias, fftSize);
      y = g.mul(g.transpose(y, {0, 2, 1}), x2);
      Value mixed =
          g.add(x, g.rowLinear(y, mixer + ".out_proj", d, /*bias=*/true));

      Value h = g.layerNorm(mixed, eps, p + ".norm2");
      h = g.geluTanh(g.columnLinear(h, p + ".mlp.fc1", innerDim.value, true));
      return {g.add(mixed, g.rowLinear(h, p + ".mlp.fc2", d, true))};
    })[0];
  }
  finishForward(b, func, {{"hidden_states", x}});
  return llvm::Error::success();
}
