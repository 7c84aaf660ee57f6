//===- Primitives.h - seam's primitive ops, evaluated on the host -*- C++
//-*-===//
//
// The primitive ops an imported graph brings (seam.matmul, seam.softmax,
// seam.reduce, seam.exp, seam.sub, ...; SeamOps.td's "Primitives") have no
// device lowering: what the recognition passes leave of them runs on the
// host. One evaluator, in float64, serves both the host fallback
// (HostValues.cpp: f32 in, f32 out) and the float64 reference
// (Reference.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_PRIMITIVES_H
#define SEAM_TOOLS_SEAM_RUN_PRIMITIVES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "tools/seam-run/Reference.h"

namespace seamrun {

/// True for the primitive ops evalPrimitive evaluates.
bool isPrimitiveOp(mlir::Operation *op);

/// `op`'s result from its operands (real tensors, numpy semantics as
/// SeamOps.td states them).
mlir::FailureOr<RefTensor> evalPrimitive(mlir::Operation *op,
                                         llvm::ArrayRef<const RefTensor *> in);

} // namespace seamrun

#endif
