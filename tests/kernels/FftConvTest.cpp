//===- FftConvTest.cpp - Hyena fftconv against a direct convolution -------===//
//
// The reference is the definition: irfft(rfft(u, n) rfft(k, n) / n, n,
// norm=forward)[:L] with n >= 2L is the linear convolution sum_j k[j]
// u[t - j], computed directly in double.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace mlir;
using namespace ::seam::kt;

namespace {

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

int64_t fftSizeFor(int64_t l) {
  int64_t n = 16;
  while (n < 2 * l)
    n *= 2;
  return n;
}

struct Opts {
  bool v = false, q = false, mask = false, gelu = false, geluInp = false,
       geluQ = false;
};

/// fftconv of u [nb, nh, l] with a filter of `lk` taps (0: l) at fft size
/// `n` (0: the smallest the reference allows).
void runCase(int64_t l, int64_t nb, int64_t nh, Opts o, int64_t n = 0,
             int64_t lk = 0) {
  KernelEnv env;
  auto &bld = env.builder;
  if (n == 0)
    n = fftSizeFor(l);
  if (lk == 0)
    lk = l;
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor({nb, nh, l}), env.tensor({nh, lk}), env.tensor({nh})};
  if (o.v)
    sig.args.push_back(env.tensor({nb, nh, l}));
  if (o.q)
    sig.args.push_back(env.tensor({nb, nh, l}));
  if (o.mask)
    sig.args.push_back(env.tensor({nb, nh}));
  sig.results = {env.tensor({nb, nh, l})};
  SmallVector<NamedAttribute> cfg = {
      bld.getNamedAttr("fft_size", bld.getI64IntegerAttr(n))};
  if (o.gelu)
    cfg.push_back(bld.getNamedAttr("gelu", bld.getUnitAttr()));
  if (o.geluInp)
    cfg.push_back(bld.getNamedAttr("gelu_inp", bld.getUnitAttr()));
  if (o.geluQ)
    cfg.push_back(bld.getNamedAttr("gelu_q", bld.getUnitAttr()));
  sig.config = bld.getDictionaryAttr(cfg);
  auto prog = env.build("fftconv", sig);
  ASSERT_TRUE(prog);
  auto u = randomValues(nb * nh * l, 5 + l);
  auto k = randomValues(nh * lk, 6 + l);
  // A decaying filter, as Hyena's implicit filters are.
  for (int64_t h = 0; h < nh; ++h)
    for (int64_t j = 0; j < lk; ++j)
      k[h * lk + j] *= float(std::exp(-3.0 * double(j) / double(lk)));
  auto d = randomValues(nh, 7 + l);
  auto v = randomValues(nb * nh * l, 8 + l);
  auto q = randomValues(nb * nh * l, 9 + l);
  std::vector<float> mask(nb * nh);
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = i % 3 == 1 ? 0.0f : 2.0f;
  std::map<unsigned, std::vector<float>> in = {{0u, u}, {1u, k}, {2u, d}};
  unsigned next = 3;
  if (o.v)
    in[next++] = v;
  if (o.q)
    in[next++] = q;
  if (o.mask)
    in[next++] = mask;
  unsigned outIdx = next;
  auto r = runProgram(prog, in);
  ASSERT_TRUE(r.ok) << r.error;

  std::vector<double> want(nb * nh * l);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t h = 0; h < nh; ++h) {
      const int64_t base = (b * nh + h) * l;
      std::vector<double> up(l);
      for (int64_t t = 0; t < l; ++t) {
        double x = u[base + t] * (o.v ? double(v[base + t]) : 1.0);
        up[t] = o.geluInp ? gelu(x) : x;
      }
      for (int64_t t = 0; t < l; ++t) {
        double y = 0;
        for (int64_t j = 0; j <= t && j < lk; ++j)
          y += double(k[h * lk + j]) * up[t - j];
        y += up[t] * d[h];
        if (o.gelu)
          y = gelu(y);
        if (o.mask)
          y *= mask[b * nh + h];
        if (o.q)
          y *= o.geluQ ? gelu(q[base + t]) : double(q[base + t]);
        want[base + t] = y;
      }
    }
  const auto &got = r.outputs[outIdx];
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  double maxAbs = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double e = std::abs(double(got[i]) - want[i]);
    maxAbs = std::max(maxAbs, e);
    if (e > 5e-4 + 1e-4 * std::abs(want[i]))
      ++bad;
  }
  double err = relL2(got, want);
  std::cout << "[fftconv] L=" << l << " Lk=" << lk << " fft_size=" << n
            << " B=" << nb << " H=" << nh << " rel-L2 " << err << " max-abs "
            << maxAbs << "\n";
  EXPECT_LE(err, 1e-5);
  EXPECT_EQ(bad, 0u) << "elements outside rtol 1e-4 / atol 5e-4";
}

class FftConvLengths : public ::testing::TestWithParam<int64_t> {};

TEST_P(FftConvLengths, Fp32) {
  int64_t l = GetParam();
  runCase(l, 1, l >= 4096 ? 1 : 2, {});
}

INSTANTIATE_TEST_SUITE_P(Kernels, FftConvLengths,
                         ::testing::Values(8, 64, 372, 784, 1134, 4096, 8192),
                         [](const auto &info) {
                           return "L" + std::to_string(info.param);
                         });

TEST(FftConvKernel, GatingGeluDropout) {
  Opts o;
  o.v = o.q = o.mask = o.gelu = o.geluInp = o.geluQ = true;
  runCase(64, 2, 3, o);
}

// The four-step path (fft_size > 128) with every gate, two batch elements
// (filter spectra kept for both) and 70 channels: one full tile of 64 and a
// tile holding a partial group of 6 (G = 16 channels per group at n2 = 8);
// L is not a multiple of n2 (partial last rows).
TEST(FftConvKernel, FourStepGatingPartialGroups) {
  Opts o;
  o.v = o.q = o.mask = o.gelu = o.geluInp = o.geluQ = true;
  runCase(300, 2, 70, o);
}

// A filter shorter than the sequence and an fft_size above 2L.
TEST(FftConvKernel, ShortFilterLargerFftSize) {
  runCase(200, 1, 5, {}, /*n=*/2048, /*lk=*/37);
  runCase(60, 1, 3, {}, /*n=*/128, /*lk=*/9);
}

// More channels than one chunk holds: at n = 8192 with two batch elements
// a chunk keeps 64 channels (A tiles and filter spectra in the SBUF
// budget), so 136 channels are two chunks in a loop and a rest of 8.
TEST(FftConvKernel, FourStepChannelChunks) {
  Opts o;
  o.mask = true;
  runCase(40, 2, 136, o, /*n=*/8192);
}

// n <= 128 over more than 512 channels (chunks of 512 in 128-channel
// blocks, then a rest of 88 with a partial block).
TEST(FftConvKernel, SingleStageChannelChunks) {
  Opts o;
  o.v = o.q = o.mask = o.gelu = true;
  runCase(20, 2, 600, o, /*n=*/64);
}

} // namespace
