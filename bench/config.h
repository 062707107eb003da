// What one run of spool-bench measures, from its command line.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "progress.h"

namespace spool::bench {

// Workload ids, as --workloads names them.
inline constexpr char kLimits[] = "limits";
inline constexpr char kW1[] = "w1";
inline constexpr char kW2[] = "w2";
inline constexpr char kW3[] = "w3";
inline constexpr char kW7[] = "w7";

struct BenchConfig {
  std::string dir;                   // wiped at the start of the run
  int reps = 3;                      // repetitions per figure
  double scale = 1.0;                // multiplies record counts and W7's bytes
  std::vector<std::string> engines;  // engine names (engine.h)
  std::vector<std::string> workloads;
  // W4's and the latency workload's peers: each key's totals in a state
  // table beside the output ("table", W4's definition) or in the
  // output rows alone ("output", as Spool's aggregate keeps them).
  std::string peer_state = "table";
  uint64_t state_map_gib = 256;  // Spool's LMDB map (SpoolStoreOptions)
  // W6's history series: the stores of their own, each with this many times
  // W6's history after the point (×1 is W6's run).
  std::vector<uint64_t> history_multipliers = {10, 100};
  // The history-updates series: its sizes, update commits at --scale 1
  // (history_series.h).
  std::vector<uint64_t> history_updates = {250, 1'000};
  std::string json_path;  // empty: no JSON
  std::string self_path;  // this executable, for W7's writer
  cli::ProgressMode progress = cli::ProgressMode::kAuto;

  bool Runs(const std::string& workload) const {
    return std::find(workloads.begin(), workloads.end(), workload) != workloads.end();
  }
  bool RunsEngine(std::string_view engine) const {
    return std::find(engines.begin(), engines.end(), engine) != engines.end();
  }
  // `full` scaled by --scale, at least `floor`.
  uint64_t Scaled(uint64_t full, uint64_t floor = 1) const {
    const double scaled = std::round(static_cast<double>(full) * scale);
    return std::max(floor, static_cast<uint64_t>(scaled));
  }
  std::string RunDir(const std::string& workload, const std::string& engine, int rep) const {
    return dir + "/" + workload + "/" + engine + "-rep" + std::to_string(rep);
  }
};

}  // namespace spool::bench
