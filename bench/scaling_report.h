// Scaling series (Results::Point): how a workload's cost grows with its
// size — W2's writers, W5's table size, W6's history — printed as one table
// per series and metric: an engine per row, a column per size.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "results.h"

namespace spool::bench {

struct SeriesSpec {
  std::string workload;
  std::string metric;
  std::string title;
  int decimals = 0;
};

// The sizes a series was measured at, ascending.
std::vector<double> PointValues(const Results& results, std::string_view workload);

// The median of `metric` for `engine` at size `value` of the series; NaN
// when it was not measured.
double MedianAt(const Results& results, std::string_view workload, std::string_view engine, double value,
                std::string_view metric);

// The table of one series and metric; the last column is the largest size's
// median ÷ the smallest's. Prints nothing when the series has no rows.
void PrintSeries(const Results& results, const SeriesSpec& spec, std::ostream& out);

}  // namespace spool::bench
