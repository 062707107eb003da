// WriteJson (report.h): nlohmann-json stays in this file.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "catalog.h"
#include "check.h"
#include "engine.h"
#include "report.h"

namespace spool::bench {
namespace {

// Bumped when a field changes meaning or goes away.
constexpr int kJsonFormat = 2;

nlohmann::json Number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json SummaryJson(const Summary& s) {
  return {{"median", Number(s.median)}, {"min", Number(s.min)}, {"max", Number(s.max)}};
}

// One object per result: a metric of one row (an engine, or a raw
// measurement), at one point of a scaling series or at none.
nlohmann::json ResultJson(const Results& results, const Results::Row& row, const std::string& metric,
                          const std::vector<double>& samples) {
  const MetricInfo info = DescribeMetric(metric);
  nlohmann::json values = nlohmann::json::array();
  for (double v : samples) values.push_back(Number(v));
  nlohmann::json result = {
      {"workload", row.workload},
      {"title", WorkloadTitle(row.workload)},
      {"engine", row.engine},
      {"engine_label", RowLabel(row.workload, row.engine)},
      {"metric", metric},
      {"metric_label", info.label},
      {"unit", info.unit},
      {"higher_is_better", info.higher_is_better},
      {"headline", !row.point && IsHeadline(row.workload, metric)},
      {"x_name", row.point ? nlohmann::json(row.point->name) : nlohmann::json()},
      {"x", row.point ? Number(row.point->value) : nlohmann::json()},
  };
  result.update(SummaryJson(Summarize(samples)));
  result["samples"] = values;
  const std::optional<Summary> ratio = row.engine == kSpool ? std::nullopt : RatioToSpool(results, row, metric);
  result["ratio_to_spool"] = ratio ? SummaryJson(*ratio) : nlohmann::json();
  return result;
}

nlohmann::json ResultsJson(const Results& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const Results::Row& row : results.rows()) {
    for (const auto& [metric, samples] : row.samples) {
      if (!samples.empty()) out.push_back(ResultJson(results, row, metric, samples));
    }
  }
  return out;
}

// Rows that say why they have no figures ("(no log)").
nlohmann::json NotesJson(const Results& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const Results::Row& row : results.rows()) {
    if (!row.note.empty()) out.push_back({{"workload", row.workload}, {"engine", row.engine}, {"note", row.note}});
  }
  return out;
}

nlohmann::json FieldsJson(const Fields& fields) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : fields) out[key] = value;
  return out;
}

nlohmann::json TargetsJson(const std::vector<TargetCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const TargetCheck& c : checks) {
    out.push_back({{"workload", c.workload},
                   {"target", c.target},
                   {"measured", c.measured},
                   {"value", c.available ? Number(c.value) : nlohmann::json()},
                   {"bound", c.bound},
                   {"higher_is_better", c.higher_is_better},
                   {"available", c.available},
                   {"met", c.met()}});
  }
  return out;
}

}  // namespace

void WriteJson(const RunInfo& info, const Results& results, const std::vector<TargetCheck>& checks,
               const std::string& path) {
  const nlohmann::json doc = {
      {"tool", "spool-bench"},
      {"format", kJsonFormat},
      {"started_at", info.started_at_utc},
      {"machine", FieldsJson(info.machine)},
      {"versions", FieldsJson(info.versions)},
      {"settings", FieldsJson(info.settings)},
      {"results", ResultsJson(results)},
      {"notes", NotesJson(results)},
      {"targets", TargetsJson(checks)},
  };
  std::ofstream file(path);
  file << doc.dump(2) << "\n";
  if (!file) throw BenchError("cannot write " + path);
}

}  // namespace spool::bench
