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
std::string checkPermissions(const Instruction &inst) {
  bool compute = inst.engine == Engine::Tensor ||
                 inst.engine == Engine::Vector ||
                 inst.engine == Engine::Scalar || inst.engine == Engine::GpSimd;
  for (unsigned s = 0; s < Instruction::NumSlots; ++s) {
    if (!inst.has(Instruction::Slot(s)))
      continue;
    const AccessPattern &ap = inst.aps[s];
    bool written = s == S::Dst || s == S::Aux;
    std::string who = std::string(name(inst.engine));
    if (ap.space == MemSpace::Hbm && compute)
      return who + " cannot access HBM (operand " + slotName(s) +
             "); only DMA and collectives move data to and from HBM";
    if (ap.space == MemSpace::Psum) {
      if (inst.engine == Engine::GpSimd)
        return std::string("GpSimd cannot access PSUM (operand ") +
               slotName(s) + ")";
      if (!compute)
        return who + " cannot access PSUM (operand " + slotName(s) + ")";
      if (written && inst.engine != Engine::Tensor)
        return who + " cannot write PSUM (operand " + slotName(s) +
               "): only the Tensor engine writes PSUM; other engines copy "
               "results out of it";
    }
    if (compute && ap.space != MemSpace::Hbm && ap.partitions > 64 &&
        ap.partitionStart != 0)
      return std::string("operand ") + slotName(s) + " spans " +
             std::to_string(ap.partitions) +
             " partitions but starts at partition " +
             std::to_string(ap.partitionStart) +
             " (a tile of more than 64 partitions starts at 0)";
  }
  if (inst.engine == Engine::Tensor) {
    if (inst.ap(S::Dst).space != MemSpace::Psum)
      return std::string(mnemonic(inst.op)) + " must write PSUM";
    for (S s : {S::Src0, S::Src1})
      if (inst.has(s) && inst.ap(s).space != MemSpace::Sbuf)
        return std::string(mnemonic(inst.op)) + " reads operand " +
               slotName(s) + " from " + std::string(name(inst.ap(s).space)) +
               "; the Tensor engine reads SBUF";
  }
  return "";
}
} // namespace

std::string FunctionalMachine::execute(unsigned core, const Instruction &inst,
                                       const uint32_t *iters, unsigned depth) {
  std::string err = checkPermissions(inst);
  if (!err.empty())
    return err;
  return executeOp(core, inst, iters, depth);
}

std::string FunctionalMachine::executeOp(unsigned core,
                                         const Instruction &inst,
                                         const uint32_t *iters,
                                         unsigned depth) {
  ResolvedAccess res[Instruction::NumSlots];
  for (unsigned s = 0; s < Instruction::NumSlots; ++s) {
    if (!inst.has(Instruction::Slot(s)))
      continue;
    std::string err = resolve(core, inst.aps[s], iters, depth, res[s]);
    if (!err.empty())
      return std::string("operand ") + slotName(s) + " " + err;
  }
  ResolvedAccess &dst = res[S::Dst];
  ResolvedAccess &src = res[S::Src0];
  std::vector<float> in, in2, out;
  auto sameShape = [&](S s) -> std::string {
    if (res[s].partitions != dst.partitions ||
        res[s].freeSize() != dst.freeSize())
      return std::string("operand ") + slotName(s) + " " +
             shapeText(res[s]) + " does not match dst " + shapeText(dst);
    return "";
  };
  auto perPartition = [&](S s) -> std::string {
    if (res[s].partitions != dst.partitions || res[s].freeSize() != 1)
      return std::string("operand ") + slotName(s) + " " +
             shapeText(res[s]) + " must be [" +
             std::to_string(dst.partitions) + " x 1]";
    return "";
  };
  size_t f = dst.freeSize();

  switch (inst.op) {
  case Opcode::DmaCopy: {
    if (src.partitions * src.freeSize() != dst.partitions * dst.freeSize())
      return "dma_copy moves " +
             std::to_string(src.partitions * src.freeSize()) +
             " elements into " +
             std::to_string(dst.partitions * dst.freeSize());
    load(src, in);
    store(dst, in.data());
    return "";
  }
  case Opcode::Matmul: {
    const ResolvedAccess &st = src, &mv = res[S::Src1];
    unsigned k = st.partitions, m = static_cast<unsigned>(st.freeSize());
    unsigned n = static_cast<unsigned>(mv.freeSize());
    if (mv.partitions != k)
      return "matmul contracts stationary " + shapeText(st) + " with moving " +
             shapeText(mv) + ": partition counts differ";
    if (m > 128)
      return "matmul stationary free size " + std::to_string(m) +
             " exceeds 128";
    uint64_t bankElems = profile.psumBankBytes() / 4;
    if (n > bankElems)
      return "matmul moving free size " + std::to_string(n) + " exceeds " +
             std::to_string(bankElems) + " (one PSUM bank)";
    if (dst.partitions != m || dst.freeSize() != n)
      return "matmul output " + shapeText(dst) + " must be [" +
             std::to_string(m) + " x " + std::to_string(n) + "]";
    if (dst.dtype != DType::F32)
      return "matmul output must be f32 (PSUM accumulates in fp32)";
    AccessPattern d = atIteration(inst.ap(S::Dst), iters, depth);
    ByteRange r = byteRange(d, nullptr, 0);
    uint64_t bank = profile.psumBankBytes();
    if (static_cast<uint64_t>(r.lo) / bank !=
        static_cast<uint64_t>(r.hi - 1) / bank)
      return "matmul output crosses a PSUM bank boundary (bytes [" +
             std::to_string(static_cast<long long>(r.lo)) + ", " +
             std::to_string(static_cast<long long>(r.hi)) + "), banks of " +
             std::to_string(bank) + ")";
    bool accumulate = inst.accumulate;
    if (accumulate && inst.startLevel >= 0 &&
        static_cast<unsigned>(inst.startLevel) < depth &&
        iters[inst.startLevel] == 0)
      accumulate = false;
    if (accumulate && !psumInitialised(core, dst))
      return "accumulate onto uninitialised PSUM";
    load(st, in);
    load(mv, in2);
    using RowMat =
        Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const RowMat> sm(in.data(), k, m), mm(in2.data(), k, n);
    RowMat result(m, n);
    result.noalias() = sm.transpose() * mm;
    if (accumulate) {
      load(dst, out);
      Eigen::Map<RowMat> acc(out.data(), m, n);
      acc += result;
      store(dst, out.data());
    } else {
      store(dst, result.data());
    }
    return "";
  }
  case Opcode::Transpose: {
    unsigned p = src.partitions, fs = static_cast<unsigned>(src.freeSize());
    if (fs > 128)
      return "transpose input free size " + std::to_string(fs) +
             " exceeds 128";
    if (dst.partitions != fs || dst.freeSize() != p)
      return "transpose output " + shapeText(dst) + " must be [" +
             std::to_string(fs) + " x " + std::to_string(p) + "]";
    load(src, in);
    out.resize(in.size());
    for (unsigned i = 0; i < p; ++i)
      for (unsigned j = 0; j < fs; ++j)
        out[j * p + i] = in[i * fs + j];
    store(dst, out.data());
    return "";
  }
  case Opcode::Activation: {
    if (auto e = sameShape(S::Src0); !e.empty())
      return e;
    if (inst.has(S::Src1))
      if (auto e = perPartition(S::Src1); !e.empty())
        return e;
    if (inst.has(S::Aux))
      if (auto e = perPartition(S::Aux); !e.empty())
        return e;
    load(src, in);
    if (inst.has(S::Src1))
      load(res[S::Src1], in2);
    out.resize(in.size());
    std::vector<float> sums(dst.partitions, 0.0f);
    for (unsigned p = 0; p < dst.partitions; ++p) {
      float b = inst.has(S::Src1) ? in2[p] : inst.bias;
      for (size_t i = 0; i < f; ++i) {
        float y = applyActivation(inst.act, in[p * f + i] * inst.scale + b);
        out[p * f + i] = y;
        sums[p] += y;
      }
    }
    store(dst, out.data());
    if (inst.has(S::Aux))
      store(res[S::Aux], sums.data());
    return "";
  }
  case Opcode::TensorTensor: {
    if (auto e = sameShape(S::Src0); !e.empty())
      return e;
    if (auto e = sameShape(S::Src1); !e.empty())
      return e;
    load(src, in);
    load(res[S::Src1], in2);
    out.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      out[i] = applyAlu(inst.alu, in[i], in2[i]);
    store(dst, out.data());
    return "";
  }
  case Opcode::TensorScalar: {
    if (auto e = sameShape(S::Src0); !e.empty())
      return e;
    if (inst.has(S::Src1))
      if (auto e = perPartition(S::Src1); !e.empty())
        return e;
    load(src, in);
    if (inst.has(S::Src1))
      load(res[S::Src1], in2);
    out.resize(in.size());
    for (unsigned p = 0; p < dst.partitions; ++p) {
      float s = inst.has(S::Src1) ? in2[p] : inst.scalar;
      for (size_t i = 0; i < f; ++i) {
        float x = in[p * f + i];
        out[p * f + i] =
            inst.reverse ? applyAlu(inst.alu, s, x) : applyAlu(inst.alu, x, s);
      }
    }
    store(dst, out.data());
    return "";
  }
  case Opcode::TensorReduce: {
    const AccessPattern &sap = inst.ap(S::Src0);
    size_t inner = sap.dims[sap.numDims - 1].size;
    size_t outer = src.freeSize() / inner;
    if (dst.partitions != src.partitions || dst.freeSize() != outer)
      return "tensor_reduce of " + shapeText(src) + " over its last dim (" +
             std::to_string(inner) + ") must write [" +
             std::to_string(src.partitions) + " x " + std::to_string(outer) +
             "], not " + shapeText(dst);
    load(src, in);
    out.resize(dst.partitions * outer);
    for (unsigned p = 0; p < src.partitions; ++p)
      for (size_t o = 0; o < outer; ++o) {
        const float *row = in.data() + p * src.freeSize() + o * inner;
        float acc = row[0];
        for (size_t i = 1; i < inner; ++i)
          acc = applyAlu(inst.alu, acc, row[i]);
        out[p * outer + o] = acc;
      }
    store(dst, out.data());
    return "";
  }
  case Opcode::TensorCopy:
  case Opcode::Reciprocal: {
    if (auto e = sameShape(S::Src0); !e.empty())
      return e;
    load(src, in);
    if (inst.op == Opcode::Reciprocal)
      for (float &v : in)
        v = 1.0f / v;
    store(dst, in.data());
    return "";
  }
  case Opcode::Iota:
  case Opcode::AffineSelect:
  case Opcode::Memset: {
    if (inst.op == Opcode::AffineSelect) {
      if (auto e = sameShape(S::Src0); !e.empty())
        return e;
      load(src, in);
    }
    out.resize(dst.partitions * f);
    for (unsigned p = 0; p < dst.partitions; ++p)
      for (size_t i = 0; i < f; ++i) {
        float expr = inst.affineConst + inst.partitionCoef * float(p) +
                     inst.freeCoef * float(i);
        float &o = out[p * f + i];
        if (inst.op == Opcode::Iota)
          o = expr;
        else if (inst.op == Opcode::Memset)
          o = inst.scalar;
        else
          o = (inst.alu == AluOp::IsGe ? expr >= 0 : expr == 0)
                  ? in[p * f + i]
                  : inst.scalar;
      }
    store(dst, out.data());
    return "";
  }
  default:
    return "";
  }
}

std::string FunctionalMachine::executeCollective(
    const std::vector<const Instruction *> &insts,
    const std::vector<std::array<uint32_t, kMaxLoopDepth>> &iters) {
  size_t ranks = insts.size();
  std::vector<std::vector<float>> data(ranks);
  std::vector<ResolvedAccess> dsts(ranks);
  for (unsigned r = 0; r < ranks; ++r) {
    const Instruction &inst = *insts[r];
    for (S s : {S::Dst, S::Src0})
      if (inst.ap(s).space == MemSpace::Psum)
        return std::string("collectives cannot access PSUM (rank ") +
               std::to_string(r) + " operand " + slotName(s) + ")";
    ResolvedAccess src;
    unsigned depth = kMaxLoopDepth;
    std::string err =
        resolve(r, inst.ap(S::Src0), iters[r].data(), depth, src);
    if (err.empty())
      err = resolve(r, inst.ap(S::Dst), iters[r].data(), depth, dsts[r]);
    if (!err.empty())
      return "rank " + std::to_string(r) + ": " + err;
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
      return "rank " + std::to_string(r) + ": " +
             std::string(mnemonic(insts[0]->op)) + " writes " +
             std::to_string(result.size()) + " elements into " +
             shapeText(dsts[r]);
    store(dsts[r], result.data());
  }
  return "";
}

} // namespace seam::rt
