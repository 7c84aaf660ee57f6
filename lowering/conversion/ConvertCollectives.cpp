//===- ConvertCollectives.cpp - all_reduce / all_gather on HBM ------------===//
//
// The collective engine works on HBM tensors here: the operand is made a
// contiguous HBM tensor (written out when it was in SBUF) and the result is
// HBM (an output binding or a `ccN` scratch) that consumers load by DMA.
// all_gather concatenates rank-major over flat elements, which is the
// concatenation along `dim` when every dim before it is 1; otherwise the
// gathered [ranks, ...] tensor is scattered into place by one DMA per rank.
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

static LogicalResult lowerAllReduce(ProgramLowering &pl, Operation *o) {
  auto op = cast<AllReduceOp>(o);
  auto x = pl.get(op.getInput(), op);
  if (failed(x))
    return failure();
  Value src = pl.contiguousHbm(*x, op);
  Placement out = pl.placeResultInHbm(op.getResult(), "cc");
  Value dst = pl.reshape(out.root, shapeOf(op.getResult()));
  pl.allReduce(ncore::AluOp::Add, dst, src, op.getRanks());
  return success();
}

static LogicalResult lowerAllGather(ProgramLowering &pl, Operation *o) {
  auto op = cast<AllGatherOp>(o);
  auto x = pl.get(op.getInput(), op);
  if (failed(x))
    return failure();
  int64_t ranks = op.getRanks(), dim = op.getDim();
  SmallVector<int64_t> in = shapeOf(op.getInput()),
                       res = shapeOf(op.getResult());
  if (ranks < 1 || in[dim] * ranks != res[dim])
    return op.emitOpError()
           << "convert-seam-to-ncore: all_gather of " << ranks
           << " ranks along dim " << dim << " does not match the result shape";
  Value src = pl.contiguousHbm(*x, op);
  Placement out = pl.placeResultInHbm(op.getResult(), "cc");
  Value dst = pl.reshape(out.root, res);
  bool flat = llvm::all_of(ArrayRef<int64_t>(in).take_front(dim),
                           [](int64_t s) { return s == 1; });
  auto gather = [&](Value into) { pl.allGather(into, src, ranks); };
  if (flat) {
    gather(dst);
    return success();
  }
  SmallVector<int64_t> stacked{ranks};
  stacked.append(in.begin(), in.end());
  Placement tmp = pl.hbmScratch(stacked, x->elementType, "cc");
  Value all = pl.reshape(tmp.root, stacked);
  gather(all);
  for (int64_t r = 0; r < ranks; ++r) {
    SmallVector<int64_t> one{1};
    one.append(in.begin(), in.end());
    SmallVector<Index> offs(stacked.size(), 0);
    offs[0] = Index(r);
    Value part = pl.reshape(pl.view(all, one, offs), in);
    SmallVector<Index> at(res.size(), 0);
    at[dim] = Index(r * in[dim]);
    pl.dma(pl.view(dst, in, at), part);
  }
  return success();
}

void conversion::populateCollectiveLowerings(LoweringTable &table) {
  table[AllReduceOp::getOperationName()] = lowerAllReduce;
  table[AllGatherOp::getOperationName()] = lowerAllGather;
}
