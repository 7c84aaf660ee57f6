//===- ProjectionTest.cpp - fused QKV and RoPE kernels --------------------===//
#include "KernelTestUtil.h"

using namespace mlir;
using namespace ::seam::kt;

namespace {

/// Runs the qkv kernel on x [1, m, k] times w [k, n] (+ bias) against a
/// double reference; returns the program's plan description.
std::string runQkv(int64_t m, int64_t k, int64_t n, bool bf, bool bias) {
  KernelEnv env;
  Type elt = bf ? env.bf16() : env.f32();
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor({1, m, k}, elt), env.tensor({k, n}, elt)};
  if (bias)
    sig.args.push_back(env.tensor({n}, elt));
  sig.results = {env.tensor({1, m, n}, elt)};
  sig.config = env.builder.getDictionaryAttr({});
  auto prog = env.build("qkv", sig);
  EXPECT_TRUE(prog);
  if (!prog)
    return "";
  auto x = randomValues(m * k, 1), w = randomValues(k * n, 2),
       b = randomValues(n, 3);
  if (bf)
    for (auto *vec : {&x, &w, &b})
      for (float &v : *vec)
        v = toBf16(v);
  std::map<unsigned, std::vector<float>> in = {{0u, x}, {1u, w}};
  if (bias)
    in[2] = b;
  auto r = runProgram(prog, in);
  EXPECT_TRUE(r.ok) << r.error;
  if (!r.ok)
    return "";
  std::vector<double> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias ? b[j] : 0.0;
      for (int64_t c = 0; c < k; ++c)
        acc += double(x[i * k + c]) * w[c * n + j];
      want[i * n + j] = acc;
    }
  double err = relL2(r.outputs[bias ? 3 : 2], want);
  std::string plan =
      prog->getAttrOfType<StringAttr>("seam.kernel_plan").getValue().str();
  std::cout << "[qkv] M=" << m << " K=" << k << " N=" << n
            << (bf ? " bf16" : " fp32") << (bias ? " +bias" : "") << " rel-L2 "
            << err << " (" << plan << ")\n";
  EXPECT_LE(err, bf ? 1e-2 : 1e-5);
  return plan;
}

TEST(QkvKernel, Fp32AndBf16WithBias) {
  // M = 200 (a partial 128-row block), K = 256, N = 640 (512 + 128).
  for (bool bf : {false, true})
    runQkv(200, 256, 640, bf, /*bias=*/true);
}

TEST(QkvKernel, SmallShapesWithoutBias) {
  // Fewer rows than a block, one K chunk, N narrower than a slab.
  runQkv(64, 128, 96, false, false);
  // Three whole blocks (a pair and one), no tail, slabs of 512 and a rest.
  runQkv(384, 384, 1100, true, false);
}

TEST(QkvKernel, FirstSlabWhileXArrives) {
  // Three blocks or more: each block is multiplied by the first slab as soon
  // as it is transposed; with a tail (multiplied after the blocks), two
  // slabs of 512 and a rest, fp32 and bf16.
  runQkv(420, 256, 1100, false, true);
  runQkv(420, 256, 1100, true, true);
  // Exactly one slab (no pipeline of further slabs).
  runQkv(640, 128, 512, false, false);
}

TEST(QkvKernel, RowGroupsWhenXDoesNotFit) {
  // x^T of 1100 rows x 2048 (fp32) exceeds the SBUF budget: rows go in
  // groups, W is read once per group.
  std::string plan = runQkv(1100, 2048, 200, false, true);
  EXPECT_EQ(plan.find("in 1 group"), std::string::npos) << plan;
}

struct RopeCase {
  int64_t b, h, s, d;
  bool bf;
  /// Tables of independent random values (cos1 != cos2, sin1 != sin2),
  /// which a kernel that mixed up the halves would get wrong; else the
  /// standard ones (theta_i = p 10000^(-2 i / d), halves equal).
  bool randomTables = false;
};

/// Runs the rope kernel on `c` against a double reference; returns the
/// relative L2 error (or 1 on a failure).
double runRope(const RopeCase &c) {
  KernelEnv env;
  Type elt = c.bf ? env.bf16() : env.f32();
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor({c.b, c.h, c.s, c.d}, elt),
              env.tensor({c.s, c.d}, elt), env.tensor({c.s, c.d}, elt)};
  sig.results = {sig.args[0]};
  sig.config = env.builder.getDictionaryAttr({});
  auto prog = env.build("rope", sig);
  EXPECT_TRUE(prog);
  if (!prog)
    return 1;
  auto x = randomValues(c.b * c.h * c.s * c.d, 4);
  std::vector<float> cs(c.s * c.d), sn(c.s * c.d);
  int64_t half = c.d / 2;
  if (c.randomTables) {
    cs = randomValues(c.s * c.d, 5);
    sn = randomValues(c.s * c.d, 6);
  } else {
    for (int64_t p = 0; p < c.s; ++p)
      for (int64_t i = 0; i < c.d; ++i) {
        double th = p * std::pow(10000.0, -2.0 * double(i % half) / c.d);
        cs[p * c.d + i] = float(std::cos(th));
        sn[p * c.d + i] = float(std::sin(th));
      }
  }
  if (c.bf)
    for (auto *vec : {&x, &cs, &sn})
      for (float &v : *vec)
        v = toBf16(v);
  auto r = runProgram(prog, {{0u, x}, {1u, cs}, {2u, sn}});
  EXPECT_TRUE(r.ok) << r.error;
  if (!r.ok)
    return 1;
  std::vector<double> want(x.size());
  for (int64_t bh = 0; bh < c.b * c.h; ++bh)
    for (int64_t p = 0; p < c.s; ++p)
      for (int64_t i = 0; i < c.d; ++i) {
        const float *row = &x[(bh * c.s + p) * c.d];
        double rot = i < half ? -double(row[i + half]) : row[i - half];
        want[(bh * c.s + p) * c.d + i] =
            row[i] * double(cs[p * c.d + i]) + rot * sn[p * c.d + i];
      }
  double err = relL2(r.outputs[3], want);
  std::cout << "[rope] B=" << c.b << " H=" << c.h << " S=" << c.s
            << " D=" << c.d << " " << (c.bf ? "bf16" : "fp32")
            << (c.randomTables ? " random tables" : "") << " rel-L2 " << err
            << "\n";
  return err;
}

TEST(RopeKernel, PublishedLayout) {
  // S a multiple of 128 (whole heads, emitRopeWholeHeads: bf16 sums on the
  // Tensor engine, fp32 on the vector engines), and not (128 rows at a
  // time, a partial last chunk), over two batches.
  for (RopeCase c :
       {RopeCase{1, 4, 256, 64, false}, RopeCase{1, 2, 512, 128, true},
        RopeCase{2, 3, 200, 64, false}, RopeCase{1, 2, 328, 128, true}})
    EXPECT_LE(runRope(c), c.bf ? 1e-2 : 1e-6);
}

TEST(RopeKernel, GeneralTablesAndBenchShapes) {
  // Tables whose halves differ: the swapped sin table and the Tensor
  // engine's half-swapped accumulation must pair x1 with sin2 and x2 with
  // sin1. The bench's shapes (flux2-klein, TP = 4: 6 heads, head_dim 128),
  // more heads than the tuned plan's six (its pattern repeats), a head
  // dim of 64 (PSUM chunks of more slots) and one head.
  for (RopeCase c : {RopeCase{1, 6, 256, 128, true, true},
                     RopeCase{1, 6, 512, 128, true, true},
                     RopeCase{2, 5, 384, 64, true, true},
                     RopeCase{1, 1, 128, 128, true, true},
                     RopeCase{1, 3, 256, 128, false, true}})
    EXPECT_LE(runRope(c), c.bf ? 1e-2 : 1e-6);
}

} // namespace
