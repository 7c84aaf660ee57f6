//===- NcoreEmit.cpp - ncore program -> runtime program -------------------===//
#include "lowering/target/NcoreEmit.h"
#include "lowering/transforms/NcorePasses.h"
#include "lowering/transforms/ParallelChunks.h"

#include "dialect/ncore/NcoreAccess.h"
#include "dialect/ncore/NcoreTranslate.h"
#include "kernels/Constants.h"
#include "mlir/IR/SymbolTable.h"
#include "runtime/Numerics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::ncore;
namespace rt = ::seam::rt;

std::string mlir::ncore::bindingName(ProgramOp program, unsigned i) {
  if (auto name = program.getArgAttrOfType<StringAttr>(i, kNameAttrName))
    return name.str();
  return "arg" + std::to_string(i);
}

namespace {

/// A stream's index and back.
unsigned streamIndex(rt::Engine e) { return static_cast<unsigned>(e); }
rt::Engine engineAt(unsigned i) { return static_cast<rt::Engine>(i); }

std::optional<rt::DType> toRtType(Type t) {
  if (auto code = dtypeCode(t))
    return static_cast<rt::DType>(*code);
  return std::nullopt;
}

class ProgramEmitter {
public:
  ProgramEmitter(ProgramOp program, rt::Target target,
                 const EmitOptions &options)
      : program(program), options(options) {
    prog.name = program.getSymName().str();
    prog.target = target;
  }

  FailureOr<rt::Program> run();

private:
  ProgramOp program;
  const EmitOptions &options;
  rt::Program prog;
  /// HBM buffers: binding and byte offset in it (an inlined callee's
  /// arguments are windows of the caller's bindings).
  llvm::DenseMap<Value, std::pair<uint32_t, int64_t>> bindingOf;
  /// Waits of `ncore.sem_wait` ops not yet attached, per engine.
  std::array<std::vector<rt::SemWaitSpec>, rt::kNumEngines> pendingWaits;
  /// Waits of a barrier, owed by each engine before its next instruction.
  std::array<std::vector<rt::SemWaitSpec>, rt::kNumEngines> pendingBarrier;
  /// Index in its stream of the last instruction a following sem_signal may
  /// attach to (-1: none).
  std::array<int64_t, rt::kNumEngines> foldable;
  llvm::SmallVector<LoopOp, 4> loops;
  int nextSem = 0;
  std::array<int, rt::kNumEngines> barrierSem;
  /// Per engine, a wait for something it issued (or none).
  using EngineWaits =
      std::array<std::optional<rt::SemWaitSpec>, rt::kNumEngines>;
  /// The semaphore scope of an ncore.inlined_call being emitted: its ids ->
  /// machine semaphores, and their values when the body started.
  struct SemScope {
    const std::vector<int> *sems;
    std::vector<uint64_t> entryTotals;
    /// A dependency-boundary body: its instructions' entry waits (by
    /// ordinal: caller engines), those engines' last instructions before
    /// the call, and the ordinal of the next instruction.
    llvm::DenseMap<unsigned, unsigned> entry;
    EngineWaits entryWaits;
    unsigned ordinal = 0;
  };
  llvm::SmallVector<SemScope, 2> scopes;
  /// Machine semaphores of the inlined calls of each callee (by the path of
  /// callees from the program), shared by its calls.
  std::map<std::string, std::vector<int>> calleeSems;

  uint32_t addBinding(std::string name, std::vector<int64_t> shape,
                      rt::DType dtype, rt::BindingRole role) {
    rt::Binding b;
    b.name = std::move(name);
    b.shape = std::move(shape);
    b.dtype = dtype;
    b.role = role;
    b.hbmOffset = llvm::alignTo(prog.hbmBytes(), 64);
    b.hbmSize = b.numElements() * rt::byteSize(dtype);
    prog.bindings.push_back(std::move(b));
    return static_cast<uint32_t>(prog.bindings.size() - 1);
  }

  FailureOr<int> freshSem(Operation *at) {
    if (nextSem >= static_cast<int>(rt::kNumSemaphores))
      return at->emitOpError()
                 << "needs more than " << rt::kNumSemaphores << " semaphores",
             failure();
    return nextSem++;
  }

  /// Signals per semaphore so far (loop trips multiply), and how often each
  /// emitted instruction runs: kept as instructions are appended, so
  /// barriers need no rescans of the program.
  std::vector<uint64_t> totals = std::vector<uint64_t>(rt::kNumSemaphores, 0);
  std::array<std::vector<uint64_t>, rt::kNumEngines> runs;

  uint64_t currentRuns() const {
    uint64_t m = 1;
    for (LoopOp l : loops)
      m *= static_cast<uint64_t>(l.getTrips());
    return m;
  }
  void addSignal(unsigned e, size_t index) {
    const rt::Instruction &inst = prog.streams[e][index];
    if (inst.signalSem >= 0)
      totals[inst.signalSem] += runs[e][index] * inst.signalCount;
  }
  void push(rt::Engine e, rt::Instruction inst, uint64_t times = 0) {
    unsigned ei = streamIndex(e);
    inst.engine = e;
    prog.streams[ei].push_back(std::move(inst));
    runs[ei].push_back(times ? times : currentRuns());
    addSignal(ei, prog.streams[ei].size() - 1);
  }
  std::vector<rt::Instruction> &stream(rt::Engine e) {
    return prog.streams[streamIndex(e)];
  }

  /// Emits `waits` as SemWait instructions on `e` (4 per instruction).
  void emitWaitInstructions(rt::Engine e, std::vector<rt::SemWaitSpec> &waits) {
    if (waits.empty())
      return;
    for (size_t i = 0; i < waits.size(); i += rt::kMaxWaits) {
      rt::Instruction w = rt::isa::semWait(waits[i].sem, waits[i].value);
      w.waits.assign(waits.begin() + i,
                     waits.begin() + std::min(waits.size(), i + rt::kMaxWaits));
      push(e, w);
    }
    waits.clear();
    foldable[streamIndex(e)] = -1;
  }
  void flushBarrier(rt::Engine e) {
    emitWaitInstructions(e, pendingBarrier[streamIndex(e)]);
  }
  /// Emits the pending `ncore.sem_wait`s of `e` (after its barrier waits).
  void flushWaits(rt::Engine e) {
    if (pendingWaits[streamIndex(e)].empty())
      return;
    flushBarrier(e);
    emitWaitInstructions(e, pendingWaits[streamIndex(e)]);
  }
  void flushAllWaits() {
    for (unsigned e = 0; e < rt::kNumEngines; ++e)
      flushWaits(engineAt(e));
  }

  /// Appends an instruction with the pending waits of its engine.
  void emitInstruction(rt::Engine e, rt::Instruction inst) {
    unsigned ei = streamIndex(e);
    flushBarrier(e);
    auto &waits = pendingWaits[ei];
    if (waits.size() > rt::kMaxWaits) {
      std::vector<rt::SemWaitSpec> head(waits.begin(),
                                        waits.end() - rt::kMaxWaits);
      waits.erase(waits.begin(), waits.end() - rt::kMaxWaits);
      emitWaitInstructions(e, head);
    }
    inst.waits = waits;
    waits.clear();
    push(e, std::move(inst));
    foldable[ei] = static_cast<int64_t>(stream(e).size()) - 1;
  }

  LogicalResult barrier(Operation *at);
  /// Waits for the last instruction (loop markers aside) of each engine in
  /// `engines` (a bit each) that has one, made to signal if it does not.
  FailureOr<EngineWaits> lastInstructionWaits(Operation *at, unsigned engines);
  /// Appends the waits of `waits` named by `engines` (a bit each) to `out`.
  static void appendWaits(const EngineWaits &waits, unsigned engines,
                          std::vector<rt::SemWaitSpec> &out) {
    for (unsigned e = 0; e < rt::kNumEngines; ++e)
      if ((engines & (1u << e)) && waits[e])
        out.push_back(*waits[e]);
  }
  /// Per dependency-boundary call (ncore.call_id), the waits for its body's
  /// last instruction on each engine it used.
  std::vector<std::optional<EngineWaits>> callExits;
  LogicalResult emitBlock(Block &block);
  LogicalResult emitLoop(LoopOp loop);
  LogicalResult emitInlinedCall(InlinedCallOp call);
  LogicalResult bindScratch(Block &body);
  FailureOr<int> machineSem(Operation *op, int64_t sem);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitInstructionOp(InstructionOpInterface op);
  /// `tile`'s access pattern inside `loops` (outermost first). Errors are
  /// diagnostics on `user`, or only a failure when `report` is false.
  FailureOr<rt::AccessPattern> access(Value tile, Operation *user,
                                      ArrayRef<LoopOp> loops,
                                      bool report = true);
  void translateAhead();

  /// Compute and transfer instructions outside inlined calls, in program
  /// order, translated ahead on the context's threads (translateAhead):
  /// their loops and bindings are known before emission starts. Emission
  /// takes each op's translation in turn; one that failed ahead is
  /// translated again in order, which reports its error.
  std::vector<Operation *> aheadOps;
  std::vector<std::optional<rt::Instruction>> ahead;
  size_t aheadNext = 0;
};

} // namespace

/// Engines with instructions (or semaphore ops) inside `loop`.
static llvm::SmallSet<unsigned, 8> enginesIn(LoopOp loop) {
  llvm::SmallSet<unsigned, 8> engines;
  loop.getBody().walk([&](InstructionOpInterface inst) {
    engines.insert(static_cast<unsigned>(inst.getExecutionEngine()));
  });
  return engines;
}

FailureOr<rt::AccessPattern> ProgramEmitter::access(Value tile, Operation *user,
                                                    ArrayRef<LoopOp> loops,
                                                    bool report) {
  auto fail = [&](Operation *at, const Twine &message) {
    if (report)
      at->emitOpError(message);
    return failure();
  };
  FailureOr<TileAccess> a = resolveAccess(tile);
  if (failed(a))
    return fail(user, "operand has no access pattern");
  std::optional<rt::DType> dtype = toRtType(a->elementType);
  if (!dtype)
    return fail(user, "operand dtype is not f32/bf16");
  int64_t eb = rt::byteSize(*dtype);
  rt::AccessPattern ap;
  ap.space = static_cast<rt::MemSpace>(static_cast<uint8_t>(a->space));
  ap.dtype = *dtype;
  ap.partitions = static_cast<uint32_t>(a->partitions);
  if (a->dims.size() > rt::kMaxFreeDims)
    return fail(user, "operand walks " + Twine(a->dims.size()) +
                          " free dimensions; the program format holds " +
                          Twine(rt::kMaxFreeDims));
  ap.numDims = static_cast<uint8_t>(a->dims.size());
  for (auto [i, d] : llvm::enumerate(a->dims))
    ap.dims[i] = rt::FreeDim{static_cast<uint32_t>(d.size), d.stride};
  if (a->space == MemSpace::Hbm) {
    auto it = bindingOf.find(a->root);
    if (it == bindingOf.end())
      return fail(user, "HBM operand is not a program argument or an HBM "
                        "scratch alloc");
    ap.binding = it->second.first;
    ap.offset = a->offset * eb + it->second.second;
    ap.partitionStride = a->rowStride;
  } else {
    auto alloc = a->root.getDefiningOp<AllocOp>();
    if (!alloc)
      return fail(user, "on-chip operand is not an ncore.alloc");
    if (!alloc.getOffset())
      return fail(alloc, "has no offset: run ncore-allocate before emission");
    ap.offset = static_cast<int64_t>(*alloc.getOffset()) + a->offset * eb;
    ap.partitionStart = static_cast<uint32_t>(a->startPartition);
  }
  for (auto &[loop, step] : a->loopSteps) {
    const auto *it = llvm::find(loops, loop);
    if (it == loops.end())
      return fail(user, "operand steps with a loop that does not enclose it");
    ap.loopStep[it - loops.begin()] += step * eb;
  }
  return ap;
}

void ProgramEmitter::translateAhead() {
  ahead.resize(aheadOps.size());
  parallelChunks(program.getContext(), aheadOps.size(), [&](size_t i) {
    Operation *op = aheadOps[i];
    SmallVector<LoopOp, rt::kMaxLoopDepth> around;
    for (auto l = op->getParentOfType<LoopOp>(); l;
         l = l->getParentOfType<LoopOp>()) {
      if (around.size() == rt::kMaxLoopDepth)
        return; // emitLoop reports it
      around.push_back(l);
    }
    std::reverse(around.begin(), around.end());
    FailureOr<rt::Instruction> inst = translateInstruction(
        cast<InstructionOpInterface>(op),
        [&](Value tile) { return access(tile, op, around, /*report=*/false); },
        around.size());
    if (succeeded(inst))
      ahead[i] = std::move(*inst);
  });
}

LogicalResult ProgramEmitter::barrier(Operation *at) {
  unsigned all = (1u << rt::kNumEngines) - 1;
  FailureOr<EngineWaits> last = lastInstructionWaits(at, all);
  if (failed(last))
    return failure();
  std::vector<rt::SemWaitSpec> waits;
  appendWaits(*last, all, waits);
  for (unsigned e = 0; e < rt::kNumEngines; ++e)
    pendingBarrier[e] = waits;
  foldable.fill(-1);
  return success();
}

FailureOr<ProgramEmitter::EngineWaits>
ProgramEmitter::lastInstructionWaits(Operation *at, unsigned engines) {
  EngineWaits waits;
  for (unsigned e = 0; e < rt::kNumEngines; ++e) {
    if (!(engines & (1u << e)))
      continue;
    auto &s = prog.streams[e];
    // The last instruction of the stream that is not a loop marker.
    rt::Instruction *last = nullptr;
    size_t lastIndex = 0;
    for (size_t i = s.size(); i-- > 0;)
      if (s[i].op != rt::Opcode::LoopBegin && s[i].op != rt::Opcode::LoopEnd) {
        last = &s[i];
        lastIndex = i;
        break;
      }
    if (!last)
      continue;
    if (last->signalSem < 0) {
      if (barrierSem[e] < 0) {
        FailureOr<int> sem = freshSem(at);
        if (failed(sem))
          return failure();
        barrierSem[e] = *sem;
      }
      last->signalSem = barrierSem[e];
      last->signalCount = 1;
      addSignal(e, lastIndex);
    }
    rt::SemWaitSpec w;
    w.sem = static_cast<uint16_t>(last->signalSem);
    w.value = static_cast<uint32_t>(totals[last->signalSem]);
    waits[e] = w;
  }
  return waits;
}

LogicalResult ProgramEmitter::emitLoop(LoopOp loop) {
  if (loops.size() >= rt::kMaxLoopDepth)
    return loop.emitOpError() << "nests deeper than the " << rt::kMaxLoopDepth
                              << " loop levels of the program format";
  if (loop.getTrips() <= 0 || loop.getTrips() > UINT32_MAX)
    return loop.emitOpError("trip count out of range");
  flushAllWaits();
  auto engines = enginesIn(loop);
  for (unsigned e : engines) {
    flushBarrier(engineAt(e));
    push(engineAt(e),
         rt::isa::loopBegin(static_cast<uint32_t>(loop.getTrips())));
    foldable[e] = -1;
  }
  loops.push_back(loop);
  if (failed(emitBlock(*loop.getBodyBlock())))
    return failure();
  loops.pop_back();
  flushAllWaits();
  for (unsigned e : engines) {
    push(engineAt(e), rt::isa::loopEnd());
    foldable[e] = -1;
  }
  return success();
}

LogicalResult ProgramEmitter::emitInlinedCall(InlinedCallOp call) {
  if (!loops.empty())
    return call.emitOpError(
        "inside an ncore.loop cannot be emitted: a kernel call is a full "
        "barrier outside loops");
  Block &body = *call.getBodyBlock();
  for (auto [arg, operand] :
       llvm::zip(body.getArguments(), call.getOperands())) {
    FailureOr<rt::AccessPattern> ap = access(operand, call, loops);
    if (failed(ap))
      return failure();
    bindingOf[arg] = {ap->binding, ap->offset};
  }
  flushAllWaits();
  // The dependency boundary: each body instruction ncore-schedule named
  // waits for the caller engines it conflicts with, and what follows waits
  // for the body only where ncore-schedule put an ncore.kernel_wait; the
  // barrier: every engine drains before the body and after it.
  bool dependency = hasDependencyBoundary(call);
  llvm::DenseMap<unsigned, unsigned> entry;
  EngineWaits entryWaits;
  std::array<size_t, rt::kNumEngines> streamSizes;
  if (dependency) {
    auto pairs = call->getAttrOfType<DenseI64ArrayAttr>(kEntryWaitsAttrName);
    auto id = call->getAttrOfType<IntegerAttr>(kCallIdAttrName);
    if (!pairs || !id || id.getInt() < 0 || pairs.size() % 2)
      return call.emitOpError()
             << "has the dependency boundary but no " << kCallIdAttrName
             << " / " << kEntryWaitsAttrName
             << " pairs: run ncore-schedule before emission";
    unsigned engines = 0;
    for (size_t i = 0; i < size_t(pairs.size()); i += 2) {
      int64_t ordinal = pairs[i], mask = pairs[i + 1];
      if (ordinal < 0 || mask < 0 || mask >= (1 << rt::kNumEngines))
        return call.emitOpError()
               << "has a bad " << kEntryWaitsAttrName << " pair (" << ordinal
               << ", " << mask << ")";
      entry[unsigned(ordinal)] |= unsigned(mask);
      engines |= unsigned(mask);
    }
    FailureOr<EngineWaits> waits = lastInstructionWaits(call, engines);
    if (failed(waits))
      return failure();
    entryWaits = *waits;
    for (unsigned e = 0; e < rt::kNumEngines; ++e)
      streamSizes[e] = prog.streams[e].size();
    foldable.fill(-1);
  } else if (failed(barrier(call))) {
    return failure();
  }
  if (failed(bindScratch(body)))
    return failure();
  // The body's semaphores: machine ones of their own, the same for every
  // inlined call of the callee; counts go on from where the last left them.
  std::string path;
  for (Operation *p = call; p; p = p->getParentOfType<InlinedCallOp>()) {
    StringRef callee = cast<InlinedCallOp>(p).getCallee();
    path.insert(0, 1, '/').insert(0, callee.data(), callee.size());
  }
  auto [it, fresh] = calleeSems.try_emplace(path);
  if (fresh) {
    int64_t count = 0;
    forEachOwnOp(body, [&](Operation *op) {
      if (auto w = dyn_cast<SemWaitOp>(op))
        count = std::max<int64_t>(count, w.getSem() + 1);
      if (auto s = dyn_cast<SemSignalOp>(op))
        count = std::max<int64_t>(count, s.getSem() + 1);
    });
    for (int64_t i = 0; i < count; ++i) {
      FailureOr<int> sem = freshSem(call);
      if (failed(sem))
        return failure();
      it->second.push_back(*sem);
    }
  }
  scopes.push_back({&it->second, totals, std::move(entry), entryWaits, 0});
  LogicalResult emitted = emitBlock(body);
  scopes.pop_back();
  if (failed(emitted))
    return failure();
  flushAllWaits();
  if (!dependency)
    return barrier(call);
  // The engines the body used: their last instructions are its end.
  unsigned used = 0;
  for (unsigned e = 0; e < rt::kNumEngines; ++e)
    if (prog.streams[e].size() > streamSizes[e])
      used |= 1u << e;
  FailureOr<EngineWaits> exit = lastInstructionWaits(call, used);
  if (failed(exit))
    return failure();
  size_t id =
      size_t(call->getAttrOfType<IntegerAttr>(kCallIdAttrName).getInt());
  if (callExits.size() <= id)
    callExits.resize(id + 1);
  callExits[id] = *exit;
  foldable.fill(-1);
  return success();
}

FailureOr<int> ProgramEmitter::machineSem(Operation *op, int64_t sem) {
  if (scopes.empty()) {
    if (sem < 0 || sem >= rt::kNumSemaphores)
      return op->emitOpError("semaphore id out of range"), failure();
    return static_cast<int>(sem);
  }
  const std::vector<int> &sems = *scopes.back().sems;
  if (sem < 0 || sem >= static_cast<int64_t>(sems.size()))
    return op->emitOpError("semaphore id out of range"), failure();
  return sems[sem];
}

LogicalResult ProgramEmitter::emitOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AllocOp, ViewOp, ReshapeOp, YieldOp>([](auto) { return success(); })
      .Case([&](LoopOp loop) { return emitLoop(loop); })
      .Case([&](InlinedCallOp call) { return emitInlinedCall(call); })
      .Case([&](KernelWaitOp wait) -> LogicalResult {
        uint64_t id = wait.getCall();
        if (id >= callExits.size() || !callExits[id])
          return wait.emitOpError()
                 << "waits for kernel call " << id
                 << ", which no earlier dependency-boundary call is";
        unsigned engines = 0;
        for (int64_t e : wait.getBodyEngines()) {
          if (e < 0 || e >= int64_t(rt::kNumEngines))
            return wait.emitOpError() << "names engine " << e;
          engines |= 1u << e;
        }
        appendWaits(*callExits[id], engines,
                    pendingWaits[streamIndex(
                        static_cast<rt::Engine>(wait.getEngine()))]);
        return success();
      })
      .Case([&](CallKernelOp call) {
        return call.emitOpError(
            "must be inlined before emission (run ncore-inline-calls)");
      })
      .Case([&](InstructionOpInterface inst) {
        // A dependency-boundary body's instruction waits for the caller
        // engines ncore-schedule named for it.
        if (!scopes.empty() && !scopes.back().entry.empty()) {
          SemScope &scope = scopes.back();
          if (unsigned engines = scope.entry.lookup(scope.ordinal))
            appendWaits(
                scope.entryWaits, engines,
                pendingWaits[static_cast<unsigned>(inst.getExecutionEngine())]);
        }
        if (!scopes.empty())
          ++scopes.back().ordinal;
        return emitInstructionOp(inst);
      })
      .Default([](Operation *op) {
        return op->emitOpError("cannot be emitted into a runtime program");
      });
}

LogicalResult ProgramEmitter::emitInstructionOp(InstructionOpInterface op) {
  FailureOr<rt::Instruction> inst = failure();
  if (aheadNext < aheadOps.size() && aheadOps[aheadNext] == op) {
    if (std::optional<rt::Instruction> &done = ahead[aheadNext++])
      inst = std::move(*done);
  }
  if (failed(inst))
    inst = translateInstruction(
        op, [&](Value tile) { return access(tile, op, loops); }, loops.size());
  if (failed(inst))
    return failure();
  rt::Engine e = inst->engine;
  unsigned ei = streamIndex(e);
  switch (inst->op) {
  case rt::Opcode::SemWait: {
    // Attached to the engine's next instruction (see emitInstruction).
    auto wait = cast<SemWaitOp>(op);
    FailureOr<int> sem = machineSem(op, wait.getSem());
    if (failed(sem))
      return failure();
    rt::SemWaitSpec w = inst->waits.front();
    w.sem = static_cast<uint16_t>(*sem);
    if (!scopes.empty())
      w.value += static_cast<uint32_t>(scopes.back().entryTotals[*sem]);
    if (auto steps = wait.getSteps(); steps && steps->size() > loops.size())
      return op->emitOpError() << "has " << steps->size() << " steps inside "
                               << loops.size() << " loops";
    if (auto carried = wait.getCarried(); carried && *carried > loops.size())
      return op->emitOpError() << "is carried over " << *carried
                               << " loops inside " << loops.size();
    pendingWaits[ei].push_back(w);
    return success();
  }
  case rt::Opcode::SemSignal: {
    // The completion signal of the engine's last instruction, if it can be.
    FailureOr<int> sem = machineSem(op, cast<SemSignalOp>(op).getSem());
    if (failed(sem))
      return failure();
    if (foldable[ei] >= 0 && pendingWaits[ei].empty() &&
        stream(e)[foldable[ei]].signalSem < 0) {
      rt::Instruction &last = stream(e)[foldable[ei]];
      last.signalSem = static_cast<int32_t>(*sem);
      last.signalCount = inst->signalCount;
      addSignal(ei, static_cast<size_t>(foldable[ei]));
      foldable[ei] = -1;
      return success();
    }
    flushWaits(e);
    flushBarrier(e);
    push(e, rt::isa::semSignal(static_cast<uint16_t>(*sem), inst->signalCount));
    foldable[ei] = -1;
    return success();
  }
  default:
    emitInstruction(e, std::move(*inst));
    return success();
  }
}

LogicalResult ProgramEmitter::emitBlock(Block &block) {
  for (Operation &op : block)
    if (failed(emitOp(&op)))
      return failure();
  return success();
}

/// Binds the HBM scratch allocs of `body` (those of nested inlined calls are
/// bound when their call is emitted).
LogicalResult ProgramEmitter::bindScratch(Block &body) {
  int scratchIndex = 0;
  LogicalResult result = success();
  forEachOwnOp(body, [&](Operation *op) {
    auto alloc = dyn_cast<AllocOp>(op);
    if (!alloc || failed(result))
      return;
    TileType type = alloc.getType();
    if (type.getSpace() != MemSpace::Hbm)
      return;
    if (alloc->getParentOfType<LoopOp>()) {
      result =
          alloc.emitOpError("HBM scratch inside an ncore.loop cannot be bound");
      return;
    }
    std::optional<rt::DType> dtype = toRtType(type.getElementType());
    std::string name = alloc.getName()
                           ? alloc.getName()->str()
                           : "scratch" + std::to_string(scratchIndex);
    ++scratchIndex;
    bindingOf[alloc.getResult()] = {
        addBinding(name,
                   std::vector<int64_t>(type.getShape().begin(),
                                        type.getShape().end()),
                   *dtype, rt::BindingRole::Scratch),
        0};
  });
  return result;
}

FailureOr<rt::Program> ProgramEmitter::run() {
  if (program.isDeclaration())
    return program.emitOpError() << "@" << program.getSymName()
                                 << " is only a declaration: nothing to emit",
           failure();
  foldable.fill(-1);
  barrierSem.fill(-1);
  // Semaphores the program names itself come first. The instructions per
  // engine (plus a quarter for loop markers and waits) size the streams, so
  // a large program is not moved on every growth of a stream.
  std::array<size_t, rt::kNumEngines> perEngine{};
  forEachOwnOp(program.getBody().front(), [&](Operation *op) {
    if (auto w = dyn_cast<SemWaitOp>(op))
      nextSem = std::max<int>(nextSem, w.getSem() + 1);
    if (auto s = dyn_cast<SemSignalOp>(op))
      nextSem = std::max<int>(nextSem, s.getSem() + 1);
    if (auto inst = dyn_cast<InstructionOpInterface>(op)) {
      ++perEngine[streamIndex(
          InstructionTranslation::convert(inst.getExecutionEngine()))];
      if (!isa<SemWaitOp, SemSignalOp>(op))
        aheadOps.push_back(op);
    }
  });
  for (unsigned e = 0; e < rt::kNumEngines; ++e) {
    prog.streams[e].reserve(perEngine[e] + perEngine[e] / 4);
    runs[e].reserve(perEngine[e] + perEngine[e] / 4);
  }
  static const llvm::StringMap<rt::BindingRole> roles = {
      {"input", rt::BindingRole::Input},
      {"output", rt::BindingRole::Output},
      {"param", rt::BindingRole::Param},
      {"constant", rt::BindingRole::Constant},
      {"scratch", rt::BindingRole::Scratch}};
  for (BlockArgument arg : program.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = dyn_cast<TileType>(arg.getType());
    if (!type || type.getSpace() != MemSpace::Hbm)
      return program.emitOpError() << "argument " << i << " is not an HBM tile",
             failure();
    auto role = roles.find(program.getArgRole(i));
    if (role == roles.end())
      return program.emitOpError() << "argument " << i << " has unknown role '"
                                   << program.getArgRole(i) << "'",
             failure();
    std::optional<rt::DType> dtype = toRtType(type.getElementType());
    if (!dtype)
      return program.emitOpError()
                 << "argument " << i << " dtype is not f32/bf16",
             failure();
    uint32_t b = addBinding(
        bindingName(program, i),
        std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
        *dtype, role->second);
    bindingOf[arg] = {b, 0};
    if (role->second == rt::BindingRole::Constant ||
        role->second == rt::BindingRole::Param) {
      std::vector<float> values;
      if (options.constantValues)
        values = options.constantValues(program, i);
      else if (auto spec = program.getArgAttrOfType<DictionaryAttr>(
                   i, ::mlir::seam::kConstantAttrName))
        values = ::mlir::seam::constantValues(spec);
      if (!values.empty()) {
        if (values.size() != prog.bindings[b].numElements())
          return program.emitOpError()
                     << "constant argument " << i << " has " << values.size()
                     << " values for " << prog.bindings[b].numElements()
                     << " elements",
                 failure();
        rt::Constant c;
        c.binding = b;
        c.kind = rt::ConstantKind::Raw;
        size_t bytes = rt::byteSize(*dtype);
        c.bytes.resize(values.size() * bytes);
        for (size_t k = 0; k < values.size(); ++k) {
          if (*dtype == rt::DType::F32) {
            std::memcpy(&c.bytes[k * 4], &values[k], 4);
          } else {
            uint16_t h = ::seam::rt::floatToBf16Bits(values[k]);
            std::memcpy(&c.bytes[k * 2], &h, 2);
          }
        }
        prog.constants.push_back(std::move(c));
      }
    }
  }
  if (failed(bindScratch(program.getBody().front())))
    return failure();
  translateAhead();
  if (failed(emitBlock(program.getBody().front())))
    return failure();
  // Waits owed to a final barrier are dropped: nothing follows them.
  for (auto &w : pendingBarrier)
    w.clear();
  flushAllWaits();
  return std::move(prog);
}

FailureOr<rt::Program> mlir::ncore::emitProgram(ProgramOp program,
                                                rt::Target target,
                                                const EmitOptions &options) {
  ProgramEmitter emitter(program, target, options);
  return emitter.run();
}
