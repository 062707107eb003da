// Crash enumeration over the store (the README's crash-safety section, layer 2): every crash point
// of each store workload in every crash mode, and crashes during recovery.
// Each test prints its figures; violations must be 0, and a failure prints
// the state that replays it exactly.
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "store_crash.h"

namespace spool::crashtest {
namespace {

class StoreCrashTest : public ::testing::TestWithParam<size_t> {};

TEST_P(StoreCrashTest, EveryCrashPointInEveryModeRecoversToTheModel) {
  const StoreWorkload& workload = StandardStoreWorkloads()[GetParam()];
  const CrashFigures f = EnumerateStoreCrashes(workload, /*crash_recovery=*/true);
  PrintFigures("store", f);
  EXPECT_GT(f.crash_points, 20u);
  EXPECT_EQ(f.states_checked - f.recovery_crash_states, 1 + f.crash_points * EnumeratedModesPerPoint());
  EXPECT_EQ(f.violations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Workloads, StoreCrashTest, ::testing::Range<size_t>(0, StandardStoreWorkloads().size()),
                         [](const ::testing::TestParamInfo<size_t>& param) {
                           std::string name = StandardStoreWorkloads()[param.param].name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(StoreCrashCampaignTest, RandomWorkloadsAndCrashesKeepEveryInvariant) {
  const CampaignSeeds seeds = CampaignSeedsFromEnv("SPOOL_STORE_CAMPAIGN", 3000);
  const CrashFigures f = RunStoreCampaign(seeds.first_seed, seeds.cycles);
  PrintCampaignSeeds("store", seeds);
  PrintFigures("store", f, /*campaign=*/true);
  EXPECT_EQ(f.crash_points, seeds.cycles);
  EXPECT_EQ(f.violations, 0u);
}

}  // namespace
}  // namespace spool::crashtest
