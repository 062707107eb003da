// Exactly once in and out of JetStream under SIGKILL (docs/jetstream.md):
// `spool update` runs a pipeline reading orders from a JetStream stream and
// publishing its tables' changes to another, and is killed from outside at
// random moments, cycle after cycle, while producers keep adding orders.
// Then every table equals what the orders make, and consumers applying
// every message the sinks published end equal to the tables, with no
// duplicate and no gap (counted, by message id and by order).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nats_server.h"
#include "sink_consumer.h"
#include "spool/storage/store.h"
#include "temp_dir.h"

extern char** environ;

namespace spool {
namespace {

using json = nlohmann::json;
using testing::NatsServer;

constexpr const char* kCountries[] = {"fr", "de", "it", "es", "pt"};
double Amount(int64_t id) { return static_cast<double>(id % 9) + 0.25; }

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

class JetStreamKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_TRUE(server_.CreateStream("ORDERS", {.subjects = {"orders.>"}}));
    ASSERT_TRUE(server_.CreateStream("OUT", {.subjects = {"out.>"}}));
    store_ = dir_.Sub("store");
    const json js = {{"servers", {server_.url()}}, {"max_wait", "5 seconds"}};
    json source = js;
    source["stream"] = "ORDERS";
    source["subject"] = "orders.>";
    json totals_out = js, orders_out = js;
    totals_out["stream"] = orders_out["stream"] = "OUT";
    totals_out["subject"] = "out.totals";
    orders_out["subject"] = "out.orders";
    const json spec = {
        {"name", "shop"},
        {"datasets", {{{"name", "main.shop.orders"}}, {{"name", "main.shop.totals"}}}},
        {"flows",
         {{{"name", "orders"},
           {"target", "main.shop.orders"},
           {"max_batch_rows", 15},
           {"source",
            {{"jetstream", source},
             {"columns",
              {{{"name", "id"}, {"type", "int64"}, {"nullable", false}},
               {{"name", "country"}, {"type", "string"}, {"nullable", false}},
               {{"name", "amount"}, {"type", "double"}, {"nullable", false}}}}}}},
          {{"name", "totals"},
           {"target", "main.shop.totals"},
           {"source", {{"dataset", "main.shop.orders"}}},
           {"steps",
            {{{"aggregate",
               {{"group_by", {"country"}},
                {"aggregates",
                 {{{"name", "revenue"}, {"fn", "sum"}, {"expr", "amount"}},
                  {{"name", "orders"}, {"fn", "count"}}}}}}}}}}}},
        {"sinks",
         {{{"name", "totals_out"}, {"dataset", "main.shop.totals"}, {"mode", "upserts"}, {"jetstream", totals_out}},
          {{"name", "orders_out"}, {"dataset", "main.shop.orders"}, {"jetstream", orders_out}}}}};
    std::ofstream(dir_.Sub("spec.json")) << spec.dump(2);
    ASSERT_EQ(Spool({"init", store_}), 0);
    ASSERT_EQ(Spool({"pipeline", "set", store_, dir_.Sub("spec.json")}), 0);
  }

  pid_t Start(const std::vector<std::string>& args) {
    std::vector<std::string> all = {SPOOL_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    const std::string log = dir_.Sub("spool.log");
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&files);
    return pid;
  }

  static int Wait(pid_t pid, bool* killed = nullptr) {
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    if (killed != nullptr) *killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  int Spool(const std::vector<std::string>& args) { return Wait(Start(args)); }

  void PublishOrders(int64_t from, int64_t to) {
    for (int64_t id = from; id <= to; ++id) {
      ASSERT_TRUE(server_.Publish("orders.new",
                                  json{{"id", id}, {"country", kCountries[id % 5]}, {"amount", Amount(id)}}.dump()));
    }
  }

  NatsServer server_;
  TempDir dir_;
  std::string store_;
};

TEST_F(JetStreamKillTest, SpoolUpdateKilledAtRandomMomentsLosesAndRepeatsNothingInOrOut) {
  const uint64_t cycles = EnvOr("SPOOL_JETSTREAM_KILL_CYCLES", 40);
  const uint64_t seed = EnvOr("SPOOL_JETSTREAM_KILL_SEED", 20261205);
  std::mt19937_64 rng(seed);
  // How long an update of one cycle's orders takes on this machine now: the
  // kills fall within 1.2 times that, so that most land mid-update however
  // fast or loaded the machine is.
  PublishOrders(1, 40);
  int64_t published = 40;
  const auto begun = std::chrono::steady_clock::now();
  ASSERT_EQ(Spool({"update", store_}), 0) << "see " << dir_.Sub("spool.log");
  const auto update_us = std::max<int64_t>(
      1000, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - begun).count());
  uint64_t landed = 0;  // kills of an update still running
  for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
    PublishOrders(published + 1, published + 40);
    published += 40;
    const pid_t pid = Start({"update", store_});
    // A random moment: the fault's timing, not a synchronisation (the
    // checks below hold wherever it lands).
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % static_cast<uint64_t>(update_us * 6 / 5)));
    ::kill(pid, SIGKILL);
    bool killed = false;
    Wait(pid, &killed);
    landed += killed ? 1 : 0;
  }
  ASSERT_EQ(Spool({"update", store_}), 0) << "see " << dir_.Sub("spool.log");
  std::printf("jetstream kill campaign: seed %llu, %llu cycles, %llu kills landed mid-update, %lld orders\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(cycles),
              static_cast<unsigned long long>(landed), static_cast<long long>(published));
  EXPECT_GT(landed, 0u) << "no kill landed during an update: the campaign tested nothing";

  // The tables: every order once, and the totals they make.
  std::unique_ptr<Store> store;
  StoreOptions read_only;
  read_only.read_only = true;
  ASSERT_TRUE(Store::Open(read_only, store_, &store).ok());
  std::set<int64_t> ids;
  TableId orders, totals;
  ASSERT_TRUE(TableId::Parse("main.shop.orders", &orders).ok());
  ASSERT_TRUE(TableId::Parse("main.shop.totals", &totals).ok());
  ASSERT_TRUE(store
                  ->Read(orders, {},
                         [&](const Row& r) {
                           EXPECT_TRUE(ids.insert(std::get<int64_t>(r[0])).second) << "order twice in the table";
                           return true;
                         })
                  .ok());
  EXPECT_EQ(ids.size(), static_cast<size_t>(published));
  std::map<std::string, std::pair<double, int64_t>> reference, table, downstream;
  for (int64_t id = 1; id <= published; ++id) {
    auto& [revenue, count] = reference[kCountries[id % 5]];
    revenue += Amount(id);
    ++count;
  }
  ASSERT_TRUE(store
                  ->Read(totals, {},
                         [&](const Row& r) {
                           table[std::get<std::string>(r[0])] = {std::get<double>(r[1]), std::get<int64_t>(r[2])};
                           return true;
                         })
                  .ok());
  EXPECT_EQ(table, reference);

  // What the consumers received: by message id no duplicate, and each
  // version's messages numbered 1.. without a gap; applied, the tables.
  testing::SinkConsumer consumer;
  consumer.set_key("totals_out", "country");
  ASSERT_TRUE(consumer.Catch(server_, "OUT"));
  std::printf("jetstream kill campaign: %llu messages delivered, %llu duplicates, %llu gaps\n",
              static_cast<unsigned long long>(consumer.total()), static_cast<unsigned long long>(consumer.duplicates()),
              static_cast<unsigned long long>(consumer.gaps()));
  EXPECT_EQ(consumer.duplicates(), 0u);
  EXPECT_EQ(consumer.gaps(), 0u);
  std::set<int64_t> delivered;
  for (const testing::SinkMessage& m : consumer.messages("orders_out")) {
    EXPECT_TRUE(delivered.insert(m.body["id"].get<int64_t>()).second) << "order delivered twice";
  }
  EXPECT_EQ(delivered, ids);
  for (const auto& [country, m] : consumer.rows("totals_out")) {
    downstream[m["country"].get<std::string>()] = {m["revenue"].get<double>(), m["orders"].get<int64_t>()};
  }
  EXPECT_EQ(downstream, table);
}

}  // namespace
}  // namespace spool
