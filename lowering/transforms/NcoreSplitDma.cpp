//===- NcoreSplitDma.cpp - spread large transfers over the DMA queues -----===//
//
// See NcorePasses.td (ncore-split-dma). A decision about performance, made
// here and visible in the IR, so that the emitter only translates.
//
//===----------------------------------------------------------------------===//

#include "lowering/transforms/NcorePasses.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"
#include "runtime/Timing.h"

#include "mlir/IR/Builders.h"

namespace mlir::ncore {
#define GEN_PASS_DEF_NCORESPLITDMA
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;

namespace {

/// At most this many loads after a prologue are weighed with it, and a
/// prologue of more transfers keeps the per-transfer counts: the search
/// costs rounds x transfers x counts x 16 start queues x pieces, and a
/// prologue that long keeps every queue busy anyway.
constexpr size_t kFollowing = 32;
constexpr size_t kMaxBalanced = 32;

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

/// The piece counts `op` can be cut into, ascending: 1, and each k in
/// [2, maxPieces] that divides the split dims of both endpoints and leaves
/// pieces of at least `minPiece` bytes.
SmallVector<int64_t> pieceCounts(DmaCopyOp op, int64_t minPiece,
                                 int64_t maxPieces) {
  SmallVector<int64_t> ks{1};
  auto dt = cast<TileType>(op.getDst().getType()),
       st = cast<TileType>(op.getSrc().getType());
  std::optional<unsigned> dd = splitDimOf(dt), sd = splitDimOf(st);
  if (!dd || !sd || dt.getNumElements() != st.getNumElements())
    return ks;
  int64_t dn = dt.getShape()[*dd], sn = st.getShape()[*sd];
  int64_t bytes = dt.getNumElements() * dt.getElementBytes();
  for (int64_t k = 2; k <= maxPieces; ++k)
    if (dn % k == 0 && sn % k == 0 && bytes / k >= minPiece)
      ks.push_back(k);
  return ks;
}

/// The largest of 16, 8, 4, 2 (at most maxPieces) that `op` can be cut into
/// with pieces of at least `minPiece` bytes, else 1.
int64_t pieceCount(DmaCopyOp op, int64_t minPiece, int64_t maxPieces) {
  SmallVector<int64_t> ks = pieceCounts(op, minPiece, maxPieces);
  for (int64_t c : {16, 8, 4, 2})
    if (llvm::is_contained(ks, c))
      return c;
  return 1;
}

/// How many times the DMA stream issues `op` back to back: once per
/// iteration of the loops around it, up to the outermost of them whose body
/// holds a wait of the stream (whose later iterations issue after it).
int64_t issuesBeforeWait(DmaCopyOp op) {
  int64_t times = 1;
  for (auto loop = op->getParentOfType<LoopOp>(); loop;
       loop = loop->getParentOfType<LoopOp>()) {
    bool waits = loop.getBody()
                     .walk([](SemWaitOp w) {
                       return w.getEngine() == Engine::Dma
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     })
                     .wasInterrupted();
    if (waits)
      break;
    times *= loop.getTrips();
  }
  return times;
}

int64_t bytesOf(DmaCopyOp op) {
  auto t = cast<TileType>(op.getDst().getType());
  return t.getNumElements() * t.getElementBytes();
}

/// Piece counts for the loads of a program's prologue (issued together,
/// before any compute, outside loops). The DMA stream hands its transfers to
/// the queues round-robin (hardware.md "DMA"), each queue in order, and a
/// reader's semaphore count retires in issue order: the prologue is done
/// when its most loaded queue is, and its first transfers are usable when
/// every queue finished what it took before them. So the counts minimise,
/// averaged over the 16 queues the stream may stand at when the prologue
/// starts (a kernel inlined into a larger program starts anywhere), first
/// the time the last queue finishes and then the sum of the transfers'
/// retirement times, of the prologue and of the loads `following` it
/// (bytes, pieces) that the stream issues before its first wait, with each
/// piece costing the profile's fixed cost plus its bytes at one queue's
/// bandwidth. Pieces are at least `minStorePiece` bytes (nothing overlaps them,
/// as with a store). Coordinate descent from the counts the transfers get
/// alone (`alone`: pieces of ncore-split-dma's `min-piece-bytes`): each
/// transfer in turn takes its best count given the others, until none
/// changes or four rounds have passed.
SmallVector<int64_t>
balancePrologue(ArrayRef<DmaCopyOp> prologue, ArrayRef<int64_t> alone,
                ArrayRef<std::pair<int64_t, int64_t>> following,
                const ::seam::rt::Profile &profile, int64_t minStorePiece,
                int64_t maxPieces) {
  size_t n = prologue.size();
  SmallVector<int64_t> counts(alone);
  if (n == 0 || n > kMaxBalanced)
    return counts;
  SmallVector<SmallVector<int64_t>> options;
  SmallVector<int64_t> bytes;
  for (DmaCopyOp dma : prologue) {
    options.push_back(pieceCounts(dma, minStorePiece, maxPieces));
    bytes.push_back(bytesOf(dma));
  }
  unsigned queues = std::max(1u, profile.dmaEngines);
  auto cost = [&](ArrayRef<int64_t> ks) {
    double finish = 0, retiredSum = 0;
    SmallVector<double, 16> load(queues);
    for (unsigned start = 0; start < queues; ++start) {
      std::fill(load.begin(), load.end(), 0.0);
      unsigned q = start;
      double retired = 0;
      auto issue = [&](int64_t transferBytes, int64_t k) {
        double piece = ::seam::rt::dmaDurationNs(
            uint64_t(transferBytes / k), profile.dmaEngineBytesPerNs, profile);
        for (int64_t j = 0; j < k; ++j) {
          load[q] += piece;
          retired = std::max(retired, load[q]);
          q = (q + 1) % queues;
        }
        retiredSum += retired;
      };
      for (size_t i = 0; i < n; ++i)
        issue(bytes[i], ks[i]);
      for (auto [b, k] : following)
        issue(b, k);
      finish += retired;
    }
    return std::make_pair(finish / queues, retiredSum / queues);
  };
  auto best = cost(counts);
  // Each round changes at least one count or ends (a strict improvement is
  // required, so it cannot cycle); the bound caps the search's cost.
  for (unsigned round = 0; round < 4; ++round) {
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      int64_t keep = counts[i];
      for (int64_t k : options[i]) {
        if (k == keep)
          continue;
        counts[i] = k;
        auto c = cost(counts);
        // Better by more than rounding: a finish 1 ns earlier, or the same
        // finish with earlier retirements.
        if (c.first < best.first - 1.0 ||
            (c.first <= best.first + 1e-9 && c.second < best.second - 1.0)) {
          best = c;
          keep = k;
          changed = true;
        }
      }
      counts[i] = keep;
    }
    if (!changed)
      break;
  }
  return counts;
}

class NcoreSplitDmaPass
    : public mlir::ncore::impl::NcoreSplitDmaBase<NcoreSplitDmaPass> {
public:
  using NcoreSplitDmaBase::NcoreSplitDmaBase;

  void runOnOperation() override {
    FailureOr<::seam::rt::Profile> targetProfile =
        getTargetProfile(getOperation(), target, "ncore-split-dma");
    if (failed(targetProfile))
      return signalPassFailure();
    const ::seam::rt::Profile &profile = *targetProfile;
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
    // bytes, as a store's readers do. Their piece counts are chosen together
    // (balancePrologue) so that the queues, which take the pieces
    // round-robin, finish them at about the same time.
    // Every transfer with its piece count; split after the walk.
    SmallVector<std::pair<DmaCopyOp, int64_t>> cuts;
    getOperation()->walk([&](ProgramOp program) {
      bool computed = false;
      SmallVector<DmaCopyOp> prologue;
      // The loads the DMA stream issues right after the prologue, before it
      // first waits (a loop's first loads): they take the queues next.
      SmallVector<std::pair<int64_t, int64_t>> following;
      bool followed = false;
      program.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto dma = dyn_cast<DmaCopyOp>(op)) {
          // Pieces fixed by their author: as written (they still take the
          // queues round-robin, and a later load is "following" no more
          // than any other transfer).
          if (op->hasAttr(kFixedPiecesAttrName))
            return;
          bool inPrologue =
              !dma.isStore() && !computed && !op->getParentOfType<LoopOp>();
          if (inPrologue) {
            prologue.push_back(dma);
            return;
          }
          int64_t k = pieceCount(dma, dma.isStore() ? minStorePiece : minPiece,
                                 maxPieces);
          cuts.push_back({dma, k});
          if (!followed && !prologue.empty()) {
            if (dma.isStore() || following.size() == kFollowing)
              followed = true;
            else
              for (int64_t r = 0, m = issuesBeforeWait(dma);
                   r < m && following.size() < kFollowing; ++r)
                following.push_back({bytesOf(dma), k});
          }
        } else if (auto wait = dyn_cast<SemWaitOp>(op)) {
          if (wait.getEngine() == Engine::Dma && !prologue.empty())
            followed = true;
        } else if (isa<InstructionOpInterface, CallKernelOp>(op) &&
                   !isa<SemSignalOp>(op)) {
          computed = true;
        }
      });
      SmallVector<int64_t> alone;
      for (DmaCopyOp dma : prologue)
        alone.push_back(pieceCount(dma, minPiece, maxPieces));
      SmallVector<int64_t> pieces = balancePrologue(
          prologue, alone, following, profile, minStorePiece, maxPieces);
      for (auto [dma, k, single] : llvm::zip(prologue, pieces, alone)) {
        numBalanced += int64_t(k != single);
        cuts.push_back({dma, k});
      }
    });
    for (auto [op, k] : cuts)
      split(op, k);
  }

private:
  PassCounter numSplit{"ncore-split-dma", "transfers-split",
                       "Transfers split over several DMA queues"};
  PassCounter numPieces{"ncore-split-dma", "pieces",
                        "Pieces the split transfers became"};
  PassCounter numBalanced{
      "ncore-split-dma", "prologue-rebalanced",
      "Prologue loads cut into another count than alone, to balance the "
      "queues"};

  void split(DmaCopyOp op, int64_t k) {
    if (k <= 1)
      return;
    auto dt = cast<TileType>(op.getDst().getType()),
         st = cast<TileType>(op.getSrc().getType());
    unsigned dd = *splitDimOf(dt), sd = *splitDimOf(st);
    int64_t dn = dt.getShape()[dd], sn = st.getShape()[sd];
    OpBuilder b(op);
    for (int64_t j = 0; j < k; ++j) {
      Value d = slice(b, op.getLoc(), op.getDst(), dd, j * (dn / k), dn / k);
      Value s = slice(b, op.getLoc(), op.getSrc(), sd, j * (sn / k), sn / k);
      b.create<DmaCopyOp>(op.getLoc(), d, s, op.getEngineAttr());
    }
    op.erase();
    ++numSplit;
    numPieces += k;
  }
};

} // namespace
