#include "results.h"

#include "engine.h"
#include "units.h"

namespace spool::bench {

void Results::Add(std::string_view workload, std::string_view engine, std::string_view metric, double value) {
  Row& row = FindOrAdd(workload, engine, std::nullopt);
  row.samples[std::string(metric)].push_back(value);
}

void Results::AddAt(std::string_view workload, std::string_view engine, const Point& point, std::string_view metric,
                    double value) {
  Row& row = FindOrAdd(workload, engine, point);
  row.samples[std::string(metric)].push_back(value);
}

void Results::AddTo(const Place& place, std::string_view engine, std::string_view metric, double value) {
  Row& row = FindOrAdd(place.workload, engine, place.point);
  row.samples[std::string(metric)].push_back(value);
}

void Results::SetNote(std::string_view workload, std::string_view engine, std::string note) {
  FindOrAdd(workload, engine, std::nullopt).note = std::move(note);
}

std::optional<Summary> Results::SummaryOf(const Row* row, std::string_view metric) {
  if (row == nullptr) return std::nullopt;
  auto it = row->samples.find(metric);
  if (it == row->samples.end() || it->second.empty()) return std::nullopt;
  return Summarize(it->second);
}

std::optional<Summary> Results::Get(std::string_view workload, std::string_view engine, std::string_view metric) const {
  return SummaryOf(Find(workload, engine, std::nullopt), metric);
}

double Results::Median(std::string_view workload, std::string_view engine, std::string_view metric) const {
  const std::optional<Summary> summary = Get(workload, engine, metric);
  return summary ? summary->median : kNaN;
}

std::optional<Summary> Results::GetAt(std::string_view workload, std::string_view engine, const Point& point,
                                      std::string_view metric) const {
  return SummaryOf(Find(workload, engine, point), metric);
}

const std::vector<double>* Results::SamplesOf(const Row& row, std::string_view engine, std::string_view metric) const {
  const Row* other = Find(row.workload, engine, row.point);
  if (other == nullptr) return nullptr;
  auto it = other->samples.find(metric);
  return it == other->samples.end() || it->second.empty() ? nullptr : &it->second;
}

std::vector<const Results::Row*> Results::RowsOf(std::string_view workload) const {
  std::vector<const Row*> rows;
  for (const Row& row : rows_) {
    if (row.workload == workload) rows.push_back(&row);
  }
  return rows;
}

Results::Row& Results::FindOrAdd(std::string_view workload, std::string_view engine,
                                 const std::optional<Point>& point) {
  for (Row& row : rows_) {
    if (row.workload == workload && row.engine == engine && row.point == point) return row;
  }
  rows_.push_back(Row{std::string(workload), std::string(engine), point, {}, {}});
  return rows_.back();
}

const Results::Row* Results::Find(std::string_view workload, std::string_view engine,
                                  const std::optional<Point>& point) const {
  for (const Row& row : rows_) {
    if (row.workload == workload && row.engine == engine && row.point == point) return &row;
  }
  return nullptr;
}

std::optional<Summary> RatioToSpool(const Results& results, const Results::Row& row, std::string_view metric) {
  const std::vector<double>* spool = results.SamplesOf(row, kSpool, metric);
  auto it = row.samples.find(metric);
  if (spool == nullptr || it == row.samples.end() || it->second.empty()) return std::nullopt;
  const std::vector<double>& mine = it->second;
  if (mine.size() != spool->size()) {
    const double ratio = Summarize(mine).median / Summarize(*spool).median;
    return Summary{ratio, ratio, ratio};
  }
  std::vector<double> ratios;
  for (size_t i = 0; i < mine.size(); ++i) ratios.push_back(mine[i] / (*spool)[i]);
  return Summarize(std::move(ratios));
}

}  // namespace spool::bench
