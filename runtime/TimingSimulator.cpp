//===- TimingSimulator.cpp - The discrete-event walk of all engines -------===//
//
// Engines issue their streams in order. An instruction issues when its
// engine is free and its semaphore waits hold; it completes (and signals)
// after its latency. DMA transfers issue round-robin onto per-core queues
// (in order within a queue) and share the chip's HBM bandwidth with the
// transfers they overlap. A transfer's signal retires in its stream's issue
// order: it fires once the transfer and every transfer its stream issued
// before it have completed, so that a wait on a DMA semaphore (a count,
// ncore-schedule) never lets its reader start before the bytes it waits for
// have arrived, which transfers completing out of order on other queues
// could otherwise do. Collectives start when every rank has reached them.
// The functional model, when present, runs each instruction as it issues.
//
//===----------------------------------------------------------------------===//

#include "runtime/Timing.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <queue>
#include <sstream>

namespace seam::rt {

namespace {
struct LoopFrame {
  uint32_t begin = 0;
  uint32_t trip = 0;
  uint32_t iter = 0;
};

struct EngineState {
  uint32_t pc = 0;
  std::array<LoopFrame, kMaxLoopDepth> loops{};
  unsigned depth = 0;
  double freeAt = 0;
  /// When every instruction this engine issued so far has completed (its
  /// pipeline retires in order: a signal after them fires no earlier).
  double retiredAt = 0;
  bool done = false;
  bool arrived = false; ///< Collective engine waiting for the other ranks.
};

/// Who sent a semaphore's signal (IdleStretch).
struct Signaller {
  int engine = -1; ///< the stream (Engine), -1: none
  bool dma = false;
  int64_t pc = -1;
};

struct CoreState {
  const Program *program = nullptr;
  std::array<EngineState, kNumEngines> engines{};
  std::vector<uint64_t> sems;
  std::vector<double> queueFreeAt;
  uint32_t nextQueue = 0;
  /// Per stream: when every transfer it issued so far has completed.
  std::array<double, kNumEngines> dmaRetiredAt{};
  unsigned chip = 0;
  /// Per semaphore: when its last signal landed, and who sent it (the
  /// stream, whether it was a DMA transfer, the instruction): the cause an
  /// idle stretch names (IdleStretch).
  std::vector<double> semSignalAt;
  std::vector<Signaller> semSignaller;
  /// Per compute engine: the end of its last instruction.
  std::array<double, kNumEngines> lastEnd{};
};

/// No clock for the hazard checker (it is off).
constexpr uint32_t kNoToken = ~0u;

struct Completion {
  double time;
  uint64_t seq;
  uint16_t core;
  uint16_t sem;
  uint32_t count;
  uint32_t token; ///< the hazard checker's clock the signal publishes
  Signaller by;
  bool operator>(const Completion &o) const {
    return time != o.time ? time > o.time : seq > o.seq;
  }
};

struct HbmTransfer {
  double start, end;
};

class Simulator {
public:
  Simulator(const std::vector<const Program *> &programs,
            const Profile &profile, InstructionExecutor *executor,
            const SimulationOptions &options)
      : profile(profile), executor(executor), options(options) {
    cores.resize(programs.size());
    unsigned perChip = std::max(1u, profile.coresPerChip);
    for (size_t c = 0; c < programs.size(); ++c) {
      CoreState &core = cores[c];
      core.program = programs[c];
      core.sems.assign(kNumSemaphores, 0);
      core.semSignalAt.assign(kNumSemaphores, 0.0);
      core.semSignaller.assign(kNumSemaphores, Signaller{});
      core.queueFreeAt.assign(std::max(1u, profile.dmaEngines), 0.0);
      core.chip = static_cast<unsigned>(c / perChip);
      for (unsigned e = 0; e < kNumEngines; ++e)
        core.engines[e].done = programs[c]->streams[e].empty();
    }
    chipTransfers.resize(programs.size() / perChip + 1);
    result.timeline.cores.resize(programs.size());
    if (options.checkHazards)
      checker =
          std::make_unique<HazardChecker>(programs, options.maxHazardReports);
  }

  SimulationResult run() {
    while (true) {
      applyCompletions();
      bool progress = true;
      while (progress && !result.fault) {
        progress = false;
        for (unsigned c = 0; c < cores.size() && !result.fault; ++c)
          for (unsigned e = 0; e < kNumEngines && !result.fault; ++e)
            while (step(c, e))
              progress = true;
        if (!result.fault && issueCollectives())
          progress = true;
        if (applyCompletions())
          progress = true;
      }
      if (result.fault)
        break;
      if (allDone())
        break;
      double next = std::numeric_limits<double>::infinity();
      if (!heap.empty())
        next = heap.top().time;
      for (const CoreState &core : cores)
        for (const EngineState &s : core.engines)
          if (!s.done && s.freeAt > now)
            next = std::min(next, s.freeAt);
      if (next == std::numeric_limits<double>::infinity()) {
        reportDeadlock();
        break;
      }
      now = next;
    }
    Timeline &t = result.timeline;
    for (size_t c = 0; c < cores.size(); ++c) {
      for (const EngineState &s : cores[c].engines)
        t.cores[c].endNs = std::max(t.cores[c].endNs, s.freeAt);
      t.totalNs = std::max(t.totalNs, t.cores[c].endNs);
    }
    // The stretch after each engine's last instruction, to the launch's end.
    for (size_t c = 0; c < cores.size(); ++c)
      for (unsigned e : kComputeEngines)
        if (t.cores[c].instructions[e] > 0)
          noteIdle(c, e, cores[c].lastEnd[e], t.totalNs, IdleStretch{});
    if (checker)
      reportHazards();
    return std::move(result);
  }

private:
  const Profile &profile;
  InstructionExecutor *executor;
  const SimulationOptions &options;
  std::vector<CoreState> cores;
  std::vector<std::vector<HbmTransfer>> chipTransfers;
  std::priority_queue<Completion, std::vector<Completion>,
                      std::greater<Completion>>
      heap;
  uint64_t seq = 0;
  double now = 0;
  SimulationResult result;
  std::unique_ptr<HazardChecker> checker;

  /// Hands the checker one issued instruction of core `c`'s stream `e`;
  /// returns the token its signal publishes (kNoToken: checker off).
  uint32_t checkAccesses(unsigned c, unsigned e, uint32_t index,
                         const Instruction &inst, double readEnd,
                         double writeEnd) {
    const EngineState &s = cores[c].engines[e];
    auto it = iterations(s);
    uint32_t token = kNoToken;
    if (checker)
      token = checker->issue(c, static_cast<Engine>(e), index, inst, it.data(),
                             s.depth, now, readEnd, writeEnd);
    if (options.accessLog)
      for (unsigned k = 0; k < Instruction::NumSlots; ++k) {
        auto slot = static_cast<Instruction::Slot>(k);
        if (!inst.has(slot))
          continue;
        AccessRecord r;
        r.core = static_cast<uint16_t>(c);
        r.engine = static_cast<Engine>(e);
        r.pc = index;
        r.slot = slot;
        r.write = writesSlot(inst, slot);
        r.iters = it;
        r.depth = static_cast<uint8_t>(s.depth);
        r.issueNs = now;
        r.endNs = r.write ? writeEnd : readEnd;
        r.ap = inst.ap(slot);
        options.accessLog->push_back(r);
      }
    return token;
  }

  /// A hazard fails the launch: its numbers came from an order the device
  /// does not keep.
  void reportHazards() {
    result.hazardCount = checker->count();
    result.hazardForgotten = checker->forgotten();
    result.hazards = checker->reports();
    if (result.fault || result.hazards.empty())
      return;
    const Hazard &h = result.hazards.front();
    result.fault = makeFault(
        h.core, static_cast<unsigned>(h.later.engine), h.later.pc,
        std::to_string(result.hazardCount) +
            " hazard(s): the program does not order these accesses; first: " +
            h.str());
  }

  bool allDone() const {
    for (const CoreState &core : cores)
      for (const EngineState &s : core.engines)
        if (!s.done)
          return false;
    return true;
  }

  /// A semaphore's signal lands: its count, and who sent it when.
  void signalled(unsigned core, unsigned sem, uint32_t count,
                 const Signaller &by, double at) {
    CoreState &cs = cores[core];
    cs.sems[sem] += count;
    cs.semSignalAt[sem] = at;
    cs.semSignaller[sem] = by;
  }

  /// Keeps [from, to) as core c's engine e's longest idle stretch when it
  /// is longer than the one kept.
  void noteIdle(size_t c, unsigned e, double from, double to,
                IdleStretch stretch) {
    IdleStretch &longest = result.timeline.cores[c].longestIdle[e];
    if (to - from <= longest.ns())
      return;
    stretch.fromNs = from;
    stretch.toNs = to;
    longest = stretch;
  }

  /// Engine e of core c issues `inst` now: the stretch since its last
  /// instruction ended, and the wait that held it (the one signalled last,
  /// if during the stretch).
  void noteResumed(unsigned c, unsigned e, const Instruction &inst,
                   uint32_t index) {
    CoreState &core = cores[c];
    double from = core.lastEnd[e];
    if (now - from > result.timeline.cores[c].longestIdle[e].ns()) {
      IdleStretch st;
      st.resumedPc = index;
      double latest = from;
      for (const SemWaitSpec &w : inst.waits)
        if (core.semSignalAt[w.sem] > latest) {
          latest = core.semSignalAt[w.sem];
          const Signaller &by = core.semSignaller[w.sem];
          st.waitedEngine = by.engine;
          st.waitedDma = by.dma;
          st.waitedPc = by.pc;
        }
      noteIdle(c, e, from, now, st);
    }
  }

  static constexpr unsigned kComputeEngines[] = {
      static_cast<unsigned>(Engine::Tensor),
      static_cast<unsigned>(Engine::Vector),
      static_cast<unsigned>(Engine::Scalar),
      static_cast<unsigned>(Engine::GpSimd)};

  bool applyCompletions() {
    bool any = false;
    while (!heap.empty() && heap.top().time <= now) {
      const Completion &c = heap.top();
      signalled(c.core, c.sem, c.count, c.by, c.time);
      if (c.token != kNoToken)
        checker->signal(c.core, c.sem, c.count, c.token);
      heap.pop();
      any = true;
    }
    return any;
  }

  void complete(unsigned core, const Instruction &inst, double end,
                uint32_t token = kNoToken, Signaller by = {}) {
    CoreTimingStats &st = result.timeline.cores[core];
    st.endNs = std::max(st.endNs, end);
    if (inst.signalSem < 0) {
      if (token != kNoToken)
        checker->signal(core, kNumSemaphores, 0, token); // frees it
      return;
    }
    if (end <= now) {
      signalled(core, static_cast<unsigned>(inst.signalSem), inst.signalCount,
                by, now);
      if (token != kNoToken)
        checker->signal(core, static_cast<uint16_t>(inst.signalSem),
                        inst.signalCount, token);
      return;
    }
    heap.push({end, seq++, static_cast<uint16_t>(core),
               static_cast<uint16_t>(inst.signalSem), inst.signalCount, token,
               by});
  }

  void record(unsigned core, Engine engine, int queue, const Instruction &inst,
              uint32_t index, double start, double end, uint64_t bytes) {
    CoreTimingStats &st = result.timeline.cores[core];
    // A transfer counts as DMA work whichever stream triggered it.
    unsigned e = static_cast<unsigned>(queue >= 0 ? Engine::Dma : engine);
    st.busyNs[e] += end - start;
    ++st.instructions[e];
    ++result.timeline.instructionsIssued;
    if (options.collectEvents) {
      TimelineEvent ev;
      ev.core = static_cast<uint16_t>(core);
      ev.engine = engine;
      ev.dmaQueue = static_cast<int16_t>(queue);
      ev.op = inst.op;
      ev.index = index;
      ev.startNs = start;
      ev.endNs = end;
      ev.bytes = bytes;
      result.timeline.events.push_back(ev);
    }
  }

  void setFault(unsigned core, unsigned engine, uint32_t index,
                const std::string &message) {
    result.fault = makeFault(core, engine, index, message);
  }

  Fault makeFault(unsigned core, unsigned engine, uint32_t index,
                  const std::string &message) const {
    Fault f;
    f.program = cores[core].program->name;
    f.core = core;
    f.engine = static_cast<Engine>(engine);
    f.index = index;
    const auto &stream = cores[core].program->streams[engine];
    f.mnemonic = index < stream.size() ? std::string(mnemonic(stream[index].op))
                                       : std::string("-");
    f.message = message;
    return f;
  }

  bool waitsHold(const CoreState &core, const EngineState &s,
                 const Instruction &inst) const {
    for (const SemWaitSpec &w : inst.waits)
      if (std::optional<int64_t> need = needed(s, w);
          need && static_cast<int64_t>(core.sems[w.sem]) < *need)
        return false;
    return true;
  }

  /// The count `w` waits for in the engine's current iterations, or none
  /// for a carried wait in the first iteration of its loops (Program.h).
  static std::optional<int64_t> needed(const EngineState &s,
                                       const SemWaitSpec &w) {
    bool first = w.carried > 0;
    for (unsigned d = 0; d < w.carried && d < s.depth; ++d)
      first = first && s.loops[d].iter == 0;
    if (first)
      return std::nullopt;
    int64_t need = w.value;
    for (unsigned d = 0; d < s.depth; ++d)
      need += static_cast<int64_t>(w.step[d]) * s.loops[d].iter;
    return need;
  }

  std::array<uint32_t, kMaxLoopDepth> iterations(const EngineState &s) const {
    std::array<uint32_t, kMaxLoopDepth> it{};
    for (unsigned d = 0; d < s.depth; ++d)
      it[d] = s.loops[d].iter;
    return it;
  }

  /// Issues the next instruction of engine `e` on core `c` if it can start
  /// now; returns whether it did.
  bool step(unsigned c, unsigned e) {
    CoreState &core = cores[c];
    EngineState &s = core.engines[e];
    if (s.done || s.freeAt > now || s.arrived)
      return false;
    const auto &stream = core.program->streams[e];
    if (s.pc >= stream.size()) {
      s.done = true;
      return false;
    }
    const Instruction &inst = stream[s.pc];
    if (!waitsHold(core, s, inst))
      return false;
    if (checker)
      for (const SemWaitSpec &w : inst.waits)
        if (std::optional<int64_t> need = needed(s, w))
          checker->acquire(c, static_cast<Engine>(e), w.sem, *need);
    uint32_t index = s.pc;
    switch (inst.op) {
    case Opcode::LoopBegin:
      s.loops[s.depth++] = {s.pc, inst.tripCount, 0};
      ++s.pc;
      return true;
    case Opcode::LoopEnd: {
      LoopFrame &f = s.loops[s.depth - 1];
      if (++f.iter < f.trip) {
        s.pc = f.begin + 1;
      } else {
        --s.depth;
        ++s.pc;
      }
      return true;
    }
    case Opcode::SemWait:
    case Opcode::SemSignal:
      ++s.pc;
      ++result.timeline.cores[c].instructions[e];
      ++result.timeline.instructionsIssued;
      complete(c, inst, std::max(now, s.retiredAt),
               checker && inst.signalSem >= 0
                   ? checker->clockOf(c, static_cast<Engine>(e))
                   : kNoToken,
               Signaller{static_cast<int>(e), false, index});
      return true;
    case Opcode::AllReduce:
    case Opcode::AllGather:
      s.arrived = true;
      return false;
    case Opcode::DmaCopy:
      issueDma(c, e, inst, index);
      break;
    default: {
      InstructionCost cost = instructionCost(inst, profile);
      if (!execute(c, e, inst, index))
        return false;
      noteResumed(c, e, inst, index);
      core.lastEnd[e] = now + cost.busyNs;
      s.freeAt = now + cost.busyNs;
      s.retiredAt = std::max(s.retiredAt, now + cost.latencyNs);
      uint32_t token = kNoToken;
      if (checker || options.accessLog)
        token = checkAccesses(c, e, index, inst, now + cost.busyNs,
                              now + cost.latencyNs);
      record(c, static_cast<Engine>(e), -1, inst, index, now, now + cost.busyNs,
             0);
      complete(c, inst, now + cost.latencyNs, token,
               Signaller{static_cast<int>(e), false, index});
      break;
    }
    }
    if (result.fault)
      return false;
    ++s.pc;
    return true;
  }

  bool execute(unsigned c, unsigned e, const Instruction &inst,
               uint32_t index) {
    if (!executor)
      return true;
    const EngineState &s = cores[c].engines[e];
    auto it = iterations(s);
    uint64_t nonFiniteBefore = executor->nonFiniteWrites();
    Status done = executor->execute(c, inst, it.data(), s.depth);
    if (done) {
      uint64_t stored = executor->nonFiniteWrites() - nonFiniteBefore;
      if (stored && !result.firstNonFinite)
        result.firstNonFinite =
            makeFault(c, e, index,
                      std::to_string(stored) + " NaN/Inf value(s) stored in " +
                          std::string(name(inst.ap(Instruction::Dst).space)) +
                          " (first non-finite result of the launch)");
      return true;
    }
    setFault(c, e, index, done.error());
    return false;
  }

  void issueDma(unsigned c, unsigned e, const Instruction &inst,
                uint32_t index) {
    using S = Instruction::Slot;
    CoreState &core = cores[c];
    if (!execute(c, e, inst, index))
      return;
    unsigned q = core.nextQueue;
    core.nextQueue = (core.nextQueue + 1) % core.queueFreeAt.size();
    double start = std::max(now, core.queueFreeAt[q]);
    uint64_t bytes = inst.ap(S::Dst).bytes();
    double bw = profile.dmaEngineBytesPerNs;
    bool touchesHbm = inst.ap(S::Dst).space == MemSpace::Hbm ||
                      inst.ap(S::Src0).space == MemSpace::Hbm;
    if (touchesHbm) {
      // The chip's HBM bandwidth is shared by the transfers in flight when
      // this one starts (hardware.md "Memories": cores share HBM).
      auto &active = chipTransfers[core.chip];
      active.erase(
          std::remove_if(active.begin(), active.end(),
                         [&](const HbmTransfer &t) { return t.end <= now; }),
          active.end());
      double alone = dmaDurationNs(bytes, bw, profile);
      unsigned overlapping = 0;
      for (const HbmTransfer &t : active)
        if (t.end > start && t.start < start + alone)
          ++overlapping;
      bw = std::min(bw, profile.hbmBytesPerNs / (overlapping + 1));
    }
    double duration = dmaDurationNs(bytes, bw, profile);
    double end = start + duration;
    core.queueFreeAt[q] = end;
    if (touchesHbm)
      chipTransfers[core.chip].push_back({start, end});
    CoreTimingStats &st = result.timeline.cores[c];
    st.dmaBytes += bytes;
    ++st.dmaTransfers;
    st.dmaQueueBusyNs += duration;
    uint32_t token = kNoToken;
    if (checker || options.accessLog)
      token = checkAccesses(c, e, index, inst, end, end);
    record(c, static_cast<Engine>(e), static_cast<int>(q), inst, index, start,
           end, bytes);
    double &retired = core.dmaRetiredAt[e];
    retired = std::max(retired, end);
    complete(c, inst, retired, token,
             Signaller{static_cast<int>(e), true, index});
  }

  /// Starts a collective once every rank's collective engine reached it.
  bool issueCollectives() {
    unsigned cc = static_cast<unsigned>(Engine::Collective);
    for (const CoreState &core : cores)
      if (!core.engines[cc].arrived)
        return false;
    std::vector<const Instruction *> insts;
    std::vector<std::array<uint32_t, kMaxLoopDepth>> iters;
    for (const CoreState &core : cores) {
      const EngineState &s = core.engines[cc];
      insts.push_back(&core.program->streams[cc][s.pc]);
      iters.push_back(iterations(s));
    }
    for (size_t r = 1; r < insts.size(); ++r)
      if (insts[r]->op != insts[0]->op ||
          insts[r]->ap(Instruction::Src0).bytes() !=
              insts[0]->ap(Instruction::Src0).bytes()) {
        setFault(static_cast<unsigned>(r), cc, cores[r].engines[cc].pc,
                 "collective does not match rank 0's");
        return false;
      }
    if (executor) {
      Status done = executor->executeCollective(insts, iters);
      if (!done) {
        setFault(0, cc, cores[0].engines[cc].pc, done.error());
        return false;
      }
    }
    uint64_t bytes = insts[0]->ap(Instruction::Src0).bytes();
    double duration = collectiveDurationNs(
        insts[0]->op, bytes, static_cast<unsigned>(cores.size()), profile);
    for (unsigned c = 0; c < cores.size(); ++c) {
      EngineState &s = cores[c].engines[cc];
      s.arrived = false;
      s.freeAt = now + duration;
      uint32_t token = kNoToken;
      if (checker || options.accessLog)
        token = checkAccesses(c, cc, s.pc, *insts[c], now + duration,
                              now + duration);
      record(c, Engine::Collective, -1, *insts[c], s.pc, now, now + duration,
             bytes);
      complete(c, *insts[c], now + duration, token,
               Signaller{static_cast<int>(Engine::Collective), false,
                         static_cast<int64_t>(s.pc)});
      ++s.pc;
    }
    return true;
  }

  void reportDeadlock() {
    for (unsigned c = 0; c < cores.size(); ++c)
      for (unsigned e = 0; e < kNumEngines; ++e) {
        const EngineState &s = cores[c].engines[e];
        if (s.done)
          continue;
        const Instruction &inst = cores[c].program->streams[e][s.pc];
        std::ostringstream os;
        if (s.arrived) {
          os << "deadlock: collective waits for ranks that never reach it";
        } else {
          os << "deadlock: no engine can make progress;";
          for (const SemWaitSpec &w : inst.waits)
            if (std::optional<int64_t> need = needed(s, w))
              os << " waits for semaphore " << w.sem << " >= " << *need
                 << " (is " << cores[c].sems[w.sem] << ")";
        }
        setFault(c, e, s.pc, os.str());
        return;
      }
  }
};
} // namespace

SimulationResult simulate(const std::vector<const Program *> &programs,
                          const Profile &profile, InstructionExecutor *executor,
                          const SimulationOptions &options) {
  return Simulator(programs, profile, executor, options).run();
}

} // namespace seam::rt
