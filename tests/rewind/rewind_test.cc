// Rewinding a pipeline, the reference documents' scenarios end to end, for
// orders read from a topic, from files, and through a dataset: a pipeline
// runs; a bad transformation is deployed (or a bad batch of records
// arrives) and writes bad data; the pipeline is rewound to the last point
// before it (by point id, and by timestamp); the fix is deployed and
// replayed. Every table must equal the tables of a run that never had the
// bug, row for row. Also: rewinds of some datasets, undo, dry runs, the
// validation codes, repeated rewinds, one update at a time and the
// incomplete-rewind record.
#include "spool/rewind/rewind.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "spool/rewind/updates.h"
#include "spool/sql/sql.h"
#include "spool/stream/topic.h"
#include "spool/testing/mem_env.h"
#include "temp_dir.h"

namespace spool {
namespace {

constexpr uint64_t kSecond = 1000000;

std::vector<Column> OrderColumns() {
  return {
      {"id", ColumnType::kInt64, false}, {"country", ColumnType::kString, false}, {"amount", ColumnType::kInt64, true}};
}

// Where the shop's orders come from.
enum class Input { kTopic, kFiles };

// What is deployed: the transformation of the amounts, and a filter of the
// orders (none when empty).
struct Deploy {
  Deploy(const char* amount) : amount_expr(amount) {}  // NOLINT: a transformation alone reads as one
  Deploy(const char* amount, const char* where) : amount_expr(amount), filter(where) {}
  std::string amount_expr;
  std::string filter;
};

// The shop's pipeline: orders, read from the topic or a directory of files
// (`layered`: through a table raw, as read) with the deployed
// transformation, and revenue (count and sum by country). Layered, the bug
// is in a flow that reads a dataset, so a rewind of orders (and
// downstream) need not touch raw.
PipelineSpec ShopPipeline(const std::string& source, Input input, const Deploy& deploy, bool layered) {
  PipelineBuilder b("shop");
  if (layered) b.StreamingTable("main.shop.raw");
  b.StreamingTable("main.shop.orders");
  b.StreamingTable("main.shop.revenue");
  auto read = [&](FlowBuilder flow) {
    return input == Input::kTopic ? flow.FromTopic(source, OrderColumns()) : flow.FromFiles(source, OrderColumns());
  };
  if (layered) read(b.Flow("ingest")).Into("main.shop.raw");
  FlowBuilder orders = layered ? b.Flow("clean").FromDataset("main.shop.raw") : read(b.Flow("ingest"));
  if (!deploy.filter.empty()) orders.Filter(deploy.filter);
  orders.Select({{"id", "id"}, {"country", "country"}, {"amount", deploy.amount_expr}}).Into("main.shop.orders");
  b.Flow("revenue")
      .FromDataset("main.shop.orders")
      .Aggregate({"country"}, {{"orders", AggregateFn::kCount, ""}, {"revenue", AggregateFn::kSum, "amount"}})
      .Into("main.shop.revenue");
  return b.Build();
}

const char kGood[] = "amount";
const char kBad[] = "amount * 2";

// The shop: a store (its log on a MemEnv whose clock the test moves), the
// orders' source, and the pipeline as last deployed.
struct ShopOptions {
  TopicConfig topic;
  Input input = Input::kTopic;
  bool layered = false;
  uint64_t segment_bytes = 0;  // the log's segment size (0: the default)
};

// Orders through a table raw (see ShopPipeline).
ShopOptions Layered() {
  ShopOptions options;
  options.layered = true;
  return options;
}

class Shop {
 public:
  explicit Shop(TempDir* dir, const std::string& name, const ShopOptions& shop = ShopOptions{})
      : options_(shop), topic_dir_(dir->Sub(name + "-" + (shop.input == Input::kTopic ? "topic" : "files"))) {
    StoreOptions options;
    options.env = &env_;
    options.state_dir = dir->Sub(name + "-state");
    options.snapshot_every_versions = 0;
    options.snapshot_every_bytes = 0;
    if (shop.segment_bytes != 0) {
      options.log.segment_size_bytes = shop.segment_bytes;
      options.log.compress_min_bytes = 0;  // so that commits fill segments
    }
    options.min_retention_us = 0;
    EXPECT_TRUE(Store::Open(options, "/store", &store_).ok());
    if (shop.input == Input::kTopic) {
      EXPECT_TRUE(Topic::Create(Env::Default(), topic_dir_, shop.topic).ok());
      EXPECT_TRUE(Topic::Open(Env::Default(), topic_dir_, &topic_).ok());
    } else {
      std::filesystem::create_directories(topic_dir_);
    }
    env_.SetNowMicros(1790671000 * kSecond);  // 2026-09-29 08:36:40 UTC
  }

  // Orders first.. first + count - 1 (`bad`: with amounts no order has).
  void Produce(int64_t first, int64_t count, bool bad = false) {
    std::string file;
    for (int64_t id = first; id < first + count; ++id) {
      const std::string value = "{\"id\": " + std::to_string(id) + ", \"country\": \"" + (id % 3 == 0 ? "de" : "fr") +
                                "\", \"amount\": " + std::to_string(bad ? -1000 : 10 + id) + "}";
      if (options_.input == Input::kFiles) {
        file += value + "\n";
        continue;
      }
      const TopicWrite write{"", value};
      TopicProduced produced;
      ASSERT_TRUE(topic_->Produce({&write, 1}, &produced).ok());
    }
    if (options_.input == Input::kFiles) {  // one file a batch, in order
      char name[32];
      std::snprintf(name, sizeof name, "/%08lld.jsonl", static_cast<long long>(first));
      std::ofstream(topic_dir_ + name) << file;
    }
  }
  // Deploys `deploy` and runs one triggered update.
  void Update(const Deploy& deploy) {
    Open(deploy);
    UpdateResult result;
    ASSERT_TRUE(pipeline_->Update(UpdateOptions{}, &result).ok());
    ASSERT_EQ(result.state, UpdateState::kCompleted) << result.error;
  }
  void Open(const Deploy& deploy) {
    pipeline_.reset();
    PipelineSpec spec = ShopPipeline(topic_dir_, options_.input, deploy, options_.layered);
    ASSERT_TRUE(SetPipelineDefinition(store_.get(), spec).ok());
    ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline_).ok());
  }
  void Tick(uint64_t seconds) { env_.SetNowMicros(env_.NowMicros() + seconds * kSecond); }

  std::vector<Row> Rows(const std::string& table) {
    TableId id;
    EXPECT_TRUE(TableId::Parse(table, &id).ok());
    std::vector<Row> rows;
    EXPECT_TRUE(store_
                    ->Read(id, {},
                           [&](const Row& row) {
                             rows.push_back(row);
                             return true;
                           })
                    .ok());
    return rows;
  }
  Status Rewind(const RewindSpec& spec, RewindPoint* dry_run_point = nullptr) {
    RewindPlan plan;
    SPOOL_RETURN_IF_ERROR(PlanRewind(store_.get(), *pipeline_, spec, &plan));
    RewindRun run{"", UpdateCause::kUserAction, spec.dry_run};
    return ExecuteRewind(store_.get(), *pipeline_, plan, &run, dry_run_point);
  }
  Status RewindTo(const std::string& point_id) {
    RewindSpec spec;
    spec.rewind_point_id = point_id;
    return Rewind(spec);
  }
  RewindPoint Point() {
    RewindPoint point;
    EXPECT_TRUE(RecordRewindPoint(store_.get(), *pipeline_, kPeriodicRewindPointMessage, false, &point).ok());
    return point;
  }

  MemEnv env_;
  ShopOptions options_;
  std::string topic_dir_;  // or directory of files
  std::unique_ptr<Store> store_;
  std::unique_ptr<Topic> topic_;
  std::unique_ptr<Pipeline> pipeline_;
};

// The story up to the rewind: orders 0..9 with the good transformation,
// a rewind point, a minute later the bad deployment, orders 10..19 with
// it. `last_good`: a time between the last good commit and the first bad.
RewindPoint GoodThenBad(Shop& shop, std::string* last_good = nullptr) {
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  shop.Tick(60);
  if (last_good != nullptr) {
    *last_good = FormatTimestampMicros(static_cast<int64_t>(shop.env_.NowMicros() - 30 * kSecond)).substr(0, 19);
  }
  shop.Produce(10, 10);
  shop.Update(kBad);  // doubles the amounts of orders 10..19
  return point;
}

// The run that never had the bug: orders 0..9 then 10..19, each batch
// updated with the good transformation.
std::unique_ptr<Shop> RunWithoutTheBug(TempDir* dir, const ShopOptions& options = ShopOptions{}) {
  auto reference = std::make_unique<Shop>(dir, "reference", options);
  reference->Produce(0, 10);
  reference->Update(kGood);
  reference->Produce(10, 10);
  reference->Update(kGood);
  return reference;
}

class RewindTest : public ::testing::Test {
 protected:
  void SetUp() override { reference_ = RunWithoutTheBug(&dir_); }
  void ExpectLikeTheReference(Shop& shop) {
    for (const char* table : {"main.shop.orders", "main.shop.revenue"}) {
      EXPECT_EQ(shop.Rows(table), reference_->Rows(table)) << table;
    }
  }

  TempDir dir_;
  std::unique_ptr<Shop> reference_;
};

TEST_F(RewindTest, BadDeploymentRewoundByPointThenFixedAndReplayedEqualsARunWithoutTheBug) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  ASSERT_NE(shop.Rows("main.shop.revenue"), reference_->Rows("main.shop.revenue"));

  const uint64_t before = shop.store_->log()->Newest().version;
  const Status s = shop.RewindTo(point.id);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Rewind does not run the pipeline: the tables are as at the point. Its
  // RESTORE commit takes the version after the highest used, then the
  // definition is recorded again.
  EXPECT_EQ(shop.store_->log()->Newest().version, before + 2);
  shop.Update(kGood);  // the fix, then replay
  ExpectLikeTheReference(shop);
  std::optional<IncompleteRewind> incomplete;
  ASSERT_TRUE(FindIncompleteRewind(shop.store_.get(), &incomplete).ok());
  EXPECT_FALSE(incomplete.has_value());
  // The rewind was an update: created, then QUEUED, INITIALIZING, RESETTING, COMPLETED.
  std::vector<Event> events;
  ASSERT_TRUE(shop.store_->events()->Query(EventQuery{}, &events).ok());
  std::string rewind_update;
  for (const Event& e : events) {
    if (e.event_type == "rewind_started") rewind_update = e.origin.update_id;
  }
  std::vector<std::string> states;
  for (const Event& e : events) {
    if (e.origin.update_id != rewind_update) continue;
    if (e.event_type == "create_update") {
      EXPECT_NE(e.details_json.find("\"rewind\":true"), std::string::npos);
    }
    for (const char* state : {"QUEUED", "INITIALIZING", "RESETTING", "COMPLETED", "FAILED"}) {
      if (e.event_type == "update_progress" && e.details_json.find(state) != std::string::npos) states.push_back(state);
    }
  }
  EXPECT_EQ(states, (std::vector<std::string>{"QUEUED", "INITIALIZING", "RESETTING", "COMPLETED"}));
}

TEST_F(RewindTest, TenRewindAndReplayCyclesDuplicateNothing) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  for (int cycle = 0; cycle < 10; ++cycle) {
    ASSERT_TRUE(shop.RewindTo(point.id).ok()) << cycle;
    shop.Update(cycle % 2 == 0 ? kGood : kBad);  // replays, good or bad, each rewound again
  }
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  shop.Update(kGood);
  ExpectLikeTheReference(shop);
}

TEST_F(RewindTest, APointBeforeAFullRefreshIsStillARewindTarget) {
  // The reference product cannot rewind past a full refresh; here the
  // refresh is one more commit of the history that the cut removes.
  Shop shop(&dir_, "shop");
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  shop.Tick(60);
  UpdateOptions refresh;
  refresh.full_refresh = true;
  UpdateResult result;
  ASSERT_TRUE(shop.pipeline_->Update(refresh, &result).ok());
  ASSERT_EQ(result.state, UpdateState::kCompleted) << result.error;
  shop.Produce(10, 10);
  shop.Update(kBad);
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  shop.Update(kGood);
  ExpectLikeTheReference(shop);
}

// The rewind page's queries, as written there but for the names: the
// rows one returns as text.
std::vector<std::vector<std::string>> Sql(Store* store, const std::string& query) {
  std::vector<std::vector<std::string>> rows;
  sql::ResultHandler results;
  results.on_row = [&](const Row& row) {
    std::vector<std::string> texts;
    for (const Value& value : row) {
      texts.push_back(IsNull(value)                            ? "NULL"
                      : std::holds_alternative<int64_t>(value) ? std::to_string(std::get<int64_t>(value))
                                                               : std::get<std::string>(value));
    }
    rows.push_back(std::move(texts));
    return true;
  };
  const Status s = sql::Query(store, query, {}, results);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return rows;
}

// "Rewind to a timestamp": the midpoint between the last good commit and
// the first bad one, from the change feed and the history, fed back as
// rewind_timestamp, rewinds to just before the bad commit.
TEST_F(RewindTest, TheMidpointQueryOfTheRewindPageFindsTheTimeToRewindTo) {
  Shop shop(&dir_, "shop");
  std::string between;
  GoodThenBad(shop, &between);  // the bad deployment doubles amounts: 40 and more
  const auto rows = Sql(shop.store_.get(), R"(
WITH onset AS ( -- The first commit that introduced the bad data.
  SELECT min(_commit_version) AS first_bad_version,
         min(_commit_timestamp) AS first_bad_ts
  FROM table_changes('main.shop.orders', 1) -- Start from version 1.
  WHERE _change_type IN ('insert', 'update_postimage') -- Use ('delete') instead to find an erroneous delete.
    AND (amount >= 40) -- Example predicate. Replace the condition in parentheses with one that selects the bad rows.
),
bounds AS (
  SELECT first_bad_ts,
         (SELECT max(h.timestamp)
          FROM (DESCRIBE HISTORY main.shop.orders) h
          WHERE h.version < onset.first_bad_version) AS last_good_ts
  FROM onset
)
SELECT date_format(
         from_unixtime((unix_timestamp(last_good_ts) + unix_timestamp(first_bad_ts)) / 2),
         'yyyy-MM-dd HH:mm:ss') AS rewind_timestamp
FROM bounds;
)");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], between);  // 30 s after the last good commit, 30 s before the bad one
  RewindSpec spec;
  spec.rewind_timestamp = rows[0][0];
  ASSERT_TRUE(shop.Rewind(spec).ok());
  shop.Update(kGood);
  ExpectLikeTheReference(shop);
}

// "Find a rewind point": the dry runs' points of the last 7 days (not the
// periodic ones); a week later, none.
TEST_F(RewindTest, TheRewindPointQueryOfTheRewindPageListsTheWeeksDryRunPoints) {
  Shop shop(&dir_, "shop");
  std::string last_good;
  GoodThenBad(shop, &last_good);
  RewindSpec spec;
  spec.rewind_timestamp = last_good;
  spec.dry_run = true;
  RewindPoint validated;
  ASSERT_TRUE(shop.Rewind(spec, &validated).ok());
  std::string pipeline_id;
  ASSERT_TRUE(GetPipelineDefinition(shop.store_.get(), nullptr, &pipeline_id).ok());
  const std::string query = R"(
SELECT id AS rewind_point_id, timestamp, message
FROM event_log(')" + pipeline_id +
                            R"(')
WHERE event_type = 'rewind_summary'
  AND details:rewind_summary.dry_run = true
  AND timestamp > current_timestamp() - INTERVAL 7 DAYS
ORDER BY timestamp DESC;
)";
  const auto rows = Sql(shop.store_.get(), query);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], validated.id);
  EXPECT_EQ(rows[0][1], FormatTimestampMicros(static_cast<int64_t>(validated.recorded_us)));
  EXPECT_EQ(rows[0][2], validated.message);
  ASSERT_TRUE(shop.RewindTo(rows[0][0]).ok());
  shop.Update(kGood);
  ExpectLikeTheReference(shop);
  shop.Tick(7 * 24 * 3600 + 1);
  EXPECT_TRUE(Sql(shop.store_.get(), query).empty());
}

TEST_F(RewindTest, ADryRunChangesNothingAndRecordsAPointTheRewindCanUse) {
  Shop shop(&dir_, "shop");
  std::string last_good;
  GoodThenBad(shop, &last_good);
  const LogPosition before = shop.store_->log()->Newest();
  const std::vector<Row> orders = shop.Rows("main.shop.orders");
  RewindSpec spec;
  spec.rewind_timestamp = last_good;
  spec.dry_run = true;
  RewindPoint validated;
  ASSERT_TRUE(shop.Rewind(spec, &validated).ok());
  EXPECT_EQ(shop.store_->log()->Newest(), before);
  EXPECT_EQ(shop.Rows("main.shop.orders"), orders);
  EXPECT_TRUE(validated.dry_run);
  std::vector<RewindPoint> points;
  ASSERT_TRUE(ListRewindPoints(shop.store_.get(), 0, &points).ok());
  ASSERT_EQ(points.size(), 2u);  // newest first: the dry run's, then the periodic one
  EXPECT_EQ(points[0].id, validated.id);
  EXPECT_LT(validated.position.version, before.version);
  // Its datasets: each table's version and its flows' checkpoints there.
  ASSERT_EQ(validated.datasets.size(), 2u);
  EXPECT_EQ(validated.datasets[0].identifier, "main.shop.orders");
  EXPECT_EQ(validated.datasets[0].checkpoints.count("ingest"), 1u);
  EXPECT_LE(validated.datasets[0].table_version, validated.position.version);

  ASSERT_TRUE(shop.RewindTo(validated.id).ok());
  shop.Update(kGood);
  ExpectLikeTheReference(shop);
}

// A rewind touches only the pipeline. With commits after the point to a
// table outside it, and a property set on one of its tables, a cut would
// take those back too: the rewind is then one RESTORE commit of the
// pipeline's tables, state and checkpoints, and everything else stays.
// The replay equals a run without the bug; an undo brings the bad tables
// back; without such commits the rewind still cuts the log.
TEST_F(RewindTest, AWholePipelineRewindKeepsWhatChangedOutsideThePipeline) {
  Shop shop(&dir_, "shop");
  TableId notes, orders;
  ASSERT_TRUE(TableId::Parse("main.other.notes", &notes).ok());
  ASSERT_TRUE(TableId::Parse("main.shop.orders", &orders).ok());
  Schema schema;
  ASSERT_TRUE(Schema::Make({{"id", ColumnType::kInt64, false}}, {"id"}, &schema).ok());
  Transaction create("CREATE TABLE");
  create.CreateTable(notes, TableKind::kStreamingTable, schema);
  create.Write(notes, {int64_t{1}});
  ASSERT_TRUE(shop.store_->Commit(create).ok());
  const RewindPoint point = GoodThenBad(shop);
  Transaction later("WRITE");
  later.Write(notes, {int64_t{2}});
  ASSERT_TRUE(shop.store_->Commit(later).ok());
  Transaction tag("SET TBLPROPERTIES");
  tag.SetProperties(orders, {{"owner", "data-team"}});
  ASSERT_TRUE(shop.store_->Commit(tag).ok());
  const LogPosition before = shop.store_->log()->Newest();
  std::vector<HistoryEntry> notes_history;
  ASSERT_TRUE(shop.store_->History(notes, &notes_history).ok());

  RewindSpec spec;
  spec.rewind_point_id = point.id;
  RewindPlan plan;
  ASSERT_TRUE(PlanRewind(shop.store_.get(), *shop.pipeline_, spec, &plan).ok());
  EXPECT_TRUE(plan.whole_pipeline);
  EXPECT_TRUE(plan.by_restore);
  EXPECT_EQ(plan.kept, (std::vector<std::string>{"main.shop.orders's properties", "main.other.notes"}));
  RewindRun run{"", UpdateCause::kUserAction, false};
  ASSERT_TRUE(ExecuteRewind(shop.store_.get(), *shop.pipeline_, plan, &run).ok());
  // No cut: the same epoch, one more version, nothing outside changed.
  EXPECT_EQ(shop.store_->log()->CurrentEpoch(), before.epoch);
  EXPECT_GT(shop.store_->log()->Newest().version, before.version);
  EXPECT_EQ(shop.Rows("main.other.notes"), (std::vector<Row>{{int64_t{1}}, {int64_t{2}}}));
  std::vector<HistoryEntry> after;
  ASSERT_TRUE(shop.store_->History(notes, &after).ok());
  EXPECT_EQ(after.size(), notes_history.size());
  TableInfo info;
  ASSERT_TRUE(shop.store_->GetTable(orders, &info).ok());
  EXPECT_EQ(info.properties["owner"], "data-team");
  std::vector<HistoryEntry> restored;
  ASSERT_TRUE(shop.store_->History(orders, &restored, 1).ok());
  EXPECT_EQ(restored[0].operation, "RESTORE");
  EXPECT_EQ(restored[0].update_id, run.update_id);
  // An undo brings the bad tables back; rewinding again, then the fix.
  UndoPlan undo;
  ASSERT_TRUE(PlanUndo(shop.store_.get(), &undo).ok());
  RewindRun undone{"", UpdateCause::kUserAction, false};
  ASSERT_TRUE(ExecuteUndo(shop.store_.get(), *shop.pipeline_, undo, &undone).ok());
  EXPECT_NE(shop.Rows("main.shop.orders"), reference_->Rows("main.shop.orders"));
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  shop.Update(kGood);
  ExpectLikeTheReference(shop);
  EXPECT_EQ(shop.Rows("main.other.notes"), (std::vector<Row>{{int64_t{1}}, {int64_t{2}}}));

  // Nothing outside changed since a new point: the rewind cuts.
  const RewindPoint again = shop.Point();
  shop.Produce(100, 5);
  shop.Update(kGood);
  spec.rewind_point_id = again.id;
  ASSERT_TRUE(PlanRewind(shop.store_.get(), *shop.pipeline_, spec, &plan).ok());
  EXPECT_FALSE(plan.by_restore);
  EXPECT_TRUE(plan.kept.empty());
}

// A rewind that must keep changes made outside the pipeline is a restore,
// which cannot bring back a table of the pipeline that a full refresh
// created again since the point (its columns changed): refused, with a
// code, changing nothing.
TEST_F(RewindTest, ARewindThatMustKeepOtherChangesCannotGoBackPastATableCreatedAgain) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  shop.Open("amount * 1.5");  // orders' amount becomes a double: a full refresh creates it again
  UpdateOptions refresh;
  refresh.full_refresh = true;
  UpdateResult result;
  ASSERT_TRUE(shop.pipeline_->Update(refresh, &result).ok());
  ASSERT_EQ(result.state, UpdateState::kCompleted) << result.error;
  TableId notes;
  ASSERT_TRUE(TableId::Parse("main.other.notes", &notes).ok());
  Schema schema;
  ASSERT_TRUE(Schema::Make({{"id", ColumnType::kInt64, false}}, {"id"}, &schema).ok());
  Transaction create("CREATE TABLE");
  create.CreateTable(notes, TableKind::kStreamingTable, schema);
  ASSERT_TRUE(shop.store_->Commit(create).ok());
  const LogPosition before = shop.store_->log()->Newest();
  const Status s = shop.RewindTo(point.id);
  EXPECT_EQ(ErrorCode(s), rewind_error::kTableRecreated) << s.ToString();
  EXPECT_NE(s.ToString().find("main.shop.orders"), std::string::npos) << s.ToString();
  EXPECT_EQ(shop.store_->log()->Newest(), before);
}

TEST_F(RewindTest, EveryRefusalHasItsCodeAndChangesNothing) {
  Shop shop(&dir_, "shop");
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  const LogPosition before = shop.store_->log()->Newest();
  auto code = [&](RewindSpec spec) {
    const Status s = shop.Rewind(spec);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(shop.store_->log()->Newest(), before);
    return std::string(ErrorCode(s));
  };
  RewindSpec spec;
  EXPECT_EQ(code(spec), rewind_error::kNoTarget);
  spec.rewind_point_id = point.id;
  spec.rewind_timestamp = "2026-09-29 08:36:55";
  EXPECT_EQ(code(spec), rewind_error::kMultipleTargets);
  spec.rewind_timestamp.reset();
  spec.rewind_point_id = "no-such-point";
  EXPECT_EQ(code(spec), rewind_error::kPointNotFound);
  spec.rewind_point_id.reset();
  spec.rewind_timestamp = "2026-09-29T08:36:55";
  EXPECT_EQ(code(spec), rewind_error::kInvalidTimestamp);
  spec.rewind_timestamp = "2001-01-01 00:00:00";  // before the first commit
  EXPECT_EQ(code(spec), rewind_error::kBeyondRetention);
  spec.rewind_timestamp.reset();
  spec.rewind_point_id = point.id;
  spec.datasets = std::vector<RewindDataset>{{"main.shop.nothing", true, true}};
  EXPECT_EQ(code(spec), rewind_error::kDatasetNotFound);
  spec.datasets = std::vector<RewindDataset>{{"main.shop.orders", true, false}};
  EXPECT_EQ(code(spec), rewind_error::kExternalSourceRequiresReset);
  spec.datasets = std::vector<RewindDataset>{{"main.shop.orders", false, true}, {"main.shop.revenue", false, false}};
  EXPECT_EQ(code(spec), rewind_error::kInconsistentUpstreamReset);
  spec.datasets = std::vector<RewindDataset>{};
  EXPECT_EQ(code(spec), rewind_error::kEmptyDatasets);
  spec.datasets = std::vector<RewindDataset>{{"main.shop.orders", true, true}, {"main.shop.orders", false, true}};
  EXPECT_EQ(code(spec), rewind_error::kDuplicateDataset);
  // A cascade from the root covers the pipeline: a whole rewind.
  spec.datasets = std::vector<RewindDataset>{{"main.shop.orders", true, true}};
  EXPECT_TRUE(shop.Rewind(spec).ok());
}

// Validating the same rewind again gives the point its first dry run
// recorded, rather than one more; points and RESTORE commits name the
// update that made them.
TEST_F(RewindTest, DryRunsOfOneTargetShareAPointAndEachNamesItsUpdate) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  RewindSpec spec;
  spec.rewind_point_id = point.id;
  spec.dry_run = true;
  RewindPlan plan;
  ASSERT_TRUE(PlanRewind(shop.store_.get(), *shop.pipeline_, spec, &plan).ok());
  RewindRun first{"", UpdateCause::kUserAction, true}, second{"", UpdateCause::kUserAction, true};
  RewindPoint one, two;
  ASSERT_TRUE(ExecuteRewind(shop.store_.get(), *shop.pipeline_, plan, &first, &one).ok());
  ASSERT_TRUE(ExecuteRewind(shop.store_.get(), *shop.pipeline_, plan, &second, &two).ok());
  EXPECT_EQ(one.id, two.id);
  EXPECT_EQ(one.update_id, first.update_id);
  std::vector<RewindPoint> points;
  ASSERT_TRUE(ListRewindPoints(shop.store_.get(), 0, &points).ok());
  EXPECT_EQ(std::count_if(points.begin(), points.end(), [](const RewindPoint& p) { return p.dry_run; }), 1);
  // A rewind of some datasets: its RESTORE commit names the rewind.
  spec.dry_run = false;
  spec.datasets = std::vector<RewindDataset>{{"main.shop.revenue", true, true}};
  ASSERT_TRUE(PlanRewind(shop.store_.get(), *shop.pipeline_, spec, &plan).ok());
  RewindRun rewind{"", UpdateCause::kUserAction, false};
  ASSERT_TRUE(ExecuteRewind(shop.store_.get(), *shop.pipeline_, plan, &rewind).ok());
  TableId revenue;
  ASSERT_TRUE(TableId::Parse("main.shop.revenue", &revenue).ok());
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(shop.store_->History(revenue, &history, 1).ok());
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].operation, "RESTORE");
  EXPECT_EQ(history[0].update_id, rewind.update_id);
}

// A point whose history vacuum removed is beyond retention, and is said to
// be, naming the oldest point still possible; it is not "cut".
TEST_F(RewindTest, AVacuumedPointIsBeyondRetentionNotCut) {
  ShopOptions options;
  options.segment_bytes = 64 << 10;
  Shop shop(&dir_, "shop", options);
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint old_point = shop.Point();
  for (int round = 1; round <= 8; ++round) {  // enough commits for several segments
    shop.Tick(3600);
    shop.Produce(round * 1000, 500);
    shop.Update(kGood);
    if (round == 7) {
      ASSERT_TRUE(shop.store_->TakeSnapshot().ok());  // a base after the point
    }
  }
  ASSERT_TRUE(shop.store_->RemovePin(RewindPointPinName(old_point.id)).ok());  // as when it expires
  VacuumOptions vacuum;
  vacuum.retain_us = 3600 * kSecond;
  vacuum.force = true;
  VacuumReport report;
  ASSERT_TRUE(shop.store_->Vacuum(vacuum, &report).ok());
  ASSERT_GT(report.log_segments, 0u) << "the test needs the point's segments gone; held by " << report.held_by
                                     << ", floor " << report.floor_version << ", segments "
                                     << shop.store_->log()->Segments().size() << " ending at "
                                     << shop.store_->log()->Segments().front().last_version << ", newest "
                                     << shop.store_->log()->Newest().version;
  EXPECT_EQ(RewindPointUse(shop.store_.get(), old_point), PointUse::kBeyondRetention);
  const Status s = shop.RewindTo(old_point.id);
  EXPECT_EQ(ErrorCode(s), rewind_error::kBeyondRetention) << s.ToString();
  EXPECT_NE(s.ToString().find("oldest possible point is version"), std::string::npos) << s.ToString();
}

TEST_F(RewindTest, PeriodicPointsComeOnTheIntervalAndTheirPinsExpireWithTheRetention) {
  Shop shop(&dir_, "shop");
  const uint64_t hour = 3600 * kSecond, day = 24 * hour;
  bool recorded = true;
  shop.Open(kGood);
  auto maybe = [&] {
    EXPECT_TRUE(MaybeRecordPeriodicRewindPoint(shop.store_.get(), *shop.pipeline_, hour, 7 * day, &recorded).ok());
    return recorded;
  };
  shop.Produce(0, 10);
  shop.Update(kGood);
  EXPECT_TRUE(maybe());
  EXPECT_FALSE(maybe());  // within the hour
  shop.Tick(3599);
  EXPECT_FALSE(maybe());
  shop.Tick(2);
  EXPECT_TRUE(maybe());
  std::vector<RewindPoint> points;
  ASSERT_TRUE(ListRewindPoints(shop.store_.get(), 0, &points).ok());
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].message, kPeriodicRewindPointMessage);
  EXPECT_GT(points[0].recorded_us, points[1].recorded_us);  // newest first
  auto pinned = [&](const RewindPoint& p) {
    for (const auto& [name, version] : shop.store_->Pins()) {
      if (name == RewindPointPinName(p.id)) return version == p.position.version;
    }
    return false;
  };
  EXPECT_TRUE(pinned(points[0]));
  EXPECT_TRUE(pinned(points[1]));
  // A week later both are past the retention: their pins go, a new point comes.
  shop.Tick(8 * 24 * 3600);
  EXPECT_TRUE(maybe());
  EXPECT_FALSE(pinned(points[0]));
  EXPECT_FALSE(pinned(points[1]));
  ASSERT_TRUE(ListRewindPoints(shop.store_.get(), shop.env_.NowMicros() - hour, &points).ok());
  ASSERT_EQ(points.size(), 1u);
  EXPECT_TRUE(pinned(points[0]));
}

TEST(RewindPointSettingsTest, ThePipelinesConfigurationSetsIntervalAndRetention) {
  PipelineSpec spec;
  RewindPointSettings settings;
  ASSERT_TRUE(GetRewindPointSettings(spec, &settings).ok());
  EXPECT_EQ(settings.interval_us, kDefaultRewindPointIntervalUs);
  EXPECT_EQ(settings.retention_us, kDefaultRewindPointRetentionUs);
  spec.configuration["pipelines.rewindPoints.interval"] = "10 minutes";
  spec.configuration["pipelines.rewindPoints.retention"] = "2d";
  ASSERT_TRUE(GetRewindPointSettings(spec, &settings).ok());
  EXPECT_EQ(settings.interval_us, 600 * kSecond);
  EXPECT_EQ(settings.retention_us, 2 * 24 * 3600 * kSecond);
  spec.configuration["pipelines.rewindPoints.interval"] = "often";
  const Status s = GetRewindPointSettings(spec, &settings);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("configuration pipelines.rewindPoints.interval: duration 'often'"), std::string::npos)
      << s.ToString();
}

TEST_F(RewindTest, APointWhoseOffsetsTheTopicNoLongerRetainsIsRefused) {
  TopicConfig config;
  config.segment_size_bytes = kMinTopicSegmentBytes;
  Shop shop(&dir_, "shop", ShopOptions{config});
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  // Enough messages for several segments, then retention by size drops the
  // oldest ones: the offsets after the point among them.
  uint64_t x = 1;
  for (int64_t first = 10; first < 3010; first += 100) {
    std::vector<std::string> values;
    for (int64_t id = first; id < first + 100; ++id) {
      std::string pad(100, 'a');
      for (char& c : pad) c = static_cast<char>('a' + ((x = x * 6364136223846793005ull + 1) >> 60));  // incompressible
      values.push_back("{\"id\": " + std::to_string(id) + ", \"country\": \"" + pad + "\", \"amount\": 1}");
    }
    std::vector<TopicWrite> writes;
    for (const std::string& v : values) writes.push_back({"", v});
    TopicProduced produced;
    ASSERT_TRUE(shop.topic_->Produce(writes, &produced).ok());
  }
  ASSERT_TRUE(shop.topic_->SetRetention(TopicRetention{0, 2 * kMinTopicSegmentBytes}).ok());
  TopicRetentionReport report;
  ASSERT_TRUE(shop.topic_->ApplyRetention(&report).ok());
  ASSERT_GT(report.oldest_offset, 10u);
  const LogPosition before = shop.store_->log()->Newest();
  const Status s = shop.RewindTo(point.id);
  EXPECT_EQ(ErrorCode(s), rewind_error::kSourceRetentionExceeded) << s.ToString();
  EXPECT_NE(s.ToString().find("flow 'ingest': the topic " + shop.topic_dir_ + " no longer retains offsets 10 to"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(shop.store_->log()->Newest(), before);
  // A full refresh would lose the ten orders read: its validation says so.
  UpdateOptions refresh;
  refresh.full_refresh = true;
  std::vector<std::string> warnings;
  ASSERT_TRUE(shop.pipeline_->Validate(refresh, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "a full refresh of main.shop.orders would lose rows it was built from: flow 'ingest': the "
            "topic " +
                shop.topic_dir_ +
                " no longer holds 10 of the 10 records the table was built "
                "from (offsets 0 to 9)");
  EXPECT_EQ(shop.store_->log()->Newest(), before);
  // Once refreshed, the table is built from what the topic still holds: a
  // second full refresh would lose nothing, however many records the flow
  // read before (the count is of what the table holds, not of every offset).
  UpdateResult refreshed;
  ASSERT_TRUE(shop.pipeline_->Update(refresh, &refreshed).ok());
  ASSERT_EQ(refreshed.state, UpdateState::kCompleted) << refreshed.error;
  ASSERT_TRUE(shop.pipeline_->Validate(refresh, &warnings).ok());
  EXPECT_TRUE(warnings.empty()) << warnings[0];
}

TEST_F(RewindTest, ARewindThatStartedAndDidNotCompleteIsFound) {
  Shop shop(&dir_, "shop");
  shop.Produce(0, 10);
  shop.Update(kGood);
  Event started;
  started.event_type = "rewind_started";
  started.origin.update_id = "u1";
  started.details_json = R"({"rewind": {"epoch": 1, "version": 3, "rewind_point_id": ""}})";
  ASSERT_TRUE(shop.store_->events()->Append(&started).ok());
  std::optional<IncompleteRewind> incomplete;
  ASSERT_TRUE(FindIncompleteRewind(shop.store_.get(), &incomplete).ok());
  ASSERT_TRUE(incomplete.has_value());
  EXPECT_EQ(incomplete->update_id, "u1");
  EXPECT_EQ(incomplete->target.version, 3u);
  // Every other update is refused, saying how to recover, unless the
  // pipeline's configuration allows it.
  PipelineSpec pipeline_spec = shop.pipeline_->spec();
  Status s = CheckNoIncompleteRewind(shop.store_.get(), pipeline_spec);
  EXPECT_TRUE(s.IsFailed()) << s.ToString();
  EXPECT_NE(s.ToString().find("rewind again"), std::string::npos) << s.ToString();
  pipeline_spec.configuration["pipelines.allowUpdateAfterIncompleteRewind"] = "true";
  EXPECT_TRUE(CheckNoIncompleteRewind(shop.store_.get(), pipeline_spec).ok());
  // Rewinding again completes.
  const RewindPoint point = shop.Point();
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  ASSERT_TRUE(FindIncompleteRewind(shop.store_.get(), &incomplete).ok());
  EXPECT_FALSE(incomplete.has_value());
}

TEST_F(RewindTest, OneUpdateRunsAtATimeASecondIsRefusedWithAConflict) {
  Shop shop(&dir_, "shop");
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  shop.Produce(10, 10);
  std::unique_ptr<Pipeline> second;
  ASSERT_TRUE(
      Pipeline::Open(shop.store_.get(), ShopPipeline(shop.topic_dir_, Input::kTopic, kGood, false), &second).ok());
  UpdateOptions options;
  options.update_id = "first-update";
  std::vector<Status> refused;
  options.on_batch = [&](const std::string&, uint64_t) {  // while the first update runs
    if (!refused.empty()) return;
    UpdateResult ignored;
    refused.push_back(second->Update(UpdateOptions{}, &ignored));
    refused.push_back(shop.RewindTo(point.id));
  };
  UpdateResult result;
  ASSERT_TRUE(shop.pipeline_->Update(options, &result).ok());
  EXPECT_EQ(result.state, UpdateState::kCompleted) << result.error;
  ASSERT_EQ(refused.size(), 2u);
  for (const Status& s : refused) {
    EXPECT_TRUE(s.IsBusy()) << s.ToString();
    EXPECT_TRUE(s.message().starts_with("RESOURCE_CONFLICT: update first-update is running")) << s.ToString();
  }
  // The running update was not disturbed, and the next one may start.
  ExpectLikeTheReference(shop);
  EXPECT_EQ(shop.store_->RunningUpdate(), "");
  UpdateResult next;
  ASSERT_TRUE(second->Update(UpdateOptions{}, &next).ok());
  EXPECT_EQ(next.state, UpdateState::kCompleted) << next.error;
}

// The same with threads (run under ThreadSanitizer in CI): a continuous
// update runs on its own thread while a rewind is requested from another;
// the rewind is refused while the update runs, without disturbing it, and
// goes through once it is stopped.
TEST_F(RewindTest, ARewindRequestedWhileAContinuousUpdateRunsIsRefusedThenGoesThrough) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  std::mutex mu;
  std::condition_variable cv;
  uint64_t batches = 0;
  UpdateOptions options;
  options.update_id = "continuous";
  options.continuous = true;
  options.trigger_interval_us = 1000;
  options.on_batch = [&](const std::string&, uint64_t) {
    std::lock_guard lock(mu);
    ++batches;
    cv.notify_all();
  };
  shop.Produce(20, 5);
  Status updated;
  UpdateResult result;
  std::thread update([&] { updated = shop.pipeline_->Update(options, &result); });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return batches > 0; });  // the update is running
  }
  const Status refused = shop.RewindTo(point.id);
  EXPECT_TRUE(refused.IsBusy()) << refused.ToString();
  EXPECT_TRUE(refused.message().starts_with("RESOURCE_CONFLICT: update continuous is running")) << refused.ToString();
  shop.pipeline_->Stop();
  update.join();
  ASSERT_TRUE(updated.ok()) << updated.ToString();
  EXPECT_EQ(result.state, UpdateState::kCanceled) << result.error;
  const Status s = shop.RewindTo(point.id);
  ASSERT_TRUE(s.ok()) << s.ToString();
  shop.Update(kGood);  // the fix, then the replay: 10..24 again
  EXPECT_EQ(shop.Rows("main.shop.orders").size(), 25u);
}

TEST_F(RewindTest, ReferenceBodiesRunThroughOneCall) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  auto run = [&](const std::string& body, UpdateOutcome* outcome) {
    UpdateRequest request;
    SPOOL_RETURN_IF_ERROR(ParseUpdateRequest(body, &request));
    return RunUpdateRequest(shop.store_.get(), shop.pipeline_.get(), request, UpdateOptions{}, RetryPolicy{}, outcome);
  };
  UpdateOutcome outcome;
  // A validation writes nothing.
  const LogPosition before = shop.store_->log()->Newest();
  ASSERT_TRUE(run(R"({"validate_only": true, "full_refresh": true})", &outcome).ok());
  EXPECT_EQ(outcome.kind, UpdateOutcome::Kind::kValidation);
  EXPECT_EQ(shop.store_->log()->Newest(), before);
  // A rewind, then the fix replayed by an update.
  ASSERT_TRUE(
      run(R"({"cause": "USER_ACTION", "rewind_spec": {"rewind_point_id": ")" + point.id + R"("}})", &outcome).ok());
  EXPECT_EQ(outcome.kind, UpdateOutcome::Kind::kRewind);
  ASSERT_TRUE(outcome.rewind.has_value());
  EXPECT_EQ(outcome.rewind->target, point.position);
  EXPECT_EQ(outcome.result.state, UpdateState::kCompleted);
  shop.Open(kGood);
  ASSERT_TRUE(run(R"({"refresh_selection": []})", &outcome).ok());
  EXPECT_EQ(outcome.kind, UpdateOutcome::Kind::kUpdate);
  EXPECT_EQ(outcome.result.state, UpdateState::kCompleted) << outcome.result.error;
  ExpectLikeTheReference(shop);
  // An incomplete rewind refuses every other update, a full refresh too.
  Event started;
  started.event_type = "rewind_started";
  started.origin.update_id = "u1";
  started.details_json = R"({"rewind": {"epoch": 1, "version": 3}})";
  ASSERT_TRUE(shop.store_->events()->Append(&started).ok());
  const Status s = run(R"({"full_refresh": true})", &outcome);
  EXPECT_TRUE(s.IsFailed()) << s.ToString();
  EXPECT_NE(s.ToString().find("did not complete"), std::string::npos) << s.ToString();
}

// The reference documents' scenarios for every kind of source the orders
// come from: a topic, a directory of files, and (layered) a dataset.
class ScenarioTest : public ::testing::TestWithParam<std::tuple<Input, bool>> {
 protected:
  ShopOptions Options() const {
    ShopOptions options;
    options.input = std::get<0>(GetParam());
    options.layered = std::get<1>(GetParam());
    return options;
  }
  std::vector<std::string> TableNames() const {
    std::vector<std::string> names = {"main.shop.orders", "main.shop.revenue"};
    if (std::get<1>(GetParam())) names.push_back("main.shop.raw");
    return names;
  }

  TempDir dir_;
};

TEST_P(ScenarioTest, ABadDeploymentRewoundByPointOrTimestampThenFixedEqualsARunWithoutTheBug) {
  const std::unique_ptr<Shop> reference = RunWithoutTheBug(&dir_, Options());
  for (const bool by_timestamp : {false, true}) {
    Shop shop(&dir_, by_timestamp ? "by-timestamp" : "by-point", Options());
    std::string last_good;
    const RewindPoint point = GoodThenBad(shop, &last_good);
    ASSERT_NE(shop.Rows("main.shop.revenue"), reference->Rows("main.shop.revenue"));
    RewindSpec spec;
    if (by_timestamp) {
      spec.rewind_timestamp = last_good;
    } else {
      spec.rewind_point_id = point.id;
    }
    const Status s = shop.Rewind(spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
    shop.Update(kGood);  // the fix, then replay
    for (const std::string& table : TableNames()) {
      EXPECT_EQ(shop.Rows(table), reference->Rows(table)) << table << (by_timestamp ? " by timestamp" : " by point");
    }
  }
}

TEST_P(ScenarioTest, ABadBatchOfSourceRecordsRewoundThenFilteredEqualsARunFilteringFromTheStart) {
  // The fix filters out the bad records (amounts no order has).
  const Deploy fixed(kGood, "amount > 0");
  Shop reference(&dir_, "reference", Options());
  reference.Produce(0, 10);
  reference.Update(fixed);
  reference.Produce(100, 5, /*bad=*/true);
  reference.Produce(10, 10);
  reference.Update(fixed);

  Shop shop(&dir_, "shop", Options());
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  shop.Tick(60);
  shop.Produce(100, 5, /*bad=*/true);  // flows into every table
  shop.Update(kGood);
  ASSERT_NE(shop.Rows("main.shop.revenue"), reference.Rows("main.shop.revenue"));
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  shop.Produce(10, 10);
  shop.Update(fixed);
  for (const std::string& table : TableNames()) EXPECT_EQ(shop.Rows(table), reference.Rows(table)) << table;
}

INSTANTIATE_TEST_SUITE_P(Sources, ScenarioTest,
                         ::testing::Combine(::testing::Values(Input::kTopic, Input::kFiles), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<Input, bool>>& param) {
                           return std::string(std::get<0>(param.param) == Input::kTopic ? "Topic" : "Files") +
                                  (std::get<1>(param.param) ? "ThroughADataset" : "");
                         });

// The tables of a shop, all of them.
std::map<std::string, std::vector<Row>> Tables(Shop& shop) {
  std::map<std::string, std::vector<Row>> tables;
  for (const TableInfo& t : shop.store_->ListTables()) tables[t.id.ToString()] = shop.Rows(t.id.ToString());
  return tables;
}

// The names of the tables that differ between two Tables() results.
std::string Differing(const std::map<std::string, std::vector<Row>>& a,
                      const std::map<std::string, std::vector<Row>>& b) {
  std::string names;
  for (const auto& [name, rows] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second != rows) names += name + " ";
  }
  for (const auto& [name, rows] : b) {
    if (a.count(name) == 0) names += name + " ";
  }
  return names;
}

Status Undo(Shop& shop) {
  UndoPlan plan;
  SPOOL_RETURN_IF_ERROR(PlanUndo(shop.store_.get(), &plan));
  RewindRun run{"", UpdateCause::kUserAction, false};
  return ExecuteUndo(shop.store_.get(), *shop.pipeline_, plan, &run);
}

TEST_F(RewindTest, AnUndoBringsBackWhatTheCutTookWhileNothingWasCommittedSince) {
  Shop shop(&dir_, "shop");
  const RewindPoint point = GoodThenBad(shop);
  const auto before = Tables(shop);  // internal state tables included
  const LogPosition newest = shop.store_->log()->Newest();
  std::string never = std::string(kUndoNotPossible) + ": the pipeline was never rewound";
  EXPECT_EQ(Undo(shop).message(), never);
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  ASSERT_NE(Differing(Tables(shop), before), "");
  const Status s = Undo(shop);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Everything is as before the rewind, by one more RESTORE commit: the
  // versions the rewind cut stay in the archive, and are not used again.
  EXPECT_EQ(Differing(Tables(shop), before), "");
  EXPECT_GT(shop.store_->log()->Newest().version, newest.version);
  std::vector<HistoryEntry> history;
  TableId revenue;
  ASSERT_TRUE(TableId::Parse("main.shop.revenue", &revenue).ok());
  ASSERT_TRUE(shop.store_->History(revenue, &history, 2).ok());
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].operation, "RESTORE");  // the undo
  EXPECT_NE(history[0].parameters_json.find("\"version\":" + std::to_string(newest.version)), std::string::npos)
      << history[0].parameters_json;
  EXPECT_EQ(history[1].operation, "RESTORE");  // the rewind
  std::optional<IncompleteRewind> incomplete;
  ASSERT_TRUE(FindIncompleteRewind(shop.store_.get(), &incomplete).ok());
  EXPECT_FALSE(incomplete.has_value());
  // The pipeline goes on from there: nothing read twice.
  UpdateResult result;
  ASSERT_TRUE(shop.pipeline_->Update(UpdateOptions{}, &result).ok());
  EXPECT_EQ(Differing(Tables(shop), before), "");
  EXPECT_TRUE(Undo(shop).ToString().find("undone already") != std::string::npos);
  // A rewind followed by a commit cannot be undone.
  ASSERT_TRUE(shop.RewindTo(point.id).ok());
  shop.Produce(100, 1);
  shop.Update(kGood);
  const Status late = Undo(shop);
  EXPECT_TRUE(late.IsInvalidArgument());
  EXPECT_NE(late.ToString().find("was committed after the rewind"), std::string::npos) << late.ToString();
}

// Rewinding some datasets: the bug is in the flow from raw to orders; raw
// is not rewound.
class SubsetRewindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reference_ = RunWithoutTheBug(&dir_, Layered());
    shop_ = std::make_unique<Shop>(&dir_, "shop", Layered());
  }
  static RewindSpec Datasets(const RewindPoint& point, std::vector<RewindDataset> datasets) {
    RewindSpec spec;
    spec.rewind_point_id = point.id;
    spec.datasets = std::move(datasets);
    return spec;
  }
  void ExpectLikeTheReference(const std::vector<std::string>& tables) {
    for (const std::string& table : tables) EXPECT_EQ(shop_->Rows(table), reference_->Rows(table)) << table;
  }
  // The version of the last commit that changed `table`.
  uint64_t LastChange(const std::string& table) {
    TableId id;
    EXPECT_TRUE(TableId::Parse(table, &id).ok());
    std::vector<HistoryEntry> history;
    EXPECT_TRUE(shop_->store_->History(id, &history, 1).ok());
    return history.empty() ? 0 : history[0].version;
  }

  TempDir dir_;
  std::unique_ptr<Shop> reference_;
  std::unique_ptr<Shop> shop_;
};

TEST_F(SubsetRewindTest, ACascadeRewindsDownstreamInOneCommitLeavesUpstreamAloneAndReplaysLikeARunWithoutTheBug) {
  Shop& shop = *shop_;
  const RewindPoint point = GoodThenBad(shop);
  const std::vector<Row> raw = shop.Rows("main.shop.raw");
  const uint64_t raw_changed = LastChange("main.shop.raw");
  const LogPosition before = shop.store_->log()->Newest();

  const Status s = shop.Rewind(Datasets(point, {{"main.shop.orders", true, true}}));
  ASSERT_TRUE(s.ok()) << s.ToString();
  // One RESTORE commit, no cut: orders and revenue (the cascade) as at the
  // point, raw untouched.
  EXPECT_EQ(shop.store_->log()->Newest().version, before.version + 1);
  EXPECT_EQ(shop.store_->log()->Newest().epoch, before.epoch);
  EXPECT_EQ(LastChange("main.shop.orders"), before.version + 1);
  EXPECT_EQ(LastChange("main.shop.revenue"), before.version + 1);
  EXPECT_EQ(LastChange("main.shop.raw"), raw_changed);
  EXPECT_EQ(shop.Rows("main.shop.raw"), raw);
  for (const char* table : {"main.shop.orders", "main.shop.revenue"}) {
    TableId id;
    ASSERT_TRUE(TableId::Parse(table, &id).ok());
    ReadOptions at;
    at.version = point.position.version;
    std::vector<Row> then;
    ASSERT_TRUE(shop.store_
                    ->Read(id, at,
                           [&](const Row& row) {
                             then.push_back(row);
                             return true;
                           })
                    .ok());
    EXPECT_EQ(shop.Rows(table), then) << table;
  }
  // The fix, then replay: clean reads raw again from the point; revenue
  // skips the orders the rewind took back and reads each replayed one once.
  shop.Update(kGood);
  ExpectLikeTheReference({"main.shop.raw", "main.shop.orders", "main.shop.revenue"});
}

TEST_F(SubsetRewindTest, WithoutCascadeTheDownstreamTableKeepsItsRowsAndMeetsTheRestore) {
  Shop& shop = *shop_;
  const RewindPoint point = GoodThenBad(shop);
  const std::vector<Row> revenue = shop.Rows("main.shop.revenue");
  ASSERT_TRUE(shop.Rewind(Datasets(point, {{"main.shop.orders", false, true}})).ok());
  EXPECT_EQ(shop.Rows("main.shop.revenue"), revenue);
  // revenue was not rewound: it reads the restore as orders' changes, which
  // an append-only stream cannot follow.
  shop.Open(kGood);
  UpdateResult result;
  ASSERT_TRUE(shop.pipeline_->Update(UpdateOptions{}, &result).ok());
  EXPECT_EQ(result.state, UpdateState::kFailed);
  EXPECT_NE(result.error.find("skip_change_commits"), std::string::npos) << result.error;
}

TEST_F(SubsetRewindTest, TenSubsetRewindAndReplayCyclesDuplicateNothing) {
  Shop& shop = *shop_;
  const RewindPoint point = GoodThenBad(shop);
  for (int cycle = 0; cycle < 10; ++cycle) {
    ASSERT_TRUE(shop.Rewind(Datasets(point, {{"main.shop.orders", true, true}})).ok()) << cycle;
    shop.Update(cycle % 2 == 0 ? kGood : kBad);
  }
  ASSERT_TRUE(shop.Rewind(Datasets(point, {{"main.shop.orders", true, true}})).ok());
  shop.Update(kGood);
  ExpectLikeTheReference({"main.shop.raw", "main.shop.orders", "main.shop.revenue"});
}

TEST_F(SubsetRewindTest, WithoutResettingCheckpointsABadSourceBatchIsDroppedAndNotReprocessed) {
  // A bad batch of source records reaches raw (which keeps everything it
  // reads) and flows on into orders and revenue. Rewinding orders, with its
  // downstream, without resetting checkpoints restores their data and
  // operator state but not their offsets: the bad batch is not read again.
  Shop& shop = *shop_;
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  shop.Tick(60);
  shop.Produce(100, 5);  // the bad batch
  shop.Update(kGood);
  const std::vector<Row> raw = shop.Rows("main.shop.raw");
  ASSERT_TRUE(shop.Rewind(Datasets(point, {{"main.shop.orders", true, false}})).ok());
  EXPECT_EQ(shop.Rows("main.shop.raw"), raw);
  shop.Produce(10, 10);
  shop.Update(kGood);
  ExpectLikeTheReference({"main.shop.orders", "main.shop.revenue"});
  EXPECT_EQ(shop.Rows("main.shop.raw").size(), 25u);  // raw still holds the bad batch
}

TEST_F(SubsetRewindTest, AnUndoRestoresWhatTheRewindTook) {
  Shop& shop = *shop_;
  const RewindPoint point = GoodThenBad(shop);
  const auto before = Tables(shop);
  ASSERT_TRUE(shop.Rewind(Datasets(point, {{"main.shop.orders", true, true}})).ok());
  ASSERT_NE(Differing(Tables(shop), before), "");
  const Status s = Undo(shop);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Differing(Tables(shop), before), "");
  // Offsets came back too: the next update reads nothing again.
  UpdateResult result;
  ASSERT_TRUE(shop.pipeline_->Update(UpdateOptions{}, &result).ok());
  EXPECT_EQ(Differing(Tables(shop), before), "");
}

TEST_F(SubsetRewindTest, ATableAndItsUpstreamMustAgreeOnResettingCheckpoints) {
  Shop& shop = *shop_;
  shop.Produce(0, 10);
  shop.Update(kGood);
  const RewindPoint point = shop.Point();
  const LogPosition before = shop.store_->log()->Newest();
  const Status s =
      shop.Rewind(Datasets(point, {{"main.shop.orders", false, false}, {"main.shop.revenue", false, true}}));
  EXPECT_EQ(ErrorCode(s), rewind_error::kInconsistentUpstreamReset) << s.ToString();
  EXPECT_EQ(shop.store_->log()->Newest(), before);
}

}  // namespace
}  // namespace spool
