//===- NcoreSplitDma.cpp - spread large transfers over the DMA queues -----===//
//
// See NcorePasses.td (ncore-split-dma). A decision about performance, made
// here and visible in the IR, so that the emitter only translates.
//
//===----------------------------------------------------------------------===//

#include "lowering/transforms/NcorePasses.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"

#include "mlir/IR/Builders.h"

namespace mlir::ncore {
#define GEN_PASS_DEF_NCORESPLITDMA
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;

namespace {

/// The dim a DMA endpoint is split along: its first dim of size > 1 (the
/// partitions of an on-chip tile, the rows of an HBM tensor, or, when those
/// are 1, the outermost free dim). Slicing it into k equal parts cuts the
/// endpoint's element walk into k consecutive ranges, so the two endpoints'
/// slices j move the same elements.
std::optional<unsigned> splitDimOf(TileType t) {
  for (unsigned d = 0; d < t.getRank(); ++d)
    if (t.getShape()[d] > 1)
      return d;
  return std::nullopt;
}

/// Elements [row0, row0 + rows) of `tile`'s dim `dim`, a loop-invariant
/// view (a partition range on chip when dim is 0).
Value slice(OpBuilder &b, Location loc, Value tile, unsigned dim, int64_t row0,
            int64_t rows) {
  auto type = cast<TileType>(tile.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = rows;
  SmallVector<int64_t> offsets(shape.size(), 0);
  offsets[dim] = row0;
  TileType result = type.withShape(shape);
  if (type.isOnChip() && dim == 0)
    result = result.withStart(type.getStartPartition() + row0);
  return b.create<ViewOp>(loc, result, tile, offsets);
}

class NcoreSplitDmaPass
    : public mlir::ncore::impl::NcoreSplitDmaBase<NcoreSplitDmaPass> {
public:
  using NcoreSplitDmaBase::NcoreSplitDmaBase;

  void runOnOperation() override {
    std::optional<::seam::rt::Target> tgt = ::seam::rt::parseTarget(target);
    if (!tgt) {
      getOperation()->emitError() << "ncore-split-dma: unknown target '"
                                  << target << "' (expected trn1 or trn2)";
      return signalPassFailure();
    }
    const ::seam::rt::Profile &profile = ::seam::rt::Profile::builtin(*tgt);
    int64_t minPiece = minPieceBytes;
    if (minPiece <= 0)
      minPiece = static_cast<int64_t>(4 * profile.dmaFixedCostNs *
                                      profile.dmaEngineBytesPerNs);
    int64_t minStorePiece = minStorePieceBytes;
    if (minStorePiece <= 0)
      minStorePiece = static_cast<int64_t>(profile.dmaFixedCostNs *
                                           profile.dmaEngineBytesPerNs);
    int64_t maxPieces = std::max<int64_t>(1, profile.dmaEngines);
    // The loads a program issues before any compute, outside every loop,
    // have nothing to overlap: the first instruction waits for their last
    // bytes, as a store's readers do. When they are few enough to cross in
    // one store-sized piece per queue, they are cut as finely as a store
    // (the kernels' small batches: a 128-point DFT's matrix and rows). More
    // of them keep the queues busy anyway, and cut finely they would take
    // every queue ahead of the loop's first loads (transfers take the
    // queues round-robin).
    SmallVector<std::pair<DmaCopyOp, int64_t>> dmas;
    getOperation()->walk([&](ProgramOp program) {
      bool computed = false;
      SmallVector<DmaCopyOp> prologue;
      int64_t prologueBytes = 0;
      program.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto dma = dyn_cast<DmaCopyOp>(op)) {
          if (dma.isStore())
            dmas.push_back({dma, minStorePiece});
          else if (computed || op->getParentOfType<LoopOp>())
            dmas.push_back({dma, minPiece});
          else {
            prologue.push_back(dma);
            auto t = cast<TileType>(dma.getDst().getType());
            prologueBytes += t.getNumElements() * t.getElementBytes();
          }
        } else if (isa<InstructionOpInterface, CallKernelOp>(op) &&
                   !isa<SemWaitOp, SemSignalOp>(op)) {
          computed = true;
        }
      });
      int64_t piece =
          prologueBytes <= maxPieces * minStorePiece ? minStorePiece : minPiece;
      for (DmaCopyOp dma : prologue)
        dmas.push_back({dma, piece});
    });
    for (auto [op, piece] : dmas)
      split(op, piece, maxPieces);
  }

private:
  PassCounter numSplit{"ncore-split-dma", "transfers-split",
                       "Transfers split over several DMA queues"};
  PassCounter numPieces{"ncore-split-dma", "pieces",
                        "Pieces the split transfers became"};

  void split(DmaCopyOp op, int64_t minPiece, int64_t maxPieces) {
    auto dt = cast<TileType>(op.getDst().getType()),
         st = cast<TileType>(op.getSrc().getType());
    std::optional<unsigned> dd = splitDimOf(dt), sd = splitDimOf(st);
    if (!dd || !sd || dt.getNumElements() != st.getNumElements())
      return;
    int64_t dn = dt.getShape()[*dd], sn = st.getShape()[*sd];
    int64_t bytes = dt.getNumElements() * dt.getElementBytes();
    int64_t k = 1;
    for (int64_t c : {16, 8, 4, 2})
      if (c <= maxPieces && dn % c == 0 && sn % c == 0 &&
          bytes / c >= minPiece) {
        k = c;
        break;
      }
    if (k == 1)
      return;
    OpBuilder b(op);
    for (int64_t j = 0; j < k; ++j) {
      Value d = slice(b, op.getLoc(), op.getDst(), *dd, j * (dn / k), dn / k);
      Value s = slice(b, op.getLoc(), op.getSrc(), *sd, j * (sn / k), sn / k);
      b.create<DmaCopyOp>(op.getLoc(), d, s, op.getEngineAttr());
    }
    op.erase();
    ++numSplit;
    numPieces += k;
  }
};

} // namespace
