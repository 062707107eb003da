// The targets of docs/benchmarks.md for the workloads this tool runs, checked
// against the medians of one run. Every comparison is within the run.
#pragma once

#include <string>
#include <vector>

#include "results.h"

namespace spool::bench {

struct TargetCheck {
  std::string workload;  // "w1", …
  std::string target;    // what docs/benchmarks.md asks, in words
  std::string measured;  // what the ratio compares, in words
  double value = 0;      // the measured ratio (or seconds for W7)
  double bound = 0;      // what it must reach
  bool higher_is_better = true;
  bool available = false;  // false when a figure it needs was not run

  bool met() const { return available && (higher_is_better ? value >= bound : value <= bound); }
  // How far from the bound, as a fraction of it (0 when met).
  double shortfall() const;
};

std::vector<TargetCheck> CheckTargets(const Results& results);

// A check of `value` against `bound`, available when `value` is a number.
TargetCheck MakeCheck(std::string workload, std::string target, std::string measured, double value, double bound,
                      bool higher_is_better);

// The best median of `metric` among the peers (every engine but Spool's),
// and which engine has it; value NaN when no peer has it.
struct BestPeer {
  std::string engine;
  double value = 0;
};
BestPeer FindBestPeer(const Results& results, const std::string& workload, const std::string& metric,
                      bool higher_is_better = true);

// Spool's median of a metric, NaN when it was not measured.
double SpoolMedian(const Results& results, const std::string& workload, const std::string& metric);
double MachineMedian(const Results& results, const std::string& metric);
// A workload's ceiling: the median of its baseline `row` (measured in the
// workload's own rotation), else the limits workload's `limits_metric`.
double CeilingMedian(const Results& results, const std::string& workload, const std::string& row,
                     const std::string& metric, const std::string& limits_metric);

}  // namespace spool::bench
