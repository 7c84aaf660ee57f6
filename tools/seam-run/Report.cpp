//===- Report.cpp - seam-run: the report as text and as JSON --------------===//
#include "tools/seam-run/Report.h"
#include "tools/seam-run/Explain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include <cstdio>

using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

/// Milliseconds with 4 significant digits ("11.62 ms", "0.01567 ms").
std::string milliseconds(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", ns * 1e-6);
  return buf;
}

std::string humanBytes(double b) {
  const char *units[] = {"B", "KB", "MB", "GB", "TB"};
  int i = 0;
  while (b >= 1000 && i < 4) {
    b /= 1000;
    ++i;
  }
  return llvm::formatv("{0:F2} {1}", b, units[i]).str();
}

/// The steps warmStepNs() averages.
std::vector<const StepStats *> warmSteps(const std::vector<RunStats> &runs,
                                         bool &firstOfWarmRuns) {
  std::vector<const StepStats *> steady, warmFirst;
  for (const RunStats &r : runs)
    for (size_t s = 0; s < r.steps.size(); ++s) {
      if (s > 0)
        steady.push_back(&r.steps[s]);
      else if (!r.cold)
        warmFirst.push_back(&r.steps[s]);
    }
  firstOfWarmRuns = steady.empty();
  return steady.empty() ? warmFirst : steady;
}

} // namespace

double SessionResult::warmStepNs() const {
  bool firstOfWarmRuns;
  std::vector<const StepStats *> steps = warmSteps(runs, firstOfWarmRuns);
  double sum = 0;
  for (const StepStats *s : steps)
    sum += s->latencyNs;
  return steps.empty() ? 0 : sum / steps.size();
}

std::string SessionResult::warmStepBasis() const {
  bool firstOfWarmRuns;
  std::vector<const StepStats *> steps = warmSteps(runs, firstOfWarmRuns);
  if (steps.empty())
    return "";
  std::string n = std::to_string(steps.size());
  return firstOfWarmRuns
             ? "mean of " + n +
                   " first step(s) of warm runs, each with its warm compile"
             : "mean of " + n + " step(s) after each run's first";
}

double SessionResult::dmaBytesPerRank() const {
  return double(dmaBytes) / std::max(1, options.tp);
}

double SessionResult::dmaTransfersPerRank() const {
  return double(roofline.dmaTransfers) / std::max(1, options.tp);
}

/// The step's roofline in one line, the DMA figures in another and, when the
/// step launches several distinct units, the three furthest from their floor
/// (device time above the floor, per step).
static void printRoofline(const SessionResult &r, llvm::raw_ostream &os) {
  const RooflineReport &rf = r.roofline;
  const StepStats &last = r.runs.back().steps.back();
  auto pct = [](double floor, double t) { return t > 0 ? 100 * floor / t : 0; };
  // A run of one step has no warm step (the first includes the compile):
  // say so rather than print a fraction of 0 ms.
  std::string warm =
      r.warmStepNs() > 0
          ? llvm::formatv("floor {0} ({1}) = {2:F1}% of the {3} warm step",
                          milliseconds(rf.floorNs), rf.bound,
                          pct(rf.floorNs, r.warmStepNs()),
                          milliseconds(r.warmStepNs()))
                .str()
          : llvm::formatv("floor {0} ({1}); no warm step to compare "
                          "(--steps 2 or more)",
                          milliseconds(rf.floorNs), rf.bound)
                .str();
  os << llvm::formatv(
      "  roofline: {0}; device only {1:F1}% (floor / {2} of device time in "
      "the last step); {3} host fallback op(s) excluded from the floor\n",
      warm, pct(rf.floorNs, last.deviceNs), milliseconds(last.deviceNs),
      rf.hostOpsExcluded);
  double moved = r.dmaBytesPerRank(), transfers = r.dmaTransfersPerRank();
  os << llvm::formatv(
      "  roofline DMA per rank per step: {0} moved = {1:F2}x the {2} that must "
      "cross HBM; {3:F0} transfers of {4} mean\n",
      humanBytes(moved), rf.mustCrossBytes > 0 ? moved / rf.mustCrossBytes : 0,
      humanBytes(rf.mustCrossBytes), transfers,
      humanBytes(transfers > 0 ? moved / transfers : 0));
  if (rf.idle)
    os << "  roofline idle: the bound engine (" << rf.idle->engine
       << ") sat idle longest in the last step (rank 0) for "
       << rf.idle->cause() << "\n";
  if (rf.units.size() < 2)
    return;
  std::vector<const RooflineUnit *> worst;
  worst.reserve(rf.units.size());
  for (const RooflineUnit &u : rf.units)
    worst.push_back(&u);
  auto lost = [](const RooflineUnit *u) {
    return (u->deviceNs - u->floorNs) * u->launchesPerStep;
  };
  llvm::stable_sort(worst, [&](const RooflineUnit *a, const RooflineUnit *b) {
    return lost(a) > lost(b);
  });
  os << "  roofline, furthest from their floor:";
  for (size_t i = 0; i < std::min<size_t>(3, worst.size()); ++i)
    os << llvm::formatv("{0} {1} x{2}: {3:F1}% of {4} ({5})", i ? ";" : "",
                        worst[i]->name, worst[i]->launchesPerStep,
                        pct(worst[i]->floorNs, worst[i]->deviceNs),
                        milliseconds(worst[i]->floorNs), worst[i]->bound);
  os << "\n";
}

/// Functional runs: where each input came from (a file, or generated with
/// its seed) and where each output went.
static void printStepValues(const SessionResult &r, llvm::raw_ostream &os) {
  if (r.options.exec != Exec::Functional)
    return;
  os << "  inputs:";
  for (auto [i, in] : llvm::enumerate(r.inputFiles)) {
    os << (i ? "; " : " ") << in.name;
    if (in.seed)
      os << " generated (seeded uniform in [-1, 1), seed " << *in.seed << ")";
    else
      os << " from '" << in.file << "'"
         << (in.convertedFrom.empty()
                 ? ""
                 : " (" + in.convertedFrom + ", converted to float32)");
  }
  os << "\n  outputs:";
  bool unwritten = false;
  for (auto [i, out] : llvm::enumerate(r.outputFiles)) {
    os << (i ? "; " : " ") << out.name;
    if (!out.file.empty())
      os << " -> '" << out.file << "'";
    unwritten |= out.file.empty();
  }
  if (unwritten)
    os << " (not written: --output-dir DIR writes them as NAME.npy)";
  os << "\n";
}

void seamrun::printReport(const SessionResult &r, llvm::raw_ostream &os,
                          bool quiet) {
  const SessionOptions &o = r.options;
  std::string kernels = llvm::join(o.kernels, ",");
  os << llvm::formatv("seam-run: {0} tp={1} target={2} mode={3} kernels={4} "
                      "exec={5}\n",
                      o.model.empty() ? (o.config.empty() ? o.input : o.config)
                                      : o.model,
                      o.tp, std::string(rt::name(o.target)), name(o.mode),
                      kernels.empty() ? "none" : kernels, name(o.exec));
  if (std::vector<std::string> flags = shapingOptions(o); !flags.empty())
    os << "  options: " << llvm::join(flags, " ") << "\n";
  os << llvm::formatv("  step: {0} program regions ({1} distinct), {2} kernel "
                      "calls, {3} host ops, {4} launches per step\n",
                      r.regions, r.distinctPrograms, r.kernelCalls, r.hostOps,
                      r.launchesPerStep);
  if (!r.recognised.empty() || !r.hostOpsByOp.empty()) {
    auto list = [](const std::vector<std::pair<std::string, int64_t>> &v) {
      std::string text;
      for (auto &[name, n] : v)
        text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
      return text.empty() ? std::string("none") : text;
    };
    os << "  recognised (seam-recognize): " << list(r.recognised)
       << "; on the host: " << list(r.hostOpsByOp) << "\n";
  }
  printStepValues(r, os);
  // The parts add up: graph + lowering + codegen + kernels + cache + other
  // is the compile; double-buffer + allocate + schedule + emit + rest is
  // codegen + kernels (both run the same phases per unit). Kernel bodies
  // built inside programs (compile mode) are shown in lowering, where they
  // are built.
  const CompileBreakdown &cb = r.compile;
  double total = r.runs.front().compileNs;
  std::string bodies =
      cb.kernelBodies ? llvm::formatv(" (of which {0} kernel bodies {1:F3})",
                                      cb.kernelBodies, cb.kernelBodiesNs * 1e-9)
                            .str()
                      : std::string();
  os << llvm::formatv(
      "  {0}: {1:F3} s = graph {2:F3} + lowering {3:F3}{4} + codegen {5:F3} + "
      "kernels {6:F3} ({7} kernel programs) + cache {8:F3} + other {9:F3}; "
      "codegen + kernels = double-buffer {10:F3} + allocate {11:F3} + "
      "schedule {12:F3} + emit {13:F3} + rest {14:F3}; {15} instructions\n",
      r.runs.front().cold ? "cold compile"
                          : "first compile (every program from the cache)",
      total * 1e-9, cb.graphNs * 1e-9, cb.lowerNs * 1e-9, bodies,
      cb.codegenNs * 1e-9, cb.kernelNs * 1e-9, cb.kernelPrograms,
      cb.cacheNs * 1e-9, cb.otherNs(total) * 1e-9, cb.doubleBufferNs * 1e-9,
      cb.allocateNs * 1e-9, cb.scheduleNs * 1e-9, cb.emitNs * 1e-9,
      cb.codegenOtherNs() * 1e-9, cb.instructions);
  if (!r.kernelRejections.empty()) {
    int sites = 0;
    for (const auto &x : r.kernelRejections)
      sites += x.sites;
    os << llvm::formatv("  kernel sites rejected: {0} (the kernel's "
                        "constraints fail there; the compiler keeps them)\n",
                        sites);
    for (const auto &x : r.kernelRejections)
      os << llvm::formatv("    {0} at {1} {2} site(s): {3}\n", x.kernel,
                          x.sites, x.replaces, x.reason);
  }
  if (!r.kernelDecisions.empty()) {
    int kept = 0;
    for (const auto &d : r.kernelDecisions)
      kept += d.inserted;
    os << llvm::formatv(
        "  kernels=auto: {0} of {1} candidate(s) kept, decided in {2:F3} s "
        "of the graph phase ({3} window timing(s) simulated on the "
        "modelled device, {4} from the compile cache)\n",
        kept, r.kernelDecisions.size(), r.compile.decideNs * 1e-9,
        r.compile.decideSimulated, r.compile.decideCached);
    for (const auto &d : r.kernelDecisions)
      os << llvm::formatv("    {0} at {1} (x{2}, {3} site(s) each): {4}\n",
                          d.kernel, d.window, d.windows, d.sites, d.describe());
  }
  if (!quiet)
    for (auto [i, run] : llvm::enumerate(r.runs)) {
      os << llvm::formatv(
          "  run {0} ({1}): compile {2:F3} s, {3} compiled, {4} "
          "cache hits{5}; steps (s):",
          i, run.cold ? "cold" : "warm", run.compileNs * 1e-9, run.compiled,
          run.cacheHits,
          run.cacheCorrupt ? ", " + std::to_string(run.cacheCorrupt) +
                                 " corrupt entries rebuilt"
                           : std::string());
      for (const StepStats &s : run.steps)
        os << llvm::formatv(" {0:F6}", s.latencyNs * 1e-9);
      os << "\n";
    }
  if (std::string basis = r.warmStepBasis(); !basis.empty())
    os << llvm::formatv("  warm step: {0:F6} s ({1:F3} steps/s), {2}\n",
                        r.warmStepNs() * 1e-9, 1e9 / r.warmStepNs(), basis);
  else
    os << "  warm step: none (one cold step; give --steps 2 or --runs 2)\n";
  // The host timeline of the last step, whose parts sum to it; the device
  // works in parallel with it.
  const StepStats &last = r.runs.back().steps.back();
  os << llvm::formatv(
      "  last step: {0:F6} s = modelled: tracing {1:F6} + kernel calls "
      "{10:F6} + launch {2:F6} + "
      "transfers {3:F6} + wait at graph breaks {4:F6} + wait at step end "
      "{5:F6}; measured here: compile {6:F6} + host fallback {7:F6}{8}; "
      "device busy {9:F6} s (overlaps the host)\n",
      last.latencyNs * 1e-9, last.tracingNs * 1e-9, last.launchNs * 1e-9,
      last.transferNs * 1e-9, last.syncNs * 1e-9, last.stepEndWaitNs * 1e-9,
      last.compileNs * 1e-9, last.fallbackNs * 1e-9,
      std::abs(last.otherNs) > 1
          ? llvm::formatv(" + other {0:F6}", last.otherNs * 1e-9).str()
          : std::string(),
      last.deviceNs * 1e-9, last.kernelCallNs * 1e-9);
  if (!r.profile.framework.empty()) {
    os << "  host costs: framework " << r.profile.framework;
    if (const auto &c = r.profile.calibration) {
      bool given = llvm::any_of(o.figureOverrides, [&](const std::string &f) {
        return llvm::StringRef(f).starts_with(c->figure + "=");
      });
      char value[32];
      std::snprintf(value, sizeof value, "%.10g",
                    r.profile.figures.at(c->figure).value);
      os << llvm::formatv(
          "; {0} = {1} ns ({2}; calibrated on {3})", c->figure, value,
          given ? "given by --set" : "the prior: nothing calibrated it",
          c->row);
    }
    os << "\n";
  }
  int corrupt = 0;
  for (const RunStats &run : r.runs)
    corrupt += run.cacheCorrupt;
  if (corrupt)
    os << "  WARNING: " << corrupt << " corrupt compile-cache entries were "
       << "detected and rebuilt\n";
  printRoofline(r, os);
  if (r.explanation)
    printExplanation(*r.explanation, os);
  if (r.reference)
    printReference(*r.reference, os);
  if (r.nonFinite)
    os << "  WARNING: " << r.nonFinite << " non-finite values (NaN/Inf) "
       << "written by the device\n";
  for (const std::string &f : r.faults)
    os << "  FAULT: " << f << "\n";
}

/// `roofline`: {floor_s, fraction, bound} for the step and per launched
/// unit, the terms of each floor, and the DMA figures of the last step.
/// {name: count} of an import's recovery (recognised ops, host ops).
static llvm::json::Object
countsJson(const std::vector<std::pair<std::string, int64_t>> &v) {
  llvm::json::Object o;
  for (auto &[name, n] : v)
    o[name] = n;
  return o;
}

/// `roofline.idle`: the bound engine's longest idle stretch in the last
/// step (rank 0) and its cause; null when the step is DMA-bound.
static llvm::json::Value idleJson(const std::optional<IdleReport> &idle) {
  if (!idle)
    return nullptr;
  auto orNull = [](int64_t v) -> llvm::json::Value {
    return v >= 0 ? llvm::json::Value(v) : llvm::json::Value(nullptr);
  };
  auto strOrNull = [](const std::string &v) -> llvm::json::Value {
    return v.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(v);
  };
  return llvm::json::Object{{"engine", idle->engine},
                            {"unit", idle->unit},
                            {"s", idle->ns * 1e-9},
                            {"from_s", idle->fromNs * 1e-9},
                            {"to_s", idle->toNs * 1e-9},
                            {"resumed_by", strOrNull(idle->resumedBy)},
                            {"resumed_pc", orNull(idle->resumedPc)},
                            {"waited_for", strOrNull(idle->waitedFor)},
                            {"waited_op", strOrNull(idle->waitedOp)},
                            {"waited_pc", orNull(idle->waitedPc)},
                            {"cause", idle->cause()}};
}

static llvm::json::Object rooflineJson(const SessionResult &r) {
  using llvm::json::Array;
  using llvm::json::Object;
  const RooflineReport &rf = r.roofline;
  const StepStats &last = r.runs.back().steps.back();
  auto frac = [](double floor, double t) { return t > 0 ? floor / t : 0.0; };
  Array units;
  for (const RooflineUnit &u : rf.units)
    units.push_back(Object{{"name", u.name},
                           {"kernel", u.isKernel},
                           {"launches_per_step", u.launchesPerStep},
                           {"floor_s", u.floorNs * 1e-9},
                           {"device_s", u.deviceNs * 1e-9},
                           {"fraction", frac(u.floorNs, u.deviceNs)},
                           {"bound", u.bound},
                           {"te_s", u.teNs * 1e-9},
                           {"elementwise_s", u.elementwiseNs * 1e-9},
                           {"elementwise_engines", u.elementwiseEngines},
                           {"dma_s", u.dmaNs * 1e-9},
                           {"te_flops", u.teFlops},
                           {"element_ops", u.elementOps},
                           {"must_cross_bytes", u.hbmBytes}});
  double moved = r.dmaBytesPerRank(), transfers = r.dmaTransfersPerRank();
  return Object{
      {"step",
       Object{{"floor_s", rf.floorNs * 1e-9},
              {"fraction", frac(rf.floorNs, r.warmStepNs())},
              {"fraction_of", "warm_step_s"},
              {"device_fraction", frac(rf.floorNs, last.deviceNs)},
              {"device_s", last.deviceNs * 1e-9},
              {"bound", rf.bound},
              {"te_s", rf.teNs * 1e-9},
              {"elementwise_s", rf.elementwiseNs * 1e-9},
              {"dma_s", rf.dmaNs * 1e-9},
              {"host_ops_excluded", rf.hostOpsExcluded},
              {"not_in_floor", "host fallback ops, collectives (all_reduce, "
                               "all_gather), kernel constants"}}},
      {"programs", std::move(units)},
      {"dma",
       Object{{"bytes_per_rank_per_step", moved},
              {"must_cross_bytes_per_rank_per_step", rf.mustCrossBytes},
              {"ratio", rf.mustCrossBytes > 0 ? moved / rf.mustCrossBytes : 0},
              {"transfers_per_rank_per_step", transfers},
              {"mean_transfer_bytes", transfers > 0 ? moved / transfers : 0}}},
      {"peaks", Object{{"te_bf16_flops_per_s", rf.peakTeFlopsPerNs * 1e9},
                       {"dma_bytes_per_s", rf.peakDmaBytesPerNs * 1e9}}},
      {"idle", idleJson(rf.idle)}};
}

/// The host (framework) figures the run used, each with its source and
/// status, and the profile's calibration: its figure is the prior unless
/// --set gave it a value (bench/reproduce.py computes it on the row).
static llvm::json::Value frameworkJson(const rt::Profile &p) {
  using llvm::json::Array;
  using llvm::json::Object;
  Object figures;
  for (const auto &[name, f] : p.figures) {
    if (!rt::Profile::isHostFigure(name))
      continue;
    figures[name] = Object{{"value", f.value},
                           {"unit", f.unit},
                           {"estimated", f.estimated},
                           {"calibrated", f.calibrated},
                           {"source", f.source}};
  }
  llvm::json::Value calibration = nullptr;
  if (p.calibration) {
    const rt::Calibration &c = *p.calibration;
    calibration = Object{{"figure", c.figure},
                         {"row", c.row},
                         {"what", c.what},
                         {"count", c.count},
                         {"held_out", Array(c.heldOut)}};
  }
  return Object{{"name", p.framework},
                {"figures", std::move(figures)},
                {"calibration", std::move(calibration)}};
}

namespace {
using llvm::json::Array;
using llvm::json::Object;

/// Each run's compile and the parts of each of its steps.
Array runsJson(const SessionResult &r) {
  Array runs;
  for (const RunStats &run : r.runs) {
    Array steps;
    for (const StepStats &s : run.steps)
      steps.push_back(Object{{"latency_s", s.latencyNs * 1e-9},
                             {"compile_s", s.compileNs * 1e-9},
                             {"device_s", s.deviceNs * 1e-9},
                             {"launch_s", s.launchNs * 1e-9},
                             {"transfer_s", s.transferNs * 1e-9},
                             {"tracing_s", s.tracingNs * 1e-9},
                             {"kernel_call_s", s.kernelCallNs * 1e-9},
                             {"traced_ops", int64_t(s.tracedOps)},
                             {"sync_s", s.syncNs * 1e-9},
                             {"step_end_wait_s", s.stepEndWaitNs * 1e-9},
                             {"fallback_s", s.fallbackNs * 1e-9},
                             {"other_s", s.otherNs * 1e-9},
                             {"launches", s.launches}});
    runs.push_back(Object{{"cold", run.cold},
                          {"compile_s", run.compileNs * 1e-9},
                          {"compiled_units", run.compiled},
                          {"cache_hits", run.cacheHits},
                          {"cache_corrupt", run.cacheCorrupt},
                          {"steps", std::move(steps)}});
  }
  return runs;
}

/// kernels=auto's decisions, in program order.
Array decisionsJson(const SessionResult &r) {
  Array decisions;
  for (const auto &d : r.kernelDecisions)
    decisions.push_back(
        Object{{"window", d.window},
               {"windows", d.windows},
               {"kernel", d.kernel},
               {"replaces", d.replaces},
               {"sites", d.sites},
               {"kernel_s", d.with.stepNs * 1e-9},
               {"without_s", d.without.stepNs * 1e-9},
               {"versus", d.versus.empty() ? llvm::json::Value(nullptr)
                                           : llvm::json::Value(d.versus)},
               {"inserted", d.inserted},
               {"reason", d.reason}});
  return decisions;
}

/// The sites requested kernels could not take, by kernel and reason.
Array rejectionsJson(const SessionResult &r) {
  Array rejections;
  for (const auto &x : r.kernelRejections)
    rejections.push_back(Object{{"kernel", x.kernel},
                                {"replaces", x.replaces},
                                {"sites", x.sites},
                                {"reason", x.reason}});
  return rejections;
}

/// Every option that shaped the run (null: the config or default decided).
Object optionsJson(const SessionOptions &o) {
  auto optional = [](const std::optional<int64_t> &v) -> llvm::json::Value {
    if (v)
      return *v;
    return nullptr;
  };
  Object figures;
  for (const std::string &f : o.figureOverrides) {
    size_t eq = f.find('=');
    figures[f.substr(0, eq)] = std::strtod(f.c_str() + eq + 1, nullptr);
  }
  return Object{{"layers", optional(o.layers)},
                {"seq", optional(o.seq)},
                {"txt_seq", optional(o.txtSeq)},
                {"batch", optional(o.batch)},
                {"dtype", o.dtype.empty() ? llvm::json::Value(nullptr)
                                          : llvm::json::Value(o.dtype)},
                {"fourier", o.fourier.empty() ? llvm::json::Value(nullptr)
                                              : llvm::json::Value(o.fourier)},
                {"steps", o.steps},
                {"runs", o.runs},
                {"launch_overhead", o.costs.launchOverhead},
                {"first_run", o.costs.firstRun},
                {"transfers", o.costs.transfers},
                {"tracing", o.costs.tracing},
                {"kernel_call_host", o.costs.kernelCallHost},
                {"graph_break_syncs", o.graphBreakSyncs},
                {"program_sharing", o.programSharing},
                {"set", std::move(figures)},
                {"flags", Array(shapingOptions(o))}};
}

llvm::json::Value orNull(const std::string &v) {
  if (v.empty())
    return nullptr;
  return v;
}

/// Every file the run read or wrote (null: none); `path` is the JSON's.
Object filesJson(const SessionResult &r, const std::string &path) {
  const SessionOptions &o = r.options;
  Array inputFiles, outputFiles;
  for (const StepValueFile &in : r.inputFiles)
    inputFiles.push_back(
        Object{{"name", in.name},
               {"file", orNull(in.file)},
               {"generated_seed",
                in.seed ? llvm::json::Value(int64_t(*in.seed)) : nullptr},
               {"converted_from", orNull(in.convertedFrom)}});
  for (const StepValueFile &out : r.outputFiles)
    outputFiles.push_back(
        Object{{"name", out.name}, {"file", orNull(out.file)}});
  return Object{{"model", orNull(o.input)},
                {"config", orNull(o.config)},
                {"inputs", std::move(inputFiles)},
                {"outputs", std::move(outputFiles)},
                {"output_dir", orNull(o.outputDir)},
                {"trace", orNull(o.traceFile)},
                {"json", path},
                {"cache_dir", orNull(o.cacheDir)},
                {"dump_programs", orNull(o.dumpDir)}};
}

/// The cold compile's phases (see CompileBreakdown).
Object compileJson(const SessionResult &r) {
  return Object{{"cold_s", r.runs.front().compileNs * 1e-9},
                {"graph_s", r.compile.graphNs * 1e-9},
                {"lowering_s", r.compile.lowerNs * 1e-9},
                {"codegen_s", r.compile.codegenNs * 1e-9},
                {"kernels_s", r.compile.kernelNs * 1e-9},
                {"double_buffer_s", r.compile.doubleBufferNs * 1e-9},
                {"allocate_s", r.compile.allocateNs * 1e-9},
                {"schedule_s", r.compile.scheduleNs * 1e-9},
                {"emit_s", r.compile.emitNs * 1e-9},
                {"cache_s", r.compile.cacheNs * 1e-9},
                {"decide_s", r.compile.decideNs * 1e-9},
                {"decide_simulated", r.compile.decideSimulated},
                {"decide_cached", r.compile.decideCached},
                {"kernel_bodies_s", r.compile.kernelBodiesNs * 1e-9},
                {"kernel_bodies", r.compile.kernelBodies},
                {"other_s", r.compile.otherNs(r.runs.front().compileNs) * 1e-9},
                {"codegen_rest_s", r.compile.codegenOtherNs() * 1e-9},
                {"basis", "cold_s = graph_s + lowering_s + codegen_s + "
                          "kernels_s + cache_s + other_s; codegen_s + "
                          "kernels_s = double_buffer_s + allocate_s + "
                          "schedule_s + emit_s + codegen_rest_s; decide_s is "
                          "part of graph_s, kernel_bodies_s (kernel calls "
                          "inside programs) part of lowering_s"},
                {"programs", r.compile.programs},
                {"kernel_programs", r.compile.kernelPrograms},
                {"instructions", int64_t(r.compile.instructions)}};
}

} // namespace

rt::Status seamrun::writeJson(const SessionResult &r, const std::string &path) {
  const SessionOptions &o = r.options;
  Object kernelsByName;
  for (auto &[k, n] : r.kernelsByName)
    kernelsByName[k] = n;
  Object busy;
  for (auto &[e, ns] : r.engineBusyNs)
    busy[e] = ns * 1e-9;
  Array busyPerRank;
  for (const auto &rank : r.engineBusyPerRankNs) {
    Object o;
    for (auto &[e, ns] : rank)
      o[e] = ns * 1e-9;
    busyPerRank.push_back(std::move(o));
  }
  Array kernels;
  for (const std::string &k : o.kernels)
    kernels.push_back(k);
  Object root{
      {"files", filesJson(r, path)},
      {"model",
       o.model.empty() ? (o.config.empty() ? o.input : o.config) : o.model},
      {"tp", o.tp},
      {"options", optionsJson(o)},
      {"target", std::string(rt::name(o.target))},
      {"framework", frameworkJson(r.profile)},
      {"mode", name(o.mode)},
      {"kernel_boundary", name(o.kernelBoundary)},
      {"kernels", std::move(kernels)},
      {"exec", name(o.exec)},
      {"structure", Object{{"regions", r.regions},
                           {"distinct_programs", r.distinctPrograms},
                           {"kernel_calls", r.kernelCalls},
                           {"kernels_by_name", std::move(kernelsByName)},
                           {"host_ops", r.hostOps},
                           {"launches_per_step", r.launchesPerStep}}},
      {"compile", compileJson(r)},
      {"warm_step_s", r.warmStepBasis().empty()
                          ? llvm::json::Value(nullptr)
                          : llvm::json::Value(r.warmStepNs() * 1e-9)},
      {"warm_step_basis", r.warmStepBasis()},
      {"steps_per_s", r.warmStepNs() > 0 ? 1e9 / r.warmStepNs() : 0.0},
      {"engine_busy_s", std::move(busy)},
      {"engine_busy_basis",
       "busy time of each engine over the last step's launches, summed over "
       "the ranks and, for DMA, over its queues (so it can exceed the step); "
       "engine_busy_per_rank_s has each rank's figures"},
      {"engine_busy_per_rank_s", std::move(busyPerRank)},
      {"dma_bytes", int64_t(r.dmaBytes)},
      {"roofline", rooflineJson(r)},
      {"non_finite", int64_t(r.nonFinite)},
      {"check_hazards", r.checkedHazards},
      {"hazards", int64_t(r.hazards)},
      {"faults", Array(r.faults)},
      {"kernel_rejections", rejectionsJson(r)},
      {"recognised", countsJson(r.recognised)},
      {"host_ops_by_op", countsJson(r.hostOpsByOp)},
      {"kernel_decisions", decisionsJson(r)},
      {"kernel_explanation", r.explanation ? explanationJson(*r.explanation)
                                           : llvm::json::Value(nullptr)},
      {"reference",
       r.reference ? referenceJson(*r.reference) : llvm::json::Value(nullptr)},
      {"warnings", Array(r.warnings)},
      {"runs", runsJson(r)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return rt::Status::failure("cannot write --json '" + path +
                               "': " + ec.message());
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return rt::Status::ok();
}
