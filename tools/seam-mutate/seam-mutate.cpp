//===- seam-mutate.cpp - Mutation test of the hazard checker --------------===//
//
// Takes the programs seam emits for small configurations of the bundled
// models (whole-step programs, eager per-block programs and the kernels),
// drops or weakens one semaphore wait at a time (a sample), runs each
// mutant, and asks three questions:
//   - did the hazard checker report it (runtime/HazardChecker.h)?
//   - did it change the order of a dependent pair? An independent oracle
//     answers from the run's access log: two accesses of different streams
//     (any DMA transfer counts as its own) that share an element byte, one
//     of them a write, whose windows overlap in time. The oracle walks
//     elements one by one, not the checker's merged runs.
//   - did it change the output (a functional run, bitwise)?
// It prints the detection rate (reported / order-changing), the false
// alarms (reported, no changed order), and every mutant that changed the
// output without a report. Exit status 1 when the rate is below --min-rate,
// there is a false alarm, or an original program already has a hazard.
//
//===----------------------------------------------------------------------===//

#include "runtime/Functional.h"
#include "runtime/Host.h"
#include "runtime/HostCache.h"
#include "runtime/ProgramFile.h"
#include "tools/seam-run/Compiler.h"
#include "tools/seam-run/Session.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <set>

using namespace llvm;
namespace rt = seam::rt;

static cl::OptionCategory cat("seam-mutate options");
static cl::opt<unsigned> sample("sample",
                                cl::desc("Mutants to run (spread over the "
                                         "programs)"),
                                cl::init(400), cl::cat(cat));
static cl::opt<unsigned> seed("seed", cl::desc("Sampling seed"), cl::init(1),
                              cl::cat(cat));
static cl::opt<double> minRate("min-rate",
                               cl::desc("Fail below this detection rate"),
                               cl::init(0.95), cl::cat(cat));
static cl::opt<std::string>
    fluxConfig("flux-config",
               cl::desc("Flux config for the flux configurations (default: "
                        "the bundled flux2-klein, cut to --layers 1, seq "
                        "128)"),
               cl::init(""), cl::cat(cat));
static cl::opt<bool> verbose("v", cl::desc("One line per mutant"),
                             cl::cat(cat));

namespace {

struct Config {
  std::string label;
  seamrun::SessionOptions opts;
};

std::vector<Config> configs() {
  std::vector<Config> out;
  auto add = [&](std::string label, const std::string &model,
                 const std::string &mode, std::vector<std::string> kernels,
                 int64_t layers, int64_t seq,
                 const std::string &target = "trn2") {
    Config c;
    c.label = std::move(label);
    if (model == "flux2-klein" && !fluxConfig.empty())
      c.opts.config = fluxConfig;
    else
      c.opts.model = model;
    c.opts.mode = *seamrun::parseMode(mode); // the literals below
    c.opts.kernels = std::move(kernels);
    bool tiny = model == "flux2-klein" && !fluxConfig.empty();
    if (!tiny) // a small config keeps its own blocks and lengths
      c.opts.layers = layers;
    if (!tiny)
      c.opts.seq = seq;
    if (model == "flux2-klein" && !tiny)
      c.opts.txtSeq = 128;
    c.opts.target = *seamrun::parseTarget(target); // the literals below
    out.push_back(std::move(c));
  };
  add("flux compile", "flux2-klein", "compile", {}, 1, 128);
  add("flux compile qkv+rope+flash-attn", "flux2-klein", "compile",
      {"qkv", "rope", "flash-attn"}, 1, 128);
  add("flux eager qkv+flash-attn-stable", "flux2-klein", "eager",
      {"qkv", "flash-attn-stable"}, 1, 128, "trn1");
  add("fnet compile fourier-mix", "fnet-base", "compile", {"fourier-mix"}, 1,
      128);
  add("fnet eager fft+ifft", "fnet-base", "eager", {"fft", "ifft"}, 1, 128);
  add("hyena compile fftconv", "hyena", "compile", {"fftconv"}, 1, 1024);
  return out;
}

/// The inputs and host-computed parameters of a program: uniform in
/// [-1, 1) and [-0.05, 0.05), deterministic.
rt::TensorMap inputsOf(const rt::Program &p) {
  rt::TensorMap in;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const rt::Binding &b : p.bindings) {
    bool param = b.role == rt::BindingRole::Param;
    if (b.role != rt::BindingRole::Input && !param)
      continue;
    rt::HostTensor t;
    t.shape = b.shape;
    t.data.resize(b.numElements());
    for (float &v : t.data)
      v = dist(gen) * (param ? 0.05f : 1.0f);
    in[b.name] = std::move(t);
  }
  return in;
}

struct RunOut {
  std::string error; ///< a load error or a (non-hazard) fault
  rt::TensorMap outputs;
  uint64_t hazards = 0;
  std::string firstHazard;
  std::vector<rt::AccessRecord> log;
  bool deadlock = false;
};

/// One launch of `p` on a fresh one-core device.
rt::Expected<rt::LaunchResult> launchOnce(const rt::Program &p,
                                          const rt::TensorMap &inputs,
                                          rt::ExecMode mode, bool check,
                                          std::vector<rt::AccessRecord> *log) {
  rt::DeviceOptions o;
  o.mode = mode;
  o.cores = 1;
  o.collectEvents = false;
  o.checkHazards = check;
  o.accessLog = log;
  rt::Device d(rt::Profile::builtin(p.target), o);
  auto id = d.loadProgram(p);
  if (!id)
    return rt::Expected<rt::LaunchResult>::failure(id.error());
  return d.launch(*id, inputs);
}

/// A functional run without the checker (the outputs), then a timing-only
/// run with the checker and the access log (the same timeline: the
/// functional model never changes time).
RunOut runProgram(const rt::Program &p, const rt::TensorMap &inputs) {
  RunOut out;
  auto f = launchOnce(p, inputs, rt::ExecMode::Functional, false, nullptr);
  if (!f) {
    out.error = f.error();
    return out;
  }
  if (f->fault) {
    out.deadlock = f->fault->message.find("deadlock") != std::string::npos;
    out.error = f->fault->str();
    return out;
  }
  if (!f->outputs.empty())
    out.outputs = f->outputs[0];
  auto t = launchOnce(p, inputs, rt::ExecMode::TimingOnly, true, &out.log);
  if (!t) {
    out.error = t.error();
    return out;
  }
  out.hazards = t->hazardCount;
  if (!t->hazards.empty())
    out.firstHazard = t->hazards.front().str();
  return out;
}

//===- The oracle ---------------------------------------------------------===//

/// Every element's bytes of an access: (partition, byte) starts, sorted.
/// HBM: partition 0, bytes from the program's HBM base.
std::vector<std::pair<uint32_t, int64_t>>
elementsOf(const rt::Program &p, const rt::AccessRecord &r, int64_t &elem) {
  const rt::AccessPattern &ap = r.ap;
  elem = static_cast<int64_t>(rt::byteSize(ap.dtype));
  int64_t base = ap.offset;
  for (unsigned d = 0; d < r.depth; ++d)
    base += ap.loopStep[d] * static_cast<int64_t>(r.iters[d]);
  bool hbm = ap.space == rt::MemSpace::Hbm;
  if (hbm)
    base += static_cast<int64_t>(p.bindings[ap.binding].hbmOffset);
  std::vector<std::pair<uint32_t, int64_t>> out;
  std::array<uint32_t, rt::kMaxFreeDims> idx{};
  for (uint32_t row = 0; row < ap.partitions; ++row) {
    idx.fill(0);
    while (true) {
      int64_t off = 0;
      for (unsigned d = 0; d < ap.numDims; ++d)
        off += static_cast<int64_t>(idx[d]) * ap.dims[d].stride * elem;
      if (hbm)
        out.push_back({0, base + row * ap.partitionStride * elem + off});
      else
        out.push_back({ap.partitionStart + row, base + off});
      int d = int(ap.numDims) - 1;
      while (d >= 0 && ++idx[d] == ap.dims[d].size)
        idx[d--] = 0;
      if (d < 0)
        break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool elementsMeet(const std::vector<std::pair<uint32_t, int64_t>> &a,
                  int64_t ea,
                  const std::vector<std::pair<uint32_t, int64_t>> &b,
                  int64_t eb) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].first != b[j].first) {
      (a[i].first < b[j].first ? i : j)++;
      continue;
    }
    int64_t lo = std::max(a[i].second, b[j].second);
    int64_t hi = std::min(a[i].second + ea, b[j].second + eb);
    if (lo < hi)
      return true;
    (a[i].second + ea <= b[j].second + eb ? i : j)++;
  }
  return false;
}

/// Whether two accesses of different ordering domains that share a byte,
/// one a write, overlap in time in the logged run.
uint64_t oracleConflicts(const rt::Program &p,
                         const std::vector<rt::AccessRecord> &log) {
  // Accesses in issue order; the active ones per memory space.
  uint64_t found = 0;
  std::map<int, std::vector<size_t>> active;
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> elems(log.size());
  std::vector<int64_t> esz(log.size(), 0);
  std::vector<char> have(log.size(), 0);
  auto get =
      [&](size_t i) -> const std::vector<std::pair<uint32_t, int64_t>> & {
    if (!have[i]) {
      elems[i] = elementsOf(p, log[i], esz[i]);
      have[i] = 1;
    }
    return elems[i];
  };
  auto hull = [&](size_t i) {
    const auto &e = get(i);
    return std::make_pair(e.front(), e.back());
  };
  for (size_t i = 0; i < log.size(); ++i) {
    const rt::AccessRecord &a = log[i];
    auto &list = active[int(a.ap.space)];
    std::vector<size_t> keep;
    bool aDma = a.engine == rt::Engine::Dma || a.engine == rt::Engine::Sync;
    for (size_t j : list) {
      const rt::AccessRecord &b = log[j];
      if (b.endNs <= a.issueNs) {
        std::vector<std::pair<uint32_t, int64_t>>().swap(elems[j]);
        continue;
      }
      keep.push_back(j);
      if (!a.write && !b.write)
        continue;
      if (a.issueNs == b.issueNs && a.pc == b.pc && a.engine == b.engine &&
          a.iters == b.iters)
        continue; // the same instruction's own operands
      bool bDma = b.engine == rt::Engine::Dma || b.engine == rt::Engine::Sync;
      if (!aDma && !bDma && a.engine == b.engine)
        continue; // one compute engine's in-order pipeline
      auto [alo, ahi] = hull(i);
      auto [blo, bhi] = hull(j);
      if (ahi < blo || bhi < alo)
        continue;
      if (elementsMeet(get(i), esz[i], get(j), esz[j]))
        ++found;
    }
    keep.push_back(i);
    list = std::move(keep);
  }
  return found;
}

struct Mutation {
  rt::Engine engine;
  uint32_t pc;
  unsigned wait;
  bool drop; ///< else weaken by one
};

std::string describe(const rt::Program &p, const Mutation &m) {
  const rt::Instruction &inst = p.streams[unsigned(m.engine)][m.pc];
  const rt::SemWaitSpec &w = inst.waits[m.wait];
  return formatv("{0} {1} pc {2} ({3}) wait s{4}>={5}",
                 m.drop ? "drop" : "weaken", rt::name(m.engine), m.pc,
                 rt::mnemonic(inst.op), w.sem, w.value)
      .str();
}

bool sameOutputs(const rt::TensorMap &a, const rt::TensorMap &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.data.size() != t.data.size() ||
        std::memcmp(it->second.data.data(), t.data.data(),
                    t.data.size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}
} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "seam-mutate: drop or weaken one semaphore wait at a time in seam's "
      "emitted programs and check that the hazard checker reports every "
      "mutant that changes the order of a dependent pair\n");
  auto t0 = std::chrono::steady_clock::now();

  // The programs, compiled in process into a throwaway cache.
  SmallString<128> cacheDir;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("seam-mutate-cache", cacheDir)) {
    errs() << "seam-mutate: cannot create a cache directory: " << ec.message()
           << "\n";
    return 1;
  }
  rt::CompileCache cache(cacheDir.str().str());
  std::vector<std::pair<std::string, rt::Program>> programs;
  std::set<uint64_t> seen;
  for (Config &c : configs()) {
    auto text = seamrun::modelText(c.opts, [](const std::string &) {});
    if (!text) {
      errs() << "seam-mutate: " << c.label << ": " << text.error() << "\n";
      return 1;
    }
    seamrun::Compiler compiler(rt::Profile::builtin(c.opts.target), c.opts.mode,
                               c.opts.kernels, true);
    auto cm = compiler.compile(*text, cache, c.label);
    if (!cm) {
      errs() << "seam-mutate: " << c.label << ": " << cm.error() << "\n";
      return 1;
    }
    for (auto &[name, unit] : cm->units) {
      // A program two configurations share is mutated once.
      if (!seen.insert(rt::programHash(unit.program)).second)
        continue;
      programs.push_back({c.label + " / " + name, unit.program});
    }
  }
  if (std::error_code ec = sys::fs::remove_directories(cacheDir))
    errs() << "seam-mutate: warning: could not remove " << cacheDir << ": "
           << ec.message() << "\n";

  // Originals: outputs, no hazard, and the waits to mutate.
  struct Target {
    std::string name;
    const rt::Program *program;
    rt::TensorMap inputs;
    rt::TensorMap outputs;
    std::vector<Mutation> waits;
  };
  std::vector<Target> targets;
  bool originalHazard = false;
  for (auto &[name, p] : programs) {
    Target t{name, &p, inputsOf(p), {}, {}};
    errs() << "seam-mutate: " << name << " (" << p.instructionCount()
           << " instructions)\n";
    RunOut base = runProgram(p, t.inputs);
    if (!base.error.empty() || base.hazards) {
      outs() << "ORIGINAL " << name << ": "
             << (base.error.empty() ? base.firstHazard : base.error) << "\n";
      originalHazard = true;
      continue;
    }
    if (uint64_t n = oracleConflicts(p, base.log)) {
      outs() << "ORIGINAL " << name << ": the oracle finds " << n
             << " conflict(s) the checker does not\n";
      originalHazard = true;
      continue;
    }
    t.outputs = std::move(base.outputs);
    for (unsigned e = 0; e < rt::kNumEngines; ++e)
      for (auto [pc, inst] : enumerate(p.streams[e]))
        for (unsigned w = 0; w < inst.waits.size(); ++w) {
          t.waits.push_back({rt::Engine(e), uint32_t(pc), w, true});
          if (inst.waits[w].value > 0 && !inst.waits[w].carried)
            t.waits.push_back({rt::Engine(e), uint32_t(pc), w, false});
        }
    targets.push_back(std::move(t));
  }

  // The sample: a share of --sample per program, by its number of waits.
  size_t allWaits = 0;
  for (const Target &t : targets)
    allWaits += t.waits.size();
  std::mt19937_64 gen(seed);
  unsigned ran = 0, changing = 0, detectedChanging = 0, latent = 0,
           outputChanged = 0, deadlocks = 0, errors = 0;
  std::vector<std::string> missed, outputMissed;
  for (Target &t : targets) {
    size_t share =
        allWaits ? std::max<size_t>(1, sample * t.waits.size() / allWaits) : 0;
    std::shuffle(t.waits.begin(), t.waits.end(), gen);
    if (t.waits.size() > share)
      t.waits.resize(share);
    for (const Mutation &m : t.waits) {
      rt::Program mutant = *t.program;
      rt::Instruction &inst = mutant.streams[unsigned(m.engine)][m.pc];
      if (m.drop)
        inst.waits.erase(inst.waits.begin() + m.wait);
      else
        --inst.waits[m.wait].value;
      RunOut r = runProgram(mutant, t.inputs);
      ++ran;
      if (!r.error.empty()) {
        (r.deadlock ? deadlocks : errors)++;
        if (verbose)
          outs() << "  " << t.name << ": " << describe(*t.program, m) << ": "
                 << r.error << "\n";
        continue;
      }
      bool reported = r.hazards > 0;
      bool overlapped = oracleConflicts(mutant, r.log) > 0;
      bool outChanged = !sameOutputs(r.outputs, t.outputs);
      bool orderChanged = overlapped || outChanged;
      changing += orderChanged;
      detectedChanging += reported && orderChanged;
      latent += reported && !orderChanged;
      outputChanged += outChanged;
      std::string what = t.name + ": " + describe(*t.program, m);
      if (overlapped && !reported)
        missed.push_back(what);
      if (outChanged && !reported)
        outputMissed.push_back(what);
      if (verbose)
        outs() << "  " << what << ": "
               << (reported ? "reported" : "not reported")
               << (overlapped ? ", overlapping conflict" : "")
               << (outChanged ? ", output changed" : "") << "\n";
    }
  }
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  double rate = changing ? double(detectedChanging) / changing : 1.0;
  outs() << formatv("seam-mutate: {0} programs, {1} waits; {2} mutants run "
                    "(seed {3}) in {4:F1} s\n",
                    targets.size(), allWaits, ran, unsigned(seed), secs);
  outs() << formatv("  order-changing: {0} (a conflicting pair overlapping in "
                    "time, or the output changed); reported: {1} of them = "
                    "{2:F1}% detection\n",
                    changing, detectedChanging, 100.0 * rate);
  outs() << formatv("  output changed: {0}; of them not reported: {1}\n",
                    outputChanged, outputMissed.size());
  outs() << formatv("  reported with neither (a race this run's timing and "
                    "data did not expose): {0}\n",
                    latent);
  outs() << formatv("  redundant (nothing changed, nothing reported): {0}; "
                    "deadlocks: {1}; other errors: {2}\n",
                    ran - changing - latent - deadlocks - errors, deadlocks,
                    errors);
  // An overlapping conflict the checker misses is a checker bug; an output
  // change without a race is a mutant whose remaining waits still order
  // every pair (the reader now runs before its producer, every time).
  for (const std::string &m : missed)
    outs() << "  MISSED (overlapping conflict, checker bug): " << m << "\n";
  for (const std::string &m : outputMissed)
    outs() << "  NOT REPORTED (output changed, no race: the mutant orders "
              "every pair, the other way): "
           << m << "\n";
  bool ok = !originalHazard && rate >= minRate && missed.empty() && errors == 0;
  outs() << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
