// The durable topic: messages read back exactly at dense offsets that never
// move, across batches, threads, reopening, retention and crashes, by Read
// and by cursors that go on where they stopped; every mistake and every
// damaged byte refused with a clear status.
#include "spool/stream/topic.h"

#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "gated_sync_env.h"
#include "read_counting_env.h"
#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"
#include "spool/txnlog/log.h"
#include "temp_dir.h"
#include "topic_format.h"

namespace spool {
namespace {

constexpr uint64_t kHourUs = 3600ull * 1'000'000;
constexpr uint64_t kStartUs = 1'767'225'600'000'000;  // 2026-01-01 00:00:00 UTC
constexpr char kDir[] = "/orders";

using Batch = std::vector<std::pair<std::string, std::string>>;

// Small segments, so that a few hundred KiB of messages fill several.
TopicConfig SmallSegments(uint64_t age_us = 0, uint64_t bytes = 0) {
  TopicConfig config;
  config.retention = TopicRetention{age_us, bytes};
  config.segment_size_bytes = kMinTopicSegmentBytes;
  return config;
}

// Bytes zstd cannot shrink, so that they fill segments as counted.
std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

Status Produce(Topic* topic, const Batch& batch, TopicProduced* produced = nullptr) {
  std::vector<TopicWrite> writes;
  for (const auto& [key, value] : batch) writes.push_back(TopicWrite{key, value});
  TopicProduced ignored;
  return topic->Produce(writes, produced != nullptr ? produced : &ignored);
}

// `count` messages of `value_bytes` random bytes each, keyed "k<first + i>".
Batch MakeBatch(std::mt19937_64& rng, uint64_t first, size_t count, size_t value_bytes) {
  Batch batch;
  for (size_t i = 0; i < count; ++i) batch.emplace_back("k" + std::to_string(first + i), RandomBytes(rng, value_bytes));
  return batch;
}

std::vector<TopicMessage> ReadFrom(Topic* topic, uint64_t from, TopicReadLimits limits = {}) {
  std::vector<TopicMessage> out;
  Status s = topic->Read(from, limits, [&](const TopicMessage& m) {
    out.push_back(m);
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Checks that `got` holds `model[from ..]` at offsets from `from` on.
void ExpectMessages(const std::vector<TopicMessage>& got, const Batch& model, uint64_t from) {
  ASSERT_EQ(got.size(), model.size() - from);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].offset, from + i);
    ASSERT_EQ(got[i].key, model[from + i].first) << "offset " << from + i;
    ASSERT_EQ(got[i].value, model[from + i].second) << "offset " << from + i;
  }
}

class TopicTest : public ::testing::Test {
 protected:
  void SetUp() override { env_.SetNowMicros(kStartUs); }

  std::unique_ptr<Topic> CreateAndOpen(const TopicConfig& config = SmallSegments()) {
    Status s = Topic::Create(&env_, kDir, config);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return Reopen(nullptr);
  }
  // Closes `open` (one handle at a time may hold a topic) and opens it again.
  std::unique_ptr<Topic> Reopen(std::unique_ptr<Topic> open) {
    open.reset();
    std::unique_ptr<Topic> topic;
    Status s = Topic::Open(&env_, kDir, &topic);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return topic;
  }
  // Appends `batch` to the topic and to `model_`; checks its offsets.
  void ProduceToModel(Topic* topic, const Batch& batch) {
    TopicProduced produced;
    Status s = Produce(topic, batch, &produced);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(produced.first_offset, model_.size());
    ASSERT_EQ(produced.count, batch.size());
    model_.insert(model_.end(), batch.begin(), batch.end());
  }

  MemEnv env_;
  Batch model_;
  std::mt19937_64 rng_{42};
};

// --- Round trips ------------------------------------------------------------

TEST_F(TopicTest, BinaryAndEmptyKeysAndValuesReadBackExactly) {
  auto topic = CreateAndOpen();
  const std::string nul_and_high("\0\xff\x80z\0", 5);
  ProduceToModel(topic.get(), {{"", ""}, {nul_and_high, "v"}, {"k", nul_and_high}, {"", RandomBytes(rng_, 100'000)}});
  ProduceToModel(topic.get(), {{"key", ""}});
  const std::vector<TopicMessage> got = ReadFrom(topic.get(), 0);
  ExpectMessages(got, model_, 0);
  EXPECT_EQ(got[0].timestamp_us, got[3].timestamp_us) << "one batch, one record, one timestamp";
  EXPECT_LT(got[3].timestamp_us, got[4].timestamp_us);
  topic = Reopen(std::move(topic));
  ExpectMessages(ReadFrom(topic.get(), 0), model_, 0);
}

TEST_F(TopicTest, OffsetsStayDenseAcrossBatchesAndReopens) {
  auto topic = CreateAndOpen();
  uint64_t oldest = 99;
  ASSERT_TRUE(Topic::OldestOffset(&env_, kDir, &oldest).ok());
  EXPECT_EQ(oldest, 0u);  // empty
  for (int round = 0; round < 3; ++round) {
    for (size_t n : {1u, 5u, 2u}) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), n, 10));
    topic = Reopen(std::move(topic));
    const TopicInfo info = topic->Info();
    EXPECT_EQ(info.oldest_offset, 0u);
    EXPECT_EQ(info.next_offset, model_.size());
    EXPECT_EQ(info.messages, model_.size());
    ASSERT_TRUE(Topic::OldestOffset(&env_, kDir, &oldest).ok());
    EXPECT_EQ(oldest, 0u);
  }
  ExpectMessages(ReadFrom(topic.get(), 0), model_, 0);
}

TEST_F(TopicTest, ReadingFromTheMiddleOfABatchStartsAtThatOffset) {
  auto topic = CreateAndOpen();
  for (int i = 0; i < 100; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 3, 700));
  ASSERT_GT(topic->Info().segments, 2u) << "the search must cross segments";
  for (uint64_t offset = 0; offset < model_.size(); ++offset) {
    const std::vector<TopicMessage> got = ReadFrom(topic.get(), offset, TopicReadLimits{2, UINT64_MAX});
    ASSERT_EQ(got.size(), offset + 1 < model_.size() ? 2u : 1u);
    ASSERT_EQ(got[0].offset, offset);
    ASSERT_EQ(got[0].value, model_[offset].second);
  }
  ExpectMessages(ReadFrom(topic.get(), 151), model_, 151);
}

TEST_F(TopicTest, ByteLimitStopsBeforeTheMessageThatPassesItButVisitsOneAtLeast) {
  auto topic = CreateAndOpen();
  ProduceToModel(topic.get(), {{"a", std::string(10, 'x')}, {"b", std::string(10, 'y')}, {"c", std::string(10, 'z')}});
  EXPECT_EQ(ReadFrom(topic.get(), 0, TopicReadLimits{UINT64_MAX, 22}).size(), 2u);
  EXPECT_EQ(ReadFrom(topic.get(), 0, TopicReadLimits{UINT64_MAX, 21}).size(), 1u);
  EXPECT_EQ(ReadFrom(topic.get(), 0, TopicReadLimits{UINT64_MAX, 1}).size(), 1u);
  uint64_t visited = 0;
  ASSERT_TRUE(topic->Read(0, {}, [&](const TopicMessage&) { return ++visited < 2; }).ok());
  EXPECT_EQ(visited, 2u) << "visit returning false stops the read";
}

TEST_F(TopicTest, ReadingAtTheEndVisitsNothingAndPastItNamesTheEnd) {
  auto topic = CreateAndOpen();
  EXPECT_TRUE(ReadFrom(topic.get(), 0).empty());
  Status s = topic->Read(1, {}, [](const TopicMessage&) { return true; });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ProduceToModel(topic.get(), MakeBatch(rng_, 0, 4, 3));
  EXPECT_TRUE(ReadFrom(topic.get(), 4).empty());
  s = topic->Read(5, {}, [](const TopicMessage&) { return true; });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message(), std::string("topic ") + kDir + ": offset 5 is past the end (next offset: 4)");
}

// --- Cursors -----------------------------------------------------------------

// Appends what `cursor` visits within `limits` to `*out`.
Status ReadOn(TopicCursor* cursor, std::vector<TopicMessage>* out, TopicReadLimits limits = {}) {
  return cursor->Read(limits, [out](const TopicMessage& m) {
    out->push_back(m);
    return true;
  });
}

std::unique_ptr<TopicCursor> NewCursorAt(Topic* topic, uint64_t offset) {
  std::unique_ptr<TopicCursor> cursor;
  Status s = topic->NewCursor(offset, &cursor);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return cursor;
}

TEST_F(TopicTest, CursorGoesOnWhereItStoppedThoughReadsSplitRecords) {
  auto topic = CreateAndOpen();
  for (size_t i = 0; i < 60; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1 + i % 7, 700));
  ASSERT_GT(topic->Info().segments, 2u) << "the cursor must cross segments";
  for (uint64_t from : {0u, 5u}) {
    auto cursor = NewCursorAt(topic.get(), from);
    std::vector<TopicMessage> got;
    for (uint64_t n = 1; got.size() < model_.size() - from; n = n % 5 + 1) {
      ASSERT_EQ(cursor->position().offset, from + got.size());
      const size_t before = got.size();
      ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{n, UINT64_MAX}).ok());
      ASSERT_EQ(got.size() - before, std::min<uint64_t>(n, model_.size() - from - before));
    }
    ExpectMessages(got, model_, from);
    ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
    EXPECT_EQ(got.size(), model_.size() - from) << "at the end a Read visits nothing";
  }
}

TEST_F(TopicTest, CursorLimitsAndStopsAsReadDoesAndMovesPastWhatItVisited) {
  auto topic = CreateAndOpen();
  ProduceToModel(topic.get(), {{"a", std::string(10, 'x')}, {"b", std::string(10, 'y')}, {"c", std::string(10, 'z')}});
  ProduceToModel(topic.get(), {{"d", "1"}});
  auto cursor = NewCursorAt(topic.get(), 0);
  std::vector<TopicMessage> got;
  ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{UINT64_MAX, 21}).ok());
  EXPECT_EQ(got.size(), 1u);
  ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{UINT64_MAX, 1}).ok());
  EXPECT_EQ(got.size(), 2u) << "one message at least";
  ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{0, UINT64_MAX}).ok());
  EXPECT_EQ(got.size(), 2u);
  ASSERT_TRUE(cursor
                  ->Read({},
                         [&](const TopicMessage& m) {
                           got.push_back(m);
                           return false;
                         })
                  .ok());
  EXPECT_EQ(cursor->position().offset, 3u) << "past the message visit returned false for";
  ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
  ExpectMessages(got, model_, 0);
}

TEST_F(TopicTest, CursorSeesBatchesProducedAfterItReachedTheEnd) {
  auto topic = CreateAndOpen();
  auto cursor = NewCursorAt(topic.get(), 0);  // on an empty topic
  std::vector<TopicMessage> got;
  for (int round = 0; round < 40; ++round) {
    ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
    ASSERT_EQ(got.size(), model_.size());
    for (int i = 0; i <= round % 3; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 2, 2000));
  }
  ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
  EXPECT_GT(topic->Info().segments, 2u) << "the cursor followed the log into new segments";
  ExpectMessages(got, model_, 0);
}

TEST_F(TopicTest, CursorOvertakenByRetentionFailsWithOutOfRangeOnEveryRead) {
  auto topic = CreateAndOpen(SmallSegments(/*age_us=*/0, /*bytes=*/3 * kMinTopicSegmentBytes));
  ProduceToModel(topic.get(), MakeBatch(rng_, 0, 4, 3000));
  auto cursor = NewCursorAt(topic.get(), 0);
  std::vector<TopicMessage> got;
  ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{1, UINT64_MAX}).ok());
  for (int i = 0; i < 200; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1, 3000));
  const uint64_t oldest = topic->Info().oldest_offset;
  ASSERT_GT(oldest, 1u) << "the producer's retention went past the cursor";
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status s = ReadOn(cursor.get(), &got);
    EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
    EXPECT_EQ(s.message(), std::string("topic ") + kDir + ": offset 1 is no longer retained (oldest retained offset: " +
                               std::to_string(oldest) + ")");
  }
  EXPECT_EQ(got.size(), 1u);
}

// A record as large as most of a segment, so each lands in a segment of its own.
TEST_F(TopicTest, CursorGoesOnAfterRetentionDeletedTheSegmentItHadFinished) {
  auto topic = CreateAndOpen(SmallSegments(/*age_us=*/0, /*bytes=*/100'000));
  ProduceToModel(topic.get(), MakeBatch(rng_, 0, 1, 40'000));
  auto cursor = NewCursorAt(topic.get(), 0);
  std::vector<TopicMessage> got;
  ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
  ProduceToModel(topic.get(), MakeBatch(rng_, 1, 1, 40'000));
  ProduceToModel(topic.get(), MakeBatch(rng_, 2, 1, 40'000));
  ASSERT_EQ(topic->Info().oldest_offset, 1u) << "retention deleted the segment the cursor's iterator is in";
  ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
  ExpectMessages(got, model_, 0);
}

TEST_F(TopicTest, CursorResumedOnAReopenedReaderGoesOnFromItsPosition) {
  auto topic = CreateAndOpen();
  ProduceToModel(topic.get(), MakeBatch(rng_, 0, 5, 500));
  std::unique_ptr<Topic> reader;
  ASSERT_TRUE(Topic::OpenForReading(&env_, kDir, &reader).ok());
  auto cursor = NewCursorAt(reader.get(), 0);
  std::vector<TopicMessage> got;
  ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{3, UINT64_MAX}).ok());
  // Resumed from inside a record, then from the end of one.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 50; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 3, 700));
    const TopicPosition position = cursor->position();
    cursor.reset();
    ASSERT_TRUE(Topic::OpenForReading(&env_, kDir, &reader).ok());
    Status s = reader->ResumeCursor(position, &cursor);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
    ASSERT_EQ(got.size(), model_.size());
  }
  ExpectMessages(got, model_, 0);
}

// --- Concurrency -------------------------------------------------------------

TEST_F(TopicTest, ConcurrentProducersGetDistinctDenseOffsetsAndEachBatchStaysContiguous) {
  auto topic = CreateAndOpen();
  constexpr int kThreads = 8;
  constexpr int kBatches = 40;
  struct Sent {
    TopicProduced produced;
    Batch batch;
  };
  std::vector<std::vector<Sent>> sent(kThreads);
  std::atomic<bool> producing{true};
  std::atomic<uint64_t> reader_failures{0};
  std::thread reader([&] {  // reads while producers write: always a dense prefix
    while (producing) {
      uint64_t expected = 0;
      Status s = topic->Read(0, {}, [&](const TopicMessage& m) { return m.offset == expected++; });
      if (!s.ok()) ++reader_failures;
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      for (int b = 0; b < kBatches; ++b) {
        Batch batch;
        for (uint64_t i = 0; i < 1 + rng() % 7; ++i) {
          batch.emplace_back(std::to_string(t), std::to_string(static_cast<uint64_t>(b) * 100 + i));
        }
        Sent s{{}, batch};
        ASSERT_TRUE(Produce(topic.get(), batch, &s.produced).ok());
        sent[static_cast<size_t>(t)].push_back(std::move(s));
      }
    });
  }
  for (std::thread& p : producers) p.join();
  producing = false;
  reader.join();
  EXPECT_EQ(reader_failures, 0u);

  const std::vector<TopicMessage> all = ReadFrom(topic.get(), 0);
  std::vector<int> owners(all.size(), 0);
  for (const auto& batches : sent) {
    for (const Sent& s : batches) {
      ASSERT_EQ(s.produced.count, s.batch.size());
      for (size_t i = 0; i < s.batch.size(); ++i) {
        const uint64_t offset = s.produced.first_offset + i;
        ASSERT_LT(offset, all.size());
        ++owners[offset];
        EXPECT_EQ(all[offset].key, s.batch[i].first);
        EXPECT_EQ(all[offset].value, s.batch[i].second);
        EXPECT_EQ(all[offset].timestamp_us, s.produced.timestamp_us);
      }
    }
  }
  for (size_t offset = 0; offset < owners.size(); ++offset) ASSERT_EQ(owners[offset], 1) << "offset " << offset;
  std::printf("[topic] %d batches from %d threads\n", kThreads * kBatches, kThreads);
}

TEST(TopicGroupTest, BatchesQueuedBehindASyncShareTheNextRecordAndKeepTheirOwnOffsets) {
  MemEnv mem;
  testing::GatedSyncEnv gated(&mem);
  ASSERT_TRUE(Topic::Create(&gated, kDir, SmallSegments()).ok());
  std::unique_ptr<Topic> topic;
  ASSERT_TRUE(Topic::Open(&gated, kDir, &topic).ok());
  const Batch a{{"a", "1"}, {"a", "2"}};
  const Batch b{{"b", "1"}, {"b", "2"}, {"b", "3"}};
  const Batch c{{"c", "1"}};
  TopicProduced produced_a, produced_b, produced_c;
  gated.Close();
  std::thread leader([&] { EXPECT_TRUE(Produce(topic.get(), a, &produced_a).ok()); });
  gated.WaitForBlockedSyncs(1);  // the leader is inside its sync
  std::thread second([&] { EXPECT_TRUE(Produce(topic.get(), b, &produced_b).ok()); });
  std::thread third([&] { EXPECT_TRUE(Produce(topic.get(), c, &produced_c).ok()); });
  while (topic->Info().producers_queued < 3) std::this_thread::yield();  // both queued behind it
  gated.Open();
  for (std::thread* t : {&leader, &second, &third}) t->join();

  EXPECT_EQ(produced_a.first_offset, 0u);
  EXPECT_EQ(produced_b.timestamp_us, produced_c.timestamp_us) << "b and c were written as one record";
  EXPECT_NE(produced_a.timestamp_us, produced_b.timestamp_us);
  const bool b_first = produced_b.first_offset < produced_c.first_offset;
  EXPECT_EQ((b_first ? produced_b : produced_c).first_offset, 2u);
  EXPECT_EQ((b_first ? produced_c : produced_b).first_offset, b_first ? 5u : 3u);
  Batch model = a;
  for (const Batch* batch : b_first ? std::vector<const Batch*>{&b, &c} : std::vector<const Batch*>{&c, &b}) {
    model.insert(model.end(), batch->begin(), batch->end());
  }
  ExpectMessages(ReadFrom(topic.get(), 0), model, 0);
}

// --- Retention ---------------------------------------------------------------

TEST_F(TopicTest, AgeRetentionDropsWholeExpiredSegmentsAndOffsetsNeverMove) {
  auto topic = CreateAndOpen(SmallSegments(/*age_us=*/kHourUs));
  for (int i = 0; i < 60; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 2, 2000));
  const uint64_t fresh_from = model_.size();
  env_.SetNowMicros(kStartUs + kHourUs / 2);
  for (int i = 0; i < 10; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 2, 2000));
  TopicRetentionReport report;
  ASSERT_TRUE(topic->ApplyRetention(&report).ok());
  EXPECT_EQ(report.segments_deleted, 0u) << "nothing is an hour old yet";

  env_.SetNowMicros(kStartUs + kHourUs + 60'000'000);
  ASSERT_TRUE(topic->ApplyRetention(&report).ok());
  EXPECT_GE(report.segments_deleted, 2u);
  EXPECT_EQ(report.oldest_offset_before, 0u);
  EXPECT_GT(report.oldest_offset, 0u);
  EXPECT_LE(report.oldest_offset, fresh_from) << "only messages older than an hour go";
  EXPECT_EQ(report.messages_deleted, report.oldest_offset);
  const uint64_t oldest = report.oldest_offset;
  EXPECT_EQ(topic->Info().oldest_offset, oldest);
  EXPECT_EQ(topic->Info().next_offset, model_.size());
  uint64_t read_alone = 0;  // from the oldest record alone, as a rewind's validation reads it
  ASSERT_TRUE(Topic::OldestOffset(&env_, kDir, &read_alone).ok());
  EXPECT_EQ(read_alone, oldest);

  Status s = topic->Read(0, {}, [](const TopicMessage&) { return true; });
  EXPECT_TRUE(s.IsOutOfRange()) << s.ToString();
  EXPECT_EQ(s.message(), std::string("topic ") + kDir + ": offset 0 is no longer retained (oldest retained offset: " +
                             std::to_string(oldest) + ")");
  EXPECT_TRUE(topic->Read(oldest - 1, {}, [](const TopicMessage&) { return true; }).IsOutOfRange());
  ExpectMessages(ReadFrom(topic.get(), oldest), model_, oldest);

  topic = Reopen(std::move(topic));
  EXPECT_EQ(topic->Info().oldest_offset, oldest);
  ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1, 10));
  ExpectMessages(ReadFrom(topic.get(), oldest), model_, oldest);
}

// The oldest record is read whole once (a rewind's check of its sources
// asks for it each time, and each open): asked again, the topic answers
// from what it read, until retention makes another record the oldest.
TEST_F(TopicTest, TheOldestRecordIsReadOnceUntilRetentionReplacesIt) {
  auto topic = CreateAndOpen(SmallSegments(/*age_us=*/kHourUs));
  ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 100, 2000));  // a 200 KB record
  env_.SetNowMicros(kStartUs + kHourUs / 2);
  for (int i = 0; i < 60; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 2, 2000));
  testing::ReadCountingEnv counting(&env_);
  uint64_t oldest = 1;
  ASSERT_TRUE(Topic::OldestOffset(&counting, kDir, &oldest).ok());
  EXPECT_EQ(oldest, 0u);
  const uint64_t first = counting.bytes_read();
  EXPECT_GT(first, 200'000u);
  ASSERT_TRUE(Topic::OldestOffset(&counting, kDir, &oldest).ok());
  EXPECT_EQ(oldest, 0u);
  const uint64_t second = counting.bytes_read() - first;
  EXPECT_LT(second, 20'000u);

  env_.SetNowMicros(kStartUs + kHourUs + 60'000'000);
  TopicRetentionReport report;
  ASSERT_TRUE(topic->ApplyRetention(&report).ok());
  ASSERT_GE(report.segments_deleted, 1u);
  ASSERT_TRUE(Topic::OldestOffset(&counting, kDir, &oldest).ok());
  EXPECT_EQ(oldest, report.oldest_offset);
  EXPECT_EQ(oldest, 100u);
}

TEST_F(TopicTest, SizeRetentionRunsAfterARollAndKeepsTheLogNearItsLimit) {
  constexpr uint64_t kLimit = 3 * kMinTopicSegmentBytes;
  auto topic = CreateAndOpen(SmallSegments(/*age_us=*/0, kLimit));
  for (int i = 0; i < 200; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1, 3000));
  const TopicInfo info = topic->Info();
  EXPECT_GT(info.oldest_offset, 0u) << "Produce applied retention when segments rolled";
  EXPECT_LE(info.bytes, kLimit + kMinTopicSegmentBytes);
  EXPECT_LE(info.segments, 4u);
  TopicRetentionReport report;
  ASSERT_TRUE(topic->ApplyRetention(&report).ok());
  EXPECT_LE(topic->Info().bytes, kLimit);
  EXPECT_TRUE(topic->Read(info.oldest_offset - 1, {}, [](const TopicMessage&) { return true; }).IsOutOfRange());
  const uint64_t oldest = topic->Info().oldest_offset;
  ExpectMessages(ReadFrom(topic.get(), oldest), model_, oldest);
  topic = Reopen(std::move(topic));
  EXPECT_EQ(topic->Info().oldest_offset, oldest);
  EXPECT_EQ(topic->Info().next_offset, model_.size());
}

TEST_F(TopicTest, RetentionKeepsTheNewestRecordSoTheNextOffsetSurvives) {
  auto topic = CreateAndOpen(SmallSegments(/*age_us=*/kHourUs));
  for (int i = 0; i < 40; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1, 4000));
  env_.SetNowMicros(kStartUs + 10 * kHourUs);  // everything expired
  TopicRetentionReport report;
  ASSERT_TRUE(topic->ApplyRetention(&report).ok());
  EXPECT_GT(report.segments_deleted, 0u);
  const TopicInfo info = topic->Info();
  EXPECT_EQ(info.next_offset, model_.size());
  EXPECT_GE(info.messages, 1u);
  topic = Reopen(std::move(topic));
  EXPECT_EQ(topic->Info().next_offset, model_.size());
  ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1, 1));
}

TEST_F(TopicTest, SetRetentionIsDurableAndAppliesFromTheNextPass) {
  auto topic = CreateAndOpen(SmallSegments());
  for (int i = 0; i < 40; ++i) ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 1, 4000));
  EXPECT_EQ(topic->Info().oldest_offset, 0u) << "no limits: nothing goes";
  ASSERT_TRUE(topic->SetRetention(TopicRetention{0, 2 * kMinTopicSegmentBytes}).ok());
  topic = Reopen(std::move(topic));
  EXPECT_EQ(topic->Info().config.retention, (TopicRetention{0, 2 * kMinTopicSegmentBytes}));
  TopicRetentionReport report;
  ASSERT_TRUE(topic->ApplyRetention(&report).ok());
  EXPECT_GT(report.segments_deleted, 0u);
  EXPECT_GT(report.bytes_deleted, 0u);
  EXPECT_LE(topic->Info().bytes, 2 * kMinTopicSegmentBytes);
}

// --- Mistakes ---------------------------------------------------------------

TEST_F(TopicTest, CreateOnAnExistingTopicIsRefused) {
  auto topic = CreateAndOpen();
  topic.reset();
  Status s = Topic::Create(&env_, kDir, SmallSegments());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(s.message(), std::string("topic ") + kDir + " already exists");
}

TEST_F(TopicTest, CreateInADirectoryHoldingOtherFilesIsRefusedAndChangesNothing) {
  ASSERT_TRUE(env_.CreateDir(kDir).ok());
  ASSERT_TRUE(WriteFileAtomically(&env_, std::string(kDir) + "/notes.txt", "mine").ok());
  Status s = Topic::Create(&env_, kDir, SmallSegments());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("holds other files (notes.txt)"), std::string_view::npos) << s.ToString();
  std::vector<std::string> names;
  ASSERT_TRUE(env_.ListDir(kDir, &names).ok());
  EXPECT_EQ(names, std::vector<std::string>{"notes.txt"});
}

TEST_F(TopicTest, CreateWithABadSegmentSizeIsRefusedAndCreatesNothing) {
  TopicConfig config;
  config.segment_size_bytes = 1000;
  Status s = Topic::Create(&env_, kDir, config);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_FALSE(env_.FileExists(kDir));
}

TEST_F(TopicTest, OpenOfANonTopicOrAMissingDirectorySaysItIsNoTopic) {
  std::unique_ptr<Topic> topic;
  Status s = Topic::Open(&env_, "/nowhere", &topic);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(s.message(), "/nowhere is not a topic (it has no /nowhere/TOPIC)");
  ASSERT_TRUE(env_.CreateDir("/plain").ok());
  s = Topic::Open(&env_, "/plain", &topic);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
}

TEST_F(TopicTest, SecondOpenOfTheSameTopicIsBusy) {
  auto topic = CreateAndOpen();
  std::unique_ptr<Topic> second;
  Status s = Topic::Open(&env_, kDir, &second);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
}

TEST_F(TopicTest, ReadersOpenBesideTheProducerAndSeeWhatWasThereWhenOpened) {
  auto topic = CreateAndOpen();
  ProduceToModel(topic.get(), MakeBatch(rng_, 0, 30, 100));
  std::unique_ptr<Topic> reader;
  Status s = Topic::OpenForReading(&env_, kDir, &reader);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectMessages(ReadFrom(reader.get(), 0), model_, 0);
  const size_t seen = model_.size();
  ProduceToModel(topic.get(), MakeBatch(rng_, 30, 5, 100));
  EXPECT_EQ(reader->Info().next_offset, seen) << "a reader sees the topic as it was when opened";
  TopicProduced produced;
  const TopicWrite write{"k", "v"};
  EXPECT_TRUE(reader->Produce({&write, 1}, &produced).code() == Status::Code::kNotSupported);
  TopicRetentionReport report;
  EXPECT_TRUE(reader->ApplyRetention(&report).code() == Status::Code::kNotSupported);
  EXPECT_TRUE(reader->SetRetention(TopicRetention{}).code() == Status::Code::kNotSupported);
  ASSERT_TRUE(Topic::OpenForReading(&env_, kDir, &reader).ok());
  ExpectMessages(ReadFrom(reader.get(), 0), model_, 0);
}

// A reader that refreshes (the topic source in continuous mode) sees each
// new batch through the same handle and cursor, from an empty topic on,
// until the log starts a new segment, which only a new open sees past.
TEST_F(TopicTest, ARefreshedReaderReadsOnThroughTheSameCursorUntilANewSegmentNeedsAReopen) {
  auto topic = CreateAndOpen();
  std::unique_ptr<Topic> reader;
  ASSERT_TRUE(Topic::OpenForReading(&env_, kDir, &reader).ok());
  auto cursor = NewCursorAt(reader.get(), 0);
  std::vector<TopicMessage> got;
  bool stale = true;
  const uint64_t segments = topic->Info().segments;
  while (topic->Info().segments == segments) {
    ProduceToModel(topic.get(), MakeBatch(rng_, model_.size(), 3, 200));
    const uint64_t produced = model_.size();
    ASSERT_TRUE(reader->Refresh(&stale).ok());
    if (stale) break;
    EXPECT_EQ(reader->Info().oldest_offset, 0u);
    ASSERT_EQ(reader->Info().next_offset, produced);
    ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
    ASSERT_EQ(got.size(), produced);
  }
  ASSERT_TRUE(stale) << "the log's new segment makes the reader stale";
  EXPECT_LT(reader->Info().next_offset, model_.size());
  const TopicPosition position = cursor->position();
  cursor.reset();
  ASSERT_TRUE(Topic::OpenForReading(&env_, kDir, &reader).ok());
  ASSERT_TRUE(reader->ResumeCursor(position, &cursor).ok());
  ASSERT_TRUE(ReadOn(cursor.get(), &got).ok());
  ExpectMessages(got, model_, 0);
  EXPECT_EQ(topic->Refresh(&stale).code(), Status::Code::kNotSupported);
}

TEST_F(TopicTest, BadBatchesAreRefusedWithNothingWritten) {
  auto topic = CreateAndOpen();
  TopicProduced produced;
  Status s = topic->Produce({}, &produced);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  const std::string huge(kMaxTopicBatchBytes, 'x');
  const TopicWrite too_large[] = {{"k", huge}};
  s = topic->Produce(too_large, &produced);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(topic->Info().next_offset, 0u);
  ProduceToModel(topic.get(), {{"k", "v"}});
}

TEST_F(TopicTest, DamagedConfigFileIsCorruptionNamingTheLine) {
  auto topic = CreateAndOpen();
  topic.reset();
  ASSERT_TRUE(WriteFileAtomically(&env_, std::string(kDir) + "/TOPIC",
                                  "spool-topic 1\nretention_age_us 12x\nretention_bytes 0\nsegment_size_bytes 65536\n")
                  .ok());
  std::unique_ptr<Topic> reopened;
  Status s = Topic::Open(&env_, kDir, &reopened);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("line 2"), std::string_view::npos) << s.ToString();
}

TEST_F(TopicTest, AChangedDigitInTheConfigFileIsCorruption) {
  auto topic = CreateAndOpen();
  topic.reset();
  const std::string path = std::string(kDir) + "/TOPIC";
  std::string text;
  ASSERT_TRUE(ReadFileToString(&env_, path, &text).ok());
  const size_t digit = text.find("segment_size_bytes ") + std::string("segment_size_bytes ").size();
  text[digit] = text[digit] == '1' ? '2' : '1';  // still a size in range: only the checksum tells
  ASSERT_TRUE(WriteFileAtomically(&env_, path, text).ok());
  std::unique_ptr<Topic> reopened;
  Status s = Topic::Open(&env_, kDir, &reopened);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("checksum mismatch"), std::string_view::npos) << s.ToString();
}

// --- Damaged records ----------------------------------------------------------

TEST(TopicFormatTest, EveryTruncationAndBitFlipOfABodyDecodesOrIsCorruption) {
  const std::string long_value(300, 'v');
  const TopicWrite writes[] = {{"key", "value"}, {"", ""}, {"k2", long_value}};
  std::string body;
  topicfmt::PutRecordHeader(topicfmt::RecordHeader{7, 3}, &body);
  topicfmt::PutMessages(writes, &body);
  topicfmt::RecordHeader header;
  std::vector<topicfmt::MessageView> messages;
  ASSERT_TRUE(topicfmt::DecodeRecord(body, &header, &messages).ok());
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[2].value, writes[2].value);
  for (size_t n = 0; n < body.size(); ++n) {
    EXPECT_TRUE(topicfmt::DecodeRecord(body.substr(0, n), &header, &messages).IsCorruption()) << "length " << n;
  }
  EXPECT_TRUE(topicfmt::DecodeRecord(body + "x", &header, &messages).IsCorruption());
  for (size_t i = 0; i < body.size() * 8; ++i) {
    std::string flipped = body;
    flipped[i / 8] = static_cast<char>(flipped[i / 8] ^ (1 << (i % 8)));
    Status s = topicfmt::DecodeRecord(flipped, &header, &messages);
    ASSERT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
    uint64_t total = 0;
    for (const auto& m : messages) total += m.key.size() + m.value.size();
    if (s.ok()) {
      ASSERT_LE(total, flipped.size());
    }
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    Status s = topicfmt::DecodeRecord(RandomBytes(rng, rng() % 64), &header, &messages);
    ASSERT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
  }
}

// A topic whose log gets `bodies` appended behind its back, each as a
// record of `operation`.
class DamagedTopicTest : public TopicTest {
 protected:
  void AppendRaw(std::string_view operation, const std::string& body) {
    LogOptions options;
    options.env = &env_;
    options.create_if_missing = false;
    options.segment_size_bytes = kMinTopicSegmentBytes;
    std::unique_ptr<Log> log;
    ASSERT_TRUE(Log::Open(options, std::string(kDir) + "/log", &log).ok());
    LogCommit commit;
    ASSERT_TRUE(log->Append(LogWrite{operation, body}, &commit).ok());
  }
  std::string Body(uint64_t base_offset, std::span<const TopicWrite> writes) {
    std::string body;
    topicfmt::PutRecordHeader(topicfmt::RecordHeader{base_offset, static_cast<uint32_t>(writes.size())}, &body);
    topicfmt::PutMessages(writes, &body);
    return body;
  }
  void SetUpTopicWithTwoMessages() {
    auto topic = CreateAndOpen();
    ProduceToModel(topic.get(), {{"a", "1"}, {"b", "2"}});
  }
  Status ReadEverything(std::unique_ptr<Topic>* topic) {
    SPOOL_RETURN_IF_ERROR(Topic::Open(&env_, kDir, topic));
    return (*topic)->Read(0, {}, [](const TopicMessage&) { return true; });
  }
};

TEST_F(DamagedTopicTest, LengthPastTheBodyIsCorruptionNamingTopicVersionAndOffset) {
  SetUpTopicWithTwoMessages();
  const TopicWrite writes[] = {{"c", "3"}};
  std::string body = Body(2, writes);
  body[topicfmt::kRecordHeaderBytes] = '\x7f';  // the key length
  AppendRaw(topicfmt::kProduceOperation, body);
  std::unique_ptr<Topic> topic;
  Status s = ReadEverything(&topic);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(std::string("topic ") + kDir + ": record at log version 2"), std::string_view::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("message at offset 2: key of 127 bytes"), std::string_view::npos) << s.ToString();
}

TEST_F(DamagedTopicTest, RecordThatSkipsOffsetsIsCorruption) {
  SetUpTopicWithTwoMessages();
  const TopicWrite writes[] = {{"c", "3"}};
  AppendRaw(topicfmt::kProduceOperation, Body(5, writes));
  std::unique_ptr<Topic> topic;
  Status s = ReadEverything(&topic);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("starts at offset 5, expected offset 2"), std::string_view::npos) << s.ToString();
}

TEST_F(DamagedTopicTest, GarbageNewestRecordMakesOpenFailWithCorruption) {
  SetUpTopicWithTwoMessages();
  AppendRaw(topicfmt::kProduceOperation, "\x01garbage");
  std::unique_ptr<Topic> topic;
  Status s = Topic::Open(&env_, kDir, &topic);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("record at log version 2"), std::string_view::npos) << s.ToString();
}

TEST_F(DamagedTopicTest, ForeignOperationIsCorruption) {
  SetUpTopicWithTwoMessages();
  AppendRaw("WRITE", "not a topic record");
  std::unique_ptr<Topic> topic;
  Status s = Topic::Open(&env_, kDir, &topic);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("operation WRITE is not PRODUCE"), std::string_view::npos) << s.ToString();
}

// Versions 1 (offsets 0, 1), 2 (a body that does not decode), 3 (offset 2)
// and 4 (offset 3): a search for offset 2 probes version 2 first.
class ResumeCursorTest : public DamagedTopicTest {
 protected:
  void SetUp() override {
    DamagedTopicTest::SetUp();
    SetUpTopicWithTwoMessages();
    const TopicWrite c[] = {{"c", "3"}};
    const TopicWrite d[] = {{"d", "4"}};
    AppendRaw(topicfmt::kProduceOperation, "\x01garbage");
    AppendRaw(topicfmt::kProduceOperation, Body(2, c));
    AppendRaw(topicfmt::kProduceOperation, Body(3, d));
    ASSERT_TRUE(Topic::OpenForReading(&env_, kDir, &topic_).ok());
  }
  std::vector<TopicMessage> ReadAll(TopicCursor* cursor) {
    std::vector<TopicMessage> got;
    Status s = ReadOn(cursor, &got);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return got;
  }
  std::unique_ptr<Topic> topic_;
};

TEST_F(ResumeCursorTest, ResumedCursorReadsNoRecordBeforeItsPosition) {
  std::unique_ptr<TopicCursor> cursor;
  Status s = topic_->NewCursor(2, &cursor);
  EXPECT_TRUE(s.IsCorruption()) << "the search probes the damaged record: " << s.ToString();
  s = topic_->ResumeCursor(TopicPosition{2, 3}, &cursor);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<TopicMessage> got = ReadAll(cursor.get());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 2u);
  EXPECT_EQ(got[1].key, "d");
}

TEST_F(ResumeCursorTest, ResumingWithAVersionThatDoesNotHoldTheOffsetSearchesInstead) {
  for (const uint64_t version : {1u, 2u, 3u, 99u}) {
    const TopicPosition position{3, version};
    std::unique_ptr<TopicCursor> cursor;
    Status s = topic_->ResumeCursor(position, &cursor);
    ASSERT_TRUE(s.ok()) << position.version << ": " << s.ToString();
    const std::vector<TopicMessage> got = ReadAll(cursor.get());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].key, "d");
  }
}

TEST_F(DamagedTopicTest, CursorMeetingARecordThatSkipsOffsetsIsCorruptionAndStaysBeforeIt) {
  SetUpTopicWithTwoMessages();
  const TopicWrite writes[] = {{"c", "3"}};
  AppendRaw(topicfmt::kProduceOperation, Body(5, writes));
  std::unique_ptr<Topic> topic;
  ASSERT_TRUE(Topic::Open(&env_, kDir, &topic).ok());
  auto cursor = NewCursorAt(topic.get(), 0);
  std::vector<TopicMessage> got;
  ASSERT_TRUE(ReadOn(cursor.get(), &got, TopicReadLimits{2, UINT64_MAX}).ok());
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status s = ReadOn(cursor.get(), &got);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find("record at log version 2: starts at offset 5, expected offset 2"),
              std::string_view::npos)
        << s.ToString();
    EXPECT_EQ(cursor->position().offset, 2u);
  }
  EXPECT_EQ(got.size(), 2u);
}

// --- Failures and crashes -------------------------------------------------------

TEST(TopicFaultTest, FailedSyncPoisonsProduceAndReopeningKeepsOffsetsDense) {
  MemEnv mem;
  FaultEnv env(&mem);
  ASSERT_TRUE(Topic::Create(&env, kDir, SmallSegments()).ok());
  std::unique_ptr<Topic> topic;
  ASSERT_TRUE(Topic::Open(&env, kDir, &topic).ok());
  ASSERT_TRUE(Produce(topic.get(), {{"a", "1"}}).ok());
  const uint64_t before = env.io_calls();
  ASSERT_TRUE(Produce(topic.get(), {{"b", "2"}}).ok());
  env.FailSyncAtCall(env.io_calls() + (env.io_calls() - before));  // the same calls again: the last is the sync
  Status s = Produce(topic.get(), {{"c", "3"}});
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  s = Produce(topic.get(), {{"d", "4"}});
  EXPECT_TRUE(s.IsFailed()) << s.ToString();
  topic.reset();
  env.SimulateCrash(CrashMode::kPowerLoss, 1);
  ASSERT_TRUE(Topic::Open(&env, kDir, &topic).ok());
  const uint64_t next = topic->Info().next_offset;
  EXPECT_TRUE(next == 2 || next == 3) << next;
  TopicProduced produced;
  ASSERT_TRUE(Produce(topic.get(), {{"e", "5"}}, &produced).ok());
  EXPECT_EQ(produced.first_offset, next);
}

// The workload of the crash enumeration: create a topic whose log keeps at
// most three small segments, then produce batches that roll segments (so
// retention runs too). Returns how many batches were acknowledged.
size_t RunCrashWorkload(FaultEnv* env, const std::vector<Batch>& batches, bool* created) {
  *created = Topic::Create(env, kDir, SmallSegments(0, 3 * kMinTopicSegmentBytes)).ok();
  if (!*created) return 0;
  std::unique_ptr<Topic> topic;
  if (!Topic::Open(env, kDir, &topic).ok()) return 0;
  size_t acked = 0;
  while (acked < batches.size() && Produce(topic.get(), batches[acked]).ok()) ++acked;
  return acked;
}

// After a crash: an acknowledged batch survives, an unacknowledged one is
// all there or not at all, offsets stay dense, and the topic takes more.
void CheckRecoveredTopic(MemEnv* mem, FaultEnv* env, const std::vector<Batch>& batches, bool created, size_t acked,
                         const std::string& state) {
  std::unique_ptr<Topic> topic;
  Status s = Topic::Open(env, kDir, &topic);
  if (!created && s.IsNotFound()) return;
  ASSERT_TRUE(s.ok()) << state << ": " << s.ToString();
  std::vector<size_t> batch_ends{0};  // offset after each whole batch
  Batch flat;
  for (const Batch& b : batches) {
    flat.insert(flat.end(), b.begin(), b.end());
    batch_ends.push_back(flat.size());
  }
  const TopicInfo info = topic->Info();
  const auto end = std::find(batch_ends.begin(), batch_ends.end(), info.next_offset);
  ASSERT_NE(end, batch_ends.end()) << state << ": next offset " << info.next_offset << " splits a batch";
  const auto survived = static_cast<size_t>(end - batch_ends.begin());
  ASSERT_GE(survived, acked) << state << ": an acknowledged batch was lost";
  ASSERT_LE(survived, acked + 1) << state;
  flat.resize(info.next_offset);
  ExpectMessages(ReadFrom(topic.get(), info.oldest_offset), flat, info.oldest_offset);

  // Once everything expires the next offset still survives retention and a
  // reopen (a crash may have left the newest segment empty).
  ASSERT_TRUE(topic->SetRetention(TopicRetention{kHourUs, 0}).ok()) << state;
  mem->SetNowMicros(mem->NowMicros() + 10 * kHourUs);
  TopicRetentionReport report;
  ASSERT_TRUE(topic->ApplyRetention(&report).ok()) << state;
  topic.reset();
  s = Topic::Open(env, kDir, &topic);
  ASSERT_TRUE(s.ok()) << state << ": " << s.ToString();
  ASSERT_EQ(topic->Info().next_offset, info.next_offset) << state;

  TopicProduced produced;
  ASSERT_TRUE(Produce(topic.get(), {{"after", "crash"}}, &produced).ok()) << state;
  ASSERT_EQ(produced.first_offset, info.next_offset) << state;
}

TEST(TopicCrashTest, EveryCrashPointInEveryModeKeepsAckedBatchesAndWholeOnes) {
  std::mt19937_64 rng(3);
  std::vector<Batch> batches;
  for (size_t i = 0; i < 12; ++i) batches.push_back(MakeBatch(rng, i * 10, 1 + i % 4, 6000 + 1000 * (i % 5)));
  uint64_t crash_points = 0;
  {
    MemEnv mem;
    FaultEnv env(&mem);
    bool created = false;
    ASSERT_EQ(RunCrashWorkload(&env, batches, &created), batches.size());
    crash_points = env.io_calls();
    std::unique_ptr<Topic> topic;
    ASSERT_TRUE(Topic::Open(&env, kDir, &topic).ok());
    ASSERT_GT(topic->Info().oldest_offset, 0u) << "the workload must roll segments and apply retention";
  }
  uint64_t states = 0;
  for (uint64_t call = 1; call <= crash_points; ++call) {
    for (CrashMode mode : kAllCrashModes) {
      MemEnv mem;
      FaultEnv env(&mem);
      env.CrashAtCall(call);
      bool created = false;
      const size_t acked = RunCrashWorkload(&env, batches, &created);
      env.SimulateCrash(mode, call * 31 + static_cast<uint64_t>(mode));
      const std::string state = "call " + std::to_string(call) + " mode " + std::string(CrashModeName(mode));
      CheckRecoveredTopic(&mem, &env, batches, created, acked, state);
      if (::testing::Test::HasFatalFailure()) return;
      ++states;
    }
  }
  std::printf("[topic] crash points %llu, states checked %llu\n", static_cast<unsigned long long>(crash_points),
              static_cast<unsigned long long>(states));
  EXPECT_GT(crash_points, 30u);
}

// --- The real file system ------------------------------------------------------

TEST(TopicPosixTest, RoundTripAndReopenOnDisk) {
  TempDir tmp;
  const std::string dir = tmp.Sub("orders");
  ASSERT_TRUE(Topic::Create(Env::Default(), dir, TopicConfig{}).ok());
  std::unique_ptr<Topic> topic;
  ASSERT_TRUE(Topic::Open(Env::Default(), dir, &topic).ok());
  ASSERT_TRUE(Produce(topic.get(), {{"k", "v1"}, {"", "v2"}}).ok());
  topic.reset();
  ASSERT_TRUE(Topic::Open(Env::Default(), dir, &topic).ok());
  const std::vector<TopicMessage> got = ReadFrom(topic.get(), 0);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].value, "v2");
  EXPECT_EQ(topic->Info().config, TopicConfig{});
}

}  // namespace
}  // namespace spool
