//===- SeamBase.td - seam dialect, enums and interfaces ----*- tablegen -*-===//
//
// The graph-level dialect of seam: transformer blocks and FFT mixers on
// tensors with value semantics.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_BASE_TD
#define SEAM_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Seam_Dialect : Dialect {
  let name = "seam";
  let cppNamespace = "::mlir::seam";
  let summary = "Graph dialect for transformer blocks and FFT mixers";
  let description = [{
    Ops with value semantics over ranked tensors of f32 or bf16 (complex<f32>
    for fft/ifft). A model is one `func.func` whose body is a sequence of
    `seam.block` regions; `seam.param` values are the weights (named, shaped,
    deterministically initialised, so a model file is self-contained).
    Passes turn blocks into `seam.fusion` regions (programs) and matched
    subgraphs into opaque `seam.kernel_call`s.
  }];
  let usePropertiesForAttributes = 1;
  let extraClassDeclaration = [{
    /// Installed by the kernels library (a dialect extension): checks a
    /// seam.kernel_call against the kernel registry.
    using KernelCallHook =
        std::function<::mlir::LogicalResult(::mlir::Operation *)>;
    void setKernelCallHook(KernelCallHook hook) { kernelCallHook = std::move(hook); }
    const KernelCallHook &getKernelCallHook() const { return kernelCallHook; }

  private:
    KernelCallHook kernelCallHook;
  public:
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Seam_ParamInit : I32EnumAttr<"ParamInit",
    "deterministic initialiser of a seam.param", [
      I32EnumAttrCase<"zeros", 0>,
      I32EnumAttrCase<"ones", 1>,
      I32EnumAttrCase<"normal", 2>,
      I32EnumAttrCase<"uniform", 3>,
      I32EnumAttrCase<"rope_cos", 4>,
      I32EnumAttrCase<"rope_sin", 5>,
      I32EnumAttrCase<"data", 6>
    ]> {
  let cppNamespace = "::mlir::seam";
}

def Seam_ReduceKind : I32EnumAttr<"ReduceKind", "a reduction of seam.reduce", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>
    ]> {
  let cppNamespace = "::mlir::seam";
}

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def Seam_FusionClassInterface : OpInterface<"FusionClassInterface"> {
  let cppNamespace = "::mlir::seam";
  let description = [{
    How an op may be fused with its neighbours, in the spirit of TVM's op
    patterns: elementwise < injective < reduction < output-fusable < opaque.
    Passes ask this interface instead of testing op names. Ops declare their
    class with one of the `Seam_*Fusion` traits; ops whose lowering needs the
    host (complex FFTs: the device has no complex dtype) also carry
    `Seam_HostFallback`.
  }];
  let methods = [
    InterfaceMethod<"The fusion class of this op.",
      "::mlir::seam::FusionClass", "getFusionClass", (ins), "",
      [{ return ::mlir::seam::detail::fusionClassOf<ConcreteOp>(); }]>,
    InterfaceMethod<[{True when, without a kernel, the op runs on the host
      (device has no complex dtype; a primitive; or seam-place-on-host found
      the device lowering does not take it: `seam.on_host`): it splits
      program regions.}],
      "bool", "needsHostFallback", (ins), "",
      [{ return ConcreteOp::template hasTrait<
           ::mlir::OpTrait::seam::HostFallback>() ||
           $_op->hasAttr("seam.on_host"); }]>
  ];
}

def Seam_ElementwiseFusion : NativeOpTrait<"seam::ElementwiseFusion">;
def Seam_InjectiveFusion : NativeOpTrait<"seam::InjectiveFusion">;
def Seam_ReductionFusion : NativeOpTrait<"seam::ReductionFusion">;
def Seam_OutputFusableFusion : NativeOpTrait<"seam::OutputFusableFusion">;
def Seam_OpaqueFusion : NativeOpTrait<"seam::OpaqueFusion">;
def Seam_HostFallback : NativeOpTrait<"seam::HostFallback">;
/// Rejects tensors too large to ever hold (before anything is allocated).
def Seam_BoundedSize : NativeOpTrait<"seam::BoundedSize">;

#endif // SEAM_BASE_TD
