//===- NcoreSplitDma.cpp - spread large transfers over the DMA queues -----===//
//
// See NcorePasses.td (ncore-split-dma). A decision about performance, made
// here and visible in the IR, so that the emitter only translates.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreAccess.h"
#include "lowering/NcorePasses.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"

#include "mlir/IR/Builders.h"

namespace mlir::ncore {
#define GEN_PASS_DEF_NCORESPLITDMA
#include "lowering/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;

namespace {

/// Rows of a DMA endpoint and its elements per row, as the runtime walks it.
std::optional<std::pair<int64_t, int64_t>> rowsOf(Value tile) {
  FailureOr<TileAccess> a = resolveAccess(tile);
  if (failed(a))
    return std::nullopt;
  int64_t elems = 1;
  for (const FreeDimAccess &d : a->dims)
    elems *= d.size;
  return std::make_pair(a->partitions, elems);
}

/// Rows [row0, row0 + rows) of `tile` (dim 0), a loop-invariant view.
Value rowSlice(OpBuilder &b, Location loc, Value tile, int64_t row0,
               int64_t rows) {
  auto type = cast<TileType>(tile.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = rows;
  SmallVector<int64_t> offsets(shape.size(), 0);
  offsets[0] = row0;
  TileType result = type.withShape(shape);
  if (type.isOnChip())
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
      getOperation()->emitError()
          << "ncore-split-dma: unknown target '" << target
          << "' (expected trn1 or trn2)";
      return signalPassFailure();
    }
    const ::seam::rt::Profile &profile = ::seam::rt::Profile::builtin(*tgt);
    int64_t minPiece = minPieceBytes;
    if (minPiece <= 0)
      minPiece = static_cast<int64_t>(4 * profile.dmaFixedCostNs *
                                      profile.dmaEngineBytesPerNs);
    int64_t maxPieces = std::max<int64_t>(1, profile.dmaEngines);
    SmallVector<DmaCopyOp> dmas;
    getOperation()->walk([&](DmaCopyOp op) { dmas.push_back(op); });
    for (DmaCopyOp op : dmas)
      split(op, minPiece, maxPieces);
  }

private:
  PassCounter numSplit{"ncore-split-dma", "transfers-split",
                       "Transfers split over several DMA queues"};
  PassCounter numPieces{"ncore-split-dma", "pieces",
                        "Pieces the split transfers became"};

  void split(DmaCopyOp op, int64_t minPiece, int64_t maxPieces) {
    auto dst = rowsOf(op.getDst()), src = rowsOf(op.getSrc());
    if (!dst || !src || *dst != *src)
      return;
    auto [rows, elems] = *dst;
    int64_t bytes =
        rows * elems * cast<TileType>(op.getDst().getType()).getElementBytes();
    int64_t k = 1;
    for (int64_t c : {16, 8, 4, 2})
      if (c <= maxPieces && rows % c == 0 && bytes / c >= minPiece) {
        k = c;
        break;
      }
    // The access rows must be the operands' dim 0 for a row slice to mean
    // the same rows on both sides.
    auto dt = cast<TileType>(op.getDst().getType()),
         st = cast<TileType>(op.getSrc().getType());
    if (k == 1 || dt.getPartitions() != rows || st.getPartitions() != rows)
      return;
    OpBuilder b(op);
    int64_t piece = rows / k;
    for (int64_t j = 0; j < k; ++j) {
      Value d = rowSlice(b, op.getLoc(), op.getDst(), j * piece, piece);
      Value s = rowSlice(b, op.getLoc(), op.getSrc(), j * piece, piece);
      b.create<DmaCopyOp>(op.getLoc(), d, s, op.getEngineAttr());
    }
    op.erase();
    ++numSplit;
    numPieces += k;
  }
};

} // namespace
