//===- HostDevice.cpp - Device: loading, launching, host timeline ---------===//

#include "runtime/Functional.h"
#include "runtime/Host.h"
#include "runtime/ProgramFile.h"
#include <algorithm>

#include <chrono>
#include <cmath>

namespace seam::rt {

std::string_view name(HostCategory category) {
  switch (category) {
  case HostCategory::Trace:
    return "trace";
  case HostCategory::Compile:
    return "compile";
  case HostCategory::Launch:
    return "launch";
  case HostCategory::Transfer:
    return "transfer";
  case HostCategory::Fallback:
    return "fallback";
  case HostCategory::Sync:
    return "sync";
  case HostCategory::KernelCall:
    return "kernel call";
  }
  return "?";
}

Device::Device(const Profile &profile, DeviceOptions options)
    : prof(profile), opts(options), keepLaunches(options.collectEvents),
      keepEvents(options.collectEvents) {
  coreCount = opts.cores ? opts.cores : std::max(1u, prof.coresPerChip);
  unsigned perChip = std::max(1u, prof.coresPerChip);
  hbmUsed.assign((coreCount + perChip - 1) / perChip, 0);
  if (opts.mode == ExecMode::Functional)
    machine = std::make_unique<FunctionalMachine>(prof, coreCount);
}

Device::~Device() = default;

void Device::collectForTrace(bool launches, bool instructionEvents) {
  keepLaunches = launches;
  keepEvents = instructionEvents;
}

void Device::hostEvent(const std::string &what, HostCategory category,
                       double durationNs, bool wall) {
  events.push_back({what, category, hostClock, durationNs, wall});
  hostClock += durationNs;
}

double Device::transferNs(uint64_t bytes) const {
  // The framework profile's PCIe bandwidth (hardware.md: ~25 GB/s
  // sustained, estimated) and fixed latency per copy (unpublished: 0).
  if (!opts.costs.transfers || bytes == 0)
    return 0.0;
  return prof.transferLatencyNs +
         static_cast<double>(bytes) / prof.pcieBytesPerNs;
}

Expected<ProgramId> Device::loadProgram(const Program &program,
                                        unsigned ranks) {
  return install(std::vector<std::shared_ptr<const Program>>(
      std::max(1u, ranks), std::make_shared<const Program>(program)));
}

Expected<ProgramId> Device::loadProgramBytes(const std::vector<uint8_t> &bytes,
                                             unsigned ranks) {
  Expected<Program> program = readProgram(bytes);
  if (!program)
    return Expected<ProgramId>::failure(program.error());
  return loadProgram(*program, ranks);
}

Expected<ProgramId> Device::loadProgram(std::vector<Program> perRank) {
  std::vector<std::shared_ptr<const Program>> shared;
  shared.reserve(perRank.size());
  for (Program &p : perRank)
    shared.push_back(std::make_shared<const Program>(std::move(p)));
  return install(std::move(shared));
}

Expected<ProgramId>
Device::install(std::vector<std::shared_ptr<const Program>> perRank) {
  auto fail = [](const std::string &m) {
    return Expected<ProgramId>::failure(m);
  };
  if (perRank.empty())
    return fail("loadProgram: no program");
  if (perRank.size() > coreCount)
    return fail("program '" + perRank[0]->name + "' needs " +
                std::to_string(perRank.size()) + " ranks but the device has " +
                std::to_string(coreCount) + " cores");
  MemoryLimits limits = prof.memoryLimits();
  for (size_t r = 0; r < perRank.size(); ++r) {
    const Program &p = *perRank[r];
    if (r > 0 && perRank[r] == perRank[r - 1])
      continue; // the same program, checked already
    if (p.target != prof.target)
      return fail("program '" + p.name + "' targets " +
                  std::string(name(p.target)) + " but the device is " +
                  prof.name);
    Status valid = verifyProgram(p, opts.verifyOnLoad ? &limits : nullptr);
    if (!valid)
      return fail("program '" + p.name + "': " + valid.error());
  }
  auto loaded = std::make_unique<Loaded>();
  unsigned perChip = std::max(1u, prof.coresPerChip);
  std::vector<uint64_t> used = hbmUsed;
  for (unsigned r = 0; r < perRank.size(); ++r) {
    unsigned chip = r / perChip;
    uint64_t base = (used[chip] + 4095) / 4096 * 4096;
    uint64_t end = base + perRank[r]->hbmBytes();
    if (end > prof.hbmBytes)
      return fail("program '" + perRank[r]->name + "' rank " +
                  std::to_string(r) + ": out of HBM (" + std::to_string(end) +
                  " of " + std::to_string(prof.hbmBytes) + " bytes)");
    loaded->hbmBase.push_back(base);
    used[chip] = end;
  }
  hbmUsed = used;
  loaded->perRank = std::move(perRank);
  // Params and constants are written to HBM once, at load.
  uint64_t bytes = 0;
  for (unsigned r = 0; r < loaded->perRank.size(); ++r) {
    const Program &p = *loaded->perRank[r];
    for (const Binding &b : p.bindings)
      if (b.role == BindingRole::Param || b.role == BindingRole::Constant)
        bytes += b.numElements() * byteSize(b.dtype);
    if (machine) {
      machine->bind(r, &p, loaded->hbmBase[r]);
      for (const Constant &c : p.constants)
        machine->initConstant(r, c);
    }
  }
  if (bytes)
    hostEvent("load params '" + loaded->perRank[0]->name + "'",
              HostCategory::Transfer, transferNs(bytes));
  programs.push_back(std::move(loaded));
  return static_cast<ProgramId>(programs.size() - 1);
}

Expected<LaunchResult> Device::launch(ProgramId id,
                                      const std::vector<TensorMap> &inputs,
                                      LaunchOptions launchOptions) {
  bool async = launchOptions.async;
  bool charged = !launchOptions.deviceResident;
  auto fail = [](const std::string &m) {
    return Expected<LaunchResult>::failure(m);
  };
  if (id >= programs.size())
    return fail("launch: unknown program id " + std::to_string(id));
  Loaded &loaded = *programs[id];
  unsigned ranks = static_cast<unsigned>(loaded.perRank.size());
  LaunchResult res;
  res.program = loaded.perRank[0]->name;
  res.ranks = ranks;
  res.hostStartNs = hostClock;

  // Inputs: checked and uploaded (functional), sized (both modes).
  for (unsigned r = 0; r < ranks; ++r) {
    const Program &p = *loaded.perRank[r];
    const TensorMap *in = inputs.empty()
                              ? nullptr
                              : &inputs[std::min<size_t>(r, inputs.size() - 1)];
    if (machine)
      machine->bind(r, &p, loaded.hbmBase[r]);
    for (uint32_t b = 0; b < p.bindings.size(); ++b) {
      const Binding &binding = p.bindings[b];
      bool isParam = binding.role == BindingRole::Param;
      if (binding.role != BindingRole::Input && !isParam)
        continue;
      // Params live in HBM from load on (their transfer is charged once by
      // the host, as "load weights"); a launch carries their values only so
      // the functional model computes with them.
      if (!isParam)
        res.h2dBytes += binding.numElements() * byteSize(binding.dtype);
      if (!machine)
        continue;
      auto it = in ? in->find(binding.name) : decltype(in->end()){};
      if (isParam && (!in || it == in->end()) &&
          std::any_of(p.constants.begin(), p.constants.end(),
                      [&](const Constant &c) { return c.binding == b; }))
        continue; // initialised at load from the program's constants
      if (!in || it == in->end())
        return fail("launch of '" + p.name + "': missing " +
                    (isParam ? "param '" : "input '") + binding.name +
                    "' for rank " + std::to_string(r));
      if (it->second.data.size() != binding.numElements())
        return fail("launch of '" + p.name + "': input '" + binding.name +
                    "' has " + std::to_string(it->second.data.size()) +
                    " values, the binding holds " +
                    std::to_string(binding.numElements()));
      machine->writeBinding(r, b, it->second.data.data(),
                            it->second.data.size());
    }
  }
  res.h2dNs = charged ? transferNs(res.h2dBytes) : 0;
  if (res.h2dNs > 0)
    hostEvent("h2d inputs '" + res.program + "'", HostCategory::Transfer,
              res.h2dNs);
  if (!loaded.launchedBefore && opts.costs.firstRun) {
    // hardware.md: first run of a NEFF ~1 ms extra (estimated).
    res.firstRunNs = prof.firstRunOverheadNs;
    hostEvent("first run '" + res.program + "'", HostCategory::Launch,
              res.firstRunNs);
  }
  loaded.launchedBefore = true;
  double hostIssueNs = hostClock;
  if (opts.costs.launchOverhead) {
    // hardware.md: launch of one compiled program, tens of us (estimated).
    res.launchOverheadNs = prof.launchOverheadNs;
    hostEvent("launch '" + res.program + "'", HostCategory::Launch,
              res.launchOverheadNs);
  }

  std::vector<const Program *> progs;
  progs.reserve(loaded.perRank.size());
  for (const auto &p : loaded.perRank)
    progs.push_back(p.get());
  if (machine) {
    machine->resetPsumState();
    machine->resetCounters();
  }
  SimulationOptions simOpts;
  simOpts.collectEvents = keepEvents;
  simOpts.checkHazards =
      opts.checkHazards.value_or(opts.mode == ExecMode::Functional);
  simOpts.accessLog = opts.accessLog;
  SimulationResult sim = simulate(progs, prof, machine.get(), simOpts);
  res.timeline = std::move(sim.timeline);
  res.fault = sim.fault;
  res.firstNonFinite = sim.firstNonFinite;
  res.hazardCount = sim.hazardCount;
  res.hazards = std::move(sim.hazards);
  res.hazardForgotten = sim.hazardForgotten;
  res.deviceStartNs = std::max(hostClock, deviceFree);
  res.deviceNs = res.timeline.totalNs;
  deviceFree = res.deviceStartNs + res.deviceNs;
  if (keepLaunches)
    launches.push_back(
        {res.program, res.deviceStartNs, hostIssueNs, res.timeline, id});

  for (unsigned r = 0; r < ranks; ++r) {
    const Program &p = *loaded.perRank[r];
    TensorMap out;
    for (uint32_t b = 0; b < p.bindings.size(); ++b) {
      const Binding &binding = p.bindings[b];
      if (binding.role != BindingRole::Output)
        continue;
      res.d2hBytes += binding.numElements() * byteSize(binding.dtype);
      if (!machine || res.fault)
        continue;
      HostTensor t;
      t.shape = binding.shape;
      t.data = machine->readBinding(r, b);
      uint64_t bad = 0;
      for (float v : t.data)
        bad += !std::isfinite(v);
      if (bad)
        res.nonFiniteOutputs[binding.name] += bad;
      out[binding.name] = std::move(t);
    }
    if (machine && !res.fault)
      res.outputs.push_back(std::move(out));
  }
  if (machine)
    res.nonFiniteWrites = machine->nonFiniteWrites();
  if (async) {
    if (charged)
      pendingD2hBytes += res.d2hBytes;
  } else {
    if (deviceFree > hostClock)
      hostEvent("wait device '" + res.program + "'", HostCategory::Sync,
                deviceFree - hostClock);
    res.d2hNs = charged ? transferNs(res.d2hBytes) : 0;
    if (res.d2hNs > 0)
      hostEvent("d2h outputs '" + res.program + "'", HostCategory::Transfer,
                res.d2hNs);
  }
  res.hostEndNs = hostClock;
  return res;
}

void Device::chargeTransfer(const std::string &what, uint64_t bytes) {
  double ns = transferNs(bytes);
  if (ns > 0)
    hostEvent(what, HostCategory::Transfer, ns);
}

void Device::chargeTracing(uint64_t ops) {
  if (!opts.costs.tracing || ops == 0)
    return;
  // The framework profile's per-op tracing cost (torch-xla lazy: calibrated
  // on one published row, hardware.md's 'a few us' as the prior).
  hostEvent("trace " + std::to_string(ops) + " ops", HostCategory::Trace,
            static_cast<double>(ops) * prof.tracingCostPerOpNs);
}

void Device::chargeGraphLookups(uint64_t graphs) {
  if (!opts.costs.tracing || graphs == 0 || prof.graphLookupNs <= 0)
    return;
  // The framework profile's per-graph hash and cache lookup.
  hostEvent("graph lookup x" + std::to_string(graphs), HostCategory::Trace,
            static_cast<double>(graphs) * prof.graphLookupNs);
}

void Device::chargeKernelCalls(const std::string &what, uint64_t calls) {
  if (!opts.costs.kernelCallHost || calls == 0 || prof.kernelCallHostNs <= 0)
    return;
  // The framework profile's host time per kernel call (torch-xla: one user
  // measurement on trn1; PyTorch native eager: calibrated).
  hostEvent(what, HostCategory::KernelCall,
            static_cast<double>(calls) * prof.kernelCallHostNs);
}

void Device::waitDevice(const std::string &where) {
  if (prof.syncNs > 0)
    hostEvent(where + ": sync", HostCategory::Sync, prof.syncNs);
  if (deviceFree > hostClock)
    hostEvent(where + ": wait device", HostCategory::Sync,
              deviceFree - hostClock);
  if (pendingD2hBytes) {
    hostEvent(where + ": d2h", HostCategory::Transfer,
              transferNs(pendingD2hBytes));
    pendingD2hBytes = 0;
  }
}

void Device::recordCompile(const std::string &what, double wallNs) {
  hostEvent(what, HostCategory::Compile, wallNs, true);
}

double Device::runFallback(const std::string &what,
                           const std::function<void()> &fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  auto t1 = std::chrono::steady_clock::now();
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  fallbackWall += ns;
  hostEvent(what, HostCategory::Fallback, ns, true);
  return ns;
}

} // namespace seam::rt
