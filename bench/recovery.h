// W7 (docs/benchmarks.md): write 1 GB of log without a clean shutdown, then
// time the reopen.
//
// The writer is a child process: this executable re-run with --w7-writer
// (fork + exec, so that no engine's threads or locks are inherited half
// way). It commits batches of records durably until the payload reaches the
// target, reports the record count on stdout, and waits; the parent then
// SIGKILLs it and times Open plus a read of the last record.
#pragma once

#include <cstdint>
#include <string>

#include "config.h"
#include "results.h"

namespace spool::bench {

// Payload written before the kill, at --scale 1 (1 GB = 10^9 bytes).
inline constexpr uint64_t kW7PayloadBytes = 1'000'000'000;
inline constexpr uint64_t kW7BatchRecords = 1'000;

// Repetition `rep` (1-based) of W7 on every engine.
void RunW7(const BenchConfig& config, int rep, Results* results);

// The child's side: writes into `dir` with `engine` until `payload_bytes`
// are committed, prints "written <records>" and waits to be killed. Never
// returns; failures throw BenchError.
[[noreturn]] void RunW7Writer(const std::string& engine, const std::string& dir, uint64_t payload_bytes);

}  // namespace spool::bench
