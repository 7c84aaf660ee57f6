//===- ConvertPasses.td - seam -> ncore conversion ---------*- tablegen -*-===//

#ifndef SEAM_CONVERT_PASSES_TD
#define SEAM_CONVERT_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSeamToNcore : Pass<"convert-seam-to-ncore", "ModuleOp"> {
  let summary = "Lower outlined seam programs to ncore ISA programs";
  let description = [{
    Every `func.func` tagged `seam.program` becomes an `ncore.program` of the
    same name inside a nested `module @ncore` (the seam func stays: the step
    function still calls it, and the host plan reads it). Program arguments:
    one HBM tile per func argument, in order (`ncore.role` = "param" when
    every call site passes a `seam.param` or a load-time expression of
    params, else "input"), then one HBM tile per func result ("output").
    The func gets `seam.ncore_program = @ncore::@<name>`.

    Intermediates stay in SBUF (rows on partitions) while the per-partition
    budget allows, else they spill to HBM scratch (`name = "spillN"`); the
    program carries `seam.spills` and `seam.sbuf_peak_bytes`. Loops stay
    loops: K accumulation, row tiles, heads and key blocks are `ncore.loop`s.

    A `seam.kernel_call` inside a program becomes `ncore.call_kernel` of a
    declaration `ncore.program private @kernel_<name>_<n>` (one per distinct
    kernel, signature and config; arguments = call operands then results, all
    HBM) tagged `seam.kernel` and `seam.config`; its operands and results go
    through HBM. Top-level kernel calls (eager mode) get the same declarations
    and a `seam.ncore_program` attribute.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"trn1\"",
           "Target profile: trn1 or trn2 (SBUF capacity)">
  ];
  let dependentDialects = ["ncore::NcoreDialect"];
}

#endif // SEAM_CONVERT_PASSES_TD
