//===- ConvertShape.cpp - reshape, slice, transpose, concat ---------------===//
//
// Free when the rows x cols view allows it: a reshape that keeps the last
// dim, a slice of columns, a slice of whole rows (aligned to 128 rows in
// SBUF), and a reshape of a contiguous HBM tensor are new placements of the
// same bytes. Everything else is a strided DMA between HBM tensors: a slice
// or concat is one DMA per operand with N-d windows; a transpose that keeps
// the last dim is a loop of DMAs over the outer result dims, each moving a
// [n, cols] block whose source window has the same row-major order; a swap
// of the last two dims is 128 x 128 Tensor-engine transposes. A
// source in SBUF is first written to HBM (a `relayoutN` scratch).
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/DeviceSupport.h"
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

/// A contiguous HBM N-d tile for the result of `op` (output or scratch).
static Value resultHbm(ProgramLowering &pl, Value result, Placement &out) {
  out = pl.placeResultInHbm(result, "layout");
  return pl.reshape(out.root, shapeOf(result));
}

/// A swap of the sequence and head dims, [.., S, H, D] <-> [.., H, S, D],
/// with the outer dims 1 and S a multiple of 128 (`seqDim`: S's position in
/// `in`). Row s of [S, H * D] and row h * S + s of [H * S, D] both sit on
/// partition s % 128, so in SBUF the swap moves no element off its
/// partition: a copy within each partition, no round trip through HBM.
static bool isHeadSwap(ArrayRef<int64_t> perm, ArrayRef<int64_t> in,
                       unsigned seqDim) {
  unsigned rank = in.size();
  if (rank < 3 || perm.size() != rank)
    return false;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t want = d == rank - 3 ? rank - 2 : d == rank - 2 ? rank - 3 : d;
    if (perm[d] != want)
      return false;
  }
  for (unsigned d = 0; d + 3 < rank; ++d)
    if (in[d] != 1)
      return false;
  return in[seqDim] % kNumPartitions == 0;
}

/// Whether rowTilesWindow can view `p`: in SBUF, its root [P, T * pitch].
static bool rowTilesExpressible(const Placement &p) {
  if (!p.inSbuf())
    return false;
  auto shape = cast<ncore::TileType>(p.root.getType()).getShape();
  return shape.size() == 2 && p.pitch > 0 && shape[1] % p.pitch == 0 &&
         p.rowOffset % kNumPartitions == 0;
}

/// The [P, tiles, n] window of an SBUF placement that takes columns
/// [col, col + n) of `tiles` row tiles from tile `tile0` (P = the
/// placement's partitions): one access pattern for many row tiles.
static Value rowTilesWindow(ProgramLowering &pl, const Placement &p,
                            Index tile0, int64_t tiles, Index col, int64_t n) {
  auto rootShape = cast<ncore::TileType>(p.root.getType()).getShape();
  Value r = pl.reshape(p.root, {rootShape[0], rootShape[1] / p.pitch, p.pitch});
  return pl.view(r, {p.partitions(), tiles, n},
                 {0, tile0 + p.rowOffset / kNumPartitions, col + p.colOffset});
}

/// The copies of a head swap in SBUF, one per head: [128, S / 128, D]
/// windows of `seqMajor` (rows s of [S, H * D], columns h * D ..) to
/// `headMajor` (rows h * S + s of [H * S, D]), or the other way round with
/// `toHeads` false.
static void copyHeadsOnChip(ProgramLowering &pl, const Placement &seqMajor,
                            const Placement &headMajor, int64_t heads,
                            int64_t seq, int64_t d, bool toHeads) {
  int64_t t = seq / kNumPartitions;
  pl.forRange(heads, [&](Index h) {
    Value a = rowTilesWindow(pl, seqMajor, 0, t, h * d, d);
    Value b = rowTilesWindow(pl, headMajor, h * t, t, 0, d);
    if (toHeads)
      pl.copy(b, a);
    else
      pl.copy(a, b);
  });
}

static LogicalResult lowerReshape(ProgramLowering &pl, Operation *o) {
  auto op = cast<ReshapeOp>(o);
  auto x = pl.get(op.getInput(), op);
  if (failed(x))
    return failure();
  SmallVector<int64_t> shape = shapeOf(op.getResult());
  auto [rows, cols] = matrixOf(shape);
  if (cols == x->cols) {
    pl.bind(op.getResult(), ProgramLowering::withShape(*x, shape));
    return success();
  }
  if (!x->inSbuf() && x->isContiguous()) {
    Placement p = *x;
    Value rowsView =
        pl.view(x->root, {x->rows, x->cols}, {Index(x->rowOffset), 0});
    p.root = pl.reshape(rowsView, {rows, cols});
    p.rowOffset = 0;
    p.rows = rows;
    p.cols = p.pitch = cols;
    p.shape = shape;
    pl.bind(op.getResult(), p);
    return success();
  }
  // [.., S, H * D] -> [.., S, H, D] in SBUF, read only by head swaps: the
  // result keeps x's rows x cols (its shape's last dim is then below
  // `cols`), and each transpose copies on chip (lowerTranspose).
  unsigned rank = shape.size();
  if (rowTilesExpressible(*x) && x->cols == x->shape.back() &&
      rank == x->shape.size() + 1 && rank >= 3 &&
      shape[rank - 2] * shape[rank - 1] == x->cols &&
      !op.getResult().use_empty() &&
      llvm::all_of(op.getResult().getUsers(), [&](Operation *user) {
        auto t = dyn_cast<TransposeOp>(user);
        return t && isHeadSwap(t.getPerm(), shape, rank - 3) &&
               pl.fitsSbuf(t.getResult());
      })) {
    pl.bind(op.getResult(), ProgramLowering::withShape(*x, shape));
    return success();
  }
  // Rows move to other partitions: write the tensor to HBM once (a
  // relayout), where the reshape is free.
  Value src = pl.contiguousHbm(*x, op);
  Placement p = *x;
  p.root = pl.reshape(src, {rows, cols});
  p.space = MemSpace::Hbm;
  p.rowOffset = p.colOffset = 0;
  p.rows = rows;
  p.cols = p.pitch = cols;
  p.shape = shape;
  pl.bind(op.getResult(), p);
  return success();
}

static LogicalResult lowerSlice(ProgramLowering &pl, Operation *o) {
  auto op = cast<SliceOp>(o);
  auto x = pl.get(op.getInput(), op);
  if (failed(x))
    return failure();
  SmallVector<int64_t> in = shapeOf(op.getInput()),
                       res = shapeOf(op.getResult());
  ArrayRef<int64_t> offs = op.getOffsets();
  unsigned rank = in.size();
  // Columns only.
  bool colsOnly = true;
  for (unsigned d = 0; d + 1 < rank; ++d)
    colsOnly &= offs[d] == 0 && in[d] == res[d];
  if (colsOnly) {
    Placement p = *x;
    p.colOffset += offs[rank - 1];
    p.cols = res[rank - 1];
    p.shape = res;
    pl.bind(op.getResult(), p);
    return success();
  }
  // Whole rows: dims after k full, dims before k of size 1 in the result.
  int64_t k = -1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (res[d] != in[d] || offs[d] != 0) {
      k = d;
      break;
    }
  bool rowRange = k >= 0 && k + 1 < int64_t(rank);
  for (int64_t d = 0; d < k; ++d)
    rowRange &= res[d] == 1;
  if (rowRange) {
    int64_t start = 0;
    for (unsigned d = 0; d + 1 < rank; ++d)
      start = start * in[d] + offs[d];
    if (!x->inSbuf() || (start % kNumPartitions == 0)) {
      Placement p = *x;
      p.rowOffset += start;
      p.rows = matrixOf(res).first;
      p.shape = res;
      pl.bind(op.getResult(), p);
      return success();
    }
  }
  Placement out;
  Value dst = resultHbm(pl, op.getResult(), out);
  Value src = pl.contiguousHbm(*x, op);
  SmallVector<Index> offsets;
  for (int64_t off : offs)
    offsets.push_back(Index(off));
  pl.dma(dst, pl.view(src, res, offsets));
  return success();
}

/// Copies rows [srcRow0, + p) of `src` to rows [dstRow0, + p) of `dst`
/// (whole rows of equal width): tensor_copy on chip, else one DMA.
static void copyRows(ProgramLowering &pl, const Placement &dst, Index dstRow0,
                     const Placement &src, Index srcRow0, int64_t p) {
  Value d = pl.window(dst, dstRow0, p, 0, dst.cols);
  Value s = pl.window(src, srcRow0, p, 0, src.cols);
  if (dst.inSbuf() && src.inSbuf())
    pl.copy(d, s);
  else
    pl.dma(d, s);
}

/// Concatenation along the row dim (dim rank - 2) into SBUF: per outer
/// index, each operand is a block of whole rows of the result, copied by row
/// tiles. Taken when the result fits SBUF and every block starts on a
/// 128-row boundary (false: nothing emitted, use the HBM path).
static bool lowerRowConcat(ProgramLowering &pl, ConcatOp op,
                           ArrayRef<int64_t> res) {
  unsigned rank = res.size();
  int64_t dim = op.getDim();
  if (rank < 2 || dim != int64_t(rank) - 2)
    return false;
  int64_t outer = 1;
  for (unsigned d = 0; d + 2 < rank; ++d)
    outer *= res[d];
  SmallVector<Placement> ins;
  SmallVector<int64_t> offsets;
  bool blocksAligned = outer == 1 || res[dim] % kNumPartitions == 0;
  int64_t at = 0;
  for (Value input : op.getInputs()) {
    auto x = pl.get(input, op);
    if (failed(x))
      return false;
    int64_t rows = shapeOf(input)[dim];
    // An SBUF operand is read in windows starting at o * rows.
    if (outer > 1 && x->inSbuf() && rows % kNumPartitions)
      return false;
    blocksAligned &= at % kNumPartitions == 0;
    ins.push_back(*x);
    offsets.push_back(at);
    at += rows;
  }
  // SBUF result windows start at o * R + offset: 128-row aligned blocks
  // only. An HBM result is better served by one N-d DMA per operand.
  if (!blocksAligned || !pl.fitsSbuf(op.getResult()))
    return false;
  Placement y = pl.placeResult(op.getResult());
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    int64_t rows = shapeOf(input)[dim], off = offsets[i];
    const Placement &x = ins[i];
    pl.forRange(outer, [&](Index o) {
      pl.forEachRowTile(rows, [&](Index r0, int64_t p) {
        copyRows(pl, y, o * res[dim] + off + r0, x, o * rows + r0, p);
      });
    });
  }
  return true;
}

/// A concatenation along the columns whose result can live in SBUF row
/// tiles (real, up to one tile of rows or whole tiles); placement budget
/// aside.
static bool isOnChipColumnConcat(ConcatOp op) {
  SmallVector<int64_t> res = shapeOf(op.getResult());
  auto [rows, cols] = matrixOf(res);
  return !isa<ComplexType>(op.getType().getElementType()) &&
         int64_t(op.getDim()) == int64_t(res.size()) - 1 &&
         (rows <= kNumPartitions || rows % kNumPartitions == 0);
}

void conversion::placeConcatOperandsInPlace(ProgramLowering &pl, Block &body) {
  for (Operation &op : body) {
    auto cat = dyn_cast<ConcatOp>(op);
    if (!cat || !isOnChipColumnConcat(cat))
      continue;
    int64_t at = 0;
    for (Value in : cat.getInputs()) {
      Operation *def = in.getDefiningOp();
      if (def && def->getBlock() == &body && in.hasOneUse() &&
          isa<GeluOp, GeluTanhOp, SiluOp, AddOp, MulOp, LinearOp>(def))
        pl.concatInPlace(in, cat.getResult(), at);
      at += shapeOf(in).back();
    }
  }
}

static LogicalResult lowerConcat(ProgramLowering &pl, Operation *o) {
  auto op = cast<ConcatOp>(o);
  SmallVector<int64_t> res = shapeOf(op.getResult());
  int64_t dim = op.getDim();
  if (lowerRowConcat(pl, op, res))
    return success();
  // Along the columns into SBUF: every row stays on its partition, so an
  // operand in SBUF is one on-chip copy into its columns of the result (and
  // one in HBM a DMA per row tile), with no round trip through HBM; one its
  // producer wrote in place is nothing.
  auto [rows, cols] = matrixOf(res);
  if (isOnChipColumnConcat(op) && pl.fitsSbuf(op.getResult())) {
    SmallVector<Placement> ins;
    for (Value input : op.getInputs()) {
      auto x = pl.get(input, op);
      if (failed(x))
        return failure();
      ins.push_back(*x);
    }
    Placement out = pl.placeResult(op.getResult());
    int64_t at = 0;
    for (auto [input, x] : llvm::zip(op.getInputs(), ins)) {
      int64_t n = shapeOf(input).back();
      if (x.root == out.root && x.colOffset == out.colOffset + at) {
        at += n; // written in place by its producer
        continue;
      }
      if (rowTilesExpressible(x)) {
        int64_t tiles = out.rowTiles();
        pl.copy(rowTilesWindow(pl, out, 0, tiles, Index(at), n),
                rowTilesWindow(pl, x, 0, tiles, 0, n));
      } else {
        pl.forEachRowTile(rows, [&](Index r0, int64_t p) {
          pl.dma(pl.window(out, r0, p, Index(at), n),
                 pl.window(x, r0, p, 0, n));
        });
      }
      at += n;
    }
    return success();
  }
  Placement out;
  Value dst = resultHbm(pl, op.getResult(), out);
  int64_t at = 0;
  for (Value input : op.getInputs()) {
    auto x = pl.get(input, op);
    if (failed(x))
      return failure();
    SmallVector<int64_t> in = shapeOf(input);
    Value src = pl.contiguousHbm(*x, op);
    SmallVector<Index> offsets(res.size(), 0);
    offsets[dim] = Index(at);
    pl.dma(pl.view(dst, in, offsets), src);
    at += in[dim];
  }
  return success();
}

/// [..., A, B] -> [..., B, A]: 128 x 128 blocks transposed on the Tensor
/// engine (SBUF -> PSUM -> SBUF), loops over the batch and both block axes.
static LogicalResult lowerSwapLastTwo(ProgramLowering &pl, TransposeOp op,
                                      const Placement &x,
                                      ArrayRef<int64_t> in) {
  unsigned rank = in.size();
  int64_t a = in[rank - 2], b = in[rank - 1];
  int64_t batch = 1;
  for (unsigned d = 0; d + 2 < rank; ++d)
    batch *= in[d];
  // Batches start at rows k * A (source) and k * B (result).
  Placement src = pl.rowAlignedOrRelayout(x, a);
  Placement y = pl.placeResult(op.getResult());
  Placement ya = ProgramLowering::rowAligned(y, b)
                     ? y
                     : pl.hbmScratch(y.shape, y.elementType, "relayout");
  Type f32 = pl.builder().getF32Type();
  Value tp[2];
  for (unsigned i = 0; i < 2; ++i)
    tp[i] = pl.alloc(MemSpace::Psum,
                     {std::min(b, kNumPartitions), std::min(a, kNumPartitions)},
                     f32);
  auto zero = Index(0);
  // A source in HBM arrives a whole row block [128, B] at a time (one DMA
  // that ncore-split-dma spreads over the queues) when that fits, rather
  // than as [128, 128] blocks that each pay the DMA's fixed cost and wait
  // for a buffer; the transposes alternate two PSUM tiles.
  // A small source (ProgramLowering::stagedInSbuf) is loaded whole first,
  // all row blocks' DMAs issued together, when its batches start at row
  // tiles.
  int64_t eb = x.elementType.isBF16() ? 2 : 4;
  bool wholeRows = !src.inSbuf() && 2 * b * eb <= pl.workingBudget();
  if (wholeRows && (batch == 1 || a % kNumPartitions == 0)) {
    int64_t budget = pl.workingBudget() / 2;
    src = pl.stagedInSbuf(src, budget);
  }
  auto transposeBlock = [&](Index k, Index a0, int64_t pa, Index b0, int64_t pb,
                            Value blk, unsigned par) {
    Value t = pl.view(tp[par], {pb, pa}, {zero, zero});
    pl.transpose(t, blk);
    Value out = pl.outTile(ya, k * b + b0, pb, a0, pa);
    pl.copy(out, t);
    pl.storeOut(ya, k * b + b0, pb, a0, pa, out);
  };
  pl.forRange(batch, [&](Index k) {
    pl.forEachChunk(a, kNumPartitions, [&](Index a0, int64_t pa, bool) {
      Value rows = wholeRows ? pl.load(src, k * a + a0, pa, 0, b) : Value();
      pl.forEachChunkAlternating(
          b, kNumPartitions, [&](Index b0, int64_t pb, unsigned par) {
            Value blk = rows ? pl.view(rows, {pa, pb}, {zero, b0})
                             : pl.load(src, k * a + a0, pa, b0, pb);
            transposeBlock(k, a0, pa, b0, pb, blk, par);
          });
    });
  });
  if (ya.root != y.root)
    pl.copyInto(y, ya);
  return success();
}

static LogicalResult lowerTranspose(ProgramLowering &pl, Operation *o) {
  auto op = cast<TransposeOp>(o);
  auto x = pl.get(op.getInput(), op);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> in = shapeOf(op.getInput()),
                       res = shapeOf(op.getResult());
  unsigned rank = in.size();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank))) {
    pl.bind(op.getResult(), ProgramLowering::withShape(*x, res));
    return success();
  }
  // Head swaps in SBUF (isHeadSwap): [S, H * D] columns split by a reshape
  // into [H * S, D] rows, or back into columns when only reshapes that
  // merge [H, D] again read the result.
  bool splitCols = x->inSbuf() && x->cols != in.back();
  if (splitCols && pl.fitsSbuf(op.getResult())) {
    Placement out = pl.placeResult(op.getResult());
    copyHeadsOnChip(pl, *x, out, in[rank - 2], in[rank - 3], in[rank - 1],
                    /*toHeads=*/true);
    return success();
  }
  if (rowTilesExpressible(*x) && !splitCols && isHeadSwap(perm, in, rank - 2) &&
      pl.fitsSbuf(op.getResult()) &&
      llvm::all_of(op.getResult().getUsers(), [&](Operation *user) {
        auto r = dyn_cast<ReshapeOp>(user);
        if (!r)
          return false;
        ArrayRef<int64_t> m = r.getResult().getType().getShape();
        return m.size() + 1 == rank &&
               m.take_front(rank - 2) == ArrayRef(res).take_front(rank - 2) &&
               m.back() == res[rank - 2] * res[rank - 1];
      })) {
    Placement out = pl.placeResult(op.getResult());
    out.rows = in[rank - 2];
    out.cols = out.pitch = in[rank - 3] * in[rank - 1];
    pl.bind(op.getResult(), out);
    copyHeadsOnChip(pl, out, *x, in[rank - 3], in[rank - 2], in[rank - 1],
                    /*toHeads=*/false);
    return success();
  }
  if (perm.back() != int64_t(rank) - 1) {
    if (!isLowerableTransposePerm(perm)) {
      std::string str;
      llvm::raw_string_ostream os(str);
      llvm::interleaveComma(perm, os);
      return op.emitOpError()
             << "convert-seam-to-ncore: transpose perm [" << str
             << "] moves the last dimension elsewhere than a swap of the "
                "last two (not lowered)";
    }
    return lowerSwapLastTwo(pl, op, *x, in);
  }
  // Outer result dims [0, rank - 2) become loops (size-1 dims skipped).
  SmallVector<unsigned> loopDims;
  for (unsigned d = 0; d + 2 < rank; ++d)
    if (res[d] > 1)
      loopDims.push_back(d);
  if (loopDims.size() > ncore::kMaxLoopDepth)
    return op.emitOpError()
           << "convert-seam-to-ncore: transpose needs " << loopDims.size()
           << " nested loops (max " << ncore::kMaxLoopDepth << ")";
  int64_t outer = 1;
  for (unsigned d = 0; d + 2 < rank; ++d)
    outer *= res[d];
  int64_t n = res[rank - 2], cols = res[rank - 1];
  // Into SBUF (row tiles of the result, DMA'd from HBM windows) when the
  // result fits and each outer index starts a 128-row tile; else HBM.
  bool toSbuf = (outer == 1 || n % kNumPartitions == 0) &&
                pl.fitsSbuf(op.getResult()) &&
                loopDims.size() < ncore::kMaxLoopDepth;
  Value src;
  if (splitCols) { // the head swap did not fit SBUF: x as its [S, H * D]
    Placement flat = *x;
    flat.shape = {x->rows, x->cols};
    src = pl.reshape(pl.contiguousHbm(flat, op), in);
  } else {
    src = pl.contiguousHbm(*x, op);
  }
  Placement out;
  Value dst;
  if (toSbuf)
    out = pl.placeResult(op.getResult());
  else
    dst = resultHbm(pl, op.getResult(), out);
  // HBM to HBM: one DMA per index of the outer dims of the result, or of
  // the input when those are fewer ([1, 6, 768, 128] -> [1, 768, 6, 128]:
  // 6 DMAs of [768, 128] instead of 768 of [6, 128], each transfer paying
  // the DMA fixed cost).
  int64_t inOuter = 1;
  for (unsigned d = 0; d + 2 < rank; ++d)
    inOuter *= in[d];
  if (!toSbuf && inOuter < outer) {
    SmallVector<int64_t> inv(rank);
    for (unsigned d = 0; d < rank; ++d)
      inv[perm[d]] = d;
    SmallVector<unsigned> inLoops;
    for (unsigned d = 0; d + 2 < rank; ++d)
      if (in[d] > 1)
        inLoops.push_back(d);
    SmallVector<Index> at(rank, 0);
    std::function<void(unsigned)> emitIn = [&](unsigned level) {
      if (level < inLoops.size()) {
        pl.forRange(in[inLoops[level]], [&](Index i) {
          at[inLoops[level]] = i;
          emitIn(level + 1);
        });
        return;
      }
      SmallVector<int64_t> srcSizes(rank, 1), dstSizes(rank, 1);
      srcSizes[rank - 2] = in[rank - 2];
      srcSizes[rank - 1] = cols;
      dstSizes[inv[rank - 2]] = in[rank - 2];
      dstSizes[rank - 1] = cols;
      SmallVector<Index> dstOff(rank, 0);
      for (unsigned d = 0; d + 2 < rank; ++d)
        dstOff[inv[d]] = at[d];
      pl.dma(pl.view(dst, dstSizes, dstOff), pl.view(src, srcSizes, at));
    };
    emitIn(0);
    return success();
  }
  SmallVector<Index> idx(rank, 0);
  std::function<void(unsigned)> emit = [&](unsigned level) {
    if (level < loopDims.size()) {
      pl.forRange(res[loopDims[level]], [&](Index i) {
        idx[loopDims[level]] = i;
        emit(level + 1);
      });
      return;
    }
    SmallVector<Index> srcOff(rank, 0);
    for (unsigned d = 0; d + 2 < rank; ++d)
      srcOff[perm[d]] = idx[d];
    if (toSbuf) {
      Index flat = Index(0);
      for (unsigned d = 0; d + 2 < rank; ++d)
        flat = flat * res[d] + idx[d];
      pl.forEachRowTile(n, [&](Index r0, int64_t p) {
        SmallVector<int64_t> srcSizes(rank, 1);
        srcSizes[perm[rank - 2]] = p;
        srcSizes[rank - 1] = cols;
        SmallVector<Index> off = srcOff;
        off[perm[rank - 2]] = r0;
        pl.dma(pl.window(out, flat * n + r0, p, 0, cols),
               pl.view(src, srcSizes, off));
      });
      return;
    }
    SmallVector<int64_t> dstSizes(rank, 1), srcSizes(rank, 1);
    dstSizes[rank - 2] = n;
    dstSizes[rank - 1] = cols;
    srcSizes[perm[rank - 2]] = n;
    srcSizes[rank - 1] = cols;
    SmallVector<Index> dstOff(rank, 0);
    for (unsigned d = 0; d + 2 < rank; ++d)
      dstOff[d] = idx[d];
    pl.dma(pl.view(dst, dstSizes, dstOff), pl.view(src, srcSizes, srcOff));
  };
  emit(0);
  return success();
}

void conversion::populateShapeLowerings(LoweringTable &table) {
  table[ReshapeOp::getOperationName()] = lowerReshape;
  table[SliceOp::getOperationName()] = lowerSlice;
  table[ConcatOp::getOperationName()] = lowerConcat;
  table[TransposeOp::getOperationName()] = lowerTranspose;
}
