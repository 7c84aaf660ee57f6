//===- NcoreSchedule.cpp - engines and semaphores -------------------------===//
//
// Counting semaphores, one per producing engine (id = engine code). Every
// instruction some other engine waits for signals its engine's semaphore on
// completion, so the semaphore's value after instance v of producer P is
//
//   count(P, v) = base(P) + sum_d v_d * perIter(L_d)
//
// where L_d are P's loops, perIter(L) the signals of that engine in one
// iteration of L, and base(P) the signals up to P when every loop is in its
// first iteration. A consumer C waits for the latest conflicting instance of
// each producer engine: for the loops C and P share, that is the same
// iteration (P earlier in the body) or the previous one (P later in the body:
// loop-carried), and P's own inner loops are complete. That is an affine
// function of C's iterations, which is exactly a wait with per-level steps.
// A loop-carried wait is marked `carried n` (n = the loops C and P share):
// it holds in the first iteration of those loops, where no earlier instance
// of P exists and its affine value would otherwise name all of P's engine's
// work before the loops (in flux2-klein, the norm before an attention held
// up matmuls that only had to wait for their own previous iteration). It
// stays apart from, and does not stand in for, a wait that must hold there.
// Its value at iteration 0 may be a negative count; each semaphore is
// pre-signalled at program start by the largest such deficit (added to
// every wait on it) so that every value is non-negative.
//
// Waits assume an engine's semaphore counts its work in issue order.
// Compute engines complete in order; DMA transfers spread over queues and
// may complete out of order, so a DMA stream's semaphore counts transfers
// as they retire in issue order: a transfer's signal fires once it and
// every transfer its stream issued before it have completed (the runtime's
// timing model, runtime/TimingSimulator.cpp). A count reached by later
// small transfers while an earlier large one is in flight would otherwise
// let its reader start before its bytes arrive. DMAs are triggered from two
// in-order queues, the DMA engine's (loads) and the Sync engine's (stores; the
// hardware's Sync and Scalar sequencers both trigger DMAs, nki.isa.dma_copy
// "hwdge"), and are ordered by semaphores even within one queue.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreAccess.h"
#include "dialect/ncore/NcoreTranslate.h"
#include "lowering/transforms/NcorePasses.h"
#include "lowering/transforms/ParallelChunks.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"
#include "runtime/Timing.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <atomic>

namespace mlir::ncore {
#define GEN_PASS_DEF_NCORESCHEDULE
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;
namespace rt = ::seam::rt;

namespace {

constexpr unsigned kEngines = 7;

/// One operand's footprint, over all loop iterations: in its HBM tensor, or
/// (once ncore-allocate placed it) at its bytes of SBUF/PSUM, so that tiles
/// the allocator let share bytes are ordered too.
struct Footprint {
  const void *root = nullptr;
  bool write = false;
  int64_t pLo = 0, pHi = 1; ///< Partitions (on chip).
  int64_t lo = 0, hi = 0;   ///< Bytes [lo, hi).
  /// Bytes of one iteration's window (no loop spans).
  int64_t extent = 0;
  bool onChip = false;
  /// The buffer itself (its alloc or program argument), also when placed.
  const void *tile = nullptr;
  SmallVector<std::pair<LoopOp, int64_t>, 2> steps; ///< Bytes.
  /// The window's own dims as (stride, count) in bytes, HBM rows included:
  /// with `steps`, the lattice of every byte the access starts at.
  SmallVector<std::pair<int64_t, int64_t>, 4> lattice;
  int64_t elementBytes = 1;
};

struct Inst {
  Operation *op = nullptr;
  unsigned engine = 0;
  unsigned epoch = 0; ///< Kernel calls before it.
  SmallVector<LoopOp, 4> loops;
  /// On the heap, sized as filled (on the context's threads): inline, four
  /// footprints made an Inst ~930 bytes, and building the vector of them
  /// alone (one thread's first touch of ~22 MB) took ~18 ms of the
  /// flux2-klein schedule.
  std::vector<Footprint> footprints;
  bool signals = false;
  int64_t base = 0; ///< count of its engine's semaphore after it, iteration 0.
};

/// A dependency of a consumer on a producer instance.
struct Edge {
  unsigned producer;
  unsigned shared; ///< Loops shared with the consumer.
  bool carried;    ///< Previous iteration of the innermost shared loop.
  /// Iteration i of the consumer's outermost loop needs only iterations
  /// <= i of the producer's (see alignedLoops): wait for iteration i.
  bool aligned = false;
};

/// Whether an engine's stream issues DMA transfers, which complete out of
/// issue order (spread over the queues): its instructions are ordered by
/// semaphores like those of different engines.
bool dmaStream(unsigned engine) {
  return engine == static_cast<unsigned>(Engine::Dma) ||
         engine == static_cast<unsigned>(Engine::Sync);
}

/// The root of placed on-chip footprints: the memory itself, so that tiles
/// the allocator let share bytes meet.
const void *memoryRoot(MemSpace space) {
  // A sentinel key, never dereferenced: small integers cannot collide with
  // the addresses of real tiles.
  // NOLINTNEXTLINE(performance-no-int-to-ptr): see above.
  return reinterpret_cast<const void *>(
      static_cast<uintptr_t>(1 + static_cast<unsigned>(space)));
}

FailureOr<Footprint> footprint(Value tile, bool write) {
  FailureOr<TileAccess> a = resolveAccess(tile);
  if (failed(a))
    return failure();
  auto rootType = cast<TileType>(a->root.getType());
  int64_t eb = rootType.getElementBytes();
  Footprint f;
  f.root = a->root.getAsOpaquePointer();
  f.write = write;
  f.onChip = rootType.isOnChip();
  f.tile = f.root;
  int64_t base = 0;
  if (auto alloc = a->root.getDefiningOp<AllocOp>())
    if (rootType.isOnChip() && alloc.getOffset()) {
      // Placed: the memory itself is the buffer.
      f.root = memoryRoot(a->space);
      base = static_cast<int64_t>(*alloc.getOffset());
    }
  int64_t lo = a->offset, hi = a->offset;
  if (a->space == MemSpace::Hbm) {
    int64_t span = (a->partitions - 1) * a->rowStride;
    lo += std::min<int64_t>(0, span);
    hi += std::max<int64_t>(0, span);
  } else {
    f.pLo = a->startPartition;
    f.pHi = a->startPartition + a->partitions;
  }
  for (const FreeDimAccess &d : a->dims) {
    int64_t span = (d.size - 1) * d.stride;
    lo += std::min<int64_t>(0, span);
    hi += std::max<int64_t>(0, span);
  }
  f.extent = (hi + 1 - lo) * eb;
  f.elementBytes = eb;
  if (a->space == MemSpace::Hbm && a->partitions > 1)
    f.lattice.push_back({a->rowStride * eb, a->partitions});
  for (const FreeDimAccess &d : a->dims)
    if (d.size > 1)
      f.lattice.push_back({d.stride * eb, d.size});
  for (auto &[loop, step] : a->loopSteps) {
    f.steps.push_back({loop, step * eb});
    int64_t span = (loop.getTrips() - 1) * step;
    lo += std::min<int64_t>(0, span);
    hi += std::max<int64_t>(0, span);
  }
  f.lo = base + lo * eb;
  f.hi = base + (hi + 1) * eb;
  return f;
}

/// The footprints of `op`'s tile operands in operand order, each a write
/// when the op's memory effects say it writes that operand.
LogicalResult operandFootprints(Operation *op, std::vector<Footprint> &out) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  out.reserve(out.size() + op->getNumOperands());
  for (Value v : op->getOperands()) {
    if (!isa<TileType>(v.getType()))
      continue;
    bool write = false;
    if (effects) {
      SmallVector<MemoryEffects::EffectInstance> fx;
      effects.getEffectsOnValue(v, fx);
      for (auto &e : fx)
        write |= isa<MemoryEffects::Write>(e.getEffect());
    }
    FailureOr<Footprint> f = footprint(v, write);
    if (failed(f))
      return failure();
    out.push_back(*f);
  }
  return success();
}

/// Whether an instruction inside `loops` touches different bytes in every
/// iteration (so that it never conflicts with its own earlier iterations).
/// Sufficient test: every loop moves the access, and the map from (window
/// element, iteration) to byte is one-to-one, which holds when the strides,
/// sorted by size, each reach past everything the smaller ones span (a
/// mixed-radix numbering: tiles side by side, rows of a tile interleaved
/// with the next tile's columns and so on).
/// Whether (stride, count) digits number the bytes from 0 one-to-one: the
/// strides, sorted by size, each reach past everything the smaller ones
/// span (starting from one element).
bool mixedRadix(SmallVectorImpl<std::pair<int64_t, int64_t>> &strides,
                int64_t elementBytes) {
  llvm::sort(strides);
  int64_t span = elementBytes; // bytes covered by the smaller strides
  for (auto [stride, count] : strides) {
    if (stride < span)
      return false;
    span = stride * (count - 1) + span;
  }
  return true;
}

bool disjointAcrossIterations(const Footprint &f, ArrayRef<LoopOp> loops) {
  if (loops.empty())
    return false;
  SmallVector<std::pair<int64_t, int64_t>, 8> strides;
  for (auto [stride, count] : f.lattice)
    strides.push_back({std::abs(stride), count});
  for (LoopOp l : loops) {
    int64_t step = 0;
    for (auto &[sl, st] : f.steps)
      if (sl == l)
        step += st;
    if (step == 0)
      return false;
    if (l.getTrips() > 1)
      strides.push_back({std::abs(step), l.getTrips()});
  }
  return mixedRadix(strides, f.elementBytes);
}

/// Whether two accesses touch the same bytes in every iteration.
bool sameWindows(const Footprint &a, const Footprint &b) {
  return a.root == b.root && a.pLo == b.pLo && a.pHi == b.pHi && a.lo == b.lo &&
         a.hi == b.hi && a.extent == b.extent && a.lattice == b.lattice &&
         a.steps == b.steps;
}

/// Whether two accesses of the same shape that move with the same loops by
/// the same steps, `delta` bytes apart, never touch a common byte in any
/// pair of iterations: the mixed-radix test of disjointAcrossIterations on
/// their windows, their loop steps and the offset between them (a digit of
/// two values). Loops neither moves are left out: each iteration of them
/// repeats the same bytes for both. The copies of one transfer a dmaLoop
/// issues per iteration (channel c and c + R, each walking its own range)
/// are disjoint this way, where the hulls over the loops overlap.
bool disjointShifted(const Footprint &a, const Footprint &b) {
  if (a.lattice != b.lattice || a.steps != b.steps ||
      a.elementBytes != b.elementBytes || a.extent != b.extent)
    return false;
  int64_t delta = std::abs(a.lo - b.lo);
  if (delta == 0)
    return false;
  SmallVector<std::pair<int64_t, int64_t>, 8> strides;
  for (auto [stride, count] : a.lattice)
    strides.push_back({std::abs(stride), count});
  llvm::SmallDenseMap<Operation *, int64_t, 4> perLoop;
  for (const auto &ls : a.steps)
    perLoop[const_cast<LoopOp &>(ls.first).getOperation()] += ls.second;
  for (auto &[op, step] : perLoop) {
    int64_t trips = cast<LoopOp>(op).getTrips();
    if (step != 0 && trips > 1)
      strides.push_back({std::abs(step), trips});
  }
  strides.push_back({delta, 2});
  return mixedRadix(strides, a.elementBytes);
}

/// Makes `f` stand for every byte of [lo, hi) on its partitions: a hull
/// (the bytes of all of a tile's accesses, a kernel body's whole range)
/// rather than one window. disjointShifted reads a footprint's shape from
/// its lattice, extent and steps; a hull that kept those of the access it
/// was built from would look like that one window at its low end, apart
/// from every access of the same shape at another offset inside it.
void makeDense(Footprint &f) {
  f.elementBytes = 1;
  f.extent = f.hi - f.lo;
  f.steps.clear();
  f.lattice.clear();
  if (f.extent > 1)
    f.lattice.push_back({1, f.extent});
}

bool conflicts(const Footprint &a, const Footprint &b) {
  return a.root == b.root && (a.write || b.write) && a.pLo < b.pHi &&
         b.pLo < a.pHi && a.lo < b.hi && b.lo < a.hi && !disjointShifted(a, b);
}

/// Whether consumer C's access `fc` never meets the instances of producer
/// P's access `fp` that it would wait for, when both are in the same loop
/// nest and move only with its outermost loop, by the same step s. Those
/// instances are P in C's iteration (P earlier in the body) and in the
/// iterations before it (Delta = i_C - i_P >= 0; >= 1 for P later in the
/// body, loop-carried): C's window shifted by s Delta against P's. The
/// hulls over the loop overlap when, say, tile t + 1 is fetched in
/// iteration t (software pipelining) while tile t is read, although the two
/// never touch the same bytes in the iterations that order them.
bool apartOverIterations(ArrayRef<LoopOp> loops, bool carried,
                         const Footprint &fc, const Footprint &fp) {
  if (loops.empty() || fc.steps.size() != 1 || fp.steps.size() != 1 ||
      fc.steps[0] != fp.steps[0] || fc.steps[0].first != loops.front())
    return false;
  int64_t s = fc.steps[0].second;
  int64_t trips = const_cast<LoopOp &>(loops.front()).getTrips();
  if (s == 0 || trips < 2)
    return false;
  auto start = [&](const Footprint &f) {
    return f.lo - std::min<int64_t>(0, (trips - 1) * s);
  };
  int64_t c0 = start(fc), c1 = c0 + fc.extent;
  int64_t p0 = start(fp), p1 = p0 + fp.extent;
  // Delta with [c0, c1) + s Delta meeting [p0, p1).
  int64_t lo, hi;
  if (s > 0) {
    lo = llvm::divideFloorSigned(p0 - c1, s) + 1;
    hi = llvm::divideCeilSigned(p1 - c0, s) - 1;
  } else {
    lo = llvm::divideFloorSigned(c0 - p1, -s) + 1;
    hi = llvm::divideCeilSigned(c1 - p0, -s) - 1;
  }
  lo = std::max<int64_t>(lo, carried ? 1 : 0);
  hi = std::min<int64_t>(hi, trips - 1);
  return lo > hi;
}

/// Two loops in sequence over the same tiles (an elementwise op after the
/// op that wrote its operand, row tile by row tile): the consumer C in loop
/// Lc and the producer P in loop Lp (their outermost loops, not shared, of
/// equal trips), where every conflicting access moves by the same step s > 0
/// per iteration and moves with nothing else. Then C's iteration i touches
/// none of the bytes of P's iterations j > i when C's first window ends
/// before P's second one starts (cLo + cExtent <= pLo + s), so C can wait
/// for iteration i of P instead of the whole loop, and the two loops run as
/// a pipeline.
bool alignedLoops(ArrayRef<Footprint> cs, ArrayRef<Footprint> ps, LoopOp lc,
                  LoopOp lp) {
  if (lc == lp || lc.getTrips() != lp.getTrips())
    return false;
  bool any = false;
  for (const Footprint &fc : cs)
    for (const Footprint &fp : ps) {
      if (!conflicts(fc, fp))
        continue;
      any = true;
      if (fc.steps.size() != 1 || fp.steps.size() != 1 ||
          fc.steps[0].first != lc || fp.steps[0].first != lp)
        return false;
      int64_t step = fc.steps[0].second;
      if (step <= 0 || fp.steps[0].second != step ||
          fc.lo + fc.extent > fp.lo + step)
        return false;
    }
  return any;
}

/// A kernel call with the dependency boundary, as ncore-schedule sees it:
/// where it stands among the instructions, what it touches (as a whole, and
/// instruction by instruction of its body, in the caller's memory), and
/// what it waits for.
struct BoundaryCall {
  CallKernelOp call;
  size_t position = 0; ///< Instructions before it in program order.
  unsigned epoch = 0;  ///< Barrier calls before it.
  /// Its operands (read, or written for the callee's outputs), and its
  /// body's SBUF and PSUM bytes on every partition (written).
  SmallVector<Footprint, 4> footprints;
  /// A body instruction that touches memory the caller can see: its
  /// ordinal among the body's instructions (pre-order) and its accesses,
  /// moved into the caller's memory (an argument to the call's operand, an
  /// on-chip byte by the call's base). `entry` leaves out its on-chip
  /// reads: the body reads on chip only bytes it wrote itself (the caller's
  /// tiles there were dead before the call), so only its writes meet the
  /// caller's accesses before the call; after it, reads count too (a
  /// caller write there must wait for the body's last read).
  struct BodyInst {
    unsigned ordinal;
    unsigned engine;
    SmallVector<Footprint, 2> footprints, entry;
  };
  std::vector<BodyInst> body;
  uint8_t engines = 0; ///< Its body's engines (a bit each).
  /// Decided: (ordinal, caller engines) for the body instructions that wait
  /// for the last instruction of those engines before the call.
  SmallVector<std::pair<unsigned, uint8_t>, 8> entry;
};

/// The footprint `f` of a callee access, in the caller's memory: an access
/// of callee argument i is one of the call's operand i, an on-chip byte
/// moves by the call's base; nullopt for the callee's own HBM scratch.
std::optional<Footprint> inCaller(Footprint f, ProgramOp callee,
                                  CallKernelOp call,
                                  ArrayRef<Footprint> operands) {
  if (f.onChip) {
    bool sbuf = f.root == memoryRoot(MemSpace::Sbuf);
    auto base =
        call->getAttrOfType<IntegerAttr>(sbuf ? kSbufBaseAttr : kPsumBaseAttr);
    int64_t shift = base ? base.getInt() : 0;
    f.lo += shift;
    f.hi += shift;
    return f;
  }
  for (auto [i, arg] : llvm::enumerate(callee.getBody().getArguments())) {
    if (f.root != arg.getAsOpaquePointer() || i >= operands.size())
      continue;
    // The operand is a contiguous window: the argument's byte b is the
    // window's byte lo + b.
    f.root = operands[i].root;
    f.tile = operands[i].tile;
    f.lo += operands[i].lo;
    f.hi += operands[i].lo;
    return f;
  }
  return std::nullopt;
}

FailureOr<BoundaryCall> boundaryCall(CallKernelOp call, size_t position,
                                     unsigned epoch) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<ProgramOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isDeclaration())
    return call.emitOpError()
           << "ncore-schedule: the dependency boundary needs the callee's "
              "body (its engines and on-chip bytes)";
  BoundaryCall bc;
  bc.call = call;
  bc.position = position;
  bc.epoch = epoch;
  for (auto [i, v] : llvm::enumerate(call.getOperands())) {
    bool write =
        i < callee.getNumArguments() && callee.getArgRole(i) == "output";
    FailureOr<Footprint> f = footprint(v, write);
    if (failed(f))
      return failure();
    bc.footprints.push_back(*f);
  }
  for (auto [space, baseName, extentName] :
       {std::make_tuple(MemSpace::Sbuf, kSbufBaseAttr, kSbufExtentAttr),
        std::make_tuple(MemSpace::Psum, kPsumBaseAttr, kPsumExtentAttr)}) {
    auto extent = callee->getAttrOfType<IntegerAttr>(extentName);
    if (!extent || extent.getInt() <= 0)
      continue;
    auto base = call->getAttrOfType<IntegerAttr>(baseName);
    Footprint f;
    f.root = f.tile = memoryRoot(space);
    f.write = true;
    f.onChip = true;
    f.pLo = 0;
    f.pHi = kNumPartitions;
    f.lo = base ? base.getInt() : 0;
    f.hi = f.lo + extent.getInt();
    makeDense(f);
    bc.footprints.push_back(f);
  }
  // The first footprints are the operands', one each.
  ArrayRef<Footprint> operands =
      ArrayRef<Footprint>(bc.footprints).take_front(call.getNumOperands());
  unsigned ordinal = 0;
  bool bad = false;
  callee.walk<WalkOrder::PreOrder>([&](InstructionOpInterface inst) {
    unsigned engine = static_cast<unsigned>(inst.getExecutionEngine());
    bc.engines |= uint8_t(1u << engine);
    BoundaryCall::BodyInst bi{ordinal++, engine, {}, {}};
    std::vector<Footprint> own;
    if (failed(operandFootprints(inst, own))) {
      bad = true;
      return;
    }
    for (const Footprint &f : own) {
      std::optional<Footprint> c = inCaller(f, callee, call, operands);
      if (!c)
        continue;
      bi.footprints.push_back(*c);
      if (!c->onChip || c->write)
        bi.entry.push_back(*c);
    }
    if (!bi.footprints.empty())
      bc.body.push_back(std::move(bi));
  });
  if (bad)
    return failure();
  return bc;
}

/// Which engines, before a position, made an access that conflicts with a
/// footprint (conservatively: a superset), with the epoch the scan keeps to.
using EnginesBefore =
    llvm::function_ref<uint8_t(const Footprint &, size_t, unsigned)>;

/// The dependency boundary (ncore.call_kernel's ncore.boundary): decides,
/// for each such call,
///  - per body instruction, the caller engines whose last instruction
///    before the call it waits for: those with an access that conflicts with
///    it (each engine completes in order, so its last instruction covers the
///    access), or that ran an earlier dependency call it conflicts with;
///    once per body engine and caller engine (the body's engines run in
///    order too);
///  - per caller engine, the instructions after the call that wait for
///    body engines: the first one that conflicts with an engine's body
///    instructions waits for that engine's last one (`waitsFor[i]`: the
///    calls and body engines instruction i waits for).
/// A barrier call ends both scans: it drains every engine.
void planBoundaries(
    MutableArrayRef<BoundaryCall> calls, ArrayRef<Inst> insts,
    EnginesBefore enginesBefore,
    std::vector<SmallVector<std::pair<unsigned, uint8_t>, 1>> &waitsFor) {
  auto conflictsWith = [](ArrayRef<Footprint> a, ArrayRef<Footprint> b) {
    for (const Footprint &f : a)
      for (const Footprint &g : b)
        if (conflicts(f, g))
          return true;
    return false;
  };
  for (auto [k, bc] : llvm::enumerate(calls)) {
    // Earlier dependency calls of the epoch this one conflicts with.
    SmallVector<BoundaryCall *, 4> earlier;
    for (size_t j = 0; j < k; ++j)
      if (calls[j].epoch == bc.epoch &&
          conflictsWith(calls[j].footprints, bc.footprints))
        earlier.push_back(&calls[j]);
    std::array<uint8_t, kEngines> waited{};
    for (const BoundaryCall::BodyInst &bi : bc.body) {
      uint8_t need = 0;
      for (const Footprint &f : bi.entry)
        need |= enginesBefore(f, bc.position, bc.epoch);
      // An earlier call's reads count too (this body's writes after them).
      for (BoundaryCall *e : earlier)
        for (const BoundaryCall::BodyInst &ei : e->body)
          if (!(need & (1u << ei.engine)) &&
              conflictsWith(ei.footprints, bi.entry))
            need |= uint8_t(1u << ei.engine);
      need &= uint8_t(~waited[bi.engine]);
      if (!need)
        continue;
      waited[bi.engine] |= need;
      bc.entry.push_back({bi.ordinal, need});
    }
    std::array<uint8_t, kEngines> after{};
    for (size_t i = bc.position; i < insts.size() && insts[i].epoch == bc.epoch;
         ++i) {
      const Inst &inst = insts[i];
      if (after[inst.engine] == bc.engines)
        continue;
      // Caller reads of on-chip bytes read tiles written after the call,
      // by writes that waited (see the body's writes above).
      SmallVector<Footprint, 4> touched;
      for (const Footprint &f : inst.footprints)
        if (!f.onChip || f.write)
          touched.push_back(f);
      if (!conflictsWith(touched, bc.footprints))
        continue;
      uint8_t need = 0;
      for (const BoundaryCall::BodyInst &bi : bc.body)
        if (!(need & (1u << bi.engine)) &&
            conflictsWith(bi.footprints, touched))
          need |= uint8_t(1u << bi.engine);
      need &= uint8_t(~after[inst.engine]);
      if (!need)
        continue;
      after[inst.engine] |= need;
      waitsFor[i].push_back({unsigned(k), need});
    }
  }
}

/// (instruction, footprint): an entry of an access list.
using Entry = std::pair<unsigned, unsigned>;

/// On-chip access lists are kept per window of this many bytes of a
/// partition.
constexpr int64_t kBucketBytes = 4096;

/// The windows of kBucketBytes `f` touches (HBM: one list, window 0).
std::pair<int64_t, int64_t> bucketsOf(const Footprint &f) {
  if (!f.onChip || f.hi <= f.lo)
    return {0, 0};
  return {f.lo / kBucketBytes, (f.hi - 1) / kBucketBytes};
}

// The engines of each access list's first i entries (bit per engine): a
// scan back stops when no earlier entry is of an engine it still looks
// for, rather than walking every same-engine access back to the epoch's
// start (a weight tile read by hundreds of matmuls). A read conflicts
// only with writes, so its scan looks at the engines of the writes alone
// (a weight in HBM, never written, read by a hundred slab loads: each
// load's scan would otherwise walk every load before it).
static_assert(kEngines <= 7, "engine masks are 7 bits and a write bit");
uint8_t engineBit(unsigned engine) { return uint8_t(1u << engine); }
constexpr uint8_t kWriteBit = 0x80;
struct EngineMasks {
  std::vector<uint8_t> any, writes;
  /// Per entry, its engine's bit (| kWriteBit for a write) and its epoch:
  /// the scans read these, not the instruction, for the entries they pass.
  std::vector<uint8_t> bits;
  std::vector<unsigned> epochs;
  /// Per engine, the positions of its entries, ascending (bucket lists
  /// only: the scans of a placed tile's predecessors read them).
  std::array<std::vector<unsigned>, kEngines> byEngine;
};

/// The masks of `list` (entries of `insts`).
void fillMasks(const std::vector<Entry> &list, ArrayRef<Inst> insts,
               bool bucket, EngineMasks &m) {
  m.any.assign(list.size() + 1, 0);
  m.writes.assign(list.size() + 1, 0);
  m.bits.resize(list.size());
  m.epochs.resize(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const Inst &inst = insts[list[i].first];
    uint8_t bit = engineBit(inst.engine);
    bool write = inst.footprints[list[i].second].write;
    m.any[i + 1] = m.any[i] | bit;
    m.writes[i + 1] = m.writes[i] | (write ? bit : 0);
    m.bits[i] = bit | (write ? kWriteBit : 0);
    m.epochs[i] = inst.epoch;
    if (bucket)
      m.byEngine[inst.engine].push_back(unsigned(i));
  }
}

/// A consumer's wait: per consumer and producer engine, one per shared
/// depth.
struct Req {
  unsigned engine;
  unsigned shared;
  int64_t value;
  bool carried;
  /// Step per iteration of the consumer's outermost loop (aligned edges;
  /// 0 otherwise).
  int64_t alignStep = 0;
  /// The wait's step per consumer loop (filled once the set is final).
  SmallVector<int64_t, 4> steps;
};

/// A wait already made by an engine (requirements(): what it implies).
struct Done {
  unsigned producer;
  /// Outer loops in whose first iteration the wait holds (0: none).
  unsigned carried;
  int64_t value;
  ArrayRef<int64_t> steps; ///< The Req's (reqs outlive `done`).
  ArrayRef<LoopOp> loops;  ///< The consumer's.
};

/// What rewrite() inserted (the pass's statistics).
struct RewriteCounts {
  int64_t waits = 0, signals = 0, carried = 0, kernelWaits = 0;
};

/// ncore-schedule on one program, phase by phase (as MLIR's loop pipelining
/// separates its analysis from its rewrite): each method reads what the
/// earlier ones produced, named at each, and only rewrite() changes the IR.
class ProgramScheduler {
public:
  explicit ProgramScheduler(ProgramOp program)
      : program(program), ctx(program.getContext()) {}

  /// The instructions in program order (`listed`, with the barrier calls
  /// before each) and the dependency-boundary calls among them
  /// (`dependencyCalls`). False when the program synchronises itself
  /// (contains semaphore ops): it is then left alone.
  bool list();
  /// 1. From `listed`: `insts` with their loops and footprints, their
  /// access lists (`byBucket`, `byTile`) and the lists' engine masks
  /// (`enginesBefore`), `indexOf`. Fails on an operand it cannot resolve.
  LogicalResult footprints();
  /// From `dependencyCalls` and the access lists: `boundaries`, what each
  /// call's body waits for (BoundaryCall::entry) and which instructions
  /// after it wait for it (`waitsForCall`). Fails on a call whose callee
  /// it cannot read.
  LogicalResult kernelBoundaries();
  /// From the access lists: for each placed on-chip tile, the latest
  /// access of each engine to its bytes before it was live (`before`).
  void tilePredecessors();
  /// 2. From the access lists and `before`: for each consumer, the
  /// producers it must wait for (`edges`); marks those producers
  /// (Inst::signals).
  void dependencies();
  /// 3. From Inst::signals: each producer's count in the first iteration of
  /// every loop (Inst::base) and each loop's signals per iteration and
  /// engine (`perIter`).
  void counts();
  /// 4. From `edges` and the counts: each consumer's waits (`reqs`),
  /// without those an earlier wait of its engine implies, and the largest
  /// deficit of each semaphore (`deficit`).
  void requirements();
  /// 5. The IR: signals after producers, waits before consumers, kernel
  /// waits, the pre-signal of each semaphore with a deficit at the start,
  /// the boundary calls' ids and entry waits, and ncore.scheduled.
  RewriteCounts rewrite();

private:
  ProgramOp program;
  MLIRContext *ctx;

  struct Listed {
    InstructionOpInterface inst;
    unsigned epoch;
  };
  std::vector<Listed> listed;
  /// Dependency-boundary calls do not start an epoch: dependencies are
  /// tracked across them, and through them (planBoundaries). Each with its
  /// position in `listed` and its epoch.
  SmallVector<std::tuple<CallKernelOp, size_t, unsigned>> dependencyCalls;

  /// The instructions in program order. (Reserved: Inst holds SmallVectors,
  /// whose moves are not noexcept, so a growing vector would copy every
  /// Inst on each reallocation.)
  std::vector<Inst> insts;
  llvm::DenseMap<Operation *, unsigned> indexOf;
  /// Footprints (instruction, footprint) in program order, per root and, on
  /// chip, per window of kBucketBytes of a partition's bytes: placed SBUF
  /// and PSUM tiles share one root, and a consumer only needs to look at the
  /// accesses that can overlap its own bytes. (HBM footprints stay in one
  /// list per binding.)
  llvm::DenseMap<std::pair<const void *, int64_t>, std::vector<Entry>> byBucket;
  /// The same entries per buffer. A read of an on-chip tile only depends on
  /// writes to that tile: ncore-allocate never gives live tiles the same
  /// bytes, so a write to another tile that shares bytes with this one came
  /// before its live range, and the tile's own writes waited for it.
  llvm::DenseMap<const void *, std::vector<Entry>> byTile;
  /// Per access list (of byBucket and byTile).
  llvm::DenseMap<const std::vector<Entry> *, EngineMasks> enginesBefore;

  std::vector<BoundaryCall> boundaries;
  std::vector<SmallVector<std::pair<unsigned, uint8_t>, 1>> waitsForCall;
  /// Accesses to an on-chip tile depend on the tile's own accesses, and its
  /// writes also on what used its bytes before it was live (other tiles the
  /// allocator placed there earlier): per engine the latest such access,
  /// found once per tile by a scan back from the tile's first access. (An
  /// engine completes in order, so waiting for its latest access covers its
  /// earlier ones.) Per placed tile, latest first.
  llvm::DenseMap<const void *, SmallVector<unsigned, 4>> before;
  /// Per consumer.
  std::vector<std::vector<Edge>> edges;
  llvm::DenseMap<Operation *, std::array<int64_t, kEngines>> perIter;
  /// Per consumer.
  std::vector<SmallVector<Req, 2>> reqs;
  std::array<int64_t, kEngines> deficit{};
};

bool ProgramScheduler::list() {
  bool hasSems = false;
  unsigned epoch = 0;
  program.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto call = dyn_cast<CallKernelOp>(op)) {
      if (hasDependencyBoundary(call))
        dependencyCalls.push_back({call, listed.size(), epoch});
      else
        ++epoch;
    } else if (auto inst = dyn_cast<InstructionOpInterface>(op)) {
      listed.push_back({inst, epoch});
    }
    hasSems |= isa<SemWaitOp, SemSignalOp, KernelWaitOp>(op);
  });
  return !hasSems;
}

LogicalResult ProgramScheduler::footprints() {
  insts.reserve(listed.size());
  for (Listed &l : listed) {
    Inst &inst = insts.emplace_back();
    inst.op = l.inst;
    inst.engine = static_cast<unsigned>(l.inst.getExecutionEngine());
    inst.epoch = l.epoch;
  }
  // Each instruction's loops and footprints, on the context's threads.
  std::atomic<bool> badFootprint{false};
  parallelChunks(ctx, insts.size(), [&](size_t i) {
    Inst &inst = insts[i];
    Operation *op = inst.op;
    for (auto l = op->getParentOfType<LoopOp>(); l;
         l = l->getParentOfType<LoopOp>())
      inst.loops.insert(inst.loops.begin(), l);
    if (failed(operandFootprints(op, inst.footprints)))
      badFootprint = true;
  });
  if (badFootprint)
    return failure();
  for (auto [idx, inst] : llvm::enumerate(insts))
    for (auto [k, f] : llvm::enumerate(inst.footprints)) {
      Entry e{static_cast<unsigned>(idx), static_cast<unsigned>(k)};
      auto [b0, b1] = bucketsOf(f);
      for (int64_t bk = b0; bk <= b1; ++bk)
        byBucket[{f.root, bk}].push_back(e);
      if (f.onChip)
        byTile[f.tile].push_back(e);
    }

  for (auto [i, inst] : llvm::enumerate(insts))
    indexOf[inst.op] = i;
  // Every list's entry first (the map then stays put), filled on the
  // context's threads.
  enginesBefore.reserve(byBucket.size() + byTile.size());
  for (auto &kv : byBucket)
    enginesBefore[&kv.second];
  for (auto &kv : byTile)
    enginesBefore[&kv.second];
  std::vector<std::tuple<const std::vector<Entry> *, EngineMasks *, bool>>
      maskJobs;
  maskJobs.reserve(enginesBefore.size());
  for (auto &kv : byBucket)
    maskJobs.push_back({&kv.second, &enginesBefore.find(&kv.second)->second,
                        /*bucket=*/true});
  for (auto &kv : byTile)
    maskJobs.push_back({&kv.second, &enginesBefore.find(&kv.second)->second,
                        /*bucket=*/false});
  parallelChunks(ctx, maskJobs.size(), [&](size_t j) {
    auto [list, masks, bucket] = maskJobs[j];
    fillMasks(*list, insts, bucket, *masks);
  });
  return success();
}

LogicalResult ProgramScheduler::kernelBoundaries() {
  // Dependency-boundary calls: what their bodies wait for, and what waits
  // for them. The caller's engines with an access before `position` that
  // conflicts with `f`: found latest first in f's access lists (up to a
  // bound, past which every engine the rest of a list holds counts).
  waitsForCall.resize(insts.size());
  for (auto [call, position, epoch] : dependencyCalls) {
    FailureOr<BoundaryCall> bc = boundaryCall(call, position, epoch);
    if (failed(bc))
      return failure();
    boundaries.push_back(std::move(*bc));
  }
  auto callerEnginesBefore = [this](const Footprint &f, size_t position,
                                    unsigned epoch) -> uint8_t {
    constexpr unsigned kScanBound = 512;
    uint8_t found = 0;
    auto scan = [&](const std::vector<Entry> &list) {
      const EngineMasks &m = enginesBefore.find(&list)->second;
      size_t at = std::lower_bound(list.begin(), list.end(),
                                   Entry{unsigned(position), 0}) -
                  list.begin();
      for (unsigned seen = 0; at > 0; ++seen) {
        uint8_t possible = f.write ? m.any[at] : m.writes[at];
        if (!(possible & ~found))
          return;
        if (seen == kScanBound) {
          found |= possible;
          return;
        }
        --at;
        if (m.epochs[at] != epoch)
          return;
        const Entry &e = list[at];
        if (conflicts(f, insts[e.first].footprints[e.second]))
          found |= uint8_t(m.bits[at] & ~kWriteBit);
      }
    };
    auto [b0, b1] = bucketsOf(f);
    for (int64_t bk = b0; bk <= b1; ++bk)
      if (auto it = byBucket.find({f.root, bk}); it != byBucket.end())
        scan(it->second);
    return found;
  };
  planBoundaries(boundaries, insts, callerEnginesBefore, waitsForCall);
  return success();
}

void ProgramScheduler::tilePredecessors() {
  std::vector<std::pair<const void *, const std::vector<Entry> *>> placed;
  for (auto &[tile, list] : byTile) {
    const Footprint &f0 =
        insts[list.front().first].footprints[list.front().second];
    if (f0.root == tile)
      continue; // not placed: the tile is its own root, its list is complete
    before[tile];
    placed.push_back({tile, &list});
  }
  // On the context's threads: each tile writes its own entry of `before`.
  parallelChunks(ctx, placed.size(), [&](size_t t) {
    auto [tile, listOf] = placed[t];
    const std::vector<Entry> &list = *listOf;
    const Footprint &f0 =
        insts[list.front().first].footprints[list.front().second];
    Footprint region = f0;
    region.write = true;
    for (const Entry &e : list) {
      const Footprint &f = insts[e.first].footprints[e.second];
      region.pLo = std::min(region.pLo, f.pLo);
      region.pHi = std::max(region.pHi, f.pHi);
      region.lo = std::min(region.lo, f.lo);
      region.hi = std::max(region.hi, f.hi);
    }
    // Every byte of the hull: with the first access's shape it would look
    // apart from a same-shaped access at another offset (a spill store
    // reading the tile that had the bytes before).
    makeDense(region);
    unsigned first = list.front().first;
    unsigned epoch = insts[first].epoch;
    auto [b0, b1] = bucketsOf(region);
    // Per engine, the latest conflicting access of the epoch before `first`
    // over the region's buckets: each bucket's accesses of that engine,
    // latest first, up to the first that conflicts (or one no later than
    // the best found in another bucket). Found latest first, as one merged
    // scan of the buckets would find them.
    struct Bucket {
      const std::vector<Entry> *list;
      const EngineMasks *masks;
      unsigned end; ///< Its entries before `first`.
    };
    SmallVector<Bucket, 8> buckets;
    for (int64_t bk = b0; bk <= b1; ++bk) {
      auto it = byBucket.find({region.root, bk});
      if (it == byBucket.end())
        continue;
      const std::vector<Entry> &l = it->second;
      buckets.push_back(
          {&l, &enginesBefore.find(&l)->second,
           unsigned(std::lower_bound(l.begin(), l.end(), Entry{first, 0}) -
                    l.begin())});
    }
    SmallVector<Entry, kEngines> found;
    for (unsigned engine = 0; engine < kEngines; ++engine) {
      std::optional<Entry> best;
      for (const Bucket &b : buckets) {
        const std::vector<unsigned> &at = b.masks->byEngine[engine];
        // Positions in the bucket of this engine's accesses, before `first`.
        for (auto k = std::lower_bound(at.begin(), at.end(), b.end);
             k != at.begin();) {
          unsigned pos = *--k;
          Entry e = (*b.list)[pos];
          if (b.masks->epochs[pos] != epoch || (best && e <= *best))
            break;
          if (conflicts(region, insts[e.first].footprints[e.second])) {
            best = e;
            break;
          }
        }
      }
      if (best)
        found.push_back(*best);
    }
    llvm::sort(found, [](Entry a, Entry b) { return b < a; });
    SmallVector<unsigned, 4> &out = before.find(tile)->second;
    for (Entry e : found)
      out.push_back(e.first);
  });
}

void ProgramScheduler::dependencies() {
  // Candidates are scanned latest first. Before the consumer in program
  // order, the latest conflicting instruction of an engine dominates the
  // earlier ones of that engine, and an earlier write in the same loop body
  // that covers the whole footprint ends the scan: it already waited for
  // everything before it that touched those bytes. After the consumer
  // (previous iterations), only instructions of a loop around it count.
  llvm::DenseMap<Operation *, int64_t> loopEnd;
  for (auto [i, inst] : llvm::enumerate(insts))
    for (LoopOp l : inst.loops) {
      int64_t &end = loopEnd[l];
      end = std::max<int64_t>(end, i);
    }
  // On the context's threads: each consumer writes its own edges.
  edges.resize(insts.size());
  parallelChunks(ctx, insts.size(), [&](size_t c) {
    const Inst &consumer = insts[c];
    llvm::SmallDenseSet<unsigned, 8> producers;
    int64_t lastCarried =
        consumer.loops.empty() ? -1 : loopEnd.lookup(consumer.loops.front());
    for (const Footprint &fc : consumer.footprints) {
      // The bucket lists of fc, each with the index of its first entry
      // after the consumer: merged, they are the candidates in program
      // order (an entry in several buckets is seen once).
      SmallVector<std::vector<Entry> *, 8> lists;
      SmallVector<size_t, 8> splits;
      auto addList = [&](std::vector<Entry> &list) {
        lists.push_back(&list);
        splits.push_back(std::upper_bound(list.begin(), list.end(), c,
                                          [](unsigned v, const Entry &e) {
                                            return v < e.first;
                                          }) -
                         list.begin());
      };
      if (fc.onChip) {
        addList(byTile.find(fc.tile)->second);
        if (fc.write)
          for (unsigned p : before.lookup(fc.tile))
            if (insts[p].engine != consumer.engine ||
                dmaStream(consumer.engine))
              producers.insert(p);
      } else {
        auto [b0, b1] = bucketsOf(fc);
        for (int64_t bk = b0; bk <= b1; ++bk) {
          auto it = byBucket.find({fc.root, bk});
          if (it != byBucket.end())
            addList(it->second);
        }
      }
      auto consider = [&](unsigned p, unsigned k) {
        const Inst &producer = insts[p];
        if (producer.engine == consumer.engine && !dmaStream(consumer.engine))
          return false;
        const Footprint &fp = producer.footprints[k];
        if (!conflicts(fc, fp))
          return false;
        if (producer.loops == consumer.loops &&
            apartOverIterations(consumer.loops, p >= c, fc, fp))
          return false;
        // Only earlier iterations of P (P at or after C in the same loop
        // nest): the same window moving to new bytes in every iteration
        // never meets its earlier iterations (the same instruction, or a
        // store reading back the tile its load wrote).
        if (p >= c && producer.loops == consumer.loops && sameWindows(fc, fp) &&
            disjointAcrossIterations(fc, consumer.loops))
          return false;
        producers.insert(p);
        return true;
      };
      // Later instructions of the loops around C: previous iterations.
      {
        SmallVector<size_t, 8> at(splits);
        std::optional<Entry> last;
        while (true) {
          int best = -1;
          for (unsigned i = 0; i < lists.size(); ++i)
            if (at[i] < lists[i]->size() &&
                (best < 0 || (*lists[i])[at[i]] < (*lists[best])[at[best]]))
              best = int(i);
          if (best < 0)
            break;
          Entry e = (*lists[best])[at[best]++];
          if (static_cast<int64_t>(e.first) > lastCarried)
            break;
          if (last && *last == e)
            continue;
          last = e;
          consider(e.first, e.second);
        }
      }
      // Earlier instructions, latest first.
      SmallVector<size_t, 8> at(splits);
      std::optional<Entry> last;
      // Engines whose accesses can still add a producer: not found yet, and
      // not C's own unless it is DMA (the consider() rule).
      uint8_t want = uint8_t((1u << kEngines) - 1);
      if (!dmaStream(consumer.engine))
        want &= uint8_t(~engineBit(consumer.engine));
      SmallVector<const EngineMasks *, 8> masks;
      for (std::vector<Entry> *l : lists)
        masks.push_back(&enginesBefore.find(l)->second);
      while (true) {
        uint8_t remaining = 0;
        for (unsigned i = 0; i < lists.size(); ++i)
          remaining |=
              fc.write ? masks[i]->any[at[i]] : masks[i]->writes[at[i]];
        if (!(remaining & want))
          break;
        int best = -1;
        for (unsigned i = 0; i < lists.size(); ++i)
          if (at[i] > 0 && (best < 0 || (*lists[best])[at[best] - 1] <
                                            (*lists[i])[at[i] - 1]))
            best = int(i);
        if (best < 0)
          break;
        Entry e = (*lists[best])[--at[best]];
        if (last && *last == e)
          continue;
        last = e;
        if (masks[best]->epochs[at[best]] != consumer.epoch)
          break;
        // Two reads neither conflict nor end the scan (only a write does).
        if (!fc.write && !(masks[best]->bits[at[best]] & kWriteBit))
          continue;
        auto [p, k] = e;
        const Inst &producer = insts[p];
        const Footprint &fp = producer.footprints[k];
        if (p == c) {
          consider(p, k);
          continue;
        }
        if ((want & engineBit(producer.engine)) && consider(p, k))
          want &= uint8_t(~engineBit(producer.engine));
        if (fp.write && producer.loops == consumer.loops && fp.pLo <= fc.pLo &&
            fp.pHi >= fc.pHi && fp.lo <= fc.lo && fp.hi >= fc.hi &&
            !apartOverIterations(consumer.loops, false, fc, fp))
          break;
      }
    }
    for (unsigned p : producers) {
      const Inst &producer = insts[p];
      unsigned shared = 0;
      while (shared < producer.loops.size() && shared < consumer.loops.size() &&
             producer.loops[shared] == consumer.loops[shared])
        ++shared;
      bool carried = p >= c;
      if (carried && shared == 0)
        continue; // Runs only after C.
      bool aligned = !carried && shared == 0 && !consumer.loops.empty() &&
                     !producer.loops.empty() &&
                     alignedLoops(consumer.footprints, producer.footprints,
                                  consumer.loops[0], producer.loops[0]);
      edges[c].push_back({p, shared, carried, aligned});
    }
  });
  for (const std::vector<Edge> &es : edges)
    for (const Edge &e : es)
      insts[e.producer].signals = true;
}

void ProgramScheduler::counts() {
  // By a walk that keeps the signals of each engine with every loop in its
  // first iteration.
  std::array<int64_t, kEngines> cnt{};
  std::function<void(Block &)> count = [&](Block &block) {
    for (Operation &op : block) {
      if (auto loop = dyn_cast<LoopOp>(op)) {
        auto before = cnt;
        count(*loop.getBodyBlock());
        std::array<int64_t, kEngines> per{};
        for (unsigned e = 0; e < kEngines; ++e) {
          per[e] = cnt[e] - before[e];
          cnt[e] = before[e] + loop.getTrips() * per[e];
        }
        perIter[loop] = per;
        continue;
      }
      auto it = indexOf.find(&op);
      if (it == indexOf.end())
        continue;
      Inst &inst = insts[it->second];
      if (inst.signals)
        inst.base = ++cnt[inst.engine];
    }
  };
  count(program.getBody().front());
}

void ProgramScheduler::requirements() {
  // Read-only from here on (the lookups below run on several threads).
  auto per = [&](LoopOp loop, unsigned engine) {
    return perIter.find(loop)->second[engine];
  };
  // Each consumer's own requirements, on the context's threads: the
  // strongest per (engine, depth, kind), without the ones another covers.
  reqs.resize(insts.size());
  parallelChunks(ctx, insts.size(), [&](size_t c) {
    SmallVector<Req, 4> rs;
    for (const Edge &e : edges[c]) {
      const Inst &producer = insts[e.producer];
      int64_t v = producer.base;
      // P's loops below the shared ones are complete (an aligned edge: all
      // but its outermost, whose iteration follows the consumer's).
      for (unsigned d = e.shared + (e.aligned ? 1 : 0);
           d < producer.loops.size(); ++d) {
        LoopOp loop = producer.loops[d];
        v += (loop.getTrips() - 1) * per(loop, producer.engine);
      }
      if (e.carried)
        v -= per(producer.loops[e.shared - 1], producer.engine);
      int64_t alignStep =
          e.aligned ? per(producer.loops.front(), producer.engine) : int64_t(0);
      // A carried requirement holds in the first iteration of its loops
      // (sem_wait `carried`): it stays apart from one that must hold there.
      auto it = llvm::find_if(rs, [&](const Req &r) {
        return r.engine == producer.engine && r.shared == e.shared &&
               r.alignStep == alignStep && r.carried == e.carried;
      });
      if (it == rs.end())
        rs.push_back({producer.engine, e.shared, v, e.carried, alignStep, {}});
      else if (v > it->value)
        *it = {producer.engine, e.shared, v, e.carried, alignStep, {}};
    }
    // A requirement with more shared loops and a larger value covers one
    // with fewer (its steps are larger too); an aligned one, whose value
    // grows with the iteration, covers one that waits for at most its
    // first iteration's value, and is covered by one at or above its last.
    const Inst &consumer = insts[c];
    for (const Req &r : rs) {
      bool covered = llvm::any_of(rs, [&](const Req &o) {
        if (&o == &r || o.engine != r.engine)
          return false;
        if (r.alignStep || o.alignStep) {
          int64_t rLast = r.value;
          if (r.alignStep)
            rLast +=
                r.alignStep * (LoopOp(consumer.loops.front()).getTrips() - 1);
          // o's value (its first iteration's, when aligned) only grows.
          // Equal bounds could cover each other: the first one stays.
          return o.shared == 0 && r.shared == 0 &&
                 (o.value > rLast || (o.value == rLast && &o < &r));
        }
        // A carried one does not hold in the first iteration, so it covers
        // only carried ones (theirs is a first iteration too).
        return o.shared > r.shared && o.value >= r.value &&
               (!o.carried || r.carried);
      });
      if (covered)
        continue;
      Req &k = reqs[c].emplace_back(r);
      k.steps.assign(consumer.loops.size(), 0);
      for (unsigned d = 0; d < r.shared; ++d)
        k.steps[d] = per(consumer.loops[d], r.engine);
      if (r.alignStep)
        k.steps[0] = r.alignStep;
    }
  });
  // A wait an earlier instruction of the same engine already made (same
  // iteration of the loops they share) holds for this one too: in program
  // order, against the last 32 waits of the consumer's engine.
  std::array<std::vector<Done>, kEngines> done;
  for (unsigned c = 0; c < insts.size(); ++c) {
    const Inst &consumer = insts[c];
    auto &prior = done[consumer.engine];
    auto implied = [&](const Req &r) {
      // The last 32 entries of `prior`, newest first.
      for (size_t back = 1; back <= prior.size() && back <= 32; ++back) {
        const Done &q = prior[prior.size() - back];
        if (q.producer != r.engine || r.value > q.value ||
            q.loops.size() > consumer.loops.size() ||
            (q.carried && !(r.carried && r.shared <= q.carried)))
          continue;
        bool ok = true;
        for (unsigned d = 0; d < consumer.loops.size() && ok; ++d)
          ok = d < q.loops.size()
                   ? q.loops[d] == consumer.loops[d] && q.steps[d] == r.steps[d]
                   : r.steps[d] == 0;
        if (ok)
          return true;
      }
      return false;
    };
    SmallVector<Req, 2> &rs = reqs[c];
    // Each kept one joins `prior` at once: a later requirement of this
    // consumer may be implied by it.
    size_t keep = 0;
    for (size_t i = 0; i < rs.size(); ++i) {
      if (implied(rs[i]))
        continue;
      if (keep != i)
        rs[keep] = std::move(rs[i]);
      Req &r = rs[keep++];
      prior.push_back({r.engine, r.carried ? r.shared : 0u, r.value,
                       ArrayRef<int64_t>(r.steps),
                       ArrayRef<LoopOp>(consumer.loops)});
      deficit[r.engine] = std::max(deficit[r.engine], -r.value);
    }
    rs.truncate(keep);
  }
}

RewriteCounts ProgramScheduler::rewrite() {
  RewriteCounts n;
  OpBuilder b(ctx);
  // The attributes every semaphore op shares, uniqued once.
  std::array<IntegerAttr, kEngines> semAttr;
  std::array<EngineAttr, kEngines> engineAttr;
  for (unsigned e = 0; e < kEngines; ++e) {
    semAttr[e] = b.getI64IntegerAttr(e);
    engineAttr[e] = EngineAttr::get(ctx, Engine(e));
  }
  IntegerAttr one = b.getI64IntegerAttr(1);
  // The ops are created on the context's threads (detached: creating and
  // uniquing their attributes is most of the work) and put in place in
  // program order.
  std::vector<Operation *> signalOf(insts.size(), nullptr);
  std::vector<SmallVector<Operation *, 2>> waitsOf(insts.size());
  parallelChunks(ctx, insts.size(), [&](size_t c) {
    OpBuilder lb(ctx);
    const Inst &consumer = insts[c];
    if (consumer.signals)
      signalOf[c] = lb.create<SemSignalOp>(consumer.op->getLoc(),
                                           semAttr[consumer.engine], one,
                                           engineAttr[consumer.engine]);
    for (const Req &r : reqs[c]) {
      DenseI64ArrayAttr steps;
      if (!consumer.loops.empty())
        steps = lb.getDenseI64ArrayAttr(r.steps);
      // A carried wait names the producer in the previous iteration of
      // the shared loops: in their first iteration there is none.
      waitsOf[c].push_back(lb.create<SemWaitOp>(
          consumer.op->getLoc(), semAttr[r.engine],
          lb.getI64IntegerAttr(r.value + deficit[r.engine]), steps,
          r.carried ? lb.getI64IntegerAttr(r.shared) : IntegerAttr(),
          engineAttr[consumer.engine]));
    }
  });
  for (unsigned c = 0; c < insts.size(); ++c) {
    Operation *op = insts[c].op;
    auto &ops = op->getBlock()->getOperations();
    for (auto [k, bodyEngines] : waitsForCall[c]) {
      SmallVector<int64_t, kEngines> named;
      for (unsigned e = 0; e < kEngines; ++e)
        if (bodyEngines & (1u << e))
          named.push_back(e);
      b.setInsertionPoint(op);
      b.create<KernelWaitOp>(op->getLoc(), b.getI64IntegerAttr(k),
                             b.getDenseI64ArrayAttr(named),
                             engineAttr[insts[c].engine]);
      ++n.kernelWaits;
    }
    for (Operation *wait : waitsOf[c])
      ops.insert(Block::iterator(op), wait);
    if (Operation *signal = signalOf[c]) {
      ops.insertAfter(Block::iterator(op), signal);
      ++n.signals;
    }
    n.waits += waitsOf[c].size();
    for (const Req &r : reqs[c])
      n.carried += r.carried;
  }
  Block &entry = program.getBody().front();
  for (unsigned e = 0; e < kEngines; ++e) {
    if (deficit[e] <= 0)
      continue;
    b.setInsertionPointToStart(&entry);
    b.create<SemSignalOp>(program.getLoc(), b.getI64IntegerAttr(e),
                          b.getI64IntegerAttr(deficit[e]),
                          EngineAttr::get(ctx, Engine(e)));
  }
  for (auto [k, bc] : llvm::enumerate(boundaries)) {
    SmallVector<int64_t> entry;
    for (auto [ordinal, engines] : bc.entry) {
      entry.push_back(ordinal);
      entry.push_back(engines);
    }
    bc.call->setAttr(kCallIdAttrName, b.getI64IntegerAttr(int64_t(k)));
    bc.call->setAttr(kEntryWaitsAttrName, b.getDenseI64ArrayAttr(entry));
  }
  program->setAttr(kScheduledAttrName, UnitAttr::get(ctx));
  return n;
}

class NcoreSchedulePass
    : public mlir::ncore::impl::NcoreScheduleBase<NcoreSchedulePass> {
public:
  using NcoreScheduleBase::NcoreScheduleBase;
  void runOnOperation() override {
    getOperation()->walk([&](ProgramOp program) {
      if (failed(schedule(program)))
        signalPassFailure();
    });
  }

private:
  LogicalResult schedule(ProgramOp program);
  PassCounter numWaits{"ncore-schedule", "waits", "Semaphore waits inserted"};
  PassCounter numSignals{"ncore-schedule", "signals",
                         "Instructions made to signal a semaphore"};
  PassCounter numCarried{"ncore-schedule", "loop-carried-waits",
                         "Waits on the previous iteration of a loop"};
  PassCounter numKernelWaits{
      "ncore-schedule", "kernel-waits",
      "Instructions after a dependency-boundary kernel call that wait for it"};
};

} // namespace

LogicalResult NcoreSchedulePass::schedule(ProgramOp program) {
  if (program.isDeclaration() || program->hasAttr(kScheduledAttrName))
    return success();
  ProgramScheduler scheduler(program);
  // A program that synchronises itself is left alone.
  if (!scheduler.list()) {
    program->setAttr(kScheduledAttrName, UnitAttr::get(program.getContext()));
    return success();
  }
  if (failed(scheduler.footprints()) || failed(scheduler.kernelBoundaries()))
    return failure();
  scheduler.tilePredecessors();
  scheduler.dependencies();
  scheduler.counts();
  scheduler.requirements();
  RewriteCounts n = scheduler.rewrite();
  numWaits += n.waits;
  numSignals += n.signals;
  numCarried += n.carried;
  numKernelWaits += n.kernelWaits;
  return success();
}
