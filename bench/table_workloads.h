// Table-level workloads (docs/benchmarks.md): W5 time travel, W6 rewind and
// keyed W3, Spool's table API (storage/) against the peers used the way
// their users do time travel and rewind by hand (versioned_engine.h).
//
// W5: a keyed table of kW5Rows rows (16-byte key, 100-byte value), loaded
// in commits of kW5LoadBatchRows rows, then kW5Updates commits each
// upserting a random 1% of the rows (distinct rows, the same for every
// engine). Every commit durable. Versions are Spool's store versions for
// every engine (versioned_engine.h): version 1 creates the table, the load
// is versions 2 … L+1 (L = load commits), update k is version L+1+k. "v50"
// — the as-of version and W6's rewind point — is the version after the
// load and kW5Point update commits: 151 at --scale 1. The store is closed
// (bytes on disk and written measured), reopened, read once untimed (a
// warm-up), then read kReadRepeats times as of v50 and at the newest
// version, alternating; each read's rows are checked against a model of
// the table.
//
// W6: on W5's store, after its reads: bring the table back to v50 and have
// it open there (Spool: Store::Restore, close, reopen; peers: close, then
// open RocksDB's checkpoint / LevelDB's hard-linked copy, or copy LMDB's or
// SQLite's backup back and reopen). The table is then checked to read as
// v50. Every engine is also run with 10× and 100× more history after v50
// (500 and 5,000 update commits after it instead of 50; --scale shrinks the
// rows, not the commits, so the multipliers hold at every scale), on stores
// of their own built the same way, to show how the as-of read and the
// rewind grow with history (workload w6-history).
//
// Keyed W3: W3's records (2,000,000, 1,000 per durable commit, ascending
// keys) written as rows of a keyed Spool table, in the same rotation as
// Spool's log alone and the peers running plain W3 (engine.h).
#pragma once

#include <cstdint>

#include "config.h"
#include "results.h"
#include "versioned_engine.h"

namespace spool::bench {

// Workload ids, as --workloads names them. W6 needs W5's table: either id
// builds it; W5's figures are recorded only when w5 is selected.
inline constexpr char kW3Keyed[] = "w3k";
inline constexpr char kW5[] = "w5";
inline constexpr char kW6[] = "w6";
// W6's history series (its own workload id, a scaling series): every
// engine's as-of read of v50 and rewind to it with ×1, ×10 and ×100 W6's
// history after v50 (rows at Results::Point{kHistoryPoint, multiplier};
// ×1 is W6's run, when W6 runs too; the others are stores of their own).
inline constexpr char kW6History[] = "w6-history";
// W5's table-size series (a scaling series): every engine's reads as of
// v50 and of the latest version, W5's history on tables of kW5RowsPercents
// % of W5's rows (rows at Results::Point{kRowsPoint, rows}).
inline constexpr char kW5RowsSeries[] = "w5-rows";
inline constexpr char kRowsPoint[] = "rows";
inline constexpr uint64_t kW5RowsPercents[] = {10, 100, 1000};
inline constexpr char kHistoryPoint[] = "history after the point (×)";
// Keyed W3's row for Spool's log alone (plain W3).
inline constexpr char kSpoolLogRow[] = "spool-log";

// Sizes at --scale 1 (--scale multiplies the rows; the number of commits
// stays, so the history multipliers stay true; update commits hold 1% of
// the rows).
inline constexpr uint64_t kW5Rows = 100'000;
inline constexpr uint64_t kW5MinRows = 100;
inline constexpr uint64_t kW5LoadBatchRows = 1'000;
inline constexpr uint64_t kW5UpdateRowsDivisor = 100;  // 1% of the rows per update commit
inline constexpr uint64_t kW5Updates = 100;
inline constexpr uint64_t kW5Point = 50;
inline constexpr int kReadRepeats = 3;  // timed reads of each kind per repetition (their median is the sample)

namespace metric {
inline constexpr char kAsOfReadS[] = "asof_read_s";
inline constexpr char kLatestReadS[] = "latest_read_s";
inline constexpr char kDiskMB[] = "disk_mb";
inline constexpr char kWrittenPerPayload[] = "syscall_written_bytes_per_payload_byte";
inline constexpr char kDeviceWrittenPerPayload[] = "device_written_bytes_per_payload_byte";
inline constexpr char kLoadRecordsPerS[] = "load_records_per_s";
inline constexpr char kUpdateCommitsPerS[] = "update_commits_per_s";
inline constexpr char kRewindS[] = "rewind_s";
inline constexpr char kRewindRestoreS[] = "rewind_restore_s";
inline constexpr char kRewindCloseS[] = "rewind_close_s";
inline constexpr char kRewindOpenS[] = "rewind_open_s";
inline constexpr char kPointS[] = "rewind_point_s";
inline constexpr char kPointWrittenMB[] = "rewind_point_written_mb";
inline constexpr char kVersionsAfterPoint[] = "versions_after_point";
inline constexpr char kRecordsPerSInclClose[] = "records_per_s_incl_close";
}  // namespace metric

// W5's as-of version and W6's rewind point ("v50") at this --scale.
uint64_t W5PointVersion(const BenchConfig& config);

// Repetition `rep` of W5's table-size series on every engine.
void RunW5Rows(const BenchConfig& config, int rep, Results* results);

// W6's rewind of a table alone on `engine` (a peer: its checkpoint or copy
// restore), for a keyed table of `rows` rows (at least kW5MinRows) built as
// W5's — loaded, kW5Point update commits of 1% of the rows, the rewind
// point, the rest of kW5Updates — then closed, synced, reopened and read
// once (checked), and rewound to the point (timed, then checked to read as
// the point). The store lives in `run_dir`, removed after. Throws
// BenchError when the engine fails or a read differs from the model.
struct TableRewind {
  double total_s = 0;
  RewindTimes times;
};
TableRewind MeasureTableRewind(std::string_view engine, uint64_t rows, const std::string& run_dir);

// Repetition `rep` (1-based) of keyed W3 on every engine.
void RunW3Keyed(const BenchConfig& config, int rep, Results* results);
// Repetition `rep` of W5 and/or W6 (as selected) on every engine, then
// W6's history series for Spool.
void RunW5W6(const BenchConfig& config, int rep, Results* results);

}  // namespace spool::bench
