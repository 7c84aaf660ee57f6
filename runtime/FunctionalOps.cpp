//===- FunctionalOps.cpp - Semantics of each instruction ------------------===//
//
// Each opcode is a small unit: resolve operands, check shapes, compute in
// fp32, store (rounding to bf16 where the destination is bf16).
//
//===----------------------------------------------------------------------===//

#include "runtime/Functional.h"
#include "runtime/Numerics.h"

#include <Eigen/Core>
#include <sstream>

namespace seam::rt {

namespace {
using S = Instruction::Slot;
const char *slotName(unsigned s) {
  static const char *names[] = {"dst", "src0", "src1", "aux"};
  return names[s];
}

AccessPattern atIteration(const AccessPattern &ap, const uint32_t *iters,
                          unsigned depth) {
  AccessPattern a = ap;
  for (unsigned d = 0; d < depth && d < kMaxLoopDepth; ++d)
    a.offset += static_cast<int64_t>(iters[d]) * ap.loopStep[d];
  return a;
}

std::string shapeText(const ResolvedAccess &a) {
  return "[" + std::to_string(a.partitions) + " x " +
         std::to_string(a.freeSize()) + "]";
}

/// Memory permissions of the engines (hardware.md "Engines and clocks":
/// GpSimd has no PSUM access; only the TE accumulates into PSUM).
Status checkPermissions(const Instruction &inst) {
  bool compute = inst.engine == Engine::Tensor ||
                 inst.engine == Engine::Vector ||
                 inst.engine == Engine::Scalar || inst.engine == Engine::GpSimd;
  for (unsigned s = 0; s < Instruction::NumSlots; ++s) {
    if (!inst.has(Instruction::Slot(s)))
      continue;
    const AccessPattern &ap = inst.aps[s];
    // Aux is activation's reduce output; scalar_tensor_tensor reads it.
    bool written =
        s == S::Dst || (s == S::Aux && inst.op == Opcode::Activation);
    std::string who = std::string(name(inst.engine));
    if (ap.space == MemSpace::Hbm && compute)
      return Status::failure(
          who + " cannot access HBM (operand " + slotName(s) +
          "); only DMA and collectives move data to and from HBM");
    if (ap.space == MemSpace::Psum) {
      if (inst.engine == Engine::GpSimd)
        return Status::failure(
            std::string("GpSimd cannot access PSUM (operand ") + slotName(s) +
            ")");
      if (!compute)
        return Status::failure(who + " cannot access PSUM (operand " +
                               slotName(s) + ")");
      if (written && inst.engine != Engine::Tensor)
        return Status::failure(
            who + " cannot write PSUM (operand " + slotName(s) +
            "): only the Tensor engine writes PSUM; other engines copy "
            "results out of it");
    }
    if (compute && ap.space != MemSpace::Hbm && ap.partitions > 64 &&
        ap.partitionStart != 0)
      return Status::failure(
          std::string("operand ") + slotName(s) + " spans " +
          std::to_string(ap.partitions) +
          " partitions but starts at partition " +
          std::to_string(ap.partitionStart) +
          " (a tile of more than 64 partitions starts at 0)");
  }
  if (inst.engine == Engine::Tensor) {
    if (inst.ap(S::Dst).space != MemSpace::Psum)
      return Status::failure(std::string(mnemonic(inst.op)) +
                             " must write PSUM");
    for (S s : {S::Src0, S::Src1})
      if (inst.has(s) && inst.ap(s).space != MemSpace::Sbuf)
        return Status::failure(std::string(mnemonic(inst.op)) +
                               " reads operand " + slotName(s) + " from " +
                               std::string(name(inst.ap(s).space)) +
                               "; the Tensor engine reads SBUF");
  }
  return Status::ok();
}
} // namespace

Status FunctionalMachine::execute(unsigned core, const Instruction &inst,
                                  const uint32_t *iters, unsigned depth) {
  if (Status allowed = checkPermissions(inst); !allowed)
    return allowed;
  return executeOp(core, inst, iters, depth);
}

namespace {
/// One execution of one instruction: its operands resolved for this
/// iteration, and the shape checks the semantics share.
struct Exec {
  Exec(FunctionalMachine &m, const Profile &profile, unsigned core,
       const Instruction &inst, const uint32_t *iters, unsigned depth)
      : m(m), profile(profile), core(core), inst(inst), iters(iters),
        depth(depth), res{} {}

  FunctionalMachine &m;
  const Profile &profile;
  unsigned core;
  const Instruction &inst;
  const uint32_t *iters;
  unsigned depth;
  ResolvedAccess res[Instruction::NumSlots];
  ResolvedAccess &dst = res[S::Dst];
  ResolvedAccess &src = res[S::Src0];
  std::vector<float> in, in2, out;
  /// One value per partition (perPartitionOr).
  std::vector<float> scalars;

  size_t f() const { return dst.freeSize(); }
  Status sameShape(S s) const {
    if (res[s].partitions != dst.partitions ||
        res[s].freeSize() != dst.freeSize())
      return Status::failure(std::string("operand ") + slotName(s) + " " +
                             shapeText(res[s]) + " does not match dst " +
                             shapeText(dst));
    return Status::ok();
  }
  Status perPartition(S s) const {
    if (res[s].partitions != dst.partitions || res[s].freeSize() != 1)
      return Status::failure(std::string("operand ") + slotName(s) + " " +
                             shapeText(res[s]) + " must be [" +
                             std::to_string(dst.partitions) + " x 1]");
    return Status::ok();
  }
  /// `scalars` = the [P, 1] operand in slot `s` when the instruction has it,
  /// else `imm` on every partition (a bias or scalar tile, or its
  /// immediate).
  Status perPartitionOr(S s, float imm) {
    if (!inst.has(s)) {
      scalars.assign(dst.partitions, imm);
      return Status::ok();
    }
    if (Status e = perPartition(s); !e)
      return e;
    m.load(res[s], scalars);
    return Status::ok();
  }
};

// The semantics of each Isa.def opcode: exec<Name>, dispatched from the
// table in FunctionalMachine::executeOp. Each fails with the fault message.

Status execDmaCopy(Exec &x) {
  const ResolvedAccess &src = x.src, &dst = x.dst;
  if (src.partitions * src.freeSize() != dst.partitions * dst.freeSize())
    return Status::failure(
        "dma_copy moves " + std::to_string(src.partitions * src.freeSize()) +
        " elements into " + std::to_string(dst.partitions * dst.freeSize()));
  x.m.load(src, x.in);
  x.m.store(dst, x.in.data());
  return Status::ok();
}

Status execMatmul(Exec &x) {
  const ResolvedAccess &st = x.src, &mv = x.res[S::Src1], &dst = x.dst;
  const Instruction &inst = x.inst;
  unsigned k = st.partitions, m = static_cast<unsigned>(st.freeSize());
  unsigned n = static_cast<unsigned>(mv.freeSize());
  if (mv.partitions != k)
    return Status::failure("matmul contracts stationary " + shapeText(st) +
                           " with moving " + shapeText(mv) +
                           ": partition counts differ");
  if (m > 128)
    return Status::failure("matmul stationary free size " + std::to_string(m) +
                           " exceeds 128");
  uint64_t bankElems = x.profile.psumBankBytes() / 4;
  if (n > bankElems)
    return Status::failure("matmul moving free size " + std::to_string(n) +
                           " exceeds " + std::to_string(bankElems) +
                           " (one PSUM bank)");
  if (dst.partitions != m || dst.freeSize() != n)
    return Status::failure("matmul output " + shapeText(dst) + " must be [" +
                           std::to_string(m) + " x " + std::to_string(n) + "]");
  if (dst.dtype != DType::F32)
    return Status::failure(
        "matmul output must be f32 (PSUM accumulates in fp32)");
  AccessPattern d = atIteration(inst.ap(S::Dst), x.iters, x.depth);
  ByteRange r = byteRange(d, nullptr, 0);
  uint64_t bank = x.profile.psumBankBytes();
  if (static_cast<uint64_t>(r.lo) / bank !=
      static_cast<uint64_t>(r.hi - 1) / bank)
    return Status::failure(
        "matmul output crosses a PSUM bank boundary (bytes [" +
        std::to_string(static_cast<long long>(r.lo)) + ", " +
        std::to_string(static_cast<long long>(r.hi)) + "), banks of " +
        std::to_string(bank) + ")");
  bool accumulate = inst.accumulate;
  if (accumulate && inst.startLevel >= 0 &&
      static_cast<unsigned>(inst.startLevel) < x.depth &&
      x.iters[inst.startLevel] == 0)
    accumulate = false;
  if (accumulate && !x.m.psumInitialised(x.core, dst))
    return Status::failure("accumulate onto uninitialised PSUM");
  x.m.load(st, x.in);
  x.m.load(mv, x.in2);
  using RowMat =
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMat> sm(x.in.data(), k, m), mm(x.in2.data(), k, n);
  RowMat result(m, n);
  result.noalias() = sm.transpose() * mm;
  if (accumulate) {
    x.m.load(dst, x.out);
    Eigen::Map<RowMat> acc(x.out.data(), m, n);
    acc += result;
    x.m.store(dst, x.out.data());
  } else {
    x.m.store(dst, result.data());
  }
  return Status::ok();
}

Status execTranspose(Exec &x) {
  const ResolvedAccess &src = x.src, &dst = x.dst;
  unsigned p = src.partitions, fs = static_cast<unsigned>(src.freeSize());
  if (fs > 128)
    return Status::failure("transpose input free size " + std::to_string(fs) +
                           " exceeds 128");
  if (dst.partitions != fs || dst.freeSize() != p)
    return Status::failure("transpose output " + shapeText(dst) + " must be [" +
                           std::to_string(fs) + " x " + std::to_string(p) +
                           "]");
  x.m.load(src, x.in);
  x.out.resize(x.in.size());
  for (unsigned i = 0; i < p; ++i)
    for (unsigned j = 0; j < fs; ++j)
      x.out[j * p + i] = x.in[i * fs + j];
  x.m.store(dst, x.out.data());
  return Status::ok();
}

Status execActivation(Exec &x) {
  const Instruction &inst = x.inst;
  const ResolvedAccess &dst = x.dst;
  size_t f = x.f();
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  if (Status e = x.perPartitionOr(S::Src1, inst.bias); !e)
    return e;
  if (inst.has(S::Aux))
    if (Status e = x.perPartition(S::Aux); !e)
      return e;
  x.m.load(x.src, x.in);
  x.out.resize(x.in.size());
  std::vector<float> sums(dst.partitions, 0.0f);
  for (unsigned p = 0; p < dst.partitions; ++p) {
    float b = x.scalars[p];
    for (size_t i = 0; i < f; ++i) {
      float y = applyActivation(inst.act, x.in[p * f + i] * inst.scale + b);
      x.out[p * f + i] = y;
      sums[p] += y;
    }
  }
  x.m.store(dst, x.out.data());
  if (inst.has(S::Aux))
    x.m.store(x.res[S::Aux], sums.data());
  return Status::ok();
}

Status execTensorTensor(Exec &x) {
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  if (Status e = x.sameShape(S::Src1); !e)
    return e;
  x.m.load(x.src, x.in);
  x.m.load(x.res[S::Src1], x.in2);
  x.out.resize(x.in.size());
  for (size_t i = 0; i < x.in.size(); ++i)
    x.out[i] = applyAlu(x.inst.alu, x.in[i], x.in2[i]);
  x.m.store(x.dst, x.out.data());
  return Status::ok();
}

Status execTensorScalar(Exec &x) {
  const Instruction &inst = x.inst;
  size_t f = x.f();
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  if (inst.has(S::Aux) && !inst.secondOp)
    return Status::failure("operand aux without a second operation");
  std::vector<float> second;
  if (inst.secondOp) {
    if (Status e = x.perPartitionOr(S::Aux, inst.scalar1); !e)
      return e;
    second = std::move(x.scalars);
  }
  if (Status e = x.perPartitionOr(S::Src1, inst.scalar); !e)
    return e;
  x.m.load(x.src, x.in);
  x.out.resize(x.in.size());
  for (unsigned p = 0; p < x.dst.partitions; ++p) {
    float s = x.scalars[p];
    for (size_t i = 0; i < f; ++i) {
      float v = x.in[p * f + i];
      v = inst.reverse ? applyAlu(inst.alu, s, v) : applyAlu(inst.alu, v, s);
      x.out[p * f + i] = inst.secondOp ? applyAlu(inst.alu1, v, second[p]) : v;
    }
  }
  x.m.store(x.dst, x.out.data());
  return Status::ok();
}

Status execScalarTensorTensor(Exec &x) {
  const Instruction &inst = x.inst;
  size_t f = x.f();
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  if (Status e = x.sameShape(S::Src1); !e)
    return e;
  if (Status e = x.perPartitionOr(S::Aux, inst.scalar); !e)
    return e;
  x.m.load(x.src, x.in);
  x.m.load(x.res[S::Src1], x.in2);
  x.out.resize(x.in.size());
  for (unsigned p = 0; p < x.dst.partitions; ++p) {
    float s = x.scalars[p];
    for (size_t i = 0; i < f; ++i)
      x.out[p * f + i] =
          applyAlu(inst.alu, x.in[p * f + i] * s, x.in2[p * f + i]);
  }
  x.m.store(x.dst, x.out.data());
  return Status::ok();
}

Status execTensorTensorScan(Exec &x) {
  // Per partition, along the free dim: acc = initial (the Aux [P, 1] tile
  // or the immediate), then acc = (data0[i] <alu> acc) <alu1> data1[i],
  // each step's acc stored (NKI's tensor_tensor_scan, op0 and op1).
  const Instruction &inst = x.inst;
  size_t f = x.f();
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  if (Status e = x.sameShape(S::Src1); !e)
    return e;
  if (Status e = x.perPartitionOr(S::Aux, inst.scalar); !e)
    return e;
  x.m.load(x.src, x.in);
  x.m.load(x.res[S::Src1], x.in2);
  x.out.resize(x.in.size());
  for (unsigned p = 0; p < x.dst.partitions; ++p) {
    float acc = x.scalars[p];
    for (size_t i = 0; i < f; ++i) {
      acc = applyAlu(inst.alu1, applyAlu(inst.alu, x.in[p * f + i], acc),
                     x.in2[p * f + i]);
      x.out[p * f + i] = acc;
    }
  }
  x.m.store(x.dst, x.out.data());
  return Status::ok();
}

Status execTensorReduce(Exec &x) {
  const ResolvedAccess &src = x.src, &dst = x.dst;
  const AccessPattern &sap = x.inst.ap(S::Src0);
  size_t inner = sap.dims[sap.numDims - 1].size;
  size_t outer = src.freeSize() / inner;
  if (dst.partitions != src.partitions || dst.freeSize() != outer)
    return Status::failure("tensor_reduce of " + shapeText(src) +
                           " over its last dim (" + std::to_string(inner) +
                           ") must write [" + std::to_string(src.partitions) +
                           " x " + std::to_string(outer) + "], not " +
                           shapeText(dst));
  x.m.load(src, x.in);
  x.out.resize(dst.partitions * outer);
  for (unsigned p = 0; p < src.partitions; ++p)
    for (size_t o = 0; o < outer; ++o) {
      const float *row = x.in.data() + p * src.freeSize() + o * inner;
      float acc = row[0];
      for (size_t i = 1; i < inner; ++i)
        acc = applyAlu(x.inst.alu, acc, row[i]);
      x.out[p * outer + o] = acc;
    }
  x.m.store(dst, x.out.data());
  return Status::ok();
}

Status execTensorCopy(Exec &x) {
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  x.m.load(x.src, x.in);
  x.m.store(x.dst, x.in.data());
  return Status::ok();
}

Status execReciprocal(Exec &x) {
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  x.m.load(x.src, x.in);
  for (float &v : x.in)
    v = 1.0f / v;
  x.m.store(x.dst, x.in.data());
  return Status::ok();
}

/// Writes dst[p, i] = value(p, i, affine(p, i)) (iota, affine_select,
/// memset), with affine = affineConst + partitionCoef * p + freeCoef * i.
template <typename Fn> Status fillAffine(Exec &x, Fn value) {
  const Instruction &inst = x.inst;
  size_t f = x.f();
  x.out.resize(x.dst.partitions * f);
  for (unsigned p = 0; p < x.dst.partitions; ++p)
    for (size_t i = 0; i < f; ++i) {
      float expr = inst.affineConst + inst.partitionCoef * float(p) +
                   inst.freeCoef * float(i);
      x.out[p * f + i] = value(p * f + i, expr);
    }
  x.m.store(x.dst, x.out.data());
  return Status::ok();
}

Status execIota(Exec &x) {
  return fillAffine(x, [](size_t, float expr) { return expr; });
}

Status execMemset(Exec &x) {
  return fillAffine(x, [&](size_t, float) { return x.inst.scalar; });
}

Status execAffineSelect(Exec &x) {
  if (Status e = x.sameShape(S::Src0); !e)
    return e;
  x.m.load(x.src, x.in);
  return fillAffine(x, [&](size_t at, float expr) {
    return (x.inst.alu == AluOp::IsGe ? expr >= 0 : expr == 0) ? x.in[at]
                                                               : x.inst.scalar;
  });
}

// Semaphores and loop markers act on the timing walk only; collectives run
// through executeCollective (all ranks at once).
Status execSemSignal(Exec &) { return Status::ok(); }
Status execSemWait(Exec &) { return Status::ok(); }
Status execLoopBegin(Exec &) { return Status::ok(); }
Status execLoopEnd(Exec &) { return Status::ok(); }
Status execAllReduce(Exec &) { return Status::ok(); }
Status execAllGather(Exec &) { return Status::ok(); }
} // namespace

Status FunctionalMachine::executeOp(unsigned core, const Instruction &inst,
                                    const uint32_t *iters, unsigned depth) {
  Exec x{*this, profile, core, inst, iters, depth};
  for (unsigned s = 0; s < Instruction::NumSlots; ++s) {
    if (!inst.has(Instruction::Slot(s)))
      continue;
    Status resolved = resolve(core, inst.aps[s], iters, depth, x.res[s]);
    if (!resolved)
      return Status::failure(std::string("operand ") + slotName(s) + " " +
                             resolved.error());
  }
  switch (inst.op) {
#define NCORE_OPCODE(Name, ...)                                                \
  case Opcode::Name:                                                           \
    return exec##Name(x);
#include "runtime/Isa.def"
  }
  return Status::ok();
}

Status FunctionalMachine::executeCollective(
    const std::vector<const Instruction *> &insts,
    const std::vector<std::array<uint32_t, kMaxLoopDepth>> &iters) {
  size_t ranks = insts.size();
  std::vector<std::vector<float>> data(ranks);
  std::vector<ResolvedAccess> dsts(ranks);
  for (unsigned r = 0; r < ranks; ++r) {
    const Instruction &inst = *insts[r];
    for (S s : {S::Dst, S::Src0})
      if (inst.ap(s).space == MemSpace::Psum)
        return Status::failure(
            std::string("collectives cannot access PSUM (rank ") +
            std::to_string(r) + " operand " + slotName(s) + ")");
    ResolvedAccess src;
    unsigned depth = kMaxLoopDepth;
    Status resolved = resolve(r, inst.ap(S::Src0), iters[r].data(), depth, src);
    if (resolved)
      resolved = resolve(r, inst.ap(S::Dst), iters[r].data(), depth, dsts[r]);
    if (!resolved)
      return Status::failure("rank " + std::to_string(r) + ": " +
                             resolved.error());
    load(src, data[r]);
  }
  size_t n = data[0].size();
  std::vector<float> result;
  if (insts[0]->op == Opcode::AllReduce) {
    result = data[0];
    for (size_t r = 1; r < ranks; ++r)
      for (size_t i = 0; i < n; ++i)
        result[i] = applyAlu(insts[0]->alu, result[i], data[r][i]);
  } else {
    for (size_t r = 0; r < ranks; ++r)
      result.insert(result.end(), data[r].begin(), data[r].end());
  }
  for (unsigned r = 0; r < ranks; ++r) {
    if (dsts[r].partitions * dsts[r].freeSize() != result.size())
      return Status::failure("rank " + std::to_string(r) + ": " +
                             std::string(mnemonic(insts[0]->op)) + " writes " +
                             std::to_string(result.size()) + " elements into " +
                             shapeText(dsts[r]));
    store(dsts[r], result.data());
  }
  return Status::ok();
}

} // namespace seam::rt
