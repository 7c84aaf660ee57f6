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
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"
#include "passes/Statistics.h"
#include "tools/common/NestingGuard.h"
#include "tools/seam-run/StepModel.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include <algorithm>
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
  // A diagnostic is one line plus its location (and its notes): MLIR's
  // default attaches "see current operation:" and prints the op, which for
  // a warning on a function is the whole model. The op is printed only when
  // asked for (-mlir-print-op-on-diagnostic).
  bool printOpGiven = false;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.ltrim('-') == "seam-pass-statistics") {
      stats = true;
      continue;
    }
    stats |= a.ltrim('-').starts_with("mlir-pass-statistics");
    printOpGiven |= a.ltrim('-').starts_with("mlir-print-op-on-diagnostic");
    args.push_back(argv[i]);
  }
  static char noOpOnDiagnostic[] = "--mlir-print-op-on-diagnostic=false";
  if (!printOpGiven)
    args.insert(args.begin() + std::min<size_t>(1, args.size()),
                noOpOnDiagnostic);
  int n = static_cast<int>(args.size());
  auto [input, output] = mlir::registerAndParseCLIOptions(
      n, args.data(), "seam optimizer driver\n", registry);
  // Text nested deeper than the parser's recursion can take is refused
  // before it is parsed (tools/common/NestingGuard.h). The input is read
  // once here (it may be stdin) and handed to MlirOptMain as a buffer.
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // A diagnostic with no location (a bad pass option, an output file that
  // cannot be written) is one line naming the tool, not "<unknown>:0:".
  // Installed when the pass manager is set up, on its context, ahead of
  // MlirOptMain's handler; not with -verify-diagnostics, which must see
  // every diagnostic.
  if (!config.shouldVerifyDiagnostics()) {
    mlir::MlirOptMainConfig inner = config;
    config.setPassPipelineSetupFn([inner](mlir::PassManager &pm) {
      pm.getContext()->getDiagEngine().registerHandler(
          [](mlir::Diagnostic &d) -> mlir::LogicalResult {
            if (!llvm::isa<mlir::UnknownLoc>(d.getLocation()))
              return mlir::failure(); // MlirOptMain's handler prints it
            const char *severity =
                d.getSeverity() == mlir::DiagnosticSeverity::Error ? "error"
                : d.getSeverity() == mlir::DiagnosticSeverity::Warning
                    ? "warning"
                : d.getSeverity() == mlir::DiagnosticSeverity::Remark ? "remark"
                                                                      : "note";
            llvm::errs() << "seam-opt: " << severity << ": " << d << "\n";
            for (mlir::Diagnostic &note : d.getNotes())
              llvm::errs() << "seam-opt: note: " << note << "\n";
            return mlir::success();
          });
      return inner.setupPassPipeline(pm);
    });
  }
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
