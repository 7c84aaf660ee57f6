//===- FftTest.cpp - DFT kernels against a double-precision DFT -----------===//
//
// Sizes 128 ... 16384 (16384 with batch 1 to keep the suite fast), fp32
// (rel-L2 <= 1e-5) and bf16 (<= 1e-2); impulse, DC, single tone, Parseval,
// and the inverse kernel.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace mlir;
using namespace ::seam::kt;
using cd = std::complex<double>;

namespace {

/// Naive DFT in double (twiddles from an exact index table).
std::vector<cd> dft(const std::vector<cd> &x, bool inverse) {
  size_t n = x.size();
  std::vector<cd> w(n), y(n);
  double sign = inverse ? 1.0 : -1.0;
  for (size_t k = 0; k < n; ++k)
    w[k] = std::polar(1.0, sign * 2.0 * M_PI * double(k) / double(n));
  for (size_t k = 0; k < n; ++k) {
    cd acc = 0;
    size_t idx = 0;
    for (size_t j = 0; j < n; ++j) {
      acc += x[j] * w[idx];
      idx += k;
      if (idx >= n)
        idx -= n;
    }
    y[k] = inverse ? acc / double(n) : acc;
  }
  return y;
}

struct FftCase {
  int64_t n, batch;
};

int64_t batchFor(int64_t n) { return n <= 128 ? 64 : n >= 16384 ? 1 : 2; }

/// Runs the registry's fft kernel on `x` ([batch, n] real or complex).
RunResult runFft(KernelEnv &env, int64_t n, int64_t batch, bool complexIn,
                 Type realType, const std::vector<float> &x,
                 bool inverse = false, const char *variant = nullptr) {
  Type inT = complexIn ? env.c64() : realType;
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor({batch, n}, inT)};
  sig.results = {env.tensor({batch, n}, env.c64())};
  SmallVector<NamedAttribute> cfg = {
      env.builder.getNamedAttr("axis", env.builder.getI64IntegerAttr(1))};
  if (variant)
    cfg.push_back(env.builder.getNamedAttr("variant",
                                           env.builder.getStringAttr(variant)));
  sig.config = env.builder.getDictionaryAttr(cfg);
  auto prog = env.build(inverse ? "ifft" : "fft", sig);
  if (!prog)
    return {};
  return runProgram(prog, {{0u, x}});
}

std::vector<double> flatten(const std::vector<std::vector<cd>> &rows) {
  std::vector<double> out;
  for (auto &r : rows)
    for (cd v : r) {
      out.push_back(v.real());
      out.push_back(v.imag());
    }
  return out;
}

class FftSizes : public ::testing::TestWithParam<int64_t> {};

TEST_P(FftSizes, ComplexFp32) {
  int64_t n = GetParam(), batch = batchFor(n);
  KernelEnv env;
  auto x = randomValues(batch * n * 2, 7 + n);
  auto r = runFft(env, n, batch, true, env.f32(), x);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::vector<cd>> want;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<cd> row(n);
    for (int64_t i = 0; i < n; ++i)
      row[i] = {x[(b * n + i) * 2], x[(b * n + i) * 2 + 1]};
    want.push_back(dft(row, false));
  }
  double err = relL2(r.outputs[1], flatten(want));
  std::cout << "[fft] n=" << n << " batch=" << batch << " complex fp32 rel-L2 "
            << err << " (" << r.instructions << " instructions)\n";
  RecordProperty("rel_l2", std::to_string(err));
  EXPECT_LE(err, 1e-5);
}

TEST_P(FftSizes, RealFp32AndBf16) {
  int64_t n = GetParam(), batch = batchFor(n);
  for (bool bf : {false, true}) {
    KernelEnv env;
    auto x = randomValues(batch * n, 11 + n);
    if (bf)
      for (float &v : x)
        v = toBf16(v);
    auto r = runFft(env, n, batch, false, bf ? env.bf16() : env.f32(), x);
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<std::vector<cd>> want;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<cd> row(n);
      for (int64_t i = 0; i < n; ++i)
        row[i] = x[b * n + i];
      want.push_back(dft(row, false));
    }
    double err = relL2(r.outputs[1], flatten(want));
    std::cout << "[fft] n=" << n << " batch=" << batch << " real "
              << (bf ? "bf16" : "fp32") << " rel-L2 " << err << "\n";
    EXPECT_LE(err, bf ? 1e-2 : 1e-5);
  }
}

TEST_P(FftSizes, ImpulseDcToneParseval) {
  int64_t n = GetParam();
  KernelEnv env;
  // Row 0: impulse at 3 -> X[k] = exp(-2 pi i 3k/n). Row 1: DC -> n at k=0.
  // Row 2: tone cos(2 pi 5 j / n) -> n/2 at k = 5 and n - 5.
  int64_t batch = 3;
  std::vector<float> x(batch * n, 0.0f);
  x[3] = 1.0f;
  for (int64_t j = 0; j < n; ++j) {
    x[n + j] = 1.0f;
    x[2 * n + j] = float(std::cos(2 * M_PI * double(5 * j % n) / double(n)));
  }
  auto r = runFft(env, n, batch, false, env.f32(), x);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::vector<cd>> want(batch, std::vector<cd>(n, 0.0));
  for (int64_t k = 0; k < n; ++k)
    want[0][k] = std::polar(1.0, -2 * M_PI * double(3 * k % n) / double(n));
  want[1][0] = double(n);
  want[2][5] = want[2][n - 5] = double(n) / 2;
  const auto &got = r.outputs[1];
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<float> g(got.begin() + b * n * 2,
                         got.begin() + (b + 1) * n * 2);
    double err = relL2(g, flatten({want[b]}));
    EXPECT_LE(err, 1e-5) << "row " << b << " (impulse, DC, tone)";
  }
  // Parseval on the tone: sum |X|^2 = n sum |x|^2.
  double ex = 0, eX = 0;
  for (int64_t j = 0; j < n; ++j)
    ex += double(x[2 * n + j]) * x[2 * n + j];
  for (int64_t k = 0; k < 2 * n; ++k)
    eX += double(got[2 * n * 2 + k]) * got[2 * n * 2 + k];
  EXPECT_NEAR(eX / (n * ex), 1.0, 1e-5);
}

TEST_P(FftSizes, InverseComplexFp32) {
  int64_t n = GetParam(), batch = n >= 16384 ? 1 : 2;
  KernelEnv env;
  auto x = randomValues(batch * n * 2, 19 + n);
  auto r = runFft(env, n, batch, true, env.f32(), x, /*inverse=*/true);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::vector<cd>> want;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<cd> row(n);
    for (int64_t i = 0; i < n; ++i)
      row[i] = {x[(b * n + i) * 2], x[(b * n + i) * 2 + 1]};
    want.push_back(dft(row, true));
  }
  double err = relL2(r.outputs[1], flatten(want));
  std::cout << "[ifft] n=" << n << " rel-L2 " << err << "\n";
  EXPECT_LE(err, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Kernels, FftSizes,
                         ::testing::Values(128, 256, 512, 768, 1024, 2048, 4096,
                                           16384),
                         [](const auto &info) {
                           return "N" + std::to_string(info.param);
                         });

/// The FNet source's algorithm: 2 / 4 groups of 128-point DFT matmuls and
/// 1 / 2 radix-2 butterfly levels.
TEST(FftKernel, SourceRadix2Variant) {
  for (int64_t n : {256, 512})
    for (bool inverse : {false, true}) {
      KernelEnv env;
      int64_t batch = 8;
      auto x = randomValues(batch * n * 2, 23 + n);
      auto r = runFft(env, n, batch, true, env.f32(), x, inverse, "radix2");
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<std::vector<cd>> want;
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<cd> row(n);
        for (int64_t i = 0; i < n; ++i)
          row[i] = {x[(b * n + i) * 2], x[(b * n + i) * 2 + 1]};
        want.push_back(dft(row, inverse));
      }
      double err = relL2(r.outputs[1], flatten(want));
      std::cout << "[fft radix2] n=" << n << (inverse ? " inverse" : "")
                << " complex fp32 rel-L2 " << err << "\n";
      EXPECT_LE(err, 1e-5);
    }
  // Real bf16 input.
  for (int64_t n : {256, 512}) {
    KernelEnv env;
    auto x = randomValues(4 * n, 29 + n);
    for (float &v : x)
      v = toBf16(v);
    auto r = runFft(env, n, 4, false, env.bf16(), x, false, "radix2");
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<std::vector<cd>> want;
    want.reserve(4);
    for (int64_t b = 0; b < 4; ++b)
      want.push_back(dft(
          std::vector<cd>(x.begin() + b * n, x.begin() + (b + 1) * n), false));
    double err = relL2(r.outputs[1], flatten(want));
    std::cout << "[fft radix2] n=" << n << " real bf16 rel-L2 " << err << "\n";
    EXPECT_LE(err, 1e-2);
  }
}

/// Sizes with no two-factor split into DFTs of <= 128 points.
TEST(FftKernel, ThreeFactorSizes) {
  for (int64_t n : {1859, 2197, 16383}) {
    int64_t batch = n > 4096 ? 1 : 2;
    KernelEnv env;
    auto x = randomValues(batch * n * 2, 31 + n);
    auto r = runFft(env, n, batch, true, env.f32(), x);
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<std::vector<cd>> want;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<cd> row(n);
      for (int64_t i = 0; i < n; ++i)
        row[i] = {x[(b * n + i) * 2], x[(b * n + i) * 2 + 1]};
      want.push_back(dft(row, false));
    }
    double err = relL2(r.outputs[1], flatten(want));
    std::cout << "[fft three-factor] n=" << n << " complex fp32 rel-L2 " << err
              << "\n";
    EXPECT_LE(err, 1e-5);
  }
  KernelEnv env;
  int64_t n = 2197;
  auto x = randomValues(2 * n, 37);
  for (float &v : x)
    v = toBf16(v);
  auto r = runFft(env, n, 2, false, env.bf16(), x);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<std::vector<cd>> want;
  want.reserve(2);
  for (int64_t b = 0; b < 2; ++b)
    want.push_back(dft(
        std::vector<cd>(x.begin() + b * n, x.begin() + (b + 1) * n), false));
  double err = relL2(r.outputs[1], flatten(want));
  std::cout << "[fft three-factor] n=2197 real bf16 rel-L2 " << err << "\n";
  EXPECT_LE(err, 1e-2);
}

/// More rows than one chunk of the batched four-step (whole tiles of G =
/// 128 / n2 rows, several chunks pipelined, a partial last chunk and
/// group): complex fp32, real bf16, and the inverse to a real output.
TEST(FftKernel, BatchedChunksOfRows) {
  struct Case {
    int64_t n, batch;
    bool complexIn, bf16, inverse;
  };
  for (Case c :
       {Case{256, 600, true, false, false}, Case{512, 300, false, true, false},
        Case{1024, 100, true, false, true}}) {
    KernelEnv env;
    mlir::seam::FftParams p;
    p.n = c.n;
    p.batch = c.batch;
    p.complexInput = c.complexIn;
    p.inverse = c.inverse;
    p.realOutput = c.inverse;
    p.dtype = c.bf16 ? env.bf16() : env.f32();
    auto prog = mlir::seam::buildFftProgram(env.builder, *env.module, "f", p);
    ASSERT_TRUE(succeeded(prog));
    int64_t parts = c.complexIn ? 2 : 1;
    auto x = randomValues(c.batch * c.n * parts, 43 + c.n);
    if (c.bf16)
      for (float &v : x)
        v = toBf16(v);
    auto r = runProgram(*prog, {{0u, x}});
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<double> want;
    for (int64_t b = 0; b < c.batch; ++b) {
      std::vector<cd> row(c.n);
      for (int64_t j = 0; j < c.n; ++j)
        row[j] = c.complexIn
                     ? cd(x[(b * c.n + j) * 2], x[(b * c.n + j) * 2 + 1])
                     : cd(x[b * c.n + j], 0.0);
      for (cd v : dft(row, c.inverse)) {
        want.push_back(v.real());
        if (!c.inverse)
          want.push_back(v.imag());
      }
    }
    double err = relL2(r.outputs[1], want);
    std::cout << "[fft chunks] n=" << c.n << " batch=" << c.batch
              << (c.complexIn ? " complex" : " real")
              << (c.bf16 ? " bf16" : " fp32")
              << (c.inverse ? " inverse->real" : "") << " rel-L2 " << err
              << "\n";
    EXPECT_LE(err, c.bf16 ? 1e-2 : 1e-5);
  }
}

/// N <= 128 with three and four chunks of 128 rows (each chunk its own
/// buffer set, every load issued first): real bf16 rows, complex fp32 rows,
/// and structured rows (impulse, DC, tone) in every chunk.
TEST(FftKernel, SmallBatchOwnBufferSets) {
  const int64_t n = 128;
  for (int64_t batch : {384, 512}) {
    for (bool complexIn : {false, true}) {
      KernelEnv env;
      int64_t parts = complexIn ? 2 : 1;
      auto x = randomValues(batch * n * parts, 53 + batch + parts);
      // One structured row per chunk: impulse, DC, tone, impulse.
      for (int64_t c = 0; c < batch / 128; ++c) {
        float *row = x.data() + (c * 128 + 7) * n * parts;
        for (int64_t j = 0; j < n * parts; ++j)
          row[j] = 0.0f;
        for (int64_t j = 0; j < n; ++j)
          row[j * parts] =
              c % 3 == 1 ? 1.0f
              : c % 3 == 2
                  ? float(std::cos(2 * M_PI * double(9 * j % n) / double(n)))
                  : float(j == 5);
      }
      if (!complexIn)
        for (float &v : x)
          v = toBf16(v);
      auto r = runFft(env, n, batch, complexIn,
                      complexIn ? env.f32() : env.bf16(), x);
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<std::vector<cd>> want;
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<cd> row(n);
        for (int64_t j = 0; j < n; ++j)
          row[j] = complexIn ? cd(x[(b * n + j) * 2], x[(b * n + j) * 2 + 1])
                             : cd(x[b * n + j], 0.0);
        want.push_back(dft(row, false));
      }
      double err = relL2(r.outputs[1], flatten(want));
      std::cout << "[fft] n=128 batch=" << batch
                << (complexIn ? " complex fp32" : " real bf16") << " rel-L2 "
                << err << "\n";
      // The bf16 path rounds the DFT matrix; fp32 computes in fp32.
      EXPECT_LE(err, complexIn ? 1e-5 : 1e-2);
    }
  }
}

TEST(FftKernel, UnfactorableSizeIsReported) {
  KernelEnv env;
  // 131 is prime and > 128: no DFT of <= 128 points divides it.
  mlir::seam::FftParams p;
  p.n = 131;
  p.dtype = env.f32();
  std::string msg;
  ScopedDiagnosticHandler h(&env.ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  EXPECT_TRUE(
      failed(mlir::seam::buildFftProgram(env.builder, *env.module, "f", p)));
  EXPECT_NE(msg.find("does not factor"), std::string::npos) << msg;
}

} // namespace
