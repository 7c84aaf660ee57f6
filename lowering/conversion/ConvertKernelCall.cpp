//===- ConvertKernelCall.cpp - seam.kernel_call -> ncore.call_kernel -----===//
//
// A kernel is a separately compiled program that reads and writes HBM: the
// call's operands are made contiguous HBM tensors (an SBUF intermediate is
// written out: the opaque boundary's SBUF -> HBM -> SBUF round trip) and its
// results are HBM tensors (outputs or `kernelN` scratch) that consumers load;
// complex<f32> operands and results are f32 [..., 2] (re, im interleaved).
// The callee is built by the kernels library (or declared when the kernel
// has no builder, see KernelDeclarations); the constants it needs become
// "constant" arguments of the calling program, forwarded to the call.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

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
    // complex<f32> results are f32 [..., 2] in HBM (deviceLayout).
    Placement out = pl.placeResultInHbm(r, "kernel");
    operands.push_back(pl.reshape(
        out.root, deviceLayout(cast<RankedTensorType>(r.getType())).first));
  }
  FailureOr<ncore::ProgramOp> callee = pl.kernelDecls().getOrCreate(op);
  if (failed(callee))
    return failure();
  // Constants the kernel ships with become constant arguments of the caller.
  for (unsigned i = operands.size(); i < callee->getNumArguments(); ++i)
    operands.push_back(
        pl.constantArg(cast<TileType>(callee->getArgumentTypes()[i]),
                       callee->getArgAttrDict(i)));
  ncore::CallKernelOp call = pl.callKernel(callee->getSymName(), operands);
  if (pl.target().kernelBoundary != "barrier")
    call->setAttr(ncore::kBoundaryAttrName,
                  StringAttr::get(op.getContext(), pl.target().kernelBoundary));
  ++pl.statistics().kernelCalls;
  return success();
}

void conversion::populateKernelCallLowerings(LoweringTable &table) {
  table[KernelCallOp::getOperationName()] = lowerKernelCall;
}
