// Update requests: the reference documents' bodies as they are, every field,
// and malformed bodies with errors naming the field.
#include "spool/rewind/update_request.h"

#include <gtest/gtest.h>

namespace spool {
namespace {

UpdateRequest Parse(std::string_view body) {
  UpdateRequest request;
  Status s = ParseUpdateRequest(body, &request);
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << body;
  return request;
}

std::string Error(std::string_view body) {
  UpdateRequest request;
  request.validate_only = true;  // a marker: a refused body leaves it alone
  Status s = ParseUpdateRequest(body, &request);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString() << "\n" << body;
  EXPECT_TRUE(request.validate_only) << "a refused body changed the request";
  return std::string(s.message());
}

// 000_5d8974caa7c61bdf.txt, "Request-Body zurücksetzen": by point, then by
// timestamp, as printed.
TEST(UpdateRequestTest, TheReferenceBodiesParseAsTheyAre) {
  const UpdateRequest by_point = Parse(R"({
  "cause": "USER_ACTION",
  "rewind_spec": {
    "rewind_point_id": "<rewind-point-id>",
    "datasets": [
      {
        "identifier": "catalog.schema.table",
        "cascade": true,
        "reset_checkpoints": true
      }
    ],
    "dry_run": false
  }
})");
  EXPECT_EQ(by_point.cause, UpdateCause::kUserAction);
  ASSERT_TRUE(by_point.rewind_spec.has_value());
  EXPECT_EQ(by_point.rewind_spec->rewind_point_id, "<rewind-point-id>");
  EXPECT_FALSE(by_point.rewind_spec->rewind_timestamp.has_value());
  ASSERT_TRUE(by_point.rewind_spec->datasets.has_value());
  EXPECT_EQ(*by_point.rewind_spec->datasets, (std::vector<RewindDataset>{{"catalog.schema.table", true, true}}));
  EXPECT_FALSE(by_point.rewind_spec->dry_run);

  const UpdateRequest by_time = Parse(R"({
  "cause": "USER_ACTION",
  "rewind_spec": {
    "rewind_timestamp": "2026-09-29 08:36:55",
    "datasets": [
      {
        "identifier": "catalog.schema.table",
        "cascade": true,
        "reset_checkpoints": true
      }
    ],
    "dry_run": false
  }
})");
  EXPECT_EQ(by_time.rewind_spec->rewind_timestamp, "2026-09-29 08:36:55");
  EXPECT_FALSE(by_time.rewind_spec->rewind_point_id.has_value());

  // The curl example's one-line form, and replay: an update without a body.
  const UpdateRequest curl = Parse(
      R"({"cause": "USER_ACTION", "rewind_spec": {"rewind_point_id": "<rewind-point-id>", "datasets": [{"identifier": "catalog.schema.table", "cascade": true, "reset_checkpoints": true}], "dry_run": false}})");
  EXPECT_EQ(curl, by_point);
  EXPECT_EQ(Parse("{}"), UpdateRequest{});
}

TEST(UpdateRequestTest, EveryFieldReadsAndWritesBack) {
  const UpdateRequest request = Parse(R"({
    "cause": "JOB_TASK",
    "refresh_selection": ["main.s.a", "main.s.b"],
    "full_refresh_selection": ["main.s.c"],
    "reset_checkpoint_selection": ["main.s.a", "ingest"],
    "validate_only": true})");
  EXPECT_EQ(request.cause, UpdateCause::kJobTask);
  EXPECT_EQ(request.refresh_selection, (std::vector<std::string>{"main.s.a", "main.s.b"}));
  EXPECT_EQ(request.full_refresh_selection, (std::vector<std::string>{"main.s.c"}));
  EXPECT_EQ(request.reset_checkpoint_selection, (std::vector<std::string>{"main.s.a", "ingest"}));
  EXPECT_TRUE(request.validate_only);
  EXPECT_EQ(Parse(UpdateRequestToJson(request)), request);
  EXPECT_TRUE(Parse(R"({"full_refresh": true})").full_refresh);
  EXPECT_EQ(Parse(UpdateRequestToJson(UpdateRequest{})), UpdateRequest{});
  const UpdateRequest rewind = Parse(R"({"cause": "JOB_TASK",
    "rewind_spec": {"rewind_point_id": "p1", "datasets": [
      {"identifier": "main.s.a", "cascade": false, "reset_checkpoints": false},
      {"identifier": "main.s.b"}], "dry_run": true}})");
  // A dataset without cascade or reset_checkpoints takes the defaults (true).
  EXPECT_EQ(*rewind.rewind_spec->datasets,
            (std::vector<RewindDataset>{{"main.s.a", false, false}, {"main.s.b", true, true}}));
  EXPECT_TRUE(rewind.rewind_spec->dry_run);
  EXPECT_EQ(Parse(UpdateRequestToJson(rewind)), rewind);
  // Omitted datasets (all of them) stay apart from a list.
  const UpdateRequest all = Parse(R"({"rewind_spec": {"rewind_timestamp": "2026-09-29 08:36:55"}})");
  EXPECT_FALSE(all.rewind_spec->datasets.has_value());
  EXPECT_EQ(all.cause, UpdateCause::kApiCall);  // the API's default
  EXPECT_EQ(Parse(UpdateRequestToJson(all)), all);
}

// Every pair of fields that could contradict one another has one answer
// (update_request.h): refused with a code, or a defined union.
TEST(UpdateRequestTest, FieldsThatContradictOneAnotherAreRefusedWithACode) {
  const std::string rewind = R"("rewind_spec": {"rewind_timestamp": "2026-09-29 08:36:55"})";
  struct Case {
    std::string body;
    std::string_view code;
  };
  const std::vector<Case> refused = {
      {"{\"validate_only\": true, " + rewind + "}", update_error::kConflictingFields},
      {R"({"validate_only": true, "rewind_spec": {"rewind_point_id": "p", "dry_run": true}})",
       update_error::kConflictingFields},
      {"{\"full_refresh\": true, " + rewind + "}", update_error::kConflictingFields},
      {"{\"refresh_selection\": [\"main.s.a\"], " + rewind + "}", update_error::kConflictingFields},
      {"{\"full_refresh_selection\": [\"main.s.a\"], " + rewind + "}", update_error::kConflictingFields},
      {"{\"reset_checkpoint_selection\": [\"f\"], " + rewind + "}", update_error::kConflictingFields},
      {R"({"full_refresh": true, "full_refresh_selection": ["main.s.a"]})", update_error::kConflictingFields},
      {R"({"full_refresh": true, "refresh_selection": ["main.s.a"]})", update_error::kConflictingFields},
      {R"({"full_refresh": true, "reset_checkpoint_selection": ["f"]})", update_error::kConflictingFields},
      {R"({"refresh_selection": ["main.s.a", "main.s.b"], "full_refresh_selection": ["main.s.b"]})",
       update_error::kOverlappingSelections},
      {R"({"rewind_spec": {"rewind_timestamp": "2026-09-29 08:36:55", "datasets": []}})", rewind_error::kEmptyDatasets},
      {R"({"rewind_spec": {"rewind_point_id": "p", "datasets": [{"identifier": "main.s.a", "cascade": true},
                                                               {"identifier": "main.s.a", "cascade": false}]}})",
       rewind_error::kDuplicateDataset},
      {R"({"rewind_spec": {"rewind_point_id": "p", "datasets": [{"identifier": "main.s.a"},
                                                  {"identifier": "main.s.a", "reset_checkpoints": false}]}})",
       rewind_error::kDuplicateDataset},
  };
  for (const Case& c : refused) {
    UpdateRequest request;
    const Status s = ParseUpdateRequest(c.body, &request);
    EXPECT_EQ(ErrorCode(s), c.code) << s.ToString() << "\n" << c.body;
    EXPECT_EQ(request, UpdateRequest{}) << c.body;
  }
  // What goes together.
  for (
      std::string_view body : {
          R"({"validate_only": true, "full_refresh": true})",
          R"({"validate_only": true, "refresh_selection": ["main.s.a"], "reset_checkpoint_selection": ["f"]})",
          R"({"refresh_selection": ["main.s.a"], "full_refresh_selection": ["main.s.b"]})",
          R"({"full_refresh_selection": ["main.s.a"], "reset_checkpoint_selection": ["f"]})",
          R"({"rewind_spec": {"rewind_point_id": "p", "datasets": [{"identifier": "main.s.a"}, {"identifier": "main.s.a"}]}})",
          R"({"rewind_spec": {"rewind_point_id": "p", "dry_run": true}})",
      }) {
    UpdateRequest request;
    EXPECT_TRUE(ParseUpdateRequest(body, &request).ok()) << body;
  }
  // The C++ API meets the same check.
  UpdateRequest built;
  built.validate_only = true;
  built.rewind_spec.emplace().rewind_point_id = "p";
  EXPECT_EQ(ErrorCode(CheckUpdateRequest(built)), update_error::kConflictingFields);
}

TEST(UpdateRequestTest, MalformedBodiesNameTheFieldAndWhatIsWrong) {
  EXPECT_EQ(Error("{"), "update request: malformed JSON");
  // A field twice: nlohmann would keep the last value, so this would start
  // a real update.
  EXPECT_EQ(Error(R"({"validate_only": true, "validate_only": false})"),
            "update request: field 'validate_only' is given twice in one object");
  EXPECT_EQ(Error(R"({"rewind_spec": {"rewind_point_id": "a", "rewind_point_id": "b"}})"),
            "update request: field 'rewind_point_id' is given twice in one object");
  UpdateRequest request;  // the same key in two objects is fine
  EXPECT_TRUE(
      ParseUpdateRequest(R"({"rewind_spec": {"datasets": [{"identifier": "main.s.a"}, {"identifier": "main.s.b"}]}})",
                         &request)
          .ok());
  EXPECT_EQ(Error("[]"), "update request: expected a JSON object, got array");
  EXPECT_NE(Error(R"({"full_refresh": true, "fullrefresh": true})").find("unknown field 'fullrefresh'"),
            std::string::npos);
  EXPECT_EQ(Error(R"({"full_refresh": "yes"})"), "update request.full_refresh: expected true or false");
  EXPECT_NE(Error(R"({"cause": "BECAUSE"})").find("update request.cause: unknown cause 'BECAUSE' (known: USER_ACTION"),
            std::string::npos);
  EXPECT_NE(Error(R"({"refresh_selection": ["main.s"]})").find("update request.refresh_selection[0]: "),
            std::string::npos);
  EXPECT_EQ(Error(R"({"reset_checkpoint_selection": "flow"})"),
            "update request.reset_checkpoint_selection: expected a list of strings");
  EXPECT_NE(Error(R"({"rewind_spec": {"rewind_point": "p"}})")
                .find("update request.rewind_spec: unknown field 'rewind_point'"),
            std::string::npos);
  EXPECT_EQ(Error(R"({"rewind_spec": {"rewind_point_id": 7}})"),
            "update request.rewind_spec.rewind_point_id: expected a string");
  EXPECT_EQ(Error(R"({"rewind_spec": {"rewind_point_id": ""}})"),
            "update request.rewind_spec.rewind_point_id: must not be empty");
  EXPECT_EQ(
      Error(R"({"rewind_spec": {"datasets": {"identifier": "main.s.t"}}})"),
      "update request.rewind_spec.datasets: expected a list of {\"identifier\", \"cascade\", \"reset_checkpoints\"}");
  EXPECT_EQ(Error(R"({"rewind_spec": {"datasets": [{"cascade": true}]}})"),
            "update request.rewind_spec.datasets[0].identifier: missing");
  EXPECT_EQ(Error(R"({"rewind_spec": {"datasets": [{"identifier": "main.s.t", "cascade": 1}]}})"),
            "update request.rewind_spec.datasets[0].cascade: expected true or false");
  EXPECT_NE(Error(R"({"rewind_spec": {"datasets": [{"identifier": "table"}]}})")
                .find("update request.rewind_spec.datasets[0].identifier: "),
            std::string::npos);
  EXPECT_EQ(Error(R"({"rewind_spec": {"dry_run": null}})"),
            "update request.rewind_spec.dry_run: expected true or false");
}

TEST(UpdateRequestTest, CausesRoundTripByName) {
  for (UpdateCause cause :
       {UpdateCause::kUserAction, UpdateCause::kApiCall, UpdateCause::kJobTask, UpdateCause::kRetryOnFailure,
        UpdateCause::kSchemaChange, UpdateCause::kServiceUpgrade, UpdateCause::kInfrastructureMaintenance}) {
    UpdateCause parsed{};
    ASSERT_TRUE(ParseUpdateCause(UpdateCauseName(cause), &parsed).ok());
    EXPECT_EQ(parsed, cause);
  }
}

TEST(UpdateRequestTest, RewindTimestampsAreUtcSecondsInTheReferenceForm) {
  int64_t micros = 0;
  ASSERT_TRUE(ParseRewindTimestamp("2026-09-29 08:36:55", &micros).ok());
  EXPECT_EQ(micros, 1790671015000000);  // date -u -d '2026-09-29 08:36:55' +%s
  ASSERT_TRUE(ParseRewindTimestamp("1970-01-01 00:00:00", &micros).ok());
  EXPECT_EQ(micros, 0);
  for (std::string_view bad :
       {"2026-09-29T08:36:55", "2026-09-29 08:36", "2026-09-29 08:36:55.5", "2026-13-01 00:00:00",
        "2026-02-30 00:00:00", "2026-09-29 24:00:00", "yesterday", "", "1790671015000000"}) {
    Status s = ParseRewindTimestamp(bad, &micros);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
    EXPECT_NE(s.ToString().find("yyyy-MM-dd HH:mm:ss"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace spool
