#include "spool/txnlog/helper_thread.h"

#include <gtest/gtest.h>

#include <vector>

namespace spool {
namespace {

TEST(HelperThreadTest, RunsEachJobOnceInTheOrderStarted) {
  HelperThread helper;
  std::vector<int> ran;  // only the helper touches it until Wait returns
  for (int i = 0; i < 100; ++i) helper.Start([&ran, i] { ran.push_back(i); });
  helper.Wait();
  ASSERT_EQ(ran.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[static_cast<size_t>(i)], i);
}

TEST(HelperThreadTest, WaitSeesWhatTheJobWrote) {
  HelperThread helper;
  for (int round = 1; round <= 50; ++round) {
    int value = 0;
    helper.Start([&value, round] { value = round; });
    helper.Wait();
    EXPECT_EQ(value, round);
  }
  helper.Wait();  // nothing running: returns at once
}

TEST(HelperThreadTest, TheLastJobRunsBeforeTheHelperEnds) {
  bool ran = false;
  {
    HelperThread helper;
    helper.Start([&ran] { ran = true; });
  }
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace spool
