//===- ConvertNorm.cpp - layer_norm and rms_norm
//---------------------------===//
//
// Per row tile (rows on partitions, the normalised dim on the free axis):
//   layer_norm: sum x (tensor_reduce), -mean (tensor_scalar), x - mean
//     (activation identity with a per-partition [P, 1] bias), sum (x - mean)^2
//     (activation square with add-reduce), rstd = rsqrt(s / D + eps) (one
//     activation: scale 1/D, bias eps), y = (x - mean) * rstd (tensor_scalar
//     with the [P, 1] rstd), then * gamma + beta (broadcast rows).
//   rms_norm: sum x^2 (activation square with add-reduce), rstd as above,
//     y = x * rstd (* gamma).
// Statistics stay fp32; the centred row is fp32 (two-pass variance).
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

static LogicalResult lowerNorm(ProgramLowering &pl, Operation *op, Value input,
                               Value scale, Value bias, double eps,
                               bool centre) {
  auto x = pl.get(input, op);
  if (failed(x))
    return failure();
  FailureOr<Placement> g = Placement(), bt = Placement();
  if (scale && failed(g = pl.get(scale, op)))
    return failure();
  if (bias && failed(bt = pl.get(bias, op)))
    return failure();
  int64_t d = x->cols;
  if ((scale && g->rows * g->cols != d) || (bias && bt->rows * bt->cols != d))
    return op->emitOpError() << "convert-seam-to-ncore: scale and bias must "
                                "have the normalised size "
                             << d;
  // Working set per partition: the fp32 centred row, the input row when it
  // is staged, the gamma/beta rows.
  int64_t bytes = d * 4 + d * 4 + 2 * d * 4;
  if (bytes > pl.target().workingBytes)
    return op->emitOpError()
           << "convert-seam-to-ncore: rows of " << d
           << " elements are too long to normalise in SBUF (" << bytes
           << " bytes per partition of working tiles, "
           << pl.target().workingBytes << " available)";
  Placement y = pl.placeResult(op->getResult(0));
  Type f32 = pl.builder().getF32Type();
  int64_t pmax = std::min<int64_t>(x->rows, 128);
  Value gamma, beta;
  if (scale)
    gamma = pl.broadcastRow(*g, 0, d, pmax);
  if (bias)
    beta = pl.broadcastRow(*bt, 0, d, pmax);
  Value work = pl.alloc(MemSpace::Sbuf, {pmax, d}, f32);
  Value s1 = pl.alloc(MemSpace::Sbuf, {pmax, 1}, f32);
  Value s2 = pl.alloc(MemSpace::Sbuf, {pmax, 1}, f32);
  Value rstd = pl.alloc(MemSpace::Sbuf, {pmax, 1}, f32);
  auto zero = Index(0);
  pl.forEachRowTile(x->rows, [&](Index r0, int64_t p) {
    Value in = pl.load(*x, r0, p, zero, d);
    Value out = pl.outTile(y, r0, p, zero, d);
    Value w = pl.view(work, {p, d}, {0, 0});
    Value a = pl.view(s1, {p, 1}, {0, 0});
    Value s = pl.view(s2, {p, 1}, {0, 0});
    Value r = pl.view(rstd, {p, 1}, {0, 0});
    Value src = in;
    if (centre) {
      pl.reduce(ncore::AluOp::Add, a, in);
      pl.tensorScalar(ncore::AluOp::Multiply, a, a, -1.0 / d);
      pl.activation(ncore::ActFunc::Identity, w, in, 1.0, 0.0, a);
      src = w;
    }
    // Sum of squares; the squared row itself is not needed (written to out).
    pl.activation(ncore::ActFunc::Square, out, src, 1.0, 0.0, Value(), s);
    pl.activation(ncore::ActFunc::Rsqrt, r, s, 1.0 / d, eps);
    // The scaling by rstd rides in the affine step: (src * rstd) * gamma or
    // (src * rstd) + beta in one scalar_tensor_tensor pass.
    auto scaledThen = [&](ncore::AluOp alu, Value dst, Value row) {
      pl.create<ncore::ScalarTensorTensorOp>(
          dst, src, pl.view(row, {p, d}, {0, 0}), r,
          ncore::AluOpAttr::get(pl.context(), alu), FloatAttr(),
          ncore::EngineAttr());
    };
    if (scale && bias) {
      scaledThen(ncore::AluOp::Multiply, w, gamma);
      pl.tensorTensor(ncore::AluOp::Add, out, w, pl.view(beta, {p, d}, {0, 0}));
    } else if (scale) {
      scaledThen(ncore::AluOp::Multiply, out, gamma);
    } else if (bias) {
      scaledThen(ncore::AluOp::Add, out, beta);
    } else {
      pl.tensorScalar(ncore::AluOp::Multiply, out, src, r);
    }
    pl.storeOut(y, r0, p, zero, d, out);
  });
  return success();
}

static LogicalResult lowerLayerNorm(ProgramLowering &pl, Operation *o) {
  auto op = cast<LayerNormOp>(o);
  return lowerNorm(pl, op, op.getInput(), op.getScale(), op.getBias(),
                   op.getEpsilon().convertToDouble(), /*centre=*/true);
}

static LogicalResult lowerRmsNorm(ProgramLowering &pl, Operation *o) {
  auto op = cast<RmsNormOp>(o);
  return lowerNorm(pl, op, op.getInput(), op.getScale(), Value(),
                   op.getEpsilon().convertToDouble(), /*centre=*/false);
}

void conversion::populateNormLowerings(LoweringTable &table) {
  table[LayerNormOp::getOperationName()] = lowerLayerNorm;
  table[RmsNormOp::getOperationName()] = lowerRmsNorm;
}
