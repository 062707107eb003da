// W4 (docs/benchmarks.md), the stream step: kW4Steps steps, each reading
// kW4EventsPerStep events (keys drawn from kStreamKeys, stream_events.h),
// updating each key's count and sum, writing one output row per key it
// touched and committing state, output and source offset atomically and
// durably — Spool through its pipeline runtime, the peers by hand
// (stream_step_engine.h). The events are staged durably in each engine's
// own source before the timed run. After it, the output table is checked
// against a model of the stream: each key's count and sum, so the counts add
// up to every event read exactly once; a difference fails the run.
//
// Figures: events/s over the whole run (Spool: the Pipeline::Update call,
// so its start and end are in; peers: the loop of steps) and the latency of
// each step (Spool: between on_batch callbacks, the first from the call),
// p50 and p99. --scale multiplies the steps (at least 2), not their size.
//
// W4's keys series (workload w4-keys, a scaling series): the same steps and
// events on every engine with the keys drawn from kW4KeysMultipliers × W4's
// key space (10,000 and 100,000 keys; rows at Results::Point{kKeysPoint,
// keys}), each run checked against the model as W4's is.
#pragma once

#include <cstdint>

#include "config.h"
#include "results.h"

namespace spool::bench {

inline constexpr char kW4[] = "w4";
inline constexpr char kW4Keys[] = "w4-keys";
inline constexpr char kKeysPoint[] = "keys";
inline constexpr uint64_t kW4KeysMultipliers[] = {1, 10};

inline constexpr uint64_t kW4Steps = 200;
inline constexpr uint64_t kW4MinSteps = 2;
inline constexpr uint64_t kW4EventsPerStep = 1'000;

namespace metric {
inline constexpr char kOutputRowsPerStep[] = "output_rows_per_step";
// CPU time of every thread of the process over the timed steps, per step:
// on two cores, the step's CPU bounds its rate once work overlaps.
inline constexpr char kCpuPerStepUs[] = "cpu_per_step_us";
}  // namespace metric

// Repetition `rep` (1-based) of W4 on every engine.
void RunW4(const BenchConfig& config, int rep, Results* results);
// Repetition `rep` of W4's keys series on every engine.
void RunW4Keys(const BenchConfig& config, int rep, Results* results);

}  // namespace spool::bench
