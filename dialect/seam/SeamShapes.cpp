//===- SeamShapes.cpp - shape helpers shared by verifiers and passes ------===//
#include "dialect/seam/SeamOps.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string seam::describeShape(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

std::string seam::describeType(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  if (!tt) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  }
  std::string s = describeShape(tt.getShape()) + " x ";
  llvm::raw_string_ostream os(s);
  os << tt.getElementType();
  return s;
}

FailureOr<SmallVector<int64_t>>
seam::broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

FailureOr<int64_t> seam::elementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return failure();
    if (d != 0 && n > (int64_t(1) << 48) / d)
      return failure();
    n *= d;
  }
  return n;
}

llvm::StringRef seam::stringifyFusionClass(FusionClass c) {
  switch (c) {
  case FusionClass::Elementwise:
    return "elementwise";
  case FusionClass::Injective:
    return "injective";
  case FusionClass::Reduction:
    return "reduction";
  case FusionClass::OutputFusable:
    return "output-fusable";
  case FusionClass::Opaque:
    return "opaque";
  }
  return "opaque";
}

LogicalResult OpTrait::seam::verifyBoundedSize(Operation *op) {
  auto check = [&](Type t, llvm::StringRef what) -> LogicalResult {
    auto tt = dyn_cast<RankedTensorType>(t);
    if (!tt)
      return success();
    if (!tt.hasStaticShape())
      return op->emitOpError() << what << " " << ::mlir::seam::describeType(t)
                               << " must have a static shape";
    auto n = ::mlir::seam::elementCount(tt.getShape());
    if (failed(n) || *n > ::mlir::seam::kMaxTensorElements)
      return op->emitOpError()
             << what << " " << ::mlir::seam::describeType(t)
             << " has more than 2^36 elements: too large for any device";
    return success();
  };
  for (Type t : op->getOperandTypes())
    if (failed(check(t, "operand")))
      return failure();
  for (Type t : op->getResultTypes())
    if (failed(check(t, "result")))
      return failure();
  return success();
}
