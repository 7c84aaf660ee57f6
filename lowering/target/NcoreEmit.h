//===- NcoreEmit.h - ncore program -> runtime program -----------*- C++ -*-===//
//
// The emitter is a walk: program arguments become bindings, HBM scratch
// allocs become scratch bindings, every instruction op becomes one
// rt::Instruction in the stream of its engine, with each operand's
// view/reshape chain folded into one rt::AccessPattern (loop-iv offsets turn
// into per-level loop steps), and each ncore.loop becomes LoopBegin/LoopEnd
// in every stream that has instructions inside it.
//
// Semaphores: `ncore.sem_wait` ops directly ahead of an instruction of the
// same engine become that instruction's waits (up to 4; more, or a wait with
// nothing to attach to, become SemWait instructions); an `ncore.sem_signal`
// right after an instruction of the same engine becomes that instruction's
// completion signal (a standalone SemSignal instruction otherwise).
//
// Conventions read from the IR: argument attributes `ncore.role` (binding
// role), `ncore.name` (binding name; "arg<i>" otherwise) and `seam.constant`
// (contents of a constant, kernels/Constants.h); HBM allocs become scratch
// bindings named by their `name`; a matmul's discardable `start_level = d`
// (i64) sets the runtime's start flag: iteration 0 of enclosing loop level d
// overwrites PSUM instead of accumulating (K loops stay loops).
//
// `ncore.inlined_call` (what ncore-inline-calls makes of an
// `ncore.call_kernel`, which is refused here) runs behind a full barrier:
// every engine's last instruction before it signals, every engine waits for
// all of them before its next instruction (the body's first, then the
// caller's), and the same again after the body. Its body's arguments are the
// windows of the caller's bindings its operands name, its HBM scratch gets
// bindings of its own when the body starts, and its semaphore ids (local to
// the callee) get machine semaphores of their own, the same for every inlined
// call of the callee, with `sem_wait` values counted from the body's start.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_NCOREEMIT_H
#define SEAM_LOWERING_NCOREEMIT_H

#include "dialect/ncore/NcoreOps.h"
#include "runtime/Program.h"

#include <functional>
#include <vector>

namespace mlir::ncore {

/// When compileNcoreProgram verifies the IR its passes produce.
enum class VerifyPasses { EachPass, AfterLast, Never };

struct EmitOptions {
  /// Contents of argument `arg` of `program` when it is a constant or a
  /// param; an empty vector leaves the binding without contents. Unset: the
  /// kernels' `seam.constant` description of the argument, if it has one
  /// (kernels/Constants.h).
  std::function<std::vector<float>(ProgramOp program, unsigned arg)>
      constantValues;
  /// compileNcoreProgram: verify the IR after every ncore pass (the
  /// debugging default, as seam-opt does), only once after the last one, or
  /// not after them (seam-run, for a program whose lowered IR it verified:
  /// verifying each pass was a fifth of a cold compile, the final check
  /// another tenth; the passes are verified pass by pass in the lit tests,
  /// and the runtime verifies every emitted program when it loads it).
  VerifyPasses verify = VerifyPasses::EachPass;
};

/// Argument attribute naming the binding of a program argument.
constexpr llvm::StringLiteral kNameAttrName = "ncore.name";

/// Name of the binding of argument `i`: its `ncore.name` string attribute,
/// else "arg<i>".
std::string bindingName(ProgramOp program, unsigned i);

/// Emits `program` (allocated, scheduled, its kernel calls inlined) for
/// `target`. Errors are reported on the offending op.
FailureOr<::seam::rt::Program> emitProgram(ProgramOp program,
                                           ::seam::rt::Target target,
                                           const EmitOptions &options = {});

} // namespace mlir::ncore

#endif // SEAM_LOWERING_NCOREEMIT_H
