// Rewind points: rewind_summary events with a pin and a snapshot.
#include "spool/rewind/rewind_points.h"

#include <algorithm>
#include <set>

#include "json_reader.h"
#include "json_text.h"
#include "spool/storage/event_log.h"
#include "spool/stream/expression.h"
#include "spool/stream/records.h"

namespace spool {
namespace {

constexpr std::string_view kEventType = "rewind_summary";
constexpr std::string_view kPinPrefix = "rewind-point-";

// The point's version written down to the second, as rewind_timestamp is.
std::string SecondsUtc(uint64_t micros) { return FormatTimestampMicros(static_cast<int64_t>(micros)).substr(0, 19); }

std::string Details(const RewindPoint& p) {
  json datasets = json::array();
  for (const RewindPointDataset& d : p.datasets) {
    json checkpoints = json::object();
    for (const auto& [flow, data] : d.checkpoints) checkpoints[flow] = data;
    datasets.push_back(
        {{"identifier", d.identifier}, {"table_version", d.table_version}, {"checkpoints", checkpoints}});
  }
  json summary = {{"dry_run", p.dry_run},           {"epoch", p.position.epoch},
                  {"version", p.position.version},  {"timestamp", SecondsUtc(p.timestamp_us)},
                  {"timestamp_us", p.timestamp_us}, {"datasets", datasets}};
  return JsonText(json{{std::string(kEventType), summary}});
}

Status FromEvent(const Event& e, RewindPoint* p) {
  const json j = json::parse(e.details_json, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](std::string_view what) {
    return Status::Corruption("rewind_summary event " + e.id + ": " + std::string(what));
  };
  if (j.is_discarded() || !j.contains(kEventType)) return bad("no rewind_summary in its details");
  try {
    const json& s = j.at(kEventType);
    *p = RewindPoint{};
    p->id = e.id;
    p->recorded_us = e.timestamp_us;
    p->update_id = e.origin.update_id;
    p->message = e.message;
    p->dry_run = s.at("dry_run").get<bool>();
    p->position = LogPosition{s.at("epoch").get<uint64_t>(), s.at("version").get<uint64_t>()};
    p->timestamp_us = s.at("timestamp_us").get<uint64_t>();
    for (const json& d : s.at("datasets")) {
      RewindPointDataset dataset;
      dataset.identifier = d.at("identifier").get<std::string>();
      dataset.table_version = d.at("table_version").get<uint64_t>();
      for (const auto& [flow, data] : d.at("checkpoints").items()) dataset.checkpoints[flow] = data.get<std::string>();
      p->datasets.push_back(std::move(dataset));
    }
  } catch (const json::exception& ex) {
    return bad(ex.what());
  }
  return Status::OK();
}

// The table's newest commit at or before `at`; 0 when it has none.
Status TableVersion(Store* store, const TableId& id, uint64_t at, uint64_t* version) {
  std::vector<HistoryEntry> history;
  Status s = store->History(id, &history, at == store->log()->Newest().version ? 1 : 0);
  *version = 0;
  if (s.IsNotFound()) return Status::OK();
  SPOOL_RETURN_IF_ERROR(s);
  for (const HistoryEntry& entry : history) {  // newest first
    if (entry.version <= at) {
      *version = entry.version;
      break;
    }
  }
  return Status::OK();
}

}  // namespace

Status FindFirstBadCommit(Store* store, const TableId& table, std::string_view predicate, bool deletes,
                          BadCommit* bad) {
  *bad = BadCommit{};
  TableInfo info;
  SPOOL_RETURN_IF_ERROR(store->GetTable(table, &info));
  Expression expression;
  Status s = Expression::Parse(predicate, info.schema, &expression);
  if (!s.ok()) return Status::InvalidArgument("--where: " + std::string(s.message()));
  const VersionRange range = store->AvailableVersions();
  const uint64_t from = std::max<uint64_t>(range.oldest, info.created_version());
  Status failed;
  s = store->Changes(table, from, range.newest, [&](const ChangeRow& change) {
    if (bad->found && change.commit_version != bad->first_bad) return false;  // past the first bad commit
    const bool wanted =
        deletes ? change.change_type == ChangeType::kDelete
                : change.change_type == ChangeType::kInsert || change.change_type == ChangeType::kUpdatePostimage;
    if (!wanted) return true;
    bool matches = false;
    failed = expression.Matches(change.row, &matches);
    if (!failed.ok()) return false;
    if (matches) {
      bad->found = true;
      bad->first_bad = change.commit_version;
      bad->first_bad_timestamp_us = change.commit_timestamp_us;
      ++bad->matching_rows;
    }
    return true;
  });
  SPOOL_RETURN_IF_ERROR(failed);
  return s;
}

std::string RewindPointPinName(std::string_view point_id) { return std::string(kPinPrefix) + std::string(point_id); }

Status RecordRewindPoint(Store* store, const Pipeline& pipeline, std::string_view message, bool dry_run,
                         RewindPoint* point, std::string_view update_id) {
  const uint64_t newest = store->log()->Newest().version;
  if (newest == 0) return Status::InvalidArgument("the store has no commits: there is nothing to rewind to");
  return RecordRewindPointAt(store, pipeline, newest, message, dry_run, point, update_id);
}

Status RecordRewindPointAt(Store* store, const Pipeline& pipeline, uint64_t version, std::string_view message,
                           bool dry_run, RewindPoint* point, std::string_view update_id) {
  RewindPoint p;
  p.message = message;
  p.dry_run = dry_run;
  LogEntry entry;
  SPOOL_RETURN_IF_ERROR(store->log()->Read(version, &entry));
  p.position = entry.position;
  p.timestamp_us = entry.timestamp_us;
  const bool newest = version == store->log()->Newest().version;
  for (const PipelineDataset& d : pipeline.Datasets()) {
    RewindPointDataset dataset;
    dataset.identifier = d.id.ToString();
    SPOOL_RETURN_IF_ERROR(TableVersion(store, d.id, version, &dataset.table_version));
    for (const std::string& flow : d.flows) {
      std::string data;
      bool found = false;
      SPOOL_RETURN_IF_ERROR(store->GetCheckpointAt(flow, version, &data, &found));
      if (found) dataset.checkpoints[flow] = std::move(data);
    }
    p.datasets.push_back(std::move(dataset));
  }
  // The state at the newest version can be rebuilt after vacuum: a snapshot
  // there, unless one is there already.
  std::vector<SnapshotInfo> snapshots;
  SPOOL_RETURN_IF_ERROR(store->ListSnapshots(&snapshots));
  if (newest && (snapshots.empty() || snapshots.back().version != version))
    SPOOL_RETURN_IF_ERROR(store->TakeSnapshot());
  // And a rewind to it can swap in a copy of the state instead of
  // rebuilding it from that snapshot.
  if (newest) SPOOL_RETURN_IF_ERROR(store->SaveStateCopy());
  Event e;
  e.origin.pipeline_id = pipeline.id();
  e.origin.update_id = update_id;
  e.event_type = kEventType;
  e.message = std::string(message);
  e.details_json = Details(p);
  SPOOL_RETURN_IF_ERROR(store->events()->Append(&e));
  p.id = e.id;
  p.recorded_us = e.timestamp_us;
  p.update_id = update_id;
  SPOOL_RETURN_IF_ERROR(store->AddPin(RewindPointPinName(p.id), p.position.version));
  if (point != nullptr) *point = std::move(p);
  return Status::OK();
}

Status ListRewindPoints(Store* store, uint64_t since_us, std::vector<RewindPoint>* points) {
  EventQuery query;
  query.event_type = std::string(kEventType);
  if (since_us != 0) query.since_us = since_us;
  std::vector<Event> events;
  SPOOL_RETURN_IF_ERROR(store->events()->Query(query, &events));
  points->clear();
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    RewindPoint p;
    SPOOL_RETURN_IF_ERROR(FromEvent(*it, &p));
    points->push_back(std::move(p));
  }
  return Status::OK();
}

Status FindRewindPoint(Store* store, std::string_view id, RewindPoint* point) {
  std::vector<RewindPoint> points;
  SPOOL_RETURN_IF_ERROR(ListRewindPoints(store, 0, &points));
  for (RewindPoint& p : points) {
    if (p.id == id) {
      *point = std::move(p);
      return Status::OK();
    }
  }
  return Status::NotFound("no rewind point has id " + std::string(id));
}

Status GetRewindPointSettings(const PipelineSpec& spec, RewindPointSettings* settings) {
  *settings = RewindPointSettings{};
  for (auto [key, value] : {std::pair{"pipelines.rewindPoints.interval", &settings->interval_us},
                            std::pair{"pipelines.rewindPoints.retention", &settings->retention_us}}) {
    auto it = spec.configuration.find(key);
    if (it == spec.configuration.end()) continue;
    Status s = ParseDuration(it->second, value);
    if (s.ok() && *value == 0) s = Status::InvalidArgument("it must be longer than zero");
    if (!s.ok()) return Status::InvalidArgument("configuration " + std::string(key) + ": " + std::string(s.message()));
  }
  return Status::OK();
}

Status LatestRewindPoint(Store* store, uint64_t at_or_before_us, RewindPoint* point) {
  std::vector<RewindPoint> points;
  SPOOL_RETURN_IF_ERROR(ListRewindPoints(store, 0, &points));
  for (RewindPoint& p : points) {  // newest first
    if (p.recorded_us <= at_or_before_us && store->OnHistory(p.position)) {
      *point = std::move(p);
      return Status::OK();
    }
  }
  return Status::NotFound("no rewind point on the current history was recorded at or before " +
                          FormatTimestampUtc(at_or_before_us));
}

PointUse RewindPointUse(Store* store, const RewindPoint& point) {
  if (store->OnHistory(point.position)) return PointUse::kUsable;
  // A version the log no longer reaches back to is beyond retention; any
  // other point off the history was cut by a later rewind (versions are
  // never used again, so its version is on no other history).
  const uint64_t version = point.position.version;
  if (version < store->log()->Oldest().version || version <= store->log()->BeforeOldest().version) {
    return PointUse::kBeyondRetention;
  }
  return PointUse::kCut;
}

std::string_view PointUseName(PointUse use) {
  switch (use) {
    case PointUse::kUsable:
      return "usable";
    case PointUse::kCut:
      return "cut";
    case PointUse::kBeyondRetention:
      return "beyond_retention";
  }
  return "usable";
}

Status MaybeRecordPeriodicRewindPoint(Store* store, const Pipeline& pipeline, uint64_t interval_us,
                                      uint64_t retention_us, bool* recorded, std::string_view update_id) {
  *recorded = false;
  const uint64_t now = store->options().env->NowMicros();
  std::vector<RewindPoint> points;
  SPOOL_RETURN_IF_ERROR(ListRewindPoints(store, 0, &points));
  // Expired points no longer hold their versions from vacuum; the others
  // do (a crash may have come between a point's event and its pin).
  std::set<std::string> pinned;
  for (const auto& [name, version] : store->Pins()) pinned.insert(name);
  for (const RewindPoint& p : points) {
    const std::string pin = RewindPointPinName(p.id);
    const bool expired = p.recorded_us + retention_us < now;
    if (expired && pinned.count(pin) != 0) SPOOL_RETURN_IF_ERROR(store->RemovePin(pin));
    if (!expired && pinned.count(pin) == 0 && store->OnHistory(p.position)) {
      SPOOL_RETURN_IF_ERROR(store->AddPin(pin, p.position.version));
    }
  }
  if (store->log()->Newest().version == 0) return Status::OK();
  if (!points.empty() && points.front().recorded_us + interval_us > now) return Status::OK();
  SPOOL_RETURN_IF_ERROR(
      RecordRewindPoint(store, pipeline, kPeriodicRewindPointMessage, /*dry_run=*/false, nullptr, update_id));
  *recorded = true;
  return Status::OK();
}

}  // namespace spool
