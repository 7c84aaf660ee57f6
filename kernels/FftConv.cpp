//===- FftConv.cpp - Hyena FFT long convolution ---------------------------===//
//
// hyena-dna fftconv reference semantics:
//   u' = gelu(u * v?) (gelu only with gelu_inp)
//   y  = irfft(rfft(u', n) * rfft(k, n) / n, n, norm=forward)[:L] + u' * D[h]
//   y  = gelu(y)? * dropout[b, h]? * (gelu(q) or q)?
// with n = fft_size. The zero padding of u and k to n is the definition of
// rfft(., n) (a linear convolution), not a truncation trick; the product of
// two spectra of real sequences is Hermitian, so Re(IDFT) is the irfft.
// u' D[h] is folded into the filter: k'[0] = k[0] + D[h] (the DFT of D
// delta is D at every frequency), exact for the cyclic convolution the
// reference computes.
//
// Channels are batched into full-width matmuls (never one channel per
// matmul):
//  - n > 128 (n = n1 x n2, FftCommon.h BatchedDft): the sequences of a chunk
//    of channels are columns of A[t1, (h, t2)] (one row-major DMA per
//    channel); forward and inverse four-step transforms, both as 128-row
//    matmuls with block-diagonal DFTs for the short factor, come back to
//    A's layout without transposes. Per chunk of channels the filter
//    spectra are computed once and kept in SBUF for every batch element.
//  - n <= 128: channels on partitions (one contiguous DMA per 128
//    channels), one TE transpose each way, and one DFT matmul per direction
//    over up to 512 channels (DFT matrix stationary).
//
//===----------------------------------------------------------------------===//
#include "kernels/FftCommon.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {

/// The operands of a call, by role.
struct ConvOperands {
  Value u, k, d, v, q, mask, out;
  bool gelu = false, geluInp = false, geluQ = false;
  int64_t batch = 0, channels = 0, len = 0, filterLen = 0, n = 0;
};

/// DMA between the first `len` elements of `count` sequences of a flat
/// HBM tensor (sequence c from `start(c)`) and SBUF windows laid out as
/// rows of `cols` (`rowsAt(c, r)`: the window of r full rows of sequence c,
/// `lastAt(c, e)`: its row after them with e elements). The full rows of
/// every sequence move in one DMA loop and the partial rows in a second,
/// so that the transfers of a loop never overlap each other (ncore-schedule
/// then keeps them in flight together).
void moveSequences(KernelBuilder &kb, Value flat, int64_t count,
                   llvm::function_ref<Index(Index)> start, int64_t len,
                   int64_t cols,
                   llvm::function_ref<Value(Index, int64_t)> rowsAt,
                   llvm::function_ref<Value(Index, int64_t)> lastAt,
                   bool toHbm) {
  int64_t full = len / cols, rem = len % cols;
  auto mv = [&](Value t, Value hv) { toHbm ? kb.dma(hv, t) : kb.dma(t, hv); };
  if (full > 0)
    kb.dmaLoop(count, [&](Index c) {
      mv(rowsAt(c, full),
         kb.reshape(kb.view(flat, {full * cols}, {start(c)}), {full, cols}));
    });
  if (rem > 0)
    kb.dmaLoop(count, [&](Index c) {
      mv(lastAt(c, rem),
         kb.reshape(kb.view(flat, {rem}, {start(c) + full * cols}), {1, rem}));
    });
}

/// The tensor as one flat HBM dim.
Value flatten(KernelBuilder &kb, Value t) {
  return t ? kb.reshape(t, {KernelBuilder::tileOf(t).getNumElements()})
           : Value();
}

//===----------------------------------------------------------------------===//
// n > 128: BatchedDft over chunks of channels
//===----------------------------------------------------------------------===//

/// The n > 128 convolution: its plan (factors, tiles, chunks of channels)
/// and SBUF tiles are set up once; build() runs the chunks.
class FourStepConv {
public:
  FourStepConv(KernelBuilder &kb, const ConvOperands &o);
  /// Every chunk of channels.
  void build();

private:
  /// A chunk of `count` channels from h0: `tiles` whole tiles of channels
  /// and a last one of `rest`.
  struct Chunk {
    Index h0;
    int64_t count, tiles, rest;
  };
  using Next = llvm::function_ref<void(bool prepare)>;

  static BatchedDft::Config dftConfig(const ConvOperands &o);

  Value seqTile() { return kb.sbuf({n1, chunk, n2, 1}, f32); }
  /// Zero padding: stage 1 contracts only the rows that hold data, which the
  /// DMAs write whole except the last one of a length that n2 does not
  /// divide; the rest of that row is zeroed.
  void zeroTail(Value t, int64_t len) {
    if (len % n2 != 0)
      kb.memset(kb.view(t, {1, chunk, n2, 1}, {len / n2, 0, 0, 0}), 0.0f);
  }
  void moveChannels(Value flat, Value a, std::optional<Index> b, Index h0,
                    int64_t count, int64_t len, bool toHbm);
  Value kept(Value t, const BatchedDft::Lane &l);
  void filterSpectra(ArrayRef<BatchedDft::Lane> lanes);
  /// The columns of `seqs` channels from c0 of an A tile.
  Value cols(Value a, Index c0, int64_t seqs) {
    return kb.view(a, {n1, seqs, n2, 1}, {0, c0, 0, 0});
  }

  void runChunk(Index h0, int64_t count);
  void forEachTile(const Chunk &ch,
                   llvm::function_ref<void(Index, Index, int64_t)> body);
  void forEachTileFetched(
      const Chunk &ch, llvm::function_ref<void(Index, int64_t)> fetch,
      llvm::function_ref<void(Index, int64_t)> prepare,
      llvm::function_ref<void(Index, Index, int64_t, Next)> body);
  void fetchFilter(const Chunk &ch, Index c0, int64_t seqs) {
    moveChannels(kF, cols(ak, c0, seqs), std::nullopt, ch.h0 + c0, seqs,
                 o.filterLen, false);
  }
  void addD(Index c0, int64_t seqs) {
    Value k0 = kb.view(ak, {1, seqs, 1, 1}, {0, c0, 0, 0});
    kb.tensorTensor(AluOp::Add, k0, k0, kb.view(drow, {1, seqs}, {0, c0}));
  }
  void runBatch(const Chunk &ch, Index b);
  void broadcastMask(const Chunk &ch, Index b);
  void convolveTile(Index b, Index h0, Index c0, Index grp0, int64_t seqs,
                    Next next);

  KernelBuilder &kb;
  const ConvOperands &o;
  Type f32;
  int64_t n1, n2, ru, rk;
  BatchedDft dft;
  int64_t g, m, tileSeqs, groupsPerTile;
  bool spectraPerTile;
  int64_t chunk, chunkGroups;
  Value ak, au, ay, av, aq;
  Value kr, ki, pr, pi, drow;
  Value maskRow, maskAll, ones, maskPsum;
  Value uF, kF, vF, qF, outF;
};

BatchedDft::Config FourStepConv::dftConfig(const ConvOperands &o) {
  BatchedDft::Config cfg;
  cfg.n = o.n;
  cfg.convolution = true;
  auto factors = *fftFactors(o.n);
  int64_t n2 = factors.second;
  int64_t ru = llvm::divideCeilSigned(o.len, n2);
  cfg.inRows = ru;
  cfg.outRows = ru;
  // Chunks and tiles are whole groups but for the channels' last one.
  cfg.partialGroups = o.channels % (kNumPartitions / n2) != 0;
  return cfg;
}

FourStepConv::FourStepConv(KernelBuilder &kb, const ConvOperands &o)
    : kb(kb), o(o), f32(kb.f32()), n1(fftFactors(o.n)->first),
      n2(fftFactors(o.n)->second), ru(llvm::divideCeilSigned(o.len, n2)),
      rk(llvm::divideCeilSigned(o.filterLen, n2)), dft(kb, [&] {
        BatchedDft::Config cfg = dftConfig(o);
        cfg.dtype = f32;
        return cfg;
      }()) {
  g = dft.seqsPerGroup;
  m = dft.groupRows;
  // A tile is two lanes of two groups, or fewer groups when the channels
  // would make fewer than two tiles: the software pipeline over tiles (see
  // forEachTileFetched) needs a second tile to overlap the first one's
  // transfers.
  tileSeqs = dft.seqsPerTile();
  while (tileSeqs > g && o.channels < 2 * tileSeqs)
    tileSeqs /= 2;
  tileSeqs = std::max(g, tileSeqs / g * g);
  groupsPerTile = tileSeqs / g;
  // With one batch element the filter spectra of a tile are used once, right
  // after they are computed; otherwise a chunk keeps them for every batch
  // element (2 n1 floats per group of G channels).
  spectraPerTile = o.batch == 1;

  // Channels per chunk: A tiles of k (y reuses it) and u (v, q) at n2 floats
  // per channel per partition, and the kept filter spectra, in what the
  // budget leaves after the transform's constants and work tiles (< 32 KiB);
  // whole tiles of channels.
  int64_t perChannel =
      (2 + (o.v ? 1 : 0) + (o.q ? 1 : 0)) * n2 * 4 +
      (spectraPerTile ? 0 : llvm::divideCeilSigned(2 * n1 * 4, g));
  int64_t fit = (kKernelSbufBudgetBytes - 32 * 1024) / perChannel;
  chunk = std::min(o.channels, std::max(tileSeqs, fit / tileSeqs * tileSeqs));
  chunkGroups = llvm::divideCeilSigned(chunk, g);
  // y of a tile replaces its filter columns in `ak` once the spectra are
  // taken (every chunk zeroes the filter's padding in `ak` again).
  ak = seqTile();
  au = seqTile();
  ay = ak;
  av = o.v ? seqTile() : Value();
  aq = o.q ? seqTile() : Value();
  for (Value t : {au, av, aq})
    if (t)
      zeroTail(t, o.len);
  int64_t keptCols = spectraPerTile
                         ? BatchedDft::kLanes * BatchedDft::kGroupsPerLane * n1
                         : chunkGroups * dft.f1Cols;
  kr = kb.sbuf({m, keptCols}, f32);
  ki = kb.sbuf({m, keptCols}, f32);
  pr = kb.sbuf({m, kMatmulMaxN}, f32);
  pi = kb.sbuf({m, kMatmulMaxN}, f32);
  drow = kb.sbuf({1, chunk}, f32);
  if (o.mask) {
    maskRow = kb.sbuf({1, chunk}, f32);
    ones = kb.sbuf({1, ru}, f32);
    kb.memset(ones, 1.0f);
    maskAll = kb.sbuf({ru, chunk, 1}, f32);
    maskPsum = kb.psum({ru, std::min<int64_t>(chunk, kMatmulMaxN)});
  }
  uF = flatten(kb, o.u);
  kF = flatten(kb, o.k);
  vF = flatten(kb, o.v);
  qF = flatten(kb, o.q);
  outF = flatten(kb, o.out);
}

/// Moves sequences (b, h0 + c), c < count (of the filter when b is null),
/// between their flat HBM tensor and columns c of an A tile.
void FourStepConv::moveChannels(Value flat, Value a, std::optional<Index> b,
                                Index h0, int64_t count, int64_t len,
                                bool toHbm) {
  moveSequences(
      kb, flat, count,
      [&](Index c) { return (b ? *b * o.channels + h0 + c : h0 + c) * len; },
      len, n2,
      [&](Index c, int64_t r) {
        return kb.view(a, {r, 1, n2, 1}, {0, c, 0, 0});
      },
      [&](Index c, int64_t e) {
        return kb.view(a, {1, 1, e, 1}, {len / n2, c, 0, 0});
      },
      toHbm);
}

/// The kept spectra of a lane: per tile at the lane's columns, else at its
/// groups' columns of the chunk.
Value FourStepConv::kept(Value t, const BatchedDft::Lane &l) {
  int64_t w = l.groups * dft.f1Cols;
  if (spectraPerTile)
    return kb.view(t, {m, w}, {0, l.index * BatchedDft::kGroupsPerLane * n1});
  return kb.view(t, {m, w}, {0, l.group0 * dft.f1Cols});
}

void FourStepConv::filterSpectra(ArrayRef<BatchedDft::Lane> lanes) {
  for (auto &l : lanes)
    dft.stage1(l, ak, rk);
  for (auto &l : lanes)
    dft.twiddle(l);
  for (auto &l : lanes)
    dft.stage3(l);
  for (auto &l : lanes) {
    kb.copy(kept(kr, l), dft.spectrumRe(l));
    kb.copy(kept(ki, l), dft.spectrumIm(l));
  }
}

void FourStepConv::forEachTile(
    const Chunk &ch, llvm::function_ref<void(Index, Index, int64_t)> body) {
  kb.forRange(ch.tiles, [&](Index t) {
    body(t * tileSeqs, t * groupsPerTile, tileSeqs);
  });
  if (ch.rest > 0)
    body(Index(ch.tiles * tileSeqs), Index(ch.tiles * groupsPerTile), ch.rest);
}

/// The same over a software pipeline: tile t's `body` calls next(false)
/// once it has read its inputs (after stage 1), which issues the transfers
/// in of tile t + 1 (`fetch`, DMA only), and next(true) late in its
/// Vector-engine work (after the inverse twiddles), which prepares tile
/// t + 1's inputs (`prepare`: D into the filter, the input gates). The
/// transfers are then queued before tile t's stores and arrive while it is
/// transformed, and tile t + 1's first matmul waits for no elementwise op
/// queued behind tile t's last ones. In program order the fetch follows
/// every read of tile t's inputs and the preparation its fetch, so that the
/// schedule's same-iteration waits are the true ones.
void FourStepConv::forEachTileFetched(
    const Chunk &ch, llvm::function_ref<void(Index, int64_t)> fetch,
    llvm::function_ref<void(Index, int64_t)> prepare,
    llvm::function_ref<void(Index, Index, int64_t, Next)> body) {
  int64_t tiles = ch.tiles, rest = ch.rest;
  int64_t all = tiles + (rest > 0 ? 1 : 0);
  auto seqsOf = [&](int64_t t) { return t < tiles ? tileSeqs : rest; };
  fetch(Index(0), seqsOf(0));
  prepare(Index(0), seqsOf(0));
  if (tiles > 1)
    kb.forRange(tiles - 1, [&](Index t) {
      body(t * tileSeqs, t * groupsPerTile, tileSeqs, [&](bool prep) {
        Index c1 = (t + 1) * tileSeqs;
        prep ? prepare(c1, tileSeqs) : fetch(c1, tileSeqs);
      });
    });
  for (int64_t t = std::max<int64_t>(tiles - 1, 0); t < all; ++t)
    body(Index(t * tileSeqs), Index(t * groupsPerTile), seqsOf(t),
         [&](bool prep) {
           if (t + 1 >= all)
             return;
           Index c1((t + 1) * tileSeqs);
           prep ? prepare(c1, seqsOf(t + 1)) : fetch(c1, seqsOf(t + 1));
         });
}

void FourStepConv::runChunk(Index h0, int64_t count) {
  int64_t tiles = count / tileSeqs, rest = count - tiles * tileSeqs;
  Chunk ch{h0, count, tiles, rest};
  // Filter of channels [c0, c0 + seqs): k'[0] = k[0] + D[h]. With the
  // spectra per tile, each tile loads its own channels (the DMAs of tile
  // t + 1 overlap the transforms of tile t), else the chunk's at once.
  zeroTail(ak, o.filterLen);
  kb.dma(kb.view(drow, {1, count}, {0, 0}),
         kb.reshape(kb.view(o.d, {count}, {h0}), {1, count}));
  if (!spectraPerTile) {
    fetchFilter(ch, Index(0), count);
    addD(Index(0), count);
    forEachTile(ch, [&](Index c0, Index grp0, int64_t seqs) {
      filterSpectra(dft.lanes(c0, grp0, seqs));
    });
  }
  kb.forRange(o.batch, [&](Index b) { runBatch(ch, b); });
}

/// mask[b, h0 + c] on each of the ru rows: a rank-1 TE broadcast.
void FourStepConv::broadcastMask(const Chunk &ch, Index b) {
  kb.dma(kb.view(maskRow, {1, ch.count}, {0, 0}),
         kb.view(o.mask, {1, ch.count}, {b, ch.h0}));
  for (int64_t c = 0; c < ch.count; c += kMatmulMaxN) {
    int64_t w = std::min<int64_t>(kMatmulMaxN, ch.count - c);
    Value acc = kb.view(maskPsum, {ru, w}, {0, 0});
    kb.matmul(acc, ones, kb.view(maskRow, {1, w}, {0, c}));
    kb.copy(kb.view(maskAll, {ru, w, 1}, {0, c, 0}), acc);
  }
}

void FourStepConv::runBatch(const Chunk &ch, Index b) {
  Index h0 = ch.h0;
  // u' = gelu(u v) in A's layout, a tile of channels at a time (loaded
  // while the previous tile is transformed).
  auto fetch = [&](Index c0, int64_t seqs) {
    if (spectraPerTile)
      fetchFilter(ch, c0, seqs);
    moveChannels(uF, cols(au, c0, seqs), b, h0 + c0, seqs, o.len, false);
    if (av)
      moveChannels(vF, cols(av, c0, seqs), b, h0 + c0, seqs, o.len, false);
    if (aq)
      moveChannels(qF, cols(aq, c0, seqs), b, h0 + c0, seqs, o.len, false);
  };
  auto prepareInputs = [&](Index c0, int64_t seqs) {
    auto rows = [&](Value a) {
      return kb.view(a, {ru, seqs, n2, 1}, {0, c0, 0, 0});
    };
    if (av)
      kb.tensorTensor(AluOp::Multiply, rows(au), rows(au), rows(av));
    if (o.geluInp)
      kb.activation(ActFunc::Gelu, rows(au), rows(au));
    if (aq && o.geluQ)
      kb.activation(ActFunc::Gelu, rows(aq), rows(aq));
  };
  if (o.mask)
    broadcastMask(ch, b);
  auto prepare = [&](Index c0, int64_t seqs) {
    if (spectraPerTile)
      addD(c0, seqs);
    prepareInputs(c0, seqs);
  };
  forEachTileFetched(ch, fetch, prepare,
                     [&](Index c0, Index grp0, int64_t seqs, Next next) {
                       convolveTile(b, h0, c0, grp0, seqs, next);
                     });
}

/// One tile of channels of batch element b: forward transform, P = U K',
/// inverse transform, the output gates, y back to HBM.
void FourStepConv::convolveTile(Index b, Index h0, Index c0, Index grp0,
                                int64_t seqs, Next next) {
  auto lanes = dft.lanes(c0, grp0, seqs);
  if (spectraPerTile)
    filterSpectra(lanes);
  for (auto &l : lanes)
    dft.stage1(l, au);
  next(/*prepare=*/false);
  for (auto &l : lanes)
    dft.twiddle(l);
  for (auto &l : lanes)
    dft.stage3(l);
  // P = U K'.
  auto half = [&](Value t, const BatchedDft::Lane &l) {
    return kb.view(t, {m, l.groups * dft.f1Cols},
                   {0, l.index * BatchedDft::kGroupsPerLane * n1});
  };
  for (auto &l : lanes)
    dft.complexMultiply(l, m, half(pr, l), half(pi, l), dft.spectrumRe(l),
                        dft.spectrumIm(l), kept(kr, l), kept(ki, l));
  for (auto &l : lanes)
    dft.inverse1(l, half(pr, l), half(pi, l));
  for (auto &l : lanes)
    dft.inverseTwiddle(l);
  next(/*prepare=*/true);
  for (auto &l : lanes)
    dft.inverse3(l);
  for (auto &l : lanes) {
    int64_t lseqs = (l.groups - 1) * g + l.lastSeqs;
    Value yv = kb.view(ay, {ru, lseqs, n2, 1}, {0, l.seq0, 0, 0});
    Value res = kb.view(dft.output(l), {ru, lseqs * n2}, {0, 0});
    if (o.gelu)
      kb.activation(ActFunc::Gelu, yv, res);
    else
      kb.copy(yv, res);
    if (o.mask)
      kb.tensorTensor(
          AluOp::Multiply, yv, yv,
          kb.view(maskAll, {ru, lseqs, n2}, {0, l.seq0, 0}, {1, 1, 0}));
    if (aq)
      kb.tensorTensor(AluOp::Multiply, yv, yv,
                      kb.view(aq, {ru, lseqs, n2, 1}, {0, l.seq0, 0, 0}));
  }
  // y of the tile leaves while the next tile is transformed.
  moveChannels(outF, cols(ay, c0, seqs), b, h0 + c0, seqs, o.len, true);
}

void FourStepConv::build() {
  int64_t chunks = o.channels / chunk;
  kb.forRange(chunks, [&](Index i) { runChunk(i * chunk, chunk); });
  if (int64_t rest = o.channels - chunks * chunk)
    runChunk(Index(chunks * chunk), rest);
}

void buildFourStepConv(KernelBuilder &kb, const ConvOperands &o) {
  FourStepConv(kb, o).build();
}

//===----------------------------------------------------------------------===//
// n <= 128: one DFT matmul per direction over up to 512 channels
//===----------------------------------------------------------------------===//

void buildSingleConv(KernelBuilder &kb, const ConvOperands &o) {
  Type f32 = kb.f32();
  int64_t n = o.n, l = o.len, lk = o.filterLen;
  constexpr int64_t kBlock = 128, kChunk = 512;
  auto load = [&](int64_t rows, int64_t cols, const ConstantSpec &spec) {
    Value t = kb.sbuf({rows, cols}, f32);
    kb.dma(t, kb.constant(spec, f32));
    return t;
  };
  // X[f] = sum_t x[t] (cos - i sin); y[t] = sum_f (Pr cos - Pi sin) / n.
  Value fc = load(n, n, ConstantSpec::cos(n, n, n));
  Value fs = load(n, n, ConstantSpec::sin(n, n, n, -1.0));
  Value ic = load(n, n, ConstantSpec::cos(n, n, n, 1.0 / double(n)));
  Value is = load(n, n, ConstantSpec::sin(n, n, n, -1.0 / double(n)));
  int64_t chunk = std::min(o.channels, kChunk);
  int64_t rows = std::min(o.channels, kBlock);
  Value kn = kb.sbuf({rows, lk}, f32), un = kb.sbuf({rows, l}, f32);
  Value vn = o.v ? kb.sbuf({rows, l}, f32) : Value();
  Value qn = o.q ? kb.sbuf({rows, l}, f32) : Value();
  Value yn = kb.sbuf({rows, l}, f32), mcol = kb.sbuf({rows, 1}, f32);
  Value ak = kb.sbuf({lk, chunk}, f32), au = kb.sbuf({l, chunk}, f32);
  Value ksr = kb.sbuf({n, chunk}, f32), ksi = kb.sbuf({n, chunk}, f32);
  Value pr = kb.sbuf({n, chunk}, f32), pi = kb.sbuf({n, chunk}, f32);
  Value ys = kb.sbuf({l, chunk}, f32), drow = kb.sbuf({1, chunk}, f32);
  SmallVector<Value, 4> tmp;
  for (int i = 0; i < 4; ++i)
    tmp.push_back(kb.sbuf({n, chunk}, f32));
  Value tp = kb.psum({kBlock, kBlock});
  Value xr = kb.psum({n, chunk}), xi = kb.psum({n, chunk});
  Value yp = kb.psum({l, chunk});

  // Sequences as rows [B H, L].
  auto rows2d = [&](Value t) {
    return t ? kb.reshape(t, {o.batch * o.channels, l}) : Value();
  };
  Value uR = rows2d(o.u), vR = rows2d(o.v), qR = rows2d(o.q);
  Value outR = rows2d(o.out);
  Value maskF = o.mask ? flatten(kb, o.mask) : Value();
  auto runChunk = [&](Index h0, int64_t count) {
    int64_t nblk = llvm::divideCeilSigned(count, kBlock);
    auto blockRows = [&](int64_t s) {
      return std::min<int64_t>(kBlock, count - s * kBlock);
    };
    // Filter columns k'[:, c] (k'[0] += D), spectra K' = F k'.
    for (int64_t s = 0; s < nblk; ++s) {
      int64_t r = blockRows(s);
      Value kv = kb.view(kn, {r, lk}, {0, 0});
      kb.dma(kv, kb.view(o.k, {r, lk}, {h0 + s * kBlock, 0}));
      Value t = kb.view(tp, {lk, r}, {0, 0});
      kb.transpose(t, kv);
      kb.copy(kb.view(ak, {lk, r}, {0, s * kBlock}), t);
    }
    kb.dma(kb.view(drow, {1, count}, {0, 0}),
           kb.reshape(kb.view(o.d, {count}, {h0}), {1, count}));
    Value k0 = kb.view(ak, {1, count}, {0, 0});
    kb.tensorTensor(AluOp::Add, k0, k0, kb.view(drow, {1, count}, {0, 0}));
    Value akv = kb.view(ak, {lk, count}, {0, 0});
    kb.matmul(kb.view(xr, {n, count}, {0, 0}), kb.view(fc, {lk, n}, {0, 0}),
              akv);
    kb.matmul(kb.view(xi, {n, count}, {0, 0}), kb.view(fs, {lk, n}, {0, 0}),
              akv);
    kb.copy(kb.view(ksr, {n, count}, {0, 0}), kb.view(xr, {n, count}, {0, 0}));
    kb.copy(kb.view(ksi, {n, count}, {0, 0}), kb.view(xi, {n, count}, {0, 0}));

    kb.loop(o.batch, [&](Index b) {
      for (int64_t s = 0; s < nblk; ++s) {
        int64_t r = blockRows(s);
        Index h = h0 + s * kBlock;
        Value uv = kb.view(un, {r, l}, {0, 0});
        Index row = b * o.channels + h;
        kb.dma(uv, kb.view(uR, {r, l}, {row, 0}));
        if (vn) {
          Value vv = kb.view(vn, {r, l}, {0, 0});
          kb.dma(vv, kb.view(vR, {r, l}, {row, 0}));
          kb.tensorTensor(AluOp::Multiply, uv, uv, vv);
        }
        if (o.geluInp)
          kb.activation(ActFunc::Gelu, uv, uv);
        Value t = kb.view(tp, {l, r}, {0, 0});
        kb.transpose(t, uv);
        kb.copy(kb.view(au, {l, r}, {0, s * kBlock}), t);
      }
      Value auv = kb.view(au, {l, count}, {0, 0});
      Value ur = kb.view(xr, {n, count}, {0, 0});
      Value ui = kb.view(xi, {n, count}, {0, 0});
      kb.matmul(ur, kb.view(fc, {l, n}, {0, 0}), auv);
      kb.matmul(ui, kb.view(fs, {l, n}, {0, 0}), auv);
      // P = U K'.
      auto c = [&](Value v) { return kb.view(v, {n, count}, {0, 0}); };
      kb.tensorTensor(AluOp::Multiply, c(tmp[0]), ur, c(ksr));
      kb.tensorTensor(AluOp::Multiply, c(tmp[1]), ui, c(ksi));
      kb.tensorTensor(AluOp::Subtract, c(pr), c(tmp[0]), c(tmp[1]));
      kb.tensorTensor(AluOp::Multiply, c(tmp[2]), ur, c(ksi));
      kb.tensorTensor(AluOp::Multiply, c(tmp[3]), ui, c(ksr));
      kb.tensorTensor(AluOp::Add, c(pi), c(tmp[2]), c(tmp[3]));
      Value y = kb.view(yp, {l, count}, {0, 0});
      kb.matmul(y, kb.view(ic, {n, l}, {0, 0}), c(pr));
      kb.matmul(y, kb.view(is, {n, l}, {0, 0}), c(pi), /*accumulate=*/true);
      kb.copy(kb.view(ys, {l, count}, {0, 0}), y);
      for (int64_t s = 0; s < nblk; ++s) {
        int64_t r = blockRows(s);
        Index h = h0 + s * kBlock;
        Value t = kb.view(tp, {r, l}, {0, 0});
        kb.transpose(t, kb.view(ys, {l, r}, {0, s * kBlock}));
        Value yv = kb.view(yn, {r, l}, {0, 0});
        if (o.gelu)
          kb.activation(ActFunc::Gelu, yv, t);
        else
          kb.copy(yv, t);
        if (o.mask) {
          Value mc = kb.view(mcol, {r, 1}, {0, 0});
          kb.dma(mc,
                 kb.reshape(kb.view(maskF, {r}, {b * o.channels + h}), {r, 1}));
          kb.tensorScalar(AluOp::Multiply, yv, yv, mc);
        }
        if (qn) {
          Value qv = kb.view(qn, {r, l}, {0, 0});
          kb.dma(qv, kb.view(qR, {r, l}, {b * o.channels + h, 0}));
          if (o.geluQ)
            kb.activation(ActFunc::Gelu, qv, qv);
          kb.tensorTensor(AluOp::Multiply, yv, yv, qv);
        }
        kb.dma(kb.view(outR, {r, l}, {b * o.channels + h, 0}), yv);
      }
    });
  };
  int64_t chunks = o.channels / chunk;
  if (chunks == 1)
    runChunk(Index(0), chunk);
  else
    kb.loop(chunks, [&](Index i) { runChunk(i * chunk, chunk); });
  if (int64_t rest = o.channels - chunks * chunk)
    runChunk(Index(chunks * chunk), rest);
}

} // namespace

FailureOr<ProgramOp> seam::buildFftconvKernel(OpBuilder &b, ModuleOp module,
                                              const KernelSignature &sig,
                                              StringRef name) {
  RankedTensorType u = sig.args[0], kT = sig.args[1];
  auto cfgInt = [&](StringRef key, int64_t dflt) {
    auto a = sig.config ? sig.config.getAs<IntegerAttr>(key) : IntegerAttr();
    return a ? a.getInt() : dflt;
  };
  auto has = [&](StringRef key) { return sig.config && sig.config.get(key); };
  ConvOperands o;
  o.n = cfgInt("fft_size", 0);
  o.batch = u.getDimSize(0);
  o.channels = u.getDimSize(1);
  o.len = u.getDimSize(2);
  o.filterLen = kT.getDimSize(1);
  if (u.getElementType() != b.getF32Type())
    return module.emitError() << "fftconv kernel: f32 only";
  auto factors = fftFactors(o.n);
  if (!factors || o.filterLen > o.n || o.len > o.n)
    return module.emitError()
           << "fftconv kernel: fft_size " << o.n << " / filter length "
           << o.filterLen << " not built";
  // Optional operands after (u, k, d) (fftconvOperands).
  FftconvOperands roles = fftconvOperands(sig);
  int vIdx = roles.v, qIdx = roles.q, maskIdx = roles.mask;

  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, sig);
  KernelBuilder kb(b, module.getLoc(), prog);
  o.u = kb.arg(0);
  o.k = kb.arg(1);
  o.d = kb.arg(2);
  o.out = kb.arg(sig.args.size());
  if (vIdx >= 0)
    o.v = kb.arg(vIdx);
  if (qIdx >= 0)
    o.q = kb.arg(qIdx);
  if (maskIdx >= 0)
    o.mask = kb.arg(maskIdx);
  o.gelu = has("gelu");
  o.geluInp = has("gelu_inp");
  o.geluQ = has("gelu_q");
  if (factors->second == 1)
    buildSingleConv(kb, o);
  else
    buildFourStepConv(kb, o);
  return prog;
}
