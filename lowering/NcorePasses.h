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

/// Set by ncore-allocate. On a program: the SBUF / PSUM bytes per partition
/// it uses (offsets + sizes, its inlined kernel calls included), which a
/// caller reserves when it inlines it. On an ncore.call_kernel: where in the
/// caller's SBUF / PSUM the callee's bytes start (the emitter adds it to
/// every on-chip access of the inlined callee).
constexpr llvm::StringLiteral kSbufExtentAttr = "ncore.sbuf_extent";
constexpr llvm::StringLiteral kPsumExtentAttr = "ncore.psum_extent";
constexpr llvm::StringLiteral kSbufBaseAttr = "ncore.sbuf_base";
constexpr llvm::StringLiteral kPsumBaseAttr = "ncore.psum_base";

/// Registers the codegen passes with the global registry (seam-opt).
inline void registerNcoreCodegenPasses() { registerNcorePasses(); }

} // namespace mlir::ncore

#endif // SEAM_LOWERING_NCOREPASSES_H
