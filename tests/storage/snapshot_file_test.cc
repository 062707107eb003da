// Snapshot files: what is written reads back; anything damaged, short,
// foreign or misordered is Corruption naming the file and what is wrong.
#include "snapshot_file.h"

#include <map>

#include <gtest/gtest.h>

#include "spool/testing/mem_env.h"

namespace spool {
namespace {

constexpr uint64_t kStoreId = 77;

std::map<std::string, std::string> Entries(size_t n) {
  std::map<std::string, std::string> entries;
  for (size_t i = 0; i < n; ++i) entries["R" + std::to_string(100000 + i)] = std::string(40 + i % 7, 'v');
  return entries;
}

class SnapshotFileTest : public ::testing::Test {
 protected:
  void Write(const std::map<std::string, std::string>& entries) {
    std::unique_ptr<SnapshotWriter> writer;
    ASSERT_TRUE(SnapshotWriter::Create(&env_, path_, SnapshotHeader{kStoreId, 2, 9, 1234}, &writer).ok());
    for (const auto& [k, v] : entries) ASSERT_TRUE(writer->Add(k, v).ok());
    uint64_t bytes = 0, count = 0;
    ASSERT_TRUE(writer->Finish(&bytes, &count).ok());
    EXPECT_EQ(count, entries.size());
    EXPECT_FALSE(env_.FileExists(path_ + ".tmp"));
  }

  Status Read(std::map<std::string, std::string>* out, uint64_t store_id = kStoreId) {
    SnapshotHeader header;
    return ReadSnapshot(&env_, path_, store_id, &header, [&](std::string_view k, std::string_view v) {
      (*out)[std::string(k)] = std::string(v);
      return true;
    });
  }

  MemEnv env_;
  std::string path_ = "/" + SnapshotFileName(2, 9);
};

TEST_F(SnapshotFileTest, WrittenEntriesReadBackAcrossBlocks) {
  const auto entries = Entries(20000);  // about 1 MB raw: several blocks
  Write(entries);
  std::map<std::string, std::string> read;
  ASSERT_TRUE(Read(&read).ok());
  EXPECT_EQ(read, entries);
  uint64_t epoch = 0, version = 0;
  EXPECT_TRUE(ParseSnapshotFileName(SnapshotFileName(2, 9), &epoch, &version));
  EXPECT_EQ(epoch, 2u);
  EXPECT_EQ(version, 9u);
  EXPECT_FALSE(ParseSnapshotFileName("snap-x.spsnap", &epoch, &version));
}

TEST_F(SnapshotFileTest, EveryTruncationAndAnyFlippedByteIsCorruption) {
  Write(Entries(300));
  std::string bytes;
  ASSERT_TRUE(ReadFileToString(&env_, path_, &bytes).ok());
  SnapshotHeader header;
  const auto ignore = [](std::string_view, std::string_view) { return true; };
  for (size_t n = 0; n < bytes.size(); n += 7) {
    Status s = ParseSnapshot(std::string_view(bytes).substr(0, n), kStoreId, &header, ignore);
    EXPECT_TRUE(s.IsCorruption()) << n;
  }
  for (size_t at = 0; at < bytes.size(); at += 13) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    Status s = ParseSnapshot(damaged, kStoreId, &header, ignore);
    EXPECT_TRUE(s.IsCorruption()) << at;
  }
  EXPECT_TRUE(ParseSnapshot(bytes, kStoreId, &header, ignore).ok());
}

TEST_F(SnapshotFileTest, AnotherStoresSnapshotIsRefused) {
  Write(Entries(10));
  std::map<std::string, std::string> read;
  Status s = Read(&read, kStoreId + 1);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.ToString().find("another store"), std::string::npos);
  EXPECT_NE(s.ToString().find(path_), std::string::npos);
}

}  // namespace
}  // namespace spool
