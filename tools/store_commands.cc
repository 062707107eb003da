// `spool init DIR`, `spool events DIR …`, `spool archive DIR`, `spool verify
// DIR` and `spool repair DIR`.
#include <chrono>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "commands.h"
#include "json_format.h"
#include "json_text.h"
#include "spool/storage/store.h"
#include "spool/stream/records.h"

namespace spool::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

int RunInit(const std::string& dir) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions{}, dir, &store);
  if (!s.ok()) return ReportError(s);
  std::cout << fmt::format("store ready at {} (log epoch {}, newest version {})\n", dir, store->log()->CurrentEpoch(),
                           store->log()->Newest().version);
  return kExitOk;
}

struct EventsArgs {
  std::string dir;
  std::string type;
  std::string level;
  std::string since;
  uint64_t limit = 0;
  bool as_json = false;
};

int RunArchive(const std::string& dir, bool as_json) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, &store, StoreAccess::kRead);
  std::vector<Store::ArchivedCut> cuts;
  if (s.ok()) s = store->ListArchivedCuts(&cuts);
  if (!s.ok()) return ReportError(s);
  if (as_json) {
    ordered_json out = ordered_json::array();
    for (const Store::ArchivedCut& cut : cuts) {
      out.push_back({{"cut", std::filesystem::path(cut.dir).filename().string()},
                     {"dir", cut.dir},
                     {"epoch", cut.new_epoch},
                     {"first_version", cut.first_version},
                     {"last_version", cut.last_version},
                     {"commits", cut.commits},
                     {"from", FormatTimestamp(cut.first_timestamp_us)},
                     {"to", FormatTimestamp(cut.last_timestamp_us)},
                     {"complete", cut.complete}});
    }
    std::cout << JsonText(out, 2) << "\n";
    return kExitOk;
  }
  Table table({"cut", "versions", "commits", "from", "to", "complete"});
  for (const Store::ArchivedCut& cut : cuts) {
    table.AddRow({cut.dir, std::to_string(cut.first_version) + "-" + std::to_string(cut.last_version),
                  std::to_string(cut.commits), FormatTimestamp(cut.first_timestamp_us),
                  FormatTimestamp(cut.last_timestamp_us), cut.complete ? "yes" : "no (vacuum interrupted)"});
  }
  std::cout << table.ToString();
  return kExitOk;
}

int RunEvents(const EventsArgs& args) {
  EventQuery query;
  if (!args.type.empty()) query.event_type = args.type;
  if (!args.level.empty()) {
    EventLevel level;
    Status s = ParseEventLevel(args.level, &level);
    if (!s.ok()) return ReportError(s);
    query.level = level;
  }
  StoreOptions options;
  options.create_if_missing = false;
  options.read_only = true;
  if (!args.since.empty()) {
    uint64_t ago = 0;
    Status s = ParseDuration(args.since, &ago);
    if (!s.ok()) return ReportError(s);
    const uint64_t now = options.env->NowMicros();
    query.since_us = now > ago ? now - ago : 0;
  }
  std::unique_ptr<Store> store;
  Status s = Store::Open(options, args.dir, &store);
  std::vector<Event> events;
  if (s.ok()) s = store->events()->Query(query, &events);
  if (!s.ok()) return ReportError(s);
  // The newest `limit`, as the HTTP API's max_results gives them (oldest
  // first here, as a log reads).
  if (args.limit != 0 && events.size() > args.limit) {
    events.erase(events.begin(), events.end() - static_cast<std::ptrdiff_t>(args.limit));
  }
  if (args.as_json) {
    ordered_json out = ordered_json::array();
    for (const Event& e : events) out.push_back(EventJson(e));
    std::cout << JsonText(out, 2) << "\n";
    return kExitOk;
  }
  Table table({"seq", "timestamp (UTC)", "level", "event_type", "origin", "message"});
  for (const Event& e : events) {
    const std::string origin = e.origin.flow_name.empty() ? e.origin.update_id : e.origin.flow_name;
    table.AddRow({std::to_string(e.sequence), FormatTimestamp(e.timestamp_us), std::string(EventLevelName(e.level)),
                  e.event_type, origin, Preview(e.message, 60)});
  }
  std::cout << table.ToString();
  return kExitOk;
}

int RunStoreVerify(const std::string& dir, bool as_json) {
  const auto start = std::chrono::steady_clock::now();
  VerifyReport report;
  Status s = VerifyStore(StoreOptions{}, dir, &report);
  if (!s.ok()) return ReportError(s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (as_json) {
    ordered_json files = ordered_json::array();
    for (const StoreFileCheck& f : report.files) {
      files.push_back(ordered_json{{"kind", f.kind},
                                   {"path", f.path},
                                   {"bytes", f.bytes},
                                   {"items", f.items},
                                   {"intact", f.status.ok()},
                                   {"damage", f.status.ok() ? "" : f.status.ToString()}});
    }
    std::cout << JsonText(ordered_json{{"intact", !report.damaged()},
                                       {"bytes", report.bytes()},
                                       {"seconds", seconds},
                                       {"files", files}},
                          2)
              << "\n";
  } else {
    Table table({"kind", "path", "size", "items", "status"});
    for (const StoreFileCheck& f : report.files) {
      table.AddRow(
          {f.kind, f.path, FormatBytes(f.bytes), std::to_string(f.items), f.status.ok() ? "intact" : "DAMAGED"});
    }
    std::cout << table.ToString();
    for (const StoreFileCheck& f : report.files) {
      if (!f.status.ok()) std::cout << fmt::format("damaged {}: {}\n", f.kind, f.status.ToString());
    }
    std::cout << fmt::format("{}: {} files, {} checked in {:.2f} s{}\n", report.damaged() ? "DAMAGED" : "intact",
                             report.files.size(), FormatBytes(report.bytes()), seconds,
                             report.damaged() ? "; `spool repair " + dir + "` rebuilds the state from the log" : "");
  }
  return report.damaged() ? kExitFailure : kExitOk;
}

int RunRepair(const std::string& dir) {
  RepairReport report;
  Status s = RepairStore(StoreOptions{}, dir, &report);
  if (!s.ok()) return ReportError(s);
  for (const std::string& removed : report.removed) std::cout << "removed " << removed << "\n";
  std::cout << fmt::format("repaired: the state was rebuilt from {} and the log, up to version {}\n",
                           report.rebuilt_from.empty() ? "the log's start" : "snapshot " + report.rebuilt_from,
                           report.version);
  return kExitOk;
}

}  // namespace

void RegisterStoreCommands(CLI::App& app, int* exit_code) {
  auto dir = std::make_shared<std::string>();
  CLI::App* init = app.add_subcommand("init", "Create a store in DIR (or check the one there)");
  init->add_option("dir", *dir, "Store directory")->required();
  init->callback([=] { *exit_code = RunInit(*dir); });

  auto args = std::make_shared<EventsArgs>();
  CLI::App* events = app.add_subcommand("events", "The store's event log");
  events->add_option("dir", args->dir, "Store directory")->required();
  events->add_option("--type", args->type, "Only this event_type");
  events->add_option("--level", args->level, "Only this level: INFO, WARN, ERROR, METRICS");
  events->add_option("--since", args->since, "Only events this recent, e.g. 90s, 15m, 36h, 7d");
  events->add_option("--limit", args->limit, "The newest this many events (0: all)");
  events->add_flag("--json", args->as_json, "JSON output");
  events->callback([=] { *exit_code = RunEvents(*args); });

  auto archive_args = std::make_shared<std::pair<std::string, bool>>();
  CLI::App* archive = app.add_subcommand("archive", "The histories rewinds cut off, kept in the log's archive");
  archive->add_option("dir", archive_args->first, "Store directory")->required();
  archive->add_flag("--json", archive_args->second, "JSON output");
  archive->callback([=] { *exit_code = RunArchive(archive_args->first, archive_args->second); });

  auto verify_args = std::make_shared<std::pair<std::string, bool>>();
  CLI::App* verify = app.add_subcommand(
      "verify", "Check every file of the closed store in DIR and them against each other; exit 1 on damage");
  verify->add_option("dir", verify_args->first, "Store directory")->required();
  verify->add_flag("--json", verify_args->second, "JSON output");
  verify->callback([=] { *exit_code = RunStoreVerify(verify_args->first, verify_args->second); });

  auto repair_dir = std::make_shared<std::string>();
  CLI::App* repair = app.add_subcommand(
      "repair", "Rebuild the closed store's state from its newest intact snapshot and the log; drop damaged copies");
  repair->add_option("dir", *repair_dir, "Store directory")->required();
  repair->callback([=] { *exit_code = RunRepair(*repair_dir); });
}

}  // namespace spool::cli
