// An update request: everything a user does to a pipeline (docs/design.md),
// with the fields of the reference REST API's "start an update" body, so
// that the bodies of the reference documents are taken as they are:
//
//   {"cause": "USER_ACTION",
//    "full_refresh": false,
//    "refresh_selection": ["catalog.schema.table", ...],
//    "full_refresh_selection": [...],
//    "reset_checkpoint_selection": ["flow name", ...],
//    "validate_only": false,
//    "rewind_spec": {"rewind_point_id": "<id>" | "rewind_timestamp": "yyyy-MM-dd HH:mm:ss",
//                    "datasets": [{"identifier": "catalog.schema.table",
//                                  "cascade": true, "reset_checkpoints": true}],
//                    "dry_run": false}}
//
// Every field is optional. Parsing checks the shape (types, unknown fields,
// identifiers); what needs the pipeline (points, datasets, retention) is
// checked when the update is validated.
//
// Thread-safety: plain values and functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool {

// Why an update started: the reference API's StartUpdateCause.
enum class UpdateCause : uint8_t {
  kUserAction = 1,
  kApiCall,
  kJobTask,
  kRetryOnFailure,
  kSchemaChange,
  kServiceUpgrade,
  kInfrastructureMaintenance,
};
std::string_view UpdateCauseName(UpdateCause cause);  // "USER_ACTION", …
// Errors: InvalidArgument naming the causes there are.
Status ParseUpdateCause(std::string_view name, UpdateCause* cause);

struct RewindDataset {
  std::string identifier;  // catalog.schema.table
  bool cascade = true;     // also every dataset downstream of it
  // Also restore the flows' source offsets and operator state (replay from
  // the point); false: the table's data only.
  bool reset_checkpoints = true;
  friend bool operator==(const RewindDataset&, const RewindDataset&) = default;
};

struct RewindSpec {
  // Exactly one of the two, checked when the update is validated
  // (INVALID_REWIND_SPECIFICATION.MULTIPLE_REWIND_TARGETS / NO_REWIND_TARGET).
  std::optional<std::string> rewind_point_id;
  std::optional<std::string> rewind_timestamp;  // UTC "yyyy-MM-dd HH:mm:ss", as given
  // Absent: every dataset, each with cascade and reset_checkpoints.
  std::optional<std::vector<RewindDataset>> datasets;
  bool dry_run = false;
  friend bool operator==(const RewindSpec&, const RewindSpec&) = default;
};

struct UpdateRequest {
  UpdateCause cause = UpdateCause::kApiCall;
  bool full_refresh = false;
  std::vector<std::string> refresh_selection;           // table identifiers
  std::vector<std::string> full_refresh_selection;      // table identifiers
  std::vector<std::string> reset_checkpoint_selection;  // flow names
  bool validate_only = false;
  std::optional<RewindSpec> rewind_spec;
  friend bool operator==(const UpdateRequest&, const UpdateRequest&) = default;
};

// The codes of requests whose fields do not go together. A refused
// request's message starts with its code, then ": " and what to do
// (ErrorCode gives the code).
namespace update_error {
inline constexpr std::string_view kConflictingFields = "INVALID_UPDATE_REQUEST.CONFLICTING_FIELDS";
inline constexpr std::string_view kOverlappingSelections = "INVALID_UPDATE_REQUEST.OVERLAPPING_SELECTIONS";
}  // namespace update_error
namespace rewind_error {
inline constexpr std::string_view kEmptyDatasets = "INVALID_REWIND_SPECIFICATION.EMPTY_DATASET_LIST";
inline constexpr std::string_view kDuplicateDataset = "INVALID_REWIND_SPECIFICATION.DUPLICATE_DATASET";
}  // namespace rewind_error

// The code a refused request's message starts with (an
// INVALID_UPDATE_REQUEST.* or INVALID_REWIND_SPECIFICATION.* one); empty
// when it has none.
std::string_view ErrorCode(const Status& s);

// How the request's fields combine; every pair has one answer:
//  - validate_only with rewind_spec: refused (kConflictingFields). A
//    validation writes nothing at all; a rewind's dry run (rewind_spec.dry_run)
//    is the way to validate a rewind, and it records a rewind point.
//  - rewind_spec with full_refresh or any selection: refused
//    (kConflictingFields). A rewind runs no flow; its replay, with whatever
//    refresh, is the next update.
//  - full_refresh with any selection: refused (kConflictingFields); it
//    refreshes everything already.
//  - a table in both refresh_selection and full_refresh_selection: refused
//    (kOverlappingSelections), naming it.
//  - reset_checkpoint_selection with refresh_selection or
//    full_refresh_selection: the union; a reset flow runs even when its
//    table is not in refresh_selection, and a flow whose table is fully
//    refreshed is reset anyway.
//  - validate_only with refresh options: validates that update.
//  - rewind_spec.datasets empty: refused (kEmptyDatasets); leave it out to
//    rewind every dataset.
//  - a dataset named twice: the same as once when both say the same;
//    refused (kDuplicateDataset) when cascade or reset_checkpoints differ.
// Errors: InvalidArgument with the codes above.
Status CheckUpdateRequest(const UpdateRequest& request);
// The rewind_spec's part of it (its datasets). Errors: as CheckUpdateRequest.
Status CheckRewindSpec(const RewindSpec& spec);

// Parses a request body and checks it (CheckUpdateRequest). Errors:
// InvalidArgument naming the field and what is wrong with it
// ("rewind_spec.datasets[0].cascade: expected true or false"), for
// malformed JSON, a field of the wrong type, an unknown field, an unknown
// cause or a dataset identifier that is not catalog.schema.table; and
// CheckUpdateRequest's.
Status ParseUpdateRequest(std::string_view body, UpdateRequest* request);
// The request as a JSON body that ParseUpdateRequest reads back equal;
// fields at their defaults are left out.
std::string UpdateRequestToJson(const UpdateRequest& request);

// A rewind_timestamp: UTC "yyyy-MM-dd HH:mm:ss" to microseconds since the
// epoch. Errors: InvalidArgument saying the format.
Status ParseRewindTimestamp(std::string_view text, int64_t* micros);

}  // namespace spool
