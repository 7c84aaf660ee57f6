//===- HazardTest.cpp - The hazard checker sees what the functional model can't
//
// Each race below gives the right numbers in the functional model (it runs an
// instruction when it issues) and the wrong ones on a device (a read sees
// only completed writes). The checker must name it; orders the program does
// enforce (semaphores, one engine's in-order stream, disjoint elements of one
// tile) must stay silent.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace seam::rt;
using seam::rt::test::TileProgram;

namespace {
#define EXPECT_HAS(text, part)                                                 \
  EXPECT_NE((text).find(part), std::string::npos) << (text)

struct Outcome {
  LaunchResult result;
  std::string first; ///< the first hazard's line, or ""
};

Outcome run(ProgramBuilder &b, const TensorMap &inputs,
            ExecMode mode = ExecMode::Functional,
            std::optional<bool> check = std::nullopt) {
  Program p = b.take();
  DeviceOptions opts;
  opts.mode = mode;
  opts.cores = 1;
  opts.checkHazards = check;
  Device device(Profile::builtin(p.target), opts);
  auto id = device.loadProgram(p);
  EXPECT_TRUE(bool(id)) << id.error();
  auto res = device.launch(*id, inputs);
  EXPECT_TRUE(bool(res)) << res.error();
  Outcome r{*res, ""};
  if (!r.result.hazards.empty())
    r.first = r.result.hazards.front().str();
  return r;
}

/// x [128, 512] f32 in HBM, loaded into SBUF at 0.
struct Loaded {
  ProgramBuilder b{"race", Target::Trn2};
  TensorMap inputs;
  uint32_t x = 0, y = 0;
  AccessPattern tile = sbufTile(DType::F32, 0, 128, 0, 512);
  Loaded() {
    x = b.addBinding("x", {128, 512}, DType::F32, BindingRole::Input);
    y = b.addBinding("y", {128, 512}, DType::F32, BindingRole::Output);
    inputs["x"] = HostTensor{{128, 512}, test::randomValues(128 * 512, 1)};
  }
  AccessPattern hbmX() { return b.hbm(x, 0, 128, 512, {{512, 1}}); }
  AccessPattern hbmY() { return b.hbm(y, 0, 128, 512, {{512, 1}}); }
};
} // namespace

TEST(Hazard, OrderedProgramHasNone) {
  TileProgram t(Target::Trn2, "ordered");
  AccessPattern a = t.input("a", 128, 512, test::randomValues(128 * 512, 2));
  AccessPattern b = sbufTile(DType::F32, 0, 128, 4096, 512);
  t.add(isa::activation(b, a, ActFunc::Exp));
  t.add(isa::tensorTensor(a, a, b, AluOp::Add));
  t.output("y", a);
  LaunchResult r = t.run();
  EXPECT_FALSE(r.fault) << r.fault->str();
  EXPECT_EQ(r.hazardCount, 0u);
}

TEST(Hazard, ReadBeforeTheLoadCompletesIsRaw) {
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  l.b.emit(isa::memset(sbufTile(DType::F32, 0, 128, 16384, 64), 0.0f));
  // Missing: waitFor(0, 1). The copy issues while the load is in flight.
  AccessPattern out = sbufTile(DType::F32, 0, 128, 8192, 512);
  l.b.emit(isa::tensorCopy(out, l.tile).signal(1));
  l.b.emit(isa::dmaCopy(l.hbmY(), out).waitFor(1, 1));
  Outcome r = run(l.b, l.inputs);
  ASSERT_TRUE(r.result.fault);
  EXPECT_EQ(r.result.hazardCount, 1u);
  EXPECT_HAS(r.result.fault->message, "1 hazard(s)");
  EXPECT_HAS(r.first,
             "RAW in program 'race' core 0 SBUF partitions [0,128) "
             "bytes [0,2048): VE pc 1 (tensor_copy) reads at 0.067 us, "
             "not ordered after DMA pc 0 (dma_copy)'s write (in "
             "flight until 11.998 us)");
}

TEST(Hazard, WaitingForTheLoadIsNotAHazard) {
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  AccessPattern out = sbufTile(DType::F32, 0, 128, 8192, 512);
  l.b.emit(isa::tensorCopy(out, l.tile).waitFor(0, 1).signal(1));
  l.b.emit(isa::dmaCopy(l.hbmY(), out).waitFor(1, 1));
  Outcome r = run(l.b, l.inputs);
  EXPECT_FALSE(r.result.fault) << r.first;
  EXPECT_EQ(r.result.hazardCount, 0u);
}

TEST(Hazard, OverwritingAStoreSourceInFlightIsWar) {
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  l.b.emit(isa::dmaCopy(l.hbmY(), l.tile).waitFor(0, 1).signal(1));
  // The copy reads the tile beside the store (reads do not conflict); then
  // the memset overwrites what the store reads. Missing: waitFor(1, 1).
  l.b.emit(isa::tensorCopy(sbufTile(DType::F32, 0, 128, 8192, 512), l.tile)
               .waitFor(0, 1));
  l.b.emit(isa::memset(sbufTile(DType::F32, 0, 128, 1024, 8), 0.0f));
  Outcome r = run(l.b, l.inputs);
  ASSERT_TRUE(r.result.fault);
  EXPECT_HAS(r.first, "WAR in program 'race' core 0 SBUF partitions [0,128) "
                      "bytes [1024,1056): VE pc 1 (memset) writes at");
  EXPECT_HAS(r.first, "not ordered after DMA pc 1 (dma_copy)'s read (in "
                      "flight until");
}

TEST(Hazard, TwoLoadsIntoOneTileAreWaw) {
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()));
  l.b.emit(isa::dmaCopy(sbufTile(DType::F32, 64, 64, 1024, 16),
                        l.b.hbm(l.x, 0, 64, 512, {{16, 1}})));
  Outcome r = run(l.b, l.inputs);
  ASSERT_TRUE(r.result.fault);
  EXPECT_HAS(r.first, "WAW in program 'race' core 0 SBUF partitions [64,128) "
                      "bytes [1024,1088): DMA pc 1 (dma_copy)");
}

TEST(Hazard, LoadsOfDisjointElementsOfOneTileAreNot) {
  // Even columns, odd columns of the tile; and the two column halves of y
  // in HBM: the hulls overlap, the elements do not.
  Loaded l;
  AccessPattern even = sbuf(DType::F32, 0, 128, 0, {{256, 2}});
  AccessPattern odd = sbuf(DType::F32, 0, 128, 4, {{256, 2}});
  l.b.emit(isa::dmaCopy(even, l.b.hbm(l.x, 0, 128, 512, {{256, 1}})).signal(0));
  l.b.emit(
      isa::dmaCopy(odd, l.b.hbm(l.x, 256, 128, 512, {{256, 1}})).signal(0));
  l.b.emit(isa::dmaCopy(l.b.hbm(l.y, 0, 128, 512, {{256, 1}}),
                        sbuf(DType::F32, 0, 128, 0, {{256, 1}}))
               .waitFor(0, 2));
  l.b.emit(isa::dmaCopy(l.b.hbm(l.y, 256, 128, 512, {{256, 1}}),
                        sbuf(DType::F32, 0, 128, 1024, {{256, 1}}))
               .waitFor(0, 2));
  Outcome r = run(l.b, l.inputs);
  EXPECT_FALSE(r.result.fault) << r.first;
}

TEST(Hazard, OneEnginesOwnStreamIsOrdered) {
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  AccessPattern tmp = sbufTile(DType::F32, 0, 128, 8192, 512);
  l.b.emit(isa::activation(tmp, l.tile, ActFunc::Exp).waitFor(0, 1));
  // Same engine, no semaphore: the Scalar engine's pipeline keeps the order.
  l.b.emit(isa::tensorScalar(tmp, tmp, AluOp::Multiply, 2.0f)
               .onEngine(Engine::Scalar)
               .signal(1));
  l.b.emit(isa::dmaCopy(l.hbmY(), tmp).waitFor(1, 1));
  Outcome r = run(l.b, l.inputs);
  EXPECT_FALSE(r.result.fault) << r.first;
}

TEST(Hazard, ReadingAPsumGroupBeforeItEndsIsInterleaved) {
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  AccessPattern stat = sbufTile(DType::F32, 0, 128, 0, 128);
  AccessPattern acc = psumTile(0, 128, 0, 512);
  l.b.emit(isa::matmul(acc, stat, l.tile, false).waitFor(0, 1).signal(1));
  AccessPattern partial = sbufTile(DType::F32, 0, 128, 8192, 512);
  // The Vector engine reads the group after its first matmul, and the TE
  // then goes on accumulating: every wait holds, yet the copy holds a
  // partial sum.
  l.b.emit(isa::tensorCopy(partial, acc).waitFor(1, 1).signal(2));
  l.b.emit(isa::matmul(acc, stat, l.tile, true).waitFor(2, 1).signal(3));
  l.b.emit(isa::dmaCopy(l.hbmY(), partial).waitFor(3, 1));
  Outcome r = run(l.b, l.inputs);
  ASSERT_TRUE(r.result.fault);
  EXPECT_HAS(r.first, "PSUM group interleaved in program 'race' core 0 PSUM "
                      "partitions [0,128) bytes [0,2048): TE pc 1 (matmul) "
                      "accumulates at");
  EXPECT_HAS(r.first, "onto a group that VE pc 0 (tensor_copy) accessed at");
}

TEST(Hazard, LoopIterationsAreNamedAndEveryHazardCounted) {
  // A loop of 8 loads into one tile without waits: 7 WAWs, each iteration
  // against the one before; reports keep their loop indices.
  Loaded l;
  l.b.loopBegin(Engine::Dma, 8);
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()));
  l.b.loopEnd(Engine::Dma);
  Outcome r = run(l.b, l.inputs);
  ASSERT_TRUE(r.result.fault);
  EXPECT_GE(r.result.hazardCount, 7u);
  EXPECT_HAS(r.first, "DMA pc 1 (dma_copy) iter [1] writes at 0.000 us, not "
                      "ordered after DMA pc 1 (dma_copy) iter [0]'s write");
}

TEST(Hazard, AnUnorderedPairIsARaceEvenWhenTimingKeptItApart) {
  // Ordered through a chain of waits: no race. Unordered, but kept apart by
  // a long instruction before the read: this timeline reads the loaded
  // tile, a faster one would not. Happens-before sees it, a window would
  // not.
  Loaded l;
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  l.b.emit(isa::memset(sbufTile(DType::F32, 0, 128, 16384, 64), 0.0f)
               .onEngine(Engine::GpSimd)
               .waitFor(0, 1)
               .signal(2));
  // The memset waited for the load and the copy waits for the memset: a
  // chain of semaphores orders the copy after the load.
  AccessPattern out = sbufTile(DType::F32, 0, 128, 8192, 512);
  l.b.emit(isa::tensorCopy(out, l.tile).waitFor(2, 1).signal(1));
  l.b.emit(isa::dmaCopy(l.hbmY(), out).waitFor(1, 1));
  Outcome ordered = run(l.b, l.inputs);
  EXPECT_FALSE(ordered.result.fault) << ordered.first;

  Loaded m;
  m.b.emit(isa::dmaCopy(m.tile, m.hbmX()).signal(0));
  // A long Scalar-engine instruction that waits for nothing: the copy that
  // waits for it starts after the load has landed, by timing alone.
  AccessPattern big = sbufTile(DType::F32, 0, 128, 16384, 24576);
  m.b.emit(isa::activation(big, big, ActFunc::Exp).signal(2));
  m.b.emit(isa::tensorCopy(out, m.tile).waitFor(2, 1).signal(1));
  m.b.emit(isa::dmaCopy(m.hbmY(), out).waitFor(1, 1));
  Outcome lucky = run(m.b, m.inputs);
  ASSERT_TRUE(lucky.result.fault);
  EXPECT_HAS(lucky.first, "RAW in program 'race' core 0 SBUF partitions "
                          "[0,128) bytes [0,2048): VE pc 0 (tensor_copy) "
                          "reads at");
  EXPECT_HAS(lucky.first, "not ordered after DMA pc 0 (dma_copy)'s write "
                          "(complete at 11.998 us: ordered by this run's "
                          "timing alone)");
}

TEST(Hazard, OffInTimingOnlyRunsUnlessAsked) {
  for (bool asked : {false, true}) {
    Loaded l;
    l.b.emit(isa::dmaCopy(l.tile, l.hbmX()));
    l.b.emit(isa::tensorCopy(sbufTile(DType::F32, 0, 128, 8192, 512), l.tile));
    Outcome r = run(l.b, l.inputs, ExecMode::TimingOnly,
                    asked ? std::optional<bool>(true) : std::nullopt);
    EXPECT_EQ(bool(r.result.fault), asked);
    EXPECT_EQ(r.result.hazardCount, asked ? 1u : 0u);
  }
}

// The latency floor's chain (kernel_bench): read-after-write dependences
// only. The copy runs first on the Vector engine and delays the chain, but
// nothing in the chain reads what it wrote; the loads weigh nothing.
TEST(DependentChain, FollowsReadsOfWritesNotStreamOrder) {
  Loaded l;
  AccessPattern b = sbufTile(DType::F32, 0, 128, 4096, 512);
  AccessPattern c = sbufTile(DType::F32, 0, 128, 8192, 512);
  AccessPattern d = sbufTile(DType::F32, 0, 128, 12288, 512);
  Instruction copy = isa::tensorCopy(d, l.tile);
  Instruction exp = isa::activation(b, l.tile, ActFunc::Exp);
  Instruction add = isa::tensorTensor(c, b, l.tile, AluOp::Add);
  l.b.emit(isa::dmaCopy(l.tile, l.hbmX()).signal(0));
  l.b.emit(Instruction(copy).waitFor(0, 1));
  l.b.emit(Instruction(exp).onEngine(Engine::Scalar).waitFor(0, 1).signal(1));
  l.b.emit(Instruction(add).waitFor(1, 1).signal(2));
  l.b.emit(isa::dmaCopy(l.hbmY(), c).waitFor(2, 1));
  Program p = l.b.take();
  std::vector<AccessRecord> log;
  DeviceOptions opts;
  opts.mode = ExecMode::TimingOnly;
  opts.cores = 1;
  opts.accessLog = &log;
  const Profile &profile = Profile::builtin(p.target);
  Device device(profile, opts);
  auto id = device.loadProgram(p);
  ASSERT_TRUE(bool(id)) << id.error();
  ASSERT_TRUE(bool(device.launch(*id, l.inputs)));
  std::optional<double> chain = dependentChainNs({&p}, log);
  ASSERT_TRUE(chain);
  double expected =
      instructionCost(exp.onEngine(Engine::Scalar), profile).latencyNs +
      instructionCost(add, profile).latencyNs;
  EXPECT_NEAR(*chain, expected, 1e-6);
  // Past its bound on live writes it declines rather than guess.
  EXPECT_FALSE(dependentChainNs({&p}, log, /*maxLive=*/1));
}
