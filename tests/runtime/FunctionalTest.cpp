//===- FunctionalTest.cpp - Per-instruction semantics and faults ----------===//

#include "TestUtil.h"

using namespace seam::rt;
using namespace seam::rt::test;

namespace {
constexpr uint32_t P = 8, F = 16;

double refActivation(ActFunc f, double x) {
  switch (f) {
  case ActFunc::Identity:
    return x;
  case ActFunc::Exp:
    return std::exp(x);
  case ActFunc::Gelu:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case ActFunc::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case ActFunc::Silu:
    return x / (1 + std::exp(-x));
  case ActFunc::Tanh:
    return std::tanh(x);
  case ActFunc::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case ActFunc::Relu:
    return x > 0 ? x : 0;
  case ActFunc::Rsqrt:
    return 1 / std::sqrt(x);
  case ActFunc::Square:
    return x * x;
  case ActFunc::Sqrt:
    return std::sqrt(x);
  case ActFunc::Sin:
    return std::sin(x);
  case ActFunc::Cos:
    return std::cos(x);
  }
  return 0;
}
} // namespace

TEST(Functional, EveryActivationFunctionWithScaleBiasAndReduce) {
  for (unsigned code = 0; code < 64; ++code) {
    auto func = decodeActFunc(code);
    if (!func)
      continue;
    bool positive = *func == ActFunc::Rsqrt || *func == ActFunc::Sqrt;
    std::vector<float> x =
        randomValues(P * F, code, positive ? 0.1f : -2.0f, 2.0f);
    std::vector<float> bias = randomValues(P, 100 + code, 0.0f, 0.5f);
    TileProgram t;
    AccessPattern in = t.input("x", P, F, x);
    AccessPattern b = t.input("b", P, 1, bias, DType::F32, 4096);
    AccessPattern o = sbufTile(DType::F32, 0, P, 8192, F);
    AccessPattern sum = sbufTile(DType::F32, 0, P, 12288, 1);
    t.add(isa::activation(o, in, *func, 0.5f).withBias(b).withReduce(sum));
    t.output("y", o);
    t.output("s", sum);
    LaunchResult r = t.run();
    std::vector<double> want(P * F), wantSum(P, 0.0);
    for (uint32_t p = 0; p < P; ++p)
      for (uint32_t i = 0; i < F; ++i) {
        double v = refActivation(*func, 0.5 * x[p * F + i] + bias[p]);
        want[p * F + i] = v;
        wantSum[p] += v;
      }
    EXPECT_LT(relL2(out(r, "y"), want), 1e-5) << name(*func);
    EXPECT_LT(relL2(out(r, "s"), wantSum), 1e-5) << name(*func);
  }
}

TEST(Functional, Bf16TileRoundsToNearestEven) {
  std::vector<float> x(F, 0.0f);
  uint32_t patterns[] = {0x3F808000u, 0x3F818000u, 0x3F808001u, 0xBF818000u};
  for (unsigned i = 0; i < 4; ++i)
    std::memcpy(&x[i], &patterns[i], 4);
  TileProgram t;
  AccessPattern in = t.input("x", 1, F, x);
  AccessPattern o = sbufTile(DType::BF16, 0, 1, 4096, F);
  t.add(isa::tensorCopy(o, in));
  t.output("y", o);
  LaunchResult r = t.run();
  const auto &y = out(r, "y");
  ASSERT_EQ(y.size(), F);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], bf16BitsToFloat(0x3F82));
  EXPECT_EQ(y[2], bf16BitsToFloat(0x3F81));
  EXPECT_EQ(y[3], bf16BitsToFloat(0xBF82));
}

TEST(Functional, TensorTensorScalarReduceCopyReciprocal) {
  std::vector<float> a = randomValues(P * F, 1, 0.5f, 2.0f);
  std::vector<float> b = randomValues(P * F, 2, 0.5f, 2.0f);
  std::vector<float> s = randomValues(P, 3, 0.5f, 2.0f);
  TileProgram t;
  AccessPattern ia = t.input("a", P, F, a, DType::F32, 0);
  AccessPattern ib = t.input("b", P, F, b, DType::F32, 1024);
  AccessPattern is = t.input("s", P, 1, s, DType::F32, 2048);
  AccessPattern o1 = sbufTile(DType::F32, 0, P, 3072, F);
  AccessPattern o2 = sbufTile(DType::F32, 0, P, 4096, F);
  AccessPattern o3 = sbufTile(DType::F32, 0, P, 5120, F);
  AccessPattern o4 = sbufTile(DType::F32, 0, P, 6144, 1);
  AccessPattern o5 = sbufTile(DType::F32, 0, P, 7168, F);
  t.add(isa::tensorTensor(o1, ia, ib, AluOp::Subtract));
  t.add(isa::tensorScalar(o2, ia, AluOp::Divide, 4.0f, /*reverse=*/true));
  t.add(isa::tensorScalar(o3, ia, AluOp::Multiply, 0)
            .withScalarAp(is)
            .onEngine(Engine::GpSimd));
  t.add(isa::tensorReduce(o4, ia, AluOp::Max));
  t.add(isa::reciprocal(o5, ib));
  t.output("sub", o1);
  t.output("rdiv", o2);
  t.output("mul", o3);
  t.output("max", o4);
  t.output("recip", o5);
  LaunchResult r = t.run();
  std::vector<double> sub(P * F), rdiv(P * F), mul(P * F), mx(P, -1e30),
      recip(P * F);
  for (uint32_t p = 0; p < P; ++p)
    for (uint32_t i = 0; i < F; ++i) {
      double x = a[p * F + i], y = b[p * F + i];
      sub[p * F + i] = x - y;
      rdiv[p * F + i] = 4.0 / x;
      mul[p * F + i] = x * s[p];
      mx[p] = std::max(mx[p], x);
      recip[p * F + i] = 1.0 / y;
    }
  EXPECT_LT(relL2(out(r, "sub"), sub), 1e-6);
  EXPECT_LT(relL2(out(r, "rdiv"), rdiv), 1e-6);
  EXPECT_LT(relL2(out(r, "mul"), mul), 1e-6);
  EXPECT_LT(relL2(out(r, "max"), mx), 1e-7);
  EXPECT_LT(relL2(out(r, "recip"), recip), 1e-6);
}

TEST(Functional, TensorScalarWithTwoOperations) {
  // (a - s[p]) * r[p] on the Vector engine (both scalars per partition),
  // (a * 0.5) + r[p] on GpSimd into bf16, and 4 / a then max 1 (reverse
  // applies to the first operation only).
  std::vector<float> a = randomValues(P * F, 1, 0.5f, 2.0f);
  std::vector<float> s = randomValues(P, 2, -1.0f, 1.0f);
  std::vector<float> rr = randomValues(P, 3, 0.5f, 2.0f);
  TileProgram t;
  AccessPattern ia = t.input("a", P, F, a, DType::F32, 0);
  AccessPattern is = t.input("s", P, 1, s, DType::F32, 1024);
  AccessPattern ir = t.input("r", P, 1, rr, DType::F32, 1028);
  AccessPattern o1 = sbufTile(DType::F32, 0, P, 2048, F);
  AccessPattern o2 = sbufTile(DType::BF16, 0, P, 3072, F);
  AccessPattern o3 = sbufTile(DType::F32, 0, P, 4096, F);
  t.add(isa::tensorScalar(o1, ia, AluOp::Subtract, 0)
            .withScalarAp(is)
            .then(AluOp::Multiply, ir));
  t.add(isa::tensorScalar(o2, ia, AluOp::Multiply, 0.5f)
            .then(AluOp::Add, ir)
            .onEngine(Engine::GpSimd));
  t.add(isa::tensorScalar(o3, ia, AluOp::Divide, 4.0f, /*reverse=*/true)
            .then(AluOp::Max, 1.0f));
  t.output("norm", o1);
  t.output("affine", o2);
  t.output("clamp", o3);
  LaunchResult r = t.run();
  std::vector<double> norm(P * F), affine(P * F), clamp(P * F);
  for (uint32_t p = 0; p < P; ++p)
    for (uint32_t i = 0; i < F; ++i) {
      double x = a[p * F + i];
      norm[p * F + i] = (x - s[p]) * rr[p];
      affine[p * F + i] = x * 0.5 + rr[p];
      clamp[p * F + i] = std::max(4.0 / x, 1.0);
    }
  EXPECT_LT(relL2(out(r, "norm"), norm), 1e-6);
  EXPECT_LT(relL2(out(r, "affine"), affine), 1e-2); // bf16 output
  EXPECT_LT(relL2(out(r, "clamp"), clamp), 1e-6);
}

TEST(Functional, ScalarTensorTensor) {
  std::vector<float> a = randomValues(P * F, 1, -2.0f, 2.0f);
  std::vector<float> b = randomValues(P * F, 2, 0.5f, 2.0f);
  std::vector<float> s = randomValues(P, 3, 0.5f, 2.0f);
  TileProgram t;
  AccessPattern ia = t.input("a", P, F, a, DType::F32, 0);
  AccessPattern ib = t.input("b", P, F, b, DType::F32, 1024);
  AccessPattern is = t.input("s", P, 1, s, DType::F32, 2048);
  AccessPattern o1 = sbufTile(DType::F32, 0, P, 3072, F);
  AccessPattern o2 = sbufTile(DType::BF16, 0, P, 4096, F);
  // (a * s[p]) * b with a per-partition scalar; (a * 0.5) + b on GpSimd
  // into bf16.
  Instruction mul = isa::make(Opcode::ScalarTensorTensor, {o1, ia, ib, is});
  mul.alu = AluOp::Multiply;
  Instruction add = isa::make(Opcode::ScalarTensorTensor, {o2, ia, ib});
  add.alu = AluOp::Add;
  add.scalar = 0.5f;
  t.add(mul);
  t.add(add.onEngine(Engine::GpSimd));
  t.output("mul", o1);
  t.output("add", o2);
  LaunchResult r = t.run();
  std::vector<double> wantMul(P * F), wantAdd(P * F);
  for (uint32_t p = 0; p < P; ++p)
    for (uint32_t i = 0; i < F; ++i) {
      double x = a[p * F + i], y = b[p * F + i];
      wantMul[p * F + i] = x * s[p] * y;
      wantAdd[p * F + i] = x * 0.5 + y;
    }
  EXPECT_LT(relL2(out(r, "mul"), wantMul), 1e-6);
  EXPECT_LT(relL2(out(r, "add"), wantAdd), 1e-2); // bf16 destination
  EXPECT_GT(relL2(out(r, "add"), wantAdd), 0.0);  // and it did round
}

TEST(Functional, TensorTensorScan) {
  // h[i] = a[i] * h[i-1] + b[i] along the free dim, from a [P, 1] initial
  // tile, and (a[i] + h[i-1]) * b[i] from an immediate.
  std::vector<float> a = randomValues(P * F, 4, 0.5f, 1.0f);
  std::vector<float> b = randomValues(P * F, 5, -1.0f, 1.0f);
  std::vector<float> h0 = randomValues(P, 6, -1.0f, 1.0f);
  TileProgram t;
  AccessPattern ia = t.input("a", P, F, a, DType::F32, 0);
  AccessPattern ib = t.input("b", P, F, b, DType::F32, 1024);
  AccessPattern ih = t.input("h0", P, 1, h0, DType::F32, 2048);
  AccessPattern o1 = sbufTile(DType::F32, 0, P, 3072, F);
  AccessPattern o2 = sbufTile(DType::F32, 0, P, 4096, F);
  Instruction mamba = isa::make(Opcode::TensorTensorScan, {o1, ia, ib, ih});
  mamba.alu = AluOp::Multiply;
  mamba.secondOp = true;
  mamba.alu1 = AluOp::Add;
  Instruction other = isa::make(Opcode::TensorTensorScan, {o2, ia, ib});
  other.alu = AluOp::Add;
  other.secondOp = true;
  other.alu1 = AluOp::Multiply;
  other.scalar = 0.25f;
  t.add(mamba);
  t.add(other);
  t.output("mamba", o1);
  t.output("other", o2);
  LaunchResult r = t.run();
  std::vector<double> want1(P * F), want2(P * F);
  for (uint32_t p = 0; p < P; ++p) {
    double h = h0[p], g = 0.25;
    for (uint32_t i = 0; i < F; ++i) {
      h = double(a[p * F + i]) * h + b[p * F + i];
      g = (double(a[p * F + i]) + g) * b[p * F + i];
      want1[p * F + i] = h;
      want2[p * F + i] = g;
    }
  }
  EXPECT_LT(relL2(out(r, "mamba"), want1), 1e-5);
  EXPECT_LT(relL2(out(r, "other"), want2), 1e-5);
}

TEST(Functional, IotaAffineSelectMemset) {
  TileProgram t;
  std::vector<float> ones(P * F, 1.0f);
  AccessPattern in = t.input("x", P, F, ones);
  AccessPattern io = sbufTile(DType::F32, 0, P, 1024, F);
  AccessPattern sel = sbufTile(DType::F32, 0, P, 2048, F);
  AccessPattern ms = sbufTile(DType::BF16, 0, P, 3072, F);
  t.add(isa::iota(io, 3.0f, 100.0f, 1.0f));
  // Causal mask: keep where p - i >= 0.
  t.add(isa::affineSelect(sel, in, AluOp::IsGe, 0.0f, 1.0f, -1.0f, -1e9f));
  t.add(isa::memset(ms, 0.1f));
  t.output("iota", io);
  t.output("sel", sel);
  t.output("ms", ms);
  LaunchResult r = t.run();
  for (uint32_t p = 0; p < P; ++p)
    for (uint32_t i = 0; i < F; ++i) {
      EXPECT_EQ(out(r, "iota")[p * F + i], 3.0f + 100.0f * p + i);
      EXPECT_EQ(out(r, "sel")[p * F + i], p >= i ? 1.0f : -1e9f);
      EXPECT_EQ(out(r, "ms")[p * F + i], roundToBf16(0.1f));
    }
}

TEST(Functional, DmaStridedAccessPatterns) {
  // x [4, 6] in HBM; read its transpose (column-major walk) into SBUF
  // [6 partitions x 4], and write every other element of a row back.
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i)
    x[i] = float(i);
  TileProgram t;
  uint32_t xb =
      t.builder.addBinding("x", {4, 6}, DType::F32, BindingRole::Input);
  t.inputs["x"] = HostTensor{{4, 6}, x};
  AccessPattern tile = sbufTile(DType::F32, 0, 6, 0, 4);
  t.add(isa::dmaCopy(tile, t.builder.hbm(xb, 0, 6, 1, {{4, 6}})));
  uint32_t yb =
      t.builder.addBinding("y", {6, 2}, DType::F32, BindingRole::Output);
  t.add(isa::dmaCopy(t.builder.hbm(yb, 0, 6, 2, {{2, 1}}),
                     sbuf(DType::F32, 0, 6, 0, {{2, 2}})));
  LaunchResult r = t.run();
  const auto &y = out(r, "y");
  ASSERT_EQ(y.size(), 12u);
  for (int c = 0; c < 6; ++c) {
    EXPECT_EQ(y[c * 2 + 0], x[0 * 6 + c]);
    EXPECT_EQ(y[c * 2 + 1], x[2 * 6 + c]);
  }
}

TEST(Functional, MatmulMatchesDoubleReference) {
  for (DType type : {DType::F32, DType::BF16}) {
    const uint32_t kDim = 128, mDim = 96, nDim = 320;
    std::vector<float> s = randomValues(kDim * mDim, 11),
                       m = randomValues(kDim * nDim, 12);
    TileProgram t;
    AccessPattern st = t.input("s", kDim, mDim, s, type, 0);
    AccessPattern mv = t.input("m", kDim, nDim, m, type, 4096);
    AccessPattern ps = psumTile(0, mDim, 0, nDim);
    AccessPattern o = sbufTile(DType::F32, 0, mDim, 8192, nDim);
    t.add(isa::matmul(ps, st, mv, false));
    t.add(isa::tensorCopy(o, ps));
    t.output("y", o);
    LaunchResult r = t.run();
    std::vector<double> want(mDim * nDim, 0.0);
    auto q = [&](float v) {
      return type == DType::BF16 ? double(roundToBf16(v)) : double(v);
    };
    for (uint32_t i = 0; i < mDim; ++i)
      for (uint32_t j = 0; j < nDim; ++j)
        for (uint32_t k = 0; k < kDim; ++k)
          want[i * nDim + j] += q(s[k * mDim + i]) * q(m[k * nDim + j]);
    EXPECT_LT(relL2(out(r, "y"), want), 1e-6) << name(type);
  }
}

TEST(Functional, PsumAccumulateAndTranspose) {
  const uint32_t kDim = 32, mDim = 16, nDim = 24;
  std::vector<float> s = randomValues(kDim * mDim, 21),
                     m = randomValues(kDim * nDim, 22);
  TileProgram t;
  AccessPattern st = t.input("s", kDim, mDim, s, DType::F32, 0);
  AccessPattern mv = t.input("m", kDim, nDim, m, DType::F32, 1024);
  AccessPattern ps = psumTile(0, mDim, 2048, nDim);
  AccessPattern o = sbufTile(DType::F32, 0, mDim, 4096, nDim);
  t.add(isa::matmul(ps, st, mv, false));
  t.add(isa::matmul(ps, st, mv, true));
  t.add(isa::tensorCopy(o, ps));
  AccessPattern pt = psumTile(0, mDim, 4096, kDim);
  AccessPattern ot = sbufTile(DType::F32, 0, mDim, 8192, kDim);
  t.add(isa::transpose(pt, st));
  t.add(isa::activation(ot, pt, ActFunc::Identity));
  t.output("y", o);
  t.output("t", ot);
  LaunchResult r = t.run();
  std::vector<double> want(mDim * nDim, 0.0), wantT(mDim * kDim);
  for (uint32_t i = 0; i < mDim; ++i) {
    for (uint32_t j = 0; j < nDim; ++j)
      for (uint32_t k = 0; k < kDim; ++k)
        want[i * nDim + j] += 2.0 * s[k * mDim + i] * m[k * nDim + j];
    for (uint32_t k = 0; k < kDim; ++k)
      wantT[i * kDim + k] = s[k * mDim + i];
  }
  EXPECT_LT(relL2(out(r, "y"), want), 1e-6);
  EXPECT_LT(relL2(out(r, "t"), wantT), 1e-7);
}

TEST(Functional, CollectivesAcrossRanks) {
  // Two ranks: each uploads its x, all_reduce(add) and all_gather in HBM.
  ProgramBuilder b("cc", Target::Trn1);
  uint32_t x = b.addBinding("x", {4}, DType::F32, BindingRole::Input);
  uint32_t s = b.addBinding("sum", {4}, DType::F32, BindingRole::Output);
  uint32_t g = b.addBinding("gather", {8}, DType::F32, BindingRole::Output);
  b.emit(
      isa::allReduce(b.hbm(s, 0, 1, 4, {{4, 1}}), b.hbm(x, 0, 1, 4, {{4, 1}})));
  b.emit(
      isa::allGather(b.hbm(g, 0, 1, 8, {{8, 1}}), b.hbm(x, 0, 1, 4, {{4, 1}})));
  DeviceOptions opts;
  Device dev(Profile::builtin(Target::Trn1), opts);
  auto id = dev.loadProgram(b.take(), 2);
  ASSERT_TRUE(bool(id)) << id.error();
  std::vector<TensorMap> in = {{{"x", {{4}, {1, 2, 3, 4}}}},
                               {{"x", {{4}, {10, 20, 30, 40}}}}};
  auto r = dev.launch(*id, in);
  ASSERT_TRUE(bool(r)) << r.error();
  ASSERT_TRUE(r->ok()) << r->fault->str();
  for (unsigned rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(r->outputs[rank]["sum"].data,
              (std::vector<float>{11, 22, 33, 44}));
    EXPECT_EQ(r->outputs[rank]["gather"].data,
              (std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40}));
  }
  // Ring all_reduce over 2 ranks: 2 hops + bytes / NeuronLink.
  const Profile &prof = Profile::builtin(Target::Trn1);
  EXPECT_DOUBLE_EQ(collectiveDurationNs(Opcode::AllReduce, 16, 2, prof),
                   2 * prof.collectiveHopLatencyNs +
                       16.0 / prof.neuronLinkBytesPerNs);
}

TEST(Functional, NonFiniteValuesAreCounted) {
  TileProgram t;
  std::vector<float> x = {1.0f, -1.0f, 0.0f, 4.0f};
  AccessPattern in = t.input("x", 1, 4, x);
  AccessPattern o = sbufTile(DType::F32, 0, 1, 1024, 4);
  t.add(isa::activation(o, in, ActFunc::Rsqrt)); // rsqrt(-1)=nan, rsqrt(0)=inf
  t.output("y", o);
  LaunchResult r = t.run();
  EXPECT_EQ(r.nonFiniteWrites, 4u); // 2 by the activation, 2 by the DMA out
  EXPECT_EQ(r.nonFiniteOutputs["y"], 2u);
}

//===----------------------------------------------------------------------===//
// Faults: each names the program, engine, instruction index and mnemonic.
//===----------------------------------------------------------------------===//

namespace {
std::string faultOf(TileProgram &t) {
  LaunchResult r = t.run(ExecMode::Functional, /*verifyOnLoad=*/false);
  return r.fault ? r.fault->str() : "no fault";
}
} // namespace

TEST(Faults, OutOfBoundsSbuf) {
  TileProgram t(Target::Trn1, "oob");
  AccessPattern in = t.input("x", 1, 4, {1, 2, 3, 4});
  t.add(isa::tensorCopy(sbufTile(DType::F32, 0, 1, 196608 - 8, 4), in));
  EXPECT_EQ(faultOf(t),
            "fault in program 'oob' core 0 engine VE instruction 0 "
            "(tensor_copy): operand dst sbuf access out of bounds: bytes "
            "[196600, 196616) of 196608 per partition");
}

TEST(Faults, PartitionsBeyond128) {
  TileProgram t(Target::Trn1, "parts");
  AccessPattern in = t.input("x", 1, 4, {1, 2, 3, 4});
  t.add(isa::tensorCopy(sbufTile(DType::F32, 100, 40, 0, 4),
                        sbufTile(DType::F32, 0, 40, 0, 4)));
  (void)in;
  std::string f = faultOf(t);
  EXPECT_NE(f.find("'parts' core 0 engine VE instruction 0 (tensor_copy)"),
            std::string::npos)
      << f;
  EXPECT_NE(f.find("spans partitions [100, 140) beyond 128"), std::string::npos)
      << f;
}

TEST(Faults, GpSimdCannotAccessPsum) {
  TileProgram t(Target::Trn1, "gp");
  t.add(isa::tensorCopy(sbufTile(DType::F32, 0, 4, 0, 4), psumTile(0, 4, 0, 4))
            .onEngine(Engine::GpSimd));
  std::string f = faultOf(t);
  EXPECT_NE(f.find("engine GP instruction 0 (tensor_copy): GpSimd cannot "
                   "access PSUM"),
            std::string::npos)
      << f;
}

TEST(Faults, OnlyTensorEngineWritesPsum) {
  TileProgram t(Target::Trn1, "ve");
  t.add(isa::memset(psumTile(0, 4, 0, 4), 1.0f));
  std::string f = faultOf(t);
  EXPECT_NE(f.find("engine VE instruction 0 (memset): VE cannot write PSUM"),
            std::string::npos)
      << f;
}

TEST(Faults, AccumulateOnUninitialisedPsum) {
  TileProgram t(Target::Trn1, "acc");
  AccessPattern a = t.input("a", 4, 4, std::vector<float>(16, 1.0f));
  t.add(isa::matmul(psumTile(0, 4, 0, 4), a, a, /*accumulate=*/true));
  std::string f = faultOf(t);
  EXPECT_NE(f.find("'acc' core 0 engine TE instruction 0 (matmul): "
                   "accumulate onto uninitialised PSUM"),
            std::string::npos)
      << f;
}

TEST(Faults, DmaCannotTouchPsumAndDeadlockIsReported) {
  TileProgram t(Target::Trn1, "dma");
  AccessPattern in = t.input("x", 4, 4, std::vector<float>(16, 1.0f));
  t.add(isa::dmaCopy(psumTile(0, 4, 0, 4), in));
  std::string f = faultOf(t);
  EXPECT_NE(f.find("engine DMA instruction 1 (dma_copy): DMA cannot access "
                   "PSUM"),
            std::string::npos)
      << f;

  ProgramBuilder b("stuck", Target::Trn1);
  b.emit(isa::semWait(7, 1).onEngine(Engine::Scalar));
  Device dev(Profile::builtin(Target::Trn1));
  auto r = dev.launch(*dev.loadProgram(b.take()));
  ASSERT_TRUE(r->fault);
  EXPECT_EQ(r->fault->str(),
            "fault in program 'stuck' core 0 engine SE instruction 0 "
            "(sem_wait): deadlock: no engine can make progress; waits for "
            "semaphore 7 >= 1 (is 0)");
}

// A binding with a zero dimension is legal (the dialect allows empty
// tensors); its raw constant has no bytes. Loading it once passed a null
// pointer to memcpy (UBSan, found by fuzz-program-loader; the input is kept
// in tests/fuzz/regressions/program-loader/). Run under `make test-asan`.
TEST(Functional, EmptyRawConstantAndEmptyBindingsLoadAndRun) {
  ProgramBuilder b("empty", Target::Trn1);
  uint32_t e = b.addBinding("e", {0, 4}, DType::F32, BindingRole::Param);
  b.setConstantBytes(e, {});
  uint32_t x = b.addBinding("x", {4, 8}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {4, 8}, DType::F32, BindingRole::Output);
  b.addBinding("z", {4, 0}, DType::F32, BindingRole::Output);
  AccessPattern tile = sbufTile(DType::F32, 0, 4, 0, 8);
  b.emit(isa::dmaCopy(tile, b.hbm(x, 0, 4, 8, {{8, 1}})).signal(0, 1));
  b.emit(isa::dmaCopy(b.hbm(y, 0, 4, 8, {{8, 1}}), tile).waitFor(0, 1));
  Program p = b.take();
  Status valid = verifyProgram(p);
  ASSERT_TRUE(valid) << valid.error();

  Device dev(Profile::builtin(Target::Trn1));
  auto id = dev.loadProgram(p);
  ASSERT_TRUE(bool(id)) << id.error();
  std::vector<float> in = randomValues(32, 7);
  auto r = dev.launch(*id, TensorMap{{"x", HostTensor{{4, 8}, in}}});
  ASSERT_TRUE(bool(r)) << r.error();
  ASSERT_FALSE(r->fault) << r->fault->message;
  EXPECT_EQ(r->outputs.at(0).at("y").data, in);
  EXPECT_TRUE(r->outputs.at(0).at("z").data.empty());
}
