// Exactly-once under crashes (docs/design.md invariant 6; the README's crash-safety section): a
// pipeline with files and topic sources, an aggregate, a dedup, a join and
// an AUTO CDC target, crashed at every I/O call in every crash mode (and in
// the recovery after some of them), then in a seeded random campaign. After
// each recovery and a rerun every dataset equals the crash-free run's.
#include "pipeline_crash.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace spool::crashtest {
namespace {

TEST(PipelineCrashTest, EveryCrashPointInEveryModeGivesTheCrashFreeTables) {
  const CrashFigures f = EnumeratePipelineCrashes(/*crash_recovery=*/true);
  PrintFigures("pipeline", f);
  EXPECT_GT(f.crash_points, 100u);
  EXPECT_GT(f.recovery_crash_states, 0u);
  EXPECT_EQ(f.states_checked - f.recovery_crash_states, 1 + f.crash_points * EnumeratedModesPerPoint());
  EXPECT_EQ(f.violations, 0u);
}

TEST(PipelineCrashTest, RandomCampaignGivesTheCrashFreeTables) {
  const CampaignSeeds seeds = CampaignSeedsFromEnv("SPOOL_PIPELINE_CAMPAIGN", 3000);
  const CrashFigures f = RunPipelineCampaign(seeds.first_seed, seeds.cycles);
  PrintCampaignSeeds("pipeline", seeds);
  PrintFigures("pipeline", f, /*campaign=*/true);
  EXPECT_EQ(f.crash_points, seeds.cycles);
  EXPECT_EQ(f.violations, 0u);
}

}  // namespace
}  // namespace spool::crashtest
