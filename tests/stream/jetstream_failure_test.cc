// JetStream servers failing under a running update: the server killed and
// restarted (back before the update's reads give up, and after, so that
// the update fails and is retried), and one node of a three-node cluster
// killed — the stream leader, the meanest choice. Each time the update
// ends with every table equal to what the orders make, and the consumer of
// its sinks equal to the tables, with no duplicate and no gap.
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetstream_spec.h"
#include "nats_server.h"
#include "sink_consumer.h"
#include "spool/rewind/retries.h"
#include "spool/stream/pipeline.h"
#include "temp_dir.h"

namespace spool {
namespace {

using json = nlohmann::json;
using Totals = std::map<std::string, std::pair<double, int64_t>>;

constexpr const char* kCountries[] = {"fr", "de", "it", "es"};
constexpr int64_t kOrders = 400;
double Amount(int64_t id) { return static_cast<double>(id % 7) + 0.5; }

// Hands the test's thread a moment of the update's thread: the update
// waits at `Reach(n)` until the test has done what it does there
// (`Await(n)`, then `Release()`).
class Rendezvous {
 public:
  void Reach(int n) {
    std::unique_lock lock(mu_);
    reached_ = n;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_ >= n; });
  }
  void Await(int n) {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return reached_ >= n; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = reached_;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int reached_ = 0, released_ = 0;
};

class JetStreamFailureTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub("store"), &store_).ok()); }

  // orders (from ORDERS, ten a batch) → totals, both published to OUT.
  PipelineSpec Shop(const testing::NatsEndpoint& server, uint64_t max_wait_us) const {
    const JetStreamSpec in = testing::JetStreamOn(server, "ORDERS", "", max_wait_us);
    const JetStreamSpec out = testing::JetStreamOn(server, "OUT", "out.{table}", max_wait_us);
    PipelineBuilder b("shop");
    b.StreamingTable("main.shop.orders");
    b.StreamingTable("main.shop.totals");
    b.Flow("orders")
        .FromJetStream(in, {{"id", ColumnType::kInt64, false},
                            {"country", ColumnType::kString, false},
                            {"amount", ColumnType::kDouble, false}})
        .MaxBatchRows(10)
        .Into("main.shop.orders");
    b.Flow("totals")
        .FromDataset("main.shop.orders")
        .Aggregate({"country"}, {{"revenue", AggregateFn::kSum, "amount"}, {"orders", AggregateFn::kCount, ""}})
        .Into("main.shop.totals");
    b.Sink("orders_out", "main.shop.orders", out);
    b.Sink("totals_out", "main.shop.totals", out, SinkMode::kUpserts);
    return b.Build();
  }

  void CreateStreams(const testing::NatsEndpoint& server, int replicas) {
    ASSERT_TRUE(server.CreateStream("ORDERS", {.subjects = {"orders.>"}, .replicas = replicas}));
    ASSERT_TRUE(server.CreateStream("OUT", {.subjects = {"out.>"}, .replicas = replicas}));
    for (int64_t id = 1; id <= kOrders; ++id) {
      ASSERT_TRUE(server.Publish("orders.new",
                                 json{{"id", id}, {"country", kCountries[id % 4]}, {"amount", Amount(id)}}.dump()));
    }
  }

  // Runs one update as a service would (retried when it fails
  // transiently), calling `at_batch` after each committed batch and
  // `before_retry` before each retry.
  void RunUpdate(const PipelineSpec& spec, std::function<void(uint64_t batch)> at_batch,
                 std::function<void(int retry)> before_retry) {
    std::unique_ptr<Pipeline> pipeline;
    ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline).ok());
    UpdateOptions options;
    uint64_t batches = 0;
    options.on_batch = [&](const std::string&, uint64_t) { at_batch(++batches); };
    RetryPolicy policy;
    policy.started_by = StartedBy::kJob;
    policy.max_retries = 5;
    policy.first_wait_us = 200'000;
    policy.before_retry = std::move(before_retry);
    Status s = RunUpdateWithRetries(store_.get(), pipeline.get(), options, UpdateCause::kJobTask, policy, &result_,
                                    &attempts_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The tables are what the orders make, and the consumer's copy is the
  // tables, with no duplicate and no gap.
  void ExpectExactlyOnce(const testing::NatsEndpoint& server) {
    ASSERT_EQ(result_.state, UpdateState::kCompleted) << result_.error;
    Totals reference, table, downstream;
    for (int64_t id = 1; id <= kOrders; ++id) {
      auto& [revenue, count] = reference[kCountries[id % 4]];
      revenue += Amount(id);
      ++count;
    }
    TableId orders, totals;
    ASSERT_TRUE(TableId::Parse("main.shop.orders", &orders).ok());
    ASSERT_TRUE(TableId::Parse("main.shop.totals", &totals).ok());
    std::set<int64_t> ids;
    ASSERT_TRUE(store_
                    ->Read(orders, {},
                           [&](const Row& r) {
                             EXPECT_TRUE(ids.insert(std::get<int64_t>(r[0])).second);
                             return true;
                           })
                    .ok());
    EXPECT_EQ(ids.size(), static_cast<size_t>(kOrders));
    ASSERT_TRUE(store_
                    ->Read(totals, {},
                           [&](const Row& r) {
                             table[std::get<std::string>(r[0])] = {std::get<double>(r[1]), std::get<int64_t>(r[2])};
                             return true;
                           })
                    .ok());
    EXPECT_EQ(table, reference);
    testing::SinkConsumer consumer;
    consumer.set_key("totals_out", "country");
    ASSERT_TRUE(consumer.Catch(server, "OUT"));
    EXPECT_EQ(consumer.duplicates(), 0u);
    EXPECT_EQ(consumer.gaps(), 0u);
    EXPECT_EQ(consumer.rows("orders_out").size(), static_cast<size_t>(kOrders));
    for (const auto& [k, m] : consumer.rows("totals_out")) {
      downstream[m["country"].get<std::string>()] = {m["revenue"].get<double>(), m["orders"].get<int64_t>()};
    }
    EXPECT_EQ(downstream, table);
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  UpdateResult result_;
  int attempts_ = 0;
  Rendezvous at_;
};

TEST_F(JetStreamFailureTest, AServerRestartedMidUpdateIsWaitedForAndNothingIsLostOrRepeated) {
  testing::NatsServer server;
  ASSERT_TRUE(server.Start());
  CreateStreams(server, 1);
  // At the 8th batch the server is killed and started again while the
  // update waits; the update reconnects and goes on.
  std::thread update([&] {
    RunUpdate(Shop(server, 10'000'000),
              [&](uint64_t batch) {
                if (batch == 8) at_.Reach(1);
              },
              {});
  });
  at_.Await(1);
  ASSERT_TRUE(server.Kill());
  ASSERT_TRUE(server.Restart());
  at_.Release();
  update.join();
  EXPECT_EQ(attempts_, 1);
  ExpectExactlyOnce(server);
}

TEST_F(JetStreamFailureTest, AServerDownLongerThanTheWaitFailsTheUpdateWhichIsRetried) {
  testing::NatsServer server;
  ASSERT_TRUE(server.Start());
  CreateStreams(server, 1);
  // Killed at the 8th batch and started again only when the update, its
  // reads having given up after 1 s, is about to be retried.
  std::thread update([&] {
    RunUpdate(
        Shop(server, 1'000'000),
        [&](uint64_t batch) {
          if (batch == 8) at_.Reach(1);
        },
        [&](int retry) {
          if (retry == 1) at_.Reach(2);
        });
  });
  at_.Await(1);
  ASSERT_TRUE(server.Kill());
  at_.Release();
  at_.Await(2);
  ASSERT_TRUE(server.Restart());
  at_.Release();
  update.join();
  EXPECT_GE(attempts_, 2);
  ExpectExactlyOnce(server);
}

TEST_F(JetStreamFailureTest, OneOfThreeClusterNodesKilledMidUpdateLosesAndRepeatsNothing) {
  testing::NatsCluster cluster;
  ASSERT_TRUE(cluster.Start());
  CreateStreams(cluster, 3);
  testing::NatsStreamState state;
  ASSERT_TRUE(cluster.GetStreamState("OUT", &state));
  const int leader = cluster.IndexOf(state.leader);
  ASSERT_GE(leader, 0) << state.leader;
  // The leader of the sinks' stream dies at the 8th batch; an election
  // follows, during which publishes find no stream to answer them and the
  // update may fail. Each retry waits until both streams answer again: an
  // election can outlast the retries' own waits (6.2 s; an election takes
  // up to about ten seconds, longer on a loaded machine).
  std::thread update([&] {
    RunUpdate(
        Shop(cluster, 5'000'000),
        [&](uint64_t batch) {
          if (batch == 8) at_.Reach(1);
        },
        [&](int) {
          testing::NatsStreamState led;
          EXPECT_TRUE(cluster.GetStreamState("ORDERS", &led));
          EXPECT_TRUE(cluster.GetStreamState("OUT", &led));
        });
  });
  at_.Await(1);
  ASSERT_TRUE(cluster.Kill(leader));
  at_.Release();
  update.join();
  ExpectExactlyOnce(cluster);
  ASSERT_TRUE(cluster.Restart(leader));
}

}  // namespace
}  // namespace spool
