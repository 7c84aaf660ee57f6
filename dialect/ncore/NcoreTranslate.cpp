//===- NcoreTranslate.cpp - ncore instruction op -> runtime instruction ---===//
#include "dialect/ncore/NcoreTranslate.h"

using namespace mlir;
using namespace mlir::ncore;
namespace rt = ::seam::rt;

void InstructionTranslation::operands(ValueRange tiles) {
  for (auto [slot, tile] : llvm::enumerate(tiles)) {
    if (!tile)
      continue;
    if (slot >= rt::Instruction::NumSlots) {
      failed = true;
      continue;
    }
    FailureOr<rt::AccessPattern> ap = access(tile);
    if (::mlir::failed(ap)) {
      failed = true;
      continue;
    }
    inst.set(rt::Instruction::Slot(slot), *ap);
  }
}

FailureOr<rt::Instruction>
mlir::ncore::translateInstruction(InstructionOpInterface op, AccessFn access,
                                  unsigned loopDepth) {
  InstructionTranslation t(access, loopDepth);
  t.inst.op = static_cast<rt::Opcode>(static_cast<uint8_t>(op.getOpcode()));
  t.inst.engine = InstructionTranslation::convert(op.getExecutionEngine());
  if (failed(op.translate(t)))
    return failure();
  return t.inst;
}
