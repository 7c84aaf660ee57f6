//===- StepModel.h - seam-run's step model for kernels=auto -----*- C++ -*-===//
//
// `kernels=auto` asks, per window, what one warm step costs (see
// passes/KernelCostModel.h). The answer here is seam-run itself: a timing-only
// Session on the window's IR with the same target, mode, host costs and
// figure overrides as the run that asked, its programs compiled through one
// cache shared by every window of the decision.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_STEPMODEL_H
#define SEAM_TOOLS_SEAM_RUN_STEPMODEL_H

#include "passes/KernelCostModel.h"
#include "tools/seam-run/Interrupt.h"
#include "tools/seam-run/Session.h"
#include <memory>

namespace seamrun {

/// Installs seam-run's step model for kernels=auto while it lives; the model
/// runs windows with `base`'s host costs, figure overrides and syncs (the
/// query gives mode, target, the module's device figures and sharing).
class ScopedStepModel {
public:
  explicit ScopedStepModel(SessionOptions base);
  ~ScopedStepModel();
  ScopedStepModel(const ScopedStepModel &) = delete;
  ScopedStepModel &operator=(const ScopedStepModel &) = delete;

  /// Window timings answered so far: simulated, and found in the compile
  /// cache (a warm run with a kept --cache-dir).
  struct Answers {
    int simulated = 0, cached = 0;
  };
  Answers answers() const { return *counts; }

private:
  mlir::seam::KernelCostModel previous;
  /// The windows' compile cache, created on first use (a seam-opt run
  /// without kernels=auto leaves nothing behind) and removed with the model
  /// or on an interrupt (Interrupt.h).
  std::shared_ptr<TemporaryDirectory> cacheDir;
  std::shared_ptr<Answers> counts;
};

/// One warm step of `irText`, timed as kernels=auto's windows are: a
/// timing-only Session of two steps (the second pays no compile) with
/// `base`'s host costs, figure overrides, syncs and TP degree, in `mode` on
/// `target` with its device figures `overrides` set after `base`'s (the
/// figures the IR's ncore.target carries), its programs compiled through
/// `cacheDir`.
seam::rt::Expected<SessionResult>
timeOneStep(const SessionOptions &base, std::string irText,
            mlir::seam::RegionMode mode, seam::rt::Target target,
            const std::map<std::string, double> &overrides, bool share,
            const std::string &cacheDir);

/// The last step of `result` in the parts a StepCost names.
mlir::seam::StepCost stepCostOf(const SessionResult &result);

} // namespace seamrun

#endif
