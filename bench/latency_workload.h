// The latency workload: an event appended to a topic → visible in the
// output table, in continuous mode. W4's events and W4's pipeline (topic →
// count and sum of the amount by key → keyed table), fed one event at a
// time in a closed loop: the producer (the workload's thread) waits a
// pseudo-random pause in [0, kLatencyTriggerUs) — a hash of the event's
// offset, so every engine gets the same pauses — produces ONE event
// durably, takes t0 when that returns, and waits until a consumer thread
// reports that a committed step holds the event; t1 then. Latency = t1 - t0.
//
// "Visible" is the step's commit returning: reads of the current version
// see every acknowledged commit (store.h, and the peers' own commit
// semantics), so from t1 on any reader sees the event's row.
//
// Spool: a Store (default options: durable), a Topic the producer keeps
// open, and the event pipeline (stream_pipeline.h) run by a continuous
// Pipeline::Update with trigger_interval_us = kLatencyTriggerUs on the
// consumer thread; its tables are set up by an untimed triggered update
// first. The peers by hand, the way their users would: a consumer thread
// that, when it finds nothing new, sleeps the same interval, and runs W4's
// step (RunPeerStep, stream_step_engine.h) on whatever is new.
//
// After the run, the output table's per-key totals are checked against the
// model of the events (exactly once); a difference fails the run. Figures:
// p50, p99, max and mean latency. --scale multiplies the events (at least
// kLatencyMinEvents).
#pragma once

#include <cstdint>
#include <ostream>

#include "config.h"
#include "results.h"

namespace spool::bench {

inline constexpr char kLatency[] = "latency";

inline constexpr uint64_t kLatencyEvents = 400;
inline constexpr uint64_t kLatencyMinEvents = 20;
// How long an idle consumer waits before it looks again, for every engine.
inline constexpr uint64_t kLatencyTriggerUs = 5'000;

namespace metric {
inline constexpr char kMaxUs[] = "max_us";
inline constexpr char kMeanUs[] = "mean_us";
}  // namespace metric

// Repetition `rep` (1-based) of the latency workload on every engine.
void RunLatency(const BenchConfig& config, int rep, Results* results);
// Its table and a note on what it measures.
void PrintLatency(const BenchConfig& config, const Results& results, std::ostream& out);

}  // namespace spool::bench
