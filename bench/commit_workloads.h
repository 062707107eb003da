// W1, W2 and W3 (docs/benchmarks.md): durable commits of records, one engine at
// a time, every engine given the same records. Each call runs repetition
// `rep` (1-based) of the workload on every engine.
#pragma once

#include <cstdint>

#include "config.h"
#include "results.h"

namespace spool::bench {

// Sizes at --scale 1.
inline constexpr uint64_t kW1Commits = 20'000;
inline constexpr uint64_t kW2Threads = 4;
inline constexpr uint64_t kW2CommitsPerThread = 5'000;
inline constexpr uint64_t kW3Records = 2'000'000;
inline constexpr uint64_t kW3BatchRecords = 1'000;

// W1: one writer, one record per durable commit.
void RunW1(const BenchConfig& config, int rep, Results* results);
// W2: kW2Threads writers, one record per durable commit each.
void RunW2(const BenchConfig& config, int rep, Results* results);
// W2's writers series (a scaling series, workload kW2Writers): W2 with 1 to
// kW2Threads writers (rows at Results::Point{kWritersPoint, writers}), each
// writer committing as many records as in W2.
inline constexpr char kW2Writers[] = "w2-writers";
inline constexpr char kWritersPoint[] = "writers";
void RunW2Writers(const BenchConfig& config, int rep, Results* results);
// W3: batches of kW3BatchRecords records, one durable commit per batch.
void RunW3(const BenchConfig& config, int rep, Results* results);

}  // namespace spool::bench
