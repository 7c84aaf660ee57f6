//===- Rope.cpp - rotary position embedding (NKI RoPE layout) -------------===//
//
// x [B, H, S, D] (the published layout; D in {64, 128}, S <= 512, H <= 16),
// cos, sin [S, D]; with x1 = x[..., :D/2], x2 = x[..., D/2:]:
//   y[..., :D/2] = x1 cos1 - x2 sin1,  y[..., D/2:] = x2 cos2 + x1 sin2
// (rotate-half form of seam.rope). Sequence on partitions, 128 at a time;
// the tables stay in SBUF for every head.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

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
