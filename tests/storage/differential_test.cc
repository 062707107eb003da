// Differential test against the in-memory model (fuzz/crash/store_model.h):
// random multi-table transactions — inserts, upserts, deletes, truncates,
// DDL, checkpoints, restores, refused transactions — over hundreds of
// versions, with reopens and a deleted LMDB state along the way. Every
// version of every table must read back as the model says, by version and
// by timestamp, and the feed between versions must equal the difference of
// their states.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "spool/txnlog/mem_env.h"
#include "store_model.h"
#include "temp_dir.h"

namespace spool::crashtest {
namespace {

class RandomTransactions {
 public:
  explicit RandomTransactions(uint64_t seed) : rng_(seed) {}

  Transaction Next(const ModelState& state) {
    Transaction txn("WRITE");
    const int ops = 1 + Uniform(4);
    for (int i = 0; i < ops; ++i) AddOp(state, &txn);
    if (Uniform(10) == 0) txn.SetCheckpoint("flow" + std::to_string(Uniform(3)), "offset-" + std::to_string(Uniform(1000)));
    return txn;
  }

  int Uniform(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  std::string TableName() { return "main.s.t" + std::to_string(Uniform(4)); }

 private:
  void AddOp(const ModelState& state, Transaction* txn) {
    TableId id;
    (void)TableId::Parse(TableName(), &id);
    auto it = state.tables.find(id.ToString());
    const int roll = Uniform(100);
    if (it == state.tables.end() || roll < 2) {
      Schema schema;
      const bool keyed = Uniform(3) != 0;
      std::vector<Column> columns{{"k", ColumnType::kInt64, !keyed}, {"v", ColumnType::kString, true},
                                  {"d", ColumnType::kDouble, true}};
      (void)Schema::Make(columns, keyed ? std::vector<std::string>{"k"} : std::vector<std::string>{}, &schema);
      txn->CreateTable(id, keyed ? TableKind::kStreamingTable : TableKind::kMaterializedView, schema,
                       {{"pipelines.reset.allowed", Uniform(2) ? "true" : "false"}});
      return;
    }
    const Schema& schema = it->second.info.schema;
    if (roll < 4) return txn->DropTable(id);
    if (roll < 6) {
      const ColumnType types[] = {ColumnType::kBool, ColumnType::kTimestamp, ColumnType::kBytes, ColumnType::kInt64};
      return txn->AddColumn(id, Column{"c" + std::to_string(schema.columns().size()), types[Uniform(4)], true});
    }
    if (roll < 8) return txn->Truncate(id);
    if (roll < 10) return txn->SetProperties(id, {{"p" + std::to_string(Uniform(3)), Uniform(2) ? "x" : ""}});
    if (roll < 30 && schema.has_key()) return txn->Delete(id, Row{int64_t{Uniform(30)}});
    if (roll < 32) {  // a row that does not fit: the transaction is refused
      return txn->Write(id, Row{std::string("wrong")});
    }
    txn->Write(id, RandomRow(schema));
  }

  Row RandomRow(const Schema& schema) {
    Row row;
    for (const Column& c : schema.columns()) {
      if (c.nullable && Uniform(5) == 0) {
        row.push_back(Value{});
        continue;
      }
      switch (c.type) {
        case ColumnType::kInt64: row.push_back(int64_t{Uniform(30)}); break;
        case ColumnType::kDouble: row.push_back(Uniform(100) / 4.0); break;
        case ColumnType::kString: row.push_back(std::string(static_cast<size_t>(Uniform(20)), static_cast<char>('a' + Uniform(26)))); break;
        case ColumnType::kBool: row.push_back(Uniform(2) == 1); break;
        case ColumnType::kTimestamp: row.push_back(Timestamp{Uniform(1000000)}); break;
        case ColumnType::kBytes: row.push_back(Bytes{std::string(static_cast<size_t>(Uniform(8)), '\0')}); break;
      }
    }
    return row;
  }

  std::mt19937_64 rng_;
};

struct DifferentialCase {
  uint64_t seed;
  bool background_apply;
  uint64_t batch_commits;
};

class DifferentialTest : public ::testing::TestWithParam<DifferentialCase> {};

TEST_P(DifferentialTest, EveryVersionAndEveryFeedMatchesTheModel) {
  const DifferentialCase param = GetParam();
  MemEnv env;
  TempDir dir;
  StoreOptions options;
  options.env = &env;
  options.state_dir = dir.Sub("state");
  options.state_background_apply = param.background_apply;
  options.state_batch_commits = param.batch_commits;
  options.snapshot_every_versions = 37;  // snapshots along the way, and rebuilds from them
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(options, "/s", &store).ok());
  StoreModel model;
  RandomTransactions random(param.seed);
  uint64_t refused = 0, restores = 0;
  constexpr int kSteps = 300;
  for (int step = 0; step < kSteps; ++step) {
    const int roll = random.Uniform(100);
    if (roll < 3) {  // reopen; sometimes without the derived state
      store.reset();
      if (roll == 0) std::filesystem::remove_all(options.state_dir);
      Status s = Store::Open(options, "/s", &store);
      ASSERT_TRUE(s.ok()) << s.ToString();
      continue;
    }
    std::optional<ModelState> next;
    Status s;
    CommitResult result;
    if (roll < 6 && model.newest() > 0) {
      const std::string table = random.TableName();
      const uint64_t version = 1 + static_cast<uint64_t>(random.Uniform(static_cast<int>(model.newest())));
      next = model.Restore(table, version);
      TableId id;
      ASSERT_TRUE(TableId::Parse(table, &id).ok());
      s = store->Restore(id, version, &result);
      restores += next.has_value();
    } else {
      const Transaction txn = random.Next(model.state(model.newest()));
      next = model.Apply(txn);
      s = store->Commit(txn, &result);
    }
    if (!next) {
      ASSERT_FALSE(s.ok()) << "step " << step << ": the store took what the model refuses";
      ASSERT_TRUE(s.IsInvalidArgument() || s.IsNotFound()) << s.ToString();
      ++refused;
      continue;
    }
    ASSERT_TRUE(s.ok()) << "step " << step << ": " << s.ToString();
    model.Push(std::move(*next));
    ASSERT_EQ(result.version, model.newest());
    model.SetTimestamp(result.version, result.timestamp_us);
  }
  std::vector<Violation> violations;
  model.CheckCurrent(store.get(), &violations);
  for (uint64_t v = 1; v <= model.newest(); ++v) model.CheckVersion(store.get(), v, &violations);
  for (uint64_t v = 0; v + 1 <= model.newest(); v += 7) {
    model.CheckFeed(store.get(), v, std::min(v + 1, model.newest()), &violations);
    model.CheckFeed(store.get(), v, std::min(v + 40, model.newest()), &violations);
  }
  model.CheckFeed(store.get(), 0, model.newest(), &violations);
  for (size_t i = 0; i < violations.size() && i < 10; ++i) {
    ADD_FAILURE() << violations[i].invariant << ": " << violations[i].detail;
  }
  EXPECT_TRUE(violations.empty()) << violations.size() << " violations";
  EXPECT_GT(model.newest(), 200u);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(restores, 0u);
  std::printf("[differential] seed %llu: %llu versions, %llu refused, %llu restores, %llu snapshots\n",
              static_cast<unsigned long long>(param.seed), static_cast<unsigned long long>(model.newest()),
              static_cast<unsigned long long>(refused), static_cast<unsigned long long>(restores),
              static_cast<unsigned long long>(store->Stats().snapshots_taken));
}

INSTANTIATE_TEST_SUITE_P(Seeds, DifferentialTest,
                         ::testing::Values(DifferentialCase{1, true, 8}, DifferentialCase{2, false, 3},
                                           DifferentialCase{3, false, 1}, DifferentialCase{4, true, 512}));

}  // namespace
}  // namespace spool::crashtest
