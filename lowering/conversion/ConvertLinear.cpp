//===- ConvertLinear.cpp - seam.linear -> Tensor-engine matmuls ----------===//
//
// Y = X W (+ b), X [rows, K], W [K, N]. The weight is the large operand of
// a transformer linear (3072 x 9216 bf16 is 56 MB; the tokens of one step are
// a few MB), so the lowering streams it: W is read from HBM once per group of
// row tiles, in slabs of whole columns, each slab one large DMA, while the
// transposed X of the group stays resident in SBUF:
//
//   for each row group (as many 128-row tiles as SBUF holds):
//     X^T of the group: per row tile, K/pk Tensor-engine transposes
//     for each slab of `ns` columns (two buffers: the DMA of slab s+1
//     overlaps the matmuls of slab s):
//       slab <- W[:, slab]                      one DMA, pk partitions
//       for each row tile, each 512-column block of the slab:
//         PSUM <- sum over the K blocks of X^T block^T x W block
//         Y block <- PSUM (+ bias, activation, * scale)
//
// K is split as k = p * kb + j (p < pk partitions, j < kb blocks), not in
// consecutive blocks of 128: then W reshaped to [pk, kb, N] puts a whole
// slab on pk partitions with kb * ns elements each, which one DMA moves
// (consecutive blocks would need one DMA per block of 128 rows). X^T block j
// is the transpose of X's columns j, j + kb, ... (a strided view). A sum does
// not care in which order its terms come, so Y is unchanged.
//
// The slab width and the row group come from a cost model (`planLinear`):
// Tensor-engine time (fixed by the shapes), DMA time (weight passes x bytes,
// transfers x fixed cost, spread over the DMA queues) and the pipeline fill
// (the first slab is not overlapped), under the SBUF left by the program's
// live tensors. The choice is a remark and a statistic. When no plan fits
// (a K too large for two slabs, a weight that is not a contiguous HBM
// tensor, a K with no good split), the blocked order below is used: token
// tile -> N block -> K block, W read once per token tile.
//
// A streamed linear of many rows that the Tensor engine bounds hosts the
// one-row linear the driver paired with it (adaLN's modulation, placed
// just before it by seam-overlap-independent; see InterleavedWork): among
// the slab widths that split the guest's 128-column output blocks evenly,
// the plan is chosen as above with the guest's two slabs beside it; each
// guest slab is loaded after the host's and its matmuls follow the host
// slab's (interleaveMatvec). An attention hosts such a matvec the same way.
//
// A linear whose only reader is the input of another streamed linear (an
// MLP's first projection, its activation folded in, feeding the second)
// hands Y^T over instead of Y when its whole weight fits in SBUF beside
// them (`lowerHandoff`): W resident and stationary, X^T moving, so each
// PSUM block is [128 features, tokens], which is the second linear's X^T
// block (its K split's feature order), and the second linear transposes
// nothing. Bias and activation apply per partition on the evacuation.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "passes/Remarks.h"
#include "runtime/Profile.h"

#include "llvm/Support/FormatVariadic.h"

#include <memory>

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

/// The smallest number of blocks kb >= ceil(K / 128) that divides K (so that
/// K = pk * kb with pk <= 128 partitions), or 0 when pk would leave most of
/// the Tensor engine's rows idle.
int64_t conversion::kBlocksOf(int64_t k) {
  for (int64_t kb = llvm::divideCeil(k, kNumPartitions); kb <= k; ++kb)
    if (k % kb == 0)
      return k / kb * 2 > std::min<int64_t>(k, kNumPartitions) ? kb : 0;
  return 0;
}

void conversion::transposeTileForLinear(ProgramLowering &pl, Value rows,
                                        int64_t p, int64_t pk, int64_t kb,
                                        Value xt, int64_t stride, Index r0,
                                        Value tp[2], Value gamma, Value beta) {
  pl.forEachChunkAlternating(kb, 1, [&](Index j, int64_t, unsigned par) {
    Value src = kb == 1 ? pl.view(rows, {p, pk}, {0, j})
                        : pl.view(rows, {p, pk}, {0, j}, {1, kb});
    Value tpv = pl.view(tp[par], {pk, p}, {0, 0});
    pl.transpose(tpv, src);
    Value dst = pl.view(xt, {pk, p}, {0, j * stride + r0});
    auto column = [&](Value v) { return pl.view(v, {pk, 1}, {0, j}); };
    if (gamma && beta)
      pl.tensorScalar(ncore::AluOp::Multiply, column(gamma), ncore::AluOp::Add,
                      column(beta), dst, tpv);
    else if (gamma)
      pl.tensorScalar(ncore::AluOp::Multiply, dst, tpv, column(gamma));
    else if (beta)
      pl.tensorScalar(ncore::AluOp::Add, dst, tpv, column(beta));
    else
      pl.copy(dst, tpv);
  });
}

namespace {

/// How one linear is lowered: the K split, the slab width, the row group.
struct LinearPlan {
  int64_t pk = 0, kb = 0;   ///< K = pk * kb
  int64_t slabCols = 0;     ///< ns: columns of W per slab DMA
  int64_t groupTiles = 0;   ///< row tiles whose X^T is resident together
  int64_t groups = 0;       ///< passes over W
  int64_t workingBytes = 0; ///< per partition, at once
  int64_t slabBytes = 0;    ///< one slab DMA, all partitions
  /// Y in HBM: stored slab by slab (false) or once after the last slab.
  bool storeAfter = false;
  double teNs = 0, dmaNs = 0, fillNs = 0;
  double estimateNs() const { return std::max(teNs, dmaNs) + fillNs; }
};

/// Whether a streamed linear of one row (a matvec: adaLN's modulation)
/// computes Y^T instead of Y: W blocks stationary, the single column of X^T
/// moving, the N outputs on partitions. Each matmul then takes the issue
/// floor (64 cycles) instead of N columns per K block, and a slab's outputs
/// fit one PSUM tile, evacuated once per slab. Needs N (and so every slab
/// width, multiples of 128) in whole blocks of 128, and no bias or scale
/// (`rowOperands`: such a row would have to be transposed too).
bool matvecTransposed(const Placement &x, int64_t n, bool rowOperands) {
  return x.rows == 1 && n % kNumPartitions == 0 &&
         n / kNumPartitions <= ncore::kMatmulMaxN && !rowOperands;
}

/// DMA pieces a transfer of `bytes` over `partitions` rows becomes
/// (ncore-split-dma's rule, estimated here without the exact piece size).
int64_t piecesOf(int64_t bytes, int64_t partitions, int64_t queues,
                 int64_t minPiece) {
  int64_t k = 1;
  while (k * 2 <= queues && partitions % (k * 2) == 0 &&
         bytes / (k * 2) >= minPiece)
    k *= 2;
  return k;
}

/// A one-row guest (see interleaveMatvec) a streamed linear would run
/// between its slabs: its 128-column output blocks are split evenly over
/// the host's slabs, two of its own slabs resident beside the host's.
struct GuestFit {
  int64_t blocks = 0;        ///< N / 128 of the guest
  int64_t bytesPerBlock = 0; ///< per partition, one block of its slab
  int64_t fixedBytes = 0;    ///< its X^T column and output row
};

/// The fit of `o` as a one-row guest of a streamed linear, or nullopt when
/// it is not a matvec interleaveMatvec can split.
std::optional<GuestFit> matvecGuestFit(ProgramLowering &pl, Operation *o) {
  auto op = dyn_cast_or_null<LinearOp>(o);
  if (!op || op.getBias() || op.getScale())
    return std::nullopt;
  FailureOr<Placement> x = pl.get(op.getInput(), op),
                       w = pl.get(op.getWeight(), op);
  if (failed(x) || failed(w) || x->rows != 1 || w->rows != x->cols ||
      w->elementType != x->elementType || w->inSbuf() || !w->isContiguous() ||
      w->rowOffset != 0 || !matvecTransposed(*x, w->cols, false))
    return std::nullopt;
  int64_t kb = kBlocksOf(x->cols);
  if (kb == 0)
    return std::nullopt;
  int64_t eb = x->elementType.isBF16() ? 2 : 4;
  return GuestFit{w->cols / kNumPartitions, kb * kNumPartitions * eb,
                  kb * eb + (w->cols / kNumPartitions) * eb};
}

std::optional<LinearPlan> planLinear(ProgramLowering &pl, const Placement &x,
                                     const Placement &w, const Placement &y,
                                     int64_t rowOperands,
                                     const GuestFit *guest = nullptr) {
  const ::seam::rt::Profile *prof = pl.target().profile;
  if (!prof || w.inSbuf() || !w.isContiguous() || w.rowOffset != 0)
    return std::nullopt;
  int64_t k = x.cols, n = w.cols, rows = x.rows;
  int64_t kb = kBlocksOf(k);
  if (kb == 0)
    return std::nullopt;
  int64_t pk = k / kb;
  int64_t eb = x.elementType.isBF16() ? 2 : 4;
  int64_t rowTiles = llvm::divideCeil(rows, kNumPartitions);
  double teGhz = prof->teClockGhz;
  double fp32 = x.elementType.isBF16() ? 1.0 : prof->matmulFp32Factor;
  int64_t queues = std::max<int64_t>(1, prof->dmaEngines);
  double queueBw = prof->dmaEngineBytesPerNs;
  double fixed = prof->dmaFixedCostNs;
  int64_t minPiece = int64_t(fixed * queueBw); // ncore-split-dma's floor

  // Tensor engine: the same for every plan (matmuls and transposes). A
  // matvec (see matvecTransposed) issues K/pk x N/128 matmuls of one column.
  double teCycles = 0;
  if (matvecTransposed(x, n, rowOperands > 0)) {
    int64_t colBlocks =
        n / kNumPartitions; // exact: a matvec's N is a multiple of 128
    teCycles =
        double(kb) * double(colBlocks) *
        std::min<double>(prof->matmulStationaryIssueCap, kNumPartitions) * fp32;
  } else {
    for (int64_t t = 0; t < rowTiles; ++t) {
      int64_t p = std::min<int64_t>(kNumPartitions, rows - t * kNumPartitions);
      for (int64_t c = 0; c < n; c += 512) {
        int64_t nc = std::min<int64_t>(512, n - c);
        teCycles += kb *
                    std::max<double>(
                        std::min<double>(prof->matmulStationaryIssueCap, p),
                        double(nc)) *
                    fp32;
      }
      teCycles +=
          kb *
          std::max<double>(std::min<double>(prof->matmulStationaryIssueCap, pk),
                           double(p)) *
          fp32;
    }
  }
  double teNs = teCycles / teGhz;

  int64_t budget = pl.workingBudget();
  int64_t xLoad = x.inSbuf() ? 0 : k * eb;
  // Y in HBM (its readers take it from there, see placeResult): staged in
  // SBUF and stored slab by slab while the next slabs compute, when the
  // Tensor engine bounds the linear (the queues have room for the stores
  // between the weight slabs). When the weight's DMA bounds it, a store
  // between two slabs delays the next slab by its own queue time and
  // overlaps nothing: Y is kept until the last slab and stored once.
  bool yToHbm = !y.inSbuf() && rows > 1;
  bool storeAfter = yToHbm && double(k) * n * eb / (queueBw * queues) > teNs;
  std::optional<LinearPlan> best;
  SmallVector<int64_t> widths;
  for (int64_t ns = kNumPartitions; ns < n; ns *= 2)
    widths.push_back(ns);
  widths.push_back(n);
  for (int64_t ns : widths) {
    // With a guest: whole slabs, as many as divide its blocks evenly.
    int64_t guestBytes = 0;
    if (guest) {
      if (n % ns || guest->blocks % (n / ns))
        continue;
      guestBytes = 2 * (guest->blocks / (n / ns)) * guest->bytesPerBlock +
                   guest->fixedBytes;
    }
    int64_t slabBytes = kb * ns * eb; // per partition
    // Two slab buffers, the loaded X tile, a broadcast bias per buffer.
    int64_t fixedBytes = 2 * slabBytes + 2 * xLoad + 2 * rowOperands * ns * eb;
    int64_t perTile = kb * kNumPartitions * eb;
    if (rows < kNumPartitions)
      perTile = kb * rows * eb;
    // Y in HBM: per row tile, the whole row of Y or two buffers of a slab's
    // columns (see storeAfter).
    if (yToHbm)
      perTile += storeAfter ? n * eb : 2 * ns * eb;
    int64_t g = (budget - fixedBytes - guestBytes) / perTile;
    if (g < 1 || (guest && g < rowTiles))
      continue;
    g = std::min(g, rowTiles);
    LinearPlan plan;
    plan.pk = pk;
    plan.kb = kb;
    plan.slabCols = ns;
    plan.groupTiles = g;
    plan.groups = (rowTiles + g - 1) / g;
    plan.storeAfter = storeAfter;
    plan.workingBytes = fixedBytes + g * perTile;
    int64_t slabs = (n + ns - 1) / ns;
    int64_t wBytes = k * n * eb;
    int64_t slabTotal = pk * slabBytes;
    double bytes = double(plan.groups) * wBytes +
                   (x.inSbuf() ? 0 : double(rows) * k * eb) +
                   (y.inSbuf() ? 0 : double(rows) * n * eb);
    double transfers =
        double(plan.groups * slabs) * piecesOf(slabTotal, pk, queues, minPiece);
    plan.teNs = teNs;
    plan.dmaNs = bytes / (queueBw * queues) + transfers * fixed / queues;
    plan.fillNs =
        fixed + double(slabTotal) /
                    (queueBw * piecesOf(slabTotal, pk, queues, minPiece));
    plan.slabBytes = slabTotal;
    // Fewest passes over W first; then slabs whose DMA spreads over every
    // queue in pieces of kTargetPieceBytes or more (a narrower slab only
    // wins when W has no such slab); then the estimate.
    int64_t target = queues * kTargetPieceBytes;
    auto better = [&](const LinearPlan &a, const LinearPlan &b) {
      if (a.groups != b.groups)
        return a.groups < b.groups;
      bool aBig = a.slabBytes >= target, bBig = b.slabBytes >= target;
      if (aBig != bBig)
        return aBig;
      // Within 2% of each other, the smaller working set: the budget is an
      // estimate of what the other live tiles leave, and SBUF packing
      // fragments near it (a [1, 3072] x [3072, 18432] modulation linear
      // with 2 x 48 KiB slabs next to a kernel call did not fit on trn1).
      double ea = a.estimateNs(), eb = b.estimateNs();
      if (std::abs(ea - eb) <= 0.02 * std::max(ea, eb) &&
          a.workingBytes != b.workingBytes)
        return a.workingBytes < b.workingBytes;
      return ea < eb;
    };
    if (!best || better(plan, *best))
      best = plan;
  }
  return best;
}

/// Evacuates one PSUM block to the output (adding the bias block `bt`),
/// applying the linear's activation, if any, on the way (one Scalar-engine
/// pass from PSUM instead of a copy; after the bias add with one), then its
/// column scale `sc` (the evacuation itself when it is the only epilogue: a
/// tensor_tensor reading PSUM costs what the copy costs).
void evacuate(ProgramLowering &pl, const Placement &y, Value acc, Value bt,
              Value sc, Index r0, int64_t p, Index col, int64_t nc,
              std::optional<ncore::ActFunc> act) {
  Value out = pl.outTile(y, r0, p, col, nc);
  if (bt) {
    pl.tensorTensor(ncore::AluOp::Add, out, acc, bt);
    if (act)
      pl.activation(*act, out, out);
  } else if (act) {
    pl.activation(*act, out, acc);
  } else if (sc) {
    pl.tensorTensor(ncore::AluOp::Multiply, out, acc, sc);
    sc = Value();
  } else {
    pl.copy(out, acc);
  }
  if (sc)
    pl.tensorTensor(ncore::AluOp::Multiply, out, out, sc);
  pl.storeOut(y, r0, p, col, nc, out);
}

/// One matmul of a matvec's Y^T (see lowerMatvec): K block j of output
/// block c of a slab of `cols` columns, whose cols / 128 blocks interleave
/// (stride) so that block c's outputs land on partitions in Y's order.
void matvecMatmul(ProgramLowering &pl, Value accv, Value slab, Value xt,
                  int64_t pk, int64_t cols, Index j, Index c, bool accumulate) {
  Value st = pl.view(slab, {pk, kNumPartitions}, {0, j * cols + c},
                     {1, cols / kNumPartitions});
  pl.matmul(accv, st, pl.view(xt, {pk, 1}, {0, j}), accumulate);
}

/// A matvec's Y^T accumulators ([128, N / 128] f32) evacuated once (the
/// activation applied on the way) and written back as Y's row, one DMA per
/// slab of `cols` columns.
void storeMatvecResult(ProgramLowering &pl, Value acc, const Placement &y,
                       int64_t n, int64_t cols,
                       std::optional<ncore::ActFunc> act) {
  Value out = pl.alloc(MemSpace::Sbuf, {kNumPartitions, n / kNumPartitions},
                       y.elementType);
  if (act)
    pl.activation(*act, out, acc);
  else
    pl.copy(out, acc);
  pl.forEachChunk(n, cols, [&](Index s0, int64_t c, bool) {
    pl.dma(pl.window(y, 0, 1, s0, c),
           pl.view(out, {kNumPartitions, c / kNumPartitions},
                   {0, s0.floorDiv(kNumPartitions)}));
  });
}

/// A matvec as Y^T (see matvecTransposed). In a slab of `cols` columns from
/// s0 (nbs = cols / 128 of them per partition), output column
/// s0 + p * nbs + c accumulates on partition p of PSUM column s0 / 128 + c,
/// from the stationary W[block j, s0 + c :: nbs] and the moving column j of
/// X^T. A slab's [128, nbs] outputs in row-major order are then Y's columns
/// in order: one DMA per slab writes them back as a row. One PSUM tile holds
/// every slab's columns and is evacuated once, after the last matmul: the
/// matmuls never wait for an evacuation, which may queue behind other work
/// of the vector engines (the norm this matvec is scheduled to overlap).
void lowerMatvec(ProgramLowering &pl, const LinearPlan &plan,
                 const Placement &x, const Placement &w, const Placement &y,
                 std::optional<ncore::ActFunc> act) {
  int64_t k = x.cols, n = w.cols;
  int64_t pk = plan.pk, kb = plan.kb, ns = plan.slabCols;
  Type et = x.elementType;
  pl.noteWorkingBytes(plan.workingBytes);
  // X^T [pk, kb]: k = p * kb + j at partition p, column j, which is X's own
  // row-major order: one DMA.
  Value xt = pl.alloc(MemSpace::Sbuf, {pk, kb}, et);
  pl.dma(xt, pl.window(x, 0, 1, 0, k));
  Value acc = pl.alloc(MemSpace::Psum, {kNumPartitions, n / kNumPartitions},
                       pl.builder().getF32Type());
  Value slabs[2];
  for (unsigned i = 0; i < 2; ++i)
    slabs[i] = pl.alloc(MemSpace::Sbuf, {pk, kb * ns}, et);
  Value w3 = pl.reshape(w.root, {pk, kb, n});
  auto loadSlab = [&](Index s0, int64_t cols, unsigned par) {
    Value buffer = slabs[par];
    Value dst = pl.reshape(
        cols == ns ? buffer : pl.view(buffer, {pk, kb * cols}, {0, 0}),
        {pk, kb, cols});
    pl.dma(dst, pl.view(w3, {pk, kb, cols}, {0, 0, s0}));
  };
  auto computeSlab = [&](Index s0, int64_t cols, unsigned par) {
    Index a0 = s0.floorDiv(kNumPartitions);
    pl.forEachChunk(cols / kNumPartitions, 1, [&](Index c, int64_t, bool) {
      Value accv = pl.view(acc, {kNumPartitions, 1}, {0, a0 + c});
      pl.forEachChunk(
          kb, 1,
          [&](Index j, int64_t, bool first) {
            matvecMatmul(pl, accv, slabs[par], xt, pk, cols, j, c, !first);
          },
          /*peelFirst=*/true);
    });
  };
  pl.forEachChunkPipelined(n, ns, loadSlab, computeSlab);
  storeMatvecResult(pl, acc, y, n, ns, act);
}

/// Whether every reader of `input` other than `op` is a later linear of it
/// whose weight is a program argument (so it streams and reuses X^T, see
/// lowerStreamed): then `input` itself is dead once X^T is built.
bool onlyLinearsRead(Value input, Operation *op) {
  return llvm::all_of(input.getUsers(), [&](Operation *user) {
    if (user == op)
      return true;
    auto lin = dyn_cast<LinearOp>(user);
    return lin && lin.getInput() == input &&
           isa<BlockArgument>(lin.getWeight()) && op->isBeforeInBlock(lin);
  });
}

/// X^T of rows [gRow0, gRow0 + gRows) of `x` into `xt` ([pk, kb *
/// groupRowsMax]: block j of row tile t at free offset j * groupRowsMax +
/// t), through the two PSUM tiles `tp`.
void transposeRows(ProgramLowering &pl, const Placement &x, Value xt,
                   int64_t pk, int64_t kb, int64_t groupRowsMax, int64_t gRow0,
                   int64_t gRows, Value tp[2]) {
  pl.forEachChunkAlternating(
      gRows, kNumPartitions, [&](Index t0, int64_t p, unsigned) {
        transposeTileForLinear(pl, pl.load(x, t0 + gRow0, p, 0, x.cols), p, pk,
                               kb, xt, groupRowsMax, t0, tp);
      });
}

/// Whether `op`'s result is handed to its only reader, a linear, as that
/// linear's X^T (see the file comment): the reader's weight streams (a
/// program argument with a K split), `op` has more than one row, no column
/// scale, a bias (if any) in HBM, its weight, its X^T (unless an earlier
/// linear left it), the Y^T and the PSUM blocks fit the working budget, and
/// loading the whole weight up front costs less than the transposes saved.
/// Returns the reader's K split (kb2), or 0.
int64_t handoffBlocks(ProgramLowering &pl, LinearOp op, const Placement &x,
                      const Placement &w, const std::optional<Placement> &bias,
                      bool scale, int64_t kb1) {
  Value result = op.getResult();
  if (!result.hasOneUse() || scale || x.rows < 2 || !pl.target().profile)
    return 0;
  auto next = dyn_cast<LinearOp>(*result.getUsers().begin());
  if (!next || next.getInput() != result ||
      !isa<BlockArgument>(next.getWeight()) || next.getScale() ||
      !pl.fitsSbuf(result))
    return 0;
  if (w.inSbuf() || !w.isContiguous() || w.rowOffset != 0 ||
      (bias && (bias->inSbuf() || !bias->isContiguous())))
    return 0;
  int64_t n = w.cols, kb2 = kBlocksOf(n);
  if (kb2 == 0 || n / kb2 != kNumPartitions || kb1 == 0)
    return 0;
  int64_t eb = x.elementType.isBF16() ? 2 : 4;
  int64_t rows = x.rows;
  bool xtDerived = bool(pl.derivedTile(op.getInput(), kb1));
  int64_t working = kb1 * n * eb + (bias ? kb2 * eb : 0) +
                    (xtDerived ? 0 : kb1 * rows * eb + x.cols * eb);
  // Y^T is the next linear's X^T: kept as its bytes (keepDerivedTile).
  int64_t yt = kb2 * rows * eb;
  if (working + yt > pl.workingBudget())
    return 0;
  // The whole weight arrives before the first matmul (a streamed linear
  // overlaps all but its first slab): worth it when that load takes less
  // than the transposes the next linear no longer does (rows / 128 x kb2
  // of them, each issuing 128 columns).
  const ::seam::rt::Profile &prof = *pl.target().profile;
  double fp32 = x.elementType.isBF16() ? 1.0 : prof.matmulFp32Factor;
  int64_t rowTiles = llvm::divideCeil(rows, kNumPartitions);
  double savedNs =
      double(rowTiles) * double(kb2) * 128.0 * fp32 / prof.teClockGhz;
  double loadNs =
      prof.dmaFixedCostNs +
      double(x.cols * n * eb) /
          (prof.dmaEngineBytesPerNs * std::max<int64_t>(1, prof.dmaEngines));
  if (loadNs > savedNs)
    return 0;
  return kb2;
}

/// Y^T of a linear handed to the next linear as its X^T (see the file
/// comment): `kb2` blocks of 128 features (feature p * kb2 + j on partition
/// p of block j), each [128, rows] at free offset j * rows.
/// False (having emitted nothing) when the budget cannot keep Y^T.
bool lowerHandoff(ProgramLowering &pl, LinearOp op, const Placement &x,
                  const Placement &w, const std::optional<Placement> &bias,
                  std::optional<ncore::ActFunc> act, int64_t kb2) {
  Value input = op.getInput(), result = op.getResult();
  int64_t k = x.cols, n = w.cols, rows = x.rows;
  int64_t kb1 = kBlocksOf(k), pk1 = k / kb1, pk2 = n / kb2;
  Type et = x.elementType, f32 = pl.builder().getF32Type();
  int64_t eb = et.isBF16() ? 2 : 4;
  // Y^T, kept as the result's derived tile for its reader (taking over the
  // result's own bytes: it has no Y).
  Value yt = pl.alloc(MemSpace::Sbuf, {pk2, kb2 * rows}, et);
  if (!pl.keepDerivedTile(result, kb2, yt, kb2 * rows * eb,
                          /*replacesV=*/true)) {
    yt.getDefiningOp()->erase();
    return false;
  }
  // The weight, resident: [pk1, kb1, N] (row p * kb1 + i at partition p,
  // block i), one DMA.
  Value wres = pl.alloc(MemSpace::Sbuf, {pk1, kb1 * n}, et);
  pl.dma(pl.reshape(wres, {pk1, kb1, n}), pl.reshape(w.root, {pk1, kb1, n}));
  // The bias as [pk2, kb2]: feature p * kb2 + j at partition p, column j,
  // which is its own row-major order.
  Value btile;
  if (bias) {
    btile = pl.alloc(MemSpace::Sbuf, {pk2, kb2}, bias->elementType);
    pl.dma(btile, pl.reshape(bias->root, {pk2, kb2}));
  }
  // X^T of every row: an earlier linear's, or transposed here.
  Value xt = pl.derivedTile(input, kb1);
  if (xt) {
    ++pl.statistics().transposesReused;
  } else {
    xt = pl.alloc(MemSpace::Sbuf, {pk1, kb1 * rows}, et);
    Value tp[2];
    for (unsigned i = 0; i < 2; ++i)
      tp[i] = pl.alloc(MemSpace::Psum,
                       {pk1, std::min<int64_t>(rows, kNumPartitions)}, f32);
    transposeRows(pl, x, xt, pk1, kb1, rows, 0, rows, tp);
  }
  int64_t accCols = std::min<int64_t>(rows, ncore::kMatmulMaxN);
  Value acc[2];
  for (unsigned i = 0; i < 2; ++i)
    acc[i] = pl.alloc(MemSpace::Psum, {pk2, accCols}, f32);
  pl.noteWorkingBytes(kb1 * n * eb + (bias ? kb2 * eb : 0) + kb1 * rows * eb);
  pl.forEachChunk(kb2, 1, [&](Index j, int64_t, bool) {
    pl.forEachChunkAlternating(
        rows, ncore::kMatmulMaxN, [&](Index t0, int64_t tc, unsigned par) {
          Value accv = pl.view(acc[par], {pk2, tc}, {0, 0});
          pl.forEachChunk(
              kb1, 1,
              [&](Index i, int64_t, bool first) {
                Value st = pl.view(wres, {pk1, pk2}, {0, i * n + j}, {1, kb2});
                Value mv = pl.view(xt, {pk1, tc}, {0, i * rows + t0});
                pl.matmul(accv, st, mv, /*accumulate=*/!first);
              },
              /*peelFirst=*/true);
          Value out = pl.view(yt, {pk2, tc}, {0, j * rows + t0});
          Value bcol = btile ? pl.view(btile, {pk2, 1}, {0, j}) : Value();
          if (act)
            pl.activation(*act, out, accv, 1.0, 0.0, bcol);
          else if (bcol)
            pl.tensorScalar(ncore::AluOp::Add, out, accv, bcol);
          else
            pl.copy(out, accv);
        });
  });
  // The result has no Y of its own: its only reader takes Y^T above. Its
  // placement gives that reader the shape (never read, see lowerLinear).
  Placement virt;
  virt.root = yt;
  virt.space = MemSpace::Sbuf;
  virt.elementType = et;
  virt.shape = shapeOf(result);
  std::tie(virt.rows, virt.cols) = matrixOf(virt.shape);
  virt.pitch = virt.cols;
  pl.bind(result, virt);
  ++pl.statistics().handoffs;
  return true;
}

/// A linear lowered weight-streaming (see LinearPlan): per row group, X^T of
/// the group, then W's slabs software-pipelined over two buffers, each
/// slab's output blocks accumulated in PSUM and evacuated (Y in HBM through
/// an SBUF stage). One method per step; the working tiles are members.
class StreamedLinear {
public:
  StreamedLinear(ProgramLowering &pl, const LinearPlan &plan, LinearOp op,
                 const Placement &x, const Placement &w, const Placement &y,
                 const std::optional<Placement> &bias,
                 const std::optional<Placement> &scale,
                 std::optional<ncore::ActFunc> act,
                 std::optional<InterleavedWork> guest)
      : pl(pl), plan(plan), op(op), x(x), w(w), y(y), act(act),
        guest(std::move(guest)) {
    rowOperands[0].row = &bias;
    rowOperands[1].row = &scale;
    k = x.cols;
    n = w.cols;
    rows = x.rows;
    pk = plan.pk;
    kb = plan.kb;
    ns = plan.slabCols;
    et = x.elementType;
    groupRowsMax = std::min<int64_t>(rows, plan.groupTiles * kNumPartitions);
    p0 = std::min<int64_t>(rows, kNumPartitions);
  }

  void run() {
    pl.noteWorkingBytes(plan.workingBytes);
    allocateWorkingTiles();
    for (int64_t g = 0; g < plan.groups; ++g) {
      gRow0 = g * plan.groupTiles * kNumPartitions;
      gRows = std::min<int64_t>(groupRowsMax, rows - gRow0);
      transposeGroup();
      allocateGroupTiles();
      pl.forEachChunkPipelined(
          n, ns,
          [&](Index s0, int64_t cols, unsigned par) {
            loadSlab(s0, cols, par);
          },
          [&](Index s0, int64_t cols, unsigned par) {
            computeSlab(s0, cols, par);
          });
      finishGroup();
    }
    // Y in HBM, staged (yStage): every row group passed every column of it
    // to a column consumer.
    if (!y.inSbuf() && rows > 1)
      pl.columnsConsumed(op.getResult());
    Value input = op.getInput();
    if (!reused && plan.groups == 1 && rows > 1)
      pl.keepDerivedTile(input, kb, xt,
                         kb * groupRowsMax * (et.isBF16() ? 2 : 4),
                         onlyLinearsRead(input, op));
  }

private:
  /// X^T (or an earlier linear's), and two of each working tile:
  /// transposes alternate PSUM tiles, slabs and accumulators alternate
  /// buffers (the DMA of slab s+1, the evacuation of block b and its store
  /// overlap the matmuls of slab s / block b+1).
  void allocateWorkingTiles() {
    // X^T of every row (one group) is kept for the later linears of the
    // same input and K split (the single-stream block's QKV and MLP
    // projections), which then transpose nothing.
    xt = plan.groups == 1 ? pl.derivedTile(op.getInput(), kb) : Value();
    reused = bool(xt);
    if (!xt)
      xt = pl.alloc(MemSpace::Sbuf, {pk, kb * groupRowsMax}, et);
    Type f32 = pl.builder().getF32Type();
    int64_t accCols = std::min<int64_t>(ns, ncore::kMatmulMaxN);
    for (unsigned i = 0; i < 2; ++i) {
      tp[i] = pl.alloc(MemSpace::Psum, {pk, p0}, f32);
      acc[i] = pl.alloc(MemSpace::Psum, {p0, accCols}, f32);
      slabs[i] = pl.alloc(MemSpace::Sbuf, {pk, kb * ns}, et);
    }
    // W as [pk, kb, N]: row k = p * kb + j at partition p, block j.
    w3 = pl.reshape(w.root, {pk, kb, n});
  }

  /// X^T of the group: block j of tile t at free offset
  /// j * groupRowsMax + t * 128, holding X[rows of t, j::kb]^T.
  void transposeGroup() {
    if (reused) {
      ++pl.statistics().transposesReused;
    } else if (gRows == 1) {
      // One row (a matvec): X^T is X itself, k = p * kb + j at partition p,
      // column j: one DMA in row-major order, no Tensor-engine transposes
      // and no PSUM evacuations in the vector engines' queues.
      pl.dma(pl.view(xt, {pk, kb}, {0, 0}), pl.window(x, gRow0, 1, 0, k));
    } else {
      transposeRows(pl, x, xt, pk, kb, groupRowsMax, gRow0, gRows, tp);
    }
  }

  /// The group's Y stage, whether its column consumer takes each slab, and
  /// the bias and scale rows' buffers.
  void allocateGroupTiles() {
    yStage[0] = yStage[1] = Value();
    stageCols = plan.storeAfter ? n : ns;
    if (!y.inSbuf() && rows > 1)
      for (unsigned i = 0; i < (plan.storeAfter ? 1 : 2); ++i)
        yStage[i] = pl.alloc(MemSpace::Sbuf, {p0, plan.groupTiles * stageCols},
                             y.elementType);
    // A column consumer (the all_reduce of a row-parallel projection) gets
    // each slab's columns when its work on them takes less than the slab's
    // Tensor-engine time, else all of them after the last slab.
    perSlab = false;
    if (const ColumnConsumer *cc = pl.columnConsumer(op.getResult())) {
      int64_t slabCount = plan.groups * ((n + ns - 1) / ns);
      int64_t bytes = gRows * ns * (y.elementType.isBF16() ? 2 : 4);
      perSlab = cc->estimateNs(bytes) <= plan.teNs / double(slabCount);
    }
    for (RowOperand &r : rowOperands) {
      r.bcast[0] = r.bcast[1] = r.staged[0] = r.staged[1] = Value();
      r.inHbm = false;
      if (!*r.row)
        continue;
      r.inHbm = !(*r.row)->inSbuf();
      for (unsigned i = 0; i < 2; ++i) {
        r.bcast[i] = pl.alloc(MemSpace::Sbuf, {p0, ns}, et);
        if (r.inHbm)
          r.staged[i] =
              pl.alloc(MemSpace::Sbuf, {1, ns}, (*r.row)->elementType);
      }
    }
  }

  Placement stagedY(unsigned i) const {
    return Placement::sbufMatrix(yStage[i], gRows, stageCols, y.elementType);
  }

  /// The slab's DMA into buffer `par`, with its bias and scale rows (in
  /// HBM) and the guest's slab. The rows are broadcast to the partitions (a
  /// ones matmul) when the slab is computed: a broadcast issued with the
  /// load would make the Tensor engine wait for the DMA before the matmuls
  /// of the slab before.
  void loadSlab(Index s0, int64_t cols, unsigned par) {
    Value buffer = slabs[par];
    Value dst = pl.reshape(
        cols == ns ? buffer : pl.view(buffer, {pk, kb * cols}, {0, 0}),
        {pk, kb, cols});
    Value src = pl.view(w3, {pk, kb, cols}, {0, 0, s0});
    pl.dma(dst, src);
    for (RowOperand &r : rowOperands)
      if (r.inHbm)
        pl.dma(pl.view(r.staged[par], {1, cols}, {0, 0}),
               pl.window(**r.row, 0, 1, s0, cols));
    if (guest)
      guest->load(s0.floorDiv(ns), par);
  }

  /// The slab's output blocks, the guest's unit, and (Y staged per slab)
  /// the slab's store and its columns to the consumer.
  void computeSlab(Index s0, int64_t cols, unsigned slabPar) {
    // Y in HBM (read by a collective or a kernel): the blocks are
    // evacuated into an SBUF stage of the group's rows (see storeAfter)
    // and written back after the slab's last block, one DMA per row tile,
    // or after the last slab. A block's store then never holds up the
    // evacuation of the next (a DMA queue is in order, behind pieces of
    // the next weight slab), and the next slab's evacuations use the
    // other buffer.
    SlabOutput out{y, Index(gRow0), s0};
    if (yStage[0]) {
      out.y = stagedY(plan.storeAfter ? 0 : slabPar);
      out.row0 = Index(0);
      if (!plan.storeAfter)
        out.col0 = Index(0);
    }
    for (RowOperand &r : rowOperands) {
      if (r.inHbm) {
        pl.broadcastRow(Placement::sbufMatrix(r.staged[slabPar], 1, ns,
                                              (*r.row)->elementType),
                        0, cols, p0, r.bcast[slabPar]);
      } else if (*r.row) {
        pl.broadcastRow(**r.row, s0, cols, p0, r.bcast[slabPar]);
      }
    }
    // Alternate accumulators over the blocks of a row tile, or over the
    // row tiles when the slab is one block wide.
    if (cols > ncore::kMatmulMaxN)
      pl.forEachRowTile(gRows, [&](Index t0, int64_t p) {
        pl.forEachChunkAlternating(
            cols, ncore::kMatmulMaxN, [&](Index c0, int64_t nc, unsigned par) {
              block(out, slabPar, cols, t0, p, c0, nc, par);
            });
      });
    else
      pl.forEachChunkAlternating(
          gRows, kNumPartitions, [&](Index t0, int64_t p, unsigned par) {
            block(out, slabPar, cols, t0, p, 0, cols, par);
          });
    // The guest's unit of this slab: its matmuls follow the slab's, its
    // next slab was loaded with this one's successor.
    if (guest)
      guest->step(s0.floorDiv(ns), Index(0), slabPar);
    if (yStage[0] && !plan.storeAfter) {
      pl.forEachRowTile(gRows, [&](Index t0, int64_t p) {
        pl.dma(pl.window(y, t0 + gRow0, p, s0, cols),
               pl.window(out.y, t0, p, 0, cols));
      });
      // The slab's columns are in HBM: its collective can start.
      if (perSlab)
        pl.consumeColumns(op.getResult(), y, Index(gRow0), gRows, s0, cols);
    }
  }

  /// Where a slab's blocks are evacuated: Y or its stage, from (row0, col0).
  struct SlabOutput {
    Placement y;
    Index row0, col0;
  };

  /// One output block of the slab in buffer `slabPar` (`cols` wide): K
  /// accumulated in PSUM tile `par`, then evacuated.
  void block(const SlabOutput &out, unsigned slabPar, int64_t cols, Index t0,
             int64_t p, Index c0, int64_t nc, unsigned par) {
    Value buffer = slabs[slabPar];
    Value accv = pl.view(acc[par], {p, nc}, {0, 0});
    pl.forEachChunk(
        kb, 1,
        [&](Index j, int64_t, bool first) {
          Value st = pl.view(xt, {pk, p}, {0, j * groupRowsMax + t0});
          Value mv = pl.view(buffer, {pk, nc}, {0, j * cols + c0});
          pl.matmul(accv, st, mv, /*accumulate=*/!first);
        },
        /*peelFirst=*/true);
    Value rowViews[2];
    for (unsigned i = 0; i < 2; ++i)
      if (*rowOperands[i].row)
        rowViews[i] = pl.view(rowOperands[i].bcast[slabPar], {p, nc}, {0, c0});
    evacuate(pl, out.y, accv, rowViews[0], rowViews[1], t0 + out.row0, p,
             out.col0 + c0, nc, act);
  }

  /// After the group's slabs: its columns to the consumer, the guest's
  /// finish, and (Y staged for the whole group) the group's store.
  void finishGroup() {
    if (yStage[0] && !plan.storeAfter && !perSlab)
      pl.consumeColumns(op.getResult(), y, Index(gRow0), gRows, Index(0), n);
    if (guest && guest->finish)
      guest->finish();
    if (yStage[0] && plan.storeAfter) {
      Placement staged = stagedY(0);
      pl.forEachRowTile(gRows, [&](Index t0, int64_t p) {
        pl.dma(pl.window(y, t0 + gRow0, p, 0, n),
               pl.window(staged, t0, p, 0, n));
      });
      pl.consumeColumns(op.getResult(), y, Index(gRow0), gRows, Index(0), n);
    }
  }

  ProgramLowering &pl;
  const LinearPlan &plan;
  LinearOp op;
  const Placement &x, &w, &y;
  std::optional<ncore::ActFunc> act;
  std::optional<InterleavedWork> guest;
  int64_t k = 0, n = 0, rows = 0, pk = 0, kb = 0, ns = 0, groupRowsMax = 0,
          p0 = 0;
  Type et;

  // Working tiles of the whole linear.
  Value xt, tp[2], acc[2], slabs[2], w3;
  bool reused = false;

  // The row group being lowered: its rows, Y stage and row operands.
  int64_t gRow0 = 0, gRows = 0, stageCols = 0;
  Value yStage[2];
  bool perSlab = false;
  /// A bias or scale row: broadcast to the partitions per slab (from a
  /// staged copy of the slab's columns when it is in HBM).
  struct RowOperand {
    const std::optional<Placement> *row = nullptr;
    Value bcast[2], staged[2];
    bool inHbm = false;
  };
  RowOperand rowOperands[2];
};

void lowerStreamed(ProgramLowering &pl, const LinearPlan &plan, LinearOp op,
                   const Placement &x, const Placement &w, const Placement &y,
                   const std::optional<Placement> &bias,
                   const std::optional<Placement> &scale,
                   std::optional<ncore::ActFunc> act,
                   std::optional<InterleavedWork> guest = std::nullopt) {
  if (matvecTransposed(x, w.cols, bias || scale))
    return lowerMatvec(pl, plan, x, w, y, act);
  assert((!guest || (plan.groups == 1 && w.cols % plan.slabCols == 0)) &&
         "a guest runs in the slabs of one pass over W");
  StreamedLinear(pl, plan, op, x, w, y, bias, scale, act, std::move(guest))
      .run();
}

/// The blocked order: per token tile, X^T blocks of 128 consecutive K rows,
/// then per N block of <= 512 columns, the K blocks of W [128, <=512] stream
/// as the moving operand and accumulate in PSUM.
LogicalResult lowerBlocked(ProgramLowering &pl, LinearOp op, const Placement &x,
                           const Placement &w, const Placement &y,
                           const std::optional<Placement> &bias,
                           const std::optional<Placement> &scale,
                           std::optional<ncore::ActFunc> act) {
  int64_t k = x.cols, n = w.cols, rows = x.rows;
  Type et = x.elementType;
  int64_t kBlocks = llvm::divideCeil(k, kNumPartitions);
  // The transposed row block [128, kBlocks * 128] of one token tile.
  int64_t xtBytes = kBlocks * kNumPartitions * (et.isBF16() ? 2 : 4);
  if (xtBytes > pl.target().workingBytes / 2)
    return op.emitOpError()
           << "convert-seam-to-ncore: K = " << k
           << " is too large: the transposed token tile needs " << xtBytes
           << " bytes per partition, more than half of the "
           << pl.target().workingBytes << " bytes of working SBUF";
  Type f32 = pl.builder().getF32Type();
  int64_t nChunk = std::min<int64_t>(n, ncore::kMatmulMaxN);

  pl.forEachRowTile(rows, [&](Index r0, int64_t p) {
    Value xt =
        pl.alloc(MemSpace::Sbuf,
                 {std::min<int64_t>(k, kNumPartitions), kBlocks * p}, et);
    Value tp = pl.alloc(MemSpace::Psum,
                        {std::min<int64_t>(k, kNumPartitions), p}, f32);
    pl.forEachChunk(k, kNumPartitions, [&](Index k0, int64_t kc, bool) {
      Value xs = pl.load(x, r0, p, k0, kc);
      Value tpv = pl.view(tp, {kc, p}, {0, 0});
      pl.transpose(tpv, xs);
      Value dst = pl.view(xt, {kc, p}, {0, k0.floorDiv(kNumPartitions) * p});
      pl.copy(dst, tpv);
    });
    Value acc = pl.alloc(MemSpace::Psum, {p, nChunk}, f32);
    pl.forEachChunk(n, nChunk, [&](Index n0, int64_t nc, bool) {
      Value accv = pl.view(acc, {p, nc}, {0, 0});
      pl.forEachChunk(
          k, kNumPartitions,
          [&](Index k0, int64_t kc, bool first) {
            Value st =
                pl.view(xt, {kc, p}, {0, k0.floorDiv(kNumPartitions) * p});
            Value mv = pl.load(w, k0, kc, n0, nc);
            pl.matmul(accv, st, mv, /*accumulate=*/!first);
          },
          /*peelFirst=*/true);
      Value bt, sc;
      if (bias)
        bt = pl.broadcastRow(*bias, n0, nc, p);
      if (scale)
        sc = pl.broadcastRow(*scale, n0, nc, p);
      evacuate(pl, y, accv, bt, sc, r0, p, n0, nc, act);
    });
  });
  return success();
}

/// The activation folded into a linear's epilogue, if any.
std::optional<ncore::ActFunc> activationOf(LinearOp op) {
  auto name = op.getActivation();
  if (!name)
    return std::nullopt;
  return *name == "gelu"        ? ncore::ActFunc::Gelu
         : *name == "gelu_tanh" ? ncore::ActFunc::GeluTanh
                                : ncore::ActFunc::Silu;
}

std::string mib(double bytes) {
  return llvm::formatv("{0:F2} MiB", bytes / (1024.0 * 1024.0)).str();
}

LogicalResult lowerLinear(ProgramLowering &pl, Operation *o) {
  auto op = cast<LinearOp>(o);
  std::optional<ncore::ActFunc> act = activationOf(op);
  auto x = pl.get(op.getInput(), op), w = pl.get(op.getWeight(), op);
  if (failed(x) || failed(w))
    return failure();
  std::optional<Placement> bias;
  if (op.getBias()) {
    auto b = pl.get(op.getBias(), op);
    if (failed(b))
      return failure();
    bias = *b;
  }
  std::optional<Placement> scale;
  if (op.getScale()) {
    auto sc = pl.get(op.getScale(), op);
    if (failed(sc))
      return failure();
    scale = *sc;
  }
  int64_t k = x->cols, n = w->cols;
  if (w->rows != k || w->shape.size() != 2)
    return op.emitOpError() << "convert-seam-to-ncore: weight must be [K, N] "
                               "with K = "
                            << k << ", got " << w->rows << " x " << w->cols;
  if (w->elementType != x->elementType)
    return op.emitOpError() << "convert-seam-to-ncore: input and weight dtypes "
                               "differ (the Tensor engine multiplies equal "
                               "dtypes)";
  if (int64_t kb2 =
          handoffBlocks(pl, op, *x, *w, bias, bool(scale), kBlocksOf(k));
      kb2 && lowerHandoff(pl, op, *x, *w, bias, act, kb2)) {
    if (pl.target().remarks)
      op.emitRemark() << llvm::formatv(
          "convert-seam-to-ncore: linear [{0} x {1}] x [{1} x {2}]: weight "
          "resident and stationary, Y^T handed to the next linear as its X^T "
          "({3} blocks of 128 features; no transposes there)",
          x->rows, k, n, kb2);
    return success();
  }
  Placement y = pl.placeResult(op.getResult());
  int64_t rowOperands = int64_t(bias.has_value()) + scale.has_value();
  auto makePlan = [&](const GuestFit *fit) {
    std::optional<LinearPlan> p = planLinear(pl, *x, *w, y, rowOperands, fit);
    // An earlier linear of this input left its X^T of every row resident:
    // one pass over W, whatever SBUF the plan saw left.
    if (p && p->groups > 1 && pl.derivedTile(op.getInput(), p->kb)) {
      p->groupTiles = x->rowTiles();
      p->groups = 1;
    }
    return p;
  };
  std::optional<LinearPlan> plan = makePlan(nullptr);
  // A one-row guest (adaLN's modulation, moved here by
  // seam-overlap-independent): its weight streams slab by slab with this
  // linear's, its matmuls follow each slab's. Only when the Tensor engine
  // bounds this linear (its DMA queues have room) and a plan of one pass
  // over W has slabs that split the guest evenly; else the guest is
  // lowered first, in its own place, and this linear planned again in the
  // SBUF it leaves.
  std::optional<InterleavedWork> guest;
  if (pl.hasPendingGuest()) {
    std::optional<GuestFit> fit;
    if (plan && x->rows > 1 && plan->teNs > plan->dmaNs &&
        !matvecTransposed(*x, n, rowOperands > 0))
      fit = matvecGuestFit(pl, pl.pendingGuestOp());
    std::optional<LinearPlan> hosting;
    if (fit)
      hosting = planLinear(pl, *x, *w, y, rowOperands, &*fit);
    if (hosting && hosting->groups == 1) {
      FailureOr<std::optional<InterleavedWork>> taken =
          pl.takeGuest(n / hosting->slabCols, 1, hosting->workingBytes);
      if (failed(taken))
        return failure();
      guest = std::move(*taken);
    } else if (failed(pl.lowerGuestAlone())) {
      return failure();
    }
    plan = guest ? hosting : makePlan(nullptr);
  }
  if (!plan && kBlocksOf(k) &&
      x->root == pl.derivedTile(op.getInput(), kBlocksOf(k)))
    return op.emitOpError()
           << "convert-seam-to-ncore: the input was handed over as X^T (Y^T "
              "of the linear before), but no weight-streaming plan fits "
              "this linear to read it";
  if (!plan) {
    ++pl.statistics().linearsBlocked;
    decisionRemark(pl.target().remarks, op.getLoc())
        << "convert-seam-to-ncore: linear [" << x->rows << " x " << k << "] x ["
        << k << " x " << n
        << "]: blocked order (W read once per token tile): no "
           "weight-streaming plan fits";
    return lowerBlocked(pl, op, *x, *w, y, bias, scale, act);
  }
  ++pl.statistics().linearsStreamed;
  pl.statistics().weightPasses += plan->groups;
  if (pl.target().remarks) {
    int64_t eb = x->elementType.isBF16() ? 2 : 4;
    int64_t slabs = (n + plan->slabCols - 1) / plan->slabCols;
    op.emitRemark() << llvm::formatv(
        "convert-seam-to-ncore: linear [{0} x {1}] x [{1} x {2}]: weight "
        "streamed {3} in {4} slab(s) of {5} columns ({6} per DMA, two "
        "buffers), K = {7} x {8}, X^T of {9} row tile(s) resident; estimated "
        "TE {10:F1} us, DMA {11:F1} us, fill {12:F1} us ({13}-bound){14}{15}",
        x->rows, k, n,
        plan->groups == 1 ? std::string("once")
                          : llvm::formatv("{0} times", plan->groups).str(),
        slabs, plan->slabCols, mib(double(k) * plan->slabCols * eb), plan->pk,
        plan->kb, plan->groupTiles, plan->teNs * 1e-3, plan->dmaNs * 1e-3,
        plan->fillNs * 1e-3, plan->teNs >= plan->dmaNs ? "TE" : "DMA",
        matvecTransposed(*x, n, bias || scale)
            ? "; one row: Y^T on partitions, W stationary"
            : "",
        y.inSbuf() || x->rows == 1 ? ""
        : plan->storeAfter         ? "; Y to HBM after the last slab"
                                   : "; Y to HBM slab by slab");
  }
  lowerStreamed(pl, *plan, op, *x, *w, y, bias, scale, act, std::move(guest));
  return success();
}

/// A linear as a guest (see InterleavedWork): no bias or scale, a weight
/// that is a program argument (it streams).
bool linearCanBeGuest(Operation *o) {
  auto op = cast<LinearOp>(o);
  return !op.getBias() && !op.getScale() && isa<BlockArgument>(op.getWeight());
}

/// A guest linear's weight slabs (see InterleavedWork): two buffers of
/// [pk, kb * cols]; group g is W's columns [g * cols, (g + 1) * cols) of W
/// as [pk, kb, N], one DMA.
struct GuestSlabs {
  Value slabs[2], w3;
  int64_t pk = 0, kb = 0, cols = 0;
};
std::shared_ptr<GuestSlabs> guestSlabs(ProgramLowering &pl, const Placement &w,
                                       int64_t pk, int64_t kb, int64_t cols,
                                       Type et) {
  auto g = std::make_shared<GuestSlabs>();
  for (Value &slab : g->slabs)
    slab = pl.alloc(MemSpace::Sbuf, {pk, kb * cols}, et);
  g->w3 = pl.reshape(w.root, {pk, kb, w.cols});
  g->pk = pk;
  g->kb = kb;
  g->cols = cols;
  return g;
}
/// InterleavedWork::load for those slabs.
std::function<void(Index, unsigned)>
guestSlabLoader(ProgramLowering &pl, std::shared_ptr<GuestSlabs> g) {
  return [&pl, g = std::move(g)](Index group, unsigned set) {
    pl.dma(pl.reshape(g->slabs[set], {g->pk, g->kb, g->cols}),
           pl.view(g->w3, {g->pk, g->kb, g->cols}, {0, 0, group * g->cols}));
  };
}

/// A matvec (one row, see matvecTransposed) as a guest: group g is W's
/// columns [g * N / groups, (g + 1) * N / groups) (one slab, one DMA) and
/// unit (g, s) computes N / groups / steps of its 128-column output blocks,
/// each on partitions as lowerMatvec does (one PSUM column per block, so a
/// group's [128, nbs] outputs in row-major order are Y's columns in order).
/// Its Tensor-engine work is small (64-cycle matmuls) but its weight is
/// large: adaLN's modulation streams 28 MB per rank in a double-stream
/// block. A host whose own DMA queues are idle (attention) hides that
/// stream, which alone leaves the Tensor engine waiting. `finish`
/// evacuates the accumulators once and writes Y back, one DMA per group.
std::optional<InterleavedWork> interleaveMatvec(ProgramLowering &pl,
                                                LinearOp op, const Placement &x,
                                                const Placement &w,
                                                int64_t groups, int64_t steps,
                                                int64_t hostBytes) {
  int64_t k = x.cols, n = w.cols;
  int64_t kb = kBlocksOf(k);
  if (kb == 0 || !matvecTransposed(x, n, false) || n % groups != 0 ||
      (n / groups) % kNumPartitions != 0)
    return std::nullopt;
  int64_t pk = k / kb, cols = n / groups, nbs = cols / kNumPartitions;
  // Units split a group's output blocks evenly, or else its K blocks: then
  // every unit adds into every block of the group, all matmuls accumulate,
  // and the accumulators are zeroed once before the first.
  bool splitK = nbs % steps != 0;
  if (splitK && kb % steps != 0)
    return std::nullopt;
  int64_t perUnit = splitK ? kb / steps : nbs / steps;
  Type et = x.elementType;
  int64_t eb = et.isBF16() ? 2 : 4;
  int64_t slabBytes = kb * cols * eb;
  int64_t working =
      2 * slabBytes + kb * eb + (n / kNumPartitions) * eb +
      (splitK ? std::max<int64_t>(kNumPartitions, n / kNumPartitions) * eb : 0);
  if (hostBytes + working > pl.workingBudget())
    return std::nullopt;
  std::optional<ncore::ActFunc> act = activationOf(op);
  Placement y = pl.placeResult(op.getResult());
  pl.noteWorkingBytes(working);
  ++pl.statistics().linearsStreamed;
  ++pl.statistics().weightPasses;
  if (pl.target().remarks)
    op.emitRemark() << llvm::formatv(
        "convert-seam-to-ncore: linear [1 x {0}] x [{0} x {1}]: interleaved "
        "into a later op's pipeline as Y^T: {2} slab(s) of {3} columns ({4} "
        "per DMA, two buffers), {5} {6} per unit",
        k, n, groups, cols, mib(double(k) * cols * eb), perUnit,
        splitK ? "K block(s) of every output block" : "output block(s)");

  struct State {
    Value xt, acc;
    std::shared_ptr<GuestSlabs> w;
  };
  auto st = std::make_shared<State>();
  // X^T [pk, kb] is X's own row-major order: one DMA.
  st->xt = pl.alloc(MemSpace::Sbuf, {pk, kb}, et);
  pl.dma(st->xt, pl.window(x, 0, 1, 0, k));
  st->acc = pl.alloc(MemSpace::Psum, {kNumPartitions, n / kNumPartitions},
                     pl.builder().getF32Type());
  st->w = guestSlabs(pl, w, pk, kb, cols, et);
  InterleavedWork work;
  work.load = guestSlabLoader(pl, st->w);
  if (splitK) {
    // Only the Tensor engine writes PSUM: a matmul of zeros clears it.
    int64_t zc = std::max<int64_t>(kNumPartitions, n / kNumPartitions);
    Value zero = pl.alloc(MemSpace::Sbuf, {pk, zc}, et);
    pl.memset(zero, 0.0);
    pl.matmul(st->acc, pl.view(zero, {pk, kNumPartitions}, {0, 0}),
              pl.view(zero, {pk, n / kNumPartitions}, {0, 0}));
  }
  work.step = [&pl, st, pk, kb, cols, nbs, perUnit, splitK](Index g, Index s,
                                                            unsigned set) {
    Value slab = st->w->slabs[set];
    auto block = [&](Index c) {
      return pl.view(st->acc, {kNumPartitions, 1}, {0, g * nbs + c});
    };
    if (splitK) {
      for (int64_t c = 0; c < nbs; ++c)
        pl.forEachChunk(perUnit, 1, [&](Index i, int64_t, bool) {
          matvecMatmul(pl, block(Index(c)), slab, st->xt, pk, cols,
                       s * perUnit + i, Index(c), /*accumulate=*/true);
        });
      return;
    }
    for (int64_t i = 0; i < perUnit; ++i) {
      Index c = s * perUnit + i;
      pl.forEachChunk(
          kb, 1,
          [&](Index j, int64_t, bool first) {
            matvecMatmul(pl, block(c), slab, st->xt, pk, cols, j, c, !first);
          },
          /*peelFirst=*/true);
    }
  };
  work.finish = [&pl, st, y, n, cols, act] {
    storeMatvecResult(pl, st->acc, y, n, cols, act);
  };
  return work;
}

/// The streamed linear's work for a host of `groups` x `steps` units: group
/// g is W's columns [g * N / groups, (g + 1) * N / groups) (one slab, one
/// DMA), unit (g, s) its output block of row tile s. Needs the X^T of
/// every row resident already (an earlier linear of the same input or the
/// norm left it: the guest transposes nothing), rows = steps x 128, N
/// divisible into the groups, two slabs beside the host's working tiles,
/// and no Y^T handoff (that lowering is better on its own).
std::optional<InterleavedWork> interleaveLinear(ProgramLowering &pl,
                                                Operation *o, int64_t groups,
                                                int64_t steps,
                                                int64_t hostBytes) {
  auto op = cast<LinearOp>(o);
  auto x = pl.get(op.getInput(), op), w = pl.get(op.getWeight(), op);
  if (failed(x) || failed(w))
    return std::nullopt;
  int64_t k = x->cols, n = w->cols, rows = x->rows;
  if (rows == 1 && w->rows == k && w->elementType == x->elementType &&
      !w->inSbuf() && w->isContiguous() && w->rowOffset == 0)
    return interleaveMatvec(pl, op, *x, *w, groups, steps, hostBytes);
  int64_t kb = kBlocksOf(k);
  if (kb == 0 || rows != steps * kNumPartitions || w->rows != k ||
      w->elementType != x->elementType || w->inSbuf() || !w->isContiguous() ||
      w->rowOffset != 0 || n % groups != 0 ||
      (n / groups) % kNumPartitions != 0)
    return std::nullopt;
  Value xt = pl.derivedTile(op.getInput(), kb);
  if (!xt || handoffBlocks(pl, op, *x, *w, std::nullopt, false, kb))
    return std::nullopt;
  int64_t pk = k / kb, cols = n / groups;
  Type et = x->elementType;
  int64_t eb = et.isBF16() ? 2 : 4;
  int64_t slabBytes = kb * cols * eb;
  if (hostBytes + 2 * slabBytes > pl.workingBudget())
    return std::nullopt;
  std::optional<ncore::ActFunc> act = activationOf(op);
  Placement y = pl.placeResult(op.getResult());
  // The guest's own tiles (the host's are its own to declare).
  pl.noteWorkingBytes(2 * slabBytes);
  ++pl.statistics().linearsStreamed;
  ++pl.statistics().weightPasses;
  ++pl.statistics().transposesReused;
  if (pl.target().remarks)
    op.emitRemark() << llvm::formatv(
        "convert-seam-to-ncore: linear [{0} x {1}] x [{1} x {2}]: "
        "interleaved into a later op's pipeline: {3} slab(s) of {4} columns "
        "({5} per DMA, two buffers) x {6} row tile(s), X^T resident",
        rows, k, n, groups, cols, mib(double(k) * cols * eb), steps);

  struct State {
    Value xt, acc[2];
    std::shared_ptr<GuestSlabs> w;
    unsigned units = 0;
  };
  auto st = std::make_shared<State>();
  st->xt = xt;
  Type f32 = pl.builder().getF32Type();
  int64_t accCols = std::min<int64_t>(cols, ncore::kMatmulMaxN);
  st->w = guestSlabs(pl, *w, pk, kb, cols, et);
  for (Value &acc : st->acc)
    acc = pl.alloc(MemSpace::Psum, {kNumPartitions, accCols}, f32);
  InterleavedWork work;
  work.load = guestSlabLoader(pl, st->w);
  work.step = [&pl, st, y, pk, kb, cols, rows, act](Index g, Index s,
                                                    unsigned set) {
    Index t0 = s * kNumPartitions;
    // Accumulators alternate over the blocks of every unit in emission
    // order, so a block's matmuls never wait for the previous evacuation.
    pl.forEachChunk(cols, ncore::kMatmulMaxN, [&](Index c0, int64_t nc, bool) {
      Value accv =
          pl.view(st->acc[st->units++ % 2], {kNumPartitions, nc}, {0, 0});
      pl.forEachChunk(
          kb, 1,
          [&](Index j, int64_t, bool first) {
            Value stat =
                pl.view(st->xt, {pk, kNumPartitions}, {0, j * rows + t0});
            Value mv = pl.view(st->w->slabs[set], {pk, nc}, {0, j * cols + c0});
            pl.matmul(accv, stat, mv, /*accumulate=*/!first);
          },
          /*peelFirst=*/true);
      evacuate(pl, y, accv, Value(), Value(), t0, kNumPartitions, g * cols + c0,
               nc, act);
    });
  };
  return work;
}

} // namespace

void conversion::populateLinearLowerings(LoweringTable &table) {
  table[LinearOp::getOperationName()] = lowerLinear;
}

void conversion::populateLinearGuests(GuestTable &table) {
  table[LinearOp::getOperationName()] = {linearCanBeGuest, interleaveLinear};
}
