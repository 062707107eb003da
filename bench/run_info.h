// What a run was measured on and with: the machine, the versions of every
// engine and library, and the settings. The report prints it first and the
// JSON file keeps it, so a figure can always be traced to its conditions.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace spool::bench {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct RunInfo {
  std::string started_at_utc;  // ISO 8601, to the second
  Fields machine;              // host, cpu, cores, memory, kernel, os, the scratch directory's file system
  Fields versions;             // spool (with its git commit when known), compiler, each engine and library
  Fields settings;             // the command line's choices and the durability every engine runs with
};

// Reads /proc, uname and the libraries' version calls; never fails (a
// field that cannot be read says "unknown").
RunInfo CollectRunInfo(const BenchConfig& config);

void PrintRunInfo(const RunInfo& info, std::ostream& out);

}  // namespace spool::bench
