// What spool_micro_bench's files share (micro_bench.cc lists every
// benchmark).
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool::bench {

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

}  // namespace spool::bench
