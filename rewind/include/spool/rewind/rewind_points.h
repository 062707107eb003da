// Rewind points (docs/design.md): the places a pipeline can be rewound to.
// A point records the store's position (epoch, version) and, for each
// dataset of the pipeline, its table's version and its flows' checkpoints
// (source offsets and operator state) there. Each is a `rewind_summary`
// event in the store's event log, whose id is the point's
// `rewind_point_id`:
//
//   {"rewind_summary": {"dry_run": false, "epoch": 3, "version": 1042,
//                       "timestamp": "2026-09-29 08:36:55",
//                       "datasets": [{"identifier": "main.sales.orders",
//                                     "table_version": 1040,
//                                     "checkpoints": {"orders": "<checkpoint>"}}]}}
//
// A point pins its version (a durable pin named "rewind-point-<id>") so that
// vacuum keeps what a rewind to it needs, until the point is older than the
// retention window; recording one takes a snapshot when none is at its
// version, so that the state there can be rebuilt after vacuum.
//
// Thread-safety: the functions may be called from any thread; recording a
// point reads the store's newest state, so the caller keeps commits out
// meanwhile (one update at a time).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"

namespace spool {

inline constexpr std::string_view kPeriodicRewindPointMessage =
    "Periodic rewind summary capturing current table versions.";
inline constexpr uint64_t kDefaultRewindPointIntervalUs = 3600ull * 1000000;            // 1 hour
inline constexpr uint64_t kDefaultRewindPointRetentionUs = 7ull * 24 * 3600 * 1000000;  // 7 days

// The interval and retention of a pipeline's periodic points: its
// configuration's "pipelines.rewindPoints.interval" and
// "pipelines.rewindPoints.retention" (durations: "30m", "1 hour", "7d"),
// else the defaults. Errors: InvalidArgument naming the setting.
struct RewindPointSettings {
  uint64_t interval_us = kDefaultRewindPointIntervalUs;
  uint64_t retention_us = kDefaultRewindPointRetentionUs;
};
Status GetRewindPointSettings(const PipelineSpec& spec, RewindPointSettings* settings);

struct RewindPointDataset {
  std::string identifier;                          // catalog.schema.table
  uint64_t table_version = 0;                      // its newest commit at the point; 0: none yet
  std::map<std::string, std::string> checkpoints;  // flow -> checkpoint there
  friend bool operator==(const RewindPointDataset&, const RewindPointDataset&) = default;
};

struct RewindPoint {
  std::string id;            // the rewind_summary event's id: the rewind_point_id
  uint64_t recorded_us = 0;  // when the event was written
  std::string update_id;     // the update that recorded it (its event's origin); empty: none
  std::string message;
  bool dry_run = false;
  LogPosition position;       // the store's position it captures
  uint64_t timestamp_us = 0;  // the commit time of that version
  std::vector<RewindPointDataset> datasets;
};

// Records a point for the store's newest version (see above), by the update
// `update_id` when one records it. `message`: kPeriodicRewindPointMessage
// for periodic points. Errors: InvalidArgument (an empty store), IOError.
Status RecordRewindPoint(Store* store, const Pipeline& pipeline, std::string_view message, bool dry_run,
                         RewindPoint* point, std::string_view update_id = {});
// The same for an earlier `version` of the current history (a dry run's
// validated target): table versions and checkpoints as of it. Errors: as
// RecordRewindPoint, and InvalidArgument (beyond the newest), NotFound (no
// longer retained).
Status RecordRewindPointAt(Store* store, const Pipeline& pipeline, uint64_t version, std::string_view message,
                           bool dry_run, RewindPoint* point, std::string_view update_id = {});

// Points recorded at or after `since_us` (0: all), newest first. Errors:
// Corruption (an event that is not a point's), IOError.
Status ListRewindPoints(Store* store, uint64_t since_us, std::vector<RewindPoint>* points);

// The point with `id`. Errors: NotFound.
Status FindRewindPoint(Store* store, std::string_view id, RewindPoint* point);

// The reference UI's shortcuts: the newest point on the current history
// recorded at or before `at_or_before_us` — now for "the latest point", a
// day ago for "yesterday". Errors: NotFound (none), IOError.
Status LatestRewindPoint(Store* store, uint64_t at_or_before_us, RewindPoint* point);

// Records a periodic point when the newest one (periodic or not) is older
// than `interval_us` by the store's Env clock, or there is none and the
// store has commits; removes the pins of points older than `retention_us`.
// Sets *recorded when it recorded one (for update `update_id`). Errors: as
// RecordRewindPointAt and Store::RemovePin (IOError, Corruption), and
// those of reading the event log.
Status MaybeRecordPeriodicRewindPoint(Store* store, const Pipeline& pipeline, uint64_t interval_us,
                                      uint64_t retention_us, bool* recorded, std::string_view update_id = {});

// Finding the last good moment (what the reference documents compute with a
// query over the change feed and the history): the first commit whose
// changes to `table` match `predicate` (an expression over the table's
// columns, stream/expression.h) — inserts and update post-images, or deletes
// with `deletes` — searched from the oldest retained version. *found is
// false when none matches; else `first_bad` is that commit and the point to
// rewind to is the version before it. Errors: InvalidArgument (the
// predicate does not parse or names an unknown column, saying where),
// NotFound (no such table), Corruption, IOError.
struct BadCommit {
  bool found = false;
  uint64_t first_bad = 0;
  uint64_t first_bad_timestamp_us = 0;
  uint64_t matching_rows = 0;  // of that commit
};
Status FindFirstBadCommit(Store* store, const TableId& table, std::string_view predicate, bool deletes, BadCommit* bad);

// Whether a rewind can still go to a point: usable; cut (a later rewind
// went back before it, its history is in the archive); or beyond retention
// (vacuum removed what reaching it needs).
enum class PointUse : uint8_t { kUsable, kCut, kBeyondRetention };
PointUse RewindPointUse(Store* store, const RewindPoint& point);
std::string_view PointUseName(PointUse use);  // "usable", "cut", "beyond_retention"

// The pin name of a point.
std::string RewindPointPinName(std::string_view point_id);

}  // namespace spool
