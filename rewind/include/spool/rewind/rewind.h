// Rewinding a pipeline (docs/design.md): validating a rewind_spec against the
// store and the pipeline, and carrying it out.
//
// A refused rewind is Status::InvalidArgument whose message starts with its
// code, then ": " and what to do, e.g.
//   INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND: no rewind point has
//   id 1d2…; list them with `spool rewind-points DIR`
// ErrorCode (update_request.h) gives the code.
//
// Rewinding every dataset (datasets omitted, or a selection whose cascades
// cover every dataset, each resetting checkpoints) rewinds the whole store:
// a durable `rewind_started` event, Store::RewindTo (the log cut after the
// target into the archive, the state rebuilt there), the pipeline's
// definition recorded again when the cut removed it (a rewind restores
// data, not code), and a `rewind_completed` event. A rewind touches only
// the pipeline: when commits after the target changed tables outside it,
// or any table's properties, which a cut would take back too, it is done as
// a rewind of some datasets is — one RESTORE commit of every dataset, its
// state and checkpoints (RewindPlan::by_restore) — and everything else
// stays as it is. Rewind does not run the
// pipeline: replay is the next update. A crash between the two events
// leaves an incomplete rewind (FindIncompleteRewind); rewinding again
// converges.
//
// Rewinding some datasets (or without resetting checkpoints) is one RESTORE
// commit between the same two events: each dataset's rows and its flows'
// operator state as they were at the target, and with reset_checkpoints its
// flows' checkpoints, so they reprocess from there; without, they go on
// from where they are and what they read after the target is dropped. A
// flow reading a dataset restored with its own target skips the commits the
// restore took back, so nothing downstream sees a row twice. Datasets
// outside the selection are untouched.
//
// Thread-safety: the caller runs one update (a rewind is one) at a time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spool/rewind/rewind_points.h"
#include "spool/rewind/update_request.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"

namespace spool {

namespace rewind_error {
inline constexpr std::string_view kPointNotFound = "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND";
inline constexpr std::string_view kMultipleTargets = "INVALID_REWIND_SPECIFICATION.MULTIPLE_REWIND_TARGETS";
inline constexpr std::string_view kNoTarget = "INVALID_REWIND_SPECIFICATION.NO_REWIND_TARGET";
inline constexpr std::string_view kBeyondRetention = "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION";
inline constexpr std::string_view kDatasetNotFound = "INVALID_REWIND_SPECIFICATION.DATASET_NOT_FOUND";
inline constexpr std::string_view kInconsistentUpstreamReset =
    "INVALID_REWIND_SPECIFICATION.INCONSISTENT_UPSTREAM_CHECKPOINT_RESET";
inline constexpr std::string_view kExternalSourceRequiresReset =
    "INVALID_REWIND_SPECIFICATION.EXTERNAL_SOURCE_REQUIRES_CHECKPOINT_RESET";
inline constexpr std::string_view kInvalidTimestamp = "INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP_FORMAT";
inline constexpr std::string_view kSourceRetentionExceeded = "INVALID_REWIND_SPECIFICATION.SOURCE_RETENTION_EXCEEDED";
inline constexpr std::string_view kTableRecreated = "INVALID_REWIND_SPECIFICATION.TABLE_RECREATED";
}  // namespace rewind_error
// An undo that cannot be done.
inline constexpr std::string_view kUndoNotPossible = "REWIND_UNDO_NOT_POSSIBLE";

// A validated rewind.
struct RewindPlan {
  LogPosition target;                   // the store's position to go back to
  uint64_t target_timestamp_us = 0;     // that commit's time
  std::optional<RewindPoint> point;     // given by rewind_point_id
  std::vector<RewindDataset> datasets;  // every dataset rewound, cascades resolved
  bool whole_pipeline = true;
  // A whole-pipeline rewind done as one RESTORE commit, as a rewind of
  // some datasets is, instead of a log cut: commits after the target
  // changed what a cut would take back with the pipeline's tables — `kept`:
  // tables outside the pipeline, or tables' properties (Store::ChangesBeyond).
  bool by_restore = false;
  std::vector<std::string> kept;
};

// Checks `spec` against the store and the pipeline and resolves its target
// (a point's position; a timestamp's latest commit at or before it).
// Errors: InvalidArgument with a code (above); IOError.
Status PlanRewind(Store* store, const Pipeline& pipeline, const RewindSpec& spec, RewindPlan* plan);

// A rewind is an update: its id and cause, and whether it is a dry run.
struct RewindRun {
  std::string update_id;  // empty: a new one (written back)
  UpdateCause cause = UpdateCause::kApiCall;
  bool dry_run = false;
};

// Carries out a plan (see above) as an update: a create_update event, then
// update_progress through INITIALIZING, RESETTING (not in a dry run) and
// COMPLETED, or FAILED with the error. A dry run changes no table: it
// records a rewind point for the validated state (`*dry_run_point`).
// Errors: Busy (RESOURCE_CONFLICT) while another update of the store runs,
// as Store::ClaimUpdate; the rewind's own.
Status ExecuteRewind(Store* store, const Pipeline& pipeline, const RewindPlan& plan, RewindRun* run,
                     RewindPoint* dry_run_point = nullptr);

// Undoing the last rewind (beyond the reference documents): while nothing
// has been committed since it, one RESTORE commit brings the rewound
// datasets, their offsets and state back to the version before the rewind
// (for a rewind that cut the log, a version read from the archive), so the
// tables and checkpoints are what they were before it; the history keeps
// the rewind and shows the undo. An undo is an update between
// rewind_started and rewind_completed events like a rewind: interrupted, it
// is an incomplete rewind, and undoing again (or rewinding to another point)
// completes it.
struct UndoPlan {
  std::string rewind_update_id;  // the rewind undone
  LogPosition target;            // where it went
  bool whole_pipeline = true;
  uint64_t version = 0;  // the newest version before it: restored
  std::vector<RewindDataset> datasets;
  bool resume = false;  // carrying on an interrupted undo
};
// Errors: InvalidArgument starting with kUndoNotPossible (never rewound,
// undone already, something committed since, the cut vacuumed, the last
// rewind incomplete), IOError.
Status PlanUndo(Store* store, UndoPlan* plan);
// Carries out `plan` as an update (as ExecuteRewind). Errors: Busy
// (RESOURCE_CONFLICT) while another update runs, NotFound (the archive no
// longer holds the version), Corruption (the archive), IOError.
Status ExecuteUndo(Store* store, const Pipeline& pipeline, const UndoPlan& plan, RewindRun* run);

// A rewind that started and did not complete (a crash or failure between
// its events).
struct IncompleteRewind {
  std::string update_id;
  LogPosition target;
  uint64_t started_us = 0;
};
// Sets `*incomplete` to the newest rewind's when it started and did not
// complete, else to nothing. Errors: Corruption (the event log), IOError.
Status FindIncompleteRewind(Store* store, std::optional<IncompleteRewind>* incomplete);

// What every update but a rewind checks first: OK, unless a rewind is
// incomplete and the pipeline's configuration does not set
// pipelines.allowUpdateAfterIncompleteRewind to "true"; then Failed, naming
// the rewind and how to recover.
Status CheckNoIncompleteRewind(Store* store, const PipelineSpec& spec);

}  // namespace spool
