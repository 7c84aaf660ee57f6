//===- Pipeline.cpp - seam-pipeline and registration ----------------------===//
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"

using namespace mlir;
using namespace mlir::seam;

llvm::StringRef seam::stringifyRegionMode(RegionMode mode) {
  return mode == RegionMode::Eager ? "eager" : "compile";
}

void seam::buildSeamPipeline(OpPassManager &pm, const PipelineOptions &opts) {
  // The compiler's own QKV fusion runs first: the qkv kernel replaces the
  // fused projection. Kernels are inserted before rope is folded into
  // attention, so a rope or attention kernel sees its own op; sites a kernel
  // rejects keep the compiler's fusion.
  // An imported primitive graph first gets its fused ops back.
  SeamRecognizeOptions rco;
  rco.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamRecognize(rco));
  SeamFuseQkvOptions qo;
  qo.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamFuseQkv(qo));
  SeamInsertKernelsOptions ko;
  ko.kernels = opts.kernels;
  ko.remarks = opts.remarks;
  ko.mode = opts.mode; // what kernels=auto simulates
  ko.target = opts.target;
  ko.share = opts.share;
  pm.addNestedPass<func::FuncOp>(createSeamInsertKernels(ko));
  SeamFuseRopeAttentionOptions fo;
  fo.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamFuseRopeAttention(fo));
  SeamFuseNormModulationOptions no;
  no.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamFuseNormModulation(no));
  SeamFuseLinearActivationOptions ao;
  ao.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamFuseLinearActivation(ao));
  SeamFuseLinearScaleOptions so;
  so.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamFuseLinearScale(so));
  SeamPlaceOnHostOptions ho;
  ho.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamPlaceOnHost(ho));
  SeamFormRegionsOptions ro;
  ro.mode = opts.mode;
  ro.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamFormRegions(ro));
  SeamOutlineRegionsOptions oo;
  oo.share = opts.share;
  pm.addPass(createSeamOutlineRegions(oo));
  // Identical work computed once (the conditioning's silu, repeated by
  // every block of the import), before scheduling places what remains.
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  SeamOverlapIndependentOptions vo;
  vo.remarks = opts.remarks;
  pm.addNestedPass<func::FuncOp>(createSeamOverlapIndependent(vo));
}

void seam::registerSeamPassesAndPipelines() {
  registerSeamPasses();
  PassPipelineRegistration<PipelineOptions>(
      "seam-pipeline",
      "recognize, fuse-qkv, insert-kernels, fuse-rope-attention, "
      "fuse-norm-modulation, fuse-linear-activation, fuse-linear-scale, "
      "place-on-host, form-regions, "
      "outline-regions, cse, overlap-independent",
      buildSeamPipeline);
}
