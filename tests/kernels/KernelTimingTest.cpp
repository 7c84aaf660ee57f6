//===- KernelTimingTest.cpp - simulated kernel times (timing-only) --------===//
//
// Not accuracy tests: figures for the benchmark note, printed as
// they come out of the timing model (trn2, timing-only mode, compiled by the
// real codegen). The only checks are that the runs succeed.
//   - Tensor Engine utilization of the 128-point DFT matmul: useful matmul
//     FLOPs / (TE busy time x TE peak), and / (device time x peak).
//   - device time of each FFT size, and of the FNet kernel on each row of
//     the source's table.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "runtime/Profile.h"

using namespace mlir;
using namespace ::seam::kt;
namespace rt = ::seam::rt;

namespace {

double peakFlopsPerNs(rt::Target target, bool bf16) {
  const rt::Profile &p = rt::Profile::builtin(target);
  double bf = 128.0 * 128.0 * 2.0 * p.teClockGhz;
  return bf16 ? bf : bf / p.matmulFp32Factor;
}

TEST(KernelTiming, Dft128TensorEngineUtilization) {
  for (bool bf : {true, false}) {
    KernelEnv env;
    int64_t batch = 4096;
    mlir::seam::FftParams p;
    p.n = 128;
    p.batch = batch;
    p.dtype = bf ? env.bf16() : env.f32();
    auto prog =
        mlir::seam::buildFftProgram(env.builder, *env.module, "dft128", p);
    ASSERT_TRUE(succeeded(prog));
    auto r = runProgram(*prog, {}, rt::ExecMode::TimingOnly, rt::Target::Trn2);
    ASSERT_TRUE(r.ok) << r.error;
    // Real input: C x and S x, each 128 x 128 x 512.
    double flops = 2.0 * 2.0 * 128 * 128 * batch;
    double peak = peakFlopsPerNs(rt::Target::Trn2, bf);
    std::cout << "[timing] dft128 x" << batch << (bf ? " bf16" : " fp32")
              << ": device " << r.deviceNs / 1e3 << " us, TE busy "
              << r.tensorBusyNs / 1e3 << " us, TE utilization while busy "
              << 100.0 * flops / (r.tensorBusyNs * peak) << "%, over the run "
              << 100.0 * flops / (r.deviceNs * peak) << "%\n";
    EXPECT_GT(r.deviceNs, 0);
  }
}

TEST(KernelTiming, FftSizes) {
  for (int64_t n : {128, 256, 512, 768, 1024, 2048, 4096, 16384}) {
    KernelEnv env;
    mlir::seam::FftParams p;
    p.n = n;
    p.batch = 8;
    p.complexInput = true;
    p.dtype = env.f32();
    auto prog = mlir::seam::buildFftProgram(env.builder, *env.module, "fft", p);
    ASSERT_TRUE(succeeded(prog));
    auto r = runProgram(*prog, {}, rt::ExecMode::TimingOnly, rt::Target::Trn2);
    ASSERT_TRUE(r.ok) << r.error;
    std::cout << "[timing] fft n=" << n << " x8 complex fp32: device "
              << r.deviceNs / 1e3 << " us, TE busy "
              << 100.0 * r.tensorBusyNs / r.deviceNs << "% (" << r.instructions
              << " instructions)\n";
  }
}

TEST(KernelTiming, FourierMixSourceTable) {
  struct Row {
    int64_t b, s, d;
  };
  for (Row row : {Row{1, 128, 512}, Row{1, 128, 768}, Row{1, 256, 768},
                  Row{1, 512, 768}, Row{4, 128, 768}}) {
    KernelEnv env;
    mlir::seam::KernelSignature sig;
    sig.args = {env.tensor({row.b, row.s, row.d}, env.bf16())};
    sig.results = sig.args;
    sig.config = env.builder.getDictionaryAttr({env.builder.getNamedAttr(
        "dims", env.builder.getDenseI64ArrayAttr({1, 2}))});
    auto prog = env.build("fourier-mix", sig);
    ASSERT_TRUE(prog);
    auto r = runProgram(prog, {}, rt::ExecMode::TimingOnly, rt::Target::Trn2);
    ASSERT_TRUE(r.ok) << r.error;
    std::cout << "[timing] fourier-mix (" << row.b << ", " << row.s << ", "
              << row.d << ") bf16 trn2: device " << r.deviceNs / 1e3
              << " us, TE busy " << 100.0 * r.tensorBusyNs / r.deviceNs
              << "%\n";
  }
}

} // namespace
