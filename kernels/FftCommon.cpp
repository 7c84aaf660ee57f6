//===- FftCommon.cpp - DFT matmul stages shared by the FFT kernels --------===//
#include "kernels/FftCommon.h"
#include "kernels/Kernels.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

DftMatrices DftMatrices::load(KernelBuilder &kb, int64_t n, bool inverse,
                              double scale, Type dtype) {
  double sigma = inverse ? 1.0 : -1.0;
  DftMatrices m;
  auto ld = [&](const ConstantSpec &spec) {
    Value t = kb.sbuf({n, n}, dtype);
    kb.dma(t, kb.constant(spec, dtype));
    return t;
  };
  m.c = ld(ConstantSpec::cos(n, n, n, scale));
  m.s = ld(ConstantSpec::sin(n, n, n, sigma * scale));
  m.ns = ld(ConstantSpec::sin(n, n, n, -sigma * scale));
  return m;
}

//===----------------------------------------------------------------------===//
// BatchedDft
//===----------------------------------------------------------------------===//

Value BatchedDft::load(ArrayRef<int64_t> shape, const ConstantSpec &spec,
                       Type type) {
  Attribute key = ArrayAttr::get(
      kb.context(), {spec.toAttr(kb.context()), TypeAttr::get(type)});
  Value &t = loaded[key];
  if (!t) {
    t = kb.sbuf(shape, type);
    kb.dma(t, kb.constant(spec, type));
  }
  return t;
}

BatchedDft::BatchedDft(KernelBuilder &kb, const Config &config)
    : kb(kb), cfg(config) {
  auto f = fftFactors(cfg.n);
  assert(f && f->second > 1 && "a two-factor size");
  n1 = f->first;
  n2 = f->second;
  if (cfg.inRows <= 0)
    cfg.inRows = n1;
  if (cfg.outRows <= 0)
    cfg.outRows = n1;
  bool hermitian = cfg.convolution && !cfg.complexInput && n1 % 2 == 0;
  f1Cols = hermitian ? n1 / 2 + 1 : n1;
  seqsPerGroup = kNumPartitions / n2;
  groupRows = seqsPerGroup * n2;
  Type f32 = kb.f32();
  Type dt = cfg.dtype;
  int64_t m = groupRows, n = cfg.n;
  double sigma = cfg.inverse ? 1.0 : -1.0;
  // Stage 1: F_n1 (the moving operand, rows = contraction).
  c1 = load({n1, n1}, ConstantSpec::cos(n1, n1, n1), dt);
  s1 = load({n1, n1}, ConstantSpec::sin(n1, n1, n1, sigma), dt);
  if (cfg.complexInput)
    ns1 = load({n1, n1}, ConstantSpec::sin(n1, n1, n1, -sigma), dt);
  // Twiddles W_N^(t2 f1) at [(g, t2), f1].
  twr = load({m, 1, n1}, ConstantSpec::cos(m, n1, n).periodic(n2, 0), f32);
  twi =
      load({m, 1, n1}, ConstantSpec::sin(m, n1, n, sigma).periodic(n2, 0), f32);
  // Stage 3: I_G (x) F_n2, times the transform's scale.
  double sc = cfg.scale;
  bdc = load({m, m}, ConstantSpec::cos(m, m, n2, sc).blocks(n2, n2), dt);
  bds =
      load({m, m}, ConstantSpec::sin(m, m, n2, sigma * sc).blocks(n2, n2), dt);
  bdns =
      load({m, m}, ConstantSpec::sin(m, m, n2, -sigma * sc).blocks(n2, n2), dt);
  br = kb.psum({kNumPartitions, kMatmulMaxN});
  bi = kb.psum({kNumPartitions, kMatmulMaxN});
  dr = kb.psum({kNumPartitions, kMatmulMaxN});
  di = kb.psum({kNumPartitions, kMatmulMaxN});
  cr = kb.sbuf({kNumPartitions, kMatmulMaxN}, dt);
  ci = kb.sbuf({kNumPartitions, kMatmulMaxN}, dt);
  for (int i = 0; i < 4; ++i)
    tmp.push_back(kb.sbuf({kNumPartitions, kMatmulMaxN}, f32));
  if (cfg.partialGroups) {
    zeros = kb.sbuf({1, kMatmulMaxN}, dt);
    kb.memset(zeros, 0.0f);
  }
  if (!cfg.convolution)
    return;
  assert(dt == f32 && "the convolution stages are fp32");
  // Inverse (sigma = +1): the forward's matrices when the forward is not
  // scaled; the 1/N in the twiddles.
  ibdc = load({m, m}, ConstantSpec::cos(m, m, n2).blocks(n2, n2), f32);
  ibds = load({m, m}, ConstantSpec::sin(m, m, n2, 1.0).blocks(n2, n2), f32);
  ibdns = load({m, m}, ConstantSpec::sin(m, m, n2, -1.0).blocks(n2, n2), f32);
  double inv = 1.0 / double(n);
  if (hermitian) {
    // The half sum's weights: 2 / N, and 1 / N on the self-paired rows
    // f1 = 0 and f1 = n1 / 2 (halved once, on the Vector engine).
    iwr = load({n1, 1, n2}, ConstantSpec::cos(n1, n2, n, 2.0 * inv), f32);
    iwi = load({n1, 1, n2}, ConstantSpec::sin(n1, n2, n, 2.0 * inv), f32);
    for (Value t : {iwr, iwi})
      for (int64_t row : {int64_t(0), n1 / 2}) {
        Value r = kb.view(t, {1, 1, n2}, {row, 0, 0});
        kb.tensorScalar(AluOp::Multiply, r, r, 0.5);
      }
  } else {
    iwr = load({n1, 1, n2}, ConstantSpec::cos(n1, n2, n, inv), f32);
    iwi = load({n1, 1, n2}, ConstantSpec::sin(n1, n2, n, inv), f32);
  }
  ic1 = load({n1, n1}, ConstantSpec::cos(n1, n1, n1), f32);
  ins1 = load({n1, n1}, ConstantSpec::sin(n1, n1, n1, -1.0), f32);
  y = kb.psum({kNumPartitions, kMatmulMaxN});
}

SmallVector<BatchedDft::Lane, 2> BatchedDft::lanes(Index seq0, Index group0,
                                                   int64_t seqs) const {
  SmallVector<Lane, 2> out;
  int64_t groups = (seqs + seqsPerGroup - 1) / seqsPerGroup;
  for (unsigned i = 0; i < kLanes && groups > 0; ++i) {
    Lane l;
    l.index = i;
    l.groups = std::min<int64_t>(groups, kGroupsPerLane);
    l.group0 = group0 + int64_t(i) * kGroupsPerLane;
    l.seq0 = seq0 + int64_t(i) * kGroupsPerLane * seqsPerGroup;
    groups -= l.groups;
    int64_t before = int64_t(i) * kGroupsPerLane * seqsPerGroup;
    l.lastSeqs = std::min<int64_t>(
        seqs - before - (l.groups - 1) * seqsPerGroup, seqsPerGroup);
    out.push_back(l);
  }
  return out;
}

Value BatchedDft::half(Value t, const Lane &, int64_t rows, int64_t col,
                       int64_t width) {
  return kb.view(t, {rows, width}, {0, col});
}

void BatchedDft::stage1(const Lane &l, Value a, int64_t rows) {
  int64_t k = rows > 0 ? rows : cfg.inRows;
  int64_t w = f1Cols;
  Value cv = kb.view(c1, {k, w}, {0, 0});
  Value sv = kb.view(s1, {k, w}, {0, 0});
  Value nsv = ns1 ? kb.view(ns1, {k, w}, {0, 0}) : Value();
  for (int64_t j = 0; j < l.groups; ++j) {
    int64_t seqs = seqsOf(l, j), m = seqs * n2;
    int64_t col = colB(l) + j * w;
    Value pr = kb.view(br, {m, w}, {0, col});
    Value pi = kb.view(bi, {m, w}, {0, col});
    Index s = l.seq0 + j * seqsPerGroup;
    Value re = kb.view(a, {k, seqs, n2, 1}, {0, s, 0, 0});
    kb.matmul(pr, re, cv);
    if (cfg.complexInput) {
      Value im = kb.view(a, {k, seqs, n2, 1}, {0, s, 0, 1});
      kb.matmul(pr, im, nsv, /*accumulate=*/true);
      kb.matmul(pi, re, sv);
      kb.matmul(pi, im, cv, /*accumulate=*/true);
    } else {
      kb.matmul(pi, re, sv);
    }
    if (m < groupRows) {
      // The absent sequences' rows: zeros (Config::partialGroups), as a
      // rank-1 product of zeros (only the Tensor engine writes PSUM), in
      // pieces of at most 64 partitions (a tile of more must start at
      // partition 0).
      assert(zeros && "Config::partialGroups for a partial group");
      Value zm = kb.view(zeros, {1, w}, {0, 0});
      for (int64_t r0 = m; r0 < groupRows;) {
        int64_t r1 = r0 < kMaxOffsetPartitions
                         ? std::min(groupRows, kMaxOffsetPartitions)
                         : groupRows;
        Value zs = kb.view(zeros, {1, r1 - r0}, {0, 0});
        kb.matmul(kb.view(br, {r1 - r0, w}, {r0, col}), zs, zm);
        kb.matmul(kb.view(bi, {r1 - r0, w}, {r0, col}), zs, zm);
        r0 = r1;
      }
    }
  }
}

void BatchedDft::complexMultiply(const Lane &l, int64_t rows, Value zr,
                                 Value zi, Value ar, Value ai, Value bRe,
                                 Value bIm) {
  int64_t w = cast<TileType>(zr.getType()).getShape()[1];
  int64_t col = l.index * (kMatmulMaxN / kLanes);
  SmallVector<Value, 4> t;
  for (Value v : tmp)
    t.push_back(kb.view(v, {rows, w}, {0, col}));
  kb.tensorTensor(AluOp::Multiply, t[0], ar, bRe);
  kb.tensorTensor(AluOp::Multiply, t[1], ai, bIm);
  kb.tensorTensor(AluOp::Subtract, zr, t[0], t[1]);
  kb.tensorTensor(AluOp::Multiply, t[2], ar, bIm);
  kb.tensorTensor(AluOp::Multiply, t[3], ai, bRe);
  kb.tensorTensor(AluOp::Add, zi, t[2], t[3]);
}

void BatchedDft::twiddle(const Lane &l) {
  int64_t m = groupRows, w = widthB(l), col = colB(l);
  // The same twiddles for every group: a zero stride over the groups.
  auto tw = [&](Value t) {
    return kb.view(t, {m, l.groups, f1Cols}, {0, 0, 0}, {1, 0, 1});
  };
  complexMultiply(l, m, half(cr, l, m, col, w), half(ci, l, m, col, w),
                  half(br, l, m, col, w), half(bi, l, m, col, w), tw(twr),
                  tw(twi));
}

void BatchedDft::stage3(const Lane &l) {
  int64_t m = groupRows, w = widthB(l), col = colB(l);
  Value zr = half(dr, l, m, col, w), zi = half(di, l, m, col, w);
  Value xr = half(cr, l, m, col, w), xi = half(ci, l, m, col, w);
  kb.matmul(zr, bdc, xr);
  kb.matmul(zr, bdns, xi, /*accumulate=*/true);
  kb.matmul(zi, bds, xr);
  kb.matmul(zi, bdc, xi, /*accumulate=*/true);
}

Value BatchedDft::spectrumRe(const Lane &l) {
  return half(dr, l, groupRows, colB(l), widthB(l));
}

Value BatchedDft::spectrumIm(const Lane &l) {
  return half(di, l, groupRows, colB(l), widthB(l));
}

void BatchedDft::inverse1(const Lane &l, Value pr, Value pi) {
  int64_t m = groupRows, w = f1Cols;
  for (int64_t j = 0; j < l.groups; ++j) {
    int64_t col = colE(l) + j * m;
    Value er = kb.view(br, {w, m}, {0, col});
    Value ei = kb.view(bi, {w, m}, {0, col});
    Value sr = kb.view(pr, {m, w}, {0, j * w});
    Value si = kb.view(pi, {m, w}, {0, j * w});
    kb.matmul(er, sr, ibdc);
    kb.matmul(er, si, ibdns, /*accumulate=*/true);
    kb.matmul(ei, sr, ibds);
    kb.matmul(ei, si, ibdc, /*accumulate=*/true);
  }
}

void BatchedDft::inverseTwiddle(const Lane &l) {
  int64_t w = widthE(l), col = colE(l), rows = f1Cols;
  // Winv depends on t' only: a zero stride over (j, g).
  auto tw = [&](Value t) {
    return kb.view(t, {rows, l.groups * seqsPerGroup, n2}, {0, 0, 0},
                   {1, 0, 1});
  };
  complexMultiply(l, rows, half(cr, l, rows, col, w), half(ci, l, rows, col, w),
                  half(br, l, rows, col, w), half(bi, l, rows, col, w), tw(iwr),
                  tw(iwi));
}

void BatchedDft::inverse3(const Lane &l) {
  int64_t w = widthE(l), col = colE(l), r = cfg.outRows, k = f1Cols;
  Value out = half(y, l, r, col, w);
  kb.matmul(out, kb.view(ic1, {k, r}, {0, 0}), half(cr, l, k, col, w));
  kb.matmul(out, kb.view(ins1, {k, r}, {0, 0}), half(ci, l, k, col, w),
            /*accumulate=*/true);
}

Value BatchedDft::output(const Lane &l) {
  return half(y, l, cfg.outRows, colE(l), widthE(l));
}

//===----------------------------------------------------------------------===//
// FourStepDft
//===----------------------------------------------------------------------===//

FourStepDft::FourStepDft(KernelBuilder &kb, int64_t n1, int64_t n2,
                         bool inverse, double scale, Type dtype)
    : n1(n1), n2(n2), dtype(dtype), kb(kb) {
  int64_t n = n1 * n2;
  Type f32 = kb.f32();
  m1 = DftMatrices::load(kb, n1, inverse, 1.0, dtype);
  m2 = DftMatrices::load(kb, n2, inverse, scale, dtype);
  double sigma = inverse ? 1.0 : -1.0;
  twr = kb.sbuf({n2, n1}, f32);
  twi = kb.sbuf({n2, n1}, f32);
  kb.dma(twr, kb.constant(ConstantSpec::cos(n2, n1, n), f32));
  kb.dma(twi, kb.constant(ConstantSpec::sin(n2, n1, n, sigma), f32));
  br = kb.psum({n2, n1});
  bi = kb.psum({n2, n1});
  dr = kb.psum({n2, n1});
  di = kb.psum({n2, n1});
  cr = kb.sbuf({n2, n1}, dtype);
  ci = kb.sbuf({n2, n1}, dtype);
  tmpA = kb.sbuf({n2, n1}, f32);
  tmpB = kb.sbuf({n2, n1}, f32);
}

void FourStepDft::run(Value ar, Value ai) {
  // Stage 1: DFT over n1, data stationary -> transposed output [n2, k1].
  kb.matmul(br, ar, m1.c);
  if (ai)
    kb.matmul(br, ai, m1.ns, /*accumulate=*/true);
  kb.matmul(bi, ar, m1.s);
  if (ai)
    kb.matmul(bi, ai, m1.c, /*accumulate=*/true);
  // Stage 2: twiddles W_N^(n2 k1) (fp32 on the Vector engine).
  kb.tensorTensor(AluOp::Multiply, tmpA, br, twr);
  kb.tensorTensor(AluOp::Multiply, tmpB, bi, twi);
  kb.tensorTensor(AluOp::Subtract, cr, tmpA, tmpB);
  kb.tensorTensor(AluOp::Multiply, tmpA, br, twi);
  kb.tensorTensor(AluOp::Multiply, tmpB, bi, twr);
  kb.tensorTensor(AluOp::Add, ci, tmpA, tmpB);
  // Stage 3: DFT over n2, the DFT matrix stationary.
  kb.matmul(dr, m2.c, cr);
  kb.matmul(dr, m2.ns, ci, /*accumulate=*/true);
  kb.matmul(di, m2.s, cr);
  kb.matmul(di, m2.c, ci, /*accumulate=*/true);
}
