// `spool log inspect | verify | dump | demo`.
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "commands.h"
#include "json_text.h"
#include "log_demo.h"
#include "spool/txnlog/log.h"

namespace spool::cli {
namespace {

using nlohmann::json;

Status OpenReadOnly(const std::string& dir, std::unique_ptr<Log>* log, LogRecoveryReport* report) {
  LogOptions options;
  options.read_only = true;
  return Log::Open(options, dir, log, report);
}

json SegmentJson(const LogSegmentInfo& s) {
  return json{{"file", s.file_name},
              {"number", s.number},
              {"epoch", s.epoch},
              {"first_version", s.first_version},
              {"last_version", s.last_version},
              {"data_end_bytes", s.data_end_bytes},
              {"file_size_bytes", s.file_size_bytes},
              {"previous_segment", s.previous_segment},
              {"previous", {{"epoch", s.previous.epoch}, {"version", s.previous.version}}}};
}

json ArchiveJson(const std::string& dir) {
  json out = json::array();
  Env* env = Env::Default();
  const std::string root = JoinPath(dir, "archive");
  std::vector<std::string> cuts;
  if (!env->ListDir(root, &cuts).ok()) return out;
  std::sort(cuts.begin(), cuts.end());
  for (const std::string& cut : cuts) {
    std::vector<std::string> files;
    if (!env->ListDir(JoinPath(root, cut), &files).ok()) continue;
    uint64_t bytes = 0;
    for (const std::string& f : files) {
      uint64_t size = 0;
      if (env->GetFileSize(JoinPath(JoinPath(root, cut), f), &size).ok()) bytes += size;
    }
    const bool complete = std::find(files.begin(), files.end(), "COMPLETE") != files.end();
    out.push_back(json{{"name", cut}, {"files", files.size()}, {"bytes", bytes}, {"complete", complete}});
  }
  return out;
}

void PrintInspect(const std::string& dir, Log* log, const LogRecoveryReport& report) {
  const LogPosition oldest = log->Oldest();
  const LogPosition newest = log->Newest();
  std::cout << fmt::format("log        {}\nstore id   {:016x}\nepoch      {}\nretained   versions {} .. {}\n", dir,
                           log->StoreId(), log->CurrentEpoch(), oldest.version, newest.version);
  if (report.torn_tail_bytes > 0) {
    std::cout << fmt::format("torn tail  {} past the last record (cut at the next writable open)\n",
                             FormatBytes(report.torn_tail_bytes));
  }
  std::cout << "\n";
  Table segments({"segment", "epoch", "versions", "data", "file size", "follows"});
  for (const LogSegmentInfo& s : log->Segments()) {
    const std::string versions = s.last_version < s.first_version
                                     ? fmt::format("(empty, next {})", s.first_version)
                                     : fmt::format("{} .. {}", s.first_version, s.last_version);
    const std::string follows =
        s.previous_segment == 0 ? "-"
                                : fmt::format("#{} at {}/{}", s.previous_segment, s.previous.epoch, s.previous.version);
    segments.AddRow({s.file_name, std::to_string(s.epoch), versions, FormatBytes(s.data_end_bytes),
                     FormatBytes(s.file_size_bytes), follows});
  }
  std::cout << segments.ToString() << "\n";
  Table epochs({"epoch", "first version"});
  for (const LogEpochStart& e : log->EpochHistory())
    epochs.AddRow({std::to_string(e.epoch), std::to_string(e.first_version)});
  std::cout << epochs.ToString();
  json archive = ArchiveJson(dir);
  if (!archive.empty()) {
    Table cuts({"archived cut", "files", "bytes", "complete"});
    for (const json& a : archive) {
      cuts.AddRow({a["name"].get<std::string>(), std::to_string(a["files"].get<size_t>()),
                   FormatBytes(a["bytes"].get<uint64_t>()), a["complete"].get<bool>() ? "yes" : "no"});
    }
    std::cout << "\n" << cuts.ToString();
  }
}

int RunInspect(const std::string& dir, bool as_json) {
  std::unique_ptr<Log> log;
  LogRecoveryReport report;
  Status s = OpenReadOnly(dir, &log, &report);
  if (!s.ok()) return ReportError(s);
  if (!as_json) {
    PrintInspect(dir, log.get(), report);
    return kExitOk;
  }
  json out{{"dir", dir},
           {"store_id", fmt::format("{:016x}", log->StoreId())},
           {"epoch", log->CurrentEpoch()},
           {"oldest", {{"epoch", log->Oldest().epoch}, {"version", log->Oldest().version}}},
           {"newest", {{"epoch", log->Newest().epoch}, {"version", log->Newest().version}}},
           {"torn_tail_bytes", report.torn_tail_bytes},
           {"segments", json::array()},
           {"epochs", json::array()},
           {"archive", ArchiveJson(dir)}};
  for (const LogSegmentInfo& seg : log->Segments()) out["segments"].push_back(SegmentJson(seg));
  for (const LogEpochStart& e : log->EpochHistory()) {
    out["epochs"].push_back(json{{"epoch", e.epoch}, {"first_version", e.first_version}});
  }
  std::cout << JsonText(out, 2) << "\n";
  return kExitOk;
}

int RunLogVerify(const std::string& dir, bool as_json) {
  uint64_t records = 0;
  Status s = VerifyLog(Env::Default(), dir, &records);
  if (as_json) {
    std::cout << JsonText(
                     json{
                         {"dir", dir}, {"intact", s.ok()}, {"records", records}, {"error", s.ok() ? "" : s.ToString()}},
                     2)
              << "\n";
    return s.ok() ? kExitOk : (s.IsCorruption() ? kExitFailure : kExitError);
  }
  if (!s.ok()) {
    std::cout << fmt::format("NOT INTACT: {} records verified before: {}\n", FormatCount(records), s.ToString());
    return s.IsCorruption() ? kExitFailure : kExitError;
  }
  std::cout << fmt::format("intact: {} records verified (checksums, epochs, versions, payloads)\n",
                           FormatCount(records));
  return kExitOk;
}

json EntryJson(const LogEntry& e) {
  return json{{"epoch", e.position.epoch},          {"version", e.position.version},
              {"timestamp_us", e.timestamp_us},     {"timestamp", FormatTimestamp(e.timestamp_us)},
              {"operation", e.operation},           {"body_bytes", e.body.size()},
              {"body_preview", Preview(e.body, 64)}};
}

// Prints commits as a table or a JSON array, `from` and `limit` applied.
class DumpPrinter {
 public:
  DumpPrinter(uint64_t from, uint64_t limit, bool as_json) : from_(from), limit_(limit), as_json_(as_json) {
    if (as_json_) std::cout << "[";
  }
  // Returns false once the limit is reached.
  bool Add(const LogEntry& entry) {
    if (entry.position.version < from_) return true;
    if (limit_ != 0 && shown_ >= limit_) return false;
    if (as_json_) {
      std::cout << (shown_ == 0 ? "\n  " : ",\n  ") << JsonText(EntryJson(entry));
    } else {
      table_.AddRow({std::to_string(entry.position.epoch), std::to_string(entry.position.version),
                     FormatTimestamp(entry.timestamp_us), entry.operation, std::to_string(entry.body.size()),
                     Preview(entry.body, 40)});
    }
    ++shown_;
    return true;
  }
  void Finish() { std::cout << (as_json_ ? "\n]\n" : table_.ToString()); }

 private:
  uint64_t from_;
  uint64_t limit_;
  bool as_json_;
  uint64_t shown_ = 0;
  Table table_{{"epoch", "version", "timestamp (UTC)", "operation", "bytes", "body"}};
};

int RunDump(const std::string& dir, uint64_t from, uint64_t limit, const std::string& archive, bool as_json) {
  if (!archive.empty()) {
    const std::string cut_dir = JoinPath(JoinPath(dir, "archive"), archive);
    if (!Env::Default()->FileExists(cut_dir)) return ReportError(Status::NotFound("no archived cut " + cut_dir));
    DumpPrinter printer(from, limit, as_json);
    Status s = ScanArchivedCut(Env::Default(), cut_dir, [&](const LogEntry& entry) { return printer.Add(entry); });
    printer.Finish();
    return s.ok() ? kExitOk : ReportError(s);
  }
  std::unique_ptr<Log> log;
  LogRecoveryReport report;
  Status s = OpenReadOnly(dir, &log, &report);
  if (!s.ok()) return ReportError(s);
  std::unique_ptr<LogIterator> it;
  s = log->NewIterator(from, &it);
  if (!s.ok()) return ReportError(s);
  DumpPrinter printer(from, limit, as_json);
  LogEntry entry;
  while (it->Next(&entry) && printer.Add(entry)) {
  }
  printer.Finish();
  return it->status().ok() ? kExitOk : ReportError(it->status());
}

}  // namespace

void RegisterLogCommands(CLI::App& app, int* exit_code) {
  CLI::App* log = app.add_subcommand("log", "The append-only transaction log: demo, inspect, verify, dump");
  log->require_subcommand(1);

  auto demo_options = std::make_shared<LogDemoOptions>();
  CLI::App* demo = log->add_subcommand("demo", "Write commits, cut the power, recover, show what survived");
  demo->add_option("--dir", demo_options->dir, "Directory for the store (default: a new temporary one)");
  demo->add_option("--commits", demo_options->commits, "Durable commits before the power cut")
      ->check(CLI::Range(1, 10'000'000));
  demo->add_option("--writers", demo_options->writers, "Concurrent writer threads")->check(CLI::Range(1, 64));
  demo->add_option("--seed", demo_options->seed, "Seed for where the power is cut");
  demo->add_flag("--keep", demo_options->keep, "Keep the directory afterwards");
  demo->callback([=] { *exit_code = RunLogDemo(*demo_options); });

  auto dir = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* inspect = log->add_subcommand("inspect", "Segments, positions, epochs, sizes and archived cuts");
  inspect->add_option("dir", *dir, "Log directory")->required();
  inspect->add_flag("--json", *as_json, "JSON output");
  inspect->callback([=] { *exit_code = RunInspect(*dir, *as_json); });

  CLI::App* verify = log->add_subcommand("verify", "Check every record; exit 0 when intact, 1 when corrupt");
  verify->add_option("dir", *dir, "Log directory")->required();
  verify->add_flag("--json", *as_json, "JSON output");
  verify->callback([=] { *exit_code = RunLogVerify(*dir, *as_json); });

  auto from = std::make_shared<uint64_t>(0);
  auto limit = std::make_shared<uint64_t>(0);
  auto archive = std::make_shared<std::string>();
  CLI::App* dump = log->add_subcommand("dump", "Print commits in version order");
  dump->add_option("dir", *dir, "Log directory")->required();
  dump->add_option("--from", *from, "First version (default: the oldest retained)");
  dump->add_option("--limit", *limit, "At most this many commits (0: all)");
  dump->add_option("--archive", *archive, "Dump an archived cut instead (a name from inspect, e.g. epoch-000002)");
  dump->add_flag("--json", *as_json, "JSON output (an array of commits)");
  dump->callback([=] { *exit_code = RunDump(*dir, *from, *limit, *archive, *as_json); });
}

}  // namespace spool::cli
