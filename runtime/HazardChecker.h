//===- HazardChecker.h - Races the functional model cannot see -*- C++ -*-===//
//
// The functional model runs an instruction when it issues, so a read sees
// every write that issued before it. The device lets a read see only the
// writes that have completed. The hazard checker watches the timing walk and
// reports the accesses whose order the program does not enforce, as
// ThreadSanitizer does for threads: by happens-before, not by the timing of
// one run. Each engine stream keeps a vector clock; a semaphore signal
// publishes the signalling instruction's clock and a wait that holds
// acquires the clocks of the signals that brought the count to its value.
// Two accesses that share a byte, one of them a write, race when the
// earlier is not ordered before the later:
//   RAW  a read not ordered after the write it overlaps;
//   WAR  a write not ordered after a read it overlaps (a DMA whose source is
//        overwritten while in flight is one);
//   WAW  a write not ordered after a write it overlaps;
//   PSUM a matmul accumulates onto a PSUM group that another engine touched
//        since the group started (accumulation groups interleaved).
// A race is reported whether or not this run's timing overlapped the two
// (a reader that ran entirely before an unordered writer read stale data);
// the report says which.
// Accesses are exact byte sets: per partition in SBUF and PSUM, per byte in
// each core's HBM region; two access patterns conflict only where their
// elements overlap, not where their hulls do.
//
// Order (Timing.h's model): an engine's compute instructions complete in
// order, so its stream orders its own accesses; DMA transfers are ordered
// by nothing but semaphores (they run on different queues), and a
// transfer's signal vouches for the stream's earlier transfers (signals
// retire in stream order). What the reports call in flight:
//   compute instruction: reads [issue, issue + busy], writes [issue, issue +
//     latency] (the matmul's result lands MM_INIT_LATENCY after its issue
//     interval);
//   dma_copy: reads and writes [trigger, end of transfer] (a transfer must
//     find its source complete when it is triggered: it may start any time
//     after);
//   collective: [start, start + duration] on every rank.
// Accesses are kept until every stream is ordered after them, or a dense
// write that is ordered after them covers them; a bucket of 4 KiB (HBM: a
// binding) keeps at most 2048 (the oldest beyond are forgotten and counted).
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_HAZARDCHECKER_H
#define SEAM_RUNTIME_HAZARDCHECKER_H

#include "runtime/Program.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace seam::rt {

enum class HazardKind : uint8_t { Raw, War, Waw, PsumInterleave };
std::string_view name(HazardKind kind);

/// One instruction execution, as a hazard report names it.
struct HazardSite {
  Engine engine = Engine::Sync; ///< the stream that issued it
  uint32_t pc = 0;
  Opcode op = Opcode::SemSignal;
  std::array<uint32_t, kMaxLoopDepth> iters{};
  uint8_t depth = 0;
  double issueNs = 0, endNs = 0; ///< its access's window
};

struct Hazard {
  HazardKind kind = HazardKind::Raw;
  std::string program;
  unsigned core = 0;
  MemSpace space = MemSpace::Sbuf;
  /// The overlap: partitions [p0, p1) (SBUF/PSUM) and bytes [lo, hi) within
  /// a partition, or within the core's HBM region (partitions 0..1).
  uint32_t p0 = 0, p1 = 0;
  int64_t lo = 0, hi = 0;
  HazardSite earlier; ///< the access not ordered before (or the group's
                      ///< other engine)
  HazardSite later;   ///< the one that issued without waiting for it
  /// Whether `earlier` was still in flight when `later` issued in this run
  /// (else it had completed by luck of timing).
  bool inFlight = false;
  /// "RAW in program 'p' core 0 SBUF partitions [0,128) bytes [0,512): VE
  /// pc 7 (tensor_copy) iter [1] reads at 1.250 us before TE pc 3 (matmul)
  /// iter [1] completes its write at 1.300 us"
  std::string str() const;
};

/// One operand access of one executed instruction, as the timing walk saw
/// it (SimulationOptions::accessLog): for tools that check the checker.
struct AccessRecord {
  uint16_t core = 0;
  Engine engine = Engine::Sync; ///< the stream that issued it
  uint32_t pc = 0;
  Instruction::Slot slot = Instruction::Dst;
  bool write = false;
  std::array<uint32_t, kMaxLoopDepth> iters{};
  uint8_t depth = 0;
  double issueNs = 0, endNs = 0; ///< its window, as the checker's
  AccessPattern ap;
};
/// Whether `slot` of `inst` is written (Dst; activation's Aux).
bool writesSlot(const Instruction &inst, Instruction::Slot slot);

/// The longest chain of read-after-write dependent compute instructions in
/// a run's access log (SimulationOptions::accessLog, in issue order;
/// `programs[c]` is core c's): a compute instruction weighs its issue to
/// result time in that run, a DMA transfer or collective nothing (a
/// kernel's latency floor counts one DMA fixed cost in and one out on its
/// own); a read depends on the latest earlier writes whose hulls overlap
/// it (conservative where strided accesses interleave), and a matmul that
/// accumulates also reads its PSUM destination. The order of an engine's
/// stream is not a dependency here. Compares every access with the live
/// writes: for small kernels (std::nullopt past `maxLive` live writes).
std::optional<double>
dependentChainNs(const std::vector<const Program *> &programs,
                 const std::vector<AccessRecord> &log,
                 size_t maxLive = 1u << 16);

/// The checker the timing walk drives (one per simulate call).
class HazardChecker {
public:
  /// `maxReports`: hazards kept with their text; every one is counted.
  HazardChecker(const std::vector<const Program *> &programs,
                unsigned maxReports);
  ~HazardChecker();
  HazardChecker(const HazardChecker &) = delete;
  HazardChecker &operator=(const HazardChecker &) = delete;

  /// Stream `engine` of `core` passed a wait for `sem` >= `need`: it is
  /// ordered after the signals that brought the count there.
  void acquire(unsigned core, Engine engine, uint16_t sem, int64_t need);
  /// Instruction `inst` of stream `engine` on `core` issues at `issueNs`
  /// (its loop iterations `iters[0..depth)`); its reads are in flight until
  /// `readEndNs`, its writes until `writeEndNs`. Call in issue order
  /// (`issueNs` never decreases), after its waits' acquire(). Returns the
  /// token of the clock its signal publishes (signal()).
  uint32_t issue(unsigned core, Engine engine, uint32_t pc,
                 const Instruction &inst, const uint32_t *iters, unsigned depth,
                 double issueNs, double readEndNs, double writeEndNs);
  /// The token of the stream's clock now (a standalone sem_signal).
  uint32_t clockOf(unsigned core, Engine engine);
  /// The walk applies a signal of `count` to `sem` (in the order it applies
  /// them); `token` (from issue or clockOf) is consumed.
  void signal(unsigned core, uint16_t sem, uint32_t count, uint32_t token);

  uint64_t count() const { return total; }
  /// Records forgotten by a full bucket (races with them go unseen).
  uint64_t forgotten() const;
  const std::vector<Hazard> &reports() const { return kept; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  void report(Hazard h);
  unsigned maxKept = 0;
  uint64_t total = 0;
  std::vector<Hazard> kept;
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_HAZARDCHECKER_H
