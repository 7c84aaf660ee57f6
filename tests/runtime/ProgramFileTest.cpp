//===- ProgramFileTest.cpp - Writer, loader rejections, dump --------------===//

#include "runtime/ProgramFile.h"
#include "TestUtil.h"

#include <sstream>

using namespace seam::rt;

namespace {
Program sample(Target target = Target::Trn1, int64_t sbufOffset = 0) {
  ProgramBuilder b("sample", target);
  uint32_t x = b.addBinding("x", {4, 8}, DType::F32, BindingRole::Input);
  uint32_t w = b.addBinding("w", {4, 8}, DType::BF16, BindingRole::Param);
  b.setSeededInit(w, ConstantKind::SeededNormal, 42, 0.02f);
  uint32_t c = b.addBinding("c", {2}, DType::F32, BindingRole::Constant);
  b.setConstantValues(c, {1.5f, -2.0f});
  b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, 4, sbufOffset, 8),
                      b.hbm(x, 0, 4, 8, {{8, 1}}))
             .signal(0));
  b.loopBegin(Engine::Scalar, 3);
  b.emit(isa::activation(sbufTile(DType::F32, 0, 4, 64, 8).step(0, 8),
                         sbufTile(DType::F32, 0, 4, sbufOffset, 8),
                         ActFunc::Gelu, 2.0f, 0.5f)
             .waitFor(0, 1));
  b.loopEnd(Engine::Scalar);
  return b.take();
}

std::string readError(const std::vector<uint8_t> &bytes) {
  auto r = readProgram(bytes);
  return r ? std::string("accepted") : r.error();
}
} // namespace

/// The sliced CRC-32 against the standard check value and a bytewise
/// reference, at every length and alignment around its 8-byte steps, and
/// chained (crc32(b, crc32(a)) is the CRC of a then b).
TEST(ProgramFile, Crc32MatchesTheBytewiseDefinition) {
  auto reference = [](const uint8_t *p, size_t n, uint32_t crc) {
    crc = ~crc;
    for (size_t i = 0; i < n; ++i) {
      crc ^= p[i];
      for (int k = 0; k < 8; ++k)
        crc = (crc & 1) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
  };
  EXPECT_EQ(crc32("123456789", 9), 0xcbf43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
  std::vector<uint8_t> bytes(67);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t start = 0; start < 8; ++start)
    for (size_t n = 0; start + n <= bytes.size(); ++n)
      ASSERT_EQ(crc32(bytes.data() + start, n),
                reference(bytes.data() + start, n, 0))
          << "start " << start << " length " << n;
  uint32_t head = crc32(bytes.data(), 13);
  EXPECT_EQ(crc32(bytes.data() + 13, 54, head), reference(bytes.data(), 67, 0));
}

TEST(ProgramFile, RoundTripIsExact) {
  Program p = sample();
  std::vector<uint8_t> bytes = writeProgram(p);
  ASSERT_EQ(std::string(reinterpret_cast<const char *>(bytes.data()), 7),
            "SEAMPRG");
  auto back = readProgram(bytes);
  ASSERT_TRUE(bool(back)) << back.error();
  EXPECT_EQ(back->name, "sample");
  EXPECT_EQ(back->bindings.size(), 3u);
  EXPECT_EQ(back->constants[0].seed, 42u);
  EXPECT_EQ(writeProgram(*back), bytes);
  EXPECT_EQ(programHash(*back), programHash(p));
}

TEST(ProgramFile, DumpIsReadable) {
  std::ostringstream os;
  dumpProgram(sample(), os);
  std::string text = os.str();
  EXPECT_NE(text.find("program 'sample' target trn1"), std::string::npos);
  EXPECT_NE(text.find("binding #1 param 'w' bf16[4x8]"), std::string::npos);
  EXPECT_NE(text.find("seeded_normal seed 42"), std::string::npos);
  EXPECT_NE(text.find("loop_begin x3"), std::string::npos);
  EXPECT_NE(text.find("activation gelu scale=2 bias=0.5"), std::string::npos);
  EXPECT_NE(text.find("wait(s0>=1)"), std::string::npos);
  EXPECT_NE(text.find("signal(s0+=1)"), std::string::npos);
}

TEST(ProgramFile, CarriedWaitsRoundTripPrintAndAreBoundedByTheLoops) {
  Program p = sample();
  auto activationOf = [](Program &q) -> Instruction * {
    for (auto &stream : q.streams)
      for (Instruction &inst : stream)
        if (inst.op == Opcode::Activation)
          return &inst;
    return nullptr;
  };
  Instruction *act = activationOf(p);
  ASSERT_NE(act, nullptr);
  ASSERT_EQ(act->waits.size(), 1u);
  act->waits[0].carried = 1; // inside the one loop
  std::vector<uint8_t> bytes = writeProgram(p);
  auto back = readProgram(bytes);
  ASSERT_TRUE(bool(back)) << back.error();
  Instruction *actBack = activationOf(*back);
  ASSERT_NE(actBack, nullptr);
  EXPECT_EQ(actBack->waits[0].carried, 1u);
  EXPECT_EQ(writeProgram(*back), bytes);
  std::ostringstream os;
  dumpProgram(*back, os);
  EXPECT_NE(os.str().find("wait(s0>=1 carried 1)"), std::string::npos);
  // Carried over more loops than enclose the instruction.
  act->waits[0].carried = 2;
  EXPECT_NE(
      readError(writeProgram(p)).find("carried wait over 2 loops inside 1"),
      std::string::npos)
      << readError(writeProgram(p));
}

TEST(ProgramFile, SecondOperationRoundTripsPrintsAndIsChecked) {
  Program p = sample();
  p.streams[unsigned(Engine::Vector)].push_back(
      isa::tensorScalar(sbufTile(DType::F32, 0, 4, 128, 8),
                        sbufTile(DType::F32, 0, 4, 64, 8), AluOp::Subtract,
                        1.0f)
          .then(AluOp::Multiply, sbufTile(DType::F32, 0, 4, 192, 1))
          .onEngine(Engine::Vector));
  std::vector<uint8_t> bytes = writeProgram(p);
  auto back = readProgram(bytes);
  ASSERT_TRUE(bool(back)) << back.error();
  const Instruction &ts = back->streams[unsigned(Engine::Vector)].back();
  EXPECT_TRUE(ts.secondOp);
  EXPECT_EQ(ts.alu1, AluOp::Multiply);
  EXPECT_TRUE(ts.has(Instruction::Aux));
  EXPECT_EQ(writeProgram(*back), bytes);
  std::ostringstream os;
  dumpProgram(*back, os);
  EXPECT_NE(os.str().find("tensor_scalar subtract 1 then multiply 0 "),
            std::string::npos)
      << os.str();
  // A second scalar operand without a second operation, and a second
  // operation on an instruction that has none.
  Program q = p;
  q.streams[unsigned(Engine::Vector)].back().secondOp = false;
  EXPECT_NE(readError(writeProgram(q))
                .find("has a second scalar operand but no second operation"),
            std::string::npos)
      << readError(writeProgram(q));
  q = p;
  q.streams[unsigned(Engine::Scalar)][1].secondOp = true;
  EXPECT_NE(readError(writeProgram(q)).find("has a second operation"),
            std::string::npos)
      << readError(writeProgram(q));
  q = p;
  q.streams[unsigned(Engine::Vector)].back().alu1 = static_cast<AluOp>(66);
  EXPECT_NE(readError(writeProgram(q)).find("unknown second ALU op 66"),
            std::string::npos)
      << readError(writeProgram(q));
}

TEST(ProgramFile, RejectsTruncatedFiles) {
  std::vector<uint8_t> bytes = writeProgram(sample());
  EXPECT_EQ(readError({bytes.begin(), bytes.begin() + 20}),
            "program file: truncated: 20 bytes, the header alone needs 48");
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 10);
  EXPECT_EQ(readError(cut), "program file: truncated: header announces " +
                                std::to_string(bytes.size() - 48) +
                                " payload bytes, file has " +
                                std::to_string(bytes.size() - 58));
  // Every prefix is rejected without crashing.
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(bool(readProgram(bytes.data(), n)));
}

TEST(ProgramFile, RejectsBadMagicVersionAndTarget) {
  std::vector<uint8_t> bytes = writeProgram(sample());
  auto bad = bytes;
  bad[0] = 'X';
  EXPECT_EQ(readError(bad),
            "program file: bad magic (not a seam program file)");
  bad = bytes;
  bad[8] = 9;
  EXPECT_EQ(readError(bad), "program file: unsupported format version 9 (this "
                            "runtime reads version 4)");
  bad = bytes;
  bad[12] = 7;
  EXPECT_EQ(readError(bad), "program file: unknown target code 7");
}

// A flipped bit anywhere in the payload fails the content hash; in the
// header's first 32 bytes (the hash among them), the checksum.
TEST(ProgramFile, FlippedByteIsCaught) {
  std::vector<uint8_t> bytes = writeProgram(sample());
  for (size_t pos : {size_t(60), bytes.size() / 2, bytes.size() - 1}) {
    auto bad = bytes;
    bad[pos] ^= 0x10;
    std::string err = readError(bad);
    EXPECT_NE(err.find("content hash mismatch"), std::string::npos) << err;
    EXPECT_NE(err.find("the file is corrupted"), std::string::npos);
  }
  for (size_t pos : {size_t(17), size_t(24), size_t(31)}) {
    auto bad = bytes;
    bad[pos] ^= 0x10;
    std::string err = readError(bad);
    EXPECT_NE(err.find(pos == 17 ? "truncated" : "checksum mismatch"),
              std::string::npos)
        << pos << ": " << err;
  }
}

// hash64 (the content hash of program files and compile-cache entries):
// pinned values, so a change that would make every stored file unreadable
// is seen; every single-bit flip of inputs of 0 to 80 bytes, at every
// alignment around its 32- and 8-byte steps, changes the hash; the seed
// and the length count.
TEST(ProgramFile, Hash64PinnedAndSensitive) {
  EXPECT_EQ(hash64(nullptr, 0), 0x063d71bddf5926d4ull);
  EXPECT_EQ(hash64("123456789", 9), 0xca4e201328d54e33ull);
  std::vector<uint8_t> bytes(88);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  EXPECT_EQ(hash64(bytes.data(), bytes.size()), 0x943c2c78694de920ull);
  for (size_t start = 0; start < 8; ++start)
    for (size_t n = 0; start + n <= 80; ++n) {
      uint64_t h = hash64(bytes.data() + start, n);
      EXPECT_NE(hash64(bytes.data() + start, n, 1), h);
      std::vector<uint8_t> longer(bytes.begin() + start,
                                  bytes.begin() + start + n);
      longer.push_back(0);
      EXPECT_NE(hash64(longer.data(), n + 1), h) << n;
      for (size_t bit = 0; bit < 8 * n; ++bit) {
        std::vector<uint8_t> flipped(longer.begin(), longer.end() - 1);
        flipped[bit / 8] ^= uint8_t(1u << (bit % 8));
        ASSERT_NE(hash64(flipped.data(), n), h)
            << "start " << start << " length " << n << " bit " << bit;
      }
    }
}

TEST(ProgramFile, RejectsOutOfRangeEnums) {
  Program p = sample();
  p.streams[unsigned(Engine::Scalar)][1].act = static_cast<ActFunc>(77);
  std::vector<uint8_t> bytes = writeProgram(p);
  EXPECT_EQ(readError(bytes),
            "program file: SE instruction 1: unknown activation function 77");
  p = sample();
  p.streams[unsigned(Engine::Dma)][0].op = static_cast<Opcode>(99);
  EXPECT_EQ(readError(writeProgram(p)),
            "program file: DMA instruction 0: unknown opcode 99");
  p = sample();
  p.streams[unsigned(Engine::Dma)][0].aps[0].dtype = static_cast<DType>(5);
  EXPECT_EQ(readError(writeProgram(p)),
            "program file: DMA instruction 0 operand dst: unknown dtype 5");
  // A hand-edited section count: sizes are checked against the bytes left.
  std::vector<uint8_t> bytes2 = writeProgram(sample());
  uint32_t huge = 0x7fffffff;
  // Bindings section: after the meta section (16-byte header + 4 + 6 name).
  size_t countPos = kProgramHeaderSize + 16 + 4 + 6 + 16;
  std::memcpy(bytes2.data() + countPos, &huge, 4);
  resealProgramFile(bytes2);
  EXPECT_EQ(readError(bytes2), "program file: bindings section: count "
                               "2147483647 exceeds the section size");
}

TEST(ProgramFile, RejectsOutOfBoundsAccessPatterns) {
  // 192 KiB per partition on trn1, 224 KiB on trn2.
  int64_t off = 200 * 1024;
  EXPECT_TRUE(bool(readProgram(writeProgram(sample(Target::Trn2, off)))));
  EXPECT_EQ(readError(writeProgram(sample(Target::Trn1, off))),
            "program file: instruction 1 (activation) on SE: operand src0 "
            "sbuf access out of bounds: bytes [204800, 204832) of 196608 per "
            "partition");
  // The loop step makes iteration 2 run past the end of the partition.
  Program p = sample();
  p.streams[unsigned(Engine::Scalar)][1].aps[0].offset = 196608 - 80;
  EXPECT_EQ(readError(writeProgram(p)),
            "program file: instruction 1 (activation) on SE: operand dst sbuf "
            "access out of bounds: bytes [196528, 196624) of 196608 per "
            "partition");
  // HBM access beyond the binding.
  p = sample();
  p.streams[unsigned(Engine::Dma)][0].aps[1].partitions = 5;
  EXPECT_EQ(readError(writeProgram(p)),
            "program file: instruction 0 (dma_copy) on DMA: operand src0 hbm "
            "access out of bounds: bytes [0, 160) of 128 (binding 'x')");
}

TEST(ProgramFile, RandomCorruptionNeverCrashes) {
  // Mutate payload bytes, re-seal checksum and hash so the decoder and the
  // verifier see the damage, and require a clean accept or error each time.
  std::vector<uint8_t> bytes = writeProgram(sample());
  std::mt19937 gen(1234);
  std::uniform_int_distribution<size_t> pos(kProgramHeaderSize,
                                            bytes.size() - 1);
  std::uniform_int_distribution<int> val(0, 255);
  unsigned rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    auto bad = bytes;
    for (int k = 0; k < 1 + trial % 4; ++k)
      bad[pos(gen)] = static_cast<uint8_t>(val(gen));
    resealProgramFile(bad);
    auto r = readProgram(bad);
    if (!r) {
      ++rejected;
      EXPECT_EQ(r.error().rfind("program file: ", 0), 0u);
    }
  }
  EXPECT_GT(rejected, 1000u);
}
