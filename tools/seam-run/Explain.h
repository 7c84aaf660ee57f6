//===- Explain.h - seam-run --explain-kernels --------------------*- C++
//-*-===//
//
// Where a kernel's step delta goes, per class of sites (the same kernel on
// identical ops in blocks of one kind), from counterfactual compiles
// (passes/Counterfactual.h): the class's sites are compiled five ways (fused,
// no fusion, HBM round trip, the compiler's body behind the boundary, the
// kernel) while the run's other sites keep their kernels, and each warm step
// is timed as kernels=auto times its windows. Consecutive differences are
// the parts; each site's op is also compiled alone, with and without the
// kernel, for the bodies' own times, floors and bounds.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_RUN_EXPLAIN_H
#define SEAM_TOOLS_SEAM_RUN_EXPLAIN_H

#include "tools/seam-run/Session.h"
#include "llvm/Support/JSON.h"

namespace seamrun {

/// Explains the kernels of the run `opts` describes (its model, mode,
/// target, host costs and figures); an error names what could not be
/// compiled or run.
seam::rt::Expected<KernelExplanation>
explainKernels(const SessionOptions &opts);

/// The explanation as seam-run prints it (after the run's report).
void printExplanation(const KernelExplanation &e, llvm::raw_ostream &os);

/// `kernel_explanation` in --json.
llvm::json::Value explanationJson(const KernelExplanation &e);

} // namespace seamrun

#endif
