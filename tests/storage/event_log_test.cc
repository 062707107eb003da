#include "spool/storage/event_log.h"

#include <gtest/gtest.h>

#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"

namespace spool {
namespace {

class EventLogTest : public ::testing::Test {
 protected:
  void Open() {
    events_.reset();
    ASSERT_TRUE(EventLog::Open(&env_, "/events", &events_).ok());
  }
  Event Make(std::string type, EventLevel level, std::string flow, std::string details = "{}") {
    Event e;
    e.origin = EventOrigin{"pipe-1", "upd-1", std::move(flow), "main.sales.orders"};
    e.level = level;
    e.event_type = std::move(type);
    e.message = "something happened";
    e.details_json = std::move(details);
    return e;
  }
  std::vector<Event> Query(const EventQuery& q) {
    std::vector<Event> out;
    Status s = events_->Query(q, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  MemEnv env_;
  std::unique_ptr<EventLog> events_;
};

TEST_F(EventLogTest, AppendAssignsSequenceUuidAndTimestamp) {
  Open();
  Event first = Make("create_update", EventLevel::kInfo, "");
  Event second = Make("flow_progress", EventLevel::kMetrics, "orders_flow", R"({"rows": 10})");
  ASSERT_TRUE(events_->Append(&first).ok());
  ASSERT_TRUE(events_->Append(&second).ok());
  EXPECT_EQ(first.sequence, 1u);
  EXPECT_EQ(second.sequence, 2u);
  EXPECT_GT(second.timestamp_us, first.timestamp_us);
  ASSERT_EQ(first.id.size(), 36u);
  EXPECT_EQ(first.id[8], '-');
  EXPECT_EQ(first.id[14], '4');  // version 4
  EXPECT_NE(first.id, second.id);
}

TEST_F(EventLogTest, QueryFiltersByTypeLevelOriginTimeAndLimit) {
  Open();
  std::vector<Event> appended;
  for (int i = 0; i < 30; ++i) {
    env_.SetNowMicros(1'000'000 + static_cast<uint64_t>(i) * 1000);
    Event e = i % 3 == 0 ? Make("flow_progress", EventLevel::kMetrics, "flow_" + std::to_string(i % 2))
                         : Make("update_progress", i % 5 == 0 ? EventLevel::kWarn : EventLevel::kInfo, "");
    ASSERT_TRUE(events_->Append(&e).ok());
    appended.push_back(e);
  }
  EventQuery by_type;
  by_type.event_type = "flow_progress";
  EXPECT_EQ(Query(by_type).size(), 10u);
  EventQuery by_level;
  by_level.level = EventLevel::kWarn;
  for (const Event& e : Query(by_level)) EXPECT_EQ(e.level, EventLevel::kWarn);
  EventQuery by_flow;
  by_flow.flow_name = "flow_1";
  EXPECT_EQ(Query(by_flow).size(), 5u);
  EventQuery by_time;
  by_time.since_us = appended[10].timestamp_us;
  by_time.until_us = appended[19].timestamp_us;
  std::vector<Event> window = Query(by_time);
  ASSERT_EQ(window.size(), 10u);
  EXPECT_EQ(window.front().sequence, 11u);
  EXPECT_EQ(window.back().sequence, 20u);
  EventQuery limited;
  limited.limit = 4;
  EXPECT_EQ(Query(limited).size(), 4u);
}

// A query by type reads an index of the types; whatever the order of
// queries and appends, it returns what a scan of every event would.
TEST_F(EventLogTest, AQueryByTypeFindsExactlyTheEventsAScanFinds) {
  Open();
  const char* types[] = {"create_update", "flow_progress", "rewind_summary"};
  auto append = [&](int n) {
    for (int i = 0; i < n; ++i) {
      Event e =
          Make(types[(i * 7) % 3], i % 5 == 0 ? EventLevel::kWarn : EventLevel::kInfo, "f" + std::to_string(i % 2));
      ASSERT_TRUE(events_->Append(&e).ok());
    }
  };
  auto check = [&] {
    const std::vector<Event> all = Query(EventQuery{});
    for (const char* type : types) {
      for (EventLevel level : {EventLevel::kInfo, EventLevel::kWarn}) {
        EventQuery q;
        q.event_type = type;
        q.level = level;
        std::vector<uint64_t> expected, got;
        for (const Event& e : all) {
          if (e.event_type == type && e.level == level) expected.push_back(e.sequence);
        }
        for (const Event& e : Query(q)) got.push_back(e.sequence);
        EXPECT_EQ(got, expected) << type;
      }
    }
    EventQuery limited;
    limited.event_type = "flow_progress";
    limited.limit = 2;
    EXPECT_EQ(Query(limited).size(), 2u);
  };
  append(20);
  check();    // builds the index
  append(9);  // indexed as they are appended
  check();
  Open();  // the index starts over
  append(4);
  check();
}

TEST_F(EventLogTest, EventsSurviveReopenExactly) {
  Open();
  Event e = Make("rewind_summary", EventLevel::kInfo, "", R"({"rewind_point_id": "abc", "datasets": ["a"]})");
  ASSERT_TRUE(events_->Append(&e).ok());
  Open();
  std::vector<Event> all = Query(EventQuery{});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, e.id);
  EXPECT_EQ(all[0].origin, e.origin);
  EXPECT_EQ(all[0].details_json, e.details_json);
  EXPECT_EQ(all[0].timestamp_us, e.timestamp_us);
  EXPECT_EQ(all[0].message, e.message);
}

// The index of types a clean close keeps in TYPES answers the next open's
// queries by type, kept current by appends after it; one that does not fit
// the log (damaged, another store's, or naming an event the log no longer
// has) is left aside and the index built again from the events.
TEST_F(EventLogTest, TheIndexOfTypesKeptAtCloseAnswersOnlyTheLogItFits) {
  Open();
  std::vector<std::string> points;  // the ids of the "point" events, in order
  for (int i = 0; i < 60; ++i) {
    Event e = Make(i % 7 == 0 ? "point" : "flow_progress", EventLevel::kInfo, "f");
    ASSERT_TRUE(events_->Append(&e).ok());
    if (i % 7 == 0) points.push_back(e.id);
  }
  EventQuery by_type;
  by_type.event_type = "point";
  ASSERT_EQ(Query(by_type).size(), points.size());  // builds the index
  events_.reset();
  std::string saved;
  ASSERT_TRUE(ReadFileToString(&env_, "/events/TYPES", &saved).ok());
  const auto ids = [&] {
    std::vector<std::string> out;
    for (const Event& e : Query(by_type)) out.push_back(e.id);
    return out;
  };
  Open();
  Event later = Make("point", EventLevel::kInfo, "f");
  ASSERT_TRUE(events_->Append(&later).ok());
  points.push_back(later.id);
  EXPECT_EQ(ids(), points);
  events_.reset();  // saves the index with `later`
  std::string grown;
  ASSERT_TRUE(ReadFileToString(&env_, "/events/TYPES", &grown).ok());
  EXPECT_NE(grown, saved);

  const auto reopened_with = [&](std::string types) {
    events_.reset();
    std::unique_ptr<File> file;
    EXPECT_TRUE(env_.OpenFile("/events/TYPES", OpenMode::kTruncate, &file).ok());
    EXPECT_TRUE(file->Write(0, types).ok());
    file.reset();
    Open();
    return ids();
  };
  std::string flipped = grown;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 1);
  EXPECT_EQ(reopened_with(flipped), points);
  EXPECT_EQ(reopened_with(grown.substr(0, grown.size() - 3)), points);
  EXPECT_EQ(reopened_with(grown), points);

  // Another store's log, whose TYPES names a "point" at other sequences.
  MemEnv other_env;
  std::unique_ptr<EventLog> other;
  ASSERT_TRUE(EventLog::Open(&other_env, "/events", &other).ok());
  for (int i = 0; i < 70; ++i) {
    Event e = Make(i == 3 ? "point" : "other", EventLevel::kInfo, "f");
    ASSERT_TRUE(other->Append(&e).ok());
  }
  std::vector<Event> found;
  ASSERT_TRUE(other->Query(by_type, &found).ok());
  other.reset();
  std::string foreign;
  ASSERT_TRUE(ReadFileToString(&other_env, "/events/TYPES", &foreign).ok());
  EXPECT_EQ(reopened_with(foreign), points);
}

// With the index kept in TYPES, the first query for a type after an open
// reads no event to find that type's; without it, every event since the
// log began (a rewind's plan looks its point up so, right after an open).
TEST_F(EventLogTest, TheFirstQueryForATypeAfterAnOpenReadsNoEventToFindThem) {
  Open();
  for (int i = 0; i < 200; ++i) {
    Event e = Make(i % 20 == 0 ? "point" : "flow_progress", EventLevel::kInfo, "f");
    ASSERT_TRUE(events_->Append(&e).ok());
  }
  EventQuery by_type;
  by_type.event_type = "point";
  ASSERT_EQ(Query(by_type).size(), 10u);
  EXPECT_EQ(events_->EventsIndexedByReading(), 0u);  // each append indexed its event
  Open();                                            // the close kept the index
  Event later = Make("point", EventLevel::kInfo, "f");
  ASSERT_TRUE(events_->Append(&later).ok());
  EXPECT_EQ(Query(by_type).size(), 11u);
  EXPECT_EQ(events_->EventsIndexedByReading(), 0u);
  events_.reset();
  ASSERT_TRUE(env_.RemoveFile("/events/TYPES").ok());
  Open();
  EXPECT_EQ(Query(by_type).size(), 11u);
  EXPECT_EQ(events_->EventsIndexedByReading(), 201u);
}

TEST(EventLogSyncTest, AnUnsyncedEventIsDurableAfterSync) {
  MemEnv base;
  FaultEnv fault(&base);
  std::unique_ptr<EventLog> events;
  // The process dies (closing syncs nothing), then the power goes.
  auto crash_and_count = [&](uint64_t seed) {
    fault.CrashAtCall(fault.io_calls() + 1);
    events.reset();
    fault.SimulateCrash(CrashMode::kPowerLoss, seed);
    std::unique_ptr<EventLog> reopened;
    EXPECT_TRUE(EventLog::Open(&fault, "/events", &reopened).ok());
    std::vector<Event> all;
    EXPECT_TRUE(reopened->Query(EventQuery{}, &all).ok());
    return all.size();
  };
  ASSERT_TRUE(EventLog::Open(&fault, "/events", &events).ok());
  Event e;
  e.event_type = "flow_progress";
  ASSERT_TRUE(events->Append(&e, /*sync=*/false).ok());
  EXPECT_EQ(crash_and_count(1), 0u);  // written, never synced: lost

  ASSERT_TRUE(EventLog::Open(&fault, "/events", &events).ok());
  ASSERT_TRUE(events->Append(&e, /*sync=*/false).ok());
  ASSERT_TRUE(events->Sync().ok());
  EXPECT_EQ(crash_and_count(2), 1u);
}

TEST_F(EventLogTest, BadEventsAreRefusedAndNothingIsWritten) {
  Open();
  Event bad_json = Make("flow_progress", EventLevel::kInfo, "", "{not json");
  EXPECT_TRUE(events_->Append(&bad_json).IsInvalidArgument());
  Event array = Make("flow_progress", EventLevel::kInfo, "", "[1, 2]");
  Status s = events_->Append(&array);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("JSON object"), std::string::npos);
  Event untyped = Make("", EventLevel::kInfo, "");
  EXPECT_TRUE(events_->Append(&untyped).IsInvalidArgument());
  EXPECT_TRUE(Query(EventQuery{}).empty());
}

TEST(EventLevelTest, NamesRoundTrip) {
  for (EventLevel level : {EventLevel::kInfo, EventLevel::kWarn, EventLevel::kError, EventLevel::kMetrics}) {
    EventLevel parsed;
    ASSERT_TRUE(ParseEventLevel(EventLevelName(level), &parsed).ok());
    EXPECT_EQ(parsed, level);
  }
  EventLevel parsed;
  EXPECT_TRUE(ParseEventLevel("DEBUG", &parsed).IsInvalidArgument());
}

}  // namespace
}  // namespace spool
