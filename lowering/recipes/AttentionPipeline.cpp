//===- AttentionPipeline.cpp - softmax attention as a five-stage pipeline -===//
//
// See AttentionPipeline.h. Users: the flash-attn-stable kernel
// (kernels/FlashAttention.cpp) and the compiler's attention
// (lowering/conversion/ConvertAttention.cpp), each with its own AttentionIo.
//
//===----------------------------------------------------------------------===//
#include "lowering/recipes/AttentionPipeline.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ncore;
using namespace mlir::ncore::recipes;

//===----------------------------------------------------------------------===//
// AttentionHeads
//===----------------------------------------------------------------------===//

AttentionHeads::AttentionHeads(NcoreBuilder &b, const AttentionShape &shape,
                               AttentionIo &io, int64_t banks)
    : b(b), shape(shape), io(io), nqb(shape.nqb), nkb(shape.nkb), dd(shape.dd),
      dv(shape.dv), heads(shape.heads) {
  for (unsigned s = 0; s < 2; ++s) {
    qT[s] = b.sbuf({dd, nqb, blk}, shape.dtype);
    kT[s] = b.sbuf({dd, nkb, blk}, shape.dtype);
    vp[s] = b.sbuf({blk, nkb, dv + 1}, shape.dtype);
  }
  for (int64_t i = 0; i < banks; ++i)
    tb.push_back(b.psum({blk, kMatmulMaxN}));
}

void AttentionHeads::onesColumns() {
  b.pinEngine(Engine::GpSimd);
  for (Value v : vp)
    b.memset(b.view(v, {blk, nkb, 1}, {0, 0, dv}), 1.0);
  b.pinEngine(std::nullopt);
}

void AttentionHeads::transposeBlocks(Value src, Value dst, int64_t count,
                                     Engine copyEngine) {
  for (int64_t j0 = 0; j0 < count; j0 += blocksPerBank) {
    int64_t c = std::min(blocksPerBank, count - j0);
    Value bank = tb[tbNext++ % tb.size()];
    for (int64_t j = 0; j < c; ++j)
      b.transpose(b.view(bank, {dd, blk}, {0, j * blk}),
                  b.view(src, {blk, 1, dd}, {0, j0 + j, 0}));
    b.pinEngine(copyEngine);
    b.copy(b.view(dst, {dd, c, blk}, {0, j0, 0}),
           b.view(bank, {dd, c * blk}, {0, 0}));
    b.pinEngine(std::nullopt);
  }
}

int64_t AttentionHeads::qBanks() const {
  return llvm::divideCeilSigned(nqb, blocksPerBank);
}

int64_t AttentionHeads::prepBanks() const {
  return qBanks() + llvm::divideCeilSigned(nkb, blocksPerBank);
}

void AttentionHeads::prepareBank(Index h, unsigned s, int64_t bank,
                                 Engine copyEngine) {
  bool q = bank < qBanks();
  int64_t j0 = (q ? bank : bank - qBanks()) * blocksPerBank;
  int64_t count = std::min(blocksPerBank, (q ? nqb : nkb) - j0);
  transposeBlocks(io.rows(q, h, j0, count),
                  b.view(q ? qT[s] : kT[s], {dd, count, blk}, {0, j0, 0}),
                  count, copyEngine);
}

void AttentionHeads::prepareV(Index h, unsigned s) {
  Value v = io.vRows(h);
  b.pinEngine(Engine::GpSimd);
  b.copy(b.view(vp[s], {blk, nkb, dv}, {0, 0, 0}), v);
  b.pinEngine(std::nullopt);
}

void AttentionHeads::prepareQ(Index h, unsigned s, Engine copyEngine) {
  for (int64_t bank = 0; bank < qBanks(); ++bank)
    prepareBank(h, s, bank, copyEngine);
}

void AttentionHeads::prepareK(Index h, unsigned s, Engine copyEngine) {
  for (int64_t bank = qBanks(); bank < prepBanks(); ++bank)
    prepareBank(h, s, bank, copyEngine);
  prepareV(h, s);
}

//===----------------------------------------------------------------------===//
// StableAttentionPipeline
//===----------------------------------------------------------------------===//

static int64_t scoreTiles(const AttentionShape &shape) {
  return llvm::divideCeilSigned(shape.nkb, AttentionHeads::blocksPerBank);
}

llvm::SmallVector<int64_t>
StableAttentionPipeline::psumTiles(const AttentionShape &shape) {
  // Two sets of score and of transpose tiles (a row of keys each, in tiles
  // of up to a bank), two O' accumulators, one bank of Q^T / K^T
  // transposes.
  llvm::SmallVector<int64_t> tiles;
  for (int64_t set = 0; set < 4; ++set)
    for (int64_t t = 0; t < scoreTiles(shape); ++t)
      tiles.push_back(std::min(blocksPerBank, shape.nkb - t * blocksPerBank) *
                      blk * 4);
  tiles.append(2, (shape.dv + 1) * 4);
  tiles.push_back(kMatmulMaxN * 4);
  return tiles;
}

int64_t StableAttentionPipeline::sbufBytes(const AttentionShape &shape) {
  int64_t eb = shape.dtype.isBF16() ? 2 : 4;
  int64_t keys = shape.nkb * blk, queries = shape.nqb * blk;
  // Q^T, K^T and V' of two heads; P and P^T of two blocks; maxes.
  return 2 * (queries + keys) * eb + 2 * shape.nkb * (shape.dv + 1) * eb +
         2 * 2 * keys * eb + 2 * (scoreTiles(shape) + 1) * 4;
}

bool StableAttentionPipeline::fits(const AttentionShape &shape) {
  return shape.nkb >= 1 && shape.nkb <= kMaxKeyBlocks && shape.nqb >= 4 &&
         shape.dd >= 1 && shape.dd <= blk && shape.dv >= 1 && shape.dv <= blk &&
         shape.heads >= 1;
}

StableAttentionPipeline::StableAttentionPipeline(NcoreBuilder &b,
                                                 const AttentionShape &shape,
                                                 AttentionIo &io)
    : AttentionHeads(b, shape, io, /*banks=*/1), scale(shape.scale),
      tiles(scoreTiles(shape)) {
  Type f32 = b.builder().getF32Type();
  for (unsigned r = 0; r < 2; ++r) {
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank) * blk;
      s[r].push_back(b.psum({blk, n}));
      tp[r].push_back(b.psum({blk, n}));
    }
    p[r] = b.sbuf({blk, nkb * blk}, shape.dtype);
    pT[r] = b.sbuf({blk, nkb, blk}, shape.dtype);
    mx[r] = b.sbuf({blk, tiles}, f32);
    negm[r] = b.sbuf({blk, 1}, f32);
    o[r] = b.psum({blk, dv + 1});
  }
}

void StableAttentionPipeline::build() {
  onesColumns();
  io.load(Index(0), /*first=*/true);
  // The first head's preparation is the program's latency: it transposes
  // into the score and transpose buffers too (free until the first block),
  // so that no transpose waits for a copy.
  llvm::SmallVector<Value, 3> one = tb;
  for (Value t : {s[0][0], s[1][0], tp[0][0], tp[1][0]})
    if (NcoreBuilder::tileOf(t).getShape()[1] == kMatmulMaxN)
      tb.push_back(t);
  for (int64_t bank = 0; bank < prepBanks(); ++bank)
    prepareBank(Index(0), 0, bank,
                bank < qBanks() ? Engine::Scalar : Engine::Vector);
  prepareV(Index(0), 0);
  tb = one;
  tbNext = 0;
  if (heads == 1) {
    head(Index(0), 0, /*hasPrev=*/false, /*hasNext=*/false);
  } else {
    head(Index(0), 0, /*hasPrev=*/false, /*hasNext=*/true);
    // Heads 1 .. heads - 2; the ring buffer of block t of head h is (h nqb
    // + t) mod 2, fixed per unrolled copy.
    b.forRangeUnrolled(heads - 2, 2, [&](Index i, unsigned copy) {
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

StableAttentionPipeline::Block
StableAttentionPipeline::block(Index h, unsigned set, int64_t t) const {
  Block blk;
  bool prev = t < 0;
  blk.h = prev ? h - Index(1) : h;
  blk.set = prev ? 1 - set : set;
  blk.qb = prev ? t + nqb : t;
  // (h nqb + t) mod 2, with h mod 2 = set.
  blk.r = unsigned(((prev ? 1 - set : set) * nqb + blk.qb) % 2);
  return blk;
}

void StableAttentionPipeline::stageA(const Block &k) {
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank);
    b.matmul(s[k.r][t], b.view(qT[k.set], {dd, 1, blk}, {0, k.qb, 0}),
             b.view(kT[k.set], {dd, n, blk}, {0, t * blocksPerBank, 0}));
    b.pinEngine(Engine::Vector);
    b.reduce(AluOp::Max, b.view(mx[k.r], {blk, 1}, {0, t}), s[k.r][t]);
  }
  // -scale m, the exponentials' bias, on the idle GpSimd engine.
  b.pinEngine(Engine::GpSimd);
  Value m = mx[k.r];
  if (tiles > 1) {
    b.reduce(AluOp::Max, b.view(mx[k.r], {blk, 1}, {0, 0}), mx[k.r]);
    m = b.view(mx[k.r], {blk, 1}, {0, 0});
  }
  b.tensorScalar(AluOp::Multiply, negm[k.r], m, -scale);
  b.pinEngine(std::nullopt);
}

void StableAttentionPipeline::stageB(const Block &k) {
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank) * blk;
    b.activation(ActFunc::Exp, b.view(p[k.r], {blk, n}, {0, t * kMatmulMaxN}),
                 s[k.r][t], scale, 0.0, negm[k.r]);
  }
}

void StableAttentionPipeline::stageC(const Block &k) {
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t n = std::min(blocksPerBank, nkb - t * blocksPerBank);
    for (int64_t j = 0; j < n; ++j)
      b.transpose(
          b.view(tp[k.r][t], {blk, blk}, {0, j * blk}),
          b.view(p[k.r], {blk, blk}, {0, (t * blocksPerBank + j) * blk}));
    b.pinEngine(t == 0 ? Engine::Scalar : Engine::Vector);
    b.copy(b.view(pT[k.r], {blk, n, blk}, {0, t * blocksPerBank, 0}),
           tp[k.r][t]);
    b.pinEngine(std::nullopt);
  }
}

void StableAttentionPipeline::stageD(const Block &k, bool lastOfAll) {
  for (int64_t j = 0; j < nkb; ++j)
    b.matmul(o[k.r], b.view(pT[k.r], {blk, 1, blk}, {0, j, 0}),
             b.view(vp[k.set], {blk, 1, dv + 1}, {0, j, 0}),
             /*accumulate=*/j > 0);
  Value out = io.outBlock(k.h, k.set, k.qb);
  b.pinEngine(k.qb % 2 ? Engine::Scalar : Engine::Vector);
  b.tensorScalar(AluOp::Divide, out, b.view(o[k.r], {blk, dv}, {0, 0}),
                 b.view(o[k.r], {blk, 1}, {0, dv}));
  b.pinEngine(std::nullopt);
  io.stored(k.h, k.set, k.qb, lastOfAll);
}

void StableAttentionPipeline::stages(Index h, unsigned set, int64_t step,
                                     bool hasPrev, bool hasNext, bool fromA) {
  auto exists = [&](int64_t t) {
    return t < nqb && (t >= 0 || (hasPrev && t + nqb >= 0));
  };
  // B before A: B reads the block's -scale m before A's next block of the
  // same buffer overwrites it.
  if (exists(step - 1))
    stageB(block(h, set, step - 1));
  if (fromA && exists(step))
    stageA(block(h, set, step));
  if (exists(step - 2))
    stageC(block(h, set, step - 2));
  if (exists(step - 3)) {
    Block k = block(h, set, step - 3);
    stageD(k, /*lastOfAll=*/!hasNext && step - 3 >= 0);
  }
}

void StableAttentionPipeline::head(Index h, unsigned set, bool hasPrev,
                                   bool hasNext) {
  if (hasNext)
    io.load(h + 1, /*first=*/false);
  // The next head's preparation one PSUM bank of transposes a step (the
  // bank's copy is out before the next step's transposes reuse it), Q^T
  // (copied by the Scalar engine) then K^T (the Vector engine). Set 1 - set's
  // Q^T and K^T are read only by stage A, its V' until step 3 (the previous
  // head's last P V'). It ends with the head (its loads, issued at the
  // head's start, are in by then).
  int64_t banks = prepBanks();
  int64_t first = std::max<int64_t>(0, nqb - banks);
  int64_t vAt = std::min(nqb - 1, std::max<int64_t>(3, first + banks));
  for (int64_t step = 0; step < nqb; ++step) {
    stages(h, set, step, hasPrev, hasNext, /*fromA=*/true);
    if (hasNext && step >= first) {
      for (int64_t bank = step - first;
           bank < banks && (bank == step - first || step == nqb - 1); ++bank)
        prepareBank(h + 1, 1 - set, bank,
                    bank < qBanks() ? Engine::Scalar : Engine::Vector);
      if (step == vAt)
        prepareV(h + 1, 1 - set);
    }
  }
}
