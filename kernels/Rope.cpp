//===- Rope.cpp - rotary position embedding (NKI RoPE layout) -------------===//
//
// x [B, H, S, D] (the published layout; D in {64, 128}, S <= 512, H <= 16),
// cos, sin [S, D]; with x1 = x[..., :D/2], x2 = x[..., D/2:]:
//   y[..., :D/2] = x1 cos1 - x2 sin1,  y[..., D/2:] = x2 cos2 + x1 sin2
// (rotate-half form of seam.rope). Sequence on partitions; the tables stay
// in SBUF for every head. When S is a multiple of 128, whole heads
// (emitRopeWholeHeads, which the compiler's lowering of seam.rope uses
// too); otherwise 128 rows at a time.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"
#include <array>

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {
/// The transfers of emitRopeWholeHeads: each table in kTableParts partition
/// ranges, then head h's load in loads[i] ranges and, once it is rotated,
/// its store in stores[i], i = min(h, 4) but 5 for the last head (its store
/// is the tail: in more, smaller pieces). Every transfer is fixed
/// (dmaFixed): the pieces take the 16 queues round-robin in this order,
/// loads issued up front and stores as their heads finish, and a queue
/// serves its pieces in turn, each paying the ~600 ns fixed cost (trn2,
/// hardware.md "DMA"). Few pieces leave queues idle and heads late; many
/// pay the fixed cost too often (the kernel was 99% queue-busy at 45% of
/// the DMA bandwidth with 80 transfers of 8-16 KiB). The counts were
/// searched on the timing model at the bundled shapes (flux2-klein, TP = 4:
/// 6 heads of 128, S = 256 and 512; kernel_bench): about 50 transfers.
struct WholeHeadsPlan {
  std::array<int64_t, 6> loads, stores;
};
constexpr int64_t kTableParts = 4;

WholeHeadsPlan wholeHeadsPlan(int64_t n) {
  if (n <= 2)
    return {{3, 3, 2, 6, 5, 3}, {4, 4, 2, 3, 4, 7}};
  return {{3, 3, 2, 5, 5, 4}, {4, 4, 3, 3, 4, 6}};
}
} // namespace

int64_t seam::ropeWholeHeadsBytes(const RopeHeads &r) {
  auto bytes = [](Value v) {
    return int64_t(NcoreBuilder::tileOf(v).getElementBytes());
  };
  int64_t nd = r.seq / 128 * r.headDim;
  return nd * (bytes(r.cos) + 2 * bytes(r.sin)) +
         (2 * r.heads + 6) * nd * bytes(r.x) + 128 * bytes(r.x);
}

/// Row r of a head at partition r / n, slot r mod n (n = S / 128; the
/// tables alike), so that a head moves as n d contiguous elements per
/// partition. Every head is resident and every load is issued up front;
/// each head is rotated as soon as its own load lands and leaves at once.
/// The rotation is y = x cos + swap(t2), t2 = x sw, sw = [sin2, -sin1] made
/// once from the sin table: two multiplies per head over all its slots,
/// all-bf16 and contiguous (one element per cycle; hardware.md "Instruction
/// costs"), which the Vector and GpSimd engines share. The sum, with the
/// halves of t2 swapped, is three matmuls per slot against an identity
/// accumulating in PSUM (the Tensor engine is otherwise idle; fp32
/// accumulation, one rounding to bf16), copied out by the Scalar engine.
/// Before (a fourth vector instruction per head for the add, 2 n
/// half-width multiplies, the loads and stores cut by ncore-split-dma into
/// 80 transfers of 8-16 KiB): kernel_bench, trn2, [1, 6, 256, 128]
/// 5.52 us, [1, 6, 512, 128] 8.72 us; now 4.77 and 7.69. Other dtypes (fp32)
/// add on the vector engines (a matmul of fp32 operands costs 4x).
void seam::emitRopeWholeHeads(ncore::NcoreBuilder &nb, const RopeHeads &r) {
  constexpr int64_t p = 128;
  int64_t heads = r.heads, n = r.seq / p, d = r.headDim;
  WholeHeadsPlan plan = wholeHeadsPlan(n);
  int64_t half = d / 2, nd = n * d;
  Type dtype = NcoreBuilder::tileOf(r.x).getElementType();
  Type cosType = NcoreBuilder::tileOf(r.cos).getElementType();
  Type sinType = NcoreBuilder::tileOf(r.sin).getElementType();
  bool teAdd = dtype.isBF16() && cosType.isBF16() && sinType.isBF16();
  Value xH = nb.reshape(r.x, {heads * p, nd});
  Value yH = nb.reshape(r.y, {heads * p, nd});
  Value ct = nb.sbuf({p, n, d}, cosType), st = nb.sbuf({p, n, d}, sinType);
  Value sw = nb.sbuf({p, n, d}, sinType);
  Value xt = nb.sbuf({p, heads, nd}, dtype);
  Value yt = nb.sbuf({p, heads, nd}, dtype);
  // The products of three heads at a time (head h + 3's products wait for
  // head h's matmuls, which come soon after).
  Value t1 = nb.sbuf({p, 3, nd}, dtype), t2 = nb.sbuf({p, 3, nd}, dtype);
  auto head = [&](Value t, int64_t h) {
    return nb.reshape(nb.view(t, {p, 1, nd}, {0, h, 0}), {p, n, d});
  };
  auto flat = [&](Value t, int64_t h) {
    return nb.reshape(nb.view(t, {p, 1, nd}, {0, h, 0}), {p, nd});
  };
  // dst <- src ([p, nd] each) in `parts` partition ranges.
  auto move = [&](Value dst, Value src, int64_t parts) {
    int64_t base = p / parts, extra = p % parts, r0 = 0;
    for (int64_t q = 0; q < parts; ++q) {
      int64_t rows = base + (q < extra ? 1 : 0);
      nb.dmaFixed(nb.view(dst, {rows, nd}, {r0, 0}),
                  nb.view(src, {rows, nd}, {r0, 0}));
      r0 += rows;
    }
  };
  Value ident;
  if (teAdd) {
    ident = nb.sbuf({p, p}, dtype);
    nb.memset(ident, 1.0);
    nb.affineSelect(AluOp::IsEqual, ident, ident, 0.0, 1.0, -1.0, 0.0);
  }
  move(nb.reshape(ct, {p, nd}), nb.reshape(r.cos, {p, nd}), kTableParts);
  move(nb.reshape(st, {p, nd}), nb.reshape(r.sin, {p, nd}), kTableParts);
  auto slot = [&](int64_t h) {
    return h == heads - 1 ? 5 : std::min<int64_t>(h, 4);
  };
  for (int64_t h = 0; h < heads; ++h)
    move(flat(xt, h), nb.view(xH, {p, nd}, {h * p, 0}), plan.loads[slot(h)]);
  // sw = [sin2, -sin1] slot by slot (contiguous runs): then
  // t2 = x sw = [x1 sin2, -x2 sin1] and y = x cos + swap(t2).
  for (int64_t s = 0; s < n; ++s) {
    nb.copy(nb.view(sw, {p, 1, half}, {0, s, 0}),
            nb.view(st, {p, 1, half}, {0, s, half}));
    nb.tensorScalar(AluOp::Multiply, nb.view(sw, {p, 1, half}, {0, s, half}),
                    nb.view(st, {p, 1, half}, {0, s, 0}), -1.0);
  }
  // One slot (d columns) per PSUM tile: the shortest chain from a head's
  // products to its store (kernel_bench [1, 6, 512, 128]: 7.69 us, against
  // 7.74 with two slots and 7.87 with four).
  constexpr int64_t c = 1;
  int64_t chunks = n;
  constexpr int64_t kPsumRing = 4;
  Value ps[kPsumRing];
  if (teAdd)
    for (auto &v : ps)
      v = nb.psum({p, c, d});
  int64_t ring = 0;
  for (int64_t h = 0; h < heads; ++h) {
    Value x = head(xt, h), y = head(yt, h);
    Value a = head(t1, h % 3), b2 = head(t2, h % 3);
    nb.tensorTensor(AluOp::Multiply, a, x, ct);
    nb.tensorTensor(AluOp::Multiply, b2, x, sw);
    for (int64_t k = 0; k < chunks; ++k) {
      auto cv = [&](Value t, int64_t col, int64_t width) {
        return nb.view(t, {p, c, width}, {0, k * c, col});
      };
      if (teAdd) {
        Value acc = ps[ring++ % kPsumRing];
        auto pv = [&](int64_t col, int64_t width) {
          return nb.view(acc, {p, c, width}, {0, 0, col});
        };
        nb.matmul(acc, ident, cv(a, 0, d));
        nb.matmul(pv(0, half), ident, cv(b2, half, half), true);
        nb.matmul(pv(half, half), ident, cv(b2, 0, half), true);
        nb.pinEngine(Engine::Scalar);
        nb.copy(cv(y, 0, d), acc);
        nb.pinEngine(std::nullopt);
      } else {
        nb.tensorTensor(AluOp::Add, cv(y, 0, half), cv(a, 0, half),
                        cv(b2, half, half));
        nb.tensorTensor(AluOp::Add, cv(y, half, half), cv(a, half, half),
                        cv(b2, 0, half));
      }
    }
    move(nb.view(yH, {p, nd}, {h * p, 0}), flat(yt, h), plan.stores[slot(h)]);
  }
}

FailureOr<ProgramOp> seam::buildRopeKernel(OpBuilder &b, ModuleOp module,
                                           const KernelSignature &sig,
                                           StringRef name) {
  RankedTensorType x = sig.args[0];
  int64_t nb = x.getDimSize(0), nh = x.getDimSize(1), s = x.getDimSize(2),
          d = x.getDimSize(3), half = d / 2;
  Type dtype = x.getElementType();
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, sig);
  KernelBuilder kb(b, module.getLoc(), prog);
  Value xH = kb.arg(0), cH = kb.arg(1), sH = kb.arg(2), yH = kb.arg(3);
  Type f32 = kb.f32();
  if (s % 128 == 0) {
    emitRopeWholeHeads(kb, {xH, cH, sH, yH, nb * nh, s, d});
    return prog;
  }
  int64_t nsc = (s + 127) / 128, rows = std::min<int64_t>(s, 128);
  Value ct = kb.sbuf({rows, nsc, d}, sig.args[1].getElementType());
  Value st = kb.sbuf({rows, nsc, d}, sig.args[2].getElementType());
  for (int64_t c = 0; c < nsc; ++c) {
    int64_t w = std::min<int64_t>(128, s - c * 128);
    kb.dma(kb.view(ct, {w, 1, d}, {0, c, 0}),
           kb.view(cH, {w, d}, {c * 128, 0}));
    kb.dma(kb.view(st, {w, 1, d}, {0, c, 0}),
           kb.view(sH, {w, d}, {c * 128, 0}));
  }
  Value xt = kb.sbuf({rows, d}, dtype), yt = kb.sbuf({rows, d}, dtype);
  Value t1 = kb.sbuf({rows, d}, f32), t2 = kb.sbuf({rows, d}, f32);
  kb.loop(nb, [&](Index bi) {
    kb.loop(nh, [&](Index h) {
      for (int64_t c = 0; c < nsc; ++c) {
        int64_t w = std::min<int64_t>(128, s - c * 128);
        auto v = [&](Value t, int64_t col, int64_t width) {
          return kb.view(t, {w, width}, {0, col});
        };
        auto tab = [&](Value t, int64_t col, int64_t width) {
          return kb.view(t, {w, 1, width}, {0, c, col});
        };
        kb.dma(v(xt, 0, d), kb.view(xH, {1, 1, w, d}, {bi, h, c * 128, 0}));
        kb.tensorTensor(AluOp::Multiply, v(t1, 0, d), v(xt, 0, d),
                        tab(ct, 0, d));
        kb.tensorTensor(AluOp::Multiply, v(t2, 0, half), v(xt, half, half),
                        tab(st, 0, half));
        kb.tensorTensor(AluOp::Multiply, v(t2, half, half), v(xt, 0, half),
                        tab(st, half, half));
        kb.tensorTensor(AluOp::Subtract, v(yt, 0, half), v(t1, 0, half),
                        v(t2, 0, half));
        kb.tensorTensor(AluOp::Add, v(yt, half, half), v(t1, half, half),
                        v(t2, half, half));
        kb.dma(kb.view(yH, {1, 1, w, d}, {bi, h, c * 128, 0}), v(yt, 0, d));
      }
    });
  });
  return prog;
}
