//===- Accounting.cpp - launches and bytes of a formed step ---------------===//
#include "passes/Accounting.h"
#include "dialect/seam/SeamOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::seam;

int64_t seam::bytesOf(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  if (!tt || !tt.hasStaticShape())
    return 0;
  int64_t bits = tt.getElementType().getIntOrFloatBitWidth();
  if (auto c = dyn_cast<ComplexType>(tt.getElementType()))
    bits = 2 * int64_t(c.getElementType().getIntOrFloatBitWidth());
  return tt.getNumElements() * bits / 8;
}

bool seam::isLoadTimeValue(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<ParamOp>(def))
    return true;
  auto fc = dyn_cast<FusionClassInterface>(def);
  if (!fc || fc.getFusionClass() != FusionClass::Injective ||
      def->getNumOperands() == 0)
    return false;
  return llvm::all_of(def->getOperands(), isLoadTimeValue);
}

static int64_t activationBytes(ValueRange values) {
  int64_t n = 0;
  for (Value v : values)
    if (!isLoadTimeValue(v))
      n += bytesOf(v.getType());
  return n;
}

static int64_t allBytes(Operation *op) {
  int64_t n = 0;
  for (Type t : op->getOperandTypes())
    n += bytesOf(t);
  for (Type t : op->getResultTypes())
    n += bytesOf(t);
  return n;
}

static bool isHostOp(Operation *op) {
  auto fc = dyn_cast<FusionClassInterface>(op);
  return fc && fc.needsHostFallback();
}

/// Kernel calls inside a program body (compile mode): sub-programs.
static void countInnerKernels(Region &r, StepAccount &acc) {
  r.walk([&](KernelCallOp kc) {
    ++acc.kernelCalls;
    ++acc.kernelsByName[kc.getKernel().str()];
    acc.boundaryBytes += allBytes(kc);
  });
}

static void accountBlock(Block &block, StepAccount &acc) {
  for (Operation &op : block) {
    if (auto b = dyn_cast<BlockOp>(op)) {
      ++acc.blocks;
      accountBlock(b.getBody().front(), acc);
    } else if (auto f = dyn_cast<FusionOp>(op)) {
      ++acc.regions;
      ++acc.launches;
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(f.getBody(), captured);
      acc.regionIoBytes += activationBytes(captured.getArrayRef()) +
                           activationBytes(f.getResults());
      countInnerKernels(f.getBody(), acc);
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee || !callee->hasAttr(kProgramAttrName))
        continue;
      ++acc.regions;
      ++acc.launches;
      acc.regionIoBytes += activationBytes(call.getOperands()) +
                           activationBytes(call.getResults());
      countInnerKernels(callee.getBody(), acc);
    } else if (auto kc = dyn_cast<KernelCallOp>(op)) {
      ++acc.launches;
      ++acc.kernelCalls;
      ++acc.kernelsByName[kc.getKernel().str()];
      acc.boundaryBytes += allBytes(kc);
    } else if (isHostOp(&op)) {
      ++acc.hostOps;
      acc.boundaryBytes += allBytes(&op);
    }
  }
}

StepAccount seam::accountStep(func::FuncOp step) {
  StepAccount acc;
  if (step.getBody().empty())
    return acc;
  accountBlock(step.getBody().front(), acc);
  if (auto n = step->getAttrOfType<IntegerAttr>("seam.blocks"))
    acc.blocks = n.getInt();
  return acc;
}
