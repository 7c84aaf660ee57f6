//===- WholeProgramTest.cpp - A tiled matmul + activation program ---------===//
//
// Y[128 x 512] = relu(W^T X), W [256 x 128], X [256 x 512], bf16 operands in
// SBUF, K tiled in 2 with PSUM accumulation, N in 4 chunks (one PSUM bank
// each). Loops stay loops; engines synchronise through semaphores:
//   DMA: load W0 W1 X0 X1 (s0 += 1 each), loop j: store chunk j after s2 > j
//   TE:  loop j, loop k: matmul (start at k = 0) after s0 >= 4; s1 += 1
//   SE:  loop j: relu(PSUM bank j) after s1 >= 2 + 2j; s2 += 1
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "runtime/ProgramFile.h"

using namespace seam::rt;
using namespace seam::rt::test;

namespace {
constexpr uint32_t K = 256, M = 128, N = 512, NC = 128;

Program tiledMatmul(Target target = Target::Trn1) {
  ProgramBuilder b("tiled_matmul_relu", target);
  uint32_t w = b.addBinding("w", {K, M}, DType::F32, BindingRole::Input);
  uint32_t x = b.addBinding("x", {K, N}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {M, N}, DType::F32, BindingRole::Output);
  const int64_t wOff = 0, xOff = 512, yOff = 4096;
  for (uint32_t k = 0; k < 2; ++k)
    b.emit(isa::dmaCopy(sbufTile(DType::BF16, 0, 128, wOff + k * 256, M),
                        b.hbm(w, k * 128 * M, 128, M, {{M, 1}}))
               .signal(0));
  for (uint32_t k = 0; k < 2; ++k)
    b.emit(isa::dmaCopy(sbufTile(DType::BF16, 0, 128, xOff + k * 1024, N),
                        b.hbm(x, k * 128 * N, 128, N, {{N, 1}}))
               .signal(0));

  b.loopBegin(Engine::Tensor, N / NC);
  b.loopBegin(Engine::Tensor, 2);
  Instruction mm = isa::matmul(
      psumTile(0, M, 0, NC).step(0, 512),
      sbufTile(DType::BF16, 0, 128, wOff, M).step(1, 128),
      sbufTile(DType::BF16, 0, 128, xOff, NC).step(0, NC).step(1, 512),
      /*accumulate=*/true);
  mm.startLevel = 1;
  b.emit(mm.waitFor(0, 4).signal(1));
  b.loopEnd(Engine::Tensor);
  b.loopEnd(Engine::Tensor);

  b.loopBegin(Engine::Scalar, N / NC);
  b.emit(isa::activation(sbufTile(DType::F32, 0, M, yOff, NC).step(0, NC),
                         psumTile(0, M, 0, NC).step(0, 512), ActFunc::Relu)
             .waitFor(1, 2, {2})
             .signal(2));
  b.loopEnd(Engine::Scalar);

  b.loopBegin(Engine::Dma, N / NC);
  b.emit(isa::dmaCopy(b.hbm(y, 0, M, N, {{NC, 1}}).step(0, NC),
                      sbufTile(DType::F32, 0, M, yOff, NC).step(0, NC))
             .waitFor(2, 1, {1}));
  b.loopEnd(Engine::Dma);
  return b.take();
}

TensorMap inputs(std::vector<float> &w, std::vector<float> &x) {
  w = randomValues(K * M, 5);
  x = randomValues(K * N, 6);
  return {{"w", {{K, M}, w}}, {"x", {{K, N}, x}}};
}
} // namespace

TEST(WholeProgram, TiledMatmulReluNumericsAndOverlap) {
  std::vector<float> w, x;
  TensorMap in = inputs(w, x);
  Device dev(Profile::builtin(Target::Trn1));
  auto id = dev.loadProgram(tiledMatmul());
  ASSERT_TRUE(bool(id)) << id.error();
  auto r = dev.launch(*id, in);
  ASSERT_TRUE(bool(r)) << r.error();
  ASSERT_TRUE(r->ok()) << r->fault->str();

  std::vector<double> want(M * N, 0.0);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t k = 0; k < K; ++k) {
      double a = roundToBf16(w[k * M + m]);
      for (uint32_t n = 0; n < N; ++n)
        want[m * N + n] += a * roundToBf16(x[k * N + n]);
    }
  for (double &v : want)
    v = std::max(v, 0.0);
  EXPECT_LT(relL2(r->outputs[0]["y"].data, want), 1e-5);

  // Engine overlap: SE works on chunk j while TE multiplies chunk j+1.
  const Timeline &t = r->timeline;
  std::vector<TimelineEvent> te, se;
  for (const TimelineEvent &e : t.events)
    (e.engine == Engine::Tensor ? te : se).push_back(e);
  se.erase(std::remove_if(se.begin(), se.end(),
                          [](auto &e) { return e.engine != Engine::Scalar; }),
           se.end());
  ASSERT_EQ(te.size(), 8u);
  ASSERT_EQ(se.size(), 4u);
  EXPECT_LT(se[0].startNs, te[3].endNs);
  EXPECT_GT(se[0].endNs, te[2].startNs);
  const CoreTimingStats &c = t.cores[0];
  double busy = c.busyNs[unsigned(Engine::Tensor)] +
                c.busyNs[unsigned(Engine::Scalar)] + c.dmaQueueBusyNs;
  EXPECT_LT(t.totalNs, busy);
  EXPECT_EQ(c.instructions[unsigned(Engine::Tensor)], 8u);
  EXPECT_EQ(c.instructions[unsigned(Engine::Dma)], 8u);
  EXPECT_EQ(c.dmaBytes, uint64_t(K * M + K * N) * 2 + uint64_t(M * N) * 4);
}

// The longest idle stretch the simulator keeps per engine is the largest
// gap of that engine's events (from the launch's start, between them, to
// the launch's end), and names what ended it: here the Tensor engine's
// first matmul, held by the DMA transfers that bring its operands.
TEST(WholeProgram, LongestIdleStretchIsTheLargestGapAndNamesItsWait) {
  std::vector<float> w, x;
  TensorMap in = inputs(w, x);
  Device dev(Profile::builtin(Target::Trn1));
  Program program = tiledMatmul();
  auto r = dev.launch(*dev.loadProgram(program), in);
  ASSERT_TRUE(bool(r)) << r.error();
  ASSERT_TRUE(r->ok()) << r->fault->str();
  const Timeline &t = r->timeline;
  for (Engine e : {Engine::Tensor, Engine::Scalar}) {
    std::vector<TimelineEvent> ev;
    for (const TimelineEvent &x : t.events)
      if (x.engine == e && x.dmaQueue < 0)
        ev.push_back(x);
    ASSERT_FALSE(ev.empty());
    double last = 0, gap = 0, from = 0;
    int64_t resumed = -1;
    for (const TimelineEvent &x : ev) {
      if (x.startNs - last > gap) {
        gap = x.startNs - last;
        from = last;
        resumed = x.index;
      }
      last = x.endNs;
    }
    if (t.totalNs - last > gap) {
      gap = t.totalNs - last;
      from = last;
      resumed = -1;
    }
    const IdleStretch &st = t.cores[0].longestIdle[unsigned(e)];
    EXPECT_DOUBLE_EQ(st.ns(), gap) << name(e);
    EXPECT_DOUBLE_EQ(st.fromNs, from) << name(e);
    EXPECT_EQ(st.resumedPc, resumed) << name(e);
  }
  const IdleStretch &te = t.cores[0].longestIdle[unsigned(Engine::Tensor)];
  ASSERT_GE(te.resumedPc, 0);
  EXPECT_EQ(te.fromNs, 0.0);
  EXPECT_EQ(program.streams[unsigned(Engine::Tensor)][te.resumedPc].op,
            Opcode::Matmul);
  EXPECT_TRUE(te.waitedDma);
  EXPECT_GE(te.waitedPc, 0);
}

TEST(WholeProgram, TimingOnlyTimelineEqualsFunctional) {
  for (Target target : {Target::Trn1, Target::Trn2}) {
    std::vector<float> w, x;
    TensorMap in = inputs(w, x);
    Program p = tiledMatmul(target);
    Device functional(Profile::builtin(target));
    Device timingOnly(Profile::builtin(target), {ExecMode::TimingOnly});
    auto a = functional.launch(*functional.loadProgram(p), in);
    auto b = timingOnly.launch(*timingOnly.loadProgram(p));
    ASSERT_TRUE(a->ok() && b->ok());
    EXPECT_TRUE(a->timeline == b->timeline) << name(target);
    EXPECT_EQ(a->timeline.events.size(), b->timeline.events.size());
    EXPECT_GT(a->timeline.totalNs, 0);
    EXPECT_TRUE(b->outputs.empty());
  }
}

TEST(WholeProgram, SurvivesTheFileFormat) {
  Program p = tiledMatmul();
  std::vector<uint8_t> bytes = writeProgram(p);
  auto back = readProgram(bytes);
  ASSERT_TRUE(bool(back)) << back.error();
  EXPECT_EQ(writeProgram(*back), bytes);
  std::vector<float> w, x;
  TensorMap in = inputs(w, x);
  Device d1(Profile::builtin(Target::Trn1)), d2(Profile::builtin(Target::Trn1));
  auto r1 = d1.launch(*d1.loadProgram(p), in);
  auto r2 = d2.launch(*d2.loadProgramBytes(bytes), in);
  EXPECT_EQ(r1->outputs[0]["y"].data, r2->outputs[0]["y"].data);
  EXPECT_TRUE(r1->timeline == r2->timeline);
}

// DMAs are triggered from two in-order queues, the DMA engine's and the Sync
// engine's: a store on SYNC that waits for compute holds up no load queued
// on DMA after it (the same store on DMA does), and both run functionally.
TEST(WholeProgram, StoresFromTheSyncQueueDoNotBlockLoads) {
  constexpr uint32_t P = 128, F = 2048;
  constexpr int kChain = 8;
  auto build = [&](Engine storeEngine) {
    ProgramBuilder b("two_dma_queues", Target::Trn2);
    uint32_t x = b.addBinding("x", {P, F}, DType::F32, BindingRole::Input);
    uint32_t z = b.addBinding("z", {P, F}, DType::F32, BindingRole::Input);
    uint32_t y = b.addBinding("y", {P, F}, DType::F32, BindingRole::Output);
    uint32_t v = b.addBinding("v", {P, F}, DType::F32, BindingRole::Output);
    const int64_t xOff = 0, yOff = F * 4, zOff = 2 * F * 4;
    b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, P, xOff, F),
                        b.hbm(x, 0, P, F, {{F, 1}}))
               .signal(0));
    // A dependent chain on the Scalar engine before the store: y = x / 2^8.
    for (int i = 0; i < kChain; ++i) {
      Instruction halve = isa::activation(
          sbufTile(DType::F32, 0, P, yOff, F),
          sbufTile(DType::F32, 0, P, i ? yOff : xOff, F), ActFunc::Identity);
      halve.scale = 0.5f;
      b.emit(halve.waitFor(0, 1).signal(2));
    }
    b.emit(isa::dmaCopy(b.hbm(y, 0, P, F, {{F, 1}}),
                        sbufTile(DType::F32, 0, P, yOff, F))
               .onEngine(storeEngine)
               .waitFor(2, kChain));
    // An independent load, queued after the store when both are on DMA.
    b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, P, zOff, F),
                        b.hbm(z, 0, P, F, {{F, 1}}))
               .signal(4));
    b.emit(isa::dmaCopy(b.hbm(v, 0, P, F, {{F, 1}}),
                        sbufTile(DType::F32, 0, P, zOff, F))
               .onEngine(storeEngine)
               .waitFor(4, 1));
    return b.take();
  };
  std::vector<float> xs = randomValues(P * F, 1), zs = randomValues(P * F, 2);
  TensorMap in = {{"x", {{P, F}, xs}}, {"z", {{P, F}, zs}}};
  for (Engine e : {Engine::Sync, Engine::Dma}) {
    Device dev(Profile::builtin(Target::Trn2));
    auto id = dev.loadProgram(build(e));
    ASSERT_TRUE(bool(id)) << id.error();
    auto r = dev.launch(*id, in);
    ASSERT_TRUE(bool(r)) << r.error();
    ASSERT_TRUE(r->ok()) << r->fault->str();
    std::vector<double> want(xs.begin(), xs.end()), wantV(zs.begin(), zs.end());
    for (double &w : want)
      w /= 256.0;
    EXPECT_LT(relL2(r->outputs[0]["y"].data, want), 1e-6);
    EXPECT_LT(relL2(r->outputs[0]["v"].data, wantV), 1e-6);
    // Transfers that start before the chain ends: with the stores on SYNC
    // the loads of x and z, on one queue only x's.
    double chainEnd = 0;
    for (const TimelineEvent &ev : r->timeline.events)
      if (ev.engine == Engine::Scalar)
        chainEnd = std::max(chainEnd, ev.endNs);
    int early = 0;
    for (const TimelineEvent &ev : r->timeline.events)
      early += ev.dmaQueue >= 0 && ev.startNs < chainEnd;
    EXPECT_EQ(early, e == Engine::Sync ? 2 : 1) << name(e);
  }
}

TEST(WholeProgram, DmaCopyIsLegalOnTheDmaAndSyncQueuesOnly) {
  ProgramBuilder b("dma_on_te", Target::Trn2);
  uint32_t x = b.addBinding("x", {128, 64}, DType::F32, BindingRole::Input);
  b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, 128, 0, 64),
                      b.hbm(x, 0, 128, 64, {{64, 1}}))
             .onEngine(Engine::Tensor));
  Device dev(Profile::builtin(Target::Trn2));
  auto id = dev.loadProgram(b.take());
  ASSERT_FALSE(bool(id));
  EXPECT_NE(id.error().find("dma_copy"), std::string::npos) << id.error();
}
