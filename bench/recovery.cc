#include "recovery.h"

#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "check.h"
#include "engine.h"
#include "files.h"
#include "killed_writer.h"
#include "records.h"
#include "stopwatch.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr char kNoLogNote[] = "(no log)";

EngineOptions WholeLogOptions(uint64_t payload_bytes) {
  EngineOptions options;
  options.hold_whole_log = true;
  options.log_bytes = payload_bytes;
  return options;
}

// What one write, kill and reopen measured.
struct Reopen {
  double seconds = 0;
  double log_bytes = 0;
  double writer_rss_bytes = 0;
};

// One engine with a log: `payload_bytes` written and killed, then the
// reopen (timed) and a read of the last record (checked).
Reopen WriteKillReopen(const BenchConfig& config, const std::string& name, const std::string& dir,
                       uint64_t payload_bytes) {
  FreshDir(dir);
  SyncAll();
  const KilledWriter writer = RunKilledWriter(config.self_path, name, dir, payload_bytes);
  std::unique_ptr<Engine> engine = MakeEngine(name, WholeLogOptions(payload_bytes));
  Reopen reopen;
  reopen.log_bytes = static_cast<double>(FileBytes(dir, engine->log_file_suffix()));
  reopen.writer_rss_bytes = static_cast<double>(writer.peak_rss_bytes);
  const RecordSet last(0, writer.records - 1, 1);
  SyncAll();
  Stopwatch watch;
  Expect(engine->Open(dir), name + " reopen");
  Expect(engine->ReadBack(last[0]), name + " read after reopen");
  reopen.seconds = watch.Seconds();
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(dir);
  return reopen;
}

void AddReopen(const Results::Place& place, const std::string& name, const Reopen& reopen, Results* results) {
  results->AddTo(place, name, metric::kReopenS, reopen.seconds);
  results->AddTo(place, name, metric::kLogMB, reopen.log_bytes / kBytesPerMB);
  results->AddTo(place, name, metric::kRecoveredMBPerS, reopen.log_bytes / kBytesPerMB / reopen.seconds);
  results->AddTo(place, name, metric::kWriterPeakRssMB, reopen.writer_rss_bytes / kBytesPerMB);
}

// One repetition for one engine with a log, with `multiplier` × W7's
// bytes: recorded as W7's (at ×1, when W7 runs) and as the series' point.
void RunW7Once(const BenchConfig& config, const std::string& name, int rep, uint64_t multiplier, Results* results) {
  const std::string row = multiplier == 1 ? name : fmt::format("{}-x{}", name, multiplier);
  const Reopen reopen =
      WriteKillReopen(config, name, config.RunDir(kW7, row, rep), config.Scaled(kW7PayloadBytes) * multiplier);
  if (multiplier == 1 && config.Runs(kW7)) AddReopen(Results::Place{kW7, std::nullopt}, name, reopen, results);
  if (config.Runs(kW7Log)) {
    const Results::Point point{kLogPoint, static_cast<double>(multiplier)};
    AddReopen(Results::Place{kW7Log, point}, name, reopen, results);
  }
  const std::string size = multiplier == 1 ? "" : fmt::format(" ×{} the bytes", multiplier);
  std::cerr << fmt::format("w7 {}{} rep {}/{}: reopen {:.3f} s, log {:.0f} MB\n", name, size, rep, config.reps,
                           reopen.seconds, reopen.log_bytes / kBytesPerMB);
}

}  // namespace

void RunW7(const BenchConfig& config, int rep, Results* results) {
  for (const std::string& name : config.engines) {
    std::unique_ptr<Engine> probe = MakeEngine(name, EngineOptions{});
    if (probe == nullptr) throw BenchError("unknown engine " + name);
    if (probe->log_file_suffix().empty()) {
      if (config.Runs(kW7)) results->SetNote(kW7, name, kNoLogNote);
      continue;
    }
    RunW7Once(config, name, rep, 1, results);
  }
  // The series' larger log: Spool's alone (recovery.h).
  if (config.Runs(kW7Log) && config.RunsEngine(kSpool)) {
    RunW7Once(config, std::string(kSpool), rep, kW7LogMultiplier, results);
  }
}

void RunW7Writer(const std::string& name, const std::string& dir, uint64_t payload_bytes) {
  std::unique_ptr<Engine> engine = MakeEngine(name, WholeLogOptions(payload_bytes));
  if (engine == nullptr) throw BenchError("unknown engine " + name);
  Expect(engine->Open(dir), name + " open");
  uint64_t records = 0;
  while (records * kRecordBytes < payload_bytes) {
    const RecordSet batch(0, records, kW7BatchRecords);
    Expect(engine->Commit(batch.Slice(0, batch.size())), name + " commit");
    records += batch.size();
  }
  const std::string report = fmt::format("written {}\n", records);
  ExpectSys(::write(STDOUT_FILENO, report.data(), report.size()) == static_cast<ssize_t>(report.size()),
            "write report");
  // Wait for SIGKILL: the store is never closed.
  while (true) ::pause();
}

}  // namespace spool::bench
