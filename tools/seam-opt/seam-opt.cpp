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
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "lowering/target/NcoreTargetPasses.h"
#include "passes/Passes.h"
#include "passes/Statistics.h"
#include "tools/common/NestingGuard.h"
#include "tools/seam-run/StepModel.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
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
  int n = static_cast<int>(args.size());
  auto [input, output] = mlir::registerAndParseCLIOptions(
      n, args.data(), "seam optimizer driver\n", registry);
  // Text nested deeper than the parser's recursion can take is refused
  // before it is parsed (tools/common/NestingGuard.h). The input is read
  // once here (it may be stdin) and handed to MlirOptMain as a buffer.
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  mlir::LogicalResult result = mlir::success();
  if (config.shouldShowDialects()) {
    result = mlir::MlirOptMain(n, args.data(), input, output, registry);
  } else {
    std::string error;
    auto file = mlir::openInputFile(input, &error);
    if (!file) {
      llvm::errs() << error << "\n";
      return 1;
    }
    if (::seam::rt::Status nesting =
            ::mlir::seam::checkNesting(file->getBuffer());
        !nesting) {
      llvm::errs() << (input == "-" ? "<stdin>" : input) << ":"
                   << nesting.error() << "\n";
      return 1;
    }
    auto out = mlir::openOutputFile(output, &error);
    if (!out) {
      llvm::errs() << error << "\n";
      return 1;
    }
    result = mlir::MlirOptMain(out->os(), std::move(file), registry, config);
    if (mlir::succeeded(result))
      out->keep();
  }
  if (stats)
    mlir::seam::printPassCounters(llvm::errs());
  return mlir::asMainReturnCode(result);
}
