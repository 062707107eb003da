#include "json_format.h"

#include <cmath>

#include "cli_format.h"
#include "row_format.h"

namespace spool::cli {

nlohmann::ordered_json EventJson(const Event& e) {
  nlohmann::ordered_json details = nlohmann::ordered_json::parse(e.details_json, nullptr, false);
  return {{"id", e.id},
          {"sequence", e.sequence},
          {"origin",
           {{"pipeline_id", e.origin.pipeline_id},
            {"update_id", e.origin.update_id},
            {"flow_name", e.origin.flow_name},
            {"dataset_name", e.origin.dataset_name}}},
          {"timestamp", FormatTimestamp(e.timestamp_us)},
          {"level", EventLevelName(e.level)},
          {"event_type", e.event_type},
          {"message", e.message},
          {"details", details.is_discarded() ? nlohmann::ordered_json(e.details_json) : details}};
}

nlohmann::ordered_json RewindPointJson(const RewindPoint& p, PointUse use) {
  nlohmann::ordered_json datasets = nlohmann::ordered_json::array();
  for (const RewindPointDataset& d : p.datasets) {
    datasets.push_back({{"identifier", d.identifier}, {"table_version", d.table_version}});
  }
  return {{"rewind_point_id", p.id},
          {"timestamp", FormatTimestamp(p.recorded_us)},
          {"message", p.message},
          {"dry_run", p.dry_run},
          {"epoch", p.position.epoch},
          {"version", p.position.version},
          {"version_timestamp", FormatTimestamp(p.timestamp_us)},
          {"on_history", use == PointUse::kUsable},
          {"use", PointUseName(use)},
          {"datasets", datasets}};
}

nlohmann::ordered_json ValueJson(const Value& value) {
  switch (value.index()) {
    case 0:
      return nullptr;
    case 1:
      return std::get<int64_t>(value);
    case 2: {
      const double d = std::get<double>(value);
      return std::isfinite(d) ? nlohmann::ordered_json(d) : nlohmann::ordered_json(ValueText(value));
    }
    case 3:
      return std::get<std::string>(value);
    case 4:
      return std::get<bool>(value);
    default:
      return ValueText(value);  // timestamp, bytes
  }
}

nlohmann::ordered_json HistoryJson(const HistoryEntry& h) {
  nlohmann::ordered_json parameters = nlohmann::ordered_json::parse(h.parameters_json, nullptr, false);
  if (parameters.is_discarded()) parameters = h.parameters_json;
  return {{"version", h.version},          {"timestamp", FormatTimestamp(h.timestamp_us)},
          {"operation", h.operation},      {"operationParameters", parameters},
          {"operationMetrics", h.metrics}, {"updateId", h.update_id}};
}

}  // namespace spool::cli
