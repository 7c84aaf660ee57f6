//===- kernel_bench.cpp - kernels against their roofline ------------------===//
//
// Builds each NKI-style kernel for the shapes the sources and models use,
// compiles it with the real codegen (ncore-double-buffer, ncore-allocate,
// ncore-schedule, emission) and runs it timing-only on one emulated core.
// Per case it prints the device time, the busy fraction of each engine over
// the run, and two floors computed from the case's work, never from the
// emitted instructions:
//
//   TE floor   the matmul work of the kernel's algorithm at full tiles:
//              MACs / (128 x 128 per cycle) at the TE clock, 4x for fp32
//              operands (hardware.md "Instruction costs").
//   DMA floor  the bytes that must cross HBM once (inputs, outputs, the
//              constant matrices) at the core's 16 queues x sustained rate,
//              plus one fixed transfer cost (hardware.md "DMA").
//
// "of floor" = max(TE floor, DMA floor) / device time: 100% is the
// roofline. Performance is measured here, never asserted in tests.
//
//   build/bin/kernel_bench                      # every case, trn2
//   build/bin/kernel_bench --filter fftconv --json out.json --target trn1
//   build/bin/kernel_bench --filter dft128 --trace /tmp/t.json
//   build/bin/kernel_bench --filter qkv --print-ir   # the kernels' ncore
//
//===----------------------------------------------------------------------===//

#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Constants.h"
#include "kernels/Kernels.h"
#include "lowering/target/NcoreCodegen.h"
#include "runtime/HazardChecker.h"
#include "runtime/Host.h"
#include "runtime/Profile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace mlir;
namespace rt = ::seam::rt;
namespace sk = ::mlir::seam;

namespace {

/// What one case is: how to build its program, and its work.
struct Case {
  std::string name;  ///< e.g. "fft/dft128 bf16 x4096"
  std::string shape; ///< human-readable shape
  /// Builds the program into `module` (null on failure, diagnostics shown).
  std::function<ncore::ProgramOp(OpBuilder &, ModuleOp)> build;
  double bf16Macs = 0, fp32Macs = 0; ///< Matmul work of the algorithm.
  double hbmBytes = 0;               ///< Bytes that must cross HBM once.
  /// Also measure engine activity as neuron-profile does (the share of the
  /// run in which the engine has an instruction executing; DMA: at least
  /// one transfer in flight on any queue), from the run's events.
  bool activity = false;
};

RankedTensorType tensor(MLIRContext * /*ctx*/, ArrayRef<int64_t> shape,
                        Type elt) {
  return RankedTensorType::get(shape, elt);
}

/// A case built through the registry (the path seam-run takes).
std::function<ncore::ProgramOp(OpBuilder &, ModuleOp)>
registryBuild(const std::string &kernel,
              const std::function<sk::KernelSignature(MLIRContext *)> &sig) {
  return [=](OpBuilder &, ModuleOp module) -> ncore::ProgramOp {
    auto sym =
        sk::getOrBuildKernelProgram(module, kernel, sig(module.getContext()));
    if (failed(sym))
      return {};
    return module.lookupSymbol<ncore::ProgramOp>(sym->getValue());
  };
}

double bytesOf(ArrayRef<int64_t> shape, int64_t elementBytes) {
  double n = 1;
  for (int64_t d : shape)
    n *= double(d);
  return n * double(elementBytes);
}

/// Matmul MACs of the kernels' DFT algorithm for `rows` sequences of
/// length n: one real matmul pass per (real operand, real DFT matrix) pair.
/// N <= 128: one n x n stage; N = n1 x n2: an n1 stage and an n2 stage.
/// `passes` counts the real products of a complex stage (2 for real input,
/// 4 for complex).
double dftMacs(int64_t n, double rows, int firstPasses, int laterPasses) {
  if (n <= 128)
    return rows * double(n) * double(n) * firstPasses;
  auto f = sk::fftFactors(n);
  if (!f)
    return 0;
  double n1 = f->first, n2 = f->second;
  return rows * (n2 * n1 * n1 * firstPasses + n1 * n2 * n2 * laterPasses);
}

std::vector<Case> allCases() {
  std::vector<Case> cs;
  // -- 1-D FFT ---------------------------------------------------------------
  auto fft = [&](int64_t n, int64_t rows, bool complexIn, bool bf16) {
    Case c;
    c.name = "fft/n" + std::to_string(n) + (complexIn ? " c64" : "") +
             (bf16 ? " bf16" : " f32") + " x" + std::to_string(rows);
    c.shape = "[" + std::to_string(rows) + ", " + std::to_string(n) +
              (complexIn ? ", 2" : "") + "]";
    c.build = [=](OpBuilder &b, ModuleOp module) -> ncore::ProgramOp {
      sk::FftParams p;
      p.n = n;
      p.batch = rows;
      p.complexInput = complexIn;
      p.dtype = bf16 ? b.getBF16Type() : b.getF32Type();
      auto prog = sk::buildFftProgram(b, module, "fft", p);
      return succeeded(prog) ? *prog : ncore::ProgramOp();
    };
    double macs = dftMacs(n, double(rows), complexIn ? 4 : 2, 4);
    (bf16 ? c.bf16Macs : c.fp32Macs) = macs;
    c.hbmBytes = bytesOf({rows, n}, complexIn ? 8 : (bf16 ? 2 : 4)) +
                 bytesOf({rows, n, 2}, 4);
    return c;
  };
  // The 128-point DFT of the FNet source (512 rows per matmul) and a longer
  // batch; real bf16 input as in FNet, complex fp32 as the source's kernel.
  cs.push_back(fft(128, 512, false, true));
  cs.push_back(fft(128, 4096, false, true));
  cs.push_back(fft(128, 512, true, false));
  cs.push_back(fft(128, 4096, true, false));
  for (int64_t n : {256, 1024, 4096, 16384})
    cs.push_back(fft(n, n >= 16384 ? 8 : 64, true, false));

  // -- FNet mixing (the source's table) ---------------------------------------
  for (auto [bt, s, d] : {std::tuple<int64_t, int64_t, int64_t>{1, 128, 512},
                          {1, 128, 768},
                          {1, 256, 768},
                          {1, 512, 768},
                          {4, 128, 768}}) {
    Case c;
    c.name = "fourier-mix bf16";
    c.shape = "(" + std::to_string(bt) + ", " + std::to_string(s) + ", " +
              std::to_string(d) + ")";
    c.build = registryBuild("fourier-mix", [=](MLIRContext *ctx) {
      Builder b(ctx);
      sk::KernelSignature sig;
      sig.args = {tensor(ctx, {bt, s, d}, b.getBF16Type())};
      sig.results = sig.args;
      sig.config = b.getDictionaryAttr(
          {b.getNamedAttr("dims", b.getDenseI64ArrayAttr({1, 2}))});
      return sig;
    });
    // Re(F_S X F_D) = C_S X C_D - S_S X S_D: two S-stage products and two
    // D-stage products per batch.
    c.bf16Macs = double(bt) * 2.0 * (double(s) * s * d + double(s) * d * d);
    c.hbmBytes = 2 * bytesOf({bt, s, d}, 2) + 2 * bytesOf({s, s}, 2) +
                 2 * bytesOf({d, d}, 2);
    cs.push_back(c);
  }

  // -- fftconv (the reproduction's table, H = 64; Hyena's own shape) ----------
  auto fftconv = [&](int64_t bt, int64_t h, int64_t l) {
    int64_t n = 16;
    while (n < 2 * l)
      n *= 2;
    Case c;
    c.name = "fftconv f32";
    c.shape = "B" + std::to_string(bt) + " H" + std::to_string(h) + " L" +
              std::to_string(l) + " n" + std::to_string(n);
    c.build = registryBuild("fftconv", [=](MLIRContext *ctx) {
      Builder b(ctx);
      Type f32 = b.getF32Type();
      sk::KernelSignature sig;
      sig.args = {tensor(ctx, {bt, h, l}, f32), tensor(ctx, {h, l}, f32),
                  tensor(ctx, {h}, f32)};
      sig.results = {tensor(ctx, {bt, h, l}, f32)};
      sig.config = b.getDictionaryAttr(
          {b.getNamedAttr("fft_size", b.getI64IntegerAttr(n))});
      return sig;
    });
    // Per (b, h): forward DFT of real u, inverse to a real output; per h:
    // the filter's forward DFT. Up to 128 points the dense DFTs (2 passes
    // each way); above, the four-step over the Hermitian half of the
    // spectrum (FftCommon.h): f1 <= n1 / 2 columns, 2 + 4 passes forward,
    // 4 + 2 back.
    double fwd = dftMacs(n, 1, 2, 2), inv = fwd;
    if (auto f = sk::fftFactors(n); f && n > 128) {
      double n1 = f->first, n2 = f->second, half = n1 / 2 + 1;
      fwd = n2 * n1 * half * 2 + half * n2 * n2 * 4;
      inv = half * n2 * n2 * 4 + n1 * half * n2 * 2;
    }
    c.fp32Macs = double(bt * h) * (fwd + inv) + double(h) * fwd;
    c.hbmBytes = 2 * bytesOf({bt, h, l}, 4) + bytesOf({h, l}, 4) + h * 4;
    return c;
  };
  for (int64_t l : {64, 372, 784, 1134, 4096, 8192})
    cs.push_back(fftconv(1, 64, l));
  cs.push_back(fftconv(1, 256, 1024));
  // Batches share the filter spectra of a chunk of channels.
  cs.push_back(fftconv(4, 64, 1024));

  // -- fused QKV (flux2-klein, TP = 4: the image and text streams; 64 and 128
  // rows as in the golden configurations' short sequences) ------------------
  for (int64_t m : {64, 128, 256, 512, 768}) {
    int64_t k = 3072, n = 2304;
    Case c;
    c.name = "qkv bf16";
    c.shape = "x [" + std::to_string(m) + ", 3072] W [3072, 2304] + bias";
    c.build = registryBuild("qkv", [=](MLIRContext *ctx) {
      Builder b(ctx);
      Type bf = b.getBF16Type();
      sk::KernelSignature sig;
      sig.args = {tensor(ctx, {1, m, k}, bf), tensor(ctx, {k, n}, bf),
                  tensor(ctx, {n}, bf)};
      sig.results = {tensor(ctx, {1, m, n}, bf)};
      sig.config = b.getDictionaryAttr({});
      return sig;
    });
    c.bf16Macs = double(m) * k * n;
    c.hbmBytes =
        bytesOf({m, k}, 2) + bytesOf({k, n}, 2) + bytesOf({m, n}, 2) + n * 2;
    cs.push_back(c);
  }

  // -- rope (flux2-klein, TP = 4: the double-stream blocks' image and text
  // streams, 6 heads, head_dim 128; the single-stream blocks' 768 is past
  // the kernel's S <= 512)
  // ------------------------------------------------------
  for (int64_t s : {256, 512}) {
    int64_t h = 6, d = 128;
    Case c;
    c.name = "rope bf16";
    c.shape = "[1, 6, " + std::to_string(s) + ", 128]";
    c.build = registryBuild("rope", [=](MLIRContext *ctx) {
      Builder b(ctx);
      Type bf = b.getBF16Type();
      sk::KernelSignature sig;
      sig.args = {tensor(ctx, {1, h, s, d}, bf), tensor(ctx, {s, d}, bf),
                  tensor(ctx, {s, d}, bf)};
      sig.results = {sig.args[0]};
      sig.config = b.getDictionaryAttr({});
      return sig;
    });
    c.hbmBytes = 2 * bytesOf({h, s, d}, 2) + 2 * bytesOf({s, d}, 2);
    cs.push_back(c);
  }

  // -- attention (flux2-klein, TP = 4: 6 heads, seq 768, head_dim 128) --------
  for (std::string kernel : {"flash-attn", "flash-attn-stable"}) {
    int64_t bt = 1, h = 6, s = 768, d = 128;
    Case c;
    c.name = kernel + " bf16";
    c.shape = "[1, 6, 768, 128]";
    c.build = registryBuild(kernel, [=](MLIRContext *ctx) {
      Builder b(ctx);
      auto t = tensor(ctx, {bt, h, s, d}, b.getBF16Type());
      sk::KernelSignature sig;
      sig.args = {t, t, t};
      sig.results = {t};
      sig.config = b.getDictionaryAttr({});
      return sig;
    });
    // S = q k^T and O = P v.
    c.bf16Macs = double(bt * h) * 2.0 * s * s * d;
    c.hbmBytes = 4 * bytesOf({bt, h, s, d}, 2);
    cs.push_back(c);
  }

  // -- the NKI tutorials' kernels at their published shapes (validation) ------
  // kernel-optimization.rst: fp32 lhsT [8192, 4096] x rhs [8192, 8192], trn2.
  for (int v = 2; v <= 5; ++v) {
    int64_t k = 8192, m = 4096, n = 8192;
    Case c;
    c.name = "nki-matmul-v" + std::to_string(v);
    c.shape = "lhsT [8192, 4096] rhs [8192, 8192] f32";
    c.build = [=](OpBuilder &b, ModuleOp module) -> ncore::ProgramOp {
      sk::NkiMatmulParams p;
      p.version = v;
      p.k = k;
      p.m = m;
      p.n = n;
      auto prog = sk::buildNkiMatmul(b, module, "nki_matmul", p);
      return succeeded(prog) ? *prog : ncore::ProgramOp();
    };
    c.fp32Macs = double(k) * m * n;
    c.hbmBytes = bytesOf({k, m}, 4) + bytesOf({k, n}, 4) + bytesOf({m, n}, 4);
    c.activity = true;
    cs.push_back(c);
  }
  // fused_mamba.rst: [batch, seq_len, channels, state], fp32.
  for (auto [v, seq, ch] : {std::tuple<int, int64_t, int64_t>{1, 512, 256},
                            {1, 512, 4096},
                            {2, 512, 4096},
                            {2, 8192, 4096},
                            {3, 8192, 4096}}) {
    int64_t st = 16;
    Case c;
    c.name = "nki-mamba-v" + std::to_string(v);
    c.shape =
        "[1, " + std::to_string(seq) + ", " + std::to_string(ch) + ", 16] f32";
    c.build = [=](OpBuilder &b, ModuleOp module) -> ncore::ProgramOp {
      sk::NkiMambaParams p;
      p.version = v;
      p.seq = seq;
      p.channels = ch;
      p.state = st;
      auto prog = sk::buildNkiMamba(b, module, "nki_mamba", p);
      return succeeded(prog) ? *prog : ncore::ProgramOp();
    };
    c.hbmBytes = 3 * bytesOf({ch, seq}, 4) + bytesOf({ch, st}, 4) +
                 2 * bytesOf({st, seq}, 4);
    c.activity = true;
    cs.push_back(c);
  }
  return cs;
}

struct Measured {
  bool ok = false;
  std::string error;
  double deviceNs = 0, compileMs = 0;
  std::array<double, rt::kNumEngines> busyNs{};
  double dmaQueueBusyNs = 0;
  uint64_t dmaBytes = 0, dmaTransfers = 0, issued = 0;
  size_t staticInstructions = 0;
  double teFloorNs = 0, dmaFloorNs = 0;
  /// Kernels whose whole floor (the roofline's, or the algorithm bound when
  /// larger) is under kLatencyFloorBelowNs: the longest chain of dependent
  /// compute instructions (runtime/HazardChecker.h) and the latency floor,
  /// that floor + one DMA fixed cost in and one out + the chain.
  std::optional<double> chainNs, latencyFloorNs;
  /// The largest per-engine busy time of its stream (DMA: bytes at peak).
  rt::AlgorithmBound algorithm;
  /// Active share of the run per engine (Case::activity), -1 when not
  /// measured.
  std::array<double, rt::kNumEngines> activeNs{};
  bool haveActivity = false;
};

/// A kernel whose whole floor is under this is held to its latency floor
/// (issue 34: rope at S = 256).
constexpr double kLatencyFloorBelowNs = 10e3;

/// The union of the intervals of `events` per engine, over the work
/// instructions (not semaphore and loop control), DMA transfers counted as
/// DMA whichever stream issued them.
std::array<double, rt::kNumEngines>
activeNs(const std::vector<rt::TimelineEvent> &events) {
  std::array<std::vector<std::pair<double, double>>, rt::kNumEngines> spans;
  for (const rt::TimelineEvent &ev : events) {
    if (ev.core != 0 || ev.op == rt::Opcode::SemSignal ||
        ev.op == rt::Opcode::SemWait || ev.op == rt::Opcode::LoopBegin ||
        ev.op == rt::Opcode::LoopEnd || ev.endNs <= ev.startNs)
      continue;
    unsigned e = unsigned(ev.dmaQueue >= 0 ? rt::Engine::Dma : ev.engine);
    spans[e].push_back({ev.startNs, ev.endNs});
  }
  std::array<double, rt::kNumEngines> out{};
  for (unsigned e = 0; e < rt::kNumEngines; ++e) {
    auto &v = spans[e];
    std::sort(v.begin(), v.end());
    double total = 0, curStart = -1, curEnd = -1;
    for (auto [a, b] : v) {
      if (a > curEnd) {
        total += curEnd - curStart;
        curStart = a;
        curEnd = b;
      } else {
        curEnd = std::max(curEnd, b);
      }
    }
    total += curEnd - curStart;
    out[e] = total;
  }
  return out;
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Measured measure(const Case &c, rt::Target target, const std::string &tracePath,
                 bool printIr) {
  Measured m;
  MLIRContext ctx;
  ctx.loadDialect<sk::SeamDialect, ncore::NcoreDialect>();
  std::string diags;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  OpBuilder b(&ctx);
  double t0 = nowMs();
  ncore::ProgramOp prog = c.build(b, *module);
  if (!prog || failed(verify(prog))) {
    m.error = "build failed: " + diags;
    return m;
  }
  if (printIr)
    prog.print(llvm::outs());
  ncore::EmitOptions opts;
  opts.constantValues = [](ncore::ProgramOp p, unsigned i) {
    auto a = p.getArgAttrOfType<DictionaryAttr>(i, sk::kConstantAttrName);
    return a ? sk::constantValues(a) : std::vector<float>();
  };
  auto compiled = ncore::compileNcoreProgram(prog, target, opts);
  m.compileMs = nowMs() - t0;
  if (failed(compiled)) {
    m.error = "compile failed: " + diags;
    return m;
  }
  m.staticInstructions = compiled->instructionCount();
  const rt::Profile &profile = rt::Profile::builtin(target);
  rt::DeviceOptions dopts;
  dopts.mode = rt::ExecMode::TimingOnly;
  dopts.cores = 1;
  dopts.collectEvents = !tracePath.empty() || c.activity;
  // Kernels synchronise by hand: a race (runtime/HazardChecker.h) fails
  // the case rather than timing a program the device would run wrong.
  dopts.checkHazards = true;
  rt::Device device(profile, dopts);
  auto id = device.loadProgram(*compiled);
  if (!id) {
    m.error = id.error();
    return m;
  }
  auto res = device.launch(*id);
  if (!res || res->fault) {
    m.error = res ? res->fault->str() : res.error();
    return m;
  }
  if (!tracePath.empty())
    (void)device.writeTrace(tracePath);
  if (c.activity) {
    m.activeNs = activeNs(res->timeline.events);
    m.haveActivity = true;
  }
  const rt::CoreTimingStats &st = res->timeline.cores.at(0);
  m.deviceNs = res->deviceNs;
  m.busyNs = st.busyNs;
  m.dmaQueueBusyNs = st.dmaQueueBusyNs;
  m.dmaBytes = st.dmaBytes;
  m.dmaTransfers = st.dmaTransfers;
  m.issued = res->timeline.instructionsIssued;
  double macsPerCycle = 128.0 * 128.0;
  m.teFloorNs = (c.bf16Macs + profile.matmulFp32Factor * c.fp32Macs) /
                macsPerCycle / profile.teClockGhz;
  m.dmaFloorNs =
      profile.dmaFixedCostNs +
      c.hbmBytes / (profile.dmaEngineBytesPerNs * profile.dmaEngines);
  // The whole floor: the roofline's, or the kernel's own busiest engine
  // when that is larger (a Vector-engine kernel with no matmul has a small
  // roofline floor and is not latency-bound for it).
  m.algorithm = rt::algorithmBound(m.busyNs, double(m.dmaBytes),
                                   profile.dmaBytesPerNs(1));
  double floorNs = std::max({m.teFloorNs, m.dmaFloorNs, m.algorithm.ns});
  if (floorNs < kLatencyFloorBelowNs) {
    // Again with every access logged: the dependent chain.
    std::vector<rt::AccessRecord> log;
    rt::DeviceOptions lopts = dopts;
    lopts.collectEvents = false;
    lopts.accessLog = &log;
    rt::Device logged(profile, lopts);
    auto lid = logged.loadProgram(*compiled);
    if (lid && logged.launch(*lid)) {
      m.chainNs = rt::dependentChainNs({&*compiled}, log);
      if (m.chainNs)
        m.latencyFloorNs = floorNs + 2 * profile.dmaFixedCostNs + *m.chainNs;
    }
  }
  m.ok = true;
  return m;
}

/// A JSON number in us, or null.
std::string orNull(std::optional<double> ns) {
  return ns ? llvm::formatv("{0:F4}", *ns / 1e3).str() : std::string("null");
}

std::string jsonEscape(const std::string &s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      o += '\\';
    if (ch == '\n') {
      o += "\\n";
      continue;
    }
    o += ch;
  }
  return o;
}

} // namespace

int main(int argc, char **argv) {
  std::string filter, jsonPath, tracePath;
  bool printIr = false;
  rt::Target target = rt::Target::Trn2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--filter")
      filter = next();
    else if (a == "--json")
      jsonPath = next();
    else if (a == "--trace")
      tracePath = next();
    else if (a == "--print-ir")
      printIr = true;
    else if (a == "--target") {
      auto t = rt::parseTarget(next());
      if (!t) {
        std::fprintf(stderr, "unknown target (trn1 or trn2)\n");
        return 2;
      }
      target = *t;
    } else {
      std::fprintf(stderr,
                   "usage: kernel_bench [--filter SUBSTRING] [--json FILE] "
                   "[--trace FILE (last case)] [--target trn1|trn2] "
                   "[--print-ir]\n");
      return 2;
    }
  }
  std::printf("kernels on one emulated %s core, timing-only\n",
              std::string(rt::name(target)).c_str());
  std::printf("%-22s %-40s %10s %6s %5s %5s %5s %5s %9s %9s %6s %6s %8s "
              "%5s %9s %9s  %s\n",
              "kernel", "shape", "device us", "TE%", "VE%", "SE%", "GP%",
              "DMAq%", "TEfloor", "DMAfloor", "floor", "instr", "compile",
              "DMA%", "alg.bound", "lat.floor", "bar");
  std::string json = "[\n";
  bool first = true, anyFailed = false;
  for (const Case &c : allCases()) {
    std::string key = c.name + " " + c.shape;
    if (!filter.empty() && key.find(filter) == std::string::npos)
      continue;
    Measured m = measure(c, target, tracePath, printIr);
    if (!m.ok) {
      anyFailed = true;
      std::printf("%-22s %-40s FAILED: %s\n", c.name.c_str(), c.shape.c_str(),
                  m.error.c_str());
      continue;
    }
    auto pct = [&](rt::Engine e) {
      return 100.0 * m.busyNs[unsigned(e)] / m.deviceNs;
    };
    // DMA queue occupancy: busy queue-ns over (queues x run).
    const rt::Profile &p = rt::Profile::builtin(target);
    double dmaPct = 100.0 * m.dmaQueueBusyNs / (p.dmaEngines * m.deviceNs);
    double floorNs = std::max(m.teFloorNs, m.dmaFloorNs);
    // The NKI performance guide's bar: the bound engine >= 90% busy, or
    // >= 60% of the DMA bandwidth used, or (where the algorithm caps the
    // kernel) within 10% of its algorithm bound: the largest per-engine
    // busy time of its own stream (DMA: its bytes at the DMA peak).
    double dmaPeak = p.dmaBytesPerNs(1);
    double dmaBwPct = 100.0 * double(m.dmaBytes) / dmaPeak / m.deviceNs;
    const rt::AlgorithmBound &alg = m.algorithm;
    double algNs = alg.ns;
    double computePct = 0;
    for (rt::Engine e : {rt::Engine::Tensor, rt::Engine::Vector,
                         rt::Engine::Scalar, rt::Engine::GpSimd})
      computePct = std::max(computePct, pct(e));
    // A kernel whose floor is under 10 us is held to its latency floor
    // instead.
    const char *bar =
        m.latencyFloorNs
            ? (m.deviceNs <= *m.latencyFloorNs ? "yes (latency floor)" : "no")
        : computePct >= 90          ? "yes (compute)"
        : dmaBwPct >= 60            ? "yes (DMA)"
        : m.deviceNs <= 1.1 * algNs ? "yes (alg. bound)"
                                    : "no";
    std::string latency =
        m.latencyFloorNs
            ? llvm::formatv("{0:F2}u", *m.latencyFloorNs / 1e3).str()
            : std::string("-");
    std::printf("%-22s %-40s %10.2f %6.1f %5.1f %5.1f %5.1f %5.1f %8.2fu "
                "%8.2fu %5.1f%% %6zu %6.0fms %5.1f %8.2fu %9s  %s\n",
                c.name.c_str(), c.shape.c_str(), m.deviceNs / 1e3,
                pct(rt::Engine::Tensor), pct(rt::Engine::Vector),
                pct(rt::Engine::Scalar), pct(rt::Engine::GpSimd), dmaPct,
                m.teFloorNs / 1e3, m.dmaFloorNs / 1e3,
                100.0 * floorNs / m.deviceNs, m.staticInstructions, m.compileMs,
                dmaBwPct, algNs / 1e3, latency.c_str(), bar);
    if (m.haveActivity)
      std::printf("%-22s %-40s active (neuron-profile): TE %.2f%% VE %.2f%% "
                  "SE %.2f%% GP %.2f%% DMA %.2f%%\n",
                  "", "",
                  100 * m.activeNs[unsigned(rt::Engine::Tensor)] / m.deviceNs,
                  100 * m.activeNs[unsigned(rt::Engine::Vector)] / m.deviceNs,
                  100 * m.activeNs[unsigned(rt::Engine::Scalar)] / m.deviceNs,
                  100 * m.activeNs[unsigned(rt::Engine::GpSimd)] / m.deviceNs,
                  100 * m.activeNs[unsigned(rt::Engine::Dma)] / m.deviceNs);
    std::fflush(stdout);
    std::string activityJson;
    if (m.haveActivity) {
      char ab[256];
      std::snprintf(
          ab, sizeof ab,
          ", \"te_active\": %.4f, \"ve_active\": %.4f, \"se_active\": "
          "%.4f, \"gp_active\": %.4f, \"dma_active\": %.4f",
          m.activeNs[unsigned(rt::Engine::Tensor)] / m.deviceNs,
          m.activeNs[unsigned(rt::Engine::Vector)] / m.deviceNs,
          m.activeNs[unsigned(rt::Engine::Scalar)] / m.deviceNs,
          m.activeNs[unsigned(rt::Engine::GpSimd)] / m.deviceNs,
          m.activeNs[unsigned(rt::Engine::Dma)] / m.deviceNs);
      activityJson = ab;
    }
    char buf[1536];
    std::snprintf(
        buf, sizeof buf,
        "%s  {\"kernel\": \"%s\", \"shape\": \"%s\", \"device_us\": %.4f, "
        "\"te_busy\": %.4f, \"ve_busy\": %.4f, \"se_busy\": %.4f, "
        "\"gp_busy\": %.4f, \"dma_queue_busy\": %.4f, \"te_floor_us\": %.4f, "
        "\"dma_floor_us\": %.4f, \"of_floor\": %.4f, \"dma_bytes\": %llu, "
        "\"dma_transfers\": %llu, \"instructions\": %zu, \"issued\": %llu, "
        "\"compile_ms\": %.2f, \"dma_bandwidth\": %.4f, "
        "\"algorithm_bound_us\": %.4f, \"algorithm_engine\": \"%s\", "
        "\"chain_us\": %s, "
        "\"latency_floor_us\": %s, \"bar\": \"%s\"%s}",
        first ? "" : ",\n", jsonEscape(c.name).c_str(),
        jsonEscape(c.shape).c_str(), m.deviceNs / 1e3,
        pct(rt::Engine::Tensor) / 100, pct(rt::Engine::Vector) / 100,
        pct(rt::Engine::Scalar) / 100, pct(rt::Engine::GpSimd) / 100,
        dmaPct / 100, m.teFloorNs / 1e3, m.dmaFloorNs / 1e3,
        floorNs / m.deviceNs, (unsigned long long)m.dmaBytes,
        (unsigned long long)m.dmaTransfers, m.staticInstructions,
        (unsigned long long)m.issued, m.compileMs, dmaBwPct / 100, algNs / 1e3,
        alg.engine.c_str(), orNull(m.chainNs).c_str(),
        orNull(m.latencyFloorNs).c_str(), bar, activityJson.c_str());
    json += buf;
    first = false;
  }
  json += "\n]\n";
  if (!jsonPath.empty()) {
    std::ofstream f(jsonPath);
    f << json;
  }
  std::printf("TE%%..DMAq%%: busy share of the run (DMAq: queue-ns over 16 "
              "queues); floor: max(TE floor, DMA floor) / device time; DMA%%: "
              "bytes moved / (DMA peak x device time); alg.bound: the largest "
              "per-engine busy time (DMA: bytes at peak); bar (NKI perf "
              "guide): an engine >= 90%% busy, DMA >= 60%%, or within 10%% of "
              "the algorithm bound; a kernel whose floor is under 10 us is "
              "held instead to its lat.floor: that floor (or the algorithm "
              "bound, if larger) + one DMA fixed cost "
              "in and one out + its longest chain of dependent compute "
              "instructions\n");
  return anyFailed ? 1 : 0;
}
