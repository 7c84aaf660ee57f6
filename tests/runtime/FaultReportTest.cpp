//===- FaultReportTest.cpp - Hardware faults name program/engine/instruction
//===//
//
// The faults FunctionalTest.cpp does not cover yet: out-of-bounds DMA (HBM
// and SBUF sides), PSUM capacity, and NaN/Inf stored by an instruction (as
// the source's flash-attention produces on large logits: exp without a row
// max overflows). Each report names program, core, engine and instruction.
// The loader's own checks are off (verifyOnLoad = false) so that the
// emulator meets the fault the way hardware would.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace seam::rt;
using seam::rt::test::TileProgram;

namespace {
std::string faultOf(TileProgram &t) {
  LaunchResult r = t.run(ExecMode::Functional, /*verifyOnLoad=*/false);
  return r.fault ? r.fault->str() : "no fault";
}

#define EXPECT_HAS(text, part)                                                 \
  EXPECT_NE((text).find(part), std::string::npos) << (text)
} // namespace

TEST(FaultReport, DmaReadPastItsHbmBinding) {
  TileProgram t(Target::Trn1, "dma-hbm");
  // x is [4, 8] f32; the DMA reads 4 rows of 8 starting 1 GiB further on.
  uint32_t x =
      t.builder.addBinding("x", {4, 8}, DType::F32, BindingRole::Input);
  t.inputs["x"] = HostTensor{{4, 8}, std::vector<float>(32, 1.0f)};
  t.add(isa::dmaCopy(sbufTile(DType::F32, 0, 4, 0, 8),
                     t.builder.hbm(x, int64_t(1) << 28, 4, 8, {{8, 1}})));
  std::string f = faultOf(t);
  EXPECT_HAS(f, "fault in program 'dma-hbm' core 0 engine DMA instruction 0 "
                "(dma_copy)");
  EXPECT_HAS(f, "out of bounds");
}

TEST(FaultReport, DmaWritePastSbufCapacity) {
  TileProgram t(Target::Trn1, "dma-sbuf");
  uint32_t x =
      t.builder.addBinding("x", {1, 4}, DType::F32, BindingRole::Input);
  t.inputs["x"] = HostTensor{{1, 4}, {1, 2, 3, 4}};
  // SBUF is 192 KiB per partition on trn1: the last 8 bytes of the write
  // fall past it.
  t.add(isa::dmaCopy(sbufTile(DType::F32, 0, 1, 196608 - 8, 4),
                     t.builder.hbm(x, 0, 1, 4, {{4, 1}})));
  std::string f = faultOf(t);
  EXPECT_HAS(f, "fault in program 'dma-sbuf' core 0 engine DMA instruction 0 "
                "(dma_copy)");
  EXPECT_HAS(f, "sbuf access out of bounds");
}

TEST(FaultReport, MatmulPastPsumCapacity) {
  TileProgram t(Target::Trn1, "psum");
  AccessPattern a = t.input("a", 4, 4, std::vector<float>(16, 1.0f));
  // PSUM is 16 KiB per partition: a 4-column fp32 tile 8 bytes before the
  // end does not fit.
  t.add(isa::matmul(psumTile(0, 4, 16384 - 8, 4), a, a, false));
  std::string f = faultOf(t);
  EXPECT_HAS(f, "fault in program 'psum' core 0 engine TE instruction 0 "
                "(matmul)");
  EXPECT_HAS(f, "psum access out of bounds");
}

TEST(FaultReport, PsumTileWiderThanPsum) {
  TileProgram t(Target::Trn1, "psum-wide");
  AccessPattern a = t.input("a", 4, 4, std::vector<float>(16, 1.0f));
  AccessPattern m = sbufTile(DType::F32, 0, 4, 1024, 8192);
  t.add(isa::matmul(psumTile(0, 4, 0, 8192), a, m, false));
  std::string f = faultOf(t);
  EXPECT_HAS(f, "'psum-wide' core 0 engine TE instruction 0 (matmul)");
  EXPECT_HAS(f, "out of bounds");
}

TEST(FaultReport, NanAndInfFromExpOnLargeLogitsNameTheInstruction) {
  // The source's flash-attention: p = exp(s) with no row max, then p / sum.
  // Logits of 100 overflow f32 exp (inf); inf / inf is NaN.
  TileProgram t(Target::Trn1, "flash-attn");
  AccessPattern s = t.input("s", 2, 4, {100, 1, 2, 3, 0.5f, 0, 1, 2});
  AccessPattern p = sbufTile(DType::F32, 0, 2, 1024, 4);
  AccessPattern sum = sbufTile(DType::F32, 0, 2, 2048, 1);
  AccessPattern o = sbufTile(DType::F32, 0, 2, 3072, 4);
  t.add(isa::activation(p, s, ActFunc::Exp).withReduce(sum));
  t.add(isa::tensorScalar(o, p, AluOp::Divide, 0.0f).withScalarAp(sum));
  t.output("o", o);
  LaunchResult r = t.run();
  ASSERT_TRUE(r.ok()) << r.fault->str();
  ASSERT_TRUE(r.firstNonFinite.has_value());
  std::string f = r.firstNonFinite->str();
  EXPECT_EQ(r.firstNonFinite->program, "flash-attn");
  EXPECT_EQ(r.firstNonFinite->engine, Engine::Scalar);
  EXPECT_EQ(r.firstNonFinite->mnemonic, "activation");
  EXPECT_HAS(f, "'flash-attn' core 0 engine SE instruction 0 (activation): "
                "2 NaN/Inf value(s) stored in sbuf");
  EXPECT_GT(r.nonFiniteWrites, 2u);
  EXPECT_EQ(r.nonFiniteOutputs["o"], 1u); // row 0: inf / inf; e^k / inf = 0
}

TEST(FaultReport, FiniteLaunchReportsNoNonFiniteInstruction) {
  TileProgram t(Target::Trn1, "stable");
  AccessPattern s = t.input("s", 1, 4, {1, 2, 3, 4});
  AccessPattern p = sbufTile(DType::F32, 0, 1, 1024, 4);
  t.add(isa::activation(p, s, ActFunc::Exp));
  t.output("p", p);
  LaunchResult r = t.run();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.firstNonFinite.has_value());
  EXPECT_EQ(r.nonFiniteWrites, 0u);
}
