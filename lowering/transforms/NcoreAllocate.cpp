//===- NcoreAllocate.cpp - SBUF/PSUM placement by liveness ----------------===//
//
// Live ranges come from program order: a tile is live from its first use to
// its last, and a use inside an ncore.loop that does not define the tile
// keeps it live for the whole loop (the next iteration reads it again).
// Placement, per memory, goes in program order over the tiles live at the
// same time. SBUF: next fit. PSUM: of the lowest free offset from each bank
// on, the one whose bytes were released longest ago (reusing bytes a tile
// just freed makes the new tile's first write wait for the old one's last
// read). When next fit leaves a tile no hole although the peak fits, that
// tile is placed again ahead of the tiles live with it and next fit runs
// again (a few times); if that fails too, program order with first fit, then
// largest tile first. Capacities come from the runtime profile of the target.
//
//===----------------------------------------------------------------------===//
#include "lowering/transforms/NcorePasses.h"
#include "passes/Statistics.h"
#include "runtime/Profile.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::ncore {
#define GEN_PASS_DEF_NCOREALLOCATE
#include "lowering/transforms/NcorePasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
using mlir::seam::PassCounter;

namespace {

constexpr int64_t kAlignBytes = 64;

/// `v` rounded up to a multiple of `a` (both non-negative).
int64_t alignUp(int64_t v, int64_t a) {
  return static_cast<int64_t>(llvm::alignTo(v, a));
}

/// One tile to place: its live range [start, end] in program positions.
/// A kernel call is placed too: its callee's on-chip bytes (the callee was
/// allocated on its own from offset 0) must not overlap the caller's tiles
/// live across the call, so the call gets a base ncore-inline-calls adds to
/// every SBUF/PSUM alloc of the inlined callee.
struct Item {
  mutable AllocOp alloc;
  mutable CallKernelOp call;
  int64_t start = 0, end = 0;
  /// Where program-order placement takes it: its start, or earlier for a
  /// tile that found no room at its start (see `place`).
  int64_t order = 0;
  int64_t size = 0;
  int64_t offset = -1;
  bool fixed = false;
  /// PSUM of a callee: starts at a bank boundary and may span banks.
  bool wholeBanks = false;

  Operation *op() const {
    return call ? call.getOperation() : alloc.getOperation();
  }
  std::string describe() const {
    if (call)
      return "kernel call @" + call.getCallee().str() + " (" +
             std::to_string(size) + " bytes per partition)";
    return describeTile(alloc.getType());
  }
};

/// Pre-order positions of the ops of a program; a loop spans [its own
/// position, the last position inside it].
struct ProgramOrder {
  llvm::DenseMap<Operation *, int64_t> pos;
  llvm::DenseMap<Operation *, int64_t> last;

  explicit ProgramOrder(ProgramOp program) {
    int64_t n = 0;
    program.getBody().walk<WalkOrder::PreOrder>(
        [&](Operation *op) { pos[op] = n++; });
    program.getBody().walk<WalkOrder::PostOrder>([&](LoopOp loop) {
      int64_t m = pos[loop];
      loop.getBody().walk([&](Operation *op) { m = std::max(m, pos[op]); });
      last[loop] = m;
    });
  }
};

/// Users of `v` through views and reshapes.
void collectUses(Value v, SmallVectorImpl<Operation *> &uses) {
  for (Operation *user : v.getUsers()) {
    if (isa<ViewOp, ReshapeOp>(user)) {
      collectUses(user->getResult(0), uses);
      continue;
    }
    uses.push_back(user);
  }
}

/// The live range of `it` from its uses: a use inside an ncore.loop that
/// does not contain `def` keeps it live for the whole loop (the next
/// iteration reads it again).
void liveRange(Item &it, Operation *def, ArrayRef<Operation *> uses,
               const ProgramOrder &order, ProgramOp program) {
  it.start = std::numeric_limits<int64_t>::max();
  it.end = -1;
  for (Operation *use : uses) {
    int64_t s = order.pos.lookup(use), e = s;
    for (Operation *p = use->getParentOp(); p && p != program;
         p = p->getParentOp())
      if (auto loop = dyn_cast<LoopOp>(p))
        if (!def || !loop->isProperAncestor(def)) {
          s = order.pos.lookup(loop);
          e = order.last.lookup(loop);
        }
    it.start = std::min(it.start, s);
    it.end = std::max(it.end, e);
  }
  if (uses.empty() && def)
    it.start = it.end = order.pos.lookup(def);
}

class NcoreAllocatePass
    : public mlir::ncore::impl::NcoreAllocateBase<NcoreAllocatePass> {
public:
  using NcoreAllocateBase::NcoreAllocateBase;

  void runOnOperation() override {
    // Per run: a pass instance may run again on other IR, where these
    // pointers would name different (or freed) ops.
    done.clear();
    inProgress.clear();
    getOperation()->walk([&](ProgramOp program) {
      if (failed(allocateWithCallees(program)))
        signalPassFailure();
    });
  }

private:
  /// Callees first (a caller places each call by its callee's extent), each
  /// program once. A callee outside the pass's anchor must already have been
  /// allocated (compileNcoreProgram prepares callees before callers).
  LogicalResult allocateWithCallees(ProgramOp program);
  LogicalResult allocate(ProgramOp program);
  llvm::SmallPtrSet<Operation *, 8> done, inProgress;
  PassCounter sbufPeak{"ncore-allocate", "sbuf-peak-bytes",
                       "Most SBUF bytes per partition live at once (max over "
                       "programs)"};
  PassCounter psumPeak{"ncore-allocate", "psum-peak-bytes",
                       "Most PSUM bytes per partition live at once (max over "
                       "programs)"};
  PassCounter numPlaced{"ncore-allocate", "tiles-placed",
                        "SBUF/PSUM tiles given an offset"};
  PassCounter numSpills{"ncore-allocate", "spills",
                        "HBM spill buffers made by the converter "
                        "(allocs named spill*)"};
  PassCounter numRepacked{"ncore-allocate", "repacked",
                          "Memories placed largest-first because program-order "
                          "placement fragmented them"};
  PassCounter numRepaired{"ncore-allocate", "repaired",
                          "Tiles placed again ahead of the tiles live with "
                          "them because next fit left no hole their size"};
  PassCounter scratchBytes{"ncore-allocate", "hbm-scratch-bytes",
                           "Bytes of HBM scratch (spills included)"};

  LogicalResult place(MemSpace space, std::vector<Item> &items,
                      int64_t capacity, int64_t bank, int64_t &peak);
};

} // namespace

static void raiseTo(PassCounter &c, int64_t v) {
  if (v > c.get())
    c += v - c.get();
}

/// Whether the live ranges of `a` and `b` meet.
static bool overlaps(const Item &a, const Item &b) {
  return a.end >= b.start && a.start <= b.end;
}

/// Peak of the bytes live at once over `items`, and the first program
/// point where it is reached (`peakAt`).
static int64_t livePeak(ArrayRef<Item> items, int64_t &peakAt) {
  std::vector<std::pair<int64_t, int64_t>> events;
  for (const Item &it : items) {
    events.push_back({it.start, it.size});
    events.push_back({it.end + 1, -it.size});
  }
  llvm::sort(events, [](auto &a, auto &b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  int64_t peak = 0, live = 0;
  peakAt = 0;
  for (auto &[p, d] : events) {
    live += d;
    if (live > peak)
      peakAt = p;
    peak = std::max(peak, live);
  }
  return peak;
}

/// The over-subscription error of `it`, which found no room among `items`
/// in `memName` of `capacity` bytes per partition (live peak `peak`, first
/// reached at `peakAt`).
static LogicalResult reportOverSubscribed(const Item &it, ArrayRef<Item> items,
                                          StringRef memName, int64_t peak,
                                          int64_t peakAt, int64_t capacity) {
  int64_t liveHere = it.size, liveTiles = 0;
  for (const Item &o : items)
    if (&o != &it && overlaps(o, it)) {
      liveHere += o.size;
      ++liveTiles;
    }
  InFlightDiagnostic diag =
      it.op()->emitOpError()
      << memName << " over-subscribed: " << (it.call ? "" : "tile ")
      << it.describe()
      // A call's description already has its size.
      << (it.call ? ""
                  : " (" + std::to_string(it.size) + " bytes per partition)")
      << " does not fit next to " << liveTiles << " live tiles (" << liveHere
      << " bytes live here; peak " << peak << " of " << capacity
      << " bytes per partition): spill to HBM before allocation";
  // Where the peak is reached, when that is elsewhere: the last tile to
  // become live there, and the tiles live with it, largest first.
  if (peak > capacity && !(it.start <= peakAt && peakAt <= it.end)) {
    const Item *last = nullptr;
    SmallVector<const Item *> atPeak;
    for (const Item &o : items)
      if (o.start <= peakAt && peakAt <= o.end) {
        atPeak.push_back(&o);
        if (!last || o.start > last->start)
          last = &o;
      }
    llvm::sort(atPeak,
               [](const Item *a, const Item *b) { return a->size > b->size; });
    Diagnostic &note = diag.attachNote(last->op()->getLoc());
    note << "the peak of " << peak << " bytes per partition is reached here, "
         << atPeak.size() << " tiles live; the largest:";
    for (const Item *o : ArrayRef<const Item *>(atPeak).take_front(4))
      note << " " << o->size << " bytes (" << o->op()->getLoc() << ")";
  }
  return diag;
}

LogicalResult NcoreAllocatePass::place(MemSpace space, std::vector<Item> &items,
                                       int64_t capacity, int64_t bank,
                                       int64_t &peak) {
  StringRef memName = space == MemSpace::Sbuf ? "SBUF" : "PSUM";
  // Peak of live bytes, for statistics and for the over-subscription error
  // (which names where it is reached: often not where placement failed).
  int64_t peakAt = 0;
  peak = livePeak(items, peakAt);

  for (Item &it : items)
    if (it.size > capacity)
      return it.op()->emitOpError()
             << (it.call ? "" : "tile ") << it.describe() << " needs "
             << it.size << " bytes per partition, more than the " << capacity
             << " bytes per partition of " << memName;

  // Lowest offset at or after `cand` where `it` overlaps none of `busy`
  // (PSUM tiles may not straddle a bank); > capacity - size when none.
  auto search = [&](const Item &it, ArrayRef<const Item *> busy, int64_t cand) {
    while (true) {
      if (bank > 0 && it.wholeBanks)
        cand = alignUp(cand, bank);
      else if (bank > 0 && cand % bank + it.size > bank)
        cand = alignUp(cand + 1, bank);
      if (cand + it.size > capacity)
        return cand;
      const Item *hit = nullptr;
      for (const Item *o : busy)
        if (o->offset < cand + it.size && cand < o->offset + o->size)
          if (!hit || o->offset + o->size > hit->offset + hit->size)
            hit = o;
      if (!hit)
        return cand;
      cand = alignUp(hit->offset + hit->size, kAlignBytes);
    }
  };

  // Strategy 1, in program order. SBUF uses next fit: the search starts just
  // after the previous placement, wrapping to 0, so freed bytes are not
  // refilled at once (each reuse is a dependency the scheduler must honour,
  // which costs overlap). Returns the first tile that found no room.
  // PSUM (banked): least recently used (see below).
  bool leastRecent = bank > 0 && space == MemSpace::Psum;
  auto inProgramOrder = [&](bool nextFit) -> Item * {
    llvm::stable_sort(items, [](const Item &a, const Item &b) {
      if (a.order != b.order)
        return a.order < b.order;
      return a.start != b.start ? a.start < b.start : a.size > b.size;
    });
    std::vector<const Item *> placed;
    for (const Item &o : items)
      if (o.fixed)
        placed.push_back(&o);
    int64_t rover = 0;
    // PSUM: per 64-byte granule, the end of the last tile placed there.
    std::vector<int64_t> lastEnd;
    if (leastRecent)
      lastEnd.assign(size_t(capacity / kAlignBytes) + 1, -1);
    auto granules = [](int64_t offset, int64_t size) {
      return llvm::seq<int64_t>(offset / kAlignBytes,
                                (offset + size + kAlignBytes - 1) /
                                    kAlignBytes);
    };
    for (Item &it : items) {
      if (it.fixed)
        continue;
      // Every later tile starts at or after its order, which is at least
      // this one's: a placed tile that ended before it meets none of them
      // and leaves the list (which then holds about the tiles live here,
      // not every tile placed so far).
      SmallVector<const Item *> busy;
      llvm::erase_if(placed, [&](const Item *o) {
        if (o->end < it.order)
          return true;
        if (overlaps(*o, it))
          busy.push_back(o);
        return false;
      });
      int64_t cand = capacity;
      if (leastRecent) {
        // Of the lowest free offsets from each bank on, the one whose
        // bytes were released longest ago.
        int64_t bestEnd = 0;
        for (int64_t from = 0; from < capacity; from += bank) {
          int64_t c = search(it, busy, from);
          if (c + it.size > capacity)
            continue;
          int64_t end = -1;
          for (int64_t g : granules(c, it.size))
            end = std::max(end, lastEnd[size_t(g)]);
          if (cand + it.size > capacity || end < bestEnd) {
            cand = c;
            bestEnd = end;
          }
        }
      } else if (nextFit) {
        cand = search(it, busy, rover);
      }
      if (cand + it.size > capacity)
        cand = search(it, busy, 0);
      if (cand + it.size > capacity)
        return &it;
      it.offset = cand;
      rover = alignUp(cand + it.size, kAlignBytes);
      if (leastRecent)
        for (int64_t g : granules(cand, it.size))
          lastEnd[size_t(g)] = std::max(lastEnd[size_t(g)], it.end);
      placed.push_back(&it);
    }
    return nullptr;
  };
  // Strategy 2, when program order fragments memory: largest tiles first
  // (longer lives first among equals), each at the lowest offset free for
  // its whole live range. Placing big tiles before the small ones that
  // would split the address space packs close to the peak.
  auto largestFirst = [&]() -> Item * {
    std::vector<Item *> order;
    std::vector<const Item *> placed;
    for (Item &it : items) {
      if (it.fixed) {
        placed.push_back(&it);
        continue;
      }
      it.offset = -1;
      order.push_back(&it);
    }
    llvm::stable_sort(order, [](const Item *a, const Item *b) {
      if (a->size != b->size)
        return a->size > b->size;
      return a->end - a->start > b->end - b->start;
    });
    for (Item *it : order) {
      SmallVector<const Item *> busy;
      for (const Item *o : placed)
        if (overlaps(*o, *it))
          busy.push_back(o);
      int64_t cand = search(*it, busy, 0);
      if (cand + it->size > capacity)
        return it;
      it->offset = cand;
      placed.push_back(it);
    }
    return nullptr;
  };

  // Strategy 1 (next fit) for SBUF; program order with first fit (strategy
  // 1b: freed bytes are refilled at once, which packs tighter) and then
  // strategy 2 when it fragments.
  for (Item &it : items)
    it.order = it.start;
  Item *failedItem = inProgramOrder(space == MemSpace::Sbuf);
  // Strategy 1 repaired: a tile that found no room (small tiles placed
  // before it, scattered by next fit, left no hole its size) is placed
  // again before every tile live with it, and program order is tried
  // again, up to 32 times (each try is one pass over the tiles; full
  // flux2-klein with the qkv kernel needs 9, and the fallback below, a
  // first-fit repack, costs it 1.2 ms of false dependencies through reused
  // addresses). Only the tiles that failed move: the rest keep next fit's
  // spread.
  for (int attempt = 0; failedItem && space == MemSpace::Sbuf && attempt < 32;
       ++attempt) {
    int64_t earliest = failedItem->order;
    for (const Item &o : items)
      if (&o != failedItem && !o.fixed && overlaps(o, *failedItem))
        earliest = std::min(earliest, o.order);
    if (earliest == failedItem->order)
      break;
    failedItem->order = earliest;
    ++numRepaired;
    failedItem = inProgramOrder(true);
  }
  if (failedItem && space == MemSpace::Sbuf && !inProgramOrder(false)) {
    ++numRepacked;
    failedItem = nullptr;
  }
  if (failedItem && largestFirst() == nullptr) {
    ++numRepacked;
    failedItem = nullptr;
  }
  if (failedItem)
    return reportOverSubscribed(*failedItem, items, memName, peak, peakAt,
                                capacity);
  return success();
}

LogicalResult NcoreAllocatePass::allocateWithCallees(ProgramOp program) {
  if (program.isDeclaration() || done.contains(program))
    return success();
  if (!inProgress.insert(program).second)
    return program.emitOpError() << "calls itself (through kernel calls)";
  WalkResult r = program.walk([&](CallKernelOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<ProgramOp>(
        call, call.getCalleeAttr());
    if (callee && getOperation()->isAncestor(callee) &&
        failed(allocateWithCallees(callee)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  inProgress.erase(program);
  if (r.wasInterrupted() || failed(allocate(program)))
    return failure();
  done.insert(program);
  return success();
}

LogicalResult NcoreAllocatePass::allocate(ProgramOp program) {
  if (program.isDeclaration())
    return success();
  FailureOr<::seam::rt::Profile> targetProfile =
      getTargetProfile(program, target, "ncore-allocate");
  if (failed(targetProfile))
    return failure();
  const ::seam::rt::Profile &profile = *targetProfile;
  ProgramOrder order(program);

  std::vector<Item> sbuf, psum;
  int64_t scratch = 0;
  program.getBody().walk([&](AllocOp alloc) {
    TileType type = alloc.getType();
    if (type.getSpace() == MemSpace::Hbm) {
      if (alloc.getName() && alloc.getName()->starts_with("spill"))
        ++numSpills;
      int64_t bytes = type.getNumElements() * type.getElementBytes();
      scratchBytes += bytes;
      if (!alloc.getOffset()) {
        alloc.setOffset(scratch);
        scratch = alignUp(scratch + bytes, kAlignBytes);
      } else {
        scratch =
            std::max(scratch, alignUp(*alloc.getOffset() + bytes, kAlignBytes));
      }
      return;
    }
    Item it;
    it.alloc = alloc;
    it.size = type.getFreeBytes();
    SmallVector<Operation *> uses;
    collectUses(alloc.getResult(), uses);
    liveRange(it, alloc, uses, order, program);
    if (auto off = alloc.getOffset()) {
      it.fixed = true;
      it.offset = *off;
    }
    (type.getSpace() == MemSpace::Sbuf ? sbuf : psum).push_back(it);
  });
  // Kernel calls: the callee's SBUF and PSUM, live at the call.
  int64_t bank = static_cast<int64_t>(profile.psumBankBytes());
  bool calleesOk = true;
  program.getBody().walk([&](CallKernelOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<ProgramOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isDeclaration())
      return; // the emitter reports it
    auto sExt = callee->getAttrOfType<IntegerAttr>(kSbufExtentAttr);
    auto pExt = callee->getAttrOfType<IntegerAttr>(kPsumExtentAttr);
    if (!sExt || !pExt) {
      call.emitOpError() << "callee @" << callee.getSymName()
                         << " is not allocated yet: allocate callees before "
                            "their callers";
      calleesOk = false;
      return;
    }
    SmallVector<Operation *> self{call};
    for (auto [ext, items, space] :
         {std::make_tuple(sExt.getInt(), &sbuf, MemSpace::Sbuf),
          std::make_tuple(pExt.getInt(), &psum, MemSpace::Psum)}) {
      if (ext <= 0)
        continue;
      Item it;
      it.call = call;
      it.size = space == MemSpace::Psum ? alignUp(ext, bank) : ext;
      it.wholeBanks = space == MemSpace::Psum;
      liveRange(it, nullptr, self, order, program);
      StringRef attr = space == MemSpace::Sbuf ? kSbufBaseAttr : kPsumBaseAttr;
      if (auto base = call->getAttrOfType<IntegerAttr>(attr)) {
        it.fixed = true;
        it.offset = base.getInt();
      }
      items->push_back(it);
    }
  });
  if (!calleesOk)
    return failure();
  int64_t sPeak = 0, pPeak = 0;
  if (failed(place(MemSpace::Sbuf, sbuf,
                   static_cast<int64_t>(profile.sbufPartitionBytes), 0,
                   sPeak)) ||
      failed(place(MemSpace::Psum, psum,
                   static_cast<int64_t>(profile.psumPartitionBytes),
                   static_cast<int64_t>(profile.psumBankBytes()), pPeak)))
    return failure();
  Builder b(program.getContext());
  int64_t extent[2] = {0, 0};
  std::vector<Item> *memories[2] = {&sbuf, &psum};
  for (unsigned i = 0; i < 2; ++i) {
    for (Item &it : *memories[i]) {
      extent[i] = std::max(extent[i], it.offset + it.size);
      if (it.fixed)
        continue;
      if (it.call) {
        it.call->setAttr(i == 0 ? kSbufBaseAttr : kPsumBaseAttr,
                         b.getI64IntegerAttr(it.offset));
        continue;
      }
      it.alloc.setOffset(it.offset);
      ++numPlaced;
    }
  }
  // What a caller must reserve for this program when it inlines it.
  program->setAttr(kSbufExtentAttr, b.getI64IntegerAttr(extent[0]));
  program->setAttr(kPsumExtentAttr, b.getI64IntegerAttr(extent[1]));
  raiseTo(sbufPeak, sPeak);
  raiseTo(psumPeak, pPeak);
  return success();
}
