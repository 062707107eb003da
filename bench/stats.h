// Summaries of repeated measurements and of latency samples.
#pragma once

#include <cstdint>
#include <vector>

namespace spool::bench {

// The median of repetitions, with their range.
struct Summary {
  double median = 0;
  double min = 0;
  double max = 0;
};

// REQUIRES: !samples.empty().
Summary Summarize(std::vector<double> samples);
// The q-quantile (0 <= q <= 1) by nearest rank. REQUIRES: !samples.empty().
double Percentile(std::vector<double> samples, double q);

}  // namespace spool::bench
