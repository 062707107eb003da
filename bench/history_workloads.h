// The history operations (issue 8; versioned_engine.h says how each engine
// does them): the change data feed's scan rate, snapshot creation, a
// restore to an earlier version as a new version, and vacuum — Spool's own
// against the peers by hand.
//
// One table per engine and repetition, built as W5's (its rows, 1% per
// update commit) but with kHistoryUpdates update commits (10× W5's), closed
// and reopened; its floor is the version after 90% of them. Then,
// in order, each timed and checked against a model of the table:
//   cdf       every change of the versions after the floor (the last 100
//             commits' rows), each once, with its version;
//   snapshot  a snapshot of the newest version (creation), then a restore
//             of the table to the floor as a new version (the latest read
//             must then equal the floor's);
//   vacuum    everything no read as of the floor or later needs dropped
//             (reads as of the floor and of the newest version must stay
//             right; the bytes it reclaimed are measured), then the
//             store's disk against a fresh store of the same engine
//             holding just the history kept (the table as of the floor,
//             the updates after it, and the restore when it ran).
// The figures of a workload are recorded only when it is selected; the
// table is built when any of them is.
#pragma once

#include <cstdint>

#include "config.h"
#include "results.h"

namespace spool::bench {

inline constexpr char kChangeFeed[] = "cdf";
inline constexpr char kSnapshot[] = "snapshot";
inline constexpr char kVacuum[] = "vacuum";

inline constexpr uint64_t kHistoryUpdates = 1'000;

namespace metric {
inline constexpr char kChangeRowsPerS[] = "change_rows_per_s";
inline constexpr char kChangeFeedS[] = "change_feed_s";
inline constexpr char kChangeRows[] = "change_rows";
inline constexpr char kSnapshotS[] = "snapshot_s";
inline constexpr char kRestoreS[] = "restore_s";
inline constexpr char kVacuumS[] = "vacuum_s";
inline constexpr char kDiskMBBefore[] = "disk_mb_before";
inline constexpr char kReclaimedMB[] = "reclaimed_mb";
inline constexpr char kDiskMBAfter[] = "disk_mb_after";
inline constexpr char kFreshMB[] = "fresh_mb";
inline constexpr char kAfterPerFresh[] = "after_per_fresh";
}  // namespace metric

// Repetition `rep` of the selected history operations on every engine.
void RunHistoryOps(const BenchConfig& config, int rep, Results* results);

// Their tables, for the workloads selected.
void PrintHistoryOps(const BenchConfig& config, const Results& results, std::ostream& out);

}  // namespace spool::bench
