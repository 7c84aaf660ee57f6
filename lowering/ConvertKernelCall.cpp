//===- ConvertKernelCall.cpp - seam.kernel_call -> ncore.call_kernel -----===//
//
// A kernel is a separately compiled program that reads and writes HBM: the
// call's operands are made contiguous HBM tensors (an SBUF intermediate is
// written out: the opaque boundary's SBUF -> HBM -> SBUF round trip) and its
// results are HBM tensors (outputs or `kernelN` scratch) that consumers load.
// The callee is the declaration `@kernel_<name>_<n>` (KernelDeclarations);
// its body is built by the kernels library.
//
//===----------------------------------------------------------------------===//
#include "lowering/ConvertSeamToNcore.h"
#include "dialect/seam/SeamOps.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

static LogicalResult lowerKernelCall(ProgramLowering &pl, Operation *o) {
  auto op = cast<KernelCallOp>(o);
  SmallVector<Value> operands;
  for (Value a : op.getArgs()) {
    auto x = pl.get(a, op);
    if (failed(x))
      return failure();
    operands.push_back(pl.contiguousHbm(*x, op));
  }
  for (Value r : op.getResults()) {
    Placement out = pl.placeResultInHbm(r, "kernel");
    auto shape = cast<RankedTensorType>(r.getType()).getShape();
    operands.push_back(pl.reshape(
        out.root, shape.empty() ? SmallVector<int64_t>{1}
                                : SmallVector<int64_t>(shape)));
  }
  ncore::ProgramOp decl = pl.kernelDecls().getOrCreate(op);
  pl.create<ncore::CallKernelOp>(decl.getSymName(), operands);
  ++pl.statistics().kernelCalls;
  return success();
}

void conversion::populateKernelCallLowerings(LoweringTable &table) {
  table[KernelCallOp::getOperationName()] = lowerKernelCall;
}
