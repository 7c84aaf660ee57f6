//===- NkiTutorialTest.cpp - the NKI tutorials' kernels, numerically ------===//
//
// Each version of the tutorial matmul and fused Mamba kernels
// (kernels/NkiTutorials.cpp) at a small shape, run functionally and
// compared with a float64 reference. The published shapes are timed in
// bench/ (kernel_bench --filter nki, bench/nki_validation.py).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace mlir;
using namespace ::seam::kt;

namespace {

double runMatmul(int version) {
  KernelEnv env;
  mlir::seam::NkiMatmulParams p;
  p.version = version;
  // Two K blocks, one M block and one N block of v5 at blocks 2 x 2 x 2.
  p.k = 512;
  p.m = 256;
  p.n = 1024;
  p.blockM = 2;
  p.blockN = 2;
  p.blockK = 2;
  auto prog =
      mlir::seam::buildNkiMatmul(env.builder, *env.module, "nki_matmul", p);
  EXPECT_TRUE(succeeded(prog));
  if (failed(prog))
    return 1e300;
  auto lhsT = randomValues(p.k * p.m, 11), rhs = randomValues(p.k * p.n, 12);
  auto r = runProgram(*prog, {{0u, lhsT}, {1u, rhs}});
  EXPECT_TRUE(r.ok) << r.error;
  if (!r.ok)
    return 1e300;
  std::vector<double> want(p.m * p.n, 0.0);
  for (int64_t k = 0; k < p.k; ++k)
    for (int64_t i = 0; i < p.m; ++i) {
      double a = lhsT[k * p.m + i];
      for (int64_t j = 0; j < p.n; ++j)
        want[i * p.n + j] += a * rhs[k * p.n + j];
    }
  double err = relL2(r.outputs[2], want);
  std::cout << "[nki-matmul-v" << version << "] K=" << p.k << " M=" << p.m
            << " N=" << p.n << " rel-L2 " << err << "\n";
  return err;
}

TEST(NkiTutorialKernels, MatmulVersionsMatchFloat64) {
  for (int v = 2; v <= 5; ++v)
    EXPECT_LE(runMatmul(v), 1e-5) << "v" << v;
}

struct MambaRun {
  double err = 1e300;
  std::string plan;
};

MambaRun runMamba(int version, int64_t batch, int64_t seq, int64_t channels,
                  int64_t state, int64_t sbufBytes = 2 * 96 * 1024) {
  KernelEnv env;
  mlir::seam::NkiMambaParams p;
  p.version = version;
  p.batch = batch;
  p.seq = seq;
  p.channels = channels;
  p.state = state;
  p.sbufBytes = sbufBytes;
  auto prog =
      mlir::seam::buildNkiMamba(env.builder, *env.module, "nki_mamba", p);
  EXPECT_TRUE(succeeded(prog));
  if (failed(prog))
    return {};
  int64_t x = batch * channels * seq, bc = batch * state * seq;
  auto delta = randomValues(x, 21, 0.0f, 0.1f);
  auto u = randomValues(x, 22, -1.0f, 1.0f);
  auto a = randomValues(channels * state, 23, -2.0f, -0.1f);
  auto bm = randomValues(bc, 24, -1.0f, 1.0f);
  auto cm = randomValues(bc, 25, -1.0f, 1.0f);
  auto r =
      runProgram(*prog, {{0u, delta}, {1u, u}, {2u, a}, {3u, bm}, {4u, cm}});
  EXPECT_TRUE(r.ok) << r.error;
  if (!r.ok)
    return {};
  std::vector<double> want(x, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t n = 0; n < state; ++n) {
        double h = 0;
        for (int64_t s = 0; s < seq; ++s) {
          int64_t i = (b * channels + c) * seq + s,
                  j = (b * state + n) * seq + s;
          double d = delta[i];
          h = std::exp(d * a[c * state + n]) * h + d * u[i] * bm[j];
          want[i] += cm[j] * h;
        }
      }
  MambaRun run;
  run.err = relL2(r.outputs[5], want);
  run.plan =
      (*prog)->getAttrOfType<StringAttr>("seam.kernel_plan").getValue().str();
  std::cout << "[nki-mamba-v" << version << "] batch " << batch << " seq "
            << seq << " channels " << channels << " state " << state
            << " rel-L2 " << run.err << " (" << run.plan << ")\n";
  return run;
}

TEST(NkiTutorialKernels, MambaVersionsMatchFloat64) {
  // Two channel tiles, two batches, seq of two v3 tiles (the scan carried
  // from one to the next).
  for (int v = 1; v <= 3; ++v)
    EXPECT_LE(runMamba(v, 2, 1024, 256, 4).err, 1e-5) << "v" << v;
}

TEST(NkiTutorialKernels, MambaV2SpillsWhenTilesExceedSbuf) {
  // Eight live [128, 1024] fp32 tiles (32 KiB per partition) in an SBUF of
  // 24 KiB: delta, u and the accumulator go through HBM, same numbers.
  MambaRun run = runMamba(2, 1, 1024, 256, 3, 24 * 1024);
  EXPECT_LE(run.err, 1e-5);
  EXPECT_NE(run.plan.find("spilled"), std::string::npos) << run.plan;
  EXPECT_EQ(runMamba(2, 1, 1024, 256, 3).plan.find("spilled"),
            std::string::npos);
}

TEST(NkiTutorialKernels, BadShapesAreRefusedWithAReason) {
  mlir::seam::NkiMatmulParams m;
  m.version = 4;
  m.k = 256;
  m.m = 128; // not a 2-tile M block
  m.n = 1024;
  auto why = mlir::seam::nkiMatmulError(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("multiple of 256"), std::string::npos) << *why;
  mlir::seam::NkiMambaParams p;
  p.channels = 200;
  p.seq = 512;
  p.state = 16;
  why = mlir::seam::nkiMambaError(p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("multiple of 128"), std::string::npos) << *why;
}

} // namespace
