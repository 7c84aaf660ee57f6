//===- HostTest.cpp - Host runtime: launches, cache, trace, fallbacks -----===//

#include "TestUtil.h"
#include "runtime/Functional.h"
#include "runtime/HostCache.h"
#include "runtime/HostFallback.h"
#include "runtime/Json.h"
#include "runtime/ProgramFile.h"

#include <complex>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace seam::rt;
using namespace seam::rt::test;
namespace fs = std::filesystem;

namespace {
Program copyProgram() {
  ProgramBuilder b("copy", Target::Trn1);
  uint32_t x = b.addBinding("x", {128, 64}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {128, 64}, DType::F32, BindingRole::Output);
  uint32_t w = b.addBinding("w", {128, 64}, DType::F32, BindingRole::Param);
  b.setSeededInit(w, ConstantKind::SeededUniform, 7, 1.0f);
  AccessPattern t = sbufTile(DType::F32, 0, 128, 0, 64);
  AccessPattern u = sbufTile(DType::F32, 0, 128, 256, 64);
  b.emit(isa::dmaCopy(t, b.hbm(x, 0, 128, 64, {{64, 1}})).signal(0));
  b.emit(isa::dmaCopy(u, b.hbm(w, 0, 128, 64, {{64, 1}})).signal(0));
  b.emit(isa::tensorTensor(t, t, u, AluOp::Add).waitFor(0, 2).signal(1));
  b.emit(isa::dmaCopy(b.hbm(y, 0, 128, 64, {{64, 1}}), t).waitFor(1, 1));
  return b.take();
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("seam-rt-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter++));
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static inline int counter = 0;
};
} // namespace

TEST(Host, LaunchChargesOverheadsOnceAndTransfers) {
  const Profile &prof = Profile::builtin(Target::Trn1);
  Device dev(prof);
  auto id = dev.loadProgram(copyProgram());
  ASSERT_TRUE(bool(id));
  double bytes = 128 * 64 * 4;
  EXPECT_DOUBLE_EQ(dev.hostNs(), bytes / prof.pcieBytesPerNs); // params
  TensorMap in{{"x", {{128, 64}, std::vector<float>(128 * 64, 1.0f)}}};
  auto r1 = dev.launch(*id, in);
  auto r2 = dev.launch(*id, in);
  ASSERT_TRUE(r1->ok() && r2->ok());
  EXPECT_DOUBLE_EQ(r1->firstRunNs, prof.firstRunOverheadNs);
  EXPECT_DOUBLE_EQ(r2->firstRunNs, 0);
  EXPECT_DOUBLE_EQ(r2->launchOverheadNs, prof.launchOverheadNs);
  EXPECT_DOUBLE_EQ(r2->h2dNs, bytes / prof.pcieBytesPerNs);
  EXPECT_DOUBLE_EQ(r2->d2hNs, bytes / prof.pcieBytesPerNs);
  EXPECT_NEAR(r2->hostEndNs - r2->hostStartNs,
              r2->h2dNs + r2->launchOverheadNs + r2->deviceNs + r2->d2hNs,
              1e-6);
  // y = x + w, w seeded: deterministic and within [-1, 2].
  const auto &y = r1->outputs[0]["y"].data;
  EXPECT_EQ(y, r2->outputs[0]["y"].data);
  std::vector<float> w = seededValues(copyProgram().constants[0], 128 * 64);
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(y[i], 1.0f + w[i]);

  DeviceOptions noHost;
  noHost.costs = {false, false, false, false};
  Device bare(prof, noHost);
  auto r3 = bare.launch(*bare.loadProgram(copyProgram()), in);
  EXPECT_DOUBLE_EQ(r3->hostEndNs, r3->deviceNs);
  EXPECT_EQ(r3->timeline, r1->timeline);
}

TEST(Host, EagerAccountingTracingAndGraphBreakSync) {
  const Profile &prof = Profile::builtin(Target::Trn1);
  DeviceOptions opts;
  opts.mode = ExecMode::TimingOnly;
  Device dev(prof, opts);
  auto id = dev.loadProgram(copyProgram());
  double t0 = dev.hostNs();
  dev.chargeTracing(10);
  EXPECT_DOUBLE_EQ(dev.hostNs() - t0, 10 * prof.tracingCostPerOpNs);
  auto r = dev.launch(*id, TensorMap{}, /*async=*/true);
  EXPECT_DOUBLE_EQ(r->d2hNs, 0);
  EXPECT_LT(dev.hostNs(), dev.deviceIdleAtNs());
  dev.graphBreakSync();
  EXPECT_DOUBLE_EQ(dev.hostNs(),
                   dev.deviceIdleAtNs() + 128 * 64 * 4 / prof.pcieBytesPerNs);
}

/// kernel_call_host_ns: charged per call, on its own host category, with
/// its source marked estimated; the ablation switch removes it.
TEST(Host, KernelCallHostCostAndItsAblation) {
  const Profile &prof = Profile::builtin(Target::Trn1);
  const Figure &f = prof.figures.at("kernel_call_host_ns");
  EXPECT_TRUE(f.estimated);
  EXPECT_NE(f.source.find("nki-samples PR #45"), std::string::npos);
  EXPECT_NE(f.source.find("ONE USER MEASUREMENT"), std::string::npos);
  EXPECT_DOUBLE_EQ(prof.kernelCallHostNs, 50.25e6);
  EXPECT_TRUE(Profile::builtin(Target::Trn2)
                  .figures.at("kernel_call_host_ns")
                  .estimated);
  DeviceOptions opts;
  opts.mode = ExecMode::TimingOnly;
  Device dev(prof, opts);
  double t0 = dev.hostNs();
  dev.chargeKernelCalls("kernel calls", 3);
  EXPECT_DOUBLE_EQ(dev.hostNs() - t0, 3 * prof.kernelCallHostNs);
  EXPECT_EQ(dev.hostEvents().back().category, HostCategory::KernelCall);
  EXPECT_FALSE(dev.hostEvents().back().wallClock);
  opts.costs.kernelCallHost = false;
  Device off(prof, opts);
  off.chargeKernelCalls("kernel calls", 3);
  EXPECT_DOUBLE_EQ(off.hostNs(), 0);
  // The figure takes overrides under the profile's rules (non-negative).
  Profile p = prof;
  EXPECT_TRUE(bool(p.set("kernel_call_host_ns=0")));
  EXPECT_FALSE(bool(p.set("kernel_call_host_ns=-1")));
}

/// The framework profile's per-graph lookup, per-sync and per-copy latency
/// figures are charged where they occur: graph lookups with tracing (and
/// its ablation switch), the sync cost at every wait, the copy latency on
/// every transfer.
TEST(Host, FrameworkLookupSyncAndTransferLatency) {
  Profile prof = Profile::builtin(Target::Trn2);
  ASSERT_TRUE(bool(prof.set("graph_lookup_ns=700")));
  ASSERT_TRUE(bool(prof.set("sync_ns=300")));
  ASSERT_TRUE(bool(prof.set("transfer_latency_ns=2000")));
  DeviceOptions opts;
  opts.mode = ExecMode::TimingOnly;
  Device dev(prof, opts);
  dev.chargeGraphLookups(4);
  EXPECT_DOUBLE_EQ(dev.hostNs(), 4 * 700.0);
  EXPECT_EQ(dev.hostEvents().back().category, HostCategory::Trace);
  double t0 = dev.hostNs();
  dev.stepEndSync();
  EXPECT_DOUBLE_EQ(dev.hostNs() - t0, 300.0);
  t0 = dev.hostNs();
  dev.chargeTransfer("copy", 2500);
  EXPECT_DOUBLE_EQ(dev.hostNs() - t0, 2000 + 2500 / prof.pcieBytesPerNs);
  t0 = dev.hostNs();
  dev.chargeTransfer("nothing", 0);
  EXPECT_DOUBLE_EQ(dev.hostNs(), t0); // no bytes, no copy, no latency
  opts.costs.tracing = false;
  Device off(prof, opts);
  off.chargeGraphLookups(4);
  EXPECT_DOUBLE_EQ(off.hostNs(), 0);
}

/// seam.fft's pad_to: each line zero-padded to padTo points, the first N
/// bins kept (the FNet source's transform, not the N-point DFT).
TEST(Host, FallbackFftPadTo) {
  const int64_t n = 6, pad = 8;
  std::vector<std::complex<float>> data(n);
  for (int64_t i = 0; i < n; ++i)
    data[i] = {float(std::cos(0.7 * i)), 0.0f};
  auto ref = data;
  fftAlongAxis(data, {n}, 0, false, pad);
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> s = 0;
    for (int64_t j = 0; j < n; ++j)
      s += std::complex<double>(ref[j]) *
           std::polar(1.0, -2 * M_PI * double(j * k) / pad);
    EXPECT_NEAR(data[k].real(), s.real(), 1e-5);
    EXPECT_NEAR(data[k].imag(), s.imag(), 1e-5);
  }
}

TEST(Host, FallbackFftIsRealAndTimedApart) {
  const int64_t n = 12;
  std::vector<std::complex<float>> data(2 * n);
  for (int64_t i = 0; i < 2 * n; ++i)
    data[i] = {float(std::sin(0.3 * i)), float(i % 3)};
  auto ref = data;
  Device dev(Profile::builtin(Target::Trn1));
  double before = dev.hostNs();
  double wall =
      dev.runFallback("fft", [&] { fftAlongAxis(data, {2, n}, 1, false); });
  EXPECT_GT(wall, 0);
  EXPECT_DOUBLE_EQ(dev.fallbackWallNs(), wall);
  EXPECT_DOUBLE_EQ(dev.hostNs() - before, wall);
  EXPECT_TRUE(dev.hostEvents().back().wallClock);
  for (int64_t row = 0; row < 2; ++row)
    for (int64_t k = 0; k < n; ++k) {
      std::complex<double> s = 0;
      for (int64_t j = 0; j < n; ++j)
        s += std::complex<double>(ref[row * n + j]) *
             std::polar(1.0, -2 * M_PI * double(j * k) / n);
      EXPECT_NEAR(data[row * n + k].real(), s.real(), 1e-4);
      EXPECT_NEAR(data[row * n + k].imag(), s.imag(), 1e-4);
    }
  fftAlongAxis(data, {2, n}, 1, true);
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_NEAR(std::abs(data[i] - ref[i]), 0.0, 1e-5);
  // FNet mixing of a real [3 x 4] tensor over both axes: element (0,0) is
  // the plain sum.
  std::vector<float> x = randomValues(12, 3);
  std::vector<float> mixed = fourierMixReal(x, {3, 4}, {0, 1});
  double sum = 0;
  for (float v : x)
    sum += v;
  EXPECT_NEAR(mixed[0], sum, 1e-5);
}

TEST(Host, CompileCacheHitMissAndDefaultDir) {
  TempDir dir;
  CompileCache cache(dir.path.string());
  std::string key = compileCacheKey("ir", "-O2", "seam 0.1");
  EXPECT_EQ(key.size(), 32u);
  EXPECT_NE(key, compileCacheKey("ir", "-O3", "seam 0.1"));
  EXPECT_NE(compileCacheKey("ab", "c", ""), compileCacheKey("a", "bc", ""));
  EXPECT_EQ(cache.lookup(key).status, CacheStatus::Miss);
  std::vector<uint8_t> bytes = writeProgram(copyProgram());
  int builds = 0;
  auto build = [&]() -> Expected<std::vector<uint8_t>> {
    ++builds;
    return bytes;
  };
  auto first = cache.getOrBuild(key, build);
  ASSERT_TRUE(bool(first));
  EXPECT_EQ(first->status, CacheStatus::Miss);
  auto second = cache.getOrBuild(key, build);
  EXPECT_EQ(second->status, CacheStatus::Hit);
  EXPECT_EQ(second->bytes, bytes);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache.stats().hits, 1u);

  std::string failKey = compileCacheKey("bad ir", "", "");
  auto failed = cache.getOrBuild(failKey, []() {
    return Expected<std::vector<uint8_t>>::failure("error: no lowering");
  });
  EXPECT_FALSE(bool(failed));
  auto again = cache.getOrBuild(failKey, build);
  EXPECT_EQ(again.error(), "error: no lowering (cached compile failure)");

  setenv("XDG_CACHE_HOME", "/some/where", 1);
  EXPECT_EQ(CompileCache::defaultDirectory(), "/some/where/seam");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(CompileCache::defaultDirectory(),
            std::string(getenv("HOME")) + "/.cache/seam");
}

TEST(Host, CompileCacheCorruptEntryIsReportedAndRebuilt) {
  TempDir dir;
  CompileCache cache(dir.path.string());
  std::string key = compileCacheKey("ir", "", "v");
  std::vector<uint8_t> bytes(1000, 7);
  ASSERT_TRUE(bool(cache.store(key, bytes)));
  // Flip one byte of the stored payload.
  {
    std::fstream f(cache.entryPath(key),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.put(8);
  }
  CacheLookup bad = cache.lookup(key);
  EXPECT_EQ(bad.status, CacheStatus::Corrupt);
  EXPECT_EQ(bad.message, "compile cache entry " + cache.entryPath(key) +
                             " is corrupt (checksum mismatch); rebuilding");
  int builds = 0;
  auto r = cache.getOrBuild(key, [&]() -> Expected<std::vector<uint8_t>> {
    ++builds;
    return bytes;
  });
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->status, CacheStatus::Corrupt);
  EXPECT_NE(r->message.find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache.lookup(key).status, CacheStatus::Hit);
  // A truncated entry too.
  fs::resize_file(cache.entryPath(key), 20);
  EXPECT_NE(cache.lookup(key).message.find("truncated header"),
            std::string::npos);
}

TEST(Host, CompileCacheWritesAtomically) {
  TempDir dir;
  CompileCache cache((dir.path / "nested" / "cache").string());
  std::string key = compileCacheKey("x", "", "");
  // A stale temp file from a crashed writer is never read as an entry.
  fs::create_directories(cache.directory());
  std::ofstream(cache.directory() + "/.tmp-" + key + "-1-0") << "partial";
  EXPECT_EQ(cache.lookup(key).status, CacheStatus::Miss);
  ASSERT_TRUE(bool(cache.store(key, {1, 2, 3})));
  ASSERT_TRUE(bool(cache.store(key, {4, 5})));
  EXPECT_EQ(cache.lookup(key).bytes, (std::vector<uint8_t>{4, 5}));
  // Only the entry and the stale temp file: our writes left no temp files.
  int files = 0;
  for (auto &e : fs::directory_iterator(cache.directory())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2);
  // An unwritable directory is an error, not a crash.
  CompileCache bad("/proc/seam-cannot-exist");
  EXPECT_FALSE(bool(bad.store(key, {1})));
}

TEST(Host, TraceJsonIsWellFormedWithTracks) {
  Device dev(Profile::builtin(Target::Trn1));
  auto id = dev.loadProgram(copyProgram());
  dev.chargeTracing(3);
  dev.recordCompile("compile copy", 12345);
  dev.launch(*id, TensorMap{{"x", {{128, 64}, std::vector<float>(8192)}}});
  dev.runFallback("fft", [] {});
  std::ostringstream os;
  dev.writeTrace(os);
  Expected<json::Value> root = json::parse(os.str());
  ASSERT_TRUE(root) << root.error();
  const json::Value *events = root->get("traceEvents");
  ASSERT_TRUE(events && events->isArray());
  std::set<std::string> names, cats, threads;
  for (const json::Value &e : events->array) {
    ASSERT_TRUE(e.get("ph") && e.get("pid"));
    if (e.get("ph")->string == "X") {
      names.insert(e.get("name")->string);
      cats.insert(e.get("cat")->string);
      EXPECT_GE(e.get("dur")->number, 0);
    } else if (e.get("name")->string == "thread_name") {
      threads.insert(e.get("args")->get("name")->string);
    }
  }
  for (const char *c : {"trace", "compile", "launch", "transfer", "fallback"})
    EXPECT_TRUE(cats.count(c)) << c;
  EXPECT_TRUE(names.count("tensor_tensor"));
  EXPECT_TRUE(names.count("dma_copy"));
  EXPECT_TRUE(threads.count("host"));
  EXPECT_TRUE(threads.count("VE"));
  EXPECT_TRUE(threads.count("DMA queue 0"));
  EXPECT_TRUE(threads.count("DMA queue 2"));
}

namespace {
/// DMA in, a loop of `trips` activations on SE, DMA out.
Program loopProgram(uint32_t trips) {
  ProgramBuilder b("loop", Target::Trn1);
  uint32_t x = b.addBinding("x", {128, 64}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {128, 64}, DType::F32, BindingRole::Output);
  AccessPattern in = sbufTile(DType::F32, 0, 128, 0, 64);
  AccessPattern o = sbufTile(DType::F32, 0, 128, 256, 64);
  b.emit(isa::dmaCopy(in, b.hbm(x, 0, 128, 64, {{64, 1}})).signal(0));
  b.loopBegin(Engine::Scalar, trips);
  b.emit(isa::activation(o, in, ActFunc::Exp).waitFor(0, 1).signal(1));
  b.loopEnd(Engine::Scalar);
  b.emit(isa::dmaCopy(b.hbm(y, 0, 128, 64, {{64, 1}}), o).waitFor(1, trips));
  return b.take();
}

struct TraceSummary {
  std::map<std::string, int> names;      ///< "X" events by name
  std::map<std::string, int> categories; ///< "X" events by category
  std::set<std::string> threads;
  std::set<double> pids;
  double loopInstructions = 0;
};

TraceSummary summarise(const Device &dev, const TraceOptions &options) {
  std::ostringstream os;
  dev.writeTrace(os, options);
  Expected<json::Value> root = json::parse(os.str());
  EXPECT_TRUE(root) << root.error();
  TraceSummary s;
  if (!root)
    return s;
  for (const json::Value &e : root->get("traceEvents")->array) {
    if (e.get("ph")->string == "X") {
      ++s.names[e.get("name")->string];
      ++s.categories[e.get("cat")->string];
      if (e.get("pid")->number > 0)
        s.pids.insert(e.get("pid")->number);
      if (const json::Value *args = e.get("args"))
        if (const json::Value *n = args->get("instructions"))
          s.loopInstructions += n->number;
    } else if (e.get("name")->string == "thread_name") {
      s.threads.insert(e.get("args")->get("name")->string);
    }
  }
  return s;
}
} // namespace

// Transfers issued from the SYNC stream are DMA events whose index is in
// the SYNC stream: at engine detail a store outside any loop stays one
// event, even where the DMA stream has a loop at the same index.
TEST(Host, TraceKeepsTheStreamOfSyncIssuedTransfers) {
  ProgramBuilder b("two_queues", Target::Trn2);
  uint32_t x = b.addBinding("x", {512, 64}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {128, 64}, DType::F32, BindingRole::Output);
  AccessPattern t = sbufTile(DType::F32, 0, 128, 0, 64);
  b.loopBegin(Engine::Dma, 4);
  b.emit(isa::dmaCopy(t, b.hbm(x, 0, 128, 64, {{64, 1}}).step(0, 128 * 64))
             .signal(0));
  b.loopEnd(Engine::Dma);
  b.emit(isa::dmaCopy(b.hbm(y, 0, 128, 64, {{64, 1}}), t)
             .onEngine(Engine::Sync)
             .waitFor(0, 4));
  Device dev(Profile::builtin(Target::Trn2));
  auto id = dev.loadProgram(b.take());
  ASSERT_TRUE(bool(id)) << id.error();
  TensorMap in{{"x", {{512, 64}, std::vector<float>(512 * 64)}}};
  auto r = dev.launch(*id, in);
  ASSERT_TRUE(bool(r)) << r.error();
  TraceOptions engine;
  engine.detail = TraceDetail::Engine;
  TraceSummary agg = summarise(dev, engine);
  EXPECT_EQ(agg.names["dma_copy"], 1); // the store
  EXPECT_EQ(agg.loopInstructions, 4);  // the loads' loop
  EXPECT_EQ(agg.categories["SYNC"], 0);
  EXPECT_EQ(agg.categories["DMA"], 1 + agg.names["dma_copy loop"]);
  // Transfers count as DMA work whichever stream issued them.
  EXPECT_EQ(r->timeline.cores[0].instructions[unsigned(Engine::Dma)], 5u);
  EXPECT_EQ(r->timeline.cores[0].instructions[unsigned(Engine::Sync)], 0u);
}

// The trace's level of detail: every instruction, engines with each loop's
// iterations as one span, or one span per launch; chosen cores; a window of
// the host timeline.
TEST(Host, TraceDetailCoresAndWindow) {
  DeviceOptions o;
  o.cores = 2;
  Device dev(Profile::builtin(Target::Trn1), o);
  auto id = dev.loadProgram(loopProgram(8), 2);
  ASSERT_TRUE(bool(id)) << id.error();
  TensorMap in{{"x", {{128, 64}, std::vector<float>(128 * 64)}}};
  ASSERT_TRUE(bool(dev.launch(*id, in)));
  double between = dev.hostNs();
  ASSERT_TRUE(bool(dev.launch(*id, in)));

  TraceOptions every;
  TraceSummary all = summarise(dev, every);
  EXPECT_EQ(all.names["activation"], 2 * 2 * 8); // launches x cores x trips
  EXPECT_EQ(all.names["dma_copy"], 2 * 2 * 2);

  TraceOptions engine;
  engine.detail = TraceDetail::Engine;
  TraceSummary agg = summarise(dev, engine);
  EXPECT_EQ(agg.names["activation"], 0);
  EXPECT_EQ(agg.names["activation loop"], 2 * 2);
  EXPECT_EQ(agg.loopInstructions, 2 * 2 * 8);
  EXPECT_EQ(agg.names["dma_copy"], 2 * 2 * 2); // outside the loop
  EXPECT_TRUE(agg.threads.count("SE"));

  TraceOptions launches;
  launches.detail = TraceDetail::Launch;
  TraceSummary l = summarise(dev, launches);
  EXPECT_EQ(l.names["loop"], 2 * 2);
  EXPECT_EQ(l.names["activation"] + l.names["dma_copy"], 0);
  EXPECT_TRUE(l.threads.count("launches"));

  TraceOptions core1 = engine;
  core1.cores = {1};
  EXPECT_EQ(summarise(dev, core1).pids, std::set<double>{2});

  TraceOptions firstLaunch = every;
  firstLaunch.toNs = between;
  EXPECT_EQ(summarise(dev, firstLaunch).names["activation"], 2 * 8);

  // Nothing is kept while collection is off; launches without instructions.
  dev.collectForTrace(true, false);
  ASSERT_TRUE(bool(dev.launch(*id, in)));
  dev.collectForTrace(false, false);
  ASSERT_TRUE(bool(dev.launch(*id, in)));
  EXPECT_EQ(dev.deviceLaunches().size(), 3u);
  EXPECT_TRUE(dev.deviceLaunches().back().timeline.events.empty());
  EXPECT_EQ(parseTraceDetail("engine"), TraceDetail::Engine);
  EXPECT_FALSE(parseTraceDetail("everything"));
}

TEST(HostFallback, OnePointAxisIsTheIdentity) {
  // seam-smith found Eigen's FFT crashing on a length-1 axis.
  std::vector<std::complex<float>> data = {{1, 2}, {3, 4}, {5, 6}};
  std::vector<std::complex<float>> before = data;
  fftAlongAxis(data, {3, 1}, 1, /*inverse=*/false, 0);
  EXPECT_EQ(data, before);
  fftAlongAxis(data, {3, 1}, 1, /*inverse=*/true, 0);
  EXPECT_EQ(data, before);
}
