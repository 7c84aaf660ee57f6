//===- TimingTest.cpp - Cost formulas and timeline behaviour --------------===//
//
// Expected values restate the formulas of shared/reference/hardware.md
// "Instruction costs" with the profile's constants.
//
//===----------------------------------------------------------------------===//

#include "runtime/Timing.h"
#include "TestUtil.h"

using namespace seam::rt;
using namespace seam::rt::test;

namespace {
const Profile &trn1() { return Profile::builtin(Target::Trn1); }
AccessPattern tile(uint32_t n, DType t = DType::F32, uint32_t p = 128) {
  return sbufTile(t, 0, p, 0, n);
}
double cycles(const Instruction &i) { return instructionCycles(i, trn1()); }
} // namespace

TEST(TimingCost, FormulasPerInstruction) {
  for (uint32_t n : {1u, 32u, 64u, 65u, 512u, 2048u}) {
    double elems = n;
    auto act = isa::activation(tile(n), tile(n), ActFunc::Exp);
    EXPECT_EQ(cycles(act), std::max(64.0, elems));
    act.withReduce(tile(1));
    EXPECT_EQ(cycles(act), std::max(64.0, elems) + 64);
    EXPECT_EQ(cycles(isa::tensorScalar(tile(n), tile(n), AluOp::Add, 1)),
              std::max(64.0, elems));
    EXPECT_EQ(cycles(isa::tensorCopy(tile(n), tile(n))), std::max(64.0, elems));
    EXPECT_EQ(cycles(isa::memset(tile(n), 0)), std::max(64.0, elems));
    EXPECT_EQ(cycles(isa::tensorTensor(tile(n), tile(n), tile(n), AluOp::Max)),
              std::max(64.0, 2 * elems));
    EXPECT_EQ(cycles(isa::tensorTensor(tile(n), tile(n), psumTile(0, 128, 0, n),
                                       AluOp::Max)),
              std::max(64.0, elems));
    auto bf = tile(n, DType::BF16);
    EXPECT_EQ(cycles(isa::tensorTensor(bf, bf, bf, AluOp::Add)),
              std::max(64.0, elems));
    EXPECT_EQ(cycles(isa::tensorTensor(bf, bf, bf, AluOp::Max)),
              std::max(64.0, 2 * elems));
    EXPECT_EQ(cycles(isa::tensorReduce(tile(1), tile(n), AluOp::Add)), elems);
    EXPECT_EQ(cycles(isa::tensorReduce(tile(1), bf, AluOp::Max)), elems / 2);
    EXPECT_EQ(cycles(isa::reciprocal(tile(n), tile(n))),
              std::max(64.0, 8 * elems));
    // scalar_tensor_tensor: estimated as tensor_tensor (TimingCost.cpp).
    auto stt =
        isa::make(Opcode::ScalarTensorTensor, {tile(n), tile(n), tile(n)});
    stt.alu = AluOp::Multiply;
    EXPECT_EQ(cycles(stt), std::max(64.0, 2 * elems));
    EXPECT_EQ(cycles(isa::make(Opcode::ScalarTensorTensor, {bf, bf, bf})),
              std::max(64.0, elems));
    // tensor_tensor_scan: estimated as tensor_tensor (TimingCost.cpp).
    auto scan =
        isa::make(Opcode::TensorTensorScan, {tile(n), tile(n), tile(n)});
    scan.secondOp = true;
    EXPECT_EQ(cycles(scan), std::max(64.0, 2 * elems));
    EXPECT_EQ(cycles(isa::iota(tile(n), 0, 0, 1)), 150 + elems);
    EXPECT_EQ(
        cycles(isa::affineSelect(tile(n), tile(n), AluOp::IsGe, 0, 0, 0, 0)),
        150 + elems);
  }
}

TEST(TimingCost, MatmulIssueRateAndLatency) {
  for (uint32_t m : {16u, 64u, 128u})
    for (uint32_t n : {1u, 32u, 128u, 512u}) {
      auto mmBf16 = isa::matmul(psumTile(0, m, 0, n), tile(m, DType::BF16),
                                tile(n, DType::BF16), false);
      double issue = std::max(std::min(64.0, double(m)), double(n));
      EXPECT_EQ(cycles(mmBf16), issue);
      auto mmF32 = isa::matmul(psumTile(0, m, 0, n), tile(m), tile(n), false);
      EXPECT_EQ(cycles(mmF32), 4 * issue);
      InstructionCost c = instructionCost(mmBf16, trn1());
      EXPECT_DOUBLE_EQ(c.busyNs, issue / 2.8);
      EXPECT_DOUBLE_EQ(c.latencyNs, (issue + 64) / 2.8);
    }
  // Transpose of [128 x 32] bf16: stationary N=32, moving N=128 partitions.
  EXPECT_EQ(cycles(isa::transpose(psumTile(0, 32, 0, 128),
                                  sbufTile(DType::BF16, 0, 128, 0, 32))),
            128);
}

TEST(TimingCost, EngineClocksFromProfiles) {
  auto act = isa::activation(tile(1000), tile(1000), ActFunc::Exp);
  EXPECT_DOUBLE_EQ(instructionCost(act, trn1()).busyNs, 1000 / 1.4);
  EXPECT_DOUBLE_EQ(instructionCost(act, Profile::builtin(Target::Trn2)).busyNs,
                   1000 / 1.2);
  auto tt = isa::tensorTensor(tile(1000), tile(1000), tile(1000), AluOp::Add);
  EXPECT_DOUBLE_EQ(instructionCost(tt, trn1()).busyNs, 2000 / 1.12);
  EXPECT_DOUBLE_EQ(dmaDurationNs(17000, 17, trn1()), 1300 + 1000);
}

namespace {
/// DMA in -> activation -> DMA out on one tile of [128 x n] f32.
Program actProgram(uint32_t n, uint32_t loops = 1) {
  ProgramBuilder b("act", Target::Trn1);
  uint32_t x = b.addBinding("x", {128, n}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {128, n}, DType::F32, BindingRole::Output);
  AccessPattern in = sbufTile(DType::F32, 0, 128, 0, n);
  AccessPattern o = sbufTile(DType::F32, 0, 128, 4 * n, n);
  b.emit(isa::dmaCopy(in, b.hbm(x, 0, 128, n, {{n, 1}})).signal(0));
  b.loopBegin(Engine::Scalar, loops);
  b.emit(isa::activation(o, in, ActFunc::Exp).waitFor(0, 1).signal(1));
  b.loopEnd(Engine::Scalar);
  b.emit(isa::dmaCopy(b.hbm(y, 0, 128, n, {{n, 1}}), o).waitFor(1, loops));
  return b.take();
}
} // namespace

TEST(Timeline, SemaphoresSerialiseDmaComputeDma) {
  const uint32_t n = 256;
  Device dev(trn1());
  auto r =
      dev.launch(*dev.loadProgram(actProgram(n)),
                 TensorMap{{"x", {{128, n}, std::vector<float>(128 * n)}}});
  ASSERT_TRUE(r->ok());
  double dma = 1300 + 128.0 * n * 4 / 17;
  double act = std::max(64.0, double(n)) / 1.4;
  EXPECT_DOUBLE_EQ(r->timeline.totalNs, dma + act + dma);
  const auto &ev = r->timeline.events;
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[1].op, Opcode::Activation);
  EXPECT_DOUBLE_EQ(ev[1].startNs, dma); // SE stalled until the DMA signalled
  EXPECT_DOUBLE_EQ(ev[2].startNs, dma + act);
  EXPECT_EQ(r->timeline.cores[0].dmaBytes, 2u * 128 * n * 4);
}

namespace {
/// The Vector engine sets a large tile and signals semaphore 1; a loop of
/// two activations on the Scalar engine waits for semaphore 1 >= 1 in each
/// iteration, `carried` (holds in iteration 0) or not.
Program carriedWaitProgram(bool carried) {
  ProgramBuilder b("carried", Target::Trn1);
  uint32_t y = b.addBinding("y", {128, 64}, DType::F32, BindingRole::Output);
  AccessPattern big = sbufTile(DType::F32, 0, 128, 0, 8192);
  AccessPattern t = sbufTile(DType::F32, 0, 128, 4 * 8192, 64);
  b.emit(isa::memset(big, 1.0f).onEngine(Engine::Vector).signal(1));
  b.loopBegin(Engine::Scalar, 2);
  Instruction act = isa::activation(t, t, ActFunc::Exp);
  act.waitFor(1, 1);
  act.waits.back().carried = carried ? 1 : 0;
  b.emit(act.signal(2));
  b.loopEnd(Engine::Scalar);
  b.emit(isa::dmaCopy(b.hbm(y, 0, 128, 64, {{64, 1}}), t).waitFor(2, 2));
  return b.take();
}
} // namespace

TEST(Timeline, CarriedWaitHoldsInTheFirstIterationOnly) {
  for (bool carried : {false, true}) {
    SCOPED_TRACE(carried ? "carried" : "not carried");
    Device dev(trn1());
    auto r =
        dev.launch(*dev.loadProgram(carriedWaitProgram(carried)), TensorMap{});
    ASSERT_TRUE(r->ok());
    double memsetEnd = -1;
    std::vector<double> acts;
    for (const TimelineEvent &e : r->timeline.events) {
      if (e.op == Opcode::Memset)
        memsetEnd = e.endNs;
      if (e.op == Opcode::Activation)
        acts.push_back(e.startNs);
    }
    ASSERT_GT(memsetEnd, 0);
    ASSERT_EQ(acts.size(), 2u);
    // Iteration 0 waits for the memset only when the wait is not carried;
    // iteration 1 always does.
    if (carried)
      EXPECT_LT(acts[0], memsetEnd);
    else
      EXPECT_GE(acts[0], memsetEnd);
    EXPECT_GE(acts[1], memsetEnd);
  }
}

TEST(Timeline, LoopsTimeEveryIterationWithoutUnrolling) {
  Program p = actProgram(64, 10);
  EXPECT_EQ(p.instructionCount(), 5u);
  Device dev(trn1(), {ExecMode::TimingOnly});
  auto r = dev.launch(*dev.loadProgram(p));
  double dma = 1300 + 128.0 * 64 * 4 / 17;
  EXPECT_DOUBLE_EQ(r->timeline.totalNs, 2 * dma + 10 * 64 / 1.4);
  EXPECT_EQ(r->timeline.cores[0].instructions[unsigned(Engine::Scalar)], 10u);
}

TEST(Timeline, DmaQueuesRoundRobinAndHbmContention) {
  // 4 independent 64 KiB loads: on 4 queues they overlap completely.
  auto build = [](unsigned loads) {
    ProgramBuilder b("dma", Target::Trn1);
    uint32_t x = b.addBinding("x", {128, 128}, DType::F32, BindingRole::Input);
    for (unsigned i = 0; i < loads; ++i)
      b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, 128, 512 * i, 128),
                          b.hbm(x, 0, 128, 128, {{128, 1}})));
    return b.take();
  };
  double one = 1300 + 65536.0 / 17;
  {
    Device dev(trn1(), {ExecMode::TimingOnly});
    auto r = dev.launch(*dev.loadProgram(build(4)));
    EXPECT_DOUBLE_EQ(r->timeline.totalNs, one);
    for (int q = 0; q < 4; ++q)
      EXPECT_EQ(r->timeline.events[q].dmaQueue, q);
  }
  {
    // 17 loads on 16 queues: the 17th waits for queue 0.
    Device dev(trn1(), {ExecMode::TimingOnly});
    auto r = dev.launch(*dev.loadProgram(build(17)));
    EXPECT_DOUBLE_EQ(r->timeline.totalNs, 2 * one);
  }
  {
    // HBM bandwidth shared: with only 34 B/ns per chip, two overlapping
    // transfers get 17 B/ns each and the third gets 34/3.
    Profile p = trn1();
    ASSERT_TRUE(p.set("hbm_bytes_per_ns", 34));
    Device dev(p, {ExecMode::TimingOnly});
    auto r = dev.launch(*dev.loadProgram(build(3)));
    EXPECT_DOUBLE_EQ(r->timeline.events[1].endNs, one);
    EXPECT_DOUBLE_EQ(r->timeline.events[2].endNs, 1300 + 65536.0 / (34.0 / 3));
  }
}

TEST(Timeline, DmaSignalsRetireInIssueOrder) {
  // A 256 KiB load on queue 0, then a 4 KiB load on queue 1 that signals:
  // the small one ends first, but its signal fires only once the large
  // one, issued before it by the same stream, has completed too. The
  // activation waiting for that signal reads what both brought.
  ProgramBuilder b("retire", Target::Trn1);
  uint32_t x = b.addBinding("x", {128, 512}, DType::F32, BindingRole::Input);
  AccessPattern big = sbufTile(DType::F32, 0, 128, 0, 512);
  AccessPattern small = sbufTile(DType::F32, 0, 128, 4 * 512, 8);
  b.emit(isa::dmaCopy(big, b.hbm(x, 0, 128, 512, {{512, 1}})));
  b.emit(isa::dmaCopy(small, b.hbm(x, 0, 128, 8, {{8, 1}})).signal(4));
  Instruction act = isa::activation(small, big, ActFunc::Exp);
  b.emit(act.waitFor(4, 1));
  Device dev(trn1(), {ExecMode::TimingOnly});
  auto r = dev.launch(*dev.loadProgram(b.take()));
  ASSERT_TRUE(r->ok());
  const auto &ev = r->timeline.events;
  ASSERT_EQ(ev.size(), 3u);
  double bigEnd = 1300 + 262144.0 / 17, smallEnd = 1300 + 4096.0 / 17;
  EXPECT_DOUBLE_EQ(ev[0].endNs, bigEnd);
  EXPECT_DOUBLE_EQ(ev[1].endNs, smallEnd);
  EXPECT_EQ(ev[1].dmaQueue, 1);
  EXPECT_EQ(ev[2].op, Opcode::Activation);
  EXPECT_DOUBLE_EQ(ev[2].startNs, bigEnd);
}

TEST(Timeline, TwoCoresShareChipHbm) {
  // Same program on 2 ranks of one trn1 chip: with HBM limited to one
  // queue's bandwidth, the cores' transfers slow each other down.
  ProgramBuilder b("two", Target::Trn1);
  uint32_t x = b.addBinding("x", {128, 128}, DType::F32, BindingRole::Input);
  b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, 128, 0, 128),
                      b.hbm(x, 0, 128, 128, {{128, 1}})));
  Program prog = b.take();
  Profile p = trn1();
  p.set("hbm_bytes_per_ns", 17);
  DeviceOptions opts{ExecMode::TimingOnly};
  Device one(p, opts), two(p, opts);
  auto r1 = one.launch(*one.loadProgram(prog, 1));
  auto r2 = two.launch(*two.loadProgram(prog, 2));
  EXPECT_DOUBLE_EQ(r1->timeline.totalNs, 1300 + 65536.0 / 17);
  EXPECT_DOUBLE_EQ(r2->timeline.totalNs, 1300 + 65536.0 / 8.5);
}
