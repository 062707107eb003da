// The steps the history operations (history_workloads.h) and their length
// series (history_series.h) share: a table with a given number of update
// commits and a floor, its reads checked, the change feed after the floor
// timed and checked, the vacuum to the floor timed with the disk around it,
// and a fresh store holding just what the vacuum keeps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config.h"
#include "table_model.h"
#include "versioned_engine.h"

namespace spool::bench {

// The floor: after this share of the update commits.
inline constexpr uint64_t kHistoryFloorPercent = 90;

// W5's rows with `updates` update commits; the floor (shape.point) after
// kHistoryFloorPercent of them.
struct History {
  TableShape shape;
  uint64_t updates = 0;
  uint64_t floor() const { return shape.point; }
};
History HistoryOf(const BenchConfig& config, uint64_t updates);

// The reads as of the floor and of the newest version, checked against
// `at_floor` and `latest`.
void CheckHistoryReads(VersionedEngine& engine, const History& h, const Digest& at_floor, const Digest& latest,
                       std::string_view when);

struct ChangeFeed {
  double seconds = 0;
  double rows = 0;
};
// Every change of the versions after the floor (timed), checked against
// the model.
ChangeFeed TimedChangeFeed(VersionedEngine& engine, const History& h);

struct Vacuumed {
  double seconds = 0;
  double before = 0;  // bytes on disk
  double after = 0;
  double fresh = 0;  // a fresh store's, holding what the vacuum keeps (FreshStoreBytes)
};
// The vacuum to the floor (timed), with the store's bytes on disk in `db`
// before and after it.
Vacuumed TimedVacuum(VersionedEngine& engine, const History& h, const std::string& db);

// Bytes on disk of a fresh store of engine `name` holding what a vacuum to
// the floor keeps: the table as of the floor, the updates after it and,
// when `restored`, the restore of the table to the floor as a new version.
double FreshStoreBytes(const BenchConfig& config, const std::string& name, int rep, const History& h, bool restored);

}  // namespace spool::bench
