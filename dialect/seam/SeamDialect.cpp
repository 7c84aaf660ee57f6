//===- SeamDialect.cpp - seam dialect registration ------------------------===//
#include "dialect/seam/SeamOps.h"

using namespace mlir;
using namespace mlir::seam;

#include "dialect/seam/SeamDialect.cpp.inc"
#include "dialect/seam/SeamEnums.cpp.inc"
#include "dialect/seam/SeamInterfaces.cpp.inc"

void SeamDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/seam/SeamOps.cpp.inc"
      >();
}
