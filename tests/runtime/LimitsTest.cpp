//===- LimitsTest.cpp - Absurd sizes are refused before any allocation ----===//
//
// A 2^40-element tensor (4 TiB of f32) in a program file, a program built in
// memory, or a launch input gets a clear error; nothing tries to allocate it
// (under ASan, an attempt would abort the test; without it, bad_alloc).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "runtime/ProgramFile.h"

using namespace seam::rt;

namespace {
constexpr int64_t kHuge = int64_t(1) << 40;

/// A valid program with one binding of `shape`, copied to SBUF in a tile.
Program withBinding(std::vector<int64_t> shape, BindingRole role,
                    Target target = Target::Trn1) {
  ProgramBuilder b("huge", target);
  uint32_t x = b.addBinding("x", std::move(shape), DType::F32, role);
  if (role == BindingRole::Param)
    b.setSeededInit(x, ConstantKind::SeededNormal, 1, 0.02f);
  b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, 4, 0, 8),
                      b.hbm(x, 0, 4, 8, {{8, 1}})));
  return b.take();
}

std::string loadError(const Program &p) {
  Device dev(Profile::builtin(p.target));
  auto id = dev.loadProgram(p);
  return id ? std::string("loaded") : id.error();
}
} // namespace

TEST(Limits, ProgramFileWithA2To40ElementBindingIsRejected) {
  for (BindingRole role :
       {BindingRole::Input, BindingRole::Param, BindingRole::Output}) {
    auto r = readProgram(writeProgram(withBinding({kHuge}, role)));
    ASSERT_FALSE(bool(r)) << "accepted a 2^40-element binding";
    EXPECT_NE(r.error().find("'x'"), std::string::npos) << r.error();
    EXPECT_FALSE(r.error().empty());
  }
  // Shapes whose element count overflows int64 are rejected too.
  auto r = readProgram(
      writeProgram(withBinding({kHuge, kHuge, kHuge}, BindingRole::Input)));
  ASSERT_FALSE(bool(r));
  EXPECT_NE(r.error().find("'x'"), std::string::npos) << r.error();
}

TEST(Limits, DeviceRefusesToLoadA2To40ElementBinding) {
  for (BindingRole role :
       {BindingRole::Input, BindingRole::Param, BindingRole::Scratch}) {
    std::string e = loadError(withBinding({kHuge}, role));
    EXPECT_EQ(e, "program 'huge' rank 0: out of HBM (4398046511104 of "
                 "34359738368 bytes)");
  }
  std::string e =
      loadError(withBinding({1 << 20, 1 << 20, 1 << 20}, BindingRole::Input));
  EXPECT_NE(e, "loaded");
  std::printf("2^60-element binding: %s\n", e.c_str());
}

TEST(Limits, AccessPatternOf2To40ElementsIsRejected) {
  // Two stride-0 dims of 2^20: the byte span is 4 bytes, the element count
  // 2^40. Found by fuzz-program-loader's emulator run: the loader accepted
  // it and the functional model tried to allocate 8 TiB of offsets.
  ProgramBuilder b("wide", Target::Trn1);
  uint32_t x = b.addBinding("x", {4, 8}, DType::F32, BindingRole::Input);
  AccessPattern huge =
      sbuf(DType::F32, 0, 4, 0, {{1u << 20, 0}, {1u << 20, 0}});
  b.emit(isa::dmaCopy(huge, b.hbm(x, 0, 4, 8, {{8, 1}})));
  Program p = b.take();
  const std::string want = "has 1099511627776 elements per partition, more "
                           "than the 196608 bytes of sbuf per partition";
  auto r = readProgram(writeProgram(p));
  ASSERT_FALSE(bool(r)) << "accepted a 2^40-element access pattern";
  EXPECT_NE(r.error().find(want), std::string::npos) << r.error();
  EXPECT_NE(loadError(p).find(want), std::string::npos) << loadError(p);

  // Without the load-time check the emulator faults at the instruction.
  DeviceOptions opts;
  opts.verifyOnLoad = false;
  Device dev(Profile::builtin(p.target), opts);
  auto id = dev.loadProgram(p);
  ASSERT_TRUE(bool(id)) << id.error();
  auto res =
      dev.launch(*id, {{"x", HostTensor{{4, 8}, std::vector<float>(32)}}});
  ASSERT_TRUE(bool(res)) << res.error();
  ASSERT_TRUE(res->fault.has_value()) << "ran a 2^40-element copy";
  EXPECT_NE(res->fault->str().find("fault in program 'wide' core 0 engine DMA "
                                   "instruction 0 (dma_copy): operand dst " +
                                   want),
            std::string::npos)
      << res->fault->str();

  // Four dims of 2^32 - 1 elements: the product overflows 64 bits.
  ProgramBuilder b2("wrap", Target::Trn1);
  uint32_t y = b2.addBinding("y", {4, 8}, DType::F32, BindingRole::Input);
  const uint32_t m = 0xffffffffu;
  b2.emit(
      isa::dmaCopy(sbuf(DType::F32, 0, 4, 0, {{m, 0}, {m, 0}, {m, 0}, {m, 0}}),
                   b2.hbm(y, 0, 4, 8, {{8, 1}})));
  Program p2 = b2.take();
  auto r2 = readProgram(writeProgram(p2));
  ASSERT_FALSE(bool(r2)); // "free dim out of range" in the file format
  EXPECT_NE(loadError(p2).find("has 18446744073709551615 elements per "
                               "partition"),
            std::string::npos)
      << loadError(p2);
}
