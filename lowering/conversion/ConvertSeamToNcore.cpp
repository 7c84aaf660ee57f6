//===- ConvertSeamToNcore.cpp - the pass and the shared framework --------===//
//
// See ConvertSeamToNcore.h for the layout and ConvertPasses.td for the
// conventions the runtime relies on (program names, argument order, roles,
// kernel declarations).
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "dialect/ncore/NcoreTarget.h"
#include "dialect/seam/DeviceSupport.h"
#include "lowering/conversion/Pairing.h"

#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Accounting.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"
#include "runtime/Timing.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>

namespace mlir::seam {
#define GEN_PASS_DEF_CONVERTSEAMTONCORE
#include "lowering/conversion/ConvertPasses.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

SmallVector<int64_t> conversion::shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() == 0)
    return {1};
  return SmallVector<int64_t>(t.getShape());
}

std::pair<int64_t, int64_t> conversion::matrixOf(ArrayRef<int64_t> shape) {
  return rowsAndCols(shape);
}

static int64_t elementBytes(Type t) { return t.isBF16() ? 2 : 4; }

/// Tensors of fewer rows than this and more bytes per partition than
/// kNarrowBytes are placed in HBM (see placeResult).
static constexpr int64_t kNarrowRows = 32;
static constexpr int64_t kNarrowBytes = 4096;

static SmallVector<int64_t> hbmShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return {1};
  return SmallVector<int64_t>(shape);
}

//===----------------------------------------------------------------------===//
// ProgramLowering: values
//===----------------------------------------------------------------------===//

ProgramLowering::ProgramLowering(ncore::ProgramOp program,
                                 const TargetInfo &target,
                                 ConversionStats &stats,
                                 KernelDeclarations &kernels)
    : NcoreBuilder(OpBuilder::atBlockEnd(&program.getBody().front()), program,
                   program.getLoc()),
      tgt(target), stats(stats), kernels(kernels) {}

std::pair<SmallVector<int64_t>, Type>
conversion::deviceLayout(RankedTensorType t) {
  SmallVector<int64_t> shape = hbmShape(t.getShape());
  if (auto c = dyn_cast<ComplexType>(t.getElementType())) {
    if (t.getRank() > 0)
      shape.push_back(2);
    else
      shape.back() = 2;
    return {shape, c.getElementType()};
  }
  return {shape, t.getElementType()};
}

LogicalResult ProgramLowering::checkDtype(Operation *op, Type t) {
  if (t.isF32() || t.isBF16())
    return success();
  auto c = dyn_cast<ComplexType>(t);
  bool boundary = isa<func::FuncOp, KernelCallOp>(op);
  if (c && c.getElementType().isF32() && boundary)
    return success();
  if (c && c.getElementType().isF32())
    return op->emitOpError()
           << "has element type " << t
           << ", which the device holds only in HBM at program and kernel "
              "boundaries (interleaved re, im f32); it must run on the host "
              "or in a kernel";
  return op->emitOpError() << "has element type " << t
                           << ", which the device does not hold (f32, bf16, "
                              "or complex<f32> at boundaries); it must run on "
                              "the host";
}

FailureOr<Placement> ProgramLowering::get(Value v, Operation *user) {
  auto it = placements.find(v);
  if (it != placements.end())
    return it->second;
  return user->emitOpError()
         << "convert-seam-to-ncore: operand has no device placement (defined "
            "outside the program or by an op that was not lowered)";
}

Placement Placement::hbmMatrix(Value root, ArrayRef<int64_t> shape,
                               Type elementType) {
  auto [rows, cols] = matrixOf(shape);
  Placement p;
  p.root = root;
  p.space = MemSpace::Hbm;
  p.elementType = elementType;
  p.shape.assign(shape.begin(), shape.end());
  p.rows = rows;
  p.cols = p.pitch = cols;
  return p;
}

Placement ProgramLowering::hbmScratch(ArrayRef<int64_t> shape, Type et,
                                      StringRef prefix) {
  auto [rows, cols] = matrixOf(shape);
  return Placement::hbmMatrix(alloc(MemSpace::Hbm, {rows, cols}, et,
                                    (prefix + Twine(scratchCount++)).str()),
                              shape, et);
}

Placement ProgramLowering::placeResultInHbm(Value v, StringRef prefix) {
  auto [shape, et] = deviceLayout(cast<RankedTensorType>(v.getType()));
  auto out = outputs.find(v);
  if (out != outputs.end() && !out->second.empty()) {
    auto [rows, cols] = matrixOf(shape);
    Placement p = Placement::hbmMatrix(
        reshape(out->second.front(), {rows, cols}), shape, et);
    placements[v] = p;
    return p;
  }
  Placement p = hbmScratch(shape, et, prefix);
  placements[v] = p;
  return p;
}

/// Whether every reader of `v` takes it as a contiguous HBM tensor (the
/// collectives and kernel calls, see contiguousHbm): the producer then writes
/// its tiles there as it makes them, instead of keeping `v` in SBUF for one
/// store of the whole tensor after the op.
static bool onlyReadFromHbm(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUsers(), [](Operation *u) {
    return isa<AllReduceOp, AllGatherOp, KernelCallOp>(u) ||
           u->hasAttr(kMaterializeAttrName);
  });
}

/// Whether `v` is a result of an op marked kMaterializeAttrName: it is
/// written to HBM, as a kernel's result would be.
static bool materialized(Value v) {
  Operation *d = v.getDefiningOp();
  return d && d->hasAttr(kMaterializeAttrName);
}

bool ProgramLowering::fitsSbuf(Value v) const {
  auto type = cast<RankedTensorType>(v.getType());
  if (outputs.count(v) || onlyReadFromHbm(v) || materialized(v))
    return false;
  // Placed already (a concatenation its operand placed): placeResult
  // returns that placement.
  if (auto it = placements.find(v); it != placements.end())
    return it->second.inSbuf();
  auto [rows, cols] = matrixOf(type.getShape());
  int64_t bytes = (rows + kNumPartitions - 1) / kNumPartitions * cols *
                  elementBytes(type.getElementType());
  if (rows < kNarrowRows && bytes > kNarrowBytes)
    return false;
  return used + bytes <= tgt.sbufPartitionBytes - tgt.workingBytes;
}

Placement ProgramLowering::placeResult(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (outputs.count(v))
    return placeResultInHbm(v, "out");
  // Already placed: a concatenation whose first operand placed it.
  if (auto it = placements.find(v); it != placements.end())
    return it->second;
  if (onlyReadFromHbm(v) || materialized(v)) {
    ++stats.writtenToHbm;
    return placeResultInHbm(v, "hbm");
  }
  if (auto slot = concatSlots.find(v); slot != concatSlots.end()) {
    auto [concat, col] = slot->second;
    if (fitsSbuf(concat)) {
      Placement whole = placeResult(concat);
      if (whole.inSbuf()) {
        Placement p = whole;
        p.shape.assign(type.getShape().begin(), type.getShape().end());
        p.cols = matrixOf(p.shape).second;
        p.colOffset = whole.colOffset + col;
        placements[v] = p;
        ++stats.concatInPlace;
        return p;
      }
    }
  }
  auto [rows, cols] = matrixOf(type.getShape());
  Type et = type.getElementType();
  int64_t tiles = (rows + kNumPartitions - 1) / kNumPartitions;
  int64_t bytes = tiles * cols * elementBytes(et);
  int64_t budget = tgt.sbufPartitionBytes - tgt.workingBytes;
  // A few long rows (a [1, 18432] modulation vector) would reserve their
  // bytes on all 128 partitions for a handful of lanes: keep them in HBM,
  // where their readers DMA (and broadcast) the columns they need.
  if (rows < kNarrowRows && bytes > kNarrowBytes) {
    ++stats.narrowInHbm;
    Placement p = hbmScratch(type.getShape(), et, "narrow");
    placements[v] = p;
    return p;
  }
  if (used + bytes > budget) {
    ++stats.spills;
    stats.spillBytes += rows * cols * elementBytes(et);
    Placement p = hbmScratch(type.getShape(), et, "spill");
    placements[v] = p;
    return p;
  }
  used += bytes;
  peak = std::max(peak, used);
  ownedBytes[v] += bytes;
  ++stats.sbufResident;
  Placement p;
  p.space = MemSpace::Sbuf;
  p.root =
      alloc(MemSpace::Sbuf, {std::min(rows, kNumPartitions), tiles * cols}, et);
  p.elementType = et;
  p.shape.assign(type.getShape().begin(), type.getShape().end());
  p.rows = rows;
  p.cols = cols;
  p.pitch = cols;
  placements[v] = p;
  return p;
}

LogicalResult ProgramLowering::lowerGuestAlone() {
  Operation *guest = pendingGuest;
  pendingGuest = nullptr;
  if (!guest)
    return success();
  return atLoc(guest->getLoc(), [&] { return (*guestAlone)(*this, guest); });
}

FailureOr<std::optional<InterleavedWork>>
ProgramLowering::takeGuest(int64_t groups, int64_t steps, int64_t hostBytes) {
  if (!pendingGuest)
    return std::optional<InterleavedWork>();
  if (groups > 0 && steps > 0) {
    Location guestLoc = pendingGuest->getLoc();
    std::optional<InterleavedWork> work = atLoc(guestLoc, [&] {
      return guestLowering->interleave(*this, pendingGuest, groups, steps,
                                       hostBytes);
    });
    if (work) {
      // Each unit is emitted under the guest's location.
      work->load = [this, guestLoc, load = work->load](Index g, unsigned set) {
        atLoc(guestLoc, [&] { load(g, set); });
      };
      work->step = [this, guestLoc, step = work->step](Index g, Index s,
                                                       unsigned set) {
        atLoc(guestLoc, [&] { step(g, s, set); });
      };
      if (work->finish)
        work->finish = [this, guestLoc, finish = work->finish] {
          atLoc(guestLoc, [&] { finish(); });
        };
      if (tgt.remarks)
        guestHost->emitRemark()
            << "convert-seam-to-ncore: " << guestHost->getName()
            << " takes the independent " << pendingGuest->getName() << " at "
            << pendingGuest->getLoc() << " as its guest: " << groups << " x "
            << steps
            << " units between its own steps, so that the engines and DMA "
               "queues its own work leaves idle run the guest's";
      pendingGuest = nullptr;
      ++stats.interleaved;
      return work;
    }
  }
  if (failed(lowerGuestAlone()))
    return failure();
  return std::optional<InterleavedWork>();
}

int64_t ProgramLowering::workingBudget() const {
  // Bias rows, ones columns, output tiles of one 512-column block.
  constexpr int64_t kHelperMargin = 8 * 1024;
  return std::max<int64_t>(0, tgt.sbufPartitionBytes - used - kHelperMargin);
}

bool ProgramLowering::keepDerivedTile(Value v, int64_t key, Value tile,
                                      int64_t bytes, bool replacesV) {
  // A view's bytes belong to its source (released with it, not with v).
  if (isa_and_nonnull<ReshapeOp, SliceOp>(v.getDefiningOp()))
    return false;
  int64_t own = ownedBytes.lookup(v);
  int64_t extra = replacesV ? bytes - own : bytes;
  if (extra > workingBudget())
    return false;
  derived[{v, key}] = tile;
  used += extra;
  peak = std::max(peak, used);
  ownedBytes[v] = own + extra;
  return true;
}

void ProgramLowering::release(Value owner) {
  auto it = ownedBytes.find(owner);
  if (it == ownedBytes.end())
    return;
  used -= it->second;
  ownedBytes.erase(it);
  SmallVector<std::pair<Value, int64_t>> gone;
  for (auto &entry : derived)
    if (entry.first.first == owner)
      gone.push_back(entry.first);
  for (auto &key : gone)
    derived.erase(key);
}

//===----------------------------------------------------------------------===//
// ProgramLowering: tiles
//===----------------------------------------------------------------------===//

Value ProgramLowering::window(const Placement &t, Index row0, int64_t p,
                              Index col, int64_t n) {
  if (t.inSbuf()) {
    Index tile = (row0 + t.rowOffset).floorDiv(kNumPartitions);
    return view(t.root, {p, n}, {0, tile * t.pitch + t.colOffset + col});
  }
  return view(t.root, {p, n}, {row0 + t.rowOffset, col + t.colOffset});
}

Value ProgramLowering::load(const Placement &t, Index row0, int64_t p,
                            Index col, int64_t n) {
  Value w = window(t, row0, p, col, n);
  if (t.inSbuf())
    return w;
  Value tile = alloc(MemSpace::Sbuf, {p, n}, t.elementType);
  dma(tile, w);
  return tile;
}

Value ProgramLowering::outTile(const Placement &t, Index row0, int64_t p,
                               Index col, int64_t n) {
  if (t.inSbuf())
    return window(t, row0, p, col, n);
  return alloc(MemSpace::Sbuf, {p, n}, t.elementType);
}

void ProgramLowering::storeOut(const Placement &t, Index row0, int64_t p,
                               Index col, int64_t n, Value tile) {
  if (t.inSbuf())
    return;
  dma(window(t, row0, p, col, n), tile);
}

Value ProgramLowering::broadcastRow(const Placement &vec, Index col, int64_t n,
                                    int64_t p, Value into) {
  Value tile = into ? view(into, {p, n}, {0, 0})
                    : alloc(MemSpace::Sbuf, {p, n}, vec.elementType);
  // The row in SBUF (one partition): the placement itself, or one DMA.
  broadcastPartitions(tile, load(vec, 0, 1, col, n));
  return tile;
}

void ProgramLowering::stageArgument(Value arg) {
  const Placement &x = placements[arg];
  int64_t bytes = x.rowTiles() * x.cols * elementBytes(x.elementType);
  if (x.inSbuf() || x.rows < kNarrowRows ||
      used + bytes > tgt.sbufPartitionBytes - tgt.workingBytes)
    return;
  Placement s = copiedToSbuf(x);
  used += bytes;
  peak = std::max(peak, used);
  ownedBytes[arg] += bytes;
  ++stats.inputsStaged;
  placements[arg] = s;
}

Placement ProgramLowering::copiedToSbuf(const Placement &x) {
  Placement s = x;
  s.root = alloc(MemSpace::Sbuf, {x.partitions(), x.rowTiles() * x.cols},
                 x.elementType);
  s.space = MemSpace::Sbuf;
  s.pitch = x.cols;
  s.rowOffset = s.colOffset = 0;
  copyInto(s, x);
  return s;
}

Placement ProgramLowering::stagedInSbuf(const Placement &x, int64_t &budget) {
  const ::seam::rt::Profile *prof = tgt.profile;
  if (x.inSbuf() || x.rows <= kNumPartitions || !prof)
    return x;
  int64_t eb = x.elementType.isBF16() ? 2 : 4;
  int64_t bytes = x.rowTiles() * x.cols * eb;
  int64_t total = x.rows * x.cols * eb;
  if (bytes > budget ||
      total > std::max<int64_t>(1, prof->dmaEngines) * kTargetPieceBytes)
    return x;
  budget -= bytes;
  Placement s = copiedToSbuf(x);
  noteWorkingBytes(bytes);
  return s;
}

void ProgramLowering::copyInto(const Placement &dst, const Placement &src) {
  if (!dst.inSbuf() && !src.inSbuf()) {
    dma(window(dst, 0, dst.rows, 0, dst.cols),
        window(src, 0, src.rows, 0, src.cols));
    return;
  }
  forEachRowTile(src.rows, [&](Index r, int64_t p) {
    Value s = window(src, r, p, 0, src.cols);
    Value d = window(dst, r, p, 0, dst.cols);
    if (dst.inSbuf() && src.inSbuf())
      copy(d, s);
    else
      dma(d, s);
  });
}

Placement ProgramLowering::rowAlignedOrRelayout(const Placement &t,
                                                int64_t stride) {
  if (rowAligned(t, stride))
    return t;
  ++stats.relayouts;
  Placement h = hbmScratch(t.shape, t.elementType, "relayout");
  copyInto(h, t);
  return h;
}

Value ProgramLowering::contiguousHbm(const Placement &t, Operation * /*user*/) {
  SmallVector<int64_t> shape = hbmShape(t.shape);
  if (!t.inSbuf() && t.isContiguous()) {
    Value rowsView = t.root;
    auto rootType = cast<TileType>(t.root.getType());
    if (t.rowOffset != 0 || rootType.getShape()[0] != t.rows)
      rowsView = view(t.root, {t.rows, t.cols}, {t.rowOffset, 0});
    return reshape(rowsView, shape);
  }
  ++stats.relayouts;
  Placement copy = hbmScratch(t.shape, t.elementType, "relayout");
  copyInto(copy, t);
  return reshape(copy.root, shape);
}

Placement ProgramLowering::withShape(Placement t, ArrayRef<int64_t> shape) {
  t.shape.assign(shape.begin(), shape.end());
  return t;
}

//===----------------------------------------------------------------------===//
// Kernel declarations
//===----------------------------------------------------------------------===//

FailureOr<ncore::ProgramOp> KernelDeclarations::getOrCreate(Operation *call) {
  auto kc = cast<KernelCallOp>(call);
  // The compiler's own body behind the boundary: the program lowered from
  // the callee func (boundary bodies are lowered before their callers).
  if (auto callee = kc.getCalleeAttr()) {
    if (auto p = programs.lookupSymbol<ncore::ProgramOp>(callee.getAttr()))
      return p;
    return call->emitOpError() << "convert-seam-to-ncore: the boundary body "
                               << callee << " was not lowered";
  }
  const KernelInfo *info = lookupKernel(kc.getKernel());
  if (info && info->build) {
    FailureOr<StringAttr> sym = getOrBuildKernelProgram(
        programs, kc.getKernel(), signatureOfCall(call));
    if (failed(sym))
      return call->emitOpError()
             << "convert-seam-to-ncore: kernel '" << kc.getKernel()
             << "' could not be built for this call";
    return programs.lookupSymbol<ncore::ProgramOp>(*sym);
  }
  SmallVector<Type> argTypes;
  auto toTile = [](Type t) -> Type {
    auto [shape, et] = deviceLayout(cast<RankedTensorType>(t));
    return TileType::get(MemSpace::Hbm, shape, et);
  };
  for (Type t : kc.getArgs().getTypes())
    argTypes.push_back(toTile(t));
  for (Type t : kc->getResultTypes())
    argTypes.push_back(toTile(t));
  std::string key;
  llvm::raw_string_ostream os(key);
  os << kc.getKernel() << "|";
  llvm::interleaveComma(argTypes, os);
  os << "|";
  if (auto cfg = kc.getConfigAttr())
    os << cfg;
  auto it = byKey.find(key);
  if (it != byKey.end())
    return it->second;
  std::string name;
  for (char c : kc.getKernel())
    name += llvm::isAlnum(c) ? c : '_';
  int64_t n = countByName[name]++;
  OpBuilder b(programs.getContext());
  b.setInsertionPointToEnd(programs.getBody());
  auto decl = b.create<ncore::ProgramOp>(
      call->getLoc(), ("kernel_" + name + "_" + Twine(n)).str(), argTypes);
  decl.getBody().getBlocks().clear();
  decl.setPrivate();
  unsigned numArgs = kc.getArgs().size();
  for (unsigned i = 0; i < argTypes.size(); ++i)
    decl.setArgRole(i, i < numArgs ? "input" : "output");
  decl->setAttr("seam.kernel", kc.getKernelAttr());
  if (auto cfg = kc.getConfigAttr())
    decl->setAttr("seam.config", cfg);
  byKey[key] = decl;
  return decl;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

class ConvertSeamToNcorePass
    : public mlir::seam::impl::ConvertSeamToNcoreBase<ConvertSeamToNcorePass> {
public:
  using Base::Base;

  void runOnOperation() override;
};

} // namespace

#define SEAM_STAT_COUNTER(field, name, description)                            \
  static PassCounter field##Counter{"convert-seam-to-ncore", name, description};
SEAM_CONVERSION_STATS(SEAM_STAT_COUNTER)
#undef SEAM_STAT_COUNTER

void ConversionStats::publish() const {
#define SEAM_STAT_ADD(field, name, description) field##Counter += field;
  SEAM_CONVERSION_STATS(SEAM_STAT_ADD)
#undef SEAM_STAT_ADD
}

/// Lowers `op`; one marked kMaterializeAttrName reads its on-chip operands
/// from HBM copies (stored first, as at a kernel boundary), bound for its
/// own lowering only.
static LogicalResult lowerMaterialized(ProgramLowering &pl, Operation &op,
                                       const LowerFn &lower) {
  if (!op.hasAttr(kMaterializeAttrName))
    return lower(pl, &op);
  SmallVector<std::pair<Value, Placement>> swapped;
  for (Value v : op.getOperands()) {
    if (!isa<RankedTensorType>(v.getType()) ||
        llvm::any_of(swapped, [&](auto &s) { return s.first == v; }))
      continue;
    FailureOr<Placement> p = pl.get(v, &op);
    if (failed(p))
      return failure();
    if (p->space == MemSpace::Hbm)
      continue;
    Placement copy = pl.hbmScratch(p->shape, p->elementType, "materialized");
    pl.copyInto(copy, *p);
    swapped.push_back({v, *p});
    pl.bind(v, copy);
  }
  LogicalResult r = lower(pl, &op);
  for (auto &[v, p] : swapped)
    pl.bind(v, p);
  return r;
}

/// Per func argument: whether every call site passes a load-time value (a
/// parameter, or an expression of parameters only, which seam-form-regions
/// hoists out of every region). `anyCall` says whether the func has a call
/// site at all (none: every argument is an input).
static SmallVector<bool> parameterArguments(func::FuncOp func, ModuleOp module,
                                            bool &anyCall) {
  SmallVector<bool> isParam(func.getNumArguments(), true);
  anyCall = false;
  if (auto uses = SymbolTable::getSymbolUses(func, module))
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        continue;
      anyCall = true;
      for (auto [i, operand] : llvm::enumerate(call.getOperands()))
        if (i < isParam.size() && !isLoadTimeValue(operand))
          isParam[i] = false;
    }
  if (!anyCall)
    isParam.assign(isParam.size(), false);
  return isParam;
}

/// The empty ncore.program for `func` in `programs`: one HBM tile argument
/// per func argument (role "param" or "input") and per result ("output").
/// The func gets `seam.ncore_program` naming it.
static FailureOr<ncore::ProgramOp>
createProgram(func::FuncOp func, ModuleOp programs, ArrayRef<bool> isParam) {
  SmallVector<Type> argTypes;
  auto toTile = [&](Type t) -> FailureOr<Type> {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || failed(ProgramLowering::checkDtype(func, rt.getElementType())))
      return failure();
    auto [shape, et] = deviceLayout(rt);
    return Type(TileType::get(MemSpace::Hbm, shape, et));
  };
  for (TypeRange types :
       {TypeRange(func.getArgumentTypes()), TypeRange(func.getResultTypes())})
    for (Type t : types) {
      FailureOr<Type> tt = toTile(t);
      if (failed(tt))
        return failure();
      argTypes.push_back(*tt);
    }
  OpBuilder b(func.getContext());
  b.setInsertionPointToEnd(programs.getBody());
  auto program =
      b.create<ncore::ProgramOp>(func.getLoc(), func.getSymName(), argTypes);
  unsigned numIn = func.getNumArguments();
  for (unsigned i = 0; i < argTypes.size(); ++i)
    program.setArgRole(i, i >= numIn   ? "output"
                          : isParam[i] ? "param"
                                       : "input");
  func->setAttr(
      "seam.ncore_program",
      SymbolRefAttr::get(programs.getSymNameAttr(),
                         {FlatSymbolRefAttr::get(func.getSymNameAttr())}));
  return program;
}

namespace {

/// The lowering tables of every op family.
struct ConversionTables {
  LoweringTable lowerings;
  PairingRules pairing;
};

/// Lowers one program func into its (created) ncore.program, one step per
/// method: bind the arguments and outputs, compute liveness, then lower the
/// ops in order, carrying out the recorded pairings, then copy the outputs
/// not computed in place.
class ProgramConverter {
public:
  ProgramConverter(func::FuncOp func, ncore::ProgramOp program,
                   const ProgramPairings &pairings,
                   const ConversionTables &tables, const TargetInfo &target,
                   ConversionStats &stats, KernelDeclarations &kernels)
      : func(func), program(program), body(func.getBody().front()),
        pbody(program.getBody().front()), pairings(pairings), tables(tables),
        target(target), pl(program, target, stats, kernels) {}

  LogicalResult run(ArrayRef<bool> isParam, bool anyCall) {
    bindArguments();
    if (anyCall)
      stageNormInputs(isParam);
    bindOutputs();
    computeLiveness();
    conversion::placeConcatOperandsInPlace(pl, body);
    keepOperandsLiveInPairs();
    if (failed(lowerOps()) || failed(copyOutputs()))
      return failure();
    program->setAttr("seam.sbuf_peak_bytes",
                     Builder(program).getI64IntegerAttr(pl.sbufPeak()));
    return success();
  }

private:
  /// Each func argument is its program argument's HBM tile as a matrix.
  void bindArguments() {
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto [shape, et] = deviceLayout(cast<RankedTensorType>(arg.getType()));
      auto [rows, cols] = matrixOf(shape);
      pl.setLoc(arg.getLoc());
      pl.bind(arg,
              Placement::hbmMatrix(
                  pl.reshape(pbody.getArgument(i), {rows, cols}), shape, et));
    }
  }

  /// Activations a norm reads (a block's input in eager mode) are loaded
  /// whole before the first op: their DMAs then lead the queues instead of
  /// waiting behind the first op's weight stream (adaLN's modulation, 14 MB
  /// in a flux2-klein block), and the norm and the residual add read them
  /// from SBUF. (The norm's statistics could then run during that stream,
  /// but the Scalar engine's queue holds the modulation's evacuation ahead
  /// of them.)
  void stageNormInputs(ArrayRef<bool> isParam) {
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      if (isParam[i] || arg.use_empty() ||
          !llvm::any_of(
              arg.getUsers(),
              [](Operation *u) { return isa<LayerNormOp, RmsNormOp>(u); }) ||
          !llvm::all_of(arg.getUsers(), [&](Operation *u) {
            return isa<LayerNormOp, RmsNormOp, AddOp, MulOp>(u) &&
                   u->getOperand(0) == arg;
          }))
        continue;
      pl.setLoc(arg.getLoc());
      pl.stageArgument(arg);
    }
  }

  /// Returned values computed in the body are written into their output
  /// arguments directly.
  void bindOutputs() {
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    unsigned numIn = func.getNumArguments();
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (!isa<BlockArgument>(v))
        pl.setOutput(v, pbody.getArgument(numIn + i));
  }

  /// The liveness class of `v`: views (reshape, slice) share their source's
  /// bytes.
  Value classOfValue(Value v) const {
    Value cls = classOf.lookup(v);
    return cls ? cls : v;
  }

  /// Each op's position, each value's liveness class and the position of
  /// its class's last use.
  void computeLiveness() {
    int64_t idx = 0;
    for (Operation &op : body) {
      position[&op] = idx;
      for (Value r : op.getResults()) {
        Value cls = r;
        if (isa<ReshapeOp, SliceOp>(op))
          cls = classOfValue(op.getOperand(0));
        classOf[r] = cls;
        lastUse[cls] = std::max(lastUse.lookup(cls), idx);
      }
      for (Value o : op.getOperands()) {
        Value cls = classOfValue(o);
        lastUse[cls] = std::max(lastUse.lookup(cls), idx);
      }
      ++idx;
    }
  }

  /// A guest is emitted inside its host and a row producer inside its
  /// consumer: their operands are read there, so they live until then (a
  /// guest's operand whose last reader in program order comes before the
  /// host would otherwise be released, and its bytes reused, before the
  /// guest reads it). Then the classes dying at each position.
  void keepOperandsLiveInPairs() {
    auto emittedAt = [&](Operation *op, Operation *at) {
      for (Value o : op->getOperands()) {
        Value cls = classOfValue(o);
        lastUse[cls] = std::max(lastUse.lookup(cls), position[at]);
      }
    };
    for (auto [host, guest] : pairings.guestOf) {
      emittedAt(guest, host);
      hostOfGuest[guest] = host;
    }
    for (auto [consumer, producer] : pairings.producerOf) {
      emittedAt(producer, consumer);
      consumerOf[producer] = consumer;
    }
    for (auto &[cls, last] : lastUse)
      dying[last].push_back(cls);
  }

  /// The table lowering of `op`, its result types checked; null after a
  /// diagnostic.
  const LowerFn *lowerFor(Operation &op) const {
    auto it = tables.lowerings.find(op.getName().getStringRef());
    if (it == tables.lowerings.end()) {
      op.emitOpError() << "convert-seam-to-ncore: no device lowering for "
                          "this op";
      return nullptr;
    }
    for (Type t : op.getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        if (failed(ProgramLowering::checkDtype(&op, rt.getElementType())))
          return nullptr;
    return &it->second;
  }

  /// The ops in order. A guest (a row producer) is looked up and checked at
  /// its own position and lowered with its host (consumer); values dying at
  /// its position are released after that.
  LogicalResult lowerOps() {
    for (Operation &op : body) {
      pl.setLoc(op.getLoc());
      if (isa<func::ReturnOp>(op))
        break;
      if (op.hasTrait<OpTrait::seam::HostFallback>())
        return op.emitOpError()
               << "runs on the host and cannot be lowered inside a device "
                  "program (seam-form-regions splits regions at it)";
      const LowerFn *lower = lowerFor(op);
      if (!lower)
        return failure();
      Operation *later = hostOfGuest.lookup(&op);
      if (!later)
        later = consumerOf.lookup(&op);
      if (later) {
        pairedLower[&op] = lower;
        llvm::append_range(deferredDying[later], dying.lookup(position[&op]));
        continue;
      }
      if (failed(lowerOp(op, *lower)))
        return failure();
    }
    return success();
  }

  /// Lowers one op that is no guest and no row producer: with its guest,
  /// its row producer and its column consumer, when it has them.
  LogicalResult lowerOp(Operation &op, const LowerFn &lower) {
    if (Operation *guest = pairings.guestOf.lookup(&op))
      pl.setGuest(
          &op, guest, pairedLower.lookup(guest),
          &tables.pairing.guests.find(guest->getName().getStringRef())->second);
    Value produced;
    if (Operation *producer = pairings.producerOf.lookup(&op)) {
      FailureOr<Value> rows = lowerRowProducer(op, producer);
      if (failed(rows))
        return failure();
      produced = *rows;
    }
    AllReduceOp collective = pairings.collectiveOf.lookup(&op);
    std::shared_ptr<ConsumedColumns> consumed;
    if (collective)
      consumed = setUpColumnConsumer(op, collective);
    if (!consumedCollectives.contains(&op) &&
        failed(lowerMaterialized(pl, op, lower)))
      return failure();
    if (collective && pl.takeColumnsConsumed(op.getResult(0)))
      noteColumnsConsumed(op, collective, consumed->calls);
    if (pl.hasPendingGuest() && failed(pl.lowerGuestAlone()))
      return failure();
    assert((!produced || !pl.hasRowProducer(produced)) &&
           "a row consumer emits every row of its producer");
    // Views (reshape, slice) never own SBUF bytes: only a class's root is
    // placed in SBUF, and it is released after the class's last use.
    for (Value cls : dying.lookup(position[&op]))
      pl.release(cls);
    for (Value cls : deferredDying.lookup(&op))
      pl.release(cls);
    return success();
  }

  /// Sets up the row producer of `consumer`: its result, produced row tile
  /// by row tile in the consumer's row loop, or null when it was lowered
  /// whole instead (its operands then die before the consumer).
  FailureOr<Value> lowerRowProducer(Operation &consumer, Operation *producer) {
    // Fused, the producer's operands stay live through the consumer's row
    // loop (their last reads are there); lowered whole first, they die
    // before it. Fuse only when the consumer's and the producer's working
    // tiles still fit beside them and the producer's result. (Measured:
    // an f32 flux2-klein's first single-stream norm needed 279 KB of 224
    // KB per partition without this check.)
    Value result = producer->getResult(0);
    const RowProducerLowering &how =
        tables.pairing.producers.find(producer->getName().getStringRef())
            ->second;
    auto [rows0, cols] = matrixOf(shapeOf(result));
    int64_t resultBytes =
        (rows0 + kNumPartitions - 1) / kNumPartitions * cols *
        elementBytes(cast<RankedTensorType>(result.getType()).getElementType());
    int64_t working =
        how.workingBytes(producer) +
        tables.pairing.consumers.find(consumer.getName().getStringRef())
            ->second(&consumer);
    bool fits = resultBytes + working <= pl.workingBudget();
    RowProducer rows =
        !fits ? RowProducer() : pl.atLoc(producer->getLoc(), [&] {
          return how.setup(pl, producer);
        });
    if (rows) {
      Location loc = producer->getLoc();
      pl.setRowProducer(result, [pl = &pl, loc, rows](Index r0, int64_t p) {
        pl->atLoc(loc, [&] { rows(r0, p); });
      });
      ++pl.statistics().rowProduced;
      decisionRemark(target.remarks, loc)
          << "convert-seam-to-ncore: " << producer->getName()
          << " emitted row tile by row tile in the row loop of the "
          << consumer.getName() << " at " << consumer.getLoc()
          << ", its first reader: that op's first tile waits for one of "
             "its tiles, not all";
      return result;
    }
    if (failed(pl.atLoc(producer->getLoc(), [&] {
          return (*pairedLower.lookup(producer))(pl, producer);
        })))
      return failure();
    // Lowered whole: its operands die here, before the consumer.
    for (Value cls : deferredDying.lookup(&consumer))
      pl.release(cls);
    deferredDying.erase(&consumer);
    return Value();
  }

  /// The collective's result placement, made when the linear first calls
  /// it (a lowering that calls no consumer leaves the all_reduce to its own
  /// turn, unplaced), and the calls emitted: more than one is per slab.
  struct ConsumedColumns {
    std::optional<Placement> out;
    int calls = 0;
  };

  /// Offers the linear `op` its all_reduce as a column consumer.
  std::shared_ptr<ConsumedColumns> setUpColumnConsumer(Operation &op,
                                                       AllReduceOp collective) {
    auto consumed = std::make_shared<ConsumedColumns>();
    Location cloc = collective.getLoc();
    Value reduced = collective.getResult();
    int64_t ranks = int64_t(collective.getRanks());
    ColumnConsumer consumer;
    consumer.consume = [pl = &pl, cloc, reduced, ranks, state = consumed](
                           const Placement &y, Index r0, int64_t rows, Index c0,
                           int64_t cols) {
      ++state->calls;
      pl->atLoc(cloc, [&] {
        if (!state->out)
          state->out = pl->placeResultInHbm(reduced, "cc");
        pl->allReduce(ncore::AluOp::Add,
                      pl->window(*state->out, r0, rows, c0, cols),
                      pl->window(y, r0, rows, c0, cols), ranks);
      });
    };
    const ::seam::rt::Profile *profile = target.profile;
    consumer.estimateNs = [profile, ranks](int64_t bytes) {
      return ::seam::rt::collectiveDurationNs(::seam::rt::Opcode::AllReduce,
                                              uint64_t(bytes), unsigned(ranks),
                                              *profile);
    };
    pl.setColumnConsumer(op.getResult(0), std::move(consumer));
    return consumed;
  }

  /// The linear `op` emitted all of `collective` (in `calls` calls): its
  /// own turn is skipped.
  void noteColumnsConsumed(Operation &op, AllReduceOp collective, int calls) {
    consumedCollectives.insert(collective);
    ++pl.statistics().columnConsumed;
    auto remark = decisionRemark(target.remarks, collective.getLoc());
    remark << "convert-seam-to-ncore: all_reduce emitted in the linear at "
           << op.getLoc();
    if (calls > 1)
      remark << ", slab by slab: each weight slab's columns are reduced "
                "while the Tensor engine computes the next slab, so only "
                "the last slab's reduction follows the linear";
    else
      remark << ", once after its last store: one slab's reduction would "
                "take longer than the slab's Tensor-engine time";
  }

  /// Outputs not computed in place (func args, aliases, values returned
  /// twice) are copied into their output arguments.
  LogicalResult copyOutputs() {
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    unsigned numIn = func.getNumArguments();
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      pl.setLoc(ret.getLoc());
      FailureOr<Placement> src = pl.get(v, ret);
      if (failed(src))
        return failure();
      Value outArg = pbody.getArgument(numIn + i);
      auto [rows, cols] = matrixOf(src->shape);
      Value rootBuffer = src->root;
      if (auto resh = rootBuffer.getDefiningOp<ncore::ReshapeOp>())
        rootBuffer = resh.getSource();
      if (rootBuffer == outArg && src->rowOffset == 0 && src->isContiguous())
        continue;
      pl.copyInto(Placement::hbmMatrix(pl.reshape(outArg, {rows, cols}),
                                       src->shape, src->elementType),
                  *src);
    }
    return success();
  }

  func::FuncOp func;
  ncore::ProgramOp program;
  Block &body, &pbody;
  const ProgramPairings &pairings;
  const ConversionTables &tables;
  const TargetInfo &target;
  ProgramLowering pl;

  // Liveness.
  DenseMap<Operation *, int64_t> position;
  DenseMap<Value, Value> classOf;
  DenseMap<Value, int64_t> lastUse;
  DenseMap<int64_t, SmallVector<Value>> dying;

  // Pairs: guest -> host, row producer -> consumer; the table lowerings of
  // guests and row producers (looked up at their own positions), the
  // classes released after their host or consumer, and the all_reduces a
  // linear emitted.
  DenseMap<Operation *, Operation *> hostOfGuest, consumerOf;
  DenseMap<Operation *, const LowerFn *> pairedLower;
  DenseMap<Operation *, SmallVector<Value>> deferredDying;
  DenseSet<Operation *> consumedCollectives;
};

} // namespace

/// Lowers the program func `func` into `programs`.
static LogicalResult
lowerProgram(func::FuncOp func, ModuleOp module, ModuleOp programs,
             const ConversionTables &tables, const TargetInfo &target,
             KernelDeclarations &kernels, ConversionStats &stats) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("convert-seam-to-ncore: a program has one block");
  FailureOr<ProgramPairings> pairings =
      readPairings(func.getBody().front(), tables.pairing);
  if (failed(pairings))
    return failure();
  bool anyCall = false;
  SmallVector<bool> isParam = parameterArguments(func, module, anyCall);
  FailureOr<ncore::ProgramOp> program = createProgram(func, programs, isParam);
  if (failed(program))
    return failure();
  return ProgramConverter(func, *program, *pairings, tables, target, stats,
                          kernels)
      .run(isParam, anyCall);
}

void ConvertSeamToNcorePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  FailureOr<::seam::rt::Profile> targetProfile =
      ncore::getTargetProfile(module, target, "convert-seam-to-ncore");
  if (failed(targetProfile))
    return signalPassFailure();
  const ::seam::rt::Profile &profile = *targetProfile;
  // The passes after this one plan with the same profile.
  if (!ncore::findTargetAttr(module))
    ncore::setTargetProfile(module, profile);
  if (kernelBoundary != "barrier" && kernelBoundary != "dependency") {
    module.emitError() << "convert-seam-to-ncore: unknown kernel-boundary '"
                       << kernelBoundary << "' (barrier or dependency)";
    return signalPassFailure();
  }
  TargetInfo info;
  info.name = std::string(::seam::rt::name(profile.target));
  info.remarks = remarks;
  info.kernelBoundary = kernelBoundary;
  info.sbufPartitionBytes = int64_t(profile.sbufPartitionBytes);
  // Working tiles of the widest op (a linear's transposed row block, an
  // attention row of scores, a norm's f32 row) stay below a third of SBUF.
  info.workingBytes = info.sbufPartitionBytes / 3;
  info.profile = &profile;

  ConversionTables tables;
  populateLinearLowerings(tables.lowerings);
  populateElementwiseLowerings(tables.lowerings);
  populateNormLowerings(tables.lowerings);
  populateShapeLowerings(tables.lowerings);
  populateRopeLowerings(tables.lowerings);
  populateAttentionLowerings(tables.lowerings);
  populateCollectiveLowerings(tables.lowerings);
  populateKernelCallLowerings(tables.lowerings);
  tables.pairing = PairingRules::all();

  if (SymbolTable::lookupSymbolIn(module, "ncore")) {
    module.emitError("convert-seam-to-ncore: the module already has a symbol "
                     "@ncore (converted twice?)");
    return signalPassFailure();
  }
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto programs = b.create<ModuleOp>(module.getLoc(), StringRef("ncore"));
  KernelDeclarations kernels(programs);
  ConversionStats stats;

  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(::mlir::seam::kProgramAttrName))
      funcs.push_back(func);
  // Boundary bodies first: their callers' kernel calls look them up.
  std::stable_partition(funcs.begin(), funcs.end(), [](func::FuncOp f) {
    return f->hasAttr(kBoundaryBodyAttrName);
  });
  bool failedAny = false;
  for (func::FuncOp func : funcs) {
    int64_t spillsBefore = stats.spills;
    if (failed(lowerProgram(func, module, programs, tables, info, kernels,
                            stats))) {
      failedAny = true;
      continue;
    }
    ++stats.programs;
    if (auto p = programs.lookupSymbol<ncore::ProgramOp>(func.getSymName()))
      p->setAttr("seam.spills",
                 b.getI64IntegerAttr(stats.spills - spillsBefore));
  }
  // Top-level kernel calls (eager mode): launched by the host directly.
  module.walk([&](KernelCallOp call) {
    auto parent = call->getParentOfType<func::FuncOp>();
    if (parent && parent->hasAttr(::mlir::seam::kProgramAttrName))
      return;
    FailureOr<ncore::ProgramOp> decl = kernels.getOrCreate(call);
    if (failed(decl)) {
      failedAny = true;
      return;
    }
    call->setAttr(
        "seam.ncore_program",
        SymbolRefAttr::get(programs.getSymNameAttr(),
                           {FlatSymbolRefAttr::get(decl->getSymNameAttr())}));
  });
  if (failedAny)
    return signalPassFailure();
  stats.publish();
}

void mlir::seam::buildLowerToNcorePipeline(
    OpPassManager &pm, const ConvertSeamToNcoreOptions &options) {
  pm.addPass(createSeamPlanPairings());
  pm.addPass(createConvertSeamToNcore(options));
}
