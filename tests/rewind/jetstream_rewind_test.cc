// Rewind and replay of a pipeline that reads a JetStream stream and
// publishes its totals to another, against a real nats-server: a bad
// deployment rewound (the whole pipeline, and a subset), the replay
// reading the stream again from the point's sequences, and a downstream
// consumer of the sink ending equal to the table and to a reference
// computed without the bad deployment; a dry run refused with
// SOURCE_RETENTION_EXCEEDED once the stream dropped what the replay needs.
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetstream_spec.h"
#include "nats_server.h"
#include "spool/rewind/rewind.h"
#include "spool/rewind/rewind_points.h"
#include "spool/rewind/updates.h"
#include "temp_dir.h"

namespace spool {
namespace {

using json = nlohmann::json;
using Totals = std::map<std::string, double>;
using testing::NatsServer;

constexpr const char* kCountries[] = {"fr", "de", "it", "es"};

double Amount(int64_t id) { return static_cast<double>(id % 7) + 0.5; }

class JetStreamRewindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
    ASSERT_TRUE(server_.CreateStream("TOTALS", {.subjects = {"totals.>"}}));
    ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub("store"), &store_).ok());
  }

  JetStreamSpec Stream(const std::string& stream, const std::string& subject = "") const {
    return testing::JetStreamOn(server_, stream, subject);
  }

  // orders → revenue by country, published as upserts. The bad deployment
  // counts every amount ten times.
  void Deploy(bool bad) {
    PipelineBuilder b("shop");
    b.StreamingTable("main.shop.orders");
    b.StreamingTable("main.shop.totals");
    b.Flow("orders")
        .FromJetStream(Stream("ORDERS", "orders.>"), {{"id", ColumnType::kInt64, false},
                                                      {"country", ColumnType::kString, false},
                                                      {"amount", ColumnType::kDouble, false}})
        .Select({{"id", "id"}, {"country", "country"}, {"amount", bad ? "amount * 10" : "amount"}})
        .MaxBatchRows(16)
        .Into("main.shop.orders");
    b.Flow("totals")
        .FromDataset("main.shop.orders")
        .Aggregate({"country"}, {{"revenue", AggregateFn::kSum, "amount"}})
        .Into("main.shop.totals");
    b.Sink("totals_out", "main.shop.totals", Stream("TOTALS", "totals.{table}"), SinkMode::kUpserts);
    pipeline_.reset();
    ASSERT_TRUE(Pipeline::Open(store_.get(), b.Build(), &pipeline_).ok());
  }

  void PublishOrders(int64_t from, int64_t to) {
    for (int64_t id = from; id <= to; ++id) {
      ASSERT_TRUE(server_.Publish("orders.new",
                                  json{{"id", id}, {"country", kCountries[id % 4]}, {"amount", Amount(id)}}.dump()));
    }
  }

  Status Request(const std::string& body, UpdateOutcome* outcome) {
    UpdateRequest request;
    SPOOL_RETURN_IF_ERROR(ParseUpdateRequest(body, &request));
    return RunUpdateRequest(store_.get(), pipeline_.get(), request, UpdateOptions{}, RetryPolicy{}, outcome);
  }

  void Update() {
    UpdateOutcome outcome;
    const Status s = Request("{}", &outcome);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(outcome.result.state, UpdateState::kCompleted) << outcome.result.error;
  }

  Totals Table() {
    Totals t;
    TableId id;
    EXPECT_TRUE(TableId::Parse("main.shop.totals", &id).ok());
    EXPECT_TRUE(store_
                    ->Read(id, {},
                           [&](const Row& r) {
                             t[std::get<std::string>(r[0])] = std::get<double>(r[1]);
                             return true;
                           })
                    .ok());
    return t;
  }

  // What the good pipeline computes from orders 1..n.
  static Totals Reference(int64_t n) {
    Totals t;
    for (int64_t id = 1; id <= n; ++id) t[kCountries[id % 4]] += Amount(id);
    return t;
  }

  // The consumer applies every message of TOTALS it has not seen yet.
  Totals Downstream() {
    testing::NatsStreamState state;
    EXPECT_TRUE(server_.GetStreamState("TOTALS", &state));
    for (; seen_ < state.last_sequence; ++seen_) {
      std::string data;
      EXPECT_TRUE(server_.GetMessage("TOTALS", seen_ + 1, &data));
      const json m = json::parse(data);
      if (m["_change_type"] == "delete") consumer_.erase(m["country"].get<std::string>());
      else consumer_[m["country"].get<std::string>()] = m["revenue"].get<double>();
    }
    return consumer_;
  }

  // 40 good orders, a point, then the bad deployment on 40 more.
  RewindPoint GoodThenBad() {
    Deploy(false);
    PublishOrders(1, 40);
    Update();
    RewindPoint point;
    EXPECT_TRUE(RecordRewindPoint(store_.get(), *pipeline_, "before the bad deployment", false, &point).ok());
    Deploy(true);
    PublishOrders(41, 80);
    Update();
    EXPECT_EQ(Downstream(), Table());
    EXPECT_NE(Table(), Reference(80));
    return point;
  }

  NatsServer server_;
  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
  Totals consumer_;
  uint64_t seen_ = 0;
};

TEST_F(JetStreamRewindTest, AWholePipelineRewindReplaysFromTheStreamAndTheConsumerFollows) {
  const RewindPoint point = GoodThenBad();
  UpdateOutcome outcome;
  Status s = Request(R"({"rewind_spec": {"rewind_point_id": ")" + point.id + R"("}})", &outcome);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Table(), Reference(40));
  Deploy(false);  // the fix
  Update();       // the replay reads orders 41..80 again from the stream
  EXPECT_EQ(Table(), Reference(80));
  EXPECT_EQ(Downstream(), Table());
}

TEST_F(JetStreamRewindTest, ASubsetRewindReachesTheConsumerAsItsNetChange) {
  const RewindPoint point = GoodThenBad();
  UpdateOutcome outcome;
  Status s = Request(R"({"rewind_spec": {"rewind_point_id": ")" + point.id +
                         R"(", "datasets": [{"identifier": "main.shop.orders"}]}})",
                     &outcome);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Deploy(false);
  Update();
  EXPECT_EQ(Table(), Reference(80));
  EXPECT_EQ(Downstream(), Table());
}

TEST_F(JetStreamRewindTest, ADryRunIsRefusedOnceTheStreamDroppedWhatTheReplayNeeds) {
  const RewindPoint point = GoodThenBad();
  ASSERT_TRUE(server_.PurgeStream("ORDERS", 61));  // the replay needs 41..80
  UpdateOutcome outcome;
  Status s = Request(R"({"rewind_spec": {"rewind_point_id": ")" + point.id + R"(", "dry_run": true}})", &outcome);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(ErrorCode(s), rewind_error::kSourceRetentionExceeded) << s.ToString();
  EXPECT_NE(s.ToString().find("JetStream stream ORDERS"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("sequences 41 to 60"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("the first it holds is 61"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace spool
