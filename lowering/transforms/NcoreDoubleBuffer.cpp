//===- NcoreDoubleBuffer.cpp - two buffers for DMA-filled loop tiles
//-------===//
//
// An innermost ncore.loop whose body refills an SBUF tile by DMA every
// iteration (the DMA writes all of it before anything reads it, and nothing
// outside the loop uses it) is unrolled by two, the second copy using a
// second tile. The DMA of iteration i+1 then only waits for the compute that
// read the same tile two iterations before, so it overlaps the compute of
// iteration i (ncore-schedule turns that into semaphores). The same holds
// for a tile drained by DMA: computed whole in every iteration (its first
// access in the body writes all of it and reads nothing of it) and stored
// to HBM: the compute of iteration i+1 then overlaps the store of iteration
// i instead of waiting for it (the output tile of an elementwise op whose
// result lives in HBM). An odd trip count
// leaves one copy of the body after the loop. Loops stay loops: the body
// appears twice (three times with a remainder), whatever the trip count.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreAccess.h"
#include "lowering/transforms/NcorePasses.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ncore {
#define GEN_PASS_DEF_NCOREDOUBLEBUFFER
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;

namespace {

/// Users of `v` through views and reshapes.
void collectUses(Value v, SmallVectorImpl<Operation *> &uses) {
  for (Operation *user : v.getUsers()) {
    uses.push_back(user);
    if (isa<ViewOp, ReshapeOp>(user))
      collectUses(user->getResult(0), uses);
  }
}

/// True when the access `tile` covers every element of `alloc` (no loop
/// step).
bool coversWhole(Value tile, AllocOp alloc) {
  FailureOr<TileAccess> a = resolveAccess(tile);
  if (failed(a) || a->root != alloc.getResult() || !a->loopSteps.empty())
    return false;
  TileType t = alloc.getType();
  int64_t elems = 1;
  for (const FreeDimAccess &d : a->dims)
    elems *= d.size;
  return a->offset == 0 && a->startPartition == t.getStartPartition() &&
         a->partitions == t.getPartitions() && elems == t.getFreeElements() &&
         a->dims.size() == 1 && a->dims[0].stride == 1;
}

/// The SBUF tile a store (`dma` to HBM) drains, when its first access in
/// `body` writes the whole of it and reads none of it; else null.
AllocOp drainedTile(DmaCopyOp dma, Block *body) {
  FailureOr<TileAccess> src = resolveAccess(dma.getSrc());
  FailureOr<TileAccess> dst = resolveAccess(dma.getDst());
  if (failed(src) || failed(dst) || dst->space != MemSpace::Hbm)
    return {};
  auto alloc = src->root.getDefiningOp<AllocOp>();
  if (!alloc || alloc.getType().getSpace() != MemSpace::Sbuf)
    return {};
  for (Operation &op : body->getOperations()) {
    if (!isa<InstructionOpInterface>(op))
      continue;
    SmallVector<OpOperand *> touching;
    for (OpOperand &use : op.getOpOperands()) {
      FailureOr<TileAccess> a = resolveAccess(use.get());
      if (succeeded(a) && a->root == alloc.getResult())
        touching.push_back(&use);
    }
    if (touching.empty())
      continue;
    // The first access: one operand, written whole, not read.
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (touching.size() != 1 || !effects || &op == dma.getOperation())
      return {};
    SmallVector<MemoryEffects::EffectInstance> fx;
    effects.getEffectsOnValue(touching.front()->get(), fx);
    bool write = false, read = false;
    for (auto &e : fx) {
      write |= isa<MemoryEffects::Write>(e.getEffect());
      read |= isa<MemoryEffects::Read>(e.getEffect());
    }
    if (!write || read || !coversWhole(touching.front()->get(), alloc))
      return {};
    return alloc;
  }
  return {};
}

class NcoreDoubleBufferPass
    : public mlir::ncore::impl::NcoreDoubleBufferBase<NcoreDoubleBufferPass> {
public:
  using NcoreDoubleBufferBase::NcoreDoubleBufferBase;
  void runOnOperation() override {
    getOperation()->walk([&](ProgramOp program) {
      if (!program.isDeclaration())
        run(program);
    });
  }

private:
  PassCounter numLoops{"ncore-double-buffer", "loops",
                       "Loops unrolled by two for double-buffering"};
  PassCounter numTiles{"ncore-double-buffer", "tiles",
                       "Tiles given a second buffer"};

  void run(ProgramOp program);
  void transform(LoopOp loop, ArrayRef<AllocOp> tiles);
};

} // namespace

void NcoreDoubleBufferPass::run(ProgramOp program) {
  FailureOr<::seam::rt::Profile> profile =
      getTargetProfile(program, target, "ncore-double-buffer");
  if (failed(profile))
    return signalPassFailure();
  int64_t capacity = static_cast<int64_t>(profile->sbufPartitionBytes);
  // What the tiles already take (the converter's figure, or every SBUF tile
  // at once): a loop's second buffers must fit in what is left. They live
  // only inside their loop, and the loops considered are innermost, so the
  // second buffers of two loops are never live together: each loop gets the
  // whole budget (it is not spent across loops).
  int64_t used = 0;
  if (auto peak = program->getAttrOfType<IntegerAttr>("seam.sbuf_peak_bytes"))
    used = peak.getInt();
  else
    program.walk([&](AllocOp a) {
      if (a.getType().getSpace() == MemSpace::Sbuf)
        used += a.getType().getFreeBytes();
    });
  int64_t budget = capacity - used;
  if (program->hasAttr(kScheduledAttrName))
    return;

  SmallVector<LoopOp> loops;
  program.walk([&](LoopOp loop) {
    if (loop.getTrips() >= 2 && loop.getBody().getOps<LoopOp>().empty() &&
        !llvm::any_of(loop.getBodyBlock()->getOperations(), [](Operation &op) {
          return isa<CallKernelOp, SemWaitOp, SemSignalOp, AllocOp>(op);
        }))
      loops.push_back(loop);
  });
  for (LoopOp loop : loops) {
    // The induction variable only feeds views.
    if (!llvm::all_of(loop.getInductionVar().getUsers(),
                      [](Operation *u) { return isa<ViewOp>(u); }))
      continue;
    SmallVector<AllocOp> tiles;
    int64_t bytes = 0;
    Block *body = loop.getBodyBlock();
    for (auto dma : body->getOps<DmaCopyOp>()) {
      // A refilled tile: the DMA writes it whole, nothing in the body
      // touches it before. A drained one: see drainedTile.
      AllocOp alloc = drainedTile(dma, body);
      bool refill = !alloc;
      if (refill) {
        FailureOr<TileAccess> a = resolveAccess(dma.getDst());
        if (failed(a))
          continue;
        alloc = a->root.getDefiningOp<AllocOp>();
      }
      if (!alloc || alloc.getType().getSpace() != MemSpace::Sbuf ||
          alloc.getOffset() || llvm::is_contained(tiles, alloc) ||
          (refill && !coversWhole(dma.getDst(), alloc)))
        continue;
      // Every use is in this loop (and, for a refill, nothing in the body
      // touches the tile before this DMA).
      SmallVector<Operation *> uses;
      collectUses(alloc.getResult(), uses);
      bool ok = true;
      for (Operation *u : uses) {
        Operation *top = body->findAncestorOpInBlock(*u);
        if (!top || (refill && !isa<ViewOp, ReshapeOp>(u) && top != dma &&
                     top->isBeforeInBlock(dma)))
          ok = false;
      }
      if (!ok || bytes + alloc.getType().getFreeBytes() > budget)
        continue;
      bytes += alloc.getType().getFreeBytes();
      tiles.push_back(alloc);
    }
    if (tiles.empty())
      continue;
    transform(loop, tiles);
    ++numLoops;
    numTiles += static_cast<int64_t>(tiles.size());
  }
}

/// Replaces dim `d` of `map` by `expr` (over the map's dims), dropping it
/// when `drop` (then `expr` must not use it).
static AffineMap substitute(AffineMap map, unsigned d, AffineExpr expr,
                            bool drop) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> dims;
  unsigned n = map.getNumDims();
  for (unsigned i = 0; i < n; ++i) {
    if (i == d) {
      dims.push_back(expr);
      continue;
    }
    dims.push_back(getAffineDimExpr(drop && i > d ? i - 1 : i, ctx));
  }
  return map.replaceDimsAndSymbols(dims, {}, drop ? n - 1 : n, 0);
}

void NcoreDoubleBufferPass::transform(LoopOp loop, ArrayRef<AllocOp> tiles) {
  OpBuilder b(loop);
  MLIRContext *ctx = loop.getContext();
  int64_t trips = loop.getTrips();
  unsigned level = loop.getDepth() - 1;
  // Second buffers, next to the first ones.
  IRMapping second;
  for (AllocOp alloc : tiles) {
    b.setInsertionPointAfter(alloc);
    auto twin = cast<AllocOp>(b.clone(*alloc));
    second.map(alloc.getResult(), twin.getResult());
  }
  b.setInsertionPoint(loop);
  auto unrolled = b.create<LoopOp>(loop.getLoc(), trips / 2);
  Block *body = unrolled.getBodyBlock();
  Value iv = unrolled.getInductionVar();

  // Clones the body with iv = scale * newIv + offset (newIv absent: the
  // constant `offset`), the tiles mapped by `map`, and the start flag of
  // matmuls kept only when `keepStart`.
  auto cloneBody = [&](OpBuilder &ob, Value newIv, int64_t scale,
                       int64_t offset, IRMapping map, bool keepStart) {
    for (Operation &op : loop.getBodyBlock()->without_terminator()) {
      auto view = dyn_cast<ViewOp>(op);
      if (view && llvm::is_contained(view.getIvs(), loop.getInductionVar())) {
        SmallVector<Value> ivs;
        AffineMap m = view.getOffsets();
        unsigned shift = 0;
        for (auto [k, v] : llvm::enumerate(view.getIvs())) {
          unsigned d = k - shift;
          if (v != loop.getInductionVar()) {
            ivs.push_back(map.lookupOrDefault(v));
            continue;
          }
          if (newIv) {
            m = substitute(m, d, getAffineDimExpr(d, ctx) * scale + offset,
                           false);
            ivs.push_back(newIv);
          } else {
            m = substitute(m, d, getAffineConstantExpr(offset, ctx), true);
            ++shift;
          }
        }
        auto nv =
            ob.create<ViewOp>(view.getLoc(), view.getType(),
                              map.lookupOrDefault(view.getSource()), ivs,
                              AffineMapAttr::get(m), view.getStridesAttr());
        map.map(view.getResult(), nv.getResult());
        continue;
      }
      Operation *c = ob.clone(op, map);
      if (auto mm = dyn_cast<MatmulOp>(c))
        if (auto lvl = mm->getAttrOfType<IntegerAttr>(kStartLevelAttrName))
          if (lvl.getInt() == static_cast<int64_t>(level) && !keepStart)
            mm->removeAttr(kStartLevelAttrName);
    }
  };
  OpBuilder ib = OpBuilder::atBlockBegin(body);
  ib.setInsertionPoint(body->getTerminator());
  cloneBody(ib, iv, 2, 0, IRMapping(), true);
  cloneBody(ib, iv, 2, 1, second, false);
  if (trips % 2) {
    // The last iteration, after the loop, outside it: a start flag of this
    // level would now refer to an outer loop (or none): drop it.
    b.setInsertionPointAfter(unrolled);
    cloneBody(b, Value(), 0, trips - 1, IRMapping(), false);
  }
  loop.erase();
}
