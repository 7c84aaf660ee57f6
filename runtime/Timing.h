//===- Timing.h - Timing model of the emulated NeuronCore ------*- C++ -*-===//
//
// Per-engine timelines built from the cost formulas of
// shared/reference/hardware.md. The timing walk is the one place that decides
// the order in which instructions issue; the functional model (Functional.h)
// plugs in as an InstructionExecutor and never influences time, so a
// timing-only run produces exactly the timeline of a functional run.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_TIMING_H
#define SEAM_RUNTIME_TIMING_H

#include "runtime/Expected.h"
#include "runtime/HazardChecker.h"
#include "runtime/Profile.h"
#include "runtime/Program.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace seam::rt {

/// Cost of one compute or sync instruction on its engine.
struct InstructionCost {
  double cycles = 0;    ///< Engine cycles the instruction occupies.
  double busyNs = 0;    ///< cycles / engine clock.
  double latencyNs = 0; ///< Issue to result visible (>= busyNs).
};

/// Compute-engine cost (hardware.md "Instruction costs"). Not for DMA or
/// collectives, which depend on concurrent traffic.
InstructionCost instructionCost(const Instruction &inst,
                                const Profile &profile);
/// Engine cycles alone, as in the formula table.
double instructionCycles(const Instruction &inst, const Profile &profile);
/// One DMA transfer of `bytes` at `bytesPerNs` (fixed cost + bytes / bw).
double dmaDurationNs(uint64_t bytes, double bytesPerNs, const Profile &profile);
/// Ring collective over `ranks`: per-hop latency + bytes / NeuronLink.
double collectiveDurationNs(Opcode op, uint64_t bytesPerRank, unsigned ranks,
                            const Profile &profile);

/// A program's algorithm bound: the largest per-engine busy time of its own
/// instruction stream. The compute engines count by their busy time; DMA
/// by the bytes it moves at `dmaBytesPerNs` (the DMA streams' busy time
/// sums the transfers over the queues, so it is not a time the engine
/// needs). `busyNs` per engine, for one core.
struct AlgorithmBound {
  double ns = 0;
  std::string engine; ///< "TE", "VE", ... or "DMA"
};
AlgorithmBound algorithmBound(const std::array<double, kNumEngines> &busyNs,
                              double dmaBytes, double dmaBytesPerNs);

/// One executed instruction (one loop iteration) on the device timeline.
struct TimelineEvent {
  uint16_t core = 0;
  Engine engine = Engine::Sync; ///< The stream that issued it.
  /// DMA queue of a dma_copy's transfer (issued from the DMA or the SYNC
  /// stream), else -1.
  int16_t dmaQueue = -1;
  Opcode op = Opcode::SemSignal;
  uint32_t index = 0; ///< Instruction index in `engine`'s stream.
  double startNs = 0, endNs = 0;
  uint64_t bytes = 0; ///< DMA / collective payload.

  bool operator==(const TimelineEvent &o) const {
    return core == o.core && engine == o.engine && dmaQueue == o.dmaQueue &&
           op == o.op && index == o.index && startNs == o.startNs &&
           endNs == o.endNs && bytes == o.bytes;
  }
};

/// The longest stretch an engine of one core sat idle in a launch: between
/// the end of one of its instructions (or the launch's start) and the start
/// of its next (or the launch's end, `resumedPc` = -1), and what the
/// instruction that ended it waited for: the semaphore wait signalled last
/// before it could issue, by `waitedEngine`'s instruction `waitedPc` (a DMA
/// transfer when `waitedDma`: `waitedEngine` is the stream that triggered
/// it), or none (-1: it issued in order, behind no wait signalled then).
struct IdleStretch {
  double fromNs = 0, toNs = 0;
  int64_t resumedPc = -1; ///< in the engine's own stream
  int waitedEngine = -1;
  bool waitedDma = false;
  int64_t waitedPc = -1;
  double ns() const { return toNs - fromNs; }
  bool operator==(const IdleStretch &o) const {
    return fromNs == o.fromNs && toNs == o.toNs && resumedPc == o.resumedPc &&
           waitedEngine == o.waitedEngine && waitedDma == o.waitedDma &&
           waitedPc == o.waitedPc;
  }
};

struct CoreTimingStats {
  std::array<double, kNumEngines> busyNs{};
  /// Per compute engine (Tensor, Vector, Scalar, GpSimd): its longest idle
  /// stretch (IdleStretch).
  std::array<IdleStretch, kNumEngines> longestIdle{};
  std::array<uint64_t, kNumEngines> instructions{};
  uint64_t dmaBytes = 0;
  uint64_t dmaTransfers = 0;
  double dmaQueueBusyNs = 0;
  double endNs = 0;

  bool operator==(const CoreTimingStats &o) const {
    return busyNs == o.busyNs && longestIdle == o.longestIdle &&
           instructions == o.instructions && dmaBytes == o.dmaBytes &&
           dmaTransfers == o.dmaTransfers &&
           dmaQueueBusyNs == o.dmaQueueBusyNs && endNs == o.endNs;
  }
};

struct Timeline {
  double totalNs = 0; ///< Device time of the launch (last completion).
  uint64_t instructionsIssued = 0;
  std::vector<CoreTimingStats> cores;
  std::vector<TimelineEvent> events; ///< Only when collected.

  bool operator==(const Timeline &o) const {
    return totalNs == o.totalNs && instructionsIssued == o.instructionsIssued &&
           cores == o.cores && events == o.events;
  }
};

/// A fault stops a run; it names where it happened.
struct Fault {
  std::string program;
  unsigned core = 0;
  Engine engine = Engine::Sync;
  uint32_t index = 0;
  std::string mnemonic;
  std::string message;
  std::string str() const;
};

/// The functional model, seen from the timing walk.
class InstructionExecutor {
public:
  virtual ~InstructionExecutor() = default;
  /// Executes `inst` for core `core` at the loop iterations `iters[0..depth)`
  /// (outermost first). Fails with the fault's message.
  virtual Status execute(unsigned core, const Instruction &inst,
                         const uint32_t *iters, unsigned depth) = 0;
  /// Executes one collective; `insts[r]`/`iters[r]` are rank r's.
  virtual Status executeCollective(
      const std::vector<const Instruction *> &insts,
      const std::vector<std::array<uint32_t, kMaxLoopDepth>> &iters) = 0;
  /// NaN/Inf values stored so far (the simulator attributes new ones to the
  /// instruction that stored them).
  virtual uint64_t nonFiniteWrites() const { return 0; }
};

struct SimulationOptions {
  bool collectEvents = true;
  /// Run the hazard checker (HazardChecker.h) beside the walk; a hazard
  /// fails the launch (SimulationResult::fault) once the walk is done.
  bool checkHazards = false;
  unsigned maxHazardReports = 16; ///< hazards kept with their text
  /// When set: every operand access of every instruction run, appended in
  /// issue order (tools that check the checker; costly).
  std::vector<AccessRecord> *accessLog = nullptr;
};

struct SimulationResult {
  Timeline timeline;
  std::optional<Fault> fault;
  /// The first instruction that stored NaN/Inf (execution goes on: this is a
  /// report, not a fault); its message says how many values it stored.
  std::optional<Fault> firstNonFinite;
  /// With checkHazards: every hazard counted, the first ones kept.
  uint64_t hazardCount = 0;
  std::vector<Hazard> hazards;
  /// Accesses the checker forgot for want of room (races with them unseen).
  uint64_t hazardForgotten = 0;
};

/// Runs `programs[r]` on core r (cores [k*coresPerChip, (k+1)*coresPerChip)
/// form chip k and share its HBM bandwidth). `executor` == nullptr is the
/// timing-only mode.
SimulationResult simulate(const std::vector<const Program *> &programs,
                          const Profile &profile, InstructionExecutor *executor,
                          const SimulationOptions &options = {});

} // namespace seam::rt

#endif // SEAM_RUNTIME_TIMING_H
