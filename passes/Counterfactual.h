//===- Counterfactual.h - a kernel site compiled five ways -------*- C++
//-*-===//
//
// What a kernel costs at a site is the difference between two compiles of
// the same model: the compiler's own code there, and the kernel behind its
// opaque boundary. `seam-run --explain-kernels` splits that difference by
// compiling the steps in between, each changing one thing:
//
//   fused       the compiler's lowering, every fusion with its neighbours;
//   no-fusion   the same, with no fusion taking the site's op in (graph
//               passes and lowering pairs: seam.no_fuse);
//   round-trip  also reading its operands from HBM and writing its results
//               there, as a kernel does (seam.materialize), but transparent
//               to the scheduler;
//   boundary    the compiler's lowering of the op as the body of an opaque
//               kernel call (seam.kernel_call with a callee);
//   kernel      the registered kernel.
//
// Consecutive differences are the lost fusion, the HBM round trip, the lost
// overlap and the body difference; they sum to the kernel's delta. An op the
// compiler runs on the host (fourier_mix, fftconv) has no device body: its
// no-fusion, round-trip and boundary variants are the fused one.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_COUNTERFACTUAL_H
#define SEAM_PASSES_COUNTERFACTUAL_H

#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::seam {

enum class SiteVariant { Fused, NoFusion, RoundTrip, Boundary, Kernel };

/// The variants in the order their differences are taken.
constexpr SiteVariant kSiteVariants[] = {
    SiteVariant::Fused, SiteVariant::NoFusion, SiteVariant::RoundTrip,
    SiteVariant::Boundary, SiteVariant::Kernel};

llvm::StringRef stringifySiteVariant(SiteVariant v);

/// A detached func `name` holding a copy of `op` alone: its operands are
/// the arguments, its results returned (the counterfactual markers left
/// out). A boundary body, and the one-op step a body is timed alone in.
func::FuncOp outlineOp(Operation *op, StringRef name);

/// Puts `variant` of a kernel site in place: `site` is an op `kernel`
/// replaces (its constraints hold), in a module before
/// seam-fuse-rope-attention. Boundary bodies are private funcs at the end
/// of `module`, one per structurally identical site (`bodies` remembers
/// them across calls). Returns the op at the site afterwards.
Operation *applySiteVariant(Operation *site, const KernelInfo &kernel,
                            SiteVariant variant, ModuleOp module,
                            llvm::StringMap<func::FuncOp> &bodies);

} // namespace mlir::seam

#endif // SEAM_PASSES_COUNTERFACTUAL_H
