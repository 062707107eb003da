// Commit payloads (txnlog/payload.h): big payloads are compressed as two
// zstd frames, one per core, and every payload reads back as written.
#include "payload.h"

#include <zstd.h>

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "log_format.h"

namespace spool {
namespace {

// Row-like text that zstd compresses about fourfold.
std::string Rows(size_t bytes, int seed) {
  std::string body;
  for (int row = 0; body.size() < bytes; ++row) {
    body += "seed=" + std::to_string(seed) + ",row=" + std::to_string(row) +
            ",value=" + std::to_string(row * 7919 % 1000) + ";";
  }
  body.resize(bytes);
  return body;
}

size_t Frames(std::string_view payload) {
  size_t frames = 0;
  while (!payload.empty()) {
    const size_t n = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
    if (ZSTD_isError(n)) return 0;
    payload.remove_prefix(n);
    ++frames;
  }
  return frames;
}

struct Encoded {
  std::string payload;
  uint8_t flags = 0;
};

Encoded Encode(const std::string& body) {
  Encoded e;
  EXPECT_TRUE(EncodePayload(LogWrite{"WRITE", body}, 4096, &e.payload, &e.flags).ok());
  return e;
}

void ExpectReadsBack(const Encoded& e, const std::string& body) {
  LogEntry entry;
  ASSERT_TRUE(DecodePayload(e.payload, e.flags, &entry).ok());
  EXPECT_EQ(entry.operation, "WRITE");
  EXPECT_EQ(entry.body, body);
}

TEST(PayloadTest, BigPayloadIsTwoFramesThatReadBackAsOne) {
  const std::string body = Rows(256 << 10, 1);
  const Encoded e = Encode(body);
  ASSERT_NE(e.flags & logfmt::kFlagCompressed, 0);
  EXPECT_LT(e.payload.size(), body.size() / 2);
  EXPECT_EQ(Frames(e.payload), 2u);
  ExpectReadsBack(e, body);
}

TEST(PayloadTest, PayloadUnderTheSplitSizeIsOneFrame) {
  const std::string body = Rows(32 << 10, 2);
  const Encoded e = Encode(body);
  ASSERT_NE(e.flags & logfmt::kFlagCompressed, 0);
  EXPECT_EQ(Frames(e.payload), 1u);
  ExpectReadsBack(e, body);
}

// A thread decompresses into a buffer it keeps (up to 1 MiB) and a bigger
// payload into a block of its own: payloads of both sizes, decoded in turn
// on one thread, each read back whole, a smaller one after a bigger one
// too (nothing of the one before shows through).
TEST(PayloadTest, PayloadsOfEverySizeDecodedInTurnReadBackAsWritten) {
  const std::vector<std::string> bodies = {Rows(300 << 10, 10),     Rows(3 << 20, 11),   Rows(100 << 10, 12),
                                           Rows((1 << 20) + 1, 13), Rows(900 << 10, 14), Rows(40 << 10, 15)};
  for (int round = 0; round < 2; ++round) {
    for (const std::string& body : bodies) {
      const Encoded e = Encode(body);
      ASSERT_NE(e.flags & logfmt::kFlagCompressed, 0);
      ExpectReadsBack(e, body);
    }
  }
}

TEST(PayloadTest, IncompressiblePayloadIsStoredAsIs) {
  std::string body(100 << 10, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : body) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  const Encoded e = Encode(body);
  EXPECT_EQ(e.flags & logfmt::kFlagCompressed, 0);
  ExpectReadsBack(e, body);
}

TEST(PayloadTest, TruncatedSecondFrameIsCorruption) {
  const std::string body = Rows(256 << 10, 3);
  Encoded e = Encode(body);
  ASSERT_EQ(Frames(e.payload), 2u);
  e.payload.resize(e.payload.size() - 5);
  LogEntry entry;
  const Status s = DecodePayload(e.payload, e.flags, &entry);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST(PayloadTest, ConcurrentEncodersEachReadBackTheirOwn) {
  // Four committers share one helper thread: those that find it busy
  // compress alone, and every payload reads back as its own body.
  constexpr int kThreads = 4;
  constexpr int kEach = 20;
  std::vector<std::thread> threads;
  std::vector<int> frame_counts(kThreads * kEach);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string body = Rows((96 << 10) + 1024 * static_cast<size_t>(i), t * 100 + i);
        const Encoded e = Encode(body);
        frame_counts[static_cast<size_t>(t * kEach + i)] = static_cast<int>(Frames(e.payload));
        ExpectReadsBack(e, body);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int frames : frame_counts) EXPECT_TRUE(frames == 1 || frames == 2) << frames;
}

}  // namespace
}  // namespace spool
