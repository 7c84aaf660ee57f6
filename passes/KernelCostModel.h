//===- KernelCostModel.h - what `kernels=auto` asks a step model -*- C++
//-*-===//
//
// `seam-insert-kernels{kernels=auto}` decides, per call site, between a
// registered kernel and the compiler's own lowering by simulating both. The
// pass owns the question (which sites, which windows, greedy order, remarks);
// the answer (run the rest of the pipeline, compile, load and time a step on
// the emulated device) needs the lowering, the code generator and the
// runtime, which sit above the graph passes. So the driver that links them
// (seam-run, seam-opt) installs the step model here, the way MLIR lets a
// client plug in a profitability hook.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_KERNELCOSTMODEL_H
#define SEAM_PASSES_KERNELCOSTMODEL_H

#include "mlir/IR/BuiltinOps.h"
#include "passes/Passes.h"
#include <functional>
#include <map>
#include <string>

namespace mlir::seam {

/// One warm step of a window on the modelled machine, in the parts of the
/// host timeline (they sum to `stepNs`) plus the device's busy time, which
/// overlaps them. A decision names the part that moved most.
struct StepCost {
  double stepNs = 0;
  double deviceNs = 0;   ///< device busy (overlaps the host parts)
  double launchNs = 0;   ///< launch overheads
  double tracingNs = 0;  ///< lazy tracing (eager)
  double syncNs = 0;     ///< waits at graph breaks and the step's end
  double transferNs = 0; ///< PCIe
  double hostNs = 0;     ///< host fallback ops, framework time per kernel call
  int launches = 0;
  /// Activation bytes that go through HBM between programs and around
  /// kernel calls and host ops (not parameters).
  int64_t hbmRoundTripBytes = 0;
};

/// How the window is run: the rest of the pipeline in this mode, on this
/// target, with or without program sharing.
struct CostQuery {
  RegionMode mode = RegionMode::Compile;
  std::string target = "trn1"; ///< a runtime target name
  /// The device figures that differ from `target`'s built-in profile, by
  /// profile name: the module's ncore.target overrides (seam-run --set).
  std::map<std::string, double> overrides;
  bool share = true;
};

/// Times one step of `window`: a module whose step function holds seam ops
/// and already-inserted `seam.kernel_call`s (before fuse-rope-attention,
/// form-regions and outlining). Fails with `error` when the window cannot be
/// compiled or run.
using KernelCostModel = std::function<FailureOr<StepCost>(
    ModuleOp window, const CostQuery &query, std::string &error)>;

/// The step model `kernels=auto` consults; empty until a driver installs one.
KernelCostModel &kernelCostModel();

} // namespace mlir::seam

#endif // SEAM_PASSES_KERNELCOSTMODEL_H
