//===- NcoreCodegen.h - ncore program -> runtime program, for tools -*- C++ -*-===//
//
// The codegen half of lowering as one call: ncore-double-buffer,
// ncore-allocate and ncore-schedule
// (in place, on the program and every program it calls, each once), then
// emission. seam-run and the benchmarks call this.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_NCORECODEGEN_H
#define SEAM_LOWERING_NCORECODEGEN_H

#include "lowering/NcoreEmit.h"
#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace mlir::ncore {

/// Name of the unit attribute ncore-schedule leaves on a scheduled program.
constexpr llvm::StringLiteral kScheduledAttrName = "ncore.scheduled";

/// Double-buffers, allocates and schedules `program` (and the programs it
/// calls) in place, unless already scheduled, for `target`.
LogicalResult prepareNcoreProgram(ProgramOp program, ::seam::rt::Target target);

/// prepareNcoreProgram + emitProgram. Errors are emitted as diagnostics on
/// the ops (use a ScopedDiagnosticHandler to collect them).
FailureOr<::seam::rt::Program> compileNcoreProgram(ProgramOp program,
                                                 ::seam::rt::Target target,
                                                 const EmitOptions &options = {});

/// Every defined ncore.program of `module` (nested modules included).
FailureOr<std::vector<::seam::rt::Program>>
compileNcoreModule(ModuleOp module, ::seam::rt::Target target,
                   const EmitOptions &options = {});

} // namespace mlir::ncore

#endif // SEAM_LOWERING_NCORECODEGEN_H
