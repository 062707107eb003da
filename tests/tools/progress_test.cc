// The progress bar's line: the share, counts, rate and time left it shows.
#include "progress.h"

#include <gtest/gtest.h>

namespace spool::cli {
namespace {

using std::chrono::duration;

TEST(ProgressBarTest, AKnownTotalShowsTheShareTheRateAndTheTimeLeft) {
  EXPECT_EQ(ProgressBar::Render("replay", "records", 4000, 10000, duration<double>(2.0)),
            "replay  [########------------]   40%  4,000/10,000 records  2,000/s  ETA 0:03");
}

TEST(ProgressBarTest, DoneShowsTheFullBarAndTheTimeItTook) {
  EXPECT_EQ(ProgressBar::Render("vacuum", "files", 12, 12, duration<double>(75.0), 10),
            "vacuum  [##########]  100%  12/12 files  0/s  1:15");
}

TEST(ProgressBarTest, AnUnknownTotalShowsTheCountAndTheRateOnly) {
  EXPECT_EQ(ProgressBar::Render("snapshot", "entries", 1234567, 0, duration<double>(0.5)),
            "snapshot  1,234,567 entries  2,469,134/s");
  EXPECT_EQ(ProgressBar::Render("snapshot", "entries", 0, 0, duration<double>(0)), "snapshot  0 entries");
}

TEST(ProgressBarTest, LongWorkShowsHours) {
  EXPECT_EQ(ProgressBar::Render("campaign", "cycles", 1, 3601, duration<double>(1.0), 4),
            "campaign  [----]    0%  1/3,601 cycles  1/s  ETA 1:00:00");
}

TEST(ProgressBarTest, OnlyTheModeDecidesWhenItIsGiven) {
  EXPECT_TRUE(ProgressEnabled(ProgressMode::kOn));
  EXPECT_FALSE(ProgressEnabled(ProgressMode::kOff));
}

}  // namespace
}  // namespace spool::cli
