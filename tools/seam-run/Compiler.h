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
#include "llvm/Support/ThreadPool.h"
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
  /// The context's threads when Compiler::threads asks for a number of them
  /// (declared first: it outlives the context).
  std::unique_ptr<llvm::ThreadPoolInterface> threadPool;
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
  Compiler(const seam::rt::Profile &profile, mlir::seam::RegionMode mode,
           std::vector<std::string> kernels, bool programSharing,
           KernelBoundary kernelBoundary = KernelBoundary::Barrier)
      : profile(profile), target(profile.target), mode(mode),
        kernels(std::move(kernels)), sharing(programSharing),
        kernelBoundary(kernelBoundary) {}

  /// `sourceName` names the text in diagnostics (the .mlir file's path).
  seam::rt::Expected<CompiledModel> compile(const std::string &irText,
                                            seam::rt::CompileCache &cache,
                                            llvm::StringRef sourceName);

  /// The flags that enter every cache key.
  std::string flags() const;

  /// The compile's threads (MLIR's passes, the codegen's parallel chunks,
  /// the verifier): 0, one per core; 1, the calling thread alone (no thread
  /// pool). The compiled programs are the same either way.
  unsigned threads = 0;

  /// Told what compile() has done so far (for progress on long compiles).
  std::function<void(const std::string &)> progress = [](const std::string &) {
  };

private:
  struct Pending;
  // The steps of compile(); `diags` holds the errors reported so far.
  /// Parses and verifies the text, puts the profile on it (ncore.target),
  /// runs the graph pipeline and finds the step function.
  seam::rt::Status runGraphPipeline(CompiledModel &cm,
                                    const std::string &irText,
                                    llvm::StringRef sourceName,
                                    const std::string &diags);
  /// Takes every unit the step launches from the cache, or lists it in
  /// `misses`.
  void findCachedUnits(CompiledModel &cm, seam::rt::CompileCache &cache,
                       std::vector<Pending> &misses);
  /// Lowers a clone of the module to ncore; returns its `module @ncore`.
  seam::rt::Expected<mlir::ModuleOp> lowerModule(CompiledModel &cm,
                                                 const std::string &diags);
  /// Generates (a kernel: builds, then generates) one missed unit and
  /// stores it in the cache.
  seam::rt::Status generateUnit(CompiledModel &cm, mlir::ModuleOp programs,
                                const Pending &p, seam::rt::CompileCache &cache,
                                const std::string &diags);

  seam::rt::Profile profile;
  seam::rt::Target target;
  mlir::seam::RegionMode mode;
  std::vector<std::string> kernels;
  bool sharing;
  KernelBoundary kernelBoundary;
};

/// The version that enters every cache key: "seam-0.1+" and a hash of this
/// executable, so a rebuilt compiler (whose codegen may differ) never reads
/// programs an older build cached. Computed once per process.
const std::string &compilerVersion();

} // namespace seamrun

#endif
