// StateStore's copies and generations: a copy is the state at one position,
// Adopt swaps it in whole, and readers of the replaced state are not
// disturbed.
#include "state_store.h"

#include <lmdb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "varint.h"

namespace spool {
namespace {

// Keys shaped as the store writes them: a table's prefix, then the key.
const std::string kRowA = StateRowKey(1, "a");
const std::string kRowB = StateRowKey(1, "b");
const std::string kHistoryX = StateHistoryPrefix(1) + "x";

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open(bool background = false) {
    store_.reset();
    StateStoreOptions options;
    options.path = dir_.Sub("state");
    options.background = background;
    ASSERT_TRUE(StateStore::Open(options, &store_).ok());
  }
  // One commit at `version` setting `key`.
  void Put(uint64_t version, const std::string& key, const std::string& value) {
    StateDelta delta;
    delta.Put(key, value);
    delta.position = StatePosition{7, 1, version, version * 10};
    ASSERT_TRUE(store_->Stage(std::move(delta)).ok());
    ASSERT_TRUE(store_->Flush().ok());
  }
  std::string Get(const std::string& key) {
    std::string value;
    bool found = false;
    EXPECT_TRUE(store_->Get(key, &value, &found).ok());
    return found ? value : "<none>";
  }
  std::vector<std::string> Generations() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.Sub("state"))) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("gen-")) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  TempDir dir_;
  std::unique_ptr<StateStore> store_;
};

TEST_F(StateStoreTest, AnAdoptedCopyIsTheStateAtItsPositionWithoutItsHistory) {
  Put(1, kRowA, "one");
  Put(2, kHistoryX, "pre-image");
  StatePosition copied;
  ASSERT_TRUE(store_->SaveCopy("c2", &copied).ok());
  EXPECT_EQ(copied.version, 2u);
  Put(3, kRowA, "three");
  Put(4, kRowB, "four");

  std::unique_ptr<StateView> before;
  ASSERT_TRUE(store_->NewView("", "", &before).ok());
  ASSERT_TRUE(store_->Adopt("c2").ok());
  EXPECT_EQ(store_->position().version, 2u);
  EXPECT_EQ(Get(kRowA), "one");
  EXPECT_EQ(Get(kRowB), "<none>");
  EXPECT_EQ(Get(kHistoryX), "<none>");  // history is not copied
  std::string floor;
  bool found = false;
  ASSERT_TRUE(store_->Get(kStateHistoryFloorKey, &floor, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(GetBigEndian64(floor), 2u);  // the history index starts at the copy
  std::vector<std::string> copies;
  ASSERT_TRUE(store_->ListCopies(&copies).ok());
  EXPECT_TRUE(copies.empty());  // consumed

  // A view taken before reads on in the generation it began on.
  before->Seek(kRowA);
  ASSERT_TRUE(before->Valid());
  EXPECT_EQ(before->value(), "three");
  before.reset();

  // Reopened, the adopted generation is the state, and the only one.
  Open();
  StatePosition applied;
  ASSERT_TRUE(store_->AppliedPosition(&applied).ok());
  EXPECT_EQ(applied.version, 2u);
  EXPECT_EQ(Get(kRowA), "one");
  EXPECT_EQ(Generations(), std::vector<std::string>{"gen-000002"});
}

// What a close does with what is staged (FlushUnlessBelow): a little is
// left for the next open to replay from the log, unless LMDB holds no
// state yet (a reader beside the next writer needs a state on the log's
// history); as many commits or bytes as the bounds are applied.
TEST_F(StateStoreTest, ACloseLeavesALittleStagedToTheLogUnlessTheStateIsEmpty) {
  const auto stage = [&](uint64_t version, const std::string& key, const std::string& value) {
    StateDelta delta;
    delta.Put(key, value);
    delta.position = StatePosition{7, 1, version, version * 10};
    ASSERT_TRUE(store_->Stage(std::move(delta)).ok());
  };
  const auto applied = [&] {
    StatePosition position;
    EXPECT_TRUE(store_->AppliedPosition(&position).ok());
    return position.version;
  };
  constexpr uint64_t kCommits = 4;
  constexpr uint64_t kBytes = 1000;
  stage(1, kRowA, "one");
  ASSERT_TRUE(store_->FlushUnlessBelow(kCommits, kBytes).ok());
  EXPECT_EQ(applied(), 1u);  // the state was empty

  stage(2, kRowA, "two");
  stage(3, kRowB, "three");
  ASSERT_TRUE(store_->FlushUnlessBelow(kCommits, kBytes).ok());
  EXPECT_EQ(applied(), 1u);  // two small commits: left staged
  EXPECT_EQ(store_->position().version, 3u);
  EXPECT_EQ(Get(kRowA), "two");

  stage(4, kRowB, "four");
  stage(5, kRowB, "five");
  ASSERT_TRUE(store_->FlushUnlessBelow(kCommits, kBytes).ok());
  EXPECT_EQ(applied(), 5u);  // as many commits as the bound

  stage(6, kRowA, std::string(kBytes, 'x'));
  ASSERT_TRUE(store_->FlushUnlessBelow(kCommits, kBytes).ok());
  EXPECT_EQ(applied(), 6u);  // as many bytes as the bound
}

// With an applier thread, retired generations are deleted later, a step at
// a time: adopting many copies in a row queues many of them while the
// applier waits for the first one's turn (under AddressSanitizer this read
// freed memory: the applier held a reference into the growing queue).
// A clean close records the state's digest, and the next open finds the
// same bytes by it instead of walking the file; a state written after its
// last clean close (as a crash leaves it) does not match and is walked.
TEST_F(StateStoreTest, ACleanCloseLetsTheNextOpenFindTheStateByItsDigest) {
  Put(1, kRowA, "one");
  Open();
  EXPECT_EQ(store_->stats().checks_by_digest, 1u);
  EXPECT_EQ(store_->stats().checks_whole, 0u);
  EXPECT_EQ(Get(kRowA), "one");
  Put(2, kRowB, "two");
  Open();  // the close recorded the new bytes' digest
  EXPECT_EQ(store_->stats().checks_by_digest, 1u);
  EXPECT_EQ(Get(kRowB), "two");
  Open();  // opened and closed unchanged: the digest stands
  EXPECT_EQ(store_->stats().checks_by_digest, 1u);

  Put(3, kRowA, "three");
  const std::string crashed = dir_.Sub("crashed");
  std::filesystem::copy(dir_.Sub("state"), crashed, std::filesystem::copy_options::recursive);
  std::unique_ptr<StateStore> copy;
  StateStoreOptions options;
  options.path = crashed;
  ASSERT_TRUE(StateStore::Open(options, &copy).ok());
  EXPECT_EQ(copy->stats().checks_by_digest, 0u);
  EXPECT_EQ(copy->stats().checks_whole, 1u);
  std::string value;
  bool found = false;
  ASSERT_TRUE(copy->Get(kRowA, &value, &found).ok());
  EXPECT_EQ(value, "three");
}

// After an open by the digest, the close hashes again only the chunks LMDB
// may have written: a few commits change a few pages, the rest keep their
// hashes, and the next open finds the file by the digest so made (a chunk
// missed would make it walk the file instead).
TEST_F(StateStoreTest, AStateChangedInAFewPlacesIsDigestedAgainThereOnly) {
  StateDelta load;
  for (int i = 0; i < 40000; ++i) load.Put(StateRowKey(1, std::to_string(100000 + i)), std::string(200, 'v'));
  load.position = StatePosition{7, 1, 1, 10};
  ASSERT_TRUE(store_->Stage(std::move(load)).ok());
  ASSERT_TRUE(store_->Flush().ok());
  Open();
  ASSERT_EQ(store_->stats().checks_by_digest, 1u);
  const std::string file = dir_.Sub("state/gen-000001/data.mdb");
  const uint64_t chunks = (std::filesystem::file_size(file) + kDigestChunkBytes - 1) / kDigestChunkBytes;
  ASSERT_GE(chunks, 8u);
  // Each commit frees the pages it copies; the later ones take them again.
  for (uint64_t v = 2; v <= 7; ++v) Put(v, StateRowKey(1, std::to_string(120000 + v)), "changed");
  const uint64_t hashed = StateChunksHashed();
  Open();
  const uint64_t at_close = StateChunksHashed() - hashed - chunks;  // the open hashed them all
  EXPECT_GT(at_close, 0u);
  EXPECT_LE(at_close * 2, chunks);
  EXPECT_EQ(store_->stats().checks_by_digest, 1u);
  EXPECT_EQ(store_->stats().checks_whole, 0u);
  EXPECT_EQ(Get(StateRowKey(1, "120007")), "changed");
}

// Every row rewritten in one batch leaves the old copy of every page free
// in LMDB's file. A clean close gives those pages back to the file system
// (holes), and the next open still finds the file by its digest; a view
// open at the close keeps them, and reads what they held.
TEST_F(StateStoreTest, ACloseGivesBackThePagesABatchFreedUnlessAViewHoldsThem) {
  auto rewrite_all = [&](uint64_t version, char fill) {
    StateDelta delta;
    for (int i = 0; i < 40000; ++i) delta.Put(StateRowKey(1, std::to_string(100000 + i)), std::string(200, fill));
    delta.position = StatePosition{7, 1, version, version * 10};
    ASSERT_TRUE(store_->Stage(std::move(delta)).ok());
    ASSERT_TRUE(store_->Flush().ok());
  };
  const std::string file = dir_.Sub("state/gen-000001/data.mdb");
  auto allocated = [&] {
    struct stat st {};
    EXPECT_EQ(::stat(file.c_str(), &st), 0);
    return static_cast<double>(st.st_blocks) * 512 / static_cast<double>(st.st_size);
  };
  rewrite_all(1, 'a');
  rewrite_all(2, 'b');
  std::unique_ptr<StateView> view;
  ASSERT_TRUE(store_->NewView("", "", &view).ok());
  rewrite_all(3, 'c');
  store_.reset();
  EXPECT_GT(allocated(), 0.9);  // the view's snapshot is on pages now free
  view->Seek(StateRowKey(1, "100000"));
  ASSERT_TRUE(view->Valid());
  EXPECT_EQ(view->value(), std::string(200, 'b'));
  view.reset();

  Open();
  rewrite_all(4, 'd');
  Open();
  EXPECT_LT(allocated(), 0.7);
  EXPECT_EQ(store_->stats().checks_by_digest, 1u);
  EXPECT_EQ(Get(StateRowKey(1, "139999")), std::string(200, 'd'));
  rewrite_all(5, 'e');  // onto the holes
  Open();
  EXPECT_EQ(store_->stats().checks_by_digest, 1u);
  EXPECT_EQ(Get(StateRowKey(1, "100000")), std::string(200, 'e'));
}

TEST_F(StateStoreTest, ManyGenerationsRetiredInARowAreQueuedAndTheStateStaysRight) {
  Open(/*background=*/true);
  for (uint64_t v = 1; v <= 40; ++v) {
    Put(v, kRowA, "value " + std::to_string(v));
    StatePosition copied;
    const std::string name = "c" + std::to_string(v);
    ASSERT_TRUE(store_->SaveCopy(name, &copied).ok());
    ASSERT_TRUE(store_->Adopt(name).ok());
    EXPECT_EQ(store_->position().version, v);
    EXPECT_EQ(Get(kRowA), "value " + std::to_string(v));
  }
  store_.reset();  // stops the applier with generations still queued
  Open();          // which the next open discards
  EXPECT_EQ(Generations().size(), 1u);
  EXPECT_EQ(Get(kRowA), "value 40");
}

// A retired generation is deleted only once nothing maps it: not while a
// view here still reads it, nor while a reader in another process has it
// open (its file, cut shorter under the mapping, would kill the reader).
TEST_F(StateStoreTest, ARetiredGenerationStaysWhileAViewOrAnotherProcessHasItOpen) {
  Open(/*background=*/true);
  Put(1, kRowA, "one");
  StatePosition copied;
  ASSERT_TRUE(store_->SaveCopy("c1", &copied).ok());
  Put(2, kRowA, "two");
  std::unique_ptr<StateView> view;
  ASSERT_TRUE(store_->NewView("", "", &view).ok());
  int go[2], ready[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(ready), 0);
  const std::string retired = dir_.Sub("state/gen-000001");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // another process with the generation open, until told
    close(go[1]);
    close(ready[0]);
    MDB_env* env = nullptr;
    if (mdb_env_create(&env) != 0 || mdb_env_set_mapsize(env, 1ull << 30) != 0 ||
        mdb_env_open(env, retired.c_str(), MDB_RDONLY, 0644) != 0) {
      _exit(2);
    }
    char byte = 0;
    if (write(ready[1], "r", 1) != 1 || read(go[0], &byte, 1) < 0) _exit(3);
    mdb_env_close(env);
    _exit(0);
  }
  close(go[0]);
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);  // the child has it open
  close(ready[0]);
  ASSERT_TRUE(store_->Adopt("c1").ok());
  EXPECT_EQ(Get(kRowA), "one");
  // Held by the view here and by the child.
  EXPECT_EQ(store_->DiscardNow(), 1u);
  EXPECT_TRUE(std::filesystem::exists(retired + "/data.mdb"));
  view->Seek(kRowA);
  ASSERT_TRUE(view->Valid());
  EXPECT_EQ(view->value(), "two");
  view.reset();
  // Held by the child alone.
  EXPECT_EQ(store_->DiscardNow(), 1u);
  EXPECT_TRUE(std::filesystem::exists(retired + "/data.mdb"));
  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(store_->DiscardNow(), 0u);
  EXPECT_FALSE(std::filesystem::exists(retired));
}

TEST_F(StateStoreTest, AnUnfinishedCopyIsNeverAdoptedAndIsRemovedOnOpen) {
  Put(1, kRowA, "one");
  const std::string tmp = dir_.Sub("state/copies/c1.tmp");
  std::filesystem::create_directories(tmp);
  EXPECT_TRUE(store_->Adopt("c1").IsNotFound());
  EXPECT_EQ(Get(kRowA), "one");
  Open();
  EXPECT_FALSE(std::filesystem::exists(tmp));
  EXPECT_EQ(Generations(), std::vector<std::string>{"gen-000001"});
}

}  // namespace
}  // namespace spool
