//===- MakeProgramSeeds.cpp - Writes the seed corpus of fuzz-program-loader
//-===//
//
//   fuzz-make-program-seeds DIR
// writes program files built the way the runtime tests build them
// (tests/runtime/TestUtil.h, ProgramFileTest's sample): every instruction
// kind, loops, constants, both targets, HBM collectives.
//
//===----------------------------------------------------------------------===//
#include "../runtime/TestUtil.h"
#include "runtime/ProgramFile.h"

#include <cstdio>
#include <fstream>

using namespace seam::rt;
using seam::rt::test::randomValues;
using seam::rt::test::TileProgram;

namespace {
Program sample(Target target) {
  ProgramBuilder b("sample", target);
  uint32_t x = b.addBinding("x", {4, 8}, DType::F32, BindingRole::Input);
  uint32_t w = b.addBinding("w", {4, 8}, DType::BF16, BindingRole::Param);
  b.setSeededInit(w, ConstantKind::SeededNormal, 42, 0.02f);
  uint32_t c = b.addBinding("c", {2}, DType::F32, BindingRole::Constant);
  b.setConstantValues(c, {1.5f, -2.0f});
  b.emit(isa::dmaCopy(sbufTile(DType::F32, 0, 4, 0, 8),
                      b.hbm(x, 0, 4, 8, {{8, 1}}))
             .signal(0));
  b.loopBegin(Engine::Scalar, 3);
  b.emit(isa::activation(sbufTile(DType::F32, 0, 4, 64, 8).step(0, 8),
                         sbufTile(DType::F32, 0, 4, 0, 8), ActFunc::Gelu, 2.0f,
                         0.5f)
             .waitFor(0, 1));
  b.loopEnd(Engine::Scalar);
  return b.take();
}

Program elementwise() {
  TileProgram t(Target::Trn1, "elementwise");
  AccessPattern a = t.input("a", 8, 16, randomValues(128, 1), DType::BF16, 0);
  AccessPattern b = t.input("b", 8, 16, randomValues(128, 2), DType::F32, 64);
  AccessPattern o = sbufTile(DType::F32, 0, 8, 256, 16);
  t.add(isa::tensorTensor(o, a, b, AluOp::Subtract));
  t.add(isa::tensorScalar(o, o, AluOp::Multiply, 0.5f, true));
  t.add(isa::tensorScalar(o, o, AluOp::Subtract, 0.25f)
            .then(AluOp::Max, sbufTile(DType::F32, 0, 8, 576, 1)));
  t.add(isa::tensorReduce(sbufTile(DType::F32, 0, 8, 512, 1), o, AluOp::Max));
  t.add(isa::reciprocal(o, b));
  t.add(isa::iota(sbufTile(DType::F32, 0, 8, 640, 16), 1.0f, 2.0f, 0.5f));
  t.add(isa::affineSelect(o, o, AluOp::IsGe, 0.0f, 1.0f, -1.0f, -1e30f));
  t.add(isa::memset(sbufTile(DType::BF16, 0, 8, 768, 16), 3.0f));
  t.add(isa::activation(o, o, ActFunc::Exp, 1.0f, 0.0f));
  t.output("y", o);
  return t.finish();
}

Program matmul(Target target) {
  TileProgram t(target, "matmul");
  AccessPattern st = t.input("s", 32, 16, randomValues(512, 3), DType::F32, 0);
  AccessPattern mv =
      t.input("m", 32, 24, randomValues(768, 4), DType::BF16, 1024);
  AccessPattern ps = psumTile(0, 16, 2048, 24);
  AccessPattern o = sbufTile(DType::F32, 0, 16, 4096, 24);
  t.add(isa::matmul(ps, st, mv, false));
  t.add(isa::matmul(ps, st, mv, true));
  t.add(isa::tensorCopy(o, ps));
  t.add(isa::transpose(psumTile(0, 16, 4096, 32), st));
  t.output("y", o);
  return t.finish();
}

Program collectives() {
  ProgramBuilder b("cc", Target::Trn1);
  uint32_t x = b.addBinding("x", {4}, DType::F32, BindingRole::Input);
  uint32_t s = b.addBinding("sum", {4}, DType::F32, BindingRole::Output);
  uint32_t g = b.addBinding("gather", {8}, DType::F32, BindingRole::Output);
  b.emit(
      isa::allReduce(b.hbm(s, 0, 1, 4, {{4, 1}}), b.hbm(x, 0, 1, 4, {{4, 1}})));
  b.emit(
      isa::allGather(b.hbm(g, 0, 1, 8, {{8, 1}}), b.hbm(x, 0, 1, 4, {{4, 1}})));
  return b.take();
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::pair<const char *, Program> programs[] = {
      {"sample-trn1", sample(Target::Trn1)},
      {"sample-trn2", sample(Target::Trn2)},
      {"elementwise", elementwise()},
      {"matmul-trn1", matmul(Target::Trn1)},
      {"matmul-trn2", matmul(Target::Trn2)},
      {"collectives", collectives()},
  };
  for (auto &[name, p] : programs) {
    std::vector<uint8_t> bytes = writeProgram(p);
    if (!readProgram(bytes)) {
      std::fprintf(stderr, "seed %s does not read back\n", name);
      return 1;
    }
    std::ofstream(std::string(argv[1]) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  return 0;
}
