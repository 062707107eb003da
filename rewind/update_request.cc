// Update requests: the reference API's body, both ways.
#include "spool/rewind/update_request.h"

#include <algorithm>
#include <array>
#include <map>

#include "json_reader.h"
#include "json_text.h"
#include "refusal.h"
#include "spool/storage/schema.h"

namespace spool {
namespace {

constexpr std::array<std::string_view, 7> kCauseNames = {"USER_ACTION",
                                                         "API_CALL",
                                                         "JOB_TASK",
                                                         "RETRY_ON_FAILURE",
                                                         "SCHEMA_CHANGE",
                                                         "SERVICE_UPGRADE",
                                                         "INFRASTRUCTURE_MAINTENANCE"};

Status ParseIdentifiers(const Reader& r, std::string_view key, std::vector<std::string>* out) {
  SPOOL_RETURN_IF_ERROR(r.Strings(key, out, /*required=*/false));
  for (size_t i = 0; i < out->size(); ++i) {
    TableId id;
    Status s = TableId::Parse((*out)[i], &id);
    if (!s.ok())
      return Status::InvalidArgument(r.Sub(key) + "[" + std::to_string(i) + "]: " + std::string(s.message()));
  }
  return Status::OK();
}

Status ParseDataset(const json& j, const std::string& place, RewindDataset* dataset) {
  Reader r(j, place);
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"identifier", "cascade", "reset_checkpoints"}));
  SPOOL_RETURN_IF_ERROR(r.String("identifier", &dataset->identifier, /*required=*/true));
  TableId id;
  Status s = TableId::Parse(dataset->identifier, &id);
  if (!s.ok()) return r.FieldError("identifier", s.message());
  SPOOL_RETURN_IF_ERROR(r.Bool("cascade", &dataset->cascade));
  return r.Bool("reset_checkpoints", &dataset->reset_checkpoints);
}

Status ParseRewindSpec(const json& j, const std::string& place, RewindSpec* spec) {
  Reader r(j, place);
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"rewind_point_id", "rewind_timestamp", "datasets", "dry_run"}));
  for (auto [key, field] :
       {std::pair{"rewind_point_id", &spec->rewind_point_id}, std::pair{"rewind_timestamp", &spec->rewind_timestamp}}) {
    if (!r.Has(key)) continue;
    std::string text;
    SPOOL_RETURN_IF_ERROR(r.String(key, &text, /*required=*/true));
    *field = std::move(text);
  }
  if (r.Has("datasets")) {
    const json& list = r.At("datasets");
    if (!list.is_array())
      return r.FieldError("datasets", "expected a list of {\"identifier\", \"cascade\", \"reset_checkpoints\"}");
    spec->datasets.emplace();
    for (size_t i = 0; i < list.size(); ++i) {
      RewindDataset dataset;
      SPOOL_RETURN_IF_ERROR(ParseDataset(list[i], r.Sub("datasets") + "[" + std::to_string(i) + "]", &dataset));
      spec->datasets->push_back(std::move(dataset));
    }
  }
  return r.Bool("dry_run", &spec->dry_run);
}

json StringList(const std::vector<std::string>& list) {
  json out = json::array();
  for (const std::string& s : list) out.push_back(s);
  return out;
}

}  // namespace

Status CheckRewindSpec(const RewindSpec& spec) {
  if (!spec.datasets) return Status::OK();
  const std::vector<RewindDataset>& datasets = *spec.datasets;
  if (datasets.empty()) {
    return Refuse(rewind_error::kEmptyDatasets,
                  "rewind_spec.datasets is an empty list: leave it out to rewind every dataset, or name the datasets");
  }
  std::map<std::string, const RewindDataset*> seen;
  for (const RewindDataset& d : datasets) {
    auto [it, added] = seen.emplace(d.identifier, &d);
    if (added || *it->second == d) continue;
    return Refuse(rewind_error::kDuplicateDataset, "rewind_spec.datasets names " + d.identifier +
                                                       " twice with different cascade or "
                                                       "reset_checkpoints: name each dataset once");
  }
  return Status::OK();
}

std::string_view ErrorCode(const Status& s) {
  const std::string_view message = s.message();
  for (std::string_view prefix : {"INVALID_REWIND_SPECIFICATION.", "INVALID_UPDATE_REQUEST."}) {
    if (message.starts_with(prefix)) return message.substr(0, message.find(':'));
  }
  return {};
}

Status CheckUpdateRequest(const UpdateRequest& request) {
  const bool selections = !request.refresh_selection.empty() || !request.full_refresh_selection.empty() ||
                          !request.reset_checkpoint_selection.empty();
  if (request.rewind_spec) {
    if (request.validate_only) {
      return Refuse(update_error::kConflictingFields,
                    "validate_only and rewind_spec do not go together: a validation changes nothing, and a rewind is "
                    "validated by its dry run (set rewind_spec.dry_run to true)");
    }
    if (request.full_refresh || selections) {
      return Refuse(update_error::kConflictingFields,
                    "rewind_spec does not go with full_refresh or a refresh selection: a rewind runs no flow; send the "
                    "refresh as the next update, which replays");
    }
    return CheckRewindSpec(*request.rewind_spec);
  }
  if (request.full_refresh && selections) {
    return Refuse(update_error::kConflictingFields,
                  "full_refresh refreshes every table: leave out refresh_selection, full_refresh_selection and "
                  "reset_checkpoint_selection, or set full_refresh to false and select");
  }
  for (const std::string& table : request.refresh_selection) {
    const auto& full = request.full_refresh_selection;
    if (std::find(full.begin(), full.end(), table) != full.end()) {
      return Refuse(update_error::kOverlappingSelections,
                    table + " is in both refresh_selection and full_refresh_selection: name it in one");
    }
  }
  return Status::OK();
}

std::string_view UpdateCauseName(UpdateCause cause) {
  const auto index = static_cast<size_t>(cause) - 1;
  return index < kCauseNames.size() ? kCauseNames[index] : "UNKNOWN";
}

Status ParseUpdateCause(std::string_view name, UpdateCause* cause) {
  for (size_t i = 0; i < kCauseNames.size(); ++i) {
    if (kCauseNames[i] == name) {
      *cause = static_cast<UpdateCause>(i + 1);
      return Status::OK();
    }
  }
  std::string known;
  for (std::string_view n : kCauseNames) known += (known.empty() ? "" : ", ") + std::string(n);
  return Status::InvalidArgument("unknown cause '" + std::string(name) + "' (known: " + known + ")");
}

Status ParseUpdateRequest(std::string_view body, UpdateRequest* request) {
  json j;
  std::string duplicate;
  ParseJsonKeysOnce(body, &j, &duplicate);
  if (j.is_discarded()) return Status::InvalidArgument("update request: malformed JSON");
  if (!duplicate.empty()) {
    return Status::InvalidArgument("update request: field '" + duplicate + "' is given twice in one object");
  }
  Reader r(j, "update request");
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"cause", "full_refresh", "refresh_selection", "full_refresh_selection",
                                       "reset_checkpoint_selection", "validate_only", "rewind_spec"}));
  UpdateRequest out;
  std::string cause;
  SPOOL_RETURN_IF_ERROR(r.String("cause", &cause, /*required=*/false));
  if (r.Has("cause")) {
    Status s = ParseUpdateCause(cause, &out.cause);
    if (!s.ok()) return r.FieldError("cause", s.message());
  }
  SPOOL_RETURN_IF_ERROR(r.Bool("full_refresh", &out.full_refresh));
  SPOOL_RETURN_IF_ERROR(ParseIdentifiers(r, "refresh_selection", &out.refresh_selection));
  SPOOL_RETURN_IF_ERROR(ParseIdentifiers(r, "full_refresh_selection", &out.full_refresh_selection));
  SPOOL_RETURN_IF_ERROR(r.Strings("reset_checkpoint_selection", &out.reset_checkpoint_selection, /*required=*/false));
  SPOOL_RETURN_IF_ERROR(r.Bool("validate_only", &out.validate_only));
  if (r.Has("rewind_spec")) {
    out.rewind_spec.emplace();
    SPOOL_RETURN_IF_ERROR(ParseRewindSpec(r.At("rewind_spec"), r.Sub("rewind_spec"), &*out.rewind_spec));
  }
  SPOOL_RETURN_IF_ERROR(CheckUpdateRequest(out));
  *request = std::move(out);
  return Status::OK();
}

std::string UpdateRequestToJson(const UpdateRequest& request) {
  json j = json::object();
  j["cause"] = UpdateCauseName(request.cause);
  if (request.full_refresh) j["full_refresh"] = true;
  if (!request.refresh_selection.empty()) j["refresh_selection"] = StringList(request.refresh_selection);
  if (!request.full_refresh_selection.empty()) j["full_refresh_selection"] = StringList(request.full_refresh_selection);
  if (!request.reset_checkpoint_selection.empty()) {
    j["reset_checkpoint_selection"] = StringList(request.reset_checkpoint_selection);
  }
  if (request.validate_only) j["validate_only"] = true;
  if (const std::optional<RewindSpec>& spec = request.rewind_spec) {
    json& rewind = j["rewind_spec"] = json::object();
    if (spec->rewind_point_id) rewind["rewind_point_id"] = *spec->rewind_point_id;
    if (spec->rewind_timestamp) rewind["rewind_timestamp"] = *spec->rewind_timestamp;
    if (spec->datasets) {
      json& list = rewind["datasets"] = json::array();
      for (const RewindDataset& d : *spec->datasets) {
        list.push_back(
            {{"identifier", d.identifier}, {"cascade", d.cascade}, {"reset_checkpoints", d.reset_checkpoints}});
      }
    }
    rewind["dry_run"] = spec->dry_run;
  }
  return JsonText(j);
}

Status ParseRewindTimestamp(std::string_view text, int64_t* micros) {
  static constexpr std::string_view kShape = "dddd-dd-dd dd:dd:dd";
  bool shaped = text.size() == kShape.size();
  for (size_t i = 0; shaped && i < text.size(); ++i) {
    shaped = kShape[i] == 'd' ? text[i] >= '0' && text[i] <= '9' : text[i] == kShape[i];
  }
  if (shaped && ParseTimestamp(text, micros).ok()) return Status::OK();
  return Status::InvalidArgument("rewind_timestamp '" + std::string(text) +
                                 "' is not a UTC time of the form yyyy-MM-dd HH:mm:ss (e.g. 2026-09-29 08:36:55)");
}

}  // namespace spool
