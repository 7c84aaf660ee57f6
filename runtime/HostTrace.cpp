//===- HostTrace.cpp - Chrome trace-event export --------------------------===//
//
// Timestamps are in microseconds as the format requires. pid 0 is the host;
// pid 1 + c is core c, with one thread per engine (tid = engine code) and
// one per DMA queue (tid = 100 + queue).
//
//===----------------------------------------------------------------------===//

#include "runtime/Host.h"
#include "runtime/Json.h"

#include <cstdio>
#include <fstream>
#include <ostream>
#include <set>

namespace seam::rt {

namespace {
void appendNumber(std::string &out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6f", v);
  out += buf;
}

void appendEvent(std::string &out, bool &first, std::string_view name,
                 std::string_view cat, unsigned pid, unsigned tid,
                 double startNs, double durNs, const std::string &args) {
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
  out += "{\"name\":\"" + std::string(what) + "\",\"ph\":\"M\",\"pid\":" +
         std::to_string(pid);
  if (tid >= 0)
    out += ",\"tid\":" + std::to_string(tid);
  out += ",\"args\":{\"name\":";
  json::appendQuoted(out, value);
  out += "}}";
}
} // namespace

void Device::writeTrace(std::ostream &os) const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  appendMeta(out, first, "process_name", 0, -1, "host");
  appendMeta(out, first, "thread_name", 0, 0, "host");
  std::set<std::pair<unsigned, int>> threads;
  for (const HostEvent &e : events)
    appendEvent(out, first, e.name, name(e.category), 0, 0, e.startNs,
                e.durationNs,
                e.wallClock ? "{\"measured\":\"wall clock\"}" : "");
  for (const DeviceLaunch &launch : launches) {
    for (const TimelineEvent &e : launch.timeline.events) {
      unsigned pid = 1 + e.core;
      int tid = e.dmaQueue >= 0 ? 100 + e.dmaQueue
                                : static_cast<int>(e.engine);
      threads.insert({pid, tid});
      std::string args = "{\"program\":";
      json::appendQuoted(args, launch.program);
      args += ",\"index\":" + std::to_string(e.index);
      if (e.bytes)
        args += ",\"bytes\":" + std::to_string(e.bytes);
      args += "}";
      appendEvent(out, first, mnemonic(e.op), name(e.engine), pid,
                  static_cast<unsigned>(tid), launch.startNs + e.startNs,
                  e.endNs - e.startNs, args);
    }
  }
  std::set<unsigned> pids;
  for (const auto &[pid, tid] : threads) {
    if (pids.insert(pid).second)
      appendMeta(out, first, "process_name", pid, -1,
                 "core " + std::to_string(pid - 1));
    std::string label =
        tid >= 100 ? "DMA queue " + std::to_string(tid - 100)
                   : std::string(name(static_cast<Engine>(tid)));
    appendMeta(out, first, "thread_name", pid, tid, label);
  }
  out += "\n]}\n";
  os << out;
}

Status Device::writeTrace(const std::string &path) const {
  std::ofstream out(path);
  if (!out)
    return Status::failure("cannot open trace file " + path);
  writeTrace(out);
  return out ? Status::ok() : Status::failure("cannot write " + path);
}

} // namespace seam::rt
