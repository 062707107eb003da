// Running an update request (docs/design.md): what the CLI and the HTTP API
// do with the reference API's body, in one call.
//
//   UpdateRequest request;
//   SPOOL_RETURN_IF_ERROR(ParseUpdateRequest(body, &request));
//   UpdateOutcome outcome;
//   SPOOL_RETURN_IF_ERROR(RunUpdateRequest(store, pipeline, request, UpdateOptions{}, RetryPolicy{}, &outcome));
//
// First, everything that can refuse the request is checked, writing
// nothing (CheckUpdateRequestRuns); a refused request leaves no trace. Then
// a request with a rewind_spec is a rewind (ExecuteRewind); with
// validate_only, a validation: an update (create_update with
// "validate_only": true) that ends COMPLETED, with a WARN event for what a
// full refresh among its options would lose, and changes no table;
// otherwise an update of the pipeline with the request's refresh
// selections, retried as RetryPolicy says, recording periodic rewind points
// (the pipeline's pipelines.rewindPoints.* settings) while it runs and when
// it ends. However an accepted request ends, its update is in the event
// log with a terminal state and, when it failed, its error.
//
// Thread-safety: as Pipeline::Update; one update of a store at a time, a
// second refused with Busy (RESOURCE_CONFLICT).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spool/rewind/retries.h"
#include "spool/rewind/rewind.h"
#include "spool/rewind/update_request.h"

namespace spool {

struct UpdateOutcome {
  enum class Kind { kUpdate, kRewind, kValidation };
  Kind kind = Kind::kUpdate;
  std::string update_id;
  UpdateResult result;                       // an update's: its state, flows and error
  std::optional<RewindPlan> rewind;          // a rewind's, as validated and carried out
  std::optional<RewindPoint> dry_run_point;  // a rewind's dry run records one
  std::vector<std::string> warnings;         // a validation's (what a full refresh would lose)
};

// What refuses `request` before anything runs, checked without writing
// anything: how its fields combine (CheckUpdateRequest); a rewind's
// validation (PlanRewind, into `*plan` when given); for an update or a
// validation, an incomplete rewind (CheckNoIncompleteRewind, not for a
// validation) and what Pipeline::Validate refuses (selections, flow names,
// pipelines.reset.allowed, a definition the tables or state cannot take);
// Busy (RESOURCE_CONFLICT) while another update runs. `*warnings`, when
// given: what a full refresh among the options would lose.
// Errors: InvalidArgument (with an INVALID_UPDATE_REQUEST.* or
// INVALID_REWIND_SPECIFICATION.* code where it has one), Failed (an
// incomplete rewind), Busy, IOError.
Status CheckUpdateRequestRuns(Store* store, Pipeline* pipeline, const UpdateRequest& request,
                              const UpdateOptions& options, RewindPlan* plan = nullptr,
                              std::vector<std::string>* warnings = nullptr);

// Runs `request` (see above). `options` carries what the body does not:
// continuous mode, bounds, the stop flag, on_batch, cascade and
// refresh_failed, the update id to use; the request's selections and cause
// fill in the rest. Returns OK when the update ran (or the rewind or
// validation passed), whatever the update's outcome
// (outcome->result.state). Errors: CheckUpdateRequestRuns's when the request
// is refused (nothing written); ExecuteRewind's when a rewind failed.
Status RunUpdateRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request, UpdateOptions options,
                        const RetryPolicy& policy, UpdateOutcome* outcome);

}  // namespace spool
