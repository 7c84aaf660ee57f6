//===- HazardChecker.h - Races the functional model cannot see -*- C++ -*-===//
//
// The functional model runs an instruction when it issues, so a read sees
// every write that issued before it. The device lets a read see only the
// writes that have completed. The hazard checker watches the timing walk and
// reports the accesses whose order the program does not enforce:
//   RAW  a read issues before an overlapping write has completed;
//   WAR  a write issues before an overlapping read has completed (a DMA
//        whose source is overwritten while in flight is one);
//   WAW  a write issues before an overlapping write has completed;
//   PSUM a matmul accumulates onto a PSUM group that another engine touched
//        since the group started (accumulation groups interleaved).
// Accesses are exact byte sets: per partition in SBUF and PSUM, per byte in
// each core's HBM region; two access patterns conflict only where their
// elements overlap, not where their hulls do.
//
// What counts as in flight (Timing.h's model):
//   compute instruction: reads [issue, issue + busy], writes [issue, issue +
//     latency] (the matmul's result lands MM_INIT_LATENCY after its issue
//     interval);
//   dma_copy: reads and writes [trigger, end of transfer] (a transfer must
//     find its source complete when it is triggered: it may start any time
//     after);
//   collective: [start, start + duration] on every rank.
// Instructions of one compute engine's stream are ordered by the engine
// itself (an in-order pipeline) and never race each other; DMA transfers are
// never ordered by their stream (they run on different queues).
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_HAZARDCHECKER_H
#define SEAM_RUNTIME_HAZARDCHECKER_H

#include "runtime/Program.h"

#include <array>
#include <cstdint>
#include <memory>
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
  HazardSite earlier; ///< in flight (or the group's other engine)
  HazardSite later;   ///< the one that issued too early
  /// "RAW in program 'p' core 0 SBUF partitions [0,128) bytes [0,512): VE
  /// pc 7 (tensor_copy) iter [1] reads at 1.250 us before TE pc 3 (matmul)
  /// iter [1] completes its write at 1.300 us"
  std::string str() const;
};

/// The checker the timing walk drives (one per simulate call).
class HazardChecker {
public:
  /// `maxReports`: hazards kept with their text; every one is counted.
  HazardChecker(const std::vector<const Program *> &programs,
                unsigned maxReports);
  ~HazardChecker();
  HazardChecker(const HazardChecker &) = delete;
  HazardChecker &operator=(const HazardChecker &) = delete;

  /// Instruction `inst` of stream `engine` on `core` issues at `issueNs`
  /// (its loop iterations `iters[0..depth)`); its reads are in flight until
  /// `readEndNs`, its writes until `writeEndNs`. Call in issue order
  /// (`issueNs` never decreases).
  void issue(unsigned core, Engine engine, uint32_t pc, const Instruction &inst,
             const uint32_t *iters, unsigned depth, double issueNs,
             double readEndNs, double writeEndNs);

  uint64_t count() const { return total; }
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
