//===- Qkv.cpp - fused QKV projection -------------------------------------===//
//
// y = x W (+ b) over the concatenated weight W [K, N] (seam-fuse-qkv's
// output): one matmul nest instead of three. x [..., K] is taken as M rows;
// each 128-row block is transposed on the Tensor engine (x^T is the
// stationary operand), W streams in [128, <=512] tiles, the K loop
// accumulates in fp32 PSUM, the bias is a row broadcast to every partition.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Kernels.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

FailureOr<ProgramOp> seam::buildQkvKernel(OpBuilder &b, ModuleOp module,
                                          const KernelSignature &sig,
                                          StringRef name) {
  RankedTensorType x = sig.args[0], w = sig.args[1];
  bool hasBias = sig.args.size() > 2;
  int64_t kdim = w.getDimSize(0), ndim = w.getDimSize(1);
  int64_t mdim = x.getNumElements() / kdim;
  Type dtype = x.getElementType();
  SmallVector<TileType> ins;
  for (RankedTensorType t : sig.args)
    ins.push_back(*hbmTileFor(t));
  OpBuilder::InsertionGuard g(b);
  ProgramOp prog =
      createKernelProgram(b, module, name, ins, {*hbmTileFor(sig.results[0])});
  KernelBuilder kb(b, module.getLoc(), prog);
  Value xH = kb.reshape(kb.arg(0), {mdim, kdim});
  Value wH = kb.arg(1);
  Value yH = kb.reshape(kb.arg(sig.args.size()), {mdim, ndim});
  int64_t nk = kdim / 128;

  Value xt = kb.sbuf({128, kdim}, dtype);
  Value xT = kb.sbuf({128, nk, 128}, dtype);
  Value wt = kb.sbuf({128, std::min<int64_t>(ndim, 512)}, dtype);
  Value tp = kb.psum({128, 128});
  Value acc = kb.psum({128, 512});
  Value yt = kb.sbuf({128, ndim}, dtype);
  Value brow = hasBias ? kb.broadcastToPartitions(kb.arg(2), 128) : Value();
  // Loops stay loops: full 128-row and 512-column blocks are ncore.loops,
  // a remainder block (if any) is emitted once after its loop.
  auto rowBlock = [&](Ix m0, int64_t mw) {
    kb.dma(kb.view(xt, {mw, kdim}, {0, 0}), kb.view(xH, {mw, kdim}, {m0, 0}));
    kb.loop(nk, [&](Ix kc) {
      kb.transpose(kb.view(tp, {128, mw}, {0, 0}),
                   kb.view(xt, {mw, 128}, {0, kc * 128}));
      kb.copy(kb.view(xT, {128, 1, mw}, {0, kc, 0}),
              kb.view(tp, {128, mw}, {0, 0}));
    });
    auto colBlock = [&](Ix n0, int64_t nw) {
      Value a = kb.view(acc, {mw, nw}, {0, 0});
      kb.loop(nk, [&](Ix kc) {
        Value wv = kb.view(wt, {128, nw}, {0, 0});
        kb.dma(wv, kb.view(wH, {128, nw}, {kc * 128, n0}));
        kb.matmulAccumulateOver(a, kb.view(xT, {128, 1, mw}, {0, kc, 0}), wv,
                                kc);
      });
      Value yv = kb.view(yt, {mw, nw}, {0, n0});
      if (hasBias)
        kb.tensorTensor(AluOp::Add, yv, a, kb.view(brow, {mw, nw}, {0, n0}));
      else
        kb.copy(yv, a);
    };
    if (ndim >= 512)
      kb.loop(ndim / 512, [&](Ix n) { colBlock(n * 512, 512); });
    if (ndim % 512)
      colBlock(Ix(ndim / 512 * 512), ndim % 512);
    kb.dma(kb.view(yH, {mw, ndim}, {m0, 0}), kb.view(yt, {mw, ndim}, {0, 0}));
  };
  if (mdim >= 128)
    kb.loop(mdim / 128, [&](Ix m) { rowBlock(m * 128, 128); });
  if (mdim % 128)
    rowBlock(Ix(mdim / 128 * 128), mdim % 128);
  return prog;
}
