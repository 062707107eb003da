// Store::RewindTo: the whole store back to a version by cutting the log,
// with the state rebuilt from what LMDB applied or from a snapshot.
#include <algorithm>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "table_fixture.h"

namespace spool {
namespace {

class RewindStoreTest : public TableTest {
 protected:
  void SetUp() override {
    TableTest::SetUp();
    CreateUsers();  // version 1
  }

  // Version i + 2: user i % 3 named "v<i>", a delete of user (i + 1) % 3
  // every fourth step, and the flow's checkpoint "offset=<i>".
  CommitResult Step(int i) {
    Transaction txn("STREAMING UPDATE");
    txn.Write(users_, User(i % 3, "v" + std::to_string(i)));
    if (i % 4 == 3) txn.Delete(users_, Row{int64_t{(i + 1) % 3}});
    txn.SetCheckpoint("flow", "offset=" + std::to_string(i));
    return Commit(txn);
  }
  std::vector<Row> Rows() { return ReadAll(users_); }
  std::vector<Row> RowsAt(uint64_t version) {
    ReadOptions at;
    at.version = version;
    return ReadAll(users_, at);
  }
  std::string Checkpoint() {
    std::string data;
    bool found = false;
    EXPECT_TRUE(store_->GetCheckpoint("flow", &data, &found).ok());
    return found ? data : "<none>";
  }
};

TEST_F(RewindStoreTest, CutsLaterCommitsAndRecordsTheRewindAtAVersionNeverUsedBefore) {
  for (int i = 0; i < 10; ++i) Step(i);  // versions 2..11
  const std::vector<Row> at6 = RowsAt(6);
  const std::vector<Row> at4 = RowsAt(4);
  const std::vector<Row> at9 = RowsAt(9);
  const uint64_t epoch = store_->log()->Newest().epoch;

  LogPosition head;
  ASSERT_TRUE(store_->RewindTo(6, &head, "u-rewind").ok());
  // One RESTORE commit, at the version after the highest ever used.
  EXPECT_EQ(head.version, 12u);
  EXPECT_GT(head.epoch, epoch);
  EXPECT_EQ(store_->log()->Newest(), head);
  EXPECT_EQ(Rows(), at6);
  EXPECT_EQ(RowsAt(4), at4);  // time travel before the point still reads
  EXPECT_EQ(RowsAt(9), at9);  // and a cut version names what it named before
  EXPECT_EQ(RowsAt(12), at6);
  EXPECT_EQ(Checkpoint(), "offset=4");
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(users_, &history).ok());
  ASSERT_GE(history.size(), 2u);
  EXPECT_EQ(history[0].version, 12u);
  EXPECT_EQ(history[0].operation, "RESTORE");
  EXPECT_EQ(history[0].update_id, "u-rewind");
  EXPECT_NE(history[0].parameters_json.find("\"version\":6"), std::string::npos) << history[0].parameters_json;
  EXPECT_EQ(history[1].version, 6u);

  // The next commit is version 13, and holds what it wrote.
  EXPECT_EQ(Step(100).version, 13u);
  EXPECT_EQ(store_->CommitsAfter(6), 2u);  // the RESTORE and 13: the cut versions are on no history
  EXPECT_EQ(store_->CommitsAfter(2), 6u);
  std::map<int64_t, Row> want;  // at6 with key 1 set by the new commit
  for (const Row& row : at6) want[std::get<int64_t>(row[0])] = row;
  want[1] = User(1, "v100");
  std::vector<Row> want_rows;
  for (auto& [key, row] : want) want_rows.push_back(row);
  EXPECT_EQ(Rows(), want_rows);
  EXPECT_EQ(Checkpoint(), "offset=100");

  // A reader that had read up to the point sees only the new commit.
  for (const ChangeRow& c : Feed(users_, 7)) EXPECT_EQ(c.commit_version, 13u);
  EXPECT_FALSE(Feed(users_, 7).empty());
  // A cut version cannot end a feed: it is not on the current history.
  Status s = store_->Changes(users_, 2, 9, [](const ChangeRow&) { return true; });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();

  // The cut history is in the archive, whole.
  std::vector<Store::ArchivedCut> cuts;
  ASSERT_TRUE(store_->ListArchivedCuts(&cuts).ok());
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(cuts[0].new_epoch, head.epoch);
  EXPECT_EQ(cuts[0].first_version, 7u);
  EXPECT_EQ(cuts[0].last_version, 11u);
  EXPECT_EQ(cuts[0].commits, 5u);
  EXPECT_TRUE(cuts[0].complete);

  // Durable: reopening keeps the rewound store.
  const std::vector<Row> now = Rows();
  Reopen();
  EXPECT_EQ(store_->log()->Newest().version, 13u);
  EXPECT_EQ(Rows(), now);
  EXPECT_EQ(RowsAt(6), at6);
  EXPECT_EQ(RowsAt(9), at9);
  EXPECT_EQ(Step(101).version, 14u);

  // In the archive, only "epoch-" and an epoch's digits name a cut.
  Env* env = store_->options().env;
  const std::string archive = JoinPath(JoinPath(store_->dir(), "log"), "archive");
  for (const char* stray : {"epoch-", "epoch-7x", "epoch--1", "epoch-99999999999999999999"}) {
    ASSERT_TRUE(env->CreateDir(JoinPath(archive, stray)).ok()) << stray;
  }
  ASSERT_TRUE(store_->ListArchivedCuts(&cuts).ok());
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(cuts[0].new_epoch, head.epoch);
}

TEST_F(RewindStoreTest, ACutHistoryIsReadAsOfItsVersionsEvenAfterALaterRewindCutItsPoint) {
  for (int i = 0; i < 10; ++i) Step(i);  // versions 2..11
  std::map<uint64_t, std::vector<Row>> then;
  for (uint64_t v = 7; v <= 11; ++v) then[v] = RowsAt(v);
  ASSERT_TRUE(store_->RewindTo(6).ok());  // RESTORE at 12
  std::vector<Store::ArchivedCut> cuts;
  ASSERT_TRUE(store_->ListArchivedCuts(&cuts).ok());
  ASSERT_EQ(cuts.size(), 1u);
  const Store::ArchivedCut& cut = cuts[0];
  ASSERT_EQ(cut.first_version, 7u);
  // Time travel into the cut: every version of it as it was.
  for (uint64_t v = 7; v <= 11; ++v) {
    std::vector<Row> rows;
    ASSERT_TRUE(store_
                    ->ReadArchived(cut, users_, v,
                                   [&](const Row& row) {
                                     rows.push_back(row);
                                     return true;
                                   })
                    .ok());
    EXPECT_EQ(rows, then[v]) << v;
  }
  const auto none = [](const Row&) { return true; };
  EXPECT_TRUE(store_->ReadArchived(cut, users_, 12, none).IsInvalidArgument());
  EXPECT_TRUE(store_->ReadArchived(cut, Id("main.s.nothing"), 8, none).IsNotFound());

  // A second rewind, to before the first one's point, cuts that point (and
  // the first rewind's commit): the first cut still reads.
  Step(100);  // version 13
  then[13] = Rows();
  then[12] = RowsAt(12);
  ASSERT_TRUE(store_->RewindTo(5).ok());  // cuts 6, 12, 13; RESTORE at 14
  EXPECT_EQ(store_->log()->Newest().version, 14u);
  for (const auto& [v, rows] : then) EXPECT_EQ(RowsAt(v), rows) << v;
  Reopen();
  for (const auto& [v, rows] : then) EXPECT_EQ(RowsAt(v), rows) << v;
  // A rewind cannot go to a version a rewind cut.
  EXPECT_TRUE(store_->RewindTo(8).IsNotFound());
  EXPECT_TRUE(store_->CanRewindTo(12).IsNotFound());
}

TEST_F(RewindStoreTest, StateAppliedPastThePointIsRebuiltFromASnapshot) {
  for (int i = 0; i < 5; ++i) Step(i);       // versions 2..6
  ASSERT_TRUE(store_->TakeSnapshot().ok());  // at 6
  for (int i = 5; i < 20; ++i) Step(i);      // versions 7..21
  ASSERT_TRUE(store_->FlushState().ok());    // LMDB now holds version 21
  const std::vector<Row> at9 = RowsAt(9);
  const std::vector<Row> at7 = RowsAt(7);
  ASSERT_TRUE(store_->RewindTo(9).ok());
  EXPECT_EQ(Rows(), at9);
  EXPECT_EQ(Checkpoint(), "offset=7");
  EXPECT_EQ(RowsAt(7), at7);
  // Without LMDB the same store is rebuilt.
  const std::vector<Row> now = Rows();
  store_.reset();
  std::filesystem::remove_all(state_.Sub("state"));
  Open();
  EXPECT_EQ(Rows(), now);
}

// The copies in the state directory, by name.
std::vector<std::string> CopyNames(const std::string& state_dir) {
  std::vector<std::string> names;
  const std::string dir = state_dir + "/copies";
  if (!std::filesystem::exists(dir)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(RewindStoreTest, AStateCopyAtThePointIsSwappedInAndTheCopiesItCutAreDropped) {
  for (int i = 0; i < 5; ++i) Step(i);  // versions 2..6
  ASSERT_TRUE(store_->SaveStateCopy().ok());
  for (int i = 5; i < 15; ++i) Step(i);  // versions 7..16
  ASSERT_TRUE(store_->SaveStateCopy().ok());
  EXPECT_EQ(CopyNames(state_.Sub("state")), (std::vector<std::string>{"e1-v16", "e1-v6"}));
  const std::vector<Row> at6 = RowsAt(6);
  const std::vector<Row> at4 = RowsAt(4);
  ASSERT_TRUE(store_->RewindTo(6).ok());
  // The copy at 6 became the state (a new generation); the one at 16 was cut.
  EXPECT_TRUE(std::filesystem::exists(state_.Sub("state/gen-000002")));
  EXPECT_TRUE(CopyNames(state_.Sub("state")).empty());
  EXPECT_EQ(Rows(), at6);
  EXPECT_EQ(Checkpoint(), "offset=4");
  EXPECT_EQ(RowsAt(4), at4);  // before the copy's history floor: from the log
  Step(50);
  const std::vector<Row> now = Rows();
  Reopen();
  EXPECT_EQ(Rows(), now);
  EXPECT_EQ(Checkpoint(), "offset=50");
}

// A copy is checked when it is written and keeps a digest of its bytes;
// the rewind that adopts it walks it again only when the bytes differ.
// Damage to the copy is found that way and the state rebuilt; damage to
// the digest alone costs the walk, not the copy.
TEST_F(RewindStoreTest, AStateCopyDamagedOnDiskIsFoundAtTheRewindAndTheStateRebuilt) {
  const std::string name = "a name found once in the state copy";
  Transaction write("WRITE");
  write.Write(users_, User(7, name));
  Commit(write);                        // version 2
  for (int i = 0; i < 4; ++i) Step(i);  // versions 3..6
  ASSERT_TRUE(store_->SaveStateCopy().ok());
  for (int i = 4; i < 9; ++i) Step(i);  // versions 7..11
  const std::vector<Row> at6 = RowsAt(6);
  const std::string copy = state_.Sub("state/copies/e1-v6");
  ASSERT_TRUE(std::filesystem::exists(copy + "/DIGEST"));
  std::string bytes;
  ASSERT_TRUE(ReadFileToString(Env::Default(), copy + "/data.mdb", &bytes).ok());
  const size_t at = bytes.find(name);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(name, at + 1), std::string::npos);
  bytes[at] = static_cast<char>(bytes[at] ^ 4);
  ASSERT_TRUE(WriteFileAtomically(Env::Default(), copy + "/data.mdb", bytes).ok());

  ASSERT_TRUE(store_->RewindTo(6).ok());
  EXPECT_EQ(Rows(), at6);  // rebuilt from the log, not read from the copy
  EXPECT_EQ(Checkpoint(), "offset=3");
  EXPECT_FALSE(std::filesystem::exists(copy));
  EventQuery damaged;
  damaged.event_type = "state_copy_damaged";
  std::vector<Event> events;
  ASSERT_TRUE(store_->events()->Query(damaged, &events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("row"), std::string::npos) << events[0].message;
}

TEST_F(RewindStoreTest, AStateCopyWhoseDigestIsDamagedIsCheckedAndAdopted) {
  for (int i = 0; i < 5; ++i) Step(i);  // versions 2..6
  ASSERT_TRUE(store_->SaveStateCopy().ok());
  for (int i = 5; i < 9; ++i) Step(i);  // versions 7..10
  const std::vector<Row> at6 = RowsAt(6);
  ASSERT_TRUE(WriteFileAtomically(Env::Default(), state_.Sub("state/copies/e1-v6/DIGEST"), "0123 4096").ok());
  ASSERT_TRUE(store_->RewindTo(6).ok());
  EXPECT_TRUE(std::filesystem::exists(state_.Sub("state/gen-000002")));  // adopted
  EXPECT_EQ(Rows(), at6);
  EventQuery damaged;
  damaged.event_type = "state_copy_damaged";
  std::vector<Event> events;
  ASSERT_TRUE(store_->events()->Query(damaged, &events).ok());
  EXPECT_TRUE(events.empty());
}

TEST_F(RewindStoreTest, OnlyTheNewestStateCopiesAreKept) {
  StoreOptions options = Options();
  options.state_copies = 2;
  Reopen(options);
  for (int i = 0; i < 3; ++i) {
    Step(i);  // versions 2..4
    ASSERT_TRUE(store_->SaveStateCopy().ok());
  }
  EXPECT_EQ(CopyNames(state_.Sub("state")), (std::vector<std::string>{"e1-v3", "e1-v4"}));
  options.state_copies = 0;
  Reopen(options);
  Step(3);
  ASSERT_TRUE(store_->SaveStateCopy().ok());
  EXPECT_EQ(CopyNames(state_.Sub("state")).size(), 2u);  // none made
}

TEST_F(RewindStoreTest, RewindingAgainConvergesOnTheLastPoint) {
  for (int i = 0; i < 8; ++i) Step(i);  // versions 2..9
  const std::vector<Row> at3 = RowsAt(3);
  ASSERT_TRUE(store_->RewindTo(5).ok());
  Step(50);
  Step(51);
  ASSERT_TRUE(store_->RewindTo(3).ok());
  EXPECT_EQ(Rows(), at3);
  EXPECT_EQ(Checkpoint(), "offset=1");
  // Again: only the last rewind's RESTORE commit is cut, and another one
  // written, at the next version.
  const uint64_t epoch = store_->log()->CurrentEpoch();
  const uint64_t restore = store_->log()->Newest().version;
  EXPECT_EQ(restore, 13u);  // 2..9, 10 (the first RESTORE), 11, 12, 13
  ASSERT_TRUE(store_->RewindTo(3).ok());
  EXPECT_EQ(store_->log()->Newest().version, restore + 1);
  EXPECT_GT(store_->log()->CurrentEpoch(), epoch);
  EXPECT_EQ(Rows(), at3);
}

TEST_F(RewindStoreTest, CheckpointsReadAsOfAnyRetainedVersion) {
  for (int i = 0; i < 6; ++i) Step(i);  // versions 2..7 set "offset=<version - 2>"
  Transaction clear("STREAMING UPDATE");
  clear.SetCheckpoint("flow", std::nullopt);
  Commit(clear);  // version 8 clears it
  for (uint64_t v = 1; v <= 8; ++v) {
    std::string data;
    bool found = true;
    ASSERT_TRUE(store_->GetCheckpointAt("flow", v, &data, &found).ok());
    EXPECT_EQ(found, v >= 2 && v <= 7) << v;
    if (found) {
      EXPECT_EQ(data, "offset=" + std::to_string(v - 2));
    }
  }
  std::string data;
  bool found = false;
  EXPECT_TRUE(store_->GetCheckpointAt("flow", 9, &data, &found).IsInvalidArgument());
}

TEST_F(RewindStoreTest, SeveralTablesAndCheckpointsComeBackInOneRestoreCommit) {
  for (int i = 0; i < 4; ++i) Step(i);  // versions 2..5
  const std::vector<Row> users_at5 = Rows();
  Transaction create("CREATE TABLE");
  create.CreateTable(events_, TableKind::kStreamingTable, EventsSchema());
  create.Write(events_, Row{std::string("later")});
  Commit(create);                       // version 6: a table that did not exist at 5
  for (int i = 4; i < 8; ++i) Step(i);  // versions 7..10
  CommitResult result;
  ASSERT_TRUE(store_->RestoreTables({users_, events_}, {"flow"}, 5, &result).ok());
  EXPECT_EQ(result.version, 11u);
  EXPECT_EQ(Rows(), users_at5);
  EXPECT_TRUE(ReadAll(events_).empty());  // emptied: it had no rows at 5
  EXPECT_EQ(Checkpoint(), "offset=3");
  // One commit: both tables' histories show it.
  for (const TableId& id : {users_, events_}) {
    std::vector<HistoryEntry> history;
    ASSERT_TRUE(store_->History(id, &history, 1).ok());
    EXPECT_EQ(history.front().version, 11u);
    EXPECT_EQ(history.front().operation, "RESTORE");
  }
  // Time travel still reads the versions in between.
  EXPECT_EQ(ReadAll(events_,
                    [] {
                      ReadOptions at;
                      at.version = 6;
                      return at;
                    }())
                .size(),
            1u);
}

TEST_F(RewindStoreTest, PinsPastThePointAreDropped) {
  for (int i = 0; i < 6; ++i) Step(i);  // versions 2..7
  ASSERT_TRUE(store_->AddPin("early", 3).ok());
  ASSERT_TRUE(store_->AddPin("late", 6).ok());
  ASSERT_TRUE(store_->RewindTo(4).ok());
  const std::vector<std::pair<std::string, uint64_t>> want = {{"early", 3}};
  EXPECT_EQ(store_->Pins(), want);
  Reopen();
  EXPECT_EQ(store_->Pins(), want);
}

TEST_F(RewindStoreTest, VacuumKeepsWhatARewindToAPinnedVersionRebuildsFrom) {
  StoreOptions options = Options();
  options.log.segment_size_bytes = 64 << 10;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  auto write = [&](int i) {
    Transaction w;
    w.Write(users_, User(i % 7, std::string(1000, static_cast<char>('a' + i % 26))));
    Commit(w);
  };
  for (int i = 0; i < 40; ++i) write(i);     // versions 2..41
  ASSERT_TRUE(store_->TakeSnapshot().ok());  // at 41
  for (int i = 40; i < 200; ++i) write(i);   // versions 42..201
  ASSERT_TRUE(store_->AddPin("point", 120).ok());
  const std::vector<Row> at120 = RowsAt(120);
  env_.SetNowMicros(env_.NowMicros() + 1000 * kHour);
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(ForcedVacuum(), &report).ok());
  EXPECT_EQ(report.floor_version, 120u);
  EXPECT_GT(report.log_segments, 0u);  // the log before the snapshot went
  EXPECT_LE(store_->log()->Oldest().version, 42u);
  Status s = store_->RewindTo(120);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Rows(), at120);
}

TEST_F(RewindStoreTest, APointThatCannotBeRebuiltIsRefusedAndNothingChanges) {
  StoreOptions options = Options();
  options.log.segment_size_bytes = 64 << 10;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  for (int i = 0; i < 200; ++i) {
    Transaction w;
    w.Write(users_, User(i % 7, std::string(1000, static_cast<char>('a' + i % 26))));
    Commit(w);
  }
  env_.SetNowMicros(env_.NowMicros() + 1000 * kHour);
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(ForcedVacuum(), &report).ok());  // takes a snapshot at the newest, drops the log before it
  const uint64_t oldest = store_->log()->Oldest().version;
  ASSERT_GT(oldest, 2u);
  for (int i = 0; i < 5; ++i) Step(i);
  const LogPosition newest = store_->log()->Newest();
  const std::vector<Row> rows = Rows();

  Status s = store_->RewindTo(oldest - 1);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find("oldest version the log keeps is " + std::to_string(oldest)), std::string::npos)
      << s.ToString();
  // Retained, but the only snapshot (the vacuum's, at the oldest version)
  // is gone: nothing to rebuild from.
  std::vector<SnapshotInfo> snapshots;
  ASSERT_TRUE(store_->ListSnapshots(&snapshots).ok());
  ASSERT_EQ(snapshots.size(), 1u);
  ASSERT_TRUE(env_.RemoveFile("/s/snapshots/" + snapshots[0].file_name).ok());
  s = store_->RewindTo(oldest + 2);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find("no snapshot"), std::string::npos) << s.ToString();
  s = store_->RewindTo(newest.version + 1);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(store_->log()->Newest(), newest);
  EXPECT_EQ(Rows(), rows);
}

}  // namespace
}  // namespace spool
