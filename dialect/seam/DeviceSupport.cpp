//===- DeviceSupport.cpp - which seam ops the ncore lowering takes --------===//
#include "dialect/seam/DeviceSupport.h"
#include "dialect/seam/SeamOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::seam;

std::pair<int64_t, int64_t> seam::rowsAndCols(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return {1, 1};
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  return {rows, shape.back()};
}

BroadcastKind seam::classifyBroadcast(llvm::ArrayRef<int64_t> operand,
                                      llvm::ArrayRef<int64_t> result) {
  if (operand == result)
    return BroadcastKind::None;
  auto [rows, cols] = rowsAndCols(operand);
  auto [rrows, rcols] = rowsAndCols(result);
  // Leading unit dims only (e.g. [S, D] against [1, S, D], or [D] against a
  // result of one row): the same matrix, not a broadcast.
  if (rows == rrows && cols == rcols)
    return BroadcastKind::None;
  if (rows == 1 && cols == rcols)
    return BroadcastKind::Rows;
  return BroadcastKind::Unsupported;
}

bool seam::isLowerableTransposePerm(llvm::ArrayRef<int64_t> perm) {
  int64_t rank = int64_t(perm.size());
  if (rank == 0 || perm.back() == rank - 1)
    return true;
  bool swapLast =
      rank >= 2 && perm[rank - 1] == rank - 2 && perm[rank - 2] == rank - 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    swapLast &= perm[d] == d;
  return swapLast;
}

std::string seam::deviceUnsupportedReason(Operation *op) {
  auto fc = dyn_cast<FusionClassInterface>(op);
  if (!fc || fc.needsHostFallback())
    return "";
  for (Type t : op->getResultTypes())
    if (auto rt = dyn_cast<RankedTensorType>(t))
      if (rt.getRank() == 0)
        return "its result is a scalar (rank 0)";
  if (isa<AddOp, MulOp>(op)) {
    auto shape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    BroadcastKind l = classifyBroadcast(
        cast<RankedTensorType>(op->getOperand(0).getType()).getShape(), shape);
    BroadcastKind r = classifyBroadcast(
        cast<RankedTensorType>(op->getOperand(1).getType()).getShape(), shape);
    bool ok = (l == BroadcastKind::None && r != BroadcastKind::Unsupported) ||
              (r == BroadcastKind::None && l == BroadcastKind::Rows);
    if (!ok)
      return "the device lowers equal shapes or one operand broadcast over "
             "all rows, not " +
             describeType(op->getOperand(0).getType()) + " and " +
             describeType(op->getOperand(1).getType());
  }
  if (auto t = dyn_cast<TransposeOp>(op))
    if (!isLowerableTransposePerm(t.getPerm()))
      return "the device lowers transposes that keep the last dimension or "
             "swap the last two";
  return "";
}

DictionaryAttr seam::countsAttr(MLIRContext *ctx,
                                const std::map<std::string, int64_t> &counts) {
  Builder b(ctx);
  SmallVector<NamedAttribute> entries;
  for (auto &[name, n] : counts)
    entries.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(n)));
  return b.getDictionaryAttr(entries);
}
