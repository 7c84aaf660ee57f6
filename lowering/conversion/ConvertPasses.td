//===- ConvertPasses.td - seam -> ncore conversion ---------*- tablegen -*-===//

#ifndef SEAM_CONVERT_PASSES_TD
#define SEAM_CONVERT_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeamPlanPairings : Pass<"seam-plan-pairings", "ModuleOp"> {
  let summary = "Decide which seam ops convert-seam-to-ncore lowers together";
  let description = [{
    For every `func.func` tagged `seam.program`, decides the fusion pairings
    that `convert-seam-to-ncore` carries out (lowering/conversion/Pairing.h)
    and records each as two integer attributes with the same pair id, one on
    each op (ids unique within the program, numbered in program order):

      - interleaving: `seam.interleave_host` on an op whose lowering takes a
        guest (an attention; a linear of many rows) and
        `seam.interleave_guest` on the guest (a linear without bias or
        scale, its weight a program argument; for a linear host, the
        one-row linear just before it), the nearest earlier such op not past
        another host whose results are all read after the host;
      - row production: `seam.row_producer` on an elementwise binary and
        `seam.row_consumer` on a norm that is its first reader and reads it
        as its input (every other reader after the norm);
      - column consumption: `seam.column_producer` on a linear and
        `seam.column_consumer` on the all_reduce of its result, its only
        reader.

    Ops marked `seam.no_fuse` take part in no row or column pair, and one
    marked `seam.materialize` is no guest. Pairings recorded before are
    replaced. The conversion still lowers a paired op alone when the pair
    does not fit the SBUF left at that point (or the host's plan).

    ```mlir
    %m = seam.linear %vec, %wm {seam.interleave_guest = 0 : i64} : ...
    %o = seam.linear %x, %w {seam.interleave_host = 0 : i64} : ...
    ```
  }];
}

def ConvertSeamToNcore : Pass<"convert-seam-to-ncore", "ModuleOp"> {
  let summary = "Lower outlined seam programs to ncore ISA programs";
  let description = [{
    Every `func.func` tagged `seam.program` becomes an `ncore.program` of the
    same name inside a nested `module @ncore` (the seam func stays: the step
    function still calls it by name, and the host plan reads it). The func
    gets `seam.ncore_program = @ncore::@<name>`.

    Program arguments, in order (all HBM tiles of the tensors' shapes):
      1. one per func argument = per call operand (`ncore.role` "param" when
         every call site passes a `seam.param` or a load-time expression of
         params such as the concatenated q/k/v weight, else "input");
      2. one per func result = per call result ("output");
      3. the constants that called kernels need ("constant", with the
         kernel's `seam.constant` description), one per distinct constant.

    The pairings recorded by `seam-plan-pairings` (interleaving, row
    production, column consumption) are carried out when they fit; a
    program without them lowers every op alone, and a malformed or
    inconsistent pairing attribute is an error naming it.

    Intermediates stay in SBUF (rows on partitions) while the per-partition
    budget (target SBUF minus a third for working tiles) allows, else they
    spill to HBM scratch (`name = "spillN"`); tensors of few long rows stay in
    HBM (`narrowN`); layout changes that move rows across partitions go
    through HBM (`relayoutN`). The program carries `seam.spills` and
    `seam.sbuf_peak_bytes`. Loops stay loops: token tiles, K accumulation, N
    blocks, heads and key blocks are `ncore.loop`s.

    A `seam.kernel_call` inside a program becomes `ncore.call_kernel` of the
    kernel's program, built by the kernels library
    (`getOrBuildKernelProgram`: `@kernel_<name>_<hash>`, shared by calls with
    the same signature; arguments = call operands, results, constants), or a
    private declaration `@kernel_<name>_<n>` tagged `seam.kernel` /
    `seam.config` for a kernel without a builder. Operands and results cross
    the call through HBM. Top-level kernel calls (eager mode) get the same
    programs and a `seam.ncore_program` attribute naming them.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"trn1\"",
           "Target (trn1 or trn2) when the module has no ncore.target, "
           "which the pass then sets">,
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "Explain each tiling decision with a remark (seam-run turns them "
           "off: it shows warnings and errors only)">,
    Option<"kernelBoundary", "kernel-boundary", "std::string",
           /*default=*/"\"barrier\"",
           "Kernel calls' boundary semantics: barrier (every engine drains "
           "before and after the body) or dependency (the body waits for "
           "the work it conflicts with, and only conflicting work waits "
           "for it; ncore.boundary on each ncore.call_kernel)">
  ];
  let dependentDialects = ["ncore::NcoreDialect"];
}

#endif // SEAM_CONVERT_PASSES_TD
