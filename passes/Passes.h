//===- Passes.h - seam graph passes -----------------------------*- C++ -*-===//
#ifndef SEAM_PASSES_PASSES_H
#define SEAM_PASSES_PASSES_H

#include "dialect/seam/SeamOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::seam {

/// How seam-form-regions groups ops into programs (see Passes.td).
enum class RegionMode { Eager, Compile };
llvm::StringRef stringifyRegionMode(RegionMode mode);

/// Which operands of a seam.attention (bit 0 q, 1 k, 2 v) `v` reaches
/// through shape, norm, rope and elementwise ops without crossing a linear
/// (FuseQkv.cpp): seam-fuse-qkv groups projections by it, seam-recognize
/// tells a packed in_proj from other linears read by three slices.
unsigned attentionRoles(Value v);

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Options of the named pipeline `seam-pipeline{mode=... kernels=...}`.
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<RegionMode> mode{
      *this, "mode", llvm::cl::desc("eager or compile"),
      llvm::cl::init(RegionMode::Compile),
      llvm::cl::values(
          clEnumValN(RegionMode::Eager, "eager",
                     "one program per block, split at kernel calls"),
          clEnumValN(RegionMode::Compile, "compile",
                     "one program per step, kernel calls inside"))};
  ListOption<std::string> kernels{*this, "kernels",
                                  llvm::cl::desc("Kernels to insert")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("target the kernels=auto decision simulates (trn1, "
                     "trn2)"),
      llvm::cl::init("trn1")};
  Option<bool> share{*this, "share", llvm::cl::desc("Share identical programs"),
                     llvm::cl::init(true)};
  Option<bool> remarks{*this, "remarks",
                       llvm::cl::desc("Explain each decision with a remark"),
                       llvm::cl::init(true)};
};

/// fuse-qkv, insert-kernels, fuse-rope-attention, fuse-norm-modulation,
/// fuse-linear-activation, form-regions, outline.
void buildSeamPipeline(OpPassManager &pm, const PipelineOptions &options);

/// Registers the passes and `seam-pipeline`.
void registerSeamPassesAndPipelines();

} // namespace mlir::seam

#endif // SEAM_PASSES_PASSES_H
