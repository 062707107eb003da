// The behaviours of the reference documents that are the command line's:
// updates a person starts (which record the periodic rewind points and
// fail fast), the rewind points and events listed, the reference body given
// as a file, the UI's shortcuts (the latest point, yesterday's), the replay
// as a plain update, and refreshing the failed tables. The store is served
// over HTTP between the commands and closed while one runs (a store has one
// process at a time).
#include <filesystem>
#include <fstream>

#include "conformance.h"

namespace spool::conformance {
namespace {

using CliConformance = ConformanceTest;

const char kBadCustomers[] = R"({"customer_id": "one", "name": "ada", "seq": 1})"
                             "\n";

TEST_F(CliConformance, Cli_AnUpdateRecordsAPeriodicRewindPointWithTheDocumentedMessage) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  const CliResult update = RunCliOn(*shop, {"update", "DIR"});
  ASSERT_EQ(update.exit_code, 0) << update.output;
  const json points = shop->Get("/rewind-points").Json()["rewind_points"];
  ASSERT_GE(points.size(), 1u) << points.dump();
  EXPECT_EQ(points[0]["message"], kPeriodicMessage);
  EXPECT_LE(points[0]["version"].get<uint64_t>(), shop->Newest());
  const CliResult listed = RunCliOn(*shop, {"rewind-points", "DIR"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find(points[0]["rewind_point_id"].get<std::string>()), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find(kPeriodicMessage), std::string::npos) << listed.output;
}

TEST_F(CliConformance, Cli_RewindPointsOfTheLastSevenDaysAreListedAsJson) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const RewindPoint point = shop->RecordPeriodicPoint();
  const CliResult listed = RunCliOn(*shop, {"rewind-points", "DIR", "--since", "7d", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const json points = json::parse(listed.output, nullptr, false);
  ASSERT_TRUE(points.is_array()) << listed.output;
  bool found = false;
  for (const json& p : points) found = found || p["rewind_point_id"] == point.id;
  EXPECT_TRUE(found) << listed.output;
}

TEST_F(CliConformance, Cli_TheReferenceBodyGivenAsAFileRewinds) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop, nullptr, 0);
  const std::string file = dir_.Sub("rewind.json");
  std::ofstream(file) << Shop::RewindBody("rewind_point_id", point.id, "main.shop.orders");
  const CliResult r = RunCliOn(*shop, {"update", "DIR", "--json", "@" + file});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rewound main.shop.orders"), std::string::npos) << r.output;
  for (const char* table : {"main.shop.orders", "main.shop.revenue", "main.shop.big_orders", "main.shop.by_country"}) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, point.position.version)) << table;
  }
}

TEST_F(CliConformance, Cli_AfterARewindAPlainUpdateReplays) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop, nullptr, 0);
  ASSERT_EQ(shop->Run(Shop::RewindBody("rewind_point_id", point.id, "main.shop.orders")), "COMPLETED");
  DeployFix(*shop);
  const CliResult r = RunCliOn(*shop, {"update", "DIR"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
}

// `spool read --version` of a version a rewind cut reads what it read
// before the rewind, from the archive: a version names one thing forever.
TEST_F(CliConformance, Cli_AVersionARewindCutStillReadsAsItDidBefore) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop, nullptr, 0);
  const std::string cut = std::to_string(shop->Newest());
  const CliResult before = RunCliOn(*shop, {"read", "DIR", "main.shop.revenue", "--version", cut, "--format", "json"});
  ASSERT_EQ(before.exit_code, 0) << before.output;
  ASSERT_EQ(shop->Run(R"({"rewind_spec": {"rewind_point_id": ")" + point.id + R"("}})"), "COMPLETED");
  DeployFix(*shop);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const CliResult after = RunCliOn(*shop, {"read", "DIR", "main.shop.revenue", "--version", cut, "--format", "json"});
  ASSERT_EQ(after.exit_code, 0) << after.output;
  EXPECT_EQ(after.output, before.output);
  EXPECT_NE(after.output, RunCliOn(*shop, {"read", "DIR", "main.shop.revenue", "--format", "json"}).output);
}

TEST_F(CliConformance, Cli_RewindingToTheLatestPointIsAShortcut) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop, nullptr, 0);
  const CliResult r = RunCliOn(*shop, {"rewind", "DIR", "--latest"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string& table : ShopTables()) {
    EXPECT_EQ(shop->Rows(table), shop->RowsAt(table, point.position.version)) << table;
  }
}

TEST_F(CliConformance, Cli_RewindingToYesterdayIsRefusedWithoutAPointADayOldAndChangesNothing) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop, nullptr, 0);
  const StoreFingerprint before = shop->Fingerprint();
  const CliResult r = RunCliOn(*shop, {"rewind", "DIR", "--yesterday"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no rewind point"), std::string::npos) << r.output;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(CliConformance, Cli_ARefusedRewindNamesItsCodeAndChangesNothing) {
  auto shop = MakeShop("shop");
  GoodThenBad(*shop, nullptr, 0);
  const StoreFingerprint before = shop->Fingerprint();
  const CliResult r = RunCliOn(*shop, {"update", "DIR", "--rewind-point", "00000000-0000-4000-8000-000000000000"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("INVALID_REWIND_SPECIFICATION.REWIND_POINT_NOT_FOUND"), std::string::npos) << r.output;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(CliConformance, Cli_ADryRunSaysWhichRewindPointRecordsWhatItValidated) {
  auto shop = MakeShop("shop");
  const RewindPoint point = GoodThenBad(*shop, nullptr, 0);
  const StoreFingerprint before = shop->Fingerprint();
  const CliResult r = RunCliOn(*shop, {"update", "DIR", "--rewind-point", point.id, "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_DATA_UNCHANGED(*shop, before);
  bool named = false;
  for (const json& p : shop->Get("/rewind-points").Field("rewind_points")) {
    if (p["dry_run"] == true) named = r.output.find(p["rewind_point_id"].get<std::string>()) != std::string::npos;
  }
  EXPECT_TRUE(named) << r.output;
}

TEST_F(CliConformance, Cli_TheEventLogIsListedByType) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->RecordPeriodicPoint();
  const CliResult r = RunCliOn(*shop, {"events", "DIR", "--type", "rewind_summary"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(kPeriodicMessage), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("create_update"), std::string::npos) << r.output;
}

TEST_F(CliConformance, Cli_AnUpdateAPersonStartsFailsFastWithoutRetrying) {
  auto shop = MakeShop("shop");
  // A "file" the source cannot read: an I/O error, which a retry might not
  // meet again.
  std::filesystem::create_directories(shop->customers_dir() + "/c0.jsonl");
  const CliResult r = RunCliOn(*shop, {"update", "DIR"});
  EXPECT_EQ(r.exit_code, 3) << r.output;  // the update ran and FAILED: not "corruption found" (1)
  EXPECT_EQ(shop->Events("update_retry").size(), 0u);
  const json updates = shop->Get("/updates").Json()["updates"];
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0]["state"], "FAILED");
  EXPECT_EQ(updates[0]["cause"], "USER_ACTION");
}

TEST_F(CliConformance, Cli_RefreshingTheFailedTablesRunsOnlyThemAndWhatIsDownstreamOfThem) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kBadCustomers);
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "FAILED");  // customers failed; the orders went through
  std::filesystem::remove(shop->customers_dir() + "/c1.jsonl");
  shop->AddCustomers("c1.jsonl", R"({"customer_id": 1, "name": "ada", "seq": 1})"
                                 "\n");
  shop->Produce(6, 5);  // waits: its flows did not fail
  const CliResult r = RunCliOn(*shop, {"update", "DIR", "--refresh-failed"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(shop->Rows("main.shop.customers").size(), 1u);
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 5u);
}

TEST_F(CliConformance, Cli_RefreshingTheFailedTablesIsRefusedWhenNoneFailed) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(6, 5);
  const StoreFingerprint before = shop->Fingerprint();
  const CliResult r = RunCliOn(*shop, {"update", "DIR", "--refresh-failed"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no flow failed"), std::string::npos) << r.output;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(CliConformance, Cli_ADefinitionWithAnUnknownColumnIsRefusedNamingItsPlaceAndRecordsNothing) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  json spec = json::parse(ShopSpec(shop->topic_dir(), shop->customers_dir(), ShopSpecOptions{}));
  spec["flows"][3]["steps"][0]["filter"] = "amout >= 15";
  const std::string file = dir_.Sub("spec.json");
  std::ofstream(file) << spec.dump();
  const StoreFingerprint before = shop->Fingerprint();
  const CliResult r = RunCliOn(*shop, {"pipeline", "set", "DIR", file});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("big_orders_flow"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unknown column 'amout'"), std::string::npos) << r.output;
  EXPECT_UNCHANGED(*shop, before);
}

TEST_F(CliConformance, Cli_ADefinitionReadingATableThatDoesNotExistIsRefusedAndRecordsNothing) {
  auto shop = MakeShop("shop");
  json spec = json::parse(ShopSpec(shop->topic_dir(), shop->customers_dir(), ShopSpecOptions{}));
  spec["flows"][3]["source"]["dataset"] = "main.shop.missing";
  const std::string file = dir_.Sub("spec.json");
  std::ofstream(file) << spec.dump();
  const StoreFingerprint before = shop->Fingerprint();
  const CliResult r = RunCliOn(*shop, {"pipeline", "set", "DIR", file});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("main.shop.missing"), std::string::npos) << r.output;
  EXPECT_UNCHANGED(*shop, before);
}

}  // namespace
}  // namespace spool::conformance
