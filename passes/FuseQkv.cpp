//===- FuseQkv.cpp - seam-fuse-qkv ----------------------------------------===//
//
// Horizontal fusion of the q/k/v projections: linears that read the same
// input and feed an attention's q, k or v become one linear over the
// concatenated weights, followed by slices.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMFUSEQKV
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

/// Which attention operands (0 = q, 1 = k, 2 = v) a value reaches through
/// shape, norm and rope ops, without crossing another linear.
unsigned rolesReached(Value v, int depth) {
  if (depth > 12)
    return 0;
  unsigned roles = 0;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<AttentionOp>(user)) {
      if (use.getOperandNumber() < 3)
        roles |= 1u << use.getOperandNumber();
      continue;
    }
    auto fc = dyn_cast<FusionClassInterface>(user);
    if (!fc || fc.getFusionClass() == FusionClass::Opaque ||
        fc.getFusionClass() == FusionClass::OutputFusable)
      continue;
    for (Value r : user->getResults())
      roles |= rolesReached(r, depth + 1);
  }
  return roles;
}

} // namespace

unsigned mlir::seam::attentionRoles(Value v) { return rolesReached(v, 0); }

namespace {

std::string roleNames(unsigned roles) {
  std::string s;
  const char *names[] = {"q", "k", "v"};
  for (unsigned i = 0; i < 3; ++i)
    if (roles & (1u << i))
      s += (s.empty() ? "" : "+") + std::string(names[i]);
  return s;
}

/// Legality of fusing `group` (same input, same parent block). Returns a
/// reason when illegal.
std::optional<std::string> checkLegality(MutableArrayRef<LinearOp> group,
                                         DominanceInfo &dom) {
  Type et = group.front().getType().getElementType();
  bool bias = static_cast<bool>(group.front().getBias());
  for (LinearOp l : group) {
    if (l.getType().getElementType() != et)
      return std::string("the linears' element types differ");
    if (static_cast<bool>(l.getBias()) != bias)
      return std::string("some linears have a bias and some do not");
    if (l.getActivation())
      return std::string("a linear applies an activation");
    if (l.getScale())
      return std::string("a linear scales its columns");
    for (Value w : {l.getWeight(), l.getBias()}) {
      if (!w || dom.properlyDominates(w, group.front()))
        continue;
      if (!w.getDefiningOp<ParamOp>())
        return std::string("a weight is computed after the first projection");
    }
  }
  return std::nullopt;
}

struct FuseQkvPass : public seam::impl::SeamFuseQkvBase<FuseQkvPass> {
  using SeamFuseQkvBase::SeamFuseQkvBase;
  PassCounter numGroupsFused{"seam-fuse-qkv", "fused-groups",
                             "Groups of linears fused"};
  PassCounter numLinearsFused{"seam-fuse-qkv", "fused-linears",
                              "Linears folded into a group"};
  PassCounter numRejected{"seam-fuse-qkv", "rejected-groups",
                          "Candidate groups rejected"};
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    DominanceInfo dom(func);
    // Group by (input value, parent block), in program order.
    llvm::MapVector<std::pair<Value, Block *>, SmallVector<LinearOp>> groups;
    func.walk([&](LinearOp l) {
      groups[{l.getInput(), l->getBlock()}].push_back(l);
    });
    for (auto &[key, linears] : groups) {
      if (linears.size() < 2)
        continue;
      SmallVector<LinearOp> members;
      SmallVector<unsigned> roles;
      for (LinearOp l : linears)
        if (unsigned r = attentionRoles(l.getResult())) {
          members.push_back(l);
          roles.push_back(r);
        }
      if (members.size() < 2)
        continue;
      for (LinearOp l : linears)
        if (!llvm::is_contained(members, l))
          decisionRemark(remarks, l.getLoc())
              << "seam-fuse-qkv: linear not fused with the q/k/v "
                 "projections of the same input: it feeds no "
                 "attention";
      fuse(members, roles, dom);
    }
  }

  void fuse(SmallVector<LinearOp> &members, ArrayRef<unsigned> roles,
            DominanceInfo &dom) {
    LinearOp first = members.front();
    std::string names;
    for (unsigned r : roles)
      names += (names.empty() ? "" : ", ") + roleNames(r);
    if (auto why = checkLegality(members, dom)) {
      decisionRemark(remarks, first.getLoc())
          << "seam-fuse-qkv: not fused (" << names << "): " << *why;
      ++numRejected;
      return;
    }
    // Parameters may be declared next to each projection: hoist them above
    // the first one (they have no operands, so this is always legal).
    for (LinearOp l : members)
      for (Value w : {l.getWeight(), l.getBias()})
        if (w && !dom.properlyDominates(w, first))
          w.getDefiningOp()->moveBefore(first);

    OpBuilder b(first);
    Location loc = first.getLoc();
    SmallVector<Value> weights, biases;
    int64_t n = 0;
    for (LinearOp l : members) {
      weights.push_back(l.getWeight());
      if (l.getBias())
        biases.push_back(l.getBias());
      n += l.getType().getShape().back();
    }
    auto inTy = first.getInput().getType();
    Type et = first.getType().getElementType();
    int64_t k = inTy.getShape().back();
    Value wcat = b.create<ConcatOp>(loc, RankedTensorType::get({k, n}, et),
                                    weights, b.getI64IntegerAttr(1));
    Value bcat;
    if (!biases.empty())
      bcat = b.create<ConcatOp>(loc, RankedTensorType::get({n}, et), biases,
                                b.getI64IntegerAttr(0));
    SmallVector<int64_t> outShape(inTy.getShape().drop_back());
    outShape.push_back(n);
    auto fused = b.create<LinearOp>(loc, RankedTensorType::get(outShape, et),
                                    first.getInput(), wcat, bcat,
                                    /*scale=*/Value(),
                                    /*activation=*/StringAttr());
    SmallVector<Attribute> roleAttrs;
    for (unsigned r : roles)
      roleAttrs.push_back(b.getStringAttr(roleNames(r)));
    fused->setAttr("seam.fused_qkv", b.getArrayAttr(roleAttrs));

    int64_t offset = 0;
    for (LinearOp l : members) {
      SmallVector<int64_t> offsets(outShape.size(), 0);
      offsets.back() = offset;
      offset += l.getType().getShape().back();
      Value part = b.create<SliceOp>(l.getLoc(), l.getType(), fused,
                                     b.getDenseI64ArrayAttr(offsets));
      l.replaceAllUsesWith(part);
    }
    // Erased last: the builder inserts before `first`.
    for (LinearOp l : members)
      l.erase();
    decisionRemark(remarks, fused.getLoc())
        << "seam-fuse-qkv: fused " << members.size() << " linears (" << names
        << ") reading " << describeType(inTy)
        << " into one linear with N = " << n;
    ++numGroupsFused;
    numLinearsFused += members.size();
  }
};

} // namespace
