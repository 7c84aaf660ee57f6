//===- seam-run.cpp - compile a model and run it on the emulated device ---===//
//
// seam-run imports (or reads) a model, compiles it with the graph pipeline in
// eager or compile mode with the requested kernels, lowers every program and
// kernel to the emulated NeuronCore, and runs `--runs` runs of `--steps`
// steps: the first run cold (an empty compile cache), the rest warm against
// the cache. Compile time is this compiler's real wall time; step latency is
// the host timeline of the emulated device (launches, transfers, tracing,
// syncs, host fallback ops measured for real, and the device time of the
// instructions that ran).
//
//===----------------------------------------------------------------------===//
#include "kernels/Registry.h"
#include "tools/seam-import/Import.h"
#include "tools/seam-run/Explain.h"
#include "tools/seam-run/Interrupt.h"
#include "tools/seam-run/Report.h"
#include "tools/seam-run/Session.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace seamrun;
namespace cl = llvm::cl;

static cl::OptionCategory cat("seam-run options");
static cl::opt<std::string> model("model", cl::desc("Bundled model name"),
                                  cl::cat(cat));
static cl::opt<std::string>
    config("config",
           cl::desc("HF-style config.json, or a model directory holding "
                    "one (a diffusers pipeline: its transformer/)"),
           cl::cat(cat));
static cl::opt<std::string> nameOpt(
    "name",
    cl::desc("Import: the name the model records (default: the bundled "
             "name, or the config's file or model directory; for a "
             "diffusers transformer/ directory, the repository around it)"),
    cl::cat(cat));
static cl::opt<std::string> irFile(cl::Positional,
                                   cl::desc("[model.mlir | model.onnx]"),
                                   cl::init(""), cl::cat(cat));
static cl::list<std::string>
    shapes("shape",
           cl::desc("ONNX model: the shape of a graph input, name=AxBxC "
                    "(fixes its symbolic dimensions)"),
           cl::cat(cat));
static cl::opt<std::string> importArgs("import-args", cl::Hidden,
                                       cl::desc("Removed: give the model "
                                                "options to seam-run"),
                                       cl::cat(cat));
static cl::opt<long long>
    layers("layers",
           cl::desc("Import: number of blocks (flux: the first N, "
                    "double-stream first)"),
           cl::cat(cat));
static cl::opt<long long> seq("seq",
                              cl::desc("Import: sequence length (flux: image "
                                       "tokens)"),
                              cl::cat(cat));
static cl::opt<long long>
    txtSeq("txt-seq", cl::desc("Import: flux text tokens"), cl::cat(cat));
static cl::opt<long long> batch("batch", cl::desc("Import: batch size"),
                                cl::cat(cat));
static cl::opt<std::string>
    dtype("dtype", cl::desc("Import: f32 or bf16 (default: the config's)"),
          cl::cat(cat));
static cl::opt<std::string>
    fourier("fourier",
            cl::desc("Import: FNet mixing, exact (default) or seed "
                     "(the source's two padded 1-D FFTs)"),
            cl::cat(cat));
static cl::opt<int> tp("tp",
                       cl::desc("Tensor-parallel degree: an import is sharded "
                                "for it; a .mlir file has its own (seam.tp), "
                                "which this must match (default: 1)"),
                       cl::init(1), cl::cat(cat));
static cl::opt<std::string> mode("mode",
                                 cl::desc("eager or compile (default: "
                                          "compile)"),
                                 cl::init("compile"), cl::cat(cat));
static cl::list<std::string>
    kernels("kernels", cl::desc("Kernels to insert, comma separated"),
            cl::cat(cat));
static cl::opt<std::string> target("target",
                                   cl::desc("trn1 or trn2 (default: trn1)"),
                                   cl::init("trn1"), cl::cat(cat));
static cl::opt<int> steps("steps", cl::desc("Steps per run (default: 3)"),
                          cl::init(3), cl::cat(cat));
static cl::opt<int> runs("runs",
                         cl::desc("Runs: the first cold, then warm against "
                                  "the compile cache (default: 2)"),
                         cl::init(2), cl::cat(cat));
static cl::opt<bool>
    functional("functional",
               cl::desc("Execute on real data (default: timing-only)"),
               cl::cat(cat));
static cl::opt<bool> checkHazards(
    "check-hazards",
    cl::desc("Check every launch for accesses the program does not order "
             "(RAW/WAR/WAW, interleaved PSUM groups); a hazard fails the "
             "run (default: on with --functional, off in timing-only runs)"),
    cl::cat(cat));
static cl::opt<std::string> dumpPrograms(
    "dump-programs",
    cl::desc("Write each compiled program's instruction listing (per engine, "
             "by pc: what fault and hazard reports name) and the scheduled "
             "ncore IR into this directory"),
    cl::value_desc("dir"), cl::cat(cat));
static cl::opt<bool>
    timingOnly("timing-only",
               cl::desc("Simulate time only, no data (the default)"),
               cl::cat(cat));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Compile cache directory, kept across invocations (default: a "
             "fresh one in the temp directory, removed at exit, so the first "
             "run is cold); its parent must exist"),
    cl::cat(cat));
static cl::opt<std::string>
    traceFile("trace", cl::desc("Chrome/Perfetto trace JSON"), cl::cat(cat));
static cl::opt<std::string> traceDetail(
    "trace-detail",
    cl::desc("launch (a span per launch), engine (per engine and DMA "
             "queue, loop iterations as one span; the default) or "
             "instruction (every instruction)"),
    cl::init("engine"), cl::cat(cat));
static cl::list<unsigned>
    traceRanks("trace-ranks", cl::CommaSeparated,
               cl::desc("Ranks (cores) to trace, e.g. 0,1 (default: all)"),
               cl::cat(cat));
static cl::opt<std::string> traceProgram(
    "trace-program",
    cl::desc("With --trace-detail instruction: only this program's "
             "instructions (the others at engine detail)"),
    cl::cat(cat));
static cl::opt<std::string>
    traceSteps("trace-steps",
               cl::desc("Steps of the last run to trace: last (default), "
                        "all, or a step number from 1"),
               cl::init("last"), cl::cat(cat));
static cl::opt<std::string> jsonFile("json", cl::desc("Results as JSON"),
                                     cl::cat(cat));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write the step's outputs as .npy (functional)"),
              cl::cat(cat));
static cl::list<std::string>
    inputs("input",
           cl::desc("A step input from .npy: name=file.npy (functional)"),
           cl::cat(cat));
static cl::opt<bool> noLaunch("no-launch-overhead",
                              cl::desc("Ablation: no launch overhead"),
                              cl::cat(cat));
static cl::opt<bool> noFirstRun("no-first-run",
                                cl::desc("Ablation: no first-run overhead"),
                                cl::cat(cat));
static cl::opt<bool> noTransfers("no-transfers",
                                 cl::desc("Ablation: no PCIe transfers"),
                                 cl::cat(cat));
static cl::opt<bool> noTracing("no-tracing",
                               cl::desc("Ablation: no lazy tracing cost"),
                               cl::cat(cat));
static cl::opt<bool> noKernelCallHost(
    "no-kernel-call-host",
    cl::desc("Ablation: no framework host time per kernel call "
             "(kernel_call_host_ns: per call per step in eager mode, once "
             "per compile in compile mode)"),
    cl::cat(cat));
static cl::opt<bool>
    noSync("no-sync",
           cl::desc("Ablation: the host does not wait for the device at "
                    "graph breaks (it still does at the "
                    "step's end)"),
           cl::cat(cat));
static cl::opt<bool> noSharing(
    "no-program-sharing",
    cl::desc("Ablation: compile identical regions as distinct programs"),
    cl::cat(cat));
static cl::opt<std::string> kernelBoundary(
    "kernel-boundary",
    cl::desc("A kernel call's boundary inside a program (compile mode): "
             "barrier (every engine drains before and after it) or "
             "dependency (it waits only for the work it conflicts with, and "
             "only conflicting work waits for it); default: barrier"),
    cl::init("barrier"), cl::cat(cat));
static cl::opt<bool> explain(
    "explain-kernels",
    cl::desc("After the run, split each class of kernel sites' step delta "
             "into body, HBM round trip, lost fusion, lost overlap and "
             "launch + host, by counterfactual compiles (also in --json)"),
    cl::cat(cat));
static cl::opt<bool> reference(
    "reference",
    cl::desc("With --functional: evaluate the model in float64 on the run's "
             "inputs and compare every output (rel-L2 <= 1e-5, or 1e-2 with "
             "bf16 on its path); a mismatch fails the run (also in --json)"),
    cl::cat(cat));
static cl::opt<std::string>
    framework("framework", cl::desc("Framework (host) profile"), cl::cat(cat));
static cl::list<std::string>
    setFigures("set", cl::desc("Override a profile figure: name=value"),
               cl::cat(cat));
static cl::opt<bool> quiet("quiet", cl::desc("Only the summary table"),
                           cl::cat(cat));
static cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("The compile's threads: 1 compiles on the main thread alone, "
             "as each point of a sweep does (the points run side by side); "
             "default 0: one per core. The figures do not depend on it"),
    cl::init(0), cl::cat(cat));

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // Ctrl-C or SIGTERM: remove the temporary compile caches, say so, exit 130
  // (143 for SIGTERM). After InitLLVM, whose handlers this replaces for
  // these signals only.
  installInterruptCleanup("seam-run");
  cl::HideUnrelatedOptions(cat);
  // The bundled models, from the importer's own list.
  static const std::string modelHelp =
      "Bundled model: " + seamimport::bundledModelNames() +
      " (seam-import --list-models)";
  model.setDescription(modelHelp);
  static const std::string kernelHelp =
      "Kernels to insert, comma separated: " + mlir::seam::knownKernelNames() +
      "; auto or auto:a,b lets the compiler decide per site (default: none)";
  kernels.setDescription(kernelHelp);
  static const std::string frameworkHelp =
      "Framework (host) profile, the software stack's host costs (tracing, "
      "graph lookup, launch, sync, transfers, kernel-call host time): " +
      seam::rt::FrameworkProfile::builtinNames() +
      " or a framework profile file (default: " +
      seam::rt::FrameworkProfile::kDefault + ")";
  framework.setDescription(frameworkHelp);
  cl::ParseCommandLineOptions(argc, argv,
                              "seam-run: compile a model and run it on the "
                              "emulated NeuronCore\n");
  SessionOptions o;
  o.model = model;
  o.config = config;
  o.input = irFile;
  o.shapes.assign(shapes.begin(), shapes.end());
  o.name = nameOpt;
  o.importArgs = importArgs;
  for (auto [opt, dst] : {std::pair{&layers, &o.layers},
                          {&seq, &o.seq},
                          {&txtSeq, &o.txtSeq},
                          {&batch, &o.batch}})
    if (opt->getNumOccurrences())
      *dst = opt->getValue();
  o.dtype = dtype;
  o.fourier = fourier;
  o.tp = tp;
  o.tpGiven = tp.getNumOccurrences() > 0;
  ChoiceText choices;
  choices.mode = mode;
  o.kernels.assign(kernels.begin(), kernels.end());
  choices.target = target;
  o.steps = steps;
  o.runs = runs;
  if (functional && timingOnly) {
    llvm::errs() << "seam-run: --functional and --timing-only exclude each "
                    "other\n";
    return 1;
  }
  o.exec = functional ? Exec::Functional : Exec::Timing;
  if (checkHazards.getNumOccurrences())
    o.checkHazards = bool(checkHazards);
  o.cacheDir = cacheDir;
  o.traceFile = traceFile;
  o.jsonFile = jsonFile;
  choices.traceDetail = traceDetail;
  o.traceRanks.assign(traceRanks.begin(), traceRanks.end());
  o.traceProgram = traceProgram;
  o.traceSteps = traceSteps;
  o.inputs.assign(inputs.begin(), inputs.end());
  o.outputDir = outputDir;
  o.dumpDir = dumpPrograms;
  o.costs.launchOverhead = !noLaunch;
  o.costs.firstRun = !noFirstRun;
  o.costs.transfers = !noTransfers;
  o.costs.tracing = !noTracing;
  o.costs.kernelCallHost = !noKernelCallHost;
  o.graphBreakSyncs = !noSync;
  o.programSharing = !noSharing;
  choices.kernelBoundary = kernelBoundary;
  o.framework = framework;
  o.figureOverrides.assign(setFigures.begin(), setFigures.end());
  o.toolPath = argv[0];
  o.threads = compileThreads;

  if (seam::rt::Status valid = validate(o, choices); !valid) {
    llvm::errs() << "seam-run: " << valid.error() << "\n";
    return 1;
  }
  // (After validate(), which puts the kernel list in its one form.) An
  // option that only means something with another one is an error
  // without it, whatever its value (--trace-steps last without --trace is
  // as much a slip as --input without --functional).
  bool compileWithKernels =
      o.mode != mlir::seam::RegionMode::Eager && !o.kernels.empty();
  const struct {
    const cl::Option &option;
    bool satisfied;
    const char *needs;
  } needs[] = {
      {traceDetail, !traceFile.empty(), "--trace FILE"},
      {traceRanks, !traceFile.empty(), "--trace FILE"},
      {traceProgram, !traceFile.empty(), "--trace FILE"},
      {traceSteps, !traceFile.empty(), "--trace FILE"},
      {inputs, bool(functional),
       "--functional (timing-only runs carry no data)"},
      {outputDir, bool(functional),
       "--functional (timing-only runs carry no data)"},
      {reference, bool(functional),
       "--functional (a timing-only run computes no values to compare)"},
      {explain, !o.kernels.empty(),
       "--kernels (the kernels whose sites it explains)"},
      {kernelBoundary, compileWithKernels,
       "--kernels in compile mode (in eager mode each kernel call is a "
       "launch of its own, with no boundary inside a program)"},
  };
  for (const auto &n : needs)
    if (n.option.getNumOccurrences() && !n.satisfied) {
      llvm::errs() << "seam-run: --" << n.option.ArgStr << " needs " << n.needs
                   << "\n";
      return 1;
    }
  Session session(o);
  auto result = session.run();
  if (!result) {
    llvm::errs() << "seam-run: " << result.error() << "\n";
    return 1;
  }
  if (explain) {
    auto e = explainKernels(result->options);
    if (!e) {
      llvm::errs() << "seam-run: " << e.error() << "\n";
      return 1;
    }
    result->explanation = std::move(*e);
  }
  if (reference) {
    auto text = modelText(o, [](const std::string &) {});
    if (!text) {
      llvm::errs() << "seam-run: " << text.error() << "\n";
      return 1;
    }
    auto checked = checkAgainstReference(
        *text, result->stepInputs, result->stepOutputs, result->options.tp);
    if (!checked) {
      llvm::errs() << "seam-run: --reference: " << checked.error() << "\n";
      return 1;
    }
    result->reference = std::move(*checked);
  }
  printReport(*result, llvm::outs(), quiet);
  if (!jsonFile.empty()) {
    seam::rt::Status written = writeJson(*result, jsonFile);
    if (!written) {
      llvm::errs() << "seam-run: " << written.error() << "\n";
      return 1;
    }
  }
  if (result->reference && !result->reference->pass())
    return 1;
  // A fault or hazard means the step's numbers are not those of a correct
  // run: the report says which, the exit status says it failed.
  return result->faults.empty() ? 0 : 1;
}
