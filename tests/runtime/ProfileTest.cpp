//===- ProfileTest.cpp - Hardware profiles as data files ------------------===//

#include "runtime/Profile.h"

#include <gtest/gtest.h>

using namespace seam::rt;

TEST(Profile, BuiltinFiguresMatchHardwareMd) {
  const Profile &t1 = Profile::builtin(Target::Trn1);
  const Profile &t2 = Profile::builtin(Target::Trn2);
  EXPECT_EQ(t1.name, "trn1");
  EXPECT_EQ(t1.coresPerChip, 2u);
  EXPECT_EQ(t2.coresPerChip, 8u);
  EXPECT_DOUBLE_EQ(t1.teClockGhz, 2.8);
  EXPECT_DOUBLE_EQ(t2.veClockGhz, 0.96);
  EXPECT_EQ(t1.sbufPartitionBytes, 192u * 1024);
  EXPECT_EQ(t2.sbufPartitionBytes, 224u * 1024);
  EXPECT_EQ(t1.psumBankBytes(), 2048u);
  EXPECT_DOUBLE_EQ(t1.dmaFixedCostNs, 1300);
  EXPECT_DOUBLE_EQ(t2.dmaFixedCostNs, 600);
  EXPECT_DOUBLE_EQ(t1.hbmBytesPerNs, 820);
  EXPECT_EQ(t1.hbmBytes, uint64_t(32) << 30);
  for (const Profile *p : {&t1, &t2})
    for (const auto &[key, fig] : p->figures)
      EXPECT_FALSE(fig.source.empty()) << key;
  for (const char *est : {"pcie_bytes_per_ns", "launch_overhead_ns",
                          "first_run_overhead_ns", "tracing_cost_per_op_ns"})
    EXPECT_TRUE(t1.figures.at(est).estimated) << est;
  EXPECT_FALSE(t1.figures.at("te_clock_ghz").estimated);
}

TEST(Profile, LoadsFromPathLikeBuiltin) {
  auto p = Profile::load(std::string(SEAM_SOURCE_DIR) +
                         "/runtime/profiles/trn2.json");
  ASSERT_TRUE(bool(p)) << p.error();
  EXPECT_EQ(p->figures.size(), Profile::builtin(Target::Trn2).figures.size());
  EXPECT_DOUBLE_EQ(p->neuronLinkBytesPerNs, 1280);
  EXPECT_FALSE(bool(Profile::load("/nonexistent/x.json")));
}

TEST(Profile, ParseErrorsAreClear) {
  auto bad = Profile::fromJson("{\"name\": \"x\",\n \"target\": }", "t.json");
  EXPECT_EQ(bad.error(), "profile t.json: JSON parse error at line 2, column "
                         "12: unexpected character '}'");
  auto missing = Profile::fromJson(
      R"({"name":"x","target":"trn1","figures":{}})", "m.json");
  EXPECT_EQ(missing.error(), "profile m.json: missing figure 'cores_per_chip'");
  auto noSource = Profile::fromJson(
      R"({"name":"x","target":"trn1","figures":{"te_clock_ghz":{"value":1,"estimated":false}}})",
      "s.json");
  EXPECT_EQ(noSource.error(),
            "profile s.json: figure 'te_clock_ghz' has no 'source'");
  EXPECT_EQ(Profile::builtin("trn3").error(),
            "unknown target 'trn3' (expected trn1 or trn2)");
}

TEST(Profile, OverridesForAblations) {
  Profile p = Profile::builtin(Target::Trn1);
  EXPECT_TRUE(p.set("launch_overhead_ns", 0));
  EXPECT_EQ(p.launchOverheadNs, 0);
  EXPECT_EQ(p.figures.at("launch_overhead_ns").value, 0);
  EXPECT_TRUE(p.set("dma_engines=8"));
  EXPECT_EQ(p.dmaEngines, 8u);
  Status unknown = p.set("no_such_figure", 1);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(unknown.error().rfind("the trn1 profile has no figure "
                                  "'no_such_figure'; figures: cores_per_chip, "
                                  "te_clock_ghz, ",
                                  0),
            0u)
      << unknown.error();
}

// Each figure's rules hold for overrides as for the profile files: a clock of
// 0 or -1 would make the model faster, a count of 0 divide by zero, a NaN
// poison every timeline. A refused override leaves the profile unchanged.
TEST(Profile, OverridesAreCheckedAgainstTheFiguresRules) {
  Profile p = Profile::builtin(Target::Trn1);
  auto why = [&](const char *assignment) { return p.set(assignment).error(); };
  EXPECT_EQ(why("te_clock_ghz=0"),
            "figure 'te_clock_ghz' must be positive, got 0");
  EXPECT_EQ(why("te_clock_ghz=-1"),
            "figure 'te_clock_ghz' must be positive, got -1");
  EXPECT_EQ(why("dma_engines=0"),
            "figure 'dma_engines' must be positive, got 0");
  EXPECT_EQ(why("dma_engines=1.5"),
            "figure 'dma_engines' must be a whole number, got 1.5");
  EXPECT_EQ(why("launch_overhead_ns=-5"),
            "figure 'launch_overhead_ns' must be non-negative, got -5");
  EXPECT_EQ(why("hbm_bytes_per_ns=nan"),
            "figure 'hbm_bytes_per_ns' must be a finite number, got nan");
  EXPECT_EQ(why("sbuf_partitions=129"),
            "figure 'sbuf_partitions' must be at most 128, got 129");
  EXPECT_EQ(why("sbuf_partition_bytes=1e15"),
            "figure 'sbuf_partition_bytes' must be at most 16777216, got "
            "1000000000000000");
  EXPECT_EQ(why("psum_banks=3"), "psum_partition_bytes (16384) is not a "
                                 "multiple of psum_banks (3)");
  EXPECT_EQ(why("te_clock_ghz=fast"), "figure 'te_clock_ghz': 'fast' is not "
                                      "a number");
  EXPECT_EQ(why("te_clock_ghz="), "figure 'te_clock_ghz': '' is not a number");
  EXPECT_EQ(why("=1"), "expected name=value, got '=1'");
  const Profile &builtin = Profile::builtin(Target::Trn1);
  EXPECT_EQ(p.teClockGhz, builtin.teClockGhz);
  EXPECT_EQ(p.dmaEngines, builtin.dmaEngines);
  EXPECT_EQ(p.psumBanks, builtin.psumBanks);
  EXPECT_EQ(p.figures.at("psum_banks").value,
            builtin.figures.at("psum_banks").value);
  // The figures without an upper bound still take large finite values.
  EXPECT_TRUE(p.set("hbm_bytes_per_ns", 1e6));
  EXPECT_TRUE(p.set("psum_banks", 16));
}

TEST(Profile, FilesAreCheckedByTheSameRules) {
  auto frac = Profile::fromJson(
      R"({"name":"x","target":"trn1","figures":{"cores_per_chip":{"value":1.5,"source":"s","estimated":false}}})",
      "f.json");
  EXPECT_EQ(frac.error(),
            "profile f.json: figure 'cores_per_chip' must be a whole number, "
            "got 1.5");
}

/// Host figures come from a framework profile: the device files hold none,
/// the default framework fills them, and another framework replaces them.
TEST(FrameworkProfile, BuiltinsApplyOverTheDeviceProfile) {
  EXPECT_EQ(FrameworkProfile::builtinNames(),
            "torch-native-eager, torch-xla-lazy");
  const Profile &t1 = Profile::builtin(Target::Trn1);
  EXPECT_EQ(t1.framework, "torch-xla-lazy");
  EXPECT_TRUE(Profile::isHostFigure("kernel_call_host_ns"));
  EXPECT_FALSE(Profile::isHostFigure("te_clock_ghz"));

  auto xla = FrameworkProfile::builtin("torch-xla-lazy");
  ASSERT_TRUE(bool(xla)) << xla.error();
  EXPECT_TRUE(xla->supports(Target::Trn1));
  EXPECT_TRUE(xla->supports(Target::Trn2));
  auto native = FrameworkProfile::builtin("torch-native-eager");
  ASSERT_TRUE(bool(native)) << native.error();
  EXPECT_FALSE(native->supports(Target::Trn1));

  // Every host figure of each framework has a source; exactly one is
  // calibrated, on a named row, with held-out rows.
  for (const FrameworkProfile *fw : {&*xla, &*native}) {
    int calibrated = 0;
    for (const auto &[key, fig] : fw->figures) {
      EXPECT_TRUE(Profile::isHostFigure(key)) << key;
      EXPECT_FALSE(fig.source.empty()) << key;
      calibrated += fig.calibrated;
    }
    EXPECT_EQ(calibrated, 1) << fw->name;
    ASSERT_TRUE(fw->calibration.has_value()) << fw->name;
    EXPECT_TRUE(fw->figures.at(fw->calibration->figure).calibrated);
    EXPECT_FALSE(fw->calibration->heldOut.empty());
  }
  EXPECT_EQ(xla->calibration->figure, "tracing_cost_per_op_ns");
  EXPECT_EQ(xla->calibration->row, "flux2_klein.eager.rows[0].warm_s_per_step");
  EXPECT_EQ(native->calibration->figure, "kernel_call_host_ns");
  EXPECT_EQ(native->calibration->row, "fnet_fft.rows[0].kernel_ms");

  Profile t2 = Profile::builtin(Target::Trn2);
  ASSERT_TRUE(bool(t2.applyFramework(*native)));
  EXPECT_EQ(t2.framework, "torch-native-eager");
  EXPECT_DOUBLE_EQ(t2.tracingCostPerOpNs, 0);
  EXPECT_DOUBLE_EQ(t2.kernelCallHostNs,
                   native->figures.at("kernel_call_host_ns").value);
  EXPECT_NE(t2.kernelCallHostNs, t1.kernelCallHostNs);
  EXPECT_TRUE(t2.figures.at("kernel_call_host_ns").calibrated);
  EXPECT_DOUBLE_EQ(t2.teClockGhz,
                   Profile::builtin(Target::Trn2).teClockGhz); // untouched

  Profile p = t1;
  Status wrong = p.applyFramework(*native);
  EXPECT_EQ(wrong.error(), "framework 'torch-native-eager' has no figures "
                           "for trn1 (its targets: trn2)");
  EXPECT_EQ(p.framework, "torch-xla-lazy"); // unchanged

  EXPECT_EQ(FrameworkProfile::builtin("jax").error(),
            "unknown framework 'jax' (known: torch-native-eager, "
            "torch-xla-lazy)");
  auto file = FrameworkProfile::load(
      std::string(SEAM_SOURCE_DIR) +
      "/runtime/profiles/frameworks/torch-native-eager.json");
  ASSERT_TRUE(bool(file)) << file.error();
  EXPECT_EQ(file->figures.size(), native->figures.size());
}

namespace {
/// A framework profile's JSON with every host figure at 0 and `extra`
/// members (`figures` entries first, then top-level members).
std::string frameworkJson(const std::string &figureExtra,
                          const std::string &topExtra,
                          const std::string &targets = "[\"trn2\"]") {
  std::string figs;
  for (const char *n :
       {"pcie_bytes_per_ns", "transfer_latency_ns", "launch_overhead_ns",
        "first_run_overhead_ns", "tracing_cost_per_op_ns", "graph_lookup_ns",
        "sync_ns", "kernel_call_host_ns"})
    if (figureExtra.find(std::string("\"") + n + "\"") == std::string::npos)
      figs += std::string(figs.empty() ? "" : ",") + "\"" + n +
              "\":{\"value\":" +
              (std::string(n) == "pcie_bytes_per_ns" ? "25" : "0") +
              ",\"source\":\"s\",\"estimated\":true}";
  if (!figureExtra.empty())
    figs += "," + figureExtra;
  return "{\"name\":\"f\",\"targets\":" + targets + ",\"figures\":{" + figs +
         "}" + topExtra + "}";
}
std::string frameworkError(const std::string &text) {
  auto fw = FrameworkProfile::fromJson(text, "fw.json");
  return fw ? std::string("(loaded)") : fw.error();
}
} // namespace

TEST(FrameworkProfile, MalformedFilesGiveOneClearError) {
  EXPECT_EQ(frameworkError(frameworkJson("", "")), "(loaded)");
  EXPECT_EQ(frameworkError("{\"name\": \"f\",\n \"targets\": ]}"),
            "framework profile fw.json: JSON parse error at line 2, column "
            "13: unexpected character ']'");
  EXPECT_EQ(frameworkError(frameworkJson("", "", "[]")),
            "framework profile fw.json: missing non-empty array 'targets'");
  EXPECT_EQ(frameworkError(frameworkJson("", "", "[\"trn9\"]")),
            "framework profile fw.json: 'targets' holds unknown target "
            "'trn9' (expected trn1 or trn2)");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          R"("te_clock_ghz":{"value":1,"source":"s","estimated":false})", "")),
      "framework profile fw.json: figure 'te_clock_ghz' is not a host figure "
      "(host figures: pcie_bytes_per_ns, transfer_latency_ns, "
      "launch_overhead_ns, first_run_overhead_ns, tracing_cost_per_op_ns, "
      "graph_lookup_ns, sync_ns, kernel_call_host_ns)");
  EXPECT_EQ(frameworkError(frameworkJson(
                R"("sync_ns":{"value":-1,"source":"s","estimated":true})", "")),
            "framework profile fw.json: figure 'sync_ns' must be "
            "non-negative, got -1");
  EXPECT_EQ(frameworkError(frameworkJson(
                R"("sync_ns":{"value":1,"source":"","estimated":true})", "")),
            "framework profile fw.json: figure 'sync_ns' has no 'source'");
  std::string calibratedSync =
      R"("sync_ns":{"value":1,"source":"s","estimated":true,"calibrated":true})";
  EXPECT_EQ(frameworkError(frameworkJson(calibratedSync, "")),
            "framework profile fw.json: figure 'sync_ns' is calibrated but "
            "the profile names no 'calibration' row");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          calibratedSync +
              R"(,"graph_lookup_ns":{"value":1,"source":"s","estimated":true,"calibrated":true})",
          "")),
      "framework profile fw.json: figures 'graph_lookup_ns' and 'sync_ns' "
      "are both calibrated: a profile calibrates at most one");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          calibratedSync,
          R"(,"calibration":{"figure":"graph_lookup_ns","row":"a.b","count":"kernel_calls"})")),
      "framework profile fw.json: calibration figure 'graph_lookup_ns' is "
      "not the figure marked \"calibrated\": true ('sync_ns' is)");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          calibratedSync,
          R"(,"calibration":{"figure":"sync_ns","count":"kernel_calls"})")),
      "framework profile fw.json: calibration has no string 'row' (the "
      "published row it is computed on)");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          calibratedSync,
          R"(,"calibration":{"figure":"sync_ns","row":"a.b","count":"steps"})")),
      "framework profile fw.json: calibration's 'count' must be traced_ops "
      "or kernel_calls");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          calibratedSync,
          R"(,"calibration":{"figure":"sync_ns","row":"a.b","count":"kernel_calls","held_out":["a.b"]})")),
      "framework profile fw.json: calibration row 'a.b' is also listed as "
      "held out");
  EXPECT_EQ(
      frameworkError(frameworkJson(
          calibratedSync,
          R"(,"calibration":{"figure":"sync_ns","row":"a.b","count":"kernel_calls","held_out":["a.c"]})")),
      "(loaded)");
  // A missing host figure.
  std::string noSync = frameworkJson("", "");
  size_t at = noSync.find(",\"sync_ns\"");
  noSync.erase(at, noSync.find('}', at) - at + 1);
  EXPECT_EQ(frameworkError(noSync),
            "framework profile fw.json: missing figure 'sync_ns'");
  EXPECT_EQ(FrameworkProfile::load("/nonexistent/fw.json").error(),
            "framework profile /nonexistent/fw.json: cannot open");
}

/// A device profile holding a host figure is refused: host figures belong
/// to the framework.
TEST(FrameworkProfile, DeviceProfilesHoldNoHostFigures) {
  auto p = Profile::fromJson(
      R"({"name":"x","target":"trn1","figures":{"kernel_call_host_ns":{"value":1,"source":"s","estimated":true}}})",
      "d.json");
  EXPECT_EQ(p.error(), "profile d.json: figure 'kernel_call_host_ns' is a "
                       "host (framework) figure: it belongs in a framework "
                       "profile (runtime/profiles/frameworks), not in a "
                       "device profile");
}
