//===- PlaceOnHost.cpp - seam-place-on-host -------------------------------===//
//
// An imported graph can hold ops the device lowering does not take as they
// are typed (a transpose that moves the last dimension, a general
// broadcast, a scalar): those are marked `seam.on_host`, so seam-form-regions
// splits programs at them and seam-run runs them on the host, with a remark
// that names the op and the reason. Primitives left unrecognised run on
// the host by their op (Seam_HostFallback); they get the same remark here,
// so that nothing an import leaves behind runs on the host unannounced.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/DeviceSupport.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include <map>

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMPLACEONHOST
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

struct PlaceOnHostPass
    : public seam::impl::SeamPlaceOnHostBase<PlaceOnHostPass> {
  using SeamPlaceOnHostBase::SeamPlaceOnHostBase;
  PassCounter numPlaced{"seam-place-on-host", "placed",
                        "Ops the device does not lower, moved to the host"};
  PassCounter numPrimitive{"seam-place-on-host", "primitive",
                           "Unrecognised primitives (run on the host)"};

  void runOnOperation() override {
    // Host ops by op name, recorded on the function as `seam.host_ops`.
    std::map<std::string, int64_t> byOp;
    getOperation().walk([&](Operation *op) {
      auto fc = dyn_cast<FusionClassInterface>(op);
      if (!fc || isa<ParamOp>(op) || op->hasAttr(kOnHostAttrName))
        return;
      if (fc.needsHostFallback()) {
        // FFT ops run on the host when no kernel takes them (their remark
        // is seam-insert-kernels'); a primitive always does.
        if (isa<FftOp, IfftOp, FourierMixOp, FftConvOp>(op))
          return;
        // ONNX's (re, im) pairs around an FFT: a view, on the host with it.
        if (isa<AsComplexOp, AsRealOp>(op))
          return;
        ++numPrimitive;
        ++byOp[op->getName().getStringRef().str()];
        decisionRemark(remarks, op->getLoc())
            << "seam-place-on-host: " << op->getName()
            << " runs on the host: no fused op took it (seam-recognize) and "
               "it has no device lowering of its own";
        return;
      }
      std::string why = deviceUnsupportedReason(op);
      if (why.empty())
        return;
      op->setAttr(kOnHostAttrName, UnitAttr::get(op->getContext()));
      ++numPlaced;
      ++byOp[op->getName().getStringRef().str()];
      decisionRemark(remarks, op->getLoc())
          << "seam-place-on-host: " << op->getName()
          << " runs on the host: " << why;
    });
    if (byOp.empty())
      return;
    getOperation()->setAttr(kHostOpsAttrName, countsAttr(&getContext(), byOp));
  }
};

} // namespace
