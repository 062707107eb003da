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

// A column of a workload's table: the median of one metric.
struct Column {
  const char* metric;
  const char* header;
  int decimals;
};

// A workload's table: its main figure with range and ratio, then extras.
struct TableSpec {
  const char* workload;
  const char* title;
  Column main;
  std::vector<Column> extras;
};

// A row per engine: the main figure's median, min–max and ratio to
// Spool's (pair by pair, PairRatio), then the extras' medians.
void PrintTable(const Results& results, const TableSpec& spec, std::ostream& out);

void PrintReport(const BenchConfig& config, const Results& results, const std::vector<TargetCheck>& checks,
                 std::ostream& out);

// Writes config, every sample with its summary, and the target checks to
// `path`. Throws BenchError when the file cannot be written.
void WriteJson(const BenchConfig& config, const Results& results, const std::vector<TargetCheck>& checks,
               const std::string& path);

}  // namespace spool::bench
