//===- NcoreCodegen.h - ncore -> runtime program ----------------*- C++ -*-===//
//
// The codegen half of lowering as one call: ncore-double-buffer,
// ncore-allocate, ncore-assign-engines, ncore-schedule and ncore-split-dma
// (in place, on the program and every program it calls, each once), then
// emission. seam-run and the benchmarks call this; an optional
// CodegenTimings reports the wall time of each phase.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_NCORECODEGEN_H
#define SEAM_LOWERING_NCORECODEGEN_H

#include "lowering/target/NcoreEmit.h"
#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace mlir::ncore {

/// Real (steady-clock) wall time of each codegen phase, in ns. The calls
/// below *add* to it, so one instance can sum over many programs. A pass's
/// time includes the IR verification the pass manager runs after it.
struct CodegenTimings {
  double doubleBufferNs = 0; ///< ncore-double-buffer
  double allocateNs = 0;     ///< ncore-allocate
  /// ncore-assign-engines + ncore-schedule + ncore-split-dma
  double scheduleNs = 0;
  double emitNs = 0; ///< ncore-inline-calls + emitProgram (-> runtime)
  /// Programs double-buffered/allocated/scheduled here (callees included;
  /// programs already scheduled are not counted).
  unsigned programsPrepared = 0;

  double totalNs() const {
    return doubleBufferNs + allocateNs + scheduleNs + emitNs;
  }
};

/// Double-buffers, allocates and schedules `program` (and the programs it
/// calls) in place, unless already scheduled, for `target`. When `timings`
/// is given, the time of each pass is added to it. `verify`: after every
/// pass, once after the last, or never.
LogicalResult prepareNcoreProgram(ProgramOp program, ::seam::rt::Target target,
                                  CodegenTimings *timings = nullptr,
                                  VerifyPasses verify = VerifyPasses::EachPass);

/// prepareNcoreProgram + emitProgram. Errors are emitted as diagnostics on
/// the ops (use a ScopedDiagnosticHandler to collect them). When `timings`
/// is given, the time of each phase is added to it.
FailureOr<::seam::rt::Program>
compileNcoreProgram(ProgramOp program, ::seam::rt::Target target,
                    const EmitOptions &options = {},
                    CodegenTimings *timings = nullptr);

/// Every defined ncore.program of `module` (nested modules included).
FailureOr<std::vector<::seam::rt::Program>>
compileNcoreModule(ModuleOp module, ::seam::rt::Target target,
                   const EmitOptions &options = {},
                   CodegenTimings *timings = nullptr);

} // namespace mlir::ncore

#endif // SEAM_LOWERING_NCORECODEGEN_H
