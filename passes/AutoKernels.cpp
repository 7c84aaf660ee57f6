//===- AutoKernels.cpp - kernels=auto: kernel or fusion by simulation -----===//
#include "passes/AutoKernels.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "passes/Accounting.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace mlir;
using namespace mlir::seam;

KernelCostModel &mlir::seam::kernelCostModel() {
  static KernelCostModel model;
  return model;
}

Operation *mlir::seam::replaceWithKernelCall(Operation *site,
                                             const KernelInfo &kernel) {
  KernelSignature sig = signatureOfRoot(site);
  OpBuilder b(site);
  auto call = b.create<KernelCallOp>(
      site->getLoc(), site->getResultTypes(), b.getStringAttr(kernel.name),
      site->getOperands(), sig.config.empty() ? DictionaryAttr() : sig.config,
      FlatSymbolRefAttr());
  site->replaceAllUsesWith(call.getResults());
  site->erase();
  return call;
}

Operation *mlir::seam::windowRoot(Operation *site) {
  Operation *root = site;
  for (Operation *p = site->getParentOp(); p && !isa<func::FuncOp>(p);
       p = p->getParentOp())
    if (isa<BlockOp>(p))
      root = p;
  return root;
}

std::string mlir::seam::windowLabel(Operation *root) {
  if (auto b = dyn_cast<BlockOp>(root))
    return (b.getKind() + "." + std::to_string(int64_t(b.getIndex()))).str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << root->getName() << " at " << root->getLoc();
  return s;
}

namespace {

std::string ms(double ns) { return llvm::formatv("{0:F3} ms", ns * 1e-6); }

/// Values the window uses from outside it, in order of first use.
llvm::SmallVector<Value> externalValues(Operation *root) {
  llvm::SetVector<Value> ext;
  root->walk([&](Operation *op) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      Region *r = def ? def->getParentRegion()
                      : cast<BlockArgument>(v).getOwner()->getParent();
      if (!root->isProperAncestor(r->getParentOp()) && r->getParentOp() != root)
        ext.insert(v);
    }
  });
  return ext.takeVector();
}

/// Two windows are decided alike when this key is equal: ops, attributes,
/// types and dataflow, with parameter identities (name, init, seed) and the
/// block's index left out: they do not change what the device does.
std::string structuralKey(Operation *root) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::DenseMap<Value, unsigned> ids;
  for (Value v : externalValues(root)) {
    ids[v] = ids.size();
    os << (isLoadTimeValue(v) ? "L" : "A") << v.getType() << ";";
  }
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    os << op->getName() << "(";
    for (Value v : op->getOperands())
      os << ids.lookup(v) << ",";
    os << ")";
    for (Value r : op->getResults()) {
      ids[r] = ids.size();
      os << r.getType() << ",";
    }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument a : block.getArguments()) {
          ids[a] = ids.size();
          os << "^" << a.getType() << ",";
        }
    if (!isa<ParamOp>(op))
      for (NamedAttribute a : op->getAttrs())
        if (!(isa<BlockOp>(op) && a.getName() == "index"))
          os << a.getName().getValue() << "=" << a.getValue() << ",";
    os << "\n";
  });
  return s;
}

/// A module holding `root` alone as a step: its activations from outside
/// become arguments, its load-time values from outside are cloned in.
OwningOpRef<ModuleOp> buildWindow(Operation *root) {
  auto step = root->getParentOfType<func::FuncOp>();
  auto parent = step->getParentOfType<ModuleOp>();
  OpBuilder b(root->getContext());
  OwningOpRef<ModuleOp> window = ModuleOp::create(root->getLoc());
  for (NamedAttribute a : parent->getAttrs())
    if (a.getName() != SymbolTable::getSymbolAttrName())
      (*window)->setAttr(a.getName(), a.getValue());
  llvm::SmallVector<Value> ext = externalValues(root);
  llvm::SmallVector<Type> argTypes;
  for (Value v : ext)
    if (!isLoadTimeValue(v))
      argTypes.push_back(v.getType());
  b.setInsertionPointToEnd(window->getBody());
  auto fn = b.create<func::FuncOp>(
      root->getLoc(), "window",
      b.getFunctionType(argTypes, root->getResultTypes()));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping map;
  unsigned arg = 0;
  // Load-time values are parameters or expressions of parameters only.
  std::function<void(Value)> cloneLoadTime = [&](Value v) {
    if (map.contains(v))
      return;
    Operation *def = v.getDefiningOp();
    for (Value o : def->getOperands())
      cloneLoadTime(o);
    b.clone(*def, map);
  };
  for (Value v : ext) {
    if (isLoadTimeValue(v)) {
      cloneLoadTime(v);
      continue;
    }
    fn.setArgAttr(arg, "seam.input",
                  b.getStringAttr("in" + std::to_string(arg)));
    map.map(v, body->getArgument(arg++));
  }
  Operation *copy = b.clone(*root, map);
  b.create<func::ReturnOp>(root->getLoc(), copy->getResults());
  return window;
}

/// Inserts `kernels` (in order; the first listed takes a root op) at every
/// legal site of the window.
void applyKernels(ModuleOp window, llvm::ArrayRef<const KernelInfo *> kernels) {
  llvm::SmallVector<Operation *> ops;
  window.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops)
    for (const KernelInfo *k : kernels) {
      if (op->getName().getStringRef() != k->rootOp)
        continue;
      if (k->isSite(op) || k->check(signatureOfRoot(op)))
        continue;
      replaceWithKernelCall(op, *k);
      break;
    }
}

/// The parts of the step that moved most, largest first.
std::string mechanism(const StepCost &with, const StepCost &without) {
  struct Part {
    const char *name;
    double delta;
  };
  Part parts[] = {{"device", with.deviceNs - without.deviceNs},
                  {"launches", with.launchNs - without.launchNs},
                  {"tracing", with.tracingNs - without.tracingNs},
                  {"syncs", with.syncNs - without.syncNs},
                  {"transfers", with.transferNs - without.transferNs},
                  {"host", with.hostNs - without.hostNs}};
  std::stable_sort(std::begin(parts), std::end(parts),
                   [](const Part &a, const Part &b) {
                     return std::abs(a.delta) > std::abs(b.delta);
                   });
  // Waiting for the device moves with the device: name the device only.
  double device = with.deviceNs - without.deviceNs;
  auto mirrorsDevice = [&](const Part &p) {
    return llvm::StringRef(p.name) == "syncs" &&
           std::abs(p.delta - device) <= 0.05 * std::abs(device);
  };
  std::string s;
  for (const Part &p : parts) {
    if (std::abs(p.delta) < 1.0 || s.size() > 60 || mirrorsDevice(p))
      continue;
    s += (s.empty() ? "" : ", ") + std::string(p.name) + " " +
         (p.delta >= 0 ? "+" : "-") + ms(std::abs(p.delta));
  }
  int64_t db = with.hbmRoundTripBytes - without.hbmRoundTripBytes;
  if (db)
    s += llvm::formatv("{0}HBM round trips {1}{2:F2} MB", s.empty() ? "" : ", ",
                       db > 0 ? "+" : "-", std::abs(double(db)) * 1e-6);
  int dl = with.launches - without.launches;
  if (dl)
    s += llvm::formatv("{0}{1}{2} launches", s.empty() ? "" : ", ",
                       dl > 0 ? "+" : "", dl);
  return s.empty() ? "no part moved" : s;
}

} // namespace

std::string AutoDecision::describe() const {
  double pct = without.stepNs > 0
                   ? 100.0 * (with.stepNs - without.stepNs) / without.stepNs
                   : 0;
  std::string s = llvm::formatv(
      "kernel {0} vs {1} {2} ({3}{4:F1}%): {5} ({6})", ms(with.stepNs),
      versus.empty() ? "without" : "'" + versus + "'", ms(without.stepNs),
      pct >= 0 ? "+" : "", pct, inserted ? "inserted" : "not inserted", reason);
  return s;
}

FailureOr<AutoPlan>
mlir::seam::decideKernels(func::FuncOp /*func*/,
                          ArrayRef<AutoCandidate> candidates,
                          ArrayRef<const KernelInfo *> order,
                          const CostQuery &query, std::string &error) {
  AutoPlan plan;
  if (candidates.empty())
    return plan;
  KernelCostModel &model = kernelCostModel();
  if (!model) {
    error = "kernels=auto needs a step model to simulate with; it is "
            "installed by seam-opt and seam-run";
    return failure();
  }
  // Distinct windows in program order, with their candidate sites.
  struct Window {
    Operation *first = nullptr;
    llvm::SmallVector<Operation *> roots;
    llvm::SmallVector<AutoCandidate> sites; ///< of every root
  };
  llvm::MapVector<std::string, Window, std::map<std::string, unsigned>> windows;
  llvm::DenseMap<Operation *, std::string> keyOf;
  for (const AutoCandidate &c : candidates) {
    Operation *root = windowRoot(c.site);
    auto it = keyOf.find(root);
    if (it == keyOf.end())
      it = keyOf.try_emplace(root, structuralKey(root)).first;
    Window &w = windows[it->second];
    if (!w.first)
      w.first = root;
    if (!llvm::is_contained(w.roots, root))
      w.roots.push_back(root);
    w.sites.push_back(c);
    plan.windowOf[c.site] = windowLabel(root);
    plan.groupOf[c.site] = windows.find(it->second) - windows.begin();
  }

  for (auto [group, entry] : llvm::enumerate(windows)) {
    Window &w = entry.second;
    OwningOpRef<ModuleOp> base = buildWindow(w.first);
    auto time = [&](ArrayRef<const KernelInfo *> set,
                    std::string &err) -> FailureOr<StepCost> {
      OwningOpRef<ModuleOp> trial(cast<ModuleOp>((*base)->clone()));
      applyKernels(*trial, set);
      ++plan.simulations;
      return model(*trial, query, err);
    };
    std::string label = windowLabel(w.first);
    std::string err;
    FailureOr<StepCost> best = time({}, err);
    if (failed(best)) {
      error =
          llvm::formatv("kernels=auto: cannot time {0} without kernels: {1}",
                        label, err)
              .str();
      return failure();
    }
    // Candidates of this window, in list order.
    llvm::SmallVector<const KernelInfo *> kernels;
    for (const KernelInfo *k : order)
      for (const AutoCandidate &c : w.sites)
        if (c.kernel == k && !llvm::is_contained(kernels, k))
          kernels.push_back(k);
    llvm::SmallVector<const KernelInfo *> current;
    llvm::SmallVector<size_t> decisionOf; // index in plan.decisions per kernel
    for (const KernelInfo *k : kernels) {
      AutoDecision d;
      d.group = group;
      d.window = label;
      d.windows = w.roots.size();
      d.kernel = k->name.str();
      d.replaces = k->rootOp.str();
      for (const AutoCandidate &c : w.sites)
        d.sites += c.kernel == k && windowRoot(c.site) == w.first;
      llvm::SmallVector<const KernelInfo *> trial(current);
      auto same = llvm::find_if(
          trial, [&](const KernelInfo *j) { return j->rootOp == k->rootOp; });
      if (same != trial.end()) {
        d.versus = (*same)->name.str();
        *same = k;
      } else {
        trial.push_back(k);
      }
      d.without = *best;
      std::string terr;
      FailureOr<StepCost> with = time(trial, terr);
      if (failed(with)) {
        d.with = *best;
        d.reason = "the window with the kernel could not be timed: " + terr;
      } else {
        d.with = *with;
        d.inserted = with->stepNs < best->stepNs;
        d.reason = mechanism(*with, *best);
      }
      if (d.inserted) {
        // The kernel it displaced is no longer kept.
        if (!d.versus.empty())
          for (AutoDecision &prev : plan.decisions)
            if (prev.group == group && prev.kernel == d.versus) {
              prev.inserted = false;
              prev.reason += "; displaced by '" + d.kernel + "'";
            }
        current = trial;
        best = with;
      }
      plan.decisions.push_back(std::move(d));
    }
    for (const AutoCandidate &c : w.sites)
      if (llvm::is_contained(current, c.kernel))
        plan.insert.push_back(c);
  }
  return plan;
}

ArrayAttr mlir::seam::decisionsAttr(MLIRContext *ctx,
                                    ArrayRef<AutoDecision> decisions) {
  Builder b(ctx);
  SmallVector<Attribute> out;
  for (const AutoDecision &d : decisions) {
    SmallVector<NamedAttribute> f;
    f.push_back(b.getNamedAttr("window", b.getStringAttr(d.window)));
    f.push_back(b.getNamedAttr("windows", b.getI64IntegerAttr(d.windows)));
    f.push_back(b.getNamedAttr("kernel", b.getStringAttr(d.kernel)));
    f.push_back(b.getNamedAttr("replaces", b.getStringAttr(d.replaces)));
    f.push_back(b.getNamedAttr("sites", b.getI64IntegerAttr(d.sites)));
    f.push_back(b.getNamedAttr("kernel_ns", b.getF64FloatAttr(d.with.stepNs)));
    f.push_back(
        b.getNamedAttr("without_ns", b.getF64FloatAttr(d.without.stepNs)));
    if (!d.versus.empty())
      f.push_back(b.getNamedAttr("versus", b.getStringAttr(d.versus)));
    f.push_back(b.getNamedAttr("inserted", b.getBoolAttr(d.inserted)));
    f.push_back(b.getNamedAttr("reason", b.getStringAttr(d.reason)));
    out.push_back(b.getDictionaryAttr(f));
  }
  return b.getArrayAttr(out);
}

std::vector<AutoDecision> mlir::seam::decisionsOf(Operation *step) {
  std::vector<AutoDecision> out;
  auto decisions = step->getAttrOfType<ArrayAttr>(kKernelDecisionsAttr);
  if (!decisions)
    return out;
  for (auto d : decisions.getAsRange<DictionaryAttr>()) {
    auto str = [&](StringRef n) {
      auto a = d.getAs<StringAttr>(n);
      return a ? a.str() : std::string();
    };
    auto num = [&](StringRef n) {
      auto a = d.getAs<FloatAttr>(n);
      return a ? a.getValueAsDouble() : 0.0;
    };
    auto count = [&](StringRef n) {
      auto a = d.getAs<IntegerAttr>(n);
      return a ? int(a.getInt()) : 0;
    };
    AutoDecision x;
    x.window = str("window");
    x.windows = count("windows");
    x.kernel = str("kernel");
    x.replaces = str("replaces");
    x.sites = count("sites");
    x.with.stepNs = num("kernel_ns");
    x.without.stepNs = num("without_ns");
    x.versus = str("versus");
    auto inserted = d.getAs<BoolAttr>("inserted");
    x.inserted = inserted && inserted.getValue();
    x.reason = str("reason");
    out.push_back(std::move(x));
  }
  return out;
}

ArrayAttr mlir::seam::rejectionsAttr(MLIRContext *ctx,
                                     ArrayRef<KernelRejection> rejections) {
  Builder b(ctx);
  SmallVector<Attribute> out;
  for (const KernelRejection &r : rejections)
    out.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kernel", b.getStringAttr(r.kernel)),
         b.getNamedAttr("replaces", b.getStringAttr(r.replaces)),
         b.getNamedAttr("reason", b.getStringAttr(r.reason)),
         b.getNamedAttr("sites", b.getI64IntegerAttr(r.sites))}));
  return b.getArrayAttr(out);
}

std::vector<KernelRejection> mlir::seam::rejectionsOf(Operation *step) {
  std::vector<KernelRejection> out;
  auto rejections = step->getAttrOfType<ArrayAttr>(kKernelRejectionsAttr);
  if (!rejections)
    return out;
  for (auto d : rejections.getAsRange<DictionaryAttr>()) {
    auto str = [&](StringRef n) {
      auto a = d.getAs<StringAttr>(n);
      return a ? a.str() : std::string();
    };
    auto sites = d.getAs<IntegerAttr>("sites");
    out.push_back({str("kernel"), str("replaces"), str("reason"),
                   sites ? int(sites.getInt()) : 0});
  }
  return out;
}
