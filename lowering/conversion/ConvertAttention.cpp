//===- ConvertAttention.cpp - the compiler's own attention ----------------===//
//
// softmax(scale * Q K^T [+ causal mask]) V per (batch, head), q [B, H, Sq, D],
// k/v [B, Hkv, Sk, D], D <= 128. Loops: (b, kv head) x (query group g) x
// (query tile of 128 rows) x (key blocks):
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

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

static constexpr double kMaskedScore = -1.0e30;

static LogicalResult lowerAttention(ProgramLowering &pl, Operation *o) {
  auto op = cast<AttentionOp>(o);
  auto q = pl.get(op.getQ(), op), k = pl.get(op.getK(), op),
       v = pl.get(op.getV(), op);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  bool rope = bool(op.getRopeCos());
  FailureOr<Placement> cosP = Placement(), sinP = Placement();
  if (rope && (failed(cosP = pl.get(op.getRopeCos(), op)) ||
               failed(sinP = pl.get(op.getRopeSin(), op))))
    return failure();
  if (q->shape.size() != 4 || k->shape.size() != 4 || v->shape.size() != 4)
    return op.emitOpError() << "convert-seam-to-ncore: attention operands "
                               "must be [B, H, S, D]";
  int64_t batch = q->shape[0], heads = q->shape[1], sq = q->shape[2],
          d = q->shape[3], kvHeads = k->shape[1], sk = k->shape[2];
  Type et = q->elementType;
  if (k->elementType != et || v->elementType != et)
    return op.emitOpError() << "convert-seam-to-ncore: q, k and v must have "
                               "one dtype";
  if (d > 128)
    return op.emitOpError() << "convert-seam-to-ncore: head dim " << d
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
  bool causal = op.getCausal();
  if (causal && sq != sk)
    return op.emitOpError() << "convert-seam-to-ncore: causal attention "
                               "needs Sq == Sk, got "
                            << sq << " and " << sk;
  int64_t eb = et.isBF16() ? 2 : 4;
  // Per partition: K^T [D, Sk], scores f32 [p, Sk], P [p, Sk], mask.
  int64_t bytes = sk * eb + sk * 4 + sk * eb + (causal ? (sk + sq) * 4 : 0);
  if (bytes > pl.target().workingBytes)
    return op.emitOpError()
           << "convert-seam-to-ncore: " << sk
           << " keys are too many for one score row in SBUF (" << bytes
           << " bytes per partition, " << pl.target().workingBytes
           << " available); a flash-attention kernel is needed";
  Placement y = pl.placeResult(op.getResult());
  // Heads start at rows h * S: SBUF windows need S % 128 == 0.
  auto aligned = [&](const Placement &p, int64_t seq) -> Placement {
    if (ProgramLowering::rowAligned(p, seq))
      return p;
    ++pl.statistics().relayouts;
    Placement h = pl.hbmScratch(p.shape, p.elementType, "relayout");
    pl.copyInto(h, p);
    return h;
  };
  Placement qa = aligned(*q, sq), ka = aligned(*k, sk), va = aligned(*v, sk);
  Placement ya = ProgramLowering::rowAligned(y, sq)
                     ? y
                     : pl.hbmScratch(y.shape, y.elementType, "relayout");
  int64_t group = heads / kvHeads;
  Type f32 = pl.builder().getF32Type();
  auto zero = pl.cst(0);
  int64_t dp = d; // partitions of Q^T / K^T
  int64_t qTiles = (sq + 127) / 128;

  Value mask;
  if (causal) {
    int64_t width = sk + (qTiles - 1) * 128;
    mask = pl.memset(
        pl.alloc(MemSpace::Sbuf, {std::min<int64_t>(sq, 128), width}, f32),
        0.0);
    OpBuilder &b = pl.builder();
    // keep where (qTiles - 1) * 128 + p - j >= 0.
    pl.create<ncore::AffineSelectOp>(
        mask, mask, ncore::AluOpAttr::get(pl.context(), ncore::AluOp::IsGe),
        b.getF32FloatAttr((qTiles - 1) * 128), b.getF32FloatAttr(1.0f),
        b.getF32FloatAttr(-1.0f), b.getF32FloatAttr(kMaskedScore),
        ncore::EngineAttr());
  }
  Value kt = pl.alloc(MemSpace::Sbuf, {dp, sk}, et);
  Value tpsum = pl.alloc(MemSpace::Psum, {dp, 128}, f32);
  // V of a kv head in HBM is read once per head, in one DMA, rather than
  // per query tile and key block: key k = p * kTiles + t sits at partition
  // p, block t (each partition then reads kTiles consecutive rows), and the
  // blocks of P^T take the keys t, t + kTiles, ... to match (P V sums over
  // the keys in any order).
  int64_t kTiles = sk / 128;
  bool vResident = !va.inSbuf() && sk % 128 == 0 && kTiles > 1 &&
                   va.isContiguous() && va.rowOffset == 0 &&
                   bytes + kTiles * d * eb <= pl.target().workingBytes;
  Value vAll;
  if (vResident)
    vAll = pl.alloc(MemSpace::Sbuf, {128, kTiles * d}, et);

  auto loadRoped = [&](const Placement &src, Index row, Index pos,
                       int64_t p) -> Value {
    Value t = pl.load(src, row, p, zero, d);
    if (!rope)
      return t;
    Value c = pl.load(*cosP, pos, p, zero, d),
          s = pl.load(*sinP, pos, p, zero, d);
    Value r = pl.alloc(MemSpace::Sbuf, {p, d}, et);
    emitRopeTile(pl, r, t, c, s, p, d);
    return r;
  };

  pl.forRange(batch * kvHeads, [&](Index bk) {
    if (vResident) {
      Value rows = pl.view(va.root, {sk, d}, {bk * sk, zero});
      pl.create<ncore::DmaCopyOp>(pl.reshape(vAll, {128, kTiles, d}),
                                  pl.reshape(rows, {128, kTiles, d}),
                                  ncore::EngineAttr());
    }
    // K^T of this kv head.
    pl.forEachChunk(sk, 128, [&](Index k0, int64_t nk, bool) {
      Value kr = loadRoped(ka, bk * sk + k0, k0, nk);
      Value tp = pl.view(tpsum, {d, nk}, {zero, zero});
      pl.create<ncore::TransposeOp>(tp, kr, ncore::EngineAttr());
      pl.create<ncore::TensorCopyOp>(pl.view(kt, {d, nk}, {zero, k0}), tp,
                                     ncore::EngineAttr());
    });
    pl.forRange(group, [&](Index g) {
      Index head = bk * group + g;
      // Query tiles go in pairs: both tiles' scores (Tensor engine), then
      // both softmaxes (Vector/Scalar), then both P V products, so that one
      // tile's softmax overlaps the other's matmuls.
      struct Slot {
        Index q0;
        int64_t p;
        Value scores, probs, rcp;
      };
      auto scoresPhase = [&](Slot &s) {
        int64_t p = s.p;
        Value qr = loadRoped(qa, head * sq + s.q0, s.q0, p);
        Value qtp = pl.alloc(MemSpace::Psum, {dp, p}, f32);
        pl.create<ncore::TransposeOp>(qtp, qr, ncore::EngineAttr());
        Value qt = pl.alloc(MemSpace::Sbuf, {dp, p}, et);
        pl.create<ncore::TensorCopyOp>(qt, qtp, ncore::EngineAttr());
        // Scores, scaled, fp32.
        s.scores = pl.alloc(MemSpace::Sbuf, {p, sk}, f32);
        int64_t chunk = std::min<int64_t>(sk, ncore::kMatmulMaxN);
        Value sps = pl.alloc(MemSpace::Psum, {p, chunk}, f32);
        pl.forEachChunk(sk, chunk, [&](Index c0, int64_t nc, bool) {
          Value acc = pl.view(sps, {p, nc}, {zero, zero});
          pl.create<ncore::MatmulOp>(acc, qt, pl.view(kt, {dp, nc}, {zero, c0}),
                                     /*accumulate=*/false, ncore::EngineAttr());
          pl.activation(ncore::ActFunc::Identity,
                        pl.view(s.scores, {p, nc}, {zero, c0}), acc, Value(),
                        Value(), op.getScale().convertToDouble());
        });
        if (causal) {
          Value m =
              pl.view(mask, {p, sk}, {zero, pl.cst((qTiles - 1) * 128) - s.q0});
          pl.create<ncore::TensorTensorOp>(
              s.scores, s.scores, m, ncore::AluOp::Add, ncore::EngineAttr());
        }
      };
      auto softmaxPhase = [&](Slot &s) {
        // Stable softmax (unnormalised P; 1 / sum applied to O).
        int64_t p = s.p;
        Value mx = pl.alloc(MemSpace::Sbuf, {p, 1}, f32);
        Value sum = pl.alloc(MemSpace::Sbuf, {p, 1}, f32);
        s.rcp = pl.alloc(MemSpace::Sbuf, {p, 1}, f32);
        pl.create<ncore::TensorReduceOp>(mx, s.scores, ncore::AluOp::Max,
                                         ncore::EngineAttr());
        pl.tensorScalar(ncore::AluOp::Multiply, mx, mx, Value(), -1.0);
        s.probs = pl.alloc(MemSpace::Sbuf, {p, sk}, et);
        pl.activation(ncore::ActFunc::Exp, s.probs, s.scores, mx, sum);
        pl.create<ncore::ReciprocalOp>(s.rcp, sum, ncore::EngineAttr());
      };
      auto outputPhase = [&](Slot &s) {
        // O = P V over 128-key blocks.
        int64_t p = s.p;
        Value ops = pl.alloc(MemSpace::Psum, {p, d}, f32);
        Value pt =
            pl.alloc(MemSpace::Sbuf, {std::min<int64_t>(sk, 128), p}, et);
        Value ptp =
            pl.alloc(MemSpace::Psum, {std::min<int64_t>(sk, 128), p}, f32);
        pl.forEachChunk(
            sk, 128,
            [&](Index k0, int64_t nk, bool first) {
              Value ptpv = pl.view(ptp, {nk, p}, {zero, zero});
              // Keys k0 .. k0 + nk, or (resident V) t, t + kTiles, ...
              Value pBlock =
                  vResident ? pl.view(s.probs, {p, nk},
                                      {zero, k0.floorDiv(128)}, {1, kTiles})
                            : pl.view(s.probs, {p, nk}, {zero, k0});
              pl.create<ncore::TransposeOp>(ptpv, pBlock, ncore::EngineAttr());
              Value ptv = pl.view(pt, {nk, p}, {zero, zero});
              pl.create<ncore::TensorCopyOp>(ptv, ptpv, ncore::EngineAttr());
              Value vt =
                  vResident
                      ? pl.view(vAll, {nk, d}, {zero, k0.floorDiv(128) * d})
                      : pl.load(va, bk * sk + k0, nk, zero, d);
              pl.create<ncore::MatmulOp>(ops, ptv, vt, /*accumulate=*/!first,
                                         ncore::EngineAttr());
            },
            /*peelFirst=*/true);
        Index qrow = head * sq + s.q0;
        Value out = pl.outTile(ya, qrow, p, zero, d);
        pl.tensorScalar(ncore::AluOp::Multiply, out, ops, s.rcp);
        pl.storeOut(ya, qrow, p, zero, d, out);
      };
      auto run = [&](MutableArrayRef<Slot> slots) {
        for (Slot &s : slots)
          scoresPhase(s);
        for (Slot &s : slots)
          softmaxPhase(s);
        for (Slot &s : slots)
          outputPhase(s);
      };
      int64_t full = sq / 128, rem = sq % 128;
      pl.forRange(full / 2, [&](Index i) {
        Slot pair[2] = {{i * 256, 128, {}, {}, {}},
                        {i * 256 + 128, 128, {}, {}, {}}};
        run(pair);
      });
      if (full % 2) {
        Slot one[1] = {{pl.cst((full - 1) * 128), 128, {}, {}, {}}};
        run(one);
      }
      if (rem) {
        Slot last[1] = {{pl.cst(full * 128), rem, {}, {}, {}}};
        run(last);
      }
    });
  });
  if (ya.root != y.root)
    pl.copyInto(y, ya);
  return success();
}

void conversion::populateAttentionLowerings(LoweringTable &table) {
  table[AttentionOp::getOperationName()] = lowerAttention;
}
