//===- PlanPairings.cpp - which ops the conversion lowers together --------===//
//
// See Pairing.h and ConvertPasses.td (seam-plan-pairings). The decisions
// convert-seam-to-ncore used to make inline before it emitted a program,
// apart from it: recorded on the seam ops, checked by lit, and read back
// (and checked again) by the conversion.
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/Pairing.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMPLANPAIRINGS
#include "lowering/conversion/ConvertPasses.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::seam::conversion;

PairingRules PairingRules::all() {
  PairingRules rules;
  populateLinearGuests(rules.guests);
  populateAttentionHosts(rules.hosts);
  populateElementwiseRowProducers(rules.producers);
  populateNormRowConsumers(rules.consumers);
  return rules;
}

//===----------------------------------------------------------------------===//
// Deciding
//===----------------------------------------------------------------------===//

namespace {

/// The three decisions in the order they are made: each later kind skips
/// the ops an earlier one took.
class PairingPlanner {
public:
  PairingPlanner(Block &body, const PairingRules &rules)
      : body(body), rules(rules) {}

  ProgramPairings run() {
    pairHostsWithGuests();
    pairLinearsWithMatvecs();
    pairRowProducers();
    pairColumnConsumers();
    return std::move(result);
  }

private:
  /// Whether `guest` can be emitted inside `host` (see InterleavedWork):
  /// a guest-capable op not paired yet whose results are all read after
  /// the host, so that lowering it there changes no value.
  bool canGuest(Operation *guest, Operation *host) const {
    auto g = rules.guests.find(guest->getName().getStringRef());
    // A materialized op's operands are swapped for HBM copies around its
    // own lowering, which a guest's (inside its host's) would not see.
    return g != rules.guests.end() && !guests.contains(guest) &&
           !guest->hasAttr(kMaterializeAttrName) &&
           !result.guestOf.contains(guest) && g->second.eligible(guest) &&
           llvm::all_of(guest->getUsers(), [&](Operation *user) {
             return user->getBlock() == &body && host->isBeforeInBlock(user);
           });
  }

  /// Each host takes the nearest earlier guest-capable op (not past
  /// another host).
  void pairHostsWithGuests() {
    for (Operation &op : body) {
      if (!rules.hosts.contains(op.getName().getStringRef()))
        continue;
      for (Operation *prev = op.getPrevNode(); prev;
           prev = prev->getPrevNode()) {
        if (rules.hosts.contains(prev->getName().getStringRef()))
          break;
        if (!canGuest(prev, &op))
          continue;
        result.guestOf[&op] = prev;
        guests.insert(prev);
        break;
      }
    }
  }

  /// A linear of many rows (Tensor-engine bound) hosts the one-row linear
  /// just before it (views aside): a matvec whose weight streams in its
  /// slabs' DMA slack (see interleaveMatvec). Whether it fits is the
  /// linear lowering's decision; if not, the guest is lowered after it.
  void pairLinearsWithMatvecs() {
    auto oneRow = [](Value v) { return matrixOf(shapeOf(v)).first == 1; };
    for (Operation &op : body) {
      auto host = dyn_cast<LinearOp>(op);
      if (!host || guests.contains(&op) || result.guestOf.contains(&op) ||
          oneRow(host.getInput()))
        continue;
      Operation *prev = op.getPrevNode();
      while (prev && isa<ReshapeOp, SliceOp>(prev))
        prev = prev->getPrevNode();
      auto lin = dyn_cast_or_null<LinearOp>(prev);
      if (!lin || !oneRow(lin.getInput()) || !canGuest(prev, &op))
        continue;
      result.guestOf[&op] = prev;
      guests.insert(prev);
    }
  }

  /// The first reader in the body of `v`, or null.
  Operation *firstReader(Value v) const {
    Operation *first = nullptr;
    for (Operation *u : v.getUsers())
      if (u->getBlock() == &body && (!first || u->isBeforeInBlock(first)))
        first = u;
    return first;
  }

  bool interleaved(Operation *op) const {
    return guests.contains(op) || result.guestOf.contains(op);
  }

  /// Row production pairs (see RowProducer): a producer whose first reader
  /// is a row consumer reading it as its input, with every other reader
  /// after that consumer.
  void pairRowProducers() {
    for (Operation &op : body) {
      if (!rules.producers.count(op.getName().getStringRef()) ||
          !fusible(&op) || op.getNumResults() != 1 || interleaved(&op))
        continue;
      Value r = op.getResult(0);
      Operation *first = firstReader(r);
      if (!first ||
          !rules.consumers.contains(first->getName().getStringRef()) ||
          !fusible(first) || first->getOperand(0) != r || interleaved(first) ||
          result.producerOf.contains(first) ||
          llvm::count(first->getOperands(), r) != 1 ||
          !llvm::all_of(r.getUsers(),
                        [&](Operation *u) { return u->getBlock() == &body; }))
        continue;
      result.producerOf[first] = &op;
      rowProducers.insert(&op);
    }
  }

  /// Column consumption pairs (see ColumnConsumer): an all_reduce of a
  /// linear's result that nothing else reads.
  void pairColumnConsumers() {
    for (Operation &op : body) {
      auto ar = dyn_cast<AllReduceOp>(op);
      if (!ar || !ar.getInput().hasOneUse())
        continue;
      auto lin = ar.getInput().getDefiningOp<LinearOp>();
      if (!lin || !fusible(lin) || !fusible(ar) || lin->getBlock() != &body ||
          guests.contains(lin) || rowProducers.contains(lin) ||
          result.producerOf.contains(lin))
        continue;
      result.collectiveOf[lin] = ar;
    }
  }

  Block &body;
  const PairingRules &rules;
  ProgramPairings result;
  DenseSet<Operation *> guests, rowProducers;
};

} // namespace

ProgramPairings conversion::decidePairings(Block &body,
                                           const PairingRules &rules) {
  return PairingPlanner(body, rules).run();
}

//===----------------------------------------------------------------------===//
// Recording and reading
//===----------------------------------------------------------------------===//

namespace {
/// One kind of pair: the attribute on its earlier op and on its later one.
struct PairAttrs {
  llvm::StringLiteral earlier, later;
};
constexpr PairAttrs kInterleave{kInterleaveGuestAttrName,
                                kInterleaveHostAttrName};
constexpr PairAttrs kRows{kRowProducerAttrName, kRowConsumerAttrName};
constexpr PairAttrs kColumns{kColumnProducerAttrName, kColumnConsumerAttrName};
constexpr PairAttrs kAllPairs[] = {kInterleave, kRows, kColumns};
} // namespace

void conversion::recordPairings(Block &body, const ProgramPairings &pairings) {
  for (Operation &op : body)
    for (const PairAttrs &kind : kAllPairs) {
      op.removeAttr(kind.earlier);
      op.removeAttr(kind.later);
    }
  Builder b(body.getParentOp()->getContext());
  int64_t next = 0;
  auto record = [&](const PairAttrs &kind, Operation *earlier,
                    Operation *later) {
    IntegerAttr id = b.getI64IntegerAttr(next++);
    earlier->setAttr(kind.earlier, id);
    later->setAttr(kind.later, id);
  };
  for (Operation &op : body) {
    if (Operation *guest = pairings.guestOf.lookup(&op))
      record(kInterleave, guest, &op);
    if (Operation *producer = pairings.producerOf.lookup(&op))
      record(kRows, producer, &op);
    if (auto ar = dyn_cast<AllReduceOp>(op))
      if (Operation *lin = ar.getInput().getDefiningOp();
          lin && pairings.collectiveOf.lookup(lin) == ar)
        record(kColumns, lin, &op);
  }
}

namespace {

/// Reads and checks the pairs recorded on a program's body.
class PairingReader {
public:
  PairingReader(Block &body, const PairingRules &rules)
      : body(body), rules(rules) {}

  FailureOr<ProgramPairings> run() {
    for (const PairAttrs &kind : kAllPairs)
      if (failed(collect(kind)))
        return failure();
    if (failed(checkRoles()))
      return failure();
    for (auto &[id, ops] : pairs[0])
      if (failed(checkInterleave(id, ops.first, ops.second)))
        return failure();
    for (auto &[id, ops] : pairs[1])
      if (failed(checkRows(id, ops.first, ops.second)))
        return failure();
    for (auto &[id, ops] : pairs[2])
      if (failed(checkColumns(id, ops.first, ops.second)))
        return failure();
    return std::move(result);
  }

private:
  using Pairs = llvm::MapVector<int64_t, std::pair<Operation *, Operation *>>;

  InFlightDiagnostic error(Operation *op) {
    return op->emitOpError() << "convert-seam-to-ncore: ";
  }

  /// The ids of one kind, each with its two ops (earlier, later): every id
  /// once on each side, the earlier op first.
  LogicalResult collect(const PairAttrs &kind) {
    Pairs &found = pairs[&kind - kAllPairs];
    for (Operation &op : body)
      for (bool later : {false, true}) {
        StringRef name = later ? kind.later : kind.earlier;
        Attribute attr = op.getAttr(name);
        if (!attr)
          continue;
        auto id = dyn_cast<IntegerAttr>(attr);
        if (!id || !id.getType().isSignlessInteger())
          return error(&op)
                 << "'" << name << "' must be an integer pair id, not " << attr;
        Operation *&slot =
            later ? found[id.getInt()].second : found[id.getInt()].first;
        if (slot)
          return error(&op) << "pair id " << id.getInt() << " of '" << name
                            << "' is also on the op at " << slot->getLoc();
        slot = &op;
      }
    for (auto &[id, ops] : found) {
      auto [earlier, later] = ops;
      if (!earlier)
        return error(later)
               << "'" << kind.later << "' = " << id << " has no op with '"
               << kind.earlier << "' = " << id;
      if (!later)
        return error(earlier)
               << "'" << kind.earlier << "' = " << id << " has no op with '"
               << kind.later << "' = " << id;
      if (!earlier->isBeforeInBlock(later))
        return error(earlier) << "'" << kind.earlier << "' = " << id
                              << " must come before the op with '" << kind.later
                              << "' (at " << later->getLoc() << ")";
    }
    return success();
  }

  /// An op emitted inside another (a guest, a row producer) is in no other
  /// pair, and a row consumer is neither a host nor a column producer: the
  /// conversion lowers each op in one place.
  LogicalResult checkRoles() {
    for (Operation &op : body) {
      SmallVector<StringRef> roles;
      for (const PairAttrs &kind : kAllPairs)
        for (StringRef name : {StringRef(kind.earlier), StringRef(kind.later)})
          if (op.hasAttr(name))
            roles.push_back(name);
      if (roles.size() < 2)
        continue;
      bool inside = op.hasAttr(kInterleaveGuestAttrName) ||
                    op.hasAttr(kRowProducerAttrName);
      if (inside || op.hasAttr(kRowConsumerAttrName))
        return error(&op) << "'" << roles[0] << "' and '" << roles[1]
                          << "' on one op: it cannot be lowered in both pairs";
    }
    return success();
  }

  /// Every reader of `v` is in the body and after `after`.
  bool readOnlyAfter(Value v, Operation *after) const {
    return llvm::all_of(v.getUsers(), [&](Operation *u) {
      return u->getBlock() == &body &&
             (u == after || after->isBeforeInBlock(u));
    });
  }

  LogicalResult checkInterleave(int64_t id, Operation *guest, Operation *host) {
    if (!rules.hosts.contains(host->getName().getStringRef()) &&
        !isa<LinearOp>(host))
      return error(host) << "'" << kInterleaveHostAttrName << "' = " << id
                         << " on an op whose lowering takes no guest";
    auto g = rules.guests.find(guest->getName().getStringRef());
    if (g == rules.guests.end() || !g->second.eligible(guest))
      return error(guest) << "'" << kInterleaveGuestAttrName << "' = " << id
                          << " on an op that cannot be a guest";
    if (guest->hasAttr(kMaterializeAttrName))
      return error(guest) << "'" << kInterleaveGuestAttrName << "' = " << id
                          << " on an op marked '" << kMaterializeAttrName
                          << "'";
    for (Value r : guest->getResults())
      if (!llvm::all_of(r.getUsers(), [&](Operation *u) {
            return u->getBlock() == &body && host->isBeforeInBlock(u);
          }))
        return error(guest) << "'" << kInterleaveGuestAttrName << "' = " << id
                            << ": its result is read before its host (at "
                            << host->getLoc() << ") is lowered";
    result.guestOf[host] = guest;
    return success();
  }

  LogicalResult checkRows(int64_t id, Operation *producer,
                          Operation *consumer) {
    if (!rules.producers.count(producer->getName().getStringRef()) ||
        producer->getNumResults() != 1)
      return error(producer) << "'" << kRowProducerAttrName << "' = " << id
                             << " on an op that cannot produce rows";
    if (!rules.consumers.contains(consumer->getName().getStringRef()))
      return error(consumer) << "'" << kRowConsumerAttrName << "' = " << id
                             << " on an op that does not consume rows";
    if (!fusible(producer) || !fusible(consumer))
      return error(fusible(producer) ? consumer : producer)
             << "'" << kRowConsumerAttrName << "' = " << id
             << " pairs an op marked '" << kNoFuseAttrName << "'";
    Value r = producer->getResult(0);
    if (consumer->getOperand(0) != r ||
        llvm::count(consumer->getOperands(), r) != 1)
      return error(consumer) << "'" << kRowConsumerAttrName << "' = " << id
                             << " does not read its producer's result as its "
                                "first operand (only)";
    if (!readOnlyAfter(r, consumer))
      return error(producer) << "'" << kRowProducerAttrName << "' = " << id
                             << ": its result is read before its consumer (at "
                             << consumer->getLoc() << ")";
    result.producerOf[consumer] = producer;
    return success();
  }

  LogicalResult checkColumns(int64_t id, Operation *producer,
                             Operation *consumer) {
    auto lin = dyn_cast<LinearOp>(producer);
    auto ar = dyn_cast<AllReduceOp>(consumer);
    if (!lin || !ar || ar.getInput() != lin.getResult() ||
        !ar.getInput().hasOneUse())
      return error(consumer) << "'" << kColumnConsumerAttrName << "' = " << id
                             << " must be an all_reduce of its producer's "
                                "linear result, which nothing else reads";
    if (!fusible(lin) || !fusible(ar))
      return error(fusible(lin) ? consumer : producer)
             << "'" << kColumnConsumerAttrName << "' = " << id
             << " pairs an op marked '" << kNoFuseAttrName << "'";
    result.collectiveOf[lin] = ar;
    return success();
  }

  Block &body;
  const PairingRules &rules;
  Pairs pairs[3];
  ProgramPairings result;
};

} // namespace

FailureOr<ProgramPairings> conversion::readPairings(Block &body,
                                                    const PairingRules &rules) {
  return PairingReader(body, rules).run();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
class SeamPlanPairingsPass
    : public mlir::seam::impl::SeamPlanPairingsBase<SeamPlanPairingsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    PairingRules rules = PairingRules::all();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // convert-seam-to-ncore rejects a program of several blocks.
      if (!func->hasAttr(kProgramAttrName) || !func.getBody().hasOneBlock())
        continue;
      Block &body = func.getBody().front();
      recordPairings(body, decidePairings(body, rules));
    }
  }
};
} // namespace
