//===- IsaProgramTest.cpp - Isa tables, builder, verifier, bf16 -----------===//

#include "TestUtil.h"

using namespace seam::rt;

TEST(Isa, NameTablesRoundTrip) {
  for (unsigned code = 0; code < 64; ++code) {
    if (auto op = decodeOpcode(code)) {
      EXPECT_EQ(static_cast<unsigned>(*op), code);
      EXPECT_EQ(parseOpcode(mnemonic(*op)), op);
    }
    if (auto f = decodeActFunc(code)) {
      EXPECT_EQ(parseActFunc(name(*f)), f);
    }
    if (auto a = decodeAluOp(code)) {
      EXPECT_EQ(parseAluOp(name(*a)), a);
    }
  }
  EXPECT_FALSE(decodeOpcode(0));
  EXPECT_FALSE(decodeOpcode(200));
  EXPECT_EQ(mnemonic(Opcode::Matmul), "matmul");
  EXPECT_EQ(name(Engine::GpSimd), "GP");
  EXPECT_EQ(byteSize(DType::BF16), 2u);
  EXPECT_EQ(defaultEngine(Opcode::Activation), Engine::Scalar);
}

TEST(Bf16, RoundToNearestEvenTies) {
  auto bits = [](uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return floatToBf16Bits(f);
  };
  EXPECT_EQ(bits(0x3F808000u), 0x3F80u); // tie, even below
  EXPECT_EQ(bits(0x3F818000u), 0x3F82u); // tie, even above
  EXPECT_EQ(bits(0x3F808001u), 0x3F81u); // above the tie
  EXPECT_EQ(bits(0x3F807FFFu), 0x3F80u); // below the tie
  EXPECT_EQ(bits(0xBF818000u), 0xBF82u); // negative tie
  EXPECT_EQ(bits(0x7F7FFFFFu), 0x7F80u); // max float rounds to inf
  EXPECT_EQ(bits(0x7F800000u), 0x7F80u); // inf stays inf
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(bits(0x7FC00001u))));
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(bits(0x7F800001u)))); // sNaN
  EXPECT_EQ(roundToBf16(1.0f + 1.0f / 256), 1.0f);
}

TEST(Program, BuilderAssignsAlignedBindings) {
  ProgramBuilder b("p", Target::Trn1);
  uint32_t x = b.addBinding("x", {3, 5}, DType::BF16, BindingRole::Input);
  uint32_t y = b.addBinding("y", {7}, DType::F32, BindingRole::Output);
  const Program &p = b.program();
  EXPECT_EQ(p.bindings[x].hbmSize, 30u);
  EXPECT_EQ(p.bindings[y].hbmOffset, 64u);
  EXPECT_EQ(p.hbmBytes(), 64u + 28u);
  EXPECT_EQ(p.findBinding("y"), y);
  EXPECT_FALSE(p.findBinding("z"));
}

TEST(Program, VerifierNamesProblems) {
  ProgramBuilder b("p", Target::Trn1);
  b.loopBegin(Engine::Vector, 4);
  EXPECT_NE(
      verifyProgram(b.program()).error().find("VE stream ends inside a loop"),
      std::string::npos);
  ProgramBuilder c("p", Target::Trn1);
  c.emit(isa::loopEnd().onEngine(Engine::Scalar));
  EXPECT_NE(
      verifyProgram(c.program()).error().find("loop_end without loop_begin"),
      std::string::npos);
  ProgramBuilder d("p", Target::Trn1);
  d.emit(isa::matmul(psumTile(0, 4, 0, 4), sbufTile(DType::F32, 0, 4, 0, 4),
                     sbufTile(DType::F32, 0, 4, 0, 4), false)
             .onEngine(Engine::Vector));
  EXPECT_NE(verifyProgram(d.program()).error().find("cannot run on engine VE"),
            std::string::npos);
  ProgramBuilder e("p", Target::Trn1);
  e.emit(isa::tensorCopy(sbufTile(DType::F32, 0, 4, 0, 4),
                         sbufTile(DType::F32, 0, 4, 0, 4))
             .waitFor(300, 1));
  EXPECT_NE(verifyProgram(e.program()).error().find("semaphore 300"),
            std::string::npos);
}
