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
