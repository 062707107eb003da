// Results: every sample of every metric, by workload and engine, in the
// order they were first recorded. Filled by the workloads, read by the
// report. Not thread-safe: workloads add samples from the main thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stats.h"

namespace spool::bench {

// Metric names (also the JSON keys).
namespace metric {
inline constexpr char kCommitsPerS[] = "commits_per_s";
inline constexpr char kP50Us[] = "p50_us";
inline constexpr char kP99Us[] = "p99_us";
inline constexpr char kCommitsPerSync[] = "commits_per_sync";
inline constexpr char kRecordsPerS[] = "records_per_s";
inline constexpr char kEventsPerS[] = "events_per_s";
inline constexpr char kPayloadMBPerS[] = "payload_mb_per_s";
inline constexpr char kDiskPerPayload[] = "disk_bytes_per_payload_byte";
inline constexpr char kReopenS[] = "reopen_s";
inline constexpr char kRecoveredMBPerS[] = "recovered_payload_mb_per_s";
inline constexpr char kLogMB[] = "log_mb_on_disk";
inline constexpr char kWriterPeakRssMB[] = "writer_peak_rss_mb";
inline constexpr char kAppendSyncPerS[] = "append_4k_fdatasync_per_s";
inline constexpr char kAppendSyncP50Us[] = "append_4k_fdatasync_p50_us";
inline constexpr char kOverwriteSyncPerS[] = "overwrite_4k_fdatasync_per_s";
inline constexpr char kOverwriteSyncP50Us[] = "overwrite_4k_fdatasync_p50_us";
inline constexpr char kSeqBufferedMBPerS[] = "seq_write_buffered_mb_per_s";
inline constexpr char kSeqDirectMBPerS[] = "seq_write_direct_mb_per_s";
inline constexpr char kXxh3MBPerS[] = "xxh3_mb_per_s";
inline constexpr char kZstdCompressMBPerS[] = "zstd1_compress_mb_per_s";
inline constexpr char kZstdDecompressMBPerS[] = "zstd1_decompress_mb_per_s";
inline constexpr char kZstdRatio[] = "zstd1_ratio";
}  // namespace metric

// The engine name the machine limits are recorded under.
inline constexpr char kMachine[] = "machine";
// Rows of raw measurements inside a workload's table (engine_runs.h,
// Baseline): W1's ceilings and W3's.
inline constexpr char kRawOverwrite[] = "raw-overwrite";
inline constexpr char kRawAppend[] = "raw-append";
inline constexpr char kRawSequential[] = "raw-sequential";
inline constexpr char kRawSyncedBatches[] = "raw-synced-batches";
inline constexpr char kEncodedSyncedBatches[] = "encoded-synced-batches";

class Results {
 public:
  // Where a row of a scaling series sits: the size it was measured at
  // ("writers" 2, "rows" 100000, "history" 10, …).
  struct Point {
    std::string name;
    double value = 0;
    bool operator==(const Point&) const = default;
  };

  struct Row {
    std::string workload;
    std::string engine;
    std::optional<Point> point;  // set for the rows of a scaling series
    std::string note;            // e.g. "(no log)"
    std::map<std::string, std::vector<double>, std::less<>> samples;
  };

  // Where a run's figures go: its workload's own row (no point), or a
  // scaling series' row at `point`; for code that measures both the same way.
  struct Place {
    std::string workload;
    std::optional<Point> point;
  };

  void Add(std::string_view workload, std::string_view engine, std::string_view metric, double value);
  // A sample of a scaling series' row: `engine` measured at `point`.
  void AddAt(std::string_view workload, std::string_view engine, const Point& point, std::string_view metric,
             double value);
  // Add or AddAt, as `place` says.
  void AddTo(const Place& place, std::string_view engine, std::string_view metric, double value);
  void SetNote(std::string_view workload, std::string_view engine, std::string note);

  // Median and range of a metric; nullopt when it has no samples.
  std::optional<Summary> Get(std::string_view workload, std::string_view engine, std::string_view metric) const;
  std::optional<Summary> GetAt(std::string_view workload, std::string_view engine, const Point& point,
                               std::string_view metric) const;
  // Get's median; NaN when the metric has no samples.
  double Median(std::string_view workload, std::string_view engine, std::string_view metric) const;
  // The samples of the row that `row` is compared with: the same workload,
  // point and metric, measured on `engine`; null when there are none.
  const std::vector<double>* SamplesOf(const Row& row, std::string_view engine, std::string_view metric) const;
  // The rows of one workload, in the order engines were first recorded.
  std::vector<const Row*> RowsOf(std::string_view workload) const;
  const std::vector<Row>& rows() const { return rows_; }

 private:
  Row& FindOrAdd(std::string_view workload, std::string_view engine, const std::optional<Point>& point);
  const Row* Find(std::string_view workload, std::string_view engine, const std::optional<Point>& point) const;
  static std::optional<Summary> SummaryOf(const Row* row, std::string_view metric);

  std::vector<Row> rows_;
};

// A row's `metric` ÷ Spool's in the same workload (and point), pair by
// pair: repetition i's sample over Spool's repetition i (engines take turns
// within a repetition, so a pair was measured minutes apart); median and
// range of those ratios. When the counts differ, the ratio of the medians
// (min = max = it). Nullopt when either side has no samples.
std::optional<Summary> RatioToSpool(const Results& results, const Results::Row& row, std::string_view metric);

}  // namespace spool::bench
