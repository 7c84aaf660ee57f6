//===- FuseLinearActivation.cpp - seam-fuse-linear-activation -------------===//
//
// Epilogue fusion: `act(linear(x, W, b))` with act one of gelu, gelu_tanh,
// silu becomes `linear(x, W, b) {activation = act}`. The lowering then
// applies the activation as it moves each output block out of PSUM (one
// Scalar-engine pass reading PSUM, in place of the copy it makes anyway),
// instead of a separate pass over the whole result. Legal when the
// activation is the linear's only user (else the pre-activation value would
// still be needed) and the linear has no `scale` (its activation applies
// before the scale).
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Builders.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMFUSELINEARACTIVATION
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

struct FuseLinearActivationPass
    : public seam::impl::SeamFuseLinearActivationBase<
          FuseLinearActivationPass> {
  using SeamFuseLinearActivationBase::SeamFuseLinearActivationBase;
  PassCounter numFused{"seam-fuse-linear-activation", "fused",
                       "Activations folded into their linear"};
  PassCounter numRejected{"seam-fuse-linear-activation", "rejected",
                          "Activations of a linear not folded"};

  void runOnOperation() override {
    SmallVector<Operation *> acts;
    getOperation().walk([&](Operation *op) {
      if (linearActivationName(op) &&
          op->getOperand(0).getDefiningOp<LinearOp>())
        acts.push_back(op);
    });
    for (Operation *act : acts)
      tryFuse(act);
  }

  void tryFuse(Operation *act) {
    auto lin = act->getOperand(0).getDefiningOp<LinearOp>();
    StringRef name = *linearActivationName(act);
    auto reject = [&](const Twine &why) {
      decisionRemark(remarks, act->getLoc())
          << "seam-fuse-linear-activation: " << name
          << " not folded into its linear: " << why.str();
      ++numRejected;
    };
    if (!fusible(lin) || !fusible(act))
      return reject(Twine("an op is marked ") + kNoFuseAttrName);
    if (lin.getActivation())
      return reject("the linear already applies " + *lin.getActivation());
    // The linear is act(x W + b) * scale: act(linear) would need the
    // activation after the scale, the evacuation applies it before.
    if (lin.getScale())
      return reject("the linear scales its result, and its activation "
                    "would apply before the scale");
    if (!lin->hasOneUse())
      return reject("the linear's result has other users");
    lin.setActivationAttr(StringAttr::get(act->getContext(), name));
    act->getResult(0).replaceAllUsesWith(lin.getResult());
    act->erase();
    auto shape = lin.getType().getShape();
    std::string dims;
    llvm::raw_string_ostream os(dims);
    llvm::interleave(shape, os, "x");
    decisionRemark(remarks, lin.getLoc())
        << "seam-fuse-linear-activation: " << name
        << " applied as the linear's output leaves PSUM (" << dims << ")";
    ++numFused;
  }
};

} // namespace
