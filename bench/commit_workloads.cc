#include "commit_workloads.h"

#include <iostream>
#include <latch>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "check.h"
#include "disk_limits.h"
#include "engine_runs.h"
#include "files.h"
#include "records.h"
#include "stopwatch.h"
#include "units.h"

namespace spool::bench {
namespace {

void Progress(const std::string& workload, const EngineRun& run, int reps, const std::string& figure) {
  std::cerr << fmt::format("{} {} rep {}/{}: {}\n", workload, run.engine.name(), run.rep, reps, figure);
}

// Commits each record of `records` alone; returns each commit's latency.
std::vector<double> CommitOneByOne(Engine& engine, const RecordSet& records) {
  std::vector<double> latencies_us;
  latencies_us.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    Stopwatch watch;
    Expect(engine.Commit(records.Slice(i, 1)), std::string(engine.name()) + " commit");
    latencies_us.push_back(watch.Micros());
  }
  return latencies_us;
}

// Runs one writer thread per record set, all released at once; returns the
// seconds until the last one finished.
double CommitConcurrently(Engine& engine, const std::vector<RecordSet>& sets) {
  std::vector<Status> outcomes(sets.size());
  std::latch start(static_cast<std::ptrdiff_t>(sets.size() + 1));
  std::vector<std::thread> writers;
  for (size_t t = 0; t < sets.size(); ++t) {
    writers.emplace_back([&, t] {
      start.arrive_and_wait();
      for (size_t i = 0; i < sets[t].size() && outcomes[t].ok(); ++i) outcomes[t] = engine.Commit(sets[t].Slice(i, 1));
    });
  }
  start.arrive_and_wait();
  Stopwatch watch;
  for (std::thread& writer : writers) writer.join();
  const double seconds = watch.Seconds();
  for (const Status& s : outcomes) Expect(s, std::string(engine.name()) + " concurrent commit");
  return seconds;
}

// W1's ceilings, one 4-KiB block + fdatasync per commit: over written
// blocks (a log with preallocated or recycled segments) and appending.
void W1Baseline(const std::string& dir, uint64_t commits, Results* results) {
  const SyncRate overwrite = OverwriteSyncRate(dir + "/overwrite", commits);
  results->Add(kW1, kRawOverwrite, metric::kCommitsPerS, overwrite.per_s);
  results->Add(kW1, kRawOverwrite, metric::kP50Us, overwrite.p50_us);
  results->Add(kW1, kRawOverwrite, metric::kP99Us, overwrite.p99_us);
  const SyncRate append = AppendSyncRate(dir + "/append", commits);
  results->Add(kW1, kRawAppend, metric::kCommitsPerS, append.per_s);
  results->Add(kW1, kRawAppend, metric::kP50Us, append.p50_us);
  results->Add(kW1, kRawAppend, metric::kP99Us, append.p99_us);
  std::cerr << fmt::format("w1 raw: overwrite {:.0f}/s, append {:.0f}/s\n", overwrite.per_s, append.per_s);
}

// W3's ceilings: the same payload written sequentially, with one fdatasync
// at the end; as W3's batches, each made durable before the next; and those
// batches compressed by Spool's codec first, each made durable.
void W3Baseline(const std::string& dir, const RecordSet& records, Results* results) {
  const double payload_bytes = static_cast<double>(records.bytes().size());
  const auto add = [&](const char* row, double mb_per_s) {
    results->Add(kW3, row, metric::kPayloadMBPerS, mb_per_s);
    results->Add(kW3, row, metric::kRecordsPerS, mb_per_s * kBytesPerMB / static_cast<double>(kRecordBytes));
  };
  const double sequential = SequentialWriteMBPerS(dir + "/sequential", static_cast<uint64_t>(payload_bytes), false);
  add(kRawSequential, sequential);
  const double batches =
      SyncedBatchesMBPerS(dir + "/batches", static_cast<uint64_t>(payload_bytes), kW3BatchRecords * kRecordBytes);
  add(kRawSyncedBatches, batches);
  const double encoded = EncodedBatchesMBPerS(dir + "/encoded", records.bytes(), kW3BatchRecords * kRecordBytes);
  add(kEncodedSyncedBatches, encoded);
  std::cerr << fmt::format(
      "w3 raw: sequential write {:.0f} MB/s, each batch synced {:.0f} MB/s, encoded and synced {:.0f} MB/s\n",
      sequential, batches, encoded);
}

// W2's writers, `writers` of them, each with its own records.
std::vector<RecordSet> WriterSets(const BenchConfig& config, uint64_t writers) {
  std::vector<RecordSet> sets;
  for (uint32_t t = 0; t < writers; ++t) sets.emplace_back(t + 1, 0, config.Scaled(kW2CommitsPerThread));
  return sets;
}

double CommitCount(const std::vector<RecordSet>& sets) {
  return static_cast<double>(sets.size() * sets.front().size());
}

}  // namespace

void RunW1(const BenchConfig& config, int rep, Results* results) {
  const RecordSet records(0, 0, config.Scaled(kW1Commits));
  auto baseline = [&](const std::string& dir) { W1Baseline(dir, records.size(), results); };
  ForEachEngineRun(
      config, kW1, rep, EngineOptions{},
      [&](EngineRun& run) {
        Stopwatch watch;
        std::vector<double> latencies_us = CommitOneByOne(run.engine, records);
        const double per_s = static_cast<double>(records.size()) / watch.Seconds();
        const std::string engine(run.engine.name());
        results->Add(kW1, engine, metric::kCommitsPerS, per_s);
        results->Add(kW1, engine, metric::kP50Us, Percentile(latencies_us, 0.5));
        results->Add(kW1, engine, metric::kP99Us, Percentile(std::move(latencies_us), 0.99));
        Progress(kW1, run, config.reps, fmt::format("{:.0f} commits/s", per_s));
      },
      baseline);
}

void RunW2(const BenchConfig& config, int rep, Results* results) {
  const std::vector<RecordSet> sets = WriterSets(config, kW2Threads);
  ForEachEngineRun(config, kW2, rep, EngineOptions{}, [&](EngineRun& run) {
    const double per_s = CommitCount(sets) / CommitConcurrently(run.engine, sets);
    const std::string engine(run.engine.name());
    results->Add(kW2, engine, metric::kCommitsPerS, per_s);
    if (auto per_sync = run.engine.CommitsPerSync()) results->Add(kW2, engine, metric::kCommitsPerSync, *per_sync);
    Progress(kW2, run, config.reps, fmt::format("{:.0f} commits/s", per_s));
  });
}

void RunW2Writers(const BenchConfig& config, int rep, Results* results) {
  for (uint64_t writers = 1; writers <= kW2Threads; ++writers) {
    const std::vector<RecordSet> sets = WriterSets(config, writers);
    const Results::Point point{kWritersPoint, static_cast<double>(writers)};
    ForEachEngineRun(config, kW2Writers, rep, EngineOptions{}, [&](EngineRun& run) {
      const double per_s = CommitCount(sets) / CommitConcurrently(run.engine, sets);
      const std::string engine(run.engine.name());
      results->AddAt(kW2Writers, engine, point, metric::kCommitsPerS, per_s);
      if (auto per_sync = run.engine.CommitsPerSync()) {
        results->AddAt(kW2Writers, engine, point, metric::kCommitsPerSync, *per_sync);
      }
      Progress(kW2Writers, run, config.reps, fmt::format("{} writers: {:.0f} commits/s", writers, per_s));
    });
  }
}

void RunW3(const BenchConfig& config, int rep, Results* results) {
  const RecordSet records(0, 0, config.Scaled(kW3Records));
  const double payload_bytes = static_cast<double>(records.size() * kRecordBytes);
  auto baseline = [&](const std::string& dir) { W3Baseline(dir, records, results); };
  ForEachEngineRun(
      config, kW3, rep, EngineOptions{},
      [&](EngineRun& run) {
        Stopwatch watch;
        for (size_t i = 0; i < records.size(); i += kW3BatchRecords) {
          Expect(run.engine.Commit(records.Slice(i, kW3BatchRecords)), std::string(run.engine.name()) + " commit");
        }
        const double seconds = watch.Seconds();
        Expect(run.engine.Close(), std::string(run.engine.name()) + " close");
        const std::string engine(run.engine.name());
        const double per_s = static_cast<double>(records.size()) / seconds;
        results->Add(kW3, engine, metric::kRecordsPerS, per_s);
        results->Add(kW3, engine, metric::kPayloadMBPerS, payload_bytes / kBytesPerMB / seconds);
        results->Add(kW3, engine, metric::kDiskPerPayload, static_cast<double>(DiskBytes(run.dir)) / payload_bytes);
        Progress(kW3, run, config.reps, fmt::format("{:.0f} records/s", per_s));
      },
      baseline);
}

}  // namespace spool::bench
