//===- ConvertAttention.cpp - the compiler's own attention ----------------===//
//
// softmax(scale * Q K^T [+ causal mask]) V per (batch, head), q [B, H, Sq, D],
// k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv] (the output's head dim), D and Dv <=
// 128. Loops: (b, kv head) x (query group g) x (query tile of 128 rows) x
// (key blocks):
//  * K^T [D, Sk] of the kv head is built once: k tiles (roped when fused)
//    transposed on the Tensor engine, D on partitions.
//  * Q tile (roped) transposed to Q^T [D, p]; S = Q^T' K^T blocks of 512 keys
//    into PSUM, evacuated scaled into an fp32 score row [p, Sk].
//  * causal: + a mask row read at a loop-dependent column of one [128, Sk +
//    Sq - 128] tile built once by affine_select (0 where key <= query, else
//    -1e30), so the query-tile loop stays a loop.
//  * stable softmax: row max (tensor_reduce), exp(s - max) with the row sum
//    as the activation's add-reduce, reciprocal.
//  * O = P V: 128-key blocks of P transposed on the Tensor engine and
//    accumulated in PSUM against the V tiles; O * (1 / sum) on evacuation.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "lowering/recipes/AttentionPipeline.h"
#include "runtime/Profile.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

static constexpr double kMaskedScore = -1.0e30;
/// Blocks of P^T per PSUM bank: 4 x 128 fp32 columns = 2 KiB per partition.
static constexpr int64_t kPvGroup = 4;

namespace {

/// The operands of an attention run by recipes::StableAttentionPipeline
/// (the schedule of the flash-attn-stable kernel): a head's q, k and v rows
/// as [128, blocks, d] tiles in the natural order (block t, partition p:
/// row t * 128 + p of the head), read in place from an SBUF placement or
/// brought in by one DMA per block from HBM a head ahead; q and k roped
/// (GpSimd, from resident cos / sin tables) as the transposes read them; the
/// output written in place in SBUF or stored block by block to HBM.
class PipelineIo : public ncore::recipes::AttentionIo {
public:
  static constexpr int64_t blk = kNumPartitions;

  PipelineIo(ProgramLowering &pl, const ncore::recipes::AttentionShape &shape,
             int64_t sq, int64_t sk)
      : pl(pl), shape(shape), sq(sq), sk(sk) {}

  /// [128, count, cols] over blocks [t0, t0 + count) of the row tiles of an
  /// SBUF placement, when its root is [P, T * pitch].
  static bool blockViewable(const Placement &t) {
    if (!t.inSbuf())
      return true;
    ArrayRef<int64_t> root = ncore::NcoreBuilder::tileOf(t.root).getShape();
    return root.size() == 2 && root[0] == blk && root[1] % t.pitch == 0 &&
           t.rows % blk == 0;
  }
  Value blocks(const Placement &t, Index row0, int64_t count, int64_t cols) {
    ArrayRef<int64_t> root = ncore::NcoreBuilder::tileOf(t.root).getShape();
    Value r = pl.reshape(t.root, {blk, root[1] / t.pitch, t.pitch});
    Index tile = (row0 + t.rowOffset).floorDiv(blk);
    return pl.view(r, {blk, count, cols}, {0, tile, Index(t.colOffset)});
  }

  /// SBUF bytes per partition of the io's own tiles.
  int64_t bytes() const {
    int64_t eb = shape.dtype.isBF16() ? 2 : 4;
    int64_t b = 0;
    if (!q.inSbuf())
      b += shape.nqb * shape.dd * eb;
    if (!k.inSbuf())
      b += shape.nkb * shape.dd * eb;
    if (!v.inSbuf())
      b += shape.nkb * shape.dv * eb;
    if (!y.inSbuf())
      b += 2 * shape.nqb * shape.dv * eb;
    if (rope) {
      int64_t n = std::max(shape.nqb, shape.nkb);
      // Roped q and k, the tables (when not in SBUF), two scratch rows.
      b += (shape.nqb + shape.nkb) * shape.dd * eb +
           (cos.inSbuf() ? 0 : 2 * n * shape.dd * eb) + n * shape.dd * eb +
           n * shape.dd / 2 * eb;
    }
    return b;
  }

  /// The tiles (after the pipeline's, so that its PSUM comes first), and
  /// the rope tables resident in SBUF.
  void allocate() {
    Type et = shape.dtype;
    if (!q.inSbuf())
      qn = pl.alloc(MemSpace::Sbuf, {blk, shape.nqb, shape.dd}, et);
    if (!k.inSbuf())
      kn = pl.alloc(MemSpace::Sbuf, {blk, shape.nkb, shape.dd}, et);
    if (!v.inSbuf())
      vn = pl.alloc(MemSpace::Sbuf, {blk, shape.nkb, shape.dv}, et);
    if (!y.inSbuf())
      for (Value &o : on)
        o = pl.alloc(MemSpace::Sbuf, {blk, shape.nqb * shape.dv}, et);
    if (!rope)
      return;
    int64_t n = std::max(shape.nqb, shape.nkb);
    qr = pl.alloc(MemSpace::Sbuf, {blk, shape.nqb, shape.dd}, et);
    kr = pl.alloc(MemSpace::Sbuf, {blk, shape.nkb, shape.dd}, et);
    xc = pl.alloc(MemSpace::Sbuf, {blk, n, shape.dd}, et);
    th = pl.alloc(MemSpace::Sbuf, {blk, n, shape.dd / 2}, et);
    for (auto [table, tile] : {std::pair{&cos, &cosT}, {&sin, &sinT}}) {
      if (table->inSbuf()) {
        *tile = blocks(*table, Index(0), n, shape.dd);
        continue;
      }
      *tile = pl.alloc(MemSpace::Sbuf, {blk, n * shape.dd}, et);
      for (int64_t t = 0; t < n; ++t)
        pl.dma(pl.view(*tile, {blk, shape.dd}, {0, Index(t * shape.dd)}),
               pl.window(*table, Index(t * blk), blk, 0, shape.dd));
      *tile = pl.reshape(*tile, {blk, n, shape.dd});
    }
  }

  void load(Index h, bool) override {
    auto rowsIn = [&](const Placement &t, Value dst, int64_t s, int64_t n,
                      int64_t cols) {
      if (t.inSbuf())
        return;
      Value d = pl.reshape(dst, {blk, n * cols});
      for (int64_t j = 0; j < n; ++j)
        pl.dma(pl.view(d, {blk, cols}, {0, Index(j * cols)}),
               pl.window(t, h * s + Index(j * blk), blk, 0, cols));
    };
    rowsIn(q, qn, sq, shape.nqb, shape.dd);
    rowsIn(k, kn, sk, shape.nkb, shape.dd);
    rowsIn(v, vn, sk, shape.nkb, shape.dv);
  }

  Value rows(bool isQ, Index h, int64_t j0, int64_t count) override {
    const Placement &t = isQ ? q : k;
    Index row0 = h * (isQ ? sq : sk) + Index(j0 * blk);
    Value src =
        t.inSbuf() ? blocks(t, row0, count, shape.dd)
                   : pl.view(isQ ? qn : kn, {blk, count, shape.dd}, {0, j0, 0});
    if (!rope)
      return src;
    Value out = pl.view(isQ ? qr : kr, {blk, count, shape.dd}, {0, j0, 0});
    ropeBlocks(out, src, j0, count);
    return out;
  }

  Value vRows(Index h) override {
    return v.inSbuf() ? blocks(v, h * sk, shape.nkb, shape.dv) : vn;
  }

  Value outBlock(Index h, unsigned set, int64_t qb) override {
    if (y.inSbuf())
      return pl.window(y, h * sq + Index(qb * blk), blk, 0, shape.dv);
    return pl.view(on[set], {blk, shape.dv}, {0, Index(qb * shape.dv)});
  }

  /// A block's store; the last head's in kLastStoreParts DMAs of fewer
  /// partitions: they are the program's tail, and a transfer's time is its
  /// fixed cost plus its bytes over one queue.
  void stored(Index h, unsigned set, int64_t qb, bool last) override {
    if (y.inSbuf())
      return;
    pl.dmaInParts(pl.window(y, h * sq + Index(qb * blk), blk, 0, shape.dv),
                  outBlock(h, set, qb), last ? kLastStoreParts : 1);
  }
  static constexpr int64_t kLastStoreParts = 8;

  Placement q, k, v, y, cos, sin;
  bool rope = false;

private:
  /// out = x * cos + rotate_half(x) * sin over blocks [j0, j0 + count) (see
  /// ConvertRope.cpp), on the GpSimd engine, which the pipeline leaves
  /// nearly idle and which reads only SBUF here.
  void ropeBlocks(Value out, Value x, int64_t j0, int64_t count) {
    int64_t d = shape.dd, hd = d / 2;
    auto half = [&](Value t, int64_t i) {
      return pl.view(t, {blk, count, hd}, {0, 0, Index(i * hd)});
    };
    Value c = pl.view(cosT, {blk, count, d}, {0, j0, 0});
    Value s = pl.view(sinT, {blk, count, d}, {0, j0, 0});
    Value x2 = pl.view(xc, {blk, count, d}, {0, 0, 0});
    Value t = pl.view(th, {blk, count, hd}, {0, 0, 0});
    pl.pinEngine(ncore::Engine::GpSimd);
    pl.tensorTensor(ncore::AluOp::Multiply, x2, x, c);
    pl.tensorTensor(ncore::AluOp::Multiply, t, half(x, 1), half(s, 0));
    pl.tensorTensor(ncore::AluOp::Subtract, half(out, 0), half(x2, 0), t);
    pl.tensorTensor(ncore::AluOp::Multiply, t, half(x, 0), half(s, 1));
    pl.tensorTensor(ncore::AluOp::Add, half(out, 1), half(x2, 1), t);
    pl.pinEngine(std::nullopt);
  }

  ProgramLowering &pl;
  ncore::recipes::AttentionShape shape;
  int64_t sq, sk;
  Value qn, kn, vn, on[2], qr, kr, xc, th, cosT, sinT;
};

/// The working tiles of one query tile: two or three sets for the software
/// pipeline over full tiles, one for a last partial tile.
struct Slot {
  int64_t p = 0, chunk = 0;
  Value qtp, qt, sps[2], scores, mx, sum, rcp, probs, ops, pt, ptp;
  Value ptGroup[2], ptpGroup[2]; ///< Groups of P^T blocks (sk % 128 == 0).
};

/// One attention's lowering (see the file comment), one method per step:
/// check the operands, place them, build the mask and the resident tables,
/// choose the pipeline (one head at a time, or every head resident with a
/// guest), allocate the slots and the K^T / V buffers, then emit the loops
/// from the phases of a query tile (scores, softmax, output).
class AttentionLowering {
public:
  AttentionLowering(ProgramLowering &pl, AttentionOp op) : pl(pl), op(op) {}

  LogicalResult run() {
    if (failed(readOperands()))
      return failure();
    placeOperands();
    if (std::optional<LogicalResult> done = tryPipeline())
      return *done;
    buildMask();
    tpsum[0] = pl.alloc(MemSpace::Psum, {dp, kNumPartitions}, f32);
    planResidentV();
    if (rope) {
      residentTable(cosP);
      residentTable(sinP);
    }
    allocateScoreBanks();
    choosePipeline();
    if (failed(takeGuest()))
      return failure();
    allocateSlots();
    allocateKvBuffers();
    if (allHeads)
      runAllHeads();
    else
      runPerKvHead();
    if (ya.root != y.root)
      pl.copyInto(y, ya);
    return success();
  }

private:
  //===--------------------------------------------------------------------===//
  // Operands, placements and resident tiles
  //===--------------------------------------------------------------------===//

  /// The operands' placements, and the shapes the lowering takes.
  LogicalResult readOperands() {
    auto qp = pl.get(op.getQ(), op), kp = pl.get(op.getK(), op),
         vp = pl.get(op.getV(), op);
    if (failed(qp) || failed(kp) || failed(vp))
      return failure();
    q = *qp;
    k = *kp;
    v = *vp;
    rope = bool(op.getRopeCos());
    if (rope) {
      FailureOr<Placement> cp = pl.get(op.getRopeCos(), op);
      if (failed(cp))
        return failure();
      FailureOr<Placement> sp = pl.get(op.getRopeSin(), op);
      if (failed(sp))
        return failure();
      cosP = *cp;
      sinP = *sp;
    }
    if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4)
      return op.emitOpError() << "convert-seam-to-ncore: attention operands "
                                 "must be [B, H, S, D]";
    batch = q.shape[0];
    heads = q.shape[1];
    sq = q.shape[2];
    d = q.shape[3];
    kvHeads = k.shape[1];
    sk = k.shape[2];
    dv = v.shape[3]; // V's head dim: the output's
    et = q.elementType;
    if (k.elementType != et || v.elementType != et)
      return op.emitOpError() << "convert-seam-to-ncore: q, k and v must have "
                                 "one dtype";
    if (d > kNumPartitions || dv > kNumPartitions)
      return op.emitOpError()
             << "convert-seam-to-ncore: head dim " << std::max(d, dv)
             << " exceeds 128 (the contraction of Q K^T runs "
                "over partitions)";
    if (kvHeads == 0 || heads % kvHeads)
      return op.emitOpError()
             << "convert-seam-to-ncore: " << heads
             << " query heads are not a multiple of " << kvHeads << " kv heads";
    if (rope && d % 2)
      return op.emitOpError() << "convert-seam-to-ncore: rope needs an even "
                                 "head dim, got "
                              << d;
    causal = op.getCausal();
    if (causal && sq != sk)
      return op.emitOpError() << "convert-seam-to-ncore: causal attention "
                                 "needs Sq == Sk, got "
                              << sq << " and " << sk;
    eb = et.isBF16() ? 2 : 4;
    // Per partition: K^T [D, Sk], scores f32 [p, Sk], P [p, Sk], mask.
    bytes = sk * eb + sk * 4 + sk * eb + (causal ? (sk + sq) * 4 : 0);
    if (bytes > pl.target().workingBytes)
      return op.emitOpError()
             << "convert-seam-to-ncore: " << sk
             << " keys are too many for one score row in SBUF (" << bytes
             << " bytes per partition, " << pl.target().workingBytes
             << " available); a flash-attention kernel is needed";
    return success();
  }

  /// The result's placement, and every operand where head windows are
  /// expressible: heads start at rows h * S, so SBUF windows need
  /// S % 128 == 0.
  void placeOperands() {
    y = pl.placeResult(op.getResult());
    qa = pl.rowAlignedOrRelayout(q, sq);
    ka = pl.rowAlignedOrRelayout(k, sk);
    va = pl.rowAlignedOrRelayout(v, sk);
    ya = ProgramLowering::rowAligned(y, sq)
             ? y
             : pl.hbmScratch(y.shape, y.elementType, "relayout");
    group = heads / kvHeads;
    f32 = pl.builder().getF32Type();
    dp = d;
    qTiles = llvm::divideCeil(sq, kNumPartitions);
    gk = kPvGroup * kNumPartitions;
    firstKeys = std::min(gk, sk);
  }

  /// The stable pipeline of the flash-attn-stable kernel
  /// (recipes::StableAttentionPipeline), when it applies: no causal mask,
  /// no GQA, whole 128-row blocks (at most six key blocks, at least four
  /// query blocks), operands whose blocks are viewable, its tiles within the
  /// SBUF budget and the PSUM, and no guest. Else nullopt: the lowering
  /// below. With a guest (the next block's modulation matvec, or the
  /// single-stream block's MLP linear), the all-heads lowering below is
  /// kept: its longer attention hides the guest's work, and the pipeline,
  /// given the same guest (flux2-klein, trn2, TP=4), measured 0.2-0.4%
  /// slower steps; the MLP guest's accumulators do not fit beside the
  /// pipeline's PSUM at all.
  std::optional<LogicalResult> tryPipeline() {
    namespace recipes = ncore::recipes;
    recipes::AttentionShape shape;
    shape.heads = batch * heads;
    shape.nqb = sq / kNumPartitions;
    shape.nkb = sk / kNumPartitions;
    shape.dd = d;
    shape.dv = dv;
    shape.scale = float(op.getScale().convertToDouble());
    shape.dtype = et;
    if (pl.hasPendingGuest() || causal || group != 1 || sq % kNumPartitions ||
        sk % kNumPartitions || !recipes::StableAttentionPipeline::fits(shape))
      return std::nullopt;
    PipelineIo io(pl, shape, sq, sk);
    io.q = qa;
    io.k = ka;
    io.v = va;
    io.y = ya;
    io.rope = rope;
    if (rope) {
      if (cosP.rows < std::max(sq, sk) || sinP.rows < std::max(sq, sk) ||
          cosP.cols != d || sinP.cols != d)
        return std::nullopt;
      io.cos = cosP;
      io.sin = sinP;
    }
    for (const Placement *t : {&qa, &ka, &va, &ya})
      if (!PipelineIo::blockViewable(*t))
        return std::nullopt;
    if (rope &&
        (!PipelineIo::blockViewable(cosP) || !PipelineIo::blockViewable(sinP)))
      return std::nullopt;
    int64_t hostBytes =
        recipes::StableAttentionPipeline::sbufBytes(shape) + io.bytes();
    if (hostBytes > pl.workingBudget())
      return std::nullopt;
    if (!fitsPsumBanks(recipes::StableAttentionPipeline::psumTiles(shape)))
      return std::nullopt;
    recipes::StableAttentionPipeline pipe(pl, shape, io);
    io.allocate();
    pl.noteWorkingBytes(hostBytes);
    ++pl.statistics().attentionPipelines;
    if (pl.target().remarks)
      op.emitRemark() << "convert-seam-to-ncore: attention runs the stable "
                         "pipeline of the flash-attn-stable kernel: "
                      << shape.heads << " head(s) x " << shape.nqb
                      << " query block(s) x " << shape.nkb
                      << " key block(s); q, k, v from "
                      << (qa.inSbuf() ? "SBUF" : "HBM") << ", "
                      << (ka.inSbuf() ? "SBUF" : "HBM") << ", "
                      << (va.inSbuf() ? "SBUF" : "HBM")
                      << (rope ? "; rope on the GpSimd engine" : "");
    pipe.build();
    if (ya.root != y.root)
      pl.copyInto(y, ya);
    return success();
  }

  /// Whether the tiles (bytes per partition, none over a bank) pack into
  /// the target's PSUM banks, first fit by decreasing size (a tile cannot
  /// straddle two banks).
  bool fitsPsumBanks(ArrayRef<int64_t> a) const {
    const ::seam::rt::Profile *profile = pl.target().profile;
    if (!profile)
      return false;
    int64_t bank = int64_t(profile->psumBankBytes());
    SmallVector<int64_t> tiles(a);
    llvm::sort(tiles, std::greater<int64_t>());
    SmallVector<int64_t> free(profile->psumBanks, bank);
    for (int64_t t : tiles) {
      auto *it = llvm::find_if(free, [&](int64_t f) { return f >= t; });
      if (it == free.end())
        return false;
      *it -= t;
    }
    return true;
  }

  /// Causal: one [128, Sk + Sq - 128] tile, 0 where key <= query, else
  /// kMaskedScore, read at a loop-dependent column per query tile.
  void buildMask() {
    if (!causal)
      return;
    int64_t width = sk + (qTiles - 1) * kNumPartitions;
    mask =
        pl.memset(pl.alloc(MemSpace::Sbuf,
                           {std::min<int64_t>(sq, kNumPartitions), width}, f32),
                  0.0);
    // keep where (qTiles - 1) * 128 + p - j >= 0.
    pl.affineSelect(ncore::AluOp::IsGe, mask, mask,
                    (qTiles - 1) * kNumPartitions, 1.0, -1.0, kMaskedScore);
  }

  /// V of a kv head in HBM is read once per head, in one DMA, rather than
  /// per query tile and key block: key k = p * kTiles + t sits at partition
  /// p, block t (each partition then reads kTiles consecutive rows), and the
  /// blocks of P^T take the keys t, t + kTiles, ... to match (P V sums over
  /// the keys in any order).
  void planResidentV() {
    kTiles = sk / kNumPartitions;
    vResident = !va.inSbuf() && sk % kNumPartitions == 0 && kTiles > 1 &&
                va.isContiguous() && va.rowOffset == 0 &&
                bytes + kTiles * dv * eb <= pl.target().workingBytes;
  }

  /// Rope tables in HBM are read into SBUF once ([S, D] rows as row tiles)
  /// rather than per query and key tile: each tile's rope then waits for no
  /// DMA.
  void residentTable(Placement &t) {
    if (t.inSbuf())
      return;
    int64_t rows = t.rows, tiles = t.rowTiles();
    if (!(rows <= kNumPartitions || rows % kNumPartitions == 0) ||
        bytes + 2 * tiles * d * eb > pl.target().workingBytes)
      return;
    Placement r = t;
    r.space = MemSpace::Sbuf;
    r.root = pl.alloc(MemSpace::Sbuf, {t.partitions(), tiles * t.cols},
                      t.elementType);
    r.rowOffset = r.colOffset = 0;
    r.pitch = t.cols;
    pl.forEachRowTile(rows, [&](Index r0, int64_t p) {
      pl.dma(pl.window(r, r0, p, zero, t.cols),
             pl.window(t, r0, p, zero, t.cols));
    });
    t = r;
  }

  /// Rows [row, row + p) of `src` in SBUF, roped at positions from `pos`
  /// when the attention is fused with rope.
  Value loadRoped(const Placement &src, Index row, Index pos, int64_t p) {
    Value t = pl.load(src, row, p, zero, d);
    if (!rope)
      return t;
    Value c = pl.load(cosP, pos, p, zero, d),
          s = pl.load(sinP, pos, p, zero, d);
    Value r = pl.alloc(MemSpace::Sbuf, {p, d}, et);
    emitRopeTile(pl, r, t, c, s, p, d);
    return r;
  }

  //===--------------------------------------------------------------------===//
  // The pipeline and its tiles
  //===--------------------------------------------------------------------===//

  /// Score banks, shared by the slots (one query tile's scores at a time).
  void allocateScoreBanks() {
    scoreChunk = std::min<int64_t>(sk, ncore::kMatmulMaxN);
    for (Value &b : scorePsum)
      b = pl.alloc(MemSpace::Psum,
                   {std::min<int64_t>(sq, kNumPartitions), scoreChunk}, f32);
  }

  /// Whether tiles are pipelined, over how many slots, and whether every
  /// head is resident (allHeads).
  void choosePipeline() {
    // Pipelining needs a second score and probability row per partition.
    pipelined =
        sq >= 256 && bytes + sk * 4 + sk * eb <= pl.target().workingBytes;
    full = sq / kNumPartitions;
    rem = sq % kNumPartitions;
    nHeads = batch * heads;
    // Without GQA or a partial tile, Q^T, K^T (roped, D on partitions) and
    // V of every head are built up front, and one software pipeline runs
    // over every (head, query tile): a head's first scores and softmax are
    // issued before the previous head's last output, and a tile's scores
    // wait for no DMA, rope or transpose. Needs the second slot, an even
    // number of tiles per head (so that every head starts at slot 0) and
    // room for all heads.
    // Per partition: `bytes` with its one K^T replaced by every head's
    // Q^T, K^T (and V), plus the second slot's score and probability rows.
    residentBytes =
        nHeads * (sq * eb + sk * eb + (vResident ? kTiles * dv * eb : 0));
    secondSlotBytes = sk * 4 + sk * eb;
    auto fitsResident = [&](int64_t extraSlots) {
      return bytes - sk * eb + residentBytes + extraSlots * secondSlotBytes <=
             pl.target().workingBytes;
    };
    // Every head's tiles start at slot 0: full is a multiple of the slots.
    // Three slots when they fit (the scores then run two tiles ahead, see
    // the pipeline below), else two.
    nSlots = !pipelined ? 1 : 2;
    allHeads = pipelined && rem == 0 && group == 1 && nHeads > 1;
    if (allHeads && full % 3 == 0 && fitsResident(2))
      nSlots = 3;
    else
      allHeads = allHeads && full % 2 == 0 && fitsResident(1);
    ahead = nSlots - 1;
  }

  /// A guest (see InterleavedWork) takes one group per head and one unit
  /// per query tile: its matmuls fill the Tensor engine while the vector
  /// engines do this pipeline's softmax. Only the all-heads pipeline has a
  /// step per (head, tile).
  LogicalResult takeGuest() {
    int64_t hostBytes = allHeads ? bytes - sk * eb + residentBytes +
                                       (nSlots - 1) * secondSlotBytes
                                 : bytes;
    FailureOr<std::optional<InterleavedWork>> guestOr =
        pl.takeGuest(allHeads ? nHeads : 0, full, hostBytes);
    if (failed(guestOr))
      return failure();
    guest = std::move(*guestOr);
    return success();
  }

  /// The slots of full tiles and of the last partial one. With allHeads,
  /// P^T PSUM groups are shared by the slots (a slot keeps its own only
  /// when sharedPtp is not set): the Tensor engine transposes one tile's P
  /// at a time anyway, and three slots of their own would not fit in PSUM.
  void allocateSlots() {
    if (allHeads && sk % kNumPartitions == 0)
      for (Value &b : sharedPtp)
        b = pl.alloc(
            MemSpace::Psum,
            {kNumPartitions,
             std::min<int64_t>(kPvGroup, sk / kNumPartitions) * kNumPartitions},
            f32);
    if (sq >= kNumPartitions)
      for (unsigned i = 0; i < nSlots; ++i)
        slots[i] = allocSlot(kNumPartitions, !allHeads);
    if (rem)
      last = allocSlot(rem, true);
  }

  Slot allocSlot(int64_t p, bool ownQt) {
    Slot s;
    s.p = p;
    s.chunk = scoreChunk;
    if (ownQt) {
      s.qtp = pl.alloc(MemSpace::Psum, {dp, p}, f32);
      s.qt = pl.alloc(MemSpace::Sbuf, {dp, p}, et);
    }
    s.sps[0] = scorePsum[0];
    s.sps[1] = scorePsum[1];
    s.scores = pl.alloc(MemSpace::Sbuf, {p, sk}, f32);
    s.mx = pl.alloc(MemSpace::Sbuf, {p, 1}, f32);
    s.sum = pl.alloc(MemSpace::Sbuf, {p, 1}, f32);
    s.rcp = pl.alloc(MemSpace::Sbuf, {p, 1}, f32);
    s.probs = pl.alloc(MemSpace::Sbuf, {p, sk}, et);
    s.ops = pl.alloc(MemSpace::Psum, {p, dv}, f32);
    int64_t kb = std::min<int64_t>(sk, kNumPartitions);
    s.pt = pl.alloc(MemSpace::Sbuf, {kb, p}, et);
    if (sk % kNumPartitions == 0) {
      int64_t blocks = std::min<int64_t>(kPvGroup, sk / kNumPartitions);
      for (unsigned i = 0; i < 2; ++i) {
        s.ptGroup[i] =
            pl.alloc(MemSpace::Sbuf, {kNumPartitions, blocks * p}, et);
        s.ptpGroup[i] =
            sharedPtp[i] && p == kNumPartitions
                ? sharedPtp[i]
                : pl.alloc(MemSpace::Psum, {kNumPartitions, blocks * p}, f32);
      }
    } else {
      s.pt = pl.alloc(MemSpace::Sbuf, {kb, p}, et);
      s.ptp = pl.alloc(MemSpace::Psum, {kb, p}, f32);
    }
    return s;
  }

  /// K^T and V of the kv head in work (all of them with allHeads: head h at
  /// column h * Sk and h * kTiles * D), Q^T of every head (allHeads).
  void allocateKvBuffers() {
    kvCopies = allHeads ? nHeads : 1;
    kt = pl.alloc(MemSpace::Sbuf, {dp, kvCopies * sk}, et);
    if (vResident)
      vAll = pl.alloc(MemSpace::Sbuf, {kNumPartitions, kvCopies * kTiles * dv},
                      et);
    if (allHeads) {
      qtAll = pl.alloc(MemSpace::Sbuf, {dp, nHeads * sq}, et);
      tpsum[1] = pl.alloc(MemSpace::Psum, {dp, kNumPartitions}, f32);
    }
  }

  /// Transposes rows [row0, row0 + n) of `src` (roped at positions from 0)
  /// into columns [col0, col0 + n) of `dst`; two PSUM buffers alternate
  /// when there are two.
  void buildTransposed(const Placement &src, Index row0, int64_t n, Value dst,
                       Index col0) {
    auto chunk = [&](Index r0, int64_t nr, unsigned parity) {
      Value tp = pl.view(tpsum[parity], {d, nr}, {zero, zero});
      pl.transpose(tp, loadRoped(src, row0 + r0, r0, nr));
      pl.copy(pl.view(dst, {d, nr}, {zero, col0 + r0}), tp);
    };
    if (tpsum[1])
      pl.forEachChunkAlternating(n, kNumPartitions, chunk);
    else
      pl.forEachChunk(n, kNumPartitions,
                      [&](Index r0, int64_t nr, bool) { chunk(r0, nr, 0); });
  }

  /// K^T and (resident) V of kv head bk into copy `c` of the buffers.
  void prepareKv(Index bk, Index c) {
    if (vResident) {
      Value rows = pl.view(va.root, {sk, dv}, {bk * sk, zero});
      Value all = pl.reshape(vAll, {kNumPartitions, kvCopies * kTiles, dv});
      pl.dma(
          pl.view(all, {kNumPartitions, kTiles, dv}, {zero, c * kTiles, zero}),
          pl.reshape(rows, {kNumPartitions, kTiles, dv}));
    }
    buildTransposed(ka, bk * sk, sk, kt, c * sk);
  }

  //===--------------------------------------------------------------------===//
  // The phases of one query tile
  //===--------------------------------------------------------------------===//

  /// Q^T of the tile (resident, or roped and transposed here), then its
  /// scaled fp32 scores against K^T copy `kvc`, masked when causal.
  void scoresPhase(Slot &s, Index head, Index q0, Index kvc) {
    int64_t p = s.p;
    Value qt = s.qt;
    if (allHeads) {
      qt = pl.view(qtAll, {dp, p}, {zero, head * sq + q0});
    } else {
      Value qr = loadRoped(qa, head * sq + q0, q0, p);
      Value qtp = pl.view(s.qtp, {dp, p}, {zero, zero});
      pl.transpose(qtp, qr);
      pl.copy(s.qt, qtp);
    }
    // Scores, scaled, fp32.
    // Two PSUM banks alternate, so the next chunk's matmul does not
    // wait for this chunk's evacuation.
    pl.forEachChunkAlternating(
        sk, s.chunk, [&](Index c0, int64_t nc, unsigned parity) {
          Value acc = pl.view(s.sps[parity], {p, nc}, {zero, zero});
          pl.matmul(acc, qt, pl.view(kt, {dp, nc}, {zero, kvc * sk + c0}));
          // Evacuated scaled: the even chunks by the Scalar engine's
          // activation, the odd ones by a tensor_scalar the scheduler may
          // give the Vector engine, so the exp (Scalar only) does not queue
          // behind every chunk's evacuation.
          Value dst = pl.view(s.scores, {p, nc}, {zero, c0});
          double scale = op.getScale().convertToDouble();
          if (parity == 0)
            pl.activation(ncore::ActFunc::Identity, dst, acc, scale);
          else
            pl.tensorScalar(ncore::AluOp::Multiply, dst, acc, scale);
        });
    if (causal) {
      Value m = pl.view(mask, {p, sk},
                        {zero, Index((qTiles - 1) * kNumPartitions) - q0});
      pl.tensorTensor(ncore::AluOp::Add, s.scores, s.scores, m);
    }
  }

  /// Stable softmax (unnormalised P; 1 / sum applied to O).
  void softmaxPhase(Slot &s) {
    pl.reduce(ncore::AluOp::Max, s.mx, s.scores);
    pl.tensorScalar(ncore::AluOp::Multiply, s.mx, s.mx, -1.0);
    pl.activation(ncore::ActFunc::Exp, s.probs, s.scores, 1.0, 0.0, s.mx,
                  s.sum);
    pl.reciprocal(s.rcp, s.sum);
  }

  // O = P V over 128-key blocks. With whole blocks, up to four blocks of P
  // are transposed into one PSUM bank and evacuated by one copy, two banks
  // alternating; the groups are software pipelined: group g + 1 is
  // transposed before group g's matmuls, so the Tensor engine transposes
  // while the vector engines copy the group before (a matmul of P^T waits
  // for its group's copy). Without whole blocks, one block at a time.

  /// Keys k0 .. k0 + nk of P (or, resident V, t, t + kTiles, ...).
  Value probsBlock(Slot &s, Index k0, int64_t nk) {
    return vResident ? pl.view(s.probs, {s.p, nk},
                               {zero, k0.floorDiv(kNumPartitions)}, {1, kTiles})
                     : pl.view(s.probs, {s.p, nk}, {zero, k0});
  }

  void pvMatmul(Slot &s, Index bk, Index kvc, Index k0, int64_t nk, Value ptv,
                bool first) {
    Value vt =
        vResident
            ? pl.view(vAll, {nk, dv},
                      {zero, (kvc * kTiles + k0.floorDiv(kNumPartitions)) * dv})
            : pl.load(va, bk * sk + k0, nk, zero, dv);
    pl.matmul(s.ops, ptv, vt, /*accumulate=*/!first);
  }

  /// The transposes and the copy of the group of keys [g0, g0 + n) into
  /// buffer set `parity`, then (groupPv) its matmuls.
  void groupTranspose(Slot &s, Index g0, int64_t n, unsigned parity) {
    int64_t blocks = n / kNumPartitions, p = s.p;
    for (int64_t j = 0; j < blocks; ++j)
      pl.transpose(pl.view(s.ptpGroup[parity], {kNumPartitions, p},
                           {zero, Index(j * p)}),
                   probsBlock(s, g0 + j * kNumPartitions, kNumPartitions));
    pl.copy(
        pl.view(s.ptGroup[parity], {kNumPartitions, blocks * p}, {zero, zero}),
        pl.view(s.ptpGroup[parity], {kNumPartitions, blocks * p},
                {zero, zero}));
  }

  void groupPv(Slot &s, Index bk, Index kvc, Index g0, int64_t n,
               unsigned parity, bool first) {
    int64_t blocks = n / kNumPartitions, p = s.p;
    for (int64_t j = 0; j < blocks; ++j)
      pvMatmul(
          s, bk, kvc, g0 + j * kNumPartitions, kNumPartitions,
          pl.view(s.ptGroup[parity], {kNumPartitions, p}, {zero, Index(j * p)}),
          first && j == 0);
  }

  /// The first group's transposes: issued on their own, so that the caller
  /// can put other Tensor-engine work (the next tile's scores) between them
  /// and their matmuls, while their copy runs.
  void outputStart(Slot &s) {
    if (sk % kNumPartitions == 0)
      groupTranspose(s, zero, firstKeys, 0);
  }

  /// P V in groups of whole blocks, after outputStart.
  void outputGroups(Slot &s, Index bk, Index kvc) {
    // Groups after the first: `wholeGroups` of gk keys, then `tail` keys.
    int64_t rest = sk - firstKeys, wholeGroups = rest / gk, tail = rest % gk;
    auto start = [&](int64_t i) { return Index(firstKeys + (i - 1) * gk); };
    // Group i >= 1 uses set i % 2; its transposes precede the matmuls
    // of group i - 1.
    if (wholeGroups > 0) {
      groupTranspose(s, start(1), gk, 1);
      groupPv(s, bk, kvc, zero, firstKeys, 0, true);
      // Steps i = 1 .. wholeGroups - 1: transpose group i + 1, matmuls of i.
      pl.forRangeAlternating(wholeGroups - 1, [&](Index k, unsigned parity) {
        Index gi = Index(firstKeys) + k * gk;
        groupTranspose(s, gi + gk, gk, parity);
        groupPv(s, bk, kvc, gi, gk, 1 - parity, false);
      });
    }
    // The last whole group (group `wholeGroups`, the first one when there
    // are no others) and the tail after it.
    if (tail)
      groupTranspose(s, start(wholeGroups + 1), tail, (wholeGroups + 1) % 2);
    groupPv(s, bk, kvc, wholeGroups ? start(wholeGroups) : zero,
            wholeGroups ? gk : firstKeys, wholeGroups % 2, wholeGroups == 0);
    if (tail)
      groupPv(s, bk, kvc, start(wholeGroups + 1), tail, (wholeGroups + 1) % 2,
              false);
  }

  /// P V one block of keys at a time (Sk not a multiple of 128).
  void outputBlocks(Slot &s, Index bk, Index kvc) {
    int64_t p = s.p;
    pl.forEachChunk(
        sk, kNumPartitions,
        [&](Index k0, int64_t nk, bool first) {
          Value ptpv = pl.view(s.ptp, {nk, p}, {zero, zero});
          pl.transpose(ptpv, probsBlock(s, k0, nk));
          Value ptv = pl.view(s.pt, {nk, p}, {zero, zero});
          pl.copy(ptv, ptpv);
          pvMatmul(s, bk, kvc, k0, nk, ptv, first);
        },
        /*peelFirst=*/true);
  }

  /// The rest of P V after outputStart, then O * (1 / sum) and its store.
  void outputFinish(Slot &s, Index head, Index bk, Index q0, Index kvc) {
    if (sk % kNumPartitions == 0)
      outputGroups(s, bk, kvc);
    else
      outputBlocks(s, bk, kvc);
    int64_t p = s.p;
    Index qrow = head * sq + q0;
    Value out = pl.outTile(ya, qrow, p, zero, dv);
    pl.tensorScalar(ncore::AluOp::Multiply, out, s.ops, s.rcp);
    pl.storeOut(ya, qrow, p, zero, dv, out);
  }

  void outputPhase(Slot &s, Index head, Index bk, Index q0, Index kvc) {
    outputStart(s);
    outputFinish(s, head, bk, q0, kvc);
  }

  static Index tileStart(Index t) { return t * kNumPartitions; }
  static Index tileRow(int64_t t) { return Index(t * kNumPartitions); }

  //===--------------------------------------------------------------------===//
  // The loops
  //===--------------------------------------------------------------------===//

  /// The full query tiles of one head, software pipelined over the two
  /// slots: step t issues the scores of tile t + 1 (between the first
  /// transposes of tile t's P and their matmuls, which wait for the copy of
  /// those transposes), then the rest of the output of tile t, then the
  /// softmax of tile t + 1, so that in the in-order engine queues one
  /// tile's softmax (Vector/Scalar) runs while the Tensor engine does the
  /// other's P V, and the next scores are ready when the Tensor engine gets
  /// to them. Tile 0 (scores and softmax, slot 0) has been issued before.
  /// (With every head resident, runAllHeads pipelines across heads
  /// instead.)
  void headTiles(Index head, Index bk, Index kvc) {
    pl.forRangeAlternating(full - 1, [&](Index t, unsigned parity) {
      outputStart(slots[parity]);
      scoresPhase(slots[1 - parity], head, tileStart(t + 1), kvc);
      outputFinish(slots[parity], head, bk, tileStart(t), kvc);
      softmaxPhase(slots[1 - parity]);
    });
    outputPhase(slots[(full - 1) % 2], head, bk,
                Index((full - 1) * kNumPartitions), kvc);
  }

  /// Per (batch, kv head): K^T (and V) once, then the query heads of its
  /// group, tile by tile (pipelined over two slots when they fit), and the
  /// partial last tile.
  void runPerKvHead() {
    pl.forRange(batch * kvHeads, [&](Index bk) {
      prepareKv(bk, zero);
      pl.forRange(group, [&](Index g) {
        Index head = bk * group + g;
        if (full && !pipelined) {
          pl.forRange(full, [&](Index t) {
            scoresPhase(slots[0], head, tileStart(t), zero);
            softmaxPhase(slots[0]);
            outputPhase(slots[0], head, bk, tileStart(t), zero);
          });
        } else if (full) {
          scoresPhase(slots[0], head, zero, zero);
          softmaxPhase(slots[0]);
          headTiles(head, bk, zero);
        }
        if (rem) {
          Index q0 = Index(full * kNumPartitions);
          scoresPhase(*last, head, q0, zero);
          softmaxPhase(*last);
          outputPhase(*last, head, bk, q0, zero);
        }
      });
    });
  }

  /// Every head resident: the guest's first group, Q^T, K^T and V of every
  /// head, then one software pipeline over every (head, query tile) over
  /// nSlots slots (tile t of every head in slot t % nSlots: full is a
  /// multiple of nSlots).
  void runAllHeads() {
    // The guest's group 0 runs first, whole: the Tensor engine does its
    // matmuls while the vector engines finish the ops that produce Q, K and
    // V (the norms of q and k), which the transposes below wait for. Group
    // g + 1 then runs in head g's steps (the last head has none). Two units
    // per loop iteration: the guest's accumulators alternate.
    if (guest) {
      guest->load(zero, 0);
      guest->load(Index(1), 1);
      pl.forRangeAlternating(
          full, [&](Index t, unsigned) { guest->step(zero, t, 0); });
    }
    pl.forRange(nHeads, [&](Index h) {
      prepareKv(h, h);
      buildTransposed(qa, h * sq, sq, qtAll, h * sq);
    });
    for (unsigned j = 0; j < ahead; ++j)
      scoresPhase(slots[j], zero, tileRow(j), zero);
    softmaxPhase(slots[0]);
    if (guest) {
      // Heads 0 .. nHeads - 3 load and run; nHeads - 2 runs the last group.
      pl.forRangeAlternating(nHeads - 2, [&](Index h, unsigned par) {
        pipelineHead(h, true, 1 - par, true, true);
      });
      pipelineHead(Index(nHeads - 2), true, (nHeads - 1) % 2, true, false);
    } else {
      pl.forRange(nHeads - 1,
                  [&](Index h) { pipelineHead(h, true, 0, false, false); });
    }
    pipelineHead(Index(nHeads - 1), false, 0, false, false);
    if (guest && guest->finish)
      guest->finish();
  }

  /// Head h's steps of the all-heads pipeline: the step of tile t issues
  /// the scores of the tile `ahead` = nSlots - 1 ahead (after the first
  /// transposes of tile t's P, see outputStart), the output of tile t, then
  /// the softmax of the next tile; near a head's end "ahead" and "next" are
  /// the next head's first tiles (`hasNext`), so the pipeline never drains
  /// between heads. With three slots a tile's scores are evacuated a whole
  /// step before its softmax, and the Scalar engine's exp never waits on
  /// the row max that follows that evacuation; with two, the next tile's
  /// scores and softmax share a step.
  /// Head h runs the guest's group h + 1 in set `set` (`guestUnits`) and
  /// loads group h + 2 into the other set, the one group h used
  /// (`guestLoad`). The guest's unit of a tile follows the next tile's
  /// softmax in the queues: the Scalar engine's exp does not wait for the
  /// guest's evacuation, and the Tensor engine runs the guest's matmuls
  /// while that softmax runs.
  void pipelineHead(Index h, bool hasNext, unsigned set, bool guestUnits,
                    bool guestLoad) {
    if (guestLoad)
      guest->load(h + 2, 1 - set);
    pl.forRangeUnrolled(full - ahead, nSlots, [&](Index t, unsigned c) {
      outputStart(slots[c]);
      scoresPhase(slots[(c + ahead) % nSlots], h, tileStart(t + ahead), h);
      outputFinish(slots[c], h, h, tileStart(t), h);
      softmaxPhase(slots[(c + 1) % nSlots]);
      if (guestUnits)
        guest->step(h + 1, t, set);
    });
    for (int64_t t = full - ahead; t < full; ++t) {
      outputStart(slots[t % nSlots]);
      if (hasNext)
        scoresPhase(slots[(t + ahead) % nSlots], h + 1,
                    tileRow(t + ahead - full), h + 1);
      outputFinish(slots[t % nSlots], h, h, tileRow(t), h);
      if (t + 1 < full || hasNext)
        softmaxPhase(slots[(t + 1) % nSlots]);
      if (guestUnits)
        guest->step(h + 1, Index(t), set);
    }
  }

  ProgramLowering &pl;
  AttentionOp op;
  const Index zero = Index(0);

  // Operands and shapes: q [B, H, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk,
  // Dv]; the placements where head windows are expressible (qa, ka, va,
  // ya); `bytes` per partition of one head's working rows.
  Placement q, k, v, cosP, sinP, y, qa, ka, va, ya;
  bool rope = false, causal = false;
  int64_t batch = 0, heads = 0, sq = 0, d = 0, kvHeads = 0, sk = 0, dv = 0;
  int64_t eb = 0, bytes = 0, group = 0, dp = 0, qTiles = 0, gk = 0,
          firstKeys = 0;
  Type et, f32;

  // Resident tiles: the causal mask, V per kv head.
  Value mask, tpsum[2];
  int64_t kTiles = 0;
  bool vResident = false;

  // The pipeline: slots, score banks, every head resident or not, a guest.
  int64_t scoreChunk = 0, full = 0, rem = 0, nHeads = 0, residentBytes = 0,
          secondSlotBytes = 0;
  bool pipelined = false, allHeads = false;
  unsigned nSlots = 1, ahead = 0;
  std::optional<InterleavedWork> guest;
  Value scorePsum[2], sharedPtp[2];
  Slot slots[3];
  std::optional<Slot> last;

  // K^T (and V) of the kv head or of every head, Q^T of every head.
  int64_t kvCopies = 1;
  Value kt, qtAll, vAll;
};

} // namespace

static LogicalResult lowerAttention(ProgramLowering &pl, Operation *o) {
  return AttentionLowering(pl, cast<AttentionOp>(o)).run();
}

void conversion::populateAttentionLowerings(LoweringTable &table) {
  table[AttentionOp::getOperationName()] = lowerAttention;
}

void conversion::populateAttentionHosts(llvm::StringSet<> &hosts) {
  hosts.insert(AttentionOp::getOperationName());
}
