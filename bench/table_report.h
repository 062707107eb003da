// The report of the table workloads (table_workloads.h): their tables and
// ratios, and their targets of docs/benchmarks.md. Called by report.cc and
// targets.cc.
#pragma once

#include <ostream>
#include <vector>

#include "config.h"
#include "results.h"
#include "targets.h"

namespace spool::bench {

// Prints the tables of the table workloads that ran.
void PrintTableWorkloads(const BenchConfig& config, const Results& results, std::ostream& out);
// Appends W5's and W6's targets.
void CheckTableTargets(const Results& results, std::vector<TargetCheck>* checks);

}  // namespace spool::bench
