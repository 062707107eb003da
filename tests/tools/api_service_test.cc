// The HTTP API's handling (tools/api_service.h), without a socket: the
// reference endpoints, their errors, authentication, one update at a time.
#include "api_service.h"

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "spool/rewind/rewind_points.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "temp_dir.h"

namespace spool::cli {
namespace {

using json = nlohmann::json;

constexpr char kToken[] = "s3cret";

class ApiServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.Sub("in"));
    AddFile("a.jsonl", R"({"id": 1, "country": "de", "amount": 10})"
                       "\n"
                       R"({"id": 2, "country": "fr", "amount": 5})"
                       "\n");
    ASSERT_TRUE(Store::Open(StoreOptions{}, dir_.Sub("store"), &store_).ok());
    PipelineBuilder b("shop");
    b.StreamingTable("main.shop.orders");
    b.StreamingTable("main.shop.revenue");
    b.Flow("ingest")
        .FromFiles(dir_.Sub("in"), {{"id", ColumnType::kInt64, false},
                                    {"country", ColumnType::kString, false},
                                    {"amount", ColumnType::kInt64, true}})
        .Into("main.shop.orders");
    b.Flow("revenue")
        .FromDataset("main.shop.orders")
        .Aggregate({"country"}, {{"revenue", AggregateFn::kSum, "amount"}})
        .Into("main.shop.revenue");
    const PipelineSpec spec = b.Build();
    ASSERT_TRUE(SetPipelineDefinition(store_.get(), spec, &pipeline_id_).ok());
    ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline_).ok());
    service_ = std::make_unique<ApiService>(store_.get(), pipeline_.get(), kToken);
  }
  void AddFile(const std::string& name, const std::string& text) { std::ofstream(dir_.Sub("in/" + name)) << text; }

  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& token = kToken) {
    return service_->Handle({method, "/api/2.0/pipelines/" + pipeline_id_ + path, "Bearer " + token, body});
  }
  static json Json(const ApiResponse& r) { return json::parse(r.body); }
  // Starts an update and waits for it to end; its id.
  std::string Update(const std::string& body = "{}") {
    const ApiResponse r = Call("POST", "/updates", body);
    EXPECT_EQ(r.status, 200) << r.body;
    service_->WaitIdle();
    return Json(r).value("update_id", "");
  }
  std::string State(const std::string& update_id) {
    const ApiResponse r = Call("GET", "/updates/" + update_id);
    EXPECT_EQ(r.status, 200) << r.body;
    return Json(r)["update"].value("state", "");
  }
  uint64_t Newest() { return store_->log()->Newest().version; }
  std::vector<Event> Events() {
    std::vector<Event> events;
    EXPECT_TRUE(store_->events()->Query(EventQuery{}, &events).ok());
    return events;
  }
  // An update, a rewind point, one more order and its update: the point.
  RewindPoint PointThenMore() {
    Update();
    RewindPoint point;
    EXPECT_TRUE(RecordRewindPoint(store_.get(), *pipeline_, "before b", false, &point).ok());
    AddFile("b.jsonl", R"({"id": 3, "country": "de", "amount": 7})"
                       "\n");
    Update();
    return point;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::string pipeline_id_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<ApiService> service_;
};

TEST_F(ApiServiceTest, AnUpdateStartsAtOnceAndItsStateIsFollowed) {
  const std::string id = Update();
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(State(id), "COMPLETED");
  const json update = Json(Call("GET", "/updates/" + id))["update"];
  EXPECT_EQ(update["pipeline_id"], pipeline_id_);
  EXPECT_EQ(update["cause"], "API_CALL");
  EXPECT_GT(update["creation_time"].get<int64_t>(), 0);
  const json list = Json(Call("GET", "/updates"));
  ASSERT_EQ(list["updates"].size(), 1u);
  EXPECT_EQ(list["updates"][0]["update_id"], id);
  EXPECT_EQ(list["updates"][0]["state"], "COMPLETED");
}

TEST_F(ApiServiceTest, ThePipelineReadsBackWithItsSourcesAndSinks) {
  ApiResponse r = Call("GET", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json(r)["pipeline_id"], pipeline_id_);
  EXPECT_EQ(Json(r)["spec"]["flows"][0]["source"]["files"], dir_.Sub("in"));
  EXPECT_TRUE(Json(r)["sinks"].empty());
  EXPECT_EQ(Call("POST", "").status, 404);
  // A pipeline reading JetStream and publishing to it (nothing connects to
  // answer this).
  JetStreamSpec js;
  js.connection.servers = {"nats://127.0.0.1:4222"};
  js.stream = "ORDERS";
  PipelineBuilder b("nats");
  b.StreamingTable("main.nats.orders");
  b.Flow("ingest").FromJetStream(js, {{"id", ColumnType::kInt64, false}}).Into("main.nats.orders");
  js.stream = "OUT";
  js.subject = "out.{table}";
  b.Sink("out", "main.nats.orders", js);
  std::string id;
  ASSERT_TRUE(SetPipelineDefinition(store_.get(), b.Build(), &id).ok());
  std::unique_ptr<Pipeline> pipeline;
  ASSERT_TRUE(Pipeline::Open(store_.get(), b.Build(), &pipeline).ok());
  ApiService service(store_.get(), pipeline.get(), kToken);
  r = service.Handle({"GET", "/api/2.0/pipelines/" + pipeline->id(), "Bearer " + std::string(kToken), ""});
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = Json(r);
  EXPECT_EQ(body["spec"]["flows"][0]["source"]["jetstream"]["stream"], "ORDERS");
  EXPECT_EQ(body["spec"]["sinks"][0]["jetstream"]["subject"], "out.{table}");
  ASSERT_EQ(body["sinks"].size(), 1u);
  EXPECT_EQ(body["sinks"][0]["name"], "out");
  EXPECT_FALSE(body["sinks"][0].contains("published_version"));  // nothing published yet
}

TEST_F(ApiServiceTest, MetricsAreThePrometheusTextOfTheStoreAndItsEvents) {
  Update();
  VacuumOptions vacuum;
  vacuum.retain_us = 0;
  vacuum.force = true;
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  const ApiResponse r = service_->Handle({"GET", "/metrics", std::string("Bearer ") + kToken, ""});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4");
  EXPECT_NE(r.body.find("# TYPE spool_commits_total counter"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\nspool_updates_total 1\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\nspool_update_running 0\n"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("\nspool_log_fsyncs_total 0\n"), std::string::npos) << r.body;  // the update synced
  // Every commit in the latency histogram: its +Inf bucket counts them all.
  const uint64_t commits = store_->Stats().commits;
  ASSERT_GT(commits, 0u);
  EXPECT_NE(r.body.find("# TYPE spool_commit_latency_seconds histogram"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("spool_commit_latency_seconds_bucket{le=\"+Inf\"} " + std::to_string(commits) + "\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("spool_commit_latency_seconds_count " + std::to_string(commits) + "\n"), std::string::npos);
  EXPECT_NE(r.body.find("\nspool_vacuums_total 1\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\nspool_vacuum_bytes_total " + std::to_string(report.bytes)), std::string::npos) << r.body;
  EXPECT_EQ(service_->Handle({"GET", "/metrics", "", ""}).status, 401);
}

TEST_F(ApiServiceTest, UpdatesAndEventsArePagedNewestFirstAndEventsFiltered) {
  const std::string first = Update(), second = Update(R"({"cause": "JOB_TASK"})"), third = Update();
  json page = Json(Call("GET", "/updates?max_results=2"));
  ASSERT_EQ(page["updates"].size(), 2u);
  EXPECT_EQ(page["updates"][0]["update_id"], third);
  EXPECT_EQ(page["updates"][1]["cause"], "JOB_TASK");
  page = Json(Call("GET", "/updates?max_results=2&page_token=" + page["next_page_token"].get<std::string>()));
  ASSERT_EQ(page["updates"].size(), 1u);
  EXPECT_EQ(page["updates"][0]["update_id"], first);
  EXPECT_FALSE(page.contains("next_page_token"));
  // Events: by type and level, newest first, in pages.
  json events = Json(Call("GET", "/events?event_type=create_update&max_results=2"));
  ASSERT_EQ(events["events"].size(), 2u);
  EXPECT_EQ(events["events"][0]["origin"]["update_id"], third);
  events =
      Json(Call("GET", "/events?event_type=create_update&page_token=" + events["next_page_token"].get<std::string>()));
  ASSERT_EQ(events["events"].size(), 1u);
  EXPECT_EQ(events["events"][0]["origin"]["update_id"], first);
  EXPECT_EQ(Json(Call("GET", "/events?level=ERROR"))["events"].size(), 0u);
  EXPECT_EQ(Json(Call("GET", "/events?start_time=2001-01-01%2000:00:00&end_time=2002-01-01"))["events"].size(), 0u);
}

TEST_F(ApiServiceTest, TheReferenceRewindBodyRewindsAndItsErrorsCarryTheirCodes) {
  const RewindPoint point = PointThenMore();
  const json points = Json(Call("GET", "/rewind-points"));
  ASSERT_GE(points["rewind_points"].size(), 1u);
  EXPECT_EQ(points["rewind_points"][0]["rewind_point_id"], point.id);

  const uint64_t before = Newest();
  ApiResponse r = Call("POST", "/updates", R"({"rewind_spec": {"rewind_point_id": "nope"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Json(r)["error_code"], "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
  EXPECT_EQ(Newest(), before);
  const std::string id = Update(R"({"cause": "USER_ACTION", "rewind_spec": {"rewind_point_id": ")" + point.id +
                                R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": true,
                                "reset_checkpoints": true}], "dry_run": false}})");
  EXPECT_EQ(State(id), "COMPLETED");
  EXPECT_EQ(Json(Call("GET", "/updates/" + id))["update"]["rewind"], true);
  EXPECT_EQ(Newest(), before + 1);  // the log cut at the point, then one RESTORE commit
  TableId orders;
  ASSERT_TRUE(TableId::Parse("main.shop.orders", &orders).ok());
  uint64_t rows = 0;
  ASSERT_TRUE(store_->Read(orders, {}, [&](const Row&) { return ++rows > 0; }).ok());
  EXPECT_EQ(rows, 2u);  // b.jsonl's order is gone until the replay
}

// POST /api/2.0/sql/statements: the reference's shape, rows as strings,
// row_limit cutting them, and every bad request a 400 changing nothing.
TEST_F(ApiServiceTest, SqlStatementsAnswerInTheReferenceShape) {
  PointThenMore();
  const auto sql = [&](const std::string& body, const std::string& token = kToken) {
    return service_->Handle({"POST", "/api/2.0/sql/statements", "Bearer " + token, body});
  };
  ApiResponse r = sql(R"({"statement": "SELECT country, revenue, revenue * 1.5 AS more, NULL AS missing )"
                      R"(FROM main.shop.revenue ORDER BY country", "wait_timeout": "30s"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json answer = Json(r);
  EXPECT_EQ(answer["status"]["state"], "SUCCEEDED");
  EXPECT_EQ(answer["statement_id"].get<std::string>().size(), 36u);
  const json columns = answer["manifest"]["schema"]["columns"];
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0], json({{"name", "country"}, {"type_name", "STRING"}, {"type_text", "STRING"}, {"position", 0}}));
  EXPECT_EQ(columns[1]["type_name"], "LONG");
  EXPECT_EQ(columns[2]["type_name"], "DOUBLE");
  EXPECT_EQ(answer["manifest"]["total_row_count"], 2);
  EXPECT_EQ(answer["manifest"]["truncated"], false);
  EXPECT_EQ(answer["result"]["data_array"], json::parse(R"([["de", "17", "25.5", null], ["fr", "5", "7.5", null]])"));

  r = sql(R"({"statement": "SELECT id FROM main.shop.orders ORDER BY id", "row_limit": 2})");
  answer = Json(r);
  EXPECT_EQ(answer["result"]["data_array"], json::parse(R"([["1"], ["2"]])"));
  EXPECT_EQ(answer["manifest"]["truncated"], true);
  r = sql(R"j({"statement": "SELECT _change_type FROM table_changes('main.shop.revenue', 1) LIMIT 1"})j");
  EXPECT_EQ(Json(r)["result"]["data_array"], json::parse(R"([["insert"]])"));

  const uint64_t newest = Newest();
  for (const char* bad :
       {R"({"statement": "DELETE FROM main.shop.orders"})", R"({"statement": "SELEC 1"})", R"({"statement": 7})",
        R"({})", "not json", R"({"statement": "SELECT 1", "row_limit": 0})",
        R"({"statement": "SELECT 1", "wait_timeout": "soon"})", R"({"statement": "SELECT 1", "parameters": []})",
        R"j({"statement": "SELECT * FROM table_at('main.shop.orders', 999)"})j"}) {
    r = sql(bad);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
    EXPECT_EQ(Json(r)["error_code"], "INVALID_PARAMETER_VALUE") << bad;
  }
  EXPECT_NE(Json(sql(R"({"statement": "DELETE FROM main.shop.orders"})"))["message"].get<std::string>().find(
                "may not be modified"),
            std::string::npos);
  EXPECT_EQ(Newest(), newest);
  EXPECT_EQ(sql(R"({"statement": "SELECT 1"})", "wrong").status, 401);
}

TEST_F(ApiServiceTest, TablesReadAsOfAVersionWithTheirHistoryAndChangeFeed) {
  Update();
  const uint64_t first = Newest();
  AddFile("b.jsonl", R"({"id": 3, "country": "de", "amount": 7})"
                     "\n");
  Update();
  json rows = Json(Call("GET", "/tables/main.shop.revenue/rows"));
  ASSERT_EQ(rows["rows"].size(), 2u);
  EXPECT_EQ(rows["rows"][0]["country"], "de");
  EXPECT_EQ(rows["rows"][0]["revenue"], 17);
  rows = Json(Call("GET", "/tables/main.shop.revenue/rows?version=" + std::to_string(first)));
  EXPECT_EQ(rows["version"], first);
  EXPECT_EQ(rows["rows"][0]["revenue"], 10);  // as of then
  EXPECT_EQ(Json(Call("GET", "/tables/main.shop.orders/rows?max_results=2"))["truncated"], true);
  const json history = Json(Call("GET", "/tables/main.shop.revenue/history?max_results=1"));
  ASSERT_EQ(history["history"].size(), 1u);
  EXPECT_EQ(history["history"][0]["operation"], "STREAMING UPDATE");
  const json changes = Json(Call("GET", "/tables/main.shop.revenue/changes?from=" + std::to_string(first + 1)));
  ASSERT_EQ(changes["changes"].size(), 2u);  // de's pre- and post-image
  EXPECT_EQ(changes["changes"][0]["_change_type"], "update_preimage");
  EXPECT_EQ(changes["changes"][1]["revenue"], 17);
  EXPECT_EQ(Call("GET", "/tables/main.shop.nothing/rows").status, 404);
  EXPECT_EQ(Call("GET", "/tables/not-a-name/rows").status, 400);
  EXPECT_EQ(Call("GET", "/tables/main.shop.revenue/rows?version=999").status, 400);
  EXPECT_EQ(Call("GET", "/tables/main.shop.revenue/changes").status, 400);
}

TEST_F(ApiServiceTest, ARewindPreviewSaysWhatTheRewindWouldDoAndChangesNothing) {
  const RewindPoint point = PointThenMore();
  const uint64_t before = Newest();
  const size_t points = Json(Call("GET", "/rewind-points"))["rewind_points"].size();
  const json preview = Json(Call("POST", "/rewind-preview",
                                 R"({"rewind_spec": {"rewind_point_id": ")" + point.id +
                                     R"(", "datasets": [{"identifier": "main.shop.revenue",
                                                                "cascade": true, "reset_checkpoints": true}]}})"));
  EXPECT_EQ(preview["target"]["version"], point.position.version);
  EXPECT_EQ(preview["whole_pipeline"], false);
  ASSERT_EQ(preview["datasets"].size(), 1u);
  EXPECT_EQ(preview["datasets"][0]["identifier"], "main.shop.revenue");
  EXPECT_GT(preview["versions_after_target"].get<uint64_t>(), 0u);
  EXPECT_EQ(Newest(), before);
  EXPECT_EQ(Json(Call("GET", "/rewind-points"))["rewind_points"].size(), points);  // no point recorded
  const ApiResponse refused = Call("POST", "/rewind-preview", R"({"full_refresh": true})");
  EXPECT_EQ(refused.status, 400);
}

TEST_F(ApiServiceTest, BadRequestsAreRefusedWithTheirStatusAndChangeNothing) {
  const uint64_t before = Newest();
  const size_t events = Events().size();
  struct Case {
    std::string method, path, body;
    int status;
    std::string code;
  } cases[] = {
      {"POST", "/updates", "{not json", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"full_refresh": "yes"})", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"surprise": true})", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"rewind_spec": {"rewind_timestamp": "yesterday"}})", 400,
       "INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP_FORMAT"},
      {"GET", "/updates/no-such-update", "", 404, "RESOURCE_DOES_NOT_EXIST"},
      {"GET", "/updates?max_results=0", "", 400, "INVALID_PARAMETER_VALUE"},
      {"GET", "/events?level=LOUD", "", 400, "INVALID_PARAMETER_VALUE"},
      {"GET", "/nothing", "", 404, "ENDPOINT_NOT_FOUND"},
      {"DELETE", "/updates", "", 404, "ENDPOINT_NOT_FOUND"},
      // Bytes that are not UTF-8, quoted back in the message (found by
      // api_request_fuzzer: the JSON writer threw and the server died).
      {"GET", "/d\xf4\xcb", "", 404, "ENDPOINT_NOT_FOUND"},
      {"GET", "/updates/\xff\xfe", "", 404, "RESOURCE_DOES_NOT_EXIST"},
      // Refused at once, before the update gets an id: what the run would
      // refuse (they were answered 200, then FAILED, leaving no trace).
      {"POST", "/updates", R"({"validate_only": true, "rewind_spec": {"rewind_timestamp": "2026-09-29 08:36:55"}})",
       400, "INVALID_UPDATE_REQUEST.CONFLICTING_FIELDS"},
      {"POST", "/updates", R"({"refresh_selection": ["main.shop.nothing"]})", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"full_refresh_selection": ["main.shop.nothing"]})", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"reset_checkpoint_selection": ["revenue2"]})", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"validate_only": true, "refresh_selection": ["main.shop.nothing"]})", 400,
       "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates", R"({"rewind_spec": {"rewind_point_id": "nope"}})", 400,
       "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND"},
      // Query parameters an endpoint does not take.
      {"GET", "/updates?max_result=5", "", 400, "INVALID_PARAMETER_VALUE"},
      {"GET", "/events?type=rewind_summary", "", 400, "INVALID_PARAMETER_VALUE"},
      {"GET", "/rewind-points?limit=1", "", 400, "INVALID_PARAMETER_VALUE"},
      {"GET", "/rewind-points?since=yesterdayish", "", 400, "INVALID_PARAMETER_VALUE"},
      {"POST", "/updates?full_refresh=true", "", 400, "INVALID_PARAMETER_VALUE"},
  };
  for (const Case& c : cases) {
    const ApiResponse r = Call(c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << " " << c.body << ": " << r.body;
    EXPECT_EQ(Json(r)["error_code"], c.code) << c.path << " " << c.body;
    EXPECT_FALSE(Json(r).value("message", "").empty());
  }
  ApiResponse r = service_->Handle({"GET", "/api/2.0/pipelines/other/updates", "Bearer s3cret", ""});
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("no pipeline has id other"), std::string::npos);
  for (const std::string& auth : {std::string(""), std::string("Bearer wrong"), std::string("s3cret")}) {
    r = service_->Handle({"POST", "/api/2.0/pipelines/" + pipeline_id_ + "/updates", auth, "{}"});
    EXPECT_EQ(r.status, 401) << auth;
    EXPECT_EQ(Json(r)["error_code"], "UNAUTHENTICATED");
  }
  service_->WaitIdle();
  EXPECT_EQ(Newest(), before);
  EXPECT_EQ(Json(Call("GET", "/updates"))["updates"].size(), 0u);
  EXPECT_EQ(Events().size(), events);
}

// An update that was accepted and failed is one entry in the updates list,
// FAILED with its error, in the event log — after a restart too.
TEST_F(ApiServiceTest, AnAcceptedUpdateThatFailedShowsItsErrorAfterARestart) {
  AddFile("bad.jsonl", R"({"id": "one", "country": "de", "amount": 1})"
                       "\n");
  const std::string id = Update();
  service_.reset();  // a restart of the server
  service_ = std::make_unique<ApiService>(store_.get(), pipeline_.get(), kToken);
  const json update = Json(Call("GET", "/updates/" + id))["update"];
  EXPECT_EQ(update["state"], "FAILED");
  EXPECT_NE(update.value("error", "").find("ingest"), std::string::npos) << update.dump();
  const json updates = Json(Call("GET", "/updates"))["updates"];
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0]["update_id"], id);
  EXPECT_EQ(updates[0]["state"], "FAILED");
}

// The rewind points endpoint takes `since` (a duration or a time) and
// `max_results`.
TEST_F(ApiServiceTest, RewindPointsHonourSinceAndMaxResults) {
  RewindPoint first, second;
  Update();
  ASSERT_TRUE(RecordRewindPoint(store_.get(), *pipeline_, "one", false, &first).ok());
  ASSERT_TRUE(RecordRewindPoint(store_.get(), *pipeline_, "two", false, &second).ok());
  const size_t all = Json(Call("GET", "/rewind-points"))["rewind_points"].size();
  ASSERT_GE(all, 2u);
  const json one = Json(Call("GET", "/rewind-points?max_results=1"))["rewind_points"];
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]["rewind_point_id"], second.id);  // newest first
  EXPECT_EQ(Json(Call("GET", "/rewind-points?since=7d"))["rewind_points"].size(), all);
  EXPECT_EQ(Json(Call("GET", "/rewind-points?since=2999-01-01%2000:00:00"))["rewind_points"].size(), 0u);
}

// A continuous pipeline's update over the API runs until stopped; a rewind
// request stops it after its batch, rewinds, and leaves it stopped.
TEST_F(ApiServiceTest, AContinuousPipelineRunsUntilARewindStopsItAndStaysStopped) {
  const RewindPoint point = PointThenMore();
  PipelineSpec spec = pipeline_->spec();
  spec.continuous = true;
  spec.configuration["pipelines.trigger.interval"] = "10ms";
  service_.reset();
  pipeline_.reset();
  ASSERT_TRUE(SetPipelineDefinition(store_.get(), spec).ok());
  ASSERT_TRUE(Pipeline::Open(store_.get(), spec, &pipeline_).ok());
  service_ = std::make_unique<ApiService>(store_.get(), pipeline_.get(), kToken);
  const ApiResponse started = Call("POST", "/updates");
  ASSERT_EQ(started.status, 200) << started.body;
  const std::string continuous = Json(started).value("update_id", "");
  std::string state;
  for (int look = 0; look < 100000 && state != "RUNNING"; ++look) state = State(continuous);  // bounded
  ASSERT_EQ(state, "RUNNING");
  // Still running: another update is a conflict; a rewind is not.
  EXPECT_EQ(Call("POST", "/updates", "{}").status, 409);
  const ApiResponse rewind = Call("POST", "/updates", R"({"rewind_spec": {"rewind_point_id": ")" + point.id + R"("}})");
  ASSERT_EQ(rewind.status, 200) << rewind.body;
  service_->WaitIdle();
  EXPECT_EQ(State(continuous), "CANCELED");
  EXPECT_EQ(State(Json(rewind).value("update_id", "")), "COMPLETED");
  // Stopped: nothing runs until the next update, which replays.
  EXPECT_EQ(Json(Call("GET", "/updates"))["updates"][0]["update_id"], Json(rewind).value("update_id", ""));
  EXPECT_EQ(Json(Call("GET", "/tables/main.shop.orders/rows"))["rows"].size(), 2u);  // back at the point
  const ApiResponse replay = Call("POST", "/updates");
  ASSERT_EQ(replay.status, 200);
  size_t rows = 0;
  for (int look = 0; look < 100000 && rows != 3; ++look) {  // bounded: until the replay has read order 3 again
    rows = Json(Call("GET", "/tables/main.shop.orders/rows"))["rows"].size();
  }
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(Call("POST", "/stop").status, 200);
  service_->WaitIdle();
  EXPECT_EQ(State(Json(replay).value("update_id", "")), "CANCELED");
}

// Every update, however it was started, records periodic rewind points.
TEST_F(ApiServiceTest, AnUpdateOverTheApiRecordsAPeriodicRewindPoint) {
  Update();
  const json points = Json(Call("GET", "/rewind-points"))["rewind_points"];
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0]["message"], kPeriodicRewindPointMessage);
}

TEST_F(ApiServiceTest, ASecondUpdateWhileOneRunsIsAConflict) {
  std::unique_ptr<UpdateClaim> running;  // an update of the store in progress
  ASSERT_TRUE(store_->ClaimUpdate("held", &running).ok());
  const ApiResponse r = Call("POST", "/updates");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(Json(r)["error_code"], "RESOURCE_CONFLICT");
  running.reset();
  // A stop while nothing runs does not stop the next update.
  EXPECT_EQ(Call("POST", "/stop").status, 200);
  EXPECT_EQ(State(Update()), "COMPLETED");
}

// Reads from several threads while an update runs on the service's own
// (run under ThreadSanitizer in CI): every read is answered, none waits for
// the update, and the update completes.
TEST_F(ApiServiceTest, ReadsFromManyThreadsAreAnsweredWhileAnUpdateRuns) {
  Update();  // the tables exist
  for (int f = 0; f < 20; ++f) {
    std::string lines;
    for (int i = 0; i < 200; ++i) {
      const int id = 100 + f * 200 + i;
      lines += "{\"id\": " + std::to_string(id) + ", \"country\": \"" + (id % 2 ? "de" : "fr") + "\", \"amount\": 1}\n";
    }
    AddFile("load-" + std::to_string(f) + ".jsonl", lines);
  }
  const ApiResponse started = Call("POST", "/updates");
  ASSERT_EQ(started.status, 200) << started.body;
  const std::string id = Json(started).value("update_id", "");
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      const char* paths[] = {"/events?max_results=5", "/updates", "/tables/main.shop.revenue/rows",
                             "/tables/main.shop.orders/history?max_results=3"};
      for (int i = 0; i < 50; ++i) {
        const ApiResponse r = Call("GET", paths[(t + i) % 4]);
        (r.status == 200 ? answered : failed)++;
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  service_->WaitIdle();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(answered.load(), 200);
  EXPECT_EQ(State(id), "COMPLETED");
  EXPECT_EQ(Json(Call("GET", "/tables/main.shop.orders/rows?max_results=10000"))["rows"].size(), 4002u);
}

TEST_F(ApiServiceTest, AValidationWritesNothingAndReportsWhatAFullRefreshWouldLose) {
  Update();
  std::filesystem::remove(dir_.Sub("in/a.jsonl"));
  const uint64_t before = Newest();
  const std::string id = Update(R"({"validate_only": true, "full_refresh": true})");
  EXPECT_EQ(Newest(), before);
  const json update = Json(Call("GET", "/updates/" + id))["update"];
  EXPECT_EQ(update["state"], "COMPLETED");
  ASSERT_EQ(update["warnings"].size(), 1u);
  EXPECT_NE(update["warnings"][0].get<std::string>().find("no longer holds 1 of the 1 files read"), std::string::npos);
}

}  // namespace
}  // namespace spool::cli
