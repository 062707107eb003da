// A store opened read-only (StoreOptions::read_only): beside a writer in
// another process it reads whole committed versions only, never a torn or
// half-applied one, and it changes nothing on disk.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spool/storage/store.h"
#include "temp_dir.h"

namespace spool {
namespace {

constexpr int64_t kRows = 50;

TableId Counters() {
  TableId id;
  EXPECT_TRUE(TableId::Parse("main.test.counters", &id).ok());
  return id;
}

Schema CountersSchema() {
  Schema schema;
  EXPECT_TRUE(Schema::Make({{"id", ColumnType::kInt64, false}, {"n", ColumnType::kInt64, true}}, {"id"}, &schema).ok());
  return schema;
}

// Every row of the table set to `n`, in one commit.
Transaction SetAll(int64_t n) {
  Transaction txn;
  for (int64_t id = 0; id < kRows; ++id) txn.Write(Counters(), Row{id, n});
  return txn;
}

// Every file under `dir` with its bytes, but LMDB's lock files, whose
// table of readers a reader writes itself into.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "lock.mdb") continue;
    std::string bytes(static_cast<size_t>(entry.file_size()), '\0');
    std::ifstream in(entry.path(), std::ios::binary);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    files[entry.path().string()] = std::move(bytes);
  }
  return files;
}

class ReadOnlyStoreTest : public ::testing::Test {
 protected:
  StoreOptions Options(bool read_only) {
    StoreOptions options;
    options.read_only = read_only;
    options.create_if_missing = !read_only;
    return options;
  }
  std::string Dir() const { return dir_.Sub("store"); }

  // Creates the table and commits SetAll(1..commits); closes the store.
  void Populate(int64_t commits) {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(Options(false), Dir(), &store).ok());
    Transaction create("CREATE TABLE");
    create.CreateTable(Counters(), TableKind::kStreamingTable, CountersSchema());
    ASSERT_TRUE(store->Commit(create).ok());
    for (int64_t n = 1; n <= commits; ++n) ASSERT_TRUE(store->Commit(SetAll(n)).ok());
  }

  // Forks the store's writer, with batches of `batch_commits`: the child
  // reads a byte from `wait_fd` first (unless -1), opens the store (its
  // options changed by `adjust`, when given), runs
  // `body` and exits 0, or 2 when the store does not open and 3 when
  // `body` returns false. Returns the child's pid to the parent.
  pid_t ForkWriter(uint64_t batch_commits, const std::function<bool(Store*)>& body, int wait_fd = -1,
                   const std::function<void(StoreOptions*)>& adjust = {}) {
    const pid_t child = fork();
    if (child != 0) return child;
    char byte = 0;
    if (wait_fd >= 0 && read(wait_fd, &byte, 1) != 1) _exit(1);
    StoreOptions options = Options(false);
    options.state_batch_commits = batch_commits;
    if (adjust) adjust(&options);
    std::unique_ptr<Store> store;
    if (Status s = Store::Open(options, Dir(), &store); !s.ok()) {
      std::cerr << "writer: " << s.ToString() << "\n";
      _exit(2);
    }
    _exit(body(store.get()) ? 0 : 3);
  }

  // The value every row holds in `store` (as of `version` when set), or -1
  // when the rows disagree or some are missing: a read that is not one
  // whole commit.
  static int64_t WholeValue(Store* store, std::optional<uint64_t> version = std::nullopt,
                            uint64_t* version_read = nullptr) {
    ReadOptions options;
    options.version = version;
    std::vector<int64_t> values;
    Status s = store->Read(
        Counters(), options,
        [&](const Row& row) {
          values.push_back(std::get<int64_t>(row[1]));
          return true;
        },
        nullptr, version_read);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (values.size() != static_cast<size_t>(kRows)) return -1;
    for (int64_t v : values) {
      if (v != values.front()) return -1;
    }
    return values.front();
  }

  TempDir dir_;
};

TEST_F(ReadOnlyStoreTest, ReadsWhatWasCommittedAndChangesNoFile) {
  Populate(5);
  const std::map<std::string, std::string> before = Files(Dir());
  {
    std::unique_ptr<Store> store;
    Status s = Store::Open(Options(true), Dir(), &store);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(WholeValue(store.get()), 5);
    EXPECT_EQ(WholeValue(store.get(), 3), 2);  // version 1 created the table
    std::vector<HistoryEntry> history;
    ASSERT_TRUE(store->History(Counters(), &history).ok());
    EXPECT_EQ(history.size(), 6u);
    uint64_t changes = 0;
    ASSERT_TRUE(store
                    ->Changes(Counters(), 2, 6,
                              [&](const ChangeRow&) {
                                ++changes;
                                return true;
                              })
                    .ok());
    EXPECT_EQ(changes, static_cast<uint64_t>(kRows + 4 * 2 * kRows));  // inserts, then pre and post images

    // Whatever would write is refused, by name.
    const Status commit = store->Commit(SetAll(9));
    EXPECT_TRUE(commit.IsNotSupported()) << commit.ToString();
    EXPECT_NE(commit.message().find("read-only"), std::string::npos);
    EXPECT_TRUE(store->Restore(Counters(), 3).IsNotSupported());
    EXPECT_TRUE(store->RewindTo(3).IsNotSupported());
    EXPECT_TRUE(store->TakeSnapshot().IsNotSupported());
    EXPECT_TRUE(store->SaveStateCopy().IsNotSupported());
    EXPECT_TRUE(store->AddPin("p", 3).IsNotSupported());
    EXPECT_TRUE(store->RemovePin("p").IsNotSupported());
    VacuumReport report;
    EXPECT_TRUE(store->Vacuum(VacuumOptions{}, &report).IsNotSupported());
    std::unique_ptr<UpdateClaim> claim;
    EXPECT_TRUE(store->ClaimUpdate("u", &claim).IsNotSupported());
    Event event;
    event.event_type = "create_update";
    EXPECT_TRUE(store->events()->Append(&event).IsNotSupported());
    EXPECT_EQ(WholeValue(store.get()), 5);
  }
  const std::map<std::string, std::string> after = Files(Dir());
  for (const auto& [path, bytes] : before) {
    const auto it = after.find(path);
    EXPECT_TRUE(it != after.end() && it->second == bytes) << path << " changed";
  }
  for (const auto& [path, bytes] : after) EXPECT_TRUE(before.count(path)) << path << " appeared";
}

TEST_F(ReadOnlyStoreTest, NoStoreIsNotFoundAndCreatesNothing) {
  std::unique_ptr<Store> store;
  const Status s = Store::Open(Options(true), Dir(), &store);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(Dir()));
}

// LMDB cannot hold one environment twice in a process: a second handle of
// the same store here, either way round, is refused and harms nothing.
TEST_F(ReadOnlyStoreTest, ASecondHandleInTheSameProcessIsRefused) {
  Populate(2);
  std::unique_ptr<Store> writer;
  ASSERT_TRUE(Store::Open(Options(false), Dir(), &writer).ok());
  std::unique_ptr<Store> reader;
  Status s = Store::Open(Options(true), Dir(), &reader);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find("open in this process"), std::string::npos) << s.ToString();
  ASSERT_TRUE(writer->Commit(SetAll(3)).ok());
  writer.reset();

  ASSERT_TRUE(Store::Open(Options(true), Dir(), &reader).ok());
  s = Store::Open(Options(false), Dir(), &writer);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_EQ(WholeValue(reader.get()), 3);
  reader.reset();
  ASSERT_TRUE(Store::Open(Options(false), Dir(), &writer).ok());
  EXPECT_EQ(WholeValue(writer.get()), 3);
}

// A read-only handle keeps reading the version it opened at while the
// writer goes on: the state's batches applied since do not show through.
TEST_F(ReadOnlyStoreTest, AnOpenReaderKeepsItsVersionWhileTheWriterAppliesMore) {
  Populate(3);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  // The writer, once the reader is open: small batches, so that LMDB moves
  // on under the reader.
  const pid_t child = ForkWriter(
      2,
      [](Store* store) {
        for (int64_t n = 4; n <= 40; ++n) {
          if (!store->Commit(SetAll(n)).ok()) return false;
        }
        return store->FlushState().ok();
      },
      go[0]);
  ASSERT_GE(child, 0);
  close(go[0]);
  std::unique_ptr<Store> reader;
  Status s = Store::Open(Options(true), Dir(), &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  uint64_t version = 0;
  EXPECT_EQ(WholeValue(reader.get(), std::nullopt, &version), 3);
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  uint64_t again = 0;
  EXPECT_EQ(WholeValue(reader.get(), std::nullopt, &again), 3);
  EXPECT_EQ(again, version);
  EXPECT_EQ(reader->AvailableVersions().newest, version);
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(reader->History(Counters(), &history).ok());
  EXPECT_EQ(history.size(), 4u);
  reader.reset();
  ASSERT_TRUE(Store::Open(Options(true), Dir(), &reader).ok());
  EXPECT_EQ(WholeValue(reader.get()), 40);
}

// The writer commits without pause in another process and is killed with
// SIGKILL; readers opened all the while, and after the kill, each read one
// whole commit, never older than the last one acknowledged before it
// opened.
TEST_F(ReadOnlyStoreTest, ReadersBesideAWriterKilledMidCommitSeeWholeAcknowledgedCommits) {
  Populate(1);
  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  const pid_t child = ForkWriter(3, [&](Store* store) {
    for (int64_t n = 2;; ++n) {
      if (!store->Commit(SetAll(n)).ok()) return false;
      if (write(acks[1], &n, sizeof(n)) != static_cast<ssize_t>(sizeof(n))) return false;
    }
  });
  ASSERT_GE(child, 0);
  close(acks[1]);
  int64_t acked = 1;
  const auto read_ack = [&] {
    int64_t n = 0;
    if (read(acks[0], &n, sizeof(n)) == static_cast<ssize_t>(sizeof(n))) acked = n;
  };
  for (int i = 0; i < 40; ++i) {
    read_ack();  // blocks for the writer's next acknowledgement: it has moved on
    const int64_t floor = acked;
    std::unique_ptr<Store> reader;
    Status s = Store::Open(Options(true), Dir(), &reader);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const int64_t value = WholeValue(reader.get());
    EXPECT_GE(value, floor) << "a reader saw less than was acknowledged before it opened";
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  while (true) {  // what the pipe still holds
    int64_t n = 0;
    if (read(acks[0], &n, sizeof(n)) != static_cast<ssize_t>(sizeof(n))) break;
    acked = n;
  }
  close(acks[0]);
  std::unique_ptr<Store> reader;
  Status s = Store::Open(Options(true), Dir(), &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int64_t value = WholeValue(reader.get());
  EXPECT_GE(value, acked);
  EXPECT_LE(value, acked + 1);  // at most the commit the kill interrupted, written whole
}

// What a writer acknowledged: the op was durable at `version`, and every
// row then held `value`.
struct Ack {
  uint64_t version = 0;
  int64_t value = 0;
};

// A campaign: in each cycle a reader opens and stays open while a writer
// process commits, rewinds the store a few versions back (cutting the
// reader's version off the history) and vacuums everything no retention
// keeps (small log segments, so that whole segments go), until it is killed
// with SIGKILL after a chosen number of operations. Throughout, the
// long-lived reader reads exactly what it read at its open — now and as of
// each of its last versions — or, as of an older version whose log or
// snapshot went, a clear error; never other rows. A reader opened after
// the kill sees at least the last acknowledged operation, whole.
TEST_F(ReadOnlyStoreTest, ALongLivedReaderKeepsItsVersionsWhileTheWriterRewindsVacuumsAndIsKilled) {
  Populate(3);
  const char* env = std::getenv("SPOOL_READER_CAMPAIGN_CYCLES");
  const int cycles = env != nullptr ? std::atoi(env) : 25;
  uint64_t seed = 1;
  int clear_errors = 0, cut_readers = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    // The writer is forked first (a process holds one handle of a store:
    // a child forked beside the reader would inherit it) and starts once
    // the reader is open.
    int go[2], acks[2];
    ASSERT_EQ(pipe(go), 0);
    ASSERT_EQ(pipe(acks), 0);
    const pid_t child = ForkWriter(
        16,
        [&](Store* store) {
          close(acks[0]);
          for (uint64_t op = 0;; ++op) {
            const uint64_t newest = store->log()->Newest().version;
            Status done;
            if (op % 4 == 3 && newest > 6) {
              done = store->RewindTo(newest - 5);  // past the reader's version, at op 3
              if (done.IsNotFound() || done.IsInvalidArgument()) done = Status::OK();  // vacuumed or cut: fine
            } else if (op % 5 == 4) {
              VacuumOptions vacuum;
              vacuum.force = true;
              vacuum.retain_us = 0;
              VacuumReport report;
              done = store->Vacuum(vacuum, &report);
            } else {
              done = store->Commit(SetAll(static_cast<int64_t>(1000 * (cycle + 1)) + static_cast<int64_t>(op)));
            }
            const Ack ack{store->log()->Newest().version, WholeValue(store)};
            if (!done.ok() || ack.value == -1) {
              std::cerr << "writer, op " << op << ": " << done.ToString() << ", value " << ack.value << "\n";
              return false;
            }
            if (write(acks[1], &ack, sizeof ack) != static_cast<ssize_t>(sizeof ack)) return false;
          }
        },
        go[0],
        [](StoreOptions* options) {
          options->log.segment_size_bytes = 64 << 10;  // the least: vacuum removes whole segments
          options->log.compress_min_bytes = 0;
          options->min_retention_us = 0;
          options->retention_us = 0;
        });
    ASSERT_GE(child, 0);
    close(go[0]);
    std::unique_ptr<Store> reader;
    Status s = Store::Open(Options(true), Dir(), &reader);
    ASSERT_TRUE(s.ok()) << "cycle " << cycle << ": " << s.ToString();
    uint64_t version = 0;
    const int64_t value = WholeValue(reader.get(), std::nullopt, &version);
    ASSERT_NE(value, -1) << "cycle " << cycle;
    // The rows of a read as of `v` (each row's n), or its error.
    const auto read_as_of = [&](uint64_t v, std::vector<int64_t>* values) {
      ReadOptions options;
      options.version = v;
      values->clear();
      return reader->Read(Counters(), options, [&](const Row& row) {
        values->push_back(std::get<int64_t>(row[1]));
        return true;
      });
    };
    // What the reader reads as of its last versions before the writer runs
    // (those it can: an earlier cycle's vacuum may have taken some).
    std::map<uint64_t, std::vector<int64_t>> before;
    for (uint64_t v = version; v >= 2 && v + 4 > version; --v) {
      std::vector<int64_t> values;
      if (read_as_of(v, &values).ok()) before[v] = std::move(values);
    }
    ASSERT_EQ(write(go[1], "g", 1), 1);
    close(go[1]);
    close(acks[1]);
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t ops = 1 + (seed >> 33) % 14;
    Ack last;
    for (uint64_t i = 0; i < ops; ++i) {
      ASSERT_EQ(read(acks[0], &last, sizeof last), static_cast<ssize_t>(sizeof last))
          << "the writer stopped, cycle " << cycle;
      if (last.value < value) ++cut_readers;  // a rewind went back past the reader's version
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    while (read(acks[0], &last, sizeof last) == static_cast<ssize_t>(sizeof last)) {
    }
    close(acks[0]);

    // The long-lived reader: the same rows now and as of its last versions,
    // or a clear error where the log or snapshot those need is gone.
    EXPECT_EQ(WholeValue(reader.get()), value) << "cycle " << cycle;
    for (const auto& [v, expected] : before) {
      std::vector<int64_t> values;
      s = read_as_of(v, &values);
      if (!s.ok()) {
        EXPECT_TRUE(s.IsNotFound() || s.IsInvalidArgument()) << "cycle " << cycle << ", v" << v << ": " << s.ToString();
        ++clear_errors;
        continue;
      }
      EXPECT_EQ(values, expected) << "cycle " << cycle << ", as of v" << v;
    }
    reader.reset();
    std::unique_ptr<Store> fresh;
    s = Store::Open(Options(true), Dir(), &fresh);
    ASSERT_TRUE(s.ok()) << "cycle " << cycle << ": " << s.ToString();
    uint64_t fresh_version = 0;
    const int64_t now = WholeValue(fresh.get(), std::nullopt, &fresh_version);
    EXPECT_NE(now, -1) << "cycle " << cycle;
    EXPECT_GE(fresh_version, last.version) << "cycle " << cycle;
    if (fresh_version == last.version) {
      EXPECT_EQ(now, last.value) << "cycle " << cycle;
    }
  }
  EXPECT_GT(cut_readers, 0) << "no rewind went back past a reader's version: the campaign tested less than it says";
  std::cerr << "     " << cycles << " cycles: " << cut_readers << " writer states behind a reader's version, "
            << clear_errors << " as-of reads refused (their history vacuumed)\n";
}

}  // namespace
}  // namespace spool
