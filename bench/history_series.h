// The history operations' length series (workload history-updates, a
// scaling series): the change feed (`cdf`) and the vacuum (`vacuum`) of
// history_workloads.h against how many update commits the table holds.
//
// At each size, one table per engine and repetition, built as the history
// workloads' (W5's rows, 1% of them per update commit) with that many update
// commits, closed and reopened; its floor is the version after 90% of them.
// Then, checked against a model of the table as the history workloads are:
//   cdf     every change of the versions after the floor (10% of the
//           updates' rows), each once, with its version;
//   vacuum  everything no read as of the floor or later needs dropped
//           (reads as of the floor and of the newest version must stay
//           right), the bytes on disk before and after it, and a fresh
//           store of the same engine holding just the history kept (the
//           table as of the floor and the updates after it) to compare.
// No snapshot or restore runs here, so at 1,000 updates the vacuum's store
// is the `vacuum` workload's without its restore.
//
// Sizes: BenchConfig::history_updates (--history-updates; 250 and 1,000 by
// default, which keep the series near 4 minutes at --reps 1: LMDB and
// SQLite took about 4 and 6.5 minutes alone at 4,000) at --scale 1; --scale
// multiplies the rows and the update commits alike (the smallest size at
// least kHistorySeriesMinUpdates), and the sizes keep their ratios.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "config.h"
#include "results.h"

namespace spool::bench {

inline constexpr char kHistorySeries[] = "history-updates";
inline constexpr char kUpdatesPoint[] = "update commits";
inline constexpr uint64_t kHistorySeriesMinUpdates = 10;

// The series' sizes at this --scale: update commits, ascending.
std::vector<uint64_t> HistorySeriesUpdates(const BenchConfig& config);

// Repetition `rep` of the series on every engine.
void RunHistorySeries(const BenchConfig& config, int rep, Results* results);

// Its tables, when it was selected.
void PrintHistorySeries(const BenchConfig& config, const Results& results, std::ostream& out);

}  // namespace spool::bench
