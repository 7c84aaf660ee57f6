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

/// The importer's options from seam-run's own (--layers, --seq, ...).
seamimport::ImportOptions importOptions(const SessionOptions &o) {
  seamimport::ImportOptions io;
  io.layers = o.layers;
  io.seq = o.seq;
  io.txtSeq = o.txtSeq;
  io.batch = o.batch;
  if (!o.dtype.empty())
    io.dtype = o.dtype;
  if (!o.fourier.empty())
    io.fourier = o.fourier;
  if (o.tp > 1)
    io.tp = o.tp;
  return io;
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

/// Whether `path` can be created or overwritten as a file: its directory
/// exists, it is not itself a directory, and the OS lets it be opened for
/// writing. The probe opens it as the write will (created when missing, not
/// truncated; a file it created is removed again), so what fails here is
/// named with the OS's reason: a permission bit, a read-only file system,
/// /proc or /sys refusing new files.
rt::Status checkOutputFile(llvm::StringRef option, const std::string &path) {
  namespace fs = llvm::sys::fs;
  std::string what = option.str() + " '" + path + "'";
  if (fs::is_directory(path))
    return rt::Status::failure(what + " is a directory");
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  if (parent.empty())
    parent = ".";
  if (!fs::exists(parent))
    return rt::Status::failure(what + ": directory '" + parent.str() +
                               "' does not exist");
  if (!fs::is_directory(parent))
    return rt::Status::failure(what + ": '" + parent.str() +
                               "' is not a directory");
  bool existed = fs::exists(path);
  int fd = -1;
  if (std::error_code ec =
          fs::openFileForWrite(path, fd, fs::CD_OpenAlways, fs::OF_None))
    return rt::Status::failure(
        what + (existed ? ": cannot be written: " : ": cannot be created: ") +
        ec.message());
  ::close(fd);
  if (!existed)
    fs::remove(path);
  return rt::Status::ok();
}

/// Whether `path` is a writable directory or can be made one in an existing
/// directory (only the last component is created). Probed as for files: a
/// file is created in it (or the directory itself is created) and removed.
rt::Status checkOutputDir(llvm::StringRef option, const std::string &path) {
  namespace fs = llvm::sys::fs;
  std::string what = option.str() + " '" + path + "'";
  if (fs::exists(path)) {
    if (!fs::is_directory(path))
      return rt::Status::failure(what + " exists and is not a directory");
    llvm::SmallString<128> probe;
    int fd = -1;
    if (std::error_code ec =
            fs::createUniqueFile(path + "/.seam-run-probe-%%%%%%", fd, probe))
      return rt::Status::failure(what + " is not writable: " + ec.message());
    ::close(fd);
    fs::remove(probe);
    return rt::Status::ok();
  }
  llvm::StringRef parent =
      llvm::sys::path::parent_path(llvm::StringRef(path).rtrim('/'));
  if (parent.empty())
    parent = ".";
  if (!fs::is_directory(parent))
    return rt::Status::failure(what + ": parent directory '" + parent.str() +
                               "' does not exist");
  if (std::error_code ec = fs::create_directory(path))
    return rt::Status::failure(what + ": cannot be created: " + ec.message());
  fs::remove(path);
  return rt::Status::ok();
}

} // namespace

namespace {
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

rt::Status seamrun::validate(SessionOptions &o) {
  int sources = !o.model.empty() + !o.config.empty() + !o.input.empty() +
                !o.irText.empty();
  if (sources != 1)
    return rt::Status::failure(
        "give exactly one of --model NAME, --config FILE or a model .mlir "
        "file");
  if (!o.importArgs.empty())
    return rt::Status::failure(
        "--import-args is gone: give --layers, --seq, --txt-seq, --batch "
        "and --dtype to seam-run itself");
  if (!o.shapes.empty() &&
      (o.input.empty() || !seamimport::isOnnxPath(o.input)))
    return rt::Status::failure(
        "--shape fixes an ONNX model's input shapes (seam-run model.onnx)");
  bool shapesImport = o.layers || o.seq || o.txtSeq || o.batch ||
                      !o.dtype.empty() || !o.fourier.empty() || !o.name.empty();
  if (!o.input.empty() && shapesImport)
    return rt::Status::failure(
        "--layers, --seq, --txt-seq, --batch, --dtype, --fourier and --name "
        "shape an import "
        "(--model or --config); '" +
        o.input + "' is already imported (re-import it with seam-import)");
  if (llvm::Error e = seamimport::checkOptions(importOptions(o)))
    return rt::Status::failure(llvm::toString(std::move(e)));
  if (o.mode != "eager" && o.mode != "compile")
    return rt::Status::failure("--mode must be 'eager' or 'compile', got '" +
                               o.mode + "'");
  if (o.kernelBoundary != "barrier" && o.kernelBoundary != "dependency")
    return rt::Status::failure(
        "--kernel-boundary must be 'barrier' or 'dependency', got '" +
        o.kernelBoundary + "'");
  if (o.exec != "functional" && o.exec != "timing")
    return rt::Status::failure(
        "--exec must be 'functional' or 'timing', got '" + o.exec + "'");
  if (!rt::parseTarget(o.target))
    return rt::Status::failure("--target must be 'trn1' or 'trn2', got '" +
                               o.target + "'");
  if (o.steps < 1 || o.steps > 100000)
    return rt::Status::failure("--steps must be in [1, 100000], got " +
                               std::to_string(o.steps));
  if (o.runs < 1 || o.runs > 1000)
    return rt::Status::failure("--runs must be in [1, 1000], got " +
                               std::to_string(o.runs));
  if (o.tp < 1 || o.tp > 64)
    return rt::Status::failure("--tp must be in [1, 64], got " +
                               std::to_string(o.tp));
  std::string kernelError;
  auto kernels = mlir::seam::selectKernels(o.kernels, kernelError);
  if (!kernels)
    return rt::Status::failure("--kernels: " + kernelError);
  o.kernels = kernels->canonical();
  for (const std::string &in : o.inputs) {
    size_t eq = in.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == in.size())
      return rt::Status::failure("--input expects name=file.npy, got '" + in +
                                 "'");
  }
  if ((!o.inputs.empty() || !o.outputDir.empty()) && o.exec != "functional")
    return rt::Status::failure(
        "--input and --output-dir need --functional (timing-only runs "
        "carry no data)");
  // Where results go is checked now, not after a run of minutes.
  if (!o.jsonFile.empty())
    if (rt::Status e = checkOutputFile("--json", o.jsonFile); !e)
      return e;
  if (!o.traceFile.empty())
    if (rt::Status e = checkOutputFile("--trace", o.traceFile); !e)
      return e;
  auto detail = rt::parseTraceDetail(o.traceDetail);
  if (!detail)
    return rt::Status::failure(
        "--trace-detail must be launch, engine or instruction, got '" +
        o.traceDetail + "'");
  if (!o.traceProgram.empty() && *detail != rt::TraceDetail::Instruction)
    return rt::Status::failure(
        "--trace-program needs --trace-detail instruction");
  if (o.traceSteps != "last" && o.traceSteps != "all") {
    char *end = nullptr;
    long step = std::strtol(o.traceSteps.c_str(), &end, 10);
    if (o.traceSteps.empty() || *end || step < 1 || step > o.steps)
      return rt::Status::failure(
          "--trace-steps must be last, all or a step in [1, " +
          std::to_string(o.steps) + "], got '" + o.traceSteps + "'");
  }
  // (seam-run also refuses these when given at their default value.)
  if (o.traceFile.empty())
    for (auto [shaped, name] :
         {std::pair{o.traceDetail != "engine", "--trace-detail"},
          {!o.traceRanks.empty(), "--trace-ranks"},
          {!o.traceProgram.empty(), "--trace-program"},
          {o.traceSteps != "last", "--trace-steps"}})
      if (shaped)
        return rt::Status::failure(std::string(name) + " needs --trace FILE");
  if (!o.outputDir.empty())
    if (rt::Status e = checkOutputDir("--output-dir", o.outputDir); !e)
      return e;
  if (!o.cacheDir.empty())
    if (rt::Status e = checkOutputDir("--cache-dir", o.cacheDir); !e)
      return e;
  // The profile owns the figures and their rules.
  if (rt::Expected<rt::Profile> profile = seamrun::buildProfile(o); !profile)
    return rt::Status::failure(profile.error());
  return rt::Status::ok();
}

rt::Expected<rt::Profile> seamrun::buildProfile(const SessionOptions &o) {
  using Result = rt::Expected<rt::Profile>;
  rt::Expected<rt::Profile> base = rt::Profile::builtin(o.target);
  if (!base)
    return base;
  rt::Profile profile = *base;
  if (!o.framework.empty()) {
    // A name of the built-in frameworks, or a file.
    bool isPath = o.framework.find('/') != std::string::npos ||
                  llvm::StringRef(o.framework).ends_with(".json");
    rt::Expected<rt::FrameworkProfile> fw =
        isPath ? rt::FrameworkProfile::load(o.framework)
               : rt::FrameworkProfile::builtin(o.framework);
    if (!fw)
      return Result::failure("--framework " + o.framework + ": " + fw.error());
    if (rt::Status s = profile.applyFramework(*fw); !s)
      return Result::failure("--framework " + o.framework + ": " + s.error());
  }
  for (const std::string &f : o.figureOverrides)
    if (rt::Status s = profile.set(f); !s)
      return Result::failure("--set " + f + ": " + s.error());
  return profile;
}

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
  trace.detail = *rt::parseTraceDetail(opts.traceDetail);
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
    recordDeviceTotals(item.unit, *res);
  return rt::Status::ok();
}

void Session::recordDeviceTotals(const std::string &unit,
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
  if (rf.units.size() < 2)
    return;
  std::vector<const RooflineUnit *> worst;
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

std::vector<std::string> seamrun::shapingOptions(const SessionOptions &o) {
  std::vector<std::string> flags;
  auto size = [&](const char *name, const std::optional<int64_t> &v) {
    if (v)
      flags.push_back(std::string(name) + " " + std::to_string(*v));
  };
  size("--layers", o.layers);
  size("--seq", o.seq);
  size("--txt-seq", o.txtSeq);
  size("--batch", o.batch);
  if (!o.dtype.empty())
    flags.push_back("--dtype " + o.dtype);
  if (!o.fourier.empty())
    flags.push_back("--fourier " + o.fourier);
  for (const auto &[name, off] :
       {std::pair{"--no-launch-overhead", !o.costs.launchOverhead},
        {"--no-first-run", !o.costs.firstRun},
        {"--no-transfers", !o.costs.transfers},
        {"--no-tracing", !o.costs.tracing},
        {"--no-kernel-call-host", !o.costs.kernelCallHost},
        {"--no-sync", !o.graphBreakSyncs},
        {"--no-program-sharing", !o.programSharing}})
    if (off)
      flags.push_back(name);
  if (!o.framework.empty())
    flags.push_back("--framework " + o.framework);
  if (o.kernelBoundary != "barrier")
    flags.push_back("--kernel-boundary " + o.kernelBoundary);
  for (const std::string &f : o.figureOverrides)
    flags.push_back("--set " + f);
  return flags;
}

/// Functional runs: where each input came from (a file, or generated with
/// its seed) and where each output went.
static void printStepValues(const SessionResult &r, llvm::raw_ostream &os) {
  if (r.options.exec != "functional")
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
  os << llvm::formatv(
      "seam-run: {0} tp={1} target={2} mode={3} kernels={4} "
      "exec={5}\n",
      o.model.empty() ? (o.config.empty() ? o.input : o.config) : o.model, o.tp,
      o.target, o.mode, kernels.empty() ? "none" : kernels, o.exec);
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
                       {"dma_bytes_per_s", rf.peakDmaBytesPerNs * 1e9}}}};
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

rt::Status seamrun::writeJson(const SessionResult &r, const std::string &path) {
  using llvm::json::Array;
  using llvm::json::Object;
  const SessionOptions &o = r.options;
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
  Array rejections;
  for (const auto &x : r.kernelRejections)
    rejections.push_back(Object{{"kernel", x.kernel},
                                {"replaces", x.replaces},
                                {"sites", x.sites},
                                {"reason", x.reason}});
  Array kernels;
  for (const std::string &k : o.kernels)
    kernels.push_back(k);
  // Every option that shaped the run (null: the config or default decided).
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
  Object options{{"layers", optional(o.layers)},
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
  auto orNull = [](const std::string &v) -> llvm::json::Value {
    if (v.empty())
      return nullptr;
    return v;
  };
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
  // Every file the run read or wrote (null: none).
  Object files{{"model", orNull(o.input)},
               {"config", orNull(o.config)},
               {"inputs", std::move(inputFiles)},
               {"outputs", std::move(outputFiles)},
               {"output_dir", orNull(o.outputDir)},
               {"trace", orNull(o.traceFile)},
               {"json", path},
               {"cache_dir", orNull(o.cacheDir)},
               {"dump_programs", orNull(o.dumpDir)}};
  Object root{
      {"files", std::move(files)},
      {"model",
       o.model.empty() ? (o.config.empty() ? o.input : o.config) : o.model},
      {"tp", o.tp},
      {"options", std::move(options)},
      {"target", o.target},
      {"framework", frameworkJson(r.profile)},
      {"mode", o.mode},
      {"kernel_boundary", o.kernelBoundary},
      {"kernels", std::move(kernels)},
      {"exec", o.exec},
      {"structure", Object{{"regions", r.regions},
                           {"distinct_programs", r.distinctPrograms},
                           {"kernel_calls", r.kernelCalls},
                           {"kernels_by_name", std::move(kernelsByName)},
                           {"host_ops", r.hostOps},
                           {"launches_per_step", r.launchesPerStep}}},
      {"compile",
       Object{{"cold_s", r.runs.front().compileNs * 1e-9},
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
              {"instructions", int64_t(r.compile.instructions)}}},
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
      {"kernel_rejections", std::move(rejections)},
      {"recognised", countsJson(r.recognised)},
      {"host_ops_by_op", countsJson(r.hostOpsByOp)},
      {"kernel_decisions", std::move(decisions)},
      {"kernel_explanation", r.explanation ? explanationJson(*r.explanation)
                                           : llvm::json::Value(nullptr)},
      {"reference",
       r.reference ? referenceJson(*r.reference) : llvm::json::Value(nullptr)},
      {"warnings", Array(r.warnings)},
      {"runs", std::move(runs)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return rt::Status::failure("cannot write --json '" + path +
                               "': " + ec.message());
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return rt::Status::ok();
}
