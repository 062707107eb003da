// Rewinding a pipeline: validation and the whole-pipeline rewind.
#include "spool/rewind/rewind.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "json_reader.h"
#include "json_text.h"
#include "kill_point.h"
#include "refusal.h"
#include "spool/storage/event_log.h"
#include "update_events.h"

namespace spool {
namespace {

constexpr std::string_view kStartedEvent = "rewind_started";
constexpr std::string_view kCompletedEvent = "rewind_completed";

// The oldest version a rewind could still go back to, for an error: the
// log's first when it starts at version 1, else the oldest snapshot whose
// following commits the log keeps.
std::string OldestPoint(Store* store) {
  const uint64_t oldest = store->log()->Oldest().version;
  const uint64_t before_oldest = store->log()->BeforeOldest().version;
  std::optional<uint64_t> version;
  if (before_oldest == 0) version = oldest;
  std::vector<SnapshotInfo> snapshots;
  if (!version && store->ListSnapshots(&snapshots).ok()) {
    for (const SnapshotInfo& snapshot : snapshots) {
      if (snapshot.version >= before_oldest) {
        version = std::max(snapshot.version, oldest);
        break;
      }
    }
  }
  if (!version) return "none: no snapshot is followed by the commits the log keeps";
  LogEntry entry;
  if (*version == 0 || !store->log()->Read(*version, &entry).ok()) return "version " + std::to_string(*version);
  return "version " + std::to_string(*version) + " (" + FormatTimestampUtc(entry.timestamp_us) + ")";
}

Status ResolveTarget(Store* store, const RewindSpec& spec, RewindPlan* plan) {
  if (spec.rewind_point_id && spec.rewind_timestamp) {
    return Refuse(rewind_error::kMultipleTargets, "give exactly one of rewind_point_id and rewind_timestamp, not both");
  }
  if (!spec.rewind_point_id && !spec.rewind_timestamp) {
    return Refuse(rewind_error::kNoTarget,
                  "give one of rewind_point_id (see `spool rewind-points`) or rewind_timestamp");
  }
  if (spec.rewind_point_id) {
    RewindPoint point;
    Status s = FindRewindPoint(store, *spec.rewind_point_id, &point);
    if (s.IsNotFound()) {
      return Refuse(rewind_error::kPointNotFound, "no rewind_summary event has id " + *spec.rewind_point_id +
                                                      "; list the points with `spool rewind-points DIR`");
    }
    SPOOL_RETURN_IF_ERROR(s);
    switch (RewindPointUse(store, point)) {
      case PointUse::kUsable:
        break;
      case PointUse::kCut:
        return Refuse(rewind_error::kPointNotFound, "rewind point " + point.id + " (version " +
                                                        std::to_string(point.position.version) +
                                                        ") is on a history a later rewind cut off");
      case PointUse::kBeyondRetention:
        return Refuse(rewind_error::kBeyondRetention, "rewind point " + point.id + " (version " +
                                                          std::to_string(point.position.version) +
                                                          ") is no longer retained: vacuum removed what reaching it "
                                                          "needs; the oldest possible point is " +
                                                          OldestPoint(store));
    }
    plan->target = point.position;
    plan->target_timestamp_us = point.timestamp_us;
    plan->point = std::move(point);
    return Status::OK();
  }
  int64_t micros = 0;
  Status s = ParseRewindTimestamp(*spec.rewind_timestamp, &micros);
  if (!s.ok()) return Refuse(rewind_error::kInvalidTimestamp, std::string(s.message()));
  uint64_t version = 0;
  s = micros < 0 ? Status::NotFound("before 1970")
                 : store->log()->VersionAtTime(static_cast<uint64_t>(micros), &version);
  if (s.IsNotFound()) {
    return Refuse(rewind_error::kBeyondRetention, "no retained commit is at or before " + *spec.rewind_timestamp +
                                                      " UTC; the oldest possible point is " + OldestPoint(store));
  }
  SPOOL_RETURN_IF_ERROR(s);
  LogEntry entry;
  SPOOL_RETURN_IF_ERROR(store->log()->Read(version, &entry));
  plan->target = entry.position;
  plan->target_timestamp_us = entry.timestamp_us;
  return Status::OK();
}

// The datasets the spec rewinds, cascades followed downstream.
Status ResolveDatasets(const std::vector<PipelineDataset>& all, const RewindSpec& spec, RewindPlan* plan) {
  std::map<std::string, const PipelineDataset*> by_name;
  for (const PipelineDataset& d : all) by_name[d.id.ToString()] = &d;
  if (!spec.datasets) {
    for (const PipelineDataset& d : all) plan->datasets.push_back(RewindDataset{d.id.ToString(), true, true});
    return Status::OK();
  }
  std::map<std::string, bool> chosen;  // identifier -> reset_checkpoints
  for (const RewindDataset& d : *spec.datasets) {
    if (by_name.count(d.identifier) == 0) {
      std::string names;
      for (const auto& [name, dataset] : by_name) names += (names.empty() ? "" : ", ") + name;
      return Refuse(rewind_error::kDatasetNotFound,
                    "the pipeline has no dataset " + d.identifier + " (its datasets: " + names + ")");
    }
    chosen[d.identifier] = d.reset_checkpoints;
  }
  // Downstream of a cascading dataset: every dataset one of whose upstreams
  // is rewound, in DAG order (all is upstream first).
  std::set<std::string> cascading;
  for (const RewindDataset& d : *spec.datasets) {
    if (d.cascade) cascading.insert(d.identifier);
  }
  for (const PipelineDataset& d : all) {
    const std::string name = d.id.ToString();
    for (const TableId& up : d.upstream) {
      if (cascading.count(up.ToString()) == 0) continue;
      if (chosen.count(name) == 0) chosen[name] = chosen[up.ToString()];
      cascading.insert(name);
    }
  }
  for (const PipelineDataset& d : all) {
    const std::string name = d.id.ToString();
    auto it = chosen.find(name);
    if (it == chosen.end()) continue;
    const bool reset = it->second;
    if (!reset && d.external_source) {
      return Refuse(rewind_error::kExternalSourceRequiresReset,
                    name +
                        " is written by a flow reading files or a topic, whose offsets must be rewound with its "
                        "table: set reset_checkpoints to true for it");
    }
    for (const TableId& up : d.upstream) {
      auto upstream = chosen.find(up.ToString());
      if (upstream != chosen.end() && upstream->second != reset) {
        return Refuse(rewind_error::kInconsistentUpstreamReset,
                      name + " has reset_checkpoints " + (reset ? "true" : "false") + " but its upstream " +
                          upstream->first + " has " + (upstream->second ? "true" : "false") +
                          ": a table and its upstreams must agree");
      }
    }
    plan->datasets.push_back(RewindDataset{name, cascading.count(name) != 0, reset});
  }
  plan->whole_pipeline =
      plan->datasets.size() == all.size() && std::all_of(plan->datasets.begin(), plan->datasets.end(),
                                                         [](const RewindDataset& d) { return d.reset_checkpoints; });
  return Status::OK();
}

// Every rewind_started and rewind_completed event, in order.
Status RewindEvents(Store* store, std::vector<Event>* events) {
  events->clear();
  for (std::string_view type : {kStartedEvent, kCompletedEvent}) {
    EventQuery query;
    query.event_type = std::string(type);
    std::vector<Event> some;
    SPOOL_RETURN_IF_ERROR(store->events()->Query(query, &some));
    events->insert(events->end(), some.begin(), some.end());
  }
  std::sort(events->begin(), events->end(), [](const Event& a, const Event& b) { return a.sequence < b.sequence; });
  return Status::OK();
}

// What a rewind of some datasets restores in its one RESTORE commit: each
// dataset and its flows' operator state; with reset_checkpoints, the flows'
// checkpoints (source offsets) too, so that they reprocess from the point.
// Without, the flows go on from where they are: what they read after the
// point is not reprocessed, and their state matches their tables again.
void RestoredBy(const Pipeline& pipeline, const RewindPlan& plan, std::vector<TableId>* tables,
                std::vector<std::string>* flows) {
  for (const PipelineDataset& d : pipeline.Datasets()) {
    auto chosen = std::find_if(plan.datasets.begin(), plan.datasets.end(),
                               [&](const RewindDataset& r) { return r.identifier == d.id.ToString(); });
    if (chosen == plan.datasets.end()) continue;
    tables->push_back(d.id);
    tables->insert(tables->end(), d.state_tables.begin(), d.state_tables.end());
    if (chosen->reset_checkpoints) flows->insert(flows->end(), d.flows.begin(), d.flows.end());
  }
}

// The flows whose sources a replay from the point reads again (every flow
// when the whole pipeline is rewound).
std::vector<std::string> ReplayedFlows(const Pipeline& pipeline, const RewindPlan& plan) {
  std::vector<TableId> tables;
  std::vector<std::string> flows;
  RestoredBy(pipeline, plan, &tables, &flows);
  return flows;
}

// A cut takes back every commit after the target, the pipeline's or not:
// when some changed tables outside the pipeline (or tables' properties),
// the rewind restores the pipeline's tables instead, leaving those. A table
// of the pipeline created again since the target cannot be restored: such
// a rewind is refused (a cut would take the other changes back with it).
Status ChooseWholeRewind(Store* store, const Pipeline& pipeline, RewindPlan* plan) {
  std::set<TableId> owned;
  for (const PipelineDataset& d : pipeline.Datasets()) {
    owned.insert(d.id);
    owned.insert(d.state_tables.begin(), d.state_tables.end());
  }
  for (const TableInfo& table : store->ListTables()) {
    // The definition, and state of flows gone since; not what the sinks
    // published, which a rewind leaves as it is (the change feed carries
    // the rewind to their subscribers).
    if (table.id.IsSpools() && table.id.ToString() != kSinkProgressTable) owned.insert(table.id);
  }
  std::vector<std::string> recreated;
  SPOOL_RETURN_IF_ERROR(store->ChangesBeyond(plan->target.version, owned, &plan->kept, &recreated));
  plan->by_restore = !plan->kept.empty();
  if (!plan->by_restore || recreated.empty()) return Status::OK();
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  return Refuse(rewind_error::kTableRecreated,
                "after version " + std::to_string(plan->target.version) + " the store changed " + list(plan->kept) +
                    ", which a rewind of the pipeline must keep, and " + list(recreated) +
                    " was dropped or created again (a full refresh that changed its columns), which only a log cut "
                    "would take back: rewind to a point after that");
}

// The cut may have removed the definition the pipeline runs: record it
// again (a rewind brings back data, not code).
Status RecordDefinitionAgain(Store* store, const Pipeline& pipeline) {
  if (pipeline.id().empty()) return Status::OK();  // never recorded
  PipelineSpec recorded;
  Status s = GetPipelineDefinition(store, &recorded);
  if (s.ok() && PipelineSpecToJson(recorded) == PipelineSpecToJson(pipeline.spec())) return Status::OK();
  if (!s.ok() && !s.IsNotFound()) return s;
  return SetPipelineDefinition(store, pipeline.spec());
}

// The rewind itself, within its update.
Status Rewind(Store* store, const Pipeline& pipeline, const RewindPlan& plan, const RewindRun& run,
              RewindPoint* dry_run_point) {
  const std::string target =
      "version " + std::to_string(plan.target.version) + " (" + FormatTimestampUtc(plan.target_timestamp_us) + ")";
  if (run.dry_run) {
    // The same target validated again gives the point already recorded for
    // it, so that repeated dry runs do not pile up points.
    const std::string message = "Rewind dry run validated a rewind to " + target + ".";
    std::vector<RewindPoint> points;
    SPOOL_RETURN_IF_ERROR(ListRewindPoints(store, 0, &points));
    auto same = std::find_if(points.begin(), points.end(), [&](const RewindPoint& p) {
      return p.dry_run && p.position == plan.target && p.message == message &&
             RewindPointUse(store, p) == PointUse::kUsable;
    });
    RewindPoint point;
    if (same != points.end()) {
      point = *same;
    } else {
      SPOOL_RETURN_IF_ERROR(
          RecordRewindPointAt(store, pipeline, plan.target.version, message, true, &point, run.update_id));
    }
    if (dry_run_point != nullptr) *dry_run_point = std::move(point);
    return Status::OK();
  }
  SPOOL_RETURN_IF_ERROR(
      RecordUpdateProgress(store, pipeline.id(), run.update_id, UpdateState::kResetting, {}, /*sync=*/false));
  json datasets = json::array();
  std::string names;
  for (const RewindDataset& d : plan.datasets) {
    datasets.push_back(
        {{"identifier", d.identifier}, {"cascade", d.cascade}, {"reset_checkpoints", d.reset_checkpoints}});
    names += (names.empty() ? "" : ", ") + d.identifier;
  }
  const json where = {{"epoch", plan.target.epoch},
                      {"version", plan.target.version},
                      {"rewind_point_id", plan.point ? plan.point->id : ""},
                      {"whole_pipeline", plan.whole_pipeline},
                      {"datasets", datasets}};
  const std::string what = plan.whole_pipeline ? "the pipeline" : names;
  // Durable before anything changes, with the events before it: a crash
  // from here on is an incomplete rewind that the next open sees.
  SPOOL_RETURN_IF_ERROR(AppendUpdateEvent(store, pipeline, run.update_id, EventLevel::kInfo, kStartedEvent,
                                          "Rewinding " + what + " to " + target + ".", {{"rewind", where}}));
  SPOOL_KILL_POINT("rewind.started_event");
  json done = where;  // and what an undo needs: the version to restore
  if (plan.whole_pipeline && !plan.by_restore) {
    const uint64_t before = store->log()->Newest().version;
    LogPosition restore;
    SPOOL_RETURN_IF_ERROR(store->RewindTo(plan.target.version, &restore, run.update_id));
    SPOOL_KILL_POINT("rewind.store_rewound");
    SPOOL_RETURN_IF_ERROR(RecordDefinitionAgain(store, pipeline));
    done["cut_epoch"] = restore.epoch;
    done["restore_version"] = restore.version;
    done["undo_version"] = before;
  } else {
    std::vector<TableId> tables;
    std::vector<std::string> flows;
    RestoredBy(pipeline, plan, &tables, &flows);
    CommitResult restore;
    SPOOL_RETURN_IF_ERROR(store->RestoreTables(tables, flows, plan.target.version, &restore, run.update_id));
    done["restore_version"] = restore.version;
    done["undo_version"] = restore.version - 1;
    if (plan.by_restore) done["kept"] = plan.kept;
  }
  SPOOL_KILL_POINT("rewind.before_completed_event");
  const LogPosition head = store->log()->Newest();
  done["head"] = {{"epoch", head.epoch}, {"version", head.version}};
  // Durable with the update's COMPLETED, which follows it.
  return AppendUpdateEvent(store, pipeline, run.update_id, EventLevel::kInfo, kCompletedEvent,
                           "Rewound " + what + " to " + target + "; the next update replays from there.",
                           {{"rewind", done}}, /*sync=*/false);
}

}  // namespace

Status CheckNoIncompleteRewind(Store* store, const PipelineSpec& spec) {
  std::optional<IncompleteRewind> incomplete;
  SPOOL_RETURN_IF_ERROR(FindIncompleteRewind(store, &incomplete));
  auto allow = spec.configuration.find("pipelines.allowUpdateAfterIncompleteRewind");
  if (!incomplete || (allow != spec.configuration.end() && allow->second == "true")) return Status::OK();
  return Status::Failed("the rewind of update " + incomplete->update_id + " to version " +
                        std::to_string(incomplete->target.version) +
                        " did not complete: rewind again (to the same or another point) before updating, or set "
                        "pipelines.allowUpdateAfterIncompleteRewind to true in the pipeline's configuration");
}

Status PlanRewind(Store* store, const Pipeline& pipeline, const RewindSpec& spec, RewindPlan* plan) {
  RewindPlan out;
  SPOOL_RETURN_IF_ERROR(CheckRewindSpec(spec));
  SPOOL_RETURN_IF_ERROR(ResolveTarget(store, spec, &out));
  SPOOL_RETURN_IF_ERROR(ResolveDatasets(pipeline.Datasets(), spec, &out));
  Status s = store->CanRewindTo(out.target.version);
  if (s.IsNotFound() || s.IsInvalidArgument()) {
    return Refuse(rewind_error::kBeyondRetention,
                  std::string(s.message()) + "; the oldest possible point is " + OldestPoint(store));
  }
  SPOOL_RETURN_IF_ERROR(s);
  if (out.whole_pipeline) SPOOL_RETURN_IF_ERROR(ChooseWholeRewind(store, pipeline, &out));
  const std::vector<std::string> replayed = ReplayedFlows(pipeline, out);
  if (!replayed.empty()) {                     // none: nothing is read again
    std::map<std::string, std::string> known;  // a point records its checkpoints
    if (out.point) {
      for (const RewindPointDataset& d : out.point->datasets) known.insert(d.checkpoints.begin(), d.checkpoints.end());
    }
    s = pipeline.CheckSourcesRetain(out.target.version, replayed, known);
    if (s.IsInvalidArgument()) return Refuse(rewind_error::kSourceRetentionExceeded, std::string(s.message()));
    SPOOL_RETURN_IF_ERROR(s);
  }
  *plan = std::move(out);
  return Status::OK();
}

namespace {

// Runs `rewind` as an update: a create_update event, then update_progress
// QUEUED, INITIALIZING, and COMPLETED or FAILED with the error.
Status RunAsUpdate(Store* store, const Pipeline& pipeline, RewindRun* run, bool undo,
                   const std::function<Status()>& rewind) {
  if (run->update_id.empty()) run->update_id = NewUpdateId();
  const std::string& update_id = run->update_id;
  std::unique_ptr<UpdateClaim> claim;
  SPOOL_RETURN_IF_ERROR(store->ClaimUpdate(update_id, &claim));
  const std::string cause(UpdateCauseName(run->cause));
  json created = {{"cause", cause}, {"rewind", true}, {"dry_run", run->dry_run}};
  if (undo) created["undo"] = true;
  // Not synced one by one: these become durable with the rewind's first
  // synced event (rewind_started, before anything changes), or with FAILED
  // or COMPLETED. A crash before then loses an update that changed nothing.
  SPOOL_RETURN_IF_ERROR(AppendUpdateEvent(store, pipeline, update_id, EventLevel::kInfo, "create_update",
                                          "Update " + update_id.substr(0, 6) + " started by " + cause + ".",
                                          {{"create_update", created}}, /*sync=*/false));
  SPOOL_RETURN_IF_ERROR(
      RecordUpdateProgress(store, pipeline.id(), update_id, UpdateState::kQueued, {}, /*sync=*/false));
  SPOOL_RETURN_IF_ERROR(
      RecordUpdateProgress(store, pipeline.id(), update_id, UpdateState::kInitializing, {}, /*sync=*/false));
  Status s = rewind();
  if (!s.ok()) {
    // Best effort: the rewind's own error is what counts.
    (void)RecordUpdateProgress(store, pipeline.id(), update_id, UpdateState::kFailed, s.message());
    return s;
  }
  return RecordUpdateProgress(store, pipeline.id(), update_id, UpdateState::kCompleted);
}

Status CannotUndo(const std::string& why) {
  return Status::InvalidArgument(std::string(kUndoNotPossible) + ": " + why);
}

UndoPlan UndoPlanFromJson(const json& j) {
  UndoPlan plan;
  plan.rewind_update_id = j.value("rewind_update_id", "");
  plan.target.epoch = j.value("epoch", uint64_t{0});
  plan.target.version = j.value("version", uint64_t{0});
  plan.whole_pipeline = j.value("whole_pipeline", true);
  plan.version = j.value("undo_version", uint64_t{0});
  if (j.contains("datasets") && j["datasets"].is_array()) {
    for (const json& d : j["datasets"]) {
      plan.datasets.push_back(
          RewindDataset{d.value("identifier", ""), d.value("cascade", true), d.value("reset_checkpoints", true)});
    }
  }
  return plan;
}

json UndoPlanToJson(const UndoPlan& plan) {
  json datasets = json::array();
  for (const RewindDataset& d : plan.datasets) {
    datasets.push_back(
        {{"identifier", d.identifier}, {"cascade", d.cascade}, {"reset_checkpoints", d.reset_checkpoints}});
  }
  return {{"rewind_update_id", plan.rewind_update_id}, {"epoch", plan.target.epoch},   {"version", plan.target.version},
          {"whole_pipeline", plan.whole_pipeline},     {"undo_version", plan.version}, {"datasets", datasets}};
}

// Brings back what the rewind took (see ExecuteUndo).
Status Undo(Store* store, const Pipeline& pipeline, const UndoPlan& plan, const RewindRun& run) {
  SPOOL_RETURN_IF_ERROR(
      RecordUpdateProgress(store, pipeline.id(), run.update_id, UpdateState::kResetting, {}, /*sync=*/false));
  const json where = {{"epoch", plan.target.epoch}, {"version", plan.target.version}, {"undo", UndoPlanToJson(plan)}};
  const std::string what =
      "the rewind of update " + plan.rewind_update_id + " to version " + std::to_string(plan.target.version);
  SPOOL_RETURN_IF_ERROR(AppendUpdateEvent(store, pipeline, run.update_id, EventLevel::kInfo, kStartedEvent,
                                          "Undoing " + what + ".", {{"rewind", where}}));
  RewindPlan rewound;
  rewound.datasets = plan.datasets;
  std::vector<TableId> tables;
  std::vector<std::string> flows;
  RestoredBy(pipeline, rewound, &tables, &flows);
  SPOOL_RETURN_IF_ERROR(store->RestoreTables(tables, flows, plan.version, nullptr, run.update_id));
  return AppendUpdateEvent(store, pipeline, run.update_id, EventLevel::kInfo, kCompletedEvent, "Undid " + what + ".",
                           {{"rewind", where}}, /*sync=*/false);  // durable with COMPLETED
}

}  // namespace

Status ExecuteRewind(Store* store, const Pipeline& pipeline, const RewindPlan& plan, RewindRun* run,
                     RewindPoint* dry_run_point) {
  return RunAsUpdate(store, pipeline, run, /*undo=*/false,
                     [&] { return Rewind(store, pipeline, plan, *run, dry_run_point); });
}

Status PlanUndo(Store* store, UndoPlan* plan) {
  std::vector<Event> events;
  SPOOL_RETURN_IF_ERROR(RewindEvents(store, &events));
  if (events.empty()) return CannotUndo("the pipeline was never rewound");
  const Event& last = events.back();
  const json details = json::parse(last.details_json, nullptr, /*allow_exceptions=*/false);
  const json rewind = details.is_object() && details.contains("rewind") ? details["rewind"] : json::object();
  if (last.event_type == kStartedEvent) {
    // An undo that did not complete is carried on; a rewind must complete
    // (by rewinding again) before it can be undone.
    if (!rewind.contains("undo")) {
      return CannotUndo("the last rewind (update " + last.origin.update_id +
                        ") did not complete: rewind again to complete it first");
    }
    *plan = UndoPlanFromJson(rewind["undo"]);
    plan->resume = true;
    return Status::OK();
  }
  if (rewind.contains("undo")) return CannotUndo("the last rewind was undone already");
  if (!rewind.contains("head") || !rewind.contains("undo_version")) {
    return CannotUndo("the last rewind did not record what an undo needs (an older Spool did it)");
  }
  UndoPlan out = UndoPlanFromJson(rewind);
  out.rewind_update_id = last.origin.update_id;
  const LogPosition head{rewind["head"].value("epoch", uint64_t{0}), rewind["head"].value("version", uint64_t{0})};
  const LogPosition newest = store->log()->Newest();
  if (!(newest == head)) {
    return CannotUndo("version " + std::to_string(newest.version) +
                      " was committed after the rewind (which ended at version " + std::to_string(head.version) +
                      "): an undo brings the history back only while nothing new "
                      "has been committed since the rewind");
  }
  *plan = std::move(out);
  return Status::OK();
}

Status ExecuteUndo(Store* store, const Pipeline& pipeline, const UndoPlan& plan, RewindRun* run) {
  RewindPlan rewound;
  rewound.datasets = plan.datasets;
  std::vector<TableId> tables;
  std::vector<std::string> flows;
  RestoredBy(pipeline, rewound, &tables, &flows);
  for (const TableId& id : tables) {
    TableInfo table;
    if (store->GetTable(id, &table).IsNotFound()) {
      return CannotUndo("table " + id.ToString() +
                        " did not exist at the rewind's point: an undo restores the tables "
                        "the rewind kept; run the pipeline to build it again");
    }
  }
  return RunAsUpdate(store, pipeline, run, /*undo=*/true, [&] { return Undo(store, pipeline, plan, *run); });
}

Status FindIncompleteRewind(Store* store, std::optional<IncompleteRewind>* incomplete) {
  incomplete->reset();
  std::vector<Event> events;
  SPOOL_RETURN_IF_ERROR(RewindEvents(store, &events));
  if (events.empty() || events.back().event_type == kCompletedEvent) return Status::OK();
  const Event& started = events.back();
  const json details = json::parse(started.details_json, nullptr, /*allow_exceptions=*/false);
  IncompleteRewind found;
  found.update_id = started.origin.update_id;
  found.started_us = started.timestamp_us;
  if (!details.is_discarded() && details.contains("rewind")) {
    found.target.epoch = details["rewind"].value("epoch", uint64_t{0});
    found.target.version = details["rewind"].value("version", uint64_t{0});
  }
  *incomplete = found;
  return Status::OK();
}

}  // namespace spool
