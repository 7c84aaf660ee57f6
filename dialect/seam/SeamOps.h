//===- SeamOps.h - seam graph dialect ---------------------------*- C++ -*-===//
#ifndef SEAM_DIALECT_SEAM_SEAMOPS_H
#define SEAM_DIALECT_SEAM_SEAMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <functional>

namespace mlir::seam {

/// Fusion classes, ordered from most to least fusible (TVM op patterns).
enum class FusionClass {
  Elementwise,
  Injective,
  Reduction,
  OutputFusable,
  Opaque,
};
llvm::StringRef stringifyFusionClass(FusionClass c);

} // namespace mlir::seam

namespace mlir::OpTrait::seam {
template <typename T>
class ElementwiseFusion : public TraitBase<T, ElementwiseFusion> {};
template <typename T>
class InjectiveFusion : public TraitBase<T, InjectiveFusion> {};
template <typename T>
class ReductionFusion : public TraitBase<T, ReductionFusion> {};
template <typename T>
class OutputFusableFusion : public TraitBase<T, OutputFusableFusion> {};
template <typename T> class OpaqueFusion : public TraitBase<T, OpaqueFusion> {};
/// Without a kernel, the op runs on the host (no complex dtype on device).
template <typename T> class HostFallback : public TraitBase<T, HostFallback> {};
LogicalResult verifyBoundedSize(Operation *op);
template <typename T> class BoundedSize : public TraitBase<T, BoundedSize> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBoundedSize(op);
  }
};
} // namespace mlir::OpTrait::seam

namespace mlir::seam::detail {
template <typename OpT> constexpr FusionClass fusionClassOf() {
  using namespace ::mlir::OpTrait::seam;
  if constexpr (OpT::template hasTrait<ElementwiseFusion>())
    return FusionClass::Elementwise;
  else if constexpr (OpT::template hasTrait<InjectiveFusion>())
    return FusionClass::Injective;
  else if constexpr (OpT::template hasTrait<ReductionFusion>())
    return FusionClass::Reduction;
  else if constexpr (OpT::template hasTrait<OutputFusableFusion>())
    return FusionClass::OutputFusable;
  else
    return FusionClass::Opaque;
}
} // namespace mlir::seam::detail

#include "dialect/seam/SeamDialect.h.inc"
#include "dialect/seam/SeamEnums.h.inc"
#include "dialect/seam/SeamInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialect/seam/SeamOps.h.inc"

namespace mlir::seam {

/// "[1, 256, 768] x bf16": how diagnostics name a tensor type.
std::string describeType(Type t);
/// "[1, 256, 768]".
std::string describeShape(llvm::ArrayRef<int64_t> shape);
/// Numpy broadcast of two shapes; failure if incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                llvm::ArrayRef<int64_t> b);
/// numpy.matmul's result shape; failure if the operands do not multiply.
FailureOr<SmallVector<int64_t>> matmulShape(llvm::ArrayRef<int64_t> a,
                                            llvm::ArrayRef<int64_t> b);
/// Product of a static shape; failure on overflow past 2^48 elements.
FailureOr<int64_t> elementCount(llvm::ArrayRef<int64_t> shape);
/// Largest element count seam accepts in one tensor (2^36).
constexpr int64_t kMaxTensorElements = int64_t(1) << 36;

/// Unit attribute of a func that is one program (seam-outline-regions puts
/// it on each outlined region; lowering compiles each such func).
constexpr llvm::StringLiteral kProgramAttrName = "seam.program";

/// Unit attribute of a func that is the body of a `seam.kernel_call` with a
/// `callee`: the compiler's lowering of a kernel site's ops behind the same
/// opaque boundary (a program of its own, called, never launched by itself).
constexpr llvm::StringLiteral kBoundaryBodyAttrName = "seam.boundary_body";

/// Counterfactual markers `seam-run --explain-kernels` puts on a kernel
/// site's op (discardable unit attributes):
///  - kNoFuseAttrName: no fusion takes the op in, at the graph level
///    (seam-fuse-*) or in the lowering (row producer / consumer pairs, a
///    norm building its reader's X^T, a linear reducing its own columns):
///    what a kernel in its place would lose, without the boundary;
///  - kMaterializeAttrName: the op reads its operands from HBM and writes
///    its results to HBM (the boundary's round trip, without its opacity).
constexpr llvm::StringLiteral kNoFuseAttrName = "seam.no_fuse";
constexpr llvm::StringLiteral kMaterializeAttrName = "seam.materialize";

/// Whether a fusion may take `op` in (no kNoFuseAttrName on it).
inline bool fusible(Operation *op) {
  return op && !op->hasAttr(kNoFuseAttrName);
}

/// The name of the unary activation op `op` as seam.linear's `activation`
/// attribute spells it (gelu, gelu_tanh, silu), or nullopt for any other
/// op. The verifier accepts exactly these names.
std::optional<llvm::StringRef> linearActivationName(Operation *op);

} // namespace mlir::seam

#endif // SEAM_DIALECT_SEAM_SEAMOPS_H
