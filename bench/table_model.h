// The keyed table the table workloads build (W5, W6, their series and the
// history operations): its shape and versions, the rows of each commit, a
// model of the table at any version, and the build itself — the same rows
// and versions for every engine and every repetition.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config.h"
#include "io_counters.h"
#include "records.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {

// A table of `rows` rows loaded in commits of up to kW5LoadBatchRows rows,
// then update commits each upserting update_rows distinct rows (1%).
struct TableShape {
  uint64_t rows = 0;
  uint64_t load_batch = 0;
  uint64_t update_rows = 0;
  uint64_t point = 0;  // update commits before the rewind point ("v50")

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

TableShape ShapeWithRows(uint64_t rows);
// W5's shape at this --scale.
TableShape ShapeOf(const BenchConfig& config);

// The rows of one commit, keys and values back to back. Not copyable or
// movable: the records view its bytes.
class Batch {
 public:
  explicit Batch(size_t rows) : bytes_(rows * kRecordBytes, '\0') { records_.reserve(rows); }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Row `row` with the value_index-th value of `value_stream`.
  void Add(uint64_t row, uint32_t value_stream, uint64_t value_index);
  std::span<const Record> records() const { return records_; }

 private:
  std::string bytes_;
  std::vector<Record> records_;
};

// An order-dependent hash of a table's rows, to check what reads return.
class Digest {
 public:
  void Add(std::string_view key, std::string_view value);
  uint64_t rows() const { return rows_; }
  friend bool operator==(const Digest&, const Digest&) = default;

 private:
  uint64_t state_ = 0;
  uint64_t rows_ = 0;
};

RowVisitor DigestInto(Digest* digest);

// An order-independent hash of changes (version, key, value): a change feed
// may hand them over in any order, but each exactly once.
class ChangeDigest {
 public:
  void Add(uint64_t version, std::string_view key, std::string_view value);
  uint64_t changes() const { return changes_; }
  friend bool operator==(const ChangeDigest&, const ChangeDigest&) = default;

 private:
  uint64_t sum_ = 0;
  uint64_t xor_ = 0;
  uint64_t changes_ = 0;
};

// The changes of update commits after_update+1 … updates.
ChangeDigest ModelChanges(const TableShape& shape, uint64_t after_update, uint64_t updates);

// The digest of the table after the load and `updates` update commits.
Digest ModelDigest(const TableShape& shape, uint64_t updates);

// Throws BenchError when a read returned another table than `expected`.
void CheckRead(const Digest& got, const Digest& expected, std::string_view engine, std::string_view what);

// What building a table measured.
struct Built {
  double load_s = 0;            // load commits only
  double update_s = 0;          // update commits only
  double point_s = 0;           // taking the rewind point
  WriteCounters point_written;  // bytes written while taking it
};

// Loads the table and applies `updates` update commits, making the version
// after shape.point of them the rewind point (peers' copies in `point_dir`;
// empty: no rewind point).
// Times the commits alone, not the making of their rows.
Built BuildTable(VersionedEngine& engine, const TableShape& shape, uint64_t updates, const std::string& point_dir);

// Builds in the open, empty `engine` the history a vacuum to update
// `floor` keeps: the table as of that update, loaded as BuildTable loads
// it, then update commits floor + 1 … `updates`, each one version after
// the one before. Returns the version the floor has there (the load's last).
uint64_t BuildRetained(VersionedEngine& engine, const TableShape& shape, uint64_t floor, uint64_t updates);

// BuildTable in `run_dir`/db (both made anew, the point's copies in
// `run_dir`/point), then close (Spool's state flushed), sync and reopen:
// the table as a store that has run holds it.
// Whether a build takes the rewind point (W6's rewinds) or not (reads only).
enum class Point { kMark, kNone };
Built BuildAndReopen(VersionedEngine& engine, const TableShape& shape, uint64_t updates, const std::string& run_dir,
                     Point point);

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

}  // namespace spool::bench
