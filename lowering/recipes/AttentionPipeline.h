//===- AttentionPipeline.h - softmax attention as a five-stage pipeline ---===//
//
// Instruction schedules shared by the compiler's lowerings and the kernels
// (lowering/recipes/): one way to run an attention well, written once on
// the ncore builder, with hooks for what differs between its users (where
// a head's rows come from, what is done to them before the transposes, where
// the output goes, and other work between the steps).
//
// AttentionHeads: the per-head preparation. Per head, q, k and v rows arrive
// as [128, blocks, d] tiles (partition p, block t: one row of the head; any
// fixed map from (p, t) to rows, the same for k and v, and for q and the
// output: the softmax sums over keys in any order); Q^T and K^T [d, blocks,
// 128] by Tensor-engine transposes, four blocks to a PSUM bank, one copy out
// per bank, and V' = [V | 1] (a ones column beside V, so that P V' holds
// the row sums of P in its last column). Prepared heads alternate between
// two sets.
//
// StableAttentionPipeline: the exact softmax of each 128-row query block
// (the row max over all of its keys subtracted) when a row of scores fits
// the PSUM (at most kMaxKeyBlocks key blocks), as five stages over the
// query blocks of every head in turn:
//   A  S = Q K^T (Tensor), its row max (Vector; the score tiles' partial
//      maxes combined on GpSimd), -scale m (GpSimd);
//   B  P = exp(scale S - scale m) (Scalar, from PSUM);
//   C  P^T by Tensor-engine transposes, copied out of PSUM (the first tile
//      by the Scalar engine, the rest by the Vector engine);
//   D  O' = P V' (Tensor; l in its last column);
//   E  O = O'[:, :D] / l (the Vector and Scalar engines by turns).
// Stage X of block t runs in the step of block t + lag(X) (A 0, B 1, C 2,
// D and E 3), so each engine's in-order queue holds work of four blocks
// and none waits for a result of the same step; the pipeline runs on
// across heads (a head's first steps finish the previous head's blocks),
// the next head's preparation is spread over the current head's last
// steps, one PSUM bank of transposes a step, and the pipeline drains after
// the last head. Engines are pinned: the choice is the schedule.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_RECIPES_ATTENTIONPIPELINE_H
#define SEAM_LOWERING_RECIPES_ATTENTIONPIPELINE_H

#include "dialect/ncore/NcoreBuilder.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ncore::recipes {

/// One attention as the recipes see it: `heads` (batch x heads) heads of
/// nqb query blocks and nkb key blocks of 128 rows; q and k rows of dd
/// elements, v rows (and the output's) of dv; scores scaled by `scale`.
struct AttentionShape {
  int64_t heads = 0, nqb = 0, nkb = 0, dd = 0, dv = 0;
  float scale = 1.0f;
  Type dtype;
};

/// Where an attention's rows come from and where its output goes; the
/// recipes call these at fixed points of their program order.
class AttentionIo {
public:
  virtual ~AttentionIo() = default;
  /// Issues head h's loads (at the start of the head before it, or of the
  /// program for the first: `first`, when nothing else is in flight).
  virtual void load(Index h, bool first) = 0;
  /// Blocks [j0, j0 + count) of head h's q rows (`q`) or k rows, [128,
  /// count, dd], as the transposes read them; may emit work (a rotary
  /// embedding) reading what load(h) brought.
  virtual Value rows(bool q, Index h, int64_t j0, int64_t count) = 0;
  /// Head h's v rows, [128, nkb, dv].
  virtual Value vRows(Index h) = 0;
  /// Where query block qb of head h (prepared in set `set`) is written:
  /// [128, 1, dv] or [128, dv].
  virtual Value outBlock(Index h, unsigned set, int64_t qb) = 0;
  /// After block qb of head h is written; `last`: the program's last head.
  virtual void stored(Index h, unsigned set, int64_t qb, bool last) = 0;
};

/// The per-head preparation (see the file comment).
class AttentionHeads {
public:
  static constexpr int64_t blk = kNumPartitions,
                           blocksPerBank = kMatmulMaxN / blk;

  /// `banks`: PSUM banks of Q^T / K^T transposes, used in turn.
  AttentionHeads(NcoreBuilder &b, const AttentionShape &shape, AttentionIo &io,
                 int64_t banks);

  /// The ones column of both V' sets, once (GpSimd).
  void onesColumns();
  /// The transposes of blocks [j0, j0 + count) of `src` ([128, count, dd])
  /// into dst [dd, count, 128]: up to four to a PSUM bank (the banks in
  /// turn), one copy out per bank on `copyEngine`.
  void transposeBlocks(Value src, Value dst, int64_t count, Engine copyEngine);
  /// Q^T banks (0 .. qBanks() - 1) then K^T banks: the preparation piece
  /// by piece.
  int64_t qBanks() const;
  int64_t prepBanks() const;
  /// Bank `bank` of head h's preparation into set s.
  void prepareBank(Index h, unsigned s, int64_t bank, Engine copyEngine);
  /// Set s's V' from head h's v rows (GpSimd).
  void prepareV(Index h, unsigned s);
  /// Set s's whole Q^T, or K^T and V', of head h.
  void prepareQ(Index h, unsigned s, Engine copyEngine = Engine::Vector);
  void prepareK(Index h, unsigned s, Engine copyEngine = Engine::Vector);

  NcoreBuilder &b;
  AttentionShape shape;
  AttentionIo &io;
  int64_t nqb, nkb, dd, dv, heads;
  Value qT[2], kT[2], vp[2];      ///< [dd, blocks, 128]; V' [128, nkb, dv + 1]
  llvm::SmallVector<Value, 3> tb; ///< PSUM: Q^T / K^T transposes
  int64_t tbNext = 0;             ///< the next transpose bank
};

/// The stable pipeline (see the file comment).
class StableAttentionPipeline : public AttentionHeads {
public:
  /// Key blocks whose scores, transposes and O' fill the PSUM.
  static constexpr int64_t kMaxKeyBlocks = 6;
  /// The PSUM tiles the pipeline allocates for `shape` (bytes per
  /// partition each).
  static llvm::SmallVector<int64_t> psumTiles(const AttentionShape &shape);
  /// SBUF bytes per partition of its own tiles (not the io's).
  static int64_t sbufBytes(const AttentionShape &shape);
  /// Up to kMaxKeyBlocks key blocks and at least four query blocks (the
  /// pipeline is three blocks deep, and the next head's V' replaces the
  /// previous head's only after that head's last P V', step 3); dd and dv
  /// at most 128.
  static bool fits(const AttentionShape &shape);

  StableAttentionPipeline(NcoreBuilder &b, const AttentionShape &shape,
                          AttentionIo &io);
  void build();

private:
  struct Block {
    Index h;
    unsigned set;
    int64_t qb;
    unsigned r;
  };
  Block block(Index h, unsigned set, int64_t t) const;
  void stageA(const Block &blk);
  void stageB(const Block &blk);
  void stageC(const Block &blk);
  void stageD(const Block &blk, bool lastOfAll);
  void stages(Index h, unsigned set, int64_t step, bool hasPrev, bool hasNext,
              bool fromA);
  void head(Index h, unsigned set, bool hasPrev, bool hasNext);

  float scale;
  int64_t tiles; ///< score tiles of up to 512 keys per block
  llvm::SmallVector<Value, 2> s[2], tp[2]; ///< PSUM: S, P^T transposes
  Value p[2], pT[2], mx[2], negm[2];       ///< SBUF: P, P^T, maxes, -scale m
  Value o[2];                              ///< PSUM O' [128, dv + 1]
};

} // namespace mlir::ncore::recipes

#endif // SEAM_LOWERING_RECIPES_ATTENTIONPIPELINE_H
