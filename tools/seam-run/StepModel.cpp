//===- StepModel.cpp - seam-run's step model for kernels=auto -------------===//
#include "tools/seam-run/StepModel.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace seamrun;
using mlir::seam::CostQuery;
using mlir::seam::StepCost;

ScopedStepModel::ScopedStepModel(SessionOptions base)
    : previous(mlir::seam::kernelCostModel()),
      cacheDir(std::make_shared<std::string>()) {
  std::shared_ptr<std::string> cache = cacheDir;
  mlir::seam::kernelCostModel() =
      [base, cache](mlir::ModuleOp window, const CostQuery &query,
                    std::string &error) -> mlir::FailureOr<StepCost> {
    if (cache->empty()) {
      llvm::SmallString<128> dir;
      if (llvm::sys::fs::createUniqueDirectory("seam-auto-cache", dir)) {
        error = "cannot create a temporary compile cache for the windows";
        return mlir::failure();
      }
      *cache = std::string(dir);
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    window->print(os, mlir::OpPrintingFlags().assumeVerified());
    auto result = timeOneStep(base, std::move(text),
                              mlir::seam::stringifyRegionMode(query.mode).str(),
                              query.target, query.share, *cache);
    if (!result) {
      error = result.error();
      return mlir::failure();
    }
    return stepCostOf(*result);
  };
}

ScopedStepModel::~ScopedStepModel() {
  mlir::seam::kernelCostModel() = previous;
  if (!cacheDir->empty())
    llvm::sys::fs::remove_directories(*cacheDir);
}

seam::rt::Expected<SessionResult>
seamrun::timeOneStep(const SessionOptions &base, std::string irText,
                     const std::string &mode, const std::string &target,
                     bool share, const std::string &cacheDir) {
  SessionOptions o;
  o.irText = std::move(irText);
  o.mode = mode;
  o.target = target;
  o.programSharing = share;
  o.kernelBoundary = base.kernelBoundary;
  o.costs = base.costs;
  o.graphBreakSyncs = base.graphBreakSyncs;
  o.figureOverrides = base.figureOverrides;
  o.tp = base.tp;
  o.exec = "timing";
  o.steps = 2; // the second pays no compile
  o.runs = 1;
  o.cacheDir = cacheDir;
  o.quietWarnings = true;
  return Session(o).run();
}

StepCost seamrun::stepCostOf(const SessionResult &result) {
  const StepStats &st = result.runs.back().steps.back();
  // The step's parts are differences of host-timeline instants that sit
  // after the measured compile of step 0, so their last bits vary from run
  // to run; to 1 ps they do not, and neither do the decisions.
  auto ps = [](double ns) { return std::round(ns * 1e3) * 1e-3; };
  StepCost c;
  c.stepNs = ps(st.latencyNs);
  c.deviceNs = ps(st.deviceNs);
  c.launchNs = ps(st.launchNs);
  c.tracingNs = ps(st.tracingNs);
  c.syncNs = ps(st.syncNs + st.stepEndWaitNs);
  c.transferNs = ps(st.transferNs);
  c.hostNs = ps(st.fallbackNs + st.kernelCallNs + st.otherNs);
  c.launches = st.launches;
  c.hbmRoundTripBytes = result.boundaryBytes + result.regionIoBytes;
  return c;
}
