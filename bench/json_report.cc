// WriteJson (report.h): nlohmann-json stays in this file.
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "check.h"
#include "report.h"

namespace spool::bench {
namespace {

nlohmann::json Number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json MetricJson(const std::vector<double>& samples) {
  const Summary s = Summarize(samples);
  nlohmann::json values = nlohmann::json::array();
  for (double v : samples) values.push_back(Number(v));
  return {{"median", Number(s.median)}, {"min", Number(s.min)}, {"max", Number(s.max)}, {"samples", values}};
}

nlohmann::json ResultsJson(const Results& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Results::Row& row : results.rows()) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [name, samples] : row.samples) metrics[name] = MetricJson(samples);
    rows.push_back({{"workload", row.workload}, {"engine", row.engine}, {"note", row.note}, {"metrics", metrics}});
  }
  return rows;
}

nlohmann::json TargetsJson(const std::vector<TargetCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const TargetCheck& c : checks) {
    out.push_back({{"workload", c.workload}, {"target", c.target}, {"measured", c.measured},
                   {"value", c.available ? Number(c.value) : nlohmann::json()}, {"bound", c.bound},
                   {"higher_is_better", c.higher_is_better}, {"available", c.available}, {"met", c.met()}});
  }
  return out;
}

}  // namespace

void WriteJson(const BenchConfig& config, const Results& results, const std::vector<TargetCheck>& checks,
               const std::string& path) {
  const nlohmann::json doc = {
      {"config",
       {{"dir", config.dir}, {"reps", config.reps}, {"scale", config.scale}, {"engines", config.engines},
        {"workloads", config.workloads}}},
      {"results", ResultsJson(results)},
      {"targets", TargetsJson(checks)},
  };
  std::ofstream file(path);
  file << doc.dump(2) << "\n";
  if (!file) throw BenchError("cannot write " + path);
}

}  // namespace spool::bench
