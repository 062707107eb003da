#include "scaling_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine.h"
#include "text_table.h"
#include "units.h"

namespace spool::bench {
namespace {

// The engines of a series, in the order they were first recorded.
std::vector<std::string> EnginesOf(const Results& results, std::string_view workload) {
  std::vector<std::string> engines;
  for (const Results::Row* row : results.RowsOf(workload)) {
    if (!row->point) continue;
    if (std::find(engines.begin(), engines.end(), row->engine) == engines.end()) engines.push_back(row->engine);
  }
  return engines;
}

std::string PointName(const Results& results, std::string_view workload) {
  for (const Results::Row* row : results.RowsOf(workload)) {
    if (row->point) return row->point->name;
  }
  return {};
}

}  // namespace

std::vector<double> PointValues(const Results& results, std::string_view workload) {
  std::vector<double> values;
  for (const Results::Row* row : results.RowsOf(workload)) {
    if (row->point && std::find(values.begin(), values.end(), row->point->value) == values.end()) {
      values.push_back(row->point->value);
    }
  }
  std::sort(values.begin(), values.end());
  return values;
}

double MedianAt(const Results& results, std::string_view workload, std::string_view engine, double value,
                std::string_view metric) {
  const auto s = results.GetAt(workload, engine, Results::Point{PointName(results, workload), value}, metric);
  return s ? s->median : kNaN;
}

void PrintSeries(const Results& results, const SeriesSpec& spec, std::ostream& out) {
  const std::vector<double> values = PointValues(results, spec.workload);
  if (values.empty()) return;
  std::vector<std::string> header = {"engine \\ " + PointName(results, spec.workload)};
  for (double v : values) header.push_back(FormatNumber(v, 0));
  header.push_back(FormatNumber(values.back(), 0) + " ÷ " + FormatNumber(values.front(), 0));
  TextTable table(std::move(header));
  for (const std::string& engine : EnginesOf(results, spec.workload)) {
    std::vector<std::string> cells = {std::string(DisplayName(engine))};
    for (double v : values)
      cells.push_back(FormatNumber(MedianAt(results, spec.workload, engine, v, spec.metric), spec.decimals));
    cells.push_back(FormatNumber(MedianAt(results, spec.workload, engine, values.back(), spec.metric) /
                                     MedianAt(results, spec.workload, engine, values.front(), spec.metric),
                                 2));
    table.AddRow(std::move(cells));
  }
  out << "\n== " << spec.title << " ==\n" << table.ToString();
}

}  // namespace spool::bench
