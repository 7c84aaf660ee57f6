//===- NcoreTarget.h - The target profile carried on the IR -----*- C++ -*-===//
//
// The hardware profile a module is compiled for travels on the IR as one
// module attribute, so every pass plans with the same figures the emulated
// device runs with (seam-run --set moves both):
//
//   module attributes {ncore.target = {name = "trn2",
//       overrides = {dma_fixed_cost_ns = 1.2e+03 : f64}}} { ... }
//
// `name` is the target (trn1, trn2) whose built-in profile is the base;
// `overrides` (optional) holds the figures that differ from it, by their
// profile names (runtime/profiles/<target>.json). Every pass that needs the
// profile reads it through getTargetProfile(); a pass's `target` option
// only stands in when no enclosing op carries the attribute.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_DIALECT_NCORE_NCORETARGET_H
#define SEAM_DIALECT_NCORE_NCORETARGET_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "runtime/Profile.h"

namespace mlir::ncore {

/// Name of the module attribute that carries the target profile.
constexpr llvm::StringLiteral kTargetAttrName = "ncore.target";

/// The attribute for `profile`: its target and every figure whose value
/// differs from the built-in profile of that target.
DictionaryAttr buildTargetAttr(MLIRContext *ctx,
                               const ::seam::rt::Profile &profile);

/// Sets kTargetAttrName on `module` to buildTargetAttr(profile).
void setTargetProfile(ModuleOp module, const ::seam::rt::Profile &profile);

/// The attribute on `op` or its nearest ancestor that has one, or null.
DictionaryAttr findTargetAttr(Operation *op);

/// The profile `op` is compiled for: the nearest ncore.target attribute
/// (`op` itself or an ancestor) when there is one, else the built-in profile
/// of `optionTarget` (a pass's `target` option). When the attribute is
/// present and `optionSet` (the option was given explicitly), the two must
/// name the same target. On bad input (unknown target, unknown figure, a
/// value the figure's rules reject, a contradiction) emits one error on
/// `op`, prefixed with `pass`, and fails.
FailureOr<::seam::rt::Profile> getTargetProfile(Operation *op,
                                                StringRef optionTarget,
                                                bool optionSet, StringRef pass);

/// The same for a pass's `target` option.
template <typename OptionT>
FailureOr<::seam::rt::Profile>
getTargetProfile(Operation *op, const OptionT &option, StringRef pass) {
  return getTargetProfile(op, StringRef(option.getValue()), option.hasValue(),
                          pass);
}

} // namespace mlir::ncore

#endif // SEAM_DIALECT_NCORE_NCORETARGET_H
