//===- NcoreOps.h - ncore ISA dialect ---------------------------*- C++ -*-===//
//
// Types, enums and ops of the ISA-level dialect. The enums are generated from
// NcoreBase.td and checked against runtime/Isa.def (NcoreDialect.cpp); the
// opcode enum below is generated from Isa.def directly.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_DIALECT_NCORE_NCOREOPS_H
#define SEAM_DIALECT_NCORE_NCOREOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <optional>

#include "dialect/ncore/NcoreEnums.h.inc"

namespace mlir::ncore {

/// Opcodes of runtime/Isa.def (same names and codes).
enum class Opcode : uint8_t {
#define NCORE_OPCODE(Name, Code, ...) Name = Code,
#include "runtime/Isa.def"
};

/// Isa.def mnemonic of an opcode ("matmul").
llvm::StringRef mnemonic(Opcode op);
/// Isa.def default engine of an opcode.
Engine defaultEngine(Opcode op);
/// Whether Isa.def lets `op` run on `engine`.
bool isLegalEngine(Opcode op, Engine engine);
/// Opcode of an ncore op name ("ncore.matmul" -> Matmul); nullopt for
/// structural ops. "ncore.loop" maps to LoopBegin (and ends with LoopEnd).
std::optional<Opcode> opcodeForOpName(llvm::StringRef opName);

/// Hardware rules of reference/hardware.md (trn1 and trn2 agree on these).
/// Capacities that differ per target (SBUF bytes per partition) come from
/// the runtime profiles and are checked by ncore-allocate, not here.
constexpr int64_t kNumPartitions = 128;
/// A tile of more than this many partitions must start at partition 0.
constexpr int64_t kMaxOffsetPartitions = 64;
constexpr int64_t kPsumBankBytes = 2048;
constexpr int64_t kPsumPartitionBytes = 16 * 1024;
constexpr int64_t kMatmulMaxK = 128;
constexpr int64_t kMatmulMaxM = 128;
constexpr int64_t kMatmulMaxN = 512;
constexpr int64_t kTransposeMaxDim = 128;
/// Program format limits (runtime/Program.h kMaxFreeDims, kMaxLoopDepth,
/// kNumSemaphores).
constexpr int64_t kMaxFreeDims = 4;
constexpr unsigned kMaxLoopDepth = 4;
constexpr int64_t kNumSemaphores = 256;

/// Discardable i64 attribute giving a matmul NKI's start flag: iteration 0
/// of enclosing loop level d overwrites PSUM instead of accumulating.
constexpr llvm::StringLiteral kStartLevelAttrName = "start_level";

/// Discardable unit attribute on `ncore.dma_copy`: the transfer is moved
/// as written, one piece on one queue. ncore-split-dma neither cuts it nor
/// counts it among the prologue loads it balances: its author (a kernel, a
/// lowering with its own DMA plan) chose the pieces and their order over
/// the round-robin queues.
constexpr llvm::StringLiteral kFixedPiecesAttrName = "ncore.fixed_pieces";

/// A kernel call's boundary semantics, on `ncore.call_kernel` and
/// `ncore.inlined_call` (convert-seam-to-ncore sets it): "barrier" (or
/// absent: every engine drains before the body and after it) or
/// "dependency" (the body waits only for the engines whose work conflicts
/// with it, and only the work after it that conflicts with it waits for it;
/// the body keeps its engines to itself for its span, engine by engine).
constexpr llvm::StringLiteral kBoundaryAttrName = "ncore.boundary";
/// ncore-schedule's decisions at a dependency call: its id in the program
/// (what `ncore.kernel_wait` names) and its body's entry waits, pairs
/// (ordinal, engines): the body instruction with that ordinal (pre-order,
/// among the callee's instructions) waits for the last instruction, before
/// the call, of each caller engine in the bit mask.
constexpr llvm::StringLiteral kCallIdAttrName = "ncore.call_id";
constexpr llvm::StringLiteral kEntryWaitsAttrName = "ncore.entry_waits";
/// Whether `call` has the dependency boundary.
bool hasDependencyBoundary(Operation *call);

/// Isa.def dtype code of f32/bf16; nullopt for anything else.
std::optional<unsigned> dtypeCode(Type elementType);

/// "[128, 512] x bf16 in sbuf" (with ", start 64" when sliced): how
/// diagnostics name a tile.
std::string describeTile(Type type);

} // namespace mlir::ncore

#define GET_TYPEDEF_CLASSES
#include "dialect/ncore/NcoreTypes.h.inc"

namespace mlir::ncore {
/// Checks the hardware rules of a tile type; shared by TileType::verify and
/// the ValidTiles op trait.
LogicalResult verifyTileType(function_ref<InFlightDiagnostic()> emitError,
                             MemSpace space, ArrayRef<int64_t> shape,
                             Type elementType, int64_t startPartition);
} // namespace mlir::ncore

namespace mlir::OpTrait::ncore {
LogicalResult verifyValidTiles(Operation *op);
/// Every tile-typed operand and result obeys the TileType rules.
template <typename T> class ValidTiles : public TraitBase<T, ValidTiles> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyValidTiles(op);
  }
};
} // namespace mlir::OpTrait::ncore

namespace mlir::ncore {
/// Rules shared by every instruction (InstructionOpInterface::verify).
LogicalResult verifyInstruction(Operation *op);
/// `a` and `b` have the same partitions and free element count (a rule
/// many instructions share; named `aName`/`bName` in the error).
LogicalResult verifySameLayout(Operation *op, Value a, llvm::StringRef aName,
                               Value b, llvm::StringRef bName);
/// Filled by InstructionOpInterface::translate (NcoreTranslate.h).
class InstructionTranslation;
} // namespace mlir::ncore

#include "dialect/ncore/NcoreDialect.h.inc"
#include "dialect/ncore/NcoreInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialect/ncore/NcoreOps.h.inc"

namespace mlir::ncore {
/// Calls `fn` on the ops of `block` in program order (pre-order, nested
/// regions included) except those inside a nested ncore.inlined_call: each
/// inlined call is a scope of its own (bindings, scratch, semaphores). `fn`
/// sees the inlined_call op itself, not its body.
void forEachOwnOp(Block &block, llvm::function_ref<void(Operation *)> fn);
} // namespace mlir::ncore

#endif // SEAM_DIALECT_NCORE_NCOREOPS_H
