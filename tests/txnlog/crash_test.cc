// Crash enumeration (the README's crash-safety section, layer 2) and a seeded random crash
// campaign (layer 3) over the log. Each test prints its figures: crash
// points, states checked, recoveries and violations (which must be 0). A
// failure prints the state that replays it exactly.
#include <cstdio>

#include <gtest/gtest.h>

#include "crash_enumerator.h"

namespace spool::crashtest {
namespace {

class CrashEnumerationTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CrashEnumerationTest, EveryCrashPointInEveryModeRecoversToTheModel) {
  const LogWorkload workload = StandardWorkloads()[GetParam()];
  CrashFigures figures = EnumerateCrashes(workload, /*crash_recovery=*/true);
  PrintFigures("log", figures);
  EXPECT_GT(figures.crash_points, 10u);
  EXPECT_EQ(figures.states_checked - figures.recovery_crash_states, figures.crash_points * EnumeratedModesPerPoint());
  EXPECT_EQ(figures.violations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Workloads, CrashEnumerationTest, ::testing::Range<size_t>(0, StandardWorkloads().size()),
                         [](const ::testing::TestParamInfo<size_t>& param) {
                           std::string name = StandardWorkloads()[param.param].name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(CrashCampaignTest, RandomWorkloadsCrashesAndFaultsKeepEveryInvariant) {
  const auto [seed, cycles] = CampaignSeedsFromEnv("SPOOL_CAMPAIGN", 3000);
  CrashFigures figures = RunCampaign(seed, cycles);
  PrintFigures("log", figures, /*campaign=*/true);
  EXPECT_EQ(figures.crash_points, cycles);
  EXPECT_EQ(figures.violations, 0u);  // an undetected media fault is one
  // One cycle in ten flips a bit; most flips land in a record and are caught.
  EXPECT_GT(figures.media_faults, cycles / 20);
  EXPECT_GT(figures.media_faults_detected + figures.media_faults_tail_dropped, figures.media_faults / 2);
}

// A flipped bit must never read back as data: the classification of a flip
// against the log read back before it.
TEST(MediaFaultTest, ClassifiesWhatAFlipDid) {
  CrashState state;
  state.flip_bit = true;
  const LogWorkload roll = StandardWorkloads()[2];
  ASSERT_EQ(roll.name, "segment-roll");  // 24 records of 6,000 bytes: the segments are mostly records
  uint64_t detected = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    state.seed = seed;
    const StateResult result = CheckState(roll, state);
    EXPECT_NE(result.media_fault, MediaFault::kNone) << "seed " << seed;
    EXPECT_NE(result.media_fault, MediaFault::kUndetected) << "seed " << seed;
    EXPECT_TRUE(result.violations.empty()) << "seed " << seed << ": " << result.violations[0].detail;
    detected += result.media_fault == MediaFault::kDetected;
  }
  EXPECT_GT(detected, 100u);
}

}  // namespace
}  // namespace spool::crashtest
