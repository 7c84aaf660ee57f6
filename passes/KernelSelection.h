//===- KernelSelection.h - Reading a `kernels=` list ------------*- C++ -*-===//
//
// One reading of a kernel list for every place that takes one
// (seam-insert-kernels{kernels=...}, seam-pipeline, seam-run --kernels).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_KERNELSELECTION_H
#define SEAM_PASSES_KERNELSELECTION_H

#include "kernels/Registry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir::seam {

/// What a kernel list asks for: these kernels at every site where their
/// constraints hold, or (`automatic`) these kernels as candidates the
/// compiler keeps only where the simulated step is faster with them.
struct KernelSelection {
  llvm::SmallVector<const KernelInfo *> kernels;
  bool automatic = false;
  /// `auto` alone: every registered kernel, not a list the user named.
  bool allCandidates = false;

  /// The list in its one form: names in order, each once; `auto` or
  /// `auto:a,b` in automatic mode; empty for none.
  std::vector<std::string> canonical() const;
};

/// Reads a kernel list. Items are comma-separated names (an item may itself
/// hold commas: "qkv, rope"); spaces around a name are ignored, empty items
/// and `none` select nothing, a repeated name counts once. `auto` (every
/// registered kernel a candidate) or `auto:a,b,...` (these candidates) must
/// come first. `none` or `auto` with a kernel list in the wrong place is an
/// error. Returns nullopt and sets `error` (naming the item and listing the
/// registered kernels) when a name is unknown.
std::optional<KernelSelection> selectKernels(llvm::ArrayRef<std::string> items,
                                             std::string &error);

} // namespace mlir::seam

#endif // SEAM_PASSES_KERNELSELECTION_H
