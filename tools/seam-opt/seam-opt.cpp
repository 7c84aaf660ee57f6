//===- seam-opt.cpp - opt-style driver for seam ---------------------------===//
//
// MlirOptMain over the seam dialect and the upstream dialects a model uses:
// every standard mlir-opt flag works (pass pipelines, -mlir-timing,
// -mlir-pass-statistics, -split-input-file, -verify-diagnostics, ...).
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::seam::SeamDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "seam optimizer driver\n", registry));
}
