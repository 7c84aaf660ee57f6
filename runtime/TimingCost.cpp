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

namespace {
using S = Instruction::Slot;

double freeN(const Instruction &inst, S slot) {
  return static_cast<double>(inst.ap(slot).freeElements());
}

// The cost of each Isa.def opcode: cycles<Name>, dispatched from the table in
// instructionCycles. MIN_II is p.minIiCycles.

double cyclesActivation(const Instruction &inst, const Profile &p) {
  // activation: max(64, N); with reduce: max(64, N) + 64.
  double c = std::max(p.minIiCycles, freeN(inst, S::Src0));
  if (inst.has(S::Aux))
    c += p.actReduceExtraCycles;
  return c;
}

double cyclesTensorScalar(const Instruction &inst, const Profile &p) {
  // tensor_scalar: max(64, N), with one operation or two (NKI ISA docs,
  // nki.isa.tensor_scalar: "performing one operator has the same
  // performance cost as performing two operators in the instruction").
  return std::max(p.minIiCycles, freeN(inst, S::Src0));
}

double cyclesTensorCopy(const Instruction &inst, const Profile &p) {
  // tensor_copy: max(64, N).
  return std::max(p.minIiCycles, freeN(inst, S::Src0));
}

double cyclesMemset(const Instruction &inst, const Profile &p) {
  // memset: max(64, N).
  return std::max(p.minIiCycles, freeN(inst, S::Dst));
}

double cyclesTensorTensor(const Instruction &inst, const Profile &p) {
  // tensor_tensor: max(64, 2N); max(64, N) when one input is in PSUM or
  // all-bf16 contiguous add/mul/sub.
  const AccessPattern &a = inst.ap(S::Src0), &b = inst.ap(S::Src1),
                      &d = inst.ap(S::Dst);
  bool inPsum = a.space == MemSpace::Psum || b.space == MemSpace::Psum;
  bool fastAlu = inst.alu == AluOp::Add || inst.alu == AluOp::Multiply ||
                 inst.alu == AluOp::Subtract;
  bool allBf16 = a.dtype == DType::BF16 && b.dtype == DType::BF16 &&
                 d.dtype == DType::BF16 && isContiguous(a) && isContiguous(b) &&
                 isContiguous(d);
  double n = freeN(inst, S::Src0);
  if (inPsum || (allBf16 && fastAlu))
    return std::max(p.minIiCycles, n);
  return std::max(p.minIiCycles, p.tensorTensorCyclesPerElement * n);
}

double cyclesScalarTensorTensor(const Instruction &inst, const Profile &p) {
  // scalar_tensor_tensor: hardware.md has no row for it. Estimated as
  // tensor_tensor's formula: it streams the same two tensor inputs per
  // element, the scalar product riding along in the same pass.
  return cyclesTensorTensor(inst, p);
}

double cyclesTensorTensorScan(const Instruction &inst, const Profile &p) {
  // tensor_tensor_scan: the NKI ISA reference gives no cost formula
  // (nki.isa.tensor_tensor_scan; hardware.md has no row). Estimated as
  // tensor_tensor's formula: it streams the same two tensor inputs per
  // element, the running value kept inside the Vector engine (fused_mamba
  // tutorial, step 4: "caching the intermediate scan result ... internally
  // in VectorE without going through SBUF").
  return cyclesTensorTensor(inst, p);
}

double cyclesTensorReduce(const Instruction &inst, const Profile &) {
  // tensor_reduce: N (N/2 for bf16 add/max).
  double n = freeN(inst, S::Src0);
  bool half = inst.ap(S::Src0).dtype == DType::BF16 &&
              (inst.alu == AluOp::Add || inst.alu == AluOp::Max);
  return half ? n / 2 : n;
}

double cyclesReciprocal(const Instruction &inst, const Profile &p) {
  // reciprocal: max(64, 8N).
  return std::max(p.minIiCycles,
                  p.reciprocalCyclesPerElement * freeN(inst, S::Src0));
}

double cyclesIota(const Instruction &inst, const Profile &p) {
  // iota (GpSimd): 150 + N.
  return p.gpsimdFixedCycles + freeN(inst, S::Dst);
}

double cyclesAffineSelect(const Instruction &inst, const Profile &p) {
  // affine_select (GpSimd): 150 + N.
  return p.gpsimdFixedCycles + freeN(inst, S::Dst);
}

/// matmul: back-to-back issue every max(min(64, N_stationary), N_moving);
/// FP32 operands 4x. A transpose is a matmul of the input (stationary,
/// N_stationary = its free size) against an identity whose N_moving is the
/// input's partition count.
double tensorEngineCycles(const Instruction &inst, const Profile &p,
                          double nMoving, bool fp32Moving) {
  const AccessPattern &st = inst.ap(S::Src0);
  double nStationary = static_cast<double>(st.freeElements());
  double c =
      std::max(std::min(p.matmulStationaryIssueCap, nStationary), nMoving);
  bool fp32 = st.dtype == DType::F32 || fp32Moving;
  return fp32 ? c * p.matmulFp32Factor : c;
}

double cyclesMatmul(const Instruction &inst, const Profile &p) {
  return tensorEngineCycles(inst, p, freeN(inst, S::Src1),
                            inst.ap(S::Src1).dtype == DType::F32);
}

double cyclesTranspose(const Instruction &inst, const Profile &p) {
  return tensorEngineCycles(
      inst, p, static_cast<double>(inst.ap(S::Src0).partitions), false);
}

// Semaphores and loops take no engine time; DMA and collectives are timed by
// the simulator (dmaDurationNs, collectiveDurationNs: they depend on
// concurrent traffic).
double cyclesSemSignal(const Instruction &, const Profile &) { return 0; }
double cyclesSemWait(const Instruction &, const Profile &) { return 0; }
double cyclesLoopBegin(const Instruction &, const Profile &) { return 0; }
double cyclesLoopEnd(const Instruction &, const Profile &) { return 0; }
double cyclesDmaCopy(const Instruction &, const Profile &) { return 0; }
double cyclesAllReduce(const Instruction &, const Profile &) { return 0; }
double cyclesAllGather(const Instruction &, const Profile &) { return 0; }
} // namespace

double instructionCycles(const Instruction &inst, const Profile &p) {
  switch (inst.op) {
#define NCORE_OPCODE(Name, ...)                                                \
  case Opcode::Name:                                                           \
    return cycles##Name(inst, p);
#include "runtime/Isa.def"
  }
  return 0;
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

AlgorithmBound algorithmBound(const std::array<double, kNumEngines> &busyNs,
                              double dmaBytes, double dmaBytesPerNs) {
  AlgorithmBound b;
  for (Engine e :
       {Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd})
    if (busyNs[unsigned(e)] > b.ns) {
      b.ns = busyNs[unsigned(e)];
      b.engine = std::string(name(e));
    }
  if (dmaBytesPerNs > 0 && dmaBytes / dmaBytesPerNs > b.ns) {
    b.ns = dmaBytes / dmaBytesPerNs;
    b.engine = "DMA";
  }
  return b;
}

} // namespace seam::rt
