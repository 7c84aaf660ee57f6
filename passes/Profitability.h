//===- Profitability.h - profitability of graph passes ----------*- C++ -*-===//
//
// Legality (can this transformation be done without changing meaning or
// breaking a kernel's constraints?) lives in each pass. Profitability (should
// it be done?) is a hook a client may replace, e.g. with a cost model that
// asks the emulator. The default accepts every legal site: the user asked for
// the kernel or fusion by running the pass.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_PROFITABILITY_H
#define SEAM_PASSES_PROFITABILITY_H

#include "mlir/IR/Operation.h"
#include <functional>
#include <string>

namespace mlir::seam {

/// `transform` names the decision ("fuse-qkv", "kernel:rope", ...). Return
/// false and fill `why` to decline a legal site.
using ProfitabilityHook = std::function<bool(
    Operation *site, llvm::StringRef transform, std::string &why)>;

/// The hook every seam pass consults; replace it to plug in a cost model.
ProfitabilityHook &profitabilityHook();

/// Consults the hook (default: profitable).
bool isProfitable(Operation *site, llvm::StringRef transform, std::string &why);

} // namespace mlir::seam

#endif
