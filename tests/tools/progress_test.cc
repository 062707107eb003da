// The progress bar's line: the share, counts, rate and time left it shows;
// the digit grouping it and the other tools share.
#include "progress.h"

#include <gtest/gtest.h>

#include "count_format.h"

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

TEST(CountFormatTest, DigitsAreGroupedInThreesFromTheRight) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(UINT64_MAX), "18,446,744,073,709,551,615");
}

TEST(CountFormatTest, ASignStaysInFrontOfTheGroups) {
  EXPECT_EQ(GroupThousands("-123"), "-123");
  EXPECT_EQ(GroupThousands("-123456"), "-123,456");
  EXPECT_EQ(GroupThousands("-1234567"), "-1,234,567");
  EXPECT_EQ(GroupThousands(""), "");
}

}  // namespace
}  // namespace spool::cli
