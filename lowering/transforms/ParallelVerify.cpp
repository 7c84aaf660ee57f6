//===- ParallelVerify.cpp - MLIR's verifier on a context's threads --------===//
#include "lowering/transforms/ParallelVerify.h"
#include "dialect/ncore/NcoreOps.h"
#include "lowering/transforms/ParallelChunks.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Threading.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

LogicalResult mlir::ncore::verifyOnThreads(Operation *root) {
  MLIRContext *ctx = root->getContext();
  if (!ctx->isMultithreadingEnabled())
    return mlir::verify(root);
  // Modules and programs are opened: each is verified on its own, and the
  // ops of its body are units, each verified with everything nested in it.
  // (Their bodies are single blocks without terminators, so MLIR's block
  // checks, which a verification of the op alone skips, have nothing to
  // find there.)
  SmallVector<Operation *> opened;
  std::vector<Operation *> units;
  auto open = [](Operation *op) { return isa<ModuleOp, ProgramOp>(op); };
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!open(op)) {
      units.push_back(op);
      continue;
    }
    opened.push_back(op);
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        // Dominance checks on several threads compare ops of this block
        // (isBeforeInBlock), which would renumber it when its order is
        // stale: numbered here, before they start.
        if (!block.isOpOrderValid())
          block.recomputeOpOrder();
        for (Operation &child : block)
          worklist.push_back(&child);
      }
  }
  // MLIR's order: an op's own invariants, then what it holds, then its
  // region invariants (IsolatedFromAbove's walk of every operand, the
  // symbol table's of every symbol use), which assume valid contents.
  for (Operation *op : opened) {
    for (Value v : op->getOperands())
      if (!v)
        return op->emitError("null operand found");
    std::optional<RegisteredOperationName> info = op->getRegisteredInfo();
    if (info && failed(info->verifyInvariants(op)))
      return failure();
  }
  // A unit can be a loop nest of hundreds of ops: 64 per task.
  if (failed(failableParallelChunks(ctx, units.size(), 64, [&](size_t i) {
        return mlir::verify(units[i]);
      })))
    return failure();
  return failableParallelForEach(ctx, opened, [](Operation *op) {
    return mlir::verify(op, /*verifyRecursively=*/false);
  });
}
