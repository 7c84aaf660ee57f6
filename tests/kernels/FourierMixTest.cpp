//===- FourierMixTest.cpp - FNet mixing on every row of the source table --===//
#include "KernelTestUtil.h"

using namespace mlir;
using namespace ::seam::kt;

namespace {

/// Re(F_S X F_D) = C_S X C_D - S_S X S_D in double, for one [S, D] slice.
std::vector<double> fourierMixRef(const float *x, int64_t s, int64_t d) {
  auto cosT = [](int64_t n) {
    std::vector<double> c(n * n), sn(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double a = 2 * M_PI * double(i * j % n) / double(n);
        c[i * n + j] = std::cos(a);
        sn[i * n + j] = std::sin(a);
      }
    return std::make_pair(c, sn);
  };
  auto [cs, ss] = cosT(s);
  auto [cd, sd] = cosT(d);
  // A = X C_D, B = X S_D ([s, d]); Z = C_S A - S_S B.
  std::vector<double> a(s * d, 0), b(s * d, 0), z(s * d, 0);
  for (int64_t i = 0; i < s; ++i)
    for (int64_t k = 0; k < d; ++k) {
      double xv = x[i * d + k];
      const double *cr = &cd[k * d], *sr = &sd[k * d];
      double *ar = &a[i * d], *br = &b[i * d];
      for (int64_t j = 0; j < d; ++j) {
        ar[j] += xv * cr[j];
        br[j] += xv * sr[j];
      }
    }
  for (int64_t i = 0; i < s; ++i)
    for (int64_t k = 0; k < s; ++k) {
      double c = cs[i * s + k], sn = ss[i * s + k];
      for (int64_t j = 0; j < d; ++j)
        z[i * d + j] += c * a[k * d + j] - sn * b[k * d + j];
    }
  return z;
}

struct Row {
  int64_t b, s, d;
};

class FourierMixRows : public ::testing::TestWithParam<Row> {};

TEST_P(FourierMixRows, Fp32AndBf16) {
  Row row = GetParam();
  for (bool bf : {false, true}) {
    KernelEnv env;
    Type elt = bf ? env.bf16() : env.f32();
    mlir::seam::KernelSignature sig;
    sig.args = {env.tensor({row.b, row.s, row.d}, elt)};
    sig.results = sig.args;
    sig.config = env.builder.getDictionaryAttr({env.builder.getNamedAttr(
        "dims", env.builder.getDenseI64ArrayAttr({1, 2}))});
    auto prog = env.build("fourier-mix", sig);
    ASSERT_TRUE(prog);
    auto x = randomValues(row.b * row.s * row.d, 3 + row.s + row.d);
    if (bf)
      for (float &v : x)
        v = toBf16(v);
    auto r = runProgram(prog, {{0u, x}});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> want;
    for (int64_t b = 0; b < row.b; ++b) {
      auto z = fourierMixRef(x.data() + b * row.s * row.d, row.s, row.d);
      want.insert(want.end(), z.begin(), z.end());
    }
    double err = relL2(r.outputs[1], want);
    std::cout << "[fourier-mix] (B, S, D) = (" << row.b << ", " << row.s << ", "
              << row.d << ") " << (bf ? "bf16" : "fp32") << " rel-L2 " << err
              << "\n";
    EXPECT_LE(err, bf ? 1e-2 : 1e-5);
  }
}

// The FNet table of the source (seed-results.json fnet_fft.rows).
INSTANTIATE_TEST_SUITE_P(Kernels, FourierMixRows,
                         ::testing::Values(Row{1, 128, 512}, Row{1, 128, 768},
                                           Row{1, 256, 768}, Row{1, 512, 768},
                                           Row{4, 128, 768}),
                         [](const auto &info) {
                           return "B" + std::to_string(info.param.b) + "_S" +
                                  std::to_string(info.param.s) + "_D" +
                                  std::to_string(info.param.d);
                         });

// Shapes off the table: sizes under one partition tile and an odd batch
// (the pipelined batch loop's last body), and sizes that are not multiples
// of 128 (the chunk-by-chunk path).
INSTANTIATE_TEST_SUITE_P(Shapes, FourierMixRows,
                         ::testing::Values(Row{3, 64, 256}, Row{5, 128, 96},
                                           Row{2, 200, 136}),
                         [](const auto &info) {
                           return "B" + std::to_string(info.param.b) + "_S" +
                                  std::to_string(info.param.s) + "_D" +
                                  std::to_string(info.param.d);
                         });

} // namespace
