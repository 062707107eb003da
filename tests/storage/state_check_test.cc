// The state's LMDB file under media faults: a flipped bit, a zeroed page or
// a cut file is found by the check before LMDB opens it, or by the read
// that meets it, or it changes nothing that can be read; never a wrong
// value, never a crash (state_check.h).
#include "state_check.h"

#include <fcntl.h>
#include <lmdb.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "state_store.h"
#include "temp_dir.h"
#include "varint.h"

namespace spool {
namespace {

using StateModel = std::map<std::string, std::string>;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The state key of row "key-<i>" of table `table`.
std::string RowStateKey(uint64_t table, int i) { return StateRowKey(table, "key-" + std::to_string(i)); }

class StateCheckTest : public ::testing::Test {
 protected:
  // A state in `dir`, written by the caller's thread.
  static StateStoreOptions Options(const TempDir& dir) {
    StateStoreOptions options;
    options.path = dir.Sub("state");
    options.background = false;
    return options;
  }

  // A state with every kind of page: rows over many leaves under branch
  // pages, values big enough for overflow runs, free-page lists left by
  // overwrites, and the store's other key families.
  static void SetUpTestSuite() {
    TempDir dir;
    std::unique_ptr<StateStore> store;
    ASSERT_TRUE(StateStore::Open(Options(dir), &store).ok());
    model_ = new StateModel;
    for (uint64_t version = 1; version <= 6; ++version) {
      StateDelta delta;
      for (int i = 0; i < 500; ++i) {
        const int n = static_cast<int>((version - 1) % 3) * 500 + i;  // later commits overwrite earlier rows
        delta.Put(RowStateKey(7, n),
                  "value " + std::to_string(n) + " at " + std::to_string(version) + std::string(40, 'x'));
      }
      delta.Put(RowStateKey(8, static_cast<int>(version)),
                std::string(9000 + version, static_cast<char>('a' + version)));
      delta.Put(StateCheckpointKey("flow"), "offsets at " + std::to_string(version));
      delta.Put(StateCatalogKey(version), "table " + std::to_string(version));
      delta.position = StatePosition{9, 1, version, version * 100};
      ASSERT_TRUE(store->Stage(std::move(delta)).ok());
      ASSERT_TRUE(store->Flush().ok());
    }
    std::unique_ptr<StateView> view;
    ASSERT_TRUE(store->NewView("", "", &view).ok());
    for (; view->Valid(); view->Next()) (*model_)[std::string(view->key())] = std::string(view->value());
    ASSERT_TRUE(view->status().ok());
    store.reset();
    image_ = new std::string(ReadFile(dir.Sub("state/gen-000001/data.mdb")));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete image_;
  }

  enum class Outcome { kIntact, kFoundByCheck, kFoundByRead };

  // Opens `image` as a state and reads all of it: every key of the model
  // by a point read, and everything by a scan. A value other than the
  // model's, or a key too many or missing, fails the test.
  Outcome Try(std::string_view image, const std::string& what) {
    FileCheck check;
    Status checked = CheckStateImage(image, &check, /*threads=*/1);
    // Checked on three threads, each leaf is a chunk of its own here: the
    // same verdict, the same failure named first.
    FileCheck threaded;
    EXPECT_EQ(CheckStateImage(image, &threaded, /*threads=*/3).ToString(), checked.ToString()) << what;
    EXPECT_EQ(threaded.pages, check.pages) << what;
    EXPECT_EQ(threaded.entries, check.entries) << what;
    if (checked.IsCorruption()) return Outcome::kFoundByCheck;
    EXPECT_TRUE(checked.ok()) << what << ": " << checked.ToString();
    TempDir dir;
    std::filesystem::create_directories(dir.Sub("state/gen-000001"));
    WriteFile(dir.Sub("state/gen-000001/data.mdb"), image);
    StateStoreOptions options = Options(dir);
    options.map_size_bytes = 64ull << 20;
    std::unique_ptr<StateStore> store;
    Status s = StateStore::Open(options, &store);
    if (s.IsCorruption()) return Outcome::kFoundByCheck;
    EXPECT_TRUE(s.ok()) << what << ": " << s.ToString();
    if (!s.ok()) return Outcome::kFoundByCheck;
    size_t n = 0;
    for (const auto& [key, value] : *model_) {
      if (n++ % 16 != 0) continue;  // a sample: the scan below reads them all
      std::string got;
      bool found = false;
      s = store->Get(key, &got, &found);
      if (s.IsCorruption()) return Outcome::kFoundByRead;
      EXPECT_TRUE(s.ok() && found && got == value) << what << ": " << DescribeStateKey(key) << " read wrong";
    }
    std::unique_ptr<StateView> view;
    EXPECT_TRUE(store->NewView("", "", &view).ok());
    size_t seen = 0;
    for (; view->Valid(); view->Next(), ++seen) {
      const auto it = model_->find(std::string(view->key()));
      EXPECT_TRUE(it != model_->end() && it->second == view->value()) << what << ": scan read wrong";
    }
    if (view->status().IsCorruption()) return Outcome::kFoundByRead;
    EXPECT_EQ(seen, model_->size()) << what;
    return Outcome::kIntact;
  }

  static size_t Pages() { return image_->size() / 4096; }

  static StateModel* model_;
  static std::string* image_;
};

StateModel* StateCheckTest::model_ = nullptr;
std::string* StateCheckTest::image_ = nullptr;

TEST_F(StateCheckTest, TheIntactFileIsAcceptedWithEveryEntryVerified) {
  FileCheck check;
  Status s = CheckStateImage(*image_, &check);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(check.legacy);
  EXPECT_EQ(check.entries, model_->size() + 1);  // and the format key
  EXPECT_GT(check.pages, 20u);
  EXPECT_EQ(Try(*image_, "intact"), Outcome::kIntact);
}

// Every page's header and node offsets, and a sample of every other byte,
// each with one bit flipped.
TEST_F(StateCheckTest, AFlippedBitIsFoundOrChangesNothingReadable) {
  std::vector<size_t> offsets;
  for (size_t page = 0; page < Pages(); ++page) {
    for (size_t at = 0; at < 20; ++at) offsets.push_back(page * 4096 + at);
  }
  std::mt19937_64 random(36);
  for (int i = 0; i < 600; ++i) offsets.push_back(random() % image_->size());
  size_t found = 0, intact = 0;
  for (size_t offset : offsets) {
    std::string damaged = *image_;
    damaged[offset] = static_cast<char>(damaged[offset] ^ (1 << (offset % 8)));
    const Outcome outcome = Try(damaged, "bit flipped at byte " + std::to_string(offset));
    (outcome == Outcome::kIntact ? intact : found)++;
    if (HasFailure()) return;
  }
  // Free pages and the free space within pages hold nothing readable;
  // much of the rest is found.
  EXPECT_GT(found, offsets.size() / 4);
  RecordProperty("found", static_cast<int>(found));
  RecordProperty("intact", static_cast<int>(intact));
}

TEST_F(StateCheckTest, AZeroedPageIsFoundOrChangesNothingReadable) {
  size_t found = 0;
  for (size_t page = 0; page < Pages(); ++page) {
    std::string damaged = *image_;
    std::fill_n(damaged.begin() + static_cast<std::ptrdiff_t>(page * 4096), 4096, '\0');
    found += Try(damaged, "page " + std::to_string(page) + " zeroed") != Outcome::kIntact;
    if (HasFailure()) return;
  }
  EXPECT_GT(found, Pages() / 4);
}

TEST_F(StateCheckTest, ACutFileIsFound) {
  for (size_t size : {size_t{100}, size_t{4096}, size_t{8192 + 7}, image_->size() / 2}) {
    EXPECT_EQ(Try(std::string_view(*image_).substr(0, size), "cut at " + std::to_string(size)), Outcome::kFoundByCheck)
        << size;
  }
  // Cut page by page from the end: found, or only free pages went.
  for (size_t size = image_->size() - 4096; size > image_->size() / 2; size -= 4096) {
    Try(std::string_view(*image_).substr(0, size), "cut at " + std::to_string(size));
    if (HasFailure()) return;
  }
}

// Damage that comes after the check (the file changed under a running
// store) is found by the point read that meets it, which names the key
// (scans rely on the check at open), and by the next open.
TEST_F(StateCheckTest, AValueDamagedWhileOpenFailsItsReadNamingTheKey) {
  TempDir dir;
  const StateStoreOptions options = Options(dir);
  std::unique_ptr<StateStore> store;
  ASSERT_TRUE(StateStore::Open(options, &store).ok());
  StateDelta delta;
  delta.Put(StateRowKey(5, "alice"), "ALICE-IN-WONDERLAND");
  delta.Put(StateRowKey(5, "bob"), "BOB");
  delta.position = StatePosition{9, 1, 1, 100};
  ASSERT_TRUE(store->Stage(std::move(delta)).ok());
  ASSERT_TRUE(store->Flush().ok());

  const std::string file = dir.Sub("state/gen-000001/data.mdb");
  // Every copy of the value in the file (a page's older copy may be free).
  const std::string bytes = ReadFile(file);
  std::fstream out(file, std::ios::binary | std::ios::in | std::ios::out);
  size_t copies = 0;
  for (size_t at = bytes.find("ALICE-IN"); at != std::string::npos; at = bytes.find("ALICE-IN", at + 1), ++copies) {
    out.seekp(static_cast<std::streamoff>(at));
    out.put('a');  // "ALICE" becomes "aLICE"
  }
  out.close();
  ASSERT_GT(copies, 0u);

  std::string value;
  bool found = false;
  Status s = store->Get(StateRowKey(5, "alice"), &value, &found);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("row 'alice' of table #5"), std::string::npos) << s.ToString();
  ASSERT_TRUE(store->Get(StateRowKey(5, "bob"), &value, &found).ok());  // the rest reads on
  EXPECT_EQ(value, "BOB");

  // Reopened, the check refuses the file and says what to do.
  store.reset();
  s = StateStore::Open(options, &store);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("spool repair"), std::string::npos) << s.ToString();
}

// An environment written by LMDB directly, as stores did before values
// were sealed: the applied position `position` (its value as given) and one
// row.
void WriteUnsealedState(const std::string& dir, const std::string& position) {
  std::filesystem::create_directories(dir);
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_open(env, dir.c_str(), 0, 0644), 0);
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  ASSERT_EQ(mdb_dbi_open(txn, nullptr, 0, &dbi), 0);
  const std::string row_key = StateRowKey(5, "alice");
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{std::string(kStatePositionKey), position}, {row_key, "an unsealed row"}}) {
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v{value.size(), const_cast<char*>(value.data())};
    ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
  }
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

TEST_F(StateCheckTest, AStateWrittenBeforeSealingIsEmptiedForTheStoreToRebuild) {
  TempDir dir;
  std::string position;
  for (uint64_t v : {uint64_t{9}, uint64_t{1}, uint64_t{3}, uint64_t{300}}) PutBigEndian64(&position, v);
  WriteUnsealedState(dir.Sub("state/gen-000001"), position);
  std::unique_ptr<StateStore> store;
  Status s = StateStore::Open(Options(dir), &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  StatePosition applied;
  ASSERT_TRUE(store->AppliedPosition(&applied).ok());
  EXPECT_EQ(applied.version, 0u);  // nothing applied: the store replays or rebuilds
  EXPECT_EQ(applied.store_id, 0u);
  std::string value;
  bool found = true;
  ASSERT_TRUE(store->Get(StateRowKey(5, "alice"), &value, &found).ok());
  EXPECT_FALSE(found);
}

// With damage in several leaves, the check names the first in key order,
// however many threads check the leaves and whichever finishes first.
TEST_F(StateCheckTest, OfSeveralDamagedValuesTheFirstInKeyOrderIsNamed) {
  // Rows far apart in key order ("key-300" < "key-555" < "key-999"), so on
  // leaves of their own; every copy of each value is damaged, the live one
  // among them.
  std::string damaged = *image_;
  for (int row : {999, 300, 555}) {
    const std::string& value = model_->at(RowStateKey(7, row));
    size_t copies = 0;
    for (size_t at = damaged.find(value); at != std::string::npos; at = damaged.find(value, at + 1), ++copies) {
      damaged[at] = static_cast<char>(damaged[at] ^ 1);
    }
    ASSERT_GT(copies, 0u) << row;
  }
  const std::string first = DescribeStateKey(RowStateKey(7, 300));
  for (unsigned threads : {1U, 2U, 3U, 8U}) {
    FileCheck check;
    const Status s = CheckStateImage(damaged, &check, threads);
    EXPECT_TRUE(s.IsCorruption()) << threads << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(first + " is damaged"), std::string::npos) << threads << ": " << s.ToString();
  }
}

// A sealed position without the format key in front is damage, not an old
// state to empty.
TEST_F(StateCheckTest, ASealedStateWithoutItsFormatKeyIsCorruption) {
  TempDir dir;
  std::string position;
  for (uint64_t v : {uint64_t{9}, uint64_t{1}, uint64_t{3}, uint64_t{300}}) PutBigEndian64(&position, v);
  WriteUnsealedState(dir.Sub("state/gen-000001"), position + "seal");
  std::unique_ptr<StateStore> store;
  Status s = StateStore::Open(Options(dir), &store);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("the format key is missing"), std::string::npos) << s.ToString();
}

// The digest names the bytes and their count, and is the same line on any
// number of threads.
TEST_F(StateCheckTest, TheDigestChangesWithAnyByteAndNotWithTheThreads) {
  std::string image((9u << 20) + 123, '\0');
  std::mt19937_64 rng(7);
  for (char& c : image) c = static_cast<char>(rng());
  const std::string digest = DigestStateImage(image, 1);
  EXPECT_TRUE(digest.starts_with("xxh3-128/1m ")) << digest;
  EXPECT_TRUE(digest.ends_with(" " + std::to_string(image.size()))) << digest;
  EXPECT_EQ(DigestStateImage(image, 3), digest);
  EXPECT_EQ(DigestStateImage(image), digest);
  for (size_t at : {size_t{0}, (size_t{1} << 20) - 1, size_t{5} << 20, image.size() - 1}) {
    std::string changed = image;
    changed[at] = static_cast<char>(changed[at] ^ 0x10);
    EXPECT_NE(DigestStateImage(changed, 2), digest) << "byte " << at;
  }
  EXPECT_NE(DigestStateImage(std::string_view(image).substr(0, image.size() - 1), 2), digest);
}

// A close records the digest of a state only from memory: a file that is
// not all in the page cache gets none, and is read from the disk not at all.
TEST_F(StateCheckTest, AFileNotAllInMemoryHasNoResidentDigest) {
  TempDir dir;
  const std::string path = dir.Sub("data.mdb");
  std::string bytes(1u << 20, 'x');
  WriteFile(path, bytes);
  std::string digest;
  ASSERT_TRUE(DigestResidentStateFile(path, &digest).ok());
  EXPECT_EQ(digest, DigestStateImage(bytes));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fdatasync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
  ASSERT_TRUE(DigestResidentStateFile(path, &digest).ok());
  EXPECT_EQ(digest, "");
  StateDigest whole;
  ASSERT_TRUE(DigestStateFile(path, &whole).ok());  // reads it back in
  EXPECT_EQ(whole.Line(), DigestStateImage(bytes));
  ASSERT_TRUE(DigestResidentStateFile(path, &digest).ok());
  EXPECT_EQ(digest, DigestStateImage(bytes));
}

// A digest taken again hashes only the chunks that may have changed (and
// any the size changed); a chunk wrongly said unchanged gives a digest the
// file does not have, and a chunk to hash that is not all in memory gives
// none.
TEST_F(StateCheckTest, ADigestTakenAgainHashesOnlyTheChunksThatMayHaveChanged) {
  TempDir dir;
  const std::string path = dir.Sub("data.mdb");
  std::string bytes((6u << 20) + 100, '\0');
  std::mt19937_64 rng(11);
  for (char& c : bytes) c = static_cast<char>(rng());
  const StateDigest before = DigestStateChunks(bytes);
  ASSERT_EQ(before.sums.size(), 7u);
  bytes[(3u << 20) + 5] ^= 1;       // chunk 3
  bytes += std::string(8192, 'n');  // the last chunk grows
  WriteFile(path, bytes);
  const std::string after = DigestStateImage(bytes);
  std::string line;
  uint64_t hashed = StateChunksHashed();
  ASSERT_TRUE(RedigestResidentStateFile(
                  path, before, [](size_t k) { return k != 3; }, &line)
                  .ok());
  EXPECT_EQ(line, after);
  EXPECT_EQ(StateChunksHashed() - hashed, 2u);  // chunk 3 and the last
  ASSERT_TRUE(RedigestResidentStateFile(
                  path, before, [](size_t) { return true; }, &line)
                  .ok());
  EXPECT_NE(line, after);
  EXPECT_NE(line, "");

  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fdatasync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
  hashed = StateChunksHashed();
  ASSERT_TRUE(RedigestResidentStateFile(
                  path, before, [](size_t k) { return k != 3; }, &line)
                  .ok());
  EXPECT_EQ(line, "");
  EXPECT_EQ(StateChunksHashed(), hashed);
}

TEST_F(StateCheckTest, DescribedKeysNameTheirTableAndKey) {
  EXPECT_EQ(DescribeStateKey(StateRowKey(3, "alice")), "row 'alice' of table #3");
  EXPECT_EQ(DescribeStateKey(StateCatalogKey(3)), "the catalog entry of table #3");
  EXPECT_EQ(DescribeStateKey(StateCheckpointKey("f")), "the checkpoint of flow 'f'");
  EXPECT_EQ(DescribeStateKey(std::string(kStatePositionKey)), "the applied position");
  EXPECT_EQ(DescribeStateKey(StateRowKey(3, std::string("\x01\xff", 2))), "row '\\x01\\xff' of table #3");
}

}  // namespace
}  // namespace spool
