//===- KernelPropertyTest.cpp - check accepts => the kernel builds --------===//
//
// For every registered kernel, an enumeration of call-site signatures
// (shapes, axes / dims, dtypes, configs) on both sides of its published
// constraints. Wherever the registry's check accepts a site (so
// seam-insert-kernels would insert it and the verifier would pass it), the
// kernel must build, verify and go through the codegen (allocation,
// scheduling, emission) for trn1, the smaller SBUF. A kernel added to the
// registry without an enumeration here fails the test.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "mlir/IR/Verifier.h"
#ifdef SEAM_HAVE_NCORE_CODEGEN
#include "lowering/target/NcoreCodegen.h"
#endif

using namespace mlir;
using namespace ::seam::kt;
using mlir::seam::KernelSignature;

namespace {

std::string describe(llvm::StringRef kernel, const KernelSignature &sig) {
  return mlir::seam::signatureKey(kernel, sig);
}

using Sites = std::vector<KernelSignature>;

Sites fftSites(KernelEnv &env, bool inverse) {
  auto &b = env.builder;
  Sites out;
  std::vector<int64_t> sizes = {16,   100,  128,  131,   256,   768,
                                1000, 2197, 4096, 12288, 16384, 16500};
  for (int64_t n : sizes) {
    // (shape, axis): the last axis, a middle one, the leading one.
    std::vector<std::pair<std::vector<int64_t>, int64_t>> layouts = {
        {{2, n}, 1}, {{1, n, 3}, 1}, {{n, 2}, 0}, {{2, n}, 2}};
    for (auto &[shape, axis] : layouts)
      for (int inKind = 0; inKind < 3; ++inKind) {
        // inverse takes complex input (seam.ifft's type); fft any.
        if (inverse && inKind != 2)
          continue;
        Type in = inKind == 0   ? env.f32()
                  : inKind == 1 ? env.bf16()
                                : env.c64();
        if (inKind == 1 && axis != int64_t(shape.size()) - 1)
          continue; // bf16 on the last axis only (keeps the list short)
        for (bool realOut : {false, true})
          for (int variant = 0; variant < 3; ++variant) {
            SmallVector<NamedAttribute> cfg = {
                b.getNamedAttr("axis", b.getI64IntegerAttr(axis))};
            if (variant >= 1)
              cfg.push_back(
                  b.getNamedAttr("variant", b.getStringAttr("radix2")));
            if (variant == 2) {
              if (llvm::isPowerOf2_64(n))
                continue;
              cfg.push_back(b.getNamedAttr(
                  "pad_to", b.getI64IntegerAttr(llvm::NextPowerOf2(n))));
            }
            if (variant >= 1 && realOut && inKind == 0)
              continue;
            KernelSignature sig;
            sig.args = {env.tensor(shape, in)};
            sig.results = {env.tensor(shape, realOut ? env.f32() : env.c64())};
            sig.config = b.getDictionaryAttr(cfg);
            out.push_back(sig);
          }
      }
  }
  return out;
}

Sites fourierSites(KernelEnv &env) {
  auto &b = env.builder;
  Sites out;
  std::vector<std::pair<int64_t, int64_t>> sd = {
      {128, 512}, {512, 768},   {200, 300},   {1000, 96},
      {16384, 4}, {4096, 1024}, {2048, 2048}, {131, 64}};
  std::vector<std::vector<int64_t>> dimSets = {{1, 2}, {1}, {2}, {2, 1}};
  for (auto [s, d] : sd)
    for (auto &dims : dimSets)
      for (Type t : {env.f32(), env.bf16()}) {
        auto x = env.tensor({1, s, d}, t);
        out.push_back({{x},
                       {x},
                       b.getDictionaryAttr({b.getNamedAttr(
                           "dims", b.getDenseI64ArrayAttr(dims))})});
      }
  auto x2 = env.tensor({256, 256});
  out.push_back({{x2},
                 {x2},
                 b.getDictionaryAttr({b.getNamedAttr(
                     "dims", b.getDenseI64ArrayAttr({0, 1}))})});
  return out;
}

Sites qkvSites(KernelEnv &env) {
  Sites out;
  for (int64_t k : {128, 200, 512, 3072, 128 * 200})
    for (int64_t n : {384, 1536})
      for (Type t : {env.f32(), env.bf16()})
        for (bool bias : {false, true}) {
          KernelSignature sig;
          sig.args = {env.tensor({1, 256, k}, t), env.tensor({k, n}, t)};
          if (bias)
            sig.args.push_back(env.tensor({n}, t));
          sig.results = {env.tensor({1, 256, n}, t)};
          sig.config = env.builder.getDictionaryAttr({});
          out.push_back(sig);
        }
  return out;
}

Sites ropeSites(KernelEnv &env) {
  Sites out;
  for (int64_t h : {2, 16, 24})
    for (int64_t s : {128, 512, 768})
      for (int64_t d : {64, 96, 128})
        for (Type t : {env.f32(), env.bf16()}) {
          KernelSignature sig;
          sig.args = {env.tensor({1, h, s, d}, t), env.tensor({s, d}, t),
                      env.tensor({s, d}, t)};
          sig.results = {sig.args[0]};
          sig.config = env.builder.getDictionaryAttr({});
          out.push_back(sig);
        }
  return out;
}

Sites flashSites(KernelEnv &env) {
  auto &b = env.builder;
  Sites out;
  for (int64_t h : {1, 4})
    for (int64_t s : {100, 128, 384, 2048})
      for (int64_t d : {64, 128, 200})
        for (Type t : {env.f32(), env.bf16()})
          for (bool causal : {false, true}) {
            auto q = env.tensor({1, h, s, d}, t);
            SmallVector<NamedAttribute> cfg = {
                b.getNamedAttr("scale", b.getF64FloatAttr(0.125))};
            if (causal)
              cfg.push_back(b.getNamedAttr("causal", b.getUnitAttr()));
            out.push_back({{q, q, q}, {q}, b.getDictionaryAttr(cfg)});
          }
  return out;
}

Sites fftconvSites(KernelEnv &env) {
  auto &b = env.builder;
  Sites out;
  for (int64_t l : {8, 64, 784, 4096, 8192})
    for (int64_t nScale : {1, 2, 4})
      for (Type t : {env.f32(), env.bf16()}) {
        int64_t n = std::max<int64_t>(16, llvm::PowerOf2Ceil(l)) * nScale / 2;
        KernelSignature sig;
        sig.args = {env.tensor({1, 4, l}, t), env.tensor({4, l}, t),
                    env.tensor({4}, t)};
        sig.results = {env.tensor({1, 4, l}, t)};
        sig.config = b.getDictionaryAttr(
            {b.getNamedAttr("fft_size", b.getI64IntegerAttr(n))});
        out.push_back(sig);
      }
  return out;
}

Sites sitesOf(KernelEnv &env, llvm::StringRef kernel) {
  if (kernel == "fft")
    return fftSites(env, false);
  if (kernel == "ifft")
    return fftSites(env, true);
  if (kernel == "fourier-mix")
    return fourierSites(env);
  if (kernel == "qkv")
    return qkvSites(env);
  if (kernel == "rope")
    return ropeSites(env);
  if (kernel == "flash-attn" || kernel == "flash-attn-stable")
    return flashSites(env);
  if (kernel == "fftconv")
    return fftconvSites(env);
  return {};
}

TEST(KernelProperty, CheckAcceptsImpliesBuildSucceeds) {
  for (const mlir::seam::KernelInfo &k : mlir::seam::allKernels()) {
    KernelEnv env;
    std::string diag;
    ScopedDiagnosticHandler h(&env.ctx, [&](Diagnostic &d) {
      diag += d.str() + "\n";
      return success();
    });
    Sites sites = sitesOf(env, k.name);
    ASSERT_FALSE(sites.empty())
        << "kernel '" << k.name.str()
        << "' has no site enumeration in KernelPropertyTest.cpp";
    int accepted = 0, rejected = 0, index = 0;
    for (const KernelSignature &sig : sites) {
      if (k.check(sig)) {
        ++rejected;
        continue;
      }
      ++accepted;
      diag.clear();
      std::string name = "p" + std::to_string(index++);
      OpBuilder b(&env.ctx);
      FailureOr<ncore::ProgramOp> prog = k.build(b, *env.module, sig, name);
      ASSERT_TRUE(succeeded(prog))
          << "check accepts but build fails: " << describe(k.name, sig) << "\n"
          << diag;
      ASSERT_TRUE(succeeded(mlir::verify(*prog)))
          << describe(k.name, sig) << "\n"
          << diag;
#ifdef SEAM_HAVE_NCORE_CODEGEN
      auto emitted =
          ncore::compileNcoreProgram(*prog, ::seam::rt::Target::Trn1);
      ASSERT_TRUE(succeeded(emitted))
          << "check accepts but the codegen fails: " << describe(k.name, sig)
          << "\n"
          << diag;
#endif
      (*prog)->erase();
    }
    std::cout << "[property] " << k.name.str() << ": " << accepted
              << " sites accepted and built, " << rejected << " rejected\n";
    // The enumeration reaches both sides of the constraints.
    EXPECT_GT(accepted, 0) << k.name.str();
    EXPECT_GT(rejected, 0) << k.name.str();
  }
}

} // namespace
