//===- Compiler.h - seam-run's compile driver with the cache ----*- C++ -*-===//
//
// Graph pipeline, then per program (and per top-level kernel call) a cache
// lookup keyed by the program's IR, the flags and the compiler version; a
// miss is lowered (convert-seam-to-ncore), code-generated (allocate,
// schedule, emit) and stored. Every stage is timed for real.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_COMPILER_H
#define SEAM_TOOLS_SEAM_RUN_COMPILER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "runtime/HostCache.h"
#include "runtime/Profile.h"
#include "runtime/Program.h"
#include "tools/seam-run/Session.h"
#include "llvm/ADT/DenseMap.h"
#include <functional>
#include <map>
#include <memory>

namespace seamrun {

struct CompiledUnit {
  seam::rt::Program program;
  /// Binding names for the call's operands and results, in order.
  std::vector<std::string> argBindings, resultBindings;
  bool isKernel = false;
};

struct CompiledModel {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The ncore IR the programs were emitted from (when any was compiled),
  /// freed with the rest of the model rather than before compile() returns:
  /// flux2-klein's 130k ops take ~20 ms to free, which no one waits for
  /// (clang's -disable-free makes the same call for its AST).
  mlir::OwningOpRef<mlir::ModuleOp> lowered;
  mlir::func::FuncOp step;
  std::map<std::string, CompiledUnit> units;
  llvm::DenseMap<mlir::Operation *, std::string> kernelUnitOf;
  int compiledUnits = 0, cacheHits = 0, cacheCorrupt = 0;
  int distinctPrograms = 0;
  CompileBreakdown breakdown;
  /// Warnings of the graph pipeline (e.g. a kernel that replaced nothing).
  std::vector<std::string> warnings;
};

class Compiler {
public:
  /// `profile`: the target and its figures (seam-run --set overrides
  /// included), which the compiler plans with: they travel on the lowered
  /// IR as its ncore.target attribute (dialect/ncore/NcoreTarget.h).
  Compiler(const seam::rt::Profile &profile, std::string mode,
           std::vector<std::string> kernels, bool programSharing,
           std::string kernelBoundary = "barrier")
      : profile(profile), target(profile.target), mode(std::move(mode)),
        kernels(std::move(kernels)), sharing(programSharing),
        kernelBoundary(std::move(kernelBoundary)) {}

  /// `sourceName` names the text in diagnostics (the .mlir file's path).
  seam::rt::Expected<CompiledModel> compile(const std::string &irText,
                                            seam::rt::CompileCache &cache,
                                            llvm::StringRef sourceName);

  /// The flags that enter every cache key.
  std::string flags() const;

  /// Told what compile() has done so far (for progress on long compiles).
  std::function<void(const std::string &)> progress = [](const std::string &) {
  };

private:
  seam::rt::Profile profile;
  seam::rt::Target target;
  std::string mode;
  std::vector<std::string> kernels;
  bool sharing;
  std::string kernelBoundary;
};

/// The version that enters every cache key: "seam-0.1+" and a hash of this
/// executable, so a rebuilt compiler (whose codegen may differ) never reads
/// programs an older build cached. Computed once per process.
const std::string &compilerVersion();

} // namespace seamrun

#endif
