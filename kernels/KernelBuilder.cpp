//===- KernelBuilder.cpp - ncore op helpers for kernels -------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Registry.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

Ix Ix::operator+(const Ix &o) const {
  Ix r = *this;
  r.c += o.c;
  for (const auto &term : o.terms) {
    auto it =
        llvm::find_if(r.terms, [&](auto &t) { return t.first == term.first; });
    if (it != r.terms.end())
      it->second += term.second;
    else
      r.terms.push_back(term);
  }
  return r;
}

Ix Ix::operator*(int64_t k) const {
  Ix r = *this;
  r.c *= k;
  for (auto &t : r.terms)
    t.second *= k;
  return r;
}

KernelBuilder::KernelBuilder(OpBuilder &b, Location loc, ProgramOp program)
    : b(b), loc(loc), prog(program) {}

Value KernelBuilder::constant(const ConstantSpec &spec, Type dtype) {
  DictionaryAttr attr = spec.toAttr(ctx());
  for (auto &[a, v] : constants)
    if (a == attr && tile(v).getElementType() == dtype)
      return v;
  auto type =
      TileType::get(ctx(), MemSpace::Hbm, {spec.rows, spec.cols}, dtype, 0);
  unsigned idx = prog.getNumArguments();
  auto fn = cast<FunctionOpInterface>(prog.getOperation());
  fn.insertArgument(idx, type, b.getDictionaryAttr({}), loc);
  prog.setArgRole(idx, "constant");
  prog.setArgAttr(idx, kConstantAttrName, attr);
  Value v = prog.getBody().getArgument(idx);
  constants.push_back({attr, v});
  return v;
}

Value KernelBuilder::sbuf(ArrayRef<int64_t> shape, Type dtype) {
  return b.create<AllocOp>(
      loc, TileType::get(ctx(), MemSpace::Sbuf, shape, dtype, 0));
}

Value KernelBuilder::hbmScratch(ArrayRef<int64_t> shape, Type dtype,
                                StringRef name) {
  return b.create<AllocOp>(loc,
                           TileType::get(ctx(), MemSpace::Hbm, shape, dtype, 0),
                           IntegerAttr(), b.getStringAttr(name));
}

Value KernelBuilder::psum(ArrayRef<int64_t> shape) {
  return b.create<AllocOp>(
      loc, TileType::get(ctx(), MemSpace::Psum, shape, f32(), 0));
}

Value KernelBuilder::view(Value src, ArrayRef<int64_t> shape,
                          ArrayRef<Ix> offsets, ArrayRef<int64_t> strides) {
  TileType st = tile(src);
  SmallVector<Value> ivs;
  for (const Ix &o : offsets)
    for (auto &[v, k] : o.terms)
      if (!llvm::is_contained(ivs, v))
        ivs.push_back(v);
  SmallVector<AffineExpr> exprs;
  for (const Ix &o : offsets) {
    AffineExpr e = b.getAffineConstantExpr(o.c);
    for (auto &[v, k] : o.terms)
      e = e + b.getAffineDimExpr(llvm::find(ivs, v) - ivs.begin()) * k;
    exprs.push_back(e);
  }
  auto map = AffineMap::get(ivs.size(), 0, exprs, ctx());
  int64_t start = st.getStartPartition();
  if (st.isOnChip())
    start += offsets[0].c;
  auto rt =
      TileType::get(ctx(), st.getSpace(), shape, st.getElementType(), start);
  DenseI64ArrayAttr strideAttr;
  if (!strides.empty() &&
      llvm::any_of(strides, [](int64_t s) { return s != 1; }))
    strideAttr = b.getDenseI64ArrayAttr(strides);
  return b.create<ViewOp>(loc, rt, src, ivs, AffineMapAttr::get(map),
                          strideAttr);
}

Value KernelBuilder::reshape(Value src, ArrayRef<int64_t> shape) {
  TileType st = tile(src);
  return b.create<ReshapeOp>(loc,
                             TileType::get(ctx(), st.getSpace(), shape,
                                           st.getElementType(),
                                           st.getStartPartition()),
                             src);
}

Value KernelBuilder::broadcastToPartitions(Value src, int64_t partitions) {
  TileType st = tile(src);
  Type dtype = st.getElementType();
  int64_t n = st.getNumElements();
  Value row = sbuf({1, n}, dtype);
  dma(row, src);
  Value ones = sbuf({1, partitions}, dtype);
  memset(ones, 1.0f);
  Value out = sbuf({partitions, n}, dtype);
  Value acc = psum({partitions, std::min<int64_t>(n, kMatmulMaxN)});
  for (int64_t c = 0; c < n; c += kMatmulMaxN) {
    int64_t w = std::min<int64_t>(kMatmulMaxN, n - c);
    Value a = view(acc, {partitions, w}, {0, 0});
    matmul(a, ones, view(row, {1, w}, {0, c}));
    copy(view(out, {partitions, w}, {0, c}), a);
  }
  return out;
}

void KernelBuilder::loop(int64_t trips, llvm::function_ref<void(Ix)> body) {
  auto l = b.create<LoopOp>(loc, trips);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(l.getBodyBlock()->getTerminator());
  ++depth;
  body(Ix::of(l.getInductionVar()));
  --depth;
}

void KernelBuilder::loopUnrolled(int64_t trips, int64_t unroll,
                                 llvm::function_ref<void(Ix)> body) {
  loopRing(trips, unroll, [&](Ix i, unsigned) { body(i); });
}

void KernelBuilder::dmaLoop(int64_t count, llvm::function_ref<void(Ix)> body) {
  if (count <= 0)
    return;
  if (depth == 0) {
    loopUnrolled(count, 1, body);
    return;
  }
  int64_t streams = std::min(count, kDmaStreams), range = count / streams;
  loopUnrolled(range, 1, [&](Ix i) {
    for (int64_t u = 0; u < streams; ++u)
      body(i + u * range);
  });
  for (int64_t c = streams * range; c < count; ++c)
    body(Ix(c));
}

void KernelBuilder::loopRing(int64_t trips, int64_t unroll,
                             llvm::function_ref<void(Ix, unsigned)> body) {
  if (trips <= 0)
    return;
  unroll = std::max<int64_t>(1, std::min(unroll, trips));
  int64_t iters = trips / unroll;
  if (iters == 1) {
    for (int64_t u = 0; u < unroll; ++u)
      body(Ix(u), unsigned(u));
  } else if (iters > 1) {
    loop(iters, [&](Ix i) {
      for (int64_t u = 0; u < unroll; ++u)
        body(i * unroll + u, unsigned(u));
    });
  }
  for (int64_t r = iters * unroll; r < trips; ++r)
    body(Ix(r), unsigned(r % unroll));
}

void KernelBuilder::pipelinedLoop(
    int64_t trips, llvm::function_ref<void(Ix, unsigned)> load,
    llvm::function_ref<void(Ix, unsigned)> compute) {
  if (trips <= 0)
    return;
  load(Ix(0), 0);
  // Pairs (2p, 2p + 1) while iteration 2p + 2 exists to be loaded.
  int64_t pairs = (trips - 1) / 2;
  loopUnrolled(pairs, 1, [&](Ix p) {
    Ix i = p * 2;
    load(i + 1, 1);
    compute(i, 0);
    load(i + 2, 0);
    compute(i + 1, 1);
  });
  Ix last(2 * pairs);
  if (trips - 2 * pairs == 2) {
    load(last + 1, 1);
    compute(last, 0);
    compute(last + 1, 1);
  } else {
    compute(last, 0);
  }
}

void KernelBuilder::dma(Value dst, Value src) {
  b.create<DmaCopyOp>(loc, dst, src, EngineAttr());
}

void KernelBuilder::matmul(Value dst, Value stationary, Value moving,
                           bool accumulate) {
  b.create<MatmulOp>(loc, dst, stationary, moving, accumulate, EngineAttr());
}

void KernelBuilder::matmulAccumulateOver(Value dst, Value stationary,
                                         Value moving, const Ix &loopIndex) {
  if (loopIndex.terms.empty()) {
    // A loop of one iteration emitted without its loop: iteration 0.
    assert(loopIndex.c == 0 && "the first iteration");
    matmul(dst, stationary, moving);
    return;
  }
  assert(loopIndex.terms.size() == 1 && "an ncore.loop index");
  auto iv = cast<BlockArgument>(loopIndex.terms.front().first);
  auto loop = cast<LoopOp>(iv.getOwner()->getParentOp());
  auto mm =
      b.create<MatmulOp>(loc, dst, stationary, moving, true, EngineAttr());
  mm->setAttr(kStartLevelAttrName, b.getI64IntegerAttr(loop.getDepth() - 1));
}

void KernelBuilder::transpose(Value dst, Value src) {
  b.create<TransposeOp>(loc, dst, src, EngineAttr());
}

void KernelBuilder::activation(ActFunc func, Value dst, Value src, float scale,
                               float bias, Value biasTile, Value reduce) {
  b.create<ActivationOp>(
      loc, dst, src, biasTile, reduce, ActFuncAttr::get(ctx(), func),
      b.getF32FloatAttr(scale), b.getF32FloatAttr(bias), EngineAttr());
}

void KernelBuilder::tensorTensor(AluOp op, Value dst, Value lhs, Value rhs) {
  b.create<TensorTensorOp>(loc, dst, lhs, rhs, op, EngineAttr());
}

void KernelBuilder::tensorScalar(AluOp op, Value dst, Value src, float imm,
                                 bool reverse) {
  b.create<TensorScalarOp>(loc, dst, src, Value(), op, b.getF32FloatAttr(imm),
                           reverse, EngineAttr());
}

void KernelBuilder::tensorScalar(AluOp op, Value dst, Value src,
                                 Value scalarTile, bool reverse) {
  b.create<TensorScalarOp>(loc, dst, src, scalarTile, op, FloatAttr(), reverse,
                           EngineAttr());
}

void KernelBuilder::reduce(AluOp op, Value dst, Value src) {
  b.create<TensorReduceOp>(loc, dst, src, op, EngineAttr());
}

void KernelBuilder::copy(Value dst, Value src) {
  b.create<TensorCopyOp>(loc, dst, src, EngineAttr());
}

void KernelBuilder::reciprocal(Value dst, Value src) {
  b.create<ReciprocalOp>(loc, dst, src, EngineAttr());
}

void KernelBuilder::memset(Value dst, float value) {
  b.create<MemsetOp>(loc, dst, b.getF32FloatAttr(value), EngineAttr());
}

void KernelBuilder::iota(Value dst, float base, float partitionStep,
                         float freeStep) {
  b.create<IotaOp>(loc, dst, b.getF32FloatAttr(base),
                   b.getF32FloatAttr(partitionStep),
                   b.getF32FloatAttr(freeStep), EngineAttr());
}

ProgramOp seam::createKernelProgram(OpBuilder &b, ModuleOp module,
                                    StringRef name, ArrayRef<TileType> inputs,
                                    ArrayRef<TileType> outputs) {
  SmallVector<Type> types(inputs.begin(), inputs.end());
  types.append(outputs.begin(), outputs.end());
  b.setInsertionPointToEnd(module.getBody());
  auto prog = b.create<ProgramOp>(module.getLoc(), name, types);
  for (unsigned i = 0; i < types.size(); ++i)
    prog.setArgRole(i, i < inputs.size() ? "input" : "output");
  b.setInsertionPointToStart(&prog.getBody().front());
  return prog;
}

ProgramOp seam::createKernelProgram(OpBuilder &b, ModuleOp module,
                                    StringRef name,
                                    const KernelSignature &sig) {
  SmallVector<TileType> ins;
  for (RankedTensorType t : sig.args)
    ins.push_back(*hbmTileFor(t));
  return createKernelProgram(b, module, name, ins,
                             {*hbmTileFor(sig.results[0])});
}

FailureOr<TileType> seam::hbmTileFor(RankedTensorType t) {
  SmallVector<int64_t> shape(t.getShape());
  Type elt = t.getElementType();
  if (auto c = dyn_cast<ComplexType>(elt)) {
    elt = c.getElementType();
    shape.push_back(2);
  }
  if (!dtypeCode(elt) || !t.hasStaticShape())
    return failure();
  return TileType::get(t.getContext(), MemSpace::Hbm, shape, elt, 0);
}
