#include "table_model.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "check.h"
#include "files.h"
#include "table_workloads.h"

namespace spool::bench {
namespace {

// Record streams (records.h): keys and the load's values, and the updates' values.
constexpr uint32_t kLoadStream = 0;
constexpr uint32_t kUpdateStream = 1;
constexpr uint64_t kUpdateSeed = 0x5eed5b0017ab1eull;

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

// Where a row's value comes from: a record stream and an index in it.
struct ValueId {
  uint32_t stream;
  uint64_t index;
};

// Each row's value after the load and `updates` update commits.
std::vector<ValueId> ModelValues(const TableShape& shape, uint64_t updates) {
  std::vector<ValueId> values(shape.rows);
  for (uint64_t row = 0; row < shape.rows; ++row) values[row] = ValueId{kLoadStream, row};
  for (uint64_t k = 1; k <= updates; ++k) {
    const std::vector<uint64_t> rows = UpdatedRows(shape, k);
    for (uint64_t j = 0; j < rows.size(); ++j) values[rows[j]] = ValueId{kUpdateStream, UpdateValueIndex(shape, k, j)};
  }
  return values;
}

// Commits update commit `k`'s rows as `version`; returns the seconds the commit took.
double CommitUpdate(VersionedEngine& engine, const TableShape& shape, uint64_t k, uint64_t version) {
  const std::vector<uint64_t> rows = UpdatedRows(shape, k);
  Batch batch(rows.size());
  for (uint64_t j = 0; j < rows.size(); ++j) batch.Add(rows[j], kUpdateStream, UpdateValueIndex(shape, k, j));
  Stopwatch watch;
  Expect(engine.Commit(version, batch.records()), std::string(engine.name()) + " commit");
  return watch.Seconds();
}

// Loads the table as `values` hold it, in shape.load_batch commits from
// version kFirstDataVersion; returns the seconds the commits took.
double Load(VersionedEngine& engine, const TableShape& shape, const std::vector<ValueId>& values) {
  double seconds = 0;
  for (uint64_t c = 0; c < shape.load_commits(); ++c) {
    const uint64_t first = c * shape.load_batch;
    const uint64_t n = std::min(shape.load_batch, shape.rows - first);
    Batch batch(n);
    for (uint64_t i = first; i < first + n; ++i) batch.Add(i, values[i].stream, values[i].index);
    Stopwatch watch;
    Expect(engine.Commit(shape.LoadVersion(c), batch.records()), std::string(engine.name()) + " commit");
    seconds += watch.Seconds();
  }
  return seconds;
}

}  // namespace

TableShape ShapeWithRows(uint64_t rows) {
  TableShape shape;
  shape.rows = std::max(rows, kW5MinRows);
  shape.load_batch = std::min(kW5LoadBatchRows, shape.rows);
  shape.update_rows = std::max<uint64_t>(1, shape.rows / kW5UpdateRowsDivisor);
  shape.point = kW5Point;
  return shape;
}

TableShape ShapeOf(const BenchConfig& config) { return ShapeWithRows(config.Scaled(kW5Rows, kW5MinRows)); }

void Batch::Add(uint64_t row, uint32_t value_stream, uint64_t value_index) {
  char* p = bytes_.data() + records_.size() * kRecordBytes;
  MakeKey(kLoadStream, row, p);
  MakeValue(value_stream, value_index, p + kKeyBytes);
  records_.push_back(Record{std::string_view(p, kKeyBytes), std::string_view(p + kKeyBytes, kValueBytes)});
}

void Digest::Add(std::string_view key, std::string_view value) {
  const uint64_t h = XXH3_64bits_withSeed(value.data(), value.size(), XXH3_64bits(key.data(), key.size()));
  state_ = (state_ ^ h) * 0x100000001b3ull + ++rows_;
}

void ChangeDigest::Add(uint64_t version, std::string_view key, std::string_view value) {
  const uint64_t h = XXH3_64bits_withSeed(value.data(), value.size(), XXH3_64bits(key.data(), key.size()) ^ version);
  sum_ += h;
  xor_ ^= h * 0x9e3779b97f4a7c15ull;
  ++changes_;
}

ChangeDigest ModelChanges(const TableShape& shape, uint64_t after_update, uint64_t updates) {
  ChangeDigest digest;
  std::array<char, kRecordBytes> record;
  for (uint64_t k = after_update + 1; k <= updates; ++k) {
    const std::vector<uint64_t> rows = UpdatedRows(shape, k);
    for (uint64_t j = 0; j < rows.size(); ++j) {
      MakeKey(kLoadStream, rows[j], record.data());
      MakeValue(kUpdateStream, UpdateValueIndex(shape, k, j), record.data() + kKeyBytes);
      digest.Add(shape.UpdateVersion(k), std::string_view(record.data(), kKeyBytes),
                 std::string_view(record.data() + kKeyBytes, kValueBytes));
    }
  }
  return digest;
}

RowVisitor DigestInto(Digest* digest) {
  return [digest](std::string_view key, std::string_view value) { digest->Add(key, value); };
}

Digest ModelDigest(const TableShape& shape, uint64_t updates) {
  const std::vector<ValueId> values = ModelValues(shape, updates);
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
  throw BenchError(
      fmt::format("{}: {} returned another table ({} rows, {} expected)", engine, what, got.rows(), expected.rows()));
}

Built BuildTable(VersionedEngine& engine, const TableShape& shape, uint64_t updates, const std::string& point_dir) {
  Built built;
  built.load_s = Load(engine, shape, ModelValues(shape, 0));
  for (uint64_t k = 1; k <= updates; ++k) {
    built.update_s += CommitUpdate(engine, shape, k, shape.UpdateVersion(k));
    if (k == shape.point && !point_dir.empty()) {
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

uint64_t BuildRetained(VersionedEngine& engine, const TableShape& shape, uint64_t floor, uint64_t updates) {
  Load(engine, shape, ModelValues(shape, floor));
  for (uint64_t k = floor + 1; k <= updates; ++k) CommitUpdate(engine, shape, k, shape.UpdateVersion(k - floor));
  return shape.loaded_version();
}

Built BuildAndReopen(VersionedEngine& engine, const TableShape& shape, uint64_t updates, const std::string& run_dir,
                     Point point) {
  const std::string name(engine.name());
  const std::string db = run_dir + "/db";
  FreshDir(run_dir);
  FreshDir(db);
  Expect(engine.Open(db), name + " open");
  const Built built = BuildTable(engine, shape, updates, point == Point::kMark ? run_dir + "/point" : "");
  Expect(engine.Close(), name + " close");
  SyncAll();
  Expect(engine.Open(db), name + " reopen");
  return built;
}

}  // namespace spool::bench
