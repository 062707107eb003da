// Workloads for crash enumeration and random crash campaigns of the log.
// Each runs against an Env from a fresh, empty directory, records what the
// log acknowledged in a LogModel, and stops at the first failed call (a
// simulated crash makes every later call fail).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "log_model.h"
#include "spool/txnlog/env.h"
#include "spool/txnlog/log.h"

namespace spool::crashtest {

inline constexpr char kLogDir[] = "/store/log";
inline constexpr uint64_t kStoreId = 0x5eed0fc0ffeeull;

struct LogWorkload {
  std::string name;
  // Options for every open of this workload's log (env filled in by the caller).
  LogOptions options;
  std::function<void(Env* env, const LogOptions& options, LogModel* model)> run;
};

// The options every workload starts from: a fixed store id, 64 KiB segments,
// small preallocation (so zero-filling is exercised).
LogOptions BaseOptions();

// A unique body for (tag, i): `bytes` long; compressible or random.
std::string WorkloadBody(const std::string& tag, uint64_t i, size_t bytes, bool compressible);

// Opens the log, creating the directory's parent first. Errors: as Log::Open.
Status OpenWorkloadLog(Env* env, const LogOptions& options, std::unique_ptr<Log>* log);

// The workloads of issue 2's crash enumeration: single commits; four
// concurrent committers; commits across segment rolls; a truncation (then
// more commits); retention deletion (then more commits).
std::vector<LogWorkload> StandardWorkloads();

// A random workload drawn from `seed`: appends of random sizes, concurrent
// bursts, truncations, retention and flushes, with random log options.
LogWorkload RandomWorkload(uint64_t seed);

}  // namespace spool::crashtest
