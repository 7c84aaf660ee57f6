//===- FlashAttention.cpp - the source's flash attention and a stable one -===//
//
// Both take q [B, H, Sq, D], k, v [B, H, Sk, D] and write o [B, H, Sq, D],
// with BLOCK_Q = BLOCK_K = 128 (D <= 128, one partition tile), and compute
// per block pair
//   S = q k^T, P = exp(scale S [- m]), O += P v, l += rowsum(P)
// and O / l at the end.
//
// flash-attn (the source, Flux2-klein experiments): single pass, exp only,
// no row-max subtraction, heads looped sequentially in one instance. Its
// data movement and engine use are a competent NKI author's (see
// FlashSource): scores made transposed (S^T = K Q^T, so exp gives the P^T
// that P V takes), the row sums from a ones column beside V in the same
// matmul, key blocks and heads software pipelined. exp overflows to Inf on
// large logits, Inf / Inf is NaN: the run's non-finite count reports it;
// nothing here hides it. [1, 6, 768, 128] on trn2: 73.2 us (scores S = q
// k^T, P^T by Tensor-engine transposes, row sums by the activation's
// reduce) -> 31.1 us; the Tensor engine's own work is 27.0 us.
// flash-attn-stable: the exact softmax (the row max subtracted) when a
// row of scores is one chunk of up to 768 keys and there are at least four
// query blocks (recipes::StableAttentionPipeline, the same schedule the
// compiler's own attention runs: a five-stage pipeline over the query
// blocks of every head, engines balanced by hand; [1, 6, 768, 128] on trn2
// 73.4 -> 50.3 us, the Vector engine 91% busy with the row maxes and its
// share of the P^T copies), else the online softmax with a running max m,
// correction exp(m_old - m_new) of the running sum and output, in chunks
// of up to 1024 keys, three query blocks (lanes) going stage by stage
// (buildFlashStable's loop).
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "lowering/recipes/AttentionPipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"
#include <array>

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {
/// What both kernels read from their signature, and their (empty) program.
struct FlashProgram {
  int64_t nb, nh, sq, dd, sk; ///< Q [nb, nh, sq, dd], K and V [nb, nh, sk, dd]
  float scale;                ///< `scale` of the config, else 1/sqrt(dd)
  Type dtype;
  ProgramOp prog;
};
} // namespace

/// Checks the config and creates the kernel's program (the builder's
/// insertion point moves into it).
static FailureOr<FlashProgram> createFlashProgram(OpBuilder &b, ModuleOp module,
                                                  const KernelSignature &sig,
                                                  StringRef name) {
  RankedTensorType q = sig.args[0], k = sig.args[1];
  if (sig.config && sig.config.get("causal"))
    return module.emitError() << "flash attention kernel: causal masking is "
                                 "not built";
  auto scaleAttr =
      sig.config ? sig.config.getAs<FloatAttr>("scale") : FloatAttr();
  FlashProgram fp;
  fp.nb = q.getDimSize(0), fp.nh = q.getDimSize(1), fp.sq = q.getDimSize(2);
  fp.dd = q.getDimSize(3), fp.sk = k.getDimSize(2);
  fp.scale = scaleAttr ? float(scaleAttr.getValueAsDouble())
                       : float(1.0 / std::sqrt(double(fp.dd)));
  fp.dtype = q.getElementType();
  fp.prog = createKernelProgram(b, module, name, sig);
  return fp;
}

namespace {
/// The per-head skeleton both kernels share. Per head, q, k and v arrive in
/// one DMA each (row r of a head at partition r / nb, block r mod nb: any
/// assignment of keys to blocks gives the same softmax as long as K^T's
/// columns and V's rows agree), heads software-pipelined over two buffer
/// sets (head h + 1's loads overlap head h); K^T and Q^T are made once per
/// head, four blocks to a PSUM bank; the query blocks go `lanes` at a time
/// through the kernel's own step, which writes their rows of the head's
/// output tile; a head's output leaves in one DMA.
struct HeadLoop {
  static constexpr int64_t blk = 128, blocksPerBank = kMatmulMaxN / blk;
  int64_t nqb, nkb, dd, heads;
  Value qH, kH, vH, oH;             ///< [heads 128, blocks dd] views of HBM
  Value qn[2], kn[2], vn[2], on[2]; ///< a head's tiles, two sets
  Value qT, kT;                     ///< [dd, blocks, 128]

  HeadLoop(KernelBuilder &kb, const FlashProgram &fp)
      : nqb(fp.sq / blk), nkb(fp.sk / blk), dd(fp.dd), heads(fp.nb * fp.nh) {
    qH = kb.reshape(kb.arg(0), {heads * blk, nqb * dd});
    kH = kb.reshape(kb.arg(1), {heads * blk, nkb * dd});
    vH = kb.reshape(kb.arg(2), {heads * blk, nkb * dd});
    oH = kb.reshape(kb.arg(3), {heads * blk, nqb * dd});
    for (unsigned i = 0; i < 2; ++i) {
      qn[i] = kb.sbuf({blk, nqb, dd}, fp.dtype);
      kn[i] = kb.sbuf({blk, nkb, dd}, fp.dtype);
      vn[i] = kb.sbuf({blk, nkb, dd}, fp.dtype);
      on[i] = kb.sbuf({blk, nqb, dd}, fp.dtype);
    }
    qT = kb.sbuf({dd, nqb, blk}, fp.dtype);
    kT = kb.sbuf({dd, nkb, blk}, fp.dtype);
  }

  /// Runs the heads: `bank(t)` is the PSUM bank of the t-th group of four
  /// transposes; `queryBlocks(qi0, used, buf)` the kernel's step for query
  /// blocks qi0 .. qi0 + used - 1 of the head in buffer set `buf`.
  void run(KernelBuilder &kb, unsigned lanes, function_ref<Value(int64_t)> bank,
           function_ref<void(Index, unsigned, unsigned)> queryBlocks) {
    // Transposes of the `count` [128, dd] blocks of `src` into dst [dd,
    // count, 128], four to a PSUM bank.
    auto transposeBlocks = [&](Value src, Value dst, int64_t count) {
      for (int64_t j0 = 0, t = 0; j0 < count; j0 += blocksPerBank, ++t) {
        int64_t c = std::min(blocksPerBank, count - j0);
        Value b = bank(t);
        for (int64_t j = 0; j < c; ++j)
          kb.transpose(kb.view(b, {dd, blk}, {0, j * blk}),
                       kb.view(src, {blk, 1, dd}, {0, j0 + j, 0}));
        kb.copy(kb.view(dst, {dd, c, blk}, {0, j0, 0}),
                kb.view(b, {dd, c * blk}, {0, 0}));
      }
    };
    kb.forRangePipelined(
        heads,
        [&](Index h, unsigned buf) {
          kb.dma(kb.reshape(qn[buf], {blk, nqb * dd}),
                 kb.view(qH, {blk, nqb * dd}, {h * blk, 0}));
          kb.dma(kb.reshape(kn[buf], {blk, nkb * dd}),
                 kb.view(kH, {blk, nkb * dd}, {h * blk, 0}));
          kb.dma(kb.reshape(vn[buf], {blk, nkb * dd}),
                 kb.view(vH, {blk, nkb * dd}, {h * blk, 0}));
        },
        [&](Index h, unsigned buf) {
          transposeBlocks(kn[buf], kT, nkb);
          transposeBlocks(qn[buf], qT, nqb);
          kb.forRange(nqb / lanes,
                      [&](Index i) { queryBlocks(i * lanes, lanes, buf); });
          if (int64_t rest = nqb % lanes)
            queryBlocks(Index(nqb - rest), unsigned(rest), buf);
          kb.dma(kb.view(oH, {blk, nqb * dd}, {h * blk, 0}),
                 kb.reshape(on[buf], {blk, nqb * dd}));
        });
  }
};
} // namespace

/// The source's kernel: its algorithm as the source wrote it (single pass,
/// exp without a row max, O accumulating in PSUM over the 128-key blocks,
/// heads in sequence in one instance, 128-row blocks), with the data
/// movement and engine use a competent NKI author gives it. (The source
/// re-read K and V for every query block in 32 KB DMAs, transposed K 36
/// times per head, ran each key block as one serial chain on single buffers
/// and transposed every P block on the Tensor engine.)
///  - Scores are made transposed: S^T = K Q^T, one matmul per key block and
///    up to 512 queries (K^T block stationary, Q^T moving), so exp(scale
///    S^T) is P^T itself, the stationary operand of O = P V: no transpose
///    of P, no PSUM-to-SBUF copy of P^T.
///  - The row sums come out of the same matmul: V gets a column of ones
///    (V' = [V | 1], set once per buffer), so O' = P V' holds O in its
///    first D columns and l = sum_k P in its last. The exponentials go
///    without a reduce, and the sums add up in PSUM with O.
///  - Key blocks are software pipelined over two score and two P^T buffers:
///    the Tensor engine makes block j + 1's scores before block j's P V, so
///    it works while the Scalar engine exponentiates.
///  - Per head, q, k and v arrive in one DMA each (row r of a head at
///    partition r / nb, block r mod nb: any assignment of keys to blocks
///    gives the same softmax as long as K^T's columns and V's rows agree);
///    head h + 1's loads are issued at the start of head h, and its K^T,
///    Q^T and V' are made during head h's last key blocks (two sets), so
///    the Scalar engine does not wait for them at a head's start.
///  - Up to kGroup query blocks go through the key blocks together (their
///    O' accumulators fill three PSUM banks' worth of columns at most); a
///    head's output leaves in one DMA.
namespace {
/// The kernels' operands, q, k, v and o in HBM: a head's rows in one DMA
/// each (row r of a head at partition r / nb, block r mod nb: any
/// assignment of keys to blocks gives the same softmax as long as K^T's
/// columns and V's rows agree) into one raw set, read only by the head's
/// preparation (recipes::AttentionHeads) a head ahead; a head's output
/// leaves in one DMA.
struct KernelIo : recipes::AttentionIo {
  static constexpr int64_t blk = recipes::AttentionHeads::blk;
  static constexpr int64_t kLoadParts = 4;

  KernelBuilder &kb;
  int64_t nqb, nkb, dd, heads;
  Value qH, kH, vH, oH; ///< [heads 128, blocks dd] views of HBM
  Value qn, kn, vn;     ///< the next head's q, k and v as loaded
  Value on[2];          ///< a head's output, two sets
  /// The DMAs per tensor of the first head's loads (q, k, v).
  std::array<int64_t, 3> firstParts = {8, 8, 16};

  KernelIo(KernelBuilder &kb, const FlashProgram &fp)
      : kb(kb), nqb(fp.sq / blk), nkb(fp.sk / blk), dd(fp.dd),
        heads(fp.nb * fp.nh) {
    qH = kb.reshape(kb.arg(0), {heads * blk, nqb * dd});
    kH = kb.reshape(kb.arg(1), {heads * blk, nkb * dd});
    vH = kb.reshape(kb.arg(2), {heads * blk, nkb * dd});
    oH = kb.reshape(kb.arg(3), {heads * blk, nqb * dd});
    qn = kb.sbuf({blk, nqb, dd}, fp.dtype);
    kn = kb.sbuf({blk, nkb, dd}, fp.dtype);
    vn = kb.sbuf({blk, nkb, dd}, fp.dtype);
    for (Value &o : on)
      o = kb.sbuf({blk, nqb, dd}, fp.dtype);
  }

  /// The shape the recipes take.
  static recipes::AttentionShape shapeOf(const FlashProgram &fp) {
    recipes::AttentionShape s;
    s.heads = fp.nb * fp.nh;
    s.nqb = fp.sq / blk;
    s.nkb = fp.sk / blk;
    s.dd = s.dv = fp.dd;
    s.scale = fp.scale;
    s.dtype = fp.dtype;
    return s;
  }

  /// Head h's q, k and v into the raw set; the next head's loads wait for
  /// nothing but its preparation's reads (and the first head's go alone,
  /// over every DMA queue, before the second's). Each tensor in `parts`
  /// DMAs of 128 / parts partitions: one DMA a tensor gets two queues of
  /// the 16 (ncore-split-dma's pieces are at least ~55 KB).
  void loadParts(Index h, std::array<int64_t, 3> parts) {
    auto load = [&](Value dst, Value src, int64_t n, int64_t parts) {
      kb.dmaInParts(kb.reshape(dst, {blk, n * dd}),
                    kb.view(src, {blk, n * dd}, {h * blk, 0}), parts);
    };
    load(qn, qH, nqb, parts[0]);
    load(kn, kH, nkb, parts[1]);
    load(vn, vH, nkb, parts[2]);
  }
  void load(Index h, bool first) override {
    loadParts(
        h, first ? firstParts
                 : std::array<int64_t, 3>{kLoadParts, kLoadParts, kLoadParts});
  }
  Value rows(bool q, Index, int64_t j0, int64_t count) override {
    return kb.view(q ? qn : kn, {blk, count, dd}, {0, j0, 0});
  }
  Value vRows(Index) override { return vn; }
  Value outBlock(Index, unsigned set, int64_t qb) override {
    return kb.view(on[set], {blk, 1, dd}, {0, qb, 0});
  }
  void stored(Index h, unsigned set, int64_t qb, bool last) override {
    if (qb == nqb - 1)
      store(h, set, last ? 16 : 1);
  }

  /// Head h's output from set s, in `parts` DMAs (the last head's store is
  /// the program's tail: over all 16 queues).
  void store(Index h, unsigned s, int64_t parts) {
    kb.dmaInParts(kb.view(oH, {blk, nqb * dd}, {h * blk, 0}),
                  kb.reshape(on[s], {blk, nqb * dd}), parts);
  }
};

/// The source's kernel: its algorithm as the source wrote it (single pass,
/// exp without a row max, O accumulating in PSUM over the 128-key blocks,
/// heads in sequence in one instance, 128-row blocks), with the data
/// movement and engine use a competent NKI author gives it. (The source
/// re-read K and V for every query block in 32 KB DMAs, transposed K 36
/// times per head, ran each key block as one serial chain on single buffers
/// and transposed every P block on the Tensor engine.)
///  - Scores are made transposed: S^T = K Q^T, one matmul per key block and
///    up to 512 queries (K^T block stationary, Q^T moving), so exp(scale
///    S^T) is P^T itself, the stationary operand of O = P V: no transpose
///    of P, no PSUM-to-SBUF copy of P^T.
///  - The row sums come out of the P V' matmul (recipes::AttentionHeads): the
///    exponentials go without a reduce, and the sums add up in PSUM with O.
///  - Key blocks are software pipelined over two score and two P^T buffers:
///    the Tensor engine makes block j + 1's scores before block j's P V, so
///    it works while the Scalar engine exponentiates.
///  - Head h + 1's Q^T, K^T and V' are made during head h's last key blocks,
///    so the Scalar engine does not wait for them at a head's start.
///  - Up to kGroup query blocks go through the key blocks together; a
///    head's output leaves in one DMA.
struct FlashSource {
  static constexpr int64_t blk = recipes::AttentionHeads::blk,
                           blocksPerBank =
                               recipes::AttentionHeads::blocksPerBank;
  /// Query blocks per pass over the keys: two score buffers of two banks,
  /// two O' banks (three [128, D + 1] accumulators each) and three
  /// transpose banks fit the 8 PSUM banks (the two 256-query score tiles
  /// share one).
  static constexpr int64_t kGroup = 6;
  /// Key blocks before a head's end at which the next head's Q^T is made
  /// (K^T and V' one block later).
  static constexpr int64_t kPrepLead = 3;

  KernelBuilder &kb;
  const FlashProgram &fp;
  KernelIo io;
  recipes::AttentionHeads hd;
  int64_t nqb, nkb, dd, heads, group;
  SmallVector<Value, 2> sT[2];  ///< PSUM: S^T, up to 512 queries a tile
  Value pT[2];                  ///< P^T [128 keys, group 128]
  SmallVector<Value, kGroup> o; ///< PSUM O' [128, dd + 1]

  FlashSource(KernelBuilder &kb, const FlashProgram &fp)
      : kb(kb), fp(fp), io(kb, fp),
        hd(kb, KernelIo::shapeOf(fp), io, /*banks=*/3), nqb(io.nqb),
        nkb(io.nkb), dd(io.dd), heads(io.heads), group(std::min(nqb, kGroup)) {
    for (unsigned s = 0; s < 2; ++s) {
      for (int64_t c = 0; c < group; c += blocksPerBank)
        sT[s].push_back(
            kb.psum({blk, std::min(blocksPerBank, group - c) * blk}));
      pT[s] = kb.sbuf({blk, group * blk}, fp.dtype);
    }
    for (int64_t i = 0; i < group; ++i)
      o.push_back(kb.psum({blk, dd + 1}));
  }

  void build() {
    hd.onesColumns();
    // The first head's loads are the program's latency: q and k (needed
    // first) over the 16 DMA queues in one round, v in a second.
    io.loadParts(Index(0), {8, 8, 16});
    // The Scalar engine, idle until the first scores, copies Q^T out
    // while the Vector engine copies K^T.
    hd.prepareQ(Index(0), 0, Engine::Scalar);
    hd.prepareK(Index(0), 0);
    // The heads in sequence; each but the last loads and prepares the next.
    kb.forRangeUnrolled(heads - 1, 2, [&](Index h, unsigned set) {
      head(h, set, /*hasNext=*/true);
    });
    head(Index(heads - 1), unsigned((heads - 1) % 2), /*hasNext=*/false);
  }

private:
  /// S^T and P^T of key block j for query blocks q0 .. q0 + used - 1 (key
  /// buffer j mod 2).
  void scores(unsigned s, int64_t q0, int64_t used, int64_t j) {
    unsigned b = unsigned(j % 2);
    for (int64_t c = 0, t = 0; c < used; c += blocksPerBank, ++t) {
      int64_t n = std::min(blocksPerBank, used - c);
      Value st = kb.view(sT[b][t], {blk, n * blk}, {0, 0});
      kb.matmul(st, kb.view(hd.kT[s], {dd, 1, blk}, {0, j, 0}),
                kb.view(hd.qT[s], {dd, n, blk}, {0, q0 + c, 0}));
      kb.activation(ActFunc::Exp, kb.view(pT[b], {blk, n * blk}, {0, c * blk}),
                    st, fp.scale);
    }
  }

  /// O' (+)= P V' of key block j for the group's query blocks.
  void pv(unsigned s, int64_t used, int64_t j) {
    unsigned b = unsigned(j % 2);
    for (int64_t i = 0; i < used; ++i)
      kb.matmul(o[i], kb.view(pT[b], {blk, blk}, {0, i * blk}),
                kb.view(hd.vp[s], {blk, 1, dd + 1}, {0, j, 0}),
                /*accumulate=*/j > 0);
  }

  /// Head h in set s: its query groups, each a software-pipelined pass over
  /// the key blocks, then its output.
  void head(Index h, unsigned s, bool hasNext) {
    if (hasNext)
      io.load(h + 1, /*first=*/false);
    for (int64_t q0 = 0; q0 < nqb; q0 += group) {
      int64_t used = std::min(group, nqb - q0);
      bool lastGroup = q0 + used == nqb;
      // The next head's Q^T and K^T a key block apart: the Tensor engine
      // makes scores and P V between them while the Vector engine copies.
      int64_t prepQAt = std::max<int64_t>(0, nkb - kPrepLead);
      int64_t prepKAt = std::min(nkb - 1, prepQAt + 1);
      scores(s, q0, used, 0);
      for (int64_t j = 0; j < nkb; ++j) {
        if (j + 1 < nkb)
          scores(s, q0, used, j + 1);
        if (hasNext && lastGroup && j == prepQAt)
          hd.prepareQ(h + 1, 1 - s);
        if (hasNext && lastGroup && j == prepKAt)
          hd.prepareK(h + 1, 1 - s);
        pv(s, used, j);
      }
      // O = O'[:, :D] / O'[:, D], on the Vector engine; the last head's
      // blocks alternate with the Scalar engine, idle by then.
      for (int64_t i = 0; i < used; ++i) {
        kb.pinEngine(!hasNext && i % 2 ? Engine::Scalar : Engine::Vector);
        kb.tensorScalar(
            AluOp::Divide, kb.view(io.on[s], {blk, 1, dd}, {0, q0 + i, 0}),
            kb.view(o[i], {blk, dd}, {0, 0}), kb.view(o[i], {blk, 1}, {0, dd}));
        kb.pinEngine(std::nullopt);
      }
    }
    io.store(h, s, hasNext ? 1 : 16);
  }
};
} // namespace

static void buildFlashSource(KernelBuilder &kb, const FlashProgram &fp) {
  FlashSource(kb, fp).build();
}

/// The stable kernel: the pipeline when a row of scores is one softmax
/// chunk, else the online softmax over chunks (see the file comment).
static void buildFlashStable(KernelBuilder &kb, const FlashProgram &fp) {
  recipes::AttentionShape shape = KernelIo::shapeOf(fp);
  if (recipes::StableAttentionPipeline::fits(shape)) {
    KernelIo io(kb, fp);
    recipes::StableAttentionPipeline(kb, shape, io).build();
    return;
  }
  float scale = fp.scale;
  Type dtype = fp.dtype;
  Type f32 = kb.f32();
  constexpr int64_t blk = HeadLoop::blk,
                    blocksPerBank = HeadLoop::blocksPerBank;
  constexpr unsigned kLanes = 3;
  HeadLoop heads(kb, fp);
  int64_t dd = fp.dd, nkb = heads.nkb;
  Value qT = heads.qT, kT = heads.kT;
  // Keys per softmax chunk: two PSUM banks of scores per lane. A row of
  // scores that fits is one exact pass (the row max over all keys); longer
  // rows go chunk by chunk with the online correction.
  int64_t chunkBlocks = std::min<int64_t>(nkb, 2 * blocksPerBank);
  int64_t fullChunks = nkb / chunkBlocks, restBlocks = nkb % chunkBlocks;
  bool online = fullChunks + (restBlocks ? 1 : 0) > 1;
  int64_t banks = llvm::divideCeilSigned(chunkBlocks, blocksPerBank);
  struct Lane {
    SmallVector<Value, 2> s; // PSUM score banks (P^T transposes reuse them)
    Value pv;                // PSUM
    Value p, pT, acc, negm, negmNew, t, l, corr, rl; // SBUF
    SmallVector<Value, 2> mx, rs;
  };
  Lane lanes[kLanes];
  for (Lane &ln : lanes) {
    for (int64_t i = 0; i < banks; ++i) {
      ln.s.push_back(kb.psum({blk, kMatmulMaxN}));
      ln.mx.push_back(kb.sbuf({blk, 1}, f32));
      ln.rs.push_back(kb.sbuf({blk, 1}, f32));
    }
    ln.pv = kb.psum({blk, dd});
    ln.p = kb.sbuf({blk, chunkBlocks * blk}, dtype);
    ln.pT = kb.sbuf({blk, chunkBlocks, blk}, dtype);
    if (online)
      ln.acc = kb.sbuf({blk, dd}, f32);
    for (Value *v : {&ln.negm, &ln.negmNew, &ln.t, &ln.l, &ln.corr, &ln.rl})
      *v = kb.sbuf({blk, 1}, f32);
  }

  // Blocks of chunk bank `bk` of a chunk of `cb` blocks.
  auto bankBlocks = [&](int64_t cb, int64_t bk) {
    return std::min(blocksPerBank, cb - bk * blocksPerBank);
  };

  // S = q K^T for the chunk and -scale * its row max (negmNew: the new
  // running -m with the online correction).
  auto scores = [&](Lane &ln, Index qi, Index c0, int64_t cb) {
    int64_t nbk = llvm::divideCeilSigned(cb, blocksPerBank);
    for (int64_t bk = 0; bk < nbk; ++bk) {
      int64_t n = bankBlocks(cb, bk);
      Value sv = kb.view(ln.s[bk], {blk, n * blk}, {0, 0});
      kb.matmul(sv, kb.view(qT, {dd, 1, blk}, {0, qi, 0}),
                kb.view(kT, {dd, n, blk}, {0, c0 + bk * blocksPerBank, 0}));
      kb.reduce(AluOp::Max, ln.mx[bk], sv);
    }
    if (nbk > 1)
      kb.tensorTensor(AluOp::Max, ln.mx[0], ln.mx[0], ln.mx[1]);
    if (!online) {
      kb.tensorScalar(AluOp::Multiply, ln.negmNew, ln.mx[0], -scale);
      return;
    }
    kb.tensorScalar(AluOp::Multiply, ln.t, ln.mx[0], -scale);
    kb.tensorTensor(AluOp::Min, ln.negmNew, ln.negm, ln.t);
  };
  // P = exp(scale S - m) and its row sums (with the online correction).
  auto softmax = [&](Lane &ln, int64_t cb) {
    int64_t nbk = llvm::divideCeilSigned(cb, blocksPerBank);
    for (int64_t bk = 0; bk < nbk; ++bk) {
      int64_t n = bankBlocks(cb, bk);
      kb.activation(ActFunc::Exp,
                    kb.view(ln.p, {blk, n * blk}, {0, bk * kMatmulMaxN}),
                    kb.view(ln.s[bk], {blk, n * blk}, {0, 0}), scale, 0.0f,
                    ln.negmNew, ln.rs[bk]);
    }
    if (nbk > 1)
      kb.tensorTensor(AluOp::Add, ln.rs[0], ln.rs[0], ln.rs[1]);
    if (online) {
      // corr = exp(m_old - m_new); l = l corr + rowsum(P); acc *= corr.
      kb.activation(ActFunc::Exp, ln.corr, ln.negm, -1.0f, 0.0f, ln.negmNew);
      kb.tensorTensor(AluOp::Multiply, ln.l, ln.l, ln.corr);
      kb.tensorTensor(AluOp::Add, ln.l, ln.l, ln.rs[0]);
      kb.tensorScalar(AluOp::Multiply, ln.acc, ln.acc, ln.corr);
      kb.copy(ln.negm, ln.negmNew);
    } else {
      kb.copy(ln.l, ln.rs[0]);
    }
  };
  // P^T through the score banks (transposes, then one copy per bank).
  auto transposeP = [&](Lane &ln, int64_t cb) {
    int64_t nbk = llvm::divideCeilSigned(cb, blocksPerBank);
    for (int64_t bk = 0; bk < nbk; ++bk) {
      int64_t n = bankBlocks(cb, bk);
      for (int64_t j = 0; j < n; ++j)
        kb.transpose(
            kb.view(ln.s[bk], {blk, blk}, {0, j * blk}),
            kb.view(ln.p, {blk, blk}, {0, (bk * blocksPerBank + j) * blk}));
      kb.copy(kb.view(ln.pT, {blk, n, blk}, {0, bk * blocksPerBank, 0}),
              kb.view(ln.s[bk], {blk, n * blk}, {0, 0}));
    }
  };
  // O (+)= P V.
  auto pv = [&](Lane &ln, Value vHead, Index c0, int64_t cb) {
    for (int64_t j = 0; j < cb; ++j)
      kb.matmul(ln.pv, kb.view(ln.pT, {blk, 1, blk}, {0, j, 0}),
                kb.view(vHead, {blk, 1, dd}, {0, c0 + j, 0}),
                /*accumulate=*/j > 0);
    if (online)
      kb.tensorTensor(AluOp::Add, ln.acc, ln.acc, ln.pv);
  };
  // Query blocks qi0 .. qi0 + used - 1, one per lane, stage by stage.
  auto queryBlocks = [&](Index qi0, unsigned used, unsigned buf) {
    if (online)
      for (unsigned i = 0; i < used; ++i) {
        kb.memset(lanes[i].l, 0.0f);
        kb.memset(lanes[i].acc, 0.0f);
        kb.memset(lanes[i].negm, 3.0e38f);
      }
    auto chunk = [&](Index c0, int64_t cb) {
      for (unsigned i = 0; i < used; ++i)
        scores(lanes[i], qi0 + int64_t(i), c0, cb);
      // Stage by stage over the lanes: the Tensor engine transposes one
      // lane's P while the vector engines exponentiate the next and copy
      // the previous one's P^T out of PSUM, and multiplies P V once every
      // lane's P^T is out.
      for (unsigned i = 0; i < used; ++i)
        softmax(lanes[i], cb);
      for (unsigned i = 0; i < used; ++i)
        transposeP(lanes[i], cb);
      for (unsigned i = 0; i < used; ++i)
        pv(lanes[i], heads.vn[buf], c0, cb);
    };
    kb.forRange(fullChunks,
                [&](Index c) { chunk(c * chunkBlocks, chunkBlocks); });
    if (restBlocks)
      chunk(Index(fullChunks * chunkBlocks), restBlocks);
    for (unsigned i = 0; i < used; ++i) {
      Lane &ln = lanes[i];
      kb.reciprocal(ln.rl, ln.l);
      kb.tensorScalar(
          AluOp::Multiply,
          kb.view(heads.on[buf], {blk, 1, dd}, {0, qi0 + int64_t(i), 0}),
          online ? ln.acc : ln.pv, ln.rl);
    }
  };
  heads.run(
      kb, kLanes,
      [&](int64_t t) { return lanes[t % kLanes].s[(t / kLanes) % banks]; },
      queryBlocks);
}

/// Creates the kernel's program and lets `body` fill it.
static FailureOr<ProgramOp>
buildFlash(OpBuilder &b, ModuleOp module, const KernelSignature &sig,
           StringRef name,
           void (*body)(KernelBuilder &, const FlashProgram &)) {
  OpBuilder::InsertionGuard g(b);
  FailureOr<FlashProgram> fp = createFlashProgram(b, module, sig, name);
  if (failed(fp))
    return failure();
  KernelBuilder kb(b, module.getLoc(), fp->prog);
  body(kb, *fp);
  return fp->prog;
}

FailureOr<ProgramOp> seam::buildFlashAttnKernel(OpBuilder &b, ModuleOp module,
                                                const KernelSignature &sig,
                                                StringRef name) {
  return buildFlash(b, module, sig, name, buildFlashSource);
}

FailureOr<ProgramOp>
seam::buildFlashAttnStableKernel(OpBuilder &b, ModuleOp module,
                                 const KernelSignature &sig, StringRef name) {
  return buildFlash(b, module, sig, name, buildFlashStable);
}
