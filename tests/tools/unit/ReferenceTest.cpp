//===- ReferenceTest.cpp - the float64 reference on known answers ---------===//
//
// Each test evaluates a small function with seam-run's reference
// interpreter (tools/seam-run/Reference.h) on inputs whose result is known
// in closed form: a norm of a constant row, the DFT of an impulse, attention
// over one key, the collectives of one rank's shard.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-run/Reference.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "tools/seam-run/Registration.h"
#include <cmath>
#include <gtest/gtest.h>

using namespace mlir;
using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

class Reference : public ::testing::Test {
protected:
  MLIRContext ctx{seamRunRegistry()};
  OwningOpRef<ModuleOp> module;

  Reference() { ctx.loadAllAvailableDialects(); }

  /// Evaluates the step function of `text` on `inputs` with `ranks`.
  std::vector<RefTensor> run(const std::string &text,
                             const std::vector<rt::HostTensor> &inputs,
                             int ranks = 1) {
    module = parseSourceString<ModuleOp>(text, &ctx);
    EXPECT_TRUE(module) << text;
    if (!module)
      return {};
    func::FuncOp step = findStepFunction(*module);
    EXPECT_TRUE(step);
    auto out = evaluateReference(step, inputs, ranks);
    EXPECT_TRUE(bool(out)) << (out ? "" : out.error());
    return out ? *out : std::vector<RefTensor>();
  }

  static rt::HostTensor tensor(std::vector<int64_t> shape,
                               std::vector<float> data) {
    return rt::HostTensor{std::move(shape), std::move(data)};
  }
};

TEST_F(Reference, LayerNormOfAConstantRowIsItsBias) {
  // (x - mean) = 0 for every element of a constant row: the result is the
  // bias (scale times zero, plus bias), whatever epsilon.
  auto out = run(R"mlir(
    func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
      %y = seam.layer_norm %x scale %g bias %b {epsilon = 1.0e-5 : f64, scale_offset = 1.0 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      return %y : tensor<2x4xf32>
    })mlir",
                 {tensor({2, 4}, {3, 3, 3, 3, -7, -7, -7, -7}),
                  tensor({4}, {2, 2, 2, 2}), tensor({4}, {0.5, -1, 0, 4})});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> want = {0.5, -1, 0, 4, 0.5, -1, 0, 4};
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_DOUBLE_EQ(out[0].data[i], want[i]) << i;
}

TEST_F(Reference, LayerNormAndRmsNormOfKnownRows) {
  // [1, -1, 1, -1]: mean 0, variance 1, mean square 1.
  auto out = run(R"mlir(
    func.func @f(%x: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
      %a = seam.layer_norm %x {epsilon = 1.0e-30 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      %b = seam.rms_norm %x {epsilon = 3.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      return %a, %b : tensor<1x4xf32>, tensor<1x4xf32>
    })mlir",
                 {tensor({1, 4}, {1, -1, 1, -1})});
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(out[0].data[i], i % 2 ? -1.0 : 1.0, 1e-12);
    EXPECT_NEAR(out[1].data[i], i % 2 ? -0.5 : 0.5, 1e-12); // 1 / sqrt(1 + 3)
  }
}

TEST_F(Reference, FftOfAnImpulseIsAllOnes) {
  // x[n] = [n == 0]: every bin is 1 (any N, here 12 along the middle axis);
  // the ifft of all ones is the impulse again.
  std::vector<float> x(2 * 12 * 3, 0.0f);
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c)
      x[(b * 12 + 0) * 3 + c] = 1.0f;
  auto out = run(R"mlir(
    func.func @f(%x: tensor<2x12x3xf32>) -> (tensor<2x12x3xcomplex<f32>>, tensor<2x12x3xf32>) {
      %f = seam.fft %x axis 1 : tensor<2x12x3xf32> -> tensor<2x12x3xcomplex<f32>>
      %i = seam.ifft %f axis 1 : tensor<2x12x3xcomplex<f32>> -> tensor<2x12x3xf32>
      return %f, %i : tensor<2x12x3xcomplex<f32>>, tensor<2x12x3xf32>
    })mlir",
                 {tensor({2, 12, 3}, x)});
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0].complex);
  for (int64_t i = 0; i < out[0].count(); ++i) {
    EXPECT_NEAR(out[0].data[2 * i], 1.0, 1e-12) << i;
    EXPECT_NEAR(out[0].data[2 * i + 1], 0.0, 1e-12) << i;
  }
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(out[1].data[i], x[i], 1e-12) << i;
}

TEST_F(Reference, PaddedFftKeepsTheFirstBinsOfTheLongerDft) {
  // x = [0, 1, 0] padded to 4 points: y[k] = exp(-2 pi i k / 4), k < 3,
  // i.e. 1, -i, -1 (not the 3-point DFT's exp(-2 pi i k / 3)).
  auto out = run(R"mlir(
    func.func @f(%x: tensor<3xf32>) -> tensor<3xcomplex<f32>> {
      %f = seam.fft %x axis 0 {pad_to = 4 : i64} : tensor<3xf32> -> tensor<3xcomplex<f32>>
      return %f : tensor<3xcomplex<f32>>
    })mlir",
                 {tensor({3}, {0, 1, 0})});
  ASSERT_EQ(out.size(), 1u);
  double re[] = {1, 0, -1}, im[] = {0, -1, 0};
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(out[0].data[2 * k], re[k], 1e-12) << k;
    EXPECT_NEAR(out[0].data[2 * k + 1], im[k], 1e-12) << k;
  }
}

TEST_F(Reference, FourierMixOfAConstantIsItsSumAtZero) {
  // Re(DFT2(c)) of a constant [4, 6] block: 24 c at (0, 0), 0 elsewhere.
  auto out = run(R"mlir(
    func.func @f(%x: tensor<1x4x6xf32>) -> tensor<1x4x6xf32> {
      %m = seam.fourier_mix %x dims [1, 2] : tensor<1x4x6xf32>
      return %m : tensor<1x4x6xf32>
    })mlir",
                 {tensor({1, 4, 6}, std::vector<float>(24, 0.5f))});
  ASSERT_EQ(out.size(), 1u);
  for (int i = 0; i < 24; ++i)
    EXPECT_NEAR(out[0].data[i], i == 0 ? 12.0 : 0.0, 1e-12) << i;
}

TEST_F(Reference, AttentionWithOneKeyReturnsItsValue) {
  // One key: its softmax weight is 1 for every query, whatever the scores.
  auto out = run(R"mlir(
    func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x1x4xf32>, %v: tensor<1x2x1x5xf32>) -> tensor<1x2x3x5xf32> {
      %o = seam.attention %q, %k, %v {scale = 3.0 : f64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>, tensor<1x2x1x5xf32>) -> tensor<1x2x3x5xf32>
      return %o : tensor<1x2x3x5xf32>
    })mlir",
                 {tensor({1, 2, 3, 4}, std::vector<float>(24, 0.7f)),
                  tensor({1, 2, 1, 4}, {1, 2, 3, 4, -1, -2, -3, -4}),
                  tensor({1, 2, 1, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})});
  ASSERT_EQ(out.size(), 1u);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 5; ++c)
        EXPECT_NEAR(out[0].data[(h * 3 + i) * 5 + c], 5 * h + c + 1, 1e-12);
}

TEST_F(Reference, CausalAttentionsFirstQuerySeesOnlyTheFirstKey) {
  // Query 0 sees key 0 only (its value); query 1 averages keys 0 and 1 when
  // their scores are equal (zero queries).
  auto out = run(R"mlir(
    func.func @f(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x2x2xf32>, %v: tensor<1x1x2x1xf32>) -> tensor<1x1x2x1xf32> {
      %o = seam.attention %q, %k, %v {scale = 1.0 : f64, causal} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x1x2x1xf32>
      return %o : tensor<1x1x2x1xf32>
    })mlir",
                 {tensor({1, 1, 2, 2}, {0, 0, 0, 0}),
                  tensor({1, 1, 2, 2}, {5, 1, -3, 2}),
                  tensor({1, 1, 2, 1}, {10, 20})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].data[0], 10.0, 1e-12);
  EXPECT_NEAR(out[0].data[1], 15.0, 1e-12);
}

TEST_F(Reference, RopeWithTablesOfOneAndZeroIsTheIdentityOrTheRotation) {
  // cos = 1, sin = 0: x; cos = 0, sin = 1: concat(-x2, x1).
  auto out = run(R"mlir(
    func.func @f(%x: tensor<1x1x1x4xf32>, %one: tensor<1x4xf32>, %zero: tensor<1x4xf32>) -> (tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>) {
      %a = seam.rope %x, %one, %zero : (tensor<1x1x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x1x1x4xf32>
      %b = seam.rope %x, %zero, %one : (tensor<1x1x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x1x1x4xf32>
      return %a, %b : tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>
    })mlir",
                 {tensor({1, 1, 1, 4}, {1, 2, 3, 4}),
                  tensor({1, 4}, {1, 1, 1, 1}), tensor({1, 4}, {0, 0, 0, 0})});
  ASSERT_EQ(out.size(), 2u);
  double a[] = {1, 2, 3, 4}, b[] = {-3, -4, 1, 2};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(out[0].data[i], a[i]);
    EXPECT_DOUBLE_EQ(out[1].data[i], b[i]);
  }
}

TEST_F(Reference, CollectivesOfIdenticalShards) {
  // Every rank holds the same shard: the sum is ranks x, the gather ranks
  // copies along the dim, rank-major.
  auto out = run(R"mlir(
    module attributes {seam.tp = 4 : i64} {
      func.func @f(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x8xf32>) {
        %s = seam.all_reduce %x ranks 4 : tensor<2x2xf32>
        %g = seam.all_gather %x dim 1 ranks 4 : tensor<2x2xf32> -> tensor<2x8xf32>
        return %s, %g : tensor<2x2xf32>, tensor<2x8xf32>
      }
    })mlir",
                 {tensor({2, 2}, {1, 2, 3, 4})}, 4);
  ASSERT_EQ(out.size(), 2u);
  double sum[] = {4, 8, 12, 16};
  for (int i = 0; i < 4; ++i)
    EXPECT_DOUBLE_EQ(out[0].data[i], sum[i]);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_DOUBLE_EQ(out[1].data[r * 8 + c], 2 * r + c % 2 + 1);
}

TEST_F(Reference, FftconvWithAnImpulseFilterAddsTheSkip) {
  // k = [1, 0, 0]: the convolution is u itself; y = u + u * d.
  auto out = run(R"mlir(
    func.func @f(%u: tensor<1x2x4xf32>, %k: tensor<2x3xf32>, %d: tensor<2xf32>) -> tensor<1x2x4xf32> {
      %y = seam.fftconv %u, %k, %d {fft_size = 16 : i64} : (tensor<1x2x4xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2x4xf32>
      return %y : tensor<1x2x4xf32>
    })mlir",
                 {tensor({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
                  tensor({2, 3}, {1, 0, 0, 1, 0, 0}), tensor({2}, {0.5, -1})});
  ASSERT_EQ(out.size(), 1u);
  double want[] = {1.5, 3, 4.5, 6, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i)
    EXPECT_DOUBLE_EQ(out[0].data[i], want[i]) << i;
}

TEST_F(Reference, Bf16InputsAreRoundedAsTheDeviceHoldsThem) {
  // 1 + 2^-10 is not a bf16 value: the device holds 1.
  auto out = run(R"mlir(
    func.func @f(%x: tensor<1xbf16>) -> tensor<1xbf16> {
      %y = seam.add %x, %x : (tensor<1xbf16>, tensor<1xbf16>) -> tensor<1xbf16>
      return %y : tensor<1xbf16>
    })mlir",
                 {tensor({1}, {1.0f + 0x1p-10f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].data[0], 2.0);
}

TEST_F(Reference, ComparisonAcceptsRoundingNoiseOnly) {
  RefTensor ref;
  ref.shape = {2};
  ref.data = {3, 4}; // norm 5
  ReferenceOutput ok = compareOutput(rt::HostTensor{{2}, {3.0f, 4.00004f}}, ref,
                                     kReferenceToleranceF32);
  EXPECT_TRUE(ok.pass);
  EXPECT_NEAR(ok.relL2, 0.00004 / 5, 1e-7);
  ReferenceOutput off =
      compareOutput(rt::HostTensor{{2}, {3.0f, 4.1f}}, ref, 1e-5);
  EXPECT_FALSE(off.pass);
  // An output as sensitive as that to rounding passes by the noise.
  RefTensor noisy = ref;
  noisy.data[1] = 4.05;
  ReferenceOutput sensitive =
      compareOutput(rt::HostTensor{{2}, {3.0f, 4.1f}}, ref, 1e-5, {&noisy});
  EXPECT_TRUE(sensitive.pass);
  EXPECT_NEAR(sensitive.noise, 0.01, 1e-9);
  ReferenceOutput nan =
      compareOutput(rt::HostTensor{{2}, {3.0f, std::nanf("")}}, ref, 1e-5);
  EXPECT_FALSE(nan.pass);
  EXPECT_EQ(nan.nonFinite, 1u);
}

} // namespace
