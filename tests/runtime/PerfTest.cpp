//===- PerfTest.cpp - The emulator benchmark's programs behave -----------===//
//
// bench/emulator_bench measures emulator speed on the programs of
// bench/EmulatorPrograms.h; this test checks, without timing anything, that
// those programs do what the benchmark says: the GEMM program computes
// X * W, every benchmark shape fits and runs, and timing-only execution
// gives the same timeline as functional execution (so the timing-only rate
// is measured on the same work).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "bench/EmulatorPrograms.h"

using namespace seam::rt;
using namespace seam::rt::test;
using namespace seam::rt::bench;

namespace {
Timeline runTimeline(const Program &p, ExecMode mode, const TensorMap &in) {
  DeviceOptions opts;
  opts.mode = mode;
  opts.cores = 1;
  Device dev(Profile::builtin(p.target), opts);
  auto id = dev.loadProgram(p);
  EXPECT_TRUE(bool(id)) << id.error();
  if (!id)
    return {};
  auto r = dev.launch(*id, mode == ExecMode::Functional ? in : TensorMap{});
  EXPECT_TRUE(bool(r)) << r.error();
  if (!r)
    return {};
  EXPECT_TRUE(r->ok()) << r->fault->str();
  return r->timeline;
}
} // namespace

TEST(Perf, MatmulLoopTimelineSameInBothModes) {
  const uint32_t tiles = 6, kTiles = 3;
  Program p = matmulLoop(tiles, kTiles);
  Timeline f = runTimeline(p, ExecMode::Functional, {});
  Timeline t = runTimeline(p, ExecMode::TimingOnly, {});
  EXPECT_TRUE(f == t);
  EXPECT_EQ(t.instructionsIssued, matmulLoopInstructions(tiles, kTiles));
  ASSERT_EQ(t.cores.size(), 1u);
  EXPECT_EQ(t.cores[0].instructions[unsigned(Engine::Tensor)],
            uint64_t(tiles) * (kTiles + 1));
  EXPECT_EQ(t.cores[0].instructions[unsigned(Engine::Scalar)], tiles);
  EXPECT_GT(t.totalNs, 0);
}

TEST(Perf, GemmProgramComputesXTimesW) {
  // n = 768 takes 384-column tiles, n = 1024 512-column ones.
  for (const GemmShape &s :
       {GemmShape{256, 384, 768, "a"}, GemmShape{128, 256, 1024, "b"}}) {
    SCOPED_TRACE(s.name);
    Program p = gemmProgram(s);
    TensorMap in = gemmInputs(s, 7);
    Device dev(Profile::builtin(Target::Trn1), {ExecMode::Functional, 1});
    auto id = dev.loadProgram(p);
    ASSERT_TRUE(bool(id)) << id.error();
    auto r = dev.launch(*id, in);
    ASSERT_TRUE(bool(r)) << r.error();
    ASSERT_TRUE(r->ok()) << r->fault->str();
    const std::vector<float> &xT = in.at("xT").data, &w = in.at("w").data;
    std::vector<double> want(size_t(s.m) * s.n, 0.0);
    for (uint32_t k = 0; k < s.k; ++k)
      for (uint32_t m = 0; m < s.m; ++m) {
        double a = roundToBf16(xT[size_t(k) * s.m + m]);
        for (uint32_t n = 0; n < s.n; ++n)
          want[size_t(m) * s.n + n] += a * roundToBf16(w[size_t(k) * s.n + n]);
      }
    // y passes through bf16 SBUF: about 2^-9 relative error per element.
    EXPECT_LT(relL2(out(*r, "y"), want), 4e-3);
    uint32_t tiles = (s.m / 128) * (s.n / gemmChunk(s.n));
    EXPECT_EQ(r->timeline.cores[0].instructions[unsigned(Engine::Tensor)],
              uint64_t(tiles) * (s.k / 128 + 1));
    EXPECT_EQ(r->timeline.cores[0].instructions[unsigned(Engine::Dma)], 3u);
  }
}

TEST(Perf, BenchmarkGemmsFitAndRunTimingOnly) {
  Profile trn1 = Profile::builtin(Target::Trn1);
  for (const GemmCase &c : benchmarkGemms()) {
    SCOPED_TRACE(c.shape.name);
    EXPECT_LE(gemmSbufBytes(c.shape), trn1.sbufPartitionBytes);
    Timeline t = runTimeline(gemmProgram(c.shape), ExecMode::TimingOnly, {});
    EXPECT_GT(t.totalNs, 0);
  }
}

TEST(Perf, GemmTimelineSameInBothModes) {
  GemmShape s{256, 384, 768, "small"};
  Program p = gemmProgram(s);
  Timeline f = runTimeline(p, ExecMode::Functional, gemmInputs(s));
  Timeline t = runTimeline(p, ExecMode::TimingOnly, {});
  EXPECT_TRUE(f == t);
  EXPECT_FALSE(t.events.empty());
}
