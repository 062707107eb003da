// The "limits" workload: the machine's ceilings, measured in the same run
// as the engines (results under engine kMachine).
#pragma once

#include "config.h"
#include "results.h"

namespace spool::bench {

// Sizes, at --scale 1: as many synced 4-KiB blocks as W1 has commits, and
// 1 GB of sequential writes.
inline constexpr uint64_t kLimitSyncedBlocks = 20'000;
inline constexpr uint64_t kLimitSequentialBytes = 1'000'000'000;

// Repetition `rep` (1-based) of the limits.
void RunLimits(const BenchConfig& config, int rep, Results* results);

}  // namespace spool::bench
