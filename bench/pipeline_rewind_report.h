// The report of the whole-pipeline W6 (pipeline_rewind_workload.h): its
// table, ratios and targets of docs/benchmarks.md. Called by report.cc and
// targets.cc.
#pragma once

#include <ostream>
#include <vector>

#include "config.h"
#include "results.h"
#include "targets.h"

namespace spool::bench {

// Prints the w6p table if it ran.
void PrintPipelineRewind(const BenchConfig& config, const Results& results, std::ostream& out);
// Appends w6p's three targets.
void CheckPipelineRewindTargets(const Results& results, std::vector<TargetCheck>* checks);

}  // namespace spool::bench
