// JetStream sources and sinks against a real nats-server on loopback: a
// flow reading a stream by sequence, each record once across updates; a
// sink publishing a table's changes so that a consumer applying them ends
// equal to the table, through full refreshes and a stream deleted and
// created again; and the errors of bad input (an unknown stream, a server
// out of reach, wrong credentials, a filter matching nothing, malformed
// records, a message too large, another writer on the sink's subject).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetstream_spec.h"
#include "nats_server.h"
#include "spool/stream/pipeline.h"
#include "temp_dir.h"

namespace spool {
namespace {

using json = nlohmann::json;
using testing::NatsServer;

std::vector<Column> OrderColumns() {
  return {{"id", ColumnType::kInt64, false},
          {"country", ColumnType::kString, false},
          {"amount", ColumnType::kDouble, false}};
}

std::string Order(int64_t id, const std::string& country, double amount) {
  return json{{"id", id}, {"country", country}, {"amount", amount}}.dump();
}

// What a downstream service sees of a sink's subject: every message, read
// back in stream order, applied by key to a table of its own ("upsert",
// "insert" and "update_postimage" set the row, "delete" removes it).
struct Downstream {
  std::map<std::string, json> rows;  // by key
  uint64_t messages = 0;
  uint64_t next_sequence = 1;

  void Catch(const NatsServer& server, const std::string& stream, const std::string& key) {
    testing::NatsStreamState state;
    ASSERT_TRUE(server.GetStreamState(stream, &state));
    for (; next_sequence <= state.last_sequence; ++next_sequence) {
      std::string data;
      ASSERT_TRUE(server.GetMessage(stream, next_sequence, &data));
      const json m = json::parse(data);
      ++messages;
      const std::string type = m["_change_type"];
      const std::string k = m[key].dump();
      if (type == "upsert" || type == "insert" || type == "update_postimage") rows[k] = m;
      else if (type == "delete") rows.erase(k);
    }
  }
};

// A spec with a JetStream source and a sink reads back as it was written,
// and what does not fit is refused naming its place.
TEST(JetStreamSpecTest, SourcesAndSinksRoundTripAndBadOnesAreRefusedNamingThePlace) {
  const std::string js = R"("jetstream": {"servers": ["nats://127.0.0.1:4222"], "stream": "ORDERS",
      "subject": "orders.>", "start": {"sequence": 5}, "max_wait": "10 seconds",
      "credentials": {"user_env": "NATS_USER", "password_file": "/etc/spool/nats-password"},
      "tls": {"ca_file": "/etc/spool/ca.pem"}})";
  const std::string good = R"({"name": "p", "datasets": [{"name": "main.s.t", "primary_key": ["id"]}],
      "flows": [{"name": "f", "target": "main.s.t", "source": {)" +
                           js + R"(,
        "columns": [{"name": "id", "type": "int64", "nullable": false}]},
        "steps": [{"aggregate": {"group_by": ["id"], "aggregates": [{"name": "n", "fn": "count"}]}}]}],
      "sinks": [{"name": "out", "dataset": "main.s.t", "mode": "upserts",
        "jetstream": {"servers": ["nats://127.0.0.1:4222"], "stream": "OUT", "subject": "out.{table}"}}]})";
  PipelineSpec spec;
  Status s = ParsePipelineSpec(good, &spec);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const JetStreamSpec& source = spec.flows[0].source.jetstream;
  EXPECT_EQ(spec.flows[0].source.kind, SourceKind::kJetStream);
  EXPECT_EQ(source.start, StartAt::kSequence);
  EXPECT_EQ(source.start_sequence, 5u);
  EXPECT_EQ(source.connection.max_wait_us, 10'000'000u);
  EXPECT_EQ(source.connection.password_file, "/etc/spool/nats-password");
  ASSERT_EQ(spec.sinks.size(), 1u);
  EXPECT_EQ(spec.sinks[0].mode, SinkMode::kUpserts);
  PipelineSpec again;
  ASSERT_TRUE(ParsePipelineSpec(PipelineSpecToJson(spec), &again).ok());
  EXPECT_EQ(PipelineSpecToJson(again), PipelineSpecToJson(spec));

  const std::string head = R"({"datasets": [{"name": "main.s.t"}], "flows": [{"name": "f", "target": "main.s.t", )";
  const std::string cols = R"(, "columns": [{"name": "id", "type": "int64"}]}}])";
  auto source_case = [&](const std::string& jetstream) {
    return head + R"("source": {"jetstream": )" + jetstream + cols + "}";
  };
  const std::pair<std::string, std::string> cases[] = {
      {source_case(R"({"stream": "S"})"), "flows[0].source.jetstream.servers: missing"},
      {source_case(R"({"servers": ["127.0.0.1:4222"], "stream": "S"})"), "is not a URL"},
      {source_case(R"({"servers": ["nats://h:1"], "stream": "S.x"})"), "jetstream.stream: 'S.x' is not a stream name"},
      {source_case(R"({"servers": ["nats://h:1"], "stream": "S", "start": "latest"})"), "jetstream.start: expected"},
      {source_case(R"({"servers": ["nats://h:1"], "stream": "S", "start": {"sequence": 0}})"), "start at 1"},
      {source_case(R"({"servers": ["nats://h:1"], "stream": "S", "credentials": {"user_env": "U"}})"),
       "a user needs a password"},
      {source_case(
           R"({"servers": ["nats://h:1"], "stream": "S", "credentials": {"token_env": "T", "token_file": "/t"}})"),
       "an environment variable or a file, not both"},
      {source_case(R"({"servers": ["nats://h:1"], "stream": "S", "credentials": {"password": "hunter2"}})"),
       "unknown field 'password'"},
      {source_case(R"({"servers": ["nats://h:1"], "stream": "S", "tls": {"cert_file": "/c"}})"),
       "cert_file and key_file go together"},
      {head + R"("source": {"jetstream": {"servers": ["nats://h:1"], "stream": "S"}, "format": "csv")" + cols + "}",
       "is not json"},
  };
  for (const auto& [text, error] : cases) {
    s = ParsePipelineSpec(text, &spec);
    EXPECT_TRUE(s.IsInvalidArgument()) << text;
    EXPECT_NE(s.ToString().find(error), std::string::npos) << "spec: " << text << "\nerror: " << s.ToString();
  }
  // Sinks: parsed, then compiled against the pipeline.
  const std::string files = R"("source": {"files": "/tmp", "columns": [{"name": "id", "type": "int64"}]}}])";
  auto sink_case = [&](const std::string& sink) { return head + files + R"(, "sinks": [)" + sink + "]}"; };
  const std::pair<std::string, std::string> sink_cases[] = {
      {sink_case(R"({"name": "o", "dataset": "main.s.t"})"), "sinks[0].jetstream: missing"},
      {sink_case(R"({"name": "o", "dataset": "main.s.t", "jetstream": {"servers": ["nats://h:1"], "stream": "S"}})"),
       "sinks[0].jetstream.subject: missing"},
      {sink_case(
           R"({"name": "o", "dataset": "main.s.t", "jetstream": {"servers": ["nats://h:1"], "stream": "S", "subject": "out.*"}})"),
       "without wildcards"},
      {sink_case(R"({"name": "o", "dataset": "main.s.t", "mode": "merge", "jetstream": {}})"),
       "sinks[0].mode: 'merge' is not changes or upserts"},
      {sink_case(R"({"name": "o-1", "dataset": "main.s.t", "jetstream": {}})"), "only letters, digits and '_'"},
  };
  for (const auto& [text, error] : sink_cases) {
    s = ParsePipelineSpec(text, &spec);
    EXPECT_TRUE(s.IsInvalidArgument()) << text;
    EXPECT_NE(s.ToString().find(error), std::string::npos) << "spec: " << text << "\nerror: " << s.ToString();
  }
  TempDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(StoreOptions{}, dir.Sub("store"), &store).ok());
  auto sink = [](const std::string& dataset, const std::string& mode) {
    return R"({"name": "o", "dataset": ")" + dataset + R"(", "mode": ")" + mode +
           R"(", "jetstream": {"servers": ["nats://h:1"], "stream": "S", "subject": "o"}})";
  };
  auto compiled = [&](const std::string& sinks) {
    Status parsed = ParsePipelineSpec(sink_case(sinks), &spec);
    EXPECT_TRUE(parsed.ok()) << parsed.ToString();
    std::unique_ptr<Pipeline> pipeline;
    return Pipeline::Open(store.get(), spec, &pipeline);
  };
  EXPECT_TRUE(compiled(sink("main.s.t", "changes")).ok());
  s = compiled(sink("main.s.other", "changes"));
  EXPECT_NE(s.ToString().find("sinks[0] \"o\".dataset: \"main.s.other\" is not a dataset of the pipeline"),
            std::string::npos)
      << s.ToString();
  s = compiled(sink("main.s.t", "upserts"));
  EXPECT_NE(s.ToString().find("upserts needs a keyed dataset"), std::string::npos) << s.ToString();
  s = compiled(sink("main.s.t", "changes") + ", " + sink("main.s.t", "changes"));
  EXPECT_NE(s.ToString().find("a second sink of that name"), std::string::npos) << s.ToString();
}

class JetStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub("store"), &store_).ok());
  }

  JetStreamSpec Stream(const std::string& stream, const std::string& subject = "") const {
    return testing::JetStreamOn(server_, stream, subject);
  }

  // orders (from the stream ORDERS) → totals by country, published to
  // TOTALS as upserts.
  PipelineSpec Shop(bool with_sink = true) const {
    PipelineBuilder b("shop");
    b.StreamingTable("main.shop.orders");
    b.StreamingTable("main.shop.totals");
    b.Flow("orders")
        .FromJetStream(Stream("ORDERS", "orders.>"), OrderColumns())
        .MaxBatchRows(64)
        .Into("main.shop.orders");
    b.Flow("totals")
        .FromDataset("main.shop.orders")
        .Aggregate({"country"}, {{"revenue", AggregateFn::kSum, "amount"}, {"orders", AggregateFn::kCount, ""}})
        .Into("main.shop.totals");
    if (with_sink) b.Sink("totals_out", "main.shop.totals", Stream("TOTALS", "totals.{table}"), SinkMode::kUpserts);
    return b.Build();
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

  void PublishOrders(int64_t from, int64_t to) {
    static const char* kCountries[] = {"fr", "de", "it", "es"};
    for (int64_t id = from; id <= to; ++id) {
      ASSERT_TRUE(server_.Publish("orders.new", Order(id, kCountries[id % 4], static_cast<double>(id % 7) + 0.5)));
    }
  }

  // The downstream copy of totals equals the table.
  void ExpectConverged(const Downstream& d) {
    std::map<std::string, std::pair<double, int64_t>> table;
    for (const Row& r : Rows("main.shop.totals")) {
      table[json(std::get<std::string>(r[0])).dump()] = {std::get<double>(r[1]), std::get<int64_t>(r[2])};
    }
    std::map<std::string, std::pair<double, int64_t>> seen;
    for (const auto& [k, m] : d.rows) seen[k] = {m["revenue"].get<double>(), m["orders"].get<int64_t>()};
    EXPECT_EQ(seen, table);
  }

  NatsServer server_;
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(JetStreamTest, AFlowReadsEachMessageOnceAcrossUpdatesAndTheSinkPublishesEachChangeOnce) {
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(server_.CreateStream("TOTALS", {.subjects = {"totals.>"}}));
  PublishOrders(1, 150);
  UpdateResult r = Run(Shop());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 150u);
  ASSERT_EQ(r.sinks.size(), 1u);
  EXPECT_GT(r.sinks[0].messages, 0u);

  Downstream d;
  d.Catch(server_, "TOTALS", "country");
  ExpectConverged(d);
  const uint64_t first_messages = d.messages;

  // An update with nothing new reads nothing and publishes nothing.
  r = Run(Shop());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 150u);
  EXPECT_EQ(r.sinks[0].messages, 0u);
  d.Catch(server_, "TOTALS", "country");
  EXPECT_EQ(d.messages, first_messages);

  PublishOrders(151, 200);
  r = Run(Shop());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  std::set<int64_t> ids;
  for (const Row& row : Rows("main.shop.orders")) EXPECT_TRUE(ids.insert(std::get<int64_t>(row[0])).second);
  EXPECT_EQ(ids.size(), 200u);
  EXPECT_EQ(*ids.begin(), 1);
  EXPECT_EQ(*ids.rbegin(), 200);
  d.Catch(server_, "TOTALS", "country");
  ExpectConverged(d);
}

TEST_F(JetStreamTest, AFullRefreshReachesTheConsumerAsItsNetChange) {
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(server_.CreateStream("TOTALS", {.subjects = {"totals.>"}}));
  PublishOrders(1, 40);
  ASSERT_EQ(Run(Shop()).state, UpdateState::kCompleted);
  Downstream d;
  d.Catch(server_, "TOTALS", "country");
  ExpectConverged(d);
  // The stream drops its first 20 orders; a full refresh rebuilds from the
  // other 20, and the consumer follows (deletes, then the new totals).
  ASSERT_TRUE(server_.PurgeStream("ORDERS", 21));
  UpdateOptions full;
  full.full_refresh = true;
  {  // what it would lose, said before it runs
    std::unique_ptr<Pipeline> pipeline;
    ASSERT_TRUE(Pipeline::Open(store_.get(), Shop(), &pipeline).ok());
    std::vector<std::string> warnings;
    ASSERT_TRUE(pipeline->Validate(full, &warnings).ok());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("no longer holds sequences 1 to 20 of the records the table was built from"),
              std::string::npos)
        << warnings[0];
  }
  UpdateResult r = Run(Shop(), full);
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 20u);
  d.Catch(server_, "TOTALS", "country");
  ExpectConverged(d);
}

TEST_F(JetStreamTest, ANewFlowStartsWhereItsSpecSaysAndKeepsThatPosition) {
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  PublishOrders(1, 10);
  auto flow = [&](const std::string& table, StartAt start, uint64_t sequence = 0) {
    JetStreamSpec js = Stream("ORDERS");
    js.start = start;
    js.start_sequence = sequence;
    PipelineBuilder b("p");
    b.StreamingTable(table);
    b.Flow("f").FromJetStream(js, OrderColumns()).Into(table);
    return b.Build();
  };
  auto ids = [&](const std::string& table) {
    std::set<int64_t> out;
    for (const Row& r : Rows(table)) out.insert(std::get<int64_t>(r[0]));
    return out;
  };
  // "new": nothing of what is there when it first runs, everything after,
  // even when nothing arrived between its first update and its second.
  ASSERT_EQ(Run(flow("main.s.fresh", StartAt::kNew)).state, UpdateState::kCompleted);
  EXPECT_TRUE(Rows("main.s.fresh").empty());
  PublishOrders(11, 13);
  ASSERT_EQ(Run(flow("main.s.fresh", StartAt::kNew)).state, UpdateState::kCompleted);
  EXPECT_EQ(ids("main.s.fresh"), (std::set<int64_t>{11, 12, 13}));
  // A sequence: from it on.
  store_.reset();
  ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub("other"), &store_).ok());
  ASSERT_EQ(Run(flow("main.s.from", StartAt::kSequence, 12)).state, UpdateState::kCompleted);
  EXPECT_EQ(ids("main.s.from"), (std::set<int64_t>{12, 13}));
  // A time: the first message stored at or after it (13 was stored before
  // it was read off the clock, 14 after).
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  PublishOrders(14, 15);
  PipelineSpec spec = flow("main.s.since", StartAt::kTime);
  spec.flows[0].source.jetstream.start_time_us = now_us;
  ASSERT_EQ(Run(spec).state, UpdateState::kCompleted);
  EXPECT_EQ(ids("main.s.since"), (std::set<int64_t>{14, 15}));
}

// What a sink publishes, a JetStream source reads back as it was: every
// type, and strings that JSON must escape.
TEST_F(JetStreamTest, ASinksMessagesReadBackAsTheRowsTheyCameFrom) {
  ASSERT_TRUE(server_.CreateStream("IN", {.subjects = {"in.>"}}));
  ASSERT_TRUE(server_.CreateStream("OUT", {.subjects = {"out.>"}}));
  const std::vector<Column> columns = {{"i", ColumnType::kInt64, false},    {"d", ColumnType::kDouble, true},
                                       {"s", ColumnType::kString, true},    {"b", ColumnType::kBool, true},
                                       {"t", ColumnType::kTimestamp, true}, {"x", ColumnType::kBytes, true}};
  const std::vector<std::string> records = {
      R"({"i": 1, "d": 0.1, "s": "quote \" backslash \\ tab \t newline \n bell \u0007 é ☃", "b": true,
          "t": "2026-12-05 09:00:00.123456", "x": "AAEC/w=="})",
      R"({"i": -9223372036854775807, "d": 1e300, "s": "", "b": false, "t": 0, "x": ""})",
      R"({"i": 3, "d": "NaN", "s": null, "b": null, "t": null, "x": null})",
      R"({"i": 4, "d": "-Infinity", "s": "{\"json\": [1, 2]}", "b": true, "t": "1969-12-31 23:59:59", "x": "/w=="})"};
  for (const std::string& r : records) ASSERT_TRUE(server_.Publish("in.a", r));
  PipelineBuilder b("p");
  b.StreamingTable("main.s.original");
  b.Flow("in").FromJetStream(Stream("IN"), columns).Into("main.s.original");
  b.Sink("out", "main.s.original", Stream("OUT", "out.rows"));
  std::vector<Column> feed = columns;
  feed.push_back({"_change_type", ColumnType::kString, false});
  feed.push_back({"_commit_version", ColumnType::kInt64, false});
  feed.push_back({"_commit_timestamp", ColumnType::kTimestamp, false});
  std::vector<std::pair<std::string, std::string>> select;
  for (const Column& c : columns) select.emplace_back(c.name, c.name);
  UpdateResult first = Run(b.Build());
  ASSERT_EQ(first.state, UpdateState::kCompleted) << first.error;
  PipelineBuilder back("p");
  back.StreamingTable("main.s.original");
  back.StreamingTable("main.s.copy");
  back.Flow("in").FromJetStream(Stream("IN"), columns).Into("main.s.original");
  back.Sink("out", "main.s.original", Stream("OUT", "out.rows"));
  back.Flow("back").FromJetStream(Stream("OUT"), feed).Select(select).Into("main.s.copy");
  UpdateResult r = Run(back.Build());
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  const std::vector<Row> original = Rows("main.s.original"), copy = Rows("main.s.copy");
  ASSERT_EQ(copy.size(), records.size());
  for (size_t i = 0; i < original.size(); ++i) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const Value& a = original[i][c];
      const Value& z = copy[i][c];
      if (std::holds_alternative<double>(a) && std::isnan(std::get<double>(a))) {
        EXPECT_TRUE(std::holds_alternative<double>(z) && std::isnan(std::get<double>(z)));
      } else {
        EXPECT_EQ(a, z) << "row " << i << " column " << columns[c].name;
      }
    }
  }
}

TEST_F(JetStreamTest, AStreamDeletedAndCreatedAgainIsRefusedNotReadAsNewData) {
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(server_.CreateStream("TOTALS", {.subjects = {"totals.>"}}));
  PublishOrders(1, 30);
  ASSERT_EQ(Run(Shop()).state, UpdateState::kCompleted);
  ASSERT_TRUE(server_.DeleteStream("ORDERS"));
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  PublishOrders(31, 80);  // sequences 1..50 again
  UpdateResult r = Run(Shop());
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("deleted and created again"), std::string::npos) << r.error;
  EXPECT_FALSE(r.transient);
  EXPECT_EQ(Rows("main.shop.orders").size(), 30u);
}

TEST_F(JetStreamTest, BadInputGetsAClearErrorAndChangesNothing) {
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(server_.CreateStream("TOTALS", {.subjects = {"totals.>"}}));
  auto run_with = [&](JetStreamSpec js, std::vector<Column> columns = OrderColumns(),
                      BadRecords bad = BadRecords::kFail, const std::string& table = "main.s.t") {
    PipelineBuilder b("p");
    b.StreamingTable(table);
    b.Flow("f").FromJetStream(std::move(js), std::move(columns), bad).Into(table);
    return Run(b.Build());
  };
  // An unknown stream.
  UpdateResult r = run_with(Stream("NOPE"));
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("no stream NOPE"), std::string::npos) << r.error;
  EXPECT_FALSE(r.transient);
  // A subject filter matching none of the stream's subjects.
  r = run_with(Stream("ORDERS", "payments.>"));
  EXPECT_NE(r.error.find("matches none of the stream's subjects (orders.>)"), std::string::npos) << r.error;
  // Nothing listening: transient (the update's retries take it from there).
  JetStreamSpec away = Stream("ORDERS");
  away.connection.servers = {"nats://127.0.0.1:1"};
  r = run_with(away);
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_TRUE(r.transient) << r.error;
  // A malformed record fails the flow, naming its sequence; rescued, it is kept.
  ASSERT_TRUE(server_.Publish("orders.new", Order(1, "fr", 1)));
  ASSERT_TRUE(server_.Publish("orders.new", R"({"id": "two", "country": "de", "amount": 2})"));
  r = run_with(Stream("ORDERS"));
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("sequence 2"), std::string::npos) << r.error;
  EXPECT_EQ(Rows("main.s.t").size(), 0u);  // nothing half-written
  std::vector<Column> nullable = OrderColumns();
  for (Column& c : nullable) c.nullable = true;
  r = run_with(Stream("ORDERS"), nullable, BadRecords::kRescue, "main.s.rescued");
  ASSERT_EQ(r.state, UpdateState::kCompleted) << r.error;
  const std::vector<Row> rows = Rows("main.s.rescued");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(rows[1][0]));  // "two" rescued, not lost
  EXPECT_NE(std::get<std::string>(rows[1][3]).find("two"), std::string::npos);
}

TEST_F(JetStreamTest, WrongCredentialsAreRefusedAndSecretsComeFromTheEnvironment) {
  NatsServer locked(testing::NatsServerOptions{.auth = {.user = "spool", .password = "s3cret"}});
  ASSERT_TRUE(locked.Start());
  ASSERT_TRUE(locked.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(locked.Publish("orders.new", Order(1, "fr", 1)));
  JetStreamSpec js = Stream("ORDERS");
  js.connection.servers = {locked.url()};
  js.connection.user_env = "SPOOL_TEST_NATS_USER";
  js.connection.password_env = "SPOOL_TEST_NATS_PASSWORD";
  PipelineBuilder b("p");
  b.StreamingTable("main.s.t");
  b.Flow("f").FromJetStream(js, OrderColumns()).Into("main.s.t");
  ::setenv("SPOOL_TEST_NATS_USER", "spool", 1);
  ::setenv("SPOOL_TEST_NATS_PASSWORD", "wrong", 1);
  UpdateResult r = Run(b.Build());
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("Authorization"), std::string::npos) << r.error;
  EXPECT_FALSE(r.transient);
  ::setenv("SPOOL_TEST_NATS_PASSWORD", "s3cret", 1);
  r = Run(b.Build());
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.t").size(), 1u);
  ::unsetenv("SPOOL_TEST_NATS_PASSWORD");
  r = Run(b.Build());
  EXPECT_NE(r.error.find("SPOOL_TEST_NATS_PASSWORD"), std::string::npos) << r.error;
  ::unsetenv("SPOOL_TEST_NATS_USER");
}

TEST_F(JetStreamTest, ATokenComesFromAFile) {
  NatsServer locked(testing::NatsServerOptions{.auth = {.token = "t0ken"}});
  ASSERT_TRUE(locked.Start());
  ASSERT_TRUE(locked.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(locked.Publish("orders.new", Order(1, "fr", 1)));
  JetStreamSpec js = Stream("ORDERS");
  js.connection.servers = {locked.url()};
  js.connection.token_file = dir_.Sub("token");
  PipelineBuilder b("p");
  b.StreamingTable("main.s.t");
  b.Flow("f").FromJetStream(js, OrderColumns()).Into("main.s.t");
  std::ofstream(dir_.Sub("token")) << "wrong\n";
  UpdateResult r = Run(b.Build());
  EXPECT_NE(r.error.find("Authorization"), std::string::npos) << r.error;
  std::ofstream(dir_.Sub("token")) << "t0ken\n";
  r = Run(b.Build());
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.t").size(), 1u);
}

// A CA and a certificate for 127.0.0.1 it signed, made with openssl in `dir`.
::testing::AssertionResult MakeCertificates(const std::string& dir) {
  const std::string script =
      "cd '" + dir +
      "' && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=spool-test-ca -keyout ca.key -out ca.pem "
      "2>/dev/null && openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr "
      "2>/dev/null && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && openssl x509 -req -in server.csr -CA "
      "ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext -out server.pem 2>/dev/null";
  if (std::system(script.c_str()) != 0) return ::testing::AssertionFailure() << "openssl failed: " << script;
  return ::testing::AssertionSuccess();
}

TEST_F(JetStreamTest, ATlsServerIsReadWithTheCaTheSpecNames) {
  ASSERT_TRUE(MakeCertificates(dir_.path()));
  NatsServer secure(testing::NatsServerOptions{.auth = {.tls_ca_file = dir_.Sub("ca.pem")},
                                               .tls_cert_file = dir_.Sub("server.pem"),
                                               .tls_key_file = dir_.Sub("server.key")});
  ASSERT_TRUE(secure.Start());
  ASSERT_TRUE(secure.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(secure.Publish("orders.new", Order(1, "fr", 1)));
  JetStreamSpec js = Stream("ORDERS");
  js.connection.servers = {secure.url()};
  PipelineBuilder b("p");
  b.StreamingTable("main.s.t");
  b.Flow("f").FromJetStream(js, OrderColumns()).Into("main.s.t");
  UpdateResult r = Run(b.Build());  // no CA: the server's certificate is not trusted
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("connecting to JetStream stream ORDERS"), std::string::npos) << r.error;
  b = PipelineBuilder("p");
  b.StreamingTable("main.s.t");
  js.connection.tls_ca_file = dir_.Sub("ca.pem");
  b.Flow("f").FromJetStream(js, OrderColumns()).Into("main.s.t");
  r = Run(b.Build());
  EXPECT_EQ(r.state, UpdateState::kCompleted) << r.error;
  EXPECT_EQ(Rows("main.s.t").size(), 1u);
}

TEST_F(JetStreamTest, TheSinkRefusesASubjectAnotherWriterPublishesTo) {
  ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(server_.CreateStream("TOTALS", {.subjects = {"totals.>"}}));
  PublishOrders(1, 10);
  ASSERT_EQ(Run(Shop()).state, UpdateState::kCompleted);
  ASSERT_TRUE(server_.Publish("totals.totals", R"({"country": "xx"})"));  // a stranger
  PublishOrders(11, 20);
  UpdateResult r = Run(Shop());
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("another writer publishes to it"), std::string::npos) << r.error;
  EXPECT_EQ(Rows("main.shop.orders").size(), 20u);  // the flows ran; only the sink is held back
}

TEST_F(JetStreamTest, AChangeOverTheServersSizeLimitIsRefusedWholeVersionAndAll) {
  NatsServer small(testing::NatsServerOptions{.max_payload = 1024});
  ASSERT_TRUE(small.Start());
  ASSERT_TRUE(small.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
  ASSERT_TRUE(small.CreateStream("OUT", {.subjects = {"out.>"}}));
  JetStreamSpec in = Stream("ORDERS"), out = Stream("OUT", "out.t");
  in.connection.servers = out.connection.servers = {small.url()};
  PipelineBuilder b("p");
  b.StreamingTable("main.s.t");
  b.Flow("f")
      .FromJetStream(in, {{"id", ColumnType::kInt64, false}, {"note", ColumnType::kString, true}})
      .Into("main.s.t");
  b.Sink("out", "main.s.t", out);
  ASSERT_TRUE(small.Publish("orders.a", R"({"id": 1, "note": "short"})"));
  ASSERT_EQ(Run(b.Build()).state, UpdateState::kCompleted);
  // One version of two rows, one of which makes a message over the limit
  // (its record fits: the message adds the change feed's columns).
  ASSERT_TRUE(small.Publish("orders.a", R"({"id": 2, "note": "short"})"));
  ASSERT_TRUE(small.Publish("orders.a", json{{"id", 3}, {"note", std::string(900, 'x')}}.dump()));
  UpdateResult r = Run(b.Build());
  EXPECT_EQ(r.state, UpdateState::kFailed);
  EXPECT_NE(r.error.find("nothing of the version was published"), std::string::npos) << r.error;
  EXPECT_EQ(Rows("main.s.t").size(), 3u);
  testing::NatsStreamState state;
  ASSERT_TRUE(small.GetStreamState("OUT", &state));
  EXPECT_EQ(state.messages, 1u);  // the first version's message; none of the second's
}

}  // namespace
}  // namespace spool
