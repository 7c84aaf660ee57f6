//===- Report.cpp - seam-report -------------------------------------------===//
#include "mlir/Support/FileUtilities.h"
#include "passes/Accounting.h"
#include "passes/AutoKernels.h"
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

/// The kernels=auto decisions the step recorded (seam.kernel_decisions):
/// one row per candidate kernel and distinct window.
void printDecisions(func::FuncOp f, llvm::raw_ostream &os) {
  std::vector<AutoDecision> decisions = decisionsOf(f);
  if (decisions.empty())
    return;
  os << "  kernels=auto decisions (one per distinct window; times: one warm "
        "step of the window)\n";
  os << llvm::formatv("    {0,-18} {1,-18} {2,7} {3,6} {4,11} {5,11} {6,8}  "
                      "{7}\n",
                      "kernel", "window", "windows", "sites", "kernel ms",
                      "without ms", "change", "decision (what moved)");
  for (const AutoDecision &d : decisions) {
    double with = d.with.stepNs, without = d.without.stepNs;
    double pct = without > 0 ? 100.0 * (with - without) / without : 0.0;
    std::string decision = d.inserted ? "inserted" : "not inserted";
    if (!d.versus.empty())
      decision += " (against '" + d.versus + "')";
    os << llvm::formatv("    {0,-18} {1,-18} {2,7} {3,6} {4,11:F3} {5,11:F3} "
                        "{6,7:F1}%  {7} ({8})\n",
                        d.kernel, d.window, d.windows, d.sites, with * 1e-6,
                        without * 1e-6, pct, decision, d.reason);
  }
}

/// Sites a requested kernel could not take, by kernel and reason
/// (seam.kernel_rejections).
void printRejections(func::FuncOp f, llvm::raw_ostream &os) {
  std::vector<KernelRejection> rejections = rejectionsOf(f);
  if (rejections.empty())
    return;
  os << "  kernel sites rejected (constraints that fail)\n";
  for (const KernelRejection &r : rejections)
    os << llvm::formatv("    {0,-18} {1,-18} {2,6} site(s): {3}\n", r.kernel,
                        r.replaces, r.sites, r.reason);
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
      printRejections(f, os);
      printDecisions(f, os);
    }
    if (file == "-") {
      llvm::errs() << text;
      return;
    }
    std::string err;
    auto out = openOutputFile(file, &err);
    if (!out) {
      // Not at the module's location: the file is not the model's fault,
      // and a location would quote the model's first line under a caret.
      mlir::emitError(UnknownLoc::get(module.getContext()))
          << "seam-report: " << err;
      return signalPassFailure();
    }
    out->os() << text;
    out->keep();
  }
};

} // namespace
