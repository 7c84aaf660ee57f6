//===- FftConv.cpp - Hyena FFT long convolution ---------------------------===//
//
// hyena-dna fftconv reference semantics, one (b, h) channel per iteration:
//   u' = gelu(u * v?) (gelu only with gelu_inp)
//   y  = irfft(rfft(u', n) * rfft(k, n) / n, n, norm=forward)[:L] + u' * D[h]
//   y  = gelu(y)? * dropout[b, h]? * (gelu(q) or q)?
// with n = fft_size = N1 x N2. The zero padding of u and k to n is the
// definition of rfft(., n) (a linear convolution), not a truncation trick.
// The spectra are full complex DFTs (FftCommon.h): the product of two
// spectra of real sequences is Hermitian, so Re(IDFT) is the irfft.
// The forward transform leaves X in [N2, N1] order, which is exactly the
// input order of the inverse transform with the factors swapped, whose
// output is back in the natural [N1, N2] order of u: no reorders.
//
//===----------------------------------------------------------------------===//
#include "kernels/FftCommon.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

namespace {
/// DMA between the first `len` elements (row-major) of on-chip `tile`
/// [rows, cols] and the HBM window `hbmAt(offset, count)`.
void movePrefix(KernelBuilder &kb, Value tile, int64_t cols, int64_t len,
                llvm::function_ref<Value(int64_t, int64_t)> hbmAt, bool toHbm) {
  int64_t full = len / cols, rem = len % cols;
  auto mv = [&](Value t, Value h) { toHbm ? kb.dma(h, t) : kb.dma(t, h); };
  if (full > 0)
    mv(kb.view(tile, {full, cols}, {0, 0}), hbmAt(0, full * cols));
  if (rem > 0)
    mv(kb.view(tile, {1, rem}, {full, 0}), hbmAt(full * cols, rem));
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
  int64_t n = cfgInt("fft_size", 0);
  int64_t nb = u.getDimSize(0), nh = u.getDimSize(1), len = u.getDimSize(2);
  int64_t lk = kT.getDimSize(1);
  if (u.getElementType() != b.getF32Type())
    return module.emitError() << "fftconv kernel: f32 only";
  auto factors = fftFactors(n);
  if (!factors || lk > n)
    return module.emitError() << "fftconv kernel: fft_size " << n
                              << " / filter length " << lk << " not built";
  // Optional operands after (u, k, d): [B, H, L] ones are v then q (a lone
  // one is q when the config has gelu_q, else v); a [B, H] one is the
  // dropout mask.
  int vIdx = -1, qIdx = -1, maskIdx = -1;
  SmallVector<int> seq;
  for (int i = 3, e = sig.args.size(); i < e; ++i) {
    if (sig.args[i].getRank() == 2)
      maskIdx = i;
    else
      seq.push_back(i);
  }
  if (seq.size() == 2) {
    vIdx = seq[0];
    qIdx = seq[1];
  } else if (seq.size() == 1) {
    (has("gelu_q") ? qIdx : vIdx) = seq[0];
  }

  SmallVector<TileType> ins;
  for (RankedTensorType t : sig.args)
    ins.push_back(*hbmTileFor(t));
  auto outT = hbmTileFor(sig.results[0]);
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog = createKernelProgram(b, module, name, ins, {*outT});
  KernelBuilder kb(b, module.getLoc(), prog);
  Value uH = kb.arg(0), kH = kb.arg(1), dH = kb.arg(2);
  Value out = kb.arg(sig.args.size());
  Type f32 = kb.f32();
  int64_t n1 = factors->first, n2 = factors->second;

  FourStepDft fwd(kb, n1, n2, /*inverse=*/false, 1.0, f32);
  FourStepDft inv(kb, n2, n1, /*inverse=*/true, 1.0 / double(n), f32);
  Value ka = kb.sbuf({n1, n2}, f32), ua = kb.sbuf({n1, n2}, f32);
  Value va = vIdx >= 0 ? kb.sbuf({n1, n2}, f32) : Value();
  Value qa = qIdx >= 0 ? kb.sbuf({n1, n2}, f32) : Value();
  Value kr = kb.sbuf({n2, n1}, f32), ki = kb.sbuf({n2, n1}, f32);
  Value pr = kb.sbuf({n2, n1}, f32), pi = kb.sbuf({n2, n1}, f32);
  Value t1 = kb.sbuf({n2, n1}, f32), t2 = kb.sbuf({n2, n1}, f32);
  Value y = kb.sbuf({n1, n2}, f32);
  // D and the dropout mask on every partition: per-partition scalars of
  // the channel are column views.
  Value dall = kb.broadcastToPartitions(dH, n1);
  Value mall =
      maskIdx >= 0 ? kb.broadcastToPartitions(kb.arg(maskIdx), n1) : Value();
  // Padding stays zero: only the first L (Lk) elements are ever written.
  kb.memset(ka, 0.0f);
  kb.memset(ua, 0.0f);
  if (va)
    kb.memset(va, 0.0f);
  if (qa)
    kb.memset(qa, 0.0f);

  kb.loop(nh, [&](Ix h) {
    // Filter spectrum K = DFT_n(k[h]), kept in SBUF for every batch.
    movePrefix(
        kb, ka, n2, lk,
        [&](int64_t off, int64_t cnt) {
          return kb.view(kH, {1, cnt}, {h, off});
        },
        false);
    fwd.run(ka, Value());
    kb.copy(kr, fwd.dr);
    kb.copy(ki, fwd.di);
    Value dcol = kb.view(dall, {n1, 1}, {0, h});
    kb.loop(nb, [&](Ix bi) {
      auto seqAt = [&](Value hbm) {
        return [&, hbm](int64_t off, int64_t cnt) {
          return kb.view(hbm, {1, 1, cnt}, {bi, h, off});
        };
      };
      movePrefix(kb, ua, n2, len, seqAt(uH), false);
      if (va) {
        movePrefix(kb, va, n2, len, seqAt(kb.arg(vIdx)), false);
        kb.tensorTensor(AluOp::Multiply, ua, ua, va);
      }
      if (has("gelu_inp"))
        kb.activation(ActFunc::Gelu, ua, ua);
      fwd.run(ua, Value());
      // P = U K (complex), U in PSUM.
      kb.tensorTensor(AluOp::Multiply, t1, fwd.dr, kr);
      kb.tensorTensor(AluOp::Multiply, t2, fwd.di, ki);
      kb.tensorTensor(AluOp::Subtract, pr, t1, t2);
      kb.tensorTensor(AluOp::Multiply, t1, fwd.dr, ki);
      kb.tensorTensor(AluOp::Multiply, t2, fwd.di, kr);
      kb.tensorTensor(AluOp::Add, pi, t1, t2);
      inv.run(pr, pi);
      // y = Re(IDFT(P)) + u' D[h].
      kb.tensorScalar(AluOp::Multiply, y, ua, dcol);
      kb.tensorTensor(AluOp::Add, y, y, inv.dr);
      if (has("gelu"))
        kb.activation(ActFunc::Gelu, y, y);
      if (mall)
        kb.tensorScalar(AluOp::Multiply, y, y,
                        kb.view(mall, {n1, 1}, {0, bi * nh + h}));
      if (qa) {
        movePrefix(kb, qa, n2, len, seqAt(kb.arg(qIdx)), false);
        if (has("gelu_q"))
          kb.activation(ActFunc::Gelu, qa, qa);
        kb.tensorTensor(AluOp::Multiply, y, y, qa);
      }
      movePrefix(kb, y, n2, len, seqAt(out), true);
    });
  });
  return prog;
}
