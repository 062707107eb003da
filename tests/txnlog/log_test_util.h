// Helpers shared by the log's tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spool/testing/mem_env.h"
#include "spool/txnlog/log.h"

namespace spool::testing {

inline constexpr uint64_t kTestStoreId = 0x5eed5eed5eedull;

// The body of commit `i`: a 16-byte key and a value whose size varies with i.
inline std::string CommitBody(uint64_t i, size_t value_bytes = 100) {
  std::string body = "key-" + std::to_string(i);
  body.resize(16, '.');
  for (size_t j = 0; j < value_bytes; ++j) body.push_back(static_cast<char>('a' + (i * 7 + j) % 26));
  return body;
}

inline LogOptions TestOptions(Env* env) {
  LogOptions options;
  options.env = env;
  options.new_store_id = kTestStoreId;
  options.segment_size_bytes = 64 << 10;
  options.preallocate_bytes = 8 << 10;
  return options;
}

// TestOptions with no sync per commit (Durability::kNoSync).
inline LogOptions NoSyncOptions(Env* env) {
  LogOptions options = TestOptions(env);
  options.durability = Durability::kNoSync;
  return options;
}

inline Status AppendBody(Log* log, uint64_t i, LogCommit* commit = nullptr) {
  LogCommit ignored;
  std::string body = CommitBody(i);
  return log->Append(LogWrite{"WRITE", body}, commit != nullptr ? commit : &ignored);
}

// Every retained entry, in order; fails the test on an iterator error.
inline std::vector<LogEntry> ReadAll(Log* log, uint64_t from = 0) {
  std::vector<LogEntry> entries;
  std::unique_ptr<LogIterator> it;
  Status s = log->NewIterator(from, &it);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return entries;
  LogEntry entry;
  while (it->Next(&entry)) entries.push_back(entry);
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return entries;
}

}  // namespace spool::testing
