//===- ConvertLinear.cpp - seam.linear -> Tensor-engine matmuls ----------===//
//
// Y = X W (+ b), X [rows, K], W [K, N]. Per token tile of <= 128 rows:
//  1. X's K blocks are transposed on the Tensor engine (SBUF -> PSUM -> SBUF)
//     so that K sits on partitions: the stationary operand [K<=128, M<=128].
//  2. Per N block of <= 512 columns (one PSUM bank of fp32), the K blocks of
//     W [128, <=512] stream as the moving operand and accumulate in PSUM in an
//     ncore.loop (the first block overwrites, the rest accumulate).
//  3. The bank is evacuated to the output (SBUF or HBM) with the bias added.
// Token tiles, N blocks and K blocks are loops: nothing is unrolled.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/ConvertSeamToNcore.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

static LogicalResult lowerLinear(ProgramLowering &pl, Operation *o) {
  auto op = cast<LinearOp>(o);
  auto x = pl.get(op.getInput(), op), w = pl.get(op.getWeight(), op);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Placement> bias = Placement();
  if (op.getBias()) {
    bias = pl.get(op.getBias(), op);
    if (failed(bias))
      return failure();
  }
  int64_t k = x->cols, n = w->cols, rows = x->rows;
  if (w->rows != k || w->shape.size() != 2)
    return op.emitOpError() << "convert-seam-to-ncore: weight must be [K, N] "
                               "with K = "
                            << k << ", got " << w->rows << " x " << w->cols;
  Type et = x->elementType;
  if (w->elementType != et)
    return op.emitOpError() << "convert-seam-to-ncore: input and weight dtypes "
                               "differ (the Tensor engine multiplies equal "
                               "dtypes)";
  int64_t kBlocks = (k + 127) / 128;
  // The transposed row block [128, kBlocks * 128] of one token tile.
  int64_t xtBytes = kBlocks * 128 * (et.isBF16() ? 2 : 4);
  if (xtBytes > pl.target().workingBytes / 2)
    return op.emitOpError()
           << "convert-seam-to-ncore: K = " << k
           << " is too large: the transposed token tile needs " << xtBytes
           << " bytes per partition, more than half of the "
           << pl.target().workingBytes << " bytes of working SBUF";
  Placement y = pl.placeResult(op.getResult());
  Type f32 = pl.builder().getF32Type();
  int64_t nChunk = std::min<int64_t>(n, ncore::kMatmulMaxN);

  pl.forEachRowTile(rows, [&](Index r0, int64_t p) {
    // 1. X^T blocks: block kb at free offset kb * p, K rows on partitions.
    Value xt =
        pl.alloc(MemSpace::Sbuf, {std::min<int64_t>(k, 128), kBlocks * p}, et);
    Value tp = pl.alloc(MemSpace::Psum, {std::min<int64_t>(k, 128), p}, f32);
    pl.forEachChunk(k, 128, [&](Index k0, int64_t kc, bool) {
      Value xs = pl.load(*x, r0, p, k0, kc);
      Value tpv = pl.view(tp, {kc, p}, {pl.cst(0), pl.cst(0)});
      pl.create<ncore::TransposeOp>(tpv, xs, ncore::EngineAttr());
      Value dst = pl.view(xt, {kc, p}, {pl.cst(0), k0.floorDiv(128) * p});
      pl.create<ncore::TensorCopyOp>(dst, tpv, ncore::EngineAttr());
    });
    // 2./3. N blocks with K accumulated in PSUM.
    Value acc = pl.alloc(MemSpace::Psum, {p, nChunk}, f32);
    pl.forEachChunk(n, nChunk, [&](Index n0, int64_t nc, bool) {
      Value accv = pl.view(acc, {p, nc}, {pl.cst(0), pl.cst(0)});
      pl.forEachChunk(
          k, 128,
          [&](Index k0, int64_t kc, bool first) {
            Value st = pl.view(xt, {kc, p}, {pl.cst(0), k0.floorDiv(128) * p});
            Value mv = pl.load(*w, k0, kc, n0, nc);
            pl.create<ncore::MatmulOp>(accv, st, mv, /*accumulate=*/!first,
                                       ncore::EngineAttr());
          },
          /*peelFirst=*/true);
      Value out = pl.outTile(y, r0, p, n0, nc);
      if (op.getBias()) {
        Value bt = pl.broadcastRow(*bias, n0, nc, p);
        pl.create<ncore::TensorTensorOp>(out, accv, bt, ncore::AluOp::Add,
                                         ncore::EngineAttr());
      } else {
        pl.create<ncore::TensorCopyOp>(out, accv, ncore::EngineAttr());
      }
      pl.storeOut(y, r0, p, n0, nc, out);
    });
  });
  return success();
}

void conversion::populateLinearLowerings(LoweringTable &table) {
  table[LinearOp::getOperationName()] = lowerLinear;
}
