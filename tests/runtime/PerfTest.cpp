//===- PerfTest.cpp - Emulator speed (measured, loosely bounded) ----------===//
//
// Prints the figures the issue asks for: simulated instructions per wall
// second in timing-only mode, and the functional matmul FLOP rate against
// Eigen's sgemm on the same shapes. Bounds are loose so the suite stays
// robust on a shared machine; the printed numbers are what matters.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <Eigen/Core>
#include <chrono>

using namespace seam::rt;
using namespace seam::rt::test;

namespace {
double seconds(const std::function<void()> &fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// K-tiled matmuls (bf16 128x128 stationary, 512 moving) + SE evacuation,
/// `tiles` output tiles, all in loops.
Program matmulLoop(uint32_t tiles, uint32_t kTiles) {
  ProgramBuilder b("perf", Target::Trn1);
  b.loopBegin(Engine::Tensor, tiles);
  b.loopBegin(Engine::Tensor, kTiles);
  Instruction mm = isa::matmul(psumTile(0, 128, 0, 512),
                               sbufTile(DType::BF16, 0, 128, 0, 128),
                               sbufTile(DType::BF16, 0, 128, 256, 512), true);
  mm.startLevel = 1;
  b.emit(mm.waitFor(1, 0, {1, 0}));
  b.loopEnd(Engine::Tensor);
  b.emit(isa::semSignal(0).onEngine(Engine::Tensor));
  b.loopEnd(Engine::Tensor);
  b.loopBegin(Engine::Scalar, tiles);
  b.emit(isa::activation(sbufTile(DType::F32, 0, 128, 4096, 512),
                         psumTile(0, 128, 0, 512), ActFunc::Identity)
             .waitFor(0, 1, {1})
             .signal(1));
  b.loopEnd(Engine::Scalar);
  return b.take();
}
} // namespace

TEST(Perf, TimingOnlyInstructionsPerSecond) {
  Program p = matmulLoop(20000, 8);
  DeviceOptions opts;
  opts.mode = ExecMode::TimingOnly;
  opts.collectEvents = false;
  opts.cores = 1;
  Device dev(Profile::builtin(Target::Trn1), opts);
  auto id = dev.loadProgram(p);
  ASSERT_TRUE(bool(id)) << id.error();
  Expected<LaunchResult> r = Expected<LaunchResult>::failure("");
  double s = seconds([&] { r = dev.launch(*id); });
  ASSERT_TRUE(r->ok()) << r->fault->str();
  double n = r->timeline.instructionsIssued;
  std::printf("[perf] timing-only: %.0f instructions in %.3f s = %.2f M "
              "instr/s (simulated %.3f ms)\n",
              n, s, n / s / 1e6, r->timeline.totalNs / 1e6);
  EXPECT_GT(n / s, 2e5);
}

TEST(Perf, FunctionalMatmulVsEigen) {
  const uint32_t tiles = 16, kTiles = 4;
  Program p = matmulLoop(tiles, kTiles);
  DeviceOptions opts;
  opts.cores = 1;
  opts.collectEvents = false;
  Device dev(Profile::builtin(Target::Trn1), opts);
  auto id = dev.loadProgram(p);
  Expected<LaunchResult> r = Expected<LaunchResult>::failure("");
  double s = seconds([&] { r = dev.launch(*id); });
  ASSERT_TRUE(r->ok()) << r->fault->str();
  double flops = 2.0 * 128 * 128 * 512 * tiles * kTiles;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(128, 128),
                  bm = Eigen::MatrixXf::Random(128, 512), c(128, 512);
  double e = seconds([&] {
    for (uint32_t i = 0; i < tiles * kTiles; ++i)
      c.noalias() = a.transpose() * bm;
  });
  std::printf("[perf] functional matmul: %.2f GFLOP/s, Eigen sgemm %.2f "
              "GFLOP/s, ratio %.2f\n",
              flops / s / 1e9, flops / e / 1e9, e / s);
  EXPECT_GT(flops / s, 0.0);
}
