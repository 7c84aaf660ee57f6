//===- NcoreBuilder.cpp - building ncore programs -------------------------===//
#include "dialect/ncore/NcoreBuilder.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::ncore;

//===----------------------------------------------------------------------===//
// Index
//===----------------------------------------------------------------------===//

Index::Index(AffineExpr e) {
  if (auto c = dyn_cast_or_null<AffineConstantExpr>(e))
    cst = c.getValue();
  else
    expr = e;
}

std::optional<int64_t> Index::getConstant() const {
  if (expr)
    return std::nullopt;
  return cst;
}

AffineExpr Index::getExpr(MLIRContext *ctx) const {
  return expr ? expr : getAffineConstantExpr(cst, ctx);
}

Index Index::operator+(const Index &o) const {
  if (!expr && !o.expr)
    return Index(cst + o.cst);
  MLIRContext *ctx = (expr ? expr : o.expr).getContext();
  return Index(getExpr(ctx) + o.getExpr(ctx));
}

Index Index::operator*(int64_t k) const {
  if (!expr)
    return Index(cst * k);
  return Index(expr * k);
}

Index Index::floorDiv(int64_t k) const {
  if (!expr)
    return Index(llvm::divideFloorSigned(cst, k));
  return Index(expr.floorDiv(k));
}

//===----------------------------------------------------------------------===//
// NcoreBuilder: program arguments and tiles
//===----------------------------------------------------------------------===//

NcoreBuilder::NcoreBuilder(OpBuilder b, ProgramOp program, Location loc)
    : b(b), prog(program), currentLoc(loc) {}

Value NcoreBuilder::constantArg(TileType type, DictionaryAttr argAttrs) {
  Attribute key = ArrayAttr::get(
      context(),
      {TypeAttr::get(type), argAttrs ? Attribute(argAttrs) : b.getUnitAttr()});
  auto it = constants.find(key);
  if (it != constants.end())
    return it->second;
  unsigned index = prog.getNumArguments();
  prog.insertArgument(
      index, type, argAttrs ? argAttrs : b.getDictionaryAttr({}), currentLoc);
  prog.setArgRole(index, "constant");
  Value arg = prog.getArgument(index);
  constants[key] = arg;
  return arg;
}

Value NcoreBuilder::alloc(MemSpace space, ArrayRef<int64_t> shape,
                          Type elementType, StringRef name) {
  OpBuilder::InsertionGuard g(b);
  if (!loops.empty())
    b.setInsertionPoint(loops.front());
  return create<AllocOp>(TileType::get(space, shape, elementType),
                         IntegerAttr(),
                         name.empty() ? StringAttr() : b.getStringAttr(name));
}

Value NcoreBuilder::view(Value source, ArrayRef<int64_t> shape,
                         ArrayRef<Index> offsets, ArrayRef<int64_t> strides) {
  TileType src = tileOf(source);
  bool unitStrides = llvm::all_of(strides, [](int64_t s) { return s == 1; });
  bool atOrigin = llvm::all_of(offsets, [](const Index &o) {
    return o.getConstant() == std::optional<int64_t>(0);
  });
  if (shape == src.getShape() && unitStrides && atOrigin)
    return source;
  // The same window already viewed in this block.
  bool cache = appending();
  SmallVector<int64_t, 24> words;
  size_t hash = 0;
  if (cache) {
    words.push_back(static_cast<int64_t>(shape.size()));
    words.append(shape.begin(), shape.end());
    words.push_back(unitStrides ? 0 : static_cast<int64_t>(strides.size()));
    if (!unitStrides)
      words.append(strides.begin(), strides.end());
    for (const Index &o : offsets) {
      std::optional<int64_t> c = o.getConstant();
      words.push_back(c ? 0
                        : reinterpret_cast<intptr_t>(
                              o.getExpr(context()).getAsOpaquePointer()));
      words.push_back(c ? *c : 0);
    }
    hash = llvm::hash_combine(
        b.getInsertionBlock(), source.getAsOpaquePointer(),
        llvm::hash_combine_range(words.begin(), words.end()));
    auto it = viewIndex.find(hash);
    if (it != viewIndex.end()) {
      const ViewEntry &e = viewEntries[it->second];
      if (e.block == b.getInsertionBlock() && e.source == source &&
          ArrayRef<int64_t>(viewKeyWords).slice(e.wordsAt, e.numWords) ==
              ArrayRef<int64_t>(words))
        return e.view;
      cache = false; // another window with this hash holds the entry
    }
  }
  // The map takes only the induction variables the offsets use, outermost
  // first.
  SmallVector<AffineExpr> exprs;
  llvm::SmallBitVector used(loops.size());
  for (const Index &o : offsets) {
    exprs.push_back(o.getExpr(context()));
    exprs.back().walk([&](AffineExpr e) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        used.set(d.getPosition());
    });
  }
  SmallVector<Value> operands;
  SmallVector<AffineExpr> renumber;
  for (unsigned d = 0; d < loops.size(); ++d) {
    renumber.push_back(getAffineDimExpr(operands.size(), context()));
    if (used.test(d))
      operands.push_back(loops[d].getInductionVar());
  }
  for (AffineExpr &e : exprs)
    e = e.replaceDims(renumber);
  auto map = AffineMap::get(operands.size(), 0, exprs, context());
  Value v = create<ViewOp>(source, shape, operands, map,
                           unitStrides ? ArrayRef<int64_t>() : strides);
  if (cache) {
    viewIndex[hash] = static_cast<unsigned>(viewEntries.size());
    viewEntries.push_back({b.getInsertionBlock(), source,
                           static_cast<uint32_t>(viewKeyWords.size()),
                           static_cast<uint32_t>(words.size()), v});
    viewKeyWords.insert(viewKeyWords.end(), words.begin(), words.end());
  }
  return v;
}

bool NcoreBuilder::appending() const {
  Block *block = b.getInsertionBlock();
  if (!block)
    return false;
  Block::iterator at = b.getInsertionPoint();
  return at == block->end() || (std::next(at) == block->end() &&
                                at->hasTrait<OpTrait::IsTerminator>());
}

Value NcoreBuilder::reshape(Value source, ArrayRef<int64_t> shape) {
  TileType src = tileOf(source);
  if (src.getShape() == shape)
    return source;
  return create<ReshapeOp>(src.withShape(shape), source);
}

//===----------------------------------------------------------------------===//
// NcoreBuilder: loops
//===----------------------------------------------------------------------===//

void NcoreBuilder::loop(int64_t trips, function_ref<void(Index)> body) {
  auto l = create<LoopOp>(trips);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(l.getBodyBlock()->getTerminator());
  loops.push_back(l);
  body(Index(getAffineDimExpr(loops.size() - 1, context())));
  loops.pop_back();
}

void NcoreBuilder::forRange(int64_t trips, function_ref<void(Index)> body) {
  if (trips <= 0)
    return;
  if (trips == 1) {
    body(Index(0));
    return;
  }
  loop(trips, body);
}

void NcoreBuilder::forRangeUnrolled(int64_t trips, int64_t unroll,
                                    function_ref<void(Index, unsigned)> body) {
  if (trips <= 0)
    return;
  unroll = std::max<int64_t>(1, std::min(unroll, trips));
  int64_t iters = trips / unroll;
  forRange(iters, [&](Index i) {
    for (int64_t u = 0; u < unroll; ++u)
      body(i * unroll + u, unsigned(u));
  });
  for (int64_t r = iters * unroll; r < trips; ++r)
    body(Index(r), unsigned(r % unroll));
}

void NcoreBuilder::forEachChunk(
    int64_t n, int64_t chunk,
    function_ref<void(Index start, int64_t size, bool first)> body,
    bool peelFirst) {
  int64_t full = n / chunk, rem = n % chunk;
  int64_t first = 0;
  if (peelFirst && full > 0) {
    body(Index(0), chunk, true);
    first = 1;
  }
  if (full > first)
    forRange(full - first, [&](Index i) {
      body((i + first) * chunk, chunk, /*first=*/false);
    });
  if (rem)
    body(Index(full * chunk), rem, /*first=*/peelFirst && full == 0);
}

void NcoreBuilder::forEachChunkAlternating(
    int64_t n, int64_t chunk,
    function_ref<void(Index start, int64_t size, unsigned parity)> body) {
  int64_t full = n / chunk, rem = n % chunk;
  forRangeAlternating(
      full, [&](Index i, unsigned parity) { body(i * chunk, chunk, parity); });
  if (rem)
    body(Index(full * chunk), rem, full % 2);
}

void NcoreBuilder::forEachChunkPipelined(
    int64_t n, int64_t chunk, function_ref<void(Index, int64_t, unsigned)> load,
    function_ref<void(Index, int64_t, unsigned)> compute) {
  int64_t full = n / chunk, rem = n % chunk;
  int64_t count = full + (rem ? 1 : 0);
  if (count == 0)
    return;
  auto sizeOf = [&](int64_t i) { return i < full ? chunk : rem; };
  load(Index(0), sizeOf(0), 0);
  // Steps i = 0 .. count-2: load(i + 1), compute(i). Those whose chunks are
  // both full go in a loop over pairs of steps (buffers 1, 0 then 0, 1).
  int64_t steady = full >= 1 ? full - 1 : 0;
  forRange(steady / 2, [&](Index j) {
    load(j * (2 * chunk) + chunk, chunk, 1);
    compute(j * (2 * chunk), chunk, 0);
    load(j * (2 * chunk) + 2 * chunk, chunk, 0);
    compute(j * (2 * chunk) + chunk, chunk, 1);
  });
  for (int64_t i = steady / 2 * 2; i + 1 < count; ++i) {
    load(Index((i + 1) * chunk), sizeOf(i + 1), (i + 1) % 2);
    compute(Index(i * chunk), sizeOf(i), i % 2);
  }
  compute(Index((count - 1) * chunk), sizeOf(count - 1), (count - 1) % 2);
}

//===----------------------------------------------------------------------===//
// NcoreBuilder: instructions
//===----------------------------------------------------------------------===//

void NcoreBuilder::dma(Value dst, Value src) {
  create<DmaCopyOp>(dst, src, EngineAttr());
}

void NcoreBuilder::dmaFixed(Value dst, Value src) {
  create<DmaCopyOp>(dst, src, EngineAttr())
      ->setAttr(kFixedPiecesAttrName, b.getUnitAttr());
}

void NcoreBuilder::dmaInParts(Value dst, Value src, int64_t parts) {
  SmallVector<int64_t> ds(tileOf(dst).getShape()), ss(tileOf(src).getShape());
  int64_t n = ds[0], rows = llvm::divideCeil(n, std::max<int64_t>(1, parts));
  for (int64_t r = 0; r < n; r += rows) {
    ds[0] = ss[0] = std::min(rows, n - r);
    SmallVector<Index> dOff(ds.size(), Index(0)), sOff(ss.size(), Index(0));
    dOff[0] = sOff[0] = Index(r);
    dma(view(dst, ds, dOff), view(src, ss, sOff));
  }
}

void NcoreBuilder::matmul(Value dst, Value stationary, Value moving,
                          bool accumulate) {
  create<MatmulOp>(dst, stationary, moving, accumulate, EngineAttr());
}

void NcoreBuilder::matmulAccumulateOver(Value dst, Value stationary,
                                        Value moving, const Index &loopIndex) {
  if (loopIndex.getConstant()) {
    assert(*loopIndex.getConstant() == 0 && "the first iteration");
    matmul(dst, stationary, moving);
    return;
  }
  auto dim = dyn_cast<AffineDimExpr>(loopIndex.getExpr(context()));
  assert(dim && "the index of a loop this builder opened");
  auto mm = create<MatmulOp>(dst, stationary, moving, true, EngineAttr());
  mm->setAttr(kStartLevelAttrName,
              b.getI64IntegerAttr(loops[dim.getPosition()].getDepth() - 1));
}

void NcoreBuilder::transpose(Value dst, Value src) {
  create<TransposeOp>(dst, src, EngineAttr());
}

void NcoreBuilder::activation(ActFunc func, Value dst, Value src, double scale,
                              double bias, Value biasTile, Value reduce) {
  create<ActivationOp>(
      dst, src, biasTile, reduce, ActFuncAttr::get(context(), func),
      b.getF32FloatAttr(scale), b.getF32FloatAttr(bias), pinned);
}

void NcoreBuilder::tensorTensor(AluOp op, Value dst, Value lhs, Value rhs) {
  create<TensorTensorOp>(dst, lhs, rhs, op, pinned);
}

void NcoreBuilder::tensorScalar(AluOp op, Value dst, Value src, double imm,
                                bool reverse) {
  create<TensorScalarOp>(dst, src, Value(), Value(), op, b.getF32FloatAttr(imm),
                         reverse, AluOpAttr(), FloatAttr(), pinned);
}

void NcoreBuilder::tensorScalar(AluOp op, Value dst, Value src,
                                Value scalarTile, bool reverse) {
  create<TensorScalarOp>(dst, src, scalarTile, Value(), op, FloatAttr(),
                         reverse, AluOpAttr(), FloatAttr(), pinned);
}

void NcoreBuilder::tensorScalar(AluOp op0, ScalarOperand s0, AluOp op1,
                                ScalarOperand s1, Value dst, Value src) {
  auto imm = [&](const ScalarOperand &s) {
    return s.tile ? FloatAttr() : b.getF32FloatAttr(s.imm);
  };
  create<TensorScalarOp>(dst, src, s0.tile, s1.tile, op0, imm(s0), false,
                         AluOpAttr::get(b.getContext(), op1), imm(s1), pinned);
}

void NcoreBuilder::reduce(AluOp op, Value dst, Value src) {
  create<TensorReduceOp>(dst, src, op, pinned);
}

void NcoreBuilder::copy(Value dst, Value src) {
  create<TensorCopyOp>(dst, src, pinned);
}

void NcoreBuilder::reciprocal(Value dst, Value src) {
  create<ReciprocalOp>(dst, src, pinned);
}

Value NcoreBuilder::memset(Value dst, double value) {
  create<MemsetOp>(dst, b.getF32FloatAttr(value), pinned);
  return dst;
}

void NcoreBuilder::iota(Value dst, double base, double partitionStep,
                        double freeStep) {
  create<IotaOp>(dst, b.getF32FloatAttr(base), b.getF32FloatAttr(partitionStep),
                 b.getF32FloatAttr(freeStep), pinned);
}

void NcoreBuilder::affineSelect(AluOp cmp, Value dst, Value src, double base,
                                double partitionStep, double freeStep,
                                double onFalse) {
  create<AffineSelectOp>(
      dst, src, AluOpAttr::get(context(), cmp), b.getF32FloatAttr(base),
      b.getF32FloatAttr(partitionStep), b.getF32FloatAttr(freeStep),
      b.getF32FloatAttr(onFalse), pinned);
}

void NcoreBuilder::allReduce(AluOp op, Value dst, Value src, int64_t ranks) {
  create<AllReduceOp>(dst, src, op, uint64_t(ranks), EngineAttr());
}

void NcoreBuilder::allGather(Value dst, Value src, int64_t ranks) {
  create<AllGatherOp>(dst, src, uint64_t(ranks), EngineAttr());
}

CallKernelOp NcoreBuilder::callKernel(StringRef callee, ValueRange operands) {
  return create<CallKernelOp>(callee, operands);
}

Value NcoreBuilder::onesRow(int64_t p, Type elementType) {
  Value &tile = ones[{p, elementType}];
  if (tile)
    return tile;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&prog.getBody().front());
  tile =
      memset(create<AllocOp>(TileType::get(MemSpace::Sbuf, {1, p}, elementType),
                             IntegerAttr(), StringAttr()),
             1.0);
  return tile;
}

void NcoreBuilder::broadcastPartitions(Value dst, Value row) {
  TileType rt = tileOf(row);
  int64_t p = tileOf(dst).getShape()[0], n = rt.getShape()[1];
  Value ones = onesRow(p, rt.getElementType());
  int64_t chunk = std::min<int64_t>(n, kMatmulMaxN);
  Value acc = psum({p, chunk});
  forEachChunk(n, chunk, [&](Index c0, int64_t nc, bool) {
    Value accv = view(acc, {p, nc}, {0, 0});
    matmul(accv, ones, view(row, {1, nc}, {0, c0}));
    copy(view(dst, {p, nc}, {0, c0}), accv);
  });
}
