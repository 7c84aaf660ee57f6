//===- InsertKernels.cpp - seam-insert-kernels ----------------------------===//
//
// Replaces each op matched by a requested kernel with an opaque
// seam.kernel_call, only where the kernel's published constraints hold. The
// check is the registry's, the same one the kernel_call verifier runs.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreTarget.h"
#include "kernels/Registry.h"
#include "mlir/IR/Builders.h"
#include "passes/AutoKernels.h"
#include "passes/KernelSelection.h"
#include "passes/Passes.h"
#include "passes/Remarks.h"
#include "passes/Statistics.h"
#include "llvm/ADT/MapVector.h"
#include <map>

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMINSERTKERNELS
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

struct InsertKernelsPass
    : public mlir::seam::impl::SeamInsertKernelsBase<InsertKernelsPass> {
  using SeamInsertKernelsBase::SeamInsertKernelsBase;
  PassCounter numInserted{"seam-insert-kernels", "kernel-calls",
                          "Kernel calls inserted"};
  PassCounter numRejected{"seam-insert-kernels", "rejected-sites",
                          "Sites whose constraints fail"};
  PassCounter numDeclined{"seam-insert-kernels", "auto-declined-sites",
                          "Legal sites kernels=auto left to the compiler"};
  PassCounter numSimulations{"seam-insert-kernels", "auto-simulations",
                             "Window simulations kernels=auto ran"};

  /// What happened to one requested kernel in this function.
  struct Outcome {
    int sites = 0;    ///< ops of its root kind that are sites
    int inserted = 0; ///< of which replaced by a call
    int shadowed = 0; ///< root ops already taken by a kernel listed earlier
    const KernelInfo *shadowedBy = nullptr;
    /// Sites whose constraints fail (or that the kernel does not support),
    /// by reason, in the order first seen.
    llvm::MapVector<std::string, int, std::map<std::string, unsigned>> rejected;
  };

  /// A bad kernel list fails here, before any function is touched, with an
  /// error not attached to an op (which would print the whole function).
  LogicalResult initialize(MLIRContext *ctx) override {
    std::string error;
    if (!selectKernels(kernels, error))
      return emitError(UnknownLoc::get(ctx))
             << "seam-insert-kernels: " << error;
    if (target != "trn1" && target != "trn2")
      return emitError(UnknownLoc::get(ctx))
             << "seam-insert-kernels: target must be 'trn1' or 'trn2', got '"
             << target << "'";
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::string error;
    auto selection = selectKernels(kernels, error);
    if (!selection) // reported by initialize
      return signalPassFailure();
    const auto &requested = selection->kernels;
    // Outlined programs hold what an earlier run decided.
    if (requested.empty() || func->hasAttr(kProgramAttrName) ||
        func.isExternal())
      return;
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) { ops.push_back(op); });
    SmallVector<Outcome> outcomes(requested.size());
    SmallVector<AutoCandidate> candidates;
    for (Operation *op : ops) {
      // The op is gone once a kernel replaces it; its name is the context's.
      StringRef opName = op->getName().getStringRef();
      const KernelInfo *taken = nullptr;
      for (auto [k, outcome] : llvm::zip(requested, outcomes)) {
        if (opName != k->rootOp)
          continue;
        if (selection->automatic) {
          // Every candidate of a site is tried: the simulation chooses.
          if (isLegalSite(op, *k, outcome))
            candidates.push_back({op, k});
          continue;
        }
        if (taken) {
          ++outcome.shadowed;
          outcome.shadowedBy = taken;
          continue;
        }
        if (isLegalSite(op, *k, outcome)) {
          insert(op, *k, outcome);
          taken = k;
        }
      }
    }
    recordRejections(func, requested, outcomes);
    if (selection->automatic) {
      if (failed(runAuto(func, candidates, requested, outcomes)))
        return signalPassFailure();
      // A candidate named in `auto:...` that matches nothing is as likely a
      // slip as a fixed kernel that does (`auto` alone tries every kernel:
      // most match nothing in a given model, which says nothing).
      if (!selection->allCandidates)
        for (auto [k, o] : llvm::zip(requested, outcomes))
          if (o.sites == 0)
            func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                               << "' matches no site in @" << func.getSymName()
                               << " (no " << k->rootOp << " it applies to)";
      return;
    }
    // A kernel that replaced nothing is worth a warning: remarks are off in
    // most runs (seam-run), and a misspelt model or a shadowing list is
    // otherwise silent.
    for (auto [k, o] : llvm::zip(requested, outcomes)) {
      if (o.shadowed)
        func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                           << "' is shadowed by '" << o.shadowedBy->name
                           << "' at " << o.shadowed << " site(s) in @"
                           << func.getSymName() << " (both replace "
                           << k->rootOp << "; the first listed wins)";
      else if (o.sites == 0)
        func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                           << "' matches no site in @" << func.getSymName()
                           << " (no " << k->rootOp << " it applies to)";
      else if (o.inserted == 0)
        func.emitWarning() << "seam-insert-kernels: kernel '" << k->name
                           << "' inserted at none of its " << o.sites
                           << " site(s) in @" << func.getSymName() << " ("
                           << reasons(o) << ")";
    }
  }

  /// "seq 768 > 512 at 40 site(s); ..." for a kernel's rejected sites.
  static std::string reasons(const Outcome &o) {
    std::string out;
    for (auto &[why, n] : o.rejected)
      out += (out.empty() ? "" : "; ") + why + " at " + std::to_string(n) +
             " site(s)";
    return out.empty() ? "the remarks say why" : out;
  }

  /// The rejected sites of every requested kernel, on the function
  /// (kKernelRejectionsAttr; removed when there are none).
  void recordRejections(func::FuncOp func,
                        ArrayRef<const KernelInfo *> requested,
                        ArrayRef<Outcome> outcomes) {
    std::vector<KernelRejection> all;
    for (auto [k, o] : llvm::zip(requested, outcomes))
      for (auto &[why, n] : o.rejected)
        all.push_back({k->name.str(), k->rootOp.str(), why, n});
    if (all.empty())
      func->removeAttr(kKernelRejectionsAttr);
    else
      func->setAttr(kKernelRejectionsAttr,
                    rejectionsAttr(func.getContext(), all));
  }

  /// True when `op` is a site of `k` whose constraints hold and which the
  /// profitability hook accepts; remarks say why not.
  bool isLegalSite(Operation *op, const KernelInfo &k, Outcome &outcome) {
    if (auto why = k.isSite(op)) {
      if (!why->empty()) {
        ++outcome.sites;
        decisionRemark(remarks, op->getLoc())
            << "seam-insert-kernels: kernel '" << k.name
            << "' not inserted: " << *why;
        ++numRejected;
        ++outcome.rejected[*why];
      }
      return false;
    }
    ++outcome.sites;
    KernelSignature sig = signatureOfRoot(op);
    if (auto why = k.check(sig)) {
      decisionRemark(remarks, op->getLoc())
          << "seam-insert-kernels: kernel '" << k.name
          << "' not inserted: " << *why;
      ++numRejected;
      ++outcome.rejected[*why];
      return false;
    }
    return true;
  }

  void insert(Operation *op, const KernelInfo &k, Outcome &outcome,
              StringRef because = "") {
    std::string what = k.describe(signatureOfRoot(op));
    Operation *call = replaceWithKernelCall(op, k);
    auto remark = decisionRemark(remarks, call->getLoc());
    remark << "seam-insert-kernels: kernel '" << k.name
           << "' inserted: " << what;
    if (!because.empty())
      remark << "; " << because;
    ++numInserted;
    ++outcome.inserted;
  }

  /// kernels=auto: simulate, insert what is faster, explain every site.
  LogicalResult runAuto(func::FuncOp func, ArrayRef<AutoCandidate> candidates,
                        ArrayRef<const KernelInfo *> requested,
                        MutableArrayRef<Outcome> outcomes) {
    // The windows are timed on the profile the module is compiled for: its
    // ncore.target attribute (target and --set overrides) when it has one,
    // else the built-in profile of the `target` option.
    FailureOr<::seam::rt::Profile> profile =
        ncore::getTargetProfile(func, target, "seam-insert-kernels");
    if (failed(profile))
      return failure();
    CostQuery query;
    query.mode = mode;
    query.target = std::string(::seam::rt::name(profile->target));
    query.overrides = profile->overrides();
    query.share = share;
    std::string error;
    FailureOr<AutoPlan> plan =
        decideKernels(func, candidates, requested, query, error);
    if (failed(plan))
      return func.emitError() << "seam-insert-kernels: " << error;
    numSimulations += plan->simulations;
    // Each site's remark carries the decision of its window. All of them
    // are worked out before any site is replaced (a site may be a candidate
    // of several kernels).
    struct Action {
      AutoCandidate candidate;
      bool keep;
      std::string because;
    };
    SmallVector<Action> actions;
    for (const AutoCandidate &c : candidates) {
      unsigned group = plan->groupOf.lookup(c.site);
      std::string window = plan->windowOf.lookup(c.site);
      const AutoDecision *d = nullptr;
      for (const AutoDecision &x : plan->decisions)
        if (x.group == group && x.kernel == c.kernel->name)
          d = &x;
      std::string because = "kernels=auto at " + window;
      if (d && d->window != window)
        because += " (decided on " + d->window + ")";
      because += ": " + (d ? d->describe() : std::string("no decision"));
      bool keep = llvm::any_of(plan->insert, [&](const AutoCandidate &p) {
        return p.site == c.site && p.kernel == c.kernel;
      });
      actions.push_back({c, keep, std::move(because)});
    }
    // Declined candidates first: their sites still exist.
    for (Action &a : actions) {
      if (a.keep)
        continue;
      ++numDeclined;
      decisionRemark(remarks, a.candidate.site->getLoc())
          << "seam-insert-kernels: kernel '" << a.candidate.kernel->name
          << "' not inserted: " << a.because;
    }
    for (Action &a : actions)
      if (a.keep)
        insert(a.candidate.site, *a.candidate.kernel,
               outcomes[llvm::find(requested, a.candidate.kernel) -
                        requested.begin()],
               a.because);
    func->setAttr(kKernelDecisionsAttr,
                  decisionsAttr(func.getContext(), plan->decisions));
    return success();
  }
};

} // namespace
