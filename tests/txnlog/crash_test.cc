// Crash enumeration (TESTING.md, layer 2) and a seeded random crash
// campaign (layer 3) over the log. Each test prints its figures: crash
// points, states checked, recoveries and violations (which must be 0). A
// failure prints the state that replays it exactly.
#include <gtest/gtest.h>

#include <cstdio>

#include "crash_enumerator.h"

namespace spool::crashtest {
namespace {

class CrashEnumerationTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CrashEnumerationTest, EveryCrashPointInEveryModeRecoversToTheModel) {
  const LogWorkload workload = StandardWorkloads()[GetParam()];
  CrashFigures figures = EnumerateCrashes(workload, /*crash_recovery=*/true);
  PrintFigures(figures);
  EXPECT_GT(figures.crash_points, 10u);
  EXPECT_EQ(figures.states_checked - figures.recovery_crash_states, figures.crash_points * std::size(kAllCrashModes));
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
  PrintFigures(figures);
  EXPECT_EQ(figures.crash_points, cycles);
  EXPECT_EQ(figures.violations, 0u);
}

}  // namespace
}  // namespace spool::crashtest
