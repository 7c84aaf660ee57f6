//===- NcorePasses.td - ncore codegen passes ---------------*- tablegen -*-===//
//
// Transforms of `ncore` programs before emission: double buffering,
// allocation of on-chip memory, engine assignment and semaphores, DMA
// splitting, inlining of kernel calls. Emission is in lowering/target
// (NcoreTargetPasses.td).
// Counters go to PassCounters (passes/Statistics.h), printed by
// `seam-opt -mlir-pass-statistics`.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_LOWERING_TRANSFORMS_NCOREPASSES_TD
#define SEAM_LOWERING_TRANSFORMS_NCOREPASSES_TD

include "mlir/Pass/PassBase.td"

def NcoreAllocate : Pass<"ncore-allocate"> {
  let summary = "Place SBUF/PSUM tiles by liveness, number HBM scratch";
  let description = [{
    Runs on every `ncore.program` at or below the op it is scheduled on (so
    programs in a nested `module @ncore` are reached from the top level).
    Every `ncore.alloc` in SBUF or PSUM without an `offset` gets one: its
    live range runs from its first to its last use in program order (a use
    inside an `ncore.loop` that does not define the tile keeps it live for
    the whole loop), and a next-fit allocator per memory places it in the
    bytes of a partition (capacities from the runtime profile of `target`):
    the search starts after the previous placement and wraps around, so
    freed bytes are not refilled at once (each reuse is a dependency
    ncore-schedule must honour).
    A PSUM tile never crosses a bank. HBM scratch allocs get consecutive
    offsets in the program's scratch region. A tile larger than its memory,
    or more live bytes than the memory holds, is an error naming the tile
    and the sizes (the converter spills to HBM before this pass).
  }];
  let options = [
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target (trn1 or trn2) when no enclosing op has ncore.target">
  ];
}

def NcoreDoubleBuffer : Pass<"ncore-double-buffer"> {
  let summary = "Give DMA-refilled loop tiles a second buffer (unroll by 2)";
  let description = [{
    Before allocation: an innermost `ncore.loop` whose body refills an SBUF
    tile by DMA every iteration (the DMA writes all of it before anything in
    the body reads it; nothing outside the loop uses it) is unrolled by two
    and the second copy of the body uses a second tile, so the DMA of the
    next iteration overlaps the compute of this one once ncore-schedule has
    placed its semaphores. An odd trip count keeps one copy of the body
    after the loop. A matmul start flag of the loop's level stays on the
    first copy only. Second tiles are only added while they fit in the SBUF
    left by the program's peak (`seam.sbuf_peak_bytes` when the converter
    recorded it, else every SBUF tile at once).
  }];
  let options = [
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target (trn1 or trn2) when no enclosing op has ncore.target">
  ];
}

def NcoreAssignEngines : Pass<"ncore-assign-engines"> {
  let summary = "Choose the engine of each movable instruction";
  let description = [{
    Runs on every `ncore.program` at or below the op it is scheduled on,
    before ncore-schedule, and records its decisions in the IR: a moved
    instruction's `engine` attribute names the engine it runs on.
    Instructions that VE, SE and GpSimd can all run (tensor_copy,
    tensor_scalar, memset, ...) go to the legal engine where they would
    finish first on an estimated timeline (each engine in order, an
    instruction starting when its engine is free and the Tensor engine has
    written the tiles it reads: work an engine did long before a
    Tensor-engine phase does not keep it from the evacuations and norms
    after it); GpSimd never takes one that touches PSUM; the rest keep
    their Isa.def engine (statistic engine-moves). Costs are the runtime's
    (runtime/TimingCost.cpp) with the target profile's figures
    (the module's `ncore.target`, else the `target` option).

    DMAs are triggered from two in-order queues: loads (and HBM-to-HBM
    copies) from the DMA engine's, stores (on chip to HBM) from the Sync
    engine's, so that a store waiting for the compute that produced its
    tile holds up no load behind it (statistic stores-on-sync).

    An instruction whose `engine` attribute is already set is pinned and
    keeps it. A program already scheduled (`ncore.scheduled`) or that
    contains semaphore ops is left as it is.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target (trn1 or trn2) when no enclosing op has ncore.target">
  ];
}

def NcoreSchedule : Pass<"ncore-schedule"> {
  let summary = "Synchronise the engines with semaphores";
  let description = [{
    Runs on every `ncore.program` at or below the op it is scheduled on,
    after ncore-assign-engines chose the engines (it reads each
    instruction's execution engine and changes none).
    Program order is kept: each engine's stream is the program's
    instructions on that engine, in order. For every
    instruction, the latest earlier instruction on each other engine that
    conflicts with it (writes what it reads, or touches what it writes:
    same buffer, overlapping windows) is waited for:

    * the producer is followed by `ncore.sem_signal <sem of its engine> on
      <engine>` (one semaphore per producing engine, counting the producer's
      completions);
    * the consumer is preceded by `ncore.sem_wait <sem> ge <count> steps
      [...]`: the count the producer's semaphore has after the instance the
      consumer needs, with per-iteration steps for the loops they share, so
      loops stay loops. A producer later in a loop body than its consumer is
      a loop-carried dependency on the previous iteration (write-after-read
      on a buffer the next iteration refills); its wait is marked `carried`
      and holds in the first iteration, which has no previous one.

    Two refinements keep loops from serialising: an access that moves to
    new bytes in every iteration of its loop nest (the window strides and
    loop steps form a one-to-one mixed-radix numbering) does not wait for
    its own earlier iterations, nor for earlier iterations of the same
    window read back; and a consumer loop that follows a producer loop over
    the same tiles (equal trips, accesses moving by the same step, the
    consumer's first window ending before the producer's second) waits in
    iteration i for the producer's iteration i only, so the two loops run
    as a pipeline.

    DMAs are triggered from two in-order queues (loads from the DMA
    engine's, stores from the Sync engine's: ncore-assign-engines). DMA
    transfers complete out of order across the queues, so DMA-to-DMA
    dependencies are synchronised too, within one trigger queue as well;
    a trigger queue's semaphore counts its transfers as they retire in
    issue order (the runtime signals a transfer once every earlier one of
    its queue has completed), which is what makes a count name the bytes a
    reader waits for.
    An `ncore.call_kernel` is a full barrier (implemented by the emitter): no
    dependency is tracked across it. One with the dependency boundary
    (`ncore.boundary = "dependency"`) is not: dependencies between the
    instructions around it are tracked as if it were not there, and the call
    is an access of its own (its operands, read or written by the callee's
    argument roles, and its body's SBUF and PSUM bytes on every partition,
    written). Each body instruction that touches memory the caller can see
    (an argument, moved to the call's operand; an on-chip byte it writes,
    moved by the call's base) waits for the last instruction, before the
    call, of each caller engine with a conflicting access (or that ran an
    earlier such call it conflicts with), once per body engine
    (`ncore.entry_waits`: ordinal, engine mask). On each caller engine, the
    first instruction after the call that conflicts with a body engine's
    instructions waits for that engine's last one (`ncore.kernel_wait
    <ncore.call_id> for [<body engines>] on <engine>`; statistic
    kernel-waits); the later ones follow it in their engine's order.
    Double-buffering comes from this: when the converter gives iterations
    alternate buffers, the DMA filling one buffer waits only for the compute
    that last read that buffer, so it overlaps compute on the other one.
    A program that already contains semaphore ops is left as it is.
  }];
}

def NcoreSplitDma : Pass<"ncore-split-dma"> {
  let summary = "Spread large DMA transfers over the DMA queues";
  let description = [{
    After ncore-schedule: a `dma_copy` is split into k equal pieces along
    the first dim of size > 1 of each endpoint (partitions on chip, rows in
    HBM, or the outermost free dim when those are 1: a slice of it is a run
    of consecutive elements, so piece j of both endpoints moves the same
    elements), k the largest of 16, 8, 4, 2 (at most the profile's DMA
    engines) that divides both dims and leaves every piece at least
    `min-piece-bytes`
    (0: four times the bytes one queue moves during the fixed cost of a
    transfer, so that the fixed cost is at most a fifth of a piece's time:
    ~55 KB on trn2, ~88 KB on trn1; hardware.md "DMA"). One queue sustains
    1/16 of a core's DMA bandwidth, so a transfer that is not split runs at a
    sixteenth of the core's rate; one that is split into pieces too small
    pays the fixed cost per piece. The pieces take the place of the
    transfer: the semaphore waits before it now precede the first piece
    (the DMA stream issues in order, so the others follow at once) and its
    signal follows the last one.

    A store (on-chip source, HBM destination) may be cut finer, down to
    `min-store-piece-bytes` (0: the bytes one queue moves during the fixed
    cost, so that the fixed cost is at most half a piece's time: ~14 KB on
    trn2, ~22 KB on trn1). A load is mostly a prefetch (the next weight
    slab) whose queue time is what counts; a store's readers (a collective,
    a kernel call, the next program) wait for its last byte, and the last
    slab of a linear's result is stored after its last matmul with nothing
    left to overlap it: there the shorter tail is worth the fixed costs.
    The loads a program issues before its first compute instruction,
    outside every loop (its prologue), have nothing to overlap either, and
    the DMA stream hands pieces to the queues round-robin: cut each on its
    own, a few queues can end up with twice the bytes of the others while
    the first compute waits for all of them. Their piece counts (any k <=
    the DMA engines that divides both endpoints' split dims, pieces down to
    the store size) are chosen together, by coordinate descent on a model of
    the round-robin queues: the time the last queue finishes, then the sum
    of the transfers' retirement times (a reader waits for every transfer
    issued before its own), averaged over the 16 queues the stream may
    start at, with the loads the stream issues right after the prologue
    (before its first wait, a loop's first iterations; at most 32) weighed
    with their own piece counts. A prologue of more than 32 transfers keeps
    the per-transfer counts (it keeps every queue busy anyway, and the
    search's cost grows with it).

    A transfer marked `ncore.fixed_pieces` (NcoreBuilder::dmaFixed) is left
    as it is and out of the prologue's balance: its author planned its
    pieces and their order over the queues (the rope kernel and lowering).

    ```mlir
    ncore.dma_copy %t, %w : !ncore.tile<sbuf, 128x3072xbf16>, !ncore.tile<hbm, 128x3072xbf16>
    // becomes 16 transfers of 8 rows:
    %d0 = ncore.view %t offsets affine_map<() -> (0, 0)> : ... to !ncore.tile<sbuf, 8x3072xbf16>
    %s0 = ncore.view %w offsets affine_map<() -> (0, 0)> : ... to !ncore.tile<hbm, 8x3072xbf16>
    ncore.dma_copy %d0, %s0 : ...
    ...
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", "\"trn1\"",
           "Target (trn1 or trn2) when no enclosing op has ncore.target">,
    Option<"minPieceBytes", "min-piece-bytes", "int64_t", "0",
           "Smallest piece in bytes (0: derived from the profile)">,
    Option<"minStorePieceBytes", "min-store-piece-bytes", "int64_t", "0",
           "Smallest piece of a store to HBM in bytes (0: derived from the "
           "profile)">
  ];
}

def NcoreInlineCalls : Pass<"ncore-inline-calls"> {
  let summary = "Inline kernel calls into their callers";
  let description = [{
    Last of the codegen passes (after ncore-split-dma of the caller and of
    every callee; the emitter does not take `ncore.call_kernel`). Each
    `ncore.call_kernel` in an `ncore.program` at or below the op the pass
    runs on becomes an `ncore.inlined_call` holding a copy of the callee's
    body (a callee's own calls are inlined first):

    * the body's block arguments are bound to the call's operands, which
      must be contiguous HBM windows (the kernel reads its arguments with
      their own row-major layout);
    * its SBUF / PSUM allocs move by the call's `ncore.sbuf_base` /
      `ncore.psum_base` (set by ncore-allocate: where the callee's bytes sit
      among the caller's tiles live across the call; 0 when absent);
    * its HBM scratch allocs are named `<callee>.<name>` (unnamed ones
      `<callee>.scratch<i>`), one set of bindings per call;
    * its semaphores are renumbered 0, 1, ... in the order the emitter meets
      them, engine by engine (see `ncore.inlined_call`).

    A call inside an `ncore.loop`, of a declaration, recursive, or with an
    operand that is not a contiguous HBM window is an error.

    ```mlir
    ncore.call_kernel @scale(%s, %y1) {ncore.psum_base = 0 : i64, ncore.sbuf_base = 32768 : i64}
        : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
    // becomes
    ncore.inlined_call @scale(%s, %y1) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32> {
    ^bb0(%i: !ncore.tile<hbm, 128x64xf32>, %o: !ncore.tile<hbm, 128x64xf32>):
      %t = ncore.alloc offset 32768 : !ncore.tile<sbuf, 128x64xf32>
      %tmp = ncore.alloc offset 0 {name = "scale.tmp"} : !ncore.tile<hbm, 128x64xf32>
      ...
    }
    ```
  }];
}

#endif // SEAM_LOWERING_TRANSFORMS_NCOREPASSES_TD
