//===- DeviceSupport.h - which seam ops the ncore lowering takes -*- C++
//-*-===//
//
// The shapes the device lowering (lowering/conversion) handles, stated once:
// the lowering checks its ops with these predicates, and seam-place-on-host
// moves what they refuse (an imported graph's general broadcasts and
// transposes) to the host, so that such a graph still runs.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_DIALECT_SEAM_DEVICESUPPORT_H
#define SEAM_DIALECT_SEAM_DEVICESUPPORT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include <map>
#include <string>
#include <utility>

namespace mlir::seam {

/// A tensor as the device lays it out: rows (every dimension but the last)
/// x columns (the last).
std::pair<int64_t, int64_t> rowsAndCols(llvm::ArrayRef<int64_t> shape);

/// How a binary operand maps onto the result's rows x cols.
enum class BroadcastKind { None, Rows, Unsupported };
BroadcastKind classifyBroadcast(llvm::ArrayRef<int64_t> operand,
                                llvm::ArrayRef<int64_t> result);

/// A permutation the device lowers: one that keeps the last dimension, or
/// swaps the last two and keeps the others.
bool isLowerableTransposePerm(llvm::ArrayRef<int64_t> perm);

/// Why the ncore lowering cannot lower `op` as it is typed ("" when it can,
/// or when the op runs on the host anyway).
std::string deviceUnsupportedReason(Operation *op);

/// Discardable unit attribute seam-place-on-host puts on an op the device
/// does not lower: the op runs on the host (FusionClassInterface's
/// needsHostFallback is true).
constexpr llvm::StringLiteral kOnHostAttrName = "seam.on_host";

/// Function attributes recording the import's recovery for the tools:
/// seam-recognize's fused ops by kind ({linear = 4, attention = 1, ...}),
/// and seam-place-on-host's host ops by op name ({"seam.exp" = 2, ...}).
constexpr llvm::StringLiteral kRecognisedAttrName = "seam.recognised";
constexpr llvm::StringLiteral kHostOpsAttrName = "seam.host_ops";
/// {name = count : i64, ...}: the value of those two attributes.
DictionaryAttr countsAttr(MLIRContext *ctx,
                          const std::map<std::string, int64_t> &counts);

} // namespace mlir::seam

#endif
