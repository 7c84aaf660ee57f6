//===- Session.h - seam-run: compile, cache, launch, account ----*- C++ -*-===//
#ifndef SEAM_TOOLS_SEAM_RUN_SESSION_H
#define SEAM_TOOLS_SEAM_RUN_SESSION_H

#include "passes/AutoKernels.h"
#include "runtime/Expected.h"
#include "runtime/Host.h"
#include "runtime/HostCache.h"
#include "tools/seam-run/Options.h"
#include "tools/seam-run/Reference.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace seamrun {

/// The IR text of the model: the .mlir file, the given text, or the model
/// imported in process; `progress` hears about long imports.
/// `warning` hears about config fields the import reads but cannot honour
/// (unset: they are dropped).
seam::rt::Expected<std::string>
modelText(const SessionOptions &o,
          const std::function<void(const std::string &)> &progress,
          const std::function<void(const std::string &)> &warning = {});

/// Where the time of one step went (ns). The host-timeline parts sum to
/// the latency (otherNs is what they miss: zero unless the timeline gains a
/// new kind of event); the device's busy time overlaps them.
struct StepStats {
  double latencyNs = 0;
  // Measured on this machine (wall clock):
  double compileNs = 0;  ///< compile charged to this step (step 0 of a run)
  double fallbackNs = 0; ///< host fallback ops
  // Modelled:
  double launchNs = 0;      ///< launch + first-run overheads
  double transferNs = 0;    ///< PCIe
  double tracingNs = 0;     ///< lazy tracing
  double kernelCallNs = 0;  ///< framework host time of kernel calls
  uint64_t tracedOps = 0;   ///< ops the lazy tracer recorded (eager)
  double syncNs = 0;        ///< waiting for the device at graph breaks
  double stepEndWaitNs = 0; ///< waiting for the device at the step's end
  double otherNs = 0;
  double deviceNs = 0; ///< device busy (sum of launch device times), apart
  int launches = 0;

  double hostPartsNs() const {
    return compileNs + fallbackNs + launchNs + transferNs + tracingNs +
           kernelCallNs + syncNs + stepEndWaitNs;
  }
};

struct RunStats {
  bool cold = false; ///< it compiled something (else: all from the cache)
  double compileNs = 0;
  int compiled = 0, cacheHits = 0, cacheCorrupt = 0;
  std::vector<StepStats> steps;
};

struct CompileBreakdown {
  double graphNs = 0, lowerNs = 0, codegenNs = 0, kernelNs = 0;
  /// The phases inside codegen + kernels (compileNcoreProgram's own clock,
  /// programs and kernel programs together); the rest of codegen + kernels
  /// is building kernel programs and bookkeeping.
  double doubleBufferNs = 0, allocateNs = 0, scheduleNs = 0, emitNs = 0;
  /// Compile cache: keys (printing + hashing the IR), lookups, stores
  /// (serialising the program). Outside graph/lowering/codegen/kernels.
  double cacheNs = 0;
  /// kernels=auto: deciding kernel or fusion per site (window simulations),
  /// part of graphNs; the window timings it simulated and those it found
  /// in the compile cache.
  double decideNs = 0;
  int decideSimulated = 0, decideCached = 0;
  /// Kernel bodies built during lowering (kernel calls inside programs,
  /// compile mode), part of lowerNs.
  double kernelBodiesNs = 0;
  int kernelBodies = 0;
  int programs = 0, kernelPrograms = 0;
  uint64_t instructions = 0;
  /// What the phases above leave of `totalNs` (bookkeeping between them).
  double otherNs(double totalNs) const {
    return totalNs - (graphNs + lowerNs + codegenNs + kernelNs + cacheNs);
  }
  /// What the codegen phases leave of codegen + kernels (building
  /// top-level kernel programs, bookkeeping).
  double codegenOtherNs() const {
    return codegenNs + kernelNs -
           (doubleBufferNs + allocateNs + scheduleNs + emitNs);
  }
};

/// The roofline of one launched unit (a program or a top-level kernel): its
/// floor from the graph's work (passes/Roofline.h), per rank, beside the
/// device time the last step measured.
struct RooflineUnit {
  std::string name;
  bool isKernel = false;
  int launchesPerStep = 0;
  double floorNs = 0, teNs = 0, elementwiseNs = 0, dmaNs = 0;
  std::string bound, elementwiseEngines;
  double teFlops = 0, elementOps = 0, hbmBytes = 0; ///< per launch
  double deviceNs = 0; ///< mean device time per launch, last step
};

/// The bound engine's longest idle stretch in the last step (rank 0): in
/// which launched unit, when (from the launch's start), the instruction that
/// ended it and what that instruction waited for (rt::IdleStretch).
struct IdleReport {
  std::string engine, unit;
  double ns = 0, fromNs = 0, toNs = 0;
  std::string resumedBy; ///< mnemonic, empty: the launch's end
  int64_t resumedPc = -1;
  /// "a DMA transfer of the SYNC stream", "the VE engine", ...; empty: no
  /// wait signalled during the stretch (issue order).
  std::string waitedFor, waitedOp;
  int64_t waitedPc = -1;
  /// One line: the stretch and its cause.
  std::string cause() const;
};

struct RooflineReport {
  std::vector<RooflineUnit> units;
  /// The bound engine's longest idle stretch (compute-bound steps only).
  std::optional<IdleReport> idle;
  /// The step's floor: the sum of its launches' floors (host fallback ops
  /// are not device work and are excluded), and the sums of each term.
  double floorNs = 0, teNs = 0, elementwiseNs = 0, dmaNs = 0;
  std::string bound; ///< the term that sets most of the step's floor
  int hostOpsExcluded = 0;
  double mustCrossBytes = 0; ///< per rank per step
  uint64_t dmaTransfers = 0; ///< all ranks, last step
  double peakTeFlopsPerNs = 0, peakDmaBytesPerNs = 0;
};

/// One standalone compile of a kernel site's op (--explain-kernels): the
/// kernel's body or the compiler's lowering, alone in a one-op program.
struct BodyAlone {
  double deviceNs = 0, floorNs = 0;
  std::string bound; ///< the floor's term: TE, elementwise or DMA
  /// Its algorithm bound: the largest per-engine busy time of its own
  /// instruction stream (per rank; DMA: the bytes it moves at the DMA peak),
  /// and that engine.
  double algorithmNs = 0;
  std::string algorithmEngine;
  double fraction() const { return deviceNs > 0 ? floorNs / deviceNs : 0; }
  double algorithmFraction() const {
    return deviceNs > 0 ? algorithmNs / deviceNs : 0;
  }
};

/// --explain-kernels: one class of kernel sites (the same kernel on
/// identical ops in blocks of one kind), and where its step delta goes. Every
/// figure is per call: the class's total over its `sites` divided by them.
struct SiteClassExplanation {
  std::string kernel, replaces,
      window;            ///< "qkv", "seam.linear", "single_stream"
  std::string firstSite; ///< "single_stream.5"
  int sites = 0;
  /// Warm step of each variant (Counterfactual.h, kSiteVariants order).
  std::vector<mlir::seam::StepCost> steps;
  /// The delta and its parts; lostFusionNs + roundTripNs + lostOverlapNs +
  /// bodyNs + launchHostNs == deltaNs (consecutive variants' differences).
  double deltaNs = 0, lostFusionNs = 0, roundTripNs = 0, lostOverlapNs = 0,
         bodyNs = 0, launchHostNs = 0;
  /// Fusions that no longer take the site's op in (graph passes' remarks).
  std::vector<std::string> lostFusions;
  BodyAlone kernelBody, compilerBody;
  /// bodyNs minus the bodies' difference alone: what the in-model body
  /// difference owes to its neighbours. When the compiler runs the op on the
  /// host, the whole delta is the kernel against the host fallback (the
  /// host's side is in launchHostNs), so the delta is compared instead.
  bool hostFallback() const { return compilerBody.bound == "host fallback"; }
  double bodyResidualNs() const {
    return (hostFallback() ? deltaNs : bodyNs) -
           (kernelBody.deviceNs - compilerBody.deviceNs);
  }
};

struct KernelExplanation {
  std::string boundary = "barrier"; ///< the kernel boundary's semantics
  std::vector<SiteClassExplanation> classes;
  /// The run's own kernels against none (the whole step, all classes).
  double allSitesDeltaNs = 0;
  int simulations = 0;
  double seconds = 0; ///< wall time of the explanation
};

/// A step input or output of a functional run: where its values came from
/// or went.
struct StepValueFile {
  std::string name; ///< the graph's name (seam.input / seam.output)
  std::string file; ///< the .npy read or written; "" when none
  /// Inputs without --input: generated (seeded uniform in [-1, 1)).
  std::optional<uint64_t> seed;
  /// Inputs: the file's dtype when it was converted ("float64").
  std::string convertedFrom;
};

struct SessionResult {
  SessionOptions options;
  std::vector<RunStats> runs;
  CompileBreakdown compile; ///< of the cold run
  // Structure of the step (from the graph pipeline).
  int regions = 0, distinctPrograms = 0, kernelCalls = 0, hostOps = 0,
      launchesPerStep = 0;
  /// Activation bytes through HBM per step at opaque boundaries (kernels,
  /// host ops) and at region boundaries.
  int64_t boundaryBytes = 0, regionIoBytes = 0;
  std::map<std::string, int> kernelsByName;
  /// The profile the run used: device and framework figures after --set.
  seam::rt::Profile profile;
  // Device totals over the last warm step.
  /// Summed over ranks (and DMA queues); per rank beside it.
  std::map<std::string, double> engineBusyNs;
  std::vector<std::map<std::string, double>> engineBusyPerRankNs;
  uint64_t dmaBytes = 0;
  uint64_t nonFinite = 0;
  RooflineReport roofline; ///< of the last step
  std::vector<std::string> faults;
  /// Hazards the checker found over every launch (each also fails its
  /// launch: a fault); whether it ran.
  uint64_t hazards = 0;
  bool checkedHazards = false;
  /// kernels=auto: the decisions, in program order (seam.kernel_decisions).
  std::vector<mlir::seam::AutoDecision> kernelDecisions;
  /// Sites a requested kernel could not take, by kernel and reason
  /// (seam.kernel_rejections).
  std::vector<mlir::seam::KernelRejection> kernelRejections;
  /// An imported primitive graph: the fused ops seam-recognize recovered,
  /// by kind, and the ops left on the host, by op name (seam.recognised,
  /// seam.host_ops on the step function).
  std::vector<std::pair<std::string, int64_t>> recognised, hostOpsByOp;
  /// Warnings of the compile (a kernel that replaced nothing, ...).
  std::vector<std::string> warnings;
  /// --explain-kernels (set by the driver after the run).
  std::optional<KernelExplanation> explanation;
  /// Functional runs: the last run's step inputs (one per argument of the
  /// step, as bound: --input or synthetic) and its outputs (one per result),
  /// as the host holds them (f32; complex interleaved).
  std::vector<seam::rt::HostTensor> stepInputs, stepOutputs;
  /// Functional runs: each input (file or generated, with its seed) and
  /// each output (named after the graph's result; its file with
  /// --output-dir), in step order.
  std::vector<StepValueFile> inputFiles, outputFiles;
  /// --reference (set by the driver after the run).
  std::optional<ReferenceReport> reference;

  /// The steady-state step: the mean over the steps that pay no compile
  /// (every step but the first of each run). With one step per run, the
  /// first step of each warm run (it pays the warm compile: the graph
  /// pipeline and cache loads). 0 when there is no such step.
  double warmStepNs() const;
  /// DMA bytes and transfers of the last step, per rank.
  double dmaBytesPerRank() const;
  double dmaTransfersPerRank() const;
  /// Which steps warmStepNs() averages, in words ("" when none).
  std::string warmStepBasis() const;
};

/// One thing the host does per step (a launch or a host op); Session.cpp.
struct PlanItem;

class Session {
public:
  explicit Session(SessionOptions options) : opts(std::move(options)) {}
  /// Imports or reads the model, then `runs` runs of `steps` steps each.
  seam::rt::Expected<SessionResult> run();

private:
  /// One run's state: compiled model, device, step plan, host values.
  struct Run;

  // The steps of run(); an error is the message seam-run reports.
  /// The target's built-in profile with the --set overrides applied.
  seam::rt::Status applyProfile();
  /// One run: the steps below in order; appends its RunStats to `result`.
  seam::rt::Status runOnce(int index, const std::string &text,
                           seam::rt::CompileCache &cache);

  // The steps of one run.
  /// Compiles (graph pipeline; programs from the cache when present) and
  /// records the compile's time and cache counts.
  seam::rt::Status compile(Run &r, const std::string &text,
                           seam::rt::CompileCache &cache);
  /// The run's device: the profile, `tp` ranks, the host costs.
  void createDevice(Run &r);
  /// The --trace options (of the last run only), checked against the
  /// compiled model (--trace-ranks, --trace-program).
  seam::rt::Status prepareTrace(Run &r);
  /// Loads every compiled unit onto the `tp` ranks.
  seam::rt::Status loadUnits(Run &r);
  /// The host plan of one step: launches and host ops in program order.
  seam::rt::Status planStep(Run &r);
  /// Evaluates the parameters on the host (functional runs) and charges
  /// their transfer to the device.
  seam::rt::Status bindParameters(Run &r);
  /// Functional runs: the step's inputs from the --input .npy files,
  /// synthetic values for the others.
  seam::rt::Status bindInputs(Run &r);
  /// Runs step `step` (0-based) of the plan and appends its StepStats.
  seam::rt::Status runStep(Run &r, int step);
  /// A host fallback op: a graph break, transfers both ways.
  seam::rt::Status runHostOp(Run &r, const PlanItem &item);
  /// Launches a compiled unit; its device time goes into `st`.
  seam::rt::Status launch(Run &r, const PlanItem &item, int step,
                          StepStats &st);
  /// Adds a launch of the last step to the device totals of `result`.
  void recordDeviceTotals(const std::string &unit,
                          const seam::rt::Program &program,
                          const seam::rt::LaunchResult &res);
  /// Keeps the launch's longest idle stretch of the roofline's bound engine
  /// on rank 0 when it is the step's longest (RooflineReport::idle).
  void recordIdleStretch(const std::string &unit,
                         const seam::rt::Program &program,
                         const seam::rt::LaunchResult &res);
  /// --output-dir: NAME.npy for each result of the step, named after the
  /// graph's result (seam.output; output<i> when unnamed).
  seam::rt::Status writeOutputs(Run &r);
  /// Functional runs: the step's inputs and outputs into `result`.
  void recordStepValues(Run &r);

  // Helpers.
  bool functional() const { return opts.exec == Exec::Functional; }
  bool eager() const { return opts.mode == mlir::seam::RegionMode::Eager; }
  /// Whether --trace records step `step` (0-based) of `r`.
  bool tracesStep(const Run &r, int step) const;
  /// A graph break's wait for the device (off with --no-sync).
  void syncAtGraphBreak(seam::rt::Device &device) const;
  /// A progress line on stderr once the invocation has run for 2 s.
  void progress(const std::string &what);
  /// Step progress past 2 s: on a terminal one line rewritten in place with
  /// an ETA; on a pipe a line every few seconds and at each run's end.
  void stepProgress(const Run &r, int step);
  /// Ends an open in-place progress line (before other output).
  void endProgressLine();
  /// Whether a second has passed since `lastReport` (then set to now):
  /// long phases report at most one line a second.
  bool reportDue(double &lastReport);

  SessionOptions opts;
  // The invocation's state, set up by run().
  SessionResult result;
  seam::rt::Profile profile;
  int tp = 1; ///< ranks: the IR's seam.tp once the first compile parsed it
  double wall0 = 0; ///< when run() started (ns), for progress
  double lastImportReport = 0, lastCompileReport = 0; ///< s after wall0
  double lastStepReport = 0; ///< s after wall0 (pipe progress)
  double runStepsWall0 = 0;  ///< when the current run's first step ended
  bool progressLineOpen = false;
};

} // namespace seamrun

#endif
