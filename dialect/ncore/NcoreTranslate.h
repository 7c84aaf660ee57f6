//===- NcoreTranslate.h - ncore op -> runtime instruction -------*- C++ -*-===//
//
// The one translation of an instruction op into a runtime instruction
// (runtime/Program.h): opcode and default engine from Isa.def, the engine the
// op is assigned, operand slots and immediates from the op's `translation`
// (NcoreOps.td, generated into InstructionOpInterface::translate). The
// emitter, the scheduler's cost queries and tests all go through
// translateInstruction; how an operand becomes an access pattern is the
// caller's business (the emitter needs placed allocations and bindings, a
// cost query only sizes and dtypes).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_DIALECT_NCORE_NCORETRANSLATE_H
#define SEAM_DIALECT_NCORE_NCORETRANSLATE_H

#include "dialect/ncore/NcoreOps.h"
// Header-only use of the runtime's instruction type (no runtime library).
#include "runtime/Program.h"

namespace mlir::ncore {

/// An operand's access pattern, or failure (after a diagnostic).
using AccessFn =
    llvm::function_ref<FailureOr<::seam::rt::AccessPattern>(Value tile)>;

/// What an op's `translation` fills.
class InstructionTranslation {
public:
  InstructionTranslation(AccessFn access, unsigned loopDepth)
      : loopDepth(loopDepth), access(access) {}

  ::seam::rt::Instruction inst;
  /// ncore.loop ops around the instruction.
  const unsigned loopDepth;

  /// Sets slot k (Dst, Src0, Src1, Aux) from `tiles[k]`; a null value leaves
  /// its slot empty. Every operand is resolved (so each bad one gets its
  /// diagnostic); a failure shows in status().
  void operands(ValueRange tiles);
  /// Failure once an operand could not be resolved.
  LogicalResult status() const { return failure(failed); }

  static ::seam::rt::AluOp convert(AluOp op) {
    return static_cast<::seam::rt::AluOp>(static_cast<uint8_t>(op));
  }
  static ::seam::rt::ActFunc convert(ActFunc func) {
    return static_cast<::seam::rt::ActFunc>(static_cast<uint8_t>(func));
  }
  static ::seam::rt::Engine convert(Engine engine) {
    return static_cast<::seam::rt::Engine>(static_cast<uint8_t>(engine));
  }

private:
  AccessFn access;
  bool failed = false;
};

/// `op` as a runtime instruction on its execution engine, operands through
/// `access`, inside `loopDepth` ncore.loops. Errors are diagnostics on `op`.
FailureOr<::seam::rt::Instruction>
translateInstruction(InstructionOpInterface op, AccessFn access,
                     unsigned loopDepth);

} // namespace mlir::ncore

#endif // SEAM_DIALECT_NCORE_NCORETRANSLATE_H
