//===- FourierMix.cpp - FNet mixing Re(F_S X F_D) as matmuls --------------===//
//
// Re(F_S X F_D) = C_S X C_D - S_S X S_D for real X [S, D] of each batch, in
// two matmul stages and no transposes:
//   1: P1 = (C_S X)^T, P2 = (S_S X)^T  [D, S]: matmul(stat X[s, d], mov C_S)
//   2: Z = P1^T C_D - P2^T S_D  [S, D]:  matmul(stat P1[d, s], mov C_D)
//      + matmul(stat P2, mov -S_D), accumulating in fp32 PSUM.
// Exact for every S and D (partial 128-chunks are sliced, never padded).
//
// When S and D are multiples of 128 (or at most 128), index r of a
// dimension sits at partition r / nc, chunk r mod nc: X, Z and the four
// matrices each move in one DMA (a contiguous run per partition), the
// contraction loops are ncore.loops accumulating in PSUM, stage outputs
// rotate over two PSUM banks, and the batch loop is software-pipelined over
// two buffers (batch b + 1 arrives while b is multiplied); the first
// batch's X and the matrices arrive chunk by chunk, and each row chunk of Z
// leaves as soon as it is done. Other sizes take the chunk-by-chunk path.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {

/// Loads the HBM [rows, cols] constant into SBUF [128, ceil(rows/128), cols]
/// (row r at partition r % 128, chunk r / 128).
Value loadChunked(KernelBuilder &kb, Value hbm, int64_t rows, int64_t cols,
                  Type dtype) {
  int64_t nc = llvm::divideCeilSigned(rows, 128);
  Value t = kb.sbuf({std::min<int64_t>(rows, 128), nc, cols}, dtype);
  for (int64_t c = 0; c < nc; ++c) {
    int64_t w = std::min<int64_t>(128, rows - c * 128);
    kb.dma(kb.view(t, {w, 1, cols}, {0, c, 0}),
           kb.view(hbm, {w, cols}, {c * 128, 0}));
  }
  return t;
}
} // namespace

/// S and D multiples of 128 (or <= 128): partition-major chunks.
void buildStrided(KernelBuilder &kb, int64_t nb, int64_t s, int64_t d,
                  Type dtype, Value in, Value out) {
  int64_t ps = std::min<int64_t>(s, 128), nsk = llvm::divideCeilSigned(s, 128);
  int64_t pd = std::min<int64_t>(d, 128), ndk = llvm::divideCeilSigned(d, 128);
  // The DFT matrices move with the first batch's X, chunk by chunk of the
  // contraction and in the order the stages use them: X, C_S and S_S chunk
  // by chunk (stage 1), then C_D and S_D chunk by chunk (stage 2). The
  // contraction loops are unrolled, so each matmul waits for its own
  // chunks: stage 1 starts once the first chunks land, stage 2 while C_D
  // and S_D still arrive. kernel_bench, trn2, the FNet table's five shapes:
  // 8.7/14.8/19.7/35.2/29.0 -> 7.9/13.6/18.5/34.8/27.6 us (one DMA per
  // matrix and rolled loops before: the Tensor engine waited 6.2 us at
  // (1, 512, 768) for every matrix of stage 1).
  Value cs = kb.sbuf({ps, nsk, s}, dtype), ss = kb.sbuf({ps, nsk, s}, dtype);
  Value cd = kb.sbuf({pd, ndk, d}, dtype), nsd = kb.sbuf({pd, ndk, d}, dtype);
  Value stage1[2] = {cs, ss}, stage2[2] = {cd, nsd};
  Value stage1Hbm[2] = {
      kb.reshape(kb.constant(ConstantSpec::cos(s, s, s), dtype), {ps, nsk, s}),
      kb.reshape(kb.constant(ConstantSpec::sin(s, s, s), dtype), {ps, nsk, s})};
  Value stage2Hbm[2] = {
      kb.reshape(kb.constant(ConstantSpec::cos(d, d, d), dtype), {pd, ndk, d}),
      kb.reshape(kb.constant(ConstantSpec::sin(d, d, d, -1.0), dtype),
                 {pd, ndk, d})};
  Value inH = kb.reshape(in, {nb * ps, nsk * d});
  Value inH3 = kb.reshape(in, {nb * ps, nsk, d});
  Value outH3 = kb.reshape(out, {nb * ps, nsk, d});
  Value xt[2], yt[2];
  for (unsigned i = 0; i < 2; ++i) {
    xt[i] = kb.sbuf({ps, nsk, d}, dtype);
    yt[i] = kb.sbuf({ps, nsk, d}, dtype);
  }
  Value q1 = kb.sbuf({pd, ndk, s}, dtype), q2 = kb.sbuf({pd, ndk, s}, dtype);
  Value p1[2], p2[2], z[2];
  for (unsigned i = 0; i < 2; ++i) {
    p1[i] = kb.psum({128, kMatmulMaxN});
    p2[i] = kb.psum({128, kMatmulMaxN});
    z[i] = kb.psum({128, kMatmulMaxN});
  }
  int64_t dBlocks = llvm::divideCeilSigned(d, kMatmulMaxN);
  // The first batch's stage 1 while its operands arrive chunk by chunk of
  // the contraction: a column chunk of P needs every chunk, so one chunk at
  // a time would leave the Tensor engine waiting for all of them. Instead
  // groups of three column chunks accumulate side by side, contraction
  // chunk outermost, in all six PSUM banks (stage 2's two are free until
  // then): the Tensor engine multiplies each contraction chunk as it lands.
  auto firstStage1 = [&](unsigned buf) {
    Value acc[6] = {p1[0], p2[0], p1[1], p2[1], z[0], z[1]};
    for (int64_t g0 = 0; g0 < ndk; g0 += 3) {
      int64_t n = std::min<int64_t>(3, ndk - g0);
      for (int64_t kc = 0; kc < nsk; ++kc)
        for (int64_t i = 0; i < n; ++i) {
          Value st = kb.view(xt[buf], {ps, 1, pd}, {0, Index(kc), g0 + i},
                             {1, 1, ndk});
          for (unsigned m = 0; m < 2; ++m)
            kb.matmul(kb.view(acc[2 * i + m], {pd, s}, {0, 0}), st,
                      kb.view(stage1[m], {ps, 1, s}, {0, kc, 0}), kc > 0);
        }
      for (int64_t i = 0; i < n; ++i) {
        kb.copy(kb.view(q1, {pd, 1, s}, {0, g0 + i, 0}),
                kb.view(acc[2 * i], {pd, s}, {0, 0}));
        kb.copy(kb.view(q2, {pd, 1, s}, {0, g0 + i, 0}),
                kb.view(acc[2 * i + 1], {pd, s}, {0, 0}));
      }
    }
  };
  auto compute = [&](Index bi, unsigned buf) {
    // Stage 1: P[d, s'] = sum_s X[s, d] C_S[s, s'] (and S_S), d = p ndk + dc.
    if (bi.getConstant() == std::optional<int64_t>(0) && s <= kMatmulMaxN)
      firstStage1(buf);
    else
      kb.forRangeUnrolled(ndk, 2, [&](Index dc, unsigned r) {
        for (int64_t s0 = 0; s0 < s; s0 += kMatmulMaxN) {
          int64_t sw = std::min<int64_t>(kMatmulMaxN, s - s0);
          Value a1 = kb.view(p1[r], {pd, sw}, {0, 0});
          Value a2 = kb.view(p2[r], {pd, sw}, {0, 0});
          // Unrolled over the contraction chunks: each matmul waits for its
          // own chunk of X, C_S and S_S (they arrive chunk by chunk), not for
          // all of them as one loop would.
          for (int64_t kc = 0; kc < nsk; ++kc) {
            Value st =
                kb.view(xt[buf], {ps, 1, pd}, {0, Index(kc), dc}, {1, 1, ndk});
            kb.matmul(a1, st, kb.view(cs, {ps, 1, sw}, {0, kc, s0}), kc > 0);
            kb.matmul(a2, st, kb.view(ss, {ps, 1, sw}, {0, kc, s0}), kc > 0);
          }
          kb.copy(kb.view(q1, {pd, 1, sw}, {0, dc, s0}), a1);
          kb.copy(kb.view(q2, {pd, 1, sw}, {0, dc, s0}), a2);
        }
      });
    // Stage 2: Z[s', e] = sum_d P1[d, s'] C_D[d, e] - P2[d, s'] S_D[d, e],
    // s' = p nsk + sc; PSUM banks alternate between e-blocks (or between
    // row chunks when D fits one bank).
    kb.forRangeUnrolled(nsk, 2, [&](Index sc, unsigned r) {
      for (int64_t eb = 0; eb < dBlocks; ++eb) {
        int64_t e0 = eb * kMatmulMaxN, ew = std::min(kMatmulMaxN, d - e0);
        unsigned slot = dBlocks == 1 ? r : unsigned(eb % 2);
        Value acc = kb.view(z[slot], {ps, ew}, {0, 0});
        for (int64_t dc = 0; dc < ndk; ++dc) {
          kb.matmul(acc,
                    kb.view(q1, {pd, 1, ps}, {0, Index(dc), sc}, {1, 1, nsk}),
                    kb.view(cd, {pd, 1, ew}, {0, dc, e0}), dc > 0);
          kb.matmul(acc,
                    kb.view(q2, {pd, 1, ps}, {0, Index(dc), sc}, {1, 1, nsk}),
                    kb.view(nsd, {pd, 1, ew}, {0, dc, e0}),
                    /*accumulate=*/true);
        }
        kb.copy(kb.view(yt[buf], {ps, 1, ew}, {0, sc, e0}), acc);
      }
      // Each row chunk leaves once done: only the last one's store is left
      // after the Tensor engine's last matmul.
      kb.dma(kb.view(outH3, {ps, 1, d}, {bi * ps, sc, 0}),
             kb.view(yt[buf], {ps, 1, d}, {0, sc, 0}));
    });
  };
  kb.forRangePipelined(
      nb,
      [&](Index bi, unsigned buf) {
        if (bi.getConstant() != std::optional<int64_t>(0)) {
          kb.dma(kb.reshape(xt[buf], {ps, nsk * d}),
                 kb.view(inH, {ps, nsk * d}, {bi * ps, 0}));
          return;
        }
        for (int64_t kc = 0; kc < nsk; ++kc) {
          kb.dma(kb.view(xt[buf], {ps, 1, d}, {0, kc, 0}),
                 kb.view(inH3, {ps, 1, d}, {bi * ps, kc, 0}));
          for (unsigned m = 0; m < 2; ++m)
            kb.dma(kb.view(stage1[m], {ps, 1, s}, {0, kc, 0}),
                   kb.view(stage1Hbm[m], {ps, 1, s}, {0, kc, 0}));
        }
        for (int64_t dc = 0; dc < ndk; ++dc)
          for (unsigned m = 0; m < 2; ++m)
            kb.dma(kb.view(stage2[m], {pd, 1, d}, {0, dc, 0}),
                   kb.view(stage2Hbm[m], {pd, 1, d}, {0, dc, 0}));
      },
      compute);
}

/// SBUF bytes per partition the kernel's tiles take for [B, S, D] (the
/// path it takes for S, D).
static int64_t fourierMixSbufBytes(int64_t s, int64_t d, int64_t e) {
  int64_t nsk = llvm::divideCeilSigned(s, 128),
          ndk = llvm::divideCeilSigned(d, 128);
  auto partitionMajor = [](int64_t n) { return n <= 128 || n % 128 == 0; };
  int64_t matrices = 2 * nsk * s + 2 * ndk * d, stage = 2 * ndk * s;
  if (partitionMajor(s) && partitionMajor(d))
    return e * (matrices + stage + 4 * nsk * d);
  return e * (matrices + stage + nsk * d + d);
}

std::optional<std::string> seam::fourierMixSiteError(RankedTensorType x,
                                                     ArrayRef<int64_t> dims) {
  if (x.getRank() != 3 || dims != ArrayRef<int64_t>{1, 2})
    return std::string("the kernel is FNet's mixing of [B, S, D] over dims "
                       "[1, 2] (sequence and hidden), not dims [") +
           llvm::join(llvm::map_range(
                          dims, [](int64_t d) { return std::to_string(d); }),
                      ", ") +
           "] of a rank-" + std::to_string(x.getRank()) + " tensor";
  Type et = x.getElementType();
  if (!et.isF32() && !et.isBF16())
    return std::string("element type must be f32 or bf16");
  int64_t s = x.getDimSize(1), d = x.getDimSize(2);
  int64_t bytes = fourierMixSbufBytes(s, d, et.isBF16() ? 2 : 4);
  // The DFT matrices stay resident: they must fit the smallest profile's
  // SBUF partition (twice the kernels' planning budget, KernelBuilder.h).
  if (bytes > 2 * kKernelSbufBudgetBytes)
    return "S = " + std::to_string(s) + ", D = " + std::to_string(d) +
           " needs " + std::to_string(bytes / 1024) +
           " KiB of SBUF per partition for its resident DFT matrices (> " +
           std::to_string(2 * kKernelSbufBudgetBytes / 1024) + " KiB)";
  return std::nullopt;
}

FailureOr<ProgramOp> seam::buildFourierMixKernel(OpBuilder &b, ModuleOp module,
                                                 const KernelSignature &sig,
                                                 StringRef name) {
  RankedTensorType x = sig.args[0];
  auto dims = sig.config ? sig.config.getAs<DenseI64ArrayAttr>("dims")
                         : DenseI64ArrayAttr();
  if (!dims)
    return module.emitError() << "fourier-mix kernel: config has no 'dims'";
  if (auto why = fourierMixSiteError(x, dims.asArrayRef()))
    return module.emitError() << "fourier-mix kernel: " << *why;
  int64_t nb = x.getDimSize(0), s = x.getDimSize(1), d = x.getDimSize(2);
  Type dtype = x.getElementType();
  auto io = hbmTileFor(x);
  if (failed(io))
    return module.emitError() << "fourier-mix kernel: unsupported type";
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, {*io}, {*io});
  KernelBuilder kb(b, module.getLoc(), prog);
  Value in = kb.arg(0), out = kb.arg(1);
  auto partitionMajor = [](int64_t n) { return n <= 128 || n % 128 == 0; };
  if (partitionMajor(s) && partitionMajor(d)) {
    buildStrided(kb, nb, s, d, dtype, in, out);
    return prog;
  }

  int64_t nsk = llvm::divideCeilSigned(s, 128),
          ndk = llvm::divideCeilSigned(d, 128);
  Value cs = loadChunked(kb, kb.constant(ConstantSpec::cos(s, s, s), dtype), s,
                         s, dtype);
  Value ss = loadChunked(kb, kb.constant(ConstantSpec::sin(s, s, s), dtype), s,
                         s, dtype);
  Value cd = loadChunked(kb, kb.constant(ConstantSpec::cos(d, d, d), dtype), d,
                         d, dtype);
  Value nsd = loadChunked(
      kb, kb.constant(ConstantSpec::sin(d, d, d, -1.0), dtype), d, d, dtype);

  Value xs = kb.sbuf({std::min<int64_t>(s, 128), nsk, d}, dtype);
  Value q1 = kb.sbuf({std::min<int64_t>(d, 128), ndk, s}, dtype);
  Value q2 = kb.sbuf({std::min<int64_t>(d, 128), ndk, s}, dtype);
  Value p1 = kb.psum({128, 512}), p2 = kb.psum({128, 512});
  Value z = kb.psum({128, 512});
  Value zo = kb.sbuf({std::min<int64_t>(s, 128), d}, dtype);

  kb.loop(nb, [&](Index bi) {
    for (int64_t kc = 0; kc < nsk; ++kc) {
      int64_t kw = std::min<int64_t>(128, s - kc * 128);
      kb.dma(kb.view(xs, {kw, 1, d}, {0, kc, 0}),
             kb.view(in, {1, kw, d}, {bi, kc * 128, 0}));
    }
    // Stage 1: P[d, s'] = sum_s X[s, d] C_S[s, s'] (and S_S).
    for (int64_t dc = 0; dc < ndk; ++dc) {
      int64_t dw = std::min<int64_t>(128, d - dc * 128);
      for (int64_t s0 = 0; s0 < s; s0 += 512) {
        int64_t sw = std::min<int64_t>(512, s - s0);
        Value a1 = kb.view(p1, {dw, sw}, {0, 0});
        Value a2 = kb.view(p2, {dw, sw}, {0, 0});
        for (int64_t kc = 0; kc < nsk; ++kc) {
          int64_t kw = std::min<int64_t>(128, s - kc * 128);
          Value st = kb.view(xs, {kw, 1, dw}, {0, kc, dc * 128});
          kb.matmul(a1, st, kb.view(cs, {kw, 1, sw}, {0, kc, s0}), kc > 0);
          kb.matmul(a2, st, kb.view(ss, {kw, 1, sw}, {0, kc, s0}), kc > 0);
        }
        kb.copy(kb.view(q1, {dw, 1, sw}, {0, dc, s0}), a1);
        kb.copy(kb.view(q2, {dw, 1, sw}, {0, dc, s0}), a2);
      }
    }
    // Stage 2: Z[s', e] = sum_d P1[d, s'] C_D[d, e] - P2[d, s'] S_D[d, e].
    for (int64_t sc = 0; sc < nsk; ++sc) {
      int64_t mw = std::min<int64_t>(128, s - sc * 128);
      for (int64_t e0 = 0; e0 < d; e0 += 512) {
        int64_t ew = std::min<int64_t>(512, d - e0);
        Value acc = kb.view(z, {mw, ew}, {0, 0});
        for (int64_t dc = 0; dc < ndk; ++dc) {
          int64_t dw = std::min<int64_t>(128, d - dc * 128);
          kb.matmul(acc, kb.view(q1, {dw, 1, mw}, {0, dc, sc * 128}),
                    kb.view(cd, {dw, 1, ew}, {0, dc, e0}), dc > 0);
          kb.matmul(acc, kb.view(q2, {dw, 1, mw}, {0, dc, sc * 128}),
                    kb.view(nsd, {dw, 1, ew}, {0, dc, e0}), true);
        }
        kb.copy(kb.view(zo, {mw, ew}, {0, e0}), acc);
      }
      kb.dma(kb.view(out, {1, mw, d}, {bi, sc * 128, 0}),
             kb.view(zo, {mw, d}, {0, 0}));
    }
  });
  return prog;
}
