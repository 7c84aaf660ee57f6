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
// query blocks (FlashStablePipe: a five-stage pipeline over the query
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
/// What both kernels' pipelines share: per head, q, k and v arrive in one
/// DMA each (row r of a head at partition r / nb, block r mod nb: any
/// assignment of keys to blocks gives the same softmax as long as K^T's
/// columns and V's rows agree) into one raw set, read only by the head's
/// preparation a head ahead: Q^T and K^T by Tensor-engine transposes (four
/// blocks to a PSUM bank, banks in turn, one copy out per bank) and V'
/// = [V | 1] (a ones column beside V, so that P V' holds the row sums of P
/// in its last column). Prepared heads alternate between two sets.
struct FlashHeads {
  static constexpr int64_t blk = 128, blocksPerBank = kMatmulMaxN / blk;
  static constexpr int64_t kLoadParts = 4;

  KernelBuilder &kb;
  const FlashProgram &fp;
  int64_t nqb, nkb, dd, heads;
  Value qH, kH, vH, oH;      ///< [heads 128, blocks dd] views of HBM
  Value qn, kn, vn;          ///< the next head's q, k and v as loaded
  Value on[2];               ///< a head's output, two sets
  Value qT[2], kT[2], vp[2]; ///< [dd, blocks, 128]; V' [128, nkb, dd + 1]
  SmallVector<Value, 3> tb;  ///< PSUM: Q^T / K^T transposes
  int64_t tbNext = 0;        ///< the next transpose bank

  FlashHeads(KernelBuilder &kb, const FlashProgram &fp, int64_t banks)
      : kb(kb), fp(fp), nqb(fp.sq / blk), nkb(fp.sk / blk), dd(fp.dd),
        heads(fp.nb * fp.nh) {
    qH = kb.reshape(kb.arg(0), {heads * blk, nqb * dd});
    kH = kb.reshape(kb.arg(1), {heads * blk, nkb * dd});
    vH = kb.reshape(kb.arg(2), {heads * blk, nkb * dd});
    oH = kb.reshape(kb.arg(3), {heads * blk, nqb * dd});
    qn = kb.sbuf({blk, nqb, dd}, fp.dtype);
    kn = kb.sbuf({blk, nkb, dd}, fp.dtype);
    vn = kb.sbuf({blk, nkb, dd}, fp.dtype);
    for (unsigned s = 0; s < 2; ++s) {
      on[s] = kb.sbuf({blk, nqb, dd}, fp.dtype);
      qT[s] = kb.sbuf({dd, nqb, blk}, fp.dtype);
      kT[s] = kb.sbuf({dd, nkb, blk}, fp.dtype);
      vp[s] = kb.sbuf({blk, nkb, dd + 1}, fp.dtype);
    }
    for (int64_t i = 0; i < banks; ++i)
      tb.push_back(kb.psum({blk, kMatmulMaxN}));
  }

  /// The ones column of both V' sets, once.
  void onesColumns() {
    kb.pinEngine(Engine::GpSimd);
    for (Value v : vp)
      kb.memset(kb.view(v, {blk, nkb, 1}, {0, 0, dd}), 1.0);
    kb.pinEngine(std::nullopt);
  }

  /// Head h's q, k and v into the raw set; the next head's loads wait for
  /// nothing but its preparation's reads (and the first head's go alone,
  /// over every DMA queue, before the second's). Each tensor in `parts`
  /// DMAs of 128 / parts partitions: one DMA a tensor gets two queues of
  /// the 16 (ncore-split-dma's pieces are at least ~55 KB).
  void load(Index h, std::array<int64_t, 3> parts = {kLoadParts, kLoadParts,
                                                     kLoadParts}) {
    auto load = [&](Value dst, Value src, int64_t n, int64_t parts) {
      Value d = kb.reshape(dst, {blk, n * dd});
      int64_t rows = blk / parts;
      for (int64_t r = 0; r < blk; r += rows)
        kb.dma(kb.view(d, {rows, n * dd}, {r, 0}),
               kb.view(src, {rows, n * dd}, {h * blk + r, 0}));
    };
    load(qn, qH, nqb, parts[0]);
    load(kn, kH, nkb, parts[1]);
    load(vn, vH, nkb, parts[2]);
  }

  /// The transposes of the `count` [128, dd] blocks of `src` into dst [dd,
  /// count, 128]: Tensor-engine transposes, four blocks to a PSUM bank (the
  /// banks in turn), one copy out per bank on `copyEngine`.
  void transposeBlocks(Value src, Value dst, int64_t count, Engine copyEngine) {
    for (int64_t j0 = 0; j0 < count; j0 += blocksPerBank) {
      int64_t c = std::min(blocksPerBank, count - j0);
      Value b = tb[tbNext++ % tb.size()];
      for (int64_t j = 0; j < c; ++j)
        kb.transpose(kb.view(b, {dd, blk}, {0, j * blk}),
                     kb.view(src, {blk, 1, dd}, {0, j0 + j, 0}));
      kb.pinEngine(copyEngine);
      kb.copy(kb.view(dst, {dd, c, blk}, {0, j0, 0}),
              kb.view(b, {dd, c * blk}, {0, 0}));
      kb.pinEngine(std::nullopt);
    }
  }
  /// The transposes of the bank `bank` (four blocks) of set s's Q^T (banks
  /// 0 .. qBanks() - 1) or K^T (the rest), copied out by `copyEngine`: the
  /// preparation piece by piece, one bank a step.
  int64_t qBanks() const { return llvm::divideCeilSigned(nqb, blocksPerBank); }
  int64_t prepBanks() const {
    return qBanks() + llvm::divideCeilSigned(nkb, blocksPerBank);
  }
  void prepareBank(unsigned s, int64_t bank, Engine copyEngine) {
    bool q = bank < qBanks();
    int64_t j0 = (q ? bank : bank - qBanks()) * blocksPerBank;
    int64_t count = std::min(blocksPerBank, (q ? nqb : nkb) - j0);
    transposeBlocks(kb.view(q ? qn : kn, {blk, count, dd}, {0, j0, 0}),
                    kb.view(q ? qT[s] : kT[s], {dd, count, blk}, {0, j0, 0}),
                    count, copyEngine);
  }
  /// Set s's V' (V beside its ones column), copied by the GpSimd engine.
  void prepareV(unsigned s) {
    kb.pinEngine(Engine::GpSimd);
    kb.copy(kb.view(vp[s], {blk, nkb, dd}, {0, 0, 0}), vn);
    kb.pinEngine(std::nullopt);
  }
  /// Set s's Q^T (made first: a block's scores need all of the query or
  /// key blocks they pair with but only one of the other side).
  void prepareQ(unsigned s, Engine copyEngine = Engine::Vector) {
    transposeBlocks(qn, qT[s], nqb, copyEngine);
  }
  /// Set s's K^T and V' (V beside its ones column, copied by the GpSimd
  /// engine, which has nothing else to do).
  void prepareK(unsigned s, Engine copyEngine = Engine::Vector) {
    transposeBlocks(kn, kT[s], nkb, copyEngine);
    prepareV(s);
  }

  /// Head h's output from set s, in `parts` DMAs (the last head's store is
  /// the program's tail: over all 16 queues).
  void store(Index h, unsigned s, int64_t parts) {
    int64_t rows = blk / parts;
    for (int64_t r = 0; r < blk; r += rows)
      kb.dma(kb.view(oH, {rows, nqb * dd}, {h * blk + r, 0}),
             kb.view(kb.reshape(on[s], {blk, nqb * dd}), {rows, nqb * dd},
                     {r, 0}));
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
///  - The row sums come out of the P V' matmul (FlashHeads): the
///    exponentials go without a reduce, and the sums add up in PSUM with O.
///  - Key blocks are software pipelined over two score and two P^T buffers:
///    the Tensor engine makes block j + 1's scores before block j's P V, so
///    it works while the Scalar engine exponentiates.
///  - Head h + 1's Q^T, K^T and V' are made during head h's last key blocks,
///    so the Scalar engine does not wait for them at a head's start.
///  - Up to kGroup query blocks go through the key blocks together; a
///    head's output leaves in one DMA.
struct FlashSource : FlashHeads {
  /// Query blocks per pass over the keys: two score buffers of two banks,
  /// two O' banks (three [128, D + 1] accumulators each) and three
  /// transpose banks fit the 8 PSUM banks (the two 256-query score tiles
  /// share one).
  static constexpr int64_t kGroup = 6;
  /// Key blocks before a head's end at which the next head's Q^T is made
  /// (K^T and V' one block later).
  static constexpr int64_t kPrepLead = 3;

  int64_t group;
  SmallVector<Value, 2> sT[2];  ///< PSUM: S^T, up to 512 queries a tile
  Value pT[2];                  ///< P^T [128 keys, group 128]
  SmallVector<Value, kGroup> o; ///< PSUM O' [128, dd + 1]

  FlashSource(KernelBuilder &kb, const FlashProgram &fp)
      : FlashHeads(kb, fp, /*banks=*/3), group(std::min(nqb, kGroup)) {
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
    onesColumns();
    // The first head's loads are the program's latency: q and k (needed
    // first) over the 16 DMA queues in one round, v in a second.
    load(Index(0), {8, 8, 16});
    // The Scalar engine, idle until the first scores, copies Q^T out
    // while the Vector engine copies K^T.
    prepareQ(0, Engine::Scalar);
    prepareK(0);
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
      kb.matmul(st, kb.view(kT[s], {dd, 1, blk}, {0, j, 0}),
                kb.view(qT[s], {dd, n, blk}, {0, q0 + c, 0}));
      kb.activation(ActFunc::Exp, kb.view(pT[b], {blk, n * blk}, {0, c * blk}),
                    st, fp.scale);
    }
  }

  /// O' (+)= P V' of key block j for the group's query blocks.
  void pv(unsigned s, int64_t used, int64_t j) {
    unsigned b = unsigned(j % 2);
    for (int64_t i = 0; i < used; ++i)
      kb.matmul(o[i], kb.view(pT[b], {blk, blk}, {0, i * blk}),
                kb.view(vp[s], {blk, 1, dd + 1}, {0, j, 0}),
                /*accumulate=*/j > 0);
  }

  /// Head h in set s: its query groups, each a software-pipelined pass over
  /// the key blocks, then its output.
  void head(Index h, unsigned s, bool hasNext) {
    if (hasNext)
      load(h + 1);
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
          prepareQ(1 - s);
        if (hasNext && lastGroup && j == prepKAt)
          prepareK(1 - s);
        pv(s, used, j);
      }
      // O = O'[:, :D] / O'[:, D], on the Vector engine; the last head's
      // blocks alternate with the Scalar engine, idle by then.
      for (int64_t i = 0; i < used; ++i) {
        kb.pinEngine(!hasNext && i % 2 ? Engine::Scalar : Engine::Vector);
        kb.tensorScalar(
            AluOp::Divide, kb.view(on[s], {blk, 1, dd}, {0, q0 + i, 0}),
            kb.view(o[i], {blk, dd}, {0, 0}), kb.view(o[i], {blk, 1}, {0, dd}));
        kb.pinEngine(std::nullopt);
      }
    }
    store(h, s, hasNext ? 1 : 16);
  }
};

/// The stable kernel when a row of scores is one softmax chunk (up to
/// kMaxKeyBlocks key blocks): the exact softmax of each query block,
/// P = exp(scale S - scale m) with m its row max, as a five-stage pipeline
/// over the query blocks of every head in turn:
///   A  S = q K^T (Tensor), its row max (Vector; the partial maxes of the
///      score tiles combined on GpSimd);
///   B  P = exp(scale S - scale m) (Scalar);
///   C  P^T by Tensor-engine transposes, copied out of PSUM (the first
///      tile by the Scalar engine, the rest by the Vector engine);
///   D  O' = P V' (Tensor; l in its last column);
///   E  O = O'[:, :D] / l (the Vector and Scalar engines by turns).
/// Stage X of block t runs in the step of block t + lag(X) (A 0, B 1, C 2,
/// D and E 3), so each engine's in-order queue holds work of four blocks at
/// once and none waits for another's result of the same step; the pipeline
/// runs on across heads (a head's first steps finish the previous head's
/// blocks) and drains after the last. Buffers alternate by block.
struct FlashStablePipe : FlashHeads {
  static constexpr int64_t kMaxKeyBlocks = 6;
  /// Steps between the next head's last bank of transposes and the head's
  /// end.
  static constexpr int64_t kPrepSlack = 1;

  float scale;
  int64_t tiles; ///< score tiles of up to 512 keys per block
  SmallVector<Value, 2> s[2], tp[2]; ///< PSUM: S, P^T transposes
  Value p[2], pT[2], mx[2], negm[2]; ///< SBUF: P, P^T, maxes, -scale m
  Value o[2];                        ///< PSUM O' [128, dd + 1]

  /// One query block of one head: its head's index and set, and its ring
  /// buffer.
  struct Block {
    Index h;
    unsigned set;
    int64_t qb;
    unsigned r;
  };

  FlashStablePipe(KernelBuilder &kb, const FlashProgram &fp)
      : FlashHeads(kb, fp, /*banks=*/1), scale(fp.scale),
        tiles(llvm::divideCeilSigned(nkb, blocksPerBank)) {
    for (unsigned r = 0; r < 2; ++r) {
      for (int64_t t = 0; t < tiles; ++t) {
        int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank) * blk;
        s[r].push_back(kb.psum({blk, n}));
        tp[r].push_back(kb.psum({blk, n}));
      }
      p[r] = kb.sbuf({blk, nkb * blk}, fp.dtype);
      pT[r] = kb.sbuf({blk, nkb, blk}, fp.dtype);
      mx[r] = kb.sbuf({blk, tiles}, kb.f32());
      negm[r] = kb.sbuf({blk, 1}, kb.f32());
      o[r] = kb.psum({blk, dd + 1});
    }
  }

  /// Up to kMaxKeyBlocks key blocks (the score, transpose and O' buffers
  /// fill the PSUM), and at least four query blocks: the pipeline is three
  /// blocks deep, and the next head's V' may only replace the previous
  /// head's after that head's last P V' (step 3).
  static bool fits(const FlashProgram &fp) {
    return fp.sk / blk <= kMaxKeyBlocks && fp.sq / blk >= 4;
  }

  void build() {
    onesColumns();
    load(Index(0), {8, 8, 16});
    // The first head's preparation is the program's latency: it transposes
    // into the score and transpose buffers too (free until the first
    // block), so that no transpose waits for a copy.
    SmallVector<Value, 3> one = tb;
    for (Value t : {s[0][0], s[1][0], tp[0][0], tp[1][0]})
      if (NcoreBuilder::tileOf(t).getShape()[1] == kMatmulMaxN)
        tb.push_back(t);
    for (int64_t bank = 0; bank < prepBanks(); ++bank)
      prepareBank(0, bank, bank < qBanks() ? Engine::Scalar : Engine::Vector);
    prepareV(0);
    tb = one;
    tbNext = 0;
    if (heads == 1) {
      head(Index(0), 0, /*hasPrev=*/false, /*hasNext=*/false);
    } else {
      head(Index(0), 0, /*hasPrev=*/false, /*hasNext=*/true);
      // Heads 1 .. heads - 2; the ring buffer of block t of head h is
      // (h nqb + t) mod 2, fixed per unrolled copy.
      kb.forRangeUnrolled(heads - 2, 2, [&](Index i, unsigned copy) {
        head(i + 1, (copy + 1) % 2, /*hasPrev=*/true, /*hasNext=*/true);
      });
      head(Index(heads - 1), unsigned((heads - 1) % 2), /*hasPrev=*/true,
           /*hasNext=*/false);
    }
    // Drain: the last head's last blocks.
    Index last(heads - 1);
    unsigned set = unsigned((heads - 1) % 2);
    for (int64_t step = nqb; step < nqb + 3; ++step)
      stages(last, set, step, /*hasPrev=*/true, /*hasNext=*/false,
             /*fromA=*/false);
  }

private:
  /// Block t (< 0: the previous head's) of head h in set `set`.
  Block block(Index h, unsigned set, int64_t t) const {
    Block b;
    bool prev = t < 0;
    b.h = prev ? h - Index(1) : h;
    b.set = prev ? 1 - set : set;
    b.qb = prev ? t + nqb : t;
    // (h nqb + t) mod 2, with h mod 2 = set.
    b.r = unsigned(((prev ? 1 - set : set) * nqb + b.qb) % 2);
    return b;
  }

  void stageA(const Block &b) {
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank);
      kb.matmul(s[b.r][t], kb.view(qT[b.set], {dd, 1, blk}, {0, b.qb, 0}),
                kb.view(kT[b.set], {dd, n, blk}, {0, t * blocksPerBank, 0}));
      kb.pinEngine(Engine::Vector);
      kb.reduce(AluOp::Max, kb.view(mx[b.r], {blk, 1}, {0, t}), s[b.r][t]);
    }
    // -scale m, the exponentials' bias, on the idle GpSimd engine.
    kb.pinEngine(Engine::GpSimd);
    Value m = mx[b.r];
    if (tiles > 1) {
      kb.reduce(AluOp::Max, kb.view(mx[b.r], {blk, 1}, {0, 0}), mx[b.r]);
      m = kb.view(mx[b.r], {blk, 1}, {0, 0});
    }
    kb.tensorScalar(AluOp::Multiply, negm[b.r], m, -scale);
    kb.pinEngine(std::nullopt);
  }

  void stageB(const Block &b) {
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank) * blk;
      kb.activation(ActFunc::Exp,
                    kb.view(p[b.r], {blk, n}, {0, t * kMatmulMaxN}), s[b.r][t],
                    scale, 0.0, negm[b.r]);
    }
  }

  void stageC(const Block &b) {
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank);
      for (int64_t j = 0; j < n; ++j)
        kb.transpose(
            kb.view(tp[b.r][t], {blk, blk}, {0, j * blk}),
            kb.view(p[b.r], {blk, blk}, {0, (t * blocksPerBank + j) * blk}));
      kb.pinEngine(t == 0 ? Engine::Scalar : Engine::Vector);
      kb.copy(kb.view(pT[b.r], {blk, n, blk}, {0, t * blocksPerBank, 0}),
              tp[b.r][t]);
      kb.pinEngine(std::nullopt);
    }
  }

  void stageD(const Block &b, bool lastOfAll) {
    for (int64_t j = 0; j < nkb; ++j)
      kb.matmul(o[b.r], kb.view(pT[b.r], {blk, 1, blk}, {0, j, 0}),
                kb.view(vp[b.set], {blk, 1, dd + 1}, {0, j, 0}),
                /*accumulate=*/j > 0);
    kb.pinEngine(b.qb % 2 ? Engine::Scalar : Engine::Vector);
    kb.tensorScalar(
        AluOp::Divide, kb.view(on[b.set], {blk, 1, dd}, {0, b.qb, 0}),
        kb.view(o[b.r], {blk, dd}, {0, 0}), kb.view(o[b.r], {blk, 1}, {0, dd}));
    kb.pinEngine(std::nullopt);
    if (b.qb == nqb - 1)
      store(b.h, b.set, lastOfAll ? 16 : 1);
  }

  /// The stages of step `step` of head h: A of block step, B of step - 1, C
  /// of step - 2, D and E of step - 3 (blocks < 0 are the previous head's,
  /// blocks >= nqb do not exist).
  void stages(Index h, unsigned set, int64_t step, bool hasPrev, bool hasNext,
              bool fromA) {
    auto exists = [&](int64_t t) {
      return t < nqb && (t >= 0 || (hasPrev && t + nqb >= 0));
    };
    // B before A: B reads the block's -scale m before A's next block of
    // the same buffer overwrites it.
    if (exists(step - 1))
      stageB(block(h, set, step - 1));
    if (fromA && exists(step))
      stageA(block(h, set, step));
    if (exists(step - 2))
      stageC(block(h, set, step - 2));
    if (exists(step - 3)) {
      Block b = block(h, set, step - 3);
      stageD(b, /*lastOfAll=*/!hasNext && step - 3 >= 0);
    }
  }

  void head(Index h, unsigned set, bool hasPrev, bool hasNext) {
    if (hasNext)
      load(h + 1);
    // The next head's preparation one PSUM bank of transposes a step (the
    // bank's copy is out before the next step's transposes reuse it), Q^T
    // (copied by the Scalar engine) then K^T (the Vector engine). Set
    // 1 - set's Q^T and K^T are read only by stage A, its V' until step 3
    // (the previous head's last P V').
    // It ends with the head (its loads, issued at the head's start, are in
    // by then).
    int64_t banks = prepBanks();
    int64_t first = std::max<int64_t>(0, nqb - banks);
    int64_t vAt = std::min(nqb - 1, std::max<int64_t>(3, first + banks));
    for (int64_t step = 0; step < nqb; ++step) {
      stages(h, set, step, hasPrev, hasNext, /*fromA=*/true);
      if (!hasNext || step < first)
        continue;
      for (int64_t bank = step - first;
           bank < banks && (bank == step - first || step == nqb - 1); ++bank)
        prepareBank(1 - set, bank,
                    bank < qBanks() ? Engine::Scalar : Engine::Vector);
      if (step == vAt)
        prepareV(1 - set);
    }
  }
};
} // namespace

static void buildFlashSource(KernelBuilder &kb, const FlashProgram &fp) {
  FlashSource(kb, fp).build();
}

/// The stable kernel: the pipeline when a row of scores is one softmax
/// chunk, else the online softmax over chunks (see the file comment).
static void buildFlashStable(KernelBuilder &kb, const FlashProgram &fp) {
  if (FlashStablePipe::fits(fp)) {
    FlashStablePipe(kb, fp).build();
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
