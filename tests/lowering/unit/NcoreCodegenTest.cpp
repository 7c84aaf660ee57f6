//===- NcoreCodegenTest.cpp - ncore programs emitted and run on the device ===//
//
// Small ncore programs, parsed from text, go through compileNcoreProgram
// (allocate, schedule, emit) and run on the runtime Device in functional
// mode; results are checked against double-precision references (relative
// L2 error: fp32 <= 1e-5, bf16 <= 1e-2). Timing-only runs must give the
// functional run's timeline, and the schedule must let engines overlap.
//
//===----------------------------------------------------------------------===//
#include "lowering/target/NcoreCodegen.h"
#include "lowering/transforms/NcorePasses.h"
#include "lowering/transforms/ParallelVerify.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/Host.h"
#include "runtime/Numerics.h"
#include "runtime/ProgramFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <sstream>

using namespace mlir;
namespace rt = ::seam::rt;

namespace {

double relL2(const std::vector<float> &got, const std::vector<double> &want) {
  EXPECT_EQ(got.size(), want.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    double d = got[i] - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

std::vector<float> randomValues(size_t n, unsigned seed, bool bf16 = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) {
    x = dist(gen);
    if (bf16) // Inputs exactly representable: the reference sees what the
              // device sees.
      x = rt::roundToBf16(x);
  }
  return v;
}

class Codegen : public ::testing::Test {
protected:
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;

  Codegen() { ctx.loadDialect<ncore::NcoreDialect>(); }

  /// Parses `text` and compiles program `name`; empty on failure (the
  /// diagnostics are in `diagnostics`).
  std::optional<rt::Program> compile(const std::string &text,
                                     llvm::StringRef name,
                                     rt::Target target = rt::Target::Trn1) {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(text, &ctx);
    if (!module)
      return std::nullopt;
    auto program = module->lookupSymbol<ncore::ProgramOp>(name);
    if (!program)
      return std::nullopt;
    FailureOr<rt::Program> p = ncore::compileNcoreProgram(program, target);
    if (failed(p))
      return std::nullopt;
    // Emission must survive the file format (the runtime's decoder checks
    // every access pattern against the target's capacities).
    auto back = rt::readProgram(rt::writeProgram(*p));
    EXPECT_TRUE(static_cast<bool>(back)) << back.error();
    return std::move(p); // FailureOr<T> is a std::optional<T>
  }

  rt::LaunchResult run(const rt::Program &p, const rt::TensorMap &inputs,
                       rt::ExecMode mode = rt::ExecMode::Functional) {
    rt::DeviceOptions opts;
    opts.mode = mode;
    rt::Device dev(rt::Profile::builtin(p.target), opts);
    auto id = dev.loadProgram(p);
    EXPECT_TRUE(static_cast<bool>(id)) << id.error();
    auto r = dev.launch(*id, inputs);
    EXPECT_TRUE(static_cast<bool>(r)) << r.error();
    EXPECT_FALSE(r->fault) << (r->fault ? r->fault->str() : "");
    return *r;
  }
};

/// Y[M, N] = W[K, M]^T X[K, N], K tiled by 128 in a loop that accumulates in
/// PSUM, with the K tiles double-buffered (two buffers per operand, the
/// body unrolled by two) so the DMA of the next tile can overlap the matmul.
std::string matmulProgram(const std::string &dt) {
  const std::string &t = dt;
  std::string s = R"(
ncore.program @mm(%w: !ncore.tile<hbm, 1024x128xDT> {ncore.role = "input", ncore.name = "w"},
                  %x: !ncore.tile<hbm, 1024x256xDT> {ncore.role = "input", ncore.name = "x"},
                  %y: !ncore.tile<hbm, 128x256xf32> {ncore.role = "output", ncore.name = "y"}) {
  %w0 = ncore.alloc : !ncore.tile<sbuf, 128x128xDT>
  %x0 = ncore.alloc : !ncore.tile<sbuf, 128x256xDT>
  %w1 = ncore.alloc : !ncore.tile<sbuf, 128x128xDT>
  %x1 = ncore.alloc : !ncore.tile<sbuf, 128x256xDT>
  %acc = ncore.alloc : !ncore.tile<psum, 128x256xf32>
  %o = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.loop %k trips 4 {
    %wv0 = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 256, 0)> : !ncore.tile<hbm, 1024x128xDT> to !ncore.tile<hbm, 128x128xDT>
    %xv0 = ncore.view %x[%k] offsets affine_map<(d0) -> (d0 * 256, 0)> : !ncore.tile<hbm, 1024x256xDT> to !ncore.tile<hbm, 128x256xDT>
    ncore.dma_copy %w0, %wv0 : !ncore.tile<sbuf, 128x128xDT>, !ncore.tile<hbm, 128x128xDT>
    ncore.dma_copy %x0, %xv0 : !ncore.tile<sbuf, 128x256xDT>, !ncore.tile<hbm, 128x256xDT>
    %wv1 = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 256 + 128, 0)> : !ncore.tile<hbm, 1024x128xDT> to !ncore.tile<hbm, 128x128xDT>
    %xv1 = ncore.view %x[%k] offsets affine_map<(d0) -> (d0 * 256 + 128, 0)> : !ncore.tile<hbm, 1024x256xDT> to !ncore.tile<hbm, 128x256xDT>
    ncore.dma_copy %w1, %wv1 : !ncore.tile<sbuf, 128x128xDT>, !ncore.tile<hbm, 128x128xDT>
    ncore.dma_copy %x1, %xv1 : !ncore.tile<sbuf, 128x256xDT>, !ncore.tile<hbm, 128x256xDT>
    ncore.matmul %acc, %w0, %x0 accumulate {start_level = 0 : i64} : !ncore.tile<psum, 128x256xf32>, !ncore.tile<sbuf, 128x128xDT>, !ncore.tile<sbuf, 128x256xDT>
    ncore.matmul %acc, %w1, %x1 accumulate : !ncore.tile<psum, 128x256xf32>, !ncore.tile<sbuf, 128x128xDT>, !ncore.tile<sbuf, 128x256xDT>
  }
  ncore.tensor_copy %o, %acc : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<psum, 128x256xf32>
  ncore.dma_copy %y, %o : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
}
)";
  size_t pos;
  while ((pos = s.find("DT")) != std::string::npos)
    s.replace(pos, 2, t);
  return s;
}

void checkMatmul(Codegen &, const rt::LaunchResult &r,
                 const std::vector<float> &w, const std::vector<float> &x,
                 double tol) {
  const int kDim = 1024, mDim = 128, nDim = 256;
  std::vector<double> want(mDim * nDim, 0.0);
  for (int m = 0; m < mDim; ++m)
    for (int n = 0; n < nDim; ++n) {
      double s = 0;
      for (int k = 0; k < kDim; ++k)
        s += double(w[k * mDim + m]) * double(x[k * nDim + n]);
      want[m * nDim + n] = s;
    }
  const auto &y = r.outputs.at(0).at("y").data;
  double err = relL2(y, want);
  EXPECT_LE(err, tol);
  std::cout << "  matmul relative L2 error " << err << "\n";
}

} // namespace

TEST_F(Codegen, TiledMatmulKLoopF32) {
  auto p = compile(matmulProgram("f32"), "mm");
  ASSERT_TRUE(p) << diagnostics;
  // The loop stays a loop (the count does not grow with K): one LoopBegin
  // per engine with work inside; DMAs spread over queues in pieces.
  EXPECT_LT(p->instructionCount(), 160u);
  auto w = randomValues(1024 * 128, 1), x = randomValues(1024 * 256, 2);
  rt::TensorMap in{{"w", {{1024, 128}, w}}, {"x", {{1024, 256}, x}}};
  rt::LaunchResult r = run(*p, in);
  checkMatmul(*this, r, w, x, 1e-5);
}

TEST_F(Codegen, TiledMatmulKLoopBf16) {
  auto p = compile(matmulProgram("bf16"), "mm");
  ASSERT_TRUE(p) << diagnostics;
  auto w = randomValues(1024 * 128, 3, true),
       x = randomValues(1024 * 256, 4, true);
  rt::TensorMap in{{"w", {{1024, 128}, w}}, {"x", {{1024, 256}, x}}};
  rt::LaunchResult r = run(*p, in);
  checkMatmul(*this, r, w, x, 1e-2);
}

TEST_F(Codegen, TimingOnlyMatchesFunctionalAndEnginesOverlap) {
  auto p = compile(matmulProgram("bf16"), "mm");
  ASSERT_TRUE(p) << diagnostics;
  auto w = randomValues(1024 * 128, 5, true),
       x = randomValues(1024 * 256, 6, true);
  rt::TensorMap in{{"w", {{1024, 128}, w}}, {"x", {{1024, 256}, x}}};
  rt::LaunchResult f = run(*p, in, rt::ExecMode::Functional);
  rt::LaunchResult t = run(*p, in, rt::ExecMode::TimingOnly);
  EXPECT_TRUE(f.timeline == t.timeline);
  EXPECT_EQ(f.timeline.totalNs, t.timeline.totalNs);
  // Some DMA transfer runs while a matmul runs: the double-buffered loads
  // of the next K tiles overlap the tensor engine.
  bool overlap = false;
  for (const rt::TimelineEvent &d : f.timeline.events) {
    if (d.engine != rt::Engine::Dma)
      continue;
    for (const rt::TimelineEvent &m : f.timeline.events)
      if (m.engine == rt::Engine::Tensor && d.startNs < m.endNs &&
          m.startNs < d.endNs)
        overlap = true;
  }
  EXPECT_TRUE(overlap);
  std::cout << "  matmul device time " << f.timeline.totalNs << " ns\n";
}

TEST_F(Codegen, ActivationAndVectorOps) {
  const char *text = R"(
ncore.program @act(%x: !ncore.tile<hbm, 128x512xf32> {ncore.name = "x"},
                   %y: !ncore.tile<hbm, 128x512xf32> {ncore.role = "output", ncore.name = "y"},
                   %s: !ncore.tile<hbm, 128x1xf32> {ncore.role = "output", ncore.name = "s"}) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %sum = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
  ncore.activation exp %b, %a reduce %sum {scale = 0.5 : f32, bias = 0.25 : f32}
      : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
  ncore.tensor_tensor add %b, %b, %a : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  ncore.tensor_scalar multiply %b, %b imm 3.0 : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  ncore.dma_copy %y, %b : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
  ncore.dma_copy %s, %sum : !ncore.tile<hbm, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
}
)";
  auto p = compile(text, "act");
  ASSERT_TRUE(p) << diagnostics;
  auto x = randomValues(128 * 512, 7);
  rt::LaunchResult r = run(*p, {{"x", {{128, 512}, x}}});
  std::vector<double> y(x.size()), s(128, 0.0);
  for (int i = 0; i < 128; ++i)
    for (int j = 0; j < 512; ++j) {
      double e = std::exp(0.5 * x[i * 512 + j] + 0.25);
      s[i] += e;
      y[i * 512 + j] = 3.0 * (e + x[i * 512 + j]);
    }
  EXPECT_LE(relL2(r.outputs.at(0).at("y").data, y), 1e-5);
  EXPECT_LE(relL2(r.outputs.at(0).at("s").data, s), 1e-5);
}

TEST_F(Codegen, DmaRoundTripStridedViews) {
  // Every other row of x, columns 16..47, in two loop iterations of 64 rows
  // each; written back transposed-free into y, then y's halves swapped
  // through a second strided store into z.
  const char *text = R"(
ncore.program @dma(%x: !ncore.tile<hbm, 256x64xbf16> {ncore.name = "x"},
                   %y: !ncore.tile<hbm, 128x32xbf16> {ncore.role = "output", ncore.name = "y"},
                   %z: !ncore.tile<hbm, 64x64xbf16> {ncore.role = "output", ncore.name = "z"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 64x32xbf16>
  %u = ncore.alloc : !ncore.tile<sbuf, 64x64xbf16>
  ncore.loop %i trips 2 {
    %xv = ncore.view %x[%i] offsets affine_map<(d0) -> (d0 * 128 + 1, 16)> strides [2, 1]
        : !ncore.tile<hbm, 256x64xbf16> to !ncore.tile<hbm, 64x32xbf16>
    ncore.dma_copy %t, %xv : !ncore.tile<sbuf, 64x32xbf16>, !ncore.tile<hbm, 64x32xbf16>
    %yv = ncore.view %y[%i] offsets affine_map<(d0) -> (d0 * 64, 0)>
        : !ncore.tile<hbm, 128x32xbf16> to !ncore.tile<hbm, 64x32xbf16>
    ncore.dma_copy %yv, %t : !ncore.tile<hbm, 64x32xbf16>, !ncore.tile<sbuf, 64x32xbf16>
    %uv = ncore.view %u[%i] offsets affine_map<(d0) -> (0, 32 - d0 * 32)>
        : !ncore.tile<sbuf, 64x64xbf16> to !ncore.tile<sbuf, 64x32xbf16>
    ncore.dma_copy %uv, %t : !ncore.tile<sbuf, 64x32xbf16>, !ncore.tile<sbuf, 64x32xbf16>
  }
  ncore.dma_copy %z, %u : !ncore.tile<hbm, 64x64xbf16>, !ncore.tile<sbuf, 64x64xbf16>
}
)";
  auto p = compile(text, "dma");
  ASSERT_TRUE(p) << diagnostics;
  auto x = randomValues(256 * 64, 8, true);
  rt::LaunchResult r = run(*p, {{"x", {{256, 64}, x}}});
  std::vector<double> y(128 * 32), z(64 * 64);
  for (int i = 0; i < 2; ++i)
    for (int r0 = 0; r0 < 64; ++r0)
      for (int c = 0; c < 32; ++c) {
        double v = x[(i * 128 + 1 + 2 * r0) * 64 + 16 + c];
        y[(i * 64 + r0) * 32 + c] = v;
        z[r0 * 64 + (32 - i * 32) + c] = v;
      }
  // Pure data movement: exact.
  EXPECT_EQ(relL2(r.outputs.at(0).at("y").data, y), 0.0);
  EXPECT_EQ(relL2(r.outputs.at(0).at("z").data, z), 0.0);
}

namespace {
const char *kCallText = R"(
ncore.program private @twice(%i: !ncore.tile<hbm, 128x64xf32> {ncore.name = "in"},
                             %o: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output", ncore.name = "out"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %tmp = ncore.alloc {name = "tmp"} : !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.tensor_scalar multiply %t, %t imm 2.0 : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %tmp, %t : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %o, %tmp : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
ncore.program @caller(%x: !ncore.tile<hbm, 128x64xf32> {ncore.name = "x"},
                      %y: !ncore.tile<hbm, 256x64xf32> {ncore.role = "output", ncore.name = "y"}) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %s = ncore.alloc {name = "s"} : !ncore.tile<hbm, 128x64xf32>
  %s2 = ncore.alloc {name = "s2"} : !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.activation exp %a, %a : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %s, %a : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.call_kernel @twice(%s, %s2) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  %y1 = ncore.view %y offsets affine_map<() -> (128, 0)> : !ncore.tile<hbm, 256x64xf32> to !ncore.tile<hbm, 128x64xf32>
  ncore.call_kernel @twice(%s2, %y1) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %a, %y1 : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.tensor_scalar add %a, %a imm 1.0 : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  %y0 = ncore.view %y offsets affine_map<() -> (0, 0)> : !ncore.tile<hbm, 256x64xf32> to !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %y0, %a : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}
)";
} // namespace

TEST_F(Codegen, CallKernelInlinedBehindBarriers) {
  auto p = compile(kCallText, "caller");
  ASSERT_TRUE(p) << diagnostics;
  // The callee's scratch became caller bindings (once per call).
  EXPECT_TRUE(p->findBinding("twice.tmp").has_value());
  auto x = randomValues(128 * 64, 9);
  rt::LaunchResult r = run(*p, {{"x", {{128, 64}, x}}});
  std::vector<double> y(256 * 64);
  for (int i = 0; i < 128 * 64; ++i) {
    double e4 = 4.0 * std::exp(double(x[i]));
    y[128 * 64 + i] = e4;
    y[i] = e4 + 1.0;
  }
  EXPECT_LE(relL2(r.outputs.at(0).at("y").data, y), 1e-5);
  // Nothing runs across a call: every callee instruction starts after the
  // last caller instruction before the call has ended, on any engine.
  rt::LaunchResult t =
      run(*p, {{"x", {{128, 64}, x}}}, rt::ExecMode::TimingOnly);
  EXPECT_TRUE(r.timeline == t.timeline);
}

TEST_F(Codegen, PhaseTimingsCoverCalleesOnce) {
  // Behaviour of the optional CodegenTimings, not speed: every phase is
  // clocked, the called kernel program is prepared with its caller (once),
  // and an already scheduled program only pays emission again.
  module = parseSourceString<ModuleOp>(kCallText, &ctx);
  ASSERT_TRUE(module);
  auto program = module->lookupSymbol<ncore::ProgramOp>("caller");
  ASSERT_TRUE(program);
  ncore::CodegenTimings t;
  ASSERT_TRUE(
      succeeded(ncore::compileNcoreProgram(program, rt::Target::Trn1, {}, &t)));
  EXPECT_EQ(t.programsPrepared, 2u);
  EXPECT_GT(t.allocateNs, 0);
  EXPECT_GT(t.scheduleNs, 0);
  EXPECT_GT(t.doubleBufferNs, 0);
  EXPECT_GT(t.emitNs, 0);
  EXPECT_DOUBLE_EQ(t.totalNs(),
                   t.doubleBufferNs + t.allocateNs + t.scheduleNs + t.emitNs);
  ncore::CodegenTimings again = t;
  ASSERT_TRUE(succeeded(
      ncore::compileNcoreProgram(program, rt::Target::Trn1, {}, &again)));
  EXPECT_EQ(again.programsPrepared, 2u);
  EXPECT_EQ(again.allocateNs, t.allocateNs);
  EXPECT_EQ(again.scheduleNs, t.scheduleNs);
  EXPECT_GT(again.emitNs, t.emitNs);
}

TEST_F(Codegen, CallOfDeclarationIsAnError) {
  const char *text = R"(
ncore.program private @ext(!ncore.tile<hbm, 128x64xf32>)
ncore.program @c(%x: !ncore.tile<hbm, 128x64xf32>) {
  ncore.call_kernel @ext(%x) : !ncore.tile<hbm, 128x64xf32>
}
)";
  EXPECT_FALSE(compile(text, "c"));
  EXPECT_NE(diagnostics.find("calls @ext, which is only a declaration"),
            std::string::npos)
      << diagnostics;
}

TEST_F(Codegen, UnallocatedTileIsAnErrorNotACrash) {
  const char *text = R"(
ncore.program @u(%x: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
)";
  module = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(module);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  auto program = module->lookupSymbol<ncore::ProgramOp>("u");
  EXPECT_TRUE(failed(ncore::emitProgram(program, rt::Target::Trn1)));
  EXPECT_NE(diagnostics.find("run ncore-allocate"), std::string::npos);
}

TEST_F(Codegen, DoubleBufferedKLoopIsExactAndFaster) {
  // One weight tile refilled by DMA in an odd K loop (5 iterations):
  // compileNcoreProgram double-buffers it (ncore-double-buffer).
  const char *text = R"(
ncore.program @db(%w: !ncore.tile<hbm, 640x128xbf16> {ncore.role = "input", ncore.name = "w"},
                  %x: !ncore.tile<hbm, 640x512xbf16> {ncore.role = "input", ncore.name = "x"},
                  %y: !ncore.tile<hbm, 128x512xf32> {ncore.role = "output", ncore.name = "y"}) {
  %xt = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  %wt = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %acc = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %o = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  ncore.loop %k trips 5 {
    %wv = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 640x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
    ncore.dma_copy %wt, %wv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
    %xv = ncore.view %x[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 640x512xbf16> to !ncore.tile<hbm, 128x512xbf16>
    ncore.dma_copy %xt, %xv : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<hbm, 128x512xbf16>
    ncore.matmul %acc, %wt, %xt accumulate {start_level = 0 : i64} : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
  }
  ncore.tensor_copy %o, %acc : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
  ncore.dma_copy %y, %o : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}
)";
  auto w = randomValues(640 * 128, 11, true),
       x = randomValues(640 * 512, 12, true);
  rt::TensorMap in{{"w", {{640, 128}, w}}, {"x", {{640, 512}, x}}};
  std::vector<double> want(128 * 512, 0.0);
  for (int m = 0; m < 128; ++m)
    for (int n = 0; n < 512; ++n) {
      double s = 0;
      for (int k = 0; k < 640; ++k)
        s += double(w[k * 128 + m]) * double(x[k * 512 + n]);
      want[m * 512 + n] = s;
    }
  auto p = compile(text, "db");
  ASSERT_TRUE(p) << diagnostics;
  rt::LaunchResult r = run(*p, in);
  EXPECT_LE(relL2(r.outputs.at(0).at("y").data, want), 1e-5);

  // The same program with one buffer per tile (no ncore-double-buffer).
  module = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(module);
  auto prog = module->lookupSymbol<ncore::ProgramOp>("db");
  PassManager pm(&ctx, ncore::ProgramOp::getOperationName());
  pm.addPass(ncore::createNcoreAllocate());
  pm.addPass(ncore::createNcoreAssignEngines());
  pm.addPass(ncore::createNcoreSchedule());
  ASSERT_TRUE(succeeded(pm.run(prog)));
  auto single = ncore::emitProgram(prog, rt::Target::Trn1);
  ASSERT_TRUE(succeeded(single));
  rt::LaunchResult s = run(*single, in);
  EXPECT_LE(relL2(s.outputs.at(0).at("y").data, want), 1e-5);
  std::cout << "  K loop: one buffer " << s.timeline.totalNs
            << " ns, two buffers " << r.timeline.totalNs << " ns\n";
  EXPECT_LT(r.timeline.totalNs, s.timeline.totalNs);
}

namespace {
/// A program of `loops` loops, each copying %a into %o on the Vector engine
/// (valid). `bad` names the error put into loop `at`, or at the top level
/// after it: "copy" (a nested tensor_copy writes PSUM from the Scalar
/// engine), "nested-dominance" (a nested op reads a tile allocated after
/// the loop), "top-dominance" (a top-level copy reads that tile too).
std::string manyLoops(int loops, const std::string &bad, int at) {
  std::ostringstream os;
  os << "ncore.program @many() {\n"
        "  %a = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>\n"
        "  %o = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>\n"
        "  %p = ncore.alloc : !ncore.tile<psum, 128x64xf32>\n";
  const char *copy = "ncore.tensor_copy %o, %a : !ncore.tile<sbuf, "
                     "128x64xf32>, !ncore.tile<sbuf, 128x64xf32>\n";
  for (int i = 0; i < loops; ++i) {
    os << "  ncore.loop %i" << i << " trips 2 {\n    " << copy;
    if (i == at && bad == "copy")
      os << "    ncore.tensor_copy %p, %a on scalar : !ncore.tile<psum, "
            "128x64xf32>, !ncore.tile<sbuf, 128x64xf32>\n";
    if (i == at && bad == "nested-dominance")
      os << "    ncore.tensor_copy %o, %late : !ncore.tile<sbuf, 128x64xf32>, "
            "!ncore.tile<sbuf, 128x64xf32>\n";
    os << "  }\n";
    if (i == at && bad == "top-dominance")
      os << "  ncore.tensor_copy %o, %late : !ncore.tile<sbuf, 128x64xf32>, "
            "!ncore.tile<sbuf, 128x64xf32>\n";
  }
  os << "  %late = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>\n}\n";
  return os.str();
}
} // namespace

// verifyOnThreads (seam-run's check of the lowered IR) must accept what
// mlir::verify accepts and refuse, with the same message, what it refuses:
// an op invalid deep in a loop, a nested use and a top-level use that their
// definition does not dominate. 400 loops make several chunks of work, and
// the errors sit in a late one.
TEST_F(Codegen, VerifyOnThreadsAgreesWithTheVerifier) {
  ASSERT_TRUE(ctx.isMultithreadingEnabled());
  for (std::string bad : {"", "copy", "nested-dominance", "top-dominance"}) {
    SCOPED_TRACE(bad.empty() ? "valid" : bad);
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(
        manyLoops(400, bad, 333),
        ParserConfig(&ctx, /*verifyAfterParse=*/false));
    ASSERT_TRUE(m);
    std::string serial, threaded;
    bool serialOk, threadedOk;
    {
      ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
        serial += d.str() + "\n";
        return success();
      });
      serialOk = succeeded(mlir::verify(*m));
    }
    {
      ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
        threaded += d.str() + "\n";
        return success();
      });
      threadedOk = succeeded(ncore::verifyOnThreads(*m));
    }
    EXPECT_EQ(serialOk, bad.empty()) << serial;
    EXPECT_EQ(threadedOk, serialOk);
    EXPECT_EQ(threaded, serial);
  }
}
