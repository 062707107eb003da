#include "results.h"

namespace spool::bench {

void Results::Add(std::string_view workload, std::string_view engine, std::string_view metric, double value) {
  Row& row = FindOrAdd(workload, engine);
  auto it = row.samples.find(metric);
  if (it == row.samples.end()) it = row.samples.emplace(std::string(metric), std::vector<double>()).first;
  it->second.push_back(value);
}

void Results::SetNote(std::string_view workload, std::string_view engine, std::string note) {
  FindOrAdd(workload, engine).note = std::move(note);
}

std::optional<Summary> Results::Get(std::string_view workload, std::string_view engine,
                                    std::string_view metric) const {
  const Row* row = Find(workload, engine);
  if (row == nullptr) return std::nullopt;
  auto it = row->samples.find(metric);
  if (it == row->samples.end() || it->second.empty()) return std::nullopt;
  return Summarize(it->second);
}

std::vector<const Results::Row*> Results::RowsOf(std::string_view workload) const {
  std::vector<const Row*> rows;
  for (const Row& row : rows_) {
    if (row.workload == workload) rows.push_back(&row);
  }
  return rows;
}

Results::Row& Results::FindOrAdd(std::string_view workload, std::string_view engine) {
  for (Row& row : rows_) {
    if (row.workload == workload && row.engine == engine) return row;
  }
  rows_.push_back(Row{std::string(workload), std::string(engine), {}, {}});
  return rows_.back();
}

const Results::Row* Results::Find(std::string_view workload, std::string_view engine) const {
  for (const Row& row : rows_) {
    if (row.workload == workload && row.engine == engine) return &row;
  }
  return nullptr;
}

}  // namespace spool::bench
