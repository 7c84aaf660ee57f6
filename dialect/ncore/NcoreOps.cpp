//===- NcoreOps.cpp - verifiers, builders and custom syntax of ncore ------===//
//
// Every hardware rule lives here (or in verifyTileType), each with a message
// that names the sizes involved.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreOps.h"
#include "dialect/ncore/NcoreTranslate.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::ncore;

static TileType tileOf(Value v) { return cast<TileType>(v.getType()); }
static std::string desc(Value v) { return describeTile(v.getType()); }

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

LogicalResult mlir::OpTrait::ncore::verifyValidTiles(Operation *op) {
  auto check = [&](Type t) -> LogicalResult {
    auto tile = dyn_cast<TileType>(t);
    if (!tile)
      return success();
    return verifyTileType([&] { return op->emitOpError(); }, tile.getSpace(),
                          tile.getShape(), tile.getElementType(),
                          tile.getStartPartition());
  };
  for (Type t : op->getOperandTypes())
    if (failed(check(t)))
      return failure();
  for (Type t : op->getResultTypes())
    if (failed(check(t)))
      return failure();
  return success();
}

LogicalResult mlir::ncore::verifyInstruction(Operation *op) {
  auto inst = cast<InstructionOpInterface>(op);
  Engine engine = inst.getExecutionEngine();
  if (!inst.isLegalEngine(engine)) {
    std::string legal;
    for (uint32_t e = 0; e <= getMaxEnumValForEngine(); ++e)
      if (inst.isLegalEngine(Engine(e)))
        legal += (legal.empty() ? "" : ", ") + stringifyEngine(Engine(e)).str();
    return op->emitOpError() << "cannot run on the " << stringifyEngine(engine)
                             << " engine (legal: " << legal << ")";
  }
  bool hbmAllowed = isa<DmaCopyOp, AllReduceOp, AllGatherOp>(op);
  for (OpOperand &use : op->getOpOperands()) {
    auto tile = dyn_cast<TileType>(use.get().getType());
    if (!tile)
      continue;
    if (engine == Engine::GpSimd && tile.getSpace() == MemSpace::Psum)
      return op->emitOpError()
             << "on the gpsimd engine cannot access PSUM: operand #"
             << use.getOperandNumber() << " is " << desc(use.get());
    if (!hbmAllowed && tile.getSpace() == MemSpace::Hbm)
      return op->emitOpError()
             << "cannot access HBM (only dma_copy and the collectives do): "
                "operand #"
             << use.getOperandNumber() << " is " << desc(use.get());
  }
  // Destination first: only the Tensor engine writes PSUM (the runtime
  // faults on any other writer; caught here, a timing-only run that never
  // executes the instruction cannot miss it).
  if (op->getNumOperands() && !hbmAllowed &&
      !inst.isLegalEngine(Engine::Tensor))
    if (auto dst = dyn_cast<TileType>(op->getOperand(0).getType());
        dst && dst.getSpace() == MemSpace::Psum)
      return op->emitOpError()
             << "writes PSUM, which only the Tensor engine does (matmul, "
                "transpose): operand #0 is "
             << desc(op->getOperand(0));
  return success();
}

LogicalResult mlir::ncore::verifySameLayout(Operation *op, Value a,
                                            llvm::StringRef aName, Value b,
                                            llvm::StringRef bName) {
  TileType ta = tileOf(a), tb = tileOf(b);
  if (ta.getPartitions() != tb.getPartitions() ||
      ta.getFreeElements() != tb.getFreeElements())
    return op->emitOpError()
           << aName << " and " << bName
           << " must have the same partitions and free size: " << aName
           << " is " << ta.getPartitions() << " x " << ta.getFreeElements()
           << " (" << desc(a) << "), " << bName << " is " << tb.getPartitions()
           << " x " << tb.getFreeElements() << " (" << desc(b) << ")";
  return success();
}

/// `v` is a [P, 1] per-partition column with P = partitions of `like`.
static LogicalResult verifyColumn(Operation *op, Value v, llvm::StringRef name,
                                  Value like) {
  TileType t = tileOf(v);
  if (t.getPartitions() != tileOf(like).getPartitions() ||
      t.getFreeElements() != 1)
    return op->emitOpError()
           << name << " must be a [" << tileOf(like).getPartitions()
           << ", 1] per-partition tile, got " << desc(v);
  return success();
}

static LogicalResult expectSpace(Operation *op, Value v, llvm::StringRef name,
                                 MemSpace space, llvm::StringRef why) {
  if (tileOf(v).getSpace() != space)
    return op->emitOpError() << why << ": " << name << " is " << desc(v);
  return success();
}

static bool isOneOf(AluOp op, std::initializer_list<AluOp> ops) {
  return llvm::is_contained(ops, op);
}

static LogicalResult verifyReduceAlu(Operation *op, AluOp alu) {
  if (!isOneOf(alu, {AluOp::Add, AluOp::Max, AluOp::Min, AluOp::Multiply}))
    return op->emitOpError()
           << "reduction must be add, max, min or multiply, got "
           << stringifyAluOp(alu);
  return success();
}

//===----------------------------------------------------------------------===//
// program
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state,
                      llvm::StringRef name, ArrayRef<Type> argTypes) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name),
                     TypeAttr::get(builder.getFunctionType(argTypes, {})));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type t : argTypes)
    block->addArgument(t, state.location);
}

ParseResult ProgramOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void ProgramOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

llvm::StringRef ProgramOp::getArgRole(unsigned i) {
  if (auto role = getArgAttrOfType<StringAttr>(i, kRoleAttrName))
    return role.getValue();
  return "input";
}

void ProgramOp::setArgRole(unsigned i, llvm::StringRef role) {
  setArgAttr(i, kRoleAttrName, StringAttr::get(getContext(), role));
}

LogicalResult ProgramOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError() << "a program returns nothing (outputs are HBM "
                            "arguments), got "
                         << getResultTypes().size() << " results";
  for (auto [i, t] : llvm::enumerate(getArgumentTypes())) {
    auto tile = dyn_cast<TileType>(t);
    if (!tile || tile.getSpace() != MemSpace::Hbm)
      return emitOpError() << "argument #" << i
                           << " must be an hbm tile (a tensor bound at "
                              "launch), got "
                           << describeTile(t);
    if (failed(verifyTileType([&] { return emitOpError(); }, tile.getSpace(),
                              tile.getShape(), tile.getElementType(),
                              tile.getStartPartition())))
      return failure();
    llvm::StringRef role = getArgRole(i);
    if (!llvm::is_contained({"input", "output", "param", "constant", "scratch"},
                            role))
      return emitOpError() << "argument #" << i << " has unknown "
                           << kRoleAttrName << " '" << role
                           << "' (expected input, output, param, constant or "
                              "scratch)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// call_kernel
//===----------------------------------------------------------------------===//

LogicalResult CallKernelOp::verify() {
  for (auto [i, v] : llvm::enumerate(getOperands()))
    if (tileOf(v).getSpace() != MemSpace::Hbm)
      return emitOpError() << "kernels take HBM tensors: operand #" << i
                           << " is " << desc(v);
  return success();
}

LogicalResult
CallKernelOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<ProgramOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "'" << getCallee()
                         << "' does not name an ncore.program";
  ArrayRef<Type> params = callee.getArgumentTypes();
  if (params.size() != getOperands().size())
    return emitOpError() << "'" << getCallee() << "' takes " << params.size()
                         << " tensors, got " << getOperands().size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(params, getOperandTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError() << "operand #" << i << " is "
                           << describeTile(std::get<1>(pair)) << " but '"
                           << getCallee() << "' expects "
                           << describeTile(std::get<0>(pair));
  return success();
}

bool mlir::ncore::hasDependencyBoundary(Operation *call) {
  auto b = call->getAttrOfType<StringAttr>(kBoundaryAttrName);
  return b && b.getValue() == "dependency";
}

//===----------------------------------------------------------------------===//
// inlined_call
//===----------------------------------------------------------------------===//

LogicalResult InlinedCallOp::verify() {
  Block *body = getBodyBlock();
  if (body->getNumArguments() != getOperands().size())
    return emitOpError() << "body takes " << body->getNumArguments()
                         << " tensors, got " << getOperands().size();
  for (auto [i, v] : llvm::enumerate(getOperands())) {
    if (tileOf(v).getSpace() != MemSpace::Hbm)
      return emitOpError() << "kernels take HBM tensors: operand #" << i
                           << " is " << desc(v);
    if (body->getArgument(i).getType() != v.getType())
      return emitOpError() << "operand #" << i << " is " << desc(v)
                           << " but the body's argument is "
                           << describeTile(body->getArgument(i).getType());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// loop
//===----------------------------------------------------------------------===//

void LoopOp::build(OpBuilder &builder, OperationState &state, int64_t trips) {
  state.getOrAddProperties<Properties>().trips =
      builder.getI64IntegerAttr(trips);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  block->addArgument(builder.getIndexType(), state.location);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  builder.create<YieldOp>(state.location);
}

/// ncore.loop %i trips 16 attributes {...} { body }
ParseResult LoopOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::Argument iv;
  int64_t trips = 0;
  if (parser.parseArgument(iv) || parser.parseKeyword("trips") ||
      parser.parseInteger(trips))
    return failure();
  result.getOrAddProperties<Properties>().trips =
      parser.getBuilder().getI64IntegerAttr(trips);
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  iv.type = parser.getBuilder().getIndexType();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, {iv}))
    return failure();
  LoopOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void LoopOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " trips " << int64_t(getTrips());
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {"trips"});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
}

unsigned LoopOp::getDepth() {
  unsigned depth = 1;
  for (Operation *p = (*this)->getParentOp(); p; p = p->getParentOp())
    if (isa<LoopOp>(p))
      ++depth;
  return depth;
}

LogicalResult LoopOp::verify() {
  if (int64_t(getTrips()) <= 0)
    return emitOpError() << "trip count must be > 0, got "
                         << int64_t(getTrips());
  if (getBody().getNumArguments() != 1 ||
      !getBody().getArgument(0).getType().isIndex())
    return emitOpError("body must have one index argument (the induction "
                       "variable)");
  if (getDepth() > kMaxLoopDepth)
    return emitOpError() << "nests " << getDepth() << " loops deep, at most "
                         << kMaxLoopDepth << " (program format)";
  return success();
}

//===----------------------------------------------------------------------===//
// alloc
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  TileType t = getType();
  if (!getOffset())
    return success();
  int64_t offset = int64_t(*getOffset());
  if (offset < 0)
    return emitOpError() << "offset must be >= 0, got " << offset;
  if (t.getSpace() != MemSpace::Psum)
    return success();
  int64_t bytes = t.getFreeBytes();
  if (offset % kPsumBankBytes + bytes > kPsumBankBytes)
    return emitOpError() << "psum tile of " << bytes
                         << " bytes per partition at offset " << offset
                         << " crosses a " << kPsumBankBytes
                         << "-byte PSUM bank boundary";
  if (offset + bytes > kPsumPartitionBytes)
    return emitOpError() << "psum tile at offset " << offset << " ends at byte "
                         << offset + bytes << ", beyond the "
                         << kPsumPartitionBytes << " bytes of a PSUM partition";
  return success();
}

//===----------------------------------------------------------------------===//
// view / reshape
//===----------------------------------------------------------------------===//

void ViewOp::build(OpBuilder &builder, OperationState &state,
                   TileType resultType, Value source,
                   ArrayRef<int64_t> offsets) {
  SmallVector<AffineExpr> exprs;
  for (int64_t o : offsets)
    exprs.push_back(builder.getAffineConstantExpr(o));
  auto map = AffineMap::get(0, 0, exprs, builder.getContext());
  build(builder, state, resultType, source, ValueRange{},
        AffineMapAttr::get(map), DenseI64ArrayAttr());
}

void ViewOp::build(OpBuilder &builder, OperationState &state, Value source,
                   ArrayRef<int64_t> shape, ValueRange ivs, AffineMap offsets,
                   ArrayRef<int64_t> strides) {
  auto src = cast<TileType>(source.getType());
  int64_t start = 0;
  if (src.isOnChip()) {
    start = src.getStartPartition();
    // On chip the partition offset is a constant (the verifier rejects any
    // other).
    if (auto c = dyn_cast<AffineConstantExpr>(offsets.getResult(0)))
      start += c.getValue();
  }
  auto type = TileType::get(src.getSpace(), shape, src.getElementType(), start);
  build(builder, state, type, source, ivs, AffineMapAttr::get(offsets),
        strides.empty() ? DenseI64ArrayAttr()
                        : builder.getDenseI64ArrayAttr(strides));
}

int64_t ViewOp::getStride(unsigned d) {
  if (auto strides = getStrides())
    return (*strides)[d];
  return 1;
}

/// Adds scale * e to the linear form constant + sum_k coeffs[k] * d_k, in
/// place (no form per subexpression: the scheduler and the emitter resolve
/// every operand's views several times). Failure when e is not linear in
/// the dims: mod, floordiv, ceildiv or a product of two dims.
static LogicalResult accumulateLinear(AffineExpr e, int64_t scale,
                                      MutableArrayRef<int64_t> coeffs,
                                      int64_t &constant) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    constant += scale * cast<AffineConstantExpr>(e).getValue();
    return success();
  case AffineExprKind::DimId:
    coeffs[cast<AffineDimExpr>(e).getPosition()] += scale;
    return success();
  case AffineExprKind::Add: {
    auto bin = cast<AffineBinaryOpExpr>(e);
    return success(
        succeeded(accumulateLinear(bin.getLHS(), scale, coeffs, constant)) &&
        succeeded(accumulateLinear(bin.getRHS(), scale, coeffs, constant)));
  }
  case AffineExprKind::Mul: {
    auto bin = cast<AffineBinaryOpExpr>(e);
    // The usual form: a product by a literal (on the right once simplified).
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return accumulateLinear(bin.getLHS(), scale * c.getValue(), coeffs,
                              constant);
    if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      return accumulateLinear(bin.getRHS(), scale * c.getValue(), coeffs,
                              constant);
    // Otherwise one side must still be free of dims.
    SmallVector<int64_t, 4> l(coeffs.size(), 0), r(coeffs.size(), 0);
    int64_t lc = 0, rc = 0;
    if (failed(accumulateLinear(bin.getLHS(), 1, l, lc)) ||
        failed(accumulateLinear(bin.getRHS(), 1, r, rc)))
      return failure();
    auto noDims = [](ArrayRef<int64_t> v) {
      return llvm::all_of(v, [](int64_t c) { return c == 0; });
    };
    bool lConst = noDims(l);
    if (!lConst && !noDims(r))
      return failure();
    ArrayRef<int64_t> var = lConst ? r : l;
    int64_t factor = scale * (lConst ? lc : rc);
    for (unsigned k = 0; k < coeffs.size(); ++k)
      coeffs[k] += var[k] * factor;
    constant += (lConst ? rc : lc) * factor;
    return success();
  }
  default:
    return failure();
  }
}

LogicalResult ViewOp::getLinearOffset(unsigned d,
                                      SmallVectorImpl<int64_t> &coeffs,
                                      int64_t &constant) {
  AffineMap map = getOffsets();
  coeffs.assign(map.getNumDims(), 0);
  constant = 0;
  return accumulateLinear(map.getResult(d), 1, coeffs, constant);
}

LogicalResult ViewOp::verify() {
  TileType src = getSource().getType(), dst = getType();
  if (src.getSpace() != dst.getSpace() ||
      src.getElementType() != dst.getElementType() ||
      src.getRank() != dst.getRank())
    return emitOpError() << "view keeps the memory space, dtype and rank: "
                         << describeTile(src) << " -> " << describeTile(dst);
  AffineMap map = getOffsets();
  unsigned rank = src.getRank();
  if (map.getNumSymbols() != 0 || map.getNumDims() != getIvs().size() ||
      map.getNumResults() != rank)
    return emitOpError() << "offsets map must take the " << getIvs().size()
                         << " listed induction variables as dims (no symbols) "
                            "and give "
                         << rank << " offsets, got " << getOffsetsAttr();
  if (auto strides = getStrides()) {
    if (strides->size() != rank)
      return emitOpError() << "needs " << rank << " strides, got "
                           << strides->size();
    for (int64_t s : *strides)
      if (s < 0)
        return emitOpError() << "strides must be >= 0, got " << s;
  }
  // Trip counts of the induction variables.
  SmallVector<int64_t> trips;
  for (auto [i, iv] : llvm::enumerate(getIvs())) {
    auto arg = dyn_cast<BlockArgument>(iv);
    auto loop = arg ? dyn_cast_or_null<LoopOp>(arg.getOwner()->getParentOp())
                    : LoopOp();
    if (!loop)
      return emitOpError() << "index operand #" << i
                           << " must be the induction variable of an "
                              "enclosing ncore.loop";
    trips.push_back(int64_t(loop.getTrips()));
  }
  for (unsigned d = 0; d < rank; ++d) {
    SmallVector<int64_t> coeffs(map.getNumDims(), 0);
    int64_t constant = 0;
    if (failed(accumulateLinear(map.getResult(d), 1, coeffs, constant))) {
      std::string expr;
      llvm::raw_string_ostream(expr) << map.getResult(d);
      return emitOpError() << "offset of dim " << d << " (" << expr
                           << ") must be linear in the induction variables "
                              "(no mod, floordiv, ceildiv or products)";
    }
    int64_t lo = constant, hi = constant;
    for (unsigned k = 0; k < trips.size(); ++k) {
      int64_t span = coeffs[k] * (std::max<int64_t>(trips[k], 1) - 1);
      (span < 0 ? lo : hi) += span;
    }
    int64_t stride = getStride(d), size = dst.getShape()[d];
    int64_t last = hi + (size - 1) * stride;
    if (lo < 0)
      return emitOpError() << "offset of dim " << d << " reaches " << lo
                           << " (< 0) over the loop iterations";
    if (last >= src.getShape()[d])
      return emitOpError() << "window of dim " << d << " reaches index " << last
                           << " (offset up to " << hi << " + (" << size
                           << " - 1) x stride " << stride
                           << ") but the source has " << src.getShape()[d];
    if (d == 0 && src.isOnChip()) {
      if (llvm::any_of(coeffs, [](int64_t c) { return c != 0; }))
        return emitOpError()
               << "partition offset of an " << stringifyMemSpace(src.getSpace())
               << " view must be a constant (access patterns "
                  "step bytes within a partition, not "
                  "partitions)";
      if (stride != 1)
        return emitOpError()
               << "partition stride of an " << stringifyMemSpace(src.getSpace())
               << " view must be 1, got " << stride;
      int64_t start = src.getStartPartition() + constant;
      if (dst.getStartPartition() != start)
        return emitOpError()
               << "result starts at partition " << start << " (source start "
               << src.getStartPartition() << " + offset " << constant
               << ") but its type says " << dst.getStartPartition();
    }
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  TileType src = getSource().getType(), dst = getType();
  if (src.getSpace() != dst.getSpace() ||
      src.getElementType() != dst.getElementType() ||
      src.getNumElements() != dst.getNumElements())
    return emitOpError() << "reshape keeps the memory space, dtype and element "
                            "count: "
                         << describeTile(src) << " -> " << describeTile(dst);
  if (src.isOnChip() && (src.getPartitions() != dst.getPartitions() ||
                         src.getStartPartition() != dst.getStartPartition()))
    return emitOpError() << "an on-chip reshape regroups free dims only and "
                            "keeps the partitions: "
                         << describeTile(src) << " -> " << describeTile(dst);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult DmaCopyOp::verify() {
  for (Value v : {getDst(), getSrc()})
    if (tileOf(v).getSpace() == MemSpace::Psum)
      return emitOpError() << "PSUM is not a DMA endpoint: "
                           << (v == getDst() ? "dst" : "src") << " is "
                           << desc(v);
  TileType dst = tileOf(getDst()), src = tileOf(getSrc());
  if (dst.getElementType() != src.getElementType())
    return emitOpError() << "DMA does not convert dtypes: dst is "
                         << dst.getElementType() << ", src is "
                         << src.getElementType();
  if (dst.getNumElements() != src.getNumElements())
    return emitOpError() << "src has " << src.getNumElements() << " elements ("
                         << desc(getSrc()) << ") but dst has "
                         << dst.getNumElements() << " (" << desc(getDst())
                         << ")";
  return success();
}

LogicalResult TensorCopyOp::verify() {
  return verifySameLayout(*this, getDst(), "dst", getSrc(), "src");
}

//===----------------------------------------------------------------------===//
// Tensor engine
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  if (failed(expectSpace(*this, getDst(), "dst", MemSpace::Psum,
                         "matmul writes PSUM")) ||
      failed(expectSpace(*this, getStationary(), "stationary", MemSpace::Sbuf,
                         "matmul reads SBUF")) ||
      failed(expectSpace(*this, getMoving(), "moving", MemSpace::Sbuf,
                         "matmul reads SBUF")))
    return failure();
  TileType st = tileOf(getStationary()), mv = tileOf(getMoving()),
           dst = tileOf(getDst());
  if (st.getElementType() != mv.getElementType())
    return emitOpError() << "stationary and moving dtypes differ: "
                         << st.getElementType() << " vs "
                         << mv.getElementType();
  int64_t k = st.getPartitions(), m = st.getFreeElements(),
          n = mv.getFreeElements();
  if (mv.getPartitions() != k)
    return emitOpError()
           << "contraction (partition) sizes differ: stationary K = " << k
           << ", moving K = " << mv.getPartitions();
  if (k > kMatmulMaxK)
    return emitOpError() << "contraction size K = " << k << " exceeds "
                         << kMatmulMaxK;
  if (m > kMatmulMaxM)
    return emitOpError() << "stationary free size M = " << m << " exceeds "
                         << kMatmulMaxM << " (PE array columns)";
  if (n > kMatmulMaxN)
    return emitOpError() << "moving free size " << n << " exceeds "
                         << kMatmulMaxN << " (one PSUM bank of fp32)";
  if (dst.getPartitions() != m || dst.getFreeElements() != n)
    return emitOpError() << "dst must be [M, N] = [" << m << ", " << n
                         << "], got " << desc(getDst());
  return success();
}

LogicalResult TransposeOp::verify() {
  if (failed(expectSpace(*this, getDst(), "dst", MemSpace::Psum,
                         "transpose writes PSUM")) ||
      failed(expectSpace(*this, getSrc(), "src", MemSpace::Sbuf,
                         "transpose reads SBUF")))
    return failure();
  TileType src = tileOf(getSrc()), dst = tileOf(getDst());
  int64_t p = src.getPartitions(), f = src.getFreeElements();
  if (f > kTransposeMaxDim)
    return emitOpError() << "source free size " << f << " exceeds "
                         << kTransposeMaxDim
                         << " (it becomes the partition dim)";
  if (dst.getPartitions() != f || dst.getFreeElements() != p)
    return emitOpError() << "dst must be [" << f << ", " << p
                         << "] (the transpose of " << desc(getSrc())
                         << "), got " << desc(getDst());
  return success();
}

//===----------------------------------------------------------------------===//
// Scalar / Vector / GpSimd engines
//===----------------------------------------------------------------------===//

LogicalResult ActivationOp::verify() {
  if (failed(verifySameLayout(*this, getDst(), "dst", getSrc(), "src")))
    return failure();
  if (getBiasTile()) {
    if (failed(verifyColumn(*this, getBiasTile(), "bias", getDst())))
      return failure();
    if (!getBias().isZero())
      return emitOpError() << "has both a bias tile and a bias immediate ("
                           << getBias().convertToDouble() << ")";
  }
  if (getReduce() &&
      failed(verifyColumn(*this, getReduce(), "reduce", getDst())))
    return failure();
  return success();
}

LogicalResult TensorTensorOp::verify() {
  if (failed(verifySameLayout(*this, getDst(), "dst", getLhs(), "lhs")) ||
      failed(verifySameLayout(*this, getDst(), "dst", getRhs(), "rhs")))
    return failure();
  if (tileOf(getLhs()).getSpace() == MemSpace::Psum &&
      tileOf(getRhs()).getSpace() == MemSpace::Psum)
    return emitOpError("reads at most one operand from PSUM (lhs and rhs are "
                       "both in psum)");
  return success();
}

LogicalResult TensorScalarOp::verify() {
  if (failed(verifySameLayout(*this, getDst(), "dst", getSrc(), "src")))
    return failure();
  if (!getScalarTile() && !getImm())
    return emitOpError("needs a scalar: an immediate (imm) or a [P, 1] tile");
  if (getScalarTile() && getImm())
    return emitOpError("takes an immediate (imm) or a [P, 1] tile, not both");
  if (getScalarTile() &&
      failed(verifyColumn(*this, getScalarTile(), "scalar", getDst())))
    return failure();
  if (!getAlu1()) {
    if (getScalar1Tile() || getImm1())
      return emitOpError("has a second scalar but no second operation (then)");
    return success();
  }
  if (!getScalar1Tile() && !getImm1())
    return emitOpError("needs a second scalar: an immediate (imm1) or a "
                       "[P, 1] tile (with)");
  if (getScalar1Tile() && getImm1())
    return emitOpError(
        "takes a second immediate (imm1) or a [P, 1] tile (with), not both");
  if (getScalar1Tile())
    return verifyColumn(*this, getScalar1Tile(), "scalar1", getDst());
  return success();
}

LogicalResult TensorReduceOp::verify() {
  if (failed(verifyReduceAlu(*this, getAlu())))
    return failure();
  TileType src = tileOf(getSrc()), dst = tileOf(getDst());
  int64_t last = src.getFreeShape().back();
  int64_t expected = src.getFreeElements() / last;
  if (dst.getPartitions() != src.getPartitions() ||
      dst.getFreeElements() != expected)
    return emitOpError() << "reducing the last free dim (" << last << ") of "
                         << desc(getSrc()) << " gives " << src.getPartitions()
                         << " x " << expected << " elements, but dst is "
                         << desc(getDst());
  return success();
}

LogicalResult MemsetOp::verify() { return success(); }
LogicalResult IotaOp::verify() { return success(); }

LogicalResult AffineSelectOp::verify() {
  if (!isOneOf(getCmp(), {AluOp::IsGe, AluOp::IsEqual}))
    return emitOpError() << "comparison must be is_ge or is_equal, got "
                         << stringifyAluOp(getCmp());
  return verifySameLayout(*this, getDst(), "dst", getSrc(), "src");
}

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

static LogicalResult verifySemaphore(Operation *op, int64_t sem) {
  if (sem < 0 || sem >= kNumSemaphores)
    return op->emitOpError() << "semaphore " << sem << " out of range [0, "
                             << kNumSemaphores << ")";
  return success();
}

static unsigned loopDepthAround(Operation *op) {
  unsigned depth = 0;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<LoopOp>(p))
      ++depth;
  return depth;
}

LogicalResult SemSignalOp::verify() {
  if (failed(verifySemaphore(*this, int64_t(getSem()))))
    return failure();
  if (int64_t(getCount()) < 1)
    return emitOpError() << "count must be >= 1, got " << int64_t(getCount());
  return success();
}

LogicalResult SemWaitOp::verify() {
  if (failed(verifySemaphore(*this, int64_t(getSem()))))
    return failure();
  if (int64_t(getValue()) < 0)
    return emitOpError() << "value must be >= 0, got " << int64_t(getValue());
  if (auto steps = getSteps())
    if (steps->size() != loopDepthAround(*this))
      return emitOpError() << "has " << steps->size() << " steps but is inside "
                           << loopDepthAround(*this)
                           << " loops (one step per enclosing loop)";
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

static LogicalResult verifyCollective(Operation *op, Value dst, Value src,
                                      int64_t ranks, int64_t factor) {
  for (Value v : {dst, src})
    if (tileOf(v).getSpace() == MemSpace::Psum)
      return op->emitOpError()
             << "collectives cannot access PSUM: " << (v == dst ? "dst" : "src")
             << " is " << desc(v);
  if (ranks < 1)
    return op->emitOpError() << "ranks must be >= 1, got " << ranks;
  TileType d = tileOf(dst), s = tileOf(src);
  if (d.getElementType() != s.getElementType())
    return op->emitOpError() << "dtypes differ: dst is " << d.getElementType()
                             << ", src is " << s.getElementType();
  if (d.getNumElements() != s.getNumElements() * factor)
    return op->emitOpError()
           << "dst must hold " << factor << " x " << s.getNumElements()
           << " elements (" << desc(src) << "), got " << d.getNumElements()
           << " (" << desc(dst) << ")";
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyReduceAlu(*this, getAlu())))
    return failure();
  return verifyCollective(*this, getDst(), getSrc(), int64_t(getRanks()), 1);
}

LogicalResult AllGatherOp::verify() {
  int64_t ranks = int64_t(getRanks());
  return verifyCollective(*this, getDst(), getSrc(), ranks,
                          std::max<int64_t>(ranks, 1));
}

void mlir::ncore::forEachOwnOp(Block &block,
                               llvm::function_ref<void(Operation *)> fn) {
  block.walk<WalkOrder::PreOrder>([&](Operation *op) {
    fn(op);
    return isa<InlinedCallOp>(op) ? WalkResult::skip() : WalkResult::advance();
  });
}

#define GET_OP_CLASSES
#include "dialect/ncore/NcoreOps.cpp.inc"
