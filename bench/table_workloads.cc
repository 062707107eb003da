#include "table_workloads.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "check.h"
#include "commit_workloads.h"
#include "engine.h"
#include "files.h"
#include "io_counters.h"
#include "records.h"
#include "stats.h"
#include "stopwatch.h"
#include "table_model.h"
#include "units.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

// The rewind, timed, then a check that the table reads as of the point.
RewindTimes TimedRewind(VersionedEngine& engine, const Digest& at_point, double* total_s) {
  RewindTimes times;
  Stopwatch watch;
  Expect(engine.Rewind(&times), std::string(engine.name()) + " rewind");
  *total_s = watch.Seconds();
  Digest digest;
  Expect(engine.ReadLatest(DigestInto(&digest)), std::string(engine.name()) + " read after rewind");
  CheckRead(digest, at_point, engine.name(), "the read after the rewind");
  return times;
}

// Bytes written ÷ payload, both ways (io_counters.h), less `excluded`.
void AddWritten(Results* results, const std::string& workload, const std::string& row, const WriteCounters& written,
                const WriteCounters& excluded, double payload) {
  results->Add(workload, row, metric::kWrittenPerPayload,
               static_cast<double>(written.syscall_bytes - excluded.syscall_bytes) / payload);
  if (written.device_bytes) {
    const uint64_t device = *written.device_bytes - std::min(*written.device_bytes, excluded.device_bytes.value_or(0));
    results->Add(workload, row, metric::kDeviceWrittenPerPayload, static_cast<double>(device) / payload);
  }
}

void AddRewind(Results* results, const std::string& workload, const std::string& row, double total_s,
               const RewindTimes& times) {
  results->Add(workload, row, metric::kRewindS, total_s);
  results->Add(workload, row, metric::kRewindRestoreS, times.restore_s);
  results->Add(workload, row, metric::kRewindCloseS, times.close_s);
  results->Add(workload, row, metric::kRewindOpenS, times.open_s);
}

// What a point of W6's history series measured: W5's figures on a store
// with more versions, and the rewind.
struct HistoryPoint {
  double as_of_s = 0;
  double latest_s = 0;
  double disk_bytes = 0;
  double payload_bytes = 0;
  double rewind_s = 0;
};

// A point of W6's history series, with `multiplier` × W6's history after
// the point.
void AddHistoryPoint(Results* results, const std::string& name, uint64_t multiplier, uint64_t after,
                     const HistoryPoint& measured) {
  const Results::Point point{kHistoryPoint, static_cast<double>(multiplier)};
  results->AddAt(kW6History, name, point, metric::kAsOfReadS, measured.as_of_s);
  results->AddAt(kW6History, name, point, metric::kLatestReadS, measured.latest_s);
  results->AddAt(kW6History, name, point, metric::kDiskMB, measured.disk_bytes / kBytesPerMB);
  results->AddAt(kW6History, name, point, metric::kDiskPerPayload, measured.disk_bytes / measured.payload_bytes);
  results->AddAt(kW6History, name, point, metric::kRewindS, measured.rewind_s);
  results->AddAt(kW6History, name, point, metric::kVersionsAfterPoint, static_cast<double>(after));
}

struct Expected {
  Digest at_point;
  Digest latest;
};

// W5's reads on an open store holding the whole history: one untimed
// (a warm-up), then kReadRepeats of each kind, alternating; medians.
struct TableReads {
  double as_of_s = 0;
  double latest_s = 0;
};

TableReads TimedReads(VersionedEngine& engine, const TableShape& shape, const Expected& expected) {
  const std::string name(engine.name());
  Digest warm;
  Expect(engine.ReadLatest(DigestInto(&warm)), name + " warm-up read");
  CheckRead(warm, expected.latest, name, "the warm-up read");
  std::vector<double> as_of_s, latest_s;
  const std::string as_of_what = fmt::format("the read as of version {}", shape.point_version());
  for (int i = 0; i < kReadRepeats; ++i) {
    as_of_s.push_back(TimedRead(name, as_of_what, expected.at_point, [&](const RowVisitor& visit) {
      return engine.ReadAsOf(shape.point_version(), visit);
    }));
    latest_s.push_back(TimedRead(name, "the read of the latest version", expected.latest,
                                 [&](const RowVisitor& visit) { return engine.ReadLatest(visit); }));
  }
  return TableReads{Summarize(as_of_s).median, Summarize(latest_s).median};
}

// W5's table-size series: `name`'s reads with `shape`'s rows.
void RunW5RowsOnce(const BenchConfig& config, const std::string& name, int rep, const TableShape& shape,
                   Results* results) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  if (engine == nullptr) return;  // no table variant (spool-group)
  const std::string run_dir = config.RunDir(kW5RowsSeries, name + "-" + std::to_string(shape.rows), rep);
  BuildAndReopen(*engine, shape, kW5Updates, run_dir, Point::kNone);
  const TableReads reads =
      TimedReads(*engine, shape, Expected{ModelDigest(shape, shape.point), ModelDigest(shape, kW5Updates)});
  const Results::Point point{kRowsPoint, static_cast<double>(shape.rows)};
  results->AddAt(kW5RowsSeries, name, point, metric::kAsOfReadS, reads.as_of_s);
  results->AddAt(kW5RowsSeries, name, point, metric::kLatestReadS, reads.latest_s);
  std::cerr << fmt::format("w5 {} {} rows rep {}/{}: as-of read {:.4f} s, latest read {:.4f} s\n", name, shape.rows,
                           rep, config.reps, reads.as_of_s, reads.latest_s);
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
}

// W5 and W6 on one engine.
void RunW5W6Engine(const BenchConfig& config, const std::string& name, int rep, const TableShape& shape,
                   const Expected& expected, Results* results) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  if (engine == nullptr) return;  // no table variant (spool-group)
  const std::string run_dir = config.RunDir(kW5, name, rep);
  const std::string db = run_dir + "/db";
  FreshDir(run_dir);
  FreshDir(db);
  SyncAll();
  const WriteCounters written_before = ReadWriteCounters(db);
  Expect(engine->Open(db), name + " open");
  const Built built = BuildTable(*engine, shape, kW5Updates, run_dir + "/point");
  Expect(engine->Close(), name + " close");
  SyncAll();
  const WriteCounters written = WrittenBetween(written_before, ReadWriteCounters(db));
  const double disk = static_cast<double>(DiskBytes(db) - engine->RewindPointBytes());
  const double payload = shape.PayloadBytes(kW5Updates);

  Expect(engine->Open(db), name + " reopen");
  const TableReads reads = TimedReads(*engine, shape, expected);
  const double as_of = reads.as_of_s, latest = reads.latest_s;
  if (config.Runs(kW5)) {
    results->Add(kW5, name, metric::kAsOfReadS, as_of);
    results->Add(kW5, name, metric::kLatestReadS, latest);
    results->Add(kW5, name, metric::kDiskMB, disk / kBytesPerMB);
    results->Add(kW5, name, metric::kDiskPerPayload, disk / payload);
    AddWritten(results, kW5, name, written, built.point_written, payload);
    results->Add(kW5, name, metric::kLoadRecordsPerS, static_cast<double>(shape.rows) / built.load_s);
    results->Add(kW5, name, metric::kUpdateCommitsPerS, static_cast<double>(kW5Updates) / built.update_s);
  }
  std::cerr << fmt::format("w5 {} rep {}/{}: as-of v{} read {:.4f} s, latest read {:.4f} s, {:.1f} MB on disk ({})\n",
                           name, rep, config.reps, shape.point_version(), as_of, latest, disk / kBytesPerMB,
                           DiskBreakdown(db));

  if (config.Runs(kW6) || config.Runs(kW6History)) {
    double total_s = 0;
    const RewindTimes times = TimedRewind(*engine, expected.at_point, &total_s);
    if (config.Runs(kW6)) AddRewind(results, kW6, name, total_s, times);
    if (config.Runs(kW6)) {
      results->Add(kW6, name, metric::kPointS, built.point_s);
      results->Add(kW6, name, metric::kPointWrittenMB,
                   static_cast<double>(built.point_written.syscall_bytes) / kBytesPerMB);
    }
    if (config.Runs(kW6History)) {
      AddHistoryPoint(results, name, 1, kW5Updates - shape.point, HistoryPoint{as_of, latest, disk, payload, total_s});
    }
    std::cerr << fmt::format("w6 {} rep {}/{}: rewind to v{} {:.4f} s\n", name, rep, config.reps, shape.point_version(),
                             total_s);
  }
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
}

// W6's history series: `name` with `after` update commits after the point
// (`multiplier` × W6's).
void RunW6HistoryOnce(const BenchConfig& config, const std::string& name, int rep, const TableShape& shape,
                      const Digest& at_point, uint64_t after, uint64_t multiplier, Results* results) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  if (engine == nullptr) return;  // no table variant (spool-group)
  const std::string run_dir = config.RunDir(kW6History, name + "-x" + std::to_string(multiplier), rep);
  // As W5's store: closed (Spool's state flushed), synced, reopened.
  const Built built = BuildAndReopen(*engine, shape, shape.point + after, run_dir, Point::kMark);
  HistoryPoint measured;
  measured.disk_bytes = static_cast<double>(DiskBytes(run_dir + "/db") - engine->RewindPointBytes());
  measured.payload_bytes = shape.PayloadBytes(shape.point + after);
  measured.as_of_s = TimedRead(name, "the read as of the point", at_point,
                               [&](const RowVisitor& visit) { return engine->ReadAsOf(shape.point_version(), visit); });
  measured.latest_s = TimedRead(name, "the read of the latest version", ModelDigest(shape, shape.point + after),
                                [&](const RowVisitor& visit) { return engine->ReadLatest(visit); });
  const RewindTimes times = TimedRewind(*engine, at_point, &measured.rewind_s);
  AddHistoryPoint(results, name, multiplier, after, measured);
  std::cerr << fmt::format(
      "w6 {} history ×{} rep {}/{}: {} commits after v{} (built in {:.1f} s), {:.1f} MB on disk, "
      "as-of read {:.4f} s, latest read {:.4f} s, rewind {:.4f} s (restore {:.4f}, close {:.4f}, reopen {:.4f})\n",
      name, multiplier, rep, config.reps, after, shape.point_version(), built.load_s + built.update_s,
      measured.disk_bytes / kBytesPerMB, measured.as_of_s, measured.latest_s, measured.rewind_s, times.restore_s,
      times.close_s, times.open_s);
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
}

// One keyed-W3 run: open, commit every batch (timed), close (timed
// separately), then bytes written and on disk.
struct W3Run {
  std::function<Status(const std::string& dir)> open;
  std::function<Status(uint64_t batch, std::span<const Record> records)> commit;
  std::function<Status()> close;
};

void RunW3KeyedOnce(const BenchConfig& config, const std::string& row, int rep, const RecordSet& records,
                    const W3Run& run, Results* results) {
  const std::string dir = config.RunDir(kW3Keyed, row, rep);
  FreshDir(dir);
  SyncAll();
  const WriteCounters written_before = ReadWriteCounters(dir);
  Expect(run.open(dir), row + " open");
  Stopwatch watch;
  for (uint64_t b = 0; b * kW3BatchRecords < records.size(); ++b) {
    Expect(run.commit(b, records.Slice(b * kW3BatchRecords, kW3BatchRecords)), row + " commit");
  }
  const double seconds = watch.Seconds();
  Expect(run.close(), row + " close");
  const double with_close = watch.Seconds();
  SyncAll();
  const WriteCounters written = WrittenBetween(written_before, ReadWriteCounters(dir));
  const double payload = static_cast<double>(records.size() * kRecordBytes);
  const double n = static_cast<double>(records.size());
  results->Add(kW3Keyed, row, metric::kRecordsPerS, n / seconds);
  results->Add(kW3Keyed, row, metric::kRecordsPerSInclClose, n / with_close);
  results->Add(kW3Keyed, row, metric::kPayloadMBPerS, payload / kBytesPerMB / seconds);
  results->Add(kW3Keyed, row, metric::kDiskPerPayload, static_cast<double>(DiskBytes(dir)) / payload);
  AddWritten(results, kW3Keyed, row, written, WriteCounters{}, payload);
  std::cerr << fmt::format("w3k {} rep {}/{}: {:.0f} records/s ({:.0f} with close)\n", row, rep, config.reps,
                           n / seconds, n / with_close);
  RemoveDir(dir);
}

}  // namespace

uint64_t W5PointVersion(const BenchConfig& config) { return ShapeOf(config).point_version(); }

void RunW3Keyed(const BenchConfig& config, int rep, Results* results) {
  const RecordSet records(0, 0, config.Scaled(kW3Records));
  std::vector<std::string> rows;
  if (config.RunsEngine(kSpool)) rows = {std::string(kSpool), kSpoolLogRow};
  for (const std::string& name : config.engines) {
    if (name != kSpool && name != kSpoolGroup) rows.push_back(name);
  }
  for (const std::string& row : rows) {
    if (row == kSpool) {
      std::unique_ptr<VersionedEngine> table = NewSpoolTableEngine();
      RunW3KeyedOnce(
          config, row, rep, records,
          W3Run{[&](const std::string& dir) { return table->Open(dir); },
                [&](uint64_t b, std::span<const Record> batch) { return table->Commit(kFirstDataVersion + b, batch); },
                [&] { return table->Close(); }},
          results);
      continue;
    }
    std::unique_ptr<Engine> engine = MakeEngine(row == kSpoolLogRow ? std::string(kSpool) : row, EngineOptions{});
    if (engine == nullptr) throw BenchError("unknown engine " + row);
    RunW3KeyedOnce(config, row, rep, records,
                   W3Run{[&](const std::string& dir) { return engine->Open(dir); },
                         [&](uint64_t, std::span<const Record> batch) { return engine->Commit(batch); },
                         [&] { return engine->Close(); }},
                   results);
  }
}

TableRewind MeasureTableRewind(std::string_view engine_name, uint64_t rows, const std::string& run_dir) {
  const TableShape shape = ShapeWithRows(rows);
  const std::string name(engine_name);
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(engine_name);
  if (engine == nullptr) throw BenchError(name + " has no table variant");
  BuildAndReopen(*engine, shape, kW5Updates, run_dir, Point::kMark);
  Digest warm;
  Expect(engine->ReadLatest(DigestInto(&warm)), name + " warm-up read");
  CheckRead(warm, ModelDigest(shape, kW5Updates), name, "the warm-up read");
  TableRewind rewind;
  rewind.times = TimedRewind(*engine, ModelDigest(shape, shape.point), &rewind.total_s);
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
  return rewind;
}

void RunW5Rows(const BenchConfig& config, int rep, Results* results) {
  for (uint64_t percent : kW5RowsPercents) {
    const TableShape shape = ShapeWithRows(config.Scaled(kW5Rows * percent / 100, kW5MinRows));
    for (const std::string& name : config.engines) RunW5RowsOnce(config, name, rep, shape, results);
  }
}

void RunW5W6(const BenchConfig& config, int rep, Results* results) {
  const TableShape shape = ShapeOf(config);
  const Expected expected{ModelDigest(shape, shape.point), ModelDigest(shape, kW5Updates)};
  for (const std::string& name : config.engines) RunW5W6Engine(config, name, rep, shape, expected, results);
  if (!config.Runs(kW6History)) return;
  const uint64_t x1 = kW5Updates - shape.point;
  for (uint64_t multiplier : config.history_multipliers) {
    for (const std::string& name : config.engines) {
      RunW6HistoryOnce(config, name, rep, shape, expected.at_point, x1 * multiplier, multiplier, results);
    }
  }
}

}  // namespace spool::bench
