//===- NcoreCodegen.cpp - allocate, schedule, inline, emit ----------------===//
#include "lowering/target/NcoreCodegen.h"
#include "lowering/transforms/NcorePasses.h"
#include "lowering/transforms/ParallelVerify.h"
#include "runtime/Clock.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ncore;
namespace rt = ::seam::rt;

namespace {

using ::seam::rt::nowNs;

/// Adds the wall time of each codegen pass to a CodegenTimings (the pass
/// manager verifies the IR after a pass before it calls runAfterPass, so the
/// verification is charged to the pass, as -mlir-timing does).
class PhaseClock : public PassInstrumentation {
public:
  explicit PhaseClock(CodegenTimings &timings) : timings(timings) {}

  void runBeforePass(Pass *, Operation *) override {
    starts.push_back(nowNs());
  }
  void runAfterPass(Pass *pass, Operation *) override { stop(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { stop(pass); }

private:
  void stop(Pass *pass) {
    double ns = nowNs() - starts.back();
    starts.pop_back();
    if (!starts.empty())
      return; // a nested pass: its time is in its parent's
    StringRef arg = pass->getArgument();
    if (arg == "ncore-double-buffer")
      timings.doubleBufferNs += ns;
    else if (arg == "ncore-allocate")
      timings.allocateNs += ns;
    else if (arg == "ncore-assign-engines" || arg == "ncore-schedule" ||
             arg == "ncore-split-dma")
      timings.scheduleNs += ns;
    else if (arg == "ncore-inline-calls")
      timings.emitNs += ns;
  }

  CodegenTimings &timings;
  std::vector<double> starts;
};

} // namespace

static LogicalResult prepareOne(ProgramOp program, rt::Target target,
                                llvm::SmallPtrSetImpl<Operation *> &seen,
                                CodegenTimings *timings, VerifyPasses verify) {
  if (!seen.insert(program).second || program.isDeclaration())
    return success();
  // Callees first: ncore-allocate places each kernel call by the on-chip
  // extent of its (already allocated) callee.
  WalkResult r = program.walk([&](CallKernelOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<ProgramOp>(
        call, call.getCalleeAttr());
    if (callee && failed(prepareOne(callee, target, seen, timings, verify)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  PassManager pm(program->getContext(), ProgramOp::getOperationName());
  if (!program->hasAttr(kScheduledAttrName)) {
    std::string t(rt::name(target));
    pm.addPass(createNcoreDoubleBuffer(NcoreDoubleBufferOptions{t}));
    pm.addPass(createNcoreAllocate(NcoreAllocateOptions{t}));
    pm.addPass(createNcoreAssignEngines(NcoreAssignEnginesOptions{t}));
    pm.addPass(createNcoreSchedule());
    pm.addPass(createNcoreSplitDma(NcoreSplitDmaOptions{t, 0}));
    if (timings)
      ++timings->programsPrepared;
  }
  // A program scheduled elsewhere may still call kernels.
  if (program.walk([](CallKernelOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    pm.addPass(createNcoreInlineCalls());
  if (pm.size() == 0)
    return success();
  if (timings)
    pm.addInstrumentation(std::make_unique<PhaseClock>(*timings));
  pm.enableVerifier(verify == VerifyPasses::EachPass);
  if (failed(pm.run(program)))
    return failure();
  return verify == VerifyPasses::AfterLast ? verifyOnThreads(program)
                                           : success();
}

LogicalResult mlir::ncore::prepareNcoreProgram(ProgramOp program,
                                               rt::Target target,
                                               CodegenTimings *timings,
                                               VerifyPasses verify) {
  llvm::SmallPtrSet<Operation *, 8> seen;
  return prepareOne(program, target, seen, timings, verify);
}

FailureOr<rt::Program>
mlir::ncore::compileNcoreProgram(ProgramOp program, rt::Target target,
                                 const EmitOptions &options,
                                 CodegenTimings *timings) {
  if (failed(prepareNcoreProgram(program, target, timings, options.verify)))
    return failure();
  double t0 = timings ? nowNs() : 0;
  FailureOr<rt::Program> out = emitProgram(program, target, options);
  if (timings)
    timings->emitNs += nowNs() - t0;
  return out;
}

FailureOr<std::vector<rt::Program>>
mlir::ncore::compileNcoreModule(ModuleOp module, rt::Target target,
                                const EmitOptions &options,
                                CodegenTimings *timings) {
  std::vector<rt::Program> out;
  WalkResult r = module.walk([&](ProgramOp program) {
    if (program.isDeclaration())
      return WalkResult::advance();
    FailureOr<rt::Program> p =
        compileNcoreProgram(program, target, options, timings);
    if (failed(p))
      return WalkResult::interrupt();
    out.push_back(std::move(*p));
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  return out;
}
