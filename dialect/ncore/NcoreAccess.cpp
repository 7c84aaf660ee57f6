//===- NcoreAccess.cpp - fold view/reshape chains into access patterns ----===//
#include "dialect/ncore/NcoreAccess.h"

using namespace mlir;
using namespace mlir::ncore;

int64_t TileAccess::stepFor(LoopOp loop) const {
  for (auto &[l, step] : loopSteps)
    if (l == loop)
      return step;
  return 0;
}

namespace {
/// A walk of `shape` over the root buffer: element strides per dim (on chip,
/// dim 0 is the partition dim and its stride is unused).
struct Walk {
  Value root;
  TileType rootType;
  SmallVector<int64_t> shape, strides;
  int64_t startPartition = 0;
  int64_t offset = 0;
  SmallVector<std::pair<LoopOp, int64_t>, 2> loopSteps;

  void addStep(LoopOp loop, int64_t step) {
    for (auto &[l, s] : loopSteps)
      if (l == loop) {
        s += step;
        return;
      }
    loopSteps.push_back({loop, step});
  }
};
} // namespace

/// Row-major strides of `shape` from dim `from` on (earlier dims get 0).
static SmallVector<int64_t> rowMajor(ArrayRef<int64_t> shape, unsigned from) {
  SmallVector<int64_t> strides(shape.size(), 0);
  int64_t s = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= int64_t(from); --d) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

static FailureOr<Walk> walk(Value v) {
  auto type = cast<TileType>(v.getType());
  unsigned first = type.isOnChip() ? 1 : 0;
  if (auto view = v.getDefiningOp<ViewOp>()) {
    FailureOr<Walk> w = walk(view.getSource());
    if (failed(w))
      return failure();
    for (unsigned d = 0; d < type.getRank(); ++d) {
      SmallVector<int64_t> coeffs;
      int64_t c;
      if (failed(view.getLinearOffset(d, coeffs, c)))
        return view.emitOpError("offsets are not linear"), failure();
      if (d == 0 && type.isOnChip()) {
        w->startPartition += c;
        continue;
      }
      w->offset += w->strides[d] * c;
      for (auto [k, iv] : llvm::enumerate(view.getIvs()))
        if (coeffs[k] != 0)
          w->addStep(
              cast<LoopOp>(cast<BlockArgument>(iv).getOwner()->getParentOp()),
              w->strides[d] * coeffs[k]);
      w->strides[d] *= view.getStride(d);
    }
    w->shape.assign(type.getShape().begin(), type.getShape().end());
    return w;
  }
  if (auto reshape = v.getDefiningOp<ReshapeOp>()) {
    FailureOr<Walk> w = walk(reshape.getSource());
    if (failed(w))
      return failure();
    if (ArrayRef<int64_t>(w->strides).drop_front(first) !=
        ArrayRef<int64_t>(rowMajor(w->shape, first)).drop_front(first))
      return reshape.emitOpError()
                 << "reshapes a non-contiguous window ("
                 << describeTile(reshape.getSource().getType())
                 << "): no single access pattern walks it",
             failure();
    w->shape.assign(type.getShape().begin(), type.getShape().end());
    w->strides = rowMajor(w->shape, first);
    return w;
  }
  bool isBuffer = v.getDefiningOp<AllocOp>() != nullptr;
  if (auto arg = dyn_cast<BlockArgument>(v))
    isBuffer = isa_and_nonnull<ProgramOp, InlinedCallOp>(
        arg.getOwner()->getParentOp());
  if (!isBuffer) {
    if (Operation *def = v.getDefiningOp())
      def->emitOpError("does not define an ncore buffer or a view of one");
    return failure();
  }
  Walk w;
  w.root = v;
  w.rootType = type;
  w.shape.assign(type.getShape().begin(), type.getShape().end());
  w.strides = rowMajor(w.shape, first);
  w.startPartition = type.getStartPartition();
  return w;
}

FailureOr<TileAccess> mlir::ncore::resolveAccess(Value tile) {
  FailureOr<Walk> w = walk(tile);
  if (failed(w))
    return failure();
  auto type = cast<TileType>(tile.getType());
  TileAccess a;
  a.root = w->root;
  a.space = type.getSpace();
  a.elementType = type.getElementType();
  a.partitions = w->shape[0];
  if (type.isOnChip())
    a.startPartition = w->startPartition;
  else
    a.rowStride = w->strides[0];
  a.offset = w->offset;
  a.loopSteps = w->loopSteps;
  // Free dims, dropping size-1 dims and merging contiguous neighbours.
  for (unsigned d = 1; d < w->shape.size(); ++d) {
    if (w->shape[d] == 1)
      continue;
    FreeDimAccess dim{w->shape[d], w->strides[d]};
    if (!a.dims.empty() && a.dims.back().stride == dim.stride * dim.size) {
      a.dims.back().size *= dim.size;
      a.dims.back().stride = dim.stride;
      continue;
    }
    a.dims.push_back(dim);
  }
  if (a.dims.empty())
    a.dims.push_back({1, 1});
  return a;
}
