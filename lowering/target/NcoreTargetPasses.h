//===- NcoreTargetPasses.h - ncore program emission ---------*- C++ -*-===//
//
// ncore-emit and ncore-dump (NcoreTargetPasses.td), and the registration of
// every ncore codegen pass (transforms and emission).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_TARGET_NCORETARGETPASSES_H
#define SEAM_LOWERING_TARGET_NCORETARGETPASSES_H

#include "lowering/transforms/NcorePasses.h"

namespace mlir::ncore {

#define GEN_PASS_DECL
#include "lowering/target/NcoreTargetPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/target/NcoreTargetPasses.h.inc"

/// Registers the codegen passes with the global registry (seam-opt).
inline void registerNcoreCodegenPasses() {
  registerNcorePasses();
  registerNcoreTargetPasses();
}

} // namespace mlir::ncore

#endif // SEAM_LOWERING_TARGET_NCORETARGETPASSES_H
