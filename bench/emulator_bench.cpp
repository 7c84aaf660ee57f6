//===- emulator_bench.cpp - Emulator speed (issue 5) ----------------------===//
//
// Google Benchmark binary (not a ctest test):
//
//   TimingOnly/matmul_loop   timing-only mode: simulated instructions per
//                            wall second (target >= 5 M/s).
//   HazardChecker/<shape>    functional launches with the hazard checker
//                            (runtime/HazardChecker.h, on by default in
//                            functional mode) against the same launches
//                            without it, interleaved in one run: ratio =
//                            with / without (target <= 2); and the same for
//                            the timing-only matmul loop (no target: a
//                            timing-only run checks only when asked).
//   Functional/<shape>       functional mode: the effective FLOP rate of a
//                            GEMM program (DMA in, K-tiled bf16 matmuls into
//                            fp32 PSUM, ScalarE evacuation, DMA out) against
//                            Eigen's sgemm of the same shape, timed in the
//                            same iteration; ratio = Eigen time / emulator
//                            time (target >= 0.5).
//
// Shapes: benchmarkGemms() in bench/EmulatorPrograms.h (an fnet-base
// layer's two linears, a flux2-klein single-stream block at quarter width).
// The programs and their numbers are checked by tests/runtime/PerfTest.cpp.
//
// After the run a summary prints each figure beside its target. The wall
// time of a full flux2-klein step (25 blocks, TP=4, timing-only) needs the
// compiler: bench/step_time.py measures it.
//
//   build/bin/emulator_bench                       # everything
//   build/bin/emulator_bench --benchmark_filter=TimingOnly
//
//===----------------------------------------------------------------------===//

#include "bench/EmulatorPrograms.h"

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace seam::rt;
using namespace seam::rt::bench;

namespace {

double nowS() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Figure {
  double value = 0;
  std::string text;
};
/// Last measured figures, for the summary.
std::map<std::string, Figure> &figures() {
  static std::map<std::string, Figure> f;
  return f;
}

/// One core, no trace events: what a benchmark's device is.
DeviceOptions oneCore(ExecMode mode) {
  DeviceOptions opts;
  opts.mode = mode;
  opts.collectEvents = false;
  opts.cores = 1;
  return opts;
}

/// Loads `p`; on failure the benchmark is skipped with the loader's error.
std::optional<ProgramId> load(Device &dev, const Program &p,
                              benchmark::State &state) {
  auto id = dev.loadProgram(p);
  if (!id) {
    state.SkipWithError(id.error().c_str());
    return std::nullopt;
  }
  return *id;
}

constexpr uint32_t kLoopTiles = 20000, kLoopK = 8;

void timingOnly(benchmark::State &state) {
  Device dev(Profile::builtin(Target::Trn1), oneCore(ExecMode::TimingOnly));
  auto id = load(dev, matmulLoop(kLoopTiles, kLoopK), state);
  if (!id)
    return;
  double wall = 0, simNs = 0;
  uint64_t instrs = 0;
  for (auto _ : state) {
    double t0 = nowS();
    auto r = dev.launch(*id);
    double t = nowS() - t0;
    if (!r || !r->ok()) {
      state.SkipWithError(r ? r->fault->str().c_str() : r.error().c_str());
      return;
    }
    state.SetIterationTime(t);
    wall += t;
    instrs += r->timeline.instructionsIssued;
    simNs += r->timeline.totalNs;
  }
  double rate = instrs / wall;
  state.counters["instructions"] = double(instrs) / state.iterations();
  state.counters["Minstr_per_s"] = rate / 1e6;
  state.counters["sim_ms"] = simNs / state.iterations() / 1e6;
  figures()["timing-only instructions/s"] = {
      rate, "timing-only: " + std::to_string(rate / 1e6).substr(0, 6) +
                " M simulated instructions / wall s (target >= 5 M/s)"};
}

struct Group {
  double emuS = 0, eigenS = 0, flops = 0;
};
std::map<std::string, Group> &groups() {
  static std::map<std::string, Group> g;
  return g;
}

void functional(benchmark::State &state, const GemmShape &shape,
                const std::string &group) {
  TensorMap in = gemmInputs(shape);
  Device dev(Profile::builtin(Target::Trn1), oneCore(ExecMode::Functional));
  auto id = load(dev, gemmProgram(shape), state);
  if (!id)
    return;
  // Eigen's sgemm of the same product, from the same values.
  Eigen::MatrixXf x(shape.m, shape.k), w(shape.k, shape.n), y(shape.m, shape.n);
  for (uint32_t k = 0; k < shape.k; ++k) {
    for (uint32_t m = 0; m < shape.m; ++m)
      x(m, k) = in.at("xT").data[size_t(k) * shape.m + m];
    for (uint32_t n = 0; n < shape.n; ++n)
      w(k, n) = in.at("w").data[size_t(k) * shape.n + n];
  }
  double emu = 0, eig = 0;
  for (auto _ : state) {
    double t0 = nowS();
    auto r = dev.launch(*id, in);
    double t1 = nowS();
    if (!r || !r->ok()) {
      state.SkipWithError(r ? r->fault->str().c_str() : r.error().c_str());
      return;
    }
    benchmark::DoNotOptimize(r->outputs);
    y.noalias() = x * w;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
    double t2 = nowS();
    state.SetIterationTime(t1 - t0);
    emu += t1 - t0;
    eig += t2 - t1;
  }
  double n = double(state.iterations());
  state.counters["emu_GFLOP_per_s"] = shape.flops() * n / emu / 1e9;
  state.counters["eigen_GFLOP_per_s"] = shape.flops() * n / eig / 1e9;
  state.counters["ratio"] = eig / emu;
  Group &g = groups()[group + " " + shape.name];
  g = {emu / n, eig / n, shape.flops()};
}

/// Launches of `p` with the checker off and on, alternated; the ratio of
/// their wall times.
void checkerCost(benchmark::State &state, const Program &p, const TensorMap &in,
                 ExecMode mode, const std::string &figure) {
  DeviceOptions off = oneCore(mode), on = oneCore(mode);
  off.checkHazards = false;
  on.checkHazards = true;
  Device a(Profile::builtin(p.target), off), b(Profile::builtin(p.target), on);
  auto ia = load(a, p, state), ib = load(b, p, state);
  if (!ia || !ib)
    return;
  double without = 0, with = 0;
  for (auto _ : state) {
    double t0 = nowS();
    auto r0 = a.launch(*ia, in);
    double t1 = nowS();
    auto r1 = b.launch(*ib, in);
    double t2 = nowS();
    if (!r0 || !r1 || !r0->ok() || !r1->ok()) {
      state.SkipWithError("launch failed (or a hazard: see HazardTest)");
      return;
    }
    state.SetIterationTime(t2 - t0);
    without += t1 - t0;
    with += t2 - t1;
  }
  double ratio = with / without;
  state.counters["with_over_without"] = ratio;
  char text[160];
  std::snprintf(text, sizeof text,
                "%s: %.2fx the launch time without the checker%s",
                figure.c_str(), ratio,
                mode == ExecMode::Functional ? " (target <= 2x)" : "");
  figures()[figure] = {ratio, text};
}

void summary() {
  std::printf("\n== emulator speed (issue 5), figures of this run ==\n");
  for (auto &[k, f] : figures())
    std::printf("%s\n", f.text.c_str());
  std::map<std::string, Group> byModel;
  for (auto &[name, g] : groups()) {
    std::string model;
    for (const GemmCase &c : benchmarkGemms())
      if (name == c.model + " " + c.shape.name)
        model = c.model;
    Group &t = byModel[model];
    t.emuS += g.emuS;
    t.eigenS += g.eigenS;
    t.flops += g.flops;
  }
  for (auto &[model, g] : byModel)
    std::printf("functional %s: %.2f GFLOP/s emulated, Eigen sgemm %.2f "
                "GFLOP/s, ratio %.3f (target >= 0.5)\n",
                model.c_str(), g.flops / g.emuS / 1e9, g.flops / g.eigenS / 1e9,
                g.eigenS / g.emuS);
}

} // namespace

int main(int argc, char **argv) {
  // 2 s per benchmark unless --benchmark_min_time says otherwise: the
  // machine is shared, longer runs average its noise.
  std::vector<char *> args(argv, argv + argc);
  std::string minTime = "--benchmark_min_time=2";
  bool given = false;
  for (char *a : args)
    given |= std::string(a).rfind("--benchmark_min_time", 0) == 0;
  if (!given)
    args.insert(args.begin() + 1, minTime.data());
  int n = int(args.size());
  benchmark::RegisterBenchmark("TimingOnly/matmul_loop", timingOnly)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  const GemmCase &first = benchmarkGemms().front();
  benchmark::RegisterBenchmark(
      ("HazardChecker/functional " + first.shape.name).c_str(),
      [first](benchmark::State &st) {
        checkerCost(st, gemmProgram(first.shape), gemmInputs(first.shape),
                    ExecMode::Functional,
                    "hazard checker, functional " + first.shape.name);
      })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(
      "HazardChecker/timing-only matmul_loop",
      [](benchmark::State &st) {
        checkerCost(st, matmulLoop(2000, kLoopK), {}, ExecMode::TimingOnly,
                    "hazard checker, timing-only matmul_loop");
      })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (const GemmCase &c : benchmarkGemms())
    benchmark::RegisterBenchmark(("Functional/" + c.shape.name).c_str(),
                                 functional, c.shape, c.model)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data()))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  summary();
  return 0;
}
