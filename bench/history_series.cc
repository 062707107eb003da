#include "history_series.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "check.h"
#include "files.h"
#include "history_steps.h"
#include "history_workloads.h"
#include "scaling_report.h"
#include "stopwatch.h"
#include "table_model.h"
#include "text_table.h"
#include "units.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

// What the reads of one size must return.
struct Model {
  Digest at_floor;
  Digest latest;
};

Model ModelOf(const History& h) { return Model{ModelDigest(h.shape, h.floor()), ModelDigest(h.shape, h.updates)}; }

void AddPoint(const std::string& name, const History& h, const ChangeFeed& feed, const Vacuumed& vacuumed,
              Results* results) {
  const Results::Place place{kHistorySeries, Results::Point{kUpdatesPoint, static_cast<double>(h.updates)}};
  results->AddTo(place, name, metric::kChangeRowsPerS, feed.rows / feed.seconds);
  results->AddTo(place, name, metric::kChangeFeedS, feed.seconds);
  results->AddTo(place, name, metric::kChangeRows, feed.rows);
  results->AddTo(place, name, metric::kVacuumS, vacuumed.seconds);
  results->AddTo(place, name, metric::kDiskMBBefore, vacuumed.before / kBytesPerMB);
  results->AddTo(place, name, metric::kDiskMBAfter, vacuumed.after / kBytesPerMB);
  results->AddTo(place, name, metric::kFreshMB, vacuumed.fresh / kBytesPerMB);
  results->AddTo(place, name, metric::kAfterPerFresh, vacuumed.after / vacuumed.fresh);
}

// One size on one engine: build and reopen, change feed, vacuum, a fresh
// store to compare.
void RunPoint(const BenchConfig& config, const std::string& name, int rep, const History& h, const Model& model,
              Results* results) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  if (engine == nullptr) return;  // no table variant (spool-group)
  Stopwatch watch;
  const std::string run_dir = config.RunDir(kHistorySeries, fmt::format("{}-{}", name, h.updates), rep);
  BuildAndReopen(*engine, h.shape, h.updates, run_dir, Point::kNone);
  const double build_s = watch.Seconds();
  CheckHistoryReads(*engine, h, model.at_floor, model.latest, "(warm-up)");
  const ChangeFeed feed = TimedChangeFeed(*engine, h);
  Vacuumed vacuumed = TimedVacuum(*engine, h, run_dir + "/db");
  CheckHistoryReads(*engine, h, model.at_floor, model.latest, "after the vacuum");
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
  vacuumed.fresh = FreshStoreBytes(config, name, rep, h, /*restored=*/false);
  AddPoint(name, h, feed, vacuumed, results);
  std::cerr << fmt::format(
      "history {} {} updates rep {}/{}: change feed {:.0f} rows/s ({:.4f} s), vacuum {:.4f} s ({:.1f} → {:.1f} MB, "
      "{:.2f} × a fresh store's {:.1f} MB); built in {:.1f} s, {:.1f} s in all\n",
      name, h.updates, rep, config.reps, feed.rows / feed.seconds, feed.seconds, vacuumed.seconds,
      vacuumed.before / kBytesPerMB, vacuumed.after / kBytesPerMB, vacuumed.after / vacuumed.fresh,
      vacuumed.fresh / kBytesPerMB, build_s, watch.Seconds());
}

}  // namespace

std::vector<uint64_t> HistorySeriesUpdates(const BenchConfig& config) {
  std::vector<uint64_t> sizes = config.history_updates;
  std::sort(sizes.begin(), sizes.end());
  if (sizes.empty()) return sizes;
  // The smallest scaled (at least the minimum), the others in proportion.
  const double factor =
      static_cast<double>(config.Scaled(sizes.front(), kHistorySeriesMinUpdates)) / static_cast<double>(sizes.front());
  for (uint64_t& updates : sizes) updates = static_cast<uint64_t>(std::round(static_cast<double>(updates) * factor));
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void RunHistorySeries(const BenchConfig& config, int rep, Results* results) {
  for (uint64_t updates : HistorySeriesUpdates(config)) {
    const History h = HistoryOf(config, updates);
    const Model model = ModelOf(h);
    for (const std::string& name : config.engines) RunPoint(config, name, rep, h, model, results);
  }
}

void PrintHistorySeries(const BenchConfig& config, const Results& results, std::ostream& out) {
  if (!config.Runs(kHistorySeries)) return;
  const auto print = [&](const char* metric, const char* what, int decimals) {
    PrintSeries(results,
                {kHistorySeries, metric, fmt::format("History length: {} against the update commits", what), decimals},
                out);
  };
  print(metric::kChangeRowsPerS, "change feed rows/s", 0);
  print(metric::kChangeFeedS, "change feed (s)", kSecondsDecimals);
  print(metric::kVacuumS, "vacuum (s)", kSecondsDecimals);
  print(metric::kDiskMBBefore, "MB on disk before the vacuum", 1);
  print(metric::kDiskMBAfter, "MB on disk after the vacuum", 1);
  print(metric::kAfterPerFresh, "disk after the vacuum ÷ a fresh store's of what it keeps", 2);
  std::string sizes;
  for (uint64_t updates : HistorySeriesUpdates(config)) {
    sizes += (sizes.empty() ? "" : ", ") + FormatNumber(static_cast<double>(updates), 0);
  }
  const TableShape shape = ShapeOf(config);
  out << fmt::format(
      "  ({} rows, then {} update commits (--history-updates) of {} rows each, every engine.\n"
      "   The floor is the version after {}% of them: the change feed runs over the versions after it and\n"
      "   the vacuum to it, as the cdf and vacuum workloads do (no snapshot or restore here), each checked\n"
      "   against the model; a fresh store then holds just the history kept. 4,000 update commits take\n"
      "   LMDB and SQLite minutes each to build.)\n",
      FormatNumber(static_cast<double>(shape.rows), 0), sizes, FormatNumber(static_cast<double>(shape.update_rows), 0),
      kHistoryFloorPercent);
}

}  // namespace spool::bench
