//===- Report.cpp - seam-report -------------------------------------------===//
#include "mlir/Support/FileUtilities.h"
#include "passes/Accounting.h"
#include "passes/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMREPORT
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

std::string humanBytes(int64_t b) {
  if (b >= (int64_t(1) << 20))
    return llvm::formatv("{0:F1} MiB", b / double(1 << 20));
  if (b >= 1024)
    return llvm::formatv("{0:F1} KiB", b / 1024.0);
  return llvm::formatv("{0} B", b);
}

struct ReportPass : public seam::impl::SeamReportBase<ReportPass> {
  using SeamReportBase::SeamReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string text;
    llvm::raw_string_ostream os(text);
    int64_t programs = 0;
    for (auto f : module.getOps<func::FuncOp>())
      programs += f->hasAttr(kProgramAttrName);
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f->hasAttr(kProgramAttrName) || f.isExternal())
        continue;
      StepAccount acc = accountStep(f);
      os << "seam report: @" << f.getSymName() << "\n";
      auto row = [&](llvm::StringRef k, const llvm::Twine &v) {
        os << llvm::formatv("  {0,-34} {1}\n", k, v.str());
      };
      row("blocks", llvm::Twine(acc.blocks));
      row("program regions per step", llvm::Twine(acc.regions));
      row("distinct programs (module)", llvm::Twine(programs));
      row("kernel calls per step", llvm::Twine(acc.kernelCalls));
      for (auto &[name, n] : acc.kernelsByName)
        row("  " + name, llvm::Twine(n));
      row("host-fallback ops per step", llvm::Twine(acc.hostOps));
      row("launches per step", llvm::Twine(acc.launches));
      row("bytes across opaque boundaries",
          humanBytes(acc.boundaryBytes) + " (" +
              llvm::Twine(acc.boundaryBytes) + ")");
      row("bytes across region boundaries",
          humanBytes(acc.regionIoBytes) + " (" +
              llvm::Twine(acc.regionIoBytes) + ")");
    }
    if (file == "-") {
      llvm::errs() << text;
      return;
    }
    std::string err;
    auto out = openOutputFile(file, &err);
    if (!out) {
      // At the module's location, not on the op: that would print it all.
      mlir::emitError(module.getLoc())
          << "seam-report: cannot write '" << file << "': " << err;
      return signalPassFailure();
    }
    out->os() << text;
    out->keep();
  }
};

} // namespace
