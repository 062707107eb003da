// The HTTP API around updates, as the reference documents use it: starting
// an update answers its id at once and GET follows it to a terminal state;
// the updates and the event log, listed and filtered; one update at a time;
// stop; authentication; bad requests refused changing nothing; retries by
// the update's cause; the table endpoints the documents' queries stand for
// (history, rows as of a version, the change feed).
#include <set>

#include "conformance.h"

namespace spool::conformance {
namespace {

using ApiConformance = ConformanceTest;

const char kCustomers[] = R"({"customer_id": 1, "name": "ada", "seq": 1})"
                          "\n";

bool Terminal(const std::string& state) { return state == "COMPLETED" || state == "FAILED" || state == "CANCELED"; }

// Holds an update in RUNNING: it waits reading a customers file until the
// gate opens.
std::string StartHeld(Shop& shop) {
  shop.AddCustomers("gate.jsonl", kCustomers);
  shop.sources().Close("gate.jsonl");
  const std::string id = shop.Start();
  EXPECT_TRUE(shop.sources().WaitUntilHeld());
  return id;
}

// `method path body` is refused with `status` and `code`, changing nothing.
// `idle`: no update is held running (one started by mistake is waited for).
void ExpectRefused(Shop& shop, const std::string& method, const std::string& path, const std::string& body, int status,
                   const std::string& code, const std::string& token = kToken, bool idle = true) {
  const StoreFingerprint before = shop.Fingerprint();
  const Http r = shop.Call(method, path, body, token);
  EXPECT_EQ(r.status, status) << method << " " << path << " " << body << " -> " << r.body;
  EXPECT_EQ(r.ErrorCode(), code) << r.body;
  EXPECT_FALSE(r.Json().value("message", "").empty()) << r.body;
  if (idle) shop.service()->WaitIdle();
  EXPECT_UNCHANGED(shop, before);
}

// --- starting and following updates ----------------------------------------------------

TEST_F(ApiConformance, Updates_StartingOneAnswersItsIdAtOnce) {
  auto shop = MakeShop("shop");
  const std::string id = StartHeld(*shop);  // answered while the update still runs
  EXPECT_EQ(id.size(), 36u);
  EXPECT_FALSE(Terminal(shop->GetUpdate(id).value("state", "")));
  shop->sources().Open();
  EXPECT_EQ(shop->Await(id), "COMPLETED");
}

TEST_F(ApiConformance, Updates_GetFollowsAnUpdateToATerminalState) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  const std::string id = StartHeld(*shop);  // under way: its first events are written
  shop->sources().Open();
  std::string state;
  for (int i = 0; i < 100000 && !Terminal(state); ++i) {  // each look is one request
    const Http r = shop->Get("/updates/" + id);
    ASSERT_EQ(r.status, 200) << r.body;
    state = r.Json()["update"].value("state", "");
  }
  EXPECT_EQ(state, "COMPLETED");
}

TEST_F(ApiConformance, Updates_WhileItRunsItsStateIsRunning) {
  auto shop = MakeShop("shop");
  const std::string id = StartHeld(*shop);
  const json update = shop->GetUpdate(id);
  EXPECT_EQ(update["state"], "RUNNING") << update.dump();
  EXPECT_EQ(update["update_id"], id);
  EXPECT_EQ(update["pipeline_id"], shop->pipeline_id());
  shop->sources().Open();
  EXPECT_EQ(shop->Await(id), "COMPLETED");
}

TEST_F(ApiConformance, Updates_PassThroughTheirStatesAsUpdateProgressEvents) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "COMPLETED");
  std::vector<std::string> states;
  for (const Event& e : shop->Events("update_progress")) {
    if (e.origin.update_id == id) states.push_back(json::parse(e.details_json)["update_progress"].value("state", ""));
  }
  EXPECT_EQ(states, (std::vector<std::string>{"QUEUED", "INITIALIZING", "SETTING_UP_TABLES", "RUNNING", "COMPLETED"}));
}

TEST_F(ApiConformance, Updates_AreListedNewestFirstWithStateCauseAndCreationTime) {
  auto shop = MakeShop("shop");
  std::string first, second;
  ASSERT_EQ(shop->Run("{}", &first), "COMPLETED");
  ASSERT_EQ(shop->Run(R"({"cause": "JOB_TASK"})", &second), "COMPLETED");
  const Http r = shop->Get("/updates");
  ASSERT_EQ(r.status, 200) << r.body;
  const json updates = r.Json()["updates"];
  ASSERT_EQ(updates.size(), 2u) << r.body;
  EXPECT_EQ(updates[0]["update_id"], second);
  EXPECT_EQ(updates[0]["cause"], "JOB_TASK");
  EXPECT_EQ(updates[1]["update_id"], first);
  for (const json& u : updates) {
    EXPECT_EQ(u["state"], "COMPLETED");
    EXPECT_GT(u["creation_time"].get<int64_t>(), 0);
  }
  EXPECT_GE(updates[0]["creation_time"].get<int64_t>(), updates[1]["creation_time"].get<int64_t>());
}

TEST_F(ApiConformance, Updates_AreListedInPagesWithMaxResultsAndPageToken) {
  auto shop = MakeShop("shop");
  std::vector<std::string> ids(3);
  for (std::string& id : ids) ASSERT_EQ(shop->Run("{}", &id), "COMPLETED");
  json page = shop->Get("/updates?max_results=2").Json();
  ASSERT_EQ(page["updates"].size(), 2u);
  EXPECT_EQ(page["updates"][0]["update_id"], ids[2]);
  EXPECT_EQ(page["updates"][1]["update_id"], ids[1]);
  ASSERT_TRUE(page.contains("next_page_token"));
  page = shop->Get("/updates?max_results=2&page_token=" + page["next_page_token"].get<std::string>()).Json();
  ASSERT_EQ(page["updates"].size(), 1u);
  EXPECT_EQ(page["updates"][0]["update_id"], ids[0]);
  EXPECT_FALSE(page.contains("next_page_token"));
}

TEST_F(ApiConformance, Updates_TheCauseIsRecordedAndIsApiCallWhenTheBodyNamesNone) {
  auto shop = MakeShop("shop");
  std::string api, user;
  ASSERT_EQ(shop->Run("{}", &api), "COMPLETED");
  ASSERT_EQ(shop->Run(R"({"cause": "USER_ACTION"})", &user), "COMPLETED");
  EXPECT_EQ(shop->GetUpdate(api)["cause"], "API_CALL");
  EXPECT_EQ(shop->GetUpdate(user)["cause"], "USER_ACTION");
}

TEST_F(ApiConformance, Updates_AnEmptyBodyIsAPlainUpdate) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(""), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 5u);
}

TEST_F(ApiConformance, Updates_AnUnknownCauseIsRefused) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "POST", "/updates", R"({"cause": "WHIM"})", 400, "INVALID_PARAMETER_VALUE");
}

TEST_F(ApiConformance, Updates_AnUnknownFieldIsRefused) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "POST", "/updates", R"({"full_refresh": true, "surprise": 1})", 400, "INVALID_PARAMETER_VALUE");
}

TEST_F(ApiConformance, Updates_MalformedJsonIsRefused) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "POST", "/updates", R"({"cause": )", 400, "INVALID_PARAMETER_VALUE");
}

TEST_F(ApiConformance, Updates_AFieldOfTheWrongTypeIsRefused) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "POST", "/updates", R"({"full_refresh": "yes"})", 400, "INVALID_PARAMETER_VALUE");
  ExpectRefused(*shop, "POST", "/updates", R"({"reset_checkpoint_selection": "ingest"})", 400,
                "INVALID_PARAMETER_VALUE");
}

TEST_F(ApiConformance, Updates_AnUnknownUpdateIsNotFound) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "GET", "/updates/00000000-0000-4000-8000-000000000000", "", 404, "RESOURCE_DOES_NOT_EXIST");
}

TEST_F(ApiConformance, Updates_ASecondUpdateWhileOneRunsIsAConflictAndChangesNothing) {
  auto shop = MakeShop("shop");
  const std::string id = StartHeld(*shop);
  ExpectRefused(*shop, "POST", "/updates", R"({"full_refresh": true})", 409, "RESOURCE_CONFLICT", kToken,
                /*idle=*/false);
  shop->sources().Open();
  EXPECT_EQ(shop->Await(id), "COMPLETED");  // undisturbed
}

TEST_F(ApiConformance, Updates_ARewindWhileAnUpdateRunsIsAConflictAndChangesNothing) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint point = shop->RecordPeriodicPoint();
  const std::string id = StartHeld(*shop);
  ExpectRefused(*shop, "POST", "/updates", Shop::RewindBody("rewind_point_id", point.id, "main.shop.raw"), 409,
                "RESOURCE_CONFLICT", kToken, /*idle=*/false);
  shop->sources().Open();
  EXPECT_EQ(shop->Await(id), "COMPLETED");
}

TEST_F(ApiConformance, Updates_ReadsAreAnsweredWhileAnUpdateRuns) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::string id = StartHeld(*shop);
  for (const char* path : {"/updates", "/events?max_results=5", "/rewind-points", "/tables/main.shop.raw/rows",
                           "/tables/main.shop.raw/history"}) {
    const Http r = shop->Get(path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
  }
  shop->sources().Open();
  EXPECT_EQ(shop->Await(id), "COMPLETED");
}

TEST_F(ApiConformance, Updates_AFailedUpdateEndsFailedAndTheEventLogNamesTheFlowAndTheCause) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("bad.jsonl", R"({"customer_id": "one", "name": "ada", "seq": 1})"
                                  "\n");
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "FAILED");
  const json errors = shop->Get("/events?level=ERROR").Json()["events"];
  ASSERT_GE(errors.size(), 1u);
  bool named = false;
  for (const json& e : errors) {
    EXPECT_EQ(e["origin"]["update_id"], id);
    named = named || (e["origin"]["flow_name"] == "customers" &&
                      e["message"].get<std::string>().find("bad.jsonl") != std::string::npos);
  }
  EXPECT_TRUE(named) << errors.dump();
}

TEST_F(ApiConformance, Updates_AFailedFlowStopsOnlyItselfAndWhatIsDownstreamOfIt) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("bad.jsonl", R"({"customer_id": "one", "name": "ada", "seq": 1})"
                                  "\n");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "FAILED");
  EXPECT_EQ(shop->Rows("main.shop.orders").size(), 5u);  // not downstream of the failed flow
}

// --- stop ------------------------------------------------------------------------------------

TEST_F(ApiConformance, Stop_EndsTheRunningUpdateCanceledAfterItsBatch) {
  auto shop = MakeShop("shop");
  const std::string id = StartHeld(*shop);
  const Http r = shop->Post("/stop", "");
  EXPECT_EQ(r.status, 200) << r.body;
  shop->sources().Open();
  EXPECT_EQ(shop->Await(id), "CANCELED");
}

TEST_F(ApiConformance, Stop_WhileNothingRunsDoesNotStopTheNextUpdate) {
  auto shop = MakeShop("shop");
  ASSERT_EQ(shop->Post("/stop", "").status, 200);
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 5u);
}

// --- the event log ---------------------------------------------------------------------------

TEST_F(ApiConformance, Events_AreListedNewestFirst) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const json events = shop->Get("/events").Json()["events"];
  ASSERT_GT(events.size(), 3u);
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GT(events[i - 1]["sequence"].get<uint64_t>(), events[i]["sequence"].get<uint64_t>());
  }
}

TEST_F(ApiConformance, Events_CanBeFilteredByTypeAndLevel) {
  auto shop = MakeShop("shop");
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->AddCustomers("bad.jsonl", R"({"customer_id": "one", "name": "ada", "seq": 1})"
                                  "\n");
  ASSERT_EQ(shop->Run(), "FAILED");
  const json created = shop->Get("/events?event_type=create_update").Json()["events"];
  ASSERT_EQ(created.size(), 2u);
  for (const json& e : created) EXPECT_EQ(e["event_type"], "create_update");
  const json errors = shop->Get("/events?level=ERROR").Json()["events"];
  ASSERT_GE(errors.size(), 1u);
  for (const json& e : errors) EXPECT_EQ(e["level"], "ERROR");
  EXPECT_EQ(shop->Get("/events?event_type=flow_progress&level=ERROR").Json()["events"].size(), 1u);
}

TEST_F(ApiConformance, Events_CanBeFilteredByTime) {
  auto shop = MakeShop("shop");
  std::string first, second;
  ASSERT_EQ(shop->Run("{}", &first), "COMPLETED");
  shop->Tick(1);
  const std::string cut = shop->Timestamp();  // at or after every event of the first update
  shop->Tick(3600);
  ASSERT_EQ(shop->Run("{}", &second), "COMPLETED");
  // The updates whose events fall in a range (events of no update aside).
  auto updates_in = [&](const std::string& query) {
    std::set<std::string> ids;
    const Http r = shop->Get("/events?" + query);
    EXPECT_EQ(r.status, 200) << r.body;
    for (const json& e : r.Field("events")) {
      if (!e["origin"]["update_id"].get<std::string>().empty()) ids.insert(e["origin"]["update_id"]);
    }
    return ids;
  };
  EXPECT_EQ(updates_in("start_time=" + shop->Timestamp(1800).replace(10, 1, "%20")), std::set<std::string>{second});
  EXPECT_EQ(updates_in("end_time=" + std::string(cut).replace(10, 1, "%20")), std::set<std::string>{first});
}

TEST_F(ApiConformance, Events_AreListedInPagesWithMaxResultsAndPageToken) {
  auto shop = MakeShop("shop");
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const json all = shop->Get("/events?max_results=1000").Json()["events"];
  json page = shop->Get("/events?max_results=2").Json();
  ASSERT_EQ(page["events"].size(), 2u);
  EXPECT_EQ(page["events"][0]["id"], all[0]["id"]);
  page = shop->Get("/events?max_results=2&page_token=" + page["next_page_token"].get<std::string>()).Json();
  ASSERT_EQ(page["events"].size(), 2u);
  EXPECT_EQ(page["events"][0]["id"], all[2]["id"]);
}

TEST_F(ApiConformance, Events_EachBatchRecordsAFlowProgressEventNamingItsFlow) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "COMPLETED");
  const json events = shop->Get("/events?event_type=flow_progress").Json()["events"];
  std::set<std::string> flows;
  for (const json& e : events) {
    EXPECT_EQ(e["origin"]["update_id"], id);
    flows.insert(e["origin"]["flow_name"]);
  }
  EXPECT_EQ(flows.count("ingest"), 1u);
  EXPECT_EQ(flows.count("clean"), 1u);
  EXPECT_EQ(flows.count("main.shop.revenue"), 1u);
}

TEST_F(ApiConformance, Events_ABadFilterIsRefused) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "GET", "/events?level=LOUD", "", 400, "INVALID_PARAMETER_VALUE");
  ExpectRefused(*shop, "GET", "/events?start_time=yesterday", "", 400, "INVALID_PARAMETER_VALUE");
  ExpectRefused(*shop, "GET", "/events?max_results=0", "", 400, "INVALID_PARAMETER_VALUE");
}

// --- authentication and bad requests ---------------------------------------------------------

TEST_F(ApiConformance, Auth_ARequestWithoutABearerTokenIsUnauthenticatedAndChangesNothing) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "POST", "/updates", R"({"full_refresh": true})", 401, "UNAUTHENTICATED", /*token=*/"");
}

TEST_F(ApiConformance, Auth_AWrongTokenIsUnauthenticatedAndChangesNothing) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "POST", "/updates", R"({"full_refresh": true})", 401, "UNAUTHENTICATED", "not-the-token");
}

TEST_F(ApiConformance, Auth_EveryEndpointNeedsTheToken) {
  auto shop = MakeShop("shop");
  for (const char* path : {"/updates", "/events", "/rewind-points", "/tables/main.shop.raw/rows"}) {
    EXPECT_EQ(shop->Call("GET", path, "", "").status, 401) << path;
  }
  EXPECT_EQ(shop->Call("POST", "/stop", "", "").status, 401);
  EXPECT_EQ(HttpRequest(shop->port(), "GET", "/metrics", "", "").status, 401);
  EXPECT_EQ(HttpRequest(shop->port(), "GET", "/metrics", "", std::string("Bearer ") + kToken).status, 200);
}

TEST_F(ApiConformance, Http_AnotherPipelinesIdIsNotFound) {
  auto shop = MakeShop("shop");
  const StoreFingerprint before = shop->Fingerprint();
  const Http r = HttpRequest(shop->port(), "POST", "/api/2.0/pipelines/not-this-one/updates", "{}",
                             std::string("Bearer ") + kToken);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(r.ErrorCode(), "RESOURCE_DOES_NOT_EXIST");
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(ApiConformance, Http_AnUnknownEndpointIsNotFound) {
  auto shop = MakeShop("shop");
  ExpectRefused(*shop, "GET", "/nothing-here", "", 404, "ENDPOINT_NOT_FOUND");
  ExpectRefused(*shop, "DELETE", "/updates", "", 404, "ENDPOINT_NOT_FOUND");
}

TEST_F(ApiConformance, Http_ABodyOverTheLimitIsRefusedAndChangesNothing) {
  auto shop = MakeShop("shop");
  const StoreFingerprint before = shop->Fingerprint();
  // The header announces more than the server takes (64 KiB here).
  const Http r = HttpRaw(shop->port(), "POST " + shop->api() +
                                           "/updates HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                           "Authorization: Bearer " +
                                           kToken +
                                           "\r\nContent-Type: application/json\r\n"
                                           "Content-Length: 1000000\r\n\r\n");
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(r.ErrorCode(), "REQUEST_LIMIT_EXCEEDED") << r.body;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(ApiConformance, Http_WhatIsNotHttpIsAMalformedRequest) {
  auto shop = MakeShop("shop");
  const StoreFingerprint before = shop->Fingerprint();
  const Http r = HttpRaw(shop->port(), "THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.ErrorCode(), "MALFORMED_REQUEST") << r.body;
  EXPECT_UNCHANGED(*shop, before);
}

// --- retries by cause ---------------------------------------------------------------------------

class RetriesConformance : public ConformanceTest {
 protected:
  // An update whose first read of a customers file fails with an I/O
  // error (transient: a retry does not meet it again).
  std::string RunFailingOnce(Shop& shop, const std::string& body) {
    shop.AddCustomers("c1.jsonl", kCustomers);
    shop.sources().Fail("c1.jsonl", 1);
    const std::string id = shop.Start(body);
    shop.service()->WaitIdle();
    return id;
  }
  size_t RetryEvents(Shop& shop) { return shop.Events("update_retry").size(); }
};

TEST_F(RetriesConformance, Retries_AnUpdateStartedThroughTheApiRetriesATransientFailure) {
  auto shop = MakeShop("shop");
  const std::string id = RunFailingOnce(*shop, "{}");
  EXPECT_EQ(shop->GetUpdate(id)["state"], "COMPLETED");
  EXPECT_EQ(RetryEvents(*shop), 1u);
  const json warn = shop->Get("/events?event_type=update_retry").Json()["events"];
  ASSERT_EQ(warn.size(), 1u);
  EXPECT_EQ(warn[0]["level"], "WARN");
  EXPECT_EQ(warn[0]["origin"]["update_id"], id);
  EXPECT_EQ(shop->Rows("main.shop.customers").size(), 1u);
}

TEST_F(RetriesConformance, Retries_AnUpdateStartedByAJobRetriesATransientFailure) {
  auto shop = MakeShop("shop");
  const std::string id = RunFailingOnce(*shop, R"({"cause": "JOB_TASK"})");
  EXPECT_EQ(shop->GetUpdate(id)["state"], "COMPLETED");
  EXPECT_EQ(RetryEvents(*shop), 1u);
}

TEST_F(RetriesConformance, Retries_AFailureARetryWouldMeetAgainIsNotRetried) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("bad.jsonl", R"({"customer_id": "one", "name": "ada", "seq": 1})"
                                  "\n");
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "FAILED");
  EXPECT_EQ(RetryEvents(*shop), 0u);
}

// --- the tables, as the documents' queries read them ---------------------------------------------

TEST_F(ApiConformance, Tables_HistoryListsTheCommitsNewestFirst) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(6, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const json history = shop->Get("/tables/main.shop.raw/history").Json()["history"];
  ASSERT_GE(history.size(), 3u);  // created, then two batches
  for (size_t i = 1; i < history.size(); ++i) {
    EXPECT_GT(history[i - 1]["version"].get<uint64_t>(), history[i]["version"].get<uint64_t>());
  }
  EXPECT_EQ(history[0]["operation"], "STREAMING UPDATE");
  EXPECT_FALSE(history[0]["timestamp"].get<std::string>().empty());
}

TEST_F(ApiConformance, Tables_RowsCanBeReadAsOfAVersion) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const uint64_t then = shop->Newest();
  shop->Produce(6, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(shop->Get("/tables/main.shop.raw/rows").Json()["rows"].size(), 10u);
  const json old = shop->Get("/tables/main.shop.raw/rows?version=" + std::to_string(then)).Json();
  EXPECT_EQ(old["rows"].size(), 5u);
  EXPECT_EQ(old["version"], then);
}

TEST_F(ApiConformance, Tables_RowsCanBeReadAsOfATimestamp) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Tick(1);
  std::string then = shop->Timestamp();
  shop->Tick(60);
  shop->Produce(6, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const Http r = shop->Get("/tables/main.shop.raw/rows?timestamp=" + then.replace(10, 1, "%20"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["rows"].size(), 5u);
}

TEST_F(ApiConformance, Tables_TheChangeFeedShowsEachCommitsInsertsAndUpdates) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const uint64_t first = shop->Newest();
  shop->Produce(6, 3);  // more orders of both countries
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const json changes =
      shop->Get("/tables/main.shop.revenue/changes?from=" + std::to_string(first + 1)).Json()["changes"];
  ASSERT_FALSE(changes.empty());
  std::set<std::string> kinds;
  for (const json& c : changes) {
    kinds.insert(c["_change_type"]);
    EXPECT_GT(c["_commit_version"].get<uint64_t>(), first);
    EXPECT_FALSE(c["_commit_timestamp"].get<std::string>().empty());
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"update_preimage", "update_postimage"}));
}

}  // namespace
}  // namespace spool::conformance
