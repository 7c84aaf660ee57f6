//===- seam-smith.cpp - differential random-graph tester ------------------===//
//
// Generates random valid seam graphs from a seed, runs each as `seam-run
// --functional --reference` would (in process: the SeamRunSession library),
// and fails a graph on a compile error, a fault or hazard of the emulated
// device, or an output beyond the reference's tolerance. A failure is
// reduced (ops deleted, sizes shrunk, options made plainer while it fails
// the same way) and written to --out as a .mlir file whose RUN line is the
// lit test it becomes once fixed.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-run/Reference.h"
#include "tools/seam-run/Session.h"
#include "tools/seam-smith/Generate.h"
#include "tools/seam-smith/Reduce.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cstdlib>
#include <map>

using namespace smith;
namespace cl = llvm::cl;
namespace rt = ::seam::rt;

static cl::OptionCategory cat("seam-smith options");
static cl::opt<uint64_t> seedOpt("seed", cl::desc("Seed of the run"),
                                 cl::init(1), cl::cat(cat));
static cl::opt<int64_t> countOpt("count", cl::desc("Graphs to run"),
                                 cl::init(100), cl::cat(cat));
static cl::opt<int64_t>
    firstOpt("first",
             cl::desc("Index of the first graph (graph i of a seed is the "
                      "same graph in every run)"),
             cl::init(0), cl::cat(cat));
static cl::opt<double>
    timeLimit("time-limit",
              cl::desc("Stop starting graphs after this many seconds"),
              cl::init(0), cl::cat(cat));
static cl::opt<std::string>
    outDir("out", cl::desc("Write reduced reproducers (.mlir) here"),
           cl::cat(cat));
static cl::opt<bool> keepGoing("keep-going",
                               cl::desc("Go on after the first failure"),
                               cl::cat(cat));
static cl::opt<int> reduceBudget(
    "reduce-budget",
    cl::desc("Runs the reducer may spend on one failure (0: no reduction)"),
    cl::init(400), cl::cat(cat));
static cl::opt<bool> dump("dump", cl::desc("Print every graph's MLIR text"),
                          cl::cat(cat));
static cl::opt<bool> verbose("verbose",
                             cl::desc("One line per graph: its outcome"),
                             cl::cat(cat));

namespace {

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

enum class Outcome {
  Pass,
  Invalid,        ///< the generator made a graph it should not have
  CompileError,   ///< the compiler refused a graph it should accept
  RunError,       ///< loading or launching failed
  Fault,          ///< a fault or hazard of the emulated device
  Mismatch,       ///< an output beyond the reference's tolerance
  ReferenceError, ///< the reference could not evaluate the graph
};

const char *name(Outcome o) {
  switch (o) {
  case Outcome::Pass:
    return "pass";
  case Outcome::Invalid:
    return "invalid-graph";
  case Outcome::CompileError:
    return "compile-error";
  case Outcome::RunError:
    return "run-error";
  case Outcome::Fault:
    return "fault";
  case Outcome::Mismatch:
    return "mismatch";
  case Outcome::ReferenceError:
    return "reference-error";
  }
  return "?";
}

struct Result {
  Outcome outcome = Outcome::Pass;
  std::string message; ///< what failed, one or more lines
  /// What must stay the same while reducing: the outcome and, for errors,
  /// the first error line with its numbers taken out.
  std::string signature;
};

/// `text` without digits (sizes and locations change as a graph shrinks).
std::string normalized(llvm::StringRef text) {
  std::string s;
  bool digit = false;
  for (char c : text) {
    bool d = c >= '0' && c <= '9';
    if (d && !digit)
      s += 'N';
    else if (!d)
      s += c;
    digit = d;
  }
  return s;
}

/// The first line of `message` that says "error:" (else its first line),
/// from the error on.
std::string firstError(const std::string &message) {
  llvm::StringRef m(message);
  size_t at = m.find("error: ");
  llvm::StringRef line = at == llvm::StringRef::npos
                             ? m.split('\n').first
                             : m.substr(at + 7).split('\n').first;
  return line.str();
}

// The graph being run, for the crash handler.
std::string crashText;

void onCrash(void *) {
  if (!crashText.empty())
    llvm::errs() << "\nseam-smith: crashed while running this graph:\n"
                 << crashText << "\n";
}

class Smith {
public:
  explicit Smith(std::string cacheDir) : cacheDir(std::move(cacheDir)) {}

  Result run(const Graph &g) {
    Result r;
    std::string text = g.print();
    crashText = "// RUN: seam-run %s " + g.flags() + "\n" + text;
    seamrun::SessionOptions o;
    o.irText = text;
    o.quietWarnings = true;
    o.tp = g.tp;
    seamrun::ChoiceText choices;
    choices.mode = g.mode;
    choices.target = g.target;
    choices.kernelBoundary = g.boundary;
    o.kernels = g.kernels;
    o.steps = 1;
    o.runs = 1;
    o.exec = seamrun::Exec::Functional;
    o.cacheDir = cacheDir;
    if (rt::Status valid = seamrun::validate(o, choices); !valid)
      return fail(Outcome::Invalid, valid.error());
    seamrun::Session session(o);
    double t0 = nowSeconds();
    auto res = session.run();
    sessionSeconds += nowSeconds() - t0;
    crashText.clear();
    if (!res) {
      const std::string &m = res.error();
      llvm::StringRef e(m);
      if (e.contains("does not parse"))
        return fail(Outcome::Invalid, m);
      bool compile = e.starts_with("graph pipeline failed") ||
                     e.starts_with("lowering failed") ||
                     e.starts_with("code generation of") ||
                     e.starts_with("building kernel") ||
                     e.starts_with("no ncore.program") ||
                     e.starts_with("lowering produced");
      return fail(compile ? Outcome::CompileError : Outcome::RunError, m);
    }
    ++compiled;
    for (auto &[kernel, n] : res->kernelsByName)
      kernelCalls[kernel] += n;
    hostOps += res->hostOps;
    if (!res->faults.empty()) {
      std::string m;
      for (size_t i = 0; i < res->faults.size() && i < 4; ++i)
        m += (i ? "\n" : "") + res->faults[i];
      r = fail(Outcome::Fault, m);
      r.signature = name(Outcome::Fault);
      return r;
    }
    t0 = nowSeconds();
    auto checked = seamrun::checkAgainstReference(
        text, res->stepInputs, res->stepOutputs, res->options.tp);
    referenceSeconds += nowSeconds() - t0;
    if (!checked)
      return fail(Outcome::ReferenceError, checked.error());
    if (!checked->pass()) {
      std::string m;
      for (const seamrun::ReferenceOutput &out : checked->outputs)
        if (!out.pass)
          m += llvm::formatv(
                   "{0}{1} {2}: rel-L2 {3:e2} > {4:e0}, max abs "
                   "{5:e2}{6}",
                   m.empty() ? "" : "\n", out.name,
                   mlir::seam::describeShape(out.shape), out.relL2,
                   out.tolerance, out.maxAbs,
                   out.nonFinite
                       ? llvm::formatv(", {0} non-finite", out.nonFinite).str()
                       : std::string())
                   .str();
      r = fail(Outcome::Mismatch, m);
      r.signature = name(Outcome::Mismatch);
      return r;
    }
    return r;
  }

  /// Wall time in the session (compile and run) and in the reference.
  double sessionSeconds = 0, referenceSeconds = 0;
  /// Coverage: graphs that compiled and ran, the kernel calls and host
  /// fallback ops their steps held.
  int64_t compiled = 0, hostOps = 0;
  std::map<std::string, int64_t> kernelCalls;

private:
  std::string cacheDir;

  static Result fail(Outcome o, const std::string &message) {
    Result r;
    r.outcome = o;
    r.message = message;
    r.signature = std::string(name(o)) + ": " + normalized(firstError(message));
    return r;
  }
};

std::string indent(const std::string &text, const std::string &prefix) {
  std::string out;
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    out += prefix + line.str() + "\n";
    rest = tail;
  }
  return out;
}

/// The reproducer: a lit test (RUN line), what failed, the graph.
std::string reproducer(const Graph &g, uint64_t seed, int64_t index,
                       const Result &r, int opsBefore) {
  std::string s = "// RUN: seam-run %s " + g.flags() + "\n";
  s += llvm::formatv("// seam-smith --seed {0} --first {1} --count 1: {2} "
                     "(reduced from {3} to {4} ops)\n",
                     seed, index, name(r.outcome), opsBefore, g.opCount())
           .str();
  s += indent(r.message.substr(0, 2000), "// ");
  return s + g.print();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "seam-smith: random seam graphs, run on the emulated device and "
      "checked against the float64 reference\n");
  llvm::sys::AddSignalHandler(onCrash, nullptr);
  if (!outDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
      llvm::errs() << "seam-smith: --out '" << outDir << "': " << ec.message()
                   << "\n";
      return 1;
    }
  // One compile cache for the run, removed at the end.
  llvm::SmallString<128> cache;
  if (llvm::sys::fs::createUniqueDirectory("seam-smith-cache", cache)) {
    llvm::errs() << "seam-smith: cannot create a cache directory\n";
    return 1;
  }
  struct Cleanup {
    std::string path;
    // Best effort at exit: a cache left behind is only disk space.
    ~Cleanup() {
      if (std::error_code ec = llvm::sys::fs::remove_directories(path))
        (void)ec;
    }
  } cleanup{std::string(cache)};

  Smith tester{std::string(cache)};
  std::map<Outcome, int64_t> counts;
  std::map<std::string, int64_t> opsGenerated;
  double start = nowSeconds(), reduceSeconds = 0;
  int64_t ran = 0, failures = 0;
  for (int64_t i = firstOpt; i < firstOpt + countOpt; ++i) {
    if (timeLimit > 0 && nowSeconds() - start >= timeLimit)
      break;
    uint64_t gseed = graphSeed(seedOpt, uint64_t(i));
    Graph g = generate(gseed);
    for (const Node &n : g.nodes)
      if (!n.dead && n.op != Op::Input)
        ++opsGenerated[opName(n.op)];
    std::string why = g.infer();
    if (dump && why.empty())
      llvm::outs() << "// graph " << i << ": " << g.summary() << "\n"
                   << g.print();
    if (dump || verbose)
      llvm::outs().flush();
    Result r;
    if (!why.empty())
      r = Result{Outcome::Invalid, "generator: " + why, "invalid"};
    else
      r = tester.run(g);
    ++ran;
    ++counts[r.outcome];
    if (verbose)
      llvm::outs() << llvm::formatv("graph {0}: {1}: {2}\n", i, name(r.outcome),
                                    g.summary());
    if (r.outcome == Outcome::Pass)
      continue;
    ++failures;
    llvm::outs() << llvm::formatv("FAIL graph {0} (--seed {1} --first {0} "
                                  "--count 1): {2}: {3}\n",
                                  i, seedOpt.getValue(), name(r.outcome),
                                  g.summary());
    llvm::outs() << indent(r.message.substr(0, 1500), "  ");
    if (!why.empty()) {
      llvm::outs().flush();
      if (!keepGoing)
        break;
      continue;
    }
    double r0 = nowSeconds();
    Graph small = g;
    int tries = 0;
    if (reduceBudget > 0 && r.outcome != Outcome::Invalid)
      small = reduce(
          g,
          [&](const Graph &c) {
            return tester.run(c).signature == r.signature;
          },
          reduceBudget, &tries);
    reduceSeconds += nowSeconds() - r0;
    Result last = small.opCount() == g.opCount() ? r : tester.run(small);
    std::string repro = reproducer(small, seedOpt, i, last, g.opCount());
    llvm::outs() << llvm::formatv("  reduced to {0} ops in {1} runs ({2:F1} "
                                  "s): {3}\n",
                                  small.opCount(), tries, nowSeconds() - r0,
                                  small.summary());
    if (!outDir.empty()) {
      std::string path =
          (llvm::Twine(outDir) + "/smith-s" + llvm::Twine(seedOpt.getValue()) +
           "-g" + llvm::Twine(i) + ".mlir")
              .str();
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      if (ec)
        llvm::errs() << "seam-smith: cannot write '" << path
                     << "': " << ec.message() << "\n";
      else
        os << repro;
      llvm::outs() << "  reproducer: " << path << "\n";
    } else {
      llvm::outs() << indent(repro, "  | ");
    }
    llvm::outs().flush();
    if (!keepGoing)
      break;
  }
  double seconds = nowSeconds() - start;
  double running = seconds - reduceSeconds;
  llvm::outs() << llvm::formatv(
      "seam-smith: seed {0}: {1} graphs in {2:F1} s ({3:F0} graphs/minute "
      "excluding {4:F1} s of reduction):",
      seedOpt.getValue(), ran, seconds,
      running > 0 ? 60.0 * double(ran) / running : 0.0, reduceSeconds);
  for (Outcome o : {Outcome::Pass, Outcome::Invalid, Outcome::CompileError,
                    Outcome::RunError, Outcome::Fault, Outcome::Mismatch,
                    Outcome::ReferenceError})
    llvm::outs() << " " << name(o) << " " << counts[o];
  llvm::outs() << llvm::formatv("\n  time: {0:F1} s in sessions (compile "
                                "and run), {1:F1} s in the reference\n",
                                tester.sessionSeconds, tester.referenceSeconds);
  llvm::outs() << "  coverage: " << tester.compiled
               << " graphs ran; ops generated:";
  for (auto &[op, n] : opsGenerated)
    llvm::outs() << " " << op << " " << n;
  llvm::outs() << "; kernel calls:";
  for (auto &[k, n] : tester.kernelCalls)
    llvm::outs() << " " << k << " " << n;
  llvm::outs() << "; host fallback ops " << tester.hostOps << "\n";
  return failures ? 1 : 0;
}
