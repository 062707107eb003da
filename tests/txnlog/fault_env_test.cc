// FaultEnv is the judge of every crash test in Spool: if it keeps data that a
// real crash would lose, those tests pass on broken code. Each test below
// pins down one way the model could be too kind (or wrong), always on a
// MemEnv base and without timing.
#include "spool/testing/fault_env.h"

#include <algorithm>
#include <bit>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "spool/testing/mem_env.h"

namespace spool {
namespace {

constexpr std::string_view kMissing = "<missing>";

// Writes `data` at `offset` of `path` (created if needed), without syncing.
Status WriteAt(Env* env, const std::string& path, uint64_t offset, std::string_view data) {
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path, OpenMode::kCreate, &file));
  SPOOL_RETURN_IF_ERROR(file->Write(offset, data));
  return file->Close();
}

// Creates `path` with `data`, synced, and syncs its directory.
Status MakeDurableFile(Env* env, const std::string& path, std::string_view data) {
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path, OpenMode::kTruncate, &file));
  SPOOL_RETURN_IF_ERROR(file->Write(0, data));
  SPOOL_RETURN_IF_ERROR(file->Sync());
  SPOOL_RETURN_IF_ERROR(file->Close());
  return env->SyncDir(DirName(path));
}

// A directory "db" whose own entry is durable.
Status MakeDurableDir(Env* env) {
  SPOOL_RETURN_IF_ERROR(env->CreateDir("db"));
  return env->SyncDir(".");
}

std::string Contents(Env* env, const std::string& path) {
  std::string out;
  Status s = ReadFileToString(env, path, &out);
  if (s.IsNotFound()) return std::string(kMissing);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Every file below `dir` of `env`, by path, with its contents.
void Snapshot(Env* env, const std::string& dir, std::map<std::string, std::string>* out) {
  std::vector<std::string> names;
  if (!env->ListDir(dir, &names).ok()) return;
  for (const std::string& name : names) {
    const std::string path = dir == "." ? name : JoinPath(dir, name);
    std::vector<std::string> children;
    if (env->ListDir(path, &children).ok()) {
      (*out)[path + "/"] = "";
      Snapshot(env, path, out);
    } else {
      (*out)[path] = Contents(env, path);
    }
  }
}

std::map<std::string, std::string> Snapshot(Env* env) {
  std::map<std::string, std::string> out;
  Snapshot(env, ".", &out);
  return out;
}

bool AllBytesAre(std::string_view bytes, char c) { return bytes.find_first_not_of(c) == std::string_view::npos; }

// Most tests start from a durable directory "db" in a FaultEnv over a MemEnv.
class FaultEnvDirTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDurableDir(&env).ok()); }

  MemEnv base;
  FaultEnv env{&base};
};

// --- Directory durability ------------------------------------------------

TEST_F(FaultEnvDirTest, UnsyncedCreateVanishesOnPowerLoss) {
  ASSERT_TRUE(WriteAt(&env, "db/a", 0, "data").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_FALSE(base.FileExists("db/a"));
  EXPECT_TRUE(base.FileExists("db"));
}

TEST_F(FaultEnvDirTest, SyncedFileWithoutDirSyncVanishesOnPowerLoss) {
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &file).ok());
  ASSERT_TRUE(file->Write(0, "data").ok());
  ASSERT_TRUE(file->Sync().ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_FALSE(base.FileExists("db/a"));
}

TEST_F(FaultEnvDirTest, SyncedFileAndDirSurvivePowerLoss) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "data");
}

TEST_F(FaultEnvDirTest, DirSyncWithoutFileSyncLeavesAnEmptyFile) {
  ASSERT_TRUE(WriteAt(&env, "db/a", 0, "data").ok());
  ASSERT_TRUE(env.SyncDir("db").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "");
}

TEST(FaultEnvTest, UnsyncedCreateOfDirectoryTakesItsFilesAlong) {
  MemEnv base;
  FaultEnv env(&base);
  ASSERT_TRUE(env.CreateDir("db").ok());  // "." never synced
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_FALSE(base.FileExists("db"));
}

TEST_F(FaultEnvDirTest, RenameUndoneWithoutDirSync) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/CURRENT", "old").ok());
  ASSERT_TRUE(MakeDurableFile(&env, "db/CURRENT.tmp", "new").ok());
  ASSERT_TRUE(env.RenameFile("db/CURRENT.tmp", "db/CURRENT").ok());
  EXPECT_EQ(Contents(&env, "db/CURRENT"), "new");
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/CURRENT"), "old");
  EXPECT_EQ(Contents(&base, "db/CURRENT.tmp"), "new");
}

TEST_F(FaultEnvDirTest, RenameKeptOnceDirSynced) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/CURRENT", "old").ok());
  ASSERT_TRUE(WriteFileAtomically(&env, "db/CURRENT", "new").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/CURRENT"), "new");
  EXPECT_FALSE(base.FileExists("db/CURRENT.tmp"));
}

TEST(FaultEnvTest, RenameBeforeDataSyncExposesEmptyFile) {
  // The classic bug: rename made durable before the file's data.
  MemEnv base;
  FaultEnv env(&base);
  ASSERT_TRUE(MakeDurableDir(&env).ok());
  ASSERT_TRUE(MakeDurableFile(&env, "db/CURRENT", "old").ok());
  ASSERT_TRUE(WriteAt(&env, "db/CURRENT.tmp", 0, "new").ok());
  ASSERT_TRUE(env.RenameFile("db/CURRENT.tmp", "db/CURRENT").ok());
  ASSERT_TRUE(env.SyncDir("db").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/CURRENT"), "");
}

TEST_F(FaultEnvDirTest, ALinkIsASecondNameDurableOnceItsDirIsSynced) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  ASSERT_TRUE(env.LinkFile("db/a", "db/b").ok());
  ASSERT_TRUE(WriteAt(&env, "db/a", 4, "+more").ok());
  EXPECT_EQ(Contents(&env, "db/b"), "data+more");   // one file, two names
  EXPECT_FALSE(env.LinkFile("db/a", "db/b").ok());  // the name is taken
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_FALSE(base.FileExists("db/b"));
  EXPECT_EQ(Contents(&base, "db/a"), "data");
  ASSERT_TRUE(env.LinkFile("db/a", "db/b").ok());
  ASSERT_TRUE(env.SyncDir("db").ok());
  ASSERT_TRUE(env.RemoveFile("db/a").ok());
  ASSERT_TRUE(env.SyncDir("db").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 2);
  EXPECT_FALSE(base.FileExists("db/a"));
  EXPECT_EQ(Contents(&base, "db/b"), "data");
}

TEST_F(FaultEnvDirTest, RemoveUndoneWithoutDirSync) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  ASSERT_TRUE(env.RemoveFile("db/a").ok());
  EXPECT_FALSE(env.FileExists("db/a"));
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "data");
}

TEST_F(FaultEnvDirTest, RemoveKeptOnceDirSynced) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  ASSERT_TRUE(env.RemoveFile("db/a").ok());
  ASSERT_TRUE(env.SyncDir("db").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_FALSE(base.FileExists("db/a"));
}

TEST_F(FaultEnvDirTest, FileRemovedWhileOpenComesBackWithDurableBytesOnly) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "durable").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  ASSERT_TRUE(env.RemoveFile("db/a").ok());
  ASSERT_TRUE(file->Write(7, "+later").ok());  // the handle still works
  std::string out;
  ASSERT_TRUE(file->Read(0, 100, &out).ok());
  EXPECT_EQ(out, "durable+later");
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "durable");
}

TEST(FaultEnvTest, RecreatedDirectoryIsANewDirectory) {
  // A directory removed and made again must not inherit the old entries;
  // but if the removal is undone, the old directory returns with them.
  for (bool sync_parent : {true, false}) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/old", "o").ok());
    ASSERT_TRUE(env.RemoveFile("db/old").ok());
    ASSERT_TRUE(env.RemoveDir("db").ok());
    ASSERT_TRUE(env.CreateDir("db").ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/new", "n").ok());
    if (sync_parent) {
      ASSERT_TRUE(env.SyncDir(".").ok());
    }
    env.SimulateCrash(CrashMode::kPowerLoss, 1);
    const std::map<std::string, std::string> new_dir = {{"db/", ""}, {"db/new", "n"}};
    const std::map<std::string, std::string> old_dir = {{"db/", ""}, {"db/old", "o"}};
    EXPECT_EQ(Snapshot(&base), sync_parent ? new_dir : old_dir) << "sync_parent=" << sync_parent;
  }
}

TEST(FaultEnvTest, ExistingBaseFilesCountAsDurable) {
  MemEnv base;
  ASSERT_TRUE(base.CreateDir("db").ok());
  ASSERT_TRUE(WriteAt(&base, "db/pre", 0, "before").ok());
  FaultEnv env(&base);
  ASSERT_TRUE(WriteAt(&env, "db/pre", 6, " and after").ok());
  ASSERT_TRUE(env.RemoveFile("db/pre").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/pre"), "before");
}

TEST(FaultEnvTest, PowerLossUndoesEveryUnsyncedDirOpWhateverTheSeed) {
  for (uint64_t seed = 0; seed < 32; ++seed) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/keep", "k").ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/gone", "g").ok());
    const auto durable = Snapshot(&base);
    ASSERT_TRUE(MakeDurableFile(&env, "db/tmp", "t").ok());  // synced, dir synced...
    ASSERT_TRUE(env.RenameFile("db/tmp", "db/keep").ok());   // ...but not these:
    ASSERT_TRUE(env.RemoveFile("db/gone").ok());
    ASSERT_TRUE(MakeDurableFile(&env, "other", "o").ok());
    ASSERT_TRUE(env.CreateDir("db/sub").ok());
    ASSERT_TRUE(env.RemoveFile("db/tmp.missing").IsNotFound());
    ASSERT_TRUE(MakeDurableDir(&env).ok());  // "." synced again: "other" stays
    env.SimulateCrash(CrashMode::kPowerLoss, seed);
    auto expected = durable;
    expected.emplace("db/tmp", "t");
    expected.emplace("other", "o");
    EXPECT_EQ(Snapshot(&base), expected) << "seed " << seed;
  }
}

TEST(FaultEnvTest, UnsyncedDirOpsSurviveAsAPrefix) {
  const std::vector<std::string> order = {"db/a", "db/b", "db/c"};
  std::set<size_t> lengths_seen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    for (const std::string& path : order) ASSERT_TRUE(WriteAt(&env, path, 0, "x").ok());
    env.SimulateCrash(CrashMode::kPrefix, seed);
    size_t survivors = 0;
    while (survivors < order.size() && base.FileExists(order[survivors])) ++survivors;
    for (size_t i = survivors; i < order.size(); ++i) {
      EXPECT_FALSE(base.FileExists(order[i])) << "a hole in the prefix, seed " << seed;
    }
    lengths_seen.insert(survivors);
  }
  EXPECT_EQ(lengths_seen.size(), order.size() + 1);
}

TEST_F(FaultEnvDirTest, CrossDirectoryRenameIsDurablePerDirectory) {
  ASSERT_TRUE(env.CreateDir("archive").ok());
  ASSERT_TRUE(env.SyncDir(".").ok());
  ASSERT_TRUE(MakeDurableFile(&env, "db/seg", "records").ok());
  ASSERT_TRUE(env.RenameFile("db/seg", "archive/seg").ok());
  ASSERT_TRUE(env.SyncDir("archive").ok());  // "db" not synced
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "archive/seg"), "records");
  EXPECT_EQ(Contents(&base, "db/seg"), "records");
}

TEST_F(FaultEnvDirTest, DirectoryRenameIsNotSupported) {
  EXPECT_EQ(env.RenameFile("db", "db2").code(), Status::Code::kNotSupported);
  EXPECT_EQ(env.io_calls(), 2u);  // not a crash point
}

// --- File data durability ------------------------------------------------

TEST(FaultEnvTest, ProcessKillKeepsUnsyncedWrites) {
  MemEnv base;
  FaultEnv env(&base);
  ASSERT_TRUE(env.CreateDir("db").ok());
  ASSERT_TRUE(WriteAt(&env, "db/a", 0, "unsynced").ok());
  ASSERT_TRUE(WriteAt(&env, "db/b", 0, "moved").ok());
  ASSERT_TRUE(env.RenameFile("db/b", "db/c").ok());
  const auto before = Snapshot(&base);
  env.SimulateCrash(CrashMode::kProcessKill, 1);
  EXPECT_EQ(Snapshot(&base), before);
  EXPECT_EQ(Contents(&base, "db/a"), "unsynced");
}

TEST_F(FaultEnvDirTest, PowerLossDropsUnsyncedWrites) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "synced").ok());
  ASSERT_TRUE(WriteAt(&env, "db/a", 6, "+unsynced").ok());
  ASSERT_TRUE(WriteAt(&env, "db/a", 0, "S").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "synced");
}

TEST_F(FaultEnvDirTest, SyncMakesOnlyItsOwnFileDurable) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "").ok());
  ASSERT_TRUE(MakeDurableFile(&env, "db/b", "").ok());
  std::unique_ptr<File> a;
  std::unique_ptr<File> b;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &a).ok());
  ASSERT_TRUE(env.OpenFile("db/b", OpenMode::kReadWrite, &b).ok());
  ASSERT_TRUE(a->Write(0, "aa").ok());
  ASSERT_TRUE(b->Write(0, "bb").ok());
  ASSERT_TRUE(a->Sync().ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "aa");
  EXPECT_EQ(Contents(&base, "db/b"), "");
}

TEST(FaultEnvTest, TruncateThenWriteAppliesInOrder) {
  std::set<std::string> outcomes;
  for (CrashMode mode : kAllCrashModes) {
    for (uint64_t seed = 0; seed < 32; ++seed) {
      MemEnv base;
      FaultEnv env(&base);
      ASSERT_TRUE(MakeDurableDir(&env).ok());
      ASSERT_TRUE(MakeDurableFile(&env, "db/a", "hello world").ok());
      std::unique_ptr<File> file;
      ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
      ASSERT_TRUE(file->Truncate(5).ok());
      ASSERT_TRUE(file->Write(5, "!!").ok());
      env.SimulateCrash(mode, seed);
      const std::string got = Contents(&base, "db/a");
      if (mode == CrashMode::kProcessKill) {
        EXPECT_EQ(got, "hello!!");
      }
      if (mode == CrashMode::kPowerLoss) {
        EXPECT_EQ(got, "hello world");
      }
      if (mode == CrashMode::kPrefix) {
        EXPECT_TRUE(got == "hello world" || got == "hello" || got == "hello!!") << got;
      }
      if (mode != CrashMode::kGarbage) outcomes.insert(got);
    }
  }
  // Reordering may keep the write without the truncate ("hello!!orld").
  EXPECT_TRUE(outcomes.count("hello") && outcomes.count("hello!!") && outcomes.count("hello!!orld"));
}

TEST(FaultEnvTest, PrefixKeepsOnlyAPrefixOfWrites) {
  std::set<std::string> outcomes;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/log", "").ok());
    std::unique_ptr<File> file;
    ASSERT_TRUE(env.OpenFile("db/log", OpenMode::kReadWrite, &file).ok());
    for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(file->Write(i, std::string(1, static_cast<char>('a' + i))).ok());
    env.SimulateCrash(CrashMode::kPrefix, seed);
    const std::string got = Contents(&base, "db/log");
    EXPECT_EQ(got, std::string("abcd").substr(0, got.size())) << "seed " << seed;
    outcomes.insert(got);
  }
  EXPECT_EQ(outcomes.size(), 5u);  // "", "a", ..., "abcd"
}

TEST(FaultEnvTest, ReorderKeepsWritesIndependently) {
  std::set<std::string> outcomes;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/f", "...").ok());
    std::unique_ptr<File> file;
    ASSERT_TRUE(env.OpenFile("db/f", OpenMode::kReadWrite, &file).ok());
    for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(file->Write(i, std::string(1, static_cast<char>('a' + i))).ok());
    env.SimulateCrash(CrashMode::kReorder, seed);
    const std::string got = Contents(&base, "db/f");
    ASSERT_EQ(got.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(got[i] == '.' || got[i] == 'a' + static_cast<char>(i)) << got;
    outcomes.insert(got);
  }
  EXPECT_EQ(outcomes.size(), 8u);  // every subset, holes included (".b.")
  EXPECT_EQ(outcomes.count(".b."), 1u);
}

// Writes 8192 'x' at offset 100 over a durable file of 8192 'o' and returns
// what a crash in `mode` leaves.
std::string TornImage(CrashMode mode, uint64_t seed) {
  MemEnv base;
  FaultEnv env(&base);
  EXPECT_TRUE(MakeDurableDir(&env).ok());
  EXPECT_TRUE(MakeDurableFile(&env, "db/f", std::string(8192, 'o')).ok());
  EXPECT_TRUE(WriteAt(&env, "db/f", 100, std::string(8192, 'x')).ok());
  env.SimulateCrash(mode, seed);
  return Contents(&base, "db/f");
}

TEST(FaultEnvTest, TornWritesSplitAtSectors) {
  for (uint64_t sector : {uint64_t{512}, uint64_t{4096}}) {
    const CrashMode mode = sector == 512 ? CrashMode::kTorn512 : CrashMode::kTorn4K;
    bool saw_torn = false;
    for (uint64_t seed = 0; seed < 16; ++seed) {
      const std::string got = TornImage(mode, seed);
      ASSERT_TRUE(got.size() == 8192 || got.size() == 8292) << got.size();
      EXPECT_TRUE(AllBytesAre(std::string_view(got).substr(0, 100), 'o'));
      // Each piece lies between sector boundaries of the file: all old or all new.
      for (uint64_t begin = 100; begin < got.size(); begin = (begin / sector + 1) * sector) {
        const uint64_t end = std::min<uint64_t>(got.size(), (begin / sector + 1) * sector);
        std::string_view piece = std::string_view(got).substr(begin, end - begin);
        EXPECT_TRUE(AllBytesAre(piece, 'o') || AllBytesAre(piece, 'x')) << "seed " << seed << " at " << begin;
      }
      const size_t new_bytes = static_cast<size_t>(std::count(got.begin(), got.end(), 'x'));
      if (new_bytes != 0 && new_bytes != 8192) saw_torn = true;
    }
    EXPECT_TRUE(saw_torn) << "sector " << sector;
  }
}

TEST(FaultEnvTest, GarbageFillsDroppedSectors) {
  bool saw_zeros = false;
  bool saw_random = false;
  bool saw_longer = false;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/f", "").ok());
    ASSERT_TRUE(WriteAt(&env, "db/f", 0, std::string(5000, 'x')).ok());
    env.SimulateCrash(CrashMode::kGarbage, seed);
    const std::string got = Contents(&base, "db/f");
    ASSERT_TRUE(got.size() == 5000 || got.size() == 8192) << got.size();
    saw_longer |= got.size() == 8192;
    for (size_t begin = 0; begin < 5000; begin += 4096) {
      std::string_view piece = std::string_view(got).substr(begin, std::min<size_t>(4096, 5000 - begin));
      if (AllBytesAre(piece, 'x')) continue;
      if (AllBytesAre(piece, '\0')) {
        saw_zeros = true;
      } else {
        // Random bytes: about 1 in 256 happens to be 'x', never most of them.
        EXPECT_LT(std::count(piece.begin(), piece.end(), 'x'), 64) << "a sector mixes data and garbage";
        saw_random = true;
      }
    }
  }
  EXPECT_TRUE(saw_zeros);
  EXPECT_TRUE(saw_random);
  EXPECT_TRUE(saw_longer);
}

TEST(FaultEnvTest, GarbageNeverTouchesSyncedBytes) {
  for (uint64_t seed = 0; seed < 32; ++seed) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/f", std::string(100, 's')).ok());
    ASSERT_TRUE(WriteAt(&env, "db/f", 100, std::string(100, 'u')).ok());
    env.SimulateCrash(CrashMode::kGarbage, seed);
    EXPECT_TRUE(AllBytesAre(Contents(&base, "db/f").substr(0, 100), 's')) << "seed " << seed;
  }
}

TEST(FaultEnvTest, SameSeedSameImage) {
  auto run = [](CrashMode mode, uint64_t seed) {
    MemEnv base;
    FaultEnv env(&base);
    EXPECT_TRUE(MakeDurableDir(&env).ok());
    for (int i = 0; i < 6; ++i) {
      const std::string path = "db/f" + std::to_string(i % 3);
      EXPECT_TRUE(
          WriteAt(&env, path, static_cast<uint64_t>(i) * 1000, std::string(1500, static_cast<char>('a' + i))).ok());
    }
    EXPECT_TRUE(env.RenameFile("db/f0", "db/g").ok());
    env.SimulateCrash(mode, seed);
    return Snapshot(&base);
  };
  for (CrashMode mode : kAllCrashModes) {
    EXPECT_EQ(run(mode, 7), run(mode, 7)) << CrashModeName(mode);
  }
  std::set<std::map<std::string, std::string>> images;
  for (uint64_t seed = 0; seed < 8; ++seed) images.insert(run(CrashMode::kGarbage, seed));
  EXPECT_GT(images.size(), 1u);
}

// --- Crash points --------------------------------------------------------

TEST(FaultEnvTest, CrashPointNumbersEveryMutatingCall) {
  MemEnv base;
  FaultEnv env(&base);
  std::unique_ptr<File> file;
  std::vector<std::string> names;
  std::string out;
  ASSERT_TRUE(env.CreateDir("db").ok());
  EXPECT_EQ(env.io_calls(), 1u);
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &file).ok());  // creates
  EXPECT_EQ(env.io_calls(), 2u);
  ASSERT_TRUE(file->Write(0, "abc").ok());
  ASSERT_TRUE(file->Truncate(2).ok());
  ASSERT_TRUE(file->Sync().ok());
  EXPECT_EQ(env.io_calls(), 5u);
  ASSERT_TRUE(env.SyncDir("db").ok());
  EXPECT_EQ(env.io_calls(), 6u);
  // Not mutating: reads, listing, opening an existing file without truncating.
  ASSERT_TRUE(file->Read(0, 10, &out).ok());
  ASSERT_TRUE(env.ListDir("db", &names).ok());
  EXPECT_TRUE(env.FileExists("db/a"));
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &file).ok());
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadOnly, &file).ok());
  EXPECT_EQ(env.io_calls(), 6u);
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kTruncate, &file).ok());  // truncates
  ASSERT_TRUE(env.RenameFile("db/a", "db/b").ok());
  ASSERT_TRUE(env.RemoveFile("db/b").ok());
  ASSERT_TRUE(env.RemoveDir("db").ok());
  EXPECT_EQ(env.io_calls(), 10u);
  EXPECT_EQ(env.sync_calls(), 1u);
}

TEST(FaultEnvTest, CrashAtCallSkipsThatCall) {
  MemEnv base;
  FaultEnv env(&base);
  ASSERT_TRUE(env.CreateDir("db").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &file).ok());
  env.CrashAtCall(4);
  ASSERT_TRUE(file->Write(0, "first").ok());  // call 3
  EXPECT_FALSE(env.crashed());
  EXPECT_TRUE(file->Write(5, "second").IsAborted());  // call 4: not performed
  EXPECT_TRUE(env.crashed());
  EXPECT_EQ(env.io_calls(), 4u);
  EXPECT_EQ(Contents(&base, "db/a"), "first");
}

TEST_F(FaultEnvDirTest, CallsAfterCrashAreAborted) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  env.CrashAtCall(env.io_calls() + 1);
  EXPECT_TRUE(env.SyncDir("db").IsAborted());
  std::string out;
  std::vector<std::string> names;
  uint64_t size = 0;
  std::unique_ptr<File> other;
  std::unique_ptr<FileLock> lock;
  EXPECT_TRUE(file->Read(0, 4, &out).IsAborted());
  EXPECT_TRUE(file->Write(0, "x").IsAborted());
  EXPECT_TRUE(file->Sync().IsAborted());
  EXPECT_TRUE(file->Size(&size).IsAborted());
  EXPECT_TRUE(env.OpenFile("db/a", OpenMode::kReadOnly, &other).IsAborted());
  EXPECT_TRUE(env.ListDir("db", &names).IsAborted());
  EXPECT_TRUE(env.GetFileSize("db/a", &size).IsAborted());
  EXPECT_TRUE(env.RemoveFile("db/a").IsAborted());
  EXPECT_TRUE(env.LockFile("db/LOCK", &lock).IsAborted());
  EXPECT_FALSE(env.FileExists("db/a"));
  EXPECT_EQ(Contents(&base, "db/a"), "data");
}

TEST_F(FaultEnvDirTest, HandlesOpenedBeforeCrashStayDead) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "data").ok());
  std::unique_ptr<File> before;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &before).ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);  // crash "now", unarmed
  EXPECT_FALSE(env.crashed());
  EXPECT_EQ(env.io_calls(), 0u);  // a new process counts from 1 again
  std::string out;
  EXPECT_TRUE(before->Write(0, "zz").IsAborted());
  EXPECT_TRUE(before->Read(0, 4, &out).IsAborted());
  std::unique_ptr<File> after;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &after).ok());
  ASSERT_TRUE(after->Read(0, 4, &out).ok());
  EXPECT_EQ(out, "data");
  ASSERT_TRUE(after->Write(4, "!").ok());
  EXPECT_EQ(env.io_calls(), 1u);
}

TEST_F(FaultEnvDirTest, CrashReleasesLocks) {
  std::unique_ptr<FileLock> held;
  std::unique_ptr<FileLock> again;
  ASSERT_TRUE(env.LockFile("db/LOCK", &held).ok());
  EXPECT_TRUE(env.LockFile("db/LOCK", &again).IsBusy());
  env.SimulateCrash(CrashMode::kProcessKill, 1);
  EXPECT_TRUE(env.LockFile("db/LOCK", &again).ok());
  held.reset();  // the dead process's lock object is harmless
}

TEST(FaultEnvTest, EveryCrashPointOfAtomicReplaceLeavesOldOrNew) {
  // Enumerates all crash points of WriteFileAtomically in every mode: a
  // model that let a crash mix old and new, or lose both, fails here.
  uint64_t points = 0;
  {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/m", std::string(6000, 'o')).ok());
    const uint64_t start = env.io_calls();
    ASSERT_TRUE(WriteFileAtomically(&env, "db/m", std::string(6000, 'n')).ok());
    points = env.io_calls() - start;
  }
  ASSERT_EQ(points, 5u);
  for (uint64_t k = 1; k <= points; ++k) {
    for (CrashMode mode : kAllCrashModes) {
      for (uint64_t seed = 0; seed < 4; ++seed) {
        MemEnv base;
        FaultEnv env(&base);
        ASSERT_TRUE(MakeDurableDir(&env).ok());
        ASSERT_TRUE(MakeDurableFile(&env, "db/m", std::string(6000, 'o')).ok());
        env.CrashAtCall(env.io_calls() + k);
        EXPECT_TRUE(WriteFileAtomically(&env, "db/m", std::string(6000, 'n')).IsAborted());
        env.SimulateCrash(mode, seed);
        const std::string got = Contents(&base, "db/m");
        EXPECT_TRUE(got == std::string(6000, 'o') || got == std::string(6000, 'n'))
            << "k=" << k << " mode=" << CrashModeName(mode) << " seed=" << seed;
      }
    }
  }
}

TEST(FaultEnvTest, AbsolutePathsUnderAnUntouchedBaseTree) {
  MemEnv base;
  ASSERT_TRUE(base.CreateDir("/data").ok());
  ASSERT_TRUE(base.CreateDir("/data/sub").ok());
  ASSERT_TRUE(WriteAt(&base, "/data/sub/old", 0, "kept").ok());
  FaultEnv env(&base);
  ASSERT_TRUE(MakeDurableFile(&env, "/data/sub/synced", "s").ok());
  ASSERT_TRUE(WriteAt(&env, "/data/sub/unsynced", 0, "u").ok());
  ASSERT_TRUE(env.CreateDir("/data/sub/dir").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 3);
  std::vector<std::string> names;
  ASSERT_TRUE(base.ListDir("/data/sub", &names).ok());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"old", "synced"}));
  EXPECT_EQ(Contents(&base, "/data/sub/old"), "kept");
}

TEST_F(FaultEnvDirTest, TruncateOnOpenUndoneOnPowerLoss) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "precious").ok());
  std::unique_ptr<File> file;
  const uint64_t calls = env.io_calls();
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kTruncate, &file).ok());
  EXPECT_EQ(env.io_calls(), calls + 1);
  EXPECT_EQ(Contents(&env, "db/a"), "");
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "precious");
}

// A seeded mix of every mutating call on a few files.
void RandomWorkload(Env* env, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::string names[] = {"db/f0", "db/f1", "db/f2"};
  std::map<std::string, std::unique_ptr<File>> open;
  for (int step = 0; step < 60; ++step) {
    const std::string& name = names[rng() % 3];
    const std::string& other = names[rng() % 3];
    const uint64_t offset = rng() % 6000;
    std::unique_ptr<File>& file = open[name];
    Status s;
    switch (rng() % 8) {
      case 0:
        s = env->OpenFile(name, rng() % 4 == 0 ? OpenMode::kTruncate : OpenMode::kCreate, &file);
        break;
      case 1:
        s = env->RenameFile(name, other);
        break;
      case 2:
        s = env->RemoveFile(name);
        break;
      case 3:
        s = env->SyncDir("db");
        break;
      case 4:
        s = file ? file->Truncate(offset) : Status::OK();
        break;
      case 5:
        s = file ? file->Sync() : Status::OK();
        break;
      default:
        s = file ? file->Write(offset, std::string(rng() % 3000, static_cast<char>('a' + step % 26))) : Status::OK();
    }
    if (s.IsAborted()) return;
  }
}

TEST(FaultEnvTest, ProcessKillImageEqualsLiveFilesAtEveryCrashPoint) {
  // The image of kProcessKill is rebuilt from the model; if the model ever
  // drifted from what the base really holds, the two would differ.
  for (uint64_t seed = 0; seed < 8; ++seed) {
    uint64_t points = 0;
    {
      MemEnv base;
      FaultEnv env(&base);
      ASSERT_TRUE(MakeDurableDir(&env).ok());
      RandomWorkload(&env, seed);
      points = env.io_calls();
    }
    for (uint64_t k = 3; k <= points; ++k) {
      MemEnv base;
      FaultEnv env(&base);
      ASSERT_TRUE(MakeDurableDir(&env).ok());
      env.CrashAtCall(k);
      RandomWorkload(&env, seed);
      ASSERT_TRUE(env.crashed());
      const auto live = Snapshot(&base);
      env.SimulateCrash(CrashMode::kProcessKill, seed);
      ASSERT_EQ(Snapshot(&base), live) << "seed " << seed << " k " << k;
    }
  }
}

// --- Media faults --------------------------------------------------------

TEST_F(FaultEnvDirTest, FailedSyncDropsPendingData) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "old").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  ASSERT_TRUE(file->Write(3, "+lost").ok());
  const uint64_t syncs = env.sync_calls();
  env.FailSyncAtCall(env.io_calls() + 1);
  EXPECT_TRUE(file->Sync().IsIOError());
  EXPECT_EQ(env.sync_calls(), syncs);
  std::string out;
  ASSERT_TRUE(file->Read(0, 100, &out).ok());
  EXPECT_EQ(out, "old+lost");      // still readable until the crash
  ASSERT_TRUE(file->Sync().ok());  // a retry "succeeds" but saves nothing
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "old");
}

TEST_F(FaultEnvDirTest, FailedSyncDataIsGoneEvenAfterProcessKill) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "old").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  ASSERT_TRUE(file->Write(3, "+lost").ok());
  env.FailSyncAtCall(env.io_calls() + 1);
  EXPECT_TRUE(file->Sync().IsIOError());
  ASSERT_TRUE(file->Write(0, "O").ok());
  env.SimulateCrash(CrashMode::kProcessKill, 1);
  EXPECT_EQ(Contents(&base, "db/a"), "Old");
}

TEST(FaultEnvTest, SpaceLimitGivesNoSpace) {
  MemEnv base;
  FaultEnv env(&base);
  ASSERT_TRUE(env.CreateDir("db").ok());
  env.SetSpaceLimit(100);
  std::unique_ptr<File> a;
  std::unique_ptr<File> b;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &a).ok());
  ASSERT_TRUE(env.OpenFile("db/b", OpenMode::kCreate, &b).ok());
  ASSERT_TRUE(a->Write(0, std::string(60, 'a')).ok());
  EXPECT_TRUE(b->Write(0, std::string(41, 'b')).IsNoSpace());
  uint64_t size = 0;
  ASSERT_TRUE(b->Size(&size).ok());
  EXPECT_EQ(size, 0u);  // changed nothing
  ASSERT_TRUE(b->Write(0, std::string(40, 'b')).ok());
  ASSERT_TRUE(a->Write(0, std::string(60, 'A')).ok());  // overwrite: no growth
  EXPECT_TRUE(a->Write(60, "x").IsNoSpace());
  ASSERT_TRUE(a->Close().ok());
  ASSERT_TRUE(env.RemoveFile("db/a").ok());
  a.reset();
  EXPECT_TRUE(b->Write(40, std::string(60, 'b')).ok());  // removal freed space
  env.SetSpaceLimit(0);
  EXPECT_TRUE(b->Write(100, std::string(1000, 'b')).ok());
}

TEST_F(FaultEnvDirTest, MisdirectedWriteLandsElsewhere) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", std::string(20, '.')).ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  env.MisdirectNextWrite(10);
  ASSERT_TRUE(file->Write(0, "abc").ok());
  ASSERT_TRUE(file->Write(3, "d").ok());  // only the next write is misdirected
  const std::string expected = "...d......abc.......";
  EXPECT_EQ(Contents(&env, "db/a"), expected);
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Write(19, "!").ok());  // lost, so the file is rebuilt from the model
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  EXPECT_EQ(Contents(&base, "db/a"), expected);
}

TEST_F(FaultEnvDirTest, ReadFaultReturnsIOError) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", "a").ok());
  ASSERT_TRUE(MakeDurableFile(&env, "db/b", "b").ok());
  env.FailReadsOf("db/a");
  std::string out;
  EXPECT_TRUE(ReadFileToString(&env, "db/a", &out).IsIOError());
  EXPECT_TRUE(ReadFileToString(&env, "db/b", &out).ok());
  env.ClearReadFaults();
  ASSERT_TRUE(ReadFileToString(&env, "db/a", &out).ok());
  EXPECT_EQ(out, "a");
}

int DifferingBits(std::string_view x, std::string_view y) {
  int bits = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    bits += std::popcount(static_cast<unsigned>(static_cast<unsigned char>(x[i] ^ y[i])));
  }
  return bits;
}

TEST(FaultEnvTest, FlipBitChangesOneBit) {
  const std::string original(64, 'z');
  std::string first_image;
  for (int run = 0; run < 2; ++run) {
    MemEnv base;
    FaultEnv env(&base);
    ASSERT_TRUE(MakeDurableDir(&env).ok());
    ASSERT_TRUE(MakeDurableFile(&env, "db/a", original).ok());
    ASSERT_TRUE(env.FlipBit("db/a", 99).ok());
    const std::string now = Contents(&env, "db/a");
    EXPECT_EQ(DifferingBits(now, original), 1);
    env.SimulateCrash(CrashMode::kPowerLoss, 1);
    EXPECT_EQ(Contents(&base, "db/a"), now);  // the flip is on the medium
    if (run == 0) first_image = now;
    if (run == 1) {
      EXPECT_EQ(now, first_image);  // same seed, same bit
    }
  }
}

TEST_F(FaultEnvDirTest, FlipBitAtFlipsExactlyThatBit) {
  ASSERT_TRUE(MakeDurableFile(&env, "db/a", std::string(4, '\0')).ok());
  const uint64_t calls = env.io_calls();
  ASSERT_TRUE(env.FlipBitAt("db/a", 2, 3).ok());
  EXPECT_EQ(Contents(&env, "db/a"), std::string("\0\0\x08\0", 4));
  EXPECT_TRUE(env.FlipBitAt("db/a", 2, 8).IsInvalidArgument());
  EXPECT_TRUE(env.FlipBitAt("db/a", 4, 0).IsInvalidArgument());
  EXPECT_TRUE(env.FlipBitAt("db/missing", 0, 0).IsNotFound());
  EXPECT_TRUE(env.FlipBit("db/missing", 1).IsNotFound());
  EXPECT_EQ(env.io_calls(), calls);  // faults are not crash points
}

// --- Misc ----------------------------------------------------------------

TEST(FaultEnvTest, CrashModeNamesRoundTrip) {
  for (CrashMode mode : kAllCrashModes) {
    CrashMode parsed = CrashMode::kProcessKill;
    ASSERT_TRUE(ParseCrashMode(CrashModeName(mode), &parsed).ok());
    EXPECT_EQ(parsed, mode);
  }
  CrashMode parsed = CrashMode::kProcessKill;
  EXPECT_EQ(CrashModeName(CrashMode::kPowerLoss), "power-loss");
  EXPECT_TRUE(ParseCrashMode("meteor", &parsed).IsInvalidArgument());
}

TEST_F(FaultEnvDirTest, ConcurrentWritersAreEachCountedOnce) {
  constexpr int kThreads = 4;
  constexpr int kWrites = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      std::unique_ptr<File> file;
      EXPECT_TRUE(env.OpenFile("db/t" + std::to_string(t), OpenMode::kCreate, &file).ok());
      for (int i = 0; i < kWrites; ++i) EXPECT_TRUE(file->Write(static_cast<uint64_t>(i), "x").ok());
      EXPECT_TRUE(file->Sync().ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(env.io_calls(), 2u + kThreads * (kWrites + 2));
  EXPECT_EQ(env.sync_calls(), static_cast<uint64_t>(kThreads));
  ASSERT_TRUE(env.SyncDir("db").ok());
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(Contents(&base, "db/t" + std::to_string(t)), std::string(kWrites, 'x'));
}

TEST(FaultEnvTest, ClockPassesThroughToBase) {
  MemEnv base;
  FaultEnv env(&base);
  base.SetNowMicros(1000);
  EXPECT_EQ(env.NowMicros(), 1000u);
  EXPECT_EQ(base.NowMicros(), 1001u);
}

}  // namespace
}  // namespace spool
