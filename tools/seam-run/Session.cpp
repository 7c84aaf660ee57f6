//===- Session.cpp - seam-run: compile, cache, launch, account ------------===//
#include "tools/seam-run/Session.h"
#include "dialect/seam/DeviceSupport.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "passes/Accounting.h"
#include "passes/AutoKernels.h"
#include "passes/KernelSelection.h"
#include "passes/Roofline.h"
#include "runtime/Clock.h"
#include "runtime/HostCache.h"
#include "runtime/Numerics.h"
#include "runtime/ProgramFile.h"
#include "tools/seam-import/Import.h"
#include "tools/seam-run/Compiler.h"
#include "tools/seam-run/Explain.h"
#include "tools/seam-run/HostValues.h"
#include "tools/seam-run/Interrupt.h"
#include "tools/seam-run/Npy.h"
#include "tools/seam-run/StepModel.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace mlir;
using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

/// Step progress on a pipe: a line at most this often (s).
constexpr double kPipeProgressSeconds = 5.0;

/// Hazard lines a launch adds to the faults beyond the first (its fault).
constexpr size_t kHazardLinesPerLaunch = 8;

using ::seam::rt::nowNs;

rt::Expected<std::string> fail(const std::string &m) {
  return rt::Expected<std::string>::failure(m);
}

/// How diagnostics name the model text: the file, or the import.
std::string sourceName(const SessionOptions &o) {
  if (!o.irText.empty())
    return "<kernels=auto window or --explain-kernels variant>";
  if (!o.input.empty())
    return o.input;
  return o.model.empty() ? o.config : "<model " + o.model + ">";
}

/// A bf16 tensor's host values as the device holds them (rounded to bf16):
/// host fallback ops read parameters, inputs and each other's results from
/// the host, and would otherwise see more precision than the model has.
void holdAs(Type type, HostTensor &t) {
  if (cast<RankedTensorType>(type).getElementType().isBF16())
    for (float &v : t.data)
      v = rt::roundToBf16(v);
}

bool isHostOp(Operation *op) {
  auto fc = dyn_cast<mlir::seam::FusionClassInterface>(op);
  return fc && fc.needsHostFallback();
}

} // namespace

/// An imported module as seam-import prints it, or the import's error.
static rt::Expected<std::string>
printedModule(llvm::Expected<OwningOpRef<ModuleOp>> module) {
  if (!module)
    return fail(llvm::toString(module.takeError()));
  std::string text;
  llvm::raw_string_ostream os(text);
  (**module)->print(os, OpPrintingFlags().assumeVerified());
  return rt::Expected<std::string>(std::move(text));
}

/// The IR text of the model: the .mlir file, an ONNX model or a config
/// imported in process (the SeamImport library, as seam-import would print
/// it).
rt::Expected<std::string>
seamrun::modelText(const SessionOptions &o,
                   const std::function<void(const std::string &)> &progress,
                   const std::function<void(const std::string &)> &warning) {
  if (!o.irText.empty())
    return rt::Expected<std::string>(o.irText);
  if (!o.input.empty() && seamimport::isOnnxPath(o.input)) {
    seamimport::OnnxOptions oo;
    oo.tp = o.tp;
    for (const std::string &s : o.shapes)
      if (auto e = seamimport::parseShapeOption(s, oo))
        return fail(llvm::toString(std::move(e)));
    MLIRContext context(MLIRContext::Threading::DISABLED);
    progress("importing " + o.input);
    return printedModule(seamimport::importOnnxModel(context, o.input, oo));
  }
  if (!o.input.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(o.input);
    if (!buf)
      return fail("cannot read '" + o.input + "': " + buf.getError().message());
    return rt::Expected<std::string>((*buf)->getBuffer().str());
  }
  seamimport::ImportOptions io = importOptions(o);
  io.onBlock = [&](int64_t blocks) {
    progress(std::to_string(blocks) + " blocks imported");
  };
  io.onWarning = warning;
  MLIRContext context(MLIRContext::Threading::DISABLED);
  return printedModule(seamimport::importModel(
      context, seamimport::ConfigSource{o.model, o.config, o.name}, io,
      [&](llvm::StringRef what) { progress(what.str()); }));
}

/// One thing the host does per step, in order.
struct seamrun::PlanItem {
  enum Kind { Launch, Host } kind;
  Operation *op;      ///< func.call, seam.kernel_call or host op
  std::string unit;   ///< compiled unit (program or kernel symbol)
  uint64_t tracedOps; ///< seam ops the lazy tracer records for it
  bool isKernel = false;
};

namespace {

uint64_t countOps(func::FuncOp f) {
  uint64_t n = 0;
  f.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "seam" &&
        !isa<mlir::seam::ParamOp>(op))
      ++n;
  });
  return n;
}

uint64_t bytesOfValues(ValueRange vs) {
  uint64_t n = 0;
  for (Value v : vs)
    n += mlir::seam::bytesOf(v.getType());
  return n;
}

std::string argName(func::FuncOp f, unsigned i) {
  if (auto n = f.getArgAttrOfType<StringAttr>(i, "seam.input"))
    return n.str();
  return "arg" + std::to_string(i);
}

/// The name of result `i` (seam.output), "output<i>" when it has none.
std::string resultName(func::FuncOp f, unsigned i) {
  if (auto n = f.getResultAttrOfType<StringAttr>(i, "seam.output"))
    return n.str();
  return "output" + std::to_string(i);
}

/// The file names of the step's outputs: NAME.npy, the name kept to letters,
/// digits, '_', '-' and '.', made unique with its position when two agree.
std::vector<std::string> outputFileNames(func::FuncOp f) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < f.getNumResults(); ++i) {
    std::string n = resultName(f, i);
    for (char &c : n)
      if (!llvm::isAlnum(c) && c != '_' && c != '-' && c != '.')
        c = '_';
    if (n.empty() || n[0] == '.')
      n = "output" + std::to_string(i);
    if (llvm::is_contained(names, n + ".npy"))
      n += "_" + std::to_string(i);
    names.push_back(n + ".npy");
  }
  return names;
}

std::string inputNames(func::FuncOp f) {
  std::string s;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    s += (i ? ", " : "") + argName(f, i);
  return s;
}

std::string describe(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The roofline units of a step plan (one per distinct launched unit, in
/// plan order) and the step's floor: the floors come from the graph alone.
RooflineReport planRoofline(const std::vector<PlanItem> &plan,
                            const rt::Profile &profile, unsigned ranks) {
  using namespace mlir::seam;
  RooflineReport rep;
  // Ranks occupy cores 0..ranks-1; chip k holds cores [k*n, (k+1)*n).
  EnginePeaks peaks = EnginePeaks::fromProfile(
      profile, std::min(ranks, std::max(1u, profile.coresPerChip)));
  rep.peakTeFlopsPerNs = peaks.teFlopsPerNsBf16;
  rep.peakDmaBytesPerNs = peaks.dmaBytesPerNs;
  std::map<std::string, size_t> index;
  std::map<std::string, double> boundNs;
  for (const PlanItem &item : plan) {
    if (item.kind == PlanItem::Host) {
      ++rep.hostOpsExcluded;
      continue;
    }
    auto [it, inserted] = index.try_emplace(item.unit, rep.units.size());
    if (inserted) {
      GraphWork work = launchWork(item.op, peaks.teRows);
      RooflineFloor f = rooflineFloor(work, peaks);
      RooflineUnit u;
      u.name = item.unit;
      u.isKernel = item.isKernel;
      u.floorNs = f.ns;
      u.teNs = f.teNs;
      u.elementwiseNs = f.elementwiseNs;
      u.dmaNs = f.dmaNs;
      u.bound = f.bound;
      u.elementwiseEngines = f.elementwiseEngines;
      u.teFlops = work.teFlops();
      u.elementOps = work.elementwiseOps();
      u.hbmBytes = work.hbmBytes;
      rep.units.push_back(u);
    }
    RooflineUnit &u = rep.units[it->second];
    ++u.launchesPerStep;
    rep.floorNs += u.floorNs;
    rep.teNs += u.teNs;
    rep.elementwiseNs += u.elementwiseNs;
    rep.dmaNs += u.dmaNs;
    rep.mustCrossBytes += u.hbmBytes;
    boundNs[u.bound == "TE" || u.bound == "DMA" || u.bound == "none"
                ? u.bound
                : "elementwise (" + u.bound + ")"] += u.floorNs;
  }
  rep.bound = "none";
  double most = 0;
  for (auto &[b, ns] : boundNs)
    if (ns > most) {
      most = ns;
      rep.bound = b;
    }
  return rep;
}

} // namespace

/// What the first run's compile says about the step: the TP degree (the IR
/// is one rank's shard of seam.tp ranks; --tp only shapes an import, or must
/// agree), its structure, the compile breakdown, warnings and kernels=auto
/// decisions. Fails when the IR's seam.tp is out of range or contradicts
/// --tp.
static rt::Status recordStructure(const CompiledModel &cm,
                                  const SessionOptions &opts,
                                  SessionResult &result) {
  auto irTp = cm.module.get()->getAttrOfType<IntegerAttr>("seam.tp");
  if (irTp && opts.tpGiven && irTp.getInt() != opts.tp)
    return rt::Status::failure(
        llvm::formatv("--tp {0} contradicts the model: '{1}' is one "
                      "rank's shard of seam.tp = {2} (import it again "
                      "with --tp {0})",
                      opts.tp, opts.input, irTp.getInt())
            .str());
  if (irTp && (irTp.getInt() < 1 || irTp.getInt() > 64))
    return rt::Status::failure(
        llvm::formatv("the model's seam.tp = {0} is outside [1, 64]",
                      irTp.getInt())
            .str());
  result.options.tp = irTp ? int(irTp.getInt()) : opts.tp;
  result.compile = cm.breakdown;
  mlir::seam::StepAccount acc = mlir::seam::accountStep(cm.step);
  result.regions = acc.regions;
  result.kernelCalls = acc.kernelCalls;
  result.hostOps = acc.hostOps;
  result.launchesPerStep = acc.launches;
  result.boundaryBytes = acc.boundaryBytes;
  result.regionIoBytes = acc.regionIoBytes;
  for (auto &[k, n] : acc.kernelsByName)
    result.kernelsByName[k] = int(n);
  result.distinctPrograms = cm.distinctPrograms;
  if (!opts.quietWarnings)
    for (const std::string &w : cm.warnings)
      llvm::errs() << "seam-run: warning: " << w << "\n";
  result.kernelDecisions = mlir::seam::decisionsOf(cm.step);
  result.kernelRejections = mlir::seam::rejectionsOf(cm.step);
  for (auto [attr, dst] :
       {std::pair{mlir::seam::kRecognisedAttrName, &result.recognised},
        {mlir::seam::kHostOpsAttrName, &result.hostOpsByOp}})
    if (auto d = cm.step->getAttrOfType<DictionaryAttr>(attr))
      for (NamedAttribute e : d)
        if (auto n = dyn_cast<IntegerAttr>(e.getValue()))
          dst->push_back({e.getName().str(), n.getInt()});
  result.warnings = cm.warnings;
  return rt::Status::ok();
}

namespace {

/// The compile cache's directory: --cache-dir, else a fresh one in the temp
/// directory (so run 0 is cold) that `temporary` removes when the run ends,
/// or when it is interrupted (Interrupt.h).
rt::Expected<std::string> cacheDirectory(const std::string &given,
                                         TemporaryDirectory &temporary) {
  if (!given.empty())
    return rt::Expected<std::string>(given);
  std::string error;
  if (!temporary.create("seam-run-cache", error))
    return fail(error);
  return rt::Expected<std::string>(temporary.path());
}

/// Sorts the host events of one step, events[first..], into the parts of
/// `st` (its latencyNs set): syncs from `stepEnd` on are the wait at the
/// step's end; otherNs is what the parts miss.
void accountHostEvents(const std::vector<rt::HostEvent> &events, size_t first,
                       size_t stepEnd, StepStats &st) {
  for (size_t e = first; e < events.size(); ++e) {
    const rt::HostEvent &ev = events[e];
    if (ev.category == rt::HostCategory::Sync && e >= stepEnd) {
      st.stepEndWaitNs += ev.durationNs;
      continue;
    }
    switch (ev.category) {
    case rt::HostCategory::Launch:
      st.launchNs += ev.durationNs;
      break;
    case rt::HostCategory::Transfer:
      st.transferNs += ev.durationNs;
      break;
    case rt::HostCategory::Trace:
      st.tracingNs += ev.durationNs;
      break;
    case rt::HostCategory::Sync:
      st.syncNs += ev.durationNs;
      break;
    case rt::HostCategory::KernelCall:
      st.kernelCallNs += ev.durationNs;
      break;
    case rt::HostCategory::Fallback:
      st.fallbackNs += ev.durationNs;
      break;
    case rt::HostCategory::Compile:
      break;
    }
  }
  // What the parts above do not cover (zero unless the host timeline
  // gains a kind of event they do not sum).
  st.otherNs = st.latencyNs - st.hostPartsNs();
  // Summing the parts in another order than the timeline did leaves a few
  // ulps of the latency (4.77e-16 s); that is not a part of the step.
  if (std::abs(st.otherNs) <= 1e-9 * std::abs(st.latencyNs) + 1e-6)
    st.otherNs = 0;
}

} // namespace

/// One run: its compiled model, its device, the host plan of a step and the
/// host's values.
struct Session::Run {
  Run(int index, bool last) : index(index), last(last) {}
  int index; ///< 0-based
  bool last; ///< the last run: roofline, device totals, outputs, trace
  RunStats stats;
  CompiledModel cm;
  std::optional<rt::Device> device;
  bool traced = false; ///< --trace records steps of this run
  rt::TraceOptions trace;
  std::map<std::string, rt::ProgramId> loaded; ///< by unit symbol
  std::vector<PlanItem> plan;
  /// The first host event of the latest launch (after any graph-break wait
  /// before it): its own wait, when synchronous, starts there.
  size_t lastLaunchEvent = 0;
  /// Parameters, inputs and results on the host (functional runs).
  llvm::DenseMap<Value, HostTensor> values;
  /// Ranks 1.. when the ranks hold different parameters (a model sharded
  /// by seam-shard-tp: params with `seam.rank_values`); `values` is rank 0.
  std::vector<llvm::DenseMap<Value, HostTensor>> otherRanks;
  llvm::DenseMap<Value, HostTensor> &rankValues(unsigned rank) {
    return rank == 0 ? values : otherRanks[rank - 1];
  }
  unsigned rankCount() const { return 1 + unsigned(otherRanks.size()); }
};

rt::Expected<SessionResult> Session::run() {
  using Result = rt::Expected<SessionResult>;
  result = SessionResult();
  result.options = opts;
  if (rt::Status s = applyProfile(); !s)
    return Result::failure(s.error());
  // Progress on stderr once the invocation has run for a few seconds
  // (functional runs of full-width models take tens of seconds).
  wall0 = nowNs();
  lastCompileReport = lastImportReport = lastStepReport = 0;
  // However the run ends, an in-place progress line is ended first.
  struct EndLine {
    Session *session;
    ~EndLine() { session->endProgressLine(); }
  } endLine{this};
  std::vector<std::string> importWarnings;
  auto text = modelText(
      opts,
      [&](const std::string &what) {
        if (reportDue(lastImportReport))
          progress("import: " + what);
      },
      [&](const std::string &w) {
        if (!opts.quietWarnings)
          llvm::errs() << "seam-run: warning: " << w << "\n";
        importWarnings.push_back(w);
      });
  progress("model imported");
  if (!text)
    return Result::failure(text.error());

  // A fresh cache per invocation unless one is given, so run 0 is cold; it
  // lives in the temp directory and is removed when the run ends.
  TemporaryDirectory temporaryCache;
  auto cacheDir = cacheDirectory(opts.cacheDir, temporaryCache);
  if (!cacheDir)
    return Result::failure(cacheDir.error());
  rt::CompileCache cache(*cacheDir);

  // kernels=auto simulates windows with this run's step model.
  std::string kernelError;
  auto selection = mlir::seam::selectKernels(opts.kernels, kernelError);
  if (!selection)
    return Result::failure("--kernels: " + kernelError);
  std::optional<ScopedStepModel> stepModel;
  if (selection->automatic) {
    // Its answers go into this run's cache: with a kept --cache-dir a warm
    // run decides from them.
    SessionOptions modelOptions = opts;
    modelOptions.cacheDir = *cacheDir;
    stepModel.emplace(modelOptions);
  }

  tp = opts.tp; // from the IR's seam.tp once it is parsed
  for (int runIndex = 0; runIndex < opts.runs; ++runIndex) {
    if (rt::Status s = runOnce(runIndex, *text, cache); !s)
      return Result::failure(s.error());
    // The breakdown is run 0's: so are its window timings.
    if (runIndex == 0 && stepModel) {
      result.compile.decideSimulated = stepModel->answers().simulated;
      result.compile.decideCached = stepModel->answers().cached;
    }
  }
  result.warnings.insert(result.warnings.begin(), importWarnings.begin(),
                         importWarnings.end());
  return std::move(result);
}

rt::Status Session::applyProfile() {
  rt::Expected<rt::Profile> built = buildProfile(opts);
  if (!built)
    return rt::Status::failure(built.error());
  profile = *built;
  result.profile = profile;
  return rt::Status::ok();
}

rt::Status Session::runOnce(int index, const std::string &text,
                            rt::CompileCache &cache) {
  Run r(index, index == opts.runs - 1);
  if (rt::Status s = compile(r, text, cache); !s)
    return s;
  if (index == 0) {
    if (rt::Status s = recordStructure(r.cm, opts, result); !s)
      return s;
    tp = result.options.tp;
  }
  createDevice(r);
  if (rt::Status s = prepareTrace(r); !s)
    return s;
  if (rt::Status s = loadUnits(r); !s)
    return s;
  if (rt::Status s = planStep(r); !s)
    return s;
  if (r.last)
    result.roofline = planRoofline(r.plan, profile, unsigned(opts.tp));
  if (rt::Status s = bindParameters(r); !s)
    return s;
  if (functional()) {
    if (rt::Status s = bindInputs(r); !s)
      return s;
    // Every rank reads the whole step input.
    for (unsigned k = 1; k < r.rankCount(); ++k)
      for (Value arg : r.cm.step.getArguments())
        r.rankValues(k)[arg] = r.values[arg];
  }
  for (int step = 0; step < opts.steps; ++step)
    if (rt::Status s = runStep(r, step); !s)
      return s;
  if (functional() && r.last) {
    result.outputFiles.clear();
    for (unsigned i = 0; i < r.cm.step.getNumResults(); ++i)
      result.outputFiles.push_back({resultName(r.cm.step, i), "", {}, ""});
  }
  if (functional() && !opts.outputDir.empty() && r.last)
    if (rt::Status s = writeOutputs(r); !s)
      return s;
  if (functional() && r.last)
    recordStepValues(r);
  if (r.traced)
    if (rt::Status s = r.device->writeTrace(opts.traceFile, r.trace); !s)
      return s;
  result.runs.push_back(std::move(r.stats));
  return rt::Status::ok();
}

/// --dump-programs: each unit's instruction listing (DIR/UNIT.txt, pcs per
/// engine as hazard reports name them) and the scheduled ncore IR of what
/// this run compiled (DIR/ncore.mlir).
static rt::Status dumpPrograms(const CompiledModel &cm,
                               const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return rt::Status::failure("--dump-programs: cannot create '" + dir +
                               "': " + ec.message());
  for (const auto &[name, unit] : cm.units) {
    std::string path = dir + "/" + name + ".txt";
    std::ofstream os(path);
    if (!os)
      return rt::Status::failure("--dump-programs: cannot write '" + path +
                                 "'");
    rt::dumpProgram(unit.program, os);
  }
  if (cm.lowered) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir + "/ncore.mlir", ec);
    if (ec)
      return rt::Status::failure("--dump-programs: cannot write '" + dir +
                                 "/ncore.mlir': " + ec.message());
    cm.lowered.get()->print(os);
  }
  return rt::Status::ok();
}

rt::Status Session::compile(Run &r, const std::string &text,
                            rt::CompileCache &cache) {
  double compileStart = nowNs();
  Compiler compiler(profile, opts.mode, opts.kernels, opts.programSharing,
                    opts.kernelBoundary);
  compiler.threads = opts.threads;
  compiler.progress = [&](const std::string &what) {
    // Inside the compile: at most one line a second.
    if (reportDue(lastCompileReport))
      progress(llvm::formatv("run {0}/{1}: {2}", r.index + 1, opts.runs, what));
  };
  auto compiled = compiler.compile(text, cache, sourceName(opts));
  if (!compiled)
    return rt::Status::failure(compiled.error());
  progress(llvm::formatv("run {0}/{1}: compiled ({2} units, {3} cache hits)",
                         r.index + 1, opts.runs, compiled->compiledUnits,
                         compiled->cacheHits));
  r.stats.compileNs = nowNs() - compileStart;
  r.cm = std::move(*compiled);
  if (!opts.dumpDir.empty())
    if (rt::Status s = dumpPrograms(r.cm, opts.dumpDir); !s)
      return s;
  r.stats.compiled = r.cm.compiledUnits;
  r.stats.cacheHits = r.cm.cacheHits;
  r.stats.cacheCorrupt = r.cm.cacheCorrupt;
  // Cold when it compiled something; a first run whose every program
  // comes from a --cache-dir is warm.
  r.stats.cold = r.cm.compiledUnits > 0;
  return rt::Status::ok();
}

void Session::createDevice(Run &r) {
  rt::DeviceOptions dopts;
  dopts.mode =
      functional() ? rt::ExecMode::Functional : rt::ExecMode::TimingOnly;
  dopts.cores = std::max<unsigned>(tp, profile.coresPerChip);
  dopts.collectEvents = false; // the traced steps turn it on
  dopts.costs = opts.costs;
  dopts.checkHazards = opts.checkHazards.value_or(functional());
  result.checkedHazards = *dopts.checkHazards;
  r.device.emplace(profile, dopts);
}

rt::Status Session::prepareTrace(Run &r) {
  // The trace: the chosen steps of the last run, at the chosen detail.
  r.traced = !opts.traceFile.empty() && r.last;
  if (!r.traced)
    return rt::Status::ok();
  rt::TraceOptions &trace = r.trace;
  trace.detail = opts.traceDetail;
  trace.program = opts.traceProgram;
  for (unsigned rank : opts.traceRanks) {
    if (rank >= unsigned(tp))
      return rt::Status::failure(
          llvm::formatv("--trace-ranks: rank {0}, but the run has {1} "
                        "rank(s)",
                        rank, tp)
              .str());
    trace.cores.push_back(rank);
  }
  if (!opts.traceProgram.empty() && !r.cm.units.count(opts.traceProgram)) {
    std::string names;
    for (auto &[name, unit] : r.cm.units)
      names += (names.empty() ? "" : ", ") + name;
    return rt::Status::failure("--trace-program: no program '" +
                               opts.traceProgram + "' in this run (" + names +
                               ")");
  }
  trace.fromNs = std::numeric_limits<double>::infinity();
  trace.toNs = 0;
  return rt::Status::ok();
}

bool Session::tracesStep(const Run &r, int step) const {
  return r.traced && (opts.traceSteps == "all" ||
                      (opts.traceSteps == "last" && step == opts.steps - 1) ||
                      opts.traceSteps == std::to_string(step + 1));
}

rt::Status Session::loadUnits(Run &r) {
  for (auto &[sym, unit] : r.cm.units) {
    auto id = r.device->loadProgram(unit.program, unsigned(tp));
    if (!id)
      return rt::Status::failure("loading '" + sym + "': " + id.error());
    r.loaded[sym] = *id;
  }
  return rt::Status::ok();
}

rt::Status Session::planStep(Run &r) {
  for (Operation &op : r.cm.step.getBody().front()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      r.plan.push_back({PlanItem::Launch, &op, call.getCallee().str(),
                        callee ? countOps(callee) : 0});
    } else if (auto kc = dyn_cast<mlir::seam::KernelCallOp>(op)) {
      auto it = r.cm.kernelUnitOf.find(&op);
      if (it == r.cm.kernelUnitOf.end())
        return rt::Status::failure("internal: kernel call without a program");
      r.plan.push_back({PlanItem::Launch, &op, it->second, 1, true});
    } else if (isHostOp(&op)) {
      r.plan.push_back({PlanItem::Host, &op, "", 1});
    }
  }
  return rt::Status::ok();
}

rt::Status Session::bindParameters(Run &r) {
  // Load-time values (parameters), once per run.
  uint64_t paramBytes = 0;
  // Ranks holding different parameter slices (seam-shard-tp) get their own
  // values, all of them.
  r.otherRanks.clear();
  if (functional() && tp > 1)
    r.cm.step.walk([&](mlir::seam::ParamOp p) {
      if (p->hasAttr("seam.rank_values") && r.otherRanks.empty())
        r.otherRanks.resize(size_t(tp - 1));
    });
  for (Operation &op : r.cm.step.getBody().front()) {
    if (op.getNumResults() != 1 ||
        !mlir::seam::isLoadTimeValue(op.getResult(0)))
      continue;
    paramBytes += mlir::seam::bytesOf(op.getResult(0).getType());
    if (!functional())
      continue;
    SmallVector<const HostTensor *> in;
    for (Value v : op.getOperands())
      in.push_back(&r.values[v]);
    auto t = evalLoadTime(&op, in);
    if (failed(t))
      return rt::Status::failure("cannot evaluate a parameter on the host");
    holdAs(op.getResult(0).getType(), *t);
    r.values[op.getResult(0)] = std::move(*t);
    // A parameter sliced per rank (seam-shard-tp): every rank its slice,
    // and what is computed from parameters per rank too.
    auto p = dyn_cast<mlir::seam::ParamOp>(op);
    auto perRank =
        p ? p->getAttrOfType<ArrayAttr>("seam.rank_values") : ArrayAttr();
    for (unsigned k = 1; k < r.rankCount(); ++k) {
      FailureOr<HostTensor> rt = failure();
      if (perRank && k < perRank.size()) {
        auto cloned = cast<mlir::seam::ParamOp>(OpBuilder(&op).clone(op));
        cloned.setValueAttr(cast<ElementsAttr>(perRank[k]));
        rt = evalLoadTime(cloned, {});
        cloned.erase();
      } else {
        SmallVector<const HostTensor *> rin;
        for (Value v : op.getOperands())
          rin.push_back(&r.rankValues(k)[v]);
        rt = evalLoadTime(&op, rin);
      }
      if (failed(rt))
        return rt::Status::failure("cannot evaluate a parameter on the host");
      holdAs(op.getResult(0).getType(), *rt);
      r.rankValues(k)[op.getResult(0)] = std::move(*rt);
    }
  }
  r.device->chargeTransfer("load weights", paramBytes);
  progress(llvm::formatv("run {0}/{1}: programs loaded, parameters ready",
                         r.index + 1, opts.runs));
  return rt::Status::ok();
}

rt::Status Session::bindInputs(Run &r) {
  std::map<std::string, std::string> given;
  for (const std::string &in : opts.inputs)
    given[in.substr(0, in.find('='))] = in.substr(in.find('=') + 1);
  std::vector<StepValueFile> files;
  for (auto [i, arg] : llvm::enumerate(r.cm.step.getArguments())) {
    auto ty = cast<RankedTensorType>(arg.getType());
    bool complex = isa<ComplexType>(ty.getElementType());
    std::string name = argName(r.cm.step, i);
    auto it = given.find(name);
    if (it == given.end()) {
      uint64_t seed = 1000 + i;
      r.values[arg] = syntheticInput(ty.getShape(), seed, complex);
      holdAs(ty, r.values[arg]);
      files.push_back({name, "", seed, ""});
      continue;
    }
    bool fileComplex = false;
    std::string dtype;
    auto t = readNpy(it->second, &fileComplex, &dtype);
    if (!t)
      return rt::Status::failure("--input " + name + ": " + t.error());
    if (t->shape !=
            std::vector<int64_t>(ty.getShape().begin(), ty.getShape().end()) ||
        fileComplex != complex)
      return rt::Status::failure("--input " + name + ": '" + it->second +
                                 "' holds " +
                                 std::string(fileComplex ? "complex " : "") +
                                 describe(t->shape) + ", the model's input '" +
                                 name + "' is " + mlir::seam::describeType(ty));
    files.push_back(
        {name, it->second, std::nullopt, dtype == "float64" ? dtype : ""});
    given.erase(it);
    holdAs(ty, *t);
    r.values[arg] = std::move(*t);
  }
  if (!given.empty())
    return rt::Status::failure("--input " + given.begin()->first +
                               ": the model has no input of that name (" +
                               inputNames(r.cm.step) + ")");
  if (r.last)
    result.inputFiles = std::move(files);
  return rt::Status::ok();
}

rt::Status Session::runStep(Run &r, int step) {
  rt::Device &device = *r.device;
  StepStats st;
  size_t firstEvent = device.hostEvents().size();
  double t0 = device.hostNs();
  if (tracesStep(r, step)) {
    device.collectForTrace(true, r.trace.detail != rt::TraceDetail::Launch);
    r.trace.fromNs = std::min(r.trace.fromNs, t0);
  }
  if (step == 0) {
    // The cold first step pays the compile (on the host timeline).
    device.recordCompile(r.stats.cold ? "compile (cold)" : "compile (warm)",
                         r.stats.compileNs);
    st.compileNs = r.stats.compileNs;
    // Compile mode: each kernel call site is traced (its kernel built
    // by the framework) once, when the graph is captured.
    if (!eager())
      device.chargeKernelCalls("kernel calls traced at compile",
                               uint64_t(result.kernelCalls));
  }
  for (const PlanItem &item : r.plan) {
    rt::Status done = item.kind == PlanItem::Host ? runHostOp(r, item)
                                                  : launch(r, item, step, st);
    if (!done)
      return done;
  }
  // Step end (mark_step): the host always waits for the device; the
  // --no-sync ablation removes only the waits at graph breaks. When the
  // step's last item is a synchronous launch (compile mode's program, an
  // eager kernel call), the host's wait for it is the wait at the step's
  // end: nothing follows that it breaks.
  size_t stepEndEvent = device.hostEvents().size();
  if (!r.plan.empty() && r.plan.back().kind == PlanItem::Launch)
    stepEndEvent = std::min(stepEndEvent, r.lastLaunchEvent);
  device.stepEndSync();
  st.latencyNs = device.hostNs() - t0;
  accountHostEvents(device.hostEvents(), firstEvent, stepEndEvent, st);
  if (tracesStep(r, step)) {
    device.collectForTrace(false, false);
    r.trace.toNs = std::max(r.trace.toNs, device.hostNs());
    r.trace.spans.push_back(
        {llvm::formatv("step {0} (run {1})", step + 1, r.index + 1).str(), t0,
         device.hostNs()});
  }
  r.stats.steps.push_back(st);
  stepProgress(r, step);
  return rt::Status::ok();
}

void Session::syncAtGraphBreak(rt::Device &device) const {
  if (opts.graphBreakSyncs)
    device.graphBreakSync();
}

rt::Status Session::runHostOp(Run &r, const PlanItem &item) {
  rt::Device &device = *r.device;
  // Graph break: inputs come back to the host, outputs go down.
  syncAtGraphBreak(device);
  device.chargeTransfer("d2h for host op",
                        bytesOfValues(item.op->getOperands()));
  // Ranks 1.. of a per-rank sharded model first (no device charge: the
  // ranks' host ops run side by side).
  if (functional())
    for (unsigned k = 1; k < r.rankCount(); ++k) {
      SmallVector<const HostTensor *> rin;
      for (Value v : item.op->getOperands())
        rin.push_back(&r.rankValues(k)[v]);
      FailureOr<HostTensor> rout = evalHostOp(item.op, rin);
      if (failed(rout))
        return rt::Status::failure("host fallback op failed");
      holdAs(item.op->getResult(0).getType(), *rout);
      r.rankValues(k)[item.op->getResult(0)] = std::move(*rout);
    }
  SmallVector<const HostTensor *> in;
  for (Value v : item.op->getOperands())
    in.push_back(&r.values[v]);
  FailureOr<HostTensor> out = failure();
  SmallVector<HostTensor> synthetic;
  if (!functional())
    for (Value v : item.op->getOperands())
      synthetic.push_back(syntheticInput(
          cast<RankedTensorType>(v.getType()).getShape(), 7,
          isa<ComplexType>(
              cast<RankedTensorType>(v.getType()).getElementType())));
  if (!functional()) {
    in.clear();
    for (HostTensor &t : synthetic)
      in.push_back(&t);
  }
  device.runFallback(item.op->getName().getStringRef().str(),
                     [&] { out = evalHostOp(item.op, in); });
  if (failed(out))
    return rt::Status::failure("host fallback op failed");
  device.chargeTransfer("h2d after host op",
                        bytesOfValues(item.op->getResults()));
  if (functional()) {
    holdAs(item.op->getResult(0).getType(), *out);
    r.values[item.op->getResult(0)] = std::move(*out);
  }
  return rt::Status::ok();
}

rt::Status Session::launch(Run &r, const PlanItem &item, int step,
                           StepStats &st) {
  rt::Device &device = *r.device;
  if (eager()) {
    if (item.isKernel) {
      syncAtGraphBreak(device); // a custom call needs its inputs materialised
      device.chargeKernelCalls("kernel call '" + item.unit + "'", 1);
    }
    device.chargeTracing(item.tracedOps);
    st.tracedOps += item.tracedOps;
    // Each program launched in eager mode is a recorded graph: hashed and
    // looked up in the compile cache before it runs.
    if (!item.isKernel)
      device.chargeGraphLookups(1);
  }
  CompiledUnit &unit = r.cm.units.at(item.unit);
  std::vector<rt::TensorMap> inputs(functional() ? r.rankCount() : 1);
  if (functional()) {
    for (unsigned k = 0; k < r.rankCount(); ++k)
      for (auto [i, v] : llvm::enumerate(item.op->getOperands()))
        inputs[k][unit.argBindings[i]] = r.rankValues(k)[v];
  }
  rt::LaunchOptions lo;
  lo.async = eager() && !item.isKernel;
  lo.deviceResident = true;
  r.lastLaunchEvent = device.hostEvents().size();
  auto res = device.launch(r.loaded.at(item.unit), inputs, lo);
  if (!res)
    return rt::Status::failure("launch of '" + item.unit + "': " + res.error());
  ++st.launches;
  st.deviceNs += res->deviceNs;
  result.nonFinite += res->nonFiniteWrites;
  if (res->fault)
    result.faults.push_back(res->fault->message);
  result.hazards += res->hazardCount;
  // The fault names the first hazard; a few more, one line each.
  for (size_t i = 1; i < res->hazards.size() && i < kHazardLinesPerLaunch; ++i)
    result.faults.push_back("hazard: " + res->hazards[i].str());
  if (functional() && !res->outputs.empty())
    for (unsigned k = 0; k < r.rankCount() && k < res->outputs.size(); ++k)
      for (auto [i, v] : llvm::enumerate(item.op->getResults())) {
        // A complex<f32> tensor is f32 [..., 2] on the device (re, im
        // interleaved, as on the host): same data, the tensor's shape.
        HostTensor t = res->outputs[k].at(unit.resultBindings[i]);
        auto ty = cast<RankedTensorType>(v.getType());
        t.shape.assign(ty.getShape().begin(), ty.getShape().end());
        r.rankValues(k)[v] = std::move(t);
      }
  if (step == opts.steps - 1 && r.last)
    recordDeviceTotals(item.unit, unit.program, *res);
  return rt::Status::ok();
}

void Session::recordDeviceTotals(const std::string &unit,
                                 const rt::Program &program,
                                 const rt::LaunchResult &res) {
  result.engineBusyPerRankNs.resize(size_t(std::max(1, tp)));
  for (auto [core, c] : llvm::enumerate(res.timeline.cores)) {
    for (unsigned e = 0; e < rt::kNumEngines; ++e) {
      std::string engine(rt::name(rt::Engine(e)));
      result.engineBusyNs[engine] += c.busyNs[e];
      if (core < result.engineBusyPerRankNs.size())
        result.engineBusyPerRankNs[core][engine] += c.busyNs[e];
    }
    result.dmaBytes += c.dmaBytes;
    result.roofline.dmaTransfers += c.dmaTransfers;
  }
  for (RooflineUnit &u : result.roofline.units)
    if (u.name == unit)
      u.deviceNs += res.deviceNs / std::max(1, u.launchesPerStep);
  recordIdleStretch(unit, program, res);
}

/// The roofline's bound engine on the device: the Tensor engine, or the
/// busiest engine of an elementwise bound; none for DMA.
static std::optional<rt::Engine> boundEngine(const std::string &bound,
                                             const rt::CoreTimingStats &c) {
  if (bound == "TE")
    return rt::Engine::Tensor;
  if (bound == "DMA" || bound == "none")
    return std::nullopt;
  std::optional<rt::Engine> best;
  for (rt::Engine e :
       {rt::Engine::Vector, rt::Engine::Scalar, rt::Engine::GpSimd})
    if (!best || c.busyNs[unsigned(e)] > c.busyNs[unsigned(*best)])
      best = e;
  return best;
}

void Session::recordIdleStretch(const std::string &unit,
                                const rt::Program &program,
                                const rt::LaunchResult &res) {
  if (res.timeline.cores.empty())
    return;
  const rt::CoreTimingStats &c = res.timeline.cores.front();
  std::optional<rt::Engine> e = boundEngine(result.roofline.bound, c);
  if (!e || c.instructions[unsigned(*e)] == 0)
    return;
  const rt::IdleStretch &st = c.longestIdle[unsigned(*e)];
  std::optional<IdleReport> &idle = result.roofline.idle;
  if (idle && idle->ns >= st.ns())
    return;
  IdleReport r;
  r.engine = std::string(rt::name(*e));
  r.unit = unit;
  r.ns = st.ns();
  r.fromNs = st.fromNs;
  r.toNs = st.toNs;
  // Instructions by pc in their stream of the program.
  auto mnemonicAt = [&](rt::Engine stream, int64_t pc) -> std::string {
    const auto &insts = program.streams[unsigned(stream)];
    return pc >= 0 && size_t(pc) < insts.size()
               ? std::string(rt::mnemonic(insts[pc].op))
               : std::string();
  };
  if (st.resumedPc >= 0) {
    r.resumedBy = mnemonicAt(*e, st.resumedPc);
    r.resumedPc = st.resumedPc;
  }
  if (st.waitedEngine >= 0) {
    auto by = rt::Engine(st.waitedEngine);
    r.waitedFor = st.waitedDma ? "a DMA transfer of the " +
                                     std::string(rt::name(by)) + " stream"
                               : "the " + std::string(rt::name(by)) + " engine";
    r.waitedPc = st.waitedPc;
    r.waitedOp = mnemonicAt(by, st.waitedPc);
  }
  idle = std::move(r);
}

std::string IdleReport::cause() const {
  std::string where = llvm::formatv("{0:F1} us of {1} ({2:F1}-{3:F1} us)",
                                    ns * 1e-3, unit, fromNs * 1e-3, toNs * 1e-3)
                          .str();
  if (resumedBy.empty())
    return where + ": after its last instruction, to the launch's end";
  std::string resumed =
      llvm::formatv("its {0} (pc {1})", resumedBy, resumedPc).str();
  if (waitedFor.empty())
    return where + ": " + resumed + " issued in order, behind no wait";
  return where + ": " + resumed + " waited for " + waitedFor + " (" +
         (waitedOp.empty() ? "instruction" : waitedOp) + " at pc " +
         std::to_string(waitedPc) + ")";
}

void Session::recordStepValues(Run &r) {
  result.stepInputs.clear();
  result.stepOutputs.clear();
  for (Value arg : r.cm.step.getArguments())
    result.stepInputs.push_back(r.values[arg]);
  auto ret = cast<func::ReturnOp>(r.cm.step.getBody().front().getTerminator());
  for (Value v : ret.getOperands())
    result.stepOutputs.push_back(r.values[v]);
}

rt::Status Session::writeOutputs(Run &r) {
  if (std::error_code ec = llvm::sys::fs::create_directories(opts.outputDir))
    return rt::Status::failure("--output-dir '" + opts.outputDir +
                               "': cannot be created: " + ec.message());
  auto ret = cast<func::ReturnOp>(r.cm.step.getBody().front().getTerminator());
  std::vector<std::string> names = outputFileNames(r.cm.step);
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    std::string path = (llvm::Twine(opts.outputDir) + "/" + names[i]).str();
    bool complex =
        isa<ComplexType>(cast<RankedTensorType>(v.getType()).getElementType());
    if (rt::Status s = writeNpy(path, r.values[v], complex); !s)
      return rt::Status::failure("--output-dir: " + s.error());
    result.outputFiles[i].file = path;
  }
  return rt::Status::ok();
}

void Session::progress(const std::string &what) {
  double sec = (nowNs() - wall0) * 1e-9;
  if (sec < 2.0)
    return;
  endProgressLine();
  llvm::errs() << llvm::formatv("seam-run: [{0:F1} s] {1}\n", sec, what);
}

void Session::endProgressLine() {
  if (!progressLineOpen)
    return;
  llvm::errs() << "\n";
  progressLineOpen = false;
}

void Session::stepProgress(const Run &r, int step) {
  double now = nowNs();
  if (step == 0)
    runStepsWall0 = now; // step 0 pays the compile: the rate starts after
  double sec = (now - wall0) * 1e-9;
  bool last = step + 1 == opts.steps;
  if (sec < 2.0 || (!last && step == 0))
    return;
  // The rate of this run's steps after its first; the runs still to come
  // are counted at the same rate (their compiles are not in the ETA).
  int done = step, total = opts.steps - 1;
  double perStep = done > 0 ? (now - runStepsWall0) * 1e-9 / done : 0;
  double eta =
      perStep * ((total - done) + double(opts.runs - r.index - 1) * opts.steps);
  std::string line =
      llvm::formatv("seam-run: [{0:F1} s] run {1}/{2}: step "
                    "{3}/{4}",
                    sec, r.index + 1, opts.runs, step + 1, opts.steps);
  if (!last || r.index + 1 < opts.runs)
    line += llvm::formatv(", ETA {0:F0} s", eta).str();
  if (llvm::sys::Process::StandardErrIsDisplayed()) {
    // One line, rewritten in place (\r, then clear to its end), at most
    // ten times a second.
    if (!last && sec - lastStepReport < 0.1)
      return;
    lastStepReport = sec;
    llvm::errs() << "\r" << line << "\x1b[K";
    progressLineOpen = true;
    if (last)
      endProgressLine();
    return;
  }
  // A pipe or a file: a line every few seconds, and each run's last step.
  if (!last && sec - lastStepReport < kPipeProgressSeconds)
    return;
  lastStepReport = sec;
  llvm::errs() << line << "\n";
}

bool Session::reportDue(double &lastReport) {
  double sec = (nowNs() - wall0) * 1e-9;
  if (sec - lastReport < 1.0)
    return false;
  lastReport = sec;
  return true;
}
