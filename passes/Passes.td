//===- Passes.td - seam graph passes -----------------------*- tablegen -*-===//
//
// The graph passes that either fuse or isolate. Each pass explains its
// decisions with a remark per accepted or rejected site (check them with
// -verify-diagnostics) and counts its work in PassCounters (Statistics.h),
// printed by seam-opt -mlir-pass-statistics.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_PASSES_TD
#define SEAM_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeamFuseQkv : Pass<"seam-fuse-qkv", "func::FuncOp"> {
  let summary = "Fuse linears that read the same input into one linear";
  let description = [{
    Two or more `seam.linear`s reading the same value with the same K, the
    same element type and all-or-no bias become one linear over the weights
    concatenated along N (`seam.concat ... dim 1`, a load-time expression of
    parameters), followed by `seam.slice`s. Exact: each output column is the
    same dot product as before. Three linears (q, k, v) is the common case;
    two (k, v) fuse too.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamFuseRopeAttention : Pass<"seam-fuse-rope-attention", "func::FuncOp"> {
  let summary = "Fold the rope feeding q and k into the attention";
  let description = [{
    `attention(rope(q, c, s), rope(k, c, s), v)` becomes
    `attention(q, k, v) rope(c, s)`. Also through a sequence concatenation of
    per-stream ropes (Flux double-stream blocks): rope is position-wise, so
    `concat(rope(a, ca, sa), rope(b, cb, sb))` equals
    `rope(concat(a, b), concat(ca, cb), concat(sa, sb))`.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamFuseNormModulation
    : Pass<"seam-fuse-norm-modulation", "func::FuncOp"> {
  let summary = "Fold a per-feature modulation of layer_norm into the norm";
  let description = [{
    `n = layer_norm(x)` followed by `n + n * s + h` (adaLN: `n * (1 + s) +
    h`), `n * s + h`, `n * s` or `n + h`, with s and h per-feature ([D], or
    D elements with leading dims of 1), becomes one `layer_norm x scale s
    bias h` (with `scale_offset = 1` for the adaLN form): the lowering then
    applies the modulation in the pass that already scales by 1 / std,
    rather than in up to three more elementwise passes over the activation.
    Each intermediate value must have no other user.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamFuseLinearActivation
    : Pass<"seam-fuse-linear-activation", "func::FuncOp"> {
  let summary = "Fold gelu / silu of a linear into the linear's epilogue";
  let description = [{
    `act(linear(x, W, b))` with act gelu, gelu_tanh or silu, when the
    activation is the linear's only user, becomes `linear(x, W, b)
    {activation = act}`: the lowering applies it as each output block leaves
    PSUM (one Scalar-engine pass in place of the evacuation copy) instead of
    a separate pass over the result.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamOverlapIndependent
    : Pass<"seam-overlap-independent", "func::FuncOp"> {
  let summary = "Place per-sample argument-only work where it overlaps";
  let description = [{
    Engines issue in program order, so an op's place decides what it can
    overlap. Per-sample ops (one-row results) that depend only on the
    function's arguments (adaLN's modulation matvec and its all_gather)
    move, before their first use:
    - a matvec streaming a weight argument, just before the last attention
      that has no other guest (the lowering runs it inside the attention's
      pipeline, whose DMA queues are idle), else just before the last linear
      of >= 512 rows (run inside that linear's slab loop, in its DMA slack);
      its readers then go just before their own first use (an all_gather
      just after the last all_reduce that first use depends on);
    - other such ops, just after the last layer_norm, where the DMA queues
      and the Tensor engine are idle while the norm occupies the vector
      engines.
    Values are unchanged; only the order is. Each moved op (views aside) is
    a remark; counters: `moved`, `norms-overlapped`, `attentions-hosting`,
    `linears-hosting`.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamFuseLinearScale : Pass<"seam-fuse-linear-scale", "func::FuncOp"> {
  let summary = "Fold a product by a row (adaLN's gate) into the linear's epilogue";
  let description = [{
    `linear(x, W) * g` with g a row of N elements broadcast over the tokens,
    when the product is the linear's only user, becomes `linear(x, W) scale
    g`: the lowering multiplies each block as it leaves PSUM (the evacuation
    itself when there is no bias or activation) instead of a separate pass.
    Also through an all_reduce when g comes from a collective (the same on
    every rank): all_reduce(linear) * g = all_reduce(linear * g).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamInsertKernels : Pass<"seam-insert-kernels", "func::FuncOp"> {
  let summary = "Replace matched ops by opaque NKI-style kernel calls";
  let description = [{
    For each kernel named in `kernels`, every op of the kernel's root kind
    is checked against the kernel's published constraints (kernels/Registry):
    a site that holds becomes a `seam.kernel_call`, a site that fails keeps
    the compiler's own lowering and gets a remark naming the constraint.

    `kernels=auto` (every registered kernel a candidate) or
    `kernels=auto:qkv,flash-attn` decides per site from simulated cost: each
    distinct block holding candidate sites is cut out as a window, and the
    rest of the pipeline (`mode`), code generation and the emulated device
    (`target`) time one warm step of it with and without each candidate.
    Kernels are tried greedily in list order, each against the best set found
    so far (a kernel replacing the same op kind as an accepted one is tried
    in its place); a candidate stays only when the step is strictly faster.
    Structurally identical blocks (same ops, types and attributes, parameter
    names aside) are decided once. Each decision is a remark with both times
    and the part of the step that moved most, and the step function records
    them in `seam.kernel_decisions` for seam-report and seam-run --json. The
    step model is installed by the driver (seam-opt, seam-run).
  }];
  let options = [
    ListOption<"kernels", "kernels", "std::string",
               "Kernels to insert (qkv, rope, flash-attn, flash-attn-stable, "
               "fft, ifft, fourier-mix, fftconv), or `auto` / "
               "`auto:qkv,flash-attn` to let simulated cost decide">,
    Option<"mode", "mode", "::mlir::seam::RegionMode",
           "::mlir::seam::RegionMode::Compile",
           "Region mode the auto decision simulates (eager or compile)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::seam::RegionMode::Eager, "eager",
                        "one program per block, split at kernel calls"),
             clEnumValN(::mlir::seam::RegionMode::Compile, "compile",
                        "one program per step, kernel calls inside"))}]>,
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target the auto decision simulates (trn1 or trn2)">,
    Option<"share", "share", "bool", "true",
           "Whether the simulated pipeline shares identical programs (auto)">,
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamFormRegions : Pass<"seam-form-regions", "func::FuncOp"> {
  let summary = "Group ops into seam.fusion regions, one program each";
  let description = [{
    `mode=eager` follows lazy-tensor semantics: one region per block, split
    at every kernel call (each call is its own launch). `mode=compile` makes
    one region for the whole step and keeps kernel calls inside as opaque
    sub-programs. Host-fallback ops (FFT ops without a kernel: the compiler
    lowers no DFT itself) always split regions. Parameters are hoisted: they are
    loaded to HBM once. Blocks are flattened; each region records its block.
  }];
  let options = [
    Option<"mode", "mode", "::mlir::seam::RegionMode",
           "::mlir::seam::RegionMode::Compile",
           "eager (one program per block fragment) or compile (one per step)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::seam::RegionMode::Eager, "eager",
                        "one program per block, split at kernel calls"),
             clEnumValN(::mlir::seam::RegionMode::Compile, "compile",
                        "one program per step, kernel calls inside"))}]>,
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamOutlineRegions : Pass<"seam-outline-regions", "ModuleOp"> {
  let summary = "Outline each seam.fusion into a program func, sharing equals";
  let description = [{
    Each region becomes a private `func.func` tagged `seam.program` (the
    unit that is compiled, cached and launched) called from the step.
    Regions that are structurally identical with the same types become one
    program called several times (program sharing: the cache reuse the
    source observes across identical blocks). `share=false` outlines every
    region as its own program (the ablation of sharing).
  }];
  let options = [
    Option<"share", "share", "bool", "true",
           "Reuse one program for structurally identical regions">
  ];
  let dependentDialects = ["func::FuncDialect"];
}

def SeamReport : Pass<"seam-report", "ModuleOp"> {
  let summary = "Print a per-model summary of programs, kernels and launches";
  let description = [{
    Prints (to stderr, or `file`) a table: blocks, programs (distinct and
    launched), kernel calls by name, host-fallback ops, launches per step,
    bytes crossing opaque boundaries and region boundaries.
  }];
  let options = [
    Option<"file", "file", "std::string", "\"-\"",
           "Where to write the table ('-' for stderr)">
  ];
}


def SeamRecognize : Pass<"seam-recognize", "func::FuncOp"> {
  let summary = "Recover fused ops (linear, norms, activations, attention) "
                "from an imported primitive graph";
  let description = [{
    An exported graph (ONNX) arrives as primitives. This pass rewrites the
    patterns they form into seam's fused ops: matmul (+ add) with a
    parameter weight into linear (a packed in_proj read by three equal
    column slices is marked as fused QKV); the erf and tanh forms of GELU
    into gelu and gelu_tanh, x * sigmoid(x) into silu; rotate-half RoPE into
    rope; the expanded layer norm and RMS norm (with
    their scale and bias) into layer_norm and rms_norm; softmax(q k^T * s) v
    over [B, H, S, D] into attention. Constants are checked exactly and
    intermediates must have no other users; a near miss keeps its
    primitives and gets a remark saying what did not hold.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamShardTp : Pass<"seam-shard-tp", "ModuleOp"> {
  let summary = "Shard a recognised (imported) graph over tensor-parallel "
                "ranks";
  let description = [{
    After seam-recognize: every linear starts a Megatron-style region that
    must close. A column-parallel linear (its weight's columns split over
    the ranks, a packed QKV part by part) feeds data movement, elementwise
    ops, norms over another axis, rope and attention (sharded by heads)
    until a row-parallel linear (its weight's rows split) whose partial sum
    a seam.all_reduce completes (its bias added after). Parameters are
    sliced for real: the IR holds rank 0's slice as the value and every
    rank's slice in `seam.rank_values`, which seam-run's functional run
    gives each rank. A linear whose region does not close (a head count
    not divisible by tp, an op the rules do not cover between, a sharded
    value reaching the output) fails the pass with the reason; remarks
    name each region sharded.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", "1", "Tensor-parallel ranks">,
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

def SeamPlaceOnHost : Pass<"seam-place-on-host", "func::FuncOp"> {
  let summary = "Run on the host what the device lowering does not take";
  let description = [{
    Marks `seam.on_host` each op whose types the ncore lowering does not
    handle (dialect/seam/DeviceSupport.h: a transpose that moves the last
    dimension, a broadcast other than over all rows, a scalar), so that
    seam-form-regions splits programs at it and seam-run runs it on the
    host; remarks name each such op and each primitive left unrecognised.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", "true",
           "Explain each decision with a remark (on stderr)">
  ];
  let dependentDialects = ["seam::SeamDialect"];
}

#endif // SEAM_PASSES_TD
