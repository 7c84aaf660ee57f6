//===- Remarks.h - remarks a pass option turns off --------------*- C++ -*-===//
#ifndef SEAM_PASSES_REMARKS_H
#define SEAM_PASSES_REMARKS_H

#include "mlir/IR/Diagnostics.h"

#include <optional>
#include <utility>

namespace mlir::seam {

/// A remark explaining a decision, or nothing when the pass runs with
/// `remarks=false` (seam-run, or a user who only wants the IR or the report).
/// `<<` appends to the remark when there is one. (An inactive
/// InFlightDiagnostic cannot stand in for "nothing": appending to it is an
/// assertion failure in builds with assertions.)
class DecisionRemark {
public:
  explicit DecisionRemark(std::optional<InFlightDiagnostic> diag)
      : diag(std::move(diag)) {}

  template <typename Arg> DecisionRemark &operator<<(Arg &&arg) & {
    if (diag)
      *diag << std::forward<Arg>(arg);
    return *this;
  }
  template <typename Arg> DecisionRemark &&operator<<(Arg &&arg) && {
    if (diag)
      *diag << std::forward<Arg>(arg);
    return std::move(*this);
  }

private:
  std::optional<InFlightDiagnostic> diag;
};

/// A remark at `loc` when `enabled`.
inline DecisionRemark decisionRemark(bool enabled, Location loc) {
  return DecisionRemark(enabled
                            ? std::optional<InFlightDiagnostic>(emitRemark(loc))
                            : std::nullopt);
}

} // namespace mlir::seam

#endif // SEAM_PASSES_REMARKS_H
