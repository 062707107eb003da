// The end-to-end run: one triggered update of kE2EEvents events (a Spool
// topic of JSON messages, stream_events.h) through filter (kE2EFilter) →
// grouped aggregate (count and sum of the amount by key) → a keyed
// streaming table (stream_pipeline.h), with the runtime's default batch
// size. Spool only: the peers have no pipeline to compare.
//
// The parent produces the topic (untimed), then starts this executable
// again as the updater (--e2e-updater, child_process.h), which opens the
// store, runs the update (timed: the Pipeline::Update call) and reports;
// the child's peak RSS is then the update's memory high-water mark alone.
// The parent checks the table against the model of the stream (every event
// with amount > 0 counted once per key) and fails the run otherwise.
// --scale multiplies the events (at least kE2EMinEvents).
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "results.h"

namespace spool::bench {

inline constexpr char kE2E[] = "e2e";

inline constexpr uint64_t kE2EEvents = 10'000'000;
inline constexpr uint64_t kE2EMinEvents = 1'000;
inline constexpr uint64_t kE2EProduceBatch = 10'000;  // messages per Produce while staging (~1 MB)
inline constexpr char kE2EFilter[] = "amount > 0";

namespace metric {
inline constexpr char kUpdateS[] = "update_s";
inline constexpr char kPeakRssMB[] = "peak_rss_mb";
inline constexpr char kBatches[] = "batches";
inline constexpr char kOutputRows[] = "output_rows";
inline constexpr char kTopicMB[] = "topic_mb_on_disk";
}  // namespace metric

// Repetition `rep` (1-based) of the end-to-end run, if Spool is among the
// engines.
void RunE2E(const BenchConfig& config, int rep, Results* results);

// The child's side: runs the update on the store and topic in `dir`, prints
// "updated <seconds> <batches> <input rows> <output rows>" and returns the
// process's exit code. Failures throw BenchError.
int RunE2EUpdater(const std::string& dir);

}  // namespace spool::bench
