// W6 for a whole pipeline ("w6p", docs/benchmarks.md W6): bringing a pipeline's
// tables, source offsets and operator state back to a rewind point — Spool
// only — against the amount of history after the point, against a full
// refresh of the same pipeline, and against RocksDB's checkpoint restore of
// a table alone, in one run.
//
// The pipeline (stream_pipeline.h, LayeredEventPipelineSpec): W4's events
// (stream_events.h) in a Spool topic; flow "orders" appends them to the
// streaming table main.bench.orders; flow "totals" reads that table and
// keeps count and sum of the amount by key (its operator state) in the
// keyed streaming table main.bench.totals. An update is kW6pEventsPerUpdate
// new events produced (untimed), then one triggered Pipeline::Update: a
// batch of each flow, each one durable commit of rows, state and offsets.
//
// For each history multiplier m of kW6pHistoryMultipliers, a store of its
// own, built the same way up to the point:
//   1. kW6pUpdatesBeforePoint updates;
//   2. a full refresh (timed: Pipeline::Update with full_refresh, until
//      COMPLETED), which rebuilds both tables from the topic — holding
//      exactly the events of step 1 — so it produces the state the rewind
//      restores; the tables are checked against the model after it;
//   3. the rewind point (RecordRewindPoint, which snapshots the state);
//   4. m × kW6pUpdatesAfterPoint updates: the history after the point;
//   5. close, sync, reopen (the state all applied, as in a store that ran);
//   6. the rewind, timed from the store open at its newest version until
//      the store and the pipeline are open at the point: PlanRewind +
//      ExecuteRewind (rewind_point_id, the whole pipeline), close,
//      Store::Open, Pipeline::Open. Both tables are then checked to be the
//      point's; at ×1 one more update then replays the events after the
//      point and the totals are checked against the model of every event
//      (the offsets and the state came back together: exactly once).
// Every store is a fresh rewind of its own: none is rewound twice.
//
// RocksDB: W6's checkpoint restore of a table alone (table_workloads.h,
// MeasureTableRewind) with as many rows as the pipeline's two tables hold
// at the point.
//
// --scale multiplies the events per update (at least kW6pMinEventsPerUpdate);
// the numbers of updates stay, so the multipliers are true at any scale.
#pragma once

#include <cstdint>

#include "config.h"
#include "results.h"

namespace spool::bench {

inline constexpr char kW6Pipeline[] = "w6p";

// Sizes at --scale 1.
inline constexpr uint64_t kW6pEventsPerUpdate = 5'000;
inline constexpr uint64_t kW6pMinEventsPerUpdate = 10;
inline constexpr uint64_t kW6pUpdatesBeforePoint = 20;
inline constexpr uint64_t kW6pUpdatesAfterPoint = 2;  // ×1
inline constexpr uint64_t kW6pHistoryMultipliers[] = {1, 10, 100};

// Rows of the w6p results: Spool's rewind with ×1, ×10, ×100 the history
// (also holding that store's full refresh), and RocksDB's (engine.h name).
inline constexpr char kW6pX1[] = "spool-x1";
inline constexpr char kW6pX10[] = "spool-x10";
inline constexpr char kW6pX100[] = "spool-x100";

namespace metric {
inline constexpr char kPipelineRewindS[] = "rewind_s";         // plan + execute + close + open
inline constexpr char kRewindPlanS[] = "rewind_plan_s";        // PlanRewind
inline constexpr char kRewindExecuteS[] = "rewind_execute_s";  // ExecuteRewind
inline constexpr char kRewindReopenCloseS[] = "rewind_close_s";
inline constexpr char kRewindReopenS[] = "rewind_open_s";  // Store::Open + Pipeline::Open
// plan + execute: the rewind as the update it is, on the open store (as a
// full refresh is timed)
inline constexpr char kRewindUpdateS[] = "rewind_update_s";
inline constexpr char kFullRefreshS[] = "full_refresh_s";
inline constexpr char kRecordPointS[] = "record_point_s";  // RecordRewindPoint: its snapshot and state copy
inline constexpr char kUpdatesAfterPoint[] = "updates_after_point";
inline constexpr char kEventsAfterPoint[] = "events_after_point";
inline constexpr char kRowsAtPoint[] = "rows_at_point";  // both tables
inline constexpr char kStoreMBBeforeRewind[] = "store_mb_before_rewind";
}  // namespace metric

// Repetition `rep` (1-based) of the whole-pipeline W6, if Spool is among
// the engines (RocksDB's restore too if it is).
void RunW6Pipeline(const BenchConfig& config, int rep, Results* results);

}  // namespace spool::bench
