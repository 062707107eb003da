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
#include "spool/storage/store.h"

namespace spool::cli {
namespace {

// How a person runs this program: "spool" when that name on the PATH is
// this very program, else the program's full path.
std::string SelfCommand() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "spool";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const fs::path candidate = fs::path(dirs.substr(0, colon)) / "spool";
    if (fs::equivalent(candidate, self, ec)) return "spool";
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
  }
  return self.string();
}

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

// The word after `marker` in `text` (up to a space, a newline or a ','), or
// "" when `marker` is not there.
std::string WordAfter(const std::string& text, std::string_view marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t begin = at + marker.size();
  return text.substr(begin, text.find_first_of(" \n,", begin) - begin);
}

class Demo {
 public:
  explicit Demo(std::string dir) : dir_(std::move(dir)), store_(dir_ + "/store") {}

  int Run() {
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
      std::string mine, theirs;
      if (!Run({"read", store_, table, "--format", "csv"}, &mine, true) ||
          !Run({"read", reference, table, "--format", "csv"}, &theirs, true)) {
        return Failed("reading " + std::string(table));
      }
      const size_t rows = mine.empty() ? 0 : static_cast<size_t>(std::count(mine.begin(), mine.end(), '\n')) - 1;
      std::cout << fmt::format("  {:<22} {:>4} rows  {}\n", table, rows, mine == theirs ? "equal" : "DIFFERENT");
      equal = equal && mine == theirs;
    }
    return equal || Failed("the tables differ from the run without the bug");
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

  void Say(const std::string& text) { std::cout << text << "\n"; }
  void Step(const std::string& text) { std::cout << "\n== " << text << "\n"; }
  // Records the step that failed; false.
  bool Failed(const std::string& what) {
    failed_at_ = what;
    return false;
  }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }

  // Prints the command line, runs it in this process and shows its output
  // (`quiet`: neither), which `*output` receives too. False when it failed.
  bool Run(const std::vector<std::string>& args, std::string* output = nullptr, bool quiet = false) {
    if (!quiet) {
      std::string line = "$ spool";
      for (const std::string& a : args) {
        line += ' ';
        line += a.find_first_of(" ><*'") == std::string::npos ? a : "\"" + a + "\"";
      }
      std::cout << line << "\n";
    }
    std::ostringstream captured;
    std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
    const int code = RunSpool(args);
    std::cout.rdbuf(saved);
    if (!quiet) std::cout << captured.str();
    if (output != nullptr) *output = captured.str();
    return code == kExitOk;
  }

  std::string dir_;
  std::string store_;
  std::string point_;        // the rewind point found before the first bad commit
  uint64_t rewound_to_ = 0;  // the version the rewind goes back to
  std::string failed_at_;    // the step that failed
};

int RunDemo(std::string dir) {
  std::error_code error;
  if (dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path(error) / "spool-demo-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return ReportError(Status::IOError("cannot create a directory in /tmp"));
    dir = pattern;
  } else if (std::filesystem::exists(dir) && !std::filesystem::is_empty(dir)) {
    return ReportError(Status::InvalidArgument(dir + " is not empty: the demo needs a new or empty directory"));
  } else if (!std::filesystem::create_directories(dir, error) && error) {
    return ReportError(Status::IOError("cannot create " + dir + ": " + error.message()));
  }
  return Demo(std::filesystem::absolute(dir).string()).Run();
}

}  // namespace

void RegisterDemoCommand(CLI::App& app, int* exit_code) {
  auto dir = std::make_shared<std::string>();
  CLI::App* demo = app.add_subcommand(
      "demo", "The product's story: a pipeline, a bad deployment, a rewind and a replay, with the commands shown");
  demo->add_option("--dir", *dir, "A new or empty directory for the demo (default: a new one in /tmp)");
  demo->callback([=] { *exit_code = RunDemo(*dir); });
}

}  // namespace spool::cli
