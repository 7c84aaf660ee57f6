//===- Functional.h - Functional model of the emulated NeuronCore -*- C++ -*-//
//
// Executes instructions on real data: SBUF and PSUM per core, HBM per chip,
// bf16 round-to-nearest-even on every bf16 store, fp32 accumulation in PSUM.
// It checks bounds, partitions and memory permissions as the hardware would
// and reports a fault message instead of touching memory it must not.
// It never decides time: the timing walk (Timing.h) calls it as each
// instruction issues.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_FUNCTIONAL_H
#define SEAM_RUNTIME_FUNCTIONAL_H

#include "runtime/Timing.h"
#include "runtime/ZeroedBytes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace seam::rt {

/// Values of a seeded parameter initialisation (ConstantKind::Seeded*).
std::vector<float> seededValues(const Constant &constant, uint64_t count);

/// An operand resolved to memory for one execution: one base pointer per
/// partition (row) and the byte offset of each free element.
struct ResolvedAccess {
  MemSpace space = MemSpace::Sbuf;
  DType dtype = DType::F32;
  unsigned core = 0;
  unsigned partitions = 0;
  std::vector<uint8_t *> rows;
  std::vector<int64_t> freeOffsets;
  bool contiguous = false; ///< freeOffsets[i] == i * element size.
  size_t freeSize() const { return freeOffsets.size(); }
};

class FunctionalMachine : public InstructionExecutor {
public:
  FunctionalMachine(const Profile &profile, unsigned numCores);

  /// Makes `program` the one core `core` runs, its HBM region at `hbmBase`
  /// of chip `core / coresPerChip` (grown as needed).
  void bind(unsigned core, const Program *program, uint64_t hbmBase);
  /// Forgets which PSUM words hold results (start of a launch).
  void resetPsumState();
  /// Writes a param/constant binding's contents from its Constant entry.
  void initConstant(unsigned core, const Constant &constant);
  /// Host view of a binding of the program bound to `core`.
  void writeBinding(unsigned core, uint32_t binding, const float *values,
                    uint64_t count);
  std::vector<float> readBinding(unsigned core, uint32_t binding) const;

  uint64_t nonFiniteWrites() const override { return nonFinite; }
  void resetCounters() { nonFinite = 0; }

  Status execute(unsigned core, const Instruction &inst, const uint32_t *iters,
                 unsigned depth) override;
  Status executeCollective(
      const std::vector<const Instruction *> &insts,
      const std::vector<std::array<uint32_t, kMaxLoopDepth>> &iters) override;

  // Operand access, shared by the per-opcode semantics.
  Status resolve(unsigned core, const AccessPattern &ap, const uint32_t *iters,
                 unsigned depth, ResolvedAccess &out);
  void load(const ResolvedAccess &access, std::vector<float> &values) const;
  /// Stores partition-major values, rounding to the operand's dtype; marks
  /// PSUM words as written and counts non-finite values.
  void store(const ResolvedAccess &access, const float *values);
  /// Whether every element of a PSUM access holds a result.
  bool psumInitialised(unsigned core, const ResolvedAccess &access) const;

private:
  struct CoreMemory {
    ZeroedBytes sbuf, psum;
    ZeroedBytes psumWritten; ///< One flag per 4-byte PSUM word.
    const Program *program = nullptr;
    uint64_t hbmBase = 0;
    unsigned chip = 0;
  };
  const Profile &profile;
  std::vector<CoreMemory> cores;
  std::vector<ZeroedBytes> hbm; ///< Per chip, grown on demand.
  MemoryLimits limits;
  uint64_t nonFinite = 0;

  Status executeOp(unsigned core, const Instruction &inst,
                   const uint32_t *iters, unsigned depth);
  void markPsum(const ResolvedAccess &access);
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_FUNCTIONAL_H
