#include "helper_thread.h"

#include <pthread.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace spool {
namespace {

TEST(HelperThreadTest, RunsEachJobOnceInTheOrderStarted) {
  HelperThread helper("test-helper");
  std::vector<int> ran;  // only the helper touches it until Wait returns
  for (int i = 0; i < 100; ++i) helper.Start([&ran, i] { ran.push_back(i); });
  helper.Wait();
  ASSERT_EQ(ran.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[static_cast<size_t>(i)], i);
}

TEST(HelperThreadTest, WaitSeesWhatTheJobWrote) {
  HelperThread helper("test-helper");
  for (int round = 1; round <= 50; ++round) {
    int value = 0;
    helper.Start([&value, round] { value = round; });
    helper.Wait();
    EXPECT_EQ(value, round);
  }
  helper.Wait();  // nothing running: returns at once
}

TEST(HelperThreadTest, WaitForAJobDoesNotWaitForTheJobsAfterIt) {
  HelperThread helper("test-helper");
  int first = 0;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const uint64_t ticket = helper.Start([&first] { first = 1; });
  EXPECT_EQ(ticket, 1u);
  EXPECT_EQ(helper.Start([released] { released.wait(); }), 2u);  // runs until released
  helper.WaitFor(ticket);                                        // waiting for the second job too would never return
  EXPECT_EQ(first, 1);
  release.set_value();
  EXPECT_EQ(helper.Start([&first] { first = 3; }), 3u);
  helper.WaitFor(3);
  EXPECT_EQ(first, 3);
  helper.WaitFor(2);  // long done: returns at once
}

TEST(HelperThreadTest, WaitForWithASpinStillWaitsForAJobThatOutlastsIt) {
  for (const uint64_t spin_us : {uint64_t{1}, uint64_t{200}}) {
    HelperThread helper("test-helper");
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    int value = 0;  // only the job writes it until WaitFor returns
    const uint64_t ticket = helper.Start([&value, released] {
      released.wait();
      value = 1;
    });
    std::thread releaser([&release] { release.set_value(); });
    helper.WaitFor(ticket, spin_us);  // the job may outlast the spin: then it sleeps
    EXPECT_EQ(value, 1) << spin_us;
    releaser.join();
  }
}

TEST(HelperThreadTest, TheLastJobRunsBeforeTheHelperEnds) {
  bool ran = false;
  {
    HelperThread helper("test-helper");
    helper.Start([&ran] { ran = true; });
  }
  EXPECT_TRUE(ran);
}

// The thread's name, as top -H and gdb show it.
std::string ThisThreadsName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

TEST(HelperThreadTest, JobsRunOnAThreadWithTheHelpersName) {
  HelperThread helper("spool-compress");
  std::string seen;
  helper.Start([&seen] { seen = ThisThreadsName(); });
  helper.Wait();
  EXPECT_EQ(seen, "spool-compress");
  EXPECT_NE(ThisThreadsName(), "spool-compress");  // the owner's is its own
}

TEST(HelperThreadTest, ALongNameIsCutToWhatLinuxKeeps) {
  HelperThread helper("spool-a-name-of-twenty-six");
  std::string seen;
  helper.Start([&seen] { seen = ThisThreadsName(); });
  helper.Wait();
  EXPECT_EQ(seen, "spool-a-name-of");  // 15 bytes
}

}  // namespace
}  // namespace spool
