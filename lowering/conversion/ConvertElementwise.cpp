//===- ConvertElementwise.cpp - gelu/silu and broadcast add/mul ----------===//
//
// Unary ops are one Scalar-engine activation per tile. Binary ops are one
// Vector-engine tensor_tensor per tile; an operand broadcast over all rows
// (a [1, 1, D] modulation vector, a [D] bias) is replicated onto the
// partitions once, before the row loop (a ones-matmul on the Tensor engine).
// A small operand in HBM (a program input, a kernel's result) is brought
// into SBUF whole before the row loop (ProgramLowering::stagedInSbuf).
//
//===----------------------------------------------------------------------===//
#include "dialect/seam/DeviceSupport.h"
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

/// Free elements per instruction when a tile is staged through SBUF.
static constexpr int64_t kStageChunk = 2048;

static int64_t chunkFor(ArrayRef<Placement> ps) {
  bool allSbuf =
      llvm::all_of(ps, [](const Placement &p) { return p.inSbuf(); });
  return allSbuf ? ps.front().cols : std::min(ps.front().cols, kStageChunk);
}

template <ncore::ActFunc Func>
static LogicalResult lowerUnary(ProgramLowering &pl, Operation *op) {
  auto x = pl.get(op->getOperand(0), op);
  if (failed(x))
    return failure();
  int64_t budget = pl.workingBudget() / 2;
  *x = pl.stagedInSbuf(*x, budget);
  Placement y = pl.placeResult(op->getResult(0));
  int64_t chunk = chunkFor({*x, y});
  pl.forEachRowTile(x->rows, [&](Index r0, int64_t p) {
    pl.forEachChunk(x->cols, chunk, [&](Index c0, int64_t n, bool) {
      Value in = pl.load(*x, r0, p, c0, n);
      Value out = pl.outTile(y, r0, p, c0, n);
      pl.activation(Func, out, in);
      pl.storeOut(y, r0, p, c0, n, out);
    });
  });
  return success();
}

using Broadcast = BroadcastKind;
static Broadcast classify(ArrayRef<int64_t> operand, ArrayRef<int64_t> result) {
  return classifyBroadcast(operand, result);
}

/// y = lhs `alu` rhs (equal shapes) on the rows [r0, r0 + p): per column
/// chunk, one tensor_tensor.
static RowProducer binaryRows(ProgramLowering &pl, ncore::AluOp alu,
                              const Placement &lhs, const Placement &rhs,
                              const Placement &y) {
  int64_t chunk = chunkFor({lhs, rhs, y});
  return [&pl, alu, lhs, rhs, y, chunk](Index r0, int64_t p) {
    pl.forEachChunk(y.cols, chunk, [&](Index c0, int64_t n, bool) {
      Value a = pl.load(lhs, r0, p, c0, n);
      Value c = pl.load(rhs, r0, p, c0, n);
      Value out = pl.outTile(y, r0, p, c0, n);
      pl.tensorTensor(alu, out, a, c);
      pl.storeOut(y, r0, p, c0, n, out);
    });
  };
}

template <ncore::AluOp Alu>
static LogicalResult lowerBinary(ProgramLowering &pl, Operation *op) {
  auto lhs = pl.get(op->getOperand(0), op), rhs = pl.get(op->getOperand(1), op);
  if (failed(lhs) || failed(rhs))
    return failure();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = resultType.getShape();
  Broadcast bl = classify(lhs->shape, shape), br = classify(rhs->shape, shape);
  if (bl == Broadcast::Rows && br == Broadcast::None) {
    std::swap(lhs, rhs); // add and mul commute
    std::swap(bl, br);
  }
  if (bl != Broadcast::None || br == Broadcast::Unsupported) {
    auto fmt = [](ArrayRef<int64_t> s) {
      std::string str;
      llvm::raw_string_ostream os(str);
      os << "[";
      llvm::interleaveComma(s, os);
      os << "]";
      return str;
    };
    return op->emitOpError()
           << "convert-seam-to-ncore: broadcast of " << fmt(lhs->shape)
           << " and " << fmt(rhs->shape) << " to " << fmt(shape)
           << " is not lowered (supported: equal shapes, or one operand "
              "broadcast over all rows)";
  }
  Placement y = pl.placeResult(op->getResult(0));
  int64_t cols = y.cols;
  int64_t budget = pl.workingBudget() / 2;
  bool same = op->getOperand(0) == op->getOperand(1);
  *lhs = pl.stagedInSbuf(*lhs, budget);
  if (same)
    *rhs = *lhs;
  else if (br == Broadcast::None)
    *rhs = pl.stagedInSbuf(*rhs, budget);
  if (br == Broadcast::Rows) {
    int64_t p = std::min(y.rows, kNumPartitions);
    int64_t eb = y.elementType.isBF16() ? 2 : 4;
    if (cols * eb > pl.workingBudget() / 2) {
      // A row longer than the working space: replicated a column chunk at
      // a time, the row loop inside.
      int64_t chunk = std::min(chunkFor({*lhs, y}), kStageChunk);
      pl.forEachChunk(cols, chunk, [&](Index c0, int64_t n, bool) {
        Value vec = pl.broadcastRow(*rhs, c0, n, p);
        pl.forEachRowTile(y.rows, [&](Index r0, int64_t pp) {
          Value a = pl.load(*lhs, r0, pp, c0, n);
          Value v = pl.view(vec, {pp, n}, {0, 0});
          Value out = pl.outTile(y, r0, pp, c0, n);
          pl.tensorTensor(Alu, out, a, v);
          pl.storeOut(y, r0, pp, c0, n, out);
        });
      });
      return success();
    }
    // Replicate the vector once; [128, cols] stays live for the op.
    Value vec = pl.broadcastRow(*rhs, 0, cols, p);
    int64_t chunk = chunkFor({*lhs, y});
    pl.forEachRowTile(y.rows, [&](Index r0, int64_t pp) {
      pl.forEachChunk(cols, chunk, [&](Index c0, int64_t n, bool) {
        Value a = pl.load(*lhs, r0, pp, c0, n);
        Value v = pl.view(vec, {pp, n}, {0, c0});
        Value out = pl.outTile(y, r0, pp, c0, n);
        pl.tensorTensor(Alu, out, a, v);
        pl.storeOut(y, r0, pp, c0, n, out);
      });
    });
    return success();
  }
  // Row tiles in pairs (two instructions per loop iteration): ncore-schedule
  // places each instruction on an engine, so the two halves can run on the
  // Vector engine and GpSimd together.
  RowProducer rows = binaryRows(pl, Alu, *lhs, *rhs, y);
  pl.forEachChunkAlternating(
      y.rows, kNumPartitions,
      [&](Index r0, int64_t p, unsigned) { rows(r0, p); });
  return success();
}

/// A binary op of equal shapes as a row producer (see RowProducer): its
/// operands staged as lowerBinary stages them, its result placed now.
template <ncore::AluOp Alu>
static RowProducer binaryRowProducer(ProgramLowering &pl, Operation *op) {
  Value l = op->getOperand(0), r = op->getOperand(1);
  auto lhs = pl.get(l, op), rhs = pl.get(r, op);
  if (failed(lhs) || failed(rhs))
    return nullptr;
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  if (classify(lhs->shape, shape) != Broadcast::None ||
      classify(rhs->shape, shape) != Broadcast::None)
    return nullptr;
  Placement y = pl.placeResult(op->getResult(0));
  int64_t budget = pl.workingBudget() / 2;
  *lhs = pl.stagedInSbuf(*lhs, budget);
  *rhs = l == r ? *lhs : pl.stagedInSbuf(*rhs, budget);
  return binaryRows(pl, Alu, *lhs, *rhs, y);
}

void conversion::populateElementwiseLowerings(LoweringTable &table) {
  table[GeluOp::getOperationName()] = lowerUnary<ncore::ActFunc::Gelu>;
  table[GeluTanhOp::getOperationName()] = lowerUnary<ncore::ActFunc::GeluTanh>;
  table[SiluOp::getOperationName()] = lowerUnary<ncore::ActFunc::Silu>;
  table[AddOp::getOperationName()] = lowerBinary<ncore::AluOp::Add>;
  table[MulOp::getOperationName()] = lowerBinary<ncore::AluOp::Multiply>;
}

/// Per row tile, at most three chunks of kStageChunk fp32 elements: the
/// two operands' loads and the output tile (views when all are in SBUF).
static int64_t binaryRowBytes(Operation *op) {
  auto [rows, cols] = matrixOf(shapeOf(op->getResult(0)));
  (void)rows;
  return 3 * std::min(cols, kStageChunk) * 4;
}

void conversion::populateElementwiseRowProducers(RowProducerTable &table) {
  table[AddOp::getOperationName()] = {binaryRowProducer<ncore::AluOp::Add>,
                                      binaryRowBytes};
  table[MulOp::getOperationName()] = {binaryRowProducer<ncore::AluOp::Multiply>,
                                      binaryRowBytes};
}
