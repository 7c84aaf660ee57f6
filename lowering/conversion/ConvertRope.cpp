//===- ConvertRope.cpp - rotary position embedding ------------------------===//
//
// y = x * cos + rotate_half(x) * sin with rotate_half(x) = concat(-x2, x1):
//   y1 = x1 * cos1 - x2 * sin1,  y2 = x2 * cos2 + x1 * sin2.
// x, cos, sin and y whole in HBM with S a multiple of 128 (a standalone
// rope): whole heads, the rope kernel's emitter (lowerWholeHeads). Else on
// views of the two halves of a [p, D] tile (Vector engine, products in the
// output dtype): x is [B, H, S, D] (rows (b, h, s)); cos and sin are
// [S, D] tables read with the same row tiles as the positions: a loop over
// b * h and one over the position tiles.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "kernels/Kernels.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

void conversion::emitRopeTile(ProgramLowering &pl, Value out, Value x,
                              Value cos, Value sin, int64_t p, int64_t d) {
  // Products in the output's dtype: for bf16 every operand is then bf16
  // and contiguous, one cycle per element instead of two (the rounding of
  // each product adds about as much error as the final rounding to bf16).
  Type et = ncore::NcoreBuilder::tileOf(out).getElementType();
  int64_t h = d / 2;
  Value xc = pl.alloc(MemSpace::Sbuf, {p, d}, et);
  Value t = pl.alloc(MemSpace::Sbuf, {p, h}, et);
  auto half = [&](Value v, int64_t i) {
    return pl.view(v, {p, h}, {0, Index(i * h)});
  };
  auto tt = [&](ncore::AluOp alu, Value dst, Value a, Value b) {
    pl.tensorTensor(alu, dst, a, b);
  };
  tt(ncore::AluOp::Multiply, xc, x, cos);
  tt(ncore::AluOp::Multiply, t, half(x, 1), half(sin, 0));
  tt(ncore::AluOp::Subtract, half(out, 0), half(xc, 0), t);
  tt(ncore::AluOp::Multiply, t, half(x, 0), half(sin, 1));
  tt(ncore::AluOp::Add, half(out, 1), half(xc, 1), t);
}

/// The HBM tile of a contiguous HBM placement's rows x cols, or null.
static Value contiguousRows(ProgramLowering &pl, const Placement &t) {
  if (t.inSbuf() || !t.isContiguous())
    return {};
  TileType root = ncore::NcoreBuilder::tileOf(t.root);
  if (root.getShape().size() == 2 && root.getShape()[0] == t.rows &&
      t.rowOffset == 0)
    return t.root;
  return pl.view(t.root, {t.rows, t.cols}, {Index(t.rowOffset), Index(0)});
}

/// x, cos, sin and y whole in HBM and S a multiple of 128 (a standalone
/// rope: an eager per-block program's, or the one-op program
/// --explain-kernels times): the plan of the rope kernel, whose
/// emitter this is (kernels/Rope.cpp emitRopeWholeHeads). Every head
/// resident, its rows at partition r / (S / 128) so that a head moves as
/// contiguous rows per partition, the tables read once for all heads (not
/// once per head and row tile), the transfers planned over the 16 queues,
/// the halves' sum accumulated on the Tensor engine. Before it, each row
/// tile of each head was one load, three table loads and one store on one
/// queue each (trn2 [1, 6, 256, 128] bf16: 20.0 us; 512: 38.0; 768: 55.9).
static bool lowerWholeHeads(ProgramLowering &pl, const Placement &x,
                            const Placement &c, const Placement &s,
                            const Placement &y, int64_t heads, int64_t seq,
                            int64_t d) {
  if (seq % kNumPartitions || d % 2)
    return false;
  Value xr = contiguousRows(pl, x), cr = contiguousRows(pl, c),
        sr = contiguousRows(pl, s), yr = contiguousRows(pl, y);
  if (!xr || !cr || !sr || !yr || c.rows != seq || s.rows != seq ||
      c.cols != d || s.cols != d)
    return false;
  RopeHeads r{xr, cr, sr, yr, heads, seq, d};
  if (ropeWholeHeadsBytes(r) > pl.workingBudget())
    return false;
  emitRopeWholeHeads(pl, r);
  return true;
}

static LogicalResult lowerRope(ProgramLowering &pl, Operation *o) {
  auto op = cast<RopeOp>(o);
  auto x = pl.get(op.getInput(), op), c = pl.get(op.getCos(), op),
       s = pl.get(op.getSin(), op);
  if (failed(x) || failed(c) || failed(s))
    return failure();
  if (x->shape.size() != 4)
    return op.emitOpError() << "convert-seam-to-ncore: rope input must be "
                               "[B, H, S, D]";
  int64_t heads = x->shape[0] * x->shape[1], seq = x->shape[2], d = x->shape[3];
  if (d % 2 || d > 4096)
    return op.emitOpError() << "convert-seam-to-ncore: rope head dim " << d
                            << " must be even and at most 4096";
  Placement y = pl.placeResult(op.getResult());
  if (lowerWholeHeads(pl, *x, *c, *s, y, heads, seq, d))
    return success();
  // Heads start at row h * S: SBUF windows need S % 128 == 0.
  Placement xa = pl.rowAlignedOrRelayout(*x, seq);
  Placement ya = ProgramLowering::rowAligned(y, seq)
                     ? y
                     : pl.hbmScratch(y.shape, y.elementType, "relayout");
  pl.forRange(heads, [&](Index hd) {
    pl.forEachRowTile(seq, [&](Index r0, int64_t p) {
      Index row = hd * seq + r0;
      Value xt = pl.load(xa, row, p, 0, d);
      Value ct = pl.load(*c, r0, p, 0, d);
      Value st = pl.load(*s, r0, p, 0, d);
      Value out = pl.outTile(ya, row, p, 0, d);
      emitRopeTile(pl, out, xt, ct, st, p, d);
      pl.storeOut(ya, row, p, 0, d, out);
    });
  });
  if (ya.root != y.root)
    pl.copyInto(y, ya);
  return success();
}

void conversion::populateRopeLowerings(LoweringTable &table) {
  table[RopeOp::getOperationName()] = lowerRope;
}
