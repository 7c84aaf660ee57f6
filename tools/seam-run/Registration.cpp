//===- Registration.cpp - dialects and passes seam-run uses ---------------===//
#include "tools/seam-run/Registration.h"
#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "lowering/target/NcoreTargetPasses.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"

const mlir::DialectRegistry &seamrun::seamRunRegistry() {
  static mlir::DialectRegistry *registry = [] {
    mlir::seam::registerSeamPassesAndPipelines();
    mlir::ncore::registerNcoreCodegenPasses();
    mlir::seam::registerConvertPasses();
    auto *r = new mlir::DialectRegistry();
    r->insert<mlir::seam::SeamDialect, mlir::ncore::NcoreDialect,
              mlir::func::FuncDialect>();
    mlir::seam::registerKernelRegistry(*r);
    return r;
  }();
  return *registry;
}
