// W7 (docs/benchmarks.md): write 1 GB of log without a clean shutdown, then
// time the reopen.
//
// The writer is a child process: this executable re-run with --w7-writer
// (fork + exec, so that no engine's threads or locks are inherited half
// way). It commits batches of records durably until the payload reaches the
// target, reports the record count on stdout, and waits; the parent then
// SIGKILLs it and times Open plus a read of the last record.
//
// W7's log-size series (workload w7-log, a scaling series): the same write,
// kill and reopen with kW7LogMultiplier × W7's bytes, for Spool only (the
// peers' logs at ×10 take minutes to replay and 10 GB of disk); ×1 is W7's
// run, of every engine with a log (rows at Results::Point{kLogPoint,
// multiplier}).
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "results.h"

namespace spool::bench {

// Payload written before the kill, at --scale 1 (1 GB = 10^9 bytes).
inline constexpr uint64_t kW7PayloadBytes = 1'000'000'000;
inline constexpr uint64_t kW7BatchRecords = 1'000;

inline constexpr char kW7Log[] = "w7-log";
inline constexpr char kLogPoint[] = "payload written (× W7's)";
inline constexpr uint64_t kW7LogMultiplier = 10;

// Repetition `rep` (1-based) of W7 and/or its log-size series (as selected)
// on every engine.
void RunW7(const BenchConfig& config, int rep, Results* results);

// The child's side: writes into `dir` with `engine` until `payload_bytes`
// are committed, prints "written <records>" and waits to be killed. Never
// returns; failures throw BenchError.
[[noreturn]] void RunW7Writer(const std::string& engine, const std::string& dir, uint64_t payload_bytes);

}  // namespace spool::bench
