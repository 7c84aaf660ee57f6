//===- NcorePasses.h - ncore codegen passes ---------------------*- C++ -*-===//
//
// ncore-allocate, ncore-schedule, ncore-emit and ncore-dump (NcorePasses.td).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_NCOREPASSES_H
#define SEAM_LOWERING_NCOREPASSES_H

#include "dialect/ncore/NcoreOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ncore {

#define GEN_PASS_DECL
#include "lowering/NcorePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/NcorePasses.h.inc"

/// Registers the codegen passes with the global registry (seam-opt).
inline void registerNcoreCodegenPasses() { registerNcorePasses(); }

} // namespace mlir::ncore

#endif // SEAM_LOWERING_NCOREPASSES_H
