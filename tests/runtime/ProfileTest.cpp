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
  EXPECT_FALSE(p.set("no_such_figure", 1));
}
