// Refresh semantics, as the reference documents describe them, through the
// HTTP API with their request bodies: the default refresh of streaming
// tables and materialized views, full refresh (of everything, or of
// selected tables), what a full refresh loses when a source no longer holds
// its records, checkpoint resets of selected flows (by their names), refresh
// selections, validation, and the changes that need a full refresh.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "conformance.h"

namespace spool::conformance {
namespace {

using RefreshConformance = ConformanceTest;

const char kCustomersC1[] = R"({"customer_id": 1, "name": "ada", "seq": 1})"
                            "\n"
                            R"({"customer_id": 2, "name": "grace", "seq": 1})"
                            "\n";
const char kCustomersC2[] = R"({"customer_id": 2, "name": "grace hopper", "seq": 2})"
                            "\n"
                            R"({"customer_id": 3, "name": "edsger", "seq": 1})"
                            "\n";

// A request that must not be carried out: refused (400) or, if it was
// started, ended without completing; either way nothing at all changed (no
// table, history, checkpoint or event), and the answer says why.
void ExpectNotCarriedOut(Shop& shop, const std::string& body, const std::string& why) {
  const StoreFingerprint before = shop.Fingerprint();
  const Http r = shop.Post("/updates", body);
  std::string said = r.body;
  if (r.status == 200) {
    const std::string id = r.Json().value("update_id", "");
    shop.service()->WaitIdle();
    const json update = shop.GetUpdate(id);
    EXPECT_NE(update.value("state", ""), "COMPLETED") << update.dump();
    said = update.dump();
  } else {
    EXPECT_EQ(r.status, 400) << r.body;
  }
  EXPECT_NE(said.find(why), std::string::npos) << said;
  shop.service()->WaitIdle();
  EXPECT_UNCHANGED(shop, before);
}

std::map<std::string, double> AveragesByCountry(Shop& shop) {
  std::map<std::string, std::pair<double, int>> sums;
  for (const std::string& row : shop.Rows("main.shop.orders")) {
    const json r = json::parse(row);
    auto& [sum, n] = sums[r[1].get<std::string>()];
    sum += r[2].get<double>();
    ++n;
  }
  std::map<std::string, double> out;
  for (const auto& [country, s] : sums) out[country] = s.first / s.second;
  return out;
}

// --- the default refresh -------------------------------------------------------------

TEST_F(RefreshConformance, DefaultRefresh_EveryDatasetOfThePipelineIsRefreshed) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->Produce(1, 10);
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "COMPLETED");
  for (const std::string& table : ShopTables()) EXPECT_FALSE(shop->Rows(table).empty()) << table;
  for (const char* flow : {"ingest", "clean", "main.shop.revenue", "big_orders_flow", "by_country", "customers"}) {
    uint64_t batches = 0;
    shop->InputRows(id, flow, &batches);
    EXPECT_GT(batches, 0u) << flow;
  }
}

TEST_F(RefreshConformance, DefaultRefresh_AStreamingTableProcessesOnlyRecordsThatArrivedSinceTheLastUpdate) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 5);
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "ingest"), 5u);
  EXPECT_EQ(shop->InputRows(id, "clean"), 5u);
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 15u);
}

TEST_F(RefreshConformance, DefaultRefresh_AChangedDefinitionAppliesToNewRecordsOnlyNotToWhatWasWritten) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> written = shop->Rows("main.shop.orders");
  ShopSpecOptions doubled = shop->spec_options();
  doubled.amount_expr = "amount * 2";
  shop->Deploy(doubled);
  shop->Produce(11, 1);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  std::vector<std::string> now = shop->Rows("main.shop.orders");
  ASSERT_EQ(now.size(), 11u);
  for (const std::string& row : written) EXPECT_NE(std::find(now.begin(), now.end(), row), now.end()) << row;
  EXPECT_NE(std::find(now.begin(), now.end(), R"([11,"fr",42])"), now.end());
}

TEST_F(RefreshConformance, DefaultRefresh_AMaterializedViewReflectsTheCurrentResultOfItsQuery) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ShopSpecOptions doubled = shop->spec_options();
  doubled.amount_expr = "amount * 2";
  shop->Deploy(doubled);
  shop->Produce(11, 7);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::map<std::string, double> wanted = AveragesByCountry(*shop);
  const std::vector<std::string> view = shop->Rows("main.shop.by_country");
  ASSERT_EQ(view.size(), wanted.size());
  for (const std::string& row : view) {
    const json r = json::parse(row);
    EXPECT_NEAR(r[1].get<double>(), wanted.at(r[0].get<std::string>()), 1e-9) << row;
  }
}

TEST_F(RefreshConformance, MaterializedView_RefreshesIncrementallyWhenItsSourceOnlyGainedRows) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 3);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<HistoryEntry> history = shop->History("main.shop.by_country");
  ASSERT_FALSE(history.empty());
  EXPECT_EQ(history.front().operation, "MATERIALIZED VIEW REFRESH");
  EXPECT_NE(history.front().parameters_json.find("INCREMENTAL"), std::string::npos) << history.front().parameters_json;
}

TEST_F(RefreshConformance, MaterializedView_AFullRefreshGivesTheSameResultAsADefaultRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> by_default = shop->Rows("main.shop.by_country");
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.by_country"), by_default);
}

// --- full refresh ------------------------------------------------------------------------------

TEST_F(RefreshConformance, FullRefresh_TruncatesTheStreamingTablesAndRebuildsThemFromAllSourceRecords) {
  auto reference = RunWithoutTheBug(dir_);
  auto shop = MakeShop("shop");
  GoodThenBad(*shop);
  DeployFix(*shop);
  std::string id;
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})", &id), "COMPLETED");
  EXPECT_EQ(DifferingTables(*shop, *reference), "");
  bool truncated = false;
  for (const HistoryEntry& h : shop->History("main.shop.orders"))
    truncated = truncated || h.operation == "FULL REFRESH";
  EXPECT_TRUE(truncated);
  EXPECT_EQ(shop->InputRows(id, "ingest"), 20u);  // every record the topic holds, again
}

TEST_F(RefreshConformance, FullRefresh_ClearsTheFlowsCheckpointsBeforeReprocessing) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  std::string id;
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})", &id), "COMPLETED");
  // One commit clears every flow's checkpoint and truncates its tables,
  // then every flow reads its source from the start.
  bool cleared = false;
  for (const HistoryEntry& h : shop->History("main.shop.raw")) {
    if (h.operation != "FULL REFRESH" || h.update_id != id) continue;
    cleared = true;
    for (const char* flow : {"ingest", "clean", "main.shop.revenue", "big_orders_flow", "by_country", "customers"}) {
      EXPECT_NE(h.parameters_json.find(std::string("\"") + flow + "\""), std::string::npos) << h.parameters_json;
    }
  }
  EXPECT_TRUE(cleared);
  EXPECT_EQ(shop->InputRows(id, "ingest"), 10u);
  EXPECT_EQ(shop->InputRows(id, "clean"), 10u);
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 10u);  // truncated, then rebuilt: no duplicates
}

TEST_F(RefreshConformance, FullRefresh_GoesThroughTheResettingState) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  std::string id;
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})", &id), "COMPLETED");
  std::vector<std::string> states;
  for (const Event& e : shop->Events("update_progress")) {
    if (e.origin.update_id != id) continue;
    const json d = json::parse(e.details_json);
    states.push_back(d["update_progress"].value("state", ""));
  }
  EXPECT_NE(std::find(states.begin(), states.end(), "RESETTING"), states.end());
  EXPECT_EQ(states.back(), "COMPLETED");
}

TEST_F(RefreshConformance, FullRefresh_DropsRecordsTheTopicNoLongerRetains) {
  auto shop = MakeShop("shop");
  shop->ProducePadded(1, 1500);  // more than a topic segment
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(1501, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(shop->ExpireTopicRecords(), 1500u);
  ASSERT_EQ(shop->Rows("main.shop.raw").size(), 1510u);
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 10u);
  EXPECT_EQ(shop->Rows("main.shop.orders").size(), 10u);
}

TEST_F(RefreshConformance, FullRefresh_DropsDataFromFilesNoLongerInTheDirectory) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->AddCustomers("c2.jsonl", kCustomersC2);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(shop->Rows("main.shop.customers").size(), 3u);
  std::filesystem::remove(shop->customers_dir() + "/c1.jsonl");
  ASSERT_EQ(shop->Run(R"({"full_refresh_selection": ["main.shop.customers"]})"), "COMPLETED");
  const std::vector<std::string> rows = shop->Rows("main.shop.customers");
  ASSERT_EQ(rows.size(), 2u);  // ada (only in c1) is gone
  for (const std::string& row : rows) EXPECT_EQ(row.find("ada"), std::string::npos) << row;
}

TEST_F(RefreshConformance, FullRefresh_ValidationWarnsOfTheRecordsATopicNoLongerHolds) {
  auto shop = MakeShop("shop");
  shop->ProducePadded(1, 1500);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(1501, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(shop->ExpireTopicRecords(), 1500u);
  const StoreFingerprint before = shop->Fingerprint();
  std::string id;
  ASSERT_EQ(shop->Run(R"({"validate_only": true, "full_refresh": true})", &id), "COMPLETED");
  EXPECT_DATA_UNCHANGED(*shop, before);
  const json warnings = shop->GetUpdate(id)["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << shop->GetUpdate(id).dump();
  const std::string warning = warnings[0];
  EXPECT_NE(warning.find("main.shop.raw"), std::string::npos) << warning;
  EXPECT_NE(warning.find(shop->topic_dir()), std::string::npos) << warning;
  EXPECT_NE(warning.find("no longer holds 1500 of the 1510 records the table was built from"), std::string::npos)
      << warning;
}

TEST_F(RefreshConformance, FullRefresh_RecordsWhatItLosesAsWarningEvents) {
  auto shop = MakeShop("shop");
  shop->ProducePadded(1, 1500);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(1501, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(shop->ExpireTopicRecords(), 1500u);
  std::string id;
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})", &id), "COMPLETED");
  const json warnings = shop->Get("/events?level=WARN").Json()["events"];
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  EXPECT_EQ(warnings[0]["origin"]["update_id"], id);
  EXPECT_NE(warnings[0]["message"].get<std::string>().find(
                "no longer holds 1500 of the 1510 records the table was built from"),
            std::string::npos)
      << warnings.dump();
}

TEST_F(RefreshConformance, FullRefresh_ValidationWarnsOfTheFilesADirectoryNoLongerHolds) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->AddCustomers("c2.jsonl", kCustomersC2);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  std::filesystem::remove(shop->customers_dir() + "/c1.jsonl");
  std::string id;
  ASSERT_EQ(shop->Run(R"({"validate_only": true, "full_refresh_selection": ["main.shop.customers"]})", &id),
            "COMPLETED");
  const json warnings = shop->GetUpdate(id)["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << shop->GetUpdate(id).dump();
  EXPECT_NE(warnings[0].get<std::string>().find("no longer holds 1 of the 2 files read (c1.jsonl)"), std::string::npos)
      << warnings.dump();
}

TEST_F(RefreshConformance, FullRefreshSelection_RefreshesOnlyTheNamedTables) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  std::map<std::string, std::vector<std::string>> history;
  for (const std::string& table : ShopTables()) {
    for (const HistoryEntry& h : shop->History(table)) history[table].push_back(std::to_string(h.version));
  }
  std::string id;
  ASSERT_EQ(shop->Run(R"({"full_refresh_selection": ["main.shop.customers"]})", &id), "COMPLETED");
  for (const std::string& table : ShopTables()) {
    if (table == "main.shop.customers") continue;
    std::vector<std::string> now;
    for (const HistoryEntry& h : shop->History(table)) now.push_back(std::to_string(h.version));
    EXPECT_EQ(now, history[table]) << table;  // not touched
  }
  EXPECT_EQ(shop->InputRows(id, "customers"), 2u);  // c1 again, from the start
  EXPECT_EQ(shop->Rows("main.shop.customers").size(), 2u);
}

TEST_F(RefreshConformance, FullRefreshSelection_AStreamingTableDownstreamMustBeRefreshedToo) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  // orders feeds revenue and big_orders, streaming tables that read it.
  ExpectNotCarriedOut(*shop, R"({"full_refresh_selection": ["main.shop.orders"]})", "main.shop.orders");
}

TEST_F(RefreshConformance, FullRefreshSelection_WithItsStreamingDownstreamNamedTooRefreshesThemAll) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> by_country = shop->Rows("main.shop.by_country");
  std::string id;
  ASSERT_EQ(
      shop->Run(R"({"full_refresh_selection": ["main.shop.orders", "main.shop.revenue", "main.shop.big_orders"]})",
                &id),
      "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "clean"), 10u);
  EXPECT_EQ(shop->InputRows(id, "ingest"), 0u);  // raw was not refreshed
  EXPECT_EQ(shop->Rows("main.shop.orders").size(), 10u);
  EXPECT_EQ(shop->Rows("main.shop.big_orders").size(), 6u);
  EXPECT_EQ(shop->Rows("main.shop.by_country"), by_country);  // the view recomputed itself
}

TEST_F(RefreshConformance, FullRefreshSelection_ADownstreamTableThatSkipsChangeCommitsNeedNotBeRefreshed) {
  ShopSpecOptions options;
  options.big_orders_skip_change_commits = true;
  auto shop = MakeShop("shop", options);
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> big = shop->Rows("main.shop.big_orders");
  ASSERT_EQ(shop->Run(R"({"full_refresh_selection": ["main.shop.orders", "main.shop.revenue"]})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.orders").size(), 10u);
  // It was not truncated: it skipped the refresh's commit (and took the
  // rebuilt rows as new appends).
  const std::vector<std::string> now = shop->Rows("main.shop.big_orders");
  for (const std::string& row : big) EXPECT_NE(std::find(now.begin(), now.end(), row), now.end()) << row;
  for (const HistoryEntry& h : shop->History("main.shop.big_orders")) EXPECT_NE(h.operation, "FULL REFRESH");
}

TEST_F(RefreshConformance, FullRefresh_OfATableWhosePropertyForbidsResetsIsNotCarriedOut) {
  ShopSpecOptions options;
  options.orders_properties["pipelines.reset.allowed"] = "false";
  auto shop = MakeShop("shop", options);
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ExpectNotCarriedOut(*shop, R"({"full_refresh": true})", "pipelines.reset.allowed");
}

TEST_F(RefreshConformance, FullRefresh_OfOtherTablesIsAllowedWhenOneForbidsResets) {
  ShopSpecOptions options;
  options.orders_properties["pipelines.reset.allowed"] = "false";
  auto shop = MakeShop("shop", options);
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ASSERT_EQ(shop->Run(R"({"full_refresh_selection": ["main.shop.customers"]})"), "COMPLETED");
}

// An update whose definition the tables or state cannot take is refused
// before it starts (better than the reference, which starts it and fails):
// 400 with the error, naming `what` and the full refresh it needs, and
// nothing changed, the event log included. Its validation says the same;
// the full refresh then adopts the definition.
void ExpectRefusedUntilAFullRefresh(Shop& shop, const std::string& what) {
  const StoreFingerprint before = shop.Fingerprint();
  const Http validated = shop.Post("/updates", R"({"validate_only": true})");
  const Http refused = shop.Post("/updates", "{}");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(validated.body, refused.body);
  EXPECT_NE(refused.body.find(what), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("full refresh"), std::string::npos) << refused.body;
  EXPECT_UNCHANGED(shop, before);
  std::string id;
  EXPECT_EQ(shop.Run(R"({"full_refresh": true})", &id), "COMPLETED") << shop.Errors(id);
  EXPECT_EQ(shop.Run(), "COMPLETED");
}

TEST_F(RefreshConformance, StatefulChange_ChangingAnAggregatesGroupingKeysIsRefusedBeforeItStartsUntilAFullRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ShopSpecOptions regrouped = shop->spec_options();
  regrouped.revenue_group_by = {"country", "id"};
  shop->Deploy(regrouped);
  ExpectRefusedUntilAFullRefresh(*shop, "main.shop.revenue");
}

TEST_F(RefreshConformance, StatefulChange_AProjectionOrFilterChangeNeedsNoFullRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ShopSpecOptions changed = shop->spec_options();
  changed.amount_expr = "amount + 1";
  changed.clean_filter = "amount > 12";
  shop->Deploy(changed);
  shop->Produce(11, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
}

TEST_F(RefreshConformance, SchemaChange_AddingAColumnNeedsNoFullRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  json spec = SpecOf(*shop);
  spec["flows"][1]["steps"].back()["select"].push_back({{"name", "doubled"}, {"expr", "amount * 2"}});
  shop->DeploySpec(spec.dump());
  shop->Produce(6, 1);
  std::string id;
  ASSERT_EQ(shop->Run("{}", &id), "COMPLETED") << shop->Errors(id);
  const std::vector<std::string> orders = shop->Rows("main.shop.orders");
  EXPECT_NE(std::find(orders.begin(), orders.end(), R"([6,"de",16,32])"), orders.end());
  EXPECT_NE(std::find(orders.begin(), orders.end(), R"([1,"fr",11,null])"), orders.end());  // written before
}

TEST_F(RefreshConformance, SchemaChange_ChangingAColumnsTypeIsRefusedBeforeItStartsUntilAFullRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ShopSpecOptions retyped = shop->spec_options();
  retyped.amount_expr = "amount * 1.5";  // int64 to double
  shop->Deploy(retyped);
  shop->Produce(6, 1);
  ExpectRefusedUntilAFullRefresh(*shop, "main.shop.orders");
  EXPECT_EQ(shop->Rows("main.shop.orders")[0], R"([1,"fr",16.5])");  // the new type, rebuilt
}

TEST_F(RefreshConformance, StatefulChange_AddingAnAggregateIsRefusedBeforeItStartsUntilAFullRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->DeploySpec(WithMaxAmount(*shop).dump());
  ExpectRefusedUntilAFullRefresh(*shop, "main.shop.revenue");
}

TEST_F(RefreshConformance, StatefulChange_ChangingTheTableAStreamingFlowReadsIsRefusedBeforeItStartsUntilAFullRefresh) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  json spec = SpecOf(*shop);
  spec["flows"][2]["source"]["dataset"] = "main.shop.big_orders";
  shop->DeploySpec(spec.dump());
  ExpectRefusedUntilAFullRefresh(*shop, "main.shop.revenue");
}

TEST_F(RefreshConformance, AppendOnce_ABackfillFlowRunsOnceAndAgainOnAFullRefresh) {
  auto shop = MakeShop("shop");
  const std::string history = dir_.Sub("history");
  std::filesystem::create_directories(history);
  std::ofstream(history + "/h1.jsonl") << R"({"id": 1001, "country": "de", "amount": 1})"
                                          "\n"
                                          R"({"id": 1002, "country": "fr", "amount": 2})"
                                          "\n";
  json spec = SpecOf(*shop);
  spec["flows"].push_back(
      {{"name", "backfill"},
       {"target", "main.shop.raw"},
       {"once", true},
       {"source", {{"files", history}, {"format", "jsonl"}, {"columns", spec["flows"][0]["source"]["columns"]}}}});
  shop->DeploySpec(spec.dump());
  shop->Produce(1, 5);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 7u);
  std::ofstream(history + "/h2.jsonl") << R"({"id": 1003, "country": "de", "amount": 3})"
                                          "\n";
  ASSERT_EQ(shop->Run(), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 7u);  // it ran once
  ASSERT_EQ(shop->Run(R"({"full_refresh": true})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 8u);  // the backfill again, with what it now finds
}

// --- checkpoint resets -----------------------------------------------------------------------

TEST_F(RefreshConformance, ResetCheckpointSelection_AnUnnamedFlowIsNamedByItsTablesFullIdentifier) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> revenue = shop->Rows("main.shop.revenue");
  std::string id;
  ASSERT_EQ(shop->Run(R"({
  "reset_checkpoint_selection": ["main.shop.revenue"]
})",
                      &id),
            "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "main.shop.revenue"), 10u);  // every order again
  EXPECT_EQ(shop->Rows("main.shop.revenue"), revenue);       // counted afresh into the kept rows
}

TEST_F(RefreshConformance, ResetCheckpointSelection_KeepsTheTablesDataAndReprocessesEveryRecord) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> big = shop->Rows("main.shop.big_orders");
  std::string id;
  // A flow with a name of its own is reset by that name.
  ASSERT_EQ(shop->Run(R"({
  "reset_checkpoint_selection": ["big_orders_flow"]
})",
                      &id),
            "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "big_orders_flow"), 10u);
  // Nothing was truncated: the rows are kept, and reprocessing appends them
  // again (the duplicates the reference documents warn of).
  for (const HistoryEntry& h : shop->History("main.shop.big_orders")) EXPECT_NE(h.operation, "FULL REFRESH");
  std::vector<std::string> twice = big;
  twice.insert(twice.end(), big.begin(), big.end());
  std::sort(twice.begin(), twice.end());
  EXPECT_EQ(shop->Rows("main.shop.big_orders"), twice);
}

TEST_F(RefreshConformance, ResetCheckpointSelection_OfAFlowReadingATopicReadsItFromItsOldestRecord) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  std::string id;
  ASSERT_EQ(shop->Run(R"({"reset_checkpoint_selection": ["ingest"]})", &id), "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "ingest"), 10u);
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 20u);
}

TEST_F(RefreshConformance, ResetCheckpointSelection_FlowsNotSelectedRunADefaultRefresh) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 5);
  shop->AddCustomers("c2.jsonl", kCustomersC2);
  std::string id;
  ASSERT_EQ(shop->Run(R"({"reset_checkpoint_selection": ["big_orders_flow"]})", &id), "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "ingest"), 5u);  // only what is new
  EXPECT_EQ(shop->InputRows(id, "customers"), 2u);
  EXPECT_EQ(shop->InputRows(id, "big_orders_flow"), 15u);  // everything, from the start
}

TEST_F(RefreshConformance, ResetCheckpointSelection_ATablesShortNameIsNotAFlowName) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ExpectNotCarriedOut(*shop, R"({"reset_checkpoint_selection": ["revenue"]})", "main.shop.revenue");
}

TEST_F(RefreshConformance, ResetCheckpointSelection_WithARefreshSelectionRunsOnlyTheSelectedTables) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 5);
  std::string id;
  ASSERT_EQ(
      shop->Run(R"({"reset_checkpoint_selection": ["big_orders_flow"], "refresh_selection": ["main.shop.big_orders"]})",
                &id),
      "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "big_orders_flow"), 10u);
  EXPECT_EQ(shop->InputRows(id, "ingest"), 0u);  // not selected: the new orders wait
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 10u);
}

// --- refresh selections ------------------------------------------------------------------------

TEST_F(RefreshConformance, RefreshSelection_RunsOnlyTheFlowsOfTheSelectedTables) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 5);
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  ASSERT_EQ(shop->Run(R"({"refresh_selection": ["main.shop.customers"]})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.customers").size(), 2u);
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 10u);  // not selected
}

TEST_F(RefreshConformance, RefreshSelection_ExcludedTablesAreNotUpdatedEvenWhenTheyDependOnASelectedOne) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  const std::vector<std::string> orders = shop->Rows("main.shop.orders");
  shop->Produce(11, 5);
  ASSERT_EQ(shop->Run(R"({"refresh_selection": ["main.shop.raw"]})"), "COMPLETED");
  EXPECT_EQ(shop->Rows("main.shop.raw").size(), 15u);
  EXPECT_EQ(shop->Rows("main.shop.orders"), orders);
  ASSERT_EQ(shop->Run(), "COMPLETED");  // the next default refresh catches up
  EXPECT_EQ(shop->Rows("main.shop.orders").size(), 15u);
}

TEST_F(RefreshConformance, RefreshSelection_WithAFullRefreshSelectionRefreshesBothKinds) {
  auto shop = MakeShop("shop");
  shop->AddCustomers("c1.jsonl", kCustomersC1);
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 5);
  std::string id;
  ASSERT_EQ(
      shop->Run(R"({"refresh_selection": ["main.shop.raw"], "full_refresh_selection": ["main.shop.customers"]})", &id),
      "COMPLETED");
  EXPECT_EQ(shop->InputRows(id, "ingest"), 5u);     // refreshed: what is new
  EXPECT_EQ(shop->InputRows(id, "customers"), 2u);  // fully refreshed: everything
  EXPECT_EQ(shop->InputRows(id, "clean"), 0u);      // neither
}

TEST_F(RefreshConformance, RefreshSelection_OfATableThePipelineDoesNotHaveIsNotCarriedOut) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ExpectNotCarriedOut(*shop, R"({"refresh_selection": ["main.shop.nothing"]})", "main.shop.nothing");
}

// --- validation --------------------------------------------------------------------------------

TEST_F(RefreshConformance, ValidateOnly_ChecksThePipelineWithoutWritingAnyTable) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  shop->Produce(11, 5);
  const StoreFingerprint before = shop->Fingerprint();
  std::string id;
  ASSERT_EQ(shop->Run(R"({"validate_only": true})", &id), "COMPLETED");
  EXPECT_DATA_UNCHANGED(*shop, before);
}

TEST_F(RefreshConformance, ValidateOnly_RefusesWhatTheUpdateWouldRefuse) {
  auto shop = MakeShop("shop");
  shop->Produce(1, 10);
  ASSERT_EQ(shop->Run(), "COMPLETED");
  ExpectNotCarriedOut(*shop, R"({"validate_only": true, "full_refresh_selection": ["main.shop.orders"]})",
                      "main.shop.orders");
}

}  // namespace
}  // namespace spool::conformance
