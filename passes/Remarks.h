//===- Remarks.h - Decision remarks that a pass option turns off -*- C++
//-*-===//
#ifndef SEAM_PASSES_REMARKS_H
#define SEAM_PASSES_REMARKS_H

#include "mlir/IR/Diagnostics.h"

namespace mlir::seam {

/// A remark explaining a decision at `loc`, or an inactive diagnostic
/// (whose `<<` does nothing) when the pass runs with `remarks=false`
/// (seam-run, or a user who only wants the IR or the report).
inline InFlightDiagnostic decisionRemark(bool enabled, Location loc) {
  return enabled ? emitRemark(loc) : InFlightDiagnostic();
}

} // namespace mlir::seam

#endif // SEAM_PASSES_REMARKS_H
