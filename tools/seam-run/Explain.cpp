//===- Explain.cpp - seam-run --explain-kernels ---------------------------===//
#include "tools/seam-run/Explain.h"
#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "passes/AutoKernels.h"
#include "passes/Counterfactual.h"
#include "passes/KernelSelection.h"
#include "passes/Passes.h"
#include "runtime/Clock.h"
#include "tools/seam-run/Interrupt.h"
#include "tools/seam-run/Registration.h"
#include "tools/seam-run/StepModel.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include <map>

using namespace mlir;
using namespace seamrun;
using mlir::seam::SiteVariant;
using mlir::seam::StepCost;
namespace rt = ::seam::rt;

namespace {

using Result = rt::Expected<KernelExplanation>;

using ::seam::rt::nowNs;

std::vector<Operation *> preorder(ModuleOp m) {
  std::vector<Operation *> ops;
  m.walk<WalkOrder::PreOrder>([&](Operation *op) { ops.push_back(op); });
  return ops;
}

/// A kernel site of the run: its position in the pre-order walk of the
/// module before kernel insertion, its kernel and its class.
struct Site {
  size_t index;
  const mlir::seam::KernelInfo *kernel;
  unsigned cls;
};

/// The host-timeline parts of a step that are not the wait for the device.
double hostSideNs(const StepCost &c) {
  return c.launchNs + c.tracingNs + c.transferNs + c.hostNs;
}

class Explainer {
public:
  Explainer(const SessionOptions &opts, std::string cacheDir)
      : opts(opts), cacheDir(std::move(cacheDir)), ctx(seamRunRegistry()) {
    ctx.loadAllAvailableDialects();
    ctx.printOpOnDiagnostic(false);
  }

  Result run();

private:
  rt::Status findSites();
  OwningOpRef<ModuleOp> variant(std::optional<unsigned> cls, SiteVariant v);
  rt::Expected<SessionResult> time(ModuleOp m, mlir::seam::RegionMode mode);
  rt::Status explainClass(unsigned cls, const StepCost &kernelStep,
                          SiteClassExplanation &out);
  std::map<std::string, int> decisions(ModuleOp m);
  std::vector<std::string> lostFusions(ModuleOp fused, ModuleOp noFusion);
  rt::Status bodiesAlone(const Site &site, SiteClassExplanation &out);

  const SessionOptions &opts;
  std::string cacheDir;
  MLIRContext ctx;
  /// The model after the compiler's QKV fusion (what kernels replace).
  OwningOpRef<ModuleOp> before;
  std::vector<Site> sites;
  std::vector<SiteClassExplanation> classes;
  int simulations = 0;
};

rt::Status Explainer::findSites() {
  auto text = modelText(opts, [](const std::string &) {});
  if (!text)
    return rt::Status::failure(text.error());
  std::string diag;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      diag += d.str() + "\n";
    return success();
  });
  before = parseSourceString<ModuleOp>(*text, &ctx);
  if (!before)
    return rt::Status::failure("the model IR does not parse:\n" + diag);
  // As the pipeline does: the qkv kernel replaces the fused projection.
  PassManager fuse(&ctx);
  mlir::seam::SeamFuseQkvOptions qo;
  qo.remarks = false;
  fuse.addNestedPass<func::FuncOp>(mlir::seam::createSeamFuseQkv(qo));
  if (failed(fuse.run(*before)))
    return rt::Status::failure("seam-fuse-qkv failed:\n" + diag);
  // The run's own insertion decides the sites (kernels=auto included).
  OwningOpRef<ModuleOp> inserted = cast<ModuleOp>((*before)->clone());
  PassManager insert(&ctx);
  mlir::seam::SeamInsertKernelsOptions ko;
  ko.kernels = opts.kernels;
  ko.remarks = false;
  ko.mode = opts.mode;
  ko.target = std::string(rt::name(opts.target));
  ko.share = opts.programSharing;
  insert.addNestedPass<func::FuncOp>(mlir::seam::createSeamInsertKernels(ko));
  if (failed(insert.run(*inserted)))
    return rt::Status::failure("seam-insert-kernels failed:\n" + diag);

  std::vector<Operation *> ops0 = preorder(*before), ops1 = preorder(*inserted);
  if (ops0.size() != ops1.size())
    return rt::Status::failure(
        "--explain-kernels: the kernel calls do not stand one for one in "
        "place of the ops they replace");
  std::map<std::string, unsigned> classOf;
  for (size_t i = 0; i < ops0.size(); ++i) {
    auto call = dyn_cast<mlir::seam::KernelCallOp>(ops1[i]);
    if (!call || isa<mlir::seam::KernelCallOp>(ops0[i]))
      continue;
    const mlir::seam::KernelInfo *k =
        mlir::seam::lookupKernel(call.getKernel());
    if (!k)
      return rt::Status::failure("--explain-kernels: unknown kernel '" +
                                 call.getKernel().str() + "'");
    Operation *site = ops0[i];
    auto window = dyn_cast<mlir::seam::BlockOp>(mlir::seam::windowRoot(site));
    std::string kind = window ? window.getKind().str() : "";
    std::string key;
    llvm::raw_string_ostream os(key);
    os << k->name << "|" << kind << "|" << site->getName() << "|"
       << FunctionType::get(&ctx, site->getOperandTypes(),
                            site->getResultTypes())
       << "|" << call->getAttrDictionary();
    auto [it, fresh] = classOf.try_emplace(key, classes.size());
    if (fresh) {
      SiteClassExplanation c;
      c.kernel = k->name;
      c.replaces = site->getName().getStringRef().str();
      std::string shape;
      llvm::raw_string_ostream ss(shape);
      if (auto t = dyn_cast<RankedTensorType>(site->getResultTypes().front()))
        llvm::interleave(t.getShape(), ss, "x");
      c.window = (kind.empty() ? "(no block)" : kind) + " " + shape;
      c.firstSite = window ? mlir::seam::windowLabel(window) : c.replaces;
      classes.push_back(std::move(c));
    }
    ++classes[it->second].sites;
    sites.push_back({i, k, it->second});
  }
  if (sites.empty())
    return rt::Status::failure(
        "--explain-kernels: the run's kernels replace no op, so there is no "
        "kernel site to explain");
  return rt::Status::ok();
}

/// The model with every site but class `cls`'s replaced by its kernel, and
/// `cls`'s in variant `v` (every site in `v` without a class).
OwningOpRef<ModuleOp> Explainer::variant(std::optional<unsigned> cls,
                                         SiteVariant v) {
  OwningOpRef<ModuleOp> m = cast<ModuleOp>((*before)->clone());
  std::vector<Operation *> ops = preorder(*m);
  llvm::StringMap<func::FuncOp> bodies;
  for (const Site &s : sites)
    mlir::seam::applySiteVariant(
        ops[s.index], *s.kernel,
        !cls || s.cls == *cls ? v : SiteVariant::Kernel, *m, bodies);
  return m;
}

rt::Expected<SessionResult> Explainer::time(ModuleOp m,
                                            mlir::seam::RegionMode mode) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, OpPrintingFlags().assumeVerified());
  ++simulations;
  // The sites are in place: timeOneStep inserts no kernel.
  return timeOneStep(opts, std::move(text), mode, opts.target, {},
                     opts.programSharing, cacheDir);
}

/// The decisions the graph pipeline and the lowering make on `m`, as their
/// remarks say them (cut before the first " at ", which names a location),
/// with how often each is made.
std::map<std::string, int> Explainer::decisions(ModuleOp m) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(m->clone());
  std::map<std::string, int> made;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Remark)
      return success();
    std::string s = d.str();
    // Fusions only (region formation's remarks count ops, which move too).
    llvm::StringRef text(s);
    if (!text.starts_with("seam-fuse-") &&
        !text.starts_with("convert-seam-to-ncore"))
      return success();
    if (size_t at = s.find(" at "); at != std::string::npos)
      s.resize(at);
    ++made[s];
    return success();
  });
  PassManager pm(&ctx);
  mlir::seam::PipelineOptions popts;
  popts.mode = opts.mode;
  popts.share = opts.programSharing;
  popts.target = std::string(rt::name(opts.target));
  popts.remarks = true;
  mlir::seam::buildSeamPipeline(pm, popts);
  mlir::seam::ConvertSeamToNcoreOptions lowerOptions;
  lowerOptions.target = std::string(rt::name(opts.target));
  lowerOptions.remarks = true;
  lowerOptions.kernelBoundary = name(opts.kernelBoundary).str();
  mlir::seam::buildLowerToNcorePipeline(pm, lowerOptions);
  (void)pm.run(*copy);
  return made;
}

/// The fusions made in `fused` and not in `noFusion`: what no longer takes
/// the sites' ops in (graph passes and lowering pairs alike), with counts.
std::vector<std::string> Explainer::lostFusions(ModuleOp fused,
                                                ModuleOp noFusion) {
  std::map<std::string, int> with = decisions(fused),
                             without = decisions(noFusion);
  std::vector<std::string> lost;
  for (auto &[what, n] : with) {
    int gone = n - without[what];
    if (gone > 0)
      lost.push_back(what + " (" + std::to_string(gone) + "x)");
  }
  return lost;
}

/// The site's op alone in a one-op step (its operands as the step's
/// arguments), compiled by the compiler and as the kernel.
rt::Status Explainer::bodiesAlone(const Site &site, SiteClassExplanation &out) {
  std::vector<Operation *> ops = preorder(*before);
  Operation *op = ops[site.index];
  for (bool kernel : {false, true}) {
    OwningOpRef<ModuleOp> m = ModuleOp::create(op->getLoc());
    for (NamedAttribute a : (*before)->getAttrs())
      if (a.getName() != SymbolTable::getSymbolAttrName() &&
          a.getName() != SymbolTable::getVisibilityAttrName())
        (*m)->setAttr(a.getName(), a.getValue());
    func::FuncOp fn = mlir::seam::outlineOp(op, "forward");
    m->push_back(fn);
    Operation *copy = &fn.getBody().front().front();
    if (kernel)
      mlir::seam::replaceWithKernelCall(copy, *site.kernel);
    auto r = time(*m, mlir::seam::RegionMode::Compile);
    if (!r)
      return rt::Status::failure(std::string("the ") +
                                 (kernel ? "kernel" : "compiler's lowering") +
                                 " of " + out.firstSite + "'s " + out.replaces +
                                 " alone: " + r.error());
    BodyAlone &body = kernel ? out.kernelBody : out.compilerBody;
    const StepStats &last = r->runs.back().steps.back();
    body.deviceNs = last.deviceNs;
    body.floorNs = r->roofline.floorNs;
    body.bound = r->roofline.bound;
    // Per rank, DMA at the roofline's peak (the floor's).
    double ranks = std::max(1, r->options.tp);
    std::array<double, rt::kNumEngines> busy{};
    for (unsigned e = 0; e < rt::kNumEngines; ++e) {
      auto it = r->engineBusyNs.find(std::string(rt::name(rt::Engine(e))));
      busy[e] = it == r->engineBusyNs.end() ? 0 : it->second / ranks;
    }
    rt::AlgorithmBound a = rt::algorithmBound(busy, r->dmaBytesPerRank(),
                                              r->roofline.peakDmaBytesPerNs);
    body.algorithmNs = a.ns;
    body.algorithmEngine = a.engine;
    if (r->hostOps > 0) {
      // The compiler runs it on the host: its time there (measured here).
      body.deviceNs = last.fallbackNs;
      body.bound = "host fallback";
      body.algorithmNs = 0;
      body.algorithmEngine = "host fallback";
    }
  }
  return rt::Status::ok();
}

rt::Status Explainer::explainClass(unsigned cls, const StepCost &kernelStep,
                                   SiteClassExplanation &c) {
  c.steps.clear();
  OwningOpRef<ModuleOp> fusedModule;
  for (SiteVariant v : mlir::seam::kSiteVariants) {
    if (v == SiteVariant::Kernel) {
      c.steps.push_back(kernelStep);
      continue;
    }
    OwningOpRef<ModuleOp> m = variant(cls, v);
    if (v == SiteVariant::NoFusion)
      c.lostFusions = lostFusions(*fusedModule, *m);
    auto r = time(*m, opts.mode);
    if (!r)
      return rt::Status::failure(
          "the " + mlir::seam::stringifySiteVariant(v).str() + " variant of " +
          c.kernel + " at " + c.window + ": " + r.error());
    c.steps.push_back(stepCostOf(*r));
    if (v == SiteVariant::Fused)
      fusedModule = std::move(m);
  }
  // Consecutive differences: their device-side part is the named part; the
  // host-side parts (launches, tracing, transfers, host time) of all of them
  // are launch + host.
  double n = std::max(1, c.sites);
  double *parts[] = {&c.lostFusionNs, &c.roundTripNs, &c.lostOverlapNs,
                     &c.bodyNs};
  c.launchHostNs = 0;
  for (size_t i = 0; i + 1 < c.steps.size(); ++i) {
    const StepCost &a = c.steps[i], &b = c.steps[i + 1];
    double host = hostSideNs(b) - hostSideNs(a);
    *parts[i] = (b.stepNs - a.stepNs - host) / n;
    c.launchHostNs += host / n;
  }
  c.deltaNs = (c.steps.back().stepNs - c.steps.front().stepNs) / n;
  const Site *first = nullptr;
  for (const Site &s : sites)
    if (s.cls == cls) {
      first = &s;
      break;
    }
  return bodiesAlone(*first, c);
}

Result Explainer::run() {
  double t0 = nowNs();
  if (rt::Status s = findSites(); !s)
    return Result::failure(s.error());
  KernelExplanation e;
  e.boundary = name(opts.kernelBoundary).str();
  auto kernels = time(*variant(std::nullopt, SiteVariant::Kernel), opts.mode);
  if (!kernels)
    return Result::failure("--explain-kernels: the run with its kernels: " +
                           kernels.error());
  auto fused = time(*variant(std::nullopt, SiteVariant::Fused), opts.mode);
  if (!fused)
    return Result::failure("--explain-kernels: the run without kernels: " +
                           fused.error());
  StepCost kernelStep = stepCostOf(*kernels);
  e.allSitesDeltaNs = kernelStep.stepNs - stepCostOf(*fused).stepNs;
  for (unsigned c = 0; c < classes.size(); ++c)
    if (rt::Status s = explainClass(c, kernelStep, classes[c]); !s)
      return Result::failure("--explain-kernels: " + s.error());
  e.classes = std::move(classes);
  e.simulations = simulations;
  e.seconds = (nowNs() - t0) * 1e-9;
  return e;
}

std::string us(double ns) { return llvm::formatv("{0:F1}", ns * 1e-3); }
std::string signedUs(double ns) {
  return llvm::formatv("{0}{1:F1}", ns >= 0 ? "+" : "", ns * 1e-3);
}

} // namespace

Result seamrun::explainKernels(const SessionOptions &opts) {
  TemporaryDirectory dir; // removed at return, or on an interrupt
  std::string why;
  if (!dir.create("seam-explain-cache", why))
    return Result::failure("--explain-kernels: " + why);
  std::string error;
  auto selection = mlir::seam::selectKernels(opts.kernels, error);
  std::optional<ScopedStepModel> stepModel;
  if (selection && selection->automatic)
    stepModel.emplace(opts);
  return Explainer(opts, dir.path()).run();
}

void seamrun::printExplanation(const KernelExplanation &e,
                               llvm::raw_ostream &os) {
  os << "kernel sites explained (--explain-kernels; " << e.boundary
     << " boundary; per call, us of the warm step; " << e.simulations
     << " counterfactual compiles, " << llvm::formatv("{0:F1}", e.seconds)
     << " s):\n";
  os << llvm::formatv("  {0,-34} {1,5} {2,9} {3,9} {4,9} {5,9} {6,9} {7,9}\n",
                      "kernel @ blocks", "calls", "delta", "body", "roundtrip",
                      "fusion", "overlap", "launch");
  for (const SiteClassExplanation &c : e.classes) {
    os << llvm::formatv("  {0,-34} {1,5} {2,9} {3,9} {4,9} {5,9} {6,9} {7,9}\n",
                        c.kernel + " @ " + c.window, c.sites,
                        signedUs(c.deltaNs), signedUs(c.bodyNs),
                        signedUs(c.roundTripNs), signedUs(c.lostFusionNs),
                        signedUs(c.lostOverlapNs), signedUs(c.launchHostNs));
    auto body = [&](const char *what, const BodyAlone &b) {
      os << llvm::formatv("{0} alone {1} us, floor {2} us ({3:F0}%, {4}), "
                          "algorithm bound {5} us ({6:F0}%, {7})",
                          what, us(b.deviceNs), us(b.floorNs),
                          100 * b.fraction(), b.bound, us(b.algorithmNs),
                          100 * b.algorithmFraction(), b.algorithmEngine);
    };
    os << "      ";
    body("kernel body", c.kernelBody);
    os << ";\n      ";
    body("compiler's", c.compilerBody);
    os << "\n      " << (c.hostFallback() ? "delta" : "body")
       << " in the model " << signedUs(c.hostFallback() ? c.deltaNs : c.bodyNs)
       << " us vs alone "
       << signedUs(c.kernelBody.deviceNs - c.compilerBody.deviceNs)
       << " us: residual " << signedUs(c.bodyResidualNs()) << " us\n";
    if (!c.lostFusions.empty()) {
      os << "      fusions lost: ";
      llvm::interleaveComma(c.lostFusions, os);
      os << "\n";
    }
  }
  os << "  all sites together: " << signedUs(e.allSitesDeltaNs)
     << " us per step against no kernel\n";
}

llvm::json::Value seamrun::explanationJson(const KernelExplanation &e) {
  using llvm::json::Array;
  using llvm::json::Object;
  auto bodyJson = [](const BodyAlone &b) {
    return Object{{"device_s", b.deviceNs * 1e-9},
                  {"floor_s", b.floorNs * 1e-9},
                  {"fraction", b.fraction()},
                  {"bound", b.bound},
                  {"algorithm_bound_s", b.algorithmNs * 1e-9},
                  {"algorithm_fraction", b.algorithmFraction()},
                  {"algorithm_engine", b.algorithmEngine}};
  };
  Array classes;
  for (const SiteClassExplanation &c : e.classes) {
    Object steps;
    for (auto [i, v] : llvm::enumerate(mlir::seam::kSiteVariants))
      if (i < c.steps.size())
        steps[mlir::seam::stringifySiteVariant(v)] = c.steps[i].stepNs * 1e-9;
    classes.push_back(Object{
        {"kernel", c.kernel},
        {"replaces", c.replaces},
        {"window", c.window},
        {"first_site", c.firstSite},
        {"sites", c.sites},
        {"step_s", std::move(steps)},
        {"per_call", Object{{"delta_s", c.deltaNs * 1e-9},
                            {"body_s", c.bodyNs * 1e-9},
                            {"round_trip_s", c.roundTripNs * 1e-9},
                            {"lost_fusion_s", c.lostFusionNs * 1e-9},
                            {"lost_overlap_s", c.lostOverlapNs * 1e-9},
                            {"launch_host_s", c.launchHostNs * 1e-9},
                            {"body_residual_s", c.bodyResidualNs() * 1e-9}}},
        {"lost_fusions", Array(c.lostFusions)},
        {"kernel_body_alone", bodyJson(c.kernelBody)},
        {"compiler_body_alone", bodyJson(c.compilerBody)}});
  }
  return Object{{"boundary", e.boundary},
                {"all_sites_delta_s", e.allSitesDeltaNs * 1e-9},
                {"simulations", e.simulations},
                {"seconds", e.seconds},
                {"classes", std::move(classes)}};
}
