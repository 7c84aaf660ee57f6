//===- ConvertNorm.cpp - layer_norm and rms_norm --------------------------===//
//
// Per row tile (rows on partitions, the normalised dim on the free axis):
//   layer_norm: sum x (tensor_reduce), -mean (tensor_scalar), sum (x - mean)^2
//     (activation square of x with the [P, 1] bias -mean and add-reduce: the
//     centred row is not needed for it), rstd = rsqrt(s / D + eps) (one
//     activation: scale 1/D, bias eps), the centred row x - mean (activation
//     identity with the bias), then (x - mean) * rstd * gamma (one
//     scalar_tensor_tensor pass) + beta (broadcast rows; gamma + scale_offset
//     once per op when the op has an offset).
//   rms_norm: sum x^2 (activation square with add-reduce; the tiles of the
//     second working set square and sum on the vector engines instead, a
//     product and an add-reduce, so that the Scalar engine, which does
//     nothing else here, is not the bottleneck of the q/k norms before an
//     attention), rstd as above,
//     y = x * rstd (* gamma). Both are software pipelined over two sets of
//     working tiles when there are several row tiles (three from three
//     whole tiles).
// Statistics stay fp32 (two-pass variance, centred inside the squaring
// activation). The centred row and the affine rows are kept in the output's
// dtype when that is bf16: each pass then streams bf16 at one element per
// cycle instead of fp32's two, at the cost of one bf16 rounding of
// x - mean and of gamma (+ offset), the precision of the output itself.
//
// When every reader of the result is a streamed linear (its weight a
// program argument), the norm also builds their X^T, row tile by row tile
// right after each tile is scaled (the linears' K split, Tensor-engine
// transposes through two PSUM tiles), and leaves it as the value's derived
// tile: the linear transposes nothing, and the transposes overlap the next
// tiles' statistics instead of waiting for the whole norm. Not when a
// linear independent of the norm comes before its first reader: the
// Tensor engine then has that to do during the norm. A layer_norm that
// builds X^T applies gamma and beta there, where the features are on
// partitions (per-partition scalars of the transposes' evacuations), and
// its row pass is (x - mean) * rstd in one two-operation tensor_scalar:
// sum, squares and normalise are its only passes over the row.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "passes/Remarks.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

namespace {

/// One norm's lowering (see the file comment), one method per step: check
/// the operands, place the result and allocate the working sets, decide
/// whether the norm builds its readers' X^T (and applies gamma and beta
/// there), then emit the row loop for one, two or three sets.
class NormLowering {
public:
  NormLowering(ProgramLowering &pl, Operation *op, Value input, Value scale,
               Value bias, double eps, bool centre, double scaleOffset)
      : pl(pl), op(op), input(input), scale(scale), bias(bias), eps(eps),
        centre(centre), scaleOffset(scaleOffset), result(op->getResult(0)) {}

  LogicalResult run() {
    if (failed(readOperands()))
      return failure();
    allocateSets();
    planTranspose();
    planAffineInXt();
    if (sets == 3)
      emitThreeSets();
    else if (sets == 2)
      emitTwoSets();
    else
      emitOneSet();
    pl.rowsProduced(input);
    return success();
  }

private:
  /// `out` = the placement of `v`, when `v` is set (else left empty).
  LogicalResult readIfSet(Value v, Placement &out) {
    if (!v)
      return success();
    FailureOr<Placement> p = pl.get(v, op);
    if (failed(p))
      return failure();
    out = *p;
    return success();
  }

  /// The operands' placements, and the sizes the norm can take.
  LogicalResult readOperands() {
    FailureOr<Placement> xp = pl.get(input, op);
    if (failed(xp))
      return failure();
    x = *xp;
    if (failed(readIfSet(scale, g)) || failed(readIfSet(bias, bt)))
      return failure();
    d = x.cols;
    if ((scale && g.rows * g.cols != d) || (bias && bt.rows * bt.cols != d))
      return op->emitOpError() << "convert-seam-to-ncore: scale and bias must "
                                  "have the normalised size "
                               << d;
    // Working set per partition (at most, in fp32): the centred row, the
    // input row when it is staged, the gamma/beta rows.
    bytes = d * 4 + d * 4 + 2 * d * 4;
    if (bytes > pl.target().workingBytes)
      return op->emitOpError()
             << "convert-seam-to-ncore: rows of " << d
             << " elements are too long to normalise in SBUF (" << bytes
             << " bytes per partition of working tiles, "
             << pl.target().workingBytes << " available)";
    return success();
  }

  /// Places the result and allocates the sets of working tiles.
  void allocateSets() {
    y = pl.placeResult(result);
    f32 = pl.builder().getF32Type();
    // The rows the affine passes stream: bf16 when the output is (see the
    // header), fp32 otherwise.
    rowType = y.elementType.isBF16() ? y.elementType : f32;
    pmax = std::min(x.rows, kNumPartitions);
    // A norm over several row tiles is software pipelined over two or three
    // sets of working tiles: the statistics of row tile i + 1 (or i + 2;
    // sum, centring, sum of squares, rstd) are issued before the scaling of
    // tile i, so that in the in-order engine queues one tile's statistics
    // overlap another's scaling instead of every tile waiting for the
    // previous one's chain.
    int64_t budget = pl.target().workingBytes;
    sets = x.rows > kNumPartitions && bytes + d * 4 <= budget ? 2 : 1;
    // Three sets when there are at least three whole row tiles and room:
    // the statistics then run two tiles ahead of the scaling. A tile's
    // chain (sum, squares, rstd, scaling, X^T) is longer than one tile of
    // any single engine's share of it, so with two sets the vector engines
    // idle between tiles (flux2-klein's single-stream norms: 3 sets took
    // 0.09 ms off the 16.7 ms step).
    if (sets == 2 && x.rows % kNumPartitions == 0 &&
        x.rows >= 3 * kNumPartitions && bytes + 2 * d * 4 <= budget)
      sets = 3;
    for (unsigned i = 0; i < sets; ++i) {
      work[i] = pl.alloc(MemSpace::Sbuf, {pmax, d}, rowType);
      s1[i] = pl.alloc(MemSpace::Sbuf, {pmax, 1}, f32);
      s2[i] = pl.alloc(MemSpace::Sbuf, {pmax, 1}, f32);
      rstd[i] = pl.alloc(MemSpace::Sbuf, {pmax, 1}, f32);
    }
  }

  /// X^T for the linears that read the result (see the header): built when
  /// every reader is a streamed linear and it fits.
  void planTranspose() {
    kb = kBlocksOf(d);
    pk = kb ? d / kb : 0;
    int64_t xtBytes = kb * x.rows * (y.elementType.isBF16() ? 2 : 4);
    bool buildXt = kb && x.rows > 1 && !result.use_empty() &&
                   llvm::all_of(result.getUsers(),
                                [&](Operation *u) {
                                  auto lin = dyn_cast<LinearOp>(u);
                                  return lin && fusible(lin) && fusible(op) &&
                                         lin.getInput() == result &&
                                         isa<BlockArgument>(lin.getWeight());
                                }) &&
                   xtBytes <= pl.workingBudget() / 2;
    // Unless the Tensor engine has other work to overlap with the norm: a
    // linear between the norm and its first reader (seam-overlap-independent
    // puts adaLN's modulation there), which the norm's transposes, waiting
    // for each tile in the in-order Tensor-engine queue, would hold up.
    for (Operation *next = op->getNextNode(); buildXt && next;
         next = next->getNextNode()) {
      if (llvm::is_contained(next->getOperands(), result))
        break;
      if (isa<LinearOp>(next))
        buildXt = false;
    }
    if (!buildXt)
      return;
    // Kept as the result's derived tile, in place of the result's bytes (its
    // readers take X^T only).
    xt = pl.alloc(MemSpace::Sbuf, {pk, kb * x.rows}, y.elementType);
    if (pl.keepDerivedTile(result, kb, xt, xtBytes, /*replacesV=*/true)) {
      for (unsigned i = 0; i < 2; ++i)
        tp[i] = pl.alloc(MemSpace::Psum, {pk, pmax}, f32);
      ++pl.statistics().normTransposes;
    } else {
      xt.getDefiningOp()->erase();
      xt = Value();
    }
  }

  /// A layer_norm that builds X^T applies gamma and beta where the features
  /// are on partitions: in the transposes' evacuations, per partition, from
  /// [pk, kb] columns in the K split (see transposeTileForLinear). The row
  /// pass is then (x - mean) * rstd, one two-operation tensor_scalar, and
  /// neither the centred row nor the broadcast gamma and beta rows are
  /// built: three passes over the row (sum, squares, normalise) instead of
  /// five. The row is read where it stays for the pipelined pass (x itself
  /// in SBUF, or the set's work tile, which x's DMA fills directly).
  void planAffineInXt() {
    affineInXt = xt && centre && (x.inSbuf() || x.elementType == rowType) &&
                 (!scale || g.rows == 1) && (!bias || bt.rows == 1);
    // The columns' tiles (see buildColumns), allocated here with the norm's
    // other working tiles.
    if (affineInXt && scale) {
      gammaIn = pl.alloc(MemSpace::Sbuf, {pk, kb}, g.elementType);
      gammaCol = scaleOffset != 0.0 ? pl.alloc(MemSpace::Sbuf, {pk, kb}, f32)
                                    : gammaIn;
    }
    if (affineInXt && bias)
      betaCol = pl.alloc(MemSpace::Sbuf, {pk, kb}, bt.elementType);
    if (affineInXt)
      ++pl.statistics().normAffineInXt;
    if (xt)
      decisionRemark(pl.target().remarks, op->getLoc())
          << "convert-seam-to-ncore: " << op->getName().stripDialect()
          << " builds the X^T of its "
          << std::distance(result.use_begin(), result.use_end())
          << " linear reader(s) (K = " << pk << " x " << kb << ")"
          << (affineInXt ? "; gamma and beta applied per feature in the "
                           "transposes' evacuations"
                         : "");
  }

  /// The broadcast gamma / beta rows. With the pipelined order they are
  /// built after the first row tile's statistics, which do not need them: a
  /// modulation computed just before (adaLN's, folded into scale and bias)
  /// then does not hold up the statistics in the engine queues.
  void broadcastAffine() {
    if (scale && scaleOffset != 0.0) {
      // gamma + offset once per op, in fp32 (1 + a small modulation would
      // lose its low bits in bf16).
      gamma = pl.broadcastRow(g, 0, d, pmax,
                              pl.alloc(MemSpace::Sbuf, {pmax, d}, rowType));
      pl.tensorScalar(ncore::AluOp::Add, gamma, gamma, scaleOffset);
    } else if (scale) {
      gamma = pl.broadcastRow(g, 0, d, pmax);
    }
    if (bias)
      beta = pl.broadcastRow(bt, 0, d, pmax);
  }

  /// The gamma and beta columns for X^T: one DMA each (the [1, d] row read
  /// as [pk, kb] is the K split's order), gamma + offset in fp32 in one op
  /// that converts on the way. Built where broadcastAffine would be (after
  /// the first tile's statistics): an op waiting for a modulation computed
  /// just before would hold up the statistics queued behind it.
  void buildColumns() {
    if (scale) {
      pl.dma(gammaIn, pl.window(g, 0, 1, Index(0), d));
      if (scaleOffset != 0.0)
        pl.tensorScalar(ncore::AluOp::Add, gammaCol, gammaIn, scaleOffset);
    }
    if (bias)
      pl.dma(betaCol, pl.window(bt, 0, 1, Index(0), d));
  }

  void buildAffine() { affineInXt ? buildColumns() : broadcastAffine(); }

  /// The statistics of a row tile; returns the row to scale (the centred
  /// row in the set's work tile, or the input itself).
  Value statistics(Index r0, int64_t p, unsigned set) {
    Index zero(0);
    // The input's rows, when its producer runs in this loop (a residual
    // add, see RowProducer).
    pl.produceRows(input, r0, p);
    Value w = pl.view(work[set], {p, d}, {0, 0});
    Value in;
    // The row stays where the pipelined scaling reads it: x itself in SBUF,
    // or the set's work tile, which x's DMA fills directly (the centred row
    // is not built when the affine step is in X^T, nor by an rms_norm).
    bool rowInWork = (affineInXt || !centre) && !x.inSbuf();
    if (rowInWork) {
      pl.dma(w, pl.window(x, r0, p, zero, d));
      in = w;
    } else {
      in = pl.load(x, r0, p, zero, d);
    }
    Value a = pl.view(s1[set], {p, 1}, {0, 0});
    Value s = pl.view(s2[set], {p, 1}, {0, 0});
    Value r = pl.view(rstd[set], {p, 1}, {0, 0});
    Value negMean;
    if (centre) {
      pl.reduce(ncore::AluOp::Add, a, in);
      pl.tensorScalar(ncore::AluOp::Multiply, a, a, -1.0 / d);
      negMean = a;
    }
    // Sum of squares of the centred row, from x in fp32 inside the
    // activation; the squared row itself is not needed (written to the
    // output tile, which the scaling overwrites). An rms_norm's statistics
    // are all it has on the Scalar engine: every other tile squares and
    // sums on the vector engines instead (a product and an add-reduce, the
    // squares rounded to the output's dtype), so the two halves run
    // together.
    if (!centre && set == 1) {
      Value sq = pl.outTile(y, r0, p, zero, d);
      pl.tensorTensor(ncore::AluOp::Multiply, sq, in, in);
      pl.reduce(ncore::AluOp::Add, s, sq);
    } else {
      pl.activation(ncore::ActFunc::Square, pl.outTile(y, r0, p, zero, d), in,
                    1.0, 0.0, negMean, s);
    }
    pl.activation(ncore::ActFunc::Rsqrt, r, s, 1.0 / d, eps);
    if (!centre || affineInXt)
      return in;
    pl.activation(ncore::ActFunc::Identity, w, in, 1.0, 0.0, negMean);
    return w;
  }

  /// The scaling of a row tile (`src` from statistics or scaleSource), its
  /// affine step, its X^T and its store.
  void scaleRows(Index r0, int64_t p, unsigned set, Value src) {
    Index zero(0);
    Value out = pl.outTile(y, r0, p, zero, d);
    Value r = pl.view(rstd[set], {p, 1}, {0, 0});
    Value w = pl.view(work[set], {p, d}, {0, 0});
    if (affineInXt) {
      // (x - mean) * rstd into the row tile; gamma and beta on the way
      // into X^T. The result's readers take X^T only (keepDerivedTile
      // replaced its bytes): nothing reads this row form.
      pl.tensorScalar(ncore::AluOp::Add, pl.view(s1[set], {p, 1}, {0, 0}),
                      ncore::AluOp::Multiply, r, out, src);
      transposeTileForLinear(pl, out, p, pk, kb, xt, x.rows, r0, tp, gammaCol,
                             betaCol);
      return;
    }
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
    if (xt)
      transposeTileForLinear(pl, out, p, pk, kb, xt, x.rows, r0, tp);
    pl.storeOut(y, r0, p, zero, d, out);
  }

  /// The row the scaling of a tile reads: x itself when it stays in SBUF
  /// (the affine step in X^T, or an rms_norm), else the set's work tile.
  Value scaleSource(Index r0, int64_t p, unsigned set) {
    return (affineInXt || !centre) && x.inSbuf()
               ? pl.load(x, r0, p, Index(0), d)
               : pl.view(work[set], {p, d}, {0, 0});
  }

  /// Statistics of tiles 0 and 1, then steps t: statistics of t + 2 and the
  /// scaling of t (a loop unrolled over the three sets), then the scaling
  /// of the last two.
  void emitThreeSets() {
    int64_t n = x.rows / kNumPartitions;
    auto rowOf = [](Index t) { return t * kNumPartitions; };
    auto scaleTile = [&](Index t, unsigned set) {
      scaleRows(rowOf(t), kNumPartitions, set,
                scaleSource(rowOf(t), kNumPartitions, set));
    };
    statistics(Index(0), kNumPartitions, 0);
    buildAffine();
    statistics(Index(kNumPartitions), kNumPartitions, 1);
    pl.forRangeUnrolled(n - 2, 3, [&](Index t, unsigned c) {
      statistics(rowOf(t + 2), kNumPartitions, (c + 2) % 3);
      scaleTile(t, c);
    });
    scaleTile(Index(n - 2), unsigned((n - 2) % 3));
    scaleTile(Index(n - 1), unsigned((n - 1) % 3));
  }

  /// forEachChunkPipelined emits the first tile's statistics first, outside
  /// its loop; the affine rows (columns) follow them.
  void emitTwoSets() {
    bool affineBuilt = false;
    pl.forEachChunkPipelined(
        x.rows, kNumPartitions,
        [&](Index r0, int64_t p, unsigned set) {
          statistics(r0, p, set);
          if (!affineBuilt) {
            buildAffine();
            affineBuilt = true;
          }
        },
        [&](Index r0, int64_t p, unsigned set) {
          scaleRows(r0, p, set, scaleSource(r0, p, set));
        });
  }

  void emitOneSet() {
    buildAffine();
    pl.forEachRowTile(x.rows, [&](Index r0, int64_t p) {
      scaleRows(r0, p, 0, statistics(r0, p, 0));
    });
  }

  ProgramLowering &pl;
  Operation *op;
  Value input, scale, bias;
  double eps;
  bool centre;
  double scaleOffset;
  Value result;

  // Operands and sizes.
  Placement x, g, bt, y;
  int64_t d = 0, bytes = 0, pmax = 0;
  Type f32, rowType;

  // Working sets, and the broadcast gamma and beta rows.
  unsigned sets = 1;
  Value work[3], s1[3], s2[3], rstd[3];
  Value gamma, beta;

  // X^T for the readers, and the gamma and beta columns applied there.
  int64_t kb = 0, pk = 0;
  Value xt, tp[2];
  bool affineInXt = false;
  Value gammaCol, betaCol, gammaIn;
};

} // namespace

static LogicalResult lowerNorm(ProgramLowering &pl, Operation *op, Value input,
                               Value scale, Value bias, double eps, bool centre,
                               double scaleOffset = 0.0) {
  return NormLowering(pl, op, input, scale, bias, eps, centre, scaleOffset)
      .run();
}

static LogicalResult lowerLayerNorm(ProgramLowering &pl, Operation *o) {
  auto op = cast<LayerNormOp>(o);
  return lowerNorm(pl, op, op.getInput(), op.getScale(), op.getBias(),
                   op.getEpsilon().convertToDouble(), /*centre=*/true,
                   op.getScaleOffset().convertToDouble());
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

/// The rows a norm's loop keeps live, as a bound in fp32 (see lowerNorm):
/// two or three sets of work rows, the broadcast gamma, gamma + offset and
/// beta rows, the loaded input and the output tile when they are staged:
/// eight rows.
/// (Five, the tiles lowerNorm counts for its own check, let an f32
/// flux2-klein over-subscribe SBUF with a residual add fused in.)
static int64_t normRowBytes(Operation *op) {
  return 8 * matrixOf(shapeOf(op->getResult(0))).second * 4;
}

void conversion::populateNormRowConsumers(RowConsumerTable &consumers) {
  consumers[LayerNormOp::getOperationName()] = normRowBytes;
  consumers[RmsNormOp::getOperationName()] = normRowBytes;
}
