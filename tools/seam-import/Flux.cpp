//===- Flux.cpp - FLUX.2-klein transformer (double + single stream) -------===//
//
// The MMDiT of FLUX from its hidden states: `num_layers` double-stream blocks
// (separate image and text weights, joint attention over txt ++ img), then
// `num_single_layers` single-stream blocks over the concatenated sequence.
// Every block modulates with adaLN from the conditioning vector. With --tp N
// the IR is one rank's shard (Megatron-style: q/k/v/mlp-in column parallel,
// output projections row parallel followed by seam.all_reduce).
// models/README.md lists the choices that are ours.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-import/Import.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace seamimport;

namespace {

struct FluxConfig {
  Dim hidden, heads, headDim, doubleLayers, singleLayers, imgSeq, txtSeq, batch,
      mlpHidden;
  double mlpRatio, ropeTheta, eps, initRange;
  int64_t tp, blocks;
  Type dtype;
};

/// Builds the blocks of one rank's shard.
class FluxBuilder {
public:
  FluxBuilder(const FluxConfig &c, GraphBuilder &g) : c(c), g(g) {
    b = c.batch.value;
    d = c.hidden.value;
    hd = c.headDim.value;
    hr = c.heads.value / c.tp;
    inner = hr * hd;
    t = c.txtSeq.value;
    im = c.imgSeq.value;
  }

  /// The adaLN chunks of `<prefix>.linear` applied to silu(vec) (given):
  /// `count` tensors [B, 1, hidden]. Column parallel under --tp: each rank
  /// reads 1/tp of the weight (a [hidden, count * hidden] matrix-vector
  /// product is bound by reading it) and the [B, count * hidden] result is
  /// all-gathered.
  SmallVector<Value> modulation(Value siluVec, const std::string &prefix,
                                int64_t count) {
    Value m = g.allGather(
        g.columnLinear(siluVec, prefix + ".linear", count * d, /*bias=*/false),
        1);
    SmallVector<Value> chunks;
    for (int64_t i = 0; i < count; ++i)
      chunks.push_back(g.reshape(g.slice(m, {0, i * d}, {b, d}), {b, 1, d}));
    return chunks;
  }

  /// norm(x) * (1 + scale) + shift, written as norm + norm*scale + shift.
  Value modulate(Value x, Value shift, Value scale) {
    Value n = g.layerNorm(x, c.eps, "");
    return g.add(g.add(n, g.mul(n, scale)), shift);
  }

  /// x [B, S, inner] -> [B, H/tp, S, D].
  Value heads(Value x) {
    int64_t s = GraphBuilder::shapeOf(x)[1];
    return g.transpose(g.reshape(x, {b, s, hr, hd}), {0, 2, 1, 3});
  }
  /// [B, H/tp, S, D] -> [B, S, inner].
  Value merge(Value x) {
    int64_t s = GraphBuilder::shapeOf(x)[2];
    return g.reshape(g.transpose(x, {0, 2, 1, 3}), {b, s, inner});
  }

  struct Qkv {
    Value q, k, v;
  };
  /// Three separate column-parallel projections (a pass fuses them), heads
  /// split, qk-norm, rope with the given tables.
  Qkv projectQkv(Value x, const std::string &attn, llvm::StringRef q,
                 llvm::StringRef k, llvm::StringRef v, llvm::StringRef normQ,
                 llvm::StringRef normK, Value cos, Value sin) {
    Qkv r;
    r.q = heads(g.columnLinear(x, attn + "." + q.str(), d, false));
    r.k = heads(g.columnLinear(x, attn + "." + k.str(), d, false));
    r.v = heads(g.columnLinear(x, attn + "." + v.str(), d, false));
    r.q = g.rope(g.rmsNorm(r.q, c.eps, attn + "." + normQ.str()), cos, sin);
    r.k = g.rope(g.rmsNorm(r.k, c.eps, attn + "." + normK.str()), cos, sin);
    return r;
  }

  double scale() const { return 1.0 / std::sqrt(double(hd)); }

  /// One double-stream block: returns {img, txt}.
  SmallVector<Value> doubleStream(int64_t i, Value img, Value txt, Value vec,
                                  Value cos, Value sin) {
    std::string p = "transformer_blocks." + std::to_string(i);
    Value sv = g.silu(vec);
    SmallVector<Value> mi = modulation(sv, p + ".norm1", 6);
    SmallVector<Value> mt = modulation(sv, p + ".norm1_context", 6);

    // Rope per stream, before the concatenation: the text rows of the joint
    // table are [0, txt_seq), the image rows [txt_seq, txt_seq + img_seq).
    Value cosTxt = g.slice(cos, {0, 0}, {t, hd});
    Value sinTxt = g.slice(sin, {0, 0}, {t, hd});
    Value cosImg = g.slice(cos, {t, 0}, {im, hd});
    Value sinImg = g.slice(sin, {t, 0}, {im, hd});

    std::string attn = p + ".attn";
    Qkv qi = projectQkv(modulate(img, mi[0], mi[1]), attn, "to_q", "to_k",
                        "to_v", "norm_q", "norm_k", cosImg, sinImg);
    Qkv qt = projectQkv(modulate(txt, mt[0], mt[1]), attn, "add_q_proj",
                        "add_k_proj", "add_v_proj", "norm_added_q",
                        "norm_added_k", cosTxt, sinTxt);
    Value q = g.concat({qt.q, qi.q}, 2);
    Value k = g.concat({qt.k, qi.k}, 2);
    Value v = g.concat({qt.v, qi.v}, 2);
    Value o = merge(g.attention(q, k, v, scale()));
    Value oTxt = g.slice(o, {0, 0, 0}, {b, t, inner});
    Value oImg = g.slice(o, {0, t, 0}, {b, im, inner});
    Value aImg = g.rowLinear(oImg, attn + ".to_out.0", d, false);
    Value aTxt = g.rowLinear(oTxt, attn + ".to_add_out", d, false);

    auto finish = [&](Value x, Value a, SmallVector<Value> &m,
                      const std::string &ff) {
      x = g.add(x, g.mul(a, m[2]));
      Value h = modulate(x, m[3], m[4]);
      h = g.geluTanh(
          g.columnLinear(h, ff + ".net.0.proj", c.mlpHidden.value, false));
      h = g.rowLinear(h, ff + ".net.2", d, false);
      return g.add(x, g.mul(h, m[5]));
    };
    img = finish(img, aImg, mi, p + ".ff");
    txt = finish(txt, aTxt, mt, p + ".ff_context");
    return {img, txt};
  }

  /// One single-stream block over x [B, txt_seq + img_seq, hidden].
  Value singleStream(int64_t i, Value x, Value vec, Value cos, Value sin) {
    std::string p = "single_transformer_blocks." + std::to_string(i);
    SmallVector<Value> m = modulation(g.silu(vec), p + ".norm", 3);
    Value h = modulate(x, m[0], m[1]);
    std::string attn = p + ".attn";
    Qkv qkv = projectQkv(h, attn, "to_q", "to_k", "to_v", "norm_q", "norm_k",
                         cos, sin);
    Value mlp = g.geluTanh(
        g.columnLinear(h, p + ".proj_mlp", c.mlpHidden.value, false));
    Value o = merge(g.attention(qkv.q, qkv.k, qkv.v, scale()));
    Value out = g.rowLinear(g.concat({o, mlp}, 2), p + ".proj_out", d, false);
    return g.add(x, g.mul(out, m[2]));
  }

private:
  const FluxConfig &c;
  GraphBuilder &g;
  int64_t b, d, hd, hr, inner, t, im;
};

} // namespace

llvm::Error seamimport::importFlux(ConfigReader &r, const ImportOptions &opt,
                                   ModuleOp module) {
  FluxConfig c;
  c.heads = r.positiveInt("num_attention_heads");
  c.headDim = r.positiveInt("attention_head_dim");
  // diffusers' Flux configs have no hidden_size: it is heads * head_dim
  // (saturated; the size checks below name it when it is too large).
  int64_t headsTimesDim;
  if (llvm::MulOverflow(c.heads.value, c.headDim.value, headsTimesDim))
    headsTimesDim = std::numeric_limits<int64_t>::max();
  c.hidden =
      r.has("hidden_size")
          ? r.positiveInt("hidden_size")
          : Dim{headsTimesDim, "num_attention_heads * attention_head_dim"};
  c.doubleLayers = r.nonNegativeInt("num_layers");
  c.singleLayers = r.nonNegativeInt("num_single_layers");
  // Absent from diffusers' FLUX.1 configs: its blocks' default MLP ratio
  // (4), its rotary base (10000), and the published experiments' shapes
  // (256 image tokens, 512 text tokens). FLUX.2 (model_type flux2, or
  // diffusers' Flux2Transformer2DModel) defaults to ratio 3 and base 2000,
  // Flux2Transformer2DModel's defaults.
  bool flux2 = (r.has("model_type") && r.string("model_type") == "flux2") ||
               (!r.has("model_type") && r.has("_class_name") &&
                llvm::StringRef(r.string("_class_name")).starts_with("Flux2"));
  c.mlpRatio = r.positiveNumber("mlp_ratio", flux2 ? 3.0 : 4.0);
  c.imgSeq =
      ConfigReader::withOption(r.positiveInt("img_seq", 256), opt.seq, "--seq");
  c.txtSeq = ConfigReader::withOption(r.positiveInt("txt_seq", 512), opt.txtSeq,
                                      "--txt-seq");
  c.ropeTheta = r.positiveNumber("rope_theta", flux2 ? 2000 : 10000);
  c.eps = r.positiveNumber("eps", 1e-6);
  c.initRange = r.positiveNumber("initializer_range", 0.02);
  c.dtype = resolveDtype(r, opt, module.getContext(), "bfloat16");
  c.batch = Dim{opt.batch.value_or(1), "--batch"};
  c.tp = opt.tp.value_or(1);
  if (r.failed())
    return r.takeError();

  auto num = [](int64_t v) { return std::to_string(v); };
  auto fmt = [](double v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%g", v);
    return std::string(buf);
  };
  // Sums and products of config integers saturate instead of overflowing
  // (the size checks below then name the field).
  int64_t total;
  if (llvm::AddOverflow(c.doubleLayers.value, c.singleLayers.value, total))
    total = std::numeric_limits<int64_t>::max();
  double mlp = double(c.hidden.value) * c.mlpRatio;
  c.mlpHidden = Dim{mlp < 1e15 ? std::llround(mlp) : 0, "field 'mlp_ratio'"};
  if (c.hidden.value != headsTimesDim)
    r.fail("field 'hidden_size' (" + num(c.hidden.value) +
           ") must equal num_attention_heads * attention_head_dim (" +
           num(c.heads.value) + " * " + num(c.headDim.value) + ")");
  else if (c.headDim.value % 2 != 0)
    r.fail("field 'attention_head_dim' (" + num(c.headDim.value) +
           ") must be even: rope rotates pairs of features");
  else if (total == 0)
    r.fail("fields 'num_layers' and 'num_single_layers' are both 0: the "
           "model has no blocks");
  else if (!(c.ropeTheta > 1))
    r.fail("field 'rope_theta' (" + fmt(c.ropeTheta) + ") must be > 1");
  else if (!(mlp < 1e15) || std::fabs(mlp - double(c.mlpHidden.value)) > 1e-6 ||
           c.mlpHidden.value < 1)
    r.fail("field 'mlp_ratio' (" + fmt(c.mlpRatio) + ") times hidden_size (" +
           num(c.hidden.value) + ") must be a positive integer");
  else if (c.heads.value % c.tp != 0)
    r.fail("field 'num_attention_heads' (" + num(c.heads.value) +
           ") is not divisible by --tp " + num(c.tp));
  else if (c.mlpHidden.value % c.tp != 0)
    r.fail("the MLP width hidden_size * field 'mlp_ratio' (" +
           num(c.mlpHidden.value) + ") is not divisible by --tp " + num(c.tp));
  else if (opt.layers && *opt.layers > total)
    r.fail("--layers " + num(*opt.layers) + " exceeds the model's " +
           num(total) + " blocks (num_layers " + num(c.doubleLayers.value) +
           " + num_single_layers " + num(c.singleLayers.value) + ")");
  c.blocks = opt.layers.value_or(total);
  checkAtMost(r, Dim{total, "num_layers + num_single_layers"}, kMaxBlocks,
              "blocks");
  // Each stream first: within the limit, their sum cannot overflow.
  checkTensorSize(r, "the image hidden states", {c.batch, c.imgSeq, c.hidden});
  checkTensorSize(r, "the text hidden states", {c.batch, c.txtSeq, c.hidden});
  Dim seq = c.imgSeq.value >= c.txtSeq.value ? c.imgSeq : c.txtSeq;
  if (!r.failed())
    seq.value = c.imgSeq.value + c.txtSeq.value;
  checkTensorSize(r, "the joint hidden states", {c.batch, seq, c.hidden});
  checkTensorSize(r, "the MLP activation", {c.batch, seq, c.mlpHidden});
  checkTensorSize(r, "the adaLN weight", {c.hidden, Dim{6, "6"}, c.hidden});
  checkTensorSize(r, "the MLP weight", {c.hidden, c.mlpHidden});
  if (r.failed())
    return r.takeError();

  OpBuilder b(module.getContext());
  GraphBuilder g(b, c.dtype, c.initRange, c.tp);
  g.onBlock = opt.onBlock;
  int64_t bs = c.batch.value, d = c.hidden.value;
  int64_t t = c.txtSeq.value, im = c.imgSeq.value;
  auto func = createForward(b, module,
                            {{"img", g.tensor({bs, im, d})},
                             {"txt", g.tensor({bs, t, d})},
                             {"vec", g.tensor({bs, d})}});
  Value img = func.getArgument(0), txt = func.getArgument(1),
        vec = func.getArgument(2);

  // One rotary table for the joint sequence (text rows first), shared by
  // every block: double-stream blocks slice their stream's rows.
  int64_t hd = c.headDim.value;
  Value cos = g.param("pos_embed.cos", {t + im, hd},
                      mlir::seam::ParamInit::rope_cos, c.ropeTheta);
  Value sin = g.param("pos_embed.sin", {t + im, hd},
                      mlir::seam::ParamInit::rope_sin, c.ropeTheta);

  FluxBuilder fb(c, g);
  int64_t doubles = std::min(c.blocks, c.doubleLayers.value);
  for (int64_t i = 0; i < doubles; ++i) {
    auto out =
        g.block("double_stream", i, "transformer_blocks." + std::to_string(i),
                [&] { return fb.doubleStream(i, img, txt, vec, cos, sin); });
    img = out[0];
    txt = out[1];
  }
  Value joint;
  for (int64_t i = 0; i < c.blocks - doubles; ++i) {
    joint = g.block("single_stream", i,
                    "single_transformer_blocks." + std::to_string(i),
                    [&]() -> SmallVector<Value> {
                      // The first single-stream block joins the streams.
                      Value x = i == 0 ? g.concat({txt, img}, 1) : joint;
                      return {fb.singleStream(i, x, vec, cos, sin)};
                    })[0];
  }

  // The joint stream (text tokens, then image tokens) after single-stream
  // blocks; the two streams when there are none.
  if (joint)
    finishForward(b, func, {{"joint", joint}});
  else
    finishForward(b, func, {{"img", img}, {"txt", txt}});
  return llvm::Error::success();
}
