#include "spool/rewind/updates.h"

#include "json_text.h"
#include "spool/stream/records.h"
#include "update_events.h"

namespace spool {
namespace {

// The request's refresh options on top of `options`.
UpdateOptions WithRequest(UpdateOptions options, const UpdateRequest& request) {
  options.cause = std::string(UpdateCauseName(request.cause));
  options.full_refresh = request.full_refresh;
  options.full_refresh_selection = request.full_refresh_selection;
  options.refresh_selection = request.refresh_selection;
  options.reset_checkpoint_selection = request.reset_checkpoint_selection;
  return options;
}

// A validation is an update of its own, which writes no table.
Status RecordValidation(Store* store, const Pipeline& pipeline, const UpdateRequest& request,
                        const std::string& update_id, const std::vector<std::string>& warnings) {
  const std::string cause(UpdateCauseName(request.cause));
  SPOOL_RETURN_IF_ERROR(AppendUpdateEvent(
      store, pipeline, update_id, EventLevel::kInfo, "create_update",
      "Update " + update_id.substr(0, 6) + " started by " + cause + " to validate the pipeline.",
      json{{"create_update", {{"cause", cause}, {"validate_only", true}, {"full_refresh", request.full_refresh}}}}));
  for (const std::string& warning : warnings) {
    SPOOL_RETURN_IF_ERROR(
        AppendUpdateEvent(store, pipeline, update_id, EventLevel::kWarn, "update_progress", warning,
                          json{{"update_progress", {{"state", "INITIALIZING"}, {"warning", warning}}}}));
  }
  return RecordUpdateProgress(store, pipeline.id(), update_id, UpdateState::kCompleted);
}

// Records periodic rewind points while an update runs flows: after a batch
// at most once a minute (listing the points reads the event log), and when
// it ends. The first failure to record one is kept.
class PeriodicPoints {
 public:
  PeriodicPoints(Store* store, const Pipeline& pipeline, std::string update_id)
      : store_(store), pipeline_(pipeline), update_id_(std::move(update_id)) {
    status_ = GetRewindPointSettings(pipeline.spec(), &settings_);
  }
  void Look(bool now) {
    const uint64_t clock = store_->options().env->NowMicros();
    if (!status_.ok() || (!now && clock < next_look_us_)) return;
    next_look_us_ = clock + kLookEveryUs;
    bool recorded = false;
    status_ = MaybeRecordPeriodicRewindPoint(store_, pipeline_, settings_.interval_us, settings_.retention_us,
                                             &recorded, update_id_);
  }
  const Status& status() const { return status_; }

 private:
  static constexpr uint64_t kLookEveryUs = 60 * 1000000ull;
  Store* store_;
  const Pipeline& pipeline_;
  const std::string update_id_;
  RewindPointSettings settings_;
  Status status_;
  uint64_t next_look_us_ = 0;
};

// A continuous pipeline's updates run continuously, on its trigger interval.
Status WithPipelineSettings(const PipelineSpec& spec, UpdateOptions* options) {
  if (!spec.continuous) return Status::OK();
  options->continuous = true;
  auto interval = spec.configuration.find("pipelines.trigger.interval");
  if (interval == spec.configuration.end()) return Status::OK();
  Status s = ParseDuration(interval->second, &options->trigger_interval_us);
  if (!s.ok()) return Status::InvalidArgument("configuration pipelines.trigger.interval: " + std::string(s.message()));
  return Status::OK();
}

}  // namespace

Status AppendUpdateEvent(Store* store, const Pipeline& pipeline, const std::string& update_id, EventLevel level,
                         std::string_view type, std::string message, const json& details, bool sync) {
  Event e;
  e.origin.pipeline_id = pipeline.id();
  e.origin.update_id = update_id;
  e.level = level;
  e.event_type = type;
  e.message = std::move(message);
  e.details_json = JsonText(details);
  return store->events()->Append(&e, sync);
}

Status CheckUpdateRequestRuns(Store* store, Pipeline* pipeline, const UpdateRequest& request,
                              const UpdateOptions& options, RewindPlan* plan, std::vector<std::string>* warnings) {
  SPOOL_RETURN_IF_ERROR(CheckUpdateRequest(request));
  UpdateOptions settled = options;
  SPOOL_RETURN_IF_ERROR(WithPipelineSettings(pipeline->spec(), &settled));
  if (const std::string running = store->RunningUpdate(); !running.empty()) {
    return Status::Busy("RESOURCE_CONFLICT: update " + running + " is running on pipeline " + pipeline->id() +
                        ": stop it or wait for it to end");
  }
  if (request.rewind_spec) {
    RewindPlan planned;
    SPOOL_RETURN_IF_ERROR(PlanRewind(store, *pipeline, *request.rewind_spec, &planned));
    if (plan != nullptr) *plan = std::move(planned);
    return Status::OK();
  }
  if (!request.validate_only) SPOOL_RETURN_IF_ERROR(CheckNoIncompleteRewind(store, pipeline->spec()));
  std::vector<std::string> losses;
  SPOOL_RETURN_IF_ERROR(pipeline->Validate(WithRequest(settled, request), &losses));
  if (warnings != nullptr) *warnings = std::move(losses);
  return Status::OK();
}

Status RunUpdateRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request, UpdateOptions options,
                        const RetryPolicy& policy, UpdateOutcome* outcome) {
  *outcome = UpdateOutcome{};
  SPOOL_RETURN_IF_ERROR(WithPipelineSettings(pipeline->spec(), &options));
  RewindPlan plan;
  SPOOL_RETURN_IF_ERROR(CheckUpdateRequestRuns(store, pipeline, request, options, &plan, &outcome->warnings));
  if (request.rewind_spec) {
    outcome->kind = UpdateOutcome::Kind::kRewind;
    RewindRun run{options.update_id, request.cause, request.rewind_spec->dry_run};
    RewindPoint point;
    SPOOL_RETURN_IF_ERROR(ExecuteRewind(store, *pipeline, plan, &run, &point));
    outcome->update_id = run.update_id;
    outcome->result.update_id = run.update_id;
    outcome->result.state = UpdateState::kCompleted;
    outcome->rewind = std::move(plan);
    if (run.dry_run) outcome->dry_run_point = std::move(point);
    return Status::OK();
  }
  if (options.update_id.empty()) options.update_id = NewUpdateId();
  outcome->update_id = options.update_id;
  outcome->result.update_id = options.update_id;
  if (request.validate_only) {
    outcome->kind = UpdateOutcome::Kind::kValidation;
    outcome->result.state = UpdateState::kCompleted;
    return RecordValidation(store, *pipeline, request, options.update_id, outcome->warnings);
  }
  PeriodicPoints points(store, *pipeline, options.update_id);
  options.on_batch = [&points, on_batch = std::move(options.on_batch)](const std::string& flow, uint64_t rows) {
    points.Look(/*now=*/false);
    if (on_batch) on_batch(flow, rows);
  };
  SPOOL_RETURN_IF_ERROR(RunUpdateWithRetries(store, pipeline, WithRequest(std::move(options), request), request.cause,
                                             policy, &outcome->result));
  points.Look(/*now=*/true);
  return points.status().WithContext("recording a rewind point");
}

}  // namespace spool
