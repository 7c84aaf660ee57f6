//===- Accounting.h - what a step costs in launches and bytes ---*- C++ -*-===//
//
// One account of a formed step (after seam-form-regions, before or after
// seam-outline-regions), shared by the form-regions statistics and the
// seam-report table.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_ACCOUNTING_H
#define SEAM_PASSES_ACCOUNTING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include <map>
#include <string>

namespace mlir::seam {

struct StepAccount {
  int64_t blocks = 0;
  int64_t regions = 0;       ///< fusion regions launched per step
  int64_t kernelCalls = 0;   ///< kernel calls executed per step
  int64_t hostOps = 0;       ///< host-fallback ops per step
  int64_t launches = 0;      ///< program launches per step
  int64_t boundaryBytes = 0; ///< through opaque boundaries (kernels, host)
  int64_t regionIoBytes = 0; ///< activations through HBM between regions
  std::map<std::string, int64_t> kernelsByName;
};

/// Bytes of a tensor type (0 for non-tensors).
int64_t bytesOf(Type t);

/// True for seam.param and expressions of parameters only (load-time values).
bool isLoadTimeValue(Value v);

/// Accounts one step function. Calls to `seam.program` funcs count as region
/// launches and are looked into for kernel calls.
StepAccount accountStep(func::FuncOp step);

} // namespace mlir::seam

#endif
