//===- Options.cpp - seam-run's options: parsed and checked once ----------===//
#include "tools/seam-run/Options.h"
#include "passes/KernelSelection.h"
#include "tools/seam-import/Import.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <unistd.h>

using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

/// The values of one option with a fixed set: the flag, its names in the
/// order the diagnostic lists them, and whether they are quoted there.
template <typename T> struct Choices {
  llvm::StringLiteral flag;
  std::initializer_list<std::pair<llvm::StringLiteral, T>> values;
  bool quoted;
};

constexpr Choices<mlir::seam::RegionMode> kModes{
    "--mode",
    {{"eager", mlir::seam::RegionMode::Eager},
     {"compile", mlir::seam::RegionMode::Compile}},
    true};
constexpr Choices<rt::Target> kTargets{
    "--target", {{"trn1", rt::Target::Trn1}, {"trn2", rt::Target::Trn2}}, true};
// (No flag sets it as text: --functional and --timing-only do. The names
// are the report's.)
constexpr Choices<Exec> kExecs{
    "exec", {{"functional", Exec::Functional}, {"timing", Exec::Timing}}, true};
constexpr Choices<rt::TraceDetail> kTraceDetails{
    "--trace-detail",
    {{"launch", rt::TraceDetail::Launch},
     {"engine", rt::TraceDetail::Engine},
     {"instruction", rt::TraceDetail::Instruction}},
    false};
constexpr Choices<KernelBoundary> kBoundaries{
    "--kernel-boundary",
    {{"barrier", KernelBoundary::Barrier},
     {"dependency", KernelBoundary::Dependency}},
    true};

/// The one place an option's text becomes its enum: an unknown value fails
/// with "--flag must be 'a', 'b' or 'c', got 'x'".
template <typename T>
rt::Expected<T> parseChoice(const Choices<T> &choices, llvm::StringRef text) {
  std::string accepted;
  size_t i = 0, n = choices.values.size();
  for (const auto &[name, value] : choices.values) {
    if (name == text)
      return rt::Expected<T>(value);
    accepted += i == 0 ? "" : i + 1 == n ? " or " : ", ";
    accepted += choices.quoted ? "'" + name.str() + "'" : name.str();
    ++i;
  }
  return rt::Expected<T>::failure(choices.flag.str() + " must be " + accepted +
                                  ", got '" + text.str() + "'");
}

template <typename T>
llvm::StringRef nameOf(const Choices<T> &choices, T value) {
  for (const auto &[name, v] : choices.values)
    if (v == value)
      return name;
  llvm_unreachable("every enumerator has a name");
}

} // namespace

llvm::StringRef seamrun::name(mlir::seam::RegionMode mode) {
  return nameOf(kModes, mode);
}
llvm::StringRef seamrun::name(Exec exec) { return nameOf(kExecs, exec); }
llvm::StringRef seamrun::name(KernelBoundary boundary) {
  return nameOf(kBoundaries, boundary);
}

rt::Expected<mlir::seam::RegionMode> seamrun::parseMode(llvm::StringRef text) {
  return parseChoice(kModes, text);
}
rt::Expected<rt::Target> seamrun::parseTarget(llvm::StringRef text) {
  return parseChoice(kTargets, text);
}
rt::Expected<rt::TraceDetail> seamrun::parseTraceDetail(llvm::StringRef text) {
  return parseChoice(kTraceDetails, text);
}
rt::Expected<KernelBoundary>
seamrun::parseKernelBoundary(llvm::StringRef text) {
  return parseChoice(kBoundaries, text);
}

/// The importer's options from seam-run's own (--layers, --seq, ...).
seamimport::ImportOptions seamrun::importOptions(const SessionOptions &o) {
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

namespace {

/// Removes what an output check created to probe a path. A failure leaves
/// an empty file or directory behind, not a wrong run: said on stderr, and
/// the check goes on.
void removeProbe(const llvm::Twine &path) {
  if (std::error_code ec = llvm::sys::fs::remove(path))
    llvm::errs() << "seam-run: warning: could not remove '" << path
                 << "' (created to check it is writable): " << ec.message()
                 << "\n";
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
    removeProbe(path);
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
    removeProbe(probe);
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
  removeProbe(path);
  return rt::Status::ok();
}

} // namespace

namespace {
/// Sets `dst` from `text` through `parser`, or its error.
template <typename T>
rt::Status parse(rt::Expected<T> (*parser)(llvm::StringRef),
                 const std::string &text, T &dst) {
  rt::Expected<T> value = parser(text);
  if (!value)
    return rt::Status::failure(value.error());
  dst = *value;
  return rt::Status::ok();
}
} // namespace

rt::Status seamrun::validate(SessionOptions &o, const ChoiceText &choices) {
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
  if (rt::Status s = parse(parseMode, choices.mode, o.mode); !s)
    return s;
  if (rt::Status s =
          parse(parseKernelBoundary, choices.kernelBoundary, o.kernelBoundary);
      !s)
    return s;
  if (rt::Status s = parse(parseTarget, choices.target, o.target); !s)
    return s;
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
  if ((!o.inputs.empty() || !o.outputDir.empty()) && o.exec != Exec::Functional)
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
  if (rt::Status s =
          parse(parseTraceDetail, choices.traceDetail, o.traceDetail);
      !s)
    return s;
  if (!o.traceProgram.empty() && o.traceDetail != rt::TraceDetail::Instruction)
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
         {std::pair{o.traceDetail != rt::TraceDetail::Engine, "--trace-detail"},
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
  if (o.kernelBoundary != KernelBoundary::Barrier)
    flags.push_back("--kernel-boundary " + name(o.kernelBoundary).str());
  for (const std::string &f : o.figureOverrides)
    flags.push_back("--set " + f);
  return flags;
}
