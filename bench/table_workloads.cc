#include "table_workloads.h"

#include <fmt/format.h>
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

#include "check.h"
#include "commit_workloads.h"
#include "engine.h"
#include "files.h"
#include "io_counters.h"
#include "records.h"
#include "stats.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

constexpr double kBytesPerMB = 1e6;
// Record streams (records.h): keys and the load's values, and the updates' values.
constexpr uint32_t kLoadStream = 0;
constexpr uint32_t kUpdateStream = 1;
constexpr uint64_t kUpdateSeed = 0x5eed5b0017ab1eull;

// The shape of W5's table and history at this --scale, and its versions.
struct TableShape {
  uint64_t rows = 0;
  uint64_t load_batch = 0;
  uint64_t update_rows = 0;
  uint64_t point = 0;  // update commits before the rewind point

  uint64_t load_commits() const { return (rows + load_batch - 1) / load_batch; }
  uint64_t LoadVersion(uint64_t commit) const { return kFirstDataVersion + commit; }
  uint64_t loaded_version() const { return kFirstDataVersion + load_commits() - 1; }
  uint64_t UpdateVersion(uint64_t k) const { return loaded_version() + k; }
  uint64_t point_version() const { return UpdateVersion(point); }
  // Payload (key + value bytes) of the load and `updates` update commits.
  double PayloadBytes(uint64_t updates) const {
    return static_cast<double>((rows + updates * update_rows) * kRecordBytes);
  }
};

TableShape ShapeWithRows(uint64_t rows) {
  TableShape shape;
  shape.rows = std::max(rows, kW5MinRows);
  shape.load_batch = std::min(kW5LoadBatchRows, shape.rows);
  shape.update_rows = std::max<uint64_t>(1, shape.rows / kW5UpdateRowsDivisor);
  shape.point = kW5Point;
  return shape;
}

TableShape ShapeOf(const BenchConfig& config) { return ShapeWithRows(config.Scaled(kW5Rows, kW5MinRows)); }

// The distinct rows update commit `k` (1-based) writes, ascending: the same
// for every engine and every repetition.
std::vector<uint64_t> UpdatedRows(const TableShape& shape, uint64_t k) {
  std::mt19937_64 rng(kUpdateSeed ^ (k * 0x9e3779b97f4a7c15ull));
  std::vector<uint64_t> rows;
  rows.reserve(shape.update_rows);
  while (rows.size() < shape.update_rows) {
    while (rows.size() < shape.update_rows) rows.push_back(rng() % shape.rows);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  return rows;
}

// The value update commit `k` writes into the `j`-th row it updates.
uint64_t UpdateValueIndex(const TableShape& shape, uint64_t k, uint64_t j) { return (k - 1) * shape.update_rows + j; }

// The rows of one commit, keys and values back to back. Not copyable or
// movable: the records view its bytes.
class Batch {
 public:
  explicit Batch(size_t rows) : bytes_(rows * kRecordBytes, '\0') { records_.reserve(rows); }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  void Add(uint64_t row, uint32_t value_stream, uint64_t value_index) {
    char* p = bytes_.data() + records_.size() * kRecordBytes;
    MakeKey(kLoadStream, row, p);
    MakeValue(value_stream, value_index, p + kKeyBytes);
    records_.push_back(Record{std::string_view(p, kKeyBytes), std::string_view(p + kKeyBytes, kValueBytes)});
  }
  std::span<const Record> records() const { return records_; }

 private:
  std::string bytes_;
  std::vector<Record> records_;
};

// An order-dependent hash of a table's rows, to check what reads return.
class Digest {
 public:
  void Add(std::string_view key, std::string_view value) {
    const uint64_t h = XXH3_64bits_withSeed(value.data(), value.size(), XXH3_64bits(key.data(), key.size()));
    state_ = (state_ ^ h) * 0x100000001b3ull + ++rows_;
  }
  uint64_t rows() const { return rows_; }
  friend bool operator==(const Digest&, const Digest&) = default;

 private:
  uint64_t state_ = 0;
  uint64_t rows_ = 0;
};

RowVisitor DigestInto(Digest* digest) {
  return [digest](std::string_view key, std::string_view value) { digest->Add(key, value); };
}

// The digest of the table after the load and `updates` update commits.
Digest ModelDigest(const TableShape& shape, uint64_t updates) {
  struct ValueId {
    uint32_t stream;
    uint64_t index;
  };
  std::vector<ValueId> values(shape.rows);
  for (uint64_t row = 0; row < shape.rows; ++row) values[row] = ValueId{kLoadStream, row};
  for (uint64_t k = 1; k <= updates; ++k) {
    const std::vector<uint64_t> rows = UpdatedRows(shape, k);
    for (uint64_t j = 0; j < rows.size(); ++j) values[rows[j]] = ValueId{kUpdateStream, UpdateValueIndex(shape, k, j)};
  }
  Digest digest;
  std::array<char, kRecordBytes> record;
  for (uint64_t row = 0; row < shape.rows; ++row) {
    MakeKey(kLoadStream, row, record.data());
    MakeValue(values[row].stream, values[row].index, record.data() + kKeyBytes);
    digest.Add(std::string_view(record.data(), kKeyBytes), std::string_view(record.data() + kKeyBytes, kValueBytes));
  }
  return digest;
}

void CheckRead(const Digest& got, const Digest& expected, std::string_view engine, std::string_view what) {
  if (got == expected) return;
  throw BenchError(fmt::format("{}: {} returned another table ({} rows, {} expected)", engine, what, got.rows(),
                               expected.rows()));
}

// What building a table measured.
struct Built {
  double load_s = 0;        // load commits only
  double update_s = 0;      // update commits only
  double point_s = 0;          // taking the rewind point
  WriteCounters point_written;  // bytes written while taking it
};

// Loads the table and applies `updates` update commits, making the version
// after shape.point of them the rewind point (peers' copies in `point_dir`).
// Times the commits alone, not the making of their rows.
Built BuildTable(VersionedEngine& engine, const TableShape& shape, uint64_t updates, const std::string& point_dir) {
  const std::string what = std::string(engine.name()) + " commit";
  Built built;
  for (uint64_t c = 0; c < shape.load_commits(); ++c) {
    const uint64_t first = c * shape.load_batch;
    const uint64_t n = std::min(shape.load_batch, shape.rows - first);
    Batch batch(n);
    for (uint64_t i = 0; i < n; ++i) batch.Add(first + i, kLoadStream, first + i);
    Stopwatch watch;
    Expect(engine.Commit(shape.LoadVersion(c), batch.records()), what);
    built.load_s += watch.Seconds();
  }
  for (uint64_t k = 1; k <= updates; ++k) {
    const std::vector<uint64_t> rows = UpdatedRows(shape, k);
    Batch batch(rows.size());
    for (uint64_t j = 0; j < rows.size(); ++j) batch.Add(rows[j], kUpdateStream, UpdateValueIndex(shape, k, j));
    Stopwatch watch;
    Expect(engine.Commit(shape.UpdateVersion(k), batch.records()), what);
    built.update_s += watch.Seconds();
    if (k == shape.point) {
      const WriteCounters before = ReadWriteCounters(std::filesystem::path(point_dir).parent_path());
      Stopwatch point_watch;
      Expect(engine.MarkRewindPoint(point_dir), std::string(engine.name()) + " rewind point");
      built.point_s = point_watch.Seconds();
      SyncAll();
      built.point_written = WrittenBetween(before, ReadWriteCounters(std::filesystem::path(point_dir).parent_path()));
    }
  }
  return built;
}

// A timed full read, checked against `expected`.
template <typename ReadFn>
double TimedRead(std::string_view engine, std::string_view what, const Digest& expected, ReadFn read) {
  Digest digest;
  Stopwatch watch;
  Expect(read(DigestInto(&digest)), std::string(engine) + " " + std::string(what));
  const double seconds = watch.Seconds();
  CheckRead(digest, expected, engine, what);
  return seconds;
}

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

struct Expected {
  Digest at_point;
  Digest latest;
};

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
  const double disk = static_cast<double>(DiskBytes(db));
  const double payload = shape.PayloadBytes(kW5Updates);

  Expect(engine->Open(db), name + " reopen");
  Digest warm;
  Expect(engine->ReadLatest(DigestInto(&warm)), name + " warm-up read");
  CheckRead(warm, expected.latest, name, "the warm-up read");
  std::vector<double> as_of_s, latest_s;
  const std::string as_of_what = fmt::format("the read as of version {}", shape.point_version());
  for (int i = 0; i < kReadRepeats; ++i) {
    as_of_s.push_back(TimedRead(name, as_of_what, expected.at_point, [&](const RowVisitor& visit) {
      return engine->ReadAsOf(shape.point_version(), visit);
    }));
    latest_s.push_back(TimedRead(name, "the read of the latest version", expected.latest,
                                 [&](const RowVisitor& visit) { return engine->ReadLatest(visit); }));
  }
  const double as_of = Summarize(as_of_s).median, latest = Summarize(latest_s).median;
  if (config.Runs(kW5)) {
    results->Add(kW5, name, metric::kAsOfReadS, as_of);
    results->Add(kW5, name, metric::kLatestReadS, latest);
    results->Add(kW5, name, metric::kDiskMB, disk / kBytesPerMB);
    results->Add(kW5, name, metric::kDiskPerPayload, disk / payload);
    AddWritten(results, kW5, name, written, built.point_written, payload);
    results->Add(kW5, name, metric::kLoadRecordsPerS, static_cast<double>(shape.rows) / built.load_s);
    results->Add(kW5, name, metric::kUpdateCommitsPerS, static_cast<double>(kW5Updates) / built.update_s);
  }
  std::cerr << fmt::format("w5 {} rep {}/{}: as-of v{} read {:.4f} s, latest read {:.4f} s, {:.1f} MB on disk\n",
                           name, rep, config.reps, shape.point_version(), as_of, latest, disk / kBytesPerMB);

  if (config.Runs(kW6)) {
    double total_s = 0;
    const RewindTimes times = TimedRewind(*engine, expected.at_point, &total_s);
    AddRewind(results, kW6, name, total_s, times);
    if (name != kSpool) {
      results->Add(kW6, name, metric::kPointS, built.point_s);
      results->Add(kW6, name, metric::kPointWrittenMB,
                   static_cast<double>(built.point_written.syscall_bytes) / kBytesPerMB);
    } else {
      AddRewind(results, kW6History, kHistoryX1, total_s, times);
      results->Add(kW6History, kHistoryX1, metric::kAsOfReadS, as_of);
      results->Add(kW6History, kHistoryX1, metric::kVersionsAfterPoint, static_cast<double>(kW5Updates - shape.point));
    }
    std::cerr << fmt::format("w6 {} rep {}/{}: rewind to v{} {:.4f} s\n", name, rep, config.reps,
                             shape.point_version(), total_s);
  }
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
}

// W6's history series: Spool with `after` update commits after the point.
void RunW6HistoryOnce(const BenchConfig& config, int rep, const TableShape& shape, const Digest& at_point,
                      uint64_t after, const std::string& row, Results* results) {
  const std::string run_dir = config.RunDir(kW6History, "spool-" + row, rep);
  const std::string db = run_dir + "/db";
  FreshDir(run_dir);
  FreshDir(db);
  std::unique_ptr<VersionedEngine> engine = NewSpoolTableEngine();
  Expect(engine->Open(db), "spool open");
  const Built built = BuildTable(*engine, shape, shape.point + after, run_dir + "/point");
  // As W5's store: closed (the state flushed), synced, reopened.
  Expect(engine->Close(), "spool close");
  SyncAll();
  Expect(engine->Open(db), "spool reopen");
  const double as_of = TimedRead(kSpool, "the read as of the point", at_point, [&](const RowVisitor& visit) {
    return engine->ReadAsOf(shape.point_version(), visit);
  });
  double total_s = 0;
  const RewindTimes times = TimedRewind(*engine, at_point, &total_s);
  AddRewind(results, kW6History, row, total_s, times);
  results->Add(kW6History, row, metric::kAsOfReadS, as_of);
  results->Add(kW6History, row, metric::kVersionsAfterPoint, static_cast<double>(after));
  std::cerr << fmt::format("w6 spool {} history rep {}/{}: {} commits after v{} (built in {:.1f} s), "
                           "as-of read {:.4f} s, rewind {:.4f} s (restore {:.4f}, close {:.4f}, reopen {:.4f})\n",
                           row, rep, config.reps, after, shape.point_version(), built.load_s + built.update_s, as_of,
                           total_s, times.restore_s, times.close_s, times.open_s);
  Expect(engine->Close(), "spool close");
  engine.reset();
  RemoveDir(run_dir);
}

bool RunsEngine(const BenchConfig& config, std::string_view engine) {
  return std::find(config.engines.begin(), config.engines.end(), engine) != config.engines.end();
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
  if (RunsEngine(config, kSpool)) rows = {std::string(kSpool), kSpoolLogRow};
  for (const std::string& name : config.engines) {
    if (name != kSpool && name != kSpoolGroup) rows.push_back(name);
  }
  for (const std::string& row : rows) {
    if (row == kSpool) {
      std::unique_ptr<VersionedEngine> table = NewSpoolTableEngine();
      RunW3KeyedOnce(config, row, rep, records,
                     W3Run{[&](const std::string& dir) { return table->Open(dir); },
                           [&](uint64_t b, std::span<const Record> batch) {
                             return table->Commit(kFirstDataVersion + b, batch);
                           },
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
  const std::string db = run_dir + "/db";
  FreshDir(run_dir);
  FreshDir(db);
  Expect(engine->Open(db), name + " open");
  BuildTable(*engine, shape, kW5Updates, run_dir + "/point");
  Expect(engine->Close(), name + " close");
  SyncAll();
  Expect(engine->Open(db), name + " reopen");
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

void RunW5W6(const BenchConfig& config, int rep, Results* results) {
  const TableShape shape = ShapeOf(config);
  const Expected expected{ModelDigest(shape, shape.point), ModelDigest(shape, kW5Updates)};
  for (const std::string& name : config.engines) RunW5W6Engine(config, name, rep, shape, expected, results);
  if (config.Runs(kW6) && RunsEngine(config, kSpool)) {
    const uint64_t x1 = kW5Updates - shape.point;
    const char* rows[] = {kHistoryX10, kHistoryX100};
    for (size_t i = 0; i < std::size(kW6HistoryMultipliers); ++i) {
      const uint64_t after = config.Scaled(x1 * kW6HistoryMultipliers[i], x1);
      if (after > x1) RunW6HistoryOnce(config, rep, shape, expected.at_point, after, rows[i], results);
    }
  }
}

}  // namespace spool::bench
