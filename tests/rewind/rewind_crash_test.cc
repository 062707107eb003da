// A whole-pipeline rewind under crashes (DESIGN.md §6, §10; TESTING.md):
// crashed at every I/O call in every crash mode, and in the retried rewind
// after some of them, then in a seeded random campaign. After each: the cut
// was atomic, the incomplete-rewind record told the truth, rewinding again
// gave the uninterrupted rewind's tables, and the replay gave the tables of
// a run without any rewind.
#include <gtest/gtest.h>

#include "rewind_crash.h"

namespace spool::crashtest {
namespace {

TEST(RewindCrashTest, EveryCrashPointInEveryModeConvergesAndReplaysExactlyOnce) {
  const CrashFigures f = EnumerateRewindCrashes(/*crash_recovery=*/true);
  PrintFigures(f);
  EXPECT_GT(f.crash_points, 10u);
  EXPECT_GT(f.recovery_crash_states, 0u);
  EXPECT_EQ(f.states_checked - f.recovery_crash_states, 1 + f.crash_points * std::size(kAllCrashModes));
  EXPECT_EQ(f.violations, 0u);
}

TEST(RewindCrashTest, RandomCampaignConvergesAndReplaysExactlyOnce) {
  const CampaignSeeds seeds = CampaignSeedsFromEnv("SPOOL_REWIND_CAMPAIGN", 3000);
  const CrashFigures f = RunRewindCampaign(seeds.first_seed, seeds.cycles);
  PrintCampaignSeeds("rewind", seeds);
  PrintFigures(f);
  EXPECT_EQ(f.crash_points, seeds.cycles);
  EXPECT_EQ(f.violations, 0u);
}

}  // namespace
}  // namespace spool::crashtest
