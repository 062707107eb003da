// A rewind under crashes (docs/design.md, sections 10 and 11; the README's crash-safety section) — of the whole
// pipeline by point and by timestamp, of some datasets, an undo — and the
// full refresh and checkpoint reset: crashed at every I/O call in every
// crash mode, and in the retried operation after some of them, then in a
// seeded random campaign. After each: a rewind was atomic, the
// incomplete-rewind record told the truth, carrying on gave the
// uninterrupted operation's tables, and the replay gave the tables of a
// run without any rewind (rewind_crash.h says exactly what is checked).
#include "rewind_crash.h"

#include <cctype>
#include <string>

#include <gtest/gtest.h>

#include "mixed_crash.h"

namespace spool::crashtest {
namespace {

class RewindCrashTest : public ::testing::TestWithParam<RewindScope> {};

// "rewind-subset" -> "RewindSubset".
std::string Name(RewindScope scope) {
  std::string out;
  bool upper = true;
  for (const char* c = RewindScopeName(scope); *c != '\0'; ++c) {
    if (*c == '-') {
      upper = true;
      continue;
    }
    out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c);
    upper = false;
  }
  return out;
}

TEST_P(RewindCrashTest, EveryCrashPointInEveryModeConvergesAndReplaysExactlyOnce) {
  const CrashFigures f = EnumerateRewindCrashes(GetParam(), /*crash_recovery=*/true);
  PrintFigures("rewind", f);
  EXPECT_GT(f.crash_points, 10u);
  EXPECT_GT(f.recovery_crash_states, 0u);
  EXPECT_EQ(f.states_checked - f.recovery_crash_states, 1 + f.crash_points * EnumeratedModesPerPoint());
  EXPECT_EQ(f.violations, 0u);
}

TEST_P(RewindCrashTest, RandomCampaignConvergesAndReplaysExactlyOnce) {
  const CampaignSeeds seeds = CampaignSeedsFromEnv("SPOOL_REWIND_CAMPAIGN", 3000);
  const CrashFigures f = RunRewindCampaign(GetParam(), seeds.first_seed, seeds.cycles);
  PrintCampaignSeeds(RewindScopeName(GetParam()), seeds);
  PrintFigures("rewind", f, /*campaign=*/true);
  EXPECT_EQ(f.crash_points, seeds.cycles);
  EXPECT_EQ(f.violations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Scopes, RewindCrashTest, ::testing::ValuesIn(kAllRewindScopes),
                         [](const ::testing::TestParamInfo<RewindScope>& param) { return Name(param.param); });

// The mixed workload (mixed_crash.h): random sequences of updates, points,
// rewinds, undos, refreshes and resets with input arriving between them,
// each crashed at a random point; carrying on must give the crash-free
// run's tables and outcomes.
TEST(MixedCrashTest, RandomSequencesOfUpdatesRewindsRefreshesAndResetsStayExactlyOnce) {
  const CampaignSeeds seeds = CampaignSeedsFromEnv("SPOOL_MIXED_CAMPAIGN", 500);
  const CrashFigures f = RunMixedCampaign(seeds.first_seed, seeds.cycles);
  PrintCampaignSeeds("mixed", seeds);
  PrintFigures("mixed", f, /*campaign=*/true);
  EXPECT_EQ(f.crash_points, seeds.cycles);
  EXPECT_GT(f.recovery_crash_states, 0u);
  EXPECT_EQ(f.violations, 0u);
}

// Found by a longer campaign (seeds 7001 on), each as "reordered rows" (no
// row lost or duplicated): an update bounded by max_batches that crashed
// after committing some batches was carried on with its whole bound again,
// so it read files the crash-free run read only after the next inputs
// arrived (in name order, so in another order); and a crash while the
// harness opened the store to note where an op began left it "begun at
// version 0", so carrying the op on counted every batch, or every reset,
// of the whole log as its own. Carrying on now runs only the batches an
// update had left, and an op the process died before runs from its start.
TEST(MixedCrashTest, CarryingOnAnOpDoesWhatTheCrashFreeRunDid) {
  struct Case {
    uint64_t workload_seed;
    CrashState state;
  };
  const Case cases[] = {
      {7903, {67, CrashMode::kTorn512, 15691882040074679878ull, 0}},
      {10035, {91, CrashMode::kPowerLoss, 2292308486964672351ull, 51}},
      {11177, {72, CrashMode::kPrefix, 2158790947476402168ull, 0}},
      {9799, {185, CrashMode::kTorn512, 14403606527883182689ull, 0}},
      {10160, {268, CrashMode::kPrefix, 17200642130035271293ull, 0}},
  };
  for (const Case& c : cases) {
    const StateResult result = CheckMixedState(c.workload_seed, c.state);
    EXPECT_TRUE(result.reached) << MixedWorkloadName(c.workload_seed);
    for (const auto& v : result.violations)
      ADD_FAILURE() << MixedWorkloadName(c.workload_seed) << ": " << v.invariant << ": " << v.detail;
  }
}

}  // namespace
}  // namespace spool::crashtest
