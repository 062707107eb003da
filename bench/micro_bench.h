// What spool_micro_bench's files share (micro_bench.cc lists every
// benchmark).
#pragma once

#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <benchmark/benchmark.h>

#include "spool/storage/store.h"
#include "spool/testing/mem_env.h"
#include "spool/txnlog/status.h"

namespace spool::bench {

// The store the benchmarks' records name, and its first table (of version 1).
inline constexpr uint64_t kStoreId = 0x5eed'5eed'5eed'5eedull;
inline constexpr uint64_t kTableUid = 1ull << TableInfo::kUidIndexBits;

inline void SetBytes(benchmark::State& state, size_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes_per_iteration));
}

inline void SetItems(benchmark::State& state, size_t items_per_iteration) {
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(items_per_iteration));
}

// Reports `s` as the benchmark's error when it is not OK: the smoke test
// fails on any error, so a benchmark that checks its result fails it.
inline bool Ok(benchmark::State& state, const Status& s, std::string_view what) {
  if (s.ok()) return true;
  state.SkipWithError((std::string(what) + ": " + s.ToString()).c_str());
  return false;
}

// A store on a MemEnv (the log in memory) with its LMDB state in a
// temporary directory, both removed when it goes.
class ScratchStore {
 public:
  ScratchStore() = default;
  ScratchStore(const ScratchStore&) = delete;
  ScratchStore& operator=(const ScratchStore&) = delete;
  ~ScratchStore() {
    store_.reset();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  // `options`' env and state_dir are this scratch store's.
  Status Open(StoreOptions options) {
    std::string pattern = (std::filesystem::temp_directory_path() / "spool-micro-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return Status::IOError("mkdtemp " + pattern + " failed");
    dir_ = pattern;
    options.env = &env_;
    options.state_dir = dir_ + "/state";
    return Store::Open(options, "/store", &store_);
  }
  Store* get() const { return store_.get(); }

 private:
  MemEnv env_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace spool::bench
