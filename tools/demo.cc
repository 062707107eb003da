// `spool demo`: the product's story on an embedded store, told with the
// commands a person would type, each printed before it runs (in this
// process) with its real output. A pipeline reads orders from a topic,
// cleans them, sums revenue per country and keeps customers as SCD type 2;
// a bad deployment doubles the amounts; the operator finds the first bad
// commit, dry-runs a rewind to the point before it, rewinds, deploys the fix
// and replays; the tables then equal those of a store that never had the
// bug. The store is left for the user to explore.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "demo_script.h"
#include "spool/storage/store.h"

namespace spool::cli {
namespace {

// The pipeline, with `amount` as the deployed transformation of amounts.
std::string PipelineJson(const std::string& dir, const std::string& amount) {
  return fmt::format(R"json({{
  "name": "shop",
  "datasets": [{{"name": "main.shop.orders"}}, {{"name": "main.shop.revenue"}}, {{"name": "main.shop.customers"}}],
  "flows": [
    {{"name": "ingest", "target": "main.shop.orders",
     "source": {{"topic": "{0}/orders", "columns": [{{"name": "order_id", "type": "int64", "nullable": false}},
                {{"name": "customer_id", "type": "int64"}}, {{"name": "country", "type": "string"}},
                {{"name": "amount", "type": "int64"}}]}},
     "steps": [{{"filter": "amount > 0 AND country IS NOT NULL"}},
               {{"select": ["order_id", "customer_id", {{"name": "country", "expr": "coalesce(country, '?')"}},
                           {{"name": "amount", "expr": "{1}"}}]}}]}},
    {{"name": "revenue", "target": "main.shop.revenue", "source": {{"dataset": "main.shop.orders"}},
     "steps": [{{"aggregate": {{"group_by": ["country"], "aggregates": [{{"name": "orders", "fn": "count"}},
                {{"name": "revenue", "fn": "sum", "expr": "amount"}}]}}}}]}},
    {{"name": "customers", "target": "main.shop.customers",
     "source": {{"topic": "{0}/customers", "columns": [{{"name": "customer_id", "type": "int64", "nullable": false}},
                {{"name": "name", "type": "string"}}, {{"name": "seq", "type": "int64", "nullable": false}}]}},
     "steps": [{{"auto_cdc": {{"keys": ["customer_id"], "sequence_by": "seq", "stored_as_scd_type": 2}}}}]}}
  ]
}}
)json",
                     dir, amount);
}

// Orders first..last: amounts 300 to 500, and every tenth order a bad
// record (no country) that the cleaning filter drops.
std::string OrdersJsonl(int first, int last) {
  static const char* const kCountries[] = {"de", "fr", "it", "nl"};
  std::string out;
  for (int id = first; id <= last; ++id) {
    const std::string country = id % 10 == 0 ? "null" : fmt::format("\"{}\"", kCountries[id % 4]);
    out += fmt::format(R"({{"order_id": {}, "customer_id": {}, "country": {}, "amount": {}}})", id, 1 + id % 8, country,
                       300 + (id * 37) % 201) +
           "\n";
  }
  return out;
}

std::string CustomersJsonl(int seq, bool renamed) {
  static const char* const kNames[] = {"Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"};
  std::string out;
  for (int id = 1; id <= 8; ++id) {
    if (renamed && id % 3 != 0) continue;  // some customers change their names
    out += fmt::format(R"({{"customer_id": {}, "name": "{}{}", "seq": {}}})", id, kNames[id - 1], renamed ? " Jr." : "",
                       seq) +
           "\n";
  }
  return out;
}

class Demo : public DemoScript {
 public:
  explicit Demo(std::string dir) : DemoScript(std::move(dir)) {}

  int Play() {
    Say("Spool keeps a streaming pipeline's tables, source offsets and operator state in one log.\n"
        "This demo runs a pipeline in " +
        dir_ + ", breaks it with a bad deployment, and rewinds it.");
    WriteInputs();
    if (!SetUp() || !FirstUpdate() || !BadUpdate() || !FindBadCommit() || !Rewind() || !Replay() ||
        !CompareWithReference() || !ShowHistory()) {
      std::cerr << "demo: failed at " << failed_at_ << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  // The pipeline's two deployments and the topics' input files.
  void WriteInputs() {
    Write("pipeline.json", PipelineJson(dir_, "amount"));
    Write("pipeline-bad.json", PipelineJson(dir_, "amount * 2"));
    Write("orders-1.jsonl", OrdersJsonl(1, 60));
    Write("orders-2.jsonl", OrdersJsonl(61, 120));
    Write("customers-1.jsonl", CustomersJsonl(1, false));
    Write("customers-2.jsonl", CustomersJsonl(2, true));
  }

  bool SetUp() {
    Step("1. A store, two topics, and the pipeline: orders cleaned, revenue per country, customers as SCD type 2.");
    return (Run({"init", store_}) && Run({"topic", "create", dir_ + "/orders"}) &&
            Run({"topic", "create", dir_ + "/customers"}) &&
            Run({"pipeline", "set", store_, dir_ + "/pipeline.json"})) ||
           Failed("setting up");
  }

  bool FirstUpdate() {
    Step("2. The first orders and customers arrive; an update processes them.");
    return (Run({"topic", "produce", dir_ + "/orders", "--file", dir_ + "/orders-1.jsonl"}) &&
            Run({"topic", "produce", dir_ + "/customers", "--file", dir_ + "/customers-1.jsonl"}) &&
            Run({"update", store_}) && Run({"read", store_, "main.shop.revenue"})) ||
           Failed("the first update");
  }

  bool BadUpdate() {
    Step("3. A bad deployment doubles every amount; more orders arrive and are processed with it.");
    return (Run({"pipeline", "set", store_, dir_ + "/pipeline-bad.json"}) &&
            Run({"topic", "produce", dir_ + "/orders", "--file", dir_ + "/orders-2.jsonl"}) &&
            Run({"topic", "produce", dir_ + "/customers", "--file", dir_ + "/customers-2.jsonl"}) &&
            Run({"update", store_}) && Run({"read", store_, "main.shop.revenue"})) ||
           Failed("the bad update");
  }

  // Finds the first bad commit and the rewind point recorded before it.
  bool FindBadCommit() {
    Step("4. Someone notices amounts over 500, which no order has. The rewind points, and the first bad commit:");
    std::string found;
    if (!Run({"rewind-points", store_}) ||
        !Run({"rewind-points", "find", store_, "--table", "main.shop.orders", "--where", "amount > 500"}, &found)) {
      return Failed("finding the point");
    }
    point_ = WordAfter(found, "rewind point ");
    const std::string version = WordAfter(found, " at version ");
    if (point_.size() != 36 || version.empty() || version.find_first_not_of("0123456789") != std::string::npos) {
      return Failed("reading the point found");
    }
    rewound_to_ = std::stoull(version);
    return true;
  }

  bool Rewind() {
    Step("5. A dry run checks the rewind and changes nothing; then the rewind itself.");
    return (Run({"rewind", store_, "--point", point_, "--dry-run"}) && Run({"rewind", store_, "--point", point_})) ||
           Failed("the rewind");
  }

  bool Replay() {
    Step("6. The fix is deployed, and the next update replays everything after the point.");
    return (Run({"pipeline", "set", store_, dir_ + "/pipeline.json"}) && Run({"update", store_}) &&
            Run({"read", store_, "main.shop.revenue"})) ||
           Failed("the replay");
  }

  bool CompareWithReference() {
    Step("7. The check: a store that never had the bug, fed the same topics, has the same tables, row for row.");
    const std::string reference = dir_ + "/reference";
    if (!Run({"init", reference}, nullptr, true) ||
        !Run({"pipeline", "set", reference, dir_ + "/pipeline.json"}, nullptr, true) ||
        !Run({"update", reference}, nullptr, true)) {
      return Failed("the reference run");
    }
    bool equal = true;
    for (const char* table : {"main.shop.orders", "main.shop.revenue", "main.shop.customers"}) {
      equal = SameTable(reference, table) && equal;
    }
    return equal;
  }

  // Shows the history kept, then the commands to explore it further.
  bool ShowHistory() {
    Step(
        "8. The history keeps everything: the table's commits, its change feed since the rewind, the event log and\n"
        "   the cut history in the archive.");
    std::string archive;
    if (!Run({"history", store_, "main.shop.revenue", "--limit", "6"}) ||
        !Run({"changes", store_, "main.shop.revenue", "--from", std::to_string(rewound_to_ + 1)}) ||
        !Run({"events", store_, "--type", "rewind_completed"}) || !Run({"archive", store_}, &archive)) {
      return Failed("showing the history");
    }
    // "…/archive/epoch-000002  8-11  4 …": the cut and its last version.
    const std::string cut = WordAfter(archive, "/archive/");
    const std::string versions = cut.empty() ? "" : WordAfter(archive, cut + "  ");
    const std::string last = versions.substr(versions.find('-') + 1);
    if (cut.empty() || versions.find('-') == std::string::npos || last.empty()) return Failed("reading the archive");
    // Runnable as printed: `spool` only when that is this program on the
    // PATH (after `cmake --install`), else this program's own path.
    std::cout << fmt::format(
        "\ndemo: all checks passed. The store is left in {0} to explore, for instance:\n"
        "  {4} pipeline show {1}\n"
        "  {4} history {1} main.shop.orders\n"
        "  {4} changes {1} main.shop.revenue --from 1\n"
        "  {4} read {1} main.shop.customers\n"
        "  {4} events {1}\n"
        "  {4} read {1} main.shop.revenue --archive {2} --version {3}   # as it was before the rewind\n",
        dir_, store_, cut, last, SelfCommand());
    return true;
  }

  std::string point_;        // the rewind point found before the first bad commit
  uint64_t rewound_to_ = 0;  // the version the rewind goes back to
};

int RunDemo(std::string dir, bool jetstream) {
  Status s = MakeDemoDir(&dir);
  if (!s.ok()) return ReportError(s);
  return jetstream ? RunJetStreamDemo(dir) : Demo(dir).Play();
}

}  // namespace

void RegisterDemoCommand(CLI::App& app, int* exit_code) {
  auto dir = std::make_shared<std::string>();
  CLI::App* demo = app.add_subcommand(
      "demo", "The product's story: a pipeline, a bad deployment, a rewind and a replay, with the commands shown");
  auto jetstream = std::make_shared<bool>(false);
  demo->add_option("--dir", *dir, "A new or empty directory for the demo (default: a new one in /tmp)");
  demo->add_flag("--jetstream", *jetstream,
                 "The same story with NATS JetStream: orders flow in from a stream, totals flow out to one "
                 "(starts a local nats-server)");
  demo->callback([=] { *exit_code = RunDemo(*dir, *jetstream); });
}

}  // namespace spool::cli
