//===- NcoreCodegen.cpp - allocate + schedule + emit ----------------------===//
#include "lowering/NcoreCodegen.h"
#include "lowering/NcorePasses.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ncore;
namespace rt = ::seam::rt;

static LogicalResult prepareOne(ProgramOp program, rt::Target target,
                                llvm::SmallPtrSetImpl<Operation *> &seen) {
  if (!seen.insert(program).second || program.isDeclaration())
    return success();
  if (!program->hasAttr(kScheduledAttrName)) {
    PassManager pm(program->getContext(), ProgramOp::getOperationName());
    std::string t(rt::name(target));
    pm.addPass(createNcoreDoubleBuffer(NcoreDoubleBufferOptions{t}));
    pm.addPass(createNcoreAllocate(NcoreAllocateOptions{t}));
    pm.addPass(createNcoreSchedule(NcoreScheduleOptions{t}));
    if (failed(pm.run(program)))
      return failure();
  }
  WalkResult r = program.walk([&](CallKernelOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<ProgramOp>(
        call, call.getCalleeAttr());
    if (callee && failed(prepareOne(callee, target, seen)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

LogicalResult mlir::ncore::prepareNcoreProgram(ProgramOp program,
                                               rt::Target target) {
  llvm::SmallPtrSet<Operation *, 8> seen;
  return prepareOne(program, target, seen);
}

FailureOr<rt::Program>
mlir::ncore::compileNcoreProgram(ProgramOp program, rt::Target target,
                                 const EmitOptions &options) {
  if (failed(prepareNcoreProgram(program, target)))
    return failure();
  return emitProgram(program, target, options);
}

FailureOr<std::vector<rt::Program>>
mlir::ncore::compileNcoreModule(ModuleOp module, rt::Target target,
                                const EmitOptions &options) {
  std::vector<rt::Program> out;
  WalkResult r = module.walk([&](ProgramOp program) {
    if (program.isDeclaration())
      return WalkResult::advance();
    FailureOr<rt::Program> p = compileNcoreProgram(program, target, options);
    if (failed(p))
      return WalkResult::interrupt();
    out.push_back(std::move(*p));
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  return out;
}
