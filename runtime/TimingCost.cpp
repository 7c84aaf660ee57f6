//===- TimingCost.cpp - Instruction cost formulas -------------------------===//
//
// Every formula below is a row of shared/reference/hardware.md, "Instruction
// costs (engine cycles; N = free-dim elements per partition)", from the NKI
// ISA reference (older revision with cost formulas). The constants come from
// the profile, which cites the same rows.
//
//===----------------------------------------------------------------------===//

#include "runtime/Timing.h"

#include <algorithm>
#include <sstream>

namespace seam::rt {

static bool isContiguous(const AccessPattern &ap) {
  int64_t expected = 1;
  for (int d = ap.numDims - 1; d >= 0; --d) {
    if (ap.dims[d].size != 1 && ap.dims[d].stride != expected)
      return false;
    expected *= ap.dims[d].size;
  }
  return true;
}

double instructionCycles(const Instruction &inst, const Profile &p) {
  using S = Instruction::Slot;
  const double minIi = p.minIiCycles; // MIN_II
  auto freeN = [&](S slot) {
    return static_cast<double>(inst.ap(slot).freeElements());
  };
  switch (inst.op) {
  case Opcode::Activation: {
    // activation: max(64, N); with reduce: max(64, N) + 64.
    double c = std::max(minIi, freeN(S::Src0));
    if (inst.has(S::Aux))
      c += p.actReduceExtraCycles;
    return c;
  }
  case Opcode::TensorScalar:
  case Opcode::TensorCopy:
    // tensor_scalar, tensor_copy: max(64, N).
    return std::max(minIi, freeN(S::Src0));
  case Opcode::Memset:
    // memset: max(64, N).
    return std::max(minIi, freeN(S::Dst));
  case Opcode::TensorTensor: {
    // tensor_tensor: max(64, 2N); max(64, N) when one input is in PSUM or
    // all-bf16 contiguous add/mul/sub.
    const AccessPattern &a = inst.ap(S::Src0), &b = inst.ap(S::Src1),
                        &d = inst.ap(S::Dst);
    bool inPsum = a.space == MemSpace::Psum || b.space == MemSpace::Psum;
    bool fastAlu = inst.alu == AluOp::Add || inst.alu == AluOp::Multiply ||
                   inst.alu == AluOp::Subtract;
    bool allBf16 = a.dtype == DType::BF16 && b.dtype == DType::BF16 &&
                   d.dtype == DType::BF16 && isContiguous(a) &&
                   isContiguous(b) && isContiguous(d);
    double n = freeN(S::Src0);
    if (inPsum || (allBf16 && fastAlu))
      return std::max(minIi, n);
    return std::max(minIi, p.tensorTensorCyclesPerElement * n);
  }
  case Opcode::TensorReduce: {
    // tensor_reduce: N (N/2 for bf16 add/max).
    double n = freeN(S::Src0);
    bool half = inst.ap(S::Src0).dtype == DType::BF16 &&
                (inst.alu == AluOp::Add || inst.alu == AluOp::Max);
    return half ? n / 2 : n;
  }
  case Opcode::Reciprocal:
    // reciprocal: max(64, 8N).
    return std::max(minIi, p.reciprocalCyclesPerElement * freeN(S::Src0));
  case Opcode::Iota:
  case Opcode::AffineSelect:
    // iota, affine_select (GpSimd): 150 + N.
    return p.gpsimdFixedCycles + freeN(S::Dst);
  case Opcode::Matmul:
  case Opcode::Transpose: {
    // matmul: back-to-back issue every max(min(64, N_stationary), N_moving);
    // FP32 operands 4x. A transpose is a matmul of the input (stationary,
    // N_stationary = its free size) against an identity whose N_moving is the
    // input's partition count.
    const AccessPattern &st = inst.ap(S::Src0);
    double nStationary = static_cast<double>(st.freeElements());
    double nMoving = inst.op == Opcode::Matmul
                         ? static_cast<double>(inst.ap(S::Src1).freeElements())
                         : static_cast<double>(st.partitions);
    double c = std::max(std::min(p.matmulStationaryIssueCap, nStationary),
                        nMoving);
    bool fp32 = st.dtype == DType::F32 ||
                (inst.op == Opcode::Matmul &&
                 inst.ap(S::Src1).dtype == DType::F32);
    return fp32 ? c * p.matmulFp32Factor : c;
  }
  default:
    return 0; // semaphores, loops; DMA and collectives are timed elsewhere.
  }
}

InstructionCost instructionCost(const Instruction &inst, const Profile &p) {
  InstructionCost cost;
  cost.cycles = instructionCycles(inst, p);
  double clock = p.clockGhz(inst.engine);
  cost.busyNs = clock > 0 ? cost.cycles / clock : 0;
  cost.latencyNs = cost.busyNs;
  // MM_INIT_LATENCY: the PSUM result lands after the issue interval.
  if ((inst.op == Opcode::Matmul || inst.op == Opcode::Transpose) && clock > 0)
    cost.latencyNs += p.mmInitLatencyCycles / clock;
  return cost;
}

double dmaDurationNs(uint64_t bytes, double bytesPerNs, const Profile &p) {
  // hardware.md "DMA": fixed cost per transfer + bytes / sustained bandwidth.
  return p.dmaFixedCostNs + static_cast<double>(bytes) / bytesPerNs;
}

double collectiveDurationNs(Opcode op, uint64_t bytesPerRank, unsigned ranks,
                            const Profile &p) {
  if (ranks <= 1)
    return 0;
  // Ring algorithms: all_reduce = reduce-scatter + all-gather, 2(R-1) hops
  // each carrying bytes/R; all_gather = R-1 hops each carrying bytes.
  // hardware.md "Between cores": ~1-2 us per hop, NeuronLink bandwidth.
  double r = ranks;
  double b = static_cast<double>(bytesPerRank);
  if (op == Opcode::AllReduce)
    return 2 * (r - 1) * p.collectiveHopLatencyNs +
           2 * (r - 1) / r * b / p.neuronLinkBytesPerNs;
  return (r - 1) * p.collectiveHopLatencyNs +
         (r - 1) * b / p.neuronLinkBytesPerNs;
}

std::string Fault::str() const {
  std::ostringstream os;
  os << "fault in program '" << program << "' core " << core << " engine "
     << name(engine) << " instruction " << index << " (" << mnemonic
     << "): " << message;
  return os.str();
}

} // namespace seam::rt
