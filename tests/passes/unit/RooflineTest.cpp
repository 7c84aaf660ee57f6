//===- RooflineTest.cpp - floors of small graphs computed by hand ---------===//
//
// The expected floors below are worked out from shared/reference/hardware.md
// (trn2: 128x128 TE at 2.4 GHz, fp32 4x slower; VE 0.96 GHz with 512 bf16 /
// 256 other lanes; SE and GpSimd 128 lanes at 1.2 GHz; 16 DMA engines x
// 23 B/ns; 2.9 TB/s of HBM shared by 8 cores), not read back from the
// profile, so a wrong figure or a wrong formula fails here.
//
//===----------------------------------------------------------------------===//
#include "passes/Roofline.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "runtime/Profile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::seam;
namespace rt = ::seam::rt;

namespace {

constexpr double kTeBf16FlopsPerNs = 128 * 128 * 2 * 2.4; // 78643.2
constexpr double kDmaBytesPerNs = 16 * 23;                // 368 < 2900 / 1

class Roofline : public ::testing::Test {
protected:
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  EnginePeaks trn2 =
      EnginePeaks::fromProfile(rt::Profile::builtin(rt::Target::Trn2), 1);

  Roofline() {
    DialectRegistry registry;
    registry.insert<SeamDialect, func::FuncDialect>();
    registerKernelRegistry(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// The work of the first launch (func.call or seam.kernel_call) of @step.
  GraphWork firstLaunch(const std::string &ir) {
    module = parseSourceString<ModuleOp>(ir, &ctx);
    EXPECT_TRUE(module);
    if (!module)
      return {};
    auto step = module->lookupSymbol<func::FuncOp>("step");
    for (Operation &op : step.getBody().front())
      if (isa<func::CallOp, KernelCallOp>(op))
        return launchWork(&op, trn2.teRows);
    ADD_FAILURE() << "no launch in @step";
    return {};
  }
};

/// @step calls one program holding `body` on %x (and %w).
std::string program(const std::string &xType, const std::string &wType,
                    const std::string &yType, const std::string &body) {
  return "func.func @step(%x: " + xType + ", %w: " + wType + ") -> " + yType +
         " {\n  %y = call @p(%x, %w) : (" + xType + ", " + wType + ") -> " +
         yType + "\n  return %y : " + yType + "\n}\n" +
         "func.func private @p(%x: " + xType + ", %w: " + wType + ") -> " +
         yType + " attributes {seam.program} {\n" + body +
         "  return %y : " + yType + "\n}\n";
}

TEST_F(Roofline, PeaksComeFromTheProfile) {
  EXPECT_DOUBLE_EQ(trn2.teFlopsPerNsBf16, kTeBf16FlopsPerNs);
  EXPECT_DOUBLE_EQ(trn2.teFlopsPerNsF32, kTeBf16FlopsPerNs / 4);
  EXPECT_DOUBLE_EQ(trn2.veBf16PerNs, 512 * 0.96);
  EXPECT_DOUBLE_EQ(trn2.vePerNs, 256 * 0.96);
  EXPECT_DOUBLE_EQ(trn2.sePerNs, 128 * 1.2);
  EXPECT_DOUBLE_EQ(trn2.gpPerNs, 128 * 1.2);
  EXPECT_DOUBLE_EQ(trn2.dmaBytesPerNs, kDmaBytesPerNs);
  EXPECT_EQ(trn2.teRows, 128);
  // Eight ranks on one trn2 chip: the HBM share (2900 / 8) is below the
  // DMA engines' 368 B/ns.
  EXPECT_DOUBLE_EQ(
      EnginePeaks::fromProfile(rt::Profile::builtin(rt::Target::Trn2), 8)
          .dmaBytesPerNs,
      2900.0 / 8);
}

// One bf16 linear [1024 x 1024] x [1024 x 2048]: TE-bound.
TEST_F(Roofline, LinearIsTensorEngineBound) {
  GraphWork w = firstLaunch(
      program("tensor<1024x1024xbf16>", "tensor<1024x2048xbf16>",
              "tensor<1024x2048xbf16>",
              "  %y = seam.linear %x, %w : (tensor<1024x1024xbf16>, "
              "tensor<1024x2048xbf16>) -> tensor<1024x2048xbf16>\n"));
  double flops = 2.0 * 1024 * 1024 * 2048;
  double bytes = 2.0 * (1024 * 1024 + 1024 * 2048 + 1024 * 2048);
  EXPECT_DOUBLE_EQ(w.teFlopsBf16, flops);
  EXPECT_DOUBLE_EQ(w.teFlopsF32, 0);
  EXPECT_DOUBLE_EQ(w.elementwiseOps(), 0);
  EXPECT_DOUBLE_EQ(w.hbmBytes, bytes);
  RooflineFloor f = rooflineFloor(w, trn2);
  EXPECT_NEAR(f.teNs, flops / kTeBf16FlopsPerNs, 1e-6); // 54613.33 ns
  EXPECT_NEAR(f.dmaNs, bytes / kDmaBytesPerNs, 1e-6);   // 28493.91 ns
  EXPECT_DOUBLE_EQ(f.ns, f.teNs);
  EXPECT_EQ(f.bound, "TE");
}

// The same linear with M = 256 moves 5.5 MiB for 1.07 GFLOP: DMA-bound.
TEST_F(Roofline, SmallLinearIsDmaBound) {
  GraphWork w = firstLaunch(
      program("tensor<256x1024xbf16>", "tensor<1024x2048xbf16>",
              "tensor<256x2048xbf16>",
              "  %y = seam.linear %x, %w : (tensor<256x1024xbf16>, "
              "tensor<1024x2048xbf16>) -> tensor<256x2048xbf16>\n"));
  RooflineFloor f = rooflineFloor(w, trn2);
  EXPECT_NEAR(f.teNs, 2.0 * 256 * 1024 * 2048 / kTeBf16FlopsPerNs,
              1e-6); // 13653.33 ns
  EXPECT_NEAR(f.ns,
              2.0 * (256 * 1024 + 1024 * 2048 + 256 * 2048) / kDmaBytesPerNs,
              1e-6); // 15671.65 ns
  EXPECT_EQ(f.bound, "DMA");
}

// fp32 operands run the TE at a quarter of the bf16 rate.
TEST_F(Roofline, Fp32MatmulIsFourTimesSlower) {
  GraphWork w = firstLaunch(program(
      "tensor<1024x1024xf32>", "tensor<1024x2048xf32>", "tensor<1024x2048xf32>",
      "  %y = seam.linear %x, %w : (tensor<1024x1024xf32>, "
      "tensor<1024x2048xf32>) -> tensor<1024x2048xf32>\n"));
  EXPECT_DOUBLE_EQ(w.teFlopsF32, 2.0 * 1024 * 1024 * 2048);
  RooflineFloor f = rooflineFloor(w, trn2);
  EXPECT_NEAR(f.teNs, 4 * 2.0 * 1024 * 1024 * 2048 / kTeBf16FlopsPerNs, 1e-6);
  EXPECT_EQ(f.bound, "TE");
}

// Attention with head_dim 64 over 512 keys: the exps on the Scalar engine
// (the only one with the function tables) set the floor.
TEST_F(Roofline, ShortHeadAttentionIsScalarEngineBound) {
  std::string t = "tensor<1x1x512x64xbf16>";
  std::string ir =
      "func.func @step(%q: " + t + ", %k: " + t + ", %v: " + t + ") -> " + t +
      " {\n  %o = call @p(%q, %k, %v) : (" + t + ", " + t + ", " + t + ") -> " +
      t + "\n  return %o : " + t + "\n}\n" + "func.func private @p(%q: " + t +
      ", %k: " + t + ", %v: " + t + ") -> " + t +
      " attributes {seam.program} {\n" +
      "  %o = seam.attention %q, %k, %v {scale = 0.125 : f64} : (" + t + ", " +
      t + ", " + t + ") -> " + t + "\n  return %o : " + t + "\n}\n";
  GraphWork w = firstLaunch(ir);
  double pairs = 512.0 * 512;
  EXPECT_DOUBLE_EQ(w.teFlopsBf16, 2 * (2.0 * pairs * 64)); // QK^T and PV
  EXPECT_DOUBLE_EQ(w.elementOps[kSE], pairs);              // exp
  EXPECT_DOUBLE_EQ(w.elementOps[kVEorGP], 512);            // 1 / row sum
  EXPECT_DOUBLE_EQ(w.elementOps[kAnyEW], 512.0 * 64);      // normalise
  EXPECT_DOUBLE_EQ(w.hbmBytes, 4 * 512.0 * 64 * 2);
  RooflineFloor f = rooflineFloor(w, trn2);
  EXPECT_NEAR(f.elementwiseNs, pairs / (128 * 1.2), 1e-6); // 1706.67 ns
  EXPECT_EQ(f.elementwiseEngines, "SE");
  EXPECT_EQ(f.bound, "SE");
  EXPECT_DOUBLE_EQ(f.ns, f.elementwiseNs);
}

// A kernel call does the work of the op it replaced.
TEST_F(Roofline, KernelCallCostsWhatItsRootOpCosts) {
  auto t = RankedTensorType::get({1, 2, 256, 128}, BFloat16Type::get(&ctx));
  KernelSignature sig{{t, t, t}, {t}, DictionaryAttr::get(&ctx)};
  GraphWork op = workOf("seam.attention", sig, 128);
  std::string ty = "tensor<1x2x256x128xbf16>";
  GraphWork call = firstLaunch(
      "func.func @step(%q: " + ty + ") -> " + ty +
      " {\n  %o = seam.kernel_call \"flash-attn\"(%q, %q, %q) : (" + ty + ", " +
      ty + ", " + ty + ") -> " + ty + "\n  return %o : " + ty + "\n}\n");
  EXPECT_GT(op.teFlopsBf16, 0);
  EXPECT_DOUBLE_EQ(call.teFlopsBf16, op.teFlopsBf16);
  EXPECT_EQ(call.elementOps, op.elementOps);
  // %q feeds three operands but crosses HBM once; the output once.
  EXPECT_DOUBLE_EQ(call.hbmBytes, 2 * (256.0 * 128 * 2 * 2));
}

// The elementwise term lets VE, SE and GpSimd share work their instructions
// allow: tensor_scalar work spreads over all three engines, tensor_tensor
// work only over VE and GpSimd.
TEST_F(Roofline, ElementwiseWorkSpreadsOverLegalEngines) {
  GraphWork w;
  w.elementOps[kAnyEW] = 1e6;
  double all = 256 * 0.96 + 128 * 1.2 + 128 * 1.2; // f32 rates
  RooflineFloor f = rooflineFloor(w, trn2);
  EXPECT_NEAR(f.elementwiseNs, 1e6 / all, 1e-6);
  EXPECT_EQ(f.bound, "VE+SE+GP");
  w.elementOps[kVEorGP] = 1e6;
  f = rooflineFloor(w, trn2);
  // 2e6 over all three (2e6 / 552.96 = 3616.9 ns) beats 1e6 over VE+GP
  // (1e6 / 399.36 = 2504.0 ns): the binding set is all three.
  EXPECT_NEAR(f.elementwiseNs, 2e6 / all, 1e-6);
  w.elementOps[kVEorGP] = 4e6;
  f = rooflineFloor(w, trn2);
  EXPECT_NEAR(f.elementwiseNs, 4e6 / (256 * 0.96 + 128 * 1.2), 1e-6);
  EXPECT_EQ(f.bound, "VE+GP");
  w.elementwiseBf16 = true; // the wide bf16 mode of trn2's VE
  f = rooflineFloor(w, trn2);
  // Now VE+GP needs 4e6 / 645.12 = 6200.4 ns, all three 5e6 / 798.72 =
  // 6260.0 ns.
  EXPECT_NEAR(f.elementwiseNs, 5e6 / (512 * 0.96 + 128 * 1.2 + 128 * 1.2),
              1e-6);
  EXPECT_EQ(f.bound, "VE+SE+GP");
}

// DFTs: dense up to 128 points, four-step stages of 128 above.
TEST_F(Roofline, DftContractionIsDenseOrFourStep) {
  auto c64 = ComplexType::get(Float32Type::get(&ctx));
  auto attrs = [&](int64_t axis) {
    return DictionaryAttr::get(
        &ctx,
        {NamedAttribute(StringAttr::get(&ctx, "axis"),
                        IntegerAttr::get(IntegerType::get(&ctx, 64), axis))});
  };
  auto small = RankedTensorType::get({64, 64}, c64);
  // 4096 complex outputs = 8192 reals, each contracting 2 x 64 reals.
  EXPECT_DOUBLE_EQ(
      workOf("seam.fft", {{small}, {small}, attrs(1)}, 128).teFlopsF32,
      2.0 * 8192 * 128);
  auto big = RankedTensorType::get({4, 512}, c64);
  // 512 = 128 x 4: two stages of 128 instead of the dense 2 x 512.
  EXPECT_DOUBLE_EQ(workOf("seam.fft", {{big}, {big}, attrs(1)}, 128).teFlopsF32,
                   2.0 * (2 * 2048) * 256);
  // 2^20 = 128 x 128 x 64: three stages. 131 is prime: only the dense DFT.
  auto huge = RankedTensorType::get({1, 1 << 20}, c64);
  EXPECT_DOUBLE_EQ(
      workOf("seam.fft", {{huge}, {huge}, attrs(1)}, 128).teFlopsF32,
      2.0 * (2 << 20) * 384);
  auto prime = RankedTensorType::get({1, 131}, c64);
  EXPECT_DOUBLE_EQ(
      workOf("seam.fft", {{prime}, {prime}, attrs(1)}, 128).teFlopsF32,
      2.0 * (2 * 131) * (2 * 131));
}

} // namespace
