//===- seam-opt.cpp - opt-style driver for seam ---------------------------===//
//
// MlirOptMain over the seam dialect and the upstream dialects a model uses:
// every standard mlir-opt flag works (pass pipelines, -mlir-timing,
// -mlir-pass-statistics, -split-input-file, -verify-diagnostics, ...).
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "lowering/ConvertSeamToNcore.h"
#include "lowering/NcorePasses.h"
#include "passes/Passes.h"
#include "passes/Statistics.h"
#include "tools/seam-run/StepModel.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include <vector>

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::seam::registerSeamPassesAndPipelines();
  mlir::ncore::registerNcoreCodegenPasses();
  mlir::seam::registerConvertPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::seam::SeamDialect, mlir::ncore::NcoreDialect,
                  mlir::func::FuncDialect>();
  mlir::seam::registerKernelRegistry(registry);
  // seam-insert-kernels{kernels=auto} times windows with seam-run's model
  // (default host costs; the pass options give mode, target and sharing).
  seamrun::ScopedStepModel stepModel{seamrun::SessionOptions{}};
  // Debian's libMLIR counts nothing in Pass::Statistic (NDEBUG build), so
  // seam's passes keep their own counters; print them for either flag.
  bool stats = false;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.ltrim('-') == "seam-pass-statistics") {
      stats = true;
      continue;
    }
    stats |= a.ltrim('-').starts_with("mlir-pass-statistics");
    args.push_back(argv[i]);
  }
  auto result = mlir::MlirOptMain(static_cast<int>(args.size()), args.data(),
                                  "seam optimizer driver\n", registry);
  if (stats)
    mlir::seam::printPassCounters(llvm::errs());
  return mlir::asMainReturnCode(result);
}
