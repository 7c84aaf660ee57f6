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
/// (n = S / 128; the tables alike), so that a head moves as n d contiguous
/// elements per partition. Every head is resident (x and y: 2 heads n d
/// elements per partition, 16 KiB at the registry's largest shape) and
/// every load is issued up front, so that the loads proceed on the queues
/// side by side; each head is rotated as soon as its own load lands and
/// leaves at once. The rotation is y = x cos + swap(x) sin' with swap(x) =
/// [x2, x1] and sin' = [-sin1, sin2] (negated once): four instructions in
/// the input's dtype, three of them contiguous (all-bf16 add and multiply
/// run at one element per cycle, twice the rate of a strided or fp32 one;
/// hardware.md "Instruction costs"). kernel_bench, trn2, [1, 6, 256, 128]:
/// 14.2 us -> 5.5 us (per-head pipeline on two buffers, one queue per
/// store, fp32 temporaries before).
static void buildWholeHeads(KernelBuilder &kb, int64_t heads, int64_t n,
                            int64_t d, Type dtype, Type cosType, Type sinType) {
  constexpr int64_t p = 128;
  // Loads in 4 partition ranges and stores in 8 (kernel_bench, trn2: 5.5 us
  // at S = 256 against 5.7-9.2 us for 2-8 ranges each; the last head's
  // store is the tail).
  constexpr int64_t kParts = 4, kStoreParts = 8;
  int64_t half = d / 2;
  Value xH = kb.reshape(kb.arg(0), {heads * p, n * d});
  Value yH = kb.reshape(kb.arg(3), {heads * p, n * d});
  Value ct = kb.sbuf({p, n, d}, cosType), st = kb.sbuf({p, n, d}, sinType);
  Value xt = kb.sbuf({p, heads, n * d}, dtype);
  Value yt = kb.sbuf({p, heads, n * d}, dtype);
  Value t1[2], t2[2];
  for (unsigned i = 0; i < 2; ++i) {
    t1[i] = kb.sbuf({p, n, d}, dtype);
    t2[i] = kb.sbuf({p, n, d}, dtype);
  }
  auto head = [&](Value t, Index h) {
    return kb.reshape(kb.view(t, {p, 1, n * d}, {0, h, 0}), {p, n, d});
  };
  auto v = [&](Value t, int64_t col, int64_t width) {
    return kb.view(t, {p, n, width}, {0, 0, col});
  };
  // The tables, then every head, each transfer its own instruction (not a
  // loop), so that a head's rotation waits for its own load.
  kb.dma(kb.reshape(ct, {p, n * d}), kb.reshape(kb.arg(1), {p, n * d}));
  kb.dma(kb.reshape(st, {p, n * d}), kb.reshape(kb.arg(2), {p, n * d}));
  int64_t rows = p / kParts;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t q = 0; q < kParts; ++q)
      kb.dma(kb.view(xt, {rows, 1, n * d}, {q * rows, h, 0}),
             kb.view(xH, {rows, n * d}, {h * p + q * rows, 0}));
  // sin1 negated once: y = x cos + swap(x) sin', swap(x) = [x2, x1].
  kb.tensorScalar(AluOp::Multiply, v(st, 0, half), v(st, 0, half), -1.0);
  for (int64_t hc = 0; hc < heads; ++hc) {
    Index h(hc);
    unsigned buf = hc % 2;
    Value x = head(xt, h), y = head(yt, h);
    kb.tensorTensor(AluOp::Multiply, t1[buf], x, ct);
    // The swapped halves slot by slot: each a contiguous run of d / 2
    // elements (the all-bf16 contiguous rate, hardware.md), where one
    // instruction over every slot would stride and pay twice per element.
    for (int64_t slot = 0; slot < n; ++slot) {
      auto hv = [&](Value t, int64_t col) {
        return kb.view(t, {p, 1, half}, {0, slot, col});
      };
      kb.tensorTensor(AluOp::Multiply, hv(t2[buf], 0), hv(x, half), hv(st, 0));
      kb.tensorTensor(AluOp::Multiply, hv(t2[buf], half), hv(x, 0),
                      hv(st, half));
    }
    kb.tensorTensor(AluOp::Add, y, t1[buf], t2[buf]);
    int64_t srows = p / kStoreParts;
    for (int64_t q = 0; q < kStoreParts; ++q)
      kb.dma(kb.view(yH, {srows, n * d}, {h * p + q * srows, 0}),
             kb.view(yt, {srows, 1, n * d}, {q * srows, h, 0}));
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
