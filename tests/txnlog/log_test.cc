// Unit tests of the log, each named for the failure it pins down.
#include "spool/txnlog/log.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "gated_sync_env.h"
#include "log_format.h"
#include "log_test_util.h"
#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"
#include "temp_dir.h"

namespace spool {
namespace {

using testing::AppendBody;
using testing::CommitBody;
using testing::GatedSyncEnv;
using testing::NoSyncOptions;
using testing::ReadAll;
using testing::TestOptions;

constexpr char kDir[] = "/log";

class LogTest : public ::testing::Test {
 protected:
  void Open(LogOptions options, LogRecoveryReport* report = nullptr) {
    log_.reset();
    Status s = Log::Open(options, kDir, &log_, report);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Open() { Open(TestOptions(&env_)); }
  Status TryOpen(LogOptions options, LogRecoveryReport* report = nullptr) {
    log_.reset();
    return Log::Open(options, kDir, &log_, report);
  }
  void AppendMany(uint64_t from, uint64_t to) {
    for (uint64_t i = from; i <= to; ++i) {
      LogCommit commit;
      Status s = AppendBody(log_.get(), i, &commit);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(commit.position.version, i);
    }
  }
  std::string SegmentPath(uint64_t number) {
    char name[32];
    std::snprintf(name, sizeof(name), "/log/%012llu.seg", static_cast<unsigned long long>(number));
    return name;
  }
  std::string ReadFile(const std::string& path) {
    std::string bytes;
    EXPECT_TRUE(ReadFileToString(&env_, path, &bytes).ok());
    return bytes;
  }
  void WriteFile(const std::string& path, const std::string& bytes) {
    std::unique_ptr<File> file;
    ASSERT_TRUE(env_.OpenFile(path, OpenMode::kTruncate, &file).ok());
    ASSERT_TRUE(file->Write(0, bytes).ok());
  }

  MemEnv env_;
  std::unique_ptr<Log> log_;
};

TEST_F(LogTest, AppendAssignsDenseVersionsAndIncreasingTimestamps) {
  Open();
  uint64_t last_ts = 0;
  for (uint64_t i = 1; i <= 50; ++i) {
    LogCommit commit;
    ASSERT_TRUE(AppendBody(log_.get(), i, &commit).ok());
    EXPECT_EQ(commit.position, (LogPosition{1, i}));
    EXPECT_GT(commit.timestamp_us, last_ts);
    last_ts = commit.timestamp_us;
  }
  EXPECT_EQ(log_->Newest(), (LogPosition{1, 50}));
  EXPECT_EQ(log_->Oldest(), (LogPosition{1, 1}));
}

TEST_F(LogTest, TimestampsStayIncreasingWhenTheClockGoesBack) {
  Open();
  env_.SetNowMicros(5'000'000);
  LogCommit first;
  ASSERT_TRUE(AppendBody(log_.get(), 1, &first).ok());
  env_.SetNowMicros(1'000);
  LogCommit second;
  ASSERT_TRUE(AppendBody(log_.get(), 2, &second).ok());
  EXPECT_GT(second.timestamp_us, first.timestamp_us);
  Open();  // and across a reopen
  env_.SetNowMicros(10);
  LogCommit third;
  ASSERT_TRUE(AppendBody(log_.get(), 3, &third).ok());
  EXPECT_GT(third.timestamp_us, second.timestamp_us);
}

TEST_F(LogTest, EveryCommitReadsBackAfterReopen) {
  Open();
  AppendMany(1, 2000);  // several segments at 64 KiB
  ASSERT_GT(log_->Segments().size(), 3u);
  Open();
  std::vector<LogEntry> entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), 2000u);
  for (uint64_t i = 1; i <= 2000; ++i) {
    EXPECT_EQ(entries[i - 1].position.version, i);
    EXPECT_EQ(entries[i - 1].operation, "WRITE");
    EXPECT_EQ(entries[i - 1].body, CommitBody(i));
  }
  LogEntry entry;
  ASSERT_TRUE(log_->Read(1234, &entry).ok());
  EXPECT_EQ(entry.body, CommitBody(1234));
  EXPECT_TRUE(log_->Read(2001, &entry).IsNotFound());
  AppendMany(2001, 2010);
  EXPECT_EQ(ReadAll(log_.get(), 1995).size(), 16u);
}

TEST_F(LogTest, IteratorSeesCommitsAppendedAfterItWasCreated) {
  Open();
  AppendMany(1, 3);
  std::unique_ptr<LogIterator> it;
  ASSERT_TRUE(log_->NewIterator(4, &it).ok());
  LogEntry entry;
  EXPECT_FALSE(it->Next(&entry));
  EXPECT_TRUE(it->status().ok());
  AppendMany(4, 5);
  ASSERT_TRUE(it->Next(&entry));
  EXPECT_EQ(entry.position.version, 4u);
}

TEST_F(LogTest, LargeCompressiblePayloadRoundTripsCompressed) {
  Open();
  std::string body(200'000, 'z');
  LogCommit commit;
  ASSERT_TRUE(log_->Append(LogWrite{"BULK", body}, &commit).ok());
  EXPECT_LT(log_->Stats().bytes_appended, 20'000u);
  Open();
  LogEntry entry;
  ASSERT_TRUE(log_->Read(1, &entry).ok());
  EXPECT_EQ(entry.body, body);
  EXPECT_EQ(entry.operation, "BULK");
}

TEST_F(LogTest, ConcurrentLargeCommitsAreCompressedAndReadBack) {
  // Large payloads from concurrent committers, compressed on each caller's
  // thread and written in shared groups, read back exactly.
  Open();
  constexpr int kWriters = 4;
  constexpr int kEach = 6;
  auto body_of = [](int writer, int i) {
    std::string body;
    for (int row = 0; body.size() < 150'000; ++row) {
      body += "writer=" + std::to_string(writer) + ",commit=" + std::to_string(i) + ",row=" + std::to_string(row) + ";";
    }
    return body;
  };
  std::vector<std::thread> threads;
  std::mutex mu;
  std::map<uint64_t, std::string> written;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i) {
        const std::string body = body_of(w, i);
        LogCommit commit;
        ASSERT_TRUE(log_->Append(LogWrite{"BULK", body}, &commit).ok());
        std::lock_guard<std::mutex> lock(mu);
        written[commit.position.version] = body;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(log_->Stats().bytes_appended, log_->Stats().payload_bytes / 4);  // compressed
  Open();
  for (const LogEntry& entry : ReadAll(log_.get())) EXPECT_EQ(entry.body, written[entry.position.version]);
  EXPECT_EQ(ReadAll(log_.get()).size(), written.size());
}
TEST_F(LogTest, OversizedCommitIsRejectedAndChangesNothing) {
  Open();
  std::string body((64u << 20) + 1, 'x');
  LogCommit commit;
  EXPECT_TRUE(log_->Append(LogWrite{"WRITE", body}, &commit).IsInvalidArgument());
  // An async append is refused at once too, not left to its group's leader.
  std::unique_ptr<PendingAppend> pending;
  EXPECT_TRUE(log_->AppendAsync(LogWrite{"WRITE", body}, &pending).IsInvalidArgument());
  EXPECT_EQ(pending, nullptr);
  EXPECT_EQ(log_->Newest().version, 0u);
  AppendMany(1, 1);
}

TEST_F(LogTest, AsyncAppendsAreCompressedByTheirLeaderInOrder) {
  // AppendAsync leaves compression to the thread leading the append's
  // group: big and small, compressible and not, queued behind one another
  // and between synchronous appends, every record is written compressed
  // when that pays, at its version, and reads back exactly.
  Open();
  auto body_of = [](size_t i) {
    std::string body;
    if (i % 4 == 3) {  // incompressible
      uint64_t x = 0x9e3779b97f4a7c15ull * (i + 1);
      while (body.size() < 20'000) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        body.append(reinterpret_cast<const char*>(&x), sizeof(x));
      }
      return body;
    }
    const size_t size = i % 2 == 0 ? 150'000 : 5'000;  // big (its leader compresses it as one frame) and small
    for (int row = 0; body.size() < size; ++row) {
      body += "commit=" + std::to_string(i) + ",row=" + std::to_string(row) + ";";
    }
    return body;
  };
  std::vector<std::string> bodies;
  std::vector<std::unique_ptr<PendingAppend>> pending;
  for (size_t i = 0; i < 40; ++i) {
    bodies.push_back(body_of(i));
    if (i % 10 == 9) {
      LogCommit commit;
      ASSERT_TRUE(log_->Append(LogWrite{"WRITE", bodies.back()}, &commit).ok());
      EXPECT_EQ(commit.position.version, i + 1);
    } else {
      pending.emplace_back();
      ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", bodies.back()}, &pending.back()).ok());
    }
  }
  for (auto& p : pending) ASSERT_TRUE(p->Wait(nullptr).ok());
  uint64_t incompressible = 0;
  for (size_t i = 3; i < 40; i += 4) incompressible += bodies[i].size();
  // The compressible bodies shrink at least fourfold; the others are copied.
  const uint64_t compressible = log_->Stats().payload_bytes - incompressible;
  EXPECT_LT(log_->Stats().bytes_appended, incompressible + compressible / 4 + 40 * 256);
  pending.clear();  // before the log they came from
  Open();
  const std::vector<LogEntry> entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), bodies.size());
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, bodies[i]) << "version " << i + 1;
}

// A flipped bit in the newest record looks like a torn write. When the
// caller knows that commit was acknowledged (a store's applied state), it
// is damage: opening fails naming it and changes nothing.
TEST_F(LogTest, ADamagedNewestRecordThatWasAcknowledgedIsCorruptionNotATornTail) {
  Open();
  AppendMany(1, 10);
  const size_t data_end = log_->Segments()[0].data_end_bytes;
  const uint64_t store_id = log_->StoreId();
  log_.reset();
  std::string bytes = ReadFile(SegmentPath(1));
  bytes[data_end - 12] = static_cast<char>(bytes[data_end - 12] ^ 0x10);  // in version 10's record, past its padding
  WriteFile(SegmentPath(1), bytes);
  LogOptions options = TestOptions(&env_);
  options.known_durable = LogPosition{1, 10};
  options.known_durable_store_id = store_id;
  Status s = TryOpen(options);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("version 10 of epoch 1 is damaged or missing"), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadFile(SegmentPath(1)), bytes);  // left as it is
  // Evidence of another store, another epoch or only older commits is no
  // evidence: the tail is cut as a torn write, as without it.
  for (const auto& [known, id] : {std::pair{LogPosition{1, 10}, store_id + 1}, std::pair{LogPosition{2, 10}, store_id},
                                  std::pair{LogPosition{1, 9}, store_id}}) {
    WriteFile(SegmentPath(1), bytes);
    options.known_durable = known;
    options.known_durable_store_id = id;
    LogRecoveryReport report;
    ASSERT_TRUE(TryOpen(options, &report).ok());
    EXPECT_EQ(log_->Newest().version, 9u);
    EXPECT_GT(report.torn_tail_bytes, 0u);
  }
}

// A clean close records its newest record, every one up to it synced:
// asked to (a store's log is), the next open takes that as evidence too,
// and damage up to there is Corruption, as with a caller's known_durable.
// Records written after that close (the "opened" lost with a power loss)
// and CLOSED's of an older format, damaged or torn, are no evidence.
TEST_F(LogTest, ACleanCloseVouchesForItsNewestRecordWhenAskedTo) {
  Open();
  AppendMany(1, 10);
  const size_t data_end = log_->Segments()[0].data_end_bytes;
  log_.reset();
  const std::string closed = ReadFile("/log/CLOSED");
  uint64_t epoch = 0, version = 0;
  ASSERT_TRUE(logfmt::DecodeClosedClean(closed, &epoch, &version));
  EXPECT_EQ(epoch, 1u);
  EXPECT_EQ(version, 10u);
  std::string bytes = ReadFile(SegmentPath(1));
  bytes[data_end - 12] = static_cast<char>(bytes[data_end - 12] ^ 0x10);  // in version 10's record
  WriteFile(SegmentPath(1), bytes);
  LogOptions options = TestOptions(&env_);
  options.known_durable_from_clean_close = true;
  Status s = TryOpen(options);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("version 10 of epoch 1 is damaged or missing"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("the log's last clean close had synced them"), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadFile(SegmentPath(1)), bytes);    // left as it is
  EXPECT_EQ(ReadFile("/log/CLOSED"), closed);    // and so is the close's word:
  EXPECT_TRUE(TryOpen(options).IsCorruption());  // opening again refuses again
  options.read_only = true;                      // as does a reader (spool verify)
  EXPECT_TRUE(TryOpen(options).IsCorruption());
  options.read_only = false;

  // Not asked, or no position, or a damaged or torn CLOSED: a torn tail.
  std::string torn = closed;
  torn[closed.find(" 10") + 2] = '1';  // "... 11": the checksum line no longer matches
  for (const auto& [ask, file] :
       {std::pair{false, closed}, std::pair{true, std::string("closed clean\n")}, std::pair{true, torn}}) {
    WriteFile(SegmentPath(1), bytes);
    WriteFile("/log/CLOSED", file);
    options.known_durable_from_clean_close = ask;
    LogRecoveryReport report;
    ASSERT_TRUE(TryOpen(options, &report).ok());
    EXPECT_EQ(log_->Newest().version, 9u);
    EXPECT_GT(report.torn_tail_bytes, 0u);
    log_.reset();
  }
}

TEST_F(LogTest, TornTailIsTruncated) {
  Open();
  AppendMany(1, 10);
  const size_t data_end = log_->Segments()[0].data_end_bytes;
  log_.reset();
  // A half-written record after the last one: a valid-looking start, cut short.
  std::string bytes = ReadFile(SegmentPath(1));
  std::string torn = bytes.substr(96, 30);
  bytes.replace(data_end, torn.size(), torn);
  WriteFile(SegmentPath(1), bytes);
  LogRecoveryReport report;
  Open(TestOptions(&env_), &report);
  EXPECT_GT(report.torn_tail_bytes, 0u);
  EXPECT_EQ(log_->Newest().version, 10u);
  AppendMany(11, 12);
  Open();
  EXPECT_EQ(ReadAll(log_.get()).size(), 12u);
}

// A clean close's word is taken back by every writer's open, whatever it
// then finds: here a tail torn after the close, cut away.
TEST_F(LogTest, AnOpenThatCutsATornTailTakesBackTheCleanClose) {
  Open();
  AppendMany(1, 10);
  const size_t data_end = log_->Segments()[0].data_end_bytes;
  log_.reset();
  EXPECT_EQ(ReadFile("/log/CLOSED"), logfmt::EncodeClosedClean(1, 10));
  std::string bytes = ReadFile(SegmentPath(1));
  bytes.replace(data_end, 30, bytes.substr(96, 30));
  WriteFile(SegmentPath(1), bytes);
  LogRecoveryReport report;
  Open(TestOptions(&env_), &report);
  EXPECT_GT(report.torn_tail_bytes, 0u);
  EXPECT_EQ(ReadFile("/log/CLOSED"), "opened      \n");
}

TEST_F(LogTest, AByteWrittenFarIntoThePreallocatedTailIsSeenAndTruncated) {
  // Recovery reads a preallocated tail a chunk at a time: a write torn far
  // past the last record (as a topic's megabyte of preallocation allows) is
  // found in a later chunk, not taken for zeros.
  LogOptions options = TestOptions(&env_);
  options.segment_size_bytes = 4 << 20;
  options.preallocate_bytes = 1 << 20;
  Open(options);
  AppendMany(1, 10);
  const size_t data_end = log_->Segments()[0].data_end_bytes;
  log_.reset();
  std::string bytes = ReadFile(SegmentPath(1));
  ASSERT_GT(bytes.size(), data_end + (600u << 10));
  bytes[data_end + (600u << 10)] = 'x';
  WriteFile(SegmentPath(1), bytes);
  LogRecoveryReport report;
  Open(options, &report);
  EXPECT_EQ(report.torn_tail_bytes, bytes.size() - data_end);
  EXPECT_EQ(log_->Newest().version, 10u);
  AppendMany(11, 12);
  Open(options);
  EXPECT_EQ(ReadAll(log_.get()).size(), 12u);
}

TEST_F(LogTest, ChecksumMismatchMidLogFailsOpenNamingSegmentAndOffset) {
  Open();
  AppendMany(1, 10);
  log_.reset();
  std::string bytes = ReadFile(SegmentPath(1));
  bytes[96 + 200] ^= 0x01;  // inside record 2; records 3..10 were written after syncs
  WriteFile(SegmentPath(1), bytes);
  Status s = TryOpen(TestOptions(&env_));
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("000000000001.seg"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("offset"), std::string::npos) << s.ToString();
  // The failed open changed nothing: the bytes are as they were.
  EXPECT_EQ(ReadFile(SegmentPath(1)), bytes);
}

TEST_F(LogTest, SalvageKeepsTheLongestValidPrefixAndReportsTheRest) {
  Open();
  AppendMany(1, 10);
  log_.reset();
  std::string bytes = ReadFile(SegmentPath(1));
  bytes[96 + 200] ^= 0x01;
  WriteFile(SegmentPath(1), bytes);
  LogOptions options = TestOptions(&env_);
  options.salvage = true;
  LogRecoveryReport report;
  Open(options, &report);
  EXPECT_GT(report.salvaged_from_version, 0u);
  EXPECT_LE(report.salvaged_from_version, 3u);
  EXPECT_FALSE(report.salvage_reason.empty());
  EXPECT_EQ(log_->Newest().version, report.salvaged_from_version - 1);
  AppendMany(report.salvaged_from_version, report.salvaged_from_version + 1);
}

TEST_F(LogTest, CorruptSealedSegmentIsReportedWhenRead) {
  Open();
  AppendMany(1, 1500);
  ASSERT_GT(log_->Segments().size(), 2u);
  log_.reset();
  std::string bytes = ReadFile(SegmentPath(1));
  bytes[1000] ^= 0x10;
  WriteFile(SegmentPath(1), bytes);
  Open();  // sealed segments are not scanned when opening
  std::unique_ptr<LogIterator> it;
  ASSERT_TRUE(log_->NewIterator(0, &it).ok());
  LogEntry entry;
  while (it->Next(&entry)) {
  }
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  uint64_t records = 0;
  log_.reset();
  EXPECT_TRUE(VerifyLog(&env_, kDir, &records).IsCorruption());
}

TEST_F(LogTest, ForeignSegmentRejected) {
  Open();
  AppendMany(1, 5);
  log_.reset();
  MemEnv other_env;
  LogOptions other = TestOptions(&other_env);
  other.new_store_id = 777;
  std::unique_ptr<Log> other_log;
  ASSERT_TRUE(Log::Open(other, kDir, &other_log).ok());
  ASSERT_TRUE(AppendBody(other_log.get(), 1).ok());
  other_log.reset();
  std::string foreign;
  ASSERT_TRUE(ReadFileToString(&other_env, SegmentPath(1), &foreign).ok());
  WriteFile(SegmentPath(2), foreign);
  Status s = TryOpen(TestOptions(&env_));
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("foreign"), std::string::npos) << s.ToString();
}

TEST_F(LogTest, DuplicatedSegmentRejected) {
  Open();
  AppendMany(1, 5);
  log_.reset();
  WriteFile(SegmentPath(7), ReadFile(SegmentPath(1)));
  Status s = TryOpen(TestOptions(&env_));
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("duplicated"), std::string::npos) << s.ToString();
}

TEST_F(LogTest, MissingMiddleSegmentDetected) {
  Open();
  AppendMany(1, 2000);
  ASSERT_GT(log_->Segments().size(), 3u);
  log_.reset();
  ASSERT_TRUE(env_.RemoveFile(SegmentPath(2)).ok());
  Status s = TryOpen(TestOptions(&env_));
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("000000000002.seg is missing"), std::string::npos) << s.ToString();
}

TEST_F(LogTest, MissingOldestSegmentDetected) {
  Open();
  AppendMany(1, 2000);
  log_.reset();
  ASSERT_TRUE(env_.RemoveFile(SegmentPath(1)).ok());
  EXPECT_TRUE(TryOpen(TestOptions(&env_)).IsCorruption());
}

TEST_F(LogTest, StaleSegmentFromBeforeATruncationIsRejected) {
  Open();
  AppendMany(1, 2000);
  ASSERT_GE(log_->Segments().size(), 5u);
  const std::string stale = ReadFile(SegmentPath(4));
  ASSERT_TRUE(log_->TruncateAfter(log_->Segments()[1].first_version, /*discard_suffix=*/true, nullptr).ok());
  const uint64_t next = log_->NextVersion();
  AppendMany(next, next + 700);  // rolls past the truncation's new segment
  log_.reset();
  WriteFile(SegmentPath(4), stale);  // a segment of the cut epoch comes back
  Status s = TryOpen(TestOptions(&env_));
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("000000000004.seg is not part of the log"), std::string::npos) << s.ToString();
}

// The commits after a cut, archived: each exactly as it was, in order.
std::vector<LogEntry> ScanCut(Env* env, const std::string& dir) {
  std::vector<LogEntry> cut;
  Status s = ScanArchivedCut(env, dir, [&](const LogEntry& e) {
    cut.push_back(e);
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return cut;
}

TEST_F(LogTest, TruncateStartsANewEpochAndArchivesTheSuffix) {
  Open();
  AppendMany(1, 1000);
  LogPosition head;
  ASSERT_TRUE(log_->TruncateAfter(300, /*discard_suffix=*/false, &head).ok());
  EXPECT_EQ(head, (LogPosition{2, 300}));
  EXPECT_EQ(log_->Newest().version, 300u);
  // The cut versions are never used again: the next commit goes on past
  // the highest ever assigned, after a reopen too.
  EXPECT_EQ(log_->NextVersion(), 1001u);
  Open();
  EXPECT_EQ(log_->Newest(), (LogPosition{1, 300}));
  EXPECT_EQ(log_->NextVersion(), 1001u);
  LogCommit commit;
  ASSERT_TRUE(AppendBody(log_.get(), 1001, &commit).ok());
  EXPECT_EQ(commit.position, (LogPosition{2, 1001}));
  // Reads cross the jump; a cut version is not on the history.
  LogEntry entry;
  Status s = log_->Read(500, &entry);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("a truncation cut it"), std::string::npos) << s.ToString();
  std::unique_ptr<LogIterator> it;
  ASSERT_TRUE(log_->NewIterator(300, &it).ok());
  ASSERT_TRUE(it->Next(&entry));
  EXPECT_EQ(entry.position, (LogPosition{1, 300}));
  ASSERT_TRUE(it->Next(&entry));
  EXPECT_EQ(entry.position, (LogPosition{2, 1001}));
  EXPECT_FALSE(it->Next(&entry));
  ASSERT_TRUE(log_->NewIterator(301, &it).ok());  // a cut version: from the next commit on the history
  ASSERT_TRUE(it->Next(&entry));
  EXPECT_EQ(entry.position, (LogPosition{2, 1001}));
  uint64_t at = 0;
  ASSERT_TRUE(log_->VersionAtTime(commit.timestamp_us - 1, &at).ok());
  EXPECT_EQ(at, 300u);
  EXPECT_TRUE(log_->TruncateAfter(500, /*discard_suffix=*/false, &head).IsNotFound());
  std::vector<std::string> archived;
  ASSERT_TRUE(env_.ListDir("/log/archive/epoch-000002", &archived).ok());
  EXPECT_GE(archived.size(), 2u);  // the kept segment's tail, later segments, COMPLETE
  // The archive holds exactly the cut commits, as they were.
  std::vector<LogEntry> cut;
  ASSERT_TRUE(ScanArchivedCut(&env_, "/log/archive/epoch-000002", [&](const LogEntry& e) {
                cut.push_back(e);
                return true;
              }).ok());
  ASSERT_EQ(cut.size(), 700u);
  for (size_t i = 0; i < cut.size(); ++i) {
    EXPECT_EQ(cut[i].position, (LogPosition{1, 301 + i}));
    EXPECT_EQ(cut[i].body, CommitBody(301 + i));
  }
  auto history = log_->EpochHistory();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[1].epoch, 2u);
  EXPECT_EQ(history[1].first_version, 1001u);
}

// A store's rewind writes its RESTORE commit with the cut: both or neither.
TEST_F(LogTest, ATruncationCanWriteTheNewEpochsFirstCommitWithTheCut) {
  Open();
  AppendMany(1, 50);
  LogPosition head;
  LogCommit first;
  const LogWrite write{"RESTORE", "what the rewind did"};
  ASSERT_TRUE(log_->TruncateAfter(20, /*discard_suffix=*/false, &head, &write, &first).ok());
  EXPECT_EQ(head, (LogPosition{2, 20}));
  EXPECT_EQ(first.position, (LogPosition{2, 51}));
  EXPECT_EQ(log_->Newest(), first.position);
  EXPECT_EQ(log_->NextVersion(), 52u);
  for (bool reopened : {false, true}) {
    if (reopened) Open();
    const std::vector<LogEntry> entries = ReadAll(log_.get());
    ASSERT_EQ(entries.size(), 21u);
    EXPECT_EQ(entries.back().position, first.position);
    EXPECT_EQ(entries.back().operation, "RESTORE");
    EXPECT_EQ(entries.back().body, "what the rewind did");
    EXPECT_EQ(entries.back().timestamp_us, first.timestamp_us);
  }
  AppendMany(52, 53);
  EXPECT_EQ(ScanCut(&env_, "/log/archive/epoch-000002").size(), 30u);
  // The cut before a truncation whose first commit is all that followed:
  // that commit is cut and archived like any other.
  ASSERT_TRUE(log_->TruncateAfter(10, /*discard_suffix=*/false, &head, &write, &first).ok());
  EXPECT_EQ(first.position, (LogPosition{3, 54}));
  const std::vector<LogEntry> cut = ScanCut(&env_, "/log/archive/epoch-000003");
  ASSERT_EQ(cut.size(), 13u);  // 11-20, then 51-53 past the first cut's jump
  EXPECT_EQ(cut[9].position, (LogPosition{1, 20}));
  EXPECT_EQ(cut[10].position, (LogPosition{2, 51}));
}

TEST(LogArchiveTest, ACutIsArchivedByLinkingNotCopying) {
  TempDir temp;
  const std::string dir = temp.Sub("log");
  LogOptions options = TestOptions(Env::Default());
  std::unique_ptr<Log> log;
  ASSERT_TRUE(Log::Open(options, dir, &log).ok());
  for (uint64_t v = 1; v <= 100; ++v) ASSERT_TRUE(AppendBody(log.get(), v, nullptr).ok());
  ASSERT_EQ(log->Segments().size(), 1u);
  struct stat before {};
  ASSERT_EQ(::stat((dir + "/000000000001.seg").c_str(), &before), 0);
  ASSERT_TRUE(log->TruncateAfter(40, /*discard_suffix=*/false, nullptr).ok());
  struct stat kept {
  }, archived{};
  ASSERT_EQ(::stat((dir + "/000000000001.seg").c_str(), &kept), 0);
  ASSERT_EQ(::stat((dir + "/archive/epoch-000002/000000000001.seg").c_str(), &archived), 0);
  EXPECT_EQ(kept.st_ino, archived.st_ino);  // one file, two names
  EXPECT_EQ(kept.st_size, before.st_size);  // nothing truncated, nothing copied
  const std::vector<LogEntry> cut = ScanCut(Env::Default(), dir + "/archive/epoch-000002");
  ASSERT_EQ(cut.size(), 60u);
  EXPECT_EQ(cut.front().position, (LogPosition{1, 41}));
  EXPECT_EQ(cut.back().body, CommitBody(100));
  log.reset();
  ASSERT_TRUE(Log::Open(options, dir, &log).ok());
  EXPECT_EQ(ReadAll(log.get()).size(), 40u);
}

TEST_F(LogTest, ASecondCutInTheKeptSegmentLeavesTheFirstArchiveWhole) {
  Open();
  AppendMany(1, 100);
  ASSERT_TRUE(log_->TruncateAfter(40, /*discard_suffix=*/false, nullptr).ok());
  AppendMany(101, 105);  // epoch 2, in the successor segment
  ASSERT_TRUE(log_->TruncateAfter(20, /*discard_suffix=*/false, nullptr).ok());
  // The second cut: 21-40 of epoch 1 from the kept segment, 101-105 of epoch 2.
  const std::vector<LogEntry> second = ScanCut(&env_, "/log/archive/epoch-000003");
  ASSERT_EQ(second.size(), 25u);
  for (size_t i = 0; i < second.size(); ++i) {
    const uint64_t version = i < 20 ? 21 + i : 101 + (i - 20);
    EXPECT_EQ(second[i].position, (LogPosition{i < 20 ? 1u : 2u, version}));
    EXPECT_EQ(second[i].body, CommitBody(version));
  }
  // The first cut still reads 41-100 of epoch 1 from the same linked segment.
  const std::vector<LogEntry> first = ScanCut(&env_, "/log/archive/epoch-000002");
  ASSERT_EQ(first.size(), 60u);
  EXPECT_EQ(first.front().position, (LogPosition{1, 41}));
  EXPECT_EQ(first.back().body, CommitBody(100));
  Open();
  const std::vector<LogEntry> live = ReadAll(log_.get());
  ASSERT_EQ(live.size(), 20u);
  EXPECT_EQ(live.back().position, (LogPosition{1, 20}));
}

TEST_F(LogTest, LosingTheSegmentsAfterAnArchivedCutIsCorruptionNotTheCutHistory) {
  Open();
  AppendMany(1, 100);
  ASSERT_TRUE(log_->TruncateAfter(40, /*discard_suffix=*/false, nullptr).ok());
  AppendMany(101, 102);
  log_.reset();
  // Without its successor, segment 1 alone would read on into 41-100 of the
  // cut epoch.
  ASSERT_TRUE(env_.RemoveFile(SegmentPath(2)).ok());
  Status s = TryOpen(TestOptions(&env_));
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("newest segments are missing"), std::string::npos) << s.ToString();
}

// The same, once the archive is gone (vacuumed, or the cut discarded):
// META's epoch still says a truncation began epoch 2.
TEST_F(LogTest, LosingTheSegmentsAfterACutWhoseArchiveIsGoneIsCorruption) {
  for (bool discard : {false, true}) {
    SCOPED_TRACE(discard ? "discarded cut" : "archived cut, then vacuumed");
    ASSERT_TRUE(RemoveTree(&env_, "/log").ok());
    Open();
    AppendMany(1, 100);
    ASSERT_TRUE(log_->TruncateAfter(40, discard, nullptr).ok());
    AppendMany(101, 102);
    log_.reset();
    if (!discard) {
      ASSERT_TRUE(RemoveArchivedCut(&env_, "/log/archive/epoch-000002").ok());
    }
    ASSERT_TRUE(env_.RemoveFile(SegmentPath(2)).ok());
    Status s = TryOpen(TestOptions(&env_));
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find("META says a truncation began epoch 2"), std::string::npos) << s.ToString();
  }
}

// A META written before it held an epoch (40 bytes) still opens the log.
TEST_F(LogTest, AMetaWithoutAnEpochIsStillRead) {
  Open();
  AppendMany(1, 10);
  log_.reset();
  std::string meta = ReadFile("/log/META");
  ASSERT_EQ(meta.size(), logfmt::kMetaBytes);
  logfmt::Meta decoded;
  ASSERT_TRUE(logfmt::DecodeMeta(meta, &decoded).ok());
  // The older layout: no epoch field, its size field and checksum over 32 bytes.
  std::string old = meta.substr(0, 32);
  old[12] = static_cast<char>(logfmt::kMetaBytesWithoutEpoch);
  logfmt::PutFixed64(&old, logfmt::Hash64(old, 0));
  WriteFile("/log/META", old);
  Open();
  EXPECT_EQ(ReadAll(log_.get()).size(), 10u);
}

TEST_F(LogTest, ACutDirectoryOfATruncationThatNeverCommittedIsRemovedOnOpen) {
  Open();
  AppendMany(1, 10);
  log_.reset();
  ASSERT_TRUE(env_.CreateDir("/log/archive").ok());
  ASSERT_TRUE(env_.CreateDir("/log/archive/epoch-000002").ok());
  ASSERT_TRUE(env_.LinkFile(SegmentPath(1), "/log/archive/epoch-000002/000000000001.seg").ok());
  WriteFile("/log/archive/epoch-000002/CUT", "spool cut manifest 1\n");
  Open();
  EXPECT_FALSE(env_.FileExists("/log/archive/epoch-000002"));
  EXPECT_EQ(ReadAll(log_.get()).size(), 10u);
  LogPosition head;
  ASSERT_TRUE(log_->TruncateAfter(5, /*discard_suffix=*/false, &head).ok());
  EXPECT_EQ(ScanCut(&env_, "/log/archive/epoch-000002").size(), 5u);
}

TEST_F(LogTest, DamagedArchivedCutIsReportedNotReturned) {
  Open();
  AppendMany(1, 100);
  ASSERT_TRUE(log_->TruncateAfter(50, /*discard_suffix=*/false, nullptr).ok());
  log_.reset();
  const std::string tail = "/log/archive/epoch-000002/000000000001.seg";
  std::string bytes = ReadFile(tail);
  bytes[bytes.size() / 2] ^= 0x08;
  WriteFile(tail, bytes);
  uint64_t visited = 0;
  Status s = ScanArchivedCut(&env_, "/log/archive/epoch-000002", [&](const LogEntry& e) {
    EXPECT_EQ(e.body, CommitBody(e.position.version));
    ++visited;
    return true;
  });
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_LT(visited, 50u);
  EXPECT_TRUE(ScanArchivedCut(&env_, "/log/archive/epoch-000009", [](const LogEntry&) { return true; }).IsNotFound());
}

// The manifest's numbers decide which records a cut holds: a changed
// digit that still parses (an earlier end) must read as damage, not as a
// shorter cut.
TEST_F(LogTest, AChangedDigitInACutsManifestIsCorruption) {
  Open();
  AppendMany(1, 100);
  ASSERT_TRUE(log_->TruncateAfter(50, /*discard_suffix=*/false, nullptr).ok());
  log_.reset();
  const std::string manifest = "/log/archive/epoch-000002/CUT";
  std::string text = ReadFile(manifest);
  ASSERT_TRUE(text.starts_with("spool cut manifest 2\n")) << text;
  const size_t end = text.find(' ', text.find(' ', text.find("piece ") + 6) + 1) + 1;  // the piece's end offset
  text[end] = text[end] == '1' ? '2' : '1';
  WriteFile(manifest, text);
  Status s = ScanArchivedCut(&env_, "/log/archive/epoch-000002", [](const LogEntry&) { return true; });
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("checksum mismatch"), std::string::npos) << s.ToString();
}

TEST_F(LogTest, StaleRecordAfterTruncationIsNeverReadBack) {
  Open();
  AppendMany(1, 100);  // all in segment 1
  ASSERT_EQ(log_->Segments().size(), 1u);
  const std::string before = ReadFile(SegmentPath(1));
  ASSERT_TRUE(log_->TruncateAfter(40, /*discard_suffix=*/true, nullptr).ok());
  AppendMany(101, 101);
  log_.reset();
  // Put the cut records back, as if truncating segment 1 had not reached
  // the disk: they must stay invisible.
  WriteFile(SegmentPath(1), before);
  Open();
  std::vector<LogEntry> entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), 41u);
  EXPECT_EQ(entries[39].position, (LogPosition{1, 40}));
  EXPECT_EQ(entries[40].position, (LogPosition{2, 101}));
  EXPECT_EQ(entries[40].body, CommitBody(101));
}

TEST_F(LogTest, TruncateRejectsVersionsOutsideTheLog) {
  Open();
  AppendMany(1, 10);
  EXPECT_TRUE(log_->TruncateAfter(11, false, nullptr).IsInvalidArgument());
  EXPECT_EQ(log_->CurrentEpoch(), 1u);
  ASSERT_TRUE(log_->TruncateAfter(0, true, nullptr).ok());
  EXPECT_EQ(log_->Newest().version, 0u);
  EXPECT_EQ(log_->Oldest().version, 0u);
  AppendMany(11, 12);
  Open();
  EXPECT_EQ(ReadAll(log_.get()).size(), 2u);
  EXPECT_EQ(log_->Oldest().version, 11u);
  EXPECT_EQ(log_->BeforeOldest().version, 0u);                      // nothing before it was ever deleted
  EXPECT_TRUE(log_->TruncateAfter(5, true, nullptr).IsNotFound());  // cut already
  ASSERT_TRUE(log_->TruncateAfter(0, true, nullptr).ok());          // still whole: everything can go
}

TEST_F(LogTest, FailedFsyncIsSticky) {
  FaultEnv fault(&env_);
  Open(TestOptions(&fault));
  AppendMany(1, 3);
  fault.FailSyncAtCall(fault.io_calls() + 2);  // the write, then its sync
  LogCommit commit;
  Status s = AppendBody(log_.get(), 4, &commit);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  s = AppendBody(log_.get(), 4, &commit);
  EXPECT_TRUE(s.IsFailed()) << s.ToString();
  EXPECT_TRUE(log_->TruncateAfter(1, true, nullptr).IsFailed());
  EXPECT_EQ(log_->Newest().version, 3u);
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

TEST_F(LogTest, GroupCommitSharesOneSync) {
  GatedSyncEnv gated(&env_);
  Open(TestOptions(&gated));
  AppendMany(1, 1);
  const LogStats before = log_->Stats();
  gated.Close();
  std::thread leader([&] { ASSERT_TRUE(AppendBody(log_.get(), 2).ok()); });
  gated.WaitForBlockedSyncs(1);  // the leader is inside its sync
  constexpr int kFollowers = 3;
  std::vector<std::thread> followers;
  for (int t = 0; t < kFollowers; ++t) {
    followers.emplace_back([&, t] { ASSERT_TRUE(AppendBody(log_.get(), static_cast<uint64_t>(3 + t)).ok()); });
  }
  while (log_->Stats().queued < 1 + kFollowers) std::this_thread::yield();  // all queued behind it
  gated.Open();
  leader.join();
  for (auto& thread : followers) thread.join();
  const LogStats after = log_->Stats();
  EXPECT_EQ(after.appends - before.appends, 1u + kFollowers);
  EXPECT_EQ(after.groups - before.groups, 2u);  // the leader's, then one for all followers
  EXPECT_EQ(after.syncs - before.syncs, 2u);
  EXPECT_EQ(ReadAll(log_.get()).size(), 2u + kFollowers);
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

TEST_F(LogTest, ConcurrentAppendsGetDenseVersions) {
  Open();
  constexpr int kWriters = 8;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<uint64_t> versions;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        LogCommit commit;
        ASSERT_TRUE(AppendBody(log_.get(), static_cast<uint64_t>(t * 1000 + i), &commit).ok());
        std::lock_guard<std::mutex> lock(mu);
        versions.push_back(commit.position.version);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::sort(versions.begin(), versions.end());
  for (size_t i = 0; i < versions.size(); ++i) EXPECT_EQ(versions[i], i + 1);
  EXPECT_EQ(ReadAll(log_.get()).size(), static_cast<size_t>(kWriters * kEach));
}

TEST_F(LogTest, TimestampLookupAtTheEdges) {
  Open();
  std::vector<uint64_t> ts;
  for (uint64_t i = 1; i <= 1500; ++i) {
    env_.SetNowMicros(1'000'000 + i * 10);
    LogCommit commit;
    ASSERT_TRUE(AppendBody(log_.get(), i, &commit).ok());
    ts.push_back(commit.timestamp_us);
  }
  ASSERT_GT(log_->Segments().size(), 2u);
  uint64_t version = 0;
  EXPECT_TRUE(log_->VersionAtTime(ts[0] - 1, &version).IsNotFound());
  ASSERT_TRUE(log_->VersionAtTime(ts[0], &version).ok());
  EXPECT_EQ(version, 1u);
  for (uint64_t i : {2ull, 500ull, 777ull, 1499ull, 1500ull}) {
    ASSERT_TRUE(log_->VersionAtTime(ts[i - 1], &version).ok());
    EXPECT_EQ(version, i);
    ASSERT_TRUE(log_->VersionAtTime(ts[i - 1] + 5, &version).ok());  // between i and i+1
    EXPECT_EQ(version, i);
  }
  // Every segment boundary.
  for (const LogSegmentInfo& segment : log_->Segments()) {
    if (segment.first_version < 2) continue;
    ASSERT_TRUE(log_->VersionAtTime(ts[segment.first_version - 1] - 1, &version).ok());
    EXPECT_EQ(version, segment.first_version - 1);
  }
  ASSERT_TRUE(log_->VersionAtTime(UINT64_MAX, &version).ok());
  EXPECT_EQ(version, 1500u);
  Open();  // the same answers from a reopened log
  ASSERT_TRUE(log_->VersionAtTime(ts[776] + 3, &version).ok());
  EXPECT_EQ(version, 777u);
  // After a truncation, a time inside the cut range resolves to the cut.
  ASSERT_TRUE(log_->TruncateAfter(1000, true, nullptr).ok());
  ASSERT_TRUE(log_->VersionAtTime(ts[1200], &version).ok());
  EXPECT_EQ(version, 1000u);
  // After retention, times before the oldest retained commit are not found.
  uint64_t deleted = 0;
  ASSERT_TRUE(log_->DeleteSegmentsBefore(900, &deleted).ok());
  ASSERT_GT(deleted, 0u);
  EXPECT_TRUE(log_->VersionAtTime(ts[0], &version).IsNotFound());
  const uint64_t oldest = log_->Oldest().version;
  ASSERT_TRUE(log_->VersionAtTime(ts[oldest - 1], &version).ok());
  EXPECT_EQ(version, oldest);
}

TEST_F(LogTest, RetentionDeletesWholeSegmentsBelowThePin) {
  Open();
  AppendMany(1, 2000);
  auto segments = log_->Segments();
  ASSERT_GT(segments.size(), 3u);
  uint64_t deleted = 0;
  ASSERT_TRUE(log_->DeleteSegmentsBefore(segments[2].first_version + 1, &deleted).ok());
  EXPECT_EQ(deleted, 2u);
  EXPECT_EQ(log_->Oldest().version, segments[2].first_version);
  LogEntry entry;
  EXPECT_TRUE(log_->Read(1, &entry).IsNotFound());
  Open();
  EXPECT_EQ(log_->Oldest().version, segments[2].first_version);
  EXPECT_EQ(ReadAll(log_.get()).size(), 2000 - segments[2].first_version + 1);
  // Never the segment being written, even when everything is older.
  ASSERT_TRUE(log_->DeleteSegmentsBefore(UINT64_MAX, &deleted).ok());
  EXPECT_EQ(log_->Segments().size(), 1u);
  AppendMany(2001, 2001);
}

// Retention can delete the segment a truncation kept: the oldest segment
// then starts past a jump, and the versions in it are not on the history.
TEST_F(LogTest, AfterRetentionTheOldestSegmentCanStartPastAJump) {
  Open();
  AppendMany(1, 300);
  ASSERT_TRUE(log_->TruncateAfter(200, /*discard_suffix=*/true, nullptr).ok());
  AppendMany(301, 2000);
  uint64_t deleted = 0;
  ASSERT_TRUE(log_->DeleteSegmentsBefore(301, &deleted).ok());
  ASSERT_GT(deleted, 0u);
  for (bool reopened : {false, true}) {
    if (reopened) Open();
    EXPECT_EQ(log_->Oldest().version, 301u);
    EXPECT_EQ(log_->BeforeOldest().version, 200u);
    std::unique_ptr<LogIterator> it;
    ASSERT_TRUE(log_->NewIterator(250, &it).ok());  // cut: from the oldest retained commit
    LogEntry entry;
    ASSERT_TRUE(it->Next(&entry));
    EXPECT_EQ(entry.position, (LogPosition{2, 301}));
    EXPECT_TRUE(log_->NewIterator(200, &it).IsNotFound());  // on the history, but deleted
    EXPECT_TRUE(log_->Read(250, &entry).IsNotFound());
  }
}

TEST_F(LogTest, SealedSegmentIndexFilesAreWrittenCheckedAndCleanedUp) {
  Open();
  AppendMany(1, 2000);
  const auto segments = log_->Segments();
  ASSERT_GT(segments.size(), 3u);
  EXPECT_TRUE(env_.FileExists("/log/000000000001.idx"));
  EXPECT_FALSE(env_.FileExists("/log/" + segments.back().file_name.substr(0, 12) + ".idx"));  // still written to
  // A damaged index file is not trusted: answers come from the segment.
  std::string bytes = ReadFile("/log/000000000002.idx");
  bytes[60] ^= 0x40;
  WriteFile("/log/000000000002.idx", bytes);
  // An index whose segment is gone (a crash between the two removals) is
  // removed by the next open; the sealed segments' stay.
  WriteFile("/log/000000000099.idx", bytes);
  Open();
  EXPECT_FALSE(env_.FileExists("/log/000000000099.idx"));
  EXPECT_TRUE(env_.FileExists("/log/000000000001.idx"));
  EXPECT_TRUE(env_.FileExists("/log/000000000003.idx"));
  LogEntry entry;
  ASSERT_TRUE(log_->Read(segments[1].first_version + 3, &entry).ok());
  EXPECT_EQ(entry.body, CommitBody(segments[1].first_version + 3));
  ASSERT_TRUE(log_->Read(segments[0].last_version, &entry).ok());
  EXPECT_EQ(entry.body, CommitBody(segments[0].last_version));
  // Retention and truncation remove the index files of what they remove.
  uint64_t deleted = 0;
  ASSERT_TRUE(log_->DeleteSegmentsBefore(segments[1].first_version, &deleted).ok());
  EXPECT_FALSE(env_.FileExists("/log/000000000001.idx"));
  ASSERT_TRUE(log_->TruncateAfter(segments[1].first_version + 1, true, nullptr).ok());
  EXPECT_FALSE(env_.FileExists("/log/000000000002.idx"));
  EXPECT_FALSE(env_.FileExists("/log/000000000003.idx"));
}

TEST_F(LogTest, ReadOnlyOpenChangesNothing) {
  Open();
  AppendMany(1, 10);
  const size_t data_end = log_->Segments()[0].data_end_bytes;
  log_.reset();
  std::string bytes = ReadFile(SegmentPath(1));
  bytes.replace(data_end, 5, "junk!");
  WriteFile(SegmentPath(1), bytes);
  LogOptions options = TestOptions(&env_);
  options.read_only = true;
  LogRecoveryReport report;
  Open(options, &report);
  EXPECT_EQ(log_->Newest().version, 10u);
  EXPECT_GT(report.torn_tail_bytes, 0u);
  LogCommit commit;
  EXPECT_EQ(log_->Append(LogWrite{"WRITE", "x"}, &commit).code(), Status::Code::kNotSupported);
  log_.reset();
  EXPECT_EQ(ReadFile(SegmentPath(1)), bytes);
}

// A reader's Refresh takes in what its writer appended since, reading on
// from where it stopped, and says when only an open can see past a change.
class LogRefreshTest : public LogTest {
 protected:
  void OpenReader() {
    LogOptions options = TestOptions(&env_);
    options.read_only = true;
    ASSERT_TRUE(Log::Open(options, kDir, &reader_).ok());
  }
  bool Refresh() {
    bool stale = true;
    Status s = reader_->Refresh(&stale);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return stale;
  }
  std::unique_ptr<Log> reader_;
};

TEST_F(LogRefreshTest, ARefreshedReaderSeesAndReadsWhatItsWriterAppendedSince) {
  Open();
  AppendMany(1, 3);
  OpenReader();
  AppendMany(4, 9);
  EXPECT_EQ(reader_->Newest().version, 3u);
  EXPECT_FALSE(Refresh());
  EXPECT_EQ(reader_->Newest().version, 9u);
  const std::vector<LogEntry> entries = ReadAll(reader_.get());
  ASSERT_EQ(entries.size(), 9u);
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, CommitBody(i + 1));
  LogEntry entry;
  ASSERT_TRUE(reader_->Read(7, &entry).ok());
  EXPECT_EQ(entry.body, CommitBody(7));
  uint64_t version = 0;
  ASSERT_TRUE(reader_->VersionAtTime(entry.timestamp_us, &version).ok());
  EXPECT_EQ(version, 7u);
  // Nothing new: nothing changes.
  EXPECT_FALSE(Refresh());
  EXPECT_EQ(reader_->Newest().version, 9u);
}

TEST_F(LogRefreshTest, AReaderOfAnEmptyLogSeesItsFirstCommits) {
  Open();
  OpenReader();
  EXPECT_EQ(reader_->Newest().version, 0u);
  AppendMany(1, 2);
  EXPECT_FALSE(Refresh());
  EXPECT_EQ(reader_->Oldest().version, 1u);
  EXPECT_EQ(reader_->Newest().version, 2u);
}

TEST_F(LogRefreshTest, ANewSegmentSinceMakesTheReaderStale) {
  Open();
  AppendMany(1, 2);
  OpenReader();
  const uint64_t segments = log_->Segments().size();
  uint64_t v = 3;
  while (log_->Segments().size() == segments) {
    AppendMany(v, v);
    ++v;
  }
  EXPECT_TRUE(Refresh());
  EXPECT_EQ(reader_->Newest().version, 2u);  // took in nothing
  OpenReader();
  EXPECT_EQ(reader_->Newest().version, v - 1);
}

TEST_F(LogRefreshTest, ARecordStillBeingWrittenMakesTheReaderStaleNotCorrupt) {
  Open();
  AppendMany(1, 4);
  OpenReader();
  const size_t data_end = log_->Segments().back().data_end_bytes;
  log_.reset();
  // The first bytes of a record header, the rest not written yet.
  std::unique_ptr<File> file;
  ASSERT_TRUE(env_.OpenFile(SegmentPath(1), OpenMode::kReadWrite, &file).ok());
  ASSERT_TRUE(file->Write(data_end, std::string(12, '\x5a')).ok());
  EXPECT_TRUE(Refresh());
  EXPECT_EQ(reader_->Newest().version, 4u);
}

TEST_F(LogRefreshTest, OnlyAReadOnlyLogRefreshes) {
  Open();
  AppendMany(1, 2);
  bool stale = false;
  EXPECT_EQ(log_->Refresh(&stale).code(), Status::Code::kNotSupported);
}

TEST_F(LogTest, NoSyncModeStillRecoversAPrefix) {
  FaultEnv fault(&env_);
  const LogOptions options = NoSyncOptions(&fault);
  Open(options);
  AppendMany(1, 200);
  EXPECT_EQ(log_->Stats().syncs, 0u);
  fault.CrashAtCall(fault.io_calls() + 1);
  log_.reset();
  fault.SimulateCrash(CrashMode::kPowerLoss, 1);
  Open(TestOptions(&fault));
  std::vector<LogEntry> entries = ReadAll(log_.get());
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, CommitBody(i + 1));
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

// Opening syncs the tail a writer left, so that records it wrote and never
// synced (it died first) are durable before anything builds on them —
// unless it closed cleanly, having synced them itself, as CLOSED then says.
// An open takes that back before anything else.
TEST_F(LogTest, OnlyACleanCloseLetsTheNextOpenSkipSyncingTheTail) {
  FaultEnv fault(&env_);
  const LogOptions options = NoSyncOptions(&fault);
  Open(options);
  AppendMany(1, 3);
  log_.reset();  // syncs 1-3 and says so
  EXPECT_EQ(ReadFile("/log/CLOSED"), logfmt::EncodeClosedClean(1, 3));
  uint64_t syncs = fault.sync_calls();
  Open(options);
  EXPECT_EQ(fault.sync_calls(), syncs);
  EXPECT_EQ(ReadFile("/log/CLOSED"), "opened      \n");

  AppendMany(4, 5);
  fault.CrashAtCall(fault.io_calls() + 1);  // the writer dies before its close
  log_.reset();
  fault.SimulateCrash(CrashMode::kProcessKill, 1);  // 4 and 5 stay in the page cache
  syncs = fault.sync_calls();
  Open(options);  // reads 4 and 5: makes them durable
  EXPECT_GT(fault.sync_calls(), syncs);
  EXPECT_EQ(log_->Newest().version, 5u);
  fault.CrashAtCall(fault.io_calls() + 1);
  log_.reset();
  fault.SimulateCrash(CrashMode::kPowerLoss, 1);
  Open(options);
  EXPECT_EQ(log_->Newest().version, 5u);
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

TEST_F(LogTest, AnUnsyncedAppendIsDurableOnlyOnceASyncedOneFollows) {
  FaultEnv fault(&env_);
  Open(TestOptions(&fault));
  LogCommit commit;
  ASSERT_TRUE(log_->Append(LogWrite{"WRITE", CommitBody(1)}, &commit).ok());
  ASSERT_TRUE(log_->Append(LogWrite{"EVENT", CommitBody(2), /*sync=*/false}, &commit).ok());
  EXPECT_EQ(log_->Stats().syncs, 1u);  // the first append's only
  // A power loss now loses the unsynced record, and only it.
  fault.CrashAtCall(fault.io_calls() + 1);
  log_.reset();
  fault.SimulateCrash(CrashMode::kPowerLoss, 1);
  Open(TestOptions(&fault));
  std::vector<LogEntry> entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].body, CommitBody(1));

  // The next synced append makes an unsynced one before it durable.
  ASSERT_TRUE(log_->Append(LogWrite{"EVENT", CommitBody(2), /*sync=*/false}, &commit).ok());
  ASSERT_TRUE(log_->Append(LogWrite{"WRITE", CommitBody(3)}, &commit).ok());
  fault.CrashAtCall(fault.io_calls() + 1);
  log_.reset();
  fault.SimulateCrash(CrashMode::kPowerLoss, 2);
  Open(TestOptions(&fault));
  entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), 3u);
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, CommitBody(i + 1));
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

TEST_F(LogTest, AnAsyncAppendReturnsBeforeItsSyncAndIsSeenOnceDurable) {
  GatedSyncEnv gated(&env_);
  Open(TestOptions(&gated));
  AppendMany(1, 1);
  gated.Close();
  std::unique_ptr<PendingAppend> second, third;
  const std::string body2 = CommitBody(2), body3 = CommitBody(3);
  ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", body2}, &second).ok());
  ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", body3}, &third).ok());
  gated.WaitForBlockedSyncs(1);           // the log's thread is inside the sync of version 2
  EXPECT_EQ(log_->Newest().version, 1u);  // nothing unsynced is visible
  EXPECT_EQ(ReadAll(log_.get()).size(), 1u);
  gated.Open();
  LogCommit commit;
  ASSERT_TRUE(third->Wait(&commit).ok());
  EXPECT_EQ(commit.position.version, 3u);
  ASSERT_TRUE(second->Wait(&commit).ok());
  EXPECT_EQ(commit.position.version, 2u);
  std::vector<LogEntry> entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), 3u);
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, CommitBody(i + 1));
  second.reset();  // before the log they belong to
  third.reset();
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

TEST_F(LogTest, AsyncAndWaitingAppendsFromOneThreadKeepTheirOrder) {
  Open();
  std::vector<std::unique_ptr<PendingAppend>> pending;
  std::vector<std::string> bodies;
  for (uint64_t i = 1; i <= 60; ++i) bodies.push_back(CommitBody(i));
  for (uint64_t i = 1; i <= 60; ++i) {
    if (i % 3 == 0) {
      LogCommit commit;
      ASSERT_TRUE(log_->Append(LogWrite{"WRITE", bodies[i - 1]}, &commit).ok());
      EXPECT_EQ(commit.position.version, i);  // and every async append before it is durable
      for (auto& p : pending) {
        LogCommit earlier;
        ASSERT_TRUE(p->Wait(&earlier).ok());
        EXPECT_LT(earlier.position.version, i);
      }
      pending.clear();
    } else {
      pending.emplace_back();
      ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", bodies[i - 1]}, &pending.back()).ok());
    }
  }
  std::vector<LogEntry> entries = ReadAll(log_.get());
  ASSERT_EQ(entries.size(), 60u);
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, CommitBody(i + 1));
}

TEST_F(LogTest, AFailedSyncFailsTheAsyncAppendsQueuedBehindIt) {
  FaultEnv fault(&env_);
  GatedSyncEnv gated(&fault);
  Open(TestOptions(&gated));
  AppendMany(1, 1);
  gated.Close();
  fault.FailSyncAtCall(fault.io_calls() + 2);  // the write of version 2, then its sync
  std::unique_ptr<PendingAppend> second, third;
  const std::string body2 = CommitBody(2), body3 = CommitBody(3);
  ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", body2}, &second).ok());
  gated.WaitForBlockedSyncs(1);
  ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", body3}, &third).ok());  // queued behind the failing group
  gated.Open();
  LogCommit commit;
  EXPECT_TRUE(second->Wait(&commit).IsIOError());
  EXPECT_TRUE(third->Wait(&commit).IsFailed());
  EXPECT_EQ(log_->Newest().version, 1u);
  std::unique_ptr<PendingAppend> refused;
  EXPECT_TRUE(log_->AppendAsync(LogWrite{"WRITE", body3}, &refused).IsFailed());
  second.reset();  // before the log they belong to
  third.reset();
  refused.reset();
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

TEST_F(LogTest, APowerLossKeepsAPrefixOfTheAsyncAppends) {
  FaultEnv fault(&env_);
  Open(TestOptions(&fault));
  std::vector<std::string> bodies;
  for (uint64_t i = 1; i <= 40; ++i) bodies.push_back(CommitBody(i));
  std::vector<std::unique_ptr<PendingAppend>> pending(bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i)
    ASSERT_TRUE(log_->AppendAsync(LogWrite{"WRITE", bodies[i]}, &pending[i]).ok());
  LogCommit commit;
  ASSERT_TRUE(pending[19]->Wait(&commit).ok());  // acknowledged: versions 1..20 are durable
  fault.CrashAtCall(fault.io_calls() + 1);
  for (auto& p : pending) p.reset();
  log_.reset();
  fault.SimulateCrash(CrashMode::kPowerLoss, 7);
  Open(TestOptions(&fault));
  std::vector<LogEntry> entries = ReadAll(log_.get());
  EXPECT_GE(entries.size(), 20u);
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(entries[i].body, CommitBody(i + 1));
  log_.reset();  // closed while its Env is alive: the close writes CLOSED
}

}  // namespace
}  // namespace spool
