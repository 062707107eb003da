// `spool read | history | changes | restore | snapshot | vacuum`: time
// travel, the history and change feed of a table, and the store's upkeep.
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "commands.h"
#include "json_format.h"
#include "json_text.h"
#include "plots.h"
#include "progress.h"
#include "row_format.h"
#include "spool/rewind/rewind_points.h"
#include "spool/storage/store.h"
#include "spool/stream/records.h"

namespace spool::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

OutputFormat OutputFormatNamed(std::string_view name) {
  return name == "json" ? OutputFormat::kJsonLines : name == "csv" ? OutputFormat::kCsv : OutputFormat::kTable;
}

std::vector<std::string> ColumnNames(const Schema& schema) {
  std::vector<std::string> names;
  for (const Column& c : schema.columns()) names.push_back(c.name);
  return names;
}

// Opens the store and parses the table's name.
Status OpenTable(const std::string& dir, const std::string& table, std::unique_ptr<Store>* store, TableId* id,
                 StoreAccess access = StoreAccess::kRead) {
  SPOOL_RETURN_IF_ERROR(TableId::Parse(table, id));
  return OpenStore(dir, store, access);
}

// ---------------------------------------------------------------------------
// read

struct ReadArgs {
  std::string dir;
  std::string table;
  uint64_t version = 0;
  std::string timestamp;
  std::string format = "table";
  uint64_t limit = 0;
  std::string archive;       // a cut of the archive (its directory or name)
  bool has_version = false;  // set from the parsed options
};

// Reads the table as of a version of an archived cut (`spool archive`).
Status ReadArchived(Store* store, const ReadArgs& args, const TableId& id, const std::function<bool(const Row&)>& visit,
                    TableInfo* table) {
  if (!args.has_version) return Status::InvalidArgument("--archive needs --version: a version of the cut");
  std::vector<Store::ArchivedCut> cuts;
  SPOOL_RETURN_IF_ERROR(store->ListArchivedCuts(&cuts));
  std::string names;
  for (const Store::ArchivedCut& cut : cuts) {
    const std::string name = std::filesystem::path(cut.dir).filename().string();
    if (cut.dir == args.archive || name == args.archive)
      return store->ReadArchived(cut, id, args.version, visit, table);
    names += (names.empty() ? "" : ", ") + name;
  }
  return Status::NotFound("the archive has no cut " + args.archive + " (its cuts: " + (names.empty() ? "none" : names) +
                          "; see spool archive)");
}

Status BuildReadOptions(const ReadArgs& args, ReadOptions* options) {
  if (args.has_version) options->version = args.version;
  if (!args.timestamp.empty()) {
    int64_t micros = 0;
    SPOOL_RETURN_IF_ERROR(ParseTimestamp(args.timestamp, &micros));
    if (micros < 0) return Status::InvalidArgument("timestamp '" + args.timestamp + "' is before 1970");
    options->timestamp_us = static_cast<uint64_t>(micros);
  }
  return Status::OK();
}

int RunRead(const ReadArgs& args) {
  ReadOptions options;
  Status s = BuildReadOptions(args, &options);
  std::unique_ptr<Store> store;
  TableId id;
  if (s.ok()) s = OpenTable(args.dir, args.table, &store, &id);
  std::vector<Row> rows;
  TableInfo table;
  uint64_t version = 0;
  auto keep = [&](const Row& row) {
    rows.push_back(row);
    return args.limit == 0 || rows.size() < args.limit;
  };
  if (s.ok() && !args.archive.empty()) {
    if (!args.timestamp.empty()) s = Status::InvalidArgument("--archive reads by --version, not --timestamp");
    if (s.ok()) s = ReadArchived(store.get(), args, id, keep, &table);
    version = args.version;
  } else if (s.ok()) {
    s = store->Read(id, options, keep, &table, &version);
  }
  if (!s.ok()) return ReportError(s);
  const OutputFormat format = OutputFormatNamed(args.format);
  RowPrinter printer(format, ColumnNames(table.schema), &std::cout);
  for (const Row& row : rows) printer.Add(row);
  printer.Finish();
  if (format == OutputFormat::kTable) {
    std::cout << fmt::format("({} row(s) of {} at version {}{})\n", rows.size(), id.ToString(), version,
                             args.archive.empty() ? "" : " of the archived cut " + args.archive);
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------
// history

std::string MetricsText(const Metrics& metrics) {
  std::string out;
  for (const auto& [name, value] : metrics) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  return out;
}

// The timeline of a table (or, `name` empty, of every commit of the store):
// its commits, the rewind points on the current history, and the histories
// rewinds cut.
Status GatherTimeline(Store* store, const std::string& name, const TableId& id, Timeline* t) {
  t->title = name.empty() ? "history of the store " + store->dir() : "history of " + name;
  if (!name.empty()) {
    std::vector<HistoryEntry> history;
    SPOOL_RETURN_IF_ERROR(store->History(id, &history));
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
      auto rows = it->metrics.find("numOutputRows");
      t->commits.push_back(
          {it->version, it->timestamp_us, it->operation, rows == it->metrics.end() ? -1 : rows->second});
    }
  } else {
    std::unique_ptr<LogIterator> it;
    SPOOL_RETURN_IF_ERROR(store->log()->NewIterator(store->log()->Oldest().version, &it));
    LogEntry entry;
    while (it->Next(&entry)) t->commits.push_back({entry.position.version, entry.timestamp_us, entry.operation, -1});
    SPOOL_RETURN_IF_ERROR(it->status());
  }
  std::vector<RewindPoint> points;
  SPOOL_RETURN_IF_ERROR(ListRewindPoints(store, 0, &points));
  for (const RewindPoint& p : points) {
    if (store->OnHistory(p.position)) t->points.push_back({p.id, p.position.version});
  }
  std::vector<Store::ArchivedCut> cuts;
  SPOOL_RETURN_IF_ERROR(store->ListArchivedCuts(&cuts));
  for (const Store::ArchivedCut& cut : cuts) {
    if (cut.commits == 0) continue;
    TimelineBranch branch{cut.dir.substr(cut.dir.rfind('/') + 1), cut.point, {}};
    SPOOL_RETURN_IF_ERROR(ScanArchivedCut(store->options().env, cut.dir, [&](const LogEntry& e) {
      branch.commits.push_back({e.position.version, e.timestamp_us, e.operation, -1});
      return true;
    }));
    t->branches.push_back(std::move(branch));
  }
  return Status::OK();
}

int RunHistory(const std::string& dir, const std::string& name, uint64_t limit, bool as_json, const std::string& plot) {
  if (name.empty() && plot.empty()) {
    return ReportError(
        Status::InvalidArgument("history: give the table (catalog.schema.table), or --plot FILE to "
                                "draw every commit of the store"));
  }
  std::unique_ptr<Store> store;
  TableId id;
  Status s = name.empty() ? OpenStore(dir, &store, StoreAccess::kRead) : OpenTable(dir, name, &store, &id);
  if (s.ok() && !plot.empty()) {
    Timeline timeline;
    s = GatherTimeline(store.get(), name, id, &timeline);
    if (s.ok()) s = WritePlot(plot, TimelineSvg(timeline));
    return s.ok() ? kExitOk : ReportError(s);
  }
  std::vector<HistoryEntry> history;
  if (s.ok()) s = store->History(id, &history, limit);
  if (!s.ok()) return ReportError(s);
  if (as_json) {
    ordered_json out = ordered_json::array();
    for (const HistoryEntry& h : history) out.push_back(HistoryJson(h));
    std::cout << JsonText(out, 2) << "\n";
    return kExitOk;
  }
  Table table({"version", "timestamp (UTC)", "operation", "operationParameters", "operationMetrics", "updateId"});
  for (const HistoryEntry& h : history) {
    table.AddRow({std::to_string(h.version), FormatTimestamp(h.timestamp_us), h.operation,
                  Preview(h.parameters_json, 80), MetricsText(h.metrics), h.update_id});
  }
  std::cout << table.ToString();
  return kExitOk;
}

// ---------------------------------------------------------------------------
// changes

int RunChanges(const std::string& dir, const std::string& name, uint64_t from, uint64_t to, const std::string& format) {
  std::unique_ptr<Store> store;
  TableId id;
  Status s = OpenTable(dir, name, &store, &id);
  std::vector<Row> rows;
  TableInfo table;
  if (s.ok()) {
    s = store->Changes(
        id, from, to,
        [&](const ChangeRow& change) {
          Row row = change.row;
          row.emplace_back(std::string(ChangeTypeName(change.change_type)));
          row.emplace_back(static_cast<int64_t>(change.commit_version));
          row.emplace_back(Timestamp{static_cast<int64_t>(change.commit_timestamp_us)});
          rows.push_back(std::move(row));
          return true;
        },
        &table);
  }
  if (!s.ok()) return ReportError(s);
  std::vector<std::string> columns = ColumnNames(table.schema);
  for (const char* extra : {"_change_type", "_commit_version", "_commit_timestamp"}) columns.emplace_back(extra);
  RowPrinter printer(OutputFormatNamed(format), std::move(columns), &std::cout);
  for (const Row& row : rows) printer.Add(row);
  printer.Finish();
  return kExitOk;
}

// ---------------------------------------------------------------------------
// restore

int RunRestore(const std::string& dir, const std::string& name, uint64_t version) {
  std::unique_ptr<Store> store;
  TableId id;
  Status s = OpenTable(dir, name, &store, &id, StoreAccess::kWrite);
  CommitResult result;
  if (s.ok()) s = store->Restore(id, version, &result);
  if (!s.ok()) return ReportError(WithHint(s, "nothing was changed"));
  // The commit's metrics are in its history entry (the newest: the store
  // is ours alone while it is open).
  std::vector<HistoryEntry> history;
  s = store->History(id, &history, 1);
  if (!s.ok() || history.empty() || history[0].version != result.version) {
    std::cout << fmt::format("restored {} to version {} as version {}\n", id.ToString(), version, result.version);
    return s.ok() ? kExitOk : ReportError(s);
  }
  const Metrics& m = history[0].metrics;
  const auto metric = [&](const char* key) { return m.count(key) != 0 ? m.at(key) : 0; };
  std::cout << fmt::format("restored {} to version {} as version {}: numRestoredRows={} numRemovedRows={}\n",
                           id.ToString(), version, result.version, metric("numRestoredRows"), metric("numRemovedRows"));
  return kExitOk;
}

// ---------------------------------------------------------------------------
// snapshot

ordered_json SnapshotJson(const SnapshotInfo& info) {
  return ordered_json{{"file", info.file_name},
                      {"epoch", info.epoch},
                      {"version", info.version},
                      {"timestamp", FormatTimestamp(info.timestamp_us)},
                      {"bytes", info.bytes}};
}

int RunSnapshot(const std::string& dir, bool list, bool as_json) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, &store, list ? StoreAccess::kRead : StoreAccess::kWrite);
  std::vector<SnapshotInfo> snapshots;
  if (s.ok() && list) s = store->ListSnapshots(&snapshots);
  if (s.ok() && !list) {
    SnapshotInfo taken;
    ProgressBar bar("snapshot", "entries", ShowProgress());
    s = store->TakeSnapshot(&taken, [&](uint64_t entries) { bar.Update(entries); });
    bar.Finish();
    snapshots.push_back(taken);
  }
  if (!s.ok()) return ReportError(s);
  if (as_json) {
    ordered_json out = ordered_json::array();
    for (const SnapshotInfo& info : snapshots) out.push_back(SnapshotJson(info));
    std::cout << JsonText(list ? out : out[0], 2) << "\n";
    return kExitOk;
  }
  if (!list) {
    const SnapshotInfo& info = snapshots[0];
    std::cout << fmt::format("snapshot {} at version {}: {} ({} bytes)\n", info.file_name, info.version,
                             FormatBytes(info.bytes), FormatCount(info.bytes));
    return kExitOk;
  }
  Table table({"file", "epoch", "version", "timestamp (UTC)", "bytes"});
  for (const SnapshotInfo& info : snapshots) {
    table.AddRow({info.file_name, std::to_string(info.epoch), std::to_string(info.version),
                  info.timestamp_us == 0 ? "-" : FormatTimestamp(info.timestamp_us), FormatCount(info.bytes)});
  }
  std::cout << table.ToString();
  return kExitOk;
}

// ---------------------------------------------------------------------------
// vacuum

struct VacuumArgs {
  std::string dir;
  std::string retain;  // empty: the store's retention
  bool dry_run = false;
  bool force = false;
  bool as_json = false;
};

void PrintVacuum(const VacuumReport& r, bool dry_run) {
  std::cout << fmt::format("{} {} file(s), {} bytes ({}): {} log segment(s), {} snapshot(s), {} archived file(s)\n",
                           dry_run ? "would delete" : "deleted", r.paths.size(), FormatCount(r.bytes),
                           FormatBytes(r.bytes), r.log_segments, r.snapshots, r.archive_files);
  std::cout << fmt::format("floor version {} (held by {})\n", r.floor_version, r.held_by);
  if (r.snapshot_taken) std::cout << (dry_run ? "a base snapshot would be taken\n" : "a base snapshot was taken\n");
  if (r.history_runs != 0)
    std::cout << fmt::format("{} history index run(s) dropped (one per commit and table)\n", r.history_runs);
  if (r.state_compacted) {
    std::cout << fmt::format("state file compacted from {} to {}\n", FormatBytes(r.state_bytes_before),
                             FormatBytes(r.state_bytes_after));
  }
  for (const std::string& path : r.paths) std::cout << "  " << path << "\n";
}

int RunVacuum(const VacuumArgs& args) {
  VacuumOptions options;
  options.dry_run = args.dry_run;
  options.force = args.force;
  Status s;
  if (!args.retain.empty()) {
    uint64_t retain = 0;
    s = ParseDuration(args.retain, &retain);
    options.retain_us = retain;
  }
  std::unique_ptr<Store> store;
  if (s.ok()) s = OpenStore(args.dir, &store);
  VacuumReport report;
  ProgressBar bar("vacuum", "files", ShowProgress() && !args.dry_run);
  options.on_progress = [&](uint64_t done, uint64_t total) { bar.Update(done, total); };
  if (s.ok()) s = store->Vacuum(options, &report);
  bar.Finish();
  if (s.IsInvalidArgument() && !args.force) s = WithHint(s, "use --force");
  if (!s.ok()) return ReportError(s);
  if (!args.as_json) {
    PrintVacuum(report, args.dry_run);
    return kExitOk;
  }
  ordered_json out{{"dry_run", args.dry_run},
                   {"floor_version", report.floor_version},
                   {"held_by", report.held_by},
                   {"bytes", report.bytes},
                   {"log_segments", report.log_segments},
                   {"snapshots", report.snapshots},
                   {"archive_files", report.archive_files},
                   {"history_runs", report.history_runs},
                   {"state_compacted", report.state_compacted},
                   {"state_bytes_before", report.state_bytes_before},
                   {"state_bytes_after", report.state_bytes_after},
                   {"snapshot_taken", report.snapshot_taken},
                   {"paths", report.paths}};
  std::cout << JsonText(out, 2) << "\n";
  return kExitOk;
}

// ---------------------------------------------------------------------------
// Registration

void AddTableArgs(CLI::App* command, std::string* dir, std::string* table) {
  command->add_option("dir", *dir, "Store directory")->required();
  command->add_option("table", *table, "Table: catalog.schema.table")->required();
}

void RegisterRead(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReadArgs>();
  CLI::App* read = app.add_subcommand("read", "Read a table, now or as of a version or timestamp");
  AddTableArgs(read, &args->dir, &args->table);
  CLI::Option* version = read->add_option("--version", args->version, "As of this version");
  read->add_option("--timestamp", args->timestamp,
                   "As of the latest commit at or before 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC)")
      ->excludes(version);
  read->add_option("--format", args->format, "table (default), json (JSON lines) or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  read->add_option("--limit", args->limit, "At most this many rows (0: all)");
  read->add_option("--archive", args->archive,
                   "Read a history a rewind cut: this cut of the archive (its name, see spool archive), at --version");
  read->callback([=] {
    args->has_version = version->count() > 0;
    *exit_code = RunRead(*args);
  });
}

void RegisterHistoryAndChanges(CLI::App& app, int* exit_code) {
  struct Args {
    std::string dir, table, format = "table", plot;
    uint64_t limit = 0, from = 0, to = 0, version = 0;
    bool as_json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* history = app.add_subcommand("history", "Every retained commit of a table, newest first");
  history->add_option("dir", args->dir, "Store directory")->required();
  history->add_option("table", args->table, "Table: catalog.schema.table (with --plot, optional: the whole store)");
  history->add_option("--limit", args->limit, "At most this many commits (0: all)");
  CLI::Option* history_json = history->add_flag("--json", args->as_json, "JSON output");
  history
      ->add_option("--plot", args->plot,
                   "Draw the timeline into this SVG file: the commits (operation, rows), rewind points, and the "
                   "histories rewinds cut")
      ->excludes(history_json);
  history->callback([=] { *exit_code = RunHistory(args->dir, args->table, args->limit, args->as_json, args->plot); });

  CLI::App* changes = app.add_subcommand("changes", "The change data feed of versions FROM to TO, inclusive");
  AddTableArgs(changes, &args->dir, &args->table);
  changes->add_option("--from", args->from, "First version")->required();
  changes->add_option("--to", args->to, "Last version (default: the newest)");
  changes->add_option("--format", args->format, "table (default), json (JSON lines) or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  changes->callback([=] { *exit_code = RunChanges(args->dir, args->table, args->from, args->to, args->format); });

  CLI::App* restore = app.add_subcommand("restore", "Bring a table back to a version with one RESTORE commit");
  AddTableArgs(restore, &args->dir, &args->table);
  restore->add_option("--version", args->version, "The version to restore")->required();
  restore->callback([=] { *exit_code = RunRestore(args->dir, args->table, args->version); });
}

void RegisterUpkeep(CLI::App& app, int* exit_code) {
  struct SnapshotArgs {
    std::string dir;
    bool list = false, as_json = false;
  };
  auto snapshot_args = std::make_shared<SnapshotArgs>();
  CLI::App* snapshot = app.add_subcommand("snapshot", "Take a snapshot of the store's state (or --list them)");
  snapshot->add_option("dir", snapshot_args->dir, "Store directory")->required();
  snapshot->add_flag("--list", snapshot_args->list, "List the snapshots instead");
  snapshot->add_flag("--json", snapshot_args->as_json, "JSON output");
  snapshot->callback(
      [=] { *exit_code = RunSnapshot(snapshot_args->dir, snapshot_args->list, snapshot_args->as_json); });

  auto args = std::make_shared<VacuumArgs>();
  CLI::App* vacuum = app.add_subcommand("vacuum", "Delete history older than the retention window");
  vacuum->add_option("dir", args->dir, "Store directory")->required();
  vacuum->add_option("--retain", args->retain, "Retention window, e.g. 168h, 7d, 30m (default: the store's, 7d)");
  vacuum->add_flag("--dry-run", args->dry_run, "List what would be deleted; delete nothing");
  vacuum->add_flag("--force", args->force, "Allow a window below the safety minimum (7d)");
  vacuum->add_flag("--json", args->as_json, "JSON output");
  vacuum->callback([=] { *exit_code = RunVacuum(*args); });
}

}  // namespace

void RegisterReadCommands(CLI::App& app, int* exit_code) {
  RegisterRead(app, exit_code);
  RegisterHistoryAndChanges(app, exit_code);
  RegisterUpkeep(app, exit_code);
}

}  // namespace spool::cli
