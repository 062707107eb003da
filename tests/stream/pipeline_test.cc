// The pipeline runtime end to end on a real store: specs and their errors,
// files and dataset sources, each operator against a reference computed
// independently on random inputs split into micro-batches, materialized
// views, exactly-once reruns and the compatibility check.
#include "spool/stream/pipeline.h"

#include <fstream>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "flow_parts.h"
#include "spool/stream/topic.h"
#include "temp_dir.h"

namespace spool {
namespace {

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override { Fresh(); }

  // A new store in a new directory (each seed of a reference test).
  void Fresh() {
    store_.reset();
    dir_ = std::make_unique<TempDir>();
    ASSERT_TRUE(Store::Open(StoreOptions{}, dir_->Sub("store"), &store_).ok());
    std::filesystem::create_directories(dir_->Sub("in"));
  }

  // A store whose log rolls every 64 KiB and that vacuum may cut to the
  // newest version: for tests of what happens once the log drops commits.
  void OpenSmallSegmentStore() {
    store_.reset();
    StoreOptions options;
    options.log.segment_size_bytes = 64 << 10;
    options.min_retention_us = 0;
    ASSERT_TRUE(Store::Open(options, dir_->Sub("small"), &store_).ok());
  }

  // Writes a complete file into the watched directory (by rename, as a
  // producer must).
  void AddFile(const std::string& name, const std::string& text) {
    const std::string tmp = dir_->Sub("in/.tmp");
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, dir_->Sub("in/" + name));
  }

  UpdateResult Run(const PipelineSpec& spec, UpdateOptions options = {}) {
    std::unique_ptr<Pipeline> pipeline;
    Status s = Pipeline::Open(store_.get(), spec, &pipeline);
    EXPECT_TRUE(s.ok()) << s.ToString();
    UpdateResult result;
    if (!s.ok()) return result;
    s = pipeline->Update(options, &result);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return result;
  }

  std::vector<Row> Rows(const std::string& table) {
    TableId id;
    EXPECT_TRUE(TableId::Parse(table, &id).ok());
    std::vector<Row> rows;
    Status s = store_->Read(id, {}, [&](const Row& row) {
      rows.push_back(row);
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }

  // The update failed, its error saying `what`.
  static void ExpectFailed(const UpdateResult& r, std::string_view what) {
    EXPECT_EQ(r.state, UpdateState::kFailed);
    EXPECT_NE(r.error.find(what), std::string::npos) << r.error;
  }

  std::string in() const { return dir_->Sub("in"); }
  std::string Dir(const std::string& name) const {
    std::filesystem::create_directories(dir_->Sub(name));
    return dir_->Sub(name);
  }

  std::vector<Event> Events(std::optional<std::string> type, std::optional<EventLevel> level = std::nullopt) {
    EventQuery query;
    query.event_type = std::move(type);
    query.level = level;
    std::vector<Event> events;
    EXPECT_TRUE(store_->events()->Query(query, &events).ok());
    return events;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Store> store_;
};

std::vector<Column> OrderColumns() {
  return {
      {"id", ColumnType::kInt64, false}, {"country", ColumnType::kString, false}, {"amount", ColumnType::kInt64, true}};
}

std::string Order(int64_t id, const std::string& country, int64_t amount) {
  return "{\"id\": " + std::to_string(id) + ", \"country\": \"" + country +
         "\", \"amount\": " + std::to_string(amount) + "}\n";
}

PipelineSpec OrdersPipeline(const std::string& dir, uint64_t max_files = 1000) {
  PipelineBuilder b("orders");
  b.StreamingTable("main.shop.orders");
  b.StreamingTable("main.shop.revenue");
  b.Flow("ingest").FromFiles(dir, OrderColumns()).Filter("amount > 0").Into("main.shop.orders");
  b.Flow("revenue")
      .FromDataset("main.shop.orders")
      .Aggregate({"country"}, {{"orders", AggregateFn::kCount, ""}, {"revenue", AggregateFn::kSum, "amount"}})
      .Into("main.shop.revenue");
  PipelineSpec spec = b.Build();
  spec.flows[0].max_batch_files = max_files;
  return spec;
}

// A group's key bytes are stored (an aggregate's __group column, the
// windows' keys), so their format may not drift: each value is its type's
// index as a digit, then a big-endian fixed64 (a string or bytes: its length,
// then the bytes), a bool as '0' or '1', NULL as the digit alone.
TEST(GroupKeyBytesTest, EachTypeHasTheFormatItWasStoredIn) {
  using stream_internal::AppendKeyBytes;
  const auto bytes = [](const Value& v) {
    std::string out = "~";  // appended after what is there
    AppendKeyBytes(v, &out);
    return out;
  };
  using namespace std::string_literals;
  EXPECT_EQ(bytes(Value()), "~0");
  EXPECT_EQ(bytes(int64_t{-2}), "~1\xff\xff\xff\xff\xff\xff\xff\xfe"s);
  EXPECT_EQ(bytes(int64_t{258}), "~1\0\0\0\0\0\0\x01\x02"s);
  EXPECT_EQ(bytes(1.5), "~2\x3f\xf8\0\0\0\0\0\0"s);
  EXPECT_EQ(bytes(std::string("ab")),
            "~3\0\0\0\0\0\0\0\x02"
            "ab"s);
  EXPECT_EQ(bytes(true), "~41");
  EXPECT_EQ(bytes(false), "~40");
  EXPECT_EQ(bytes(Timestamp{7}), "~5\0\0\0\0\0\0\0\x07"s);
  EXPECT_EQ(bytes(Bytes{"\0"s}), "~6\0\0\0\0\0\0\0\x01\0"s);
  EXPECT_EQ(stream_internal::KeyBytes({int64_t{1}, std::string("x")}, {1, 0}),
            "3\0\0\0\0\0\0\0\x01x1\0\0\0\0\0\0\0\x01"s);
}

TEST_F(PipelineTest, FilesFilterAndAggregateExactlyOnceAcrossUpdates) {
  AddFile("a.jsonl", Order(1, "de", 10) + Order(2, "fr", 5) + Order(3, "de", -1));
  AddFile("b.jsonl", Order(4, "de", 7));
  UpdateResult r = Run(OrdersPipeline(in(), 1));
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(r.flows[0].batches, 2u);  // one file per batch
  EXPECT_EQ(Rows("main.shop.orders").size(), 3u);
  std::vector<Row> revenue = Rows("main.shop.revenue");
  ASSERT_EQ(revenue.size(), 2u);
  EXPECT_EQ(revenue[0], (Row{std::string("de"), int64_t{2}, int64_t{17}}));
  EXPECT_EQ(revenue[1], (Row{std::string("fr"), int64_t{1}, int64_t{5}}));

  // A rerun with nothing new changes nothing; a new file is read once.
  r = Run(OrdersPipeline(in()));
  EXPECT_EQ(r.batches, 0u);
  AddFile("c.jsonl", Order(5, "fr", 1));
  r = Run(OrdersPipeline(in()));
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 4u);
  revenue = Rows("main.shop.revenue");
  EXPECT_EQ(revenue[1], (Row{std::string("fr"), int64_t{2}, int64_t{6}}));

  // Each batch recorded a flow_progress event; the update its states.
  std::vector<Event> events = Events("flow_progress");
  EXPECT_GE(events.size(), 4u);
  EXPECT_NE(events[0].details_json.find("num_output_rows"), std::string::npos);
  std::vector<std::string> states;
  for (const Event& e : Events("update_progress")) {
    const size_t at = e.details_json.find("\"state\":\"");
    if (at != std::string::npos)
      states.push_back(e.details_json.substr(at + 9, e.details_json.find('"', at + 9) - at - 9));
  }
  ASSERT_GE(states.size(), 5u);  // the last update's, after the others'
  EXPECT_EQ(std::vector<std::string>(states.end() - 5, states.end()),
            (std::vector<std::string>{"QUEUED", "INITIALIZING", "SETTING_UP_TABLES", "RUNNING", "COMPLETED"}));
}

TEST_F(PipelineTest, BadRecordFailsTheUpdateNamingFileAndLineAndCommitsNothing) {
  AddFile("a.jsonl", Order(1, "de", 10) + "{\"id\": \"x\"}\n");
  UpdateResult r = Run(OrdersPipeline(in()));
  ExpectFailed(r, "a.jsonl");
  EXPECT_NE(r.error.find("line 2"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("ingest"), std::string::npos) << r.error;
  EXPECT_TRUE(Rows("main.shop.orders").empty());
  EXPECT_TRUE(r.flows[1].skipped);  // downstream of the failure
  std::vector<Event> errors = Events(std::nullopt, EventLevel::kError);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].origin.flow_name, "ingest");
}

// A record that is not UTF-8 is bad input like any other: the update
// fails naming it, and the error's event (JSON) holds its bytes replaced.
TEST_F(PipelineTest, ARecordThatIsNotUtf8FailsTheUpdateLikeAnyBadRecord) {
  AddFile("a.jsonl", Order(1, "de", 10) + "{\"id\": 2, \"country\": \"fr\xff\x92\", \"amount\": \xff}\n");
  UpdateResult r = Run(OrdersPipeline(in()));
  ExpectFailed(r, "a.jsonl");
  EXPECT_NE(r.error.find("line 2"), std::string::npos) << r.error;
  EXPECT_TRUE(Rows("main.shop.orders").empty());
  std::vector<Event> errors = Events(std::nullopt, EventLevel::kError);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].origin.flow_name, "ingest");
  EXPECT_TRUE(nlohmann::json::accept(errors[0].details_json)) << errors[0].details_json;
}

// Columns no step reads are left NULL by the source (column pruning), but
// still checked: the steps see every column they read, through a filter,
// a select and an aggregate (note and at go unread), and a record whose unread column does not fit
// fails the update as it would without pruning.
TEST_F(PipelineTest, AFlowReadsTheColumnsItsStepsUseAndStillChecksTheOthers) {
  const std::vector<Column> columns = {{"id", ColumnType::kInt64, false},
                                       {"country", ColumnType::kString, false},
                                       {"amount", ColumnType::kInt64, true},
                                       {"note", ColumnType::kString, true},
                                       {"at", ColumnType::kTimestamp, false}};
  const auto pipeline = [&] {
    PipelineBuilder b("pruned");
    b.StreamingTable("main.s.totals");
    b.Flow("totals")
        .FromFiles(in(), columns)
        .Filter("id < 100 AND country = 'de'")  // id: read by the filter alone
        .Select({{"country", "country"}, {"twice", "amount * 2"}})
        .Aggregate({"country"}, {{"n", AggregateFn::kCount, ""}, {"sum", AggregateFn::kSum, "twice"}})
        .Into("main.s.totals");
    b.StreamingTable("main.s.amounts");  // an aggregate reading the source itself
    b.Flow("amounts")
        .FromFiles(in(), columns)
        .Aggregate({"country"}, {{"amount", AggregateFn::kSum, "amount"}})
        .Into("main.s.amounts");
    return b.Build();
  };
  const auto order = [](int64_t id, const std::string& country, const std::string& amount, const std::string& note,
                        const std::string& at) {
    return "{\"id\": " + std::to_string(id) + ", \"country\": \"" + country + "\", \"amount\": " + amount +
           ", \"note\": " + note + ", \"at\": " + at + "}\n";
  };
  AddFile("a.jsonl", order(1, "de", "10", R"("a note long enough to be kept on the heap")", "1767323045678901") +
                         order(2, "fr", "5", "null", R"("2026-01-02 03:04:05")") +
                         order(3, "de", "7", "null", "1767323045678901"));
  UpdateResult r = Run(pipeline());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.totals"), (std::vector<Row>{{std::string("de"), int64_t{2}, int64_t{34}}}));
  EXPECT_EQ(Rows("main.s.amounts"),
            (std::vector<Row>{{std::string("de"), int64_t{17}}, {std::string("fr"), int64_t{5}}}));

  // Unread, but not unchecked: a note that is not a string, a timestamp
  // that is not one, a NOT NULL column missing.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {order(4, "de", "1", "12", "1767323045678901"), "column 'note': expected a string, got 12"},
      {order(4, "de", "1", "null", R"("yesterday")"), "column 'at'"},
      {"{\"id\": 4, \"country\": \"de\", \"amount\": 1}\n", "column 'at' is missing and must not be null"}};
  for (size_t i = 0; i < bad.size(); ++i) {
    AddFile("b" + std::to_string(i) + ".jsonl", bad[i].first);
    r = Run(pipeline());
    ExpectFailed(r, bad[i].second);
    EXPECT_NE(r.error.find("b" + std::to_string(i) + ".jsonl line 1"), std::string::npos) << r.error;
    std::filesystem::remove(dir_->Sub("in/b" + std::to_string(i) + ".jsonl"));
  }
  EXPECT_EQ(Rows("main.s.totals"), (std::vector<Row>{{std::string("de"), int64_t{2}, int64_t{34}}}));
}

TEST_F(PipelineTest, RescuePolicyKeepsBadRecordsInTheRescueColumn) {
  AddFile("a.jsonl", Order(1, "de", 10) + "{\"id\": 2, \"country\": \"fr\", \"amount\": \"lots\"}\n");
  PipelineBuilder b("rescue");
  std::vector<Column> columns = OrderColumns();
  for (Column& c : columns) c.nullable = true;
  b.StreamingTable("main.shop.raw");
  b.Flow("ingest").FromFiles(in(), columns, FileFormat::kJsonLines, BadRecords::kRescue).Into("main.shop.raw");
  // A flow that reads neither the rescue column nor the bad value: the
  // record is still a row.
  b.StreamingTable("main.shop.by_country");
  b.Flow("count")
      .FromFiles(in(), columns, FileFormat::kJsonLines, BadRecords::kRescue)
      .Select({{"country", "coalesce(country, '?')"}})
      .Aggregate({"country"}, {{"orders", AggregateFn::kCount, ""}})
      .Into("main.shop.by_country");
  UpdateResult r = Run(b.Build());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  std::vector<Row> rows = Rows("main.shop.raw");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(IsNull(rows[0][3]));
  EXPECT_TRUE(IsNull(rows[1][2]));
  ASSERT_TRUE(std::holds_alternative<std::string>(rows[1][3]));
  EXPECT_NE(std::get<std::string>(rows[1][3]).find("lots"), std::string::npos);
  EXPECT_EQ(Rows("main.shop.by_country"),
            (std::vector<Row>{{std::string("de"), int64_t{1}}, {std::string("fr"), int64_t{1}}}));
}

TEST_F(PipelineTest, IncompatibleStateFailsNamingTheFlowAndCompatibleChangesRun) {
  AddFile("a.jsonl", Order(1, "de", 10));
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  // A different filter is compatible.
  PipelineSpec changed = OrdersPipeline(in());
  std::get<FilterStep>(changed.flows[0].steps[0]).condition = "amount > 1";
  AddFile("b.jsonl", Order(2, "de", 1) + Order(3, "de", 4));
  UpdateResult r = Run(changed);
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 2u);
  // Grouping by something else is not.
  PipelineSpec regrouped = OrdersPipeline(in());
  std::get<AggregateStep>(regrouped.flows[1].steps[0]).group_by = {"country"};
  std::get<AggregateStep>(regrouped.flows[1].steps[0]).aggregates[1].fn = AggregateFn::kMax;
  r = Run(regrouped);
  ExpectFailed(r, "'revenue'");
  EXPECT_NE(r.error.find("full refresh"), std::string::npos) << r.error;
  // Nor is another source: the offsets belong to the old one.
  PipelineSpec moved = OrdersPipeline(dir_->Sub("elsewhere"));
  r = Run(moved);
  ExpectFailed(r, "'ingest'");
}

TEST_F(PipelineTest, StreamOverUpdatedTableFailsUnlessSkippingChangeCommits) {
  PipelineBuilder b("p");
  b.StreamingTable("main.s.raw");
  b.StreamingTable("main.s.copy");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.raw");
  b.Flow("copy").FromDataset("main.s.raw").Into("main.s.copy");
  AddFile("a.jsonl", Order(1, "de", 10));
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  // The upstream table is emptied (as a full refresh does), then gets a row.
  TableId raw;
  ASSERT_TRUE(TableId::Parse("main.s.raw", &raw).ok());
  Transaction truncate;
  truncate.Truncate(raw);
  ASSERT_TRUE(store_->Commit(truncate).ok());
  AddFile("b.jsonl", Order(2, "de", 3));
  UpdateResult r = Run(b.Build());
  ExpectFailed(r, "skip_change_commits");
  PipelineSpec skipping = b.Build();
  skipping.flows[1].source.skip_change_commits = true;
  r = Run(skipping);
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.copy").size(), 2u);  // the old row stays, the new one arrived
}

// --- operators against references ------------------------------------------

struct Event3 {
  int64_t key;
  int64_t value;
  int64_t time;  // seconds
};

std::vector<Event3> RandomEvents(uint32_t seed, size_t n, int64_t keys, int64_t disorder) {
  std::mt19937 rng(seed);
  std::vector<Event3> events;
  int64_t clock = 1000;
  for (size_t i = 0; i < n; ++i) {
    clock += static_cast<int64_t>(rng() % 3);
    const int64_t late = static_cast<int64_t>(rng() % static_cast<uint32_t>(disorder + 1));
    events.push_back({static_cast<int64_t>(rng() % static_cast<uint32_t>(keys)), static_cast<int64_t>(rng() % 100) - 20,
                      clock - late});
  }
  return events;
}

std::string EventLine(const Event3& e) {
  return "{\"k\": " + std::to_string(e.key) + ", \"v\": " + std::to_string(e.value) +
         ", \"t\": " + std::to_string(e.time * 1000000) + "}\n";
}

std::vector<Column> EventColumns() {
  return {{"k", ColumnType::kInt64, false}, {"v", ColumnType::kInt64, false}, {"t", ColumnType::kTimestamp, false}};
}

// Writes the events into `dir` as files of `per_file` lines, named in
// order: with max_batch_files = 1 each file is one batch.
template <typename T>
void WriteBatches(const std::string& dir, const std::vector<T>& events, size_t per_file,
                  std::string (*line)(const T&)) {
  for (size_t i = 0; i < events.size(); i += per_file) {
    std::string text;
    for (size_t j = i; j < std::min(events.size(), i + per_file); ++j) text += line(events[j]);
    char name[32];
    std::snprintf(name, sizeof name, "/f%06zu.jsonl", i);
    std::ofstream(dir + name) << text;
  }
}

TEST_F(PipelineTest, GroupedAggregateMatchesReference) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    Fresh();
    const std::vector<Event3> events = RandomEvents(seed, 500, 13, 0);
    WriteBatches(in(), events, 37, EventLine);
    PipelineBuilder b("agg");
    b.StreamingTable("main.s.agg");
    b.Flow("agg")
        .FromFiles(in(), EventColumns())
        .Aggregate({"k"}, {{"n", AggregateFn::kCount, ""},
                           {"sum", AggregateFn::kSum, "v"},
                           {"lo", AggregateFn::kMin, "v"},
                           {"hi", AggregateFn::kMax, "v"},
                           {"mean", AggregateFn::kAvg, "v"}})
        .Into("main.s.agg");
    PipelineSpec spec = b.Build();
    spec.flows[0].max_batch_files = 1;
    const UpdateResult r = Run(spec);
    ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
    EXPECT_GT(r.batches, 10u);

    struct Ref {
      int64_t n = 0, sum = 0, lo = INT64_MAX, hi = INT64_MIN;
    };
    std::map<int64_t, Ref> ref;
    for (const Event3& e : events) {
      Ref& g = ref[e.key];
      g.n++, g.sum += e.value, g.lo = std::min(g.lo, e.value), g.hi = std::max(g.hi, e.value);
    }
    const std::vector<Row> rows = Rows("main.s.agg");
    ASSERT_EQ(rows.size(), ref.size());
    for (const Row& row : rows) {
      const Ref& g = ref.at(std::get<int64_t>(row[0]));
      EXPECT_EQ(row[1], Value(g.n));
      EXPECT_EQ(row[2], Value(g.sum));
      EXPECT_EQ(row[3], Value(g.lo));
      EXPECT_EQ(row[4], Value(g.hi));
      EXPECT_DOUBLE_EQ(std::get<double>(row[5]), static_cast<double>(g.sum) / static_cast<double>(g.n));
    }
  }
}

// Where the flow `flow` keeps its grouped aggregate's state: its state
// table's rows, the marker alone when the groups are in the target.
class AggregateStateTest : public PipelineTest {
 protected:
  std::vector<Row> StateRows(const std::string& flow) { return Rows("__spool.state." + flow + "__state0_aggregate"); }
  static bool InTarget(const std::vector<Row>& state) {
    return state.size() == 1 && std::get<Bytes>(state[0][0]).data.starts_with('\0');
  }

  // Files of events {"k", "v"} with v NULL at times: every key once in a
  // round (so that each round rewrites every row), then `n` at random.
  void AddRound(const std::string& dir, int round, size_t n) {
    std::mt19937 rng(static_cast<uint32_t>(round));
    std::string text;
    auto add = [&](int64_t k, std::optional<int64_t> v) {
      text += "{\"k\": " + std::to_string(k) + ", \"v\": " + (v ? std::to_string(*v) : "null") + "}\n";
      Ref& g = ref_[k];
      g.n++;
      if (!v) return;
      g.values++;
      g.sum = g.sum.value_or(0) + *v;
      g.lo = std::min(g.lo.value_or(*v), *v);
      g.hi = std::max(g.hi.value_or(*v), *v);
    };
    // Key 99 has only NULLs until round 2: its sum, minimum and maximum
    // are NULL, and then its first value.
    add(99, round >= 2 ? std::optional<int64_t>(round) : std::nullopt);
    for (int64_t k = 0; k < 20; ++k) add(k, k);
    for (size_t i = 0; i < n; ++i) {
      const int64_t k = static_cast<int64_t>(rng() % 20);
      add(k, rng() % 4 == 0 ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(rng() % 100) - 20));
      if (i % 25 == 24) WriteFile(dir, round, i, &text);
    }
    WriteFile(dir, round, n, &text);
  }
  void WriteFile(const std::string& dir, int round, size_t i, std::string* text) {
    if (text->empty()) return;
    char name[40];
    std::snprintf(name, sizeof name, "/r%d-%06zu.jsonl", round, i);
    std::ofstream(dir + name) << *text;
    text->clear();
  }

  static PipelineSpec Totals(const std::string& dir, const std::string& sum = "total") {
    PipelineBuilder b("totals");
    b.StreamingTable("main.s.totals");
    b.Flow("totals")
        .FromFiles(dir, {{"k", ColumnType::kInt64, false}, {"v", ColumnType::kInt64, true}})
        .Aggregate({"k"}, {{"n", AggregateFn::kCount, ""},
                           {"values", AggregateFn::kCount, "v"},
                           {sum, AggregateFn::kSum, "v"},
                           {"lo", AggregateFn::kMin, "v"},
                           {"hi", AggregateFn::kMax, "v"}})
        .Into("main.s.totals");
    PipelineSpec spec = b.Build();
    spec.flows[0].max_batch_files = 1;
    return spec;
  }

  // The target's rows against the reference, the sum in column `sum`.
  void ExpectTotals(const std::string& sum = "total") {
    TableInfo table;
    TableId id;
    ASSERT_TRUE(TableId::Parse("main.s.totals", &id).ok());
    ASSERT_TRUE(store_->GetTable(id, &table).ok());
    auto at = [&](const std::string& name) { return *table.schema.FindColumn(name); };
    auto value = [](const std::optional<int64_t>& v) { return v ? Value(*v) : Value(); };
    const std::vector<Row> rows = Rows("main.s.totals");
    ASSERT_EQ(rows.size(), ref_.size());
    for (const Row& row : rows) {
      const int64_t k = std::get<int64_t>(row[at("k")]);
      const Ref& g = ref_.at(k);
      EXPECT_EQ(row[at("n")], Value(g.n)) << "key " << k;
      EXPECT_EQ(row[at("values")], Value(g.values)) << "key " << k;
      EXPECT_EQ(row[at(sum)], value(g.sum)) << "key " << k;
      EXPECT_EQ(row[at("lo")], value(g.lo)) << "key " << k;
      EXPECT_EQ(row[at("hi")], value(g.hi)) << "key " << k;
    }
  }

  bool StateHistoryHas(const std::string& flow, const std::string& operation) {
    TableId id;
    EXPECT_TRUE(TableId::Parse("__spool.state." + flow + "__state0_aggregate", &id).ok());
    std::vector<HistoryEntry> history;
    EXPECT_TRUE(store_->History(id, &history).ok());
    return std::any_of(history.begin(), history.end(), [&](const HistoryEntry& h) { return h.operation == operation; });
  }

  struct Ref {
    int64_t n = 0, values = 0;
    std::optional<int64_t> sum, lo, hi;
  };
  std::map<int64_t, Ref> ref_;
};

// The only flow writing its target, a global aggregate of counts, sums,
// minima and maxima keeps its groups there: its state table holds the
// marker alone, and a later run (a new Pipeline) reads the groups it has
// not met from the target, NULL sums among them.
TEST_F(AggregateStateTest, AnAggregateKeepsItsGroupsInTheTargetItAloneWrites) {
  AddRound(in(), 1, 200);
  UpdateResult r = Run(Totals(in()));
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_GT(r.batches, 5u);
  EXPECT_TRUE(InTarget(StateRows("totals")));
  ExpectTotals();
  AddRound(in(), 2, 200);
  r = Run(Totals(in()));
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_TRUE(InTarget(StateRows("totals")));
  ExpectTotals();
  EXPECT_FALSE(StateHistoryHas("totals", "MOVE STATE"));

  // With an average, whose output loses its sum, the groups stay in the
  // state table: one row each.
  PipelineSpec averages = Totals(Dir("avg"));
  averages.flows[0].name = "averages";
  averages.datasets[0].name = "main.s.averages";
  averages.flows[0].target = "main.s.averages";
  std::get<AggregateStep>(averages.flows[0].steps[0]).aggregates.push_back({"mean", AggregateFn::kAvg, "v"});
  std::string text = "{\"k\": 1, \"v\": 2}\n{\"k\": 2, \"v\": null}\n";
  WriteFile(Dir("avg"), 1, 0, &text);
  ASSERT_EQ(Run(averages).state, UpdateState::kCompleted);
  EXPECT_EQ(StateRows("averages").size(), 2u);
}

// A definition under which the target can no longer hold the groups — the
// sum written to another column, another flow writing the target — moves
// them into the state table before any batch, and the counts go on.
TEST_F(AggregateStateTest, AnAggregateMovesItsGroupsOutWhenItsTargetCanNoLongerHoldThem) {
  for (const bool second_writer : {false, true}) {
    SCOPED_TRACE(second_writer ? "a second flow writes the target" : "the sum is renamed");
    Fresh();
    ref_.clear();
    AddRound(in(), 1, 200);
    ASSERT_EQ(Run(Totals(in())).state, UpdateState::kCompleted);
    ASSERT_TRUE(InTarget(StateRows("totals")));
    PipelineSpec changed = Totals(in(), second_writer ? "total" : "sum");
    if (!second_writer) {  // the target declared: its columns so far, and the new one
      const auto n = [](const char* name, bool nullable) { return Column{name, ColumnType::kInt64, nullable}; };
      changed.datasets[0].columns = {n("k", false), n("n", false), n("values", false), n("total", true),
                                     n("lo", true), n("hi", true), n("sum", true)};
      changed.datasets[0].primary_key = {"k"};
    } else {
      PipelineSpec other = Totals(Dir("other"));  // no files: it writes nothing
      other.flows[0].name = "other";
      changed.flows.push_back(other.flows[0]);
    }
    AddRound(in(), 2, 200);
    const UpdateResult r = Run(changed);
    ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
    const std::vector<Row> state = StateRows("totals");
    EXPECT_FALSE(InTarget(state));
    EXPECT_EQ(state.size(), ref_.size());
    EXPECT_TRUE(StateHistoryHas("totals", "MOVE STATE"));
    ExpectTotals(second_writer ? "total" : "sum");  // every row was rewritten in round 2
  }
}

// Where the groups live travels with the state table: restoring the target
// and the state table to a version when the groups were in the target (a
// dataset's rewind without its checkpoints) brings that back too, after a
// checkpoint reset had moved them to the state table.
TEST_F(AggregateStateTest, WhereTheGroupsLiveIsRestoredWithTheState) {
  AddRound(in(), 1, 200);
  ASSERT_EQ(Run(Totals(in())).state, UpdateState::kCompleted);
  ASSERT_TRUE(InTarget(StateRows("totals")));
  const uint64_t point = store_->log()->Newest().version;
  const std::map<int64_t, Ref> at_point = ref_;
  UpdateOptions reset;
  reset.reset_checkpoint_selection = {"totals"};
  ASSERT_EQ(Run(Totals(in()), reset).state, UpdateState::kCompleted);  // reads round 1 again
  EXPECT_EQ(StateRows("totals").size(), ref_.size());
  AddRound(in(), 2, 200);
  ASSERT_EQ(Run(Totals(in())).state, UpdateState::kCompleted);
  ExpectTotals();

  TableId target, state;
  ASSERT_TRUE(TableId::Parse("main.s.totals", &target).ok());
  ASSERT_TRUE(TableId::Parse("__spool.state.totals__state0_aggregate", &state).ok());
  ASSERT_TRUE(store_->RestoreTables({target, state}, {}, point).ok());
  EXPECT_TRUE(InTarget(StateRows("totals")));
  // The flow goes on from its checkpoint (round 2 is not read again) and
  // from the groups as they were at the point.
  ref_ = at_point;
  AddRound(in(), 3, 200);
  ASSERT_EQ(Run(Totals(in())).state, UpdateState::kCompleted);
  EXPECT_TRUE(InTarget(StateRows("totals")));
  ExpectTotals();
}

// Watermark semantics, simulated batch by batch: a row below the watermark
// at its batch's start is late; after each batch the watermark becomes the
// highest time seen less the delay.
TEST_F(PipelineTest, WindowedAggregateAndDedupWithLateDataMatchReference) {
  const int64_t size = 10, delay = 5;  // seconds
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    Fresh();
    const std::vector<Event3> events = RandomEvents(seed, 400, 5, 12);
    const size_t per_file = 23;
    WriteBatches(in(), events, per_file, EventLine);
    PipelineBuilder b("windows");
    b.StreamingTable("main.s.raw");
    b.StreamingTable("main.s.windows");
    b.StreamingTable("main.s.unique");
    b.Flow("raw").FromFiles(in(), EventColumns()).Into("main.s.raw");
    b.Flow("windows")
        .FromDataset("main.s.raw")
        .Aggregate({"k"}, {{"n", AggregateFn::kCount, ""}, {"sum", AggregateFn::kSum, "v"}},
                   WindowSpec{"t", static_cast<uint64_t>(size) * 1000000, static_cast<uint64_t>(delay) * 1000000})
        .Into("main.s.windows");
    b.Flow("unique")
        .FromDataset("main.s.raw")
        .Dedup({"k", "v"}, WatermarkSpec{"t", static_cast<uint64_t>(delay) * 1000000})
        .Into("main.s.unique");
    PipelineSpec spec = b.Build();
    spec.flows[0].max_batch_files = 1;
    spec.flows[1].max_batch_rows = per_file;  // the same batches downstream
    spec.flows[2].max_batch_rows = per_file;
    const UpdateResult r = Run(spec);
    ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;

    // The reference.
    std::optional<int64_t> wm_agg, wm_dedup;
    std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> open;  // (start, k) -> (n, sum)
    std::multiset<std::vector<int64_t>> windows, unique;
    std::map<std::pair<int64_t, int64_t>, int64_t> seen;  // (k, v) -> t
    uint64_t late = 0;
    for (size_t i = 0; i < events.size(); i += per_file) {
      std::optional<int64_t> max_t;
      for (size_t j = i; j < std::min(events.size(), i + per_file); ++j) {
        const Event3& e = events[j];
        max_t = std::max(max_t.value_or(e.time), e.time);
        if (!wm_agg || e.time >= *wm_agg) {
          const int64_t start = e.time - ((e.time % size) + size) % size;
          auto& w = open[{start, e.key}];
          w.first++, w.second += e.value;
        } else {
          ++late;
        }
        if (!wm_dedup || e.time >= *wm_dedup) {
          if (seen.emplace(std::make_pair(e.key, e.value), e.time).second) unique.insert({e.key, e.value, e.time});
        } else {
          ++late;
        }
      }
      wm_agg = std::max(wm_agg.value_or(INT64_MIN), *max_t - delay);
      wm_dedup = wm_agg;
      for (auto it = open.begin(); it != open.end();) {
        if (it->first.first + size <= *wm_agg) {
          windows.insert({it->first.first, it->first.second, it->second.first, it->second.second});
          it = open.erase(it);
        } else {
          ++it;
        }
      }
      for (auto it = seen.begin(); it != seen.end();) it = it->second < *wm_dedup ? seen.erase(it) : std::next(it);
    }
    std::multiset<std::vector<int64_t>> got_windows, got_unique;
    for (const Row& row : Rows("main.s.windows")) {
      EXPECT_EQ(std::get<Timestamp>(row[1]).micros - std::get<Timestamp>(row[0]).micros, size * 1000000);
      got_windows.insert({std::get<Timestamp>(row[0]).micros / 1000000, std::get<int64_t>(row[2]),
                          std::get<int64_t>(row[3]), std::get<int64_t>(row[4])});
    }
    for (const Row& row : Rows("main.s.unique")) {
      got_unique.insert(
          {std::get<int64_t>(row[0]), std::get<int64_t>(row[1]), std::get<Timestamp>(row[2]).micros / 1000000});
    }
    EXPECT_GT(late, 0u) << "the input should have late rows";
    EXPECT_FALSE(windows.empty());
    EXPECT_EQ(got_windows, windows) << "seed " << seed;
    EXPECT_EQ(got_unique, unique) << "seed " << seed;
    EXPECT_EQ(r.flows[1].late_rows + r.flows[2].late_rows, late);
  }
}

TEST_F(PipelineTest, MaterializedViewFollowsItsSourceThroughUpdatesAndDeletes) {
  PipelineBuilder b("mv");
  b.StreamingTable("main.s.orders").PrimaryKey({"id"});
  b.MaterializedView("main.s.by_country");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.orders");
  b.Flow("by_country")
      .FromDataset("main.s.orders")
      .Filter("amount IS NOT NULL")
      .Aggregate({"country"}, {{"total", AggregateFn::kSum, "amount"}})
      .Into("main.s.by_country");
  AddFile("a.jsonl", Order(1, "de", 10) + Order(2, "fr", 5) + Order(3, "it", 1));
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.s.by_country").size(), 3u);
  // Order 2 moves to Germany, order 3 is deleted: the view follows.
  AddFile("b.jsonl", Order(2, "de", 5));
  TableId orders;
  ASSERT_TRUE(TableId::Parse("main.s.orders", &orders).ok());
  Transaction del;
  del.Delete(orders, {int64_t{3}});
  ASSERT_TRUE(store_->Commit(del).ok());
  UpdateResult r = Run(b.Build());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  std::vector<Row> rows = Rows("main.s.by_country");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (Row{std::string("de"), int64_t{15}}));
  // Nothing changed: no refresh commit.
  r = Run(b.Build());
  EXPECT_EQ(r.batches, 0u);
  // Only new orders: refreshed incrementally, from the aggregate's state.
  AddFile("c.jsonl", Order(4, "fr", 2) + Order(5, "de", 1));
  r = Run(b.Build());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.by_country"),
            (std::vector<Row>{{std::string("de"), int64_t{16}}, {std::string("fr"), int64_t{2}}}));
  TableId view;
  ASSERT_TRUE(TableId::Parse("main.s.by_country", &view).ok());
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(view, &history).ok());
  ASSERT_GE(history.size(), 3u);
  EXPECT_NE(history[0].parameters_json.find("INCREMENTAL"), std::string::npos) << history[0].parameters_json;
  EXPECT_NE(history[1].parameters_json.find("RECOMPUTE"), std::string::npos) << history[1].parameters_json;
}

TEST_F(PipelineTest, ContinuousUpdatePicksUpNewDataUntilStopped) {
  PipelineBuilder b("continuous");
  b.StreamingTable("main.s.t");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.t");
  PipelineSpec spec = b.Build();
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).ok());
  AddFile("a.jsonl", Order(1, "de", 1));
  UpdateOptions options;
  options.continuous = true;
  options.trigger_interval_us = 1000;
  int batches = 0;
  // Each committed batch brings the next file, until the third; then stop.
  options.on_batch = [&](const std::string&, uint64_t) {
    if (++batches < 3) AddFile("f" + std::to_string(batches) + ".jsonl", Order(batches + 1, "de", 1));
    else pipeline->Stop();
  };
  UpdateResult r;
  ASSERT_TRUE(pipeline->Update(options, &r).ok());
  EXPECT_EQ(r.state, UpdateState::kCanceled);
  EXPECT_EQ(r.batches, 3u);
  EXPECT_EQ(Rows("main.s.t").size(), 3u);
  std::vector<Event> states = Events("update_progress");
  ASSERT_GE(states.size(), 2u);
  EXPECT_NE(states[states.size() - 2].details_json.find("STOPPING"), std::string::npos);
}

TEST_F(PipelineTest, FlowProgressReportsTheBacklog) {
  AddFile("a.jsonl", Order(1, "de", 1));
  AddFile("b.jsonl", Order(2, "de", 1));
  AddFile("c.jsonl", Order(3, "de", 1));
  PipelineBuilder b("backlog");
  b.StreamingTable("main.s.t");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.t");
  PipelineSpec spec = b.Build();
  spec.flows[0].max_batch_files = 2;
  ASSERT_EQ(Run(spec).state, UpdateState::kCompleted);
  std::vector<Event> progress = Events("flow_progress");
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_NE(progress[0].details_json.find("\"backlog_files\":1"), std::string::npos) << progress[0].details_json;
  EXPECT_NE(progress[1].details_json.find("\"backlog_files\":0"), std::string::npos) << progress[1].details_json;
}

TEST_F(PipelineTest, SeveralFlowsAppendToOneStreamingTable) {
  PipelineBuilder b("append_flows");
  b.StreamingTable("main.s.all");
  b.Flow("eu").FromFiles(in(), OrderColumns()).Into("main.s.all");
  b.Flow("us")
      .FromFiles(Dir("us"), OrderColumns())
      .Select({{"id", "id + 1000"}, {"country", "country"}})
      .Into("main.s.all");
  AddFile("a.jsonl", Order(1, "de", 1) + Order(2, "fr", 2));
  std::ofstream(Dir("us") + "/u.jsonl") << Order(1, "us", 3);
  const UpdateResult r = Run(b.Build());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  const std::vector<Row> rows = Rows("main.s.all");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2], (Row{int64_t{1001}, std::string("us"), Value()}));  // the column it does not write is NULL
}

TEST_F(PipelineTest, OnceFlowBackfillsOnceUntilItsDefinitionChanges) {
  PipelineBuilder b("once");
  b.StreamingTable("main.s.t");
  b.Flow("backfill").FromFiles(in(), OrderColumns()).Once().Into("main.s.t");
  AddFile("a.jsonl", Order(1, "de", 10));
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  AddFile("b.jsonl", Order(2, "de", 10));
  UpdateResult r = Run(b.Build());
  EXPECT_TRUE(r.flows[0].skipped);
  EXPECT_EQ(Rows("main.s.t").size(), 1u);
}

// Change events: keys 0..7, sequences with ties, exact duplicates, deletes,
// all out of order.
struct CdcEvent {
  int64_t id;
  int64_t seq;
  std::string name;
  bool deleted;
};

std::vector<CdcEvent> RandomCdcEvents(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  std::vector<CdcEvent> events;
  const char* names[] = {"ann", "bob", "cy"};
  for (size_t i = 0; i < n; ++i) {
    if (!events.empty() && rng() % 10 == 0) {
      events.push_back(events[rng() % events.size()]);  // a redelivery
      continue;
    }
    events.push_back(
        {static_cast<int64_t>(rng() % 8), static_cast<int64_t>(rng() % 150), names[rng() % 3], rng() % 5 == 0});
  }
  return events;
}

std::string CdcLine(const CdcEvent& e) {
  return "{\"id\": " + std::to_string(e.id) + ", \"seq\": " + std::to_string(e.seq) + ", \"name\": \"" + e.name +
         "\", \"op\": \"" + (e.deleted ? "DELETE" : "UPSERT") + "\"}\n";
}

TEST_F(PipelineTest, AutoCdcScd1AndScd2MatchReferenceWithOutOfOrderDuplicateAndDeleteEvents) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    Fresh();
    const std::vector<CdcEvent> events = RandomCdcEvents(seed, 300);
    WriteBatches(in(), events, 17, CdcLine);
    PipelineBuilder b("cdc");
    b.StreamingTable("main.s.scd1");
    b.StreamingTable("main.s.scd2");
    std::vector<Column> columns = {{"id", ColumnType::kInt64, false},
                                   {"seq", ColumnType::kInt64, false},
                                   {"name", ColumnType::kString, true},
                                   {"op", ColumnType::kString, true}};
    AutoCdcStep scd1;
    scd1.keys = {"id"};
    scd1.sequence_by = "seq";
    scd1.apply_as_deletes = "op = 'DELETE'";
    scd1.except_column_list = {"op"};
    AutoCdcStep scd2 = scd1;
    scd2.scd_type = 2;
    scd2.track_history_column_list = {"name"};
    b.Flow("scd1").FromFiles(in(), columns).Step(scd1).Into("main.s.scd1");
    b.Flow("scd2").FromFiles(in(), columns).Step(scd2).Into("main.s.scd2");
    PipelineSpec spec = b.Build();
    spec.flows[0].max_batch_files = 1;
    spec.flows[1].max_batch_files = 1;
    const UpdateResult r = Run(spec);
    ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;

    // The reference: per key, the first arrival of each sequence, in
    // sequence order.
    std::map<int64_t, std::map<int64_t, CdcEvent>> by_key;
    for (const CdcEvent& e : events) by_key[e.id].emplace(e.seq, e);
    std::set<Row> want1, want2;
    for (const auto& [id, seqs] : by_key) {
      const CdcEvent& last = seqs.rbegin()->second;
      if (!last.deleted) want1.insert({id, last.seq, last.name});
      std::vector<Row> history;  // id, seq, name, start, end
      bool open = false;
      for (const auto& [seq, e] : seqs) {
        if (e.deleted) {
          if (open) history.back()[4] = seq;
          open = false;
        } else if (open && history.back()[2] == Value(e.name)) {
          history.back()[1] = seq;
        } else {
          if (open) history.back()[4] = seq;
          history.push_back({id, seq, e.name, seq, Value()});
          open = true;
        }
      }
      want2.insert(history.begin(), history.end());
    }
    auto rows = [&](const std::string& name) {
      const std::vector<Row> got = Rows(name);
      return std::set<Row>(got.begin(), got.end());
    };
    EXPECT_EQ(rows("main.s.scd1"), want1) << "seed " << seed;
    EXPECT_EQ(rows("main.s.scd2"), want2) << "seed " << seed;
    EXPECT_FALSE(want2.empty());
  }
}

TEST_F(PipelineTest, StreamStreamJoinMatchesReferenceWithLateRows) {
  const int64_t within = 4, delay = 6;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    Fresh();
    const std::vector<Event3> left = RandomEvents(seed, 200, 6, 10), right = RandomEvents(seed + 100, 160, 6, 10);
    const size_t per_file = 20;
    WriteBatches(Dir("l"), left, per_file, EventLine);
    WriteBatches(Dir("r"), right, per_file, EventLine);
    PipelineBuilder b("join");
    b.StreamingTable("main.s.l");
    b.StreamingTable("main.s.r");
    b.StreamingTable("main.s.joined");
    b.Flow("l").FromFiles(Dir("l"), EventColumns()).Into("main.s.l");
    b.Flow("r").FromFiles(Dir("r"), EventColumns()).Select({{"rk", "k"}, {"rv", "v"}, {"rt", "t"}}).Into("main.s.r");
    StreamJoinStep join;
    join.right.dataset = "main.s.r";
    join.on = {{"k", "rk"}};
    join.left_time = "t";
    join.right_time = "rt";
    join.within_us = within * 1000000;
    join.watermark_delay_us = delay * 1000000;
    join.columns = {"rv", "rt"};
    b.Flow("joined").FromDataset("main.s.l").Step(join).Into("main.s.joined");
    PipelineSpec spec = b.Build();
    spec.flows[0].max_batch_files = spec.flows[1].max_batch_files = 1;
    spec.flows[2].max_batch_rows = per_file;
    const UpdateResult r = Run(spec);
    ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;

    // The reference: which rows are late, batch by batch; then every pair
    // of rows on time with equal keys and times within bounds.
    std::vector<Event3> on_time[2];
    std::optional<int64_t> wm;
    uint64_t late = 0;
    for (size_t i = 0; i < std::max(left.size(), right.size()); i += per_file) {
      std::optional<int64_t> max_t;
      for (int side = 0; side < 2; ++side) {
        const std::vector<Event3>& events = side == 0 ? left : right;
        for (size_t j = i; j < std::min(events.size(), i + per_file); ++j) {
          max_t = std::max(max_t.value_or(events[j].time), events[j].time);
          if (wm && events[j].time < *wm) ++late;
          else on_time[side].push_back(events[j]);
        }
      }
      if (max_t) wm = std::max(wm.value_or(INT64_MIN), *max_t - delay);
    }
    std::multiset<std::vector<int64_t>> want, got;
    for (const Event3& l : on_time[0]) {
      for (const Event3& rr : on_time[1]) {
        if (l.key == rr.key && std::llabs(l.time - rr.time) <= within)
          want.insert({l.key, l.value, l.time, rr.value, rr.time});
      }
    }
    for (const Row& row : Rows("main.s.joined")) {
      got.insert({std::get<int64_t>(row[0]), std::get<int64_t>(row[1]), std::get<Timestamp>(row[2]).micros / 1000000,
                  std::get<int64_t>(row[3]), std::get<Timestamp>(row[4]).micros / 1000000});
    }
    EXPECT_GT(late, 0u);
    EXPECT_GT(want.size(), 20u);
    EXPECT_EQ(got, want) << "seed " << seed;
    EXPECT_EQ(r.flows[2].late_rows, late);
  }
}

// Random streams joined with a random table, on its key (point reads) and
// on a column that is not unique (a hash table), inner and left, against a
// nested-loop reference.
TEST_F(PipelineTest, LookupJoinsMatchReference) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    Fresh();
    std::mt19937 rng(seed);
    std::string customers, orders;
    std::vector<std::pair<int64_t, int64_t>> table;  // cid, region (regions repeat; some cids missing)
    for (int64_t cid = 0; cid < 30; ++cid) {
      if (rng() % 4 == 0) continue;
      table.emplace_back(cid, static_cast<int64_t>(rng() % 5));
      customers += "{\"cid\": " + std::to_string(cid) + ", \"region\": " + std::to_string(table.back().second) + "}\n";
    }
    std::ofstream(Dir("c") + "/c.jsonl") << customers;
    std::vector<std::pair<int64_t, int64_t>> stream;  // id, cid (cid may be missing from the table)
    for (int64_t id = 0; id < 200; ++id) stream.emplace_back(id, static_cast<int64_t>(rng() % 36));
    for (const auto& [id, cid] : stream)
      orders += "{\"id\": " + std::to_string(id) + ", \"ocid\": " + std::to_string(cid) + "}\n";
    AddFile("o.jsonl", orders);
    PipelineBuilder b("lookups");
    b.StreamingTable("main.s.customers").PrimaryKey({"cid"});
    for (const char* t : {"by_key_inner", "by_key_left", "by_region_inner", "by_region_left"})
      b.StreamingTable(std::string("main.s.") + t);
    b.Flow("customers")
        .FromFiles(Dir("c"), {{"cid", ColumnType::kInt64, false}, {"region", ColumnType::kInt64, false}})
        .Into("main.s.customers");
    const std::vector<Column> columns = {{"id", ColumnType::kInt64, false}, {"ocid", ColumnType::kInt64, false}};
    for (JoinType type : {JoinType::kInner, JoinType::kLeft}) {
      const std::string suffix = type == JoinType::kInner ? "inner" : "left";
      b.Flow("by_key_" + suffix)
          .FromFiles(in(), columns)
          .Step(LookupJoinStep{"main.s.customers", {{"ocid", "cid"}}, type, {"region"}})
          .Into("main.s.by_key_" + suffix);
      // Each order's cid taken as a region: several customers match.
      b.Flow("by_region_" + suffix)
          .FromFiles(in(), columns)
          .Step(LookupJoinStep{"main.s.customers", {{"ocid", "region"}}, type, {"cid"}})
          .Into("main.s.by_region_" + suffix);
    }
    const UpdateResult r = Run(b.Build());
    ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
    for (JoinType type : {JoinType::kInner, JoinType::kLeft}) {
      const std::string suffix = type == JoinType::kInner ? "inner" : "left";
      std::multiset<Row> want_key, want_region;
      for (const auto& [id, cid] : stream) {
        bool key_match = false, region_match = false;
        for (const auto& [tcid, region] : table) {
          if (tcid == cid) want_key.insert({id, cid, region}), key_match = true;
          if (region == cid) want_region.insert({id, cid, tcid}), region_match = true;
        }
        if (!key_match && type == JoinType::kLeft) want_key.insert({id, cid, Value()});
        if (!region_match && type == JoinType::kLeft) want_region.insert({id, cid, Value()});
      }
      const std::vector<Row> by_key = Rows("main.s.by_key_" + suffix), by_region = Rows("main.s.by_region_" + suffix);
      EXPECT_EQ(std::multiset<Row>(by_key.begin(), by_key.end()), want_key) << suffix << " seed " << seed;
      EXPECT_EQ(std::multiset<Row>(by_region.begin(), by_region.end()), want_region) << suffix << " seed " << seed;
    }
  }
}

TEST_F(PipelineTest, LookupJoinInnerAndLeftAgainstTheTableAsItIs) {
  PipelineBuilder b("lookup");
  b.StreamingTable("main.s.customers").PrimaryKey({"cid"});
  b.StreamingTable("main.s.inner");
  b.StreamingTable("main.s.left");
  std::filesystem::create_directories(dir_->Sub("c"));
  std::ofstream(dir_->Sub("c/a.jsonl")) << "{\"cid\": 1, \"cname\": \"ann\"}\n{\"cid\": 2, \"cname\": \"bob\"}\n";
  b.Flow("customers")
      .FromFiles(dir_->Sub("c"), {{"cid", ColumnType::kInt64, false}, {"cname", ColumnType::kString, true}})
      .Into("main.s.customers");
  // Joined on the table's key (point reads) and on a non-key (a hash table).
  b.Flow("inner")
      .FromFiles(in(), OrderColumns())
      .Step(LookupJoinStep{"main.s.customers", {{"id", "cid"}}, JoinType::kInner, {}})
      .Into("main.s.inner");
  b.Flow("left")
      .FromFiles(in(), OrderColumns())
      .Select({{"id", "id"}, {"who", "CASE WHEN id = 3 THEN 'bob' ELSE 'zed' END"}})
      .Step(LookupJoinStep{"main.s.customers", {{"who", "cname"}}, JoinType::kLeft, {"cid"}})
      .Into("main.s.left");
  AddFile("a.jsonl", Order(1, "de", 1) + Order(2, "de", 1) + Order(3, "de", 1));
  UpdateResult r = Run(b.Build());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  std::vector<Row> inner = Rows("main.s.inner");
  ASSERT_EQ(inner.size(), 2u);
  EXPECT_EQ(inner[0], (Row{int64_t{1}, std::string("de"), int64_t{1}, std::string("ann")}));
  std::vector<Row> left = Rows("main.s.left");
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(left[0], (Row{int64_t{1}, std::string("zed"), Value()}));
  EXPECT_EQ(left[2], (Row{int64_t{3}, std::string("bob"), int64_t{2}}));
}

// --- spec errors -------------------------------------------------------------

struct SpecCase {
  std::string json;
  const char* error;  // a substring of the message
};

TEST_F(PipelineTest, MalformedSpecsAreRefusedNamingThePlace) {
  const std::string ds = R"("datasets": [{"name": "main.s.t"}])";
  const std::string files = R"("source": {"files": "/tmp", "columns": [{"name": "a", "type": "int64"}]})";
  const SpecCase cases[] = {
      {R"({"name": "a", "name": "b", "datasets": [], "flows": []})",
       "pipeline spec: field 'name' is given twice in one object"},
      {"{", "not valid JSON"},
      {"[]", "spec: expected a JSON object"},
      {R"({"datasets": [], "flows": [], "extra": 1})", "unknown field 'extra'"},
      {R"({"flows": []})", "spec.datasets: expected a list"},
      {R"({"datasets": [{"kind": "streaming_table"}], "flows": []})", "datasets[0].name: missing"},
      {R"({"datasets": [{"name": "t", "kind": "view"}], "flows": []})", "datasets[0].kind: 'view' is not"},
      {R"({"datasets": [{"name": "a.b.c", "columns": [{"name": "x", "type": "int32"}]}], "flows": []})",
       "datasets[0].columns[0].type"},
      {"{" + ds + R"(, "flows": [{"name": "f", "target": "main.s.t"}]})", "flows[0].source: missing"},
      {"{" + ds + R"(, "flows": [{"name": "f", "target": "main.s.t", "source": {"files": "/x", "topic": "/y"}}]})",
       "flows[0].source: name exactly one"},
      {"{" + ds + R"(, "flows": [{"name": "f", "target": "main.s.t", )" + files +
           R"(, "steps": [{"fliter": "a > 1"}]}]})",
       "flows[0].steps[0]: unknown step 'fliter'"},
      {"{" + ds + R"(, "flows": [{"name": "f", "target": "main.s.t", )" + files +
           R"(, "steps": [{"aggregate": {"group_by": ["a"], "aggregates": [{"name": "x", "fn": "median", "expr": "a"}]}}]}]})",
       "flows[0].steps[0].aggregate.aggregates[0].fn: 'median'"},
      {"{" + ds + R"(, "flows": [{"name": "f", "target": "main.s.t", )" + files +
           R"(, "steps": [{"aggregate": {"group_by": ["a"], "aggregates": [{"name": "x", "fn": "sum", "expr": "a"}], "window": {"time": "a", "size": "ten minutes"}}}]}]})",
       "window.size"},
      {"{" + ds + R"(, "flows": [{"name": "f", "target": "main.s.t", )" + files + R"(, "steps": [{"map": "mine"}]}]})",
       "C++ code"},
  };
  for (const SpecCase& c : cases) {
    PipelineSpec spec;
    Status s = ParsePipelineSpec(c.json, &spec);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.json;
    EXPECT_NE(s.ToString().find(c.error), std::string::npos) << "spec: " << c.json << "\nerror: " << s.ToString();
  }
}

TEST_F(PipelineTest, InconsistentPipelinesAreRefusedBeforeAnythingRuns) {
  const std::string files = "\"source\": {\"files\": \"" + in() +
                            "\", \"columns\": [{\"name\": \"a\", \"type\": \"int64\", \"nullable\": false}, "
                            "{\"name\": \"s\", \"type\": \"string\"}]}";
  const SpecCase cases[] = {
      {R"({"datasets": [{"name": "main.s.t"}], "flows": [{"name": "f", "target": "main.s.u", "source": {"dataset": "main.s.t"}}]})",
       "flows[0] \"f\".target: \"main.s.u\" is not a dataset"},
      {R"({"datasets": [{"name": "main.s.t"}], "flows": []})", "no flow writes it"},
      {R"({"datasets": [{"name": "main.s.a"}, {"name": "main.s.b"}], "flows": [
          {"name": "ab", "target": "main.s.b", "source": {"dataset": "main.s.a"}},
          {"name": "ba", "target": "main.s.a", "source": {"dataset": "main.s.b"}}]})",
       "cycle"},
      {R"({"datasets": [{"name": "main.s.t"}], "flows": [{"name": "f", "target": "main.s.t", "source": {"dataset": "main.s.nope"}}]})",
       "flows[0] \"f\".source.dataset: no dataset"},
      {"{\"datasets\": [{\"name\": \"main.s.t\"}], \"flows\": [{\"name\": \"f\", \"target\": \"main.s.t\", " + files +
           ", \"steps\": [{\"filter\": \"s + 1 > 2\"}]}]}",
       "flows[0] \"f\".steps[0].filter: at column"},
      {"{\"datasets\": [{\"name\": \"main.s.t\", \"columns\": [{\"name\": \"a\", \"type\": \"string\"}]}], \"flows\": "
       "[{\"name\": \"f\", \"target\": \"main.s.t\", " +
           files + ", \"steps\": [{\"select\": [\"a\"]}]}]}",
       "column 'a' is int64 in the flow but string in the target"},
      {"{\"datasets\": [{\"name\": \"main.s.t\", \"kind\": \"materialized_view\"}, {\"name\": \"main.s.u\"}], "
       "\"flows\": ["
       "{\"name\": \"u\", \"target\": \"main.s.u\", " +
           files +
           "},"
           "{\"name\": \"f\", \"target\": \"main.s.t\", \"source\": {\"dataset\": \"main.s.u\"}},"
           "{\"name\": \"g\", \"target\": \"main.s.t\", \"source\": {\"dataset\": \"main.s.u\"}}]}",
       "flows[2] \"g\".target: materialized view main.s.t already has flow \"f\""},
      {"{\"datasets\": [{\"name\": \"main.s.t\"}], \"flows\": [{\"name\": \"f\", \"target\": \"main.s.t\", " + files +
           ", \"steps\": [{\"aggregate\": {\"group_by\": [\"a\"], \"aggregates\": [{\"name\": \"n\", \"fn\": "
           "\"count\"}]}}, {\"filter\": \"n > 1\"}]}]}",
       "steps[1]: follows a step that updates rows by key"},
      {"{\"datasets\": [{\"name\": \"main.s.t\"}], \"flows\": [{\"name\": \"f\", \"target\": \"main.s.t\", " + files +
           ", \"steps\": [{\"aggregate\": {\"group_by\": [\"s\"], \"aggregates\": [{\"name\": \"n\", \"fn\": "
           "\"count\"}]}}]}]}",
       "group_by column 's' can be NULL"},
      // The change feed's own column names, declared or written by a flow.
      {"{\"datasets\": [{\"name\": \"main.s.t\", \"columns\": [{\"name\": \"a\", \"type\": \"int64\"}, "
       "{\"name\": \"_change_type\", \"type\": \"string\"}]}], \"flows\": [{\"name\": \"f\", \"target\": "
       "\"main.s.t\", " +
           files + ", \"steps\": [{\"select\": [\"a\"]}]}]}",
       "datasets[0] \"main.s.t\": column name '_change_type' is reserved"},
      {"{\"datasets\": [{\"name\": \"main.s.t\"}], \"flows\": [{\"name\": \"f\", \"target\": \"main.s.t\", " + files +
           ", \"steps\": [{\"select\": [\"a\", {\"name\": \"_commit_version\", \"expr\": \"a\"}]}]}]}",
       "column name '_commit_version' is reserved"},
  };
  for (const SpecCase& c : cases) {
    PipelineSpec spec;
    Status s = ParsePipelineSpec(c.json, &spec);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << c.json;
    std::unique_ptr<Pipeline> pipeline;
    s = Pipeline::Open(store_.get(), spec, &pipeline);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.json;
    EXPECT_NE(s.ToString().find(c.error), std::string::npos) << "spec: " << c.json << "\nerror: " << s.ToString();
  }
  EXPECT_TRUE(store_->ListTables().empty());  // nothing ran
}

TEST_F(PipelineTest, DefinitionIsRecordedAndRoundTrips) {
  PipelineSpec spec = OrdersPipeline(in());
  std::string id;
  ASSERT_TRUE(SetPipelineDefinition(store_.get(), spec, &id).ok());
  EXPECT_EQ(id.size(), 36u);
  PipelineSpec loaded;
  std::string loaded_id;
  ASSERT_TRUE(GetPipelineDefinition(store_.get(), &loaded, &loaded_id).ok());
  EXPECT_EQ(loaded_id, id);
  EXPECT_EQ(PipelineSpecToJson(loaded), PipelineSpecToJson(spec));
  // A second definition keeps the id; history shows both.
  spec.flows[0].steps.clear();
  ASSERT_TRUE(SetPipelineDefinition(store_.get(), spec, &loaded_id).ok());
  EXPECT_EQ(loaded_id, id);
  TableId table;
  ASSERT_TRUE(TableId::Parse("__spool.pipeline.definition", &table).ok());
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(table, &history).ok());
  EXPECT_EQ(history.size(), 2u);
  // A definition that does not compile is refused and changes nothing.
  spec.flows[0].target = "main.shop.missing";
  EXPECT_TRUE(SetPipelineDefinition(store_.get(), spec).IsInvalidArgument());
  ASSERT_TRUE(store_->History(table, &history).ok());
  EXPECT_EQ(history.size(), 2u);
}

}  // namespace
}  // namespace spool

// --- regressions found in review ---------------------------------------------

namespace spool {
namespace {

TEST_F(PipelineTest, AutoCdcDeletesByTheTargetsKeyOrder) {
  PipelineBuilder b("cdc_key_order");
  b.StreamingTable("main.s.t").PrimaryKey({"b", "a"});
  AutoCdcStep cdc;
  cdc.keys = {"a", "b"};
  cdc.sequence_by = "seq";
  cdc.apply_as_deletes = "op = 'D'";
  cdc.except_column_list = {"op"};
  b.Flow("cdc")
      .FromFiles(in(), {{"a", ColumnType::kInt64, false},
                        {"b", ColumnType::kInt64, false},
                        {"seq", ColumnType::kInt64, false},
                        {"op", ColumnType::kString, true}})
      .Step(cdc)
      .Into("main.s.t");
  AddFile("1.jsonl",
          "{\"a\": 1, \"b\": 2, \"seq\": 1, \"op\": \"U\"}\n{\"a\": 2, \"b\": 1, \"seq\": 1, \"op\": \"U\"}\n");
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  AddFile("2.jsonl", "{\"a\": 1, \"b\": 2, \"seq\": 2, \"op\": \"D\"}\n");
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.s.t"), (std::vector<Row>{{int64_t{2}, int64_t{1}, int64_t{1}}}));  // (a=2, b=1) stays
}

TEST_F(PipelineTest, OnePipelineRunsManyUpdatesFromWhatTheStoreHolds) {
  // A materialized view refreshed incrementally, and a windowed aggregate
  // whose first update failed after moving its watermark in memory.
  PipelineBuilder b("reused");
  b.StreamingTable("main.s.orders");
  b.MaterializedView("main.s.total");
  b.StreamingTable("main.s.windows");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.orders");
  b.Flow("total")
      .FromDataset("main.s.orders")
      .Aggregate({"country"}, {{"sum", AggregateFn::kSum, "amount"}})
      .Into("main.s.total");
  b.Flow("windows")
      .FromFiles(Dir("w"), EventColumns())
      .Aggregate({"k"}, {{"n", AggregateFn::kCount, ""}}, WindowSpec{"t", 10000000, 0})
      .Select({{"k", "k"}, {"n", "n"}, {"ratio", "10 / (n - 1)"}})
      .Into("main.s.windows");
  PipelineSpec spec = b.Build();
  spec.flows[2].max_batch_files = 1;
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).ok());
  auto update = [&] {
    UpdateResult r;
    EXPECT_TRUE(pipeline->Update({}, &r).ok());
    return r;
  };
  AddFile("a.jsonl", Order(1, "de", 10));
  // Window [0, 10 s) closes with one row: 10 / 0 fails the batch.
  std::ofstream(Dir("w") + "/1.jsonl")
      << "{\"k\": 1, \"v\": 0, \"t\": 1000000}\n{\"k\": 1, \"v\": 0, \"t\": 20000000}\n";
  EXPECT_EQ(update().state, UpdateState::kFailed);
  std::filesystem::remove(Dir("w") + "/1.jsonl");
  std::ofstream(Dir("w") + "/2.jsonl") << "{\"k\": 1, \"v\": 0, \"t\": 5000000}\n{\"k\": 1, \"v\": 0, \"t\": 6000000}\n"
                                          "{\"k\": 1, \"v\": 0, \"t\": 30000000}\n";
  AddFile("b.jsonl", Order(2, "de", 5));
  const UpdateResult r = update();
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.total"), (std::vector<Row>{{std::string("de"), int64_t{15}}}));
  EXPECT_EQ(Rows("main.s.windows"), (std::vector<Row>{{int64_t{1}, int64_t{2}, 10.0}}));  // not dropped as late
}

TEST_F(PipelineTest, AnIdleDatasetFlowKeepsItsOffsetWithinTheRetainedLog) {
  ASSERT_NO_FATAL_FAILURE(OpenSmallSegmentStore());
  PipelineBuilder b("idle");
  b.StreamingTable("main.s.a");
  b.StreamingTable("main.s.b");
  b.StreamingTable("main.s.busy");
  b.Flow("a").FromFiles(in(), OrderColumns()).Into("main.s.a");
  b.Flow("b").FromDataset("main.s.a").Into("main.s.b");
  b.Flow("busy").FromFiles(Dir("busy"), {{"x", ColumnType::kString, true}}).Into("main.s.busy");
  PipelineSpec spec = b.Build();
  spec.flows[2].max_batch_files = 1;
  AddFile("a.jsonl", Order(1, "de", 1));
  ASSERT_EQ(Run(spec).state, UpdateState::kCompleted);
  // Many commits that do not touch main.s.a, then a vacuum keeping none of them.
  std::mt19937 rng(7);
  for (int i = 0; i < 100; ++i) {
    std::string text(4000, ' ');
    for (char& c : text) c = static_cast<char>('a' + rng() % 26);  // does not compress away
    std::ofstream(Dir("busy") + "/" + std::to_string(1000 + i)) << "{\"x\": \"" + text + "\"}\n";
  }
  ASSERT_EQ(Run(spec).state, UpdateState::kCompleted);
  VacuumOptions vacuum;
  vacuum.retain_us = 0;
  vacuum.force = true;
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  ASSERT_GT(report.log_segments, 0u);
  AddFile("b.jsonl", Order(2, "de", 1));
  const UpdateResult r = Run(spec);
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.b").size(), 2u);
}

TEST_F(PipelineTest, RecordedDefinitionsKeepEveryDurationAndRefuseUserOperators) {
  const PipelineSpec spec = OrdersPipeline(in());
  PipelineSpec timed = spec;
  timed.datasets.push_back({"main.shop.w", TableKind::kStreamingTable, {}, {}, {}});
  timed.flows.push_back(FlowSpec{});
  timed.flows.back().name = "w";
  timed.flows.back().target = "main.shop.w";
  timed.flows.back().source.kind = SourceKind::kFiles;
  timed.flows.back().source.path = Dir("w");
  timed.flows.back().source.columns = EventColumns();
  timed.flows.back().steps.push_back(
      AggregateStep{{"k"}, {{"n", AggregateFn::kCount, ""}}, WindowSpec{"t", 1500, 250}});
  ASSERT_TRUE(SetPipelineDefinition(store_.get(), timed).ok());
  PipelineSpec loaded;
  int64_t number = 0;
  ASSERT_TRUE(GetPipelineDefinition(store_.get(), &loaded, nullptr, &number).ok());
  EXPECT_EQ(number, 1);
  const auto& window = *std::get<AggregateStep>(loaded.flows.back().steps[0]).window;
  EXPECT_EQ(window.size_us, 1500u);
  EXPECT_EQ(window.watermark_delay_us, 250u);
  PipelineSpec mapped = spec;
  mapped.flows[0].steps.push_back(MapStep{"mine", OrderColumns(), [](const Row& in, std::vector<Row>* out) {
                                            out->push_back(in);
                                            return Status::OK();
                                          }});
  Status s = SetPipelineDefinition(store_.get(), mapped);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("user operator"), std::string::npos);
  ASSERT_TRUE(GetPipelineDefinition(store_.get(), nullptr, nullptr, &number).ok());
  EXPECT_EQ(number, 1);
  // A pipeline with one runs from C++.
  std::unique_ptr<Pipeline> pipeline;
  EXPECT_TRUE(Pipeline::Open(store_.get(), mapped, &pipeline).ok());
}

TEST_F(PipelineTest, CompatibilityFollowsWhatStateMeans) {
  AddFile("a.jsonl", Order(1, "de", 10));
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  // A filter inserted before the aggregate keeps its state usable.
  PipelineSpec filtered = OrdersPipeline(in());
  filtered.flows[1].steps.insert(filtered.flows[1].steps.begin(), FilterStep{"amount < 100"});
  AddFile("b.jsonl", Order(2, "de", 5) + Order(3, "de", 500));
  UpdateResult r = Run(filtered);
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.revenue"), (std::vector<Row>{{std::string("de"), int64_t{2}, int64_t{15}}}));
  // A stream join's right source is part of what its state means.
  PipelineBuilder b("join");
  b.StreamingTable("main.s.r1");
  b.StreamingTable("main.s.r2");
  b.StreamingTable("main.s.j");
  b.Flow("r1").FromFiles(Dir("r1"), EventColumns()).Select({{"rk", "k"}, {"rt", "t"}}).Into("main.s.r1");
  b.Flow("r2").FromFiles(Dir("r2"), EventColumns()).Select({{"rk", "k"}, {"rt", "t"}}).Into("main.s.r2");
  StreamJoinStep join;
  join.right.dataset = "main.s.r1";
  join.on = {{"k", "rk"}};
  join.left_time = "t";
  join.right_time = "rt";
  join.within_us = 1000000;
  b.Flow("j").FromFiles(Dir("l"), EventColumns()).Step(join).Into("main.s.j");
  std::ofstream(Dir("l") + "/1.jsonl") << "{\"k\": 1, \"v\": 1, \"t\": 1}\n";
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  PipelineSpec moved = b.Build();
  std::get<StreamJoinStep>(moved.flows[2].steps[0]).right.dataset = "main.s.r2";
  r = Run(moved);
  ExpectFailed(r, "'j'");
}

TEST_F(PipelineTest, AMaterializedViewFollowsItsDefinition) {
  PipelineBuilder b("mv_def");
  b.StreamingTable("main.s.orders");
  b.MaterializedView("main.s.big");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.orders");
  b.Flow("big").FromDataset("main.s.orders").Filter("amount > 0").Into("main.s.big");
  AddFile("a.jsonl", Order(1, "de", 10) + Order(2, "de", 200));
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.s.big").size(), 2u);
  PipelineSpec stricter = b.Build();
  std::get<FilterStep>(stricter.flows[1].steps[0]).condition = "amount > 100";
  ASSERT_EQ(Run(stricter).state, UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.s.big").size(), 1u);
  // Even into other columns: an aggregate now, and a view keyed by it.
  PipelineSpec grouped = b.Build();
  grouped.flows[1].steps = {AggregateStep{{"country"}, {{"n", AggregateFn::kCount, ""}}, std::nullopt}};
  const UpdateResult r = Run(grouped);
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.big"), (std::vector<Row>{{std::string("de"), int64_t{2}}}));
}

// A checkpoint reset does not apply to a materialized view (it has no
// checkpoint to reset: it recomputes): refused, naming the view, by the
// update and its validation, changing nothing.
TEST_F(PipelineTest, ACheckpointResetOfAMaterializedViewIsRefused) {
  PipelineBuilder b("mv_reset");
  b.StreamingTable("main.s.orders");
  b.MaterializedView("main.s.big");
  b.Flow("ingest").FromFiles(in(), OrderColumns()).Into("main.s.orders");
  b.Flow("big").FromDataset("main.s.orders").Filter("amount > 0").Into("main.s.big");
  AddFile("a.jsonl", Order(1, "de", 10));
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), b.Build(), &pipeline).ok());
  UpdateOptions reset;
  reset.reset_checkpoint_selection = {"big"};
  std::vector<std::string> warnings;
  const Status validated = pipeline->Validate(reset, &warnings);
  EXPECT_TRUE(validated.IsInvalidArgument()) << validated.ToString();
  EXPECT_NE(validated.ToString().find("materialized view main.s.big"), std::string::npos) << validated.ToString();
  const uint64_t before = store_->log()->Newest().version;
  UpdateResult result;
  EXPECT_EQ(pipeline->Update(reset, &result).ToString(), validated.ToString());
  EXPECT_EQ(store_->log()->Newest().version, before);
}

TEST_F(PipelineTest, AFlowThatCannotReadItsSourceStopsOnlyItselfAndDownstream) {
  PipelineBuilder b("partial");
  b.StreamingTable("main.s.ok");
  b.StreamingTable("main.s.missing");
  b.Flow("missing").FromFiles(dir_->Sub("nowhere"), OrderColumns()).Into("main.s.missing");
  b.Flow("ok").FromFiles(in(), OrderColumns()).Into("main.s.ok");
  AddFile("a.jsonl", Order(1, "de", 1));
  const UpdateResult r = Run(b.Build());
  ExpectFailed(r, "nowhere");
  EXPECT_EQ(Rows("main.s.ok").size(), 1u);
}

TEST_F(PipelineTest, StepsThatCannotRunAreRefusedWhenCompiled) {
  PipelineBuilder b("bad");
  b.StreamingTable("main.s.w");
  b.Flow("w")
      .FromFiles(in(), EventColumns())
      .Aggregate({"k"}, {{"n", AggregateFn::kCount, ""}}, WindowSpec{"t", 0, 0})
      .Into("main.s.w");
  std::unique_ptr<Pipeline> pipeline;
  Status s = Pipeline::Open(store_.get(), b.Build(), &pipeline);
  EXPECT_NE(s.ToString().find("size must be longer than zero"), std::string::npos) << s.ToString();
  PipelineBuilder c("nulls");
  c.StreamingTable("main.s.t").Columns({{"id", ColumnType::kInt64, false}, {"amount", ColumnType::kInt64, false}});
  c.Flow("f").FromFiles(in(), OrderColumns()).Select({{"id", "id"}, {"amount", "amount"}}).Into("main.s.t");
  s = Pipeline::Open(store_.get(), c.Build(), &pipeline);
  EXPECT_NE(s.ToString().find("column 'amount' can be NULL in the flow but not in the target"), std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace spool

namespace spool {
namespace {

TEST_F(PipelineTest, ATriggeredUpdateEndsWhileProducersKeepWriting) {
  const std::string dir = dir_->Sub("topic");
  ASSERT_TRUE(Topic::Create(Env::Default(), dir, TopicConfig{}).ok());
  std::unique_ptr<Topic> topic;
  ASSERT_TRUE(Topic::Open(Env::Default(), dir, &topic).ok());
  auto produce = [&](int64_t id) {
    const std::string value = "{\"id\": " + std::to_string(id) + ", \"country\": \"de\", \"amount\": 1}";
    const TopicWrite write{"", value};
    TopicProduced produced;
    ASSERT_TRUE(topic->Produce({&write, 1}, &produced).ok());
  };
  for (int64_t id = 0; id < 5; ++id) produce(id);
  PipelineBuilder b("live");
  b.StreamingTable("main.s.t");
  b.Flow("ingest").FromTopic(dir, OrderColumns()).MaxBatchRows(1).Into("main.s.t");
  UpdateOptions options;
  options.max_batches = 50;  // a safety net: the update must end long before
  int64_t next = 5;
  options.on_batch = [&](const std::string&, uint64_t) { produce(next++); };  // the producer keeps up
  const UpdateResult r = Run(b.Build(), options);
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(r.batches, 5u);
  EXPECT_EQ(Rows("main.s.t").size(), 5u);
  // The next update reads what arrived meanwhile.
  options.on_batch = nullptr;
  EXPECT_EQ(Run(b.Build(), options).batches, 5u);
  EXPECT_EQ(Rows("main.s.t").size(), 10u);
}

// Orders 0..11 (amount = id, in "de" when id % 3 == 0, else "fr") in a
// topic, counted and summed by country into main.s.sums in batches of two:
// a flow whose next batches are prepared while one commits.
class RunAheadTest : public PipelineTest {
 protected:
  using Sums = std::map<std::string, std::pair<int64_t, int64_t>>;  // country -> count, sum

  static std::string Country(int64_t id) { return id % 3 == 0 ? "de" : "fr"; }
  // The sums once the first `batches` batches are counted.
  static Sums After(uint64_t batches) {
    Sums model;
    for (int64_t id = 0; id < static_cast<int64_t>(2 * batches); ++id) {
      model[Country(id)].first++;
      model[Country(id)].second += id;
    }
    return model;
  }

  void SetUp() override {
    PipelineTest::SetUp();
    const std::string dir = dir_->Sub("topic");
    ASSERT_TRUE(Topic::Create(Env::Default(), dir, TopicConfig{}).ok());
    std::unique_ptr<Topic> topic;
    ASSERT_TRUE(Topic::Open(Env::Default(), dir, &topic).ok());
    std::vector<std::string> values;  // the writes refer to them
    for (int64_t id = 0; id < 12; ++id) values.push_back(Order(id, Country(id), id));
    std::vector<TopicWrite> writes;
    for (const std::string& value : values) writes.push_back({"", value});
    TopicProduced produced;
    ASSERT_TRUE(topic->Produce(writes, &produced).ok());
    PipelineBuilder b("ahead");
    b.StreamingTable("main.s.sums");
    b.Flow("sums")
        .FromTopic(dir, OrderColumns())
        .Aggregate({"country"}, {{"orders", AggregateFn::kCount, ""}, {"revenue", AggregateFn::kSum, "amount"}})
        .MaxBatchRows(2)
        .Into("main.s.sums");
    ASSERT_TRUE(Pipeline::Open(store_.get(), b.Build(), &pipeline_).ok());
  }

  Sums Found() {
    Sums found;
    for (const Row& row : Rows("main.s.sums")) {
      found[std::get<std::string>(row[0])] = {std::get<int64_t>(row[1]), std::get<int64_t>(row[2])};
    }
    return found;
  }

  // Every batch reported once, in order, its id one more than the last.
  void ExpectSixBatchesReportedInOrder() {
    std::vector<Event> progress = Events("flow_progress");
    ASSERT_EQ(progress.size(), 6u);
    for (size_t i = 0; i < progress.size(); ++i) {
      EXPECT_NE(progress[i].details_json.find("\"batch_id\":" + std::to_string(i) + ","), std::string::npos)
          << progress[i].details_json;
    }
  }

  std::unique_ptr<Pipeline> pipeline_;
};

// Batches are reported once a later commit is queued: an update stopped
// when batch 2 is reported ends with the batches committing then and drops
// those being prepared, their rows and counts with them; the next update
// (of the same pipeline) reads them again, once.
TEST_F(RunAheadTest, AnUpdateStoppedWhileTheNextBatchesArePreparedLosesAndRepeatsNothing) {
  UpdateOptions options;
  uint64_t batches = 0;
  options.on_batch = [&](const std::string&, uint64_t) {
    if (++batches == 2) pipeline_->Stop();  // later ones are committing, or being read and counted
  };
  UpdateResult r;
  ASSERT_TRUE(pipeline_->Update(options, &r).ok());
  EXPECT_EQ(r.state, UpdateState::kCanceled) << r.error;
  const uint64_t first = r.batches;
  EXPECT_GE(first, 3u);  // batch 3 at least was queued before batch 2 was reported
  EXPECT_LT(first, 6u);
  EXPECT_EQ(batches, first);  // every batch it committed was reported
  EXPECT_EQ(Found(), After(first));
  options.on_batch = nullptr;
  ASSERT_TRUE(pipeline_->Update(options, &r).ok());
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(r.batches, 6u - first);
  EXPECT_EQ(Found(), After(6));
  ExpectSixBatchesReportedInOrder();
}

// An update's batch limit holds while the next batches are prepared ahead:
// those beyond it are not committed, and the next update reads them again,
// once.
TEST_F(RunAheadTest, AnUpdateWithABatchLimitCommitsThatManyWhileTheNextAreReadAhead) {
  uint64_t batches = 0;
  for (uint64_t limit : {1u, 2u, 0u}) {  // 0: no limit
    UpdateOptions options;
    options.max_batches = limit;
    UpdateResult r;
    ASSERT_TRUE(pipeline_->Update(options, &r).ok());
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.batches, limit == 0 ? 3u : limit);
    batches += r.batches;
    EXPECT_EQ(Found(), After(batches)) << "after " << batches << " batches";
  }
  ExpectSixBatchesReportedInOrder();
}
}  // namespace
}  // namespace spool

namespace spool {
namespace {

TEST_F(PipelineTest, ATopicThatNoLongerRetainsTheFlowsOffsetFailsTheFlowSayingSo) {
  const std::string dir = dir_->Sub("topic");
  TopicConfig config;
  config.segment_size_bytes = kMinTopicSegmentBytes;
  ASSERT_TRUE(Topic::Create(Env::Default(), dir, config).ok());
  PipelineBuilder b("retention");
  b.StreamingTable("main.s.t");
  b.Flow("ingest")
      .FromTopic(dir, {{"id", ColumnType::kInt64, false}, {"pad", ColumnType::kString, true}})
      .Into("main.s.t");
  std::mt19937 rng(3);
  auto produce = [&](int64_t first, int64_t count) {
    std::unique_ptr<Topic> topic;
    ASSERT_TRUE(Topic::Open(Env::Default(), dir, &topic).ok());
    for (int64_t id = first; id < first + count; ++id) {
      std::string pad(2000, ' ');
      for (char& c : pad) c = static_cast<char>('a' + rng() % 26);
      const std::string value = "{\"id\": " + std::to_string(id) + ", \"pad\": \"" + pad + "\"}";
      const TopicWrite write{"", value};
      TopicProduced produced;
      ASSERT_TRUE(topic->Produce({&write, 1}, &produced).ok());
    }
    if (first != 0) {
      ASSERT_TRUE(topic->SetRetention(TopicRetention{0, 100 << 10}).ok());
      TopicRetentionReport report;
      ASSERT_TRUE(topic->ApplyRetention(&report).ok());
      ASSERT_GT(report.oldest_offset, 3u);
    }
  };
  produce(0, 3);
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  produce(3, 200);
  const UpdateResult r = Run(b.Build());
  ExpectFailed(r, "offset 3 is no longer retained");
  EXPECT_EQ(Rows("main.s.t").size(), 3u);
}

}  // namespace
}  // namespace spool

namespace spool {
namespace {

// A flow added after vacuum dropped its source table's first commits starts
// from a snapshot of the table as it is, then follows its commits.
TEST_F(PipelineTest, ANewFlowOverAVacuumedTableStartsFromItsRowsAsTheyAre) {
  ASSERT_NO_FATAL_FAILURE(OpenSmallSegmentStore());
  PipelineBuilder b("late");
  b.StreamingTable("main.s.a");
  b.Flow("a").FromFiles(in(), OrderColumns()).MaxBatchRows(1).Into("main.s.a");
  PipelineSpec spec = b.Build();
  spec.flows[0].max_batch_files = 1;
  std::mt19937 rng(5);
  for (int i = 0; i < 60; ++i) {
    std::string pad(3000, ' ');
    for (char& c : pad) c = static_cast<char>('a' + rng() % 26);
    AddFile("f" + std::to_string(100 + i) + ".jsonl", Order(i, pad, 1));
  }
  ASSERT_EQ(Run(spec).state, UpdateState::kCompleted);
  VacuumOptions vacuum;
  vacuum.retain_us = 0;
  vacuum.force = true;
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  ASSERT_GT(store_->AvailableVersions().oldest, 2u) << "the table's first commits are gone";
  PipelineBuilder later("late");
  later.StreamingTable("main.s.a");
  later.StreamingTable("main.s.copy");
  later.Flow("a").FromFiles(in(), OrderColumns()).MaxBatchRows(1).Into("main.s.a");
  later.Flow("copy").FromDataset("main.s.a").Into("main.s.copy");
  PipelineSpec grown = later.Build();
  grown.flows[0].max_batch_files = 1;
  UpdateResult r = Run(grown);
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.copy").size(), 60u);
  AddFile("z.jsonl", Order(1000, "de", 1));
  r = Run(grown);
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.copy").size(), 61u);
}

}  // namespace
}  // namespace spool

namespace spool {
namespace {

// Refresh kinds (docs/design.md): full refresh (all, or a selection, with its
// downstream rule and pipelines.reset.allowed), checkpoint resets, and
// refresh selections.
class RefreshTest : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    AddFile("a.jsonl", Order(1, "de", 10) + Order(2, "fr", 5));
    ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
    AddFile("b.jsonl", Order(3, "de", 7));
  }
  UpdateResult RunWith(const PipelineSpec& spec, const std::function<void(UpdateOptions&)>& set) {
    UpdateOptions options;
    set(options);
    return Run(spec, options);
  }
  Status Refused(const std::function<void(UpdateOptions&)>& set) {
    std::unique_ptr<Pipeline> pipeline;
    EXPECT_TRUE(Pipeline::Open(store_.get(), OrdersPipeline(in()), &pipeline).ok());
    UpdateOptions options;
    set(options);
    UpdateResult result;
    const uint64_t before = store_->log()->Newest().version;
    Status s = pipeline->Update(options, &result);
    EXPECT_EQ(store_->log()->Newest().version, before) << "a refused update changed the store";
    return s;
  }
  // What an update returns once the ingest flow's checkpoint is damaged by
  // `damage`, committed as a hand edit would be.
  Status UpdateAfterDamaging(const std::function<void(std::string&)>& damage) {
    std::string checkpoint;
    bool found = false;
    EXPECT_TRUE(store_->GetCheckpoint("ingest", &checkpoint, &found).ok());
    EXPECT_TRUE(found);
    damage(checkpoint);
    Transaction txn("DAMAGE");
    txn.AllowSpoolTables();
    txn.SetCheckpoint("ingest", checkpoint);
    EXPECT_TRUE(store_->Commit(txn).ok());
    std::unique_ptr<Pipeline> pipeline;
    EXPECT_TRUE(Pipeline::Open(store_.get(), OrdersPipeline(in()), &pipeline).ok());
    UpdateResult result;
    return pipeline->Update({}, &result);
  }
};

TEST_F(RefreshTest, AFullRefreshRebuildsFromTheSourcesAndUnblocksAnIncompatibleChange) {
  PipelineSpec changed = OrdersPipeline(in());
  std::get<AggregateStep>(changed.flows[1].steps[0]).aggregates[1].fn = AggregateFn::kMax;
  ExpectFailed(Run(changed), "full refresh");
  const UpdateResult r = RunWith(changed, [](UpdateOptions& o) { o.full_refresh = true; });
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  // As a fresh run of the new definition over the files still there.
  EXPECT_EQ(Rows("main.shop.orders").size(), 3u);
  EXPECT_EQ(Rows("main.shop.revenue"), (std::vector<Row>{{std::string("de"), int64_t{2}, int64_t{10}},
                                                         {std::string("fr"), int64_t{1}, int64_t{5}}}));
  // Both its tables emptied, the aggregate keeps its groups in its target again.
  EXPECT_EQ(Rows("__spool.state.revenue__state0_aggregate").size(), 1u);
  bool resetting = false;
  for (const Event& e : Events("update_progress"))
    resetting = resetting || e.details_json.find("RESETTING") != std::string::npos;
  EXPECT_TRUE(resetting);
  std::vector<HistoryEntry> history;
  TableId orders;
  ASSERT_TRUE(TableId::Parse("main.shop.orders", &orders).ok());
  ASSERT_TRUE(store_->History(orders, &history).ok());
  bool full_refresh = false;
  for (const HistoryEntry& h : history) full_refresh = full_refresh || h.operation == "FULL REFRESH";
  EXPECT_TRUE(full_refresh);
}

TEST_F(RefreshTest, ASelectedStreamingTableTakesItsDownstreamStreamingTablesAlongOrIsRefused) {
  Status s = Refused([](UpdateOptions& o) { o.full_refresh_selection = {"main.shop.orders"}; });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("main.shop.revenue reads main.shop.orders"), std::string::npos) << s.ToString();
  const UpdateResult r = RunWith(OrdersPipeline(in()), [](UpdateOptions& o) {
    o.full_refresh_selection = {"main.shop.orders"};
    o.cascade = true;
  });
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 3u);  // rebuilt once, not doubled
  EXPECT_EQ(Rows("main.shop.revenue"), (std::vector<Row>{{std::string("de"), int64_t{2}, int64_t{17}},
                                                         {std::string("fr"), int64_t{1}, int64_t{5}}}));
}

TEST_F(RefreshTest, ATableThatForbidsResetsIsNotRefreshed) {
  PipelineSpec spec = OrdersPipeline(in());
  spec.datasets[1].properties["pipelines.reset.allowed"] = "false";
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).ok());
  UpdateOptions options;
  options.full_refresh = true;
  UpdateResult result;
  const uint64_t before = store_->log()->Newest().version;
  Status s = pipeline->Update(options, &result);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("main.shop.revenue has pipelines.reset.allowed = false"), std::string::npos);
  EXPECT_EQ(store_->log()->Newest().version, before);
}

TEST_F(RefreshTest, AResetCheckpointReprocessesTheSourceAndKeepsTheRows) {
  // The orders flow starts over: its append-only table gets the files' rows
  // again; the revenue aggregate, fed by them, counts them again.
  const UpdateResult r =
      RunWith(OrdersPipeline(in()), [](UpdateOptions& o) { o.reset_checkpoint_selection = {"ingest"}; });
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 2u + 3u);
  // Its keyed aggregate started over from its source, the orders table:
  // counted once, whatever the table held before.
  EXPECT_EQ(Rows("__spool.state.revenue__state0_aggregate").size(), 1u);  // the groups in the target: its marker
  const UpdateResult again =
      RunWith(OrdersPipeline(in()), [](UpdateOptions& o) { o.reset_checkpoint_selection = {"revenue"}; });
  ASSERT_EQ(again.state, UpdateState::kCompleted) << again.error;
  EXPECT_EQ(Rows("main.shop.revenue"), (std::vector<Row>{{std::string("de"), int64_t{3}, int64_t{27}},
                                                         {std::string("fr"), int64_t{2}, int64_t{10}}}));
  // The reset emptied the state and kept the target's rows: the groups are
  // in the state table from then on, and go on from there.
  EXPECT_EQ(Rows("__spool.state.revenue__state0_aggregate").size(), 2u);
  AddFile("c.jsonl", Order(6, "fr", 1));
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.shop.revenue"), (std::vector<Row>{{std::string("de"), int64_t{3}, int64_t{27}},
                                                         {std::string("fr"), int64_t{3}, int64_t{11}}}));
  Status s = Refused([](UpdateOptions& o) { o.reset_checkpoint_selection = {"revenue2"}; });
  EXPECT_NE(s.ToString().find("no flow named 'revenue2' (its flows: ingest, revenue)"), std::string::npos)
      << s.ToString();
  s = Refused([](UpdateOptions& o) { o.reset_checkpoint_selection = {"orders"}; });
  EXPECT_NE(s.ToString().find("'orders' names a table, not a flow; the flows writing it: ingest"), std::string::npos)
      << s.ToString();
}

TEST_F(RefreshTest, AFlowWithoutANameIsNamedAfterItsTargetsFullIdentifier) {
  // The spec as JSON, with no name for the revenue flow.
  std::string text = PipelineSpecToJson(OrdersPipeline(in()));
  const std::string named = "\"name\": \"revenue\",";
  ASSERT_NE(text.find(named), std::string::npos) << text;
  text.erase(text.find(named), named.size());
  PipelineSpec spec;
  ASSERT_TRUE(ParsePipelineSpec(text, &spec).ok());
  ASSERT_EQ(spec.flows[1].name, "main.shop.revenue");
  // Its checkpoint and state tables are its own (a first run of that name
  // counts everything once).
  ASSERT_EQ(Run(spec).state, UpdateState::kCompleted);
  std::string checkpoint;
  bool found = false;
  ASSERT_TRUE(store_->GetCheckpoint("main.shop.revenue", &checkpoint, &found).ok());
  EXPECT_TRUE(found);
  bool state_table = false;
  for (const TableInfo& t : store_->ListTables())
    state_table = state_table || t.id.ToString().starts_with("__spool.state.revenue_");
  EXPECT_TRUE(state_table);
  // A reset names it so; the bare table name is refused, saying which flow.
  ASSERT_EQ(RunWith(spec, [](UpdateOptions& o) { o.reset_checkpoint_selection = {"main.shop.revenue"}; }).state,
            UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.shop.revenue"), (std::vector<Row>{{std::string("de"), int64_t{2}, int64_t{17}},
                                                         {std::string("fr"), int64_t{1}, int64_t{5}}}));
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).ok());
  UpdateOptions options;
  options.reset_checkpoint_selection = {"revenue"};
  UpdateResult result;
  const Status s = pipeline->Update(options, &result);
  EXPECT_NE(s.ToString().find("'revenue' names a table, not a flow; the flows writing it: main.shop.revenue"),
            std::string::npos)
      << s.ToString();
  // An empty name is not the default, and a dotted name must be the target's.
  std::string empty = PipelineSpecToJson(OrdersPipeline(in()));
  empty.replace(empty.find(named), named.size(), "\"name\": \"\",");
  EXPECT_TRUE(ParsePipelineSpec(empty, &spec).IsInvalidArgument());
  spec = OrdersPipeline(in());
  spec.flows[1].name = "main.shop.orders";
  EXPECT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).IsInvalidArgument());
}

// A source's offset is stored data: one that is not a number (a damaged
// or hand-edited checkpoint) fails the update naming it, and throws nothing.
TEST_F(RefreshTest, ACheckpointOffsetThatIsNotANumberFailsTheUpdateNamingIt) {
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  const Status s = UpdateAfterDamaging([](std::string& checkpoint) {
    const size_t at = checkpoint.find("\"offset\":\"");
    ASSERT_NE(at, std::string::npos) << checkpoint;
    checkpoint.insert(at + std::string("\"offset\":\"").size(), "x");
  });
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("files source " + in() + ": the checkpoint's offset 'x"), std::string::npos)
      << s.ToString();
}

// A watermark's key in a checkpoint is stored data too: one that is not a
// step number ("1x", which std::stoull read as 1) fails the update naming
// the flow and the key.
TEST_F(RefreshTest, ACheckpointWatermarkKeyThatIsNotAStepFailsTheUpdateNamingIt) {
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  const Status s = UpdateAfterDamaging([](std::string& checkpoint) {
    const std::string watermarks = "\"watermarks\":{";
    const size_t at = checkpoint.find(watermarks);
    ASSERT_NE(at, std::string::npos) << checkpoint;
    const size_t after = at + watermarks.size();
    checkpoint.insert(after, checkpoint[after] == '}' ? "\"1x\":5" : "\"1x\":5,");
  });
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("checkpoint of flow ingest: watermark key '1x' is not a step number"), std::string::npos)
      << s.ToString();
}

TEST_F(RefreshTest, ARefreshSelectionRunsOnlyTheFlowsOfTheNamedTables) {
  const UpdateResult r =
      RunWith(OrdersPipeline(in()), [](UpdateOptions& o) { o.refresh_selection = {"main.shop.orders"}; });
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 3u);
  EXPECT_TRUE(r.flows[1].skipped);
  EXPECT_EQ(Rows("main.shop.revenue").size(), 2u);
  EXPECT_EQ(Rows("main.shop.revenue")[0], (Row{std::string("de"), int64_t{1}, int64_t{10}}));  // not yet updated
  Status s = Refused([](UpdateOptions& o) { o.refresh_selection = {"main.shop.nope"}; });
  EXPECT_NE(s.ToString().find("refresh_selection: the pipeline has no dataset main.shop.nope"), std::string::npos);
  EXPECT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  EXPECT_EQ(Rows("main.shop.revenue")[0], (Row{std::string("de"), int64_t{2}, int64_t{17}}));
}

}  // namespace
}  // namespace spool

namespace spool {
namespace {

TEST_F(PipelineTest, SourcesSayWhetherTheyStillHoldWhatAReplayFromAVersionReads) {
  AddFile("a.jsonl", Order(1, "de", 10));
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  const uint64_t point = store_->log()->Newest().version;
  AddFile("b.jsonl", Order(2, "fr", 5));
  ASSERT_EQ(Run(OrdersPipeline(in())).state, UpdateState::kCompleted);
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), OrdersPipeline(in()), &pipeline).ok());
  EXPECT_TRUE(pipeline->CheckSourcesRetain(point).ok());
  // The file read after the point is gone: a replay would lose its rows.
  std::filesystem::remove(dir_->Sub("in/b.jsonl"));
  Status s = pipeline->CheckSourcesRetain(point);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("flow 'ingest': the directory " + in() +
                              " no longer holds 1 file(s) read after the point (b.jsonl)"),
            std::string::npos)
      << s.ToString();
  // A file read before the point may go: the replay does not read it.
  AddFile("b.jsonl", Order(2, "fr", 5));
  std::filesystem::remove(dir_->Sub("in/a.jsonl"));
  EXPECT_TRUE(pipeline->CheckSourcesRetain(point).ok());
  // But a full refresh, which reads everything again, would lose it: its
  // validation warns with counts, writing nothing, and the refresh itself
  // records the warning.
  UpdateOptions refresh;
  refresh.full_refresh = true;
  std::vector<std::string> warnings;
  const uint64_t before = store_->log()->Newest().version;
  ASSERT_TRUE(pipeline->Validate(refresh, &warnings).ok());
  EXPECT_EQ(store_->log()->Newest().version, before);
  ASSERT_EQ(warnings.size(), 1u);
  const std::string loss =
      "a full refresh of main.shop.orders would lose rows it was built from: flow 'ingest': the "
      "directory " +
      in() + " no longer holds 1 of the 2 files read (a.jsonl)";
  EXPECT_EQ(warnings[0], loss);
  refresh.full_refresh = false;
  refresh.refresh_selection = {"main.shop.revenue"};
  ASSERT_TRUE(pipeline->Validate(refresh, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
  refresh.refresh_selection.clear();
  refresh.full_refresh = true;
  pipeline.reset();
  ASSERT_EQ(Run(OrdersPipeline(in()), refresh).state, UpdateState::kCompleted);
  std::vector<Event> warned = Events("update_progress", EventLevel::kWarn);
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0].message, loss);
}

}  // namespace
}  // namespace spool

namespace spool {
namespace {

TEST_F(PipelineTest, ARefreshOfFailedTablesRunsTheFailedFlowsAndThoseDownstreamOnly) {
  // Two branches: orders → revenue from one directory, returns from another.
  const std::string returns_dir = Dir("returns");
  PipelineSpec spec = OrdersPipeline(in());
  spec.datasets.push_back(DatasetSpec{"main.shop.returns", TableKind::kStreamingTable, {}, {}, {}});
  FlowSpec returns;
  returns.name = "returns";
  returns.target = "main.shop.returns";
  returns.source.kind = SourceKind::kFiles;
  returns.source.path = returns_dir;
  returns.source.columns = {{"id", ColumnType::kInt64, false}};
  spec.flows.push_back(returns);
  AddFile("a.jsonl", Order(1, "de", 10) + "{\"id\": \"x\"}\n");  // a bad record: ingest fails
  std::ofstream(returns_dir + "/r1.jsonl") << "{\"id\": 7}\n";
  UpdateResult r = Run(spec);
  ExpectFailed(r, "ingest");
  EXPECT_EQ(Rows("main.shop.returns").size(), 1u);  // the other branch ran
  AddFile("a.jsonl", Order(1, "de", 10));           // the fix
  std::ofstream(returns_dir + "/r2.jsonl") << "{\"id\": 8}\n";
  UpdateOptions options;
  options.refresh_failed = true;
  r = Run(spec, options);
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 1u);
  EXPECT_EQ(Rows("main.shop.revenue").size(), 1u);  // downstream of the failure: ran
  EXPECT_TRUE(r.flows[2].skipped);                  // returns did not fail: left alone
  EXPECT_EQ(Rows("main.shop.returns").size(), 1u);
  // Nothing failed in that update: nothing to refresh.
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).ok());
  UpdateResult again;
  Status s = pipeline->Update(options, &again);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("no flow failed in the last update"), std::string::npos);
}

}  // namespace
}  // namespace spool
