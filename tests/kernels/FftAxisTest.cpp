//===- FftAxisTest.cpp - fft / ifft kernels on any axis, padded radix-2 ---===//
//
// The call-site builders (what `--kernels fft,ifft` inserts) against a
// double-precision DFT: a middle or leading axis (the kernel transposes
// through SBUF into HBM scratch and back), sizes 16 ... 12288 including
// non-powers of two (100, 768, 1000, 12288), real, bf16 and complex input,
// complex or real-part output; impulse, DC and a single tone on a middle
// axis; the FNet source's radix-2 kernels 128 ... 1024 and its
// pad-to-next-power-of-two, checked against the padded DFT it computes and
// reported against the exact DFT it is not.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace mlir;
using namespace ::seam::kt;
using cd = std::complex<double>;

namespace {

/// The DFT of length `len` (>= n: zero-padded) of x along `axis` of
/// `shape`, first n bins kept; inverse scaled by 1/len. Interleaved
/// (re, im) or real parts.
std::vector<double> refDft(const std::vector<cd> &x,
                           const std::vector<int64_t> &shape, int64_t axis,
                           bool inverse, bool realOut, int64_t len = 0) {
  int64_t n = shape[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    if (d < axis)
      outer *= shape[d];
    else if (d > axis)
      inner *= shape[d];
  if (len < n)
    len = n;
  std::vector<cd> w(len);
  double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < len; ++k)
    w[k] = std::polar(1.0, sign * 2 * M_PI * double(k) / double(len));
  std::vector<cd> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t k = 0; k < n; ++k) {
        cd acc = 0;
        for (int64_t j = 0; j < n; ++j)
          acc += x[(o * n + j) * inner + i] * w[(j * k) % len];
        y[(o * n + k) * inner + i] = inverse ? acc / double(len) : acc;
      }
  std::vector<double> out;
  for (cd v : y) {
    out.push_back(v.real());
    if (!realOut)
      out.push_back(v.imag());
  }
  return out;
}

struct Site {
  std::vector<int64_t> shape;
  int64_t axis;
  bool complexIn, realOut, inverse;
  Type inType; ///< real input type (f32 / bf16)
  const char *variant = nullptr;
  int64_t padTo = 0;
};

/// Builds the site's kernel through the registry (check included), runs
/// it on `x` (interleaved for complex input) and returns its output.
RunResult runSite(KernelEnv &env, const Site &s, const std::vector<float> &x) {
  Type in = s.complexIn ? env.c64() : (s.inType ? s.inType : env.f32());
  Type out = s.realOut ? env.f32() : env.c64();
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor(s.shape, in)};
  sig.results = {env.tensor(s.shape, out)};
  auto &b = env.builder;
  SmallVector<NamedAttribute> cfg = {
      b.getNamedAttr("axis", b.getI64IntegerAttr(s.axis))};
  if (s.variant)
    cfg.push_back(b.getNamedAttr("variant", b.getStringAttr(s.variant)));
  if (s.padTo)
    cfg.push_back(b.getNamedAttr("pad_to", b.getI64IntegerAttr(s.padTo)));
  sig.config = b.getDictionaryAttr(cfg);
  auto prog = env.build(s.inverse ? "ifft" : "fft", sig);
  if (!prog) {
    RunResult r;
    r.error = "the kernel did not build";
    return r;
  }
  return runProgram(prog, {{0u, x}});
}

std::vector<cd> asComplex(const std::vector<float> &x, bool complexIn) {
  std::vector<cd> c;
  if (complexIn)
    for (size_t i = 0; i < x.size(); i += 2)
      c.push_back({x[i], x[i + 1]});
  else
    for (float v : x)
      c.push_back(v);
  return c;
}

int64_t count(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

TEST(FftAxis, AnyAxisAnySize) {
  KernelEnv env;
  Type f32 = env.f32(), bf16 = env.bf16();
  // shape, axis, complex in, real out, inverse, real dtype
  std::vector<Site> sites = {
      {{2, 16, 3}, 1, false, false, false, f32},
      {{2, 100, 5}, 1, true, false, false, f32},
      {{130, 3}, 0, false, false, false, f32},
      {{1, 768, 4}, 1, false, false, false, f32},
      {{1, 768, 4}, 1, false, false, false, bf16},
      {{2, 1000, 3}, 1, true, false, false, f32},
      {{2, 1000, 3}, 1, true, true, true, f32},
      {{12288, 2}, 0, true, false, false, f32},
      {{12288, 2}, 0, true, true, true, f32},
      {{3, 1000}, 1, true, false, true, f32},
      {{1, 256, 130}, 1, true, true, false, f32},
  };
  for (const Site &s : sites) {
    int64_t elems = count(s.shape) * (s.complexIn ? 2 : 1);
    auto x = randomValues(elems, 31 + unsigned(elems));
    bool bf = s.inType && s.inType.isBF16() && !s.complexIn;
    if (bf)
      for (float &v : x)
        v = toBf16(v);
    auto r = runSite(env, s, x);
    std::string what = "shape [" + std::to_string(s.shape[0]) + "," +
                       std::to_string(s.shape[1]) +
                       (s.shape.size() > 2 ? "," + std::to_string(s.shape[2])
                                           : std::string()) +
                       "] axis " + std::to_string(s.axis) +
                       (s.inverse ? " ifft" : " fft") +
                       (s.complexIn ? " complex"
                        : bf        ? " bf16"
                                    : " real") +
                       (s.realOut ? " -> real part" : " -> complex");
    ASSERT_TRUE(r.ok) << what << ": " << r.error;
    auto want = refDft(asComplex(x, s.complexIn), s.shape, s.axis, s.inverse,
                       s.realOut);
    double err = relL2(r.outputs[1], want);
    std::cout << "[fft axis] " << what << " rel-L2 " << err << "\n";
    EXPECT_LE(err, bf ? 1e-2 : 1e-5) << what;
  }
}

/// Impulse, DC and a single tone along a middle axis (each inner column a
/// different signal): the transposes must not mix columns.
TEST(FftAxis, StructuredInputsOnMiddleAxis) {
  KernelEnv env;
  int64_t n = 768, inner = 3;
  std::vector<int64_t> shape = {1, n, inner};
  std::vector<float> x(n * inner, 0.0f);
  x[5 * inner + 0] = 1.0f; // impulse at 5 in column 0
  for (int64_t j = 0; j < n; ++j) {
    x[j * inner + 1] = 1.0f; // DC in column 1
    x[j * inner + 2] =       // tone k = 7 in column 2
        float(std::cos(2 * M_PI * double(7 * j % n) / double(n)));
  }
  auto r = runSite(env, {shape, 1, false, false, false, env.f32()}, x);
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<double> want(n * inner * 2, 0.0);
  for (int64_t k = 0; k < n; ++k) {
    cd e = std::polar(1.0, -2 * M_PI * double(5 * k % n) / double(n));
    want[(k * inner + 0) * 2] = e.real();
    want[(k * inner + 0) * 2 + 1] = e.imag();
  }
  want[(0 * inner + 1) * 2] = double(n);
  want[(7 * inner + 2) * 2] = want[((n - 7) * inner + 2) * 2] = double(n) / 2;
  for (int64_t c = 0; c < inner; ++c) {
    std::vector<float> g;
    std::vector<double> w;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t p = 0; p < 2; ++p) {
        g.push_back(r.outputs[1][(k * inner + c) * 2 + p]);
        w.push_back(want[(k * inner + c) * 2 + p]);
      }
    EXPECT_LE(relL2(g, w), 1e-5) << "column " << c << " (impulse, DC, tone)";
  }
}

/// The FNet source's radix-2 kernels at 128 ... 1024 (R = 1 ... 8 groups of
/// 128-point DFT matmuls), real and complex input, on the last and a middle
/// axis, against the exact DFT.
TEST(FftAxis, SourceRadix2Sizes) {
  KernelEnv env;
  for (int64_t n : {128, 256, 512, 1024})
    for (bool complexIn : {false, true}) {
      Site s{{2, n, 2}, 1, complexIn, false, false, env.f32(), "radix2"};
      if (n == 1024)
        s = Site{{3, n}, 1, complexIn, false, false, env.f32(), "radix2"};
      int64_t elems = count(s.shape) * (complexIn ? 2 : 1);
      auto x = randomValues(elems, 43 + unsigned(n));
      auto r = runSite(env, s, x);
      ASSERT_TRUE(r.ok) << n << ": " << r.error;
      double err = relL2(r.outputs[1], refDft(asComplex(x, complexIn), s.shape,
                                              s.axis, false, false));
      std::cout << "[fft radix2] n=" << n << (complexIn ? " complex" : " real")
                << " rel-L2 " << err << "\n";
      EXPECT_LE(err, 1e-5) << n;
    }
}

/// D = 768 padded to 1024 (the source's): the kernel matches the padded
/// transform it computes to fp32 accuracy, and is far from the 768-point
/// DFT (the error seam reports instead of hiding).
TEST(FftAxis, SourcePaddingIsNotTheDft) {
  KernelEnv env;
  std::vector<int64_t> shape = {4, 768};
  auto x = randomValues(4 * 768, 59);
  Site s{shape, 1, false, false, false, env.f32(), "radix2", 1024};
  auto r = runSite(env, s, x);
  ASSERT_TRUE(r.ok) << r.error;
  auto xc = asComplex(x, false);
  double vsPadded =
      relL2(r.outputs[1], refDft(xc, shape, 1, false, false, 1024));
  double vsExact = relL2(r.outputs[1], refDft(xc, shape, 1, false, false));
  std::cout << "[fft pad 768->1024] rel-L2 vs the padded DFT " << vsPadded
            << ", vs the exact 768-point DFT " << vsExact << "\n";
  EXPECT_LE(vsPadded, 1e-5);
  EXPECT_GT(vsExact, 0.1);
  // A middle axis, complex input, real-part output (the second FNet pass).
  std::vector<int64_t> shape3 = {1, 96, 2};
  auto xi = randomValues(96 * 2 * 2, 61);
  Site m{shape3, 1, true, true, false, env.f32(), "radix2", 128};
  auto rm = runSite(env, m, xi);
  ASSERT_TRUE(rm.ok) << rm.error;
  EXPECT_LE(relL2(rm.outputs[1],
                  refDft(asComplex(xi, true), shape3, 1, false, true, 128)),
            1e-5);
}

} // namespace
