//===- AttentionTest.cpp - flash attention kernels ------------------------===//
//
// S in {256, 512, 768}: the stable (online-softmax) kernel within bf16
// bounds; the source's exp-only kernel correct on small logits and
// reporting overflow (non-finite values written) on large ones.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace mlir;
using namespace ::seam::kt;

namespace {

constexpr int64_t kB = 1, kH = 2, kD = 64;

std::vector<double> attentionRef(const std::vector<float> &q,
                                 const std::vector<float> &k,
                                 const std::vector<float> &v, int64_t s,
                                 double scale, int64_t heads = kH) {
  std::vector<double> o(kB * heads * s * kD, 0.0);
  std::vector<double> w(s);
  for (int64_t bh = 0; bh < kB * heads; ++bh) {
    const float *qb = &q[bh * s * kD], *kb = &k[bh * s * kD],
                *vb = &v[bh * s * kD];
    for (int64_t i = 0; i < s; ++i) {
      double mx = -1e300;
      for (int64_t j = 0; j < s; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < kD; ++c)
          acc += double(qb[i * kD + c]) * kb[j * kD + c];
        w[j] = acc * scale;
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j)
        sum += (w[j] = std::exp(w[j] - mx));
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < kD; ++c)
          o[(bh * s + i) * kD + c] += w[j] / sum * vb[j * kD + c];
    }
  }
  return o;
}

struct Run {
  RunResult r;
  std::vector<double> want;
};

Run runAttention(const char *kernel, int64_t s, bool bf, float magnitude,
                 int64_t heads = kH) {
  KernelEnv env;
  Type elt = bf ? env.bf16() : env.f32();
  double scale = 1.0 / std::sqrt(double(kD));
  mlir::seam::KernelSignature sig;
  auto t = env.tensor({kB, heads, s, kD}, elt);
  sig.args = {t, t, t};
  sig.results = {t};
  sig.config = env.builder.getDictionaryAttr(
      {env.builder.getNamedAttr("scale", env.builder.getF64FloatAttr(scale))});
  Run run;
  auto prog = env.build(kernel, sig);
  if (!prog) {
    run.r.error = "build failed";
    return run;
  }
  size_t n = kB * heads * s * kD;
  auto q = randomValues(n, 1 + s, -magnitude, magnitude);
  auto k = randomValues(n, 2 + s, -magnitude, magnitude);
  auto v = randomValues(n, 3 + s);
  if (bf)
    for (auto *vec : {&q, &k, &v})
      for (float &x : *vec)
        x = toBf16(x);
  run.r = runProgram(prog, {{0u, q}, {1u, k}, {2u, v}});
  run.want = attentionRef(q, k, v, s, scale, heads);
  return run;
}

class AttentionSeq : public ::testing::TestWithParam<int64_t> {};

TEST_P(AttentionSeq, StableBf16) {
  int64_t s = GetParam();
  auto run = runAttention("flash-attn-stable", s, /*bf=*/true, 1.0f);
  ASSERT_TRUE(run.r.ok) << run.r.error;
  double err = relL2(run.r.outputs[3], run.want);
  std::cout << "[flash-attn-stable] S=" << s << " bf16 rel-L2 " << err << "\n";
  EXPECT_LE(err, 1e-2);
  EXPECT_EQ(run.r.nonFinite, 0u);
}

TEST_P(AttentionSeq, StableLargeLogitsFp32) {
  int64_t s = GetParam();
  auto run = runAttention("flash-attn-stable", s, /*bf=*/false, 12.0f);
  ASSERT_TRUE(run.r.ok) << run.r.error;
  double err = relL2(run.r.outputs[3], run.want);
  std::cout << "[flash-attn-stable] S=" << s << " large logits fp32 rel-L2 "
            << err << "\n";
  EXPECT_LE(err, 1e-4);
  EXPECT_EQ(run.r.nonFinite, 0u);
  EXPECT_EQ(run.r.nonFiniteOutput, 0u);
}

TEST_P(AttentionSeq, SourceSmallLogitsFp32) {
  int64_t s = GetParam();
  auto run = runAttention("flash-attn", s, /*bf=*/false, 1.0f);
  ASSERT_TRUE(run.r.ok) << run.r.error;
  double err = relL2(run.r.outputs[3], run.want);
  std::cout << "[flash-attn] S=" << s << " small logits fp32 rel-L2 " << err
            << "\n";
  EXPECT_LE(err, 1e-5);
  EXPECT_EQ(run.r.nonFinite, 0u);
}

// The source's kernel in bf16 (the models' dtype), its lanes and per-head
// K^T through the same layout as the stable kernel's.
TEST_P(AttentionSeq, SourceBf16) {
  int64_t s = GetParam();
  auto run = runAttention("flash-attn", s, /*bf=*/true, 1.0f);
  ASSERT_TRUE(run.r.ok) << run.r.error;
  double err = relL2(run.r.outputs[3], run.want);
  std::cout << "[flash-attn] S=" << s << " bf16 rel-L2 " << err << "\n";
  EXPECT_LE(err, 1e-2);
  EXPECT_EQ(run.r.nonFinite, 0u);
}

TEST_P(AttentionSeq, SourceOverflowIsReported) {
  int64_t s = GetParam();
  // |q|, |k| up to 12: logits up to ~ 12 * 12 * 64 / 8 = 1152 > 88.7, the
  // largest x with exp(x) finite in fp32.
  auto run = runAttention("flash-attn", s, /*bf=*/false, 12.0f);
  ASSERT_TRUE(run.r.ok) << run.r.error;
  std::cout << "[flash-attn] S=" << s << " large logits: " << run.r.nonFinite
            << " non-finite values written, " << run.r.nonFiniteOutput
            << " of them in the output\n";
  EXPECT_GT(run.r.nonFinite, 0u);
  EXPECT_GT(run.r.nonFiniteOutput, 0u);
}

// Rows of scores longer than the stable kernel's one-pass chunk (1024
// keys): the online correction across chunks, and a last partial chunk.
TEST(AttentionKernel, StableOnlineAcrossChunks) {
  for (bool bf : {false, true}) {
    auto run = runAttention("flash-attn-stable", 1280, bf, bf ? 1.0f : 12.0f);
    ASSERT_TRUE(run.r.ok) << run.r.error;
    double err = relL2(run.r.outputs[3], run.want);
    std::cout << "[flash-attn-stable] S=1280 " << (bf ? "bf16" : "fp32")
              << " rel-L2 " << err << "\n";
    EXPECT_LE(err, bf ? 1e-2 : 1e-4);
    EXPECT_EQ(run.r.nonFinite, 0u);
  }
}

// The source's kernel at the shapes its structure changes with: one key
// block (the next head prepared at the first one), more query blocks than
// one pass over the keys takes (two query groups, 6 + 4 blocks), and
// enough heads for the head loop to be a loop (two iterations and a
// remainder before the last head).
TEST(AttentionKernel, SourceShapes) {
  for (auto [s, heads] :
       {std::pair<int64_t, int64_t>{128, 3}, {1280, 2}, {256, 6}}) {
    for (bool bf : {false, true}) {
      auto run = runAttention("flash-attn", s, bf, 1.0f, heads);
      ASSERT_TRUE(run.r.ok) << run.r.error;
      double err = relL2(run.r.outputs[3], run.want);
      std::cout << "[flash-attn] S=" << s << " heads=" << heads << " "
                << (bf ? "bf16" : "fp32") << " rel-L2 " << err << "\n";
      EXPECT_LE(err, bf ? 1e-2 : 1e-5);
      EXPECT_EQ(run.r.nonFinite, 0u);
    }
  }
}

// The stable kernel's pipeline (one softmax chunk, >= 4 query blocks) at
// the shapes its structure changes with: one head (the pipeline drains
// after its first), a loop of heads (blocks of the previous head finished
// in a head's first steps), and an odd number of heads (the ring buffer's
// parity changes between heads).
TEST(AttentionKernel, StablePipelineShapes) {
  for (auto [s, heads] :
       {std::pair<int64_t, int64_t>{512, 1}, {512, 6}, {640, 3}}) {
    for (bool bf : {false, true}) {
      auto run =
          runAttention("flash-attn-stable", s, bf, bf ? 1.0f : 12.0f, heads);
      ASSERT_TRUE(run.r.ok) << run.r.error;
      double err = relL2(run.r.outputs[3], run.want);
      std::cout << "[flash-attn-stable] S=" << s << " heads=" << heads << " "
                << (bf ? "bf16" : "fp32") << " rel-L2 " << err << "\n";
      EXPECT_LE(err, bf ? 1e-2 : 1e-5);
      EXPECT_EQ(run.r.nonFinite, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, AttentionSeq,
                         ::testing::Values(256, 512, 768),
                         [](const auto &info) {
                           return "S" + std::to_string(info.param);
                         });

} // namespace
