//===- StepModel.cpp - seam-run's step model for kernels=auto -------------===//
#include "tools/seam-run/StepModel.h"
#include "mlir/IR/OperationSupport.h"
#include "runtime/HostCache.h"
#include "tools/seam-run/Compiler.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>
#include <optional>

using namespace seamrun;
using mlir::seam::CostQuery;
using mlir::seam::StepCost;

namespace {

/// Everything besides the window's text that its step cost depends on.
std::string stepCostFlags(const SessionOptions &base, const CostQuery &query) {
  std::string s = "kernels=auto step cost: mode=" + name(query.mode).str() +
                  " target=" + query.target +
                  " share=" + (query.share ? "1" : "0") +
                  " boundary=" + name(base.kernelBoundary).str() +
                  " tp=" + std::to_string(base.tp) + " costs=";
  for (bool on :
       {base.costs.launchOverhead, base.costs.firstRun, base.costs.transfers,
        base.costs.tracing, base.costs.kernelCallHost, base.graphBreakSyncs})
    s += on ? '1' : '0';
  for (const std::string &f : base.figureOverrides)
    s += " set " + f;
  for (const auto &[figure, value] : query.overrides)
    s += llvm::formatv(" ir {0}={1:e16}", figure, value).str();
  return s;
}

constexpr llvm::StringLiteral kStepCostMagic = "seam-step-cost 1\n";

std::vector<uint8_t> writeStepCost(const StepCost &c) {
  llvm::json::Object o{{"step_ns", c.stepNs},
                       {"device_ns", c.deviceNs},
                       {"launch_ns", c.launchNs},
                       {"tracing_ns", c.tracingNs},
                       {"sync_ns", c.syncNs},
                       {"transfer_ns", c.transferNs},
                       {"host_ns", c.hostNs},
                       {"launches", c.launches},
                       {"hbm_round_trip_bytes", c.hbmRoundTripBytes}};
  std::string text = kStepCostMagic.str();
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(o));
  return std::vector<uint8_t>(text.begin(), text.end());
}

/// A cached step cost; nothing on a miss, a corrupt entry or another kind
/// of entry (it is then timed again and stored over).
std::optional<StepCost> readStepCost(const seam::rt::CacheLookup &hit) {
  if (hit.status != seam::rt::CacheStatus::Hit || hit.failedCompile)
    return std::nullopt;
  llvm::StringRef text(reinterpret_cast<const char *>(hit.bytes.data()),
                       hit.bytes.size());
  if (!text.consume_front(kStepCostMagic))
    return std::nullopt;
  auto v = llvm::json::parse(text);
  if (!v) {
    llvm::consumeError(v.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *o = v->getAsObject();
  if (!o)
    return std::nullopt;
  StepCost c;
  for (auto [name, field] : {std::pair{"step_ns", &c.stepNs},
                             {"device_ns", &c.deviceNs},
                             {"launch_ns", &c.launchNs},
                             {"tracing_ns", &c.tracingNs},
                             {"sync_ns", &c.syncNs},
                             {"transfer_ns", &c.transferNs},
                             {"host_ns", &c.hostNs}}) {
    auto n = o->getNumber(name);
    if (!n)
      return std::nullopt;
    *field = *n;
  }
  auto launches = o->getInteger("launches");
  auto bytes = o->getInteger("hbm_round_trip_bytes");
  if (!launches || !bytes)
    return std::nullopt;
  c.launches = int(*launches);
  c.hbmRoundTripBytes = *bytes;
  return c;
}

} // namespace

ScopedStepModel::ScopedStepModel(SessionOptions base)
    : previous(mlir::seam::kernelCostModel()),
      cacheDir(std::make_shared<TemporaryDirectory>()),
      counts(std::make_shared<Answers>()) {
  std::shared_ptr<TemporaryDirectory> cache = cacheDir;
  std::shared_ptr<Answers> answered = counts;
  mlir::seam::kernelCostModel() =
      [base = std::move(base), cache,
       answered](mlir::ModuleOp window, const CostQuery &query,
                 std::string &error) -> mlir::FailureOr<StepCost> {
    if (cache->path().empty()) {
      std::string why;
      if (!cache->create("seam-auto-cache", why)) {
        error = "kernels=auto windows: " + why;
        return mlir::failure();
      }
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    window->print(os, mlir::OpPrintingFlags().assumeVerified());
    // The answer is kept in the run's compile cache (a kept --cache-dir
    // makes a warm run's kernels=auto decision a few lookups), keyed by the
    // window and everything that times it: mode, target, sharing, host
    // costs, profile overrides, TP, the compiler.
    std::optional<seam::rt::CompileCache> answers;
    std::string key;
    if (!base.cacheDir.empty()) {
      answers.emplace(base.cacheDir);
      key = seam::rt::compileCacheKey(text, stepCostFlags(base, query),
                                      compilerVersion());
      if (auto known = readStepCost(answers->lookup(key))) {
        ++answered->cached;
        return *known;
      }
    }
    auto target = parseTarget(query.target);
    if (!target) {
      error = target.error();
      return mlir::failure();
    }
    auto result = timeOneStep(base, std::move(text), query.mode, *target,
                              query.overrides, query.share, cache->path());
    if (!result) {
      error = result.error();
      return mlir::failure();
    }
    ++answered->simulated;
    StepCost cost = stepCostOf(*result);
    if (answers) // a cache that cannot be written only costs the next run
      (void)answers->store(key, writeStepCost(cost));
    return cost;
  };
}

ScopedStepModel::~ScopedStepModel() {
  mlir::seam::kernelCostModel() = previous;
  // The directory goes with the last copy of the model's closure.
}

seam::rt::Expected<SessionResult>
seamrun::timeOneStep(const SessionOptions &base, std::string irText,
                     mlir::seam::RegionMode mode, seam::rt::Target target,
                     const std::map<std::string, double> &overrides, bool share,
                     const std::string &cacheDir) {
  SessionOptions o;
  o.irText = std::move(irText);
  o.mode = mode;
  o.target = target;
  o.programSharing = share;
  o.kernelBoundary = base.kernelBoundary;
  o.framework = base.framework;
  o.costs = base.costs;
  o.graphBreakSyncs = base.graphBreakSyncs;
  o.figureOverrides = base.figureOverrides;
  // The module's device figures after the run's own (they agree in a
  // seam-run session; seam-opt's come from the IR alone).
  for (const auto &[figure, value] : overrides)
    o.figureOverrides.push_back(
        llvm::formatv("{0}={1:e16}", figure, value).str());
  o.tp = base.tp;
  o.exec = Exec::Timing;
  // The first step pays the compile; of the others the fastest is kept
  // (stepCostOf): a host fallback's time is measured on this machine's
  // clock, and a busy machine stretches one measurement, not both.
  o.steps = 3;
  o.runs = 1;
  o.cacheDir = cacheDir;
  o.quietWarnings = true;
  o.threads = base.threads;
  return Session(o).run();
}

StepCost seamrun::stepCostOf(const SessionResult &result) {
  const auto &steps = result.runs.back().steps;
  const StepStats &st = *std::min_element(
      steps.size() > 1 ? steps.begin() + 1 : steps.begin(), steps.end(),
      [](const StepStats &a, const StepStats &b) {
        return a.latencyNs < b.latencyNs;
      });
  // The step's parts are differences of host-timeline instants that sit
  // after the measured compile of step 0, so their last bits vary from run
  // to run; to 1 ps they do not, and neither do the decisions.
  auto ps = [](double ns) { return std::round(ns * 1e3) * 1e-3; };
  StepCost c;
  c.stepNs = ps(st.latencyNs);
  c.deviceNs = ps(st.deviceNs);
  c.launchNs = ps(st.launchNs);
  c.tracingNs = ps(st.tracingNs);
  c.syncNs = ps(st.syncNs + st.stepEndWaitNs);
  c.transferNs = ps(st.transferNs);
  c.hostNs = ps(st.fallbackNs + st.kernelCallNs + st.otherNs);
  c.launches = st.launches;
  c.hbmRoundTripBytes = result.boundaryBytes + result.regionIoBytes;
  return c;
}
