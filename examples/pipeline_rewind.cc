// Embedding Spool: a pipeline that reads orders from a topic, a deployment
// that doubles every amount, a rewind to the last rewind point before it,
// the fix, and the replay. The revenue table ends as if the bug never ran:
// the rewind brought back the tables, the topic offsets and the aggregate's
// state together, and the replay read every order after the point once.
//
//   pipeline_rewind DIR      (DIR: an empty or missing directory)
//
// Built against the installed package (examples/CMakeLists.txt):
//   find_package(Spool CONFIG REQUIRED)
//   target_link_libraries(pipeline_rewind PRIVATE spool::spool)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spool/rewind/rewind_points.h"
#include "spool/rewind/updates.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/pipeline_spec.h"
#include "spool/stream/topic.h"

namespace {

using namespace spool;

constexpr char kOrders[] = "main.shop.orders";
constexpr char kRevenue[] = "main.shop.revenue";
const char* const kCountries[] = {"DE", "FR", "JP", "US"};

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

int64_t Amount(int id) { return 10 + id % 7; }

// Orders `first` .. `first + count - 1` as JSON messages.
void Produce(const std::string& topic_dir, int first, int count) {
  std::unique_ptr<Topic> topic;
  Check(Topic::Open(Env::Default(), topic_dir, &topic), "opening the topic");
  std::vector<std::string> messages;
  for (int id = first; id < first + count; ++id) {
    messages.push_back("{\"id\": " + std::to_string(id) + ", \"country\": \"" + kCountries[id % 4] +
                       "\", \"amount\": " + std::to_string(Amount(id)) + "}");
  }
  std::vector<TopicWrite> batch;
  for (const std::string& m : messages) batch.push_back(TopicWrite{{}, m});
  Check(topic->Produce(batch, nullptr), "producing orders");
}

// The pipeline; `amount` is the expression the orders flow writes.
PipelineSpec Spec(const std::string& topic_dir, const std::string& amount) {
  PipelineBuilder b("shop");
  b.StreamingTable(kOrders);
  b.StreamingTable(kRevenue).PrimaryKey({"country"});
  b.Flow()
      .FromTopic(topic_dir, {{"id", ColumnType::kInt64, false},
                             {"country", ColumnType::kString, false},
                             {"amount", ColumnType::kInt64, false}})
      .Select({{"id", "id"}, {"country", "country"}, {"amount", amount}})
      .Into(kOrders);
  b.Flow().FromDataset(kOrders).Aggregate({"country"}, {{"revenue", AggregateFn::kSum, "amount"}}).Into(kRevenue);
  return b.Build();
}

// Records `spec` as the pipeline's definition and opens it: a deployment.
std::unique_ptr<Pipeline> Deploy(Store* store, const PipelineSpec& spec) {
  Check(SetPipelineDefinition(store, spec), "recording the definition");
  std::unique_ptr<Pipeline> pipeline;
  Check(Pipeline::Open(store, spec, &pipeline), "opening the pipeline");
  return pipeline;
}

// Runs `request` and checks that it completed.
void Run(Store* store, Pipeline* pipeline, UpdateRequest request, const char* what) {
  request.cause = UpdateCause::kUserAction;  // development mode: no retries
  UpdateOutcome outcome;
  Check(RunUpdateRequest(store, pipeline, request, UpdateOptions{}, RetryPolicy{}, &outcome), what);
  if (outcome.kind == UpdateOutcome::Kind::kUpdate && outcome.result.state != UpdateState::kCompleted) {
    std::fprintf(stderr, "%s: %s\n", what, outcome.result.error.c_str());
    std::exit(1);
  }
  std::printf("%-40s update %s\n", what, outcome.update_id.substr(0, 8).c_str());
}

std::map<std::string, int64_t> Revenue(Store* store) {
  TableId id;
  Check(TableId::Parse(kRevenue, &id), "naming the revenue table");
  std::map<std::string, int64_t> revenue;
  Check(store->Read(id, ReadOptions{},
                    [&](const Row& row) {
                      revenue[std::get<std::string>(row[0])] = std::get<int64_t>(row[1]);
                      return true;
                    }),
        "reading the revenue");
  return revenue;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::string topic_dir = dir + "/orders-topic";
  std::filesystem::create_directories(dir);
  Check(Topic::Create(Env::Default(), topic_dir, TopicConfig{}), "creating the topic");
  std::unique_ptr<Store> store;
  Check(Store::Open(StoreOptions{}, dir + "/store", &store), "opening the store");

  // A good run, and a rewind point after it.
  auto pipeline = Deploy(store.get(), Spec(topic_dir, "amount"));
  Produce(topic_dir, 0, 200);
  Run(store.get(), pipeline.get(), UpdateRequest{}, "update: 200 orders");
  RewindPoint point;
  Check(RecordRewindPoint(store.get(), *pipeline, "before the deployment", false, &point), "recording a point");
  std::printf("%-40s %s (version %llu)\n", "rewind point", point.id.c_str(),
              static_cast<unsigned long long>(point.position.version));

  // The bad deployment doubles every amount for two updates.
  pipeline = Deploy(store.get(), Spec(topic_dir, "amount * 2"));
  Produce(topic_dir, 200, 100);
  Run(store.get(), pipeline.get(), UpdateRequest{}, "update (bad deployment): 100 orders");
  Produce(topic_dir, 300, 100);
  Run(store.get(), pipeline.get(), UpdateRequest{}, "update (bad deployment): 100 orders");

  // Rewind everything to the point, deploy the fix, replay.
  UpdateRequest rewind;
  rewind.rewind_spec = RewindSpec{};
  rewind.rewind_spec->rewind_point_id = point.id;
  Run(store.get(), pipeline.get(), rewind, "rewind to the point");
  pipeline = Deploy(store.get(), Spec(topic_dir, "amount"));
  Run(store.get(), pipeline.get(), UpdateRequest{}, "update (the fix): replays 200 orders");

  std::map<std::string, int64_t> expected;
  for (int id = 0; id < 400; ++id) expected[kCountries[id % 4]] += Amount(id);
  const std::map<std::string, int64_t> revenue = Revenue(store.get());
  for (const auto& [country, total] : revenue) {
    std::printf("  %s  %6lld  (a run without the bug: %lld)\n", country.c_str(), static_cast<long long>(total),
                static_cast<long long>(expected[country]));
  }

  // Its history: every commit that touched the revenue table.
  TableId revenue_id;
  Check(TableId::Parse(kRevenue, &revenue_id), "naming the revenue table");
  std::vector<HistoryEntry> history;
  Check(store->History(revenue_id, &history), "reading the history");
  std::printf("history of %s: %zu commits, newest %s at version %llu\n", kRevenue, history.size(),
              history.front().operation.c_str(), static_cast<unsigned long long>(history.front().version));
  if (revenue != expected) {
    std::fprintf(stderr, "the revenue differs from a run without the bug\n");
    return 1;
  }
  std::printf("the revenue equals a run that never had the bug\n");
  return 0;
}
