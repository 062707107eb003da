// The report of one run: a text table per workload, the ratios the targets
// are judged on, the targets themselves; optionally the same as JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "config.h"
#include "results.h"
#include "targets.h"

namespace spool::bench {

void PrintReport(const BenchConfig& config, const Results& results, const std::vector<TargetCheck>& checks,
                 std::ostream& out);

// Writes config, every sample with its summary, and the target checks to
// `path`. Throws BenchError when the file cannot be written.
void WriteJson(const BenchConfig& config, const Results& results, const std::vector<TargetCheck>& checks,
               const std::string& path);

}  // namespace spool::bench
