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

/// The kernels a list names, in the order given. Items are comma-separated
/// names (an item may itself hold commas: "qkv, rope"); spaces around a name
/// are ignored, empty items and `none` select nothing, a repeated name counts
/// once. `none` together with a kernel name is an error. Returns nullopt and
/// sets `error` (naming the item and listing the registered kernels) when a
/// name is unknown.
std::optional<llvm::SmallVector<const KernelInfo *>>
selectKernels(llvm::ArrayRef<std::string> items, std::string &error);

} // namespace mlir::seam

#endif // SEAM_PASSES_KERNELSELECTION_H
