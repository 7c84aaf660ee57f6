//===- Host.h - Host runtime around the emulated device --------*- C++ -*-===//
//
// A Device is one chip (or several, for more ranks than cores per chip) with
// its cores. It loads programs, launches them (functional or timing-only),
// and keeps a host timeline of what sits around the device: program launch
// overhead, first-run overhead, PCIe transfers, lazy-tracing cost, graph-break
// syncs, compile time and host fallback ops (whose wall time is measured for
// real on this CPU and kept apart from simulated device time).
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_HOST_H
#define SEAM_RUNTIME_HOST_H

#include "runtime/Expected.h"
#include "runtime/Profile.h"
#include "runtime/Program.h"
#include "runtime/Timing.h"

#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seam::rt {

class FunctionalMachine;

enum class ExecMode { Functional, TimingOnly };

/// A host tensor: values as floats (converted to the binding dtype on upload).
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
using TensorMap = std::map<std::string, HostTensor>;

/// Host-side costs that are charged; ablations turn them off one by one.
struct HostCosts {
  bool launchOverhead = true;
  bool firstRun = true;
  bool transfers = true;
  bool tracing = true; ///< lazy tracing and graph lookups
  /// The framework's host time per custom-kernel call
  /// (Profile::kernelCallHostNs).
  bool kernelCallHost = true;
};

struct DeviceOptions {
  ExecMode mode = ExecMode::Functional;
  unsigned cores = 0;        ///< 0: the profile's cores per chip.
  bool verifyOnLoad = true;  ///< Check access patterns against capacities.
  bool collectEvents = true; ///< Keep per-instruction events for traces.
  /// Run the hazard checker (HazardChecker.h) in every launch; a hazard
  /// fails the launch. Unset: on in functional mode, off in timing-only.
  std::optional<bool> checkHazards = std::nullopt;
  /// Every launch appends its operand accesses here (SimulationOptions).
  std::vector<AccessRecord> *accessLog = nullptr;
  HostCosts costs{};
};

enum class HostCategory {
  Trace,
  Compile,
  Launch,
  Transfer,
  Fallback,
  Sync,
  KernelCall
};
std::string_view name(HostCategory category);

struct HostEvent {
  std::string name;
  HostCategory category = HostCategory::Launch;
  double startNs = 0;
  double durationNs = 0;
  bool wallClock = false; ///< Measured on this CPU, not modelled.
};

using ProgramId = uint32_t;

/// How one launch meets the host.
struct LaunchOptions {
  /// The host continues; the next graphBreakSync waits and reads back.
  bool async = false;
  /// Inputs and outputs are tensors already on the device (lazy-tensor
  /// handles, outputs of earlier launches): no PCIe transfer is charged.
  bool deviceResident = false;
};

struct LaunchResult {
  std::string program;
  unsigned ranks = 1;
  std::vector<TensorMap> outputs; ///< Per rank; empty in timing-only mode.
  Timeline timeline;              ///< Device timeline (0 = device start).
  std::optional<Fault> fault;
  double hostStartNs = 0;
  double h2dNs = 0, firstRunNs = 0, launchOverheadNs = 0;
  double deviceStartNs = 0, deviceNs = 0, d2hNs = 0;
  double hostEndNs = 0;
  uint64_t h2dBytes = 0, d2hBytes = 0;
  uint64_t nonFiniteWrites = 0; ///< NaN/Inf stored.
  /// The first instruction that stored NaN/Inf: program, core, engine,
  /// instruction (Fault::str() formats it); execution went on.
  std::optional<Fault> firstNonFinite;
  std::map<std::string, uint64_t> nonFiniteOutputs; ///< Per output binding.
  /// Hazards found (with the checker on; the first fails the launch).
  uint64_t hazardCount = 0;
  std::vector<Hazard> hazards;  ///< the first ones, with their text
  uint64_t hazardForgotten = 0; ///< SimulationResult::hazardForgotten
  bool ok() const { return !fault; }
};

/// The device part of a launch, kept for the trace.
struct DeviceLaunch {
  std::string program;
  double startNs = 0;
  /// When the host issued it (the start of its "launch" host event): a
  /// trace's flow arrow goes from there to the device work.
  double hostIssueNs = 0;
  Timeline timeline; ///< events only when instruction events are collected
  ProgramId id = 0;
};

/// How much of the device a trace shows. Host events are always there.
enum class TraceDetail {
  /// One span per launch and core: which program ran when.
  Launch,
  /// Per core, one track per engine and DMA queue; the iterations of each
  /// outermost loop of a stream are one span (named after the loop's most
  /// frequent instruction, with the instruction count and bytes in args),
  /// instructions outside loops are their own.
  Engine,
  /// Every instruction (`program` set: that program's launches only, the
  /// others at Engine detail).
  Instruction,
};
std::string_view name(TraceDetail detail);
std::optional<TraceDetail> parseTraceDetail(std::string_view text);

struct TraceOptions {
  TraceDetail detail = TraceDetail::Instruction;
  std::vector<unsigned> cores; ///< Cores (ranks) to show; empty: all.
  std::string program;         ///< See TraceDetail::Instruction.
  /// Host timeline window: host events and launches starting in
  /// [fromNs, toNs) are written. The trace's time 0 is the first event
  /// written.
  double fromNs = 0, toNs = std::numeric_limits<double>::infinity();
  /// Named spans of the host timeline on a track of their own ("steps"):
  /// one per traced step.
  struct Span {
    std::string name;
    double startNs = 0, endNs = 0;
  };
  std::vector<Span> spans;
};

class Device {
public:
  explicit Device(const Profile &profile, DeviceOptions options = {});
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const Profile &profile() const { return prof; }
  const DeviceOptions &options() const { return opts; }
  unsigned numCores() const { return coreCount; }

  /// Loads `program` onto cores [0, ranks): verifies it, reserves HBM per
  /// rank and writes params/constants (charged as a host->device transfer).
  Expected<ProgramId> loadProgram(const Program &program, unsigned ranks = 1);
  /// Tensor parallel with a distinct program per rank (same streams shape).
  Expected<ProgramId> loadProgram(std::vector<Program> perRank);
  /// Decodes a program file (readProgram) and loads it.
  Expected<ProgramId> loadProgramBytes(const std::vector<uint8_t> &bytes,
                                       unsigned ranks = 1);

  /// Runs a loaded program. `inputsPerRank[r]` holds rank r's inputs by
  /// binding name (a single map is used for every rank). Host costs: h2d of
  /// the inputs, first-run overhead on the program's first launch, launch
  /// overhead, device time, d2h of the outputs (unless `async`, where the
  /// host continues and the next graphBreakSync waits and reads back).
  Expected<LaunchResult> launch(ProgramId id,
                                const std::vector<TensorMap> &inputsPerRank,
                                bool async = false) {
    return launch(id, inputsPerRank, LaunchOptions{async, false});
  }
  Expected<LaunchResult> launch(ProgramId id,
                                const std::vector<TensorMap> &inputsPerRank,
                                LaunchOptions launchOptions);
  Expected<LaunchResult> launch(ProgramId id, const TensorMap &inputs = {},
                                bool async = false) {
    return launch(id, std::vector<TensorMap>{inputs}, async);
  }

  /// Charges a host<->device PCIe transfer of `bytes` (host fallback ops
  /// read their inputs back and send their outputs down).
  void chargeTransfer(const std::string &what, uint64_t bytes);

  // Eager (lazy-tensor) accounting.
  /// Charges the host for recording `ops` ops into a lazy graph.
  void chargeTracing(uint64_t ops);
  /// Charges the host for hashing `graphs` recorded lazy graphs and looking
  /// them up in the compile cache (Profile::graphLookupNs; a Trace event,
  /// switched off with the tracing cost).
  void chargeGraphLookups(uint64_t graphs);
  /// Charges the framework's host time of `calls` custom-kernel calls
  /// (kernel construction in the Python call stack): per call per step in
  /// eager mode, per call site once per compile in compile mode.
  void chargeKernelCalls(const std::string &what, uint64_t calls);
  /// Graph break: the host waits for the device and reads back pending
  /// outputs of async launches.
  void graphBreakSync() { waitDevice("graph break"); }
  /// The step's end (mark_step): the same wait, named for where it is.
  void stepEndSync() { waitDevice("step end"); }
  /// The host waits for the device and reads back pending outputs of async
  /// launches; `where` names the wait on the host timeline ("graph break:
  /// wait device").
  void waitDevice(const std::string &where);
  /// Records real compile time spent by the caller.
  void recordCompile(const std::string &what, double wallNs);
  /// Runs a host fallback op for real, measures its wall time and puts it on
  /// the host timeline. Returns the wall time in ns.
  double runFallback(const std::string &what, const std::function<void()> &fn);

  double hostNs() const { return hostClock; }
  double deviceIdleAtNs() const { return deviceFree; }
  double fallbackWallNs() const { return fallbackWall; }
  const std::vector<HostEvent> &hostEvents() const { return events; }
  const std::vector<DeviceLaunch> &deviceLaunches() const { return launches; }

  /// What later launches keep for a trace: the launch itself (program,
  /// start, per-core timing) and its per-instruction events (memory grows
  /// with the instructions run). Both start as DeviceOptions::collectEvents.
  void collectForTrace(bool launches, bool instructionEvents);

  /// Chrome trace-event JSON (opens in Perfetto): a host track, and per core
  /// the tracks `options.detail` asks for.
  void writeTrace(std::ostream &os, const TraceOptions &options = {}) const;
  Status writeTrace(const std::string &path,
                    const TraceOptions &options = {}) const;

private:
  /// loadProgram's common part: verifies each distinct program, reserves
  /// HBM per rank, writes params and constants.
  Expected<ProgramId>
  install(std::vector<std::shared_ptr<const Program>> perRank);
  struct Loaded {
    /// Ranks loaded from one program share it (loaded and verified once).
    std::vector<std::shared_ptr<const Program>> perRank;
    std::vector<uint64_t> hbmBase;
    bool launchedBefore = false;
  };
  Profile prof;
  DeviceOptions opts;
  unsigned coreCount = 1;
  std::unique_ptr<FunctionalMachine> machine;
  std::vector<std::unique_ptr<Loaded>> programs;
  std::vector<uint64_t> hbmUsed; ///< Per chip.
  double hostClock = 0;
  double deviceFree = 0;
  double fallbackWall = 0;
  uint64_t pendingD2hBytes = 0;
  std::vector<HostEvent> events;
  std::vector<DeviceLaunch> launches;
  bool keepLaunches = true, keepEvents = true;

  void hostEvent(const std::string &what, HostCategory category,
                 double durationNs, bool wall = false);
  double transferNs(uint64_t bytes) const;
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_HOST_H
