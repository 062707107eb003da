// Rewind and replay, as the reference documents describe them, through the
// HTTP API with their request bodies: rewind points, the rewind_spec (a
// point or a timestamp, datasets with cascade and reset_checkpoints, dry
// runs), its refusals (each changing nothing), what a rewind restores and
// what it leaves, replay, rewinding again, and incomplete rewinds.
#include <algorithm>
#include <set>

#include "conformance.h"

namespace spool::conformance {
namespace {

using RewindConformance = ConformanceTest;

// The rewind body of the reference documents for a point, rewinding `table`
// and everything downstream of it.
std::string ByPoint(const std::string& point_id, const std::string& table = "main.shop.orders") {
  return Shop::RewindBody("rewind_point_id", point_id, table);
}

// A rewind_spec body with `spec` as is.
std::string Spec(const std::string& spec) { return R"({"cause": "USER_ACTION", "rewind_spec": )" + spec + "}"; }

// Posts `body`, which must be refused with 400 and `code`, changing nothing
// at all (tables, histories, checkpoints, the event log).
void ExpectRefused(Shop& shop, const std::string& body, const std::string& code) {
  const StoreFingerprint before = shop.Fingerprint();
  const Http r = shop.Post("/updates", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.ErrorCode(), code) << r.body;
  EXPECT_FALSE(r.Json().value("message", "").empty()) << r.body;
  shop.service()->WaitIdle();
  EXPECT_UNCHANGED(shop, before);
}

// --- rewind points ---------------------------------------------------------------

// The position of the point with `id` in the list, or -1.
int IndexOf(const json& points, const std::string& id) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i]["rewind_point_id"] == id) return static_cast<int>(i);
  }
  return -1;
}

TEST_F(RewindConformance, RewindPoints_AreListedNewestFirstWithTheirIdTimeAndMessage) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint first = shop->RecordPeriodicPoint();
  shop->Tick(3600);
  shop->Produce(6, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint second = shop->RecordPeriodicPoint();
  const Http r = shop->Get("/rewind-points");
  ASSERT_EQ(r.status, 200) << r.body;
  const json points = r.Json()["rewind_points"];
  const int a = IndexOf(points, first.id), b = IndexOf(points, second.id);
  ASSERT_GE(a, 0) << r.body;
  ASSERT_GE(b, 0) << r.body;
  EXPECT_LT(b, a);
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_GE(points[i - 1]["timestamp"].get<std::string>(), points[i]["timestamp"].get<std::string>());
  }
  for (int i : {a, b}) {
    const json& p = points[static_cast<size_t>(i)];
    EXPECT_EQ(p["message"], kPeriodicMessage);
    EXPECT_EQ(p["dry_run"], false);
    EXPECT_FALSE(p["timestamp"].get<std::string>().empty());
  }
}

TEST_F(RewindConformance, RewindPoints_EachIsARewindSummaryEventWhoseIdIsTheRewindPointId) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint point = shop->RecordPeriodicPoint();
  const Http r = shop->Get("/events?event_type=rewind_summary");
  ASSERT_EQ(r.status, 200) << r.body;
  const json events = r.Json()["events"];
  const json points = shop->Get("/rewind-points").Json()["rewind_points"];
  ASSERT_EQ(events.size(), points.size()) << r.body;
  bool found = false;
  for (const json& e : events) {
    EXPECT_EQ(e["event_type"], "rewind_summary");
    EXPECT_GE(IndexOf(points, e["id"]), 0) << e.dump();
    if (e["id"] != point.id) continue;
    found = true;
    EXPECT_EQ(e["message"], kPeriodicMessage);
    EXPECT_EQ(e["details"]["rewind_summary"]["dry_run"], false);
  }
  EXPECT_TRUE(found) << r.body;
}

TEST_F(RewindConformance, RewindPoints_RecordTheCurrentVersionOfEveryTableOfThePipeline) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", R"({"customer_id": 1, "name": "ada", "seq": 1})"
                                 "\n");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint recorded_point = shop->RecordPeriodicPoint();
  const json points = shop->Get("/rewind-points").Json()["rewind_points"];
  ASSERT_GE(IndexOf(points, recorded_point.id), 0);
  const json point = points[static_cast<size_t>(IndexOf(points, recorded_point.id))];
  std::map<std::string, uint64_t> recorded;
  for (const json& d : point["datasets"]) recorded[d["identifier"]] = d["table_version"];
  ASSERT_EQ(recorded.size(), ShopTables().size()) << point.dump();
  for (const std::string& table : ShopTables()) {
    const std::vector<HistoryEntry> history = shop->History(table);
    ASSERT_FALSE(history.empty()) << table;
    EXPECT_EQ(recorded[table], history.front().version) << table;
  }
  EXPECT_EQ(point["version"], shop->Newest());
}

TEST_F(RewindConformance, RewindPoints_ANewPipelineHasNoneToRewindTo) {
  auto shop = MakeShop("shop");
  const Http r = shop->Get("/rewind-points");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["rewind_points"].size(), 0u) << r.body;
  EXPECT_EQ(shop->Get("/events?event_type=rewind_summary").Json()["events"].size(), 0u);
}

TEST_F(RewindConformance, RewindPoints_OnAHistoryALaterRewindCutOffAreMarkedAndRefused) {
  auto shop = MakeShop("shop");
  const RewindPoint first = GoodThenBad(*shop);
  const RewindPoint second = shop->RecordPeriodicPoint();
  // Rewinding every dataset to the first point cuts the history the second
  // one is on.
  ASSERT_EQ(shop->Run(Spec(R"({"rewind_point_id": ")" + first.id + R"("})")), "COMPLETED");
  const json points = shop->Get("/rewind-points").Json()["rewind_points"];
  bool seen = false;
  for (const json& p : points) {
    if (p["rewind_point_id"] != second.id) continue;
    seen = true;
    EXPECT_EQ(p["on_history"], false) << p.dump();
  }
  EXPECT_TRUE(seen);
  ExpectRefused(*shop, ByPoint(second.id), "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
}

// --- the rewind_spec ---------------------------------------------------------------

TEST_F(RewindConformance, RewindSpec_TheReferenceBodyWithAPointRewindsTheDatasetAndEverythingDownstream) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const std::vector<std::string> raw = shop->Rows("main.shop.raw"), customers = shop->Rows("main.shop.customers");
  std::string id;
  ASSERT_EQ(shop->Run(ByPoint(point.id), &id), "COMPLETED");
  for (const char* table : {"main.shop.orders", "main.shop.revenue", "main.shop.big_orders", "main.shop.by_country"}) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, point.position.version)) << table;
  }
  // Upstream and unrelated datasets keep what they have.
  EXPECT_EQ(shop->Rows("main.shop.raw"), raw);
  EXPECT_EQ(shop->Rows("main.shop.customers"), customers);
  EXPECT_EQ(shop->GetUpdate(id)["rewind"], true);
}

TEST_F(RewindConformance, RewindSpec_TheReferenceBodyWithATimestampRewindsToTheLastCommitBeforeIt) {
  auto shop = MakeShop("shop");
  std::string between;
  const RewindPoint point = GoodThenBad(*shop, &between);
  const Http preview = shop->Post("/rewind-preview", Shop::RewindBody("rewind_timestamp", between, "main.shop.orders"));
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_EQ(preview.Json()["target"]["version"], point.position.version) << preview.body;
  ASSERT_EQ(shop->Run(Shop::RewindBody("rewind_timestamp", between, "main.shop.orders")), "COMPLETED");
  for (const char* table : {"main.shop.orders", "main.shop.revenue", "main.shop.big_orders", "main.shop.by_country"}) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, point.position.version)) << table;
  }
}

TEST_F(RewindConformance, RewindSpec_BothAPointAndATimestampAreRefusedAsMultipleTargets) {
  auto shop = MakeShop("shop");
  std::string between;
  const RewindPoint point = GoodThenBad(*shop, &between);
  ExpectRefused(*shop,
                Spec(R"({"rewind_point_id": ")" + point.id + R"(", "rewind_timestamp": ")" + between +
                     R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": true, "reset_checkpoints": true}],
                     "dry_run": false})"),
                "INVALID_REWIND_SPECIFICATION.MULTIPLE_REWIND_TARGETS");
}

TEST_F(RewindConformance, RewindSpec_NeitherAPointNorATimestampIsRefusedAsNoTarget) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  ExpectRefused(*shop,
                Spec(R"({"datasets": [{"identifier": "main.shop.orders", "cascade": true, "reset_checkpoints": true}],
                         "dry_run": false})"),
                "INVALID_REWIND_SPECIFICATION.NO_REWIND_TARGET");
}

TEST_F(RewindConformance, RewindSpec_RewindPointNotFoundIsRefused) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  ExpectRefused(*shop, ByPoint("00000000-0000-4000-8000-000000000000"),
                "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
}

TEST_F(RewindConformance, RewindSpec_AnEventThatIsNotARewindSummaryIsNotARewindPoint) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  const json events = shop->Get("/events?event_type=create_update&max_results=1").Json()["events"];
  ASSERT_EQ(events.size(), 1u);
  ExpectRefused(*shop, ByPoint(events[0]["id"]), "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
}

TEST_F(RewindConformance, RewindSpec_ATimestampNotInTheUtcFormatIsRefused) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  for (const char* timestamp : {"2026-09-29T08:36:55Z", "29.09.2026 08:36", "yesterday"}) {
    ExpectRefused(*shop, Shop::RewindBody("rewind_timestamp", timestamp, "main.shop.orders"),
                  "INVALID_REWIND_SPECIFICATION.INVALID_TIMESTAMP_FORMAT");
  }
}

TEST_F(RewindConformance, RewindSpec_ATimestampBeforeTheRetainedHistoryIsBeyondRetention) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  const StoreFingerprint before = shop->Fingerprint();
  const Http r =
      shop->Post("/updates", Shop::RewindBody("rewind_timestamp", "2001-01-01 00:00:00", "main.shop.orders"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.ErrorCode(), "INVALID_REWIND_SPECIFICATION.BEYOND_RETENTION") << r.body;
  // It names the oldest point one can go back to.
  EXPECT_NE(r.Json().value("message", "").find("oldest possible point"), std::string::npos) << r.body;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(RewindConformance, RewindSpec_ADatasetThePipelineDoesNotHaveIsRefused) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ExpectRefused(*shop, ByPoint(point.id, "catalog.schema.table"), "INVALID_REWIND_SPECIFICATION.DATASET_NOT_FOUND");
}

TEST_F(RewindConformance, RewindSpec_ADatasetIdentifierMustBeCatalogSchemaTable) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ExpectRefused(*shop, ByPoint(point.id, "orders"), "INVALID_PARAMETER_VALUE");
}

TEST_F(RewindConformance, RewindSpec_AMalformedSpecIsRefusedNamingTheField) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const StoreFingerprint before = shop->Fingerprint();
  const Http r =
      shop->Post("/updates", Spec(R"({"rewind_point_id": ")" + point.id +
                                  R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": "yes"}]})"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.ErrorCode(), "INVALID_PARAMETER_VALUE");
  EXPECT_NE(r.body.find("rewind_spec.datasets[0].cascade"), std::string::npos) << r.body;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(RewindConformance, RewindSpec_DatasetsOmittedRewindsEveryDatasetWithCascadeAndResetCheckpoints) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const std::string body = Spec(R"({"rewind_point_id": ")" + point.id + R"("})");
  const Http preview = shop->Post("/rewind-preview", body);
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_EQ(preview.Json()["whole_pipeline"], true) << preview.body;
  std::vector<std::string> named;
  for (const json& d : preview.Field("datasets")) {
    named.push_back(d["identifier"]);
    EXPECT_EQ(d["cascade"], true) << d.dump();
    EXPECT_EQ(d["reset_checkpoints"], true) << d.dump();
  }
  std::sort(named.begin(), named.end());
  std::vector<std::string> all = ShopTables();
  std::sort(all.begin(), all.end());
  EXPECT_EQ(named, all);
  ASSERT_EQ(shop->Run(body), "COMPLETED");
  for (const std::string& table : ShopTables()) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, point.position.version)) << table;
  }
  for (const RewindPointDataset& d : point.datasets) {
    for (const auto& [flow, checkpoint] : d.checkpoints) EXPECT_EQ(shop->Checkpoint(flow), checkpoint) << flow;
  }
}

TEST_F(RewindConformance, RewindSpec_CascadeRewindsEveryDatasetDownstreamInThePipeline) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const Http preview = shop->Post("/rewind-preview", ByPoint(point.id, "main.shop.raw"));
  ASSERT_EQ(preview.status, 200) << preview.body;
  std::vector<std::string> named;
  for (const json& d : preview.Field("datasets")) named.push_back(d["identifier"]);
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::string>{"main.shop.big_orders", "main.shop.by_country", "main.shop.orders",
                                             "main.shop.raw", "main.shop.revenue"}));
  const std::vector<std::string> customers = shop->Rows("main.shop.customers");
  ASSERT_EQ(shop->Run(ByPoint(point.id, "main.shop.raw")), "COMPLETED");
  for (const std::string& table : named)
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, point.position.version)) << table;
  EXPECT_EQ(shop->Rows("main.shop.customers"), customers);  // not downstream of raw
}

TEST_F(RewindConformance, RewindSpec_WithoutCascadeOnlyTheNamedDatasetIsRewound) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const std::vector<std::string> revenue = shop->Rows("main.shop.revenue"), big = shop->Rows("main.shop.big_orders");
  ASSERT_EQ(
      shop->Run(
          Spec(R"({"rewind_point_id": ")" + point.id +
               R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": false, "reset_checkpoints": true}]})")),
      "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.orders"), shop->RowsAt("main.shop.orders", point.position.version));
  EXPECT_EQ(shop->Rows("main.shop.revenue"), revenue);
  EXPECT_EQ(shop->Rows("main.shop.big_orders"), big);
}

TEST_F(RewindConformance, RewindSpec_ResetCheckpointsDefaultsToTrue) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const std::string body = Spec(R"({"rewind_point_id": ")" + point.id +
                                R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": true}]})");
  const Http preview = shop->Post("/rewind-preview", body);
  ASSERT_EQ(preview.status, 200) << preview.body;
  for (const json& d : preview.Field("datasets")) EXPECT_EQ(d["reset_checkpoints"], true) << d.dump();
  ASSERT_EQ(shop->Run(body), "COMPLETED");
  // The clean flow's offsets went back with orders: it reads raw from the point again.
  for (const RewindPointDataset& d : point.datasets) {
    if (d.identifier != "main.shop.orders") continue;
    for (const auto& [flow, checkpoint] : d.checkpoints) EXPECT_EQ(shop->Checkpoint(flow), checkpoint) << flow;
  }
}

TEST_F(RewindConformance, RewindSpec_DryRunDefaultsToFalse) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const std::vector<std::string> bad = shop->Rows("main.shop.orders");
  ASSERT_EQ(shop->Run(Spec(
                R"({"rewind_point_id": ")" + point.id +
                R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": true, "reset_checkpoints": true}]})")),
            "COMPLETED");
  EXPECT_NE(shop->Rows("main.shop.orders"), bad);
  EXPECT_EQ(shop->Rows("main.shop.orders"), shop->RowsAt("main.shop.orders", point.position.version));
}

TEST_F(RewindConformance,
       RewindSpec_WithoutResettingCheckpointsADatasetNoStreamingFlowReadsGetsItsDataBackAndNothingIsReprocessed) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const std::vector<std::string> then = shop->RowsAt("main.shop.revenue", point.position.version);
  ASSERT_EQ(
      shop->Run(Spec(
          R"({"rewind_point_id": ")" + point.id +
          R"(", "datasets": [{"identifier": "main.shop.revenue", "cascade": true, "reset_checkpoints": false}]})")),
      "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.revenue"), then);
  // Its flow goes on from where it was: what it read after the point is
  // not read again.
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.revenue"), then);
}

TEST_F(RewindConformance, RewindSpec_NotResettingTheCheckpointsOfADatasetReadFromATopicIsRefused) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ExpectRefused(
      *shop,
      Spec(R"({"rewind_point_id": ")" + point.id +
           R"(", "datasets": [{"identifier": "main.shop.raw", "cascade": true, "reset_checkpoints": false}]})"),
      "INVALID_REWIND_SPECIFICATION.EXTERNAL_SOURCE_REQUIRES_CHECKPOINT_RESET");
}

TEST_F(RewindConformance, RewindSpec_NotResettingTheCheckpointsOfADatasetReadFromFilesIsRefused) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ExpectRefused(
      *shop,
      Spec(R"({"rewind_point_id": ")" + point.id +
           R"(", "datasets": [{"identifier": "main.shop.customers", "cascade": true, "reset_checkpoints": false}]})"),
      "INVALID_REWIND_SPECIFICATION.EXTERNAL_SOURCE_REQUIRES_CHECKPOINT_RESET");
}

TEST_F(RewindConformance, RewindSpec_ATableAndItsUpstreamMustAgreeOnResettingCheckpoints) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ExpectRefused(
      *shop,
      Spec(R"({"rewind_point_id": ")" + point.id +
           R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": false, "reset_checkpoints": false},
                                         {"identifier": "main.shop.revenue", "cascade": false, "reset_checkpoints": true}]})"),
      "INVALID_REWIND_SPECIFICATION.INCONSISTENT_UPSTREAM_CHECKPOINT_RESET");
}

TEST_F(RewindConformance, RewindSpec_DatasetsACascadeReachesTakeTheSettingOfTheDatasetNamed) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const Http preview = shop->Post(
      "/rewind-preview",
      Spec(R"({"rewind_point_id": ")" + point.id +
           R"(", "datasets": [{"identifier": "main.shop.orders", "cascade": true, "reset_checkpoints": false}]})"));
  ASSERT_EQ(preview.status, 200) << preview.body;
  ASSERT_EQ(preview.Json()["datasets"].size(), 4u) << preview.body;
  for (const json& d : preview.Field("datasets")) EXPECT_EQ(d["reset_checkpoints"], false) << d.dump();
}

TEST_F(RewindConformance, RewindSpec_ARewindWhoseSourceNoLongerHoldsTheOffsetsToReplayIsRefused) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint point = shop->RecordPeriodicPoint();
  shop->ProducePadded(11, 1500);  // more than a topic segment
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(1511, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_GT(shop->ExpireTopicRecords(), 10u);  // the offsets after the point are gone
  ExpectRefused(*shop, ByPoint(point.id, "main.shop.raw"), "INVALID_REWIND_SPECIFICATION.SOURCE_RETENTION_EXCEEDED");
}

// --- dry runs ------------------------------------------------------------------------

TEST_F(RewindConformance, DryRun_ValidatesEndsCompletedAndChangesNoTable) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const StoreFingerprint before = shop->Fingerprint();
  std::string id;
  ASSERT_EQ(shop->Run(Shop::RewindBody("rewind_point_id", point.id, "main.shop.orders", /*dry_run=*/true), &id),
            "COMPLETED");
  EXPECT_DATA_UNCHANGED(*shop, before);
  EXPECT_EQ(shop->GetUpdate(id)["dry_run"], true);
}

TEST_F(RewindConformance, DryRun_RecordsARewindPointAndChangesNoTable) {
  auto shop = MakeShop("shop");
  std::string between;
  const RewindPoint point = GoodThenBad(*shop, &between);
  const StoreFingerprint before = shop->Fingerprint();
  ASSERT_EQ(shop->Run(Shop::RewindBody("rewind_timestamp", between, "main.shop.orders", /*dry_run=*/true)),
            "COMPLETED");
  EXPECT_DATA_UNCHANGED(*shop, before);
  json validated;
  for (const json& p : shop->Get("/rewind-points").Field("rewind_points")) {
    if (p["dry_run"] == true) {
      EXPECT_TRUE(validated.is_null()) << "a second dry-run point: " << p.dump();
      validated = p;
    }
  }
  ASSERT_FALSE(validated.is_null());
  EXPECT_EQ(validated["version"], point.position.version);  // the state it validated
  // It is a rewind_summary event like any other point.
  bool event = false;
  for (const json& e : shop->Get("/events?event_type=rewind_summary").Field("events")) {
    if (e["id"] != validated["rewind_point_id"]) continue;
    event = true;
    EXPECT_EQ(e["details"]["rewind_summary"]["dry_run"], true) << e.dump();
  }
  EXPECT_TRUE(event);
}

TEST_F(RewindConformance, DryRun_ItsRecordedPointIdCanBeUsedAsTheRewindPointId) {
  auto shop = MakeShop("shop");
  std::string between;
  const RewindPoint periodic = GoodThenBad(*shop, &between);
  ASSERT_EQ(shop->Run(Shop::RewindBody("rewind_timestamp", between, "main.shop.orders", /*dry_run=*/true)),
            "COMPLETED");
  json validated;
  for (const json& p : shop->Get("/rewind-points").Field("rewind_points")) {
    if (p["dry_run"] == true) validated = p;
  }
  ASSERT_FALSE(validated.is_null());
  ASSERT_EQ(shop->Run(ByPoint(validated["rewind_point_id"])), "COMPLETED");
  for (const char* table : {"main.shop.orders", "main.shop.revenue", "main.shop.big_orders", "main.shop.by_country"}) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, periodic.position.version)) << table;
  }
}

TEST_F(RewindConformance, DryRun_ThatIsRefusedChangesNothing) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  ExpectRefused(*shop, Shop::RewindBody("rewind_point_id", "no-such-point", "main.shop.orders", /*dry_run=*/true),
                "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
}

TEST_F(RewindConformance, DryRun_ThatFailsDoesNotBlockLaterUpdates) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  const Http r = shop->Post("/updates", Shop::RewindBody("rewind_point_id", "no-such-point", "main.shop.orders", true));
  ASSERT_EQ(r.status, 400) << r.body;
  shop->Produce(21, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 25u);
}

// --- what a rewind does, and replay -----------------------------------------------------

TEST_F(RewindConformance, Rewind_DoesNotRunThePipeline) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  shop->Produce(21, 5);  // waiting in the topic
  std::string id;
  ASSERT_EQ(shop->Run(Spec(R"({"rewind_point_id": ")" + point.id + R"("})"), &id), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 10u);  // as at the point; nothing read
  EventQuery query;
  query.update_id = id;
  std::vector<Event> events;
  ASSERT_TRUE(shop->store()->events()->Query(query, &events).ok());
  for (const Event& e : events) EXPECT_NE(e.event_type, "flow_progress") << e.message;
}

TEST_F(RewindConformance, Rewind_ReplayIsTheNextPlainUpdateAndEqualsARunThatNeverHadTheBadData) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_NE(DifferingTables(*shop, *reference), "");
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(R"({"cause": "USER_ACTION"})"), "COMPLETED");  // the replay: a body without rewind_spec
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_OfTheWholePipelineThenReplayEqualsARunThatNeverHadTheBadData) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_EQ(shop->Run(Spec(R"({"rewind_point_id": ")" + point.id + R"("})")), "COMPLETED");
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_ByTimestampThenReplayEqualsARunThatNeverHadTheBadData) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  std::string between;
  GoodThenBad(*shop, &between);
  ASSERT_EQ(shop->Run(Shop::RewindBody("rewind_timestamp", between, "main.shop.raw")), "COMPLETED");
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_ReplayCatchesUpWithWhatArrivedSinceAndGoesOnIncrementally) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  DeployFix(*shop);
  shop->Produce(21, 5);
  reference->Produce(21, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(reference->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
  shop->Produce(26, 3);
  reference->Produce(26, 3);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(reference->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_RestoresSourceOffsetsWithTheTableData) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_EQ(shop->Run(ByPoint(point.id, "main.shop.raw")), "COMPLETED");
  size_t compared = 0;
  for (const RewindPointDataset& d : point.datasets) {
    if (d.identifier == "main.shop.customers") continue;  // not downstream of raw
    for (const auto& [flow, checkpoint] : d.checkpoints) {
      EXPECT_EQ(shop->Checkpoint(flow), checkpoint) << flow;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 5u);
}

TEST_F(RewindConformance, Rewind_LeavesTheDataBeforeThePointUntouched) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  std::map<std::string, std::vector<std::string>> then;
  std::map<std::string, std::vector<std::string>> history_then;
  for (const std::string& table : ShopTables()) {
    then[table] = shop->RowsAt(table, point.position.version);
    for (const HistoryEntry& h : shop->History(table)) {
      if (h.version <= point.position.version)
        history_then[table].push_back(std::to_string(h.version) + " " + h.operation);
    }
  }
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  for (const std::string& table : ShopTables()) {
    EXPECT_EQ(shop->RowsAt(table, point.position.version), then[table]) << table;
    std::vector<std::string> history_now;
    for (const HistoryEntry& h : shop->History(table)) {
      if (h.version <= point.position.version) history_now.push_back(std::to_string(h.version) + " " + h.operation);
    }
    EXPECT_EQ(history_now, history_then[table]) << table;
  }
}

// Versions are never used twice: the rewind is a RESTORE commit in each
// rewound table's history (its target version and update id, as the
// documents' "scan from the latest RESTORE commit" assumes), the replay
// takes new versions, and a version cut by the rewind still reads what it
// read before (from the archive).
TEST_F(RewindConformance, Rewind_NeverReusesAVersionNumberAndShowsInEachTablesHistory) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const uint64_t newest = shop->Newest();
  std::map<std::string, std::vector<std::string>> cut_rows;
  for (const std::string& table : ShopTables()) cut_rows[table] = shop->RowsAt(table, newest);
  std::string rewind;
  ASSERT_EQ(shop->Run(R"({"rewind_spec": {"rewind_point_id": ")" + point.id + R"("}})", &rewind), "COMPLETED");
  for (const std::string& table : ShopTables()) {
    const std::vector<HistoryEntry> history = shop->History(table);
    ASSERT_FALSE(history.empty()) << table;
    const HistoryEntry& restore = history.front();
    EXPECT_EQ(restore.operation, "RESTORE") << table;
    EXPECT_GT(restore.version, newest) << table;
    EXPECT_EQ(restore.update_id, rewind) << table;
    const json parameters = json::parse(restore.parameters_json);
    EXPECT_EQ(parameters["version"], point.position.version) << table;
    EXPECT_TRUE(parameters.contains("rewind")) << table << ": the log was cut, its versions archived";
    EXPECT_EQ(shop->RowsAt(table, newest), cut_rows[table]) << table << ": version " << newest << " names other rows";
  }
  DeployFix(*shop);
  std::string replay;
  ASSERT_EQ(shop->Run("{}", &replay), "COMPLETED");
  EXPECT_GT(shop->Newest(), newest);
  for (const std::string& table : ShopTables()) {
    for (const HistoryEntry& h : shop->History(table)) {
      if (h.update_id == replay) {
        EXPECT_GT(h.version, newest) << table << " reuses version " << h.version;
      }
    }
    EXPECT_EQ(shop->RowsAt(table, newest), cut_rows[table]) << table;
  }
}

// A change-feed reader that had read up to a version the rewind cut gets
// the net change at the rewind's commit: applying the feed incrementally,
// it ends equal to the table.
TEST_F(RewindConformance, Rewind_AChangeFeedReaderOfCutVersionsStaysEqualToTheTable) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const uint64_t seen = shop->Newest();
  TableId revenue;
  ASSERT_TRUE(TableId::Parse("main.shop.revenue", &revenue).ok());
  std::multiset<std::string> mirror;  // the rows, as the feed gives them
  auto follow = [&](uint64_t from) {
    const Status s = shop->store()->Changes(revenue, from, 0, [&](const ChangeRow& c) {
      const std::string row = RowText(c.row);
      if (c.change_type == ChangeType::kInsert || c.change_type == ChangeType::kUpdatePostimage) {
        mirror.insert(row);
        return true;
      }
      // A pre-image or a delete names a row the reader holds.
      auto it = mirror.find(row);
      EXPECT_NE(it, mirror.end()) << row << " at version " << c.commit_version;
      if (it != mirror.end()) mirror.erase(it);
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
  };
  auto table = [&] {
    const std::vector<std::string> rows = shop->Rows("main.shop.revenue");
    return std::multiset<std::string>(rows.begin(), rows.end());
  };
  follow(1);
  ASSERT_EQ(mirror, table());
  ASSERT_EQ(shop->Run(R"({"rewind_spec": {"rewind_point_id": ")" + point.id + R"("}})"), "COMPLETED");
  DeployFix(*shop);
  ASSERT_EQ(shop->Run("{}"), "COMPLETED");
  follow(seen + 1);  // what the reader had not read yet, from a version the rewind cut
  EXPECT_EQ(mirror, table());
  EXPECT_FALSE(mirror.empty());
}

TEST_F(RewindConformance, Rewind_AgainToTheSamePointConverges) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  std::map<std::string, std::vector<std::string>> once;
  for (const std::string& table : ShopTables()) once[table] = shop->Rows(table);
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  for (const std::string& table : ShopTables()) EXPECT_EQ(shop->Rows(table), once[table]) << table;
}

TEST_F(RewindConformance, Rewind_EachRewindReplacesTheLastSoAnEarlierPointCanBeChosenAfterALaterOne) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint early = GoodThenBad(*shop);
  const RewindPoint late = shop->RecordPeriodicPoint();  // after the bad data: too late
  ASSERT_EQ(shop->Run(ByPoint(late.id)), "COMPLETED");
  ASSERT_EQ(shop->Run(ByPoint(early.id)), "COMPLETED");
  for (const char* table : {"main.shop.orders", "main.shop.revenue"}) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, early.position.version)) << table;
  }
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_AfterARefusedReplayRewindingAgainRecovers) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  // A fix that is not one: its aggregate no longer fits revenue's state.
  ShopSpecOptions wrong = shop->spec_options();
  wrong.amount_expr = "amount";
  wrong.revenue_group_by = {"country", "id"};
  shop->Deploy(wrong);
  const Http refused = shop->Post("/updates", "{}");  // refused before it starts: nothing to recover from
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("main.shop.revenue"), std::string::npos) << refused.body;
  ShopSpecOptions fixed = wrong;
  fixed.revenue_group_by = {"country"};
  shop->Deploy(fixed);
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_StackedRewindAndReplayCyclesDuplicateNothing) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  for (int cycle = 0; cycle < 3; ++cycle) {
    ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED") << cycle;
    ASSERT_EQ(shop->Run(), "COMPLETED") << cycle;
  }
  ASSERT_EQ(shop->Run(ByPoint(point.id)), "COMPLETED");
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_IsAnUpdateWithItsCauseAndStateInTheUpdatesList) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  std::string id;
  ASSERT_EQ(shop->Run(ByPoint(point.id), &id), "COMPLETED");
  const json update = shop->GetUpdate(id);
  EXPECT_EQ(update["cause"], "USER_ACTION");
  EXPECT_EQ(update["rewind"], true);
  EXPECT_EQ(update["dry_run"], false);
  const json list = shop->Get("/updates").Json()["updates"];
  ASSERT_GE(list.size(), 1u);
  EXPECT_EQ(list[0]["update_id"], id);
  EXPECT_EQ(list[0]["state"], "COMPLETED");
}

TEST_F(RewindConformance, Rewind_IsRecordedInTheEventLogFromStartToCompletion) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  std::string id;
  ASSERT_EQ(shop->Run(ByPoint(point.id), &id), "COMPLETED");
  const json started = shop->Get("/events?event_type=rewind_started").Json()["events"];
  const json completed = shop->Get("/events?event_type=rewind_completed").Json()["events"];
  ASSERT_EQ(started.size(), 1u);
  ASSERT_EQ(completed.size(), 1u);
  EXPECT_EQ(started[0]["origin"]["update_id"], id);
  EXPECT_EQ(completed[0]["origin"]["update_id"], id);
  EXPECT_LT(started[0]["sequence"].get<uint64_t>(), completed[0]["sequence"].get<uint64_t>());
  EXPECT_EQ(completed[0]["details"]["rewind"]["rewind_point_id"], point.id);
}

TEST_F(RewindConformance, Rewind_DoesNotBringBackThePipelinesCode) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(Spec(R"({"rewind_point_id": ")" + point.id + R"("})")), "COMPLETED");
  PipelineSpec recorded;
  ASSERT_TRUE(GetPipelineDefinition(shop->store(), &recorded).ok());
  EXPECT_EQ(PipelineSpecToJson(recorded), PipelineSpecToJson(shop->pipeline()->spec()));
  ASSERT_EQ(shop->Run(), "COMPLETED");  // the replay runs the fix, not the code of the point's time
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

TEST_F(RewindConformance, Rewind_KeepsThePipelinesConfiguration) {
  ShopSpecOptions options;
  options.configuration["pipelines.rewindPoints.interval"] = "15m";
  auto shop = MakeShop("shop", options);
  const RewindPoint point = GoodThenBad(*shop);
  ASSERT_EQ(shop->Run(Spec(R"({"rewind_point_id": ")" + point.id + R"("})")), "COMPLETED");
  PipelineSpec recorded;
  ASSERT_TRUE(GetPipelineDefinition(shop->store(), &recorded).ok());
  EXPECT_EQ(recorded.configuration.at("pipelines.rewindPoints.interval"), "15m");
}

TEST_F(RewindConformance, RewindPreview_ShowsThePointAndTheDatasetsItWouldRewindAndChangesNothing) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop);
  const StoreFingerprint before = shop->Fingerprint();
  const Http r = shop->Post("/rewind-preview", ByPoint(point.id, "main.shop.orders"));
  ASSERT_EQ(r.status, 200) << r.body;
  const json preview = r.Json();
  EXPECT_EQ(preview["rewind_point_id"], point.id);
  EXPECT_EQ(preview["target"]["version"], point.position.version);
  EXPECT_EQ(preview["whole_pipeline"], false);
  EXPECT_EQ(preview["datasets"].size(), 4u);
  EXPECT_GT(preview["versions_after_target"].get<uint64_t>(), 0u);
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(RewindConformance, RewindPreview_OfARewindThatWouldBeRefusedIsRefusedWithItsCode) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  const StoreFingerprint before = shop->Fingerprint();
  const Http r = shop->Post("/rewind-preview", ByPoint("00000000-0000-4000-8000-000000000000"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.ErrorCode(), "INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND");
  EXPECT_UNCHANGED(*shop, before);
}

// --- incomplete rewinds ------------------------------------------------------------------

class IncompleteRewindConformance : public ConformanceTest {
 protected:
  void SetUp() override {
    shop_ = MakeShop("shop");
    point_ = GoodThenBad(*shop_);
    shop_->LeaveIncompleteRewind(point_.position.version);
  }
  // `body` is refused with 409 INVALID_STATE, saying how to recover, and
  // changes nothing.
  void ExpectBlocked(const std::string& body) {
    const StoreFingerprint before = shop_->Fingerprint();
    const Http r = shop_->Post("/updates", body);
    EXPECT_EQ(r.status, 409) << body << " -> " << r.body;
    EXPECT_EQ(r.ErrorCode(), "INVALID_STATE") << r.body;
    EXPECT_NE(r.body.find("rewind again"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("pipelines.allowUpdateAfterIncompleteRewind"), std::string::npos) << r.body;
    shop_->service()->WaitIdle();
    EXPECT_UNCHANGED(*shop_, before);
  }

  std::unique_ptr<Shop> shop_;
  RewindPoint point_;
};

TEST_F(IncompleteRewindConformance, IncompleteRewind_BlocksAnUpdate) {
  shop_->Produce(21, 5);
  ExpectBlocked("{}");
}

TEST_F(IncompleteRewindConformance, IncompleteRewind_BlocksAFullRefresh) { ExpectBlocked(R"({"full_refresh": true})"); }

TEST_F(IncompleteRewindConformance, IncompleteRewind_BlocksARefreshOfSelectedTables) {
  ExpectBlocked(R"({"refresh_selection": ["main.shop.raw"]})");
  ExpectBlocked(R"({"full_refresh_selection": ["main.shop.customers"]})");
}

TEST_F(IncompleteRewindConformance, IncompleteRewind_BlocksACheckpointReset) {
  ExpectBlocked(R"({"reset_checkpoint_selection": ["main.shop.revenue"]})");
}

TEST_F(IncompleteRewindConformance, IncompleteRewind_RewindingAgainToTheSamePointCompletesItAndUpdatesRunAgain) {
  ASSERT_EQ(shop_->Run(Spec(R"({"rewind_point_id": ")" + point_.id + R"("})")), "COMPLETED");
  for (const std::string& table : ShopTables()) {
    EXPECT_EQ(shop_->Rows(table), shop_->RowsAt(table, point_.position.version)) << table;
  }
  shop_->Produce(21, 5);
  ASSERT_EQ(shop_->Run(), "COMPLETED");
  EXPECT_EQ(shop_->Rows("main.shop.raw").size(), 25u);
}

TEST_F(IncompleteRewindConformance, IncompleteRewind_RewindingToAnotherPointCompletesIt) {
  const RewindPoint other = shop_->RecordPeriodicPoint();
  ASSERT_EQ(shop_->Run(ByPoint(other.id)), "COMPLETED");
  ASSERT_EQ(shop_->Run(), "COMPLETED");
}

TEST_F(IncompleteRewindConformance, IncompleteRewind_AllowUpdateAfterIncompleteRewindLetsUpdatesRun) {
  ShopSpecOptions options = shop_->spec_options();
  options.configuration["pipelines.allowUpdateAfterIncompleteRewind"] = "true";
  shop_->Deploy(options);
  shop_->Produce(21, 5);
  ASSERT_EQ(shop_->Run(), "COMPLETED");
  EXPECT_EQ(shop_->Rows("main.shop.raw").size(), 25u);
  ASSERT_EQ(shop_->Run(R"({"full_refresh": true})"), "COMPLETED");
}

TEST_F(IncompleteRewindConformance, IncompleteRewind_ADryRunIsStillAccepted) {
  ASSERT_EQ(shop_->Run(Shop::RewindBody("rewind_point_id", point_.id, "main.shop.orders", /*dry_run=*/true)),
            "COMPLETED");
  ExpectBlocked("{}");  // a dry run changes nothing: the rewind is still incomplete
}

}  // namespace
}  // namespace spool::conformance
