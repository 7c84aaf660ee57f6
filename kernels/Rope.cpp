//===- Rope.cpp - rotary position embedding (NKI RoPE layout) -------------===//
//
// x [B, H, S, D] (the published layout; D in {64, 128}, S <= 512, H <= 16),
// cos, sin [S, D]; with x1 = x[..., :D/2], x2 = x[..., D/2:]:
//   y[..., :D/2] = x1 cos1 - x2 sin1,  y[..., D/2:] = x2 cos2 + x1 sin2
// (rotate-half form of seam.rope). Sequence on partitions; the tables stay
// in SBUF for every head. When S is a multiple of 128, a head is one DMA
// and each step one instruction (buildWholeHeads); otherwise 128 rows at a
// time.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

/// S a multiple of 128: row r of a head at partition r / n, slot r mod n
/// (n = S / 128; the tables alike), so that a head moves in one DMA of n d
/// contiguous elements per partition and each step is one instruction over
/// the whole head; heads are software pipelined (head i + 1 arrives while
/// head i is rotated, and leaves while head i + 2 is).
static void buildWholeHeads(KernelBuilder &kb, int64_t heads, int64_t n,
                            int64_t d, Type dtype, Type cosType, Type sinType) {
  constexpr int64_t p = 128;
  int64_t half = d / 2;
  Value xH = kb.reshape(kb.arg(0), {heads * p, n * d});
  Value yH = kb.reshape(kb.arg(3), {heads * p, n * d});
  Value ct = kb.sbuf({p, n, d}, cosType), st = kb.sbuf({p, n, d}, sinType);
  kb.dma(kb.reshape(ct, {p, n * d}), kb.reshape(kb.arg(1), {p, n * d}));
  kb.dma(kb.reshape(st, {p, n * d}), kb.reshape(kb.arg(2), {p, n * d}));
  Value xt[2], yt[2], t1[2], t2[2];
  for (unsigned i = 0; i < 2; ++i) {
    xt[i] = kb.sbuf({p, n, d}, dtype);
    yt[i] = kb.sbuf({p, n, d}, dtype);
    t1[i] = kb.sbuf({p, n, d}, kb.f32());
    t2[i] = kb.sbuf({p, n, d}, kb.f32());
  }
  auto v = [&](Value t, int64_t col, int64_t width) {
    return kb.view(t, {p, n, width}, {0, 0, col});
  };
  kb.forRangePipelined(
      heads,
      [&](Index h, unsigned buf) {
        kb.dma(kb.reshape(xt[buf], {p, n * d}),
               kb.view(xH, {p, n * d}, {h * p, 0}));
      },
      [&](Index h, unsigned buf) {
        kb.tensorTensor(AluOp::Multiply, t1[buf], xt[buf], ct);
        kb.tensorTensor(AluOp::Multiply, v(t2[buf], 0, half),
                        v(xt[buf], half, half), v(st, 0, half));
        kb.tensorTensor(AluOp::Multiply, v(t2[buf], half, half),
                        v(xt[buf], 0, half), v(st, half, half));
        kb.tensorTensor(AluOp::Subtract, v(yt[buf], 0, half),
                        v(t1[buf], 0, half), v(t2[buf], 0, half));
        kb.tensorTensor(AluOp::Add, v(yt[buf], half, half),
                        v(t1[buf], half, half), v(t2[buf], half, half));
        kb.dma(kb.view(yH, {p, n * d}, {h * p, 0}),
               kb.reshape(yt[buf], {p, n * d}));
      });
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
    buildWholeHeads(kb, nb * nh, s / 128, d, dtype,
                    sig.args[1].getElementType(), sig.args[2].getElementType());
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
