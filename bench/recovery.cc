#include "recovery.h"

#include <unistd.h>

#include <iostream>

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

// One repetition for one engine with a log: write and kill, then reopen.
void RunW7Once(const BenchConfig& config, const std::string& name, int rep, Results* results) {
  const uint64_t payload_bytes = config.Scaled(kW7PayloadBytes);
  const std::string dir = config.RunDir(kW7, name, rep);
  FreshDir(dir);
  SyncAll();
  const KilledWriter writer = RunKilledWriter(config.self_path, name, dir, payload_bytes);
  std::unique_ptr<Engine> engine = MakeEngine(name, WholeLogOptions(payload_bytes));
  const double log_bytes = static_cast<double>(FileBytes(dir, engine->log_file_suffix()));
  const RecordSet last(0, writer.records - 1, 1);
  SyncAll();
  Stopwatch watch;
  Expect(engine->Open(dir), name + " reopen");
  Expect(engine->ReadBack(last[0]), name + " read after reopen");
  const double seconds = watch.Seconds();
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(dir);
  results->Add(kW7, name, metric::kReopenS, seconds);
  results->Add(kW7, name, metric::kLogMB, log_bytes / kBytesPerMB);
  results->Add(kW7, name, metric::kRecoveredMBPerS, log_bytes / kBytesPerMB / seconds);
  results->Add(kW7, name, metric::kWriterPeakRssMB, static_cast<double>(writer.peak_rss_bytes) / kBytesPerMB);
  std::cerr << fmt::format("w7 {} rep {}/{}: reopen {:.3f} s, log {:.0f} MB\n", name, rep, config.reps, seconds,
                           log_bytes / kBytesPerMB);
}

}  // namespace

void RunW7(const BenchConfig& config, int rep, Results* results) {
  for (const std::string& name : config.engines) {
    std::unique_ptr<Engine> probe = MakeEngine(name, EngineOptions{});
    if (probe == nullptr) throw BenchError("unknown engine " + name);
    if (probe->log_file_suffix().empty()) {
      results->SetNote(kW7, name, kNoLogNote);
      continue;
    }
    RunW7Once(config, name, rep, results);
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
