//===- Options.h - seam-run's options: typed, parsed, checked ---*- C++ -*-===//
//
// Every option with a fixed set of values (mode, target, exec, trace detail,
// kernel boundary) is an enum here. Text becomes an enum in one place,
// parseChoice() over the option's table of names (Options.cpp), which
// rejects an unknown value with one line naming the flag, the value and the
// accepted values; everything past it (the session, the compiler, the
// report) works with the enums.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_OPTIONS_H
#define SEAM_TOOLS_SEAM_RUN_OPTIONS_H

#include "passes/Passes.h"
#include "runtime/Expected.h"
#include "runtime/Host.h"
#include "runtime/Profile.h"
#include "runtime/Program.h"
#include "tools/seam-import/Import.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace seamrun {

/// Whether a run carries data (functional) or only time (timing-only).
enum class Exec { Timing, Functional };
/// A kernel call's boundary inside a program: every engine drains before
/// and after the body (Barrier), or it waits only for the work it conflicts
/// with (Dependency, ncore::kBoundaryAttrName).
enum class KernelBoundary { Barrier, Dependency };

/// The names seam-run reads and reports ("eager", "functional",
/// "dependency"; seam::rt::name() has the target's and the trace detail's).
llvm::StringRef name(mlir::seam::RegionMode mode);
llvm::StringRef name(Exec exec);
llvm::StringRef name(KernelBoundary boundary);

/// The option values as text (seam-run's flags, seam-smith's graph header);
/// validate() turns them into the enums of SessionOptions.
struct ChoiceText {
  std::string mode = "compile";
  std::string target = "trn1";
  std::string traceDetail = "engine";
  std::string kernelBoundary = "barrier";
};

/// `text` as the enum of --mode, --target, --trace-detail or
/// --kernel-boundary; an unknown value fails with "--mode must be 'eager' or
/// 'compile', got 'lazy'".
seam::rt::Expected<mlir::seam::RegionMode> parseMode(llvm::StringRef text);
seam::rt::Expected<seam::rt::Target> parseTarget(llvm::StringRef text);
seam::rt::Expected<seam::rt::TraceDetail>
parseTraceDetail(llvm::StringRef text);
seam::rt::Expected<KernelBoundary> parseKernelBoundary(llvm::StringRef text);

/// What one seam-run invocation (or a step-model window) is asked to do;
/// validate() checks it.
struct SessionOptions {
  std::string model, config, input;
  /// --shape name=AxBxC of an ONNX model's inputs.
  std::vector<std::string> shapes;
  /// --name: the name an imported model records (seam.model).
  std::string name;
  /// The model's IR itself (the kernels=auto step model's windows).
  std::string irText;
  bool quietWarnings = false; ///< do not print compile warnings
  std::string importArgs;     ///< the removed --import-args (refused if given)
  /// Model options of an import (--model, --config); unset: the config.
  std::optional<int64_t> layers, seq, txtSeq, batch;
  std::string dtype;   ///< "f32", "bf16" or "" (the config's)
  std::string fourier; ///< FNet: "exact", "seed" or "" (exact)
  /// TP degree. An imported model is sharded for it; a .mlir file says its
  /// own (seam.tp), which --tp must match when given (`tpGiven`). After a
  /// run, SessionResult::options.tp is the degree that ran.
  int tp = 1;
  bool tpGiven = false;
  mlir::seam::RegionMode mode = mlir::seam::RegionMode::Compile;
  std::vector<std::string> kernels;
  seam::rt::Target target = seam::rt::Target::Trn1;
  int steps = 3, runs = 2;
  Exec exec = Exec::Timing;
  std::string cacheDir, traceFile, jsonFile, outputDir;
  /// Where to write each compiled program's listing and the ncore IR.
  std::string dumpDir;
  /// What --trace shows (the last run's steps): launch | engine |
  /// instruction detail, these ranks (empty: all), every instruction of this
  /// program only, "last" | "all" | a 1-based step.
  seam::rt::TraceDetail traceDetail = seam::rt::TraceDetail::Engine;
  std::vector<unsigned> traceRanks;
  std::string traceProgram;
  std::string traceSteps = "last";
  std::vector<std::string> inputs; ///< "name=file.npy"
  seam::rt::HostCosts costs;
  bool graphBreakSyncs = true;
  bool programSharing = true;
  KernelBoundary kernelBoundary = KernelBoundary::Barrier;
  /// The hazard checker (runtime/HazardChecker.h) in every launch; unset:
  /// on in functional runs, off in timing-only ones.
  std::optional<bool> checkHazards;
  /// The framework (host) profile: a built-in name (rt::FrameworkProfile::
  /// builtinNames) or a path to a framework profile file; empty: the
  /// default (rt::FrameworkProfile::kDefault).
  std::string framework;
  std::vector<std::string> figureOverrides; ///< "name=value"
  std::string toolPath;                     ///< argv[0]
  /// --compile-threads: the compile's threads (Compiler::threads); 0, one per
  /// core. Not a model option: the figures are the same with any number.
  unsigned threads = 0;
};

/// The importer's options from seam-run's own (--layers, --seq, ...).
seamimport::ImportOptions importOptions(const SessionOptions &o);

/// The options that shaped a run beyond the header's (model options,
/// ablations, --set), as flags: "--layers 1", "--no-sync", "--set x=1".
std::vector<std::string> shapingOptions(const SessionOptions &o);

/// Whether the options are usable; the error says what is wrong with which
/// option. Sets the enum options from `choices` (each checked where the
/// option's other rules are) and puts the kernel list in its one form (names
/// in order, each once; `none`, empty items and spaces dropped).
seam::rt::Status validate(SessionOptions &o, const ChoiceText &choices);
/// The profile a run uses: the target's device figures, the framework's
/// host figures (--framework: a built-in name or a file; an unknown name's
/// error lists the known ones), then the --set overrides.
seam::rt::Expected<seam::rt::Profile> buildProfile(const SessionOptions &o);

} // namespace seamrun

#endif
