//===- HostTrace.cpp - Chrome trace-event export --------------------------===//
//
// Timestamps are in microseconds as the format requires. pid 0 is the host;
// pid 1 + c is core c, with one thread per engine (tid = engine code) and
// one per DMA queue (tid = 100 + queue).
//
//===----------------------------------------------------------------------===//

#include "runtime/Host.h"
#include "runtime/Json.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <set>

namespace seam::rt {

namespace {
void appendNumber(std::string &out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6f", v);
  out += buf;
}

/// Subtracted from every timestamp written (the trace's time 0).
thread_local double traceOriginNs = 0;

void appendEvent(std::string &out, bool &first, std::string_view name,
                 std::string_view cat, unsigned pid, unsigned tid,
                 double startNs, double durNs, const std::string &args) {
  startNs -= traceOriginNs;
  out += first ? "\n" : ",\n";
  first = false;
  out += "{\"name\":";
  json::appendQuoted(out, name);
  out += ",\"cat\":";
  json::appendQuoted(out, cat);
  out += ",\"ph\":\"X\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  appendNumber(out, startNs / 1000.0);
  out += ",\"dur\":";
  appendNumber(out, durNs / 1000.0);
  if (!args.empty())
    out += ",\"args\":" + args;
  out += "}";
}

void appendMeta(std::string &out, bool &first, std::string_view what,
                unsigned pid, int tid, std::string_view value) {
  out += first ? "\n" : ",\n";
  first = false;
  out += "{\"name\":\"" + std::string(what) +
         "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid);
  if (tid >= 0)
    out += ",\"tid\":" + std::to_string(tid);
  out += ",\"args\":{\"name\":";
  json::appendQuoted(out, value);
  out += "}}";
}
} // namespace

std::string_view name(TraceDetail detail) {
  switch (detail) {
  case TraceDetail::Launch:
    return "launch";
  case TraceDetail::Engine:
    return "engine";
  case TraceDetail::Instruction:
    return "instruction";
  }
  return "?";
}

std::optional<TraceDetail> parseTraceDetail(std::string_view text) {
  for (TraceDetail d :
       {TraceDetail::Launch, TraceDetail::Engine, TraceDetail::Instruction})
    if (text == name(d))
      return d;
  return std::nullopt;
}

namespace {
/// Per stream of a program, the outermost loop_begin enclosing each
/// instruction (-1: none).
using OuterLoops = std::array<std::vector<int32_t>, kNumEngines>;

OuterLoops outerLoops(const Program &p) {
  OuterLoops outer;
  for (unsigned e = 0; e < kNumEngines; ++e) {
    const auto &stream = p.streams[e];
    outer[e].assign(stream.size(), -1);
    int depth = 0, begin = -1;
    for (size_t i = 0; i < stream.size(); ++i) {
      if (stream[i].op == Opcode::LoopBegin && depth++ == 0)
        begin = static_cast<int32_t>(i);
      outer[e][i] = depth > 0 ? begin : -1;
      if (stream[i].op == Opcode::LoopEnd && depth > 0)
        --depth;
    }
  }
  return outer;
}

int trackOf(const TimelineEvent &e) {
  return e.dmaQueue >= 0 ? 100 + e.dmaQueue : static_cast<int>(e.engine);
}

/// The category of an event: its engine, or DMA for a transfer (which the
/// DMA or the SYNC stream may have issued).
std::string_view categoryOf(const TimelineEvent &e) {
  return e.dmaQueue >= 0 ? name(Engine::Dma) : name(e.engine);
}

std::string instructionArgs(const std::string &program,
                            const TimelineEvent &e) {
  std::string args = "{\"program\":";
  json::appendQuoted(args, program);
  args += ",\"index\":" + std::to_string(e.index);
  if (e.bytes)
    args += ",\"bytes\":" + std::to_string(e.bytes);
  return args + "}";
}
} // namespace

namespace {
/// A flow event (an arrow in Perfetto / chrome://tracing): `phase` "s" at
/// its start, "f" at its end, each bound to the slice enclosing `ns` on
/// its track.
void appendFlow(std::string &out, bool &first, char phase, uint64_t id,
                unsigned pid, unsigned tid, double ns) {
  out += first ? "\n" : ",\n";
  first = false;
  out += "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"";
  out += phase;
  out += "\",\"id\":" + std::to_string(id) + ",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  appendNumber(out, (ns - traceOriginNs) / 1000.0);
  out += phase == 'f' ? ",\"bp\":\"e\"}" : "}";
}
} // namespace

void Device::writeTrace(std::ostream &os, const TraceOptions &options) const {
  auto inWindow = [&](double ns) {
    return ns >= options.fromNs && ns < options.toNs;
  };
  // Time 0 is the first event written (host events, launches and spans
  // all start in the window, so at or after its first).
  double origin = std::numeric_limits<double>::infinity();
  for (const HostEvent &e : events)
    if (inWindow(e.startNs))
      origin = std::min(origin, e.startNs);
  for (const DeviceLaunch &l : launches)
    if (inWindow(l.startNs))
      origin = std::min(origin, l.startNs);
  for (const TraceOptions::Span &span : options.spans)
    origin = std::min(origin, span.startNs);
  if (!std::isfinite(origin))
    origin = 0;
  traceOriginNs = origin;
  auto coreShown = [&](unsigned core) {
    return options.cores.empty() ||
           std::find(options.cores.begin(), options.cores.end(), core) !=
               options.cores.end();
  };
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  appendMeta(out, first, "process_name", 0, -1, "host");
  appendMeta(out, first, "thread_name", 0, 0, "host");
  constexpr unsigned kStepTrack = 1;
  if (!options.spans.empty())
    appendMeta(out, first, "thread_name", 0, kStepTrack, "steps");
  for (const TraceOptions::Span &span : options.spans)
    appendEvent(out, first, span.name, "step", 0, kStepTrack, span.startNs,
                span.endNs - span.startNs, "");
  std::set<std::pair<unsigned, int>> threads;
  uint64_t flowId = 0;
  // An arrow from the host's launch to where the launch's work starts on
  // each core shown.
  auto flow = [&](const DeviceLaunch &launch, unsigned pid, int tid,
                  double deviceNs) {
    ++flowId;
    appendFlow(out, first, 's', flowId, 0, 0, launch.hostIssueNs);
    appendFlow(out, first, 'f', flowId, pid, static_cast<unsigned>(tid),
               deviceNs);
  };
  for (const HostEvent &e : events)
    if (inWindow(e.startNs))
      appendEvent(out, first, e.name, name(e.category), 0, 0, e.startNs,
                  e.durationNs,
                  e.wallClock ? "{\"measured\":\"wall clock\"}" : "");
  constexpr int kLaunchTrack = 99;
  std::map<ProgramId, OuterLoops> loopsOf;
  for (const DeviceLaunch &launch : launches) {
    if (!inWindow(launch.startNs))
      continue;
    std::string programArgs = "{\"program\":";
    json::appendQuoted(programArgs, launch.program);
    programArgs += "}";
    if (options.detail == TraceDetail::Launch) {
      for (unsigned c = 0; c < launch.timeline.cores.size(); ++c) {
        if (!coreShown(c))
          continue;
        threads.insert({1 + c, kLaunchTrack});
        appendEvent(out, first, launch.program, "launch", 1 + c, kLaunchTrack,
                    launch.startNs, launch.timeline.cores[c].endNs,
                    programArgs);
        flow(launch, 1 + c, kLaunchTrack, launch.startNs);
      }
      continue;
    }
    // Arrows to each shown core's first event of the launch.
    {
      std::map<unsigned, const TimelineEvent *> firstOnCore;
      for (const TimelineEvent &e : launch.timeline.events) {
        if (!coreShown(e.core))
          continue;
        auto [it, inserted] = firstOnCore.try_emplace(e.core, &e);
        if (!inserted && e.startNs < it->second->startNs)
          it->second = &e;
      }
      for (auto [core, e] : firstOnCore)
        flow(launch, 1 + core, trackOf(*e), launch.startNs + e->startNs);
    }
    bool everyInstruction =
        options.detail == TraceDetail::Instruction &&
        (options.program.empty() || options.program == launch.program);
    if (everyInstruction) {
      for (const TimelineEvent &e : launch.timeline.events) {
        if (!coreShown(e.core))
          continue;
        unsigned pid = 1 + e.core;
        int tid = trackOf(e);
        threads.insert({pid, tid});
        appendEvent(out, first, mnemonic(e.op), categoryOf(e), pid,
                    static_cast<unsigned>(tid), launch.startNs + e.startNs,
                    e.endNs - e.startNs, instructionArgs(launch.program, e));
      }
      continue;
    }
    // Engine detail: per track, in time order, the events of one visit of
    // an outermost loop become one span.
    auto loopsIt = loopsOf.find(launch.id);
    if (loopsIt == loopsOf.end())
      loopsIt = loopsOf
                    .emplace(launch.id,
                             outerLoops(*programs.at(launch.id)->perRank[0]))
                    .first;
    const OuterLoops &outer = loopsIt->second;
    std::map<std::pair<unsigned, int>, std::vector<const TimelineEvent *>>
        tracks;
    for (const TimelineEvent &e : launch.timeline.events)
      if (coreShown(e.core))
        tracks[{e.core, trackOf(e)}].push_back(&e);
    for (auto &[track, list] : tracks) {
      unsigned pid = 1 + track.first;
      int tid = track.second;
      threads.insert({pid, tid});
      std::stable_sort(list.begin(), list.end(),
                       [](const TimelineEvent *a, const TimelineEvent *b) {
                         return a->startNs < b->startNs;
                       });
      auto loopOf = [&](const TimelineEvent &e) {
        const auto &stream = outer[static_cast<unsigned>(e.engine)];
        return e.index < stream.size() ? stream[e.index] : -1;
      };
      size_t i = 0;
      while (i < list.size()) {
        const TimelineEvent &head = *list[i];
        int loop = loopOf(head);
        if (loop < 0) {
          appendEvent(out, first, mnemonic(head.op), categoryOf(head), pid,
                      static_cast<unsigned>(tid), launch.startNs + head.startNs,
                      head.endNs - head.startNs,
                      instructionArgs(launch.program, head));
          ++i;
          continue;
        }
        // One visit of the loop: until an event of another loop or of no
        // loop (an outermost loop is entered once per visit of the stream),
        // or of another stream (a DMA queue's track has both DMA and SYNC's
        // transfers, whose loops are numbered per stream).
        double end = head.endNs;
        uint64_t bytes = head.bytes, count = 1;
        std::map<Opcode, uint64_t> ops{{head.op, 1}};
        size_t j = i + 1;
        for (; j < list.size() && list[j]->engine == head.engine &&
               loopOf(*list[j]) == loop;
             ++j) {
          end = std::max(end, list[j]->endNs);
          bytes += list[j]->bytes;
          ++count;
          ++ops[list[j]->op];
        }
        Opcode top = head.op;
        for (auto [op, n] : ops)
          if (n > ops[top])
            top = op;
        std::string args = "{\"program\":";
        json::appendQuoted(args, launch.program);
        args += ",\"loop\":" + std::to_string(loop) +
                ",\"instructions\":" + std::to_string(count);
        if (bytes)
          args += ",\"bytes\":" + std::to_string(bytes);
        args += "}";
        appendEvent(out, first, std::string(mnemonic(top)) + " loop",
                    categoryOf(head), pid, static_cast<unsigned>(tid),
                    launch.startNs + head.startNs, end - head.startNs, args);
        i = j;
      }
    }
  }
  std::set<unsigned> pids;
  for (const auto &[pid, tid] : threads) {
    if (pids.insert(pid).second)
      appendMeta(out, first, "process_name", pid, -1,
                 "core " + std::to_string(pid - 1));
    std::string label = tid == kLaunchTrack ? "launches"
                        : tid >= 100
                            ? "DMA queue " + std::to_string(tid - 100)
                            : std::string(name(static_cast<Engine>(tid)));
    appendMeta(out, first, "thread_name", pid, tid, label);
  }
  out += "\n]}\n";
  os << out;
}

Status Device::writeTrace(const std::string &path,
                          const TraceOptions &options) const {
  std::ofstream out(path);
  if (!out)
    return Status::failure("cannot open trace file '" + path +
                           "': " + std::strerror(errno));
  writeTrace(out, options);
  return out ? Status::ok() : Status::failure("cannot write " + path);
}

} // namespace seam::rt
