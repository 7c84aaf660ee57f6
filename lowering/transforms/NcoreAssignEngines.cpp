//===- NcoreAssignEngines.cpp - the engine of each instruction ------------===//
//
// See NcorePasses.td (ncore-assign-engines). The decision ncore-schedule
// used to make first, apart from it: the chosen engine is written on each
// moved instruction (its `engine` attribute), where ncore-schedule and the
// emitter read it.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreAccess.h"
#include "dialect/ncore/NcoreTranslate.h"
#include "lowering/transforms/NcorePasses.h"
#include "lowering/transforms/ParallelChunks.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"
#include "runtime/Timing.h"

#include "llvm/ADT/DenseMap.h"

#include <array>

namespace mlir::ncore {
#define GEN_PASS_DEF_NCOREASSIGNENGINES
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;
namespace rt = ::seam::rt;

namespace {

constexpr unsigned kEngines = 7;

/// The runtime's view of `inst` (runtime/TimingCost.cpp costs it), from the
/// operands' sizes, dtypes and memory spaces; failure for what it cannot
/// translate; `loopDepth` ncore.loops enclose it. Translated once per
/// instruction: its cost on each candidate engine only changes the engine.
FailureOr<rt::Instruction> costView(InstructionOpInterface inst,
                                    unsigned loopDepth) {
  auto sizes = [&](Value tile) -> FailureOr<rt::AccessPattern> {
    FailureOr<TileAccess> a = resolveAccess(tile);
    if (failed(a))
      return failure();
    rt::AccessPattern ap;
    ap.space = static_cast<rt::MemSpace>(static_cast<uint8_t>(a->space));
    ap.dtype = a->elementType.isBF16() ? rt::DType::BF16 : rt::DType::F32;
    ap.partitions = static_cast<uint32_t>(a->partitions);
    ap.numDims = static_cast<uint8_t>(
        std::min<size_t>(a->dims.size(), rt::kMaxFreeDims));
    for (unsigned d = 0; d < ap.numDims; ++d)
      ap.dims[d] = rt::FreeDim{static_cast<uint32_t>(a->dims[d].size),
                               a->dims[d].stride};
    return ap;
  };
  return translateInstruction(inst, sizes, loopDepth);
}

/// The cost the simulator charges `ri` on engine `e`; 0 for an instruction
/// it does not time (DMA, collectives, semaphores) or could not translate.
double estimateNs(FailureOr<rt::Instruction> &ri, Engine e,
                  const rt::Profile &profile) {
  if (failed(ri))
    return 0;
  ri->engine = static_cast<rt::Engine>(e);
  return rt::instructionCost(*ri, profile).busyNs;
}

/// What the timeline needs of each instruction that the choices before it
/// do not change, computed on the context's threads: its operands' buffers,
/// its loops' trip product, the runtime's view of it (compute) or the time
/// its bytes take to cross (transfers and collectives).
struct Facts {
  InstructionOpInterface inst;
  SmallVector<Value, 4> roots; ///< Per operand (null: not a tile).
  int64_t mult = 1;
  LoopOp loop; ///< Innermost.
  bool timed = false;
  /// The cost on each engine it may run on (timed instructions).
  std::array<double, kEngines> ns{};
  double transferNs = 0;
};

/// The Facts of each of `listed`, on the context's threads.
std::vector<Facts> gatherFacts(MLIRContext *ctx,
                               ArrayRef<InstructionOpInterface> listed,
                               const rt::Profile &profile) {
  std::vector<Facts> facts(listed.size());
  for (size_t i = 0; i < listed.size(); ++i)
    facts[i].inst = listed[i];
  parallelChunks(ctx, facts.size(), [&](size_t i) {
    Facts &f = facts[i];
    Operation *op = f.inst;
    for (Value v : op->getOperands()) {
      Value root;
      if (isa<TileType>(v.getType()))
        if (FailureOr<TileAccess> a = resolveAccess(v); succeeded(a))
          root = a->root;
      f.roots.push_back(root);
    }
    f.loop = op->getParentOfType<LoopOp>();
    unsigned depth = 0;
    for (LoopOp l = f.loop; l; l = l->getParentOfType<LoopOp>(), ++depth)
      f.mult *= l.getTrips();
    // Transfers and collectives take no engine time here.
    f.timed = !isa<DmaCopyOp, AllReduceOp, AllGatherOp>(op);
    if (f.timed) {
      FailureOr<rt::Instruction> view = costView(f.inst, depth);
      // The engines the timeline below can read: its own, and the legal
      // ones among those a movable instruction may go to.
      Engine own = f.inst.getExecutionEngine();
      f.ns[static_cast<unsigned>(own)] = estimateNs(view, own, profile);
      for (Engine e : {f.inst.getDefaultEngine(), Engine::Vector,
                       Engine::Scalar, Engine::GpSimd})
        if (e != own && f.inst.isLegalEngine(e))
          f.ns[static_cast<unsigned>(e)] = estimateNs(view, e, profile);
      return;
    }
    // A transfer's destination is ready once its bytes have crossed: a DMA
    // at its fixed cost plus its bytes over every queue (estimated: the
    // queues' other traffic is not modelled), a collective at its ring cost
    // (runtime/TimingCost.cpp). Without this, the reads of a loaded tile
    // (the residual add after an all_reduce) looked ready at once, and the
    // engine that looked free then took them all.
    FailureOr<TileAccess> a = resolveAccess(op->getOperand(0));
    if (failed(a))
      return;
    int64_t elems = a->partitions;
    for (const FreeDimAccess &dim : a->dims)
      elems *= dim.size;
    double bytes = double(elems) * (a->elementType.isBF16() ? 2 : 4);
    if (isa<DmaCopyOp>(op))
      f.transferNs = rt::dmaDurationNs(
          uint64_t(bytes),
          profile.dmaEngineBytesPerNs * std::max<double>(1, profile.dmaEngines),
          profile);
    else if (auto ar = dyn_cast<AllReduceOp>(op))
      f.transferNs =
          rt::collectiveDurationNs(rt::Opcode::AllReduce, uint64_t(bytes),
                                   unsigned(ar.getRanks()), profile);
    else if (auto ag = dyn_cast<AllGatherOp>(op))
      f.transferNs = rt::collectiveDurationNs(
          rt::Opcode::AllGather,
          uint64_t(bytes) / std::max<uint64_t>(1, ag.getRanks()),
          unsigned(ag.getRanks()), profile);
  });
  return facts;
}

class NcoreAssignEnginesPass
    : public mlir::ncore::impl::NcoreAssignEnginesBase<NcoreAssignEnginesPass> {
public:
  using NcoreAssignEnginesBase::NcoreAssignEnginesBase;
  void runOnOperation() override {
    getOperation()->walk([&](ProgramOp program) {
      if (failed(assign(program)))
        signalPassFailure();
    });
  }

private:
  LogicalResult assign(ProgramOp program);
  PassCounter numMoved{"ncore-assign-engines", "engine-moves",
                       "Instructions moved off their default engine"};
  PassCounter numStores{"ncore-assign-engines", "stores-on-sync",
                        "Stores issued from the Sync engine's DMA queue"};
};

} // namespace

LogicalResult NcoreAssignEnginesPass::assign(ProgramOp program) {
  // A scheduled program, or one that synchronises itself, keeps its engines
  // (as ncore-schedule leaves it alone).
  if (program.isDeclaration() || program->hasAttr(kScheduledAttrName))
    return success();
  FailureOr<rt::Profile> targetProfile =
      getTargetProfile(program, target, "ncore-assign-engines");
  if (failed(targetProfile))
    return failure();
  const rt::Profile &profile = *targetProfile;
  MLIRContext *ctx = program.getContext();
  // The instructions in program order.
  std::vector<InstructionOpInterface> listed;
  WalkResult synchronised =
      program.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<SemWaitOp, SemSignalOp, KernelWaitOp>(op))
          return WalkResult::interrupt();
        if (auto inst = dyn_cast<InstructionOpInterface>(op))
          listed.push_back(inst);
        return WalkResult::advance();
      });
  if (synchronised.wasInterrupted())
    return success();

  // A movable instruction goes to the engine where it would
  // finish first on an estimated timeline: each engine in order, an
  // instruction starting when its engine is free and the tiles it reads are
  // written (for a reader inside the writer's loop
  // when the writer's first iteration completes: loops pipeline; for one
  // outside when all of them have). Work queued earlier on an engine that
  // then waited for a Tensor-engine phase does not count against it (after
  // it the Vector engine is as free as the others). Every engine's writes
  // set a time, but a vector engine's (Vector, Scalar, GpSimd) only for
  // readers outside the writer's loop: inside it, the flash attention
  // kernel's software-pipelined softmax chain (producers later in the loop
  // body than their readers) was mis-timed and 18% slower. Outside, a
  // rope reading the q/k that a linear's evacuations wrote starts after
  // them, on whichever engine is free then (with the Tensor engine's
  // writes only, every such op looked ready at once on the engine idle
  // during the linear, and all went to GpSimd).
  std::array<double, kEngines> load{};
  struct Ready {
    double first = 0, all = 0;
    Operation *loop = nullptr; ///< The writer's innermost loop.
    bool vector = false;       ///< Written by a vector engine.
  };
  llvm::DenseMap<Value, Ready> readyAt;
  std::vector<Facts> facts = gatherFacts(ctx, listed, profile);
  for (Facts &f : facts) {
    InstructionOpInterface inst = f.inst;
    Operation *op = inst;
    double inputsReady = 0;
    if (!readyAt.empty())
      for (Value r : f.roots) {
        if (!r)
          continue;
        auto it = readyAt.find(r);
        if (it == readyAt.end())
          continue;
        const Ready &w = it->second;
        bool inside = w.loop && w.loop->isAncestor(op);
        if (inside && w.vector)
          continue;
        inputsReady = std::max(inputsReady, inside ? w.first : w.all);
      }
    int64_t mult = f.mult;
    Engine chosen = inst.getExecutionEngine();
    std::optional<Attribute> engineAttr = op->getInherentAttr("engine");
    bool pinned = engineAttr && *engineAttr;
    if (auto dma = dyn_cast<DmaCopyOp>(op)) {
      // Two DMA trigger queues: loads (and HBM -> HBM copies) on the DMA
      // engine's, stores on the Sync engine's. A store waits for the compute
      // that produced its tile; in one in-order queue it would hold up every
      // load behind it, the next op's weights included.
      if (!pinned && dma.isStore()) {
        chosen = Engine::Sync;
        inst.setExecutionEngine(chosen);
        ++numStores;
      }
    } else if (!pinned) {
      bool touchesPsum = llvm::any_of(op->getOperands(), [](Value v) {
        auto t = dyn_cast<TileType>(v.getType());
        return t && t.getSpace() == MemSpace::Psum;
      });
      double best = -1;
      for (Engine e : {inst.getDefaultEngine(), Engine::Vector, Engine::Scalar,
                       Engine::GpSimd}) {
        if (!inst.isLegalEngine(e) || (e == Engine::GpSimd && touchesPsum))
          continue;
        double t = std::max(load[static_cast<unsigned>(e)], inputsReady) +
                   mult * f.ns[static_cast<unsigned>(e)];
        if (best < 0 || t < best) {
          best = t;
          chosen = e;
        }
      }
      if (chosen != inst.getDefaultEngine()) {
        inst.setExecutionEngine(chosen);
        ++numMoved;
      }
    }
    Value dest = f.roots.empty() ? Value() : f.roots.front();
    if (!f.timed) {
      if (dest)
        readyAt[dest] = {inputsReady + f.transferNs,
                         inputsReady + mult * f.transferNs, f.loop, false};
      continue;
    }
    double &l = load[static_cast<unsigned>(chosen)];
    double start = std::max(l, inputsReady),
           one = f.ns[static_cast<unsigned>(chosen)];
    l = start + mult * one;
    if (dest)
      readyAt[dest] = {start + one, start + mult * one, f.loop,
                       chosen != Engine::Tensor};
  }
  return success();
}
