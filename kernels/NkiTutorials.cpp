//===- NkiTutorials.cpp - the NKI tutorials' kernels, for validation ------===//
//
// The kernels of two AWS tutorials that publish neuron-profile figures
// measured on hardware, rebuilt with KernelBuilder after the tutorials' loop
// structures, tiling and engine choices (facts, not code, carried over):
//
//  - matmul (aws-neuron-sdk nki/guides/tutorials/kernel-optimization.rst):
//    result[M, N] = lhsT[K, M]^T rhs[K, N], the contraction K on the
//    partitions, 128 x 128 stationary and 128 x 512 moving tiles, the K loop
//    accumulating in one PSUM bank.
//      v2  tiled; both tiles loaded in the innermost (k) loop;
//      v3  the lhsT column of tiles loaded once per m, the rhs column once
//          per n (hoisted loads);
//      v4  M and N blocked by 2 x 2 (the rhs column of a block reused by two
//          m tiles);
//      v5  M, N, K blocked by 16 x 2 x 8 (meta-parameters), each K block's
//          PSUM partial sum added into an SBUF accumulator by the Vector
//          engine (tensor_tensor), the result stored once per N block.
//  - fused Mamba (nki/guides/tutorials/fused_mamba.rst, examples/fused_mamba):
//    out[b, c, s] = sum over states n of C[b, n, s] * h_n[b, c, s] with the
//    scan h_n[s] = exp(delta A[c, n]) h_n[s - 1] + delta u B[b, n, s].
//      v1  loops batch, state, channel tile; delta and u reloaded for every
//          state;
//      v2  loops reordered (channel tile, then state) and fused: delta and u
//          loaded once per channel tile, one accumulator tile;
//      v3  v2 with seq_len tiled by 512, the scan carried across tiles
//          through its initial value.
//
// Where seam's ISA differs from the tutorial's it is said here, and in
// docs/validation.md:
//  - `activation` has an immediate scale only, so exp(delta * A_i) with a
//    per-partition A_i is a ScalarE tensor_scalar (multiply by the [P, 1]
//    A column) then the ScalarE exp: two ScalarE passes for the tutorial's
//    one (ScalarE is not the bound engine of any case).
//  - The partition broadcast of a B or C row is a Tensor engine matmul of
//    a ones row into PSUM (the tutorial: "partition-dim broadcast often
//    requires a separate instruction on TensorE"); the Vector engine
//    multiplies reading the broadcast from PSUM, in chunks of one PSUM bank
//    (512 fp32).
//  - SBUF spill (mamba v2 at long seq_len): the kernel as written keeps
//    delta, u and the accumulator ([128, seq_len] each) live across the
//    state loop next to five per-state temporaries of the same size. When
//    that exceeds the SBUF (`sbufBytes`), the kernel is built as the NKI
//    compiler builds it: the three long-lived tiles are spilled to an HBM
//    scratch after their first definition and reloaded before each use (the
//    accumulator spilled again after each update), with the per-state
//    temporaries in single buffers (the reloads and the compute cannot
//    overlap: no room for a second set). That is the traffic of the
//    profile's qSyncSpillReload rows.
//  - matmul v4 at fp32 K = 8192: the block's two rhs columns (2 x 64 tiles
//    of 128 x 512 fp32, 256 KiB per partition) exceed any SBUF of the
//    profiles; the bn loop is put outside the bm loop so that one rhs
//    column is live at a time (the same HBM traffic: each rhs tile is loaded
//    once per (M block, N block)). v5 stores each [128, 1024] row of its
//    accumulator straight from the accumulator (its layout already packs
//    the N block's two tiles) where the tutorial copies them into a packed
//    tile first: the same transfers, without a 4 KiB tile that would not fit
//    next to the 224 KiB of blocks on trn2.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {

constexpr int64_t kP = kNumPartitions;   // 128
constexpr int64_t kTileN = kMatmulMaxN;  // 512
constexpr int64_t kF32 = 4;              // bytes
constexpr int64_t kMambaSeqTile = 512;   // the tutorial's seq_len_fsize
constexpr int64_t kBroadcastChunk = 512; // one PSUM bank of fp32

TileType hbm(MLIRContext *ctx, ArrayRef<int64_t> shape) {
  return TileType::get(MemSpace::Hbm, shape, Float32Type::get(ctx));
}

} // namespace

//===----------------------------------------------------------------------===//
// matmul v2..v5
//===----------------------------------------------------------------------===//

std::optional<std::string> seam::nkiMatmulError(const NkiMatmulParams &p) {
  if (p.version < 2 || p.version > 5)
    return "matmul version " + std::to_string(p.version) +
           " is not one of the tutorial's v2..v5";
  if (p.k <= 0 || p.m <= 0 || p.n <= 0 || p.k % kP || p.m % kP || p.n % kTileN)
    return llvm::formatv("K = {0} and M = {1} must be multiples of 128, N = "
                         "{2} of 512",
                         p.k, p.m, p.n)
        .str();
  int64_t bm = p.version == 4 ? 2 : p.blockM,
          bn = p.version == 4 ? 2 : p.blockN;
  if (p.version >= 4 && (p.m % (bm * kP) || p.n % (bn * kTileN)))
    return llvm::formatv("M = {0} must be a multiple of {1} and N = {2} of {3} "
                         "(the blocks)",
                         p.m, bm * kP, p.n, bn * kTileN)
        .str();
  if (p.version == 5 && p.k % (p.blockK * kP))
    return llvm::formatv("K = {0} must be a multiple of {1} (the K block)", p.k,
                         p.blockK * kP)
        .str();
  return std::nullopt;
}

FailureOr<ProgramOp> seam::buildNkiMatmul(OpBuilder &b, ModuleOp module,
                                          StringRef name,
                                          const NkiMatmulParams &p) {
  if (auto why = nkiMatmulError(p))
    return module.emitError() << "nki matmul: " << *why;
  MLIRContext *ctx = module.getContext();
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(
      b, module, name, {hbm(ctx, {p.k, p.m}), hbm(ctx, {p.k, p.n})},
      {hbm(ctx, {p.m, p.n})});
  KernelBuilder kb(b, module.getLoc(), prog);
  Type f32 = kb.f32();
  Value lhsT = kb.arg(0), rhs = kb.arg(1), out = kb.arg(2);
  int64_t kt = p.k / kP, mt = p.m / kP, nt = p.n / kTileN;
  Value ps[2] = {kb.psum({kP, kTileN}), kb.psum({kP, kTileN})};
  // PSUM -> SBUF -> HBM of one result tile.
  auto drain = [&](Value acc, Value res, Index m, Index n) {
    kb.copy(res, acc);
    kb.dma(kb.view(out, {kP, kTileN}, {m * kP, n * kTileN}), res);
  };

  if (p.version == 2) {
    prog->setAttr(
        "seam.kernel_plan",
        b.getStringAttr("v2: lhsT and rhs tiles loaded in the k loop"));
    // The k loop is an affine_range: the NKI compiler gives its loads
    // rotating buffers. kLoadRing sets of (lhsT, rhs) tiles keep
    // kLoadRing iterations' loads in flight: 4 x 5 transfers (an rhs tile
    // is cut in 4 pieces by ncore-split-dma) cover the 16 DMA queues.
    constexpr unsigned kLoadRing = 4;
    Value lt[kLoadRing], rt[kLoadRing];
    for (unsigned i = 0; i < kLoadRing; ++i) {
      lt[i] = kb.sbuf({kP, kP}, f32);
      rt[i] = kb.sbuf({kP, kTileN}, f32);
    }
    Value res[2] = {kb.sbuf({kP, kTileN}, f32), kb.sbuf({kP, kTileN}, f32)};
    kb.forRange(mt, [&](Index m) {
      kb.forRangeAlternating(nt, [&](Index n, unsigned par) {
        auto step = [&](Index k, unsigned c, bool first) {
          kb.dma(lt[c], kb.view(lhsT, {kP, kP}, {k * kP, m * kP}));
          kb.dma(rt[c], kb.view(rhs, {kP, kTileN}, {k * kP, n * kTileN}));
          kb.matmul(ps[par], lt[c], rt[c], /*accumulate=*/!first);
        };
        // k = 0 starts the PSUM accumulation group; the rest add to it.
        step(Index(0), 0, true);
        kb.forRangeUnrolled(kt - 1, kLoadRing, [&](Index k, unsigned c) {
          step(k + 1, (c + 1) % kLoadRing, false);
        });
        drain(ps[par], res[par], m, n);
      });
    });
    return prog;
  }

  if (p.version == 3) {
    prog->setAttr("seam.kernel_plan",
                  b.getStringAttr("v3: lhsT column loaded per m, rhs column "
                                  "per n"));
    Value lts = kb.sbuf({kP, kt, kP}, f32),
          rts = kb.sbuf({kP, kt, kTileN}, f32);
    Value res[2] = {kb.sbuf({kP, kTileN}, f32), kb.sbuf({kP, kTileN}, f32)};
    kb.forRange(mt, [&](Index m) {
      kb.dmaLoop(kt, [&](Index k) {
        kb.dma(kb.view(lts, {kP, 1, kP}, {0, k, 0}),
               kb.view(lhsT, {kP, kP}, {k * kP, m * kP}));
      });
      kb.forRangeAlternating(nt, [&](Index n, unsigned par) {
        // The k loops unrolled, as the NKI compiler unrolls them: the load
        // of rhs tile k for the next n then waits for matmul k of this n
        // only (in a loop, ncore-schedule sees the hull of all its
        // iterations' reads).
        for (int64_t k = 0; k < kt; ++k)
          kb.dma(kb.view(rts, {kP, 1, kTileN}, {0, k, 0}),
                 kb.view(rhs, {kP, kTileN}, {k * kP, n * kTileN}));
        for (int64_t k = 0; k < kt; ++k)
          kb.matmul(ps[par], kb.view(lts, {kP, 1, kP}, {0, k, 0}),
                    kb.view(rts, {kP, 1, kTileN}, {0, k, 0}), k > 0);
        drain(ps[par], res[par], m, n);
      });
    });
    return prog;
  }

  if (p.version == 4) {
    constexpr int64_t bm = 2, bn = 2;
    prog->setAttr("seam.kernel_plan",
                  b.getStringAttr("v4: M, N blocked 2 x 2; bn outside bm so "
                                  "one rhs column of the block is live"));
    Value lts = kb.sbuf({kP, bm * kt, kP}, f32);
    Value rts = kb.sbuf({kP, kt, kTileN}, f32);
    Value res[2] = {kb.sbuf({kP, kTileN}, f32), kb.sbuf({kP, kTileN}, f32)};
    kb.forRange(mt / bm, [&](Index m) {
      for (int64_t i = 0; i < bm; ++i)
        kb.dmaLoop(kt, [&](Index k) {
          kb.dma(kb.view(lts, {kP, 1, kP}, {0, k + i * kt, 0}),
                 kb.view(lhsT, {kP, kP}, {k * kP, (m * bm + i) * kP}));
        });
      kb.forRange(nt / bn, [&](Index n) {
        for (int64_t j = 0; j < bn; ++j) {
          Index ncol = n * bn + j;
          // The k loops unrolled (as in v3).
          for (int64_t k = 0; k < kt; ++k)
            kb.dma(kb.view(rts, {kP, 1, kTileN}, {0, k, 0}),
                   kb.view(rhs, {kP, kTileN}, {k * kP, ncol * kTileN}));
          for (int64_t i = 0; i < bm; ++i) {
            unsigned par = unsigned(i % 2);
            for (int64_t k = 0; k < kt; ++k)
              kb.matmul(ps[par], kb.view(lts, {kP, 1, kP}, {0, k + i * kt, 0}),
                        kb.view(rts, {kP, 1, kTileN}, {0, k, 0}), k > 0);
            drain(ps[par], res[par], m * bm + i, ncol);
          }
        }
      });
    });
    return prog;
  }

  // v5.
  int64_t tbm = p.blockM, tbn = p.blockN, tbk = p.blockK;
  int64_t blockM = tbm * kP, blockN = tbn * kTileN;
  int64_t nbm = p.m / blockM, nbn = p.n / blockN, nbk = p.k / (tbk * kP);
  prog->setAttr("seam.kernel_plan",
                b.getStringAttr(llvm::formatv(
                    "v5: blocks M {0} x N {1} x K {2} tiles; PSUM partial "
                    "sums added into an SBUF accumulator",
                    tbm, tbn, tbk)));
  // The accumulator of one N block: row tile t = m * tbm + bm holds the
  // block's tbn result tiles side by side (the tutorial's packed layout).
  Value acc = kb.sbuf({kP, mt, blockN}, f32);
  Value rts = kb.sbuf({kP, tbk, blockN}, f32);
  Value lts = kb.sbuf({kP, tbk, blockM}, f32);
  kb.forRange(nbn, [&](Index n) {
    kb.memset(acc, 0.0);
    kb.forRange(nbk, [&](Index k) {
      // The bk loops unrolled (as in v3).
      for (int64_t bk = 0; bk < tbk; ++bk)
        kb.dma(
            kb.view(rts, {kP, 1, blockN}, {0, bk, 0}),
            kb.view(rhs, {kP, blockN}, {k * tbk * kP + bk * kP, n * blockN}));
      // The M blocks unrolled (two at the published shape): with the loads
      // and the accumulation loop the nest would be five deep.
      for (int64_t mi = 0; mi < nbm; ++mi) {
        Index m(mi);
        for (int64_t bk = 0; bk < tbk; ++bk)
          kb.dma(kb.view(lts, {kP, 1, blockM}, {0, bk, 0}),
                 kb.view(lhsT, {kP, blockM},
                         {k * tbk * kP + bk * kP, m * blockM}));
        for (int64_t j = 0; j < tbn; ++j)
          kb.forRangeAlternating(tbm, [&](Index bm, unsigned par) {
            for (int64_t bk = 0; bk < tbk; ++bk)
              kb.matmul(ps[par], kb.view(lts, {kP, 1, kP}, {0, bk, bm * kP}),
                        kb.view(rts, {kP, 1, kTileN}, {0, bk, j * kTileN}),
                        bk > 0);
            Value dst =
                kb.view(acc, {kP, 1, kTileN}, {0, m * tbm + bm, j * kTileN});
            // nisa.tensor_tensor: the Vector engine.
            kb.create<TensorTensorOp>(dst, dst, ps[par], AluOp::Add,
                                      EngineAttr::get(ctx, Engine::Vector));
          });
      }
    });
    kb.dmaLoop(mt, [&](Index t) {
      kb.dma(kb.view(out, {kP, blockN}, {t * kP, n * blockN}),
             kb.view(acc, {kP, 1, blockN}, {0, t, 0}));
    });
  });
  return prog;
}

//===----------------------------------------------------------------------===//
// fused Mamba v1..v3
//===----------------------------------------------------------------------===//

std::optional<std::string> seam::nkiMambaError(const NkiMambaParams &p) {
  if (p.version < 1 || p.version > 3)
    return "mamba version " + std::to_string(p.version) +
           " is not one of the tutorial's v1..v3";
  if (p.batch <= 0 || p.seq <= 0 || p.channels <= 0 || p.state <= 0)
    return std::string("every dim must be positive");
  if (p.channels % kP)
    return "channels = " + std::to_string(p.channels) +
           " must be a multiple of 128 (the tutorial's assertion)";
  if (p.seq % kBroadcastChunk)
    return "seq_len = " + std::to_string(p.seq) + " must be a multiple of " +
           std::to_string(kBroadcastChunk);
  if (p.version == 1 && (p.channels / kP) * p.seq * kF32 > p.sbufBytes / 2)
    return "v1 keeps an accumulator of every channel tile: channels / 128 x "
           "seq_len fp32 exceeds half the SBUF";
  // The smallest footprint any version needs: delta, u and the
  // accumulator of a channel tile (v3), or their spill staging (v2).
  if (4 * p.seq * kF32 > p.sbufBytes)
    return "seq_len = " + std::to_string(p.seq) +
           ": four [128, seq_len] fp32 tiles exceed the SBUF";
  return std::nullopt;
}

bool seam::nkiMambaSpills(const NkiMambaParams &p) {
  // v2 as written: delta, u, accumulator + dA, dU, dBu, scan, scanC.
  return p.version == 2 && 8 * p.seq * kF32 > p.sbufBytes;
}

namespace {

/// The fused Mamba kernel of the NKI tutorial, one method per step and per
/// version; the program's arguments and the shared tiles are its members.
struct MambaBuilder {
  /// One set of the per-state temporaries over `w` columns; the B and C
  /// rows of a state are loaded whole when `w` is one seq tile (`rowW` =
  /// w), chunk by chunk otherwise (v2 spilled: no room for two rows of
  /// seq_len).
  struct Temps {
    Value aCol, dA, dU, sc, rowB, rowC, bc[2];
  };

  MambaBuilder(OpBuilder &b, ModuleOp module, ProgramOp prog,
               const NkiMambaParams &p)
      : b(b), p(p), prog(prog), kb(b, module.getLoc(), prog), bs(p.batch),
        cs(p.channels), ss(p.seq), ns(p.state), nct(cs / kP) {
    MLIRContext *ctx = module.getContext();
    f32 = kb.f32();
    // Rows of [batch * channels, seq] and [batch * state, seq].
    delta = kb.reshape(kb.arg(0), {bs * cs, ss});
    u = kb.reshape(kb.arg(1), {bs * cs, ss});
    aH = kb.arg(2);
    bH = kb.reshape(kb.arg(3), {bs * ns, ss});
    cH = kb.reshape(kb.arg(4), {bs * ns, ss});
    out = kb.reshape(kb.arg(5), {bs * cs, ss});
    ones = kb.onesRow(kP, f32);
    scalarEngine = EngineAttr::get(ctx, Engine::Scalar); // ScalarE, as the
                                                         // tutorial's
    vectorEngine = EngineAttr::get(ctx, Engine::Vector);
  }

  /// The tutorial's tensor_tensor "can only run on VectorE": pinned there
  /// (seam's scheduler could move it to GpSimd).
  void tt(AluOp op, Value dst, Value x, Value y) {
    kb.create<TensorTensorOp>(dst, x, y, op, vectorEngine);
  }

  Temps makeTemps(int64_t w, int64_t rowW) {
    Temps t;
    t.aCol = kb.sbuf({kP, 1}, f32);
    t.dA = kb.sbuf({kP, w}, f32);
    t.dU = kb.sbuf({kP, w}, f32);
    t.sc = kb.sbuf({kP, w}, f32);
    t.rowB = kb.sbuf({1, rowW}, f32);
    t.rowC = kb.sbuf({1, rowW}, f32);
    t.bc[0] = kb.psum({kP, kBroadcastChunk});
    t.bc[1] = kb.psum({kP, kBroadcastChunk});
    return t;
  }

  void loadRows(Temps &t, Index row, Index col, int64_t w) {
    kb.dma(t.rowB, kb.view(bH, {1, w}, {row, col}));
    kb.dma(t.rowC, kb.view(cH, {1, w}, {row, col}));
  }

  /// `dst` (SBUF [128, w]) *= the partition broadcast of `rowTile` (the
  /// rows [w] of `rows` at `row`, `col` are loaded into it chunk by chunk
  /// first when it is narrower than w), through PSUM.
  void mulBroadcast(Temps &t, unsigned which, Value dst, Value rowTile,
                    Value rows, Index row, Index col, int64_t w) {
    int64_t rowW = NcoreBuilder::tileOf(rowTile).getShape()[1];
    for (int64_t c = 0; c < w / kBroadcastChunk; ++c) {
      Value bc = t.bc[which];
      int64_t c0 = c * kBroadcastChunk;
      Value r;
      if (rowW < w) {
        kb.dma(rowTile, kb.view(rows, {1, kBroadcastChunk}, {row, col + c0}));
        r = rowTile;
      } else {
        r = kb.view(rowTile, {1, kBroadcastChunk}, {0, c0});
      }
      kb.matmul(bc, ones, r);
      Value d = kb.view(dst, {kP, kBroadcastChunk}, {0, c0});
      tt(AluOp::Multiply, d, d, bc);
    }
  }

  void scan(Temps &t, Value init) {
    if (init)
      kb.create<TensorTensorScanOp>(t.sc, t.dA, t.dU, init, AluOp::Multiply,
                                    AluOp::Add, FloatAttr(), vectorEngine);
    else
      kb.create<TensorTensorScanOp>(t.sc, t.dA, t.dU, Value(), AluOp::Multiply,
                                    AluOp::Add, b.getF32FloatAttr(0.0f),
                                    vectorEngine);
  }

  void expScaled(Temps &t, Value dv) {
    kb.create<TensorScalarOp>(t.dA, dv, t.aCol, Value(), AluOp::Multiply,
                              FloatAttr(), false, AluOpAttr(), FloatAttr(),
                              scalarEngine);
    kb.activation(ActFunc::Exp, t.dA, t.dA);
  }

  /// Steps 1-6 for one state over columns [col, col + w) of the channel
  /// tile whose delta / u columns are `dv` / `uv` ([128, w] views) and
  /// whose accumulator columns are `accv`. `init`: the scan's initial
  /// [128, 1] tile (null: 0). The state's loads (A column, B and C rows)
  /// are issued first, as the NKI scheduler hoists loads: a load queued
  /// behind compute would hold up the in-order DMA queue.
  void state(Temps &t, Value dv, Value uv, Value accv, Index bRow, Index col,
             int64_t w, Value init) {
    loadRows(t, bRow, col, w);
    // Steps 1-2: exp(delta * A_i) on the Scalar engine.
    expScaled(t, dv);
    // Step 3: delta * u * B_i.
    tt(AluOp::Multiply, t.dU, dv, uv);
    mulBroadcast(t, 0, t.dU, t.rowB, bH, bRow, col, w);
    // Step 4: the scan; its last column is the next seq tile's initial
    // value (taken before step 5 scales the scan in place).
    scan(t, init);
    if (init)
      kb.copy(init, kb.view(t.sc, {kP, 1}, {0, w - 1}));
    // Step 5: * C_i; step 6: accumulate over the states.
    mulBroadcast(t, 1, t.sc, t.rowC, cH, bRow, col, w);
    tt(AluOp::Add, accv, accv, t.sc);
  }

  void loadA(Temps &t, Index ct, Index st) {
    kb.dma(t.aCol, kb.view(aH, {kP, 1}, {ct * kP, st}));
  }

  /// The channel-tile loop is an affine_range: its iterations are
  /// independent, and the NKI compiler gives them rotating buffers when they
  /// fit, so the next tile's delta and u arrive while this one computes.
  /// Two sets of delta, u and the accumulator when they fit next to the two
  /// sets of temporaries (w columns each), one otherwise.
  unsigned channelSets(int64_t w) const {
    int64_t bytes = (2 * 3 * ss + 2 * 5 * w) * kF32;
    return bytes <= p.sbufBytes ? 2 : 1;
  }

  /// body(ct, set) over the channel tiles of a batch, alternating sets when
  /// there are two.
  void channelLoop(unsigned sets, function_ref<void(Index, unsigned)> body) {
    if (sets == 2)
      kb.forRangeAlternating(nct, body);
    else
      kb.forRange(nct, [&](Index ct) { body(ct, 0); });
  }

  void buildV1();
  void buildV2();
  void buildV2Spilled();
  void buildV3();

  OpBuilder &b;
  const NkiMambaParams &p;
  ProgramOp prog;
  KernelBuilder kb;
  int64_t bs, cs, ss, ns, nct;
  Type f32;
  Value delta, u, aH, bH, cH, out, ones;
  EngineAttr scalarEngine, vectorEngine;
};

void MambaBuilder::buildV1() {
  prog->setAttr("seam.kernel_plan",
                b.getStringAttr("v1: batch, state, channel tile; delta and "
                                "u loaded per (state, channel tile)"));
  Value acc = kb.sbuf({kP, nct, ss}, f32);
  Temps t[2] = {makeTemps(ss, ss), makeTemps(ss, ss)};
  Value dv[2] = {kb.sbuf({kP, ss}, f32), kb.sbuf({kP, ss}, f32)};
  Value uv[2] = {kb.sbuf({kP, ss}, f32), kb.sbuf({kP, ss}, f32)};
  kb.forRange(bs, [&](Index bi) {
    kb.memset(acc, 0.0);
    kb.forRange(ns, [&](Index st) {
      kb.forRangeAlternating(nct, [&](Index ct, unsigned par) {
        Index row = bi * cs + ct * kP;
        kb.dma(dv[par], kb.view(delta, {kP, ss}, {row, 0}));
        loadA(t[par], ct, st);
        kb.dma(uv[par], kb.view(u, {kP, ss}, {row, 0}));
        state(t[par], dv[par], uv[par], kb.view(acc, {kP, 1, ss}, {0, ct, 0}),
              bi * ns + st, Index(0), ss, Value());
      });
    });
    kb.forRange(nct, [&](Index ct) {
      kb.dma(kb.view(out, {kP, ss}, {bi * cs + ct * kP, 0}),
             kb.view(acc, {kP, 1, ss}, {0, ct, 0}));
    });
  });
}

void MambaBuilder::buildV2() {
  unsigned sets = channelSets(ss);
  prog->setAttr("seam.kernel_plan",
                b.getStringAttr(llvm::formatv(
                    "v2: channel tile, then state; delta and u loaded once "
                    "per channel tile ({0} buffer set(s))",
                    sets)));
  Value acc[2], dv[2], uv[2];
  for (unsigned i = 0; i < sets; ++i) {
    acc[i] = kb.sbuf({kP, ss}, f32);
    dv[i] = kb.sbuf({kP, ss}, f32);
    uv[i] = kb.sbuf({kP, ss}, f32);
  }
  Temps t[2] = {makeTemps(ss, ss), makeTemps(ss, ss)};
  kb.forRange(bs, [&](Index bi) {
    channelLoop(sets, [&](Index ct, unsigned cset) {
      Index row = bi * cs + ct * kP;
      kb.dma(dv[cset], kb.view(delta, {kP, ss}, {row, 0}));
      kb.dma(uv[cset], kb.view(u, {kP, ss}, {row, 0}));
      kb.memset(acc[cset], 0.0);
      kb.forRangeAlternating(ns, [&](Index st, unsigned par) {
        loadA(t[par], ct, st);
        state(t[par], dv[cset], uv[cset], acc[cset], bi * ns + st, Index(0), ss,
              Value());
      });
      kb.dma(kb.view(out, {kP, ss}, {row, 0}), acc[cset]);
    });
  });
}

/// Spilled: delta, u and the accumulator live in an HBM scratch between
/// their uses; one staging tile each, one set of temporaries.
void MambaBuilder::buildV2Spilled() {
  prog->setAttr("seam.kernel_plan",
                b.getStringAttr(llvm::formatv(
                    "v2 spilled: 8 live [128, {0}] fp32 tiles ({1} KiB per "
                    "partition) exceed the SBUF ({2} KiB): delta, u and the "
                    "accumulator spilled to HBM and reloaded per state",
                    ss, 8 * ss * kF32 / 1024, p.sbufBytes / 1024)));
  Value spill = kb.hbmScratch({3, kP, ss}, f32, "mamba_spill");
  Value dv = kb.sbuf({kP, ss}, f32), uv = kb.sbuf({kP, ss}, f32);
  Temps t = makeTemps(ss, kBroadcastChunk);
  // The accumulator's staging tile is the scan's temporary: dead
  // between a state's step 6 and the next state's step 4.
  Value accS = t.dA;
  auto slot = [&](int64_t i) { return kb.view(spill, {1, kP, ss}, {i, 0, 0}); };
  auto toHbm = [&](int64_t i, Value v) {
    kb.dma(kb.reshape(slot(i), {kP, ss}), v);
  };
  auto fromHbm = [&](Value v, int64_t i) {
    kb.dma(v, kb.reshape(slot(i), {kP, ss}));
  };
  kb.forRange(bs, [&](Index bi) {
    kb.forRange(nct, [&](Index ct) {
      Index row = bi * cs + ct * kP;
      kb.memset(accS, 0.0);
      toHbm(2, accS);
      kb.dma(dv, kb.view(delta, {kP, ss}, {row, 0}));
      toHbm(0, dv);
      kb.dma(uv, kb.view(u, {kP, ss}, {row, 0}));
      toHbm(1, uv);
      kb.forRange(ns, [&](Index st) {
        loadA(t, ct, st);
        fromHbm(dv, 0);
        expScaled(t, dv);
        fromHbm(uv, 1);
        tt(AluOp::Multiply, t.dU, dv, uv);
        mulBroadcast(t, 0, t.dU, t.rowB, bH, bi * ns + st, Index(0), ss);
        scan(t, Value());
        mulBroadcast(t, 1, t.sc, t.rowC, cH, bi * ns + st, Index(0), ss);
        fromHbm(accS, 2);
        tt(AluOp::Add, accS, accS, t.sc);
        toHbm(2, accS);
      });
      fromHbm(accS, 2);
      kb.dma(kb.view(out, {kP, ss}, {row, 0}), accS);
    });
  });
}

/// v3: seq_len tiled by 512, the scan carried through its initial value.
void MambaBuilder::buildV3() {
  int64_t w = std::min(kMambaSeqTile, ss);
  int64_t nst = ss / w;
  prog->setAttr(
      "seam.kernel_plan",
      b.getStringAttr(llvm::formatv(
          "v3: channel tile, state, seq tile of {0}; scan carried", w)));
  unsigned sets = channelSets(w);
  Value acc[2], dv[2], uv[2];
  for (unsigned i = 0; i < sets; ++i) {
    acc[i] = kb.sbuf({kP, ss}, f32);
    dv[i] = kb.sbuf({kP, ss}, f32);
    uv[i] = kb.sbuf({kP, ss}, f32);
  }
  Temps t[2] = {makeTemps(w, w), makeTemps(w, w)};
  Value init[2] = {kb.sbuf({kP, 1}, f32), kb.sbuf({kP, 1}, f32)};
  kb.forRange(bs, [&](Index bi) {
    channelLoop(sets, [&](Index ct, unsigned cset) {
      Index row = bi * cs + ct * kP;
      kb.dma(dv[cset], kb.view(delta, {kP, ss}, {row, 0}));
      kb.dma(uv[cset], kb.view(u, {kP, ss}, {row, 0}));
      kb.memset(acc[cset], 0.0);
      kb.forRangeAlternating(ns, [&](Index st, unsigned par) {
        Temps &tp = t[par];
        loadA(tp, ct, st);
        kb.memset(init[par], 0.0);
        kb.forRange(nst, [&](Index it) {
          Index col = it * w;
          state(tp, kb.view(dv[cset], {kP, w}, {0, col}),
                kb.view(uv[cset], {kP, w}, {0, col}),
                kb.view(acc[cset], {kP, w}, {0, col}), bi * ns + st, col, w,
                init[par]);
        });
      });
      kb.dma(kb.view(out, {kP, ss}, {row, 0}), acc[cset]);
    });
  });
}

} // namespace

FailureOr<ProgramOp> seam::buildNkiMamba(OpBuilder &b, ModuleOp module,
                                         StringRef name,
                                         const NkiMambaParams &p) {
  if (auto why = nkiMambaError(p))
    return module.emitError() << "nki mamba: " << *why;
  MLIRContext *ctx = module.getContext();
  int64_t bs = p.batch, cs = p.channels, ss = p.seq, ns = p.state;
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(
      b, module, name,
      {hbm(ctx, {bs, cs, ss}), hbm(ctx, {bs, cs, ss}), hbm(ctx, {cs, ns}),
       hbm(ctx, {bs, ns, ss}), hbm(ctx, {bs, ns, ss})},
      {hbm(ctx, {bs, cs, ss})});
  MambaBuilder mamba(b, module, prog, p);
  if (p.version == 1)
    mamba.buildV1();
  else if (p.version == 2 && !nkiMambaSpills(p))
    mamba.buildV2();
  else if (p.version == 2)
    mamba.buildV2Spilled();
  else
    mamba.buildV3();
  return prog;
}

ArrayRef<NkiTutorialKernel> seam::nkiTutorialKernels() {
  static const NkiTutorialKernel kTable[] = {
      {"nki-matmul-v2", false, 2,
       "tutorial matmul, tiled, loads in the innermost loop"},
      {"nki-matmul-v3", false, 3, "tutorial matmul, loads hoisted to m and n"},
      {"nki-matmul-v4", false, 4, "tutorial matmul, M and N blocked 2 x 2"},
      {"nki-matmul-v5", false, 5,
       "tutorial matmul, M N K blocked 16 x 2 x 8, partial sums in SBUF"},
      {"nki-mamba-v1", true, 1, "fused Mamba, state outside channel tiles"},
      {"nki-mamba-v2", true, 2,
       "fused Mamba, loops reordered and fused (spills at long seq_len)"},
      {"nki-mamba-v3", true, 3, "fused Mamba, seq_len tiled by 512"},
  };
  return kTable;
}

const NkiTutorialKernel *seam::lookupNkiTutorialKernel(StringRef name) {
  for (const NkiTutorialKernel &k : nkiTutorialKernels())
    if (k.name == name)
      return &k;
  return nullptr;
}
