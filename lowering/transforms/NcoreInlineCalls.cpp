//===- NcoreInlineCalls.cpp - kernel calls -> ncore.inlined_call ----------===//
//
// See NcorePasses.td (ncore-inline-calls). What used to happen inside the
// emitter (relocating the callee's on-chip bytes, binding its arguments,
// naming its scratch, renumbering its semaphores) is done here on the IR, so
// that the emitter only translates.
//
//===----------------------------------------------------------------------===//

#include "lowering/transforms/NcorePasses.h"

#include "dialect/ncore/NcoreAccess.h"
#include "passes/Statistics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

namespace mlir::ncore {
#define GEN_PASS_DEF_NCOREINLINECALLS
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;

namespace {

/// Whether `a` walks its buffer row-major without gaps (size-1 dims aside).
bool isContiguous(const TileAccess &a) {
  int64_t expect = 1;
  bool contiguous = true;
  for (const FreeDimAccess &d : llvm::reverse(a.dims)) {
    if (d.size != 1 && d.stride != expect)
      contiguous = false;
    expect *= d.size;
  }
  if (a.partitions > 1 && a.rowStride != expect)
    contiguous = false;
  return contiguous;
}

/// The semaphore id of a sem_wait / sem_signal; nullopt for other ops.
std::optional<int64_t> semOf(Operation *op) {
  if (auto w = dyn_cast<SemWaitOp>(op))
    return w.getSem();
  if (auto s = dyn_cast<SemSignalOp>(op))
    return s.getSem();
  return std::nullopt;
}

void setSem(Operation *op, int64_t sem) {
  if (auto w = dyn_cast<SemWaitOp>(op))
    w.setSem(sem);
  else
    cast<SemSignalOp>(op).setSem(sem);
}

/// Renumbers the semaphores of an inlined body 0, 1, ... in the order the
/// emitter meets them: engine by engine, each engine's ops in program order.
void renumberSemaphores(Block &body) {
  SmallVector<std::pair<unsigned, Operation *>> semOps;
  forEachOwnOp(body, [&](Operation *op) {
    if (semOf(op))
      semOps.push_back(
          {static_cast<unsigned>(
               cast<InstructionOpInterface>(op).getExecutionEngine()),
           op});
  });
  std::stable_sort(semOps.begin(), semOps.end(),
                   [](auto &a, auto &b) { return a.first < b.first; });
  llvm::DenseMap<int64_t, int64_t> ids;
  for (auto &[engine, op] : semOps)
    ids.try_emplace(*semOf(op), static_cast<int64_t>(ids.size()));
  for (auto &[engine, op] : semOps)
    setSem(op, ids.lookup(*semOf(op)));
}

/// Names the HBM scratch of an inlined body `<callee>.<name>`: its own allocs
/// as the emitter names a program's scratch (`name`, else `scratch<i>`),
/// those of nested inlined calls (named already) by prefixing.
void nameScratch(Block &body, StringRef callee) {
  auto isScratch = [](AllocOp a) {
    return a.getType().getSpace() == MemSpace::Hbm;
  };
  auto rename = [&](AllocOp a, StringRef name) {
    a.setNameAttr(StringAttr::get(a.getContext(), (callee + "." + name).str()));
  };
  int index = 0;
  body.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto nested = dyn_cast<InlinedCallOp>(op)) {
      nested.walk([&](AllocOp a) {
        if (isScratch(a))
          rename(a, a.getName() ? *a.getName() : StringRef("scratch"));
      });
      return WalkResult::skip();
    }
    if (auto a = dyn_cast<AllocOp>(op); a && isScratch(a)) {
      std::string own =
          a.getName() ? a.getName()->str() : "scratch" + std::to_string(index);
      ++index;
      rename(a, own);
    }
    return WalkResult::advance();
  });
}

class Inliner {
public:
  /// Inlines the calls of `program`, the calls of its callees first.
  LogicalResult inlineCallsOf(ProgramOp program);
  int64_t inlined = 0;

private:
  LogicalResult inlineCall(CallKernelOp call);

  SmallVector<Operation *> stack;
  llvm::DenseSet<Operation *> done;
};

LogicalResult Inliner::inlineCallsOf(ProgramOp program) {
  if (program.isDeclaration() || done.contains(program))
    return success();
  stack.push_back(program);
  SmallVector<CallKernelOp> calls;
  program.walk([&](CallKernelOp call) { calls.push_back(call); });
  for (CallKernelOp call : calls)
    if (failed(inlineCall(call)))
      return failure();
  stack.pop_back();
  done.insert(program);
  return success();
}

LogicalResult Inliner::inlineCall(CallKernelOp call) {
  if (call->getParentOfType<LoopOp>())
    return call.emitOpError(
        "inside an ncore.loop cannot be inlined: a kernel call is a full "
        "barrier outside loops");
  auto callee = SymbolTable::lookupNearestSymbolFrom<ProgramOp>(
      call, call.getCalleeAttr());
  if (!callee)
    return call.emitOpError()
           << "callee " << call.getCalleeAttr() << " is not an ncore.program";
  if (callee.isDeclaration())
    return call.emitOpError()
           << "calls @" << callee.getSymName()
           << ", which is only a declaration: its program must be defined "
              "in the module to be inlined";
  if (llvm::is_contained(stack, callee.getOperation()))
    return call.emitOpError()
           << "calls @" << callee.getSymName() << " recursively";
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    FailureOr<TileAccess> a = resolveAccess(operand);
    if (failed(a))
      return call.emitOpError("operand has no access pattern");
    if (a->space != MemSpace::Hbm)
      return call.emitOpError()
             << "operand " << i << " is not in HBM: kernels take HBM tensors";
    if (!isContiguous(*a))
      return call.emitOpError()
             << "operand " << i << " (" << describeTile(operand.getType())
             << ") is not a contiguous HBM window: the kernel would read a "
                "different layout";
  }
  if (failed(inlineCallsOf(callee)))
    return call.emitOpError()
           << "could not inline the calls of callee @" << callee.getSymName();

  OpBuilder b(call);
  auto region = b.create<InlinedCallOp>(call.getLoc(), call.getCalleeAttr(),
                                        call.getOperands());
  // The boundary and ncore-schedule's decisions at it go with the body.
  for (StringRef name :
       {kBoundaryAttrName, kCallIdAttrName, kEntryWaitsAttrName})
    if (Attribute a = call->getAttr(name))
      region->setAttr(name, a);
  IRMapping mapping;
  callee.getBody().cloneInto(&region.getBody(), mapping);
  Block &body = *region.getBodyBlock();

  // ncore-allocate placed the callee's on-chip bytes clear of the caller's
  // tiles live across the call; without that placement they start at 0.
  auto base = [&](StringRef name) -> int64_t {
    auto attr = call->getAttrOfType<IntegerAttr>(name);
    return attr ? attr.getInt() : 0;
  };
  int64_t sbufBase = base(kSbufBaseAttr), psumBase = base(kPsumBaseAttr);
  body.walk([&](AllocOp alloc) {
    MemSpace space = alloc.getType().getSpace();
    if (!alloc.getOffset() || space == MemSpace::Hbm)
      return; // unplaced (the emitter refuses it) or a binding
    int64_t moved = static_cast<int64_t>(*alloc.getOffset()) +
                    (space == MemSpace::Sbuf ? sbufBase : psumBase);
    alloc.setOffsetAttr(b.getI64IntegerAttr(moved));
  });
  nameScratch(body, callee.getSymName());
  renumberSemaphores(body);
  call.erase();
  ++inlined;
  return success();
}

class NcoreInlineCallsPass
    : public mlir::ncore::impl::NcoreInlineCallsBase<NcoreInlineCallsPass> {
public:
  using NcoreInlineCallsBase::NcoreInlineCallsBase;

  void runOnOperation() override {
    Inliner inliner;
    SmallVector<ProgramOp> programs;
    getOperation()->walk([&](ProgramOp p) { programs.push_back(p); });
    for (ProgramOp p : programs)
      if (failed(inliner.inlineCallsOf(p)))
        return signalPassFailure();
    numInlined += inliner.inlined;
  }

private:
  PassCounter numInlined{"ncore-inline-calls", "calls", "Kernel calls inlined"};
};

} // namespace
