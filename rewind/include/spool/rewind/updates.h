// Running an update request (DESIGN.md §6): what the CLI and the HTTP API
// do with the reference API's body, in one call.
//
//   UpdateRequest request;
//   SPOOL_RETURN_IF_ERROR(ParseUpdateRequest(body, &request));
//   UpdateOutcome outcome;
//   SPOOL_RETURN_IF_ERROR(RunUpdateRequest(store, pipeline, request, UpdateOptions{}, RetryPolicy{}, &outcome));
//
// A request with a rewind_spec is a rewind (PlanRewind, ExecuteRewind); with
// validate_only, a validation that writes nothing (Pipeline::Validate);
// otherwise an update of the pipeline with the request's refresh
// selections, refused while a rewind is incomplete (CheckNoIncompleteRewind)
// and retried by the request's cause (RunUpdateWithRetries).
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
  std::string update_id;                    // none for a validation
  UpdateResult result;                      // an update's: its state, flows and error
  std::optional<RewindPlan> rewind;         // a rewind's, as validated and carried out
  std::optional<RewindPoint> dry_run_point;  // a rewind's dry run records one
  std::vector<std::string> warnings;        // a validation's (what a full refresh would lose)
};

// Runs `request` (see above). `options` carries what the body does not:
// continuous mode, bounds, the stop flag, on_batch, cascade and
// refresh_failed; the request's selections and cause fill in the rest.
// Returns OK when the update ran (or the rewind or validation passed),
// whatever the update's outcome (outcome->result.state); an error when the
// request was refused before anything ran: a rewind's validation code, a
// selection that does not fit, an incomplete rewind, Busy
// (RESOURCE_CONFLICT), or a failed rewind.
Status RunUpdateRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request, UpdateOptions options,
                        const RetryPolicy& policy, UpdateOutcome* outcome);

}  // namespace spool
