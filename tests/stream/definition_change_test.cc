// Definition changes against a pipeline that has run: a column's type, a
// column added or dropped, a key, a group_by, an aggregate's outputs, a
// filter. Two properties, over random pairs of definitions:
//  - validation predicts the run: Pipeline::Validate refuses exactly what
//    Pipeline::Update fails on, with the same error (one check serves both);
//  - a full refresh adopts any change: it validates, completes, and leaves
//    the tables equal to those of a store that only ever ran the new
//    definition (new schema and key, fresh operator state, rebuilt from the
//    source), with the schema change in the table's history.
#include <algorithm>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "spool/stream/pipeline.h"
#include "temp_dir.h"

namespace spool {
namespace {

// One definition of the pipeline: orders from files, revenue aggregated
// from orders. Each field is a change the reference documents name.
struct Definition {
  int orders_select = 0;      // 0: as read; 1: + a nullable column; 2: amount as double; 3: without `note`
  bool orders_keyed = false;  // primary key (id)
  bool orders_filtered = false;
  bool group_by_note = false;  // group_by country (, note)
  int revenue_fn = 0;          // sum, max, avg
  bool with_count = false;

  std::string Json(const std::string& in) const {
    static const char* kSelects[] = {
        "",
        R"j({"select": ["id", "country", "amount", "note", {"name": "tagged", "expr": "CASE WHEN amount > 3 THEN note END"}]},)j",
        R"j({"select": ["id", "country", {"name": "amount", "expr": "CAST(amount AS double)"}, "note"]},)j",
        R"j({"select": ["id", "country", "amount"]},)j",
    };
    static const char* kFns[] = {"sum", "max", "avg"};
    std::string steps = std::string(orders_filtered ? R"({"filter": "amount > 1"},)" : "") + kSelects[orders_select];
    if (!steps.empty()) steps.pop_back();  // the last comma
    const bool note = orders_select != 3 && group_by_note;
    return std::string(R"({"name": "shop", "datasets": [)") + R"({"name": "main.shop.orders")" +
           (orders_keyed ? R"(, "primary_key": ["id"])" : "") + "}," + R"({"name": "main.shop.revenue"}],)" +
           R"("flows": [)" + R"({"name": "ingest", "target": "main.shop.orders", "source": {"files": ")" + in +
           R"(", "columns": [{"name": "id", "type": "int64", "nullable": false},
               {"name": "country", "type": "string", "nullable": false},
               {"name": "amount", "type": "int64", "nullable": false}, {"name": "note", "type": "string", "nullable": false}]},
              "steps": [)" +
           steps + "]}," +
           R"({"name": "revenue", "target": "main.shop.revenue", "source": {"dataset": "main.shop.orders"},
              "steps": [{"aggregate": {"group_by": ["country")" +
           (note ? R"(, "note")" : "") + R"(], "aggregates": [)" +
           (with_count ? R"({"name": "n", "fn": "count"}, )" : "") + R"({"name": "revenue", "fn": ")" +
           kFns[revenue_fn] + R"(", "expr": "amount"}]}}]}]})";
  }

  static Definition Random(std::mt19937& rng) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    Definition d;
    d.orders_select = pick(4);
    d.orders_keyed = pick(2) == 1;
    d.orders_filtered = pick(2) == 1;
    d.group_by_note = pick(2) == 1;
    d.revenue_fn = pick(3);
    d.with_count = pick(2) == 1;
    return d;
  }
};

std::string Text(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return "'" + *s + "'";
  if (std::holds_alternative<std::monostate>(v)) return "NULL";
  return "?";
}

class DefinitionChangeTest : public ::testing::Test {
 protected:
  // A new store; the source files stay.
  void OpenStore(const std::string& name) {
    store_.reset();
    ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub(name), &store_).ok());
  }
  void AddFile(const std::string& name, int first, int count) {
    const std::string tmp = dir_.Sub("in/.tmp");
    {
      std::ofstream out(tmp);
      for (int id = first; id < first + count; ++id) {
        out << R"({"id": )" << id << R"(, "country": ")"
            << (id % 3 == 0   ? "de"
                : id % 3 == 1 ? "fr"
                              : "it")
            << R"(", "amount": )" << id % 7 << R"(, "note": ")" << (id % 2 ? "a" : "b") << "\"}\n";
      }
    }
    std::filesystem::rename(tmp, dir_.Sub("in/" + name));
  }
  void SetUp() override {
    std::filesystem::create_directories(dir_.Sub("in"));
    AddFile("1.jsonl", 0, 40);
    OpenStore("store");
  }
  std::unique_ptr<Pipeline> Open(const Definition& d) {
    PipelineSpec spec;
    Status s = ParsePipelineSpec(d.Json(dir_.Sub("in")), &spec);
    EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << d.Json(dir_.Sub("in"));
    std::unique_ptr<Pipeline> pipeline;
    s = Pipeline::Open(store_.get(), spec, &pipeline);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return pipeline;
  }
  UpdateResult Update(Pipeline* pipeline, const UpdateOptions& options = {}) {
    UpdateResult result;
    const Status s = pipeline->Update(options, &result);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return result;
  }
  // A table's rows, sorted (a keyless table reads in commit order, which
  // batching may change), with its columns' names and types.
  std::string Contents(const std::string& name) {
    TableId id;
    EXPECT_TRUE(TableId::Parse(name, &id).ok());
    TableInfo table;
    std::vector<std::string> rows;
    const Status s = store_->Read(
        id, {},
        [&](const Row& row) {
          std::string text;
          for (const Value& v : row) text += Text(v) + ",";
          rows.push_back(text);
          return true;
        },
        &table);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::sort(rows.begin(), rows.end());
    std::string out;
    for (const Column& c : table.schema.columns()) out += c.name + ":" + std::string(ColumnTypeName(c.type)) + " ";
    out += "key";
    for (size_t k : table.schema.key_columns()) out += " " + table.schema.columns()[k].name;
    out += "\n";
    for (const std::string& row : rows) out += row + "\n";
    return out;
  }
  // What a store that only ever ran `d` over the same files holds.
  std::pair<std::string, std::string> Fresh(const Definition& d) {
    std::unique_ptr<Store> kept = std::move(store_);
    OpenStore("fresh-" + std::to_string(fresh_++));
    std::unique_ptr<Pipeline> pipeline = Open(d);
    EXPECT_EQ(Update(pipeline.get()).state, UpdateState::kCompleted);
    std::pair<std::string, std::string> out{Contents("main.shop.orders"), Contents("main.shop.revenue")};
    pipeline.reset();
    store_ = std::move(kept);
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  int fresh_ = 0;
};

// The reference documents' list, one by one: each change refused by the
// update and its validation alike, then adopted by a full refresh.
TEST_F(DefinitionChangeTest, AFullRefreshAdoptsEachChangeThatNeedsOne) {
  struct Change {
    std::string name;
    Definition to;
    bool selection_with_cascade;  // a full_refresh_selection of orders with cascade, else full_refresh
  };
  Definition type_change, added, dropped, keyed, grouped, outputs;
  type_change.orders_select = 2;
  added.orders_select = 1;
  dropped.orders_select = 3;
  keyed.orders_keyed = true;
  grouped.group_by_note = true;
  outputs.with_count = true;
  outputs.revenue_fn = 2;
  const std::vector<Change> changes = {
      {"a column's type", type_change, false}, {"a column added", added, true},
      {"a column dropped", dropped, false},    {"the key", keyed, true},
      {"the group_by", grouped, false},        {"the aggregate's outputs", outputs, true}};
  int round = 0;
  for (const Change& change : changes) {
    SCOPED_TRACE(change.name);
    OpenStore("store-" + std::to_string(round++));
    std::unique_ptr<Pipeline> before = Open(Definition{});
    ASSERT_EQ(Update(before.get()).state, UpdateState::kCompleted);
    before.reset();
    std::unique_ptr<Pipeline> after = Open(change.to);
    std::vector<std::string> warnings;
    const Status validated = after->Validate({}, &warnings);
    const UpdateResult refused = Update(after.get());
    // Adding a column at the end is the one change the tables take as it is.
    if (change.name == "a column added") {
      EXPECT_TRUE(validated.ok()) << validated.ToString();
      EXPECT_EQ(refused.state, UpdateState::kCompleted) << refused.error;
    } else {
      ASSERT_FALSE(validated.ok());
      EXPECT_EQ(refused.state, UpdateState::kFailed);
      EXPECT_EQ(refused.error, validated.message());
    }
    UpdateOptions refresh;
    if (change.selection_with_cascade) {
      refresh.full_refresh_selection = {"main.shop.orders"};
      refresh.cascade = true;
    } else {
      refresh.full_refresh = true;
    }
    const Status ok = after->Validate(refresh, &warnings);
    EXPECT_TRUE(ok.ok()) << ok.ToString();
    const UpdateResult refreshed = Update(after.get(), refresh);
    ASSERT_EQ(refreshed.state, UpdateState::kCompleted) << refreshed.error;
    const auto [orders, revenue] = Fresh(change.to);
    EXPECT_EQ(Contents("main.shop.orders"), orders);
    EXPECT_EQ(Contents("main.shop.revenue"), revenue);
    // A plain update afterwards goes on from the refreshed state.
    EXPECT_EQ(Update(after.get()).state, UpdateState::kCompleted);
  }
}

// A change in the table's columns shows in its history: the FULL REFRESH
// commit that replaced them names both.
TEST_F(DefinitionChangeTest, TheSchemaChangeIsInTheTablesHistory) {
  std::unique_ptr<Pipeline> before = Open(Definition{});
  ASSERT_EQ(Update(before.get()).state, UpdateState::kCompleted);
  before.reset();
  Definition typed;
  typed.orders_select = 2;
  std::unique_ptr<Pipeline> after = Open(typed);
  UpdateOptions refresh;
  refresh.full_refresh = true;
  ASSERT_EQ(Update(after.get(), refresh).state, UpdateState::kCompleted);
  TableId id;
  ASSERT_TRUE(TableId::Parse("main.shop.orders", &id).ok());
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(id, &history).ok());
  auto refresh_entry =
      std::find_if(history.begin(), history.end(), [](const HistoryEntry& h) { return h.operation == "FULL REFRESH"; });
  ASSERT_NE(refresh_entry, history.end());
  EXPECT_NE(refresh_entry->parameters_json.find("schema_changes"), std::string::npos) << refresh_entry->parameters_json;
  EXPECT_NE(refresh_entry->parameters_json.find("amount double"), std::string::npos) << refresh_entry->parameters_json;
}

// A full refresh that fails part-way (a bad record after the reset) leaves
// a pipeline that completes when run again, refreshed or not.
TEST_F(DefinitionChangeTest, AFullRefreshThatFailsPartWayCompletesWhenRunAgain) {
  std::unique_ptr<Pipeline> before = Open(Definition{});
  ASSERT_EQ(Update(before.get()).state, UpdateState::kCompleted);
  before.reset();
  Definition typed;
  typed.orders_select = 2;
  typed.revenue_fn = 2;
  std::unique_ptr<Pipeline> after = Open(typed);
  std::ofstream(dir_.Sub("in/2.jsonl")) << R"({"id": "seven", "country": "de", "amount": 1})"
                                        << "\n";
  UpdateOptions refresh;
  refresh.full_refresh = true;
  const UpdateResult failed = Update(after.get(), refresh);
  ASSERT_EQ(failed.state, UpdateState::kFailed);
  std::filesystem::remove(dir_.Sub("in/2.jsonl"));
  std::vector<std::string> warnings;
  EXPECT_TRUE(after->Validate({}, &warnings).ok());  // not stuck: a plain update goes on
  ASSERT_EQ(Update(after.get()).state, UpdateState::kCompleted);
  const auto [orders, revenue] = Fresh(typed);
  EXPECT_EQ(Contents("main.shop.orders"), orders);
  EXPECT_EQ(Contents("main.shop.revenue"), revenue);
  ASSERT_EQ(Update(after.get(), refresh).state, UpdateState::kCompleted);  // and so does the refresh again
  EXPECT_EQ(Contents("main.shop.revenue"), revenue);
}

// A flow whose operator state was dropped (by damage; by hand is refused)
// fails with a named error and the way out, never a wrong total; its
// validation says the same; a full refresh of its dataset rebuilds it.
TEST_F(DefinitionChangeTest, AFlowWhoseStateTableIsGoneFailsWithANamedErrorUntilAFullRefresh) {
  std::unique_ptr<Pipeline> pipeline = Open(Definition{});
  ASSERT_EQ(Update(pipeline.get()).state, UpdateState::kCompleted);
  const std::string expected = Contents("main.shop.revenue");
  TableId state;
  ASSERT_TRUE(TableId::Parse("__spool.state.revenue__state0_aggregate", &state).ok());
  Transaction by_hand("DROP TABLE");
  by_hand.DropTable(state);
  EXPECT_TRUE(store_->Commit(by_hand).IsInvalidArgument());  // refused by hand
  by_hand.AllowSpoolTables();                                // as damage would leave it
  ASSERT_TRUE(store_->Commit(by_hand).ok());
  AddFile("2.jsonl", 40, 10);
  std::vector<std::string> warnings;
  const Status validated = pipeline->Validate({}, &warnings);
  EXPECT_EQ(validated.message().substr(0, kInternalStateMissing.size()), kInternalStateMissing) << validated.ToString();
  const UpdateResult failed = Update(pipeline.get());
  EXPECT_EQ(failed.state, UpdateState::kFailed);
  EXPECT_EQ(failed.error, validated.message());
  EXPECT_NE(failed.error.find("a full refresh of main.shop.revenue"), std::string::npos) << failed.error;
  UpdateOptions refresh;
  refresh.full_refresh_selection = {"main.shop.revenue"};
  ASSERT_EQ(Update(pipeline.get(), refresh).state, UpdateState::kCompleted);
  EXPECT_EQ(Contents("main.shop.revenue"), Fresh(Definition{}).second);
}

// Validation predicts the run over random pairs of definitions: it refuses
// exactly what the update fails on, with the same error, and a full
// refresh of every dataset always validates and completes.
TEST_F(DefinitionChangeTest, ValidationPassesExactlyWhenTheRunDoesNotFailOnTheDefinition) {
  std::mt19937 rng(20261204);
  int refused = 0, accepted = 0;
  for (int round = 0; round < 24; ++round) {
    const Definition from = Definition::Random(rng), to = Definition::Random(rng);
    SCOPED_TRACE(from.Json("in") + "\n->\n" + to.Json("in"));
    OpenStore("random-" + std::to_string(round));
    std::unique_ptr<Pipeline> first = Open(from);
    ASSERT_EQ(Update(first.get()).state, UpdateState::kCompleted);
    first.reset();
    std::unique_ptr<Pipeline> second = Open(to);
    std::vector<std::string> warnings;
    const Status validated = second->Validate({}, &warnings);
    const UpdateResult run = Update(second.get());
    EXPECT_EQ(validated.ok(), run.state == UpdateState::kCompleted) << validated.ToString() << " / " << run.error;
    if (!validated.ok()) {
      EXPECT_EQ(run.error, validated.message());
    }
    (validated.ok() ? accepted : refused)++;
    UpdateOptions refresh;
    refresh.full_refresh = true;
    EXPECT_TRUE(second->Validate(refresh, &warnings).ok());
    ASSERT_EQ(Update(second.get(), refresh).state, UpdateState::kCompleted);
    const auto [orders, revenue] = Fresh(to);
    EXPECT_EQ(Contents("main.shop.orders"), orders);
    // A keyed orders table that keeps its columns and key is emptied, not
    // replaced: revenue, reset, reads its whole change feed again (the
    // first rows, their deletion by the refresh, the rows again), as a
    // stream of a keyed table's changes is read; a store that never had
    // the first rows holds other sums. Every other pair must match.
    const bool same_keyed_orders = from.orders_keyed && to.orders_keyed && from.orders_select == to.orders_select;
    if (!same_keyed_orders) {
      EXPECT_EQ(Contents("main.shop.revenue"), revenue);
    }
  }
  // Both sides of the property were tried.
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace spool
