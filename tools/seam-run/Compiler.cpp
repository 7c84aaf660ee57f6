//===- Compiler.cpp - seam-run's compile driver with the cache ------------===//
#include "tools/seam-run/Compiler.h"
#include "dialect/ncore/NcoreOps.h"
#include "dialect/ncore/NcoreTarget.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "lowering/target/NcoreCodegen.h"
#include "lowering/transforms/ParallelVerify.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "runtime/Clock.h"
#include "runtime/ProgramFile.h"
#include "tools/common/NestingGuard.h"
#include "tools/seam-run/Registration.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/xxhash.h"
#include <unistd.h>

using namespace mlir;
using namespace seamrun;
namespace rt = ::seam::rt;

namespace {

using ::seam::rt::nowNs;

/// "file:line:col" like a compiler, else MLIR's form of the location.
void printLocation(llvm::raw_ostream &os, Location loc) {
  if (auto fl = dyn_cast<FileLineColLoc>(loc)) {
    os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
       << fl.getColumn();
    return;
  }
  os << loc;
}

/// Diagnostics of a compile step: errors collected to return as one error,
/// warnings kept for the report (remarks are silenced in seam-run).
struct DiagCollector {
  explicit DiagCollector(MLIRContext &ctx, std::vector<std::string> &warnings)
      : handler(&ctx, [this, &warnings](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error) {
            llvm::raw_string_ostream os(text);
            printLocation(os, d.getLocation());
            os << ": error: " << d << "\n";
            for (Diagnostic &note : d.getNotes()) {
              printLocation(os, note.getLocation());
              os << ": note: " << note << "\n";
            }
          } else if (d.getSeverity() == DiagnosticSeverity::Warning) {
            warnings.push_back(d.str());
          }
          return success();
        }) {}
  std::string text;
  ScopedDiagnosticHandler handler;
};

std::string printed(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope();
  op->print(os, flags);
  return s;
}

/// What a kernel call's program depends on: the kernel, its attributes
/// (config) and its operand and result types. Not the printed op, whose
/// operand names (%28#1) differ from call to call: identical calls would
/// each get their own unit, compiled and cached apart.
std::string kernelKeyText(mlir::seam::KernelCallOp kc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "kernel_call " << kc->getAttrDictionary() << " : "
     << FunctionType::get(kc.getContext(), kc->getOperandTypes(),
                          kc->getResultTypes());
  // The compiler's body behind the boundary: its program is the callee's.
  if (auto callee = kc.getCalleeAttr())
    if (auto f = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(kc, callee))
      os << "\n" << printed(f);
  return s;
}

/// Binding names for a unit's call operands and results, by role and order:
/// the emitter keeps the program's argument order (inputs and params first,
/// then outputs).
void bindUnit(CompiledUnit &u) {
  for (const rt::Binding &b : u.program.bindings) {
    if (b.role == rt::BindingRole::Input || b.role == rt::BindingRole::Param)
      u.argBindings.push_back(b.name);
    else if (b.role == rt::BindingRole::Output)
      u.resultBindings.push_back(b.name);
  }
}

} // namespace

const std::string &seamrun::compilerVersion() {
  static const std::string version = [] {
    std::string self = llvm::sys::fs::getMainExecutable(
        nullptr, reinterpret_cast<void *>(&nowNs));
    auto bytes = llvm::MemoryBuffer::getFile(self);
    // Unreadable (should not happen): every run misses, nothing stale hits.
    if (!bytes)
      return std::string("seam-0.1+unknown-") + std::to_string(::getpid());
    return "seam-0.1+" +
           llvm::utohexstr(llvm::xxh3_64bits(llvm::arrayRefFromStringRef(
                               (*bytes)->getBuffer())),
                           /*LowerCase=*/true);
  }();
  return version;
}

std::string Compiler::flags() const {
  // The figures --set changed enter the key: they change the plan.
  std::string overrides;
  for (const auto &[figure, value] : profile.overrides())
    overrides += llvm::formatv(" {0}={1:e16}", figure, value).str();
  return std::string("target=") + std::string(rt::name(target)) + overrides +
         " mode=" + name(mode).str() + " kernels=" + llvm::join(kernels, ",") +
         " sharing=" + (sharing ? "1" : "0") +
         (kernelBoundary == KernelBoundary::Barrier
              ? ""
              : " boundary=" + name(kernelBoundary).str());
}

namespace {
/// Adds the wall time of every run of one pass to `ns`.
struct PassClock : public PassInstrumentation {
  PassClock(StringRef argument, double &ns) : argument(argument), ns(ns) {}
  void runBeforePass(Pass *pass, Operation *) override {
    if (pass->getArgument() == argument)
      start = nowNs();
  }
  void runAfterPass(Pass *pass, Operation *) override {
    if (pass->getArgument() == argument)
      ns += nowNs() - start;
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    runAfterPass(pass, op);
  }
  StringRef argument;
  double &ns;
  double start = 0;
};
} // namespace

/// A unit the cache did not have: compiled after the lowering.
struct Compiler::Pending {
  std::string unit, key;
  bool isKernel;
  Operation *kernelCall = nullptr;
};

rt::Status Compiler::runGraphPipeline(CompiledModel &cm,
                                      const std::string &irText,
                                      llvm::StringRef sourceName,
                                      const std::string &diags) {
  MLIRContext &ctx = *cm.context;
  double t0 = nowNs();
  if (rt::Status nesting = ::mlir::seam::checkNesting(irText); !nesting)
    return rt::Status::failure("the model IR does not parse:\n" +
                               sourceName.str() + ":" + nesting.error());
  // Parsed, then verified apart: IR that parses but breaks an op's rules
  // (a K mismatch) is invalid, not unparseable, and says which rule.
  cm.module = parseSourceString<ModuleOp>(
      irText, ParserConfig(&ctx, /*verifyAfterParse=*/false), sourceName);
  if (!cm.module)
    return rt::Status::failure("the model IR does not parse:\n" + diags);
  if (failed(verify(*cm.module)))
    return rt::Status::failure("the model IR is invalid (it parses, but an "
                               "op breaks its rules):\n" +
                               diags);
  // The profile (--set overrides included) travels on the IR from here on:
  // kernels=auto times its windows with it (seam-insert-kernels), and the
  // lowering plans with it.
  ncore::setTargetProfile(*cm.module, profile);
  PassManager pm(&ctx);
  mlir::seam::PipelineOptions popts;
  popts.mode = mode;
  popts.kernels = kernels;
  popts.share = sharing;
  popts.target = std::string(rt::name(target));
  popts.remarks = false; // seam-run shows warnings and errors, not remarks
  // kernels=auto's simulations are a compile phase of their own.
  pm.addInstrumentation(std::make_unique<PassClock>("seam-insert-kernels",
                                                    cm.breakdown.decideNs));
  mlir::seam::buildSeamPipeline(pm, popts);
  progress("model IR parsed");
  if (failed(pm.run(*cm.module)))
    return rt::Status::failure("graph pipeline failed:\n" + diags);
  cm.breakdown.graphNs = nowNs() - t0;
  progress("graph pipeline done");

  for (auto f : cm.module->getOps<func::FuncOp>())
    if (!f->hasAttr(mlir::seam::kProgramAttrName) && !f.isExternal()) {
      cm.step = f;
      break;
    }
  if (!cm.step)
    return rt::Status::failure("the model has no step function");
  return rt::Status::ok();
}

void Compiler::findCachedUnits(CompiledModel &cm, rt::CompileCache &cache,
                               std::vector<Pending> &misses) {
  std::string flagText = flags();
  double lookupStart = nowNs();
  for (Operation &op : cm.step.getBody().front()) {
    std::string unit, keyText;
    bool isKernel = false;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      unit = call.getCallee().str();
      if (cm.units.count(unit))
        continue;
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      keyText = printed(callee);
    } else if (auto kc = dyn_cast<mlir::seam::KernelCallOp>(op)) {
      keyText = kernelKeyText(kc);
      unit = "kernel_" + kc.getKernel().str() + "_" +
             rt::compileCacheKey(keyText, "", "").substr(0, 12);
      cm.kernelUnitOf[&op] = unit;
      if (cm.units.count(unit))
        continue;
      isKernel = true;
    } else {
      continue;
    }
    std::string key = rt::compileCacheKey(keyText, flagText, compilerVersion());
    rt::CacheLookup hit = cache.lookup(key);
    if (hit.status == rt::CacheStatus::Hit && !hit.failedCompile) {
      auto prog = rt::readProgram(hit.bytes);
      if (prog) {
        CompiledUnit u;
        u.program = std::move(*prog);
        u.isKernel = isKernel;
        bindUnit(u);
        cm.units[unit] = std::move(u);
        ++cm.cacheHits;
        continue;
      }
      ++cm.cacheCorrupt; // a valid checksum but an unreadable program
    } else if (hit.status == rt::CacheStatus::Corrupt) {
      ++cm.cacheCorrupt;
    }
    cm.units[unit]; // reserve the name
    misses.push_back({unit, key, isKernel, isKernel ? &op : nullptr});
  }
  cm.breakdown.cacheNs += nowNs() - lookupStart;
}

rt::Expected<ModuleOp> Compiler::lowerModule(CompiledModel &cm,
                                             const std::string &diags) {
  using Result = rt::Expected<ModuleOp>;
  MLIRContext &ctx = *cm.context;
  double t0 = nowNs();
  cm.lowered = cast<ModuleOp>((*cm.module)->clone());
  ModuleOp lowered = *cm.lowered;
  // The profile (--set overrides included) every pass below plans with.
  ncore::setTargetProfile(lowered, profile);
  PassManager lpm(&ctx);
  // The lowered IR is verified once, after the pass, on the context's
  // threads (verifyOnThreads: the pass manager's verifier walks the
  // whole-step program on one); codegen below does not verify again (see
  // EmitOptions::verify).
  lpm.enableVerifier(false);
  mlir::seam::ConvertSeamToNcoreOptions lowerOptions;
  lowerOptions.target = std::string(rt::name(target));
  lowerOptions.remarks = false;
  lowerOptions.kernelBoundary = name(kernelBoundary).str();
  mlir::seam::buildLowerToNcorePipeline(lpm, lowerOptions);
  mlir::seam::KernelBuildStats kernels0 = mlir::seam::kernelBuildStats();
  if (failed(lpm.run(lowered)) || failed(ncore::verifyOnThreads(lowered)))
    return Result::failure("lowering failed:\n" + diags);
  cm.breakdown.lowerNs = nowNs() - t0;
  // Compile mode: the bodies of kernel calls inside programs are built here
  // (their instructions then go through codegen with their program's).
  mlir::seam::KernelBuildStats kernels1 = mlir::seam::kernelBuildStats();
  cm.breakdown.kernelBodiesNs = kernels1.ns - kernels0.ns;
  cm.breakdown.kernelBodies = int(kernels1.bodies - kernels0.bodies);
  progress("lowered to ncore");
  // The converter puts every program and kernel into `module @ncore`.
  auto programs =
      dyn_cast_or_null<ModuleOp>(SymbolTable::lookupSymbolIn(lowered, "ncore"));
  if (!programs)
    return Result::failure("lowering produced no `module @ncore`");
  return programs;
}

rt::Status Compiler::generateUnit(CompiledModel &cm, ModuleOp programs,
                                  const Pending &p, rt::CompileCache &cache,
                                  const std::string &diags) {
  double c0 = nowNs();
  ncore::ProgramOp prog;
  if (p.isKernel) {
    auto kc = cast<mlir::seam::KernelCallOp>(p.kernelCall);
    auto sym =
        kc.getCalleeAttr()
            ? FailureOr<StringAttr>(kc.getCalleeAttr().getAttr())
            : mlir::seam::getOrBuildKernelProgram(
                  programs, kc.getKernel(), mlir::seam::signatureOfCall(kc));
    if (failed(sym))
      return rt::Status::failure("building kernel '" + kc.getKernel().str() +
                                 "' failed:\n" + diags);
    prog = programs.lookupSymbol<ncore::ProgramOp>(*sym);
  } else {
    prog = programs.lookupSymbol<ncore::ProgramOp>(p.unit);
  }
  if (!prog)
    return rt::Status::failure("no ncore.program for '" + p.unit +
                               "' after lowering");
  ncore::CodegenTimings phases;
  ncore::EmitOptions emitOptions;
  // The lowered programs were verified after lowering (lpm); a kernel's,
  // built since, is verified once after its passes.
  emitOptions.verify =
      p.isKernel ? ncore::VerifyPasses::AfterLast : ncore::VerifyPasses::Never;
  auto program = compileNcoreProgram(prog, target, emitOptions, &phases);
  cm.breakdown.doubleBufferNs += phases.doubleBufferNs;
  cm.breakdown.allocateNs += phases.allocateNs;
  cm.breakdown.scheduleNs += phases.scheduleNs;
  cm.breakdown.emitNs += phases.emitNs;
  if (failed(program)) {
    cache.storeFailure(p.key, diags);
    return rt::Status::failure("code generation of '" + p.unit + "' failed:\n" +
                               diags);
  }
  program->name = p.unit;
  double ns = nowNs() - c0;
  (p.isKernel ? cm.breakdown.kernelNs : cm.breakdown.codegenNs) += ns;
  (p.isKernel ? cm.breakdown.kernelPrograms : cm.breakdown.programs) += 1;
  cm.breakdown.instructions += program->instructionCount();
  double s0 = nowNs();
  if (rt::Status s = cache.store(p.key, rt::writeProgram(*program)); !s)
    return s; // "compile cache: ..."
  cm.breakdown.cacheNs += nowNs() - s0;
  CompiledUnit u;
  u.program = std::move(*program);
  u.isKernel = p.isKernel;
  bindUnit(u);
  cm.units[p.unit] = std::move(u);
  ++cm.compiledUnits;
  return rt::Status::ok();
}

rt::Expected<CompiledModel> Compiler::compile(const std::string &irText,
                                              rt::CompileCache &cache,
                                              llvm::StringRef sourceName) {
  using Result = rt::Expected<CompiledModel>;
  CompiledModel cm;
  if (threads == 0) {
    cm.context = std::make_unique<MLIRContext>(seamRunRegistry());
  } else {
    cm.context = std::make_unique<MLIRContext>(
        seamRunRegistry(), MLIRContext::Threading::DISABLED);
    if (threads > 1) {
      cm.threadPool = std::make_unique<llvm::DefaultThreadPool>(
          llvm::hardware_concurrency(threads));
      cm.context->setThreadPool(*cm.threadPool);
    }
  }
  MLIRContext &ctx = *cm.context;
  ctx.loadAllAvailableDialects();
  // A diagnostic's own notes are printed (see DiagCollector); the op it is
  // attached to, printed in generic form, is noise to a seam-run user.
  ctx.printOpOnDiagnostic(false);
  DiagCollector diags(ctx, cm.warnings);

  // Graph pipeline: what a lazy tracer or torch.compile front end does.
  if (rt::Status s = runGraphPipeline(cm, irText, sourceName, diags.text); !s)
    return Result::failure(s.error());
  // Units: each program called by the step, each top-level kernel call.
  std::vector<Pending> misses;
  findCachedUnits(cm, cache, misses);
  auto countPrograms = [&] {
    cm.distinctPrograms = 0;
    for (auto &[name, u] : cm.units)
      cm.distinctPrograms += !u.isKernel;
  };
  countPrograms();
  if (misses.empty())
    return cm;

  // Lower every program of the module (seam -> ncore) on a clone, so the
  // step keeps its seam form for the host plan.
  rt::Expected<ModuleOp> programs = lowerModule(cm, diags.text);
  if (!programs)
    return Result::failure(programs.error());
  for (const Pending &p : misses) {
    if (rt::Status s = generateUnit(cm, *programs, p, cache, diags.text); !s)
      return Result::failure(s.error());
    progress("code generated for " + std::to_string(cm.compiledUnits) + " of " +
             std::to_string(misses.size()) + " units");
  }
  countPrograms();
  return cm;
}
