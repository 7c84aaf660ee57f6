//===- NcorePasses.h - ncore codegen passes ---------------------*- C++ -*-===//
//
// ncore-double-buffer, ncore-allocate, ncore-assign-engines, ncore-schedule,
// ncore-split-dma and ncore-inline-calls (NcorePasses.td); the emission
// passes are in lowering/target.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_TRANSFORMS_NCOREPASSES_H
#define SEAM_LOWERING_TRANSFORMS_NCOREPASSES_H

#include "dialect/ncore/NcoreOps.h"
#include "dialect/ncore/NcoreTarget.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ncore {

#define GEN_PASS_DECL
#include "lowering/transforms/NcorePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/transforms/NcorePasses.h.inc"

/// Set by ncore-allocate. On a program: the SBUF / PSUM bytes per partition
/// it uses (offsets + sizes, its inlined kernel calls included), which a
/// caller reserves when it inlines it. On an ncore.call_kernel: where in the
/// caller's SBUF / PSUM the callee's bytes start (ncore-inline-calls adds it
/// to every on-chip alloc of the inlined callee).
/// Name of the unit attribute ncore-schedule leaves on a scheduled program
/// (ncore-double-buffer leaves such a program alone; codegen requires it).
constexpr llvm::StringLiteral kScheduledAttrName = "ncore.scheduled";
constexpr llvm::StringLiteral kSbufExtentAttr = "ncore.sbuf_extent";
constexpr llvm::StringLiteral kPsumExtentAttr = "ncore.psum_extent";
constexpr llvm::StringLiteral kSbufBaseAttr = "ncore.sbuf_base";
constexpr llvm::StringLiteral kPsumBaseAttr = "ncore.psum_base";

} // namespace mlir::ncore

#endif // SEAM_LOWERING_TRANSFORMS_NCOREPASSES_H
