#include "spool/rewind/updates.h"

namespace spool {

Status RunUpdateRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request, UpdateOptions options,
                        const RetryPolicy& policy, UpdateOutcome* outcome) {
  *outcome = UpdateOutcome{};
  if (request.rewind_spec) {
    outcome->kind = UpdateOutcome::Kind::kRewind;
    RewindPlan plan;
    SPOOL_RETURN_IF_ERROR(PlanRewind(store, *pipeline, *request.rewind_spec, &plan));
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
  options.full_refresh = request.full_refresh;
  options.full_refresh_selection = request.full_refresh_selection;
  options.refresh_selection = request.refresh_selection;
  options.reset_checkpoint_selection = request.reset_checkpoint_selection;
  if (request.validate_only) {
    outcome->kind = UpdateOutcome::Kind::kValidation;
    return pipeline->Validate(options, &outcome->warnings);
  }
  SPOOL_RETURN_IF_ERROR(CheckNoIncompleteRewind(store, pipeline->spec()));
  SPOOL_RETURN_IF_ERROR(RunUpdateWithRetries(store, pipeline, options, request.cause, policy, &outcome->result));
  outcome->update_id = outcome->result.update_id;
  return Status::OK();
}

}  // namespace spool
