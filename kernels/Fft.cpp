//===- Fft.cpp - 1-D DFT kernels as Tensor Engine matmuls -----------------===//
//
// N <= 128: one DFT matmul over a batch of rows (the 128-point DFT of the
// FNet source: rows become columns through TE transposes and the DFT matrix
// is stationary, so up to 512 rows share one matmul).
// N > 128: the four-step decomposition N = N1 x N2 (FftCommon.h), one row
// per loop iteration. Sizes that need three factors (e.g. 2197 = 13^3,
// 16383 = 127 x 129): N = N1 x (N2 x N3), the inner factor per row through
// an HBM scratch.
// N = 256, 512 with config variant = "radix2": the FNet source's algorithm
// (groups of 128-point DFT matmuls + radix-2 butterfly levels).
//
// Complex tensors travel as f32 [..., 2] (re, im interleaved).
//
//===----------------------------------------------------------------------===//
#include "kernels/FftCommon.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"
#include <numeric>

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

std::optional<std::pair<int64_t, int64_t>> seam::fftFactors(int64_t n) {
  if (n <= 0)
    return std::nullopt;
  if (n <= 128)
    return std::make_pair(n, int64_t(1));
  for (int64_t a = 128; a >= 2; --a)
    if (n % a == 0 && n / a <= 128)
      return std::make_pair(a, n / a);
  return std::nullopt;
}

/// Bytes per partition a kernel's large transfers aim for: the fixed cost
/// of a DMA is paid per piece it is spread over (one per queue), so a piece
/// should carry several times what the queue moves in that time
/// (hardware.md "DMA": >= 2 KiB per partition approaches peak).
constexpr int64_t kDmaTargetBytes = 16 * 1024;

/// Rows [row0, row0 + parts x perPart) of the HBM matrix `rows2d` as one
/// window [parts, perPart x rowElems]: partition p holds perPart
/// consecutive rows (a contiguous run per partition).
static Value rowBlock(KernelBuilder &kb, Value rows2d, Index row0,
                      int64_t parts, int64_t perPart) {
  int64_t rowElems = KernelBuilder::tileOf(rows2d).getShape()[1];
  Value v = kb.view(rows2d, {parts * perPart, rowElems}, {row0, 0});
  return kb.reshape(v, {parts, perPart * rowElems});
}

/// N <= 128: rows on partitions, chunks of 128 partitions x kRowsPerPart
/// rows (one contiguous DMA each way). Each 128-row block is turned into
/// columns by one TE transpose and multiplied, x^T stationary, by the DFT
/// matrix whose columns interleave (cos, sin) per frequency, so the PSUM
/// result [rows, (k, re/im)] already has the layout of complex<f32>: no
/// transposes back, and the whole output row block leaves in one DMA.
/// Complex input adds a second matmul (the imaginary part's coefficients)
/// accumulating in PSUM. Chunks are software-pipelined over two buffer
/// sets; a batch of at most kMaxSets chunks (512 rows: four) gives each
/// chunk its own set and issues every load first, so that no chunk's
/// result waits for an earlier chunk's store to drain its buffer (with two
/// sets, chunk 2's PSUM evacuation waited ~1.3 us for chunk 0's store).
static void buildSingleDft(KernelBuilder &kb, const FftParams &p, Value in,
                           Value out) {
  int64_t n = p.n, inParts = p.complexInput ? 2 : 1;
  int64_t outW = p.realOutput ? n : 2 * n;
  // Rows per partition per chunk: each transfer's fixed cost is paid per
  // piece the DMA is spread over, so the output block should reach
  // kDmaTargetBytes per partition; but at least kMinChunks chunks when the
  // batch has them (the pipeline overlaps one chunk's transfers with
  // another's compute), and the two buffer sets within half the SBUF
  // budget.
  constexpr int64_t kMinChunks = 4;
  int64_t inBytes = n * inParts * (p.dtype.isBF16() ? 2 : 4);
  int64_t outBytes = outW * 4;
  int64_t rowsPerPart = std::max<int64_t>(
      1, std::min({llvm::divideCeilSigned(kDmaTargetBytes, outBytes),
                   llvm::divideCeilSigned(p.batch, kNumPartitions * kMinChunks),
                   kKernelSbufBudgetBytes / 4 / (inBytes + outBytes)}));
  const int64_t kRowsPerPart = rowsPerPart;
  // PSUM and x^T tiles rotate over kRing 128-row blocks.
  constexpr int64_t kRing = 4;
  Type f32 = kb.f32();
  double sigma = p.inverse ? 1.0 : -1.0;
  double scale = p.inverse ? 1.0 / double(n) : 1.0;
  // X = sum_t (xr + i xi)(C + i sigma S): xr's coefficients (C, sigma S),
  // xi's (-sigma S, C); the real part alone for a real output.
  ConstantSpec fa = ConstantSpec::cos(n, outW, n, scale);
  ConstantSpec fb = ConstantSpec::sin(n, outW, n, -sigma * scale);
  if (!p.realOutput) {
    fa = fa.interleave(ConstantSpec::Kind::Sin, sigma * scale);
    fb = fb.interleave(ConstantSpec::Kind::Cos, scale);
  }
  auto load = [&](const ConstantSpec &spec) {
    Value t = kb.sbuf({n, outW}, p.dtype);
    kb.dma(t, kb.constant(spec, p.dtype));
    return t;
  };
  Value ma = load(fa), mb = p.complexInput ? load(fb) : Value();
  Value inH = kb.reshape(in, {p.batch, n * inParts});
  Value outH = kb.reshape(out, {p.batch, outW});
  int64_t chunkRows = kNumPartitions * kRowsPerPart;
  int64_t full = p.batch / chunkRows;
  constexpr int64_t kMaxSets = 4;
  int64_t setBytes = kRowsPerPart * (inBytes + outBytes);
  bool ownSets = full > 2 && full <= kMaxSets && p.batch % chunkRows == 0 &&
                 full * setBytes <= kKernelSbufBudgetBytes / 2;
  SmallVector<Value, kMaxSets> xt, ot;
  for (int64_t i = 0; i < (ownSets ? full : 2); ++i) {
    xt.push_back(kb.sbuf({kNumPartitions, kRowsPerPart, n, inParts}, p.dtype));
    ot.push_back(kb.sbuf({kNumPartitions, kRowsPerPart, outW}, f32));
  }
  SmallVector<Value> xT, tp, acc;
  for (int64_t i = 0; i < kRing * inParts; ++i) {
    xT.push_back(kb.sbuf({n, kNumPartitions}, p.dtype));
    tp.push_back(kb.psum({n, kNumPartitions}));
  }
  for (int64_t i = 0; i < kRing; ++i)
    acc.push_back(kb.psum({kNumPartitions, outW}));

  auto loadChunk = [&](Index row0, int64_t parts, int64_t q, unsigned buf) {
    kb.dma(kb.view(xt[buf], {parts, q, n, inParts}, {0, 0, 0, 0}),
           rowBlock(kb, inH, row0, parts, q));
  };
  auto computeChunk = [&](Index row0, int64_t parts, int64_t q, unsigned buf) {
    // Transposes run kRing blocks ahead of the matmuls: the Tensor engine
    // runs on while the copies of the earlier blocks drain.
    auto transposeBlock = [&](int64_t s) {
      for (int64_t part = 0; part < inParts; ++part) {
        int64_t i = (s % kRing) * inParts + part;
        Value t = kb.view(tp[i], {n, parts}, {0, 0});
        kb.transpose(t, kb.view(xt[buf], {parts, 1, n, 1}, {0, s, 0, part}));
        kb.copy(kb.view(xT[i], {n, parts}, {0, 0}), t);
      }
    };
    for (int64_t s = 0; s < std::min(q, kRing); ++s)
      transposeBlock(s);
    for (int64_t s = 0; s < q; ++s) {
      int64_t i = (s % kRing) * inParts;
      Value a = kb.view(acc[s % kRing], {parts, outW}, {0, 0});
      kb.matmul(a, kb.view(xT[i], {n, parts}, {0, 0}), ma);
      if (mb)
        kb.matmul(a, kb.view(xT[i + 1], {n, parts}, {0, 0}), mb,
                  /*accumulate=*/true);
      kb.copy(kb.view(ot[buf], {parts, 1, outW}, {0, s, 0}), a);
      if (s + kRing < q)
        transposeBlock(s + kRing);
    }
    kb.dma(rowBlock(kb, outH, row0, parts, q),
           kb.view(ot[buf], {parts, q, outW}, {0, 0, 0}));
  };
  if (ownSets) {
    for (int64_t i = 0; i < full; ++i)
      loadChunk(Index(i * chunkRows), kNumPartitions, kRowsPerPart, i);
    for (int64_t i = 0; i < full; ++i)
      computeChunk(Index(i * chunkRows), kNumPartitions, kRowsPerPart, i);
    return;
  }
  kb.forRangePipelined(
      full,
      [&](Index i, unsigned b) {
        loadChunk(i * chunkRows, kNumPartitions, kRowsPerPart, b);
      },
      [&](Index i, unsigned b) {
        computeChunk(i * chunkRows, kNumPartitions, kRowsPerPart, b);
      });
  // The rest: whole 128-row blocks, then fewer partitions.
  int64_t row = full * chunkRows, rem = p.batch - row;
  unsigned buf = full % 2;
  if (rem >= kNumPartitions) {
    int64_t q = rem / kNumPartitions;
    loadChunk(Index(row), kNumPartitions, q, buf);
    computeChunk(Index(row), kNumPartitions, q, buf);
    row += q * kNumPartitions;
    rem -= q * kNumPartitions;
    buf ^= 1;
  }
  if (rem > 0) {
    loadChunk(Index(row), rem, 1, buf);
    computeChunk(Index(row), rem, 1, buf);
  }
}

/// The FNet source's algorithm for N = 128 x R (R = 1, 2, 4, 8): R
/// interleaved 128-point DFTs as TE matmuls (E_r = DFT_128(x[R m + r]), rows
/// of a batch chunk as columns), then log2(R) radix-2 decimation-in-time
/// butterfly levels on the Vector engine: Z[k] = P[k] + W_2L^k Q[k],
/// Z[k + L] = P[k] - W_2L^k Q[k], with the twiddles per partition (k on
/// partitions). With `padTo` (the source's pad-to-next-power-of-two) the
/// p.n input points are zero-padded to N and the first p.n of the N bins
/// are kept: not the p.n-point DFT, the source's result.
static void buildRadix2(KernelBuilder &kb, const FftParams &p, Value in,
                        Value out) {
  int64_t n = p.padTo ? p.padTo : p.n, radix = n / 128, nIn = p.n;
  int64_t inParts = p.complexInput ? 2 : 1;
  // SBUF bytes per batch column: the R spectra and the 2 R log2(R) level
  // blocks (re, im: f32), the inputs, three temporaries and the output.
  int64_t levelCount = llvm::Log2_64(radix);
  int64_t perColumn = 4 * (2 * radix + 2 * radix * levelCount + 3 + 2) +
                      radix * inParts * (p.dtype.isBF16() ? 2 : 4);
  int64_t maxChunk = std::max<int64_t>(
      1, std::min<int64_t>(kMatmulMaxN, kKernelSbufBudgetBytes / perColumn));
  int64_t chunk = 1;
  for (int64_t c = std::min<int64_t>(p.batch, maxChunk); c >= 1; --c)
    if (p.batch % c == 0) {
      chunk = c;
      break;
    }
  Type f32 = kb.f32();
  double sigma = p.inverse ? 1.0 : -1.0;
  double scale = p.inverse ? 1.0 / double(n) : 1.0;
  DftMatrices m = DftMatrices::load(kb, 128, p.inverse, scale, p.dtype);
  struct Cx {
    Value re, im;
  };
  // Spectra: radix of them, one 128-block each, then halving.
  auto newBlocks = [&](int64_t count) {
    SmallVector<Cx> v;
    for (int64_t i = 0; i < count; ++i)
      v.push_back({kb.sbuf({128, chunk}, f32), kb.sbuf({128, chunk}, f32)});
    return v;
  };
  SmallVector<Cx> e = newBlocks(radix);
  SmallVector<Value> xr, xi;
  for (int64_t r = 0; r < radix; ++r) {
    xr.push_back(kb.sbuf({128, chunk}, p.dtype));
    if (p.complexInput)
      xi.push_back(kb.sbuf({128, chunk}, p.dtype));
  }
  Value pr = kb.psum({128, chunk}), pi = kb.psum({128, chunk});
  // Twiddles W_2L^k, k in [0, L), per level (L = 128, 256, ...).
  struct Tw {
    SmallVector<Value> re, im; // One [128, 1] tile per 128-block of k.
  };
  SmallVector<Tw> tw;
  for (int64_t len = 128; len < n; len *= 2) {
    Tw t;
    Value c = kb.constant(ConstantSpec::cos(len, 2, 2 * len), f32);
    Value s = kb.constant(ConstantSpec::sin(len, 2, 2 * len, sigma), f32);
    for (int64_t blk = 0; blk < len / 128; ++blk) {
      t.re.push_back(kb.sbuf({128, 1}, f32));
      t.im.push_back(kb.sbuf({128, 1}, f32));
      kb.dma(t.re.back(), kb.view(c, {128, 1}, {blk * 128, 1}));
      kb.dma(t.im.back(), kb.view(s, {128, 1}, {blk * 128, 1}));
    }
    tw.push_back(t);
  }
  Value tr = kb.sbuf({128, chunk}, f32), ti = kb.sbuf({128, chunk}, f32);
  Value tmp = kb.sbuf({128, chunk}, f32);
  // Level outputs, allocated once: spectra of 2^l blocks.
  SmallVector<SmallVector<SmallVector<Cx>>> levels;
  for (int64_t count = radix / 2, blocks = 2; count >= 1;
       count /= 2, blocks *= 2) {
    SmallVector<SmallVector<Cx>> lv;
    for (int64_t i = 0; i < count; ++i)
      lv.push_back(newBlocks(blocks));
    levels.push_back(lv);
  }
  int64_t parts = p.realOutput ? 1 : 2;
  Value o = kb.sbuf({128, chunk, parts}, f32);

  if (nIn < n)
    for (int64_t q = 0; q < radix; ++q) {
      int64_t mq = std::max<int64_t>(0, (nIn - q + radix - 1) / radix);
      if (mq >= 128)
        continue;
      int64_t start = mq < 64 ? 0 : mq;
      kb.memset(kb.view(xr[q], {128 - start, chunk}, {start, 0}), 0.0f);
      if (p.complexInput)
        kb.memset(kb.view(xi[q], {128 - start, chunk}, {start, 0}), 0.0f);
    }
  kb.loop(p.batch / chunk, [&](Index c) {
    kb.loop(chunk, [&](Index r) {
      Index row = c * chunk + r;
      for (int64_t q = 0; q < radix; ++q) {
        // x[R m + q] for the m < mq that are input points (the rest of
        // the 128 partitions are the zero padding, set once).
        int64_t mq = std::min<int64_t>(128, (nIn - q + radix - 1) / radix);
        if (mq <= 0)
          continue;
        if (p.complexInput) {
          kb.dma(kb.view(xr[q], {mq, 1}, {0, r}),
                 kb.view(in, {1, mq, 1}, {row, q, 0}, {1, radix, 1}));
          kb.dma(kb.view(xi[q], {mq, 1}, {0, r}),
                 kb.view(in, {1, mq, 1}, {row, q, 1}, {1, radix, 1}));
        } else {
          kb.dma(kb.view(xr[q], {mq, 1}, {0, r}),
                 kb.view(in, {1, mq}, {row, q}, {1, radix}));
        }
      }
    });
    for (int64_t q = 0; q < radix; ++q) {
      kb.matmul(pr, m.c, xr[q]);
      if (p.complexInput)
        kb.matmul(pr, m.ns, xi[q], true);
      kb.matmul(pi, m.s, xr[q]);
      if (p.complexInput)
        kb.matmul(pi, m.c, xi[q], true);
      kb.copy(e[q].re, pr);
      kb.copy(e[q].im, pi);
    }
    // Butterfly levels: spectra list `cur` (each a list of blocks).
    SmallVector<SmallVector<Cx>> cur;
    for (auto &x : e)
      cur.push_back({x});
    for (auto [li, lv] : llvm::enumerate(levels)) {
      int64_t half = cur.size() / 2;
      for (int64_t s = 0; s < half; ++s) {
        auto &pp = cur[s], &qq = cur[s + half];
        for (auto [blk, qb] : llvm::enumerate(qq)) {
          Value wr = tw[li].re[blk], wi = tw[li].im[blk];
          Cx pb = pp[blk];
          kb.tensorScalar(AluOp::Multiply, tr, qb.re, wr);
          kb.tensorScalar(AluOp::Multiply, tmp, qb.im, wi);
          kb.tensorTensor(AluOp::Subtract, tr, tr, tmp);
          kb.tensorScalar(AluOp::Multiply, ti, qb.re, wi);
          kb.tensorScalar(AluOp::Multiply, tmp, qb.im, wr);
          kb.tensorTensor(AluOp::Add, ti, ti, tmp);
          Cx lo = lv[s][blk], hi = lv[s][blk + qq.size()];
          kb.tensorTensor(AluOp::Add, lo.re, pb.re, tr);
          kb.tensorTensor(AluOp::Add, lo.im, pb.im, ti);
          kb.tensorTensor(AluOp::Subtract, hi.re, pb.re, tr);
          kb.tensorTensor(AluOp::Subtract, hi.im, pb.im, ti);
        }
      }
      cur.assign(lv.begin(), lv.end());
    }
    // cur[0] holds X in 128-blocks of k.
    // (With padding, only the first nIn bins are kept.)
    for (auto [blk, x] : llvm::enumerate(cur[0])) {
      int64_t k0 = int64_t(blk) * 128, kw = std::min<int64_t>(128, nIn - k0);
      if (kw <= 0)
        break;
      kb.copy(kb.view(o, {128, chunk, 1}, {0, 0, 0}), x.re);
      if (!p.realOutput)
        kb.copy(kb.view(o, {128, chunk, 1}, {0, 0, 1}), x.im);
      kb.loop(chunk, [&](Index r) {
        Index row = c * chunk + r;
        if (p.realOutput)
          kb.dma(kb.view(out, {1, kw}, {row, k0}),
                 kb.view(o, {kw, 1, 1}, {0, r, 0}));
        else
          kb.dma(kb.view(out, {1, kw, 2}, {row, k0, 0}),
                 kb.view(o, {kw, 1, 2}, {0, r, 0}));
      });
    }
  });
}

/// N = N1 x M with M = N2 x N3 > 128 (three DFT factors, each <= 128):
///   1: B[k1, m] = sum_n1 F_N1[n1, k1] A[n1, m], A[n1, m] = x[M n1 + m]
///      (the DFT matrix stationary, m in chunks of 512)
///   2: C[k1, m] = B[k1, m] W_N^(k1 m)
///   3: for each k1, the M-point four-step DFT of row C[k1, :], which
///      lands at X[k1 + N1 k'] (a strided HBM window).
/// Rows of C go through an HBM scratch to be spread over N2 partitions
/// (an SBUF row cannot be indexed by a loop: partition offsets are static).
static void buildThreeFactor(KernelBuilder &kb, const FftParams &p, int64_t n1,
                             int64_t mm, Value in, Value out) {
  int64_t n = p.n;
  auto f2 = *fftFactors(mm);
  int64_t n2 = f2.first, n3 = f2.second;
  Type f32 = kb.f32();
  double sigma = p.inverse ? 1.0 : -1.0;
  double scale = p.inverse ? 1.0 / double(n) : 1.0;
  DftMatrices m1 = DftMatrices::load(kb, n1, p.inverse, 1.0, p.dtype);
  FourStepDft inner(kb, n2, n3, p.inverse, scale, p.dtype);
  Value twr = kb.sbuf({n1, mm}, f32), twi = kb.sbuf({n1, mm}, f32);
  kb.dma(twr, kb.constant(ConstantSpec::cos(n1, mm, n), f32));
  kb.dma(twi, kb.constant(ConstantSpec::sin(n1, mm, n, sigma), f32));
  Value ar = kb.sbuf({n1, mm}, p.dtype);
  Value ai = p.complexInput ? kb.sbuf({n1, mm}, p.dtype) : Value();
  Value br = kb.psum({n1, 512}), bi = kb.psum({n1, 512});
  Value c = kb.sbuf({n1, mm, 2}, f32);
  Value t1 = kb.sbuf({n1, 512}, f32), t2 = kb.sbuf({n1, 512}, f32);
  Value scratch = kb.hbmScratch({n1, mm, 2}, f32, "fft_rows");
  Value a2r = kb.sbuf({n2, n3}, f32), a2i = kb.sbuf({n2, n3}, f32);
  Value a2rc = p.dtype == f32 ? a2r : kb.sbuf({n2, n3}, p.dtype);
  Value a2ic = p.dtype == f32 ? a2i : kb.sbuf({n2, n3}, p.dtype);
  int64_t parts = p.realOutput ? 1 : 2;
  Value o = kb.sbuf({n3, n2, parts}, f32);
  kb.loop(p.batch, [&](Index b) {
    if (p.complexInput) {
      kb.dma(ar, kb.view(in, {1, n, 1}, {b, 0, 0}));
      kb.dma(ai, kb.view(in, {1, n, 1}, {b, 0, 1}));
    } else {
      kb.dma(ar, kb.view(in, {1, n}, {b, 0}));
    }
    for (int64_t m0 = 0; m0 < mm; m0 += 512) {
      int64_t w = std::min<int64_t>(512, mm - m0);
      Value pr = kb.view(br, {n1, w}, {0, 0}),
            pi = kb.view(bi, {n1, w}, {0, 0});
      auto col = [&](Value t) { return kb.view(t, {n1, w}, {0, m0}); };
      kb.matmul(pr, m1.c, col(ar));
      if (ai)
        kb.matmul(pr, m1.ns, col(ai), true);
      kb.matmul(pi, m1.s, col(ar));
      if (ai)
        kb.matmul(pi, m1.c, col(ai), true);
      Value u1 = kb.view(t1, {n1, w}, {0, 0}),
            u2 = kb.view(t2, {n1, w}, {0, 0});
      Value cr = kb.view(c, {n1, w, 1}, {0, m0, 0});
      Value ci = kb.view(c, {n1, w, 1}, {0, m0, 1});
      kb.tensorTensor(AluOp::Multiply, u1, pr, col(twr));
      kb.tensorTensor(AluOp::Multiply, u2, pi, col(twi));
      kb.tensorTensor(AluOp::Subtract, cr, u1, u2);
      kb.tensorTensor(AluOp::Multiply, u1, pr, col(twi));
      kb.tensorTensor(AluOp::Multiply, u2, pi, col(twr));
      kb.tensorTensor(AluOp::Add, ci, u1, u2);
    }
    kb.dma(scratch, c);
    kb.loop(n1, [&](Index k1) {
      kb.dma(a2r, kb.view(scratch, {1, mm, 1}, {k1, 0, 0}));
      kb.dma(a2i, kb.view(scratch, {1, mm, 1}, {k1, 0, 1}));
      if (a2rc != a2r) {
        kb.copy(a2rc, a2r);
        kb.copy(a2ic, a2i);
      }
      inner.run(a2rc, a2ic);
      kb.copy(kb.view(o, {n3, n2, 1}, {0, 0, 0}), inner.dr);
      if (!p.realOutput) {
        kb.copy(kb.view(o, {n3, n2, 1}, {0, 0, 1}), inner.di);
        kb.dma(kb.view(out, {1, mm, 2}, {b, k1, 0}, {1, n1, 1}), o);
      } else {
        kb.dma(kb.view(out, {1, mm}, {b, k1}, {1, n1}), o);
      }
    });
  });
}

/// N = n1 x n2 (n2 > 1): BatchedDft over chunks of rows. Each row is one
/// DMA into its columns of A (in the chunk's load, software-pipelined with
/// the previous chunk's compute); each group of G rows leaves as one DMA of
/// its spectra (rows (g, f2) of D are the group's output rows in order).
static void buildBatchedFourStep(KernelBuilder &kb, const FftParams &p,
                                 Value in, Value out) {
  int64_t n = p.n;
  BatchedDft::Config cfg;
  cfg.n = n;
  cfg.inverse = p.inverse;
  cfg.scale = p.inverse ? 1.0 / double(n) : 1.0;
  cfg.dtype = p.dtype;
  cfg.complexInput = p.complexInput;
  // Chunks and tiles are whole groups but for the batch's last one.
  cfg.partialGroups = p.batch % (kNumPartitions / fftFactors(n)->second) != 0;
  BatchedDft dft(kb, cfg);
  int64_t n1 = dft.n1, n2 = dft.n2, g = dft.seqsPerGroup;
  int64_t m = dft.groupRows, tileSeqs = dft.seqsPerTile();
  int64_t parts = p.complexInput ? 2 : 1, outParts = p.realOutput ? 1 : 2;
  // Rows per chunk: whole tiles, two buffers in half the budget. All rows
  // at once when they fit in one tile; otherwise at least kMinChunks chunks
  // when the batch has them (a chunk's loads overlap the previous chunk's
  // compute), of at most kMaxChunkRows rows (small chunks pipeline better;
  // their row DMAs go as kDmaStreams parallel streams).
  constexpr int64_t kMinChunks = 4, kMaxChunkRows = 32;
  int64_t seqBytes = n2 * parts * (p.dtype.isBF16() ? 2 : 4);
  int64_t fit = kKernelSbufBudgetBytes / 4 / seqBytes / tileSeqs * tileSeqs;
  int64_t chunk = std::min(p.batch, std::max(tileSeqs, fit));
  if (p.batch > tileSeqs) {
    int64_t want = llvm::divideCeilSigned(
                       llvm::divideCeilSigned(p.batch, kMinChunks), tileSeqs) *
                   tileSeqs;
    int64_t cap = std::max(tileSeqs, kMaxChunkRows / tileSeqs * tileSeqs);
    chunk = std::min({chunk, want, cap});
  }
  Value a[2];
  for (unsigned i = 0; i < 2; ++i)
    a[i] = kb.sbuf({n1, chunk, n2, parts}, p.dtype);
  Value o = kb.sbuf(
      {m, BatchedDft::kLanes * BatchedDft::kGroupsPerLane * n1, outParts},
      kb.f32());
  Value inH = kb.reshape(in, {p.batch, n * parts});
  Value outH = kb.reshape(out, {p.batch * n2, n1 * outParts});

  auto loadChunk = [&](Index seq0, int64_t count, unsigned buf) {
    auto loadRow = [&](Index c) {
      Value row = kb.view(inH, {1, n * parts}, {seq0 + c, 0});
      kb.dma(kb.view(a[buf], {n1, 1, n2, parts}, {0, c, 0, 0}),
             kb.reshape(row, {n1, n2 * parts}));
    };
    kb.dmaLoop(count, loadRow);
  };
  auto computeTile = [&](Index seq0, Index local0, Index group0, int64_t seqs,
                         unsigned buf) {
    auto lanes = dft.lanes(local0, group0, seqs);
    for (auto &l : lanes)
      dft.stage1(l, a[buf]);
    for (auto &l : lanes)
      dft.twiddle(l);
    for (auto &l : lanes)
      dft.stage3(l);
    for (auto &l : lanes) {
      int64_t col = l.index * BatchedDft::kGroupsPerLane * n1;
      int64_t w = l.groups * n1;
      kb.copy(kb.view(o, {m, w, 1}, {0, col, 0}), dft.spectrumRe(l));
      if (outParts == 2)
        kb.copy(kb.view(o, {m, w, 1}, {0, col, 1}), dft.spectrumIm(l));
      for (int64_t j = 0; j < l.groups; ++j) {
        int64_t s = j + 1 == l.groups ? l.lastSeqs : g;
        Index first = seq0 + (l.index * BatchedDft::kGroupsPerLane + j) * g;
        kb.dma(kb.view(outH, {s * n2, n1 * outParts}, {first * n2, 0}),
               kb.view(o, {s * n2, n1, outParts}, {0, col + j * n1, 0}));
      }
    }
  };
  auto computeChunk = [&](Index seq0, int64_t count, unsigned buf) {
    int64_t tiles = count / tileSeqs, groupsPerTile = tileSeqs / g;
    if (tiles > 0)
      kb.loop(tiles, [&](Index t) {
        computeTile(seq0 + t * tileSeqs, t * tileSeqs, t * groupsPerTile,
                    tileSeqs, buf);
      });
    if (int64_t rest = count - tiles * tileSeqs)
      computeTile(seq0 + tiles * tileSeqs, Index(tiles * tileSeqs),
                  Index(tiles * groupsPerTile), rest, buf);
  };
  int64_t full = p.batch / chunk;
  kb.forRangePipelined(
      full, [&](Index i, unsigned b) { loadChunk(i * chunk, chunk, b); },
      [&](Index i, unsigned b) { computeChunk(i * chunk, chunk, b); });
  if (int64_t rest = p.batch - full * chunk) {
    unsigned b = full % 2;
    loadChunk(Index(full * chunk), rest, b);
    computeChunk(Index(full * chunk), rest, b);
  }
}

std::optional<std::string> seam::fftParamsError(const FftParams &p) {
  if (p.n <= 0 || p.batch <= 0)
    return std::string("empty transform");
  if (p.complexInput && p.dtype && !p.dtype.isF32())
    return std::string("complex input is f32 only");
  if (p.padTo) {
    if (p.variant != FftVariant::Radix2)
      return std::string("pad-to-next-power-of-two is the FNet source's "
                         "radix-2 kernels' (config variant = \"radix2\")");
    if (p.padTo < p.n)
      return "padded size " + std::to_string(p.padTo) + " < size " +
             std::to_string(p.n);
  }
  int64_t len = p.padTo ? p.padTo : p.n;
  if (p.variant == FftVariant::Radix2) {
    if (!isRadix2Size(len))
      return "the radix-2 variant is the source's 128-point DFT groups and "
             "radix-2 butterflies: 128, 256, 512 or 1024 points, not " +
             std::to_string(len);
    return std::nullopt;
  }
  if (fftFactors(len))
    return std::nullopt;
  for (int64_t a = 128; a >= 2; --a)
    if (len % a == 0 && fftFactors(len / a))
      return std::nullopt;
  return "size " + std::to_string(len) +
         " does not factor into at most three DFTs of <= 128 points";
}

bool seam::isRadix2Size(int64_t n) {
  return n == 128 || n == 256 || n == 512 || n == 1024;
}

/// The transform of `p` from `in` ([batch, n] or [batch, n, 2] HBM) into
/// `out` (same, f32): the variant's builder.
static void emitFft(KernelBuilder &kb, const FftParams &p, Value in,
                    Value out) {
  if (p.variant == FftVariant::Radix2) {
    buildRadix2(kb, p, in, out);
    return;
  }
  if (auto f = fftFactors(p.n)) {
    if (p.n <= 128)
      buildSingleDft(kb, p, in, out);
    else
      buildBatchedFourStep(kb, p, in, out);
    return;
  }
  for (int64_t a = 128; a >= 2; --a)
    if (p.n % a == 0 && fftFactors(p.n / a)) {
      buildThreeFactor(kb, p, a, p.n / a, in, out);
      return;
    }
}

FailureOr<ProgramOp> seam::buildFftProgram(OpBuilder &b, ModuleOp module,
                                           StringRef name, const FftParams &p) {
  MLIRContext *ctx = module.getContext();
  Type f32 = b.getF32Type();
  FftParams q = p;
  q.dtype = p.dtype ? p.dtype : f32;
  if (auto why = fftParamsError(q))
    return module.emitError() << "fft kernel: " << *why;
  SmallVector<int64_t> inShape = {p.batch, p.n}, outShape = {p.batch, p.n};
  if (p.complexInput)
    inShape.push_back(2);
  if (!p.realOutput)
    outShape.push_back(2);
  auto inT = TileType::get(ctx, MemSpace::Hbm, inShape, q.dtype, 0);
  auto outT = TileType::get(ctx, MemSpace::Hbm, outShape, f32, 0);
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, {inT}, {outT});
  KernelBuilder kb(b, module.getLoc(), prog);
  emitFft(kb, q, kb.arg(0), kb.arg(1));
  return prog;
}

/// dst[o, j, i, :] = src[o, i, j, :] for src [outer, a, b x parts] and dst
/// [outer, b, a x parts] in HBM: 128 x 128 blocks through SBUF, one TE
/// transpose per block and part (re, im), two buffer sets in a ring so a
/// block's DMAs overlap the previous block's transposes.
static void transposeThroughSbuf(KernelBuilder &kb, Value src, Value dst,
                                 int64_t outer, int64_t a, int64_t bb,
                                 int64_t parts, Type dtype) {
  Value t[2], u[2], ps[2];
  for (unsigned i = 0; i < 2; ++i) {
    t[i] = kb.sbuf({kNumPartitions, kNumPartitions, parts}, dtype);
    u[i] = kb.sbuf({kNumPartitions, kNumPartitions, parts}, dtype);
    ps[i] = kb.psum({kNumPartitions, kNumPartitions});
  }
  auto block = [&](Index o, Index i0, int64_t ai, Index j0, int64_t bj,
                   unsigned r) {
    kb.dma(kb.view(t[r], {ai, bj, parts}, {0, 0, 0}),
           kb.view(src, {1, ai, bj * parts}, {o, i0, j0 * parts}));
    for (int64_t part = 0; part < parts; ++part) {
      Value pv = kb.view(ps[r], {bj, ai}, {0, 0});
      kb.transpose(pv, kb.view(t[r], {ai, bj, 1}, {0, 0, part}));
      kb.copy(kb.view(u[r], {bj, ai, 1}, {0, 0, part}), pv);
    }
    kb.dma(kb.view(dst, {1, bj, ai * parts}, {o, j0, i0 * parts}),
           kb.view(u[r], {bj, ai, parts}, {0, 0, 0}));
  };
  // Full 128-blocks in ring loops, then the partial block of each dim.
  auto blocks = [&](int64_t total,
                    llvm::function_ref<void(Index, int64_t, unsigned)> fn) {
    int64_t full = total / kNumPartitions, rem = total % kNumPartitions;
    if (full > 0)
      kb.forRangeUnrolled(full, 2, [&](Index k, unsigned r) {
        fn(k * kNumPartitions, kNumPartitions, r);
      });
    if (rem)
      fn(Index(full * kNumPartitions), rem, unsigned(full % 2));
  };
  kb.loop(outer, [&](Index o) {
    blocks(a, [&](Index i0, int64_t ai, unsigned) {
      blocks(bb, [&](Index j0, int64_t bj, unsigned r) {
        block(o, i0, ai, j0, bj, r);
      });
    });
  });
}

/// The call site [..., n, ...] along `axis`. The last axis is the kernel's
/// native layout (rows of n); another axis is brought there and back by
/// transposes through SBUF into HBM scratch (the inner dims become rows).
/// The parameters of a call site (nullopt: no valid axis), with the outer
/// and inner extents around the axis.
static std::optional<FftParams> paramsOf(const KernelSignature &sig,
                                         bool inverse, int64_t &outer,
                                         int64_t &inner) {
  if (sig.args.size() != 1 || sig.results.size() != 1)
    return std::nullopt;
  RankedTensorType x = sig.args[0], y = sig.results[0];
  auto axisAttr =
      sig.config ? sig.config.getAs<IntegerAttr>("axis") : IntegerAttr();
  if (!axisAttr || axisAttr.getInt() < 0 || axisAttr.getInt() >= x.getRank())
    return std::nullopt;
  int64_t axis = axisAttr.getInt();
  FftParams p;
  p.n = x.getDimSize(axis);
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d < axis)
      outer *= x.getDimSize(d);
    else if (d > axis)
      inner *= x.getDimSize(d);
  p.batch = outer * inner;
  p.complexInput = isa<ComplexType>(x.getElementType());
  p.inverse = inverse;
  p.realOutput = !isa<ComplexType>(y.getElementType());
  p.dtype =
      p.complexInput ? Float32Type::get(x.getContext()) : x.getElementType();
  // config variant = "radix2" selects the FNet source's algorithm, pad_to
  // its pad-to-next-power-of-two.
  if (auto v = sig.config.getAs<StringAttr>("variant"))
    if (v.getValue() == "radix2")
      p.variant = FftVariant::Radix2;
  if (auto pad = sig.config.getAs<IntegerAttr>("pad_to"))
    p.padTo = pad.getInt();
  return p;
}

std::optional<std::string> seam::fftSiteError(const KernelSignature &sig,
                                              bool inverse) {
  int64_t outer, inner;
  auto p = paramsOf(sig, inverse, outer, inner);
  if (!p)
    return std::string("config has no valid 'axis'");
  if (sig.config.get("variant") && p->variant != FftVariant::Radix2)
    return std::string("unknown variant (the one variant is \"radix2\")");
  if (p->padTo && inverse)
    return std::string("pad_to is a forward transform's");
  if (!p->dtype.isF32() && !p->dtype.isBF16())
    return std::string("input dtype must be f32, bf16 or complex<f32>");
  return fftParamsError(*p);
}

/// The call site [..., n, ...] along `axis`. The last axis is the kernel's
/// native layout (rows of n); another axis is brought there and back by
/// transposes through SBUF into HBM scratch (the inner dims become rows).
static FailureOr<ProgramOp> buildFromSignature(OpBuilder &b, ModuleOp module,
                                               const KernelSignature &sig,
                                               StringRef name, bool inverse) {
  if (auto why = fftSiteError(sig, inverse))
    return module.emitError() << "fft kernel: " << *why;
  int64_t outer, inner;
  FftParams p = *paramsOf(sig, inverse, outer, inner);
  RankedTensorType x = sig.args[0], y = sig.results[0];
  auto inT = hbmTileFor(x), outT = hbmTileFor(y);
  if (failed(inT) || failed(outT))
    return module.emitError() << "fft kernel: unsupported element type";
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, {*inT}, {*outT});
  KernelBuilder kb(b, module.getLoc(), prog);
  int64_t inParts = p.complexInput ? 2 : 1, outParts = p.realOutput ? 1 : 2;
  auto rows = [&](Value v, int64_t parts) {
    return parts == 2 ? kb.reshape(v, {p.batch, p.n, 2})
                      : kb.reshape(v, {p.batch, p.n});
  };
  if (inner == 1) {
    emitFft(kb, p, rows(kb.arg(0), inParts), rows(kb.arg(1), outParts));
    return prog;
  }
  Type f32 = b.getF32Type();
  Value inT2 = kb.hbmScratch({p.batch, p.n * inParts}, p.dtype, "fft_in_t");
  Value outT2 = kb.hbmScratch({p.batch, p.n * outParts}, f32, "fft_out_t");
  transposeThroughSbuf(kb, kb.reshape(kb.arg(0), {outer, p.n, inner * inParts}),
                       kb.reshape(inT2, {outer, inner, p.n * inParts}), outer,
                       p.n, inner, inParts, p.dtype);
  emitFft(kb, p, rows(inT2, inParts), rows(outT2, outParts));
  transposeThroughSbuf(kb, kb.reshape(outT2, {outer, inner, p.n * outParts}),
                       kb.reshape(kb.arg(1), {outer, p.n, inner * outParts}),
                       outer, inner, p.n, outParts, f32);
  return prog;
}

FailureOr<ProgramOp> seam::buildFftKernel(OpBuilder &b, ModuleOp module,
                                          const KernelSignature &sig,
                                          StringRef name) {
  return buildFromSignature(b, module, sig, name, /*inverse=*/false);
}

FailureOr<ProgramOp> seam::buildIfftKernel(OpBuilder &b, ModuleOp module,
                                           const KernelSignature &sig,
                                           StringRef name) {
  return buildFromSignature(b, module, sig, name, /*inverse=*/true);
}
