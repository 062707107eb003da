// Retries by how an update was started: a person's fails fast; the API's, a
// job's or a continuous one retries a transient failure (an I/O error
// reading a source) with an event each time, and never a failure a retry
// would meet again. A retried update is one update: one create_update, no
// FAILED state until no retry is left.
#include "spool/rewind/retries.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace spool {
namespace {

class RetriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub("store"), &store_).ok());
    std::filesystem::create_directories(dir_.Sub("in"));
    PipelineBuilder b("retries");
    b.StreamingTable("main.s.t");
    b.Flow("ingest").FromFiles(dir_.Sub("in"), {{"id", ColumnType::kInt64, false}}).Into("main.s.t");
    ASSERT_TRUE(Pipeline::Open(store_.get(), b.Build(), &pipeline_).ok());
    // A "file" the source cannot read: reading it is an I/O error.
    std::filesystem::create_directories(dir_.Sub("in/a.jsonl"));
  }
  void Fix() {
    std::filesystem::remove(dir_.Sub("in/a.jsonl"));
    std::ofstream(dir_.Sub("in/a.jsonl")) << "{\"id\": 1}\n";
  }
  std::vector<Event> Events(const std::string& type) {
    EventQuery query;
    query.event_type = type;
    std::vector<Event> events;
    EXPECT_TRUE(store_->events()->Query(query, &events).ok());
    return events;
  }
  size_t Retries() { return Events("update_retry").size(); }
  // The update_progress states recorded, in order.
  std::vector<std::string> States() {
    std::vector<std::string> states;
    for (const Event& e : Events("update_progress")) {
      const size_t at = e.details_json.find("\"state\":\"");
      states.push_back(e.details_json.substr(at + 9, e.details_json.find('"', at + 9) - at - 9));
    }
    return states;
  }
  UpdateResult Run(UpdateCause cause, RetryPolicy policy, int* attempts) {
    policy.first_wait_us = 0;
    UpdateResult result;
    EXPECT_TRUE(RunUpdateWithRetries(store_.get(), pipeline_.get(), {}, cause, policy, &result, attempts).ok());
    return result;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
};

TEST_F(RetriesTest, APersonsUpdateFailsFastWhateverItsCause) {
  int attempts = 0;
  RetryPolicy policy;
  policy.started_by = StartedBy::kPerson;
  const UpdateResult r = Run(UpdateCause::kApiCall, policy, &attempts);
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_TRUE(r.transient) << r.error;
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(Retries(), 0u);
  EXPECT_EQ(States(), (std::vector<std::string>{"QUEUED", "INITIALIZING", "SETTING_UP_TABLES", "RUNNING", "FAILED"}));
  EXPECT_FALSE(RetriesAutomatically(StartedBy::kPerson, false));
  EXPECT_TRUE(RetriesAutomatically(StartedBy::kPerson, true));  // continuous
  EXPECT_TRUE(RetriesAutomatically(StartedBy::kApi, false));
  EXPECT_TRUE(RetriesAutomatically(StartedBy::kJob, false));
}

TEST_F(RetriesTest, AnApiUpdateRetriesEvenWhenItsCauseIsAUsersAction) {
  int attempts = 0;
  const UpdateResult r = Run(UpdateCause::kUserAction, RetryPolicy{}, &attempts);
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_EQ(attempts, 4);
  EXPECT_EQ(Retries(), 3u);
}

TEST_F(RetriesTest, ARetriedUpdateIsOneUpdateNeverFailedUntilItsLastAttempt) {
  RetryPolicy policy;
  policy.max_retries = 2;
  int attempts = 0;
  const UpdateResult r = Run(UpdateCause::kApiCall, policy, &attempts);
  ASSERT_EQ(attempts, 3);
  EXPECT_EQ(Events("create_update").size(), 1u);
  const std::vector<std::string> states = States();
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(std::count(states.begin(), states.end(), "FAILED"), 1);
  EXPECT_EQ(states.back(), "FAILED");
  EXPECT_EQ(std::count(states.begin(), states.end(), "QUEUED"), 1);
  // The FAILED state carries the last attempt's error.
  const std::vector<Event> progress = Events("update_progress");
  EXPECT_NE(progress.back().details_json.find(r.error), std::string::npos) << progress.back().details_json;
  EXPECT_EQ(progress.back().level, EventLevel::kError);
}

TEST_F(RetriesTest, AnApiUpdateRetriesATransientFailureUntilItPasses) {
  RetryPolicy policy;
  policy.max_retries = 3;
  policy.before_retry = [&](int retry) {
    if (retry == 2) Fix();  // the file is readable from the third attempt on
  };
  int attempts = 0;
  const UpdateResult r = Run(UpdateCause::kApiCall, policy, &attempts);
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(Retries(), 2u);
  std::vector<Row> rows;
  TableId id;
  ASSERT_TRUE(TableId::Parse("main.s.t", &id).ok());
  ASSERT_TRUE(store_
                  ->Read(id, {},
                         [&](const Row& row) {
                           rows.push_back(row);
                           return true;
                         })
                  .ok());
  EXPECT_EQ(rows, (std::vector<Row>{{int64_t{1}}}));
}

TEST_F(RetriesTest, RetriesAreBoundedAndNotForFailuresARetryWouldMeetAgain) {
  RetryPolicy policy;
  policy.max_retries = 2;
  int attempts = 0;
  UpdateResult r = Run(UpdateCause::kJobTask, policy, &attempts);
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_EQ(attempts, 3);  // the first run and two retries
  EXPECT_EQ(Retries(), 2u);
  // A bad record is no I/O error: it fails the same way every time.
  std::filesystem::remove(dir_.Sub("in/a.jsonl"));
  std::ofstream(dir_.Sub("in/a.jsonl")) << "{\"id\": \"one\"}\n";
  r = Run(UpdateCause::kApiCall, policy, &attempts);
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_FALSE(r.transient);
  EXPECT_EQ(attempts, 1);
}

}  // namespace
}  // namespace spool
