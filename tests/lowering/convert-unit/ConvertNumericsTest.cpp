//===- ConvertNumericsTest.cpp - converted seam programs on the emulator --===//
//
// Each test writes a small seam program (a `seam.program` func), runs
// convert-seam-to-ncore, compiles the ncore.program with the real codegen
// (compileNcoreProgram) and runs it functionally on one emulated core. The
// outputs are compared with double-precision references by relative L2
// error: fp32 <= 1e-5 for exact-arithmetic paths (matmul, add, copies,
// rope), <= 1e-4 where a transcendental table is involved (rsqrt, exp, gelu,
// silu); bf16 <= 1e-2.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "lowering/target/NcoreCodegen.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

using namespace mlir;
namespace rt = ::seam::rt;

namespace {

float toBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  float y;
  std::memcpy(&y, &u, 4);
  return y;
}

std::vector<float> randomValues(size_t n, unsigned seed, bool bf,
                                float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = bf ? toBf16(dist(gen)) : dist(gen);
  return v;
}

double relL2(const std::vector<float> &got, const std::vector<double> &want) {
  if (got.size() != want.size())
    return 1e300;
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

struct ConvRun {
  bool ok = false;
  std::string error;
  std::vector<std::vector<float>> outputs;
  /// Every rank's outputs (convertAndRunOnRanks), rank 0's being `outputs`.
  std::vector<std::vector<std::vector<float>>> rankOutputs;
  int64_t spills = 0;
  /// The conversion's diagnostics (its remarks say what it chose).
  std::string remarks;
};

/// Converts the seam module `source`, compiles program `name` and runs it
/// on one core per rank, rank r with `inputsPerRank[r]` (one per func
/// argument, in order).
ConvRun convertAndRunOnRanks(
    const std::string &source, const std::string &name,
    const std::vector<std::vector<std::vector<float>>> &inputsPerRank,
    const std::string &target = "trn1") {
  ConvRun r;
  MLIRContext ctx;
  ctx.loadDialect<mlir::seam::SeamDialect, ncore::NcoreDialect,
                  func::FuncDialect>();
  std::string diags;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &ctx);
  if (!module) {
    r.error = "parse: " + diags;
    return r;
  }
  PassManager pm(&ctx);
  mlir::seam::ConvertSeamToNcoreOptions opts;
  opts.target = target;
  mlir::seam::buildLowerToNcorePipeline(pm, opts);
  if (failed(pm.run(*module))) {
    r.error = "convert: " + diags;
    return r;
  }
  auto programs = module->lookupSymbol<ModuleOp>("ncore");
  auto prog = programs ? programs.lookupSymbol<ncore::ProgramOp>(name)
                       : ncore::ProgramOp();
  if (!prog) {
    r.error = "no ncore.program @" + name;
    return r;
  }
  if (auto s = prog->getAttrOfType<IntegerAttr>("seam.spills"))
    r.spills = s.getInt();
  r.remarks = diags;
  std::vector<std::map<unsigned, std::vector<float>>> in(inputsPerRank.size());
  for (size_t rank = 0; rank < inputsPerRank.size(); ++rank)
    for (unsigned i = 0; i < inputsPerRank[rank].size(); ++i)
      in[rank][i] = inputsPerRank[rank][i];
  std::optional<rt::Target> tgt = rt::parseTarget(target);
  ::seam::kt::RunResult res = ::seam::kt::runProgramOnRanks(
      prog, in, rt::ExecMode::Functional, tgt ? *tgt : rt::Target::Trn1);
  if (!res.ok) {
    r.error = res.error + diags;
    return r;
  }
  for (const auto &outs : res.rankOutputs) {
    auto &mine = r.rankOutputs.emplace_back();
    for (auto &[i, vals] : outs)
      mine.push_back(vals);
  }
  if (!r.rankOutputs.empty())
    r.outputs = r.rankOutputs.front();
  r.ok = true;
  return r;
}

/// convertAndRun on one core, with `inputs`.
ConvRun convertAndRun(const std::string &source, const std::string &name,
                      const std::vector<std::vector<float>> &inputs,
                      const std::string &target = "trn1") {
  return convertAndRunOnRanks(source, name, {inputs}, target);
}

std::string dt(bool bf) { return bf ? "bf16" : "f32"; }

/// "tensor<d0xd1x...xf32>" (or bf16).
std::string tensorType(std::initializer_list<int64_t> dims, bool bf) {
  std::string r = "tensor<";
  for (int64_t d : dims)
    r += std::to_string(d) + "x";
  return r + dt(bf) + ">";
}

void report(const char *what, bool bf, double err) {
  std::cout << "[convert] " << what << " " << dt(bf) << " rel-L2 " << err
            << "\n";
}

//===----------------------------------------------------------------------===//
// References (double)
//===----------------------------------------------------------------------===//

std::vector<double> linearRef(const std::vector<float> &x,
                              const std::vector<float> &w,
                              const std::vector<float> *b, int64_t m, int64_t k,
                              int64_t n) {
  std::vector<double> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = b ? (*b)[j] : 0.0;
      for (int64_t c = 0; c < k; ++c)
        acc += double(x[i * k + c]) * w[c * n + j];
      y[i * n + j] = acc;
    }
  return y;
}

/// x [m, k] (already in double: a reference's intermediate) times w [k, n].
std::vector<double> productRef(const std::vector<double> &x,
                               const std::vector<float> &w, int64_t m,
                               int64_t k, int64_t n) {
  std::vector<double> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t c = 0; c < k; ++c)
        acc += x[i * k + c] * double(w[c * n + j]);
      y[i * n + j] = acc;
    }
  return y;
}

std::vector<double> normRef(const std::vector<float> &x, int64_t rows,
                            int64_t d, double eps, bool centre,
                            const std::vector<float> *g,
                            const std::vector<float> *b,
                            double scaleOffset = 0.0) {
  std::vector<double> y(rows * d);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = &x[r * d];
    double mean = 0;
    if (centre) {
      for (int64_t i = 0; i < d; ++i)
        mean += row[i];
      mean /= d;
    }
    double var = 0;
    for (int64_t i = 0; i < d; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= d;
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i) {
      double v = (row[i] - mean) * rstd;
      if (g)
        v *= (*g)[i] + scaleOffset;
      if (b)
        v += (*b)[i];
      y[r * d + i] = v;
    }
  }
  return y;
}

std::vector<double> ropeRef(const std::vector<float> &x,
                            const std::vector<float> &c,
                            const std::vector<float> &s, int64_t heads,
                            int64_t seq, int64_t d) {
  std::vector<double> y(x.size());
  int64_t h = d / 2;
  for (int64_t bh = 0; bh < heads; ++bh)
    for (int64_t p = 0; p < seq; ++p)
      for (int64_t i = 0; i < d; ++i) {
        const float *row = &x[(bh * seq + p) * d];
        double rot = i < h ? -double(row[i + h]) : row[i - h];
        y[(bh * seq + p) * d + i] =
            row[i] * double(c[p * d + i]) + rot * s[p * d + i];
      }
  return y;
}

void ropeTables(int64_t seq, int64_t d, bool bf, std::vector<float> &c,
                std::vector<float> &s) {
  c.resize(seq * d);
  s.resize(seq * d);
  for (int64_t p = 0; p < seq; ++p)
    for (int64_t i = 0; i < d; ++i) {
      double th = p * std::pow(10000.0, -2.0 * double(i % (d / 2)) / d);
      c[p * d + i] = bf ? toBf16(float(std::cos(th))) : float(std::cos(th));
      s[p * d + i] = bf ? toBf16(float(std::sin(th))) : float(std::sin(th));
    }
}

/// softmax(scale * Q K^T [+ causal mask]) V per head, [heads, s, d] rows
/// (Q and K already roped); query head h reads kv head h / (heads / kvHeads).
std::vector<double> attentionRef(const std::vector<double> &qd,
                                 const std::vector<double> &kd,
                                 const std::vector<float> &v, int64_t heads,
                                 int64_t kvHeads, int64_t s, int64_t d,
                                 double sc, bool causal) {
  std::vector<double> want(heads * s * d);
  int64_t group = heads / kvHeads;
  std::vector<double> row(s);
  for (int64_t h = 0; h < heads; ++h) {
    int64_t kh = h / group;
    for (int64_t i = 0; i < s; ++i) {
      double mx = -1e300;
      for (int64_t j = 0; j < s; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < d; ++e)
          acc += qd[(h * s + i) * d + e] * kd[(kh * s + j) * d + e];
        row[j] = (causal && j > i) ? -1e300 : acc * sc;
        mx = std::max(mx, row[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j)
        sum += (row[j] = row[j] <= -1e300 ? 0.0 : std::exp(row[j] - mx));
      for (int64_t e = 0; e < d; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j)
          acc += row[j] * v[(kh * s + j) * d + e];
        want[(h * s + i) * d + e] = acc / sum;
      }
    }
  }
  return want;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

struct LinearCase {
  int64_t m, k, n;
  bool bias;
};

TEST(ConvertLinear, BiasPartialTilesKRemainder) {
  // Partial token tiles, K remainders, N blocks of 512 plus a remainder.
  for (LinearCase c :
       {LinearCase{128, 128, 128, false}, LinearCase{128, 128, 128, true},
        LinearCase{200, 128, 128, false}, LinearCase{128, 192, 128, false},
        LinearCase{128, 384, 128, false}, LinearCase{128, 128, 640, false},
        LinearCase{200, 192, 640, true}, LinearCase{200, 192, 640, false},
        LinearCase{128, 192, 640, true}, LinearCase{200, 128, 640, true},
        LinearCase{200, 192, 128, true}, LinearCase{1, 384, 1536, true},
        // One row without a bias: the transposed matvec (Y^T on
        // partitions, one slab or several, a slab remainder); N not in
        // blocks of 128: the row form with X^T by one DMA.
        LinearCase{1, 384, 1536, false}, LinearCase{1, 3072, 2304, false},
        LinearCase{1, 256, 640, false}, LinearCase{1, 192, 200, false}}) {
    for (bool bf : {false, true}) {
      auto ty = [&](std::initializer_list<int64_t> dims) {
        return tensorType(dims, bf);
      };
      std::string xt = ty({1, c.m, c.k}), wt = ty({c.k, c.n}), bt = ty({c.n}),
                  yt = ty({1, c.m, c.n});
      std::string src =
          "func.func private @p(%x: " + xt + ", %w: " + wt +
          (c.bias ? ", %b: " + bt : "") + ") -> " + yt +
          " attributes {seam.program} {\n  %y = seam.linear %x, %w" +
          (c.bias ? ", %b" : "") + " : (" + xt + ", " + wt +
          (c.bias ? ", " + bt : "") + ") -> " + yt + "\n  return %y : " + yt +
          "\n}\n";
      auto x = randomValues(c.m * c.k, 1, bf),
           w = randomValues(c.k * c.n, 2, bf), b = randomValues(c.n, 3, bf);
      std::vector<std::vector<float>> in{x, w};
      if (c.bias)
        in.push_back(b);
      ConvRun r = convertAndRun(src, "p", in);
      ASSERT_TRUE(r.ok) << r.error;
      double err = relL2(r.outputs[0],
                         linearRef(x, w, c.bias ? &b : nullptr, c.m, c.k, c.n));
      std::cout << "[convert] linear M=" << c.m << " K=" << c.k << " N=" << c.n
                << (c.bias ? " +bias " : " ") << dt(bf) << " rel-L2 " << err
                << "\n";
      EXPECT_LE(err, bf ? 1e-2 : 1e-5);
    }
  }
}

TEST(ConvertLinear, ActivationInTheEvacuation) {
  // linear {activation = ...}: applied as each block leaves PSUM, with and
  // without a bias, over a partial token tile and an N remainder; the
  // output feeds a column concatenation (written in place).
  struct Case {
    const char *act;
    bool bias;
  };
  auto gelu = [](double a) {
    return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
  };
  auto geluTanh = [](double a) {
    return 0.5 * a *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
  };
  auto silu = [](double a) { return a / (1.0 + std::exp(-a)); };
  for (Case c :
       {Case{"gelu_tanh", false}, Case{"gelu", true}, Case{"silu", true}}) {
    const int64_t m = 200, k = 192, n = 640;
    std::string bias = c.bias ? ", %b" : "",
                biasTy = c.bias ? ", tensor<640xf32>" : "";
    std::string src =
        std::string("func.func private @p(%x: tensor<1x200x192xf32>, %w: "
                    "tensor<192x640xf32>") +
        (c.bias ? ", %b: tensor<640xf32>" : "") +
        ") -> tensor<1x200x704xf32> attributes {seam.program} {\n"
        "  %y = seam.linear %x, %w" +
        bias + " {activation = \"" + c.act +
        "\"} : (tensor<1x200x192xf32>, tensor<192x640xf32>" + biasTy +
        ") -> tensor<1x200x640xf32>\n"
        "  %s = seam.silu %x : tensor<1x200x192xf32>\n"
        "  %h = seam.slice %s offsets [0, 0, 0] : tensor<1x200x192xf32> -> "
        "tensor<1x200x64xf32>\n"
        "  %c = seam.concat %y, %h dim 2 : (tensor<1x200x640xf32>, "
        "tensor<1x200x64xf32>) -> tensor<1x200x704xf32>\n"
        "  %o = seam.add %c, %c : (tensor<1x200x704xf32>, "
        "tensor<1x200x704xf32>) -> tensor<1x200x704xf32>\n"
        "  return %o : tensor<1x200x704xf32>\n}\n";
    auto x = randomValues(m * k, 1, false), w = randomValues(k * n, 2, false),
         b = randomValues(n, 3, false);
    std::vector<std::vector<float>> in{x, w};
    if (c.bias)
      in.push_back(b);
    ConvRun r = convertAndRun(src, "p", in);
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> y = linearRef(x, w, c.bias ? &b : nullptr, m, k, n);
    std::vector<double> want(m * 704);
    std::string act = c.act;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double v = y[i * n + j];
        v = act == "gelu"        ? gelu(v)
            : act == "gelu_tanh" ? geluTanh(v)
                                 : silu(v);
        want[i * 704 + j] = 2 * v;
      }
      for (int64_t j = 0; j < 64; ++j)
        want[i * 704 + n + j] = 2 * silu(x[i * k + j]);
    }
    double err = relL2(r.outputs[0], want);
    std::string what = std::string("linear + ") + c.act +
                       (c.bias ? " + bias" : "") + " -> concat";
    report(what.c_str(), false, err);
    EXPECT_LE(err, 1e-4);
  }
}

TEST(ConvertLinear, SecondLinearOfAnInputReusesItsTranspose) {
  // Two linears of one input (a single-stream block's QKV and MLP
  // projections): the second reuses the first's X^T. An op between them,
  // the second with an activation; both outputs checked.
  const int64_t m = 256, k = 192, n1 = 128, n2 = 320;
  for (bool bf : {false, true}) {
    auto ty = [&](int64_t a, int64_t b) { return tensorType({a, b}, bf); };
    std::string src =
        "func.func private @p(%x: " + ty(m, k) + ", %w1: " + ty(k, n1) +
        ", %w2: " + ty(k, n2) + ") -> (" + ty(m, n1) + ", " + ty(m, n2) +
        ") attributes {seam.program} {\n"
        "  %a = seam.linear %x, %w1 : (" +
        ty(m, k) + ", " + ty(k, n1) + ") -> " + ty(m, n1) +
        "\n  %s = seam.silu %a : " + ty(m, n1) +
        "\n  %b = seam.linear %x, %w2 {activation = \"silu\"} : (" + ty(m, k) +
        ", " + ty(k, n2) + ") -> " + ty(m, n2) +
        "\n  return %s, %b : " + ty(m, n1) + ", " + ty(m, n2) + "\n}\n";
    auto x = randomValues(m * k, 1, bf), w1 = randomValues(k * n1, 2, bf),
         w2 = randomValues(k * n2, 3, bf);
    ConvRun r = convertAndRun(src, "p", {x, w1, w2});
    ASSERT_TRUE(r.ok) << r.error;
    auto silu = [](double a) { return a / (1.0 + std::exp(-a)); };
    std::vector<double> a = linearRef(x, w1, nullptr, m, k, n1),
                        b = linearRef(x, w2, nullptr, m, k, n2);
    for (double &v : a)
      v = silu(v);
    for (double &v : b)
      v = silu(v);
    double ea = relL2(r.outputs[0], a), eb = relL2(r.outputs[1], b);
    report("two linears of one input (first)", bf, ea);
    report("two linears of one input (second, X^T reused)", bf, eb);
    EXPECT_LE(ea, bf ? 1e-2 : 1e-5);
    EXPECT_LE(eb, bf ? 1e-2 : 1e-5);
  }
}

TEST(ConvertLinear, FirstLinearHandsItsTransposeToTheSecond) {
  // An MLP: y = (act(x W1 + b1)) W2 + b2, the first linear's only reader the
  // second's input: the first computes Y^T (weight resident and stationary)
  // and the second reads it as its X^T. 2600 tokens (six column chunks of
  // the Y^T blocks, a partial row tile), K1 = 192 (96 x 2), N1 = 256 (two
  // feature blocks); with and without the bias and the activation.
  const int64_t m = 2600, k = 192, n1 = 256, n2 = 320;
  auto geluTanh = [](double a) {
    return 0.5 * a *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
  };
  for (bool bf : {false, true})
    for (bool biasAct : {false, true}) {
      std::string t = dt(bf);
      auto ty = [&](int64_t a, int64_t b) { return tensorType({a, b}, bf); };
      auto vec = [&](int64_t a) {
        return "tensor<" + std::to_string(a) + "x" + t + ">";
      };
      std::string first = biasAct
                              ? "  %h = seam.linear %x, %w1, %b1 {activation = "
                                "\"gelu_tanh\"} : (" +
                                    ty(m, k) + ", " + ty(k, n1) + ", " +
                                    vec(n1) + ") -> " + ty(m, n1)
                              : "  %h = seam.linear %x, %w1 : (" + ty(m, k) +
                                    ", " + ty(k, n1) + ") -> " + ty(m, n1);
      std::string src = "func.func private @p(%x: " + ty(m, k) +
                        ", %w1: " + ty(k, n1) + ", %b1: " + vec(n1) +
                        ", %w2: " + ty(n1, n2) + ", %b2: " + vec(n2) + ") -> " +
                        ty(m, n2) + " attributes {seam.program} {\n" + first +
                        "\n  %y = seam.linear %h, %w2, %b2 : (" + ty(m, n1) +
                        ", " + ty(n1, n2) + ", " + vec(n2) + ") -> " +
                        ty(m, n2) + "\n  return %y : " + ty(m, n2) + "\n}\n";
      auto x = randomValues(m * k, 1, bf), w1 = randomValues(k * n1, 2, bf),
           b1 = randomValues(n1, 3, bf), w2 = randomValues(n1 * n2, 4, bf),
           b2 = randomValues(n2, 5, bf);
      ConvRun r = convertAndRun(src, "p", {x, w1, b1, w2, b2});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.remarks.find("Y^T handed to the next linear"),
                std::string::npos)
          << r.remarks;
      std::vector<double> h =
          linearRef(x, w1, biasAct ? &b1 : nullptr, m, k, n1);
      if (biasAct)
        for (double &v : h)
          v = geluTanh(v);
      // The reference's second product in double from the double h.
      std::vector<double> want(m * n2);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n2; ++j) {
          double acc = b2[j];
          for (int64_t c = 0; c < n1; ++c)
            acc += h[i * n1 + c] * double(w2[c * n2 + j]);
          want[i * n2 + j] = acc;
        }
      double err = relL2(r.outputs[0], want);
      report(biasAct ? "MLP, Y^T handed over (bias, gelu_tanh)"
                     : "MLP, Y^T handed over",
             bf, err);
      EXPECT_LE(err, bf ? 1e-2 : (biasAct ? 1e-4 : 1e-5));
    }
}

TEST(ConvertLinear, ColumnScaleInTheEvacuation) {
  // linear {scale = g}: y = act(x W + b) * g, g a row; alone (the
  // evacuation itself), after a bias and an activation; a partial token
  // tile and an N remainder.
  const int64_t m = 200, k = 192, n = 640;
  auto silu = [](double a) { return a / (1.0 + std::exp(-a)); };
  for (bool full : {false, true})
    for (bool bf : {false, true}) {
      std::string t = dt(bf);
      std::string xt = "tensor<1x200x192x" + t + ">",
                  wt = "tensor<192x640x" + t + ">",
                  vt = "tensor<640x" + t + ">",
                  gt = "tensor<1x1x640x" + t + ">",
                  yt = "tensor<1x200x640x" + t + ">";
      std::string src =
          "func.func private @p(%x: " + xt + ", %w: " + wt + ", %b: " + vt +
          ", %g: " + gt + ") -> " + yt + " attributes {seam.program} {\n" +
          "  %y = seam.linear %x, %w" + (full ? ", %b" : "") + " scale %g" +
          (full ? " {activation = \"silu\"}" : "") + " : (" + xt + ", " + wt +
          (full ? ", " + vt : "") + ", " + gt + ") -> " + yt +
          "\n  return %y : " + yt + "\n}\n";
      auto x = randomValues(m * k, 1, bf), w = randomValues(k * n, 2, bf),
           b = randomValues(n, 3, bf), g = randomValues(n, 4, bf);
      ConvRun r = convertAndRun(src, "p", {x, w, b, g});
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> want = linearRef(x, w, full ? &b : nullptr, m, k, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double &v = want[i * n + j];
          v = (full ? silu(v) : v) * g[j];
        }
      double err = relL2(r.outputs[0], want);
      report(full ? "linear + bias + silu, * row" : "linear * row", bf, err);
      EXPECT_LE(err, bf ? 1e-2 : 1e-5);
    }
}

TEST(ConvertLinear, ResultStagedAndStoredToHbm) {
  // A result read from HBM (here a program output) is staged in SBUF: slab
  // by slab while the next slabs compute when the Tensor engine bounds the
  // linear (600 rows, a partial last tile, K = 128, N = 1152), after the
  // last slab when the weight's DMA does (32 rows, K = 512, N = 2048). The
  // remark says which; the values match a double product either way.
  struct Case {
    int64_t m, k, n;
    const char *remark;
  } cases[] = {{600, 128, 1152, "Y to HBM slab by slab"},
               {32, 512, 2048, "Y to HBM after the last slab"}};
  for (const Case &c : cases)
    for (bool bf : {false, true}) {
      std::string xt = tensorType({1, c.m, c.k}, bf),
                  wt = tensorType({c.k, c.n}, bf),
                  yt = tensorType({1, c.m, c.n}, bf);
      std::string src = "func.func private @p(%x: " + xt + ", %w: " + wt +
                        ") -> " + yt + " attributes {seam.program} {\n" +
                        "  %y = seam.linear %x, %w : (" + xt + ", " + wt +
                        ") -> " + yt + "\n  return %y : " + yt + "\n}\n";
      auto x = randomValues(c.m * c.k, 61, bf),
           w = randomValues(c.k * c.n, 62, bf);
      ConvRun r = convertAndRun(src, "p", {x, w});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.remarks.find(c.remark), std::string::npos) << r.remarks;
      double err = relL2(r.outputs[0], linearRef(x, w, nullptr, c.m, c.k, c.n));
      report(c.remark, bf, err);
      EXPECT_LE(err, bf ? 1e-2 : 1e-5);
    }
}

TEST(ConvertCollectives, AllReduceInTheLinearsSlabs) {
  // A row-parallel linear whose only reader is an all_reduce: each rank
  // computes its partial product and the linear emits the reduction, slab
  // by slab when one slab's reduction is shorter than its Tensor-engine
  // time (f32: 256-column slabs), else once after its last store (bf16:
  // one 512-column slab). Two emulated cores, each with its own x and W;
  // every rank's result must be the sum of both partial products.
  const int64_t ranks = 2, m = 384, k = 1024, n = 512;
  struct Case {
    bool bf;
    const char *remark;
  } cases[] = {{false, "slab by slab"}, {true, "once after its last store"}};
  for (const Case &c : cases) {
    std::string xt = tensorType({1, m, k}, c.bf), wt = tensorType({k, n}, c.bf),
                yt = tensorType({1, m, n}, c.bf);
    std::string src =
        "func.func private @p(%x: " + xt + ", %w: " + wt + ") -> " + yt +
        " attributes {seam.program} {\n  %y = seam.linear %x, %w : (" + xt +
        ", " + wt + ") -> " + yt + "\n  %s = seam.all_reduce %y ranks " +
        std::to_string(ranks) + " : " + yt + "\n  return %s : " + yt + "\n}\n";
    std::vector<std::vector<std::vector<float>>> inputs;
    std::vector<double> want(m * n, 0.0);
    for (int64_t r = 0; r < ranks; ++r) {
      auto x = randomValues(m * k, 71 + r, c.bf),
           w = randomValues(k * n, 81 + r, c.bf);
      std::vector<double> part = linearRef(x, w, nullptr, m, k, n);
      for (int64_t i = 0; i < m * n; ++i)
        want[i] += part[i];
      inputs.push_back({x, w});
    }
    ConvRun run = convertAndRunOnRanks(src, "p", inputs);
    ASSERT_TRUE(run.ok) << run.error;
    EXPECT_NE(run.remarks.find("all_reduce emitted in the linear at"),
              std::string::npos)
        << run.remarks;
    EXPECT_NE(run.remarks.find(c.remark), std::string::npos) << run.remarks;
    ASSERT_EQ(run.rankOutputs.size(), size_t(ranks));
    for (int64_t r = 0; r < ranks; ++r) {
      double err = relL2(run.rankOutputs[r][0], want);
      report(c.remark, c.bf, err);
      EXPECT_LE(err, c.bf ? 1e-2 : 1e-5) << "rank " << r;
    }
  }
}

/// layer_norm with gamma and beta, rms_norm with gamma, and adaLN's
/// layer_norm n * (1 + s) + b (scale_offset = 1, as
/// seam-fuse-norm-modulation folds it) of x [dims..., 96] (`rows` rows),
/// returned (so no X^T is built), against double references: rel-L2 <=
/// `f32Tol` in f32, 1e-2 in bf16.
static void checkNorms(const std::string &dims, int64_t rows, uint64_t seed,
                       double f32Tol, const std::string &what) {
  const int64_t d = 96;
  for (bool bf : {false, true}) {
    std::string t = dt(bf);
    std::string xt = "tensor<" + dims + "x" + std::to_string(d) + "x" + t + ">",
                v = "tensor<" + std::to_string(d) + "x" + t + ">";
    std::string src =
        "func.func private @p(%x: " + xt + ", %g: " + v + ", %b: " + v +
        ", %s: " + v + ") -> (" + xt + ", " + xt + ", " + xt +
        ") attributes {seam.program} {\n"
        "  %y = seam.layer_norm %x scale %g bias %b {epsilon = 1.0e-5 : f64} "
        ": (" +
        xt + ", " + v + ", " + v + ") -> " + xt +
        "\n  %z = seam.rms_norm %x scale %g {epsilon = 1.0e-6 : f64} : (" + xt +
        ", " + v + ") -> " + xt +
        "\n  %w = seam.layer_norm %x scale %s bias %b {epsilon = 1.0e-6 : "
        "f64, scale_offset = 1.0 : f64} : (" +
        xt + ", " + v + ", " + v + ") -> " + xt +
        "\n  return %y, %z, %w : " + xt + ", " + xt + ", " + xt + "\n}\n";
    auto x = randomValues(rows * d, seed, bf, -2.0f, 3.0f),
         g = randomValues(d, seed + 1, bf, 0.5f, 1.5f),
         b = randomValues(d, seed + 2, bf),
         sm = randomValues(d, seed + 3, bf, -0.3f, 0.3f);
    ConvRun r = convertAndRun(src, "p", {x, g, b, sm});
    ASSERT_TRUE(r.ok) << r.error;
    double e1 = relL2(r.outputs[0], normRef(x, rows, d, 1e-5, true, &g, &b));
    double e2 =
        relL2(r.outputs[1], normRef(x, rows, d, 1e-6, false, &g, nullptr));
    double e3 =
        relL2(r.outputs[2], normRef(x, rows, d, 1e-6, true, &sm, &b, 1.0));
    report(("layer_norm" + what).c_str(), bf, e1);
    report(("rms_norm" + what).c_str(), bf, e2);
    report(("layer_norm scale_offset 1" + what).c_str(), bf, e3);
    EXPECT_LE(e1, bf ? 1e-2 : f32Tol);
    EXPECT_LE(e2, bf ? 1e-2 : f32Tol);
    EXPECT_LE(e3, bf ? 1e-2 : f32Tol);
  }
}

TEST(ConvertNorm, LayerNormAffineAndRmsNorm) {
  // 300 rows = 2 full tiles + 44: two working sets.
  checkNorms("3x100", 300, 4, 1e-4, "");
}

TEST(ConvertNorm, ThreeWorkingSetsFromThreeWholeTiles) {
  // 512 rows (four whole tiles): the norms pipeline over three working
  // sets (tile i + 2's statistics before tile i's scaling; rms_norm's set-1
  // tiles sum on the vector engines).
  checkNorms("512", 512, 41, 1e-5, ", three sets");
}

TEST(ConvertNorm, ResidualAddInTheNormsRowLoop) {
  // A block's residual add read first by a norm (RowProducer): the norm
  // emits the add row tile by row tile in its own loop. The sum is also a
  // result (the next residual), and the norm feeds a linear (so the
  // layer_norm builds X^T). layer_norm with gamma and beta, rms_norm with
  // gamma; the sum, the norm's linear and the rms_norm itself checked
  // against double references.
  const int64_t rows = 768, d = 256, n = 128;
  for (bool rms : {false, true})
    for (bool bf : {false, true}) {
      auto ty = [&](int64_t a, int64_t b) { return tensorType({a, b}, bf); };
      std::string vec = "tensor<256x" + dt(bf) + ">";
      std::string norm =
          rms ? "  %n = seam.rms_norm %h scale %g {epsilon = 1.0e-5 : f64} : "
                "(" +
                    ty(rows, d) + ", " + vec + ") -> " + ty(rows, d) + "\n"
              : "  %n = seam.layer_norm %h scale %g bias %bb {epsilon = "
                "1.0e-5 : f64} : (" +
                    ty(rows, d) + ", " + vec + ", " + vec + ") -> " +
                    ty(rows, d) + "\n";
      std::string tail = rms ? "  return %h, %n : " + ty(rows, d) + ", " +
                                   ty(rows, d) + "\n}\n"
                             : "  %y = seam.linear %n, %w : (" + ty(rows, d) +
                                   ", " + ty(d, n) + ") -> " + ty(rows, n) +
                                   "\n  return %h, %y : " + ty(rows, d) + ", " +
                                   ty(rows, n) + "\n}\n";
      std::string src = "func.func private @p(%a: " + ty(rows, d) +
                        ", %b: " + ty(rows, d) + ", %g: " + vec +
                        ", %bb: " + vec + ", %w: " + ty(d, n) + ") -> (" +
                        ty(rows, d) + ", " + (rms ? ty(rows, d) : ty(rows, n)) +
                        ") attributes {seam.program} {\n  %h = seam.add %a, %b "
                        ": (" +
                        ty(rows, d) + ", " + ty(rows, d) + ") -> " +
                        ty(rows, d) + "\n" + norm + tail;
      auto a = randomValues(rows * d, 61, bf, -2.0f, 2.0f),
           b = randomValues(rows * d, 62, bf, -1.0f, 1.0f),
           g = randomValues(d, 63, bf, 0.5f, 1.5f),
           bb = randomValues(d, 64, bf), w = randomValues(d * n, 65, bf);
      ConvRun r = convertAndRun(src, "p", {a, b, g, bb, w}, "trn2");
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.remarks.find("seam.add emitted row tile by row tile in the "
                               "row loop of the seam." +
                               std::string(rms ? "rms_norm" : "layer_norm")),
                std::string::npos)
          << r.remarks;
      std::vector<float> sum(rows * d);
      std::vector<double> sumd(rows * d);
      for (int64_t i = 0; i < rows * d; ++i) {
        sumd[i] = double(a[i]) + double(b[i]);
        sum[i] = float(sumd[i]);
      }
      std::vector<double> normed =
          normRef(sum, rows, d, 1e-5, !rms, &g, rms ? nullptr : &bb);
      double e1 = relL2(r.outputs[0], sumd);
      double e2 =
          relL2(r.outputs[1], rms ? normed : productRef(normed, w, rows, d, n));
      report(rms ? "add -> rms_norm: the sum" : "add -> layer_norm: the sum",
             bf, e1);
      report(rms ? "add -> rms_norm" : "add -> layer_norm -> linear", bf, e2);
      EXPECT_LE(e1, bf ? 1e-2 : 1e-6);
      EXPECT_LE(e2, bf ? 1e-2 : 1e-5);
    }
}

TEST(ConvertNorm, NormBuildsTheLinearsTranspose) {
  // layer_norm read only by two linears: the norm builds their X^T row tile
  // by row tile (K = 192 = 96 x 2) and neither linear transposes; 300 rows
  // (a partial tile). gamma and beta are applied per feature in the
  // transposes' evacuations (the remark says so): x, gamma and beta
  // program inputs in HBM (x's rows DMA'd into the norm's work tiles), or,
  // with adaLN's offset (gamma + 1), x and gamma computed in SBUF (x + x,
  // and g * g, a row on one partition) and beta in HBM. Both outputs against
  // the double reference of the norm followed by the products.
  const int64_t rows = 300, d = 192, n1 = 128, n2 = 256;
  for (bool adaLn : {false, true})
    for (bool bf : {false, true}) {
      std::string t = dt(bf);
      auto ty = [&](int64_t a, int64_t b) { return tensorType({a, b}, bf); };
      std::string v = "tensor<192x" + t + ">";
      std::string src =
          "func.func private @p(%x: " + ty(rows, d) + ", %g: " + v +
          ", %b: " + v + ", %w1: " + ty(d, n1) + ", %w2: " + ty(d, n2) +
          ") -> (" + ty(rows, n1) + ", " + ty(rows, n2) +
          ") attributes {seam.program} {\n" +
          (adaLn ? "  %h = seam.mul %g, %g : (" + v + ", " + v + ") -> " + v +
                       "\n  %x2 = seam.add %x, %x : (" + ty(rows, d) + ", " +
                       ty(rows, d) + ") -> " + ty(rows, d) +
                       "\n  %n = seam.layer_norm %x2 scale %h bias %b "
                       "{epsilon = 1.0e-5 : f64, scale_offset = 1.0 : f64} "
                 : std::string("  %n = seam.layer_norm %x scale %g bias %b "
                               "{epsilon = 1.0e-5 : f64} ")) +
          ": (" + ty(rows, d) + ", " + v + ", " + v + ") -> " + ty(rows, d) +
          "\n  %a = seam.linear %n, %w1 : (" + ty(rows, d) + ", " + ty(d, n1) +
          ") -> " + ty(rows, n1) + "\n  %c = seam.linear %n, %w2 : (" +
          ty(rows, d) + ", " + ty(d, n2) + ") -> " + ty(rows, n2) +
          "\n  return %a, %c : " + ty(rows, n1) + ", " + ty(rows, n2) + "\n}\n";
      auto x = randomValues(rows * d, 21, bf, -2.0f, 3.0f),
           g = randomValues(d, 22, bf, 0.5f, 1.5f), b = randomValues(d, 23, bf),
           w1 = randomValues(d * n1, 24, bf), w2 = randomValues(d * n2, 25, bf);
      ConvRun r = convertAndRun(src, "p", {x, g, b, w1, w2});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.remarks.find("builds the X^T of its 2 linear reader(s) (K "
                               "= 96 x 2); gamma and beta applied per "
                               "feature in the transposes' evacuations"),
                std::string::npos)
          << r.remarks;
      std::vector<float> gh = g;
      if (adaLn)
        for (float &e : gh)
          e = bf ? toBf16(e * e) : e * e; // as the program stores it
      std::vector<float> xin = x;
      if (adaLn)
        for (float &e : xin)
          e *= 2.0f; // exact in bf16 too
      std::vector<double> nrm =
          normRef(xin, rows, d, 1e-5, true, &gh, &b, adaLn ? 1.0 : 0.0);
      double e1 = relL2(r.outputs[0], productRef(nrm, w1, rows, d, n1)),
             e2 = relL2(r.outputs[1], productRef(nrm, w2, rows, d, n2));
      report(adaLn ? "layer_norm (1 + g) in SBUF -> linear (X^T built)"
                   : "layer_norm -> linear (X^T built by the norm)",
             bf, e1);
      report(adaLn ? "layer_norm (1 + g) in SBUF -> second linear"
                   : "layer_norm -> second linear (X^T reused)",
             bf, e2);
      EXPECT_LE(e1, bf ? 1e-2 : 1e-4);
      EXPECT_LE(e2, bf ? 1e-2 : 1e-4);
    }
}

TEST(ConvertElementwise, ActivationsAndBroadcast) {
  for (bool bf : {false, true}) {
    std::string t = dt(bf);
    std::string ty = "tensor<1x130x96x" + t + ">";
    std::string vec = "tensor<1x1x96x" + t + ">";
    std::string src = "func.func private @p(%x: " + ty + ", %v: " + vec +
                      ") -> (" + ty + ", " + ty + ", " + ty + ", " + ty +
                      ") attributes {seam.program} {\n"
                      "  %g = seam.gelu %x : " +
                      ty + "\n  %t = seam.gelu_tanh %x : " + ty +
                      "\n  %s = seam.silu %x : " + ty +
                      "\n"
                      "  %vs = seam.silu %v : " +
                      vec +
                      "\n"
                      "  %a = seam.add %x, %v : (" +
                      ty + ", " + vec + ") -> " + ty +
                      "\n"
                      "  %m = seam.mul %a, %vs : (" +
                      ty + ", " + vec + ") -> " + ty +
                      "\n"
                      "  return %g, %t, %s, %m : " +
                      ty + ", " + ty + ", " + ty + ", " + ty + "\n}\n";
    const int64_t rows = 130, d = 96;
    auto x = randomValues(rows * d, 7, bf, -3.0f, 3.0f),
         v = randomValues(d, 8, bf);
    ConvRun r = convertAndRun(src, "p", {x, v});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> g(rows * d), th(rows * d), si(rows * d), m(rows * d);
    auto silu = [](double a) { return a / (1.0 + std::exp(-a)); };
    for (int64_t i = 0; i < rows * d; ++i) {
      double a = x[i];
      g[i] = 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
      th[i] =
          0.5 * a *
          (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
      si[i] = silu(a);
      double vs = silu(v[i % d]);
      if (bf)
        vs = toBf16(float(vs)); // %vs is a bf16 tensor
      double sum = a + double(v[i % d]);
      if (bf)
        sum = toBf16(float(sum));
      m[i] = sum * vs;
    }
    double eg = relL2(r.outputs[0], g), et = relL2(r.outputs[1], th),
           es = relL2(r.outputs[2], si), em = relL2(r.outputs[3], m);
    report("gelu", bf, eg);
    report("gelu_tanh", bf, et);
    report("silu", bf, es);
    report("add/mul broadcast", bf, em);
    double tol = bf ? 1e-2 : 1e-4;
    EXPECT_LE(eg, tol);
    EXPECT_LE(et, tol);
    EXPECT_LE(es, tol);
    EXPECT_LE(em, tol);
  }
}

TEST(ConvertShape, ConcatOperandsWrittenInPlace) {
  // A column concatenation in SBUF of an input, a silu and a mul (both
  // written into their columns of the result by their producers, no copy)
  // and an add that is also returned (so copied), doubled: 256 rows, f32.
  const char *src = R"(
func.func private @p(%x: tensor<256x64xf32>, %y: tensor<256x32xf32>) -> (tensor<256x192xf32>, tensor<256x32xf32>) attributes {seam.program} {
  %s = seam.silu %x : tensor<256x64xf32>
  %m = seam.mul %y, %y : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
  %a = seam.add %y, %y : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
  %c = seam.concat %x, %s, %m, %a dim 1 : (tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x192xf32>
  %o = seam.add %c, %c : (tensor<256x192xf32>, tensor<256x192xf32>) -> tensor<256x192xf32>
  return %o, %a : tensor<256x192xf32>, tensor<256x32xf32>
}
)";
  auto x = randomValues(256 * 64, 21, false, -3.0f, 3.0f),
       y = randomValues(256 * 32, 22, false);
  ConvRun r = convertAndRun(src, "p", {x, y});
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<double> want(256 * 192), a(256 * 32);
  for (int64_t i = 0; i < 256; ++i) {
    for (int64_t j = 0; j < 64; ++j) {
      double v = x[i * 64 + j];
      want[i * 192 + j] = v;
      want[i * 192 + 64 + j] = v / (1.0 + std::exp(-v));
    }
    for (int64_t j = 0; j < 32; ++j) {
      double v = y[i * 32 + j];
      want[i * 192 + 128 + j] = v * v;
      want[i * 192 + 160 + j] = a[i * 32 + j] = v + v;
    }
  }
  for (double &w : want)
    w *= 2;
  double e1 = relL2(r.outputs[0], want), e2 = relL2(r.outputs[1], a);
  report("concat in place", false, e1);
  EXPECT_LE(e1, 1e-4);
  EXPECT_LE(e2, 1e-5);
}

TEST(ConvertShape, HeadsTransposeAfterLinear) {
  // linear -> column slice -> head split -> [0, 2, 1, 3] transpose.
  const int64_t s = 256, k = 64, n = 384, h = 2, hd = 64;
  for (bool bf : {false, true}) {
    std::string t = dt(bf);
    std::string src =
        "func.func private @p(%x: tensor<1x256x64x" + t +
        ">, %w: tensor<64x384x" + t + ">) -> tensor<1x2x256x64x" + t +
        "> attributes {seam.program} {\n"
        "  %qkv = seam.linear %x, %w : (tensor<1x256x64x" +
        t + ">, tensor<64x384x" + t + ">) -> tensor<1x256x384x" + t +
        ">\n"
        "  %q = seam.slice %qkv offsets [0, 0, 128] : tensor<1x256x384x" +
        t + "> -> tensor<1x256x128x" + t +
        ">\n"
        "  %r = seam.reshape %q : tensor<1x256x128x" +
        t + "> -> tensor<1x256x2x64x" + t +
        ">\n"
        "  %o = seam.transpose %r perm [0, 2, 1, 3] : tensor<1x256x2x64x" +
        t + "> -> tensor<1x2x256x64x" + t +
        ">\n  %a = seam.silu %o : tensor<1x2x256x64x" + t +
        ">\n  return %a : tensor<1x2x256x64x" + t + ">\n}\n";
    auto x = randomValues(s * k, 9, bf), w = randomValues(k * n, 10, bf);
    ConvRun r = convertAndRun(src, "p", {x, w});
    ASSERT_TRUE(r.ok) << r.error;
    auto y = linearRef(x, w, nullptr, s, k, n);
    std::vector<double> want(h * s * hd);
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t p = 0; p < s; ++p)
        for (int64_t i = 0; i < hd; ++i) {
          double v = y[p * n + 128 + hh * hd + i];
          want[(hh * s + p) * hd + i] = bf ? toBf16(float(v)) : v;
        }
    // The transposed heads (an SBUF intermediate) feed a silu.
    std::vector<double> act(want.size());
    for (size_t i = 0; i < want.size(); ++i)
      act[i] = want[i] / (1.0 + std::exp(-want[i]));
    double err2 = relL2(r.outputs[0], act);
    report("linear+slice+transpose->silu", bf, err2);
    EXPECT_LE(err2, bf ? 1e-2 : 1e-4);
  }
}

TEST(ConvertShape, SwapLastTwoOnTensorEngine) {
  // [2, A, B] -> [2, B, A] with partial blocks (A = 200), from HBM and from
  // an SBUF intermediate (A = 256).
  for (int64_t a : {200, 256}) {
    for (bool bf : {false, true}) {
      const int64_t bsz = 2, b = 96;
      std::string t = dt(bf);
      std::string in = "tensor<2x" + std::to_string(a) + "x96x" + t + ">",
                  out = "tensor<2x96x" + std::to_string(a) + "x" + t + ">";
      std::string src =
          "func.func private @p(%x: " + in + ") -> " + out +
          " attributes {seam.program} {\n  %s = seam.silu %x : " + in +
          "\n  %y = seam.transpose %s perm [0, 2, 1] : " + in + " -> " + out +
          "\n  return %y : " + out + "\n}\n";
      auto x = randomValues(bsz * a * b, 18, bf);
      ConvRun r = convertAndRun(src, "p", {x});
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> want(x.size());
      for (int64_t k = 0; k < bsz; ++k)
        for (int64_t i = 0; i < a; ++i)
          for (int64_t j = 0; j < b; ++j) {
            double v = x[(k * a + i) * b + j];
            v = v / (1.0 + std::exp(-v));
            want[(k * b + j) * a + i] = bf ? toBf16(float(v)) : v;
          }
      double err = relL2(r.outputs[0], want);
      std::cout << "[convert] silu+transpose[0,2,1] A=" << a << " " << dt(bf)
                << " rel-L2 " << err << "\n";
      EXPECT_LE(err, bf ? 1e-2 : 1e-4);
    }
  }
}

TEST(ConvertShape, SwapLastTwoFromHbmByRowBlocks) {
  // [2, A, B] -> [2, B, A] straight from an HBM argument (a kernel's
  // [B, H, L] output): each [128, B] row block arrives in one DMA and is
  // transposed in 128-column blocks (B = 300: two full and a partial one;
  // A = 200: a partial row block). Exact.
  const int64_t bsz = 2, a = 200, b = 300;
  for (bool bf : {false, true}) {
    std::string t = dt(bf);
    std::string in = "tensor<2x200x300x" + t + ">",
                out = "tensor<2x300x200x" + t + ">";
    std::string src = "func.func private @p(%x: " + in + ") -> " + out +
                      " attributes {seam.program} {\n  %y = seam.transpose "
                      "%x perm [0, 2, 1] : " +
                      in + " -> " + out + "\n  return %y : " + out + "\n}\n";
    auto x = randomValues(bsz * a * b, 19, bf);
    ConvRun r = convertAndRun(src, "p", {x});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> want(x.size());
    for (int64_t k = 0; k < bsz; ++k)
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < b; ++j)
          want[(k * b + j) * a + i] = x[(k * a + i) * b + j];
    double err = relL2(r.outputs[0], want);
    report("transpose[0,2,1] from HBM by row blocks", bf, err);
    EXPECT_EQ(err, 0.0);
  }
}

TEST(ConvertShape, HeadsTransposeInHbmLoopsOverFewerDims) {
  // [1, H, S, D] -> [1, S, H, D] from an HBM input to the HBM output: one DMA
  // per head (H = 3) rather than per row (S = 200); exact.
  const int64_t h = 3, sl = 200, d = 64;
  for (bool bf : {false, true}) {
    std::string t = dt(bf);
    std::string in = "tensor<1x3x200x64x" + t + ">",
                out = "tensor<1x200x3x64x" + t + ">";
    std::string src = "func.func private @p(%x: " + in + ") -> " + out +
                      " attributes {seam.program} {\n  %y = seam.transpose "
                      "%x perm [0, 2, 1, 3] : " +
                      in + " -> " + out + "\n  return %y : " + out + "\n}\n";
    auto x = randomValues(h * sl * d, 21, bf);
    ConvRun r = convertAndRun(src, "p", {x});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> want(x.size());
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < sl; ++j)
        for (int64_t k = 0; k < d; ++k)
          want[(j * h + i) * d + k] = x[(i * sl + j) * d + k];
    double err = relL2(r.outputs[0], want);
    std::cout << "[convert] heads transpose in HBM " << dt(bf) << " rel-L2 "
              << err << "\n";
    EXPECT_EQ(err, 0.0);
  }
}

TEST(ConvertRope, RotateHalf) {
  const int64_t heads = 2, s = 256, d = 64;
  for (bool bf : {false, true}) {
    std::string t = dt(bf);
    std::string ty = "tensor<1x2x256x64x" + t + ">",
                tab = "tensor<256x64x" + t + ">";
    std::string src = "func.func private @p(%x: " + ty + ", %c: " + tab +
                      ", %s: " + tab + ") -> " + ty +
                      " attributes {seam.program} {\n"
                      "  %y = seam.rope %x, %c, %s : (" +
                      ty + ", " + tab + ", " + tab + ") -> " + ty +
                      "\n  return %y : " + ty + "\n}\n";
    auto x = randomValues(heads * s * d, 11, bf);
    std::vector<float> c, sn;
    ropeTables(s, d, bf, c, sn);
    ConvRun r = convertAndRun(src, "p", {x, c, sn});
    ASSERT_TRUE(r.ok) << r.error;
    double err = relL2(r.outputs[0], ropeRef(x, c, sn, heads, s, d));
    report("rope", bf, err);
    EXPECT_LE(err, bf ? 1e-2 : 1e-5);
  }
}

struct AttnCase {
  bool causal, rope, bf;
  int64_t heads, kvHeads, seq, d;
};

TEST(ConvertAttention, StableSoftmaxCausalRopeGqa) {
  for (AttnCase c : {AttnCase{false, false, false, 2, 2, 256, 64},
                     AttnCase{true, false, false, 2, 1, 200, 64},
                     AttnCase{true, true, false, 2, 2, 256, 64},
                     AttnCase{false, true, true, 2, 1, 256, 128},
                     AttnCase{true, false, true, 2, 2, 384, 64},
                     AttnCase{false, true, false, 3, 3, 512, 128},
                     // Three slots across heads: 6 query tiles per head
                     // (a loop of steps, then the next head's first two).
                     AttnCase{false, true, false, 3, 3, 768, 64},
                     // P V over more key groups than the first: 1280 keys
                     // (512 + 512 + 256) and 2048 (a loop over the
                     // middle groups, each transposed before the matmuls
                     // of the one before).
                     AttnCase{false, false, false, 1, 1, 1280, 64},
                     AttnCase{true, false, true, 1, 1, 2048, 64}}) {
    std::string t = dt(c.bf);
    auto sh = [&](int64_t h) {
      return "tensor<1x" + std::to_string(h) + "x" + std::to_string(c.seq) +
             "x" + std::to_string(c.d) + "x" + t + ">";
    };
    std::string tab = "tensor<" + std::to_string(c.seq) + "x" +
                      std::to_string(c.d) + "x" + t + ">";
    double scale = 1.0 / std::sqrt(double(c.d));
    std::string args = "%q: " + sh(c.heads) + ", %k: " + sh(c.kvHeads) +
                       ", %v: " + sh(c.kvHeads);
    std::string types =
        sh(c.heads) + ", " + sh(c.kvHeads) + ", " + sh(c.kvHeads);
    std::string ropeOps;
    if (c.rope) {
      args += ", %c: " + tab + ", %s: " + tab;
      types += ", " + tab + ", " + tab;
      ropeOps = " rope(%c, %s)";
    }
    std::string src = "func.func private @p(" + args + ") -> " + sh(c.heads) +
                      " attributes {seam.program} {\n"
                      "  %o = seam.attention %q, %k, %v" +
                      ropeOps + " {scale = " + std::to_string(scale) +
                      " : f64" + (c.causal ? ", causal" : "") + "} : (" +
                      types + ") -> " + sh(c.heads) +
                      "\n  return %o : " + sh(c.heads) + "\n}\n";
    int64_t s = c.seq, d = c.d;
    auto q = randomValues(c.heads * s * d, 12, c.bf, -2.0f, 2.0f),
         k = randomValues(c.kvHeads * s * d, 13, c.bf, -2.0f, 2.0f),
         v = randomValues(c.kvHeads * s * d, 14, c.bf);
    std::vector<float> cs, sn;
    std::vector<std::vector<float>> inputs{q, k, v};
    std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end());
    if (c.rope) {
      ropeTables(s, d, c.bf, cs, sn);
      inputs.push_back(cs);
      inputs.push_back(sn);
      qd = ropeRef(q, cs, sn, c.heads, s, d);
      kd = ropeRef(k, cs, sn, c.kvHeads, s, d);
    }
    ConvRun r = convertAndRun(src, "p", inputs);
    EXPECT_TRUE(r.ok) << r.error;
    if (!r.ok)
      continue;
    double sc = std::stod(std::to_string(scale));
    std::vector<double> want =
        attentionRef(qd, kd, v, c.heads, c.kvHeads, s, d, sc, c.causal);
    double err = relL2(r.outputs[0], want);
    std::cout << "[convert] attention" << (c.causal ? " causal" : "")
              << (c.rope ? " rope" : "") << " H=" << c.heads
              << " Hkv=" << c.kvHeads << " S=" << s << " D=" << d << " "
              << dt(c.bf) << " rel-L2 " << err << "\n";
    EXPECT_LE(err, c.bf ? 1e-2 : 1e-4);
  }
}

TEST(ConvertAttention, RunsAnIndependentLinearBetweenItsSteps) {
  // The single-stream block's shape in small: %a and %b read %in (K = 192 =
  // 96 x 2), %b (gelu_tanh, N = 384) is read only after the attention (3
  // heads of 6 query tiles), so the attention takes it as its guest: one
  // 128-column group per head, one row tile per step. %in is %x itself (%b
  // reuses %a's X^T) or, as in the block, a layer_norm of it (the norm
  // builds both linears' X^T). All three outputs against double references.
  const int64_t rows = 768, k = 192, n1 = 128, n2 = 384, heads = 3, d = 64;
  for (bool viaNorm : {false, true})
    for (bool bf : {false, true}) {
      std::string t = dt(bf);
      auto ty = [&](int64_t a, int64_t b) { return tensorType({a, b}, bf); };
      std::string hs = "tensor<1x3x768x64x" + t + ">";
      std::string vec = "tensor<192x" + t + ">";
      std::string src =
          "func.func private @p(%x: " + ty(rows, k) + ", %g: " + vec +
          ", %bb: " + vec + ", %w1: " + ty(k, n1) + ", %w2: " + ty(k, n2) +
          ", %q: " + hs + ", %k: " + hs + ", %v: " + hs + ") -> (" +
          ty(rows, n1) + ", " + ty(rows, n2) + ", " + hs +
          ") attributes {seam.program} {\n" +
          (viaNorm ? "  %in = seam.layer_norm %x scale %g bias %bb {epsilon = "
                     "1.0e-5 : f64} : (" +
                         ty(rows, k) + ", " + vec + ", " + vec + ") -> " +
                         ty(rows, k) + "\n"
                   : std::string("")) +
          "  %a = seam.linear " + (viaNorm ? "%in" : "%x") + ", %w1 : (" +
          ty(rows, k) + ", " + ty(k, n1) + ") -> " + ty(rows, n1) +
          "\n  %b = seam.linear " + (viaNorm ? "%in" : "%x") +
          ", %w2 {activation = \"gelu_tanh\"} : (" + ty(rows, k) + ", " +
          ty(k, n2) + ") -> " + ty(rows, n2) +
          "\n  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (" + hs +
          ", " + hs + ", " + hs + ") -> " + hs +
          "\n  return %a, %b, %o : " + ty(rows, n1) + ", " + ty(rows, n2) +
          ", " + hs + "\n}\n";
      auto x = randomValues(rows * k, 41, bf, -2.0f, 2.0f),
           g = randomValues(k, 47, bf, 0.5f, 1.5f),
           bb = randomValues(k, 48, bf), w1 = randomValues(k * n1, 42, bf),
           w2 = randomValues(k * n2, 43, bf),
           q = randomValues(heads * rows * d, 44, bf, -2.0f, 2.0f),
           kk = randomValues(heads * rows * d, 45, bf, -2.0f, 2.0f),
           v = randomValues(heads * rows * d, 46, bf);
      ConvRun r = convertAndRun(src, "p", {x, g, bb, w1, w2, q, kk, v});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.remarks.find("seam.attention takes the independent "
                               "seam.linear"),
                std::string::npos)
          << r.remarks;
      // The linears' input in double.
      std::vector<double> in = viaNorm
                                   ? normRef(x, rows, k, 1e-5, true, &g, &bb)
                                   : std::vector<double>(x.begin(), x.end());
      std::vector<double> gelu = productRef(in, w2, rows, k, n2);
      for (double &e : gelu)
        e = 0.5 * e *
            (1.0 +
             std::tanh(std::sqrt(2.0 / M_PI) * (e + 0.044715 * e * e * e)));
      std::vector<double> qd(q.begin(), q.end()), kd(kk.begin(), kk.end());
      double e1 = relL2(r.outputs[0], productRef(in, w1, rows, k, n1)),
             e2 = relL2(r.outputs[1], gelu),
             e3 = relL2(r.outputs[2], attentionRef(qd, kd, v, heads, heads,
                                                   rows, d, 0.125, false));
      report(viaNorm ? "norm -> linear before the attention"
                     : "linear before the attention",
             bf, e1);
      report(viaNorm ? "norm -> linear + gelu_tanh inside the attention"
                     : "linear + gelu_tanh inside the attention",
             bf, e2);
      report("attention with a guest", bf, e3);
      EXPECT_LE(e1, bf ? 1e-2 : viaNorm ? 1e-4 : 1e-5);
      EXPECT_LE(e2, bf ? 1e-2 : viaNorm ? 1e-4 : 1e-5);
      EXPECT_LE(e3, bf ? 1e-2 : 1e-4);
    }
}

TEST(ConvertLinear, MatvecRunsInsideAHost) {
  // adaLN's modulation in small: a one-row linear %m (its weight a program
  // argument) right before a host, read only after it, runs inside the
  // host (interleaveMatvec). Hosts: an attention (3 heads of 6 query tiles:
  // a group per head, its output blocks split over the steps, or with 3
  // blocks per group its K blocks), and a linear of 768 rows (its blocks
  // split over the host's slabs). Every output against double references.
  struct Case {
    const char *what;
    bool attention;
    int64_t k, n;
  };
  const Case cases[] = {
      {"matvec inside an attention (blocks per unit)", true, 256, 2304},
      {"matvec inside an attention (K per unit)", true, 768, 1152},
      {"matvec inside a linear", false, 512, 1024}};
  const int64_t rows = 768, heads = 3, d = 64, hk = 512, hn = 1024;
  for (const Case &c : cases)
    for (bool bf : {false, true}) {
      std::string t = dt(bf);
      auto ty = [&](int64_t a, int64_t b) { return tensorType({a, b}, bf); };
      std::string hs = "tensor<1x3x768x64x" + t + ">";
      std::string head =
          "func.func private @p(%vec: " + ty(1, c.k) +
          ", %wm: " + ty(c.k, c.n) +
          (c.attention ? ", %q: " + hs + ", %k: " + hs + ", %v: " + hs
                       : ", %x: " + ty(rows, hk) + ", %w: " + ty(hk, hn)) +
          ") -> (" + ty(1, c.n) + ", " + (c.attention ? hs : ty(rows, hn)) +
          ") attributes {seam.program} {\n  %m = seam.linear %vec, %wm : (" +
          ty(1, c.k) + ", " + ty(c.k, c.n) + ") -> " + ty(1, c.n) + "\n";
      std::string body =
          c.attention
              ? "  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (" +
                    hs + ", " + hs + ", " + hs + ") -> " + hs +
                    "\n  return %m, %o : " + ty(1, c.n) + ", " + hs + "\n}\n"
              : "  %o = seam.linear %x, %w : (" + ty(rows, hk) + ", " +
                    ty(hk, hn) + ") -> " + ty(rows, hn) +
                    "\n  return %m, %o : " + ty(1, c.n) + ", " + ty(rows, hn) +
                    "\n}\n";
      auto vec = randomValues(c.k, 51, bf, -2.0f, 2.0f),
           wm = randomValues(c.k * c.n, 52, bf);
      std::vector<std::vector<float>> inputs{vec, wm};
      std::vector<float> a = randomValues(heads * rows * d, 53, bf, -2, 2),
                         b = randomValues(heads * rows * d, 54, bf, -2, 2),
                         v = randomValues(heads * rows * d, 55, bf),
                         x = randomValues(rows * hk, 56, bf, -2, 2),
                         w = randomValues(hk * hn, 57, bf);
      if (c.attention)
        inputs.insert(inputs.end(), {a, b, v});
      else
        inputs.insert(inputs.end(), {x, w});
      ConvRun r = convertAndRun(head + body, "p", inputs, "trn2");
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.remarks.find(std::string(c.attention ? "seam.attention"
                                                       : "seam.linear") +
                               " takes the independent seam.linear"),
                std::string::npos)
          << r.remarks;
      std::vector<double> vd(vec.begin(), vec.end());
      double em = relL2(r.outputs[0], productRef(vd, wm, 1, c.k, c.n));
      std::vector<double> want;
      if (c.attention) {
        std::vector<double> qd(a.begin(), a.end()), kd(b.begin(), b.end());
        want = attentionRef(qd, kd, v, heads, heads, rows, d, 0.125, false);
      } else {
        want = productRef(std::vector<double>(x.begin(), x.end()), w, rows, hk,
                          hn);
      }
      double eh = relL2(r.outputs[1], want);
      report(c.what, bf, em);
      report(c.attention ? "its host, an attention" : "its host, a linear", bf,
             eh);
      EXPECT_LE(em, bf ? 1e-2 : 1e-5);
      EXPECT_LE(eh, bf ? 1e-2 : c.attention ? 1e-4 : 1e-5);
    }
}

TEST(ConvertFusion, BlockStaysInSbuf) {
  // layer_norm -> linear -> gelu_tanh -> linear -> residual add, f32: all
  // intermediates in SBUF (no spills), result checked end to end.
  const int64_t m = 256, d = 128, f = 256;
  std::string src = R"(
func.func private @p(%x: tensor<1x256x128xf32>, %w1: tensor<128x256xf32>, %w2: tensor<256x128xf32>) -> tensor<1x256x128xf32> attributes {seam.program} {
  %n = seam.layer_norm %x : (tensor<1x256x128xf32>) -> tensor<1x256x128xf32>
  %h = seam.linear %n, %w1 : (tensor<1x256x128xf32>, tensor<128x256xf32>) -> tensor<1x256x256xf32>
  %g = seam.gelu_tanh %h : tensor<1x256x256xf32>
  %o = seam.linear %g, %w2 : (tensor<1x256x256xf32>, tensor<256x128xf32>) -> tensor<1x256x128xf32>
  %r = seam.add %x, %o : (tensor<1x256x128xf32>, tensor<1x256x128xf32>) -> tensor<1x256x128xf32>
  return %r : tensor<1x256x128xf32>
}
)";
  auto x = randomValues(m * d, 15, false, -2.0f, 2.0f),
       w1 = randomValues(d * f, 16, false, -0.2f, 0.2f),
       w2 = randomValues(f * d, 17, false, -0.2f, 0.2f);
  ConvRun r = convertAndRun(src, "p", {x, w1, w2});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.spills, 0);
  auto n = normRef(x, m, d, 1e-5, true, nullptr, nullptr);
  std::vector<float> nf(n.begin(), n.end());
  auto h = linearRef(nf, w1, nullptr, m, d, f);
  std::vector<float> gf(h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    double a = h[i];
    gf[i] = float(
        0.5 * a *
        (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a))));
  }
  auto o = linearRef(gf, w2, nullptr, m, f, d);
  for (size_t i = 0; i < o.size(); ++i)
    o[i] += x[i];
  double err = relL2(r.outputs[0], o);
  report("ln->linear->gelu_tanh->linear->add", false, err);
  EXPECT_LE(err, 1e-4);
}

TEST(ConvertKernelCall, QkvKernelInsideAProgram) {
  // gelu -> kernel_call "qkv" (a separately compiled kernel program, called
  // on HBM tensors) -> silu, f32.
  const int64_t m = 128, k = 128, n = 384;
  std::string src = R"(
func.func private @p(%x: tensor<1x128x128xf32>, %w: tensor<128x384xf32>) -> tensor<1x128x384xf32> attributes {seam.program} {
  %g = seam.gelu %x : tensor<1x128x128xf32>
  %y = seam.kernel_call "qkv"(%g, %w) {config = {seam.fused_qkv = ["q", "k", "v"]}} : (tensor<1x128x128xf32>, tensor<128x384xf32>) -> tensor<1x128x384xf32>
  %s = seam.silu %y : tensor<1x128x384xf32>
  return %s : tensor<1x128x384xf32>
}
)";
  auto x = randomValues(m * k, 19, false, -2.0f, 2.0f),
       w = randomValues(k * n, 20, false, -0.2f, 0.2f);
  ConvRun r = convertAndRun(src, "p", {x, w});
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<float> g(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    g[i] = float(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
  auto y = linearRef(g, w, nullptr, m, k, n);
  for (double &v : y)
    v = v / (1.0 + std::exp(-v));
  double err = relL2(r.outputs[0], y);
  report("gelu->kernel qkv->silu", false, err);
  EXPECT_LE(err, 1e-4);
}

} // namespace
