//===- Qkv.cpp - fused QKV projection -------------------------------------===//
//
// y = x W (+ b) over the concatenated weight W [K, N] (seam-fuse-qkv's
// output), x [..., K] taken as M rows, with the reuse a good compiler's
// linear has:
//
//  - x^T stays resident in SBUF (rows in groups when it does not fit):
//    each 128-row block is loaded once (one DMA of K contiguous elements per
//    partition) and turned into K / 128 stationary tiles by TE transposes;
//  - W streams once per row group in slabs [K, ns]: one DMA per slab of
//    (K / 128) x ns elements per partition, software-pipelined over two
//    buffers so slab i + 1 arrives while slab i is multiplied;
//  - every token block is multiplied against the resident slab, the K loop
//    accumulating in fp32 PSUM; the slab's output of all row blocks leaves
//    in one DMA.
//
// The contraction index k sits at partition k / nk, chunk k mod nk (nk = K /
// 128), so a slab is one access pattern [128, nk, ns] of W and the
// stationary tile of chunk c is x's columns c, c + nk, ... (a strided
// transpose source). Rows m = p nb + b of the first 128 nb rows sit at
// partition p of block b, so x and y move as [128, nb, K] and [128, nb, ns]
// windows (contiguous per partition); a last partial block of M mod 128
// rows moves on its own.
//
// The plan (rows per group, slab width) is the largest that fits the SBUF
// budget, preferring all rows resident (W read once) and slabs of 256
// columns (512 when 256 does not fit; 128 last): 1.5 MB per slab at K =
// 3072 is long enough per transfer, and half a PSUM bank per accumulator
// shortens the pipeline's fill and drain (kernel_bench, trn2, flux2-klein's
// three shapes: 0.3-1% faster than 512). The first slab is narrower still
// (kHeadSlab columns, peeled): the Tensor engine starts once x^T's first
// block and that slab are in. The plan is recorded in `seam.kernel_plan`.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {

/// Columns of the peeled first slab of W.
constexpr int64_t kHeadSlab = 128;

struct QkvPlan {
  int64_t groupBlocks = 0; ///< Full 128-row blocks per row group.
  int64_t slab = 0;        ///< Columns of W per slab.
  int64_t groups = 1;
};

/// SBUF bytes per partition of a row group of `blocks` full blocks (+ the
/// tail rows when `tail`) with slabs of `ns` columns.
int64_t planBytes(int64_t nk, int64_t k, int64_t n, int64_t blocks, bool tail,
                  int64_t ns, int64_t dt, bool bias) {
  int64_t cols = blocks * kNumPartitions + (tail ? kNumPartitions : 0);
  int64_t xT = nk * cols * dt;
  int64_t slabs = 2 * nk * ns * dt;
  int64_t ys = 2 * (blocks + (tail ? 1 : 0)) * ns * dt;
  int64_t stage = 2 * k * dt;
  return xT + slabs + ys + std::max<int64_t>(stage, 0) + (bias ? n * dt : 0);
}

QkvPlan choosePlan(int64_t m, int64_t k, int64_t n, int64_t dt, bool bias) {
  int64_t nk = k / kNumPartitions;
  int64_t blocks = m / kNumPartitions;
  bool tail = m % kNumPartitions != 0;
  SmallVector<int64_t, 3> widths;
  // One row block: W's stream is the whole cost, and wide slabs pay fewer
  // DMA fixed costs; more rows: 256 first (see the file comment).
  bool oneBlock = m <= kNumPartitions;
  for (int64_t w : {oneBlock ? kMatmulMaxN : kMatmulMaxN / 2,
                    oneBlock ? kMatmulMaxN / 2 : kMatmulMaxN, kMatmulMaxN / 4})
    if (w <= n || widths.empty())
      widths.push_back(std::min(w, n));
  // All rows resident (W read once) with the preferred slab that fits.
  for (int64_t ns : widths)
    if (planBytes(nk, k, n, blocks, tail, ns, dt, bias) <=
        kKernelSbufBudgetBytes)
      return {blocks, ns, 1};
  // Otherwise row groups as large as fit with the narrowest slab: W is read
  // once per group.
  int64_t ns = widths.back();
  if (planBytes(nk, k, n, 1, tail, ns, dt, bias) > kKernelSbufBudgetBytes)
    return {0, ns, 0}; // Not even one block: the builder reports it.
  int64_t fit = 1;
  while (fit < blocks && planBytes(nk, k, n, fit + 1, tail, ns, dt, bias) <=
                             kKernelSbufBudgetBytes)
    ++fit;
  return {fit, ns, llvm::divideCeilSigned(std::max<int64_t>(blocks, 1), fit)};
}

} // namespace

std::optional<std::string> seam::qkvSiteError(const KernelSignature &sig) {
  RankedTensorType x = sig.args[0], w = sig.args[1];
  int64_t kdim = w.getDimSize(0), ndim = w.getDimSize(1);
  if (kdim % kNumPartitions != 0 || x.getDimSize(x.getRank() - 1) != kdim)
    return "K = " + std::to_string(kdim) + " must be a multiple of " +
           std::to_string(kNumPartitions) + " and x's last dim";
  int64_t dt = x.getElementType().isBF16() ? 2 : 4;
  QkvPlan plan = choosePlan(x.getNumElements() / kdim, kdim, ndim, dt,
                            sig.args.size() > 2);
  if (plan.groups == 0)
    return "one 128-row block of x^T (K = " + std::to_string(kdim) +
           ") with a W slab and the bias row (N = " + std::to_string(ndim) +
           ") exceeds the kernel SBUF budget of " +
           std::to_string(kKernelSbufBudgetBytes) + " bytes per partition";
  return std::nullopt;
}

namespace {

/// The qkv kernel's tiles and its steps over them; the constructor
/// allocates in program order.
struct QkvBuilder {
  QkvBuilder(OpBuilder &b, Location loc, ProgramOp prog,
             const KernelSignature &sig, const QkvPlan &plan);
  void transposeRows(Value st, int64_t rows, Index col);
  void multiply(Index col, int64_t rows, Index blk, unsigned buf, Index n0,
                int64_t nw, unsigned a);
  void runGroup(Index block0, int64_t blocks, bool withTail);

  /// Transposes land 4 chunks to a PSUM bank, four banks in turn (the
  /// Tensor engine fills one while two engines copy others out);
  /// accumulators in a ring of 2.
  static constexpr int64_t kChunksPerBank = kMatmulMaxN / kNumPartitions;
  static constexpr unsigned kTransposeBanks = 4;
  KernelBuilder kb;
  bool hasBias;
  int64_t kdim, ndim, mdim, nk, full, tail;
  Type dtype;
  Value xH, wH, yH;
  int64_t gb, ns, tailCol;
  Value xT, stage[2], slab[2], ys[2], tp[kTransposeBanks], acc[2], brow;
  int64_t headCols;
};

QkvBuilder::QkvBuilder(OpBuilder &b, Location loc, ProgramOp prog,
                       const KernelSignature &sig, const QkvPlan &plan)
    : kb(b, loc, prog) {
  RankedTensorType x = sig.args[0], w = sig.args[1];
  hasBias = sig.args.size() > 2;
  kdim = w.getDimSize(0);
  ndim = w.getDimSize(1);
  mdim = x.getNumElements() / kdim;
  dtype = x.getElementType();
  nk = kdim / kNumPartitions;
  full = mdim / kNumPartitions;
  tail = mdim % kNumPartitions;
  xH = kb.reshape(kb.arg(0), {mdim, kdim});
  // W[p nk + c, :] at partition p, chunk c.
  wH = kb.reshape(kb.arg(1), {kNumPartitions, nk, ndim});
  yH = kb.reshape(kb.arg(sig.args.size()), {mdim, ndim});

  gb = std::max<int64_t>(plan.groupBlocks, 1);
  ns = plan.slab;
  // Resident x^T of a group: [k partition, chunk, rows of its blocks (and
  // the tail rows)].
  tailCol = gb * kNumPartitions;
  xT = kb.sbuf({kNumPartitions, nk, tailCol + (tail ? tail : 0)}, dtype);
  for (unsigned i = 0; i < 2; ++i) {
    stage[i] = kb.sbuf({kNumPartitions, kdim}, dtype);
    slab[i] = kb.sbuf({kNumPartitions, nk, ns}, dtype);
    ys[i] = kb.sbuf({kNumPartitions, gb + (tail ? 1 : 0), ns}, dtype);
  }
  for (Value &t : tp)
    t = kb.psum({kNumPartitions, kMatmulMaxN});
  acc[0] = kb.psum({kNumPartitions, kMatmulMaxN});
  acc[1] = kb.psum({kNumPartitions, kMatmulMaxN});
  brow =
      hasBias ? kb.broadcastToPartitions(kb.arg(2), kNumPartitions) : Value();
  // The peeled head slab pays off once there are several row blocks to
  // transpose and multiply while the body streams; with one block the W
  // stream is the whole cost (kernel_bench and the eager step, trn2).
  headCols =
      mdim > kNumPartitions ? std::min<int64_t>({kHeadSlab, ns, ndim}) : 0;
}

/// x^T of `rows` rows (a block or the tail) from `stage` into xT columns
/// [col, col + rows): chunk c is the transpose of columns c, c + nk, ...
void QkvBuilder::transposeRows(Value st, int64_t rows, Index col) {
  int64_t groups = nk / kChunksPerBank, rest = nk % kChunksPerBank;
  auto chunkGroup = [&](Index c0, int64_t count, unsigned t) {
    for (int64_t j = 0; j < count; ++j)
      kb.transpose(kb.view(tp[t], {kNumPartitions, rows}, {0, j * rows}),
                   kb.view(st, {rows, kNumPartitions}, {0, c0 + j}, {1, nk}));
    // The copies out of the two banks go to the Vector and Scalar engines
    // in turn: on one engine they, not the transposes, set x^T's pace.
    kb.pinEngine(t % 2 == 0 ? Engine::Vector : Engine::Scalar);
    kb.copy(kb.view(xT, {kNumPartitions, count, rows}, {0, c0, col}),
            kb.view(tp[t], {kNumPartitions, count * rows}, {0, 0}));
    kb.pinEngine(std::nullopt);
  };
  int64_t loopGroups = groups / kTransposeBanks * kTransposeBanks;
  if (loopGroups)
    kb.forRange(loopGroups / kTransposeBanks, [&](Index i) {
      for (unsigned t = 0; t < kTransposeBanks; ++t)
        chunkGroup(i * (kTransposeBanks * kChunksPerBank) +
                       int64_t(t) * kChunksPerBank,
                   kChunksPerBank, t);
    });
  unsigned t = 0;
  for (int64_t g = loopGroups; g < groups; ++g, ++t)
    chunkGroup(Index(g * kChunksPerBank), kChunksPerBank, t);
  if (rest)
    chunkGroup(Index(groups * kChunksPerBank), rest, t);
}

/// y rows of `rows` partitions = x^T columns [col, col + rows) times the
/// slab, into ys[buf] block `blk`.
void QkvBuilder::multiply(Index col, int64_t rows, Index blk, unsigned buf,
                          Index n0, int64_t nw, unsigned a) {
  Value out = kb.view(acc[a], {rows, nw}, {0, 0});
  kb.forRange(nk, [&](Index c) {
    kb.matmulAccumulateOver(
        out, kb.view(xT, {kNumPartitions, 1, rows}, {0, c, col}),
        kb.view(slab[buf], {kNumPartitions, 1, nw}, {0, c, 0}), c);
  });
  Value yv = kb.view(ys[buf], {rows, 1, nw}, {0, blk, 0});
  if (hasBias)
    kb.tensorTensor(AluOp::Add, yv, out, kb.view(brow, {rows, nw}, {0, n0}));
  else
    kb.copy(yv, out);
}

/// One group of row blocks (and the tail when `withTail`): x^T resident,
/// then every slab of W against it.
void QkvBuilder::runGroup(Index block0, int64_t blocks, bool withTail) {
  // The head slab (columns [0, head)) is peeled off and narrower than the
  // others: the Tensor engine starts once x^T and the head slab are in,
  // which takes less DMA time than a full slab; the body's slabs stream
  // behind it.
  int64_t head = headCols;
  int64_t slabs = (ndim - head) / ns, restCols = (ndim - head) % ns;
  auto slabOf = [&](Index s, int64_t nw) {
    return kb.view(wH, {kNumPartitions, nk, nw}, {0, 0, s * ns + head});
  };
  Value x3 =
      full > 0 ? kb.reshape(kb.view(xH, {full * kNumPartitions, kdim}, {0, 0}),
                            {kNumPartitions, full, kdim})
               : Value();
  // The slab's output of every row block (and the tail's) leaves; the
  // program's last store in kDmaStreams DMAs of fewer partitions (it is the
  // tail: a transfer's time is its fixed cost plus its bytes over one
  // queue).
  auto finishSlab = [&](unsigned buf, int64_t nw, Index n0, bool last) {
    if (blocks > 0) {
      Value y3 = kb.reshape(kb.view(yH, {full * kNumPartitions, ndim}, {0, 0}),
                            {kNumPartitions, full, ndim});
      kb.dmaInParts(kb.view(y3, {kNumPartitions, blocks, nw}, {0, block0, n0}),
                    kb.view(ys[buf], {kNumPartitions, blocks, nw}, {0, 0, 0}),
                    last && !withTail ? kDmaStreams : 1);
    }
    if (withTail) {
      multiply(Index(tailCol), tail, Index(gb), buf, n0, nw, 1);
      kb.dma(kb.view(yH, {tail, nw}, {full * kNumPartitions, n0}),
             kb.view(ys[buf], {tail, 1, nw}, {0, gb, 0}));
    }
  };
  // Each slab of W against every row block of the group.
  auto runSlab = [&](unsigned buf, int64_t nw, Index n0, bool last) {
    kb.forRange(blocks / 2, [&](Index i) {
      multiply((i * 2) * kNumPartitions, kNumPartitions, i * 2, buf, n0, nw, 0);
      multiply((i * 2 + 1) * kNumPartitions, kNumPartitions, i * 2 + 1, buf, n0,
               nw, 1);
    });
    if (blocks % 2)
      multiply(Index((blocks - 1) * kNumPartitions), kNumPartitions,
               Index(blocks - 1), buf, n0, nw, 0);
    finishSlab(buf, nw, n0, last);
  };
  auto headSlab = [&] {
    return kb.view(slab[0], {kNumPartitions, nk, head}, {0, 0, 0});
  };
  // x^T of the group, block by block through two staging buffers, the
  // head slab right after the first block. With three blocks or more,
  // each block is multiplied by the head slab as soon as it is
  // transposed: the Tensor engine starts once one block and the head
  // slab have arrived, not after all of x^T.
  bool early = head > 0 && blocks >= 3;
  kb.forRangePipelined(
      blocks,
      [&](Index i, unsigned s) {
        kb.dma(stage[s],
               kb.view(x3, {kNumPartitions, 1, kdim}, {0, block0 + i, 0}));
        if (head > 0 && i.getConstant() == 0)
          kb.dma(headSlab(),
                 kb.view(wH, {kNumPartitions, nk, head}, {0, 0, 0}));
      },
      [&](Index i, unsigned s) {
        transposeRows(stage[s], kNumPartitions, i * kNumPartitions);
        if (early)
          multiply(i * kNumPartitions, kNumPartitions, i, 0, Index(0), head, s);
      });
  if (head > 0 && blocks == 0)
    kb.dma(headSlab(), kb.view(wH, {kNumPartitions, nk, head}, {0, 0, 0}));
  if (withTail) {
    Value st = kb.view(stage[blocks % 2], {tail, kdim}, {0, 0});
    kb.dma(st, kb.view(xH, {tail, kdim}, {full * kNumPartitions, 0}));
    transposeRows(st, tail, Index(tailCol));
  }
  // The first body slab (or the rest) is on its way before the head
  // slab's results leave: in the in-order DMA stream it must not wait
  // behind that store.
  int64_t n1 = head + slabs * ns;
  unsigned shift = head > 0 ? 1 : 0; // body slab s in buffer (s + shift) % 2
  unsigned restBuf = (slabs + shift) % 2;
  auto loadRest = [&] {
    kb.dma(kb.view(slab[restBuf], {kNumPartitions, nk, restCols}, {0, 0, 0}),
           kb.view(wH, {kNumPartitions, nk, restCols}, {0, 0, n1}));
  };
  if (head > 0) {
    if (slabs > 0)
      kb.dma(slab[1], slabOf(Index(0), ns));
    else if (restCols)
      loadRest();
    if (early)
      finishSlab(0, head, Index(0), false);
    else
      runSlab(0, head, Index(0), false);
  }
  // The body's slabs, pipelined.
  kb.forRangePipelined(
      slabs,
      [&](Index s, unsigned set) {
        if (auto c = s.getConstant(); head > 0 && c && *c == 0)
          return; // loaded above
        kb.dma(slab[set ^ shift], slabOf(s, ns));
      },
      [&](Index s, unsigned set) {
        runSlab(set ^ shift, ns, s * ns + head, false);
      });
  if (restCols) {
    if (head == 0 || slabs > 0)
      loadRest();
    runSlab(restBuf, restCols, Index(n1), true);
  }
}

} // namespace

FailureOr<ProgramOp> seam::buildQkvKernel(OpBuilder &b, ModuleOp module,
                                          const KernelSignature &sig,
                                          StringRef name) {
  RankedTensorType x = sig.args[0], w = sig.args[1];
  bool hasBias = sig.args.size() > 2;
  int64_t kdim = w.getDimSize(0), ndim = w.getDimSize(1);
  int64_t mdim = x.getNumElements() / kdim;
  if (auto why = qkvSiteError(sig))
    return module.emitError() << "qkv kernel: " << *why;
  Type dtype = x.getElementType();
  int64_t dt = dtype.isBF16() ? 2 : 4;
  QkvPlan plan = choosePlan(mdim, kdim, ndim, dt, hasBias);
  int64_t full = mdim / kNumPartitions, tail = mdim % kNumPartitions;
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, sig);
  prog->setAttr("seam.kernel_plan",
                b.getStringAttr(llvm::formatv(
                    "x^T resident in {0} group(s) of {1} rows; W in slabs of "
                    "{2} columns, read {0} time(s)",
                    plan.groups,
                    std::min<int64_t>(mdim, plan.groupBlocks * kNumPartitions +
                                                (plan.groups == 1 ? tail : 0)),
                    plan.slab)));
  QkvBuilder q(b, module.getLoc(), prog, sig, plan);
  if (plan.groups == 1) {
    q.runGroup(Index(0), full, tail > 0);
  } else {
    int64_t gb = q.gb;
    int64_t whole = full / gb, last = full - whole * gb;
    q.kb.forRange(whole, [&](Index gi) { q.runGroup(gi * gb, gb, false); });
    if (last || tail)
      q.runGroup(Index(whole * gb), last, tail > 0);
  }
  return prog;
}
