// Differential test against the in-memory model (fuzz/crash/store_model.h):
// random multi-table transactions — inserts, upserts, deletes, truncates,
// DDL, checkpoints, restores, refused transactions — over hundreds of
// versions, with reopens and a deleted LMDB state along the way. Every
// version of every table must read back as the model says, by version and
// by timestamp — through the state's history index, and again after a
// rebuild without it — and the feed between versions must equal the
// difference of their states.
#include <filesystem>

#include <gtest/gtest.h>

#include "spool/testing/mem_env.h"
#include "store_model.h"
#include "temp_dir.h"

namespace spool::crashtest {
namespace {

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
  // Rebuilt from a snapshot of the newest version, the state's history
  // index starts there: every older version is read from snapshots and the
  // log instead (forward far back, backward near the newest).
  ASSERT_TRUE(store->TakeSnapshot(nullptr).ok());
  store.reset();
  std::filesystem::remove_all(options.state_dir);
  ASSERT_TRUE(Store::Open(options, "/s", &store).ok());
  model.CheckCurrent(store.get(), &violations);
  for (uint64_t v = 1; v <= model.newest(); ++v) model.CheckVersion(store.get(), v, &violations);
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
