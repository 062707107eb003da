// VerifyStore and RepairStore: damage to any file of a closed store is
// reported, file by file; a damaged state fails Open and is rebuilt by a
// repair from the newest intact snapshot and the log, equal to what it was.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "table_fixture.h"

namespace spool {
namespace {

class StoreVerifyTest : public TableTest {
 protected:
  VerifyReport Verify() {
    VerifyReport report;
    Status s = VerifyStore(Options(), "/s", &report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return report;
  }
  // The check of the first file of `kind` (a failure when there is none).
  static StoreFileCheck Find(const VerifyReport& report, const std::string& kind) {
    for (const StoreFileCheck& f : report.files) {
      if (f.kind == kind) return f;
    }
    ADD_FAILURE() << "no " << kind << " checked";
    return StoreFileCheck{kind, "", 0, 0, Status::NotFound("not checked")};
  }
  std::string StateFile() { return state_.Sub("state/gen-000001/data.mdb"); }
  // Flips one byte of the real file at `path` wherever `marker` is (a
  // free page may hold an older copy).
  static void FlipAt(const std::string& path, const std::string& marker) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream read;
    read << in.rdbuf();
    const std::string bytes = read.str();
    std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
    size_t copies = 0;
    for (size_t at = bytes.find(marker); at != std::string::npos; at = bytes.find(marker, at + 1), ++copies) {
      out.seekp(static_cast<std::streamoff>(at));
      out.put(static_cast<char>(marker[0] ^ 0x20));
    }
    ASSERT_GT(copies, 0u) << marker;
  }
  // Flips one byte of the file at `path` in the store's (memory) env.
  void FlipInEnv(const std::string& path, size_t at) {
    std::string bytes;
    ASSERT_TRUE(ReadFileToString(&env_, path, &bytes).ok());
    ASSERT_LT(at, bytes.size());
    bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
    ASSERT_TRUE(WriteFileAtomically(&env_, path, bytes).ok());
  }
  // Writes users 0..n-1, one commit each, named "name-<i>-marker".
  void WriteUsers(int from, int to) {
    for (int i = from; i < to; ++i) {
      Transaction txn("WRITE");
      txn.Write(users_, User(i, "name-" + std::to_string(i) + "-marker"));
      Commit(txn);
    }
  }
};

TEST_F(StoreVerifyTest, AnIntactStoreIsReportedFileByFile) {
  CreateUsers();
  WriteUsers(0, 20);
  SnapshotInfo snapshot;
  ASSERT_TRUE(store_->TakeSnapshot(&snapshot).ok());
  VerifyReport busy;
  EXPECT_TRUE(VerifyStore(Options(), "/s", &busy).IsBusy());  // open: the store is not checked under a writer
  ASSERT_TRUE(store_->FlushState().ok());  // a close may leave the newest commits to the log's replay
  store_.reset();

  const VerifyReport report = Verify();
  EXPECT_FALSE(report.damaged());
  const StoreFileCheck log = Find(report, "log");
  EXPECT_EQ(log.items, 21u);
  EXPECT_GT(Find(report, "state").items, 20u);
  EXPECT_GT(Find(report, "snapshot").items, 20u);
  EXPECT_GT(report.bytes(), 0u);
}

TEST_F(StoreVerifyTest, ADamagedStateFailsOpenAndARepairBringsItBackEqual) {
  CreateUsers();
  WriteUsers(0, 30);
  const std::vector<Row> before = ReadAll(users_);
  ASSERT_TRUE(store_->FlushState().ok());  // the marked row in the state file, not left to the log's replay
  store_.reset();
  FlipAt(StateFile(), "name-17-marker");

  Status opened = Store::Open(Options(), "/s", &store_);
  EXPECT_TRUE(opened.IsCorruption()) << opened.ToString();
  EXPECT_NE(opened.ToString().find("spool repair"), std::string::npos) << opened.ToString();
  const VerifyReport damaged = Verify();
  EXPECT_TRUE(damaged.damaged());
  EXPECT_TRUE(Find(damaged, "state").status.IsCorruption());
  EXPECT_TRUE(Find(damaged, "log").status.ok());

  RepairReport repair;
  Status s = RepairStore(Options(), "/s", &repair);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(repair.version, 31u);
  EXPECT_TRUE(repair.rebuilt_from.empty());  // no snapshot: from the log's start
  ASSERT_EQ(repair.removed.size(), 1u);
  EXPECT_FALSE(Verify().damaged());
  Open();
  EXPECT_EQ(ReadAll(users_), before);
  EXPECT_FALSE(std::filesystem::exists(state_.Sub("state.repair-old")));
}

TEST_F(StoreVerifyTest, ARepairStartsFromTheNewestIntactSnapshotAndDropsDamagedOnes) {
  CreateUsers();
  WriteUsers(0, 10);
  SnapshotInfo older, newer;
  ASSERT_TRUE(store_->TakeSnapshot(&older).ok());
  WriteUsers(10, 20);
  ASSERT_TRUE(store_->TakeSnapshot(&newer).ok());
  WriteUsers(20, 25);
  const std::vector<Row> before = ReadAll(users_);
  ASSERT_TRUE(store_->FlushState().ok());
  store_.reset();
  const std::string newer_path = "/s/snapshots/" + newer.file_name;
  uint64_t size = 0;
  ASSERT_TRUE(env_.GetFileSize(newer_path, &size).ok());
  FlipInEnv(newer_path, size / 2);
  FlipAt(StateFile(), "name-3-marker");

  const VerifyReport damaged = Verify();
  size_t damaged_files = 0;
  for (const StoreFileCheck& f : damaged.files) damaged_files += !f.status.ok();
  EXPECT_EQ(damaged_files, 2u);  // the state and the newer snapshot

  RepairReport repair;
  Status s = RepairStore(Options(), "/s", &repair);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(repair.rebuilt_from, older.file_name);
  EXPECT_EQ(repair.removed.size(), 2u);
  EXPECT_FALSE(env_.FileExists(newer_path));
  EXPECT_FALSE(Verify().damaged());
  Open();
  EXPECT_EQ(ReadAll(users_), before);
}

// The state is derived from the log: with the log damaged, a repair has
// nothing to rebuild from, says so, and changes nothing.
TEST_F(StoreVerifyTest, ARepairRefusesADamagedLogAndChangesNothing) {
  CreateUsers();
  WriteUsers(0, 10);
  store_.reset();
  std::vector<std::string> segments;
  ASSERT_TRUE(env_.ListDir("/s/log", &segments).ok());
  std::string segment;
  for (const std::string& name : segments) {
    if (name.ends_with(".seg")) segment = "/s/log/" + name;
  }
  ASSERT_FALSE(segment.empty());
  FlipInEnv(segment, 600);  // inside an early record, which the state applied

  const VerifyReport report = Verify();
  EXPECT_TRUE(Find(report, "log").status.IsCorruption()) << Find(report, "log").status.ToString();
  RepairReport repair;
  Status s = RepairStore(Options(), "/s", &repair);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("backup"), std::string::npos) << s.ToString();
  EXPECT_TRUE(std::filesystem::exists(StateFile()));  // the state is as it was
  EXPECT_FALSE(std::filesystem::exists(state_.Sub("state.repair-old")));
}

TEST_F(StoreVerifyTest, ADamagedPinsFileIsReportedAndARepairDropsIt) {
  CreateUsers();
  WriteUsers(0, 3);
  ASSERT_TRUE(store_->AddPin("point", 2).ok());
  store_.reset();
  FlipInEnv("/s/PINS", 30);
  const VerifyReport report = Verify();
  EXPECT_TRUE(Find(report, "pins").status.IsCorruption());
  RepairReport repair;
  ASSERT_TRUE(RepairStore(Options(), "/s", &repair).ok());
  EXPECT_FALSE(env_.FileExists("/s/PINS"));
  EXPECT_FALSE(Verify().damaged());
}

// An archived cut is a directory named epoch-<number>, for verify as for
// ListArchivedCuts and vacuum: a whole copy of one under another name is
// not checked, and not counted as a cut.
TEST_F(StoreVerifyTest, OnlyDirectoriesNamedAsCutsAreCheckedAsArchivedCuts) {
  CreateUsers();
  WriteUsers(0, 10);
  LogPosition head;
  ASSERT_TRUE(store_->RewindTo(6, &head, "u-rewind").ok());
  store_.reset();
  const std::string archive = "/s/log/archive";
  std::vector<std::string> names;
  ASSERT_TRUE(env_.ListDir(archive, &names).ok());
  ASSERT_EQ(names.size(), 1u);  // the rewind's cut: epoch-<new epoch, 6 digits or more>
  const std::string cut = archive + "/" + names[0];
  std::vector<std::string> files;
  ASSERT_TRUE(env_.ListDir(cut, &files).ok());
  ASSERT_FALSE(files.empty());
  for (const std::string& name : {std::string("epoch-x"), std::string("epoch-"), names[0] + "b"}) {
    ASSERT_TRUE(env_.CreateDir(archive + "/" + name).ok());
    for (const std::string& file : files) {
      std::string bytes;
      ASSERT_TRUE(ReadFileToString(&env_, cut + "/" + file, &bytes).ok());
      ASSERT_TRUE(WriteFileAtomically(&env_, archive + "/" + name + "/" + file, bytes).ok());
    }
  }

  const VerifyReport report = Verify();
  EXPECT_FALSE(report.damaged());
  std::vector<std::string> checked;
  for (const StoreFileCheck& f : report.files) {
    if (f.kind == "archived cut") checked.push_back(f.path);
  }
  EXPECT_EQ(checked, std::vector<std::string>{cut});
  EXPECT_EQ(Find(report, "archived cut").items, 5u);  // versions 7..11
  ASSERT_TRUE(Store::Open(Options(), "/s", &store_).ok());
  std::vector<Store::ArchivedCut> cuts;
  ASSERT_TRUE(store_->ListArchivedCuts(&cuts).ok());
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(cuts[0].new_epoch, head.epoch);
}

}  // namespace
}  // namespace spool
