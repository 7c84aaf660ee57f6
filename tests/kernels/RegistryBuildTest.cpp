//===- RegistryBuildTest.cpp - build hooks and getOrBuildKernelProgram ----===//
#include "KernelTestUtil.h"
#include "kernels/KernelBuilder.h"
#include "mlir/IR/Verifier.h"
#include "runtime/Profile.h"

using namespace mlir;
using namespace ::seam::kt;

namespace {

mlir::seam::KernelSignature ropeSig(KernelEnv &env, int64_t s) {
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor({1, 4, s, 64}), env.tensor({s, 64}),
              env.tensor({s, 64})};
  sig.results = {sig.args[0]};
  sig.config = env.builder.getDictionaryAttr({});
  return sig;
}

TEST(KernelRegistry, ProgramsAreSharedBySignature) {
  KernelEnv env;
  auto a = mlir::seam::getOrBuildKernelProgram(*env.module, "rope",
                                               ropeSig(env, 256));
  auto b = mlir::seam::getOrBuildKernelProgram(*env.module, "rope",
                                               ropeSig(env, 256));
  auto c = mlir::seam::getOrBuildKernelProgram(*env.module, "rope",
                                               ropeSig(env, 128));
  ASSERT_TRUE(succeeded(a) && succeeded(b) && succeeded(c));
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(llvm::range_size(env.module->getOps<ncore::ProgramOp>()), 2u);
  EXPECT_TRUE(succeeded(mlir::verify(*env.module)));
  // Arguments: operands, then results, with their roles.
  auto prog = env.module->lookupSymbol<ncore::ProgramOp>(a->getValue());
  EXPECT_EQ(prog.getArgRole(0), "input");
  EXPECT_EQ(prog.getArgRole(3), "output");
}

TEST(KernelRegistry, ViolatedConstraintsAndUnknownKernelsFail) {
  KernelEnv env;
  std::string msg;
  ScopedDiagnosticHandler h(&env.ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::seam::getOrBuildKernelProgram(*env.module, "rope",
                                                         ropeSig(env, 768))));
  EXPECT_NE(msg.find("seq 768 > 512"), std::string::npos) << msg;
  EXPECT_TRUE(failed(mlir::seam::getOrBuildKernelProgram(
      *env.module, "no-such-kernel", ropeSig(env, 128))));
  EXPECT_NE(msg.find("unknown kernel"), std::string::npos) << msg;
}

TEST(KernelRegistry, FlashAttentionHasNoCausalMask) {
  KernelEnv env;
  auto t4 = env.tensor({1, 2, 256, 64});
  mlir::seam::KernelSignature sig{
      {t4, t4, t4},
      {t4},
      env.builder.getDictionaryAttr({
          env.builder.getNamedAttr("causal", env.builder.getUnitAttr()),
      })};
  auto why = mlir::seam::lookupKernel("flash-attn-stable")->check(sig);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("causal"), std::string::npos);
}

/// Every kernel's program for a representative site verifies, and its
/// constants carry generator descriptions.
TEST(KernelRegistry, EveryKernelBuilds) {
  KernelEnv env;
  auto &b = env.builder;
  auto cfg = [&](ArrayRef<NamedAttribute> a) { return b.getDictionaryAttr(a); };
  auto t4 = env.tensor({1, 2, 256, 64}, env.bf16());
  struct Site {
    const char *kernel;
    mlir::seam::KernelSignature sig;
  };
  std::vector<Site> sites = {
      {"qkv",
       {{env.tensor({1, 256, 512}), env.tensor({512, 1536})},
        {env.tensor({1, 256, 1536})},
        cfg({})}},
      {"rope", ropeSig(env, 512)},
      {"flash-attn", {{t4, t4, t4}, {t4}, cfg({})}},
      {"flash-attn-stable", {{t4, t4, t4}, {t4}, cfg({})}},
      {"fft",
       {{env.tensor({2, 3, 768})},
        {env.tensor({2, 3, 768}, env.c64())},
        cfg({b.getNamedAttr("axis", b.getI64IntegerAttr(2))})}},
      {"ifft",
       {{env.tensor({4, 1024}, env.c64())},
        {env.tensor({4, 1024})},
        cfg({b.getNamedAttr("axis", b.getI64IntegerAttr(1))})}},
      {"fourier-mix",
       {{env.tensor({1, 512, 768})},
        {env.tensor({1, 512, 768})},
        cfg({b.getNamedAttr("dims", b.getDenseI64ArrayAttr({1, 2}))})}},
      {"fftconv",
       {{env.tensor({1, 4, 1024}), env.tensor({4, 1024}), env.tensor({4})},
        {env.tensor({1, 4, 1024})},
        cfg({b.getNamedAttr("fft_size", b.getI64IntegerAttr(2048))})}},
  };
  for (Site &s : sites) {
    auto prog = env.build(s.kernel, s.sig);
    ASSERT_TRUE(prog) << s.kernel;
    EXPECT_TRUE(succeeded(mlir::verify(prog))) << s.kernel;
    for (auto &[i, vals] : mlir::seam::kernelConstants(prog)) {
      auto t = cast<ncore::TileType>(prog.getArgumentTypes()[i]);
      EXPECT_EQ(int64_t(vals.size()), t.getNumElements()) << s.kernel;
    }
  }
}

/// The fft kernel over the last axis of a rank-3 tensor (batch = leading
/// dims, arguments typed as the call's tensors).
TEST(KernelRegistry, FftOnRank3Tensor) {
  KernelEnv env;
  int64_t n = 768;
  mlir::seam::KernelSignature sig;
  sig.args = {env.tensor({2, 3, n})};
  sig.results = {env.tensor({2, 3, n}, env.c64())};
  sig.config = env.builder.getDictionaryAttr(
      {env.builder.getNamedAttr("axis", env.builder.getI64IntegerAttr(2))});
  auto prog = env.build("fft", sig);
  ASSERT_TRUE(prog);
  auto x = randomValues(6 * n, 41);
  auto r = runProgram(prog, {{0u, x}});
  ASSERT_TRUE(r.ok) << r.error;
  std::vector<double> want;
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t k = 0; k < n; ++k) {
      std::complex<double> acc = 0;
      for (int64_t j = 0; j < n; ++j)
        acc += double(x[row * n + j]) *
               std::polar(1.0, -2 * M_PI * double(j * k % n) / double(n));
      want.push_back(acc.real());
      want.push_back(acc.imag());
    }
  EXPECT_LE(relL2(r.outputs[1], want), 1e-5);
}

/// The kernels' SBUF planning budget leaves at least half of every
/// profile's SBUF partition to the caller's tiles; their DMA streams cover
/// every profile's queues.
TEST(KernelRegistry, SbufBudgetFitsEveryProfile) {
  for (auto t : {::seam::rt::Target::Trn1, ::seam::rt::Target::Trn2}) {
    const auto &p = ::seam::rt::Profile::builtin(t);
    EXPECT_LE(2 * mlir::seam::kKernelSbufBudgetBytes,
              int64_t(p.sbufPartitionBytes))
        << p.name;
    // The DMA streams a kernel keeps in flight cover the queues.
    EXPECT_GE(mlir::seam::kDmaStreams, int64_t(p.dmaEngines)) << p.name;
  }
}

/// Shapes a kernel cannot serve get a diagnostic, not a crash.
TEST(KernelRegistry, UnservableShapesAreReported) {
  KernelEnv env;
  std::string msg;
  ScopedDiagnosticHandler h(&env.ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  // qkv: K not a multiple of 128 (the registry check).
  mlir::seam::KernelSignature qkv;
  qkv.args = {env.tensor({1, 64, 200}), env.tensor({200, 96})};
  qkv.results = {env.tensor({1, 64, 96})};
  qkv.config = env.builder.getDictionaryAttr({});
  EXPECT_TRUE(
      failed(mlir::seam::getOrBuildKernelProgram(*env.module, "qkv", qkv)));
  EXPECT_NE(msg.find("not a multiple of 128"), std::string::npos) << msg;
  // qkv: a contraction too long for one block of x^T in SBUF.
  qkv.args = {env.tensor({1, 64, 128 * 200}), env.tensor({128 * 200, 96})};
  EXPECT_TRUE(
      failed(mlir::seam::getOrBuildKernelProgram(*env.module, "qkv", qkv)));
  EXPECT_NE(msg.find("exceeds the kernel SBUF budget"), std::string::npos)
      << msg;
  // fftconv: bf16 is not built.
  auto bf = env.bf16();
  mlir::seam::KernelSignature conv;
  conv.args = {env.tensor({1, 4, 64}, bf), env.tensor({4, 64}, bf),
               env.tensor({4}, bf)};
  conv.results = {env.tensor({1, 4, 64}, bf)};
  conv.config = env.builder.getDictionaryAttr({env.builder.getNamedAttr(
      "fft_size", env.builder.getI64IntegerAttr(128))});
  EXPECT_TRUE(failed(
      mlir::seam::getOrBuildKernelProgram(*env.module, "fftconv", conv)));
  EXPECT_NE(msg.find("f32 only"), std::string::npos) << msg;
}

} // namespace
