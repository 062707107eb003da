// The report of one run: a text table per workload, the ratios the targets
// are judged on, the targets themselves; optionally the same as JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "config.h"
#include "results.h"
#include "run_info.h"
#include "targets.h"

namespace spool::bench {

// A column of a workload's table: the median of one metric.
struct MetricColumn {
  const char* metric;
  const char* header;
  int decimals;
};

// A workload's table: its main figure with range and ratio, then extras.
struct TableSpec {
  const char* workload;
  const char* title;
  MetricColumn main;
  std::vector<MetricColumn> extras;
};

// A row per engine: the main figure's median, min–max and ratio to
// Spool's (pair by pair, PairRatio), then the extras' medians.
void PrintTable(const Results& results, const TableSpec& spec, std::ostream& out);

// The run's conditions, a table per workload run, then the targets.
void PrintReport(const BenchConfig& config, const RunInfo& info, const Results& results,
                 const std::vector<TargetCheck>& checks, std::ostream& out);

// Writes the run's conditions (machine, versions, settings), one object per
// result (a metric of one engine or raw measurement, at one point of a
// scaling series or none: its title, unit, median, min–max, samples and
// ratio to Spool's, pair by pair), the rows' notes and the target checks to
// `path`; docs/benchmarks.md lists the fields. Throws BenchError when the
// file cannot be written.
void WriteJson(const RunInfo& info, const Results& results, const std::vector<TargetCheck>& checks,
               const std::string& path);

}  // namespace spool::bench
