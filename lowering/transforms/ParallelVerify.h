//===- ParallelVerify.h - MLIR's verifier on threads ------------*- C++ -*-===//
//
// MLIR's verifier spreads its work over a context's threads only at
// IsolatedFromAbove ops: it verifies such ops side by side, and walks each
// one's region on one thread. A whole-step ncore.program is one such region
// holding ~50,000 ops, and its verification after lowering took as long as
// the lowering itself. verifyOnThreads runs the same checks with the work
// cut finer: the module and program ops are verified on their own, and each
// op directly in their bodies, with everything nested in it, is a unit of
// work for the context's threads.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_TRANSFORMS_PARALLELVERIFY_H
#define SEAM_LOWERING_TRANSFORMS_PARALLELVERIFY_H

#include "mlir/IR/Operation.h"

namespace mlir::ncore {

/// Verifies `root` and everything nested in it (as mlir::verify(root)), on
/// the context's threads when it has them. The diagnostics of a failure are
/// emitted on the failing op; which failure is reported first when several
/// ops are invalid may differ from mlir::verify.
LogicalResult verifyOnThreads(Operation *root);

} // namespace mlir::ncore

#endif // SEAM_LOWERING_TRANSFORMS_PARALLELVERIFY_H
