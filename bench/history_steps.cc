#include "history_steps.h"

#include <memory>

#include <fmt/format.h>

#include "check.h"
#include "engine.h"
#include "files.h"
#include "stopwatch.h"

namespace spool::bench {

History HistoryOf(const BenchConfig& config, uint64_t updates) {
  History history{ShapeOf(config), updates};
  history.shape.point = updates * kHistoryFloorPercent / 100;
  return history;
}

void CheckHistoryReads(VersionedEngine& engine, const History& h, const Digest& at_floor, const Digest& latest,
                       std::string_view when) {
  const std::string name(engine.name());
  TimedRead(name, fmt::format("read as of the floor {}", when), at_floor,
            [&](const RowVisitor& visit) { return engine.ReadAsOf(h.shape.point_version(), visit); });
  TimedRead(name, fmt::format("latest read {}", when), latest,
            [&](const RowVisitor& visit) { return engine.ReadLatest(visit); });
}

ChangeFeed TimedChangeFeed(VersionedEngine& engine, const History& h) {
  const std::string name(engine.name());
  ChangeDigest got;
  Stopwatch watch;
  Expect(engine.ScanChanges(
             h.shape.point_version(), h.shape.UpdateVersion(h.updates),
             [&](uint64_t version, std::string_view key, std::string_view value) { got.Add(version, key, value); }),
         name + " change feed");
  const double seconds = watch.Seconds();
  const ChangeDigest expected = ModelChanges(h.shape, h.floor(), h.updates);
  if (got != expected) {
    throw BenchError(fmt::format("{}: the change feed after version {} returned other changes ({}, {} expected)", name,
                                 h.shape.point_version(), got.changes(), expected.changes()));
  }
  return ChangeFeed{seconds, static_cast<double>(got.changes())};
}

Vacuumed TimedVacuum(VersionedEngine& engine, const History& h, const std::string& db) {
  Vacuumed vacuumed;
  SyncAll();
  vacuumed.before = static_cast<double>(DiskBytes(db));
  Stopwatch watch;
  Expect(engine.Vacuum(h.shape.point_version()), std::string(engine.name()) + " vacuum");
  vacuumed.seconds = watch.Seconds();
  SyncAll();
  vacuumed.after = static_cast<double>(DiskBytes(db));
  return vacuumed;
}

double FreshStoreBytes(const BenchConfig& config, const std::string& name, int rep, const History& h, bool restored) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  const std::string run_dir = config.RunDir("history-fresh", fmt::format("{}-{}", name, h.updates), rep);
  const std::string db = run_dir + "/db";
  FreshDir(run_dir);
  FreshDir(db);
  Expect(engine->Open(db), name + " open a fresh store");
  const uint64_t floor = BuildRetained(*engine, h.shape, h.floor(), h.updates);
  if (restored) {
    const uint64_t newest = h.shape.UpdateVersion(h.updates - h.floor());
    Expect(engine->RestoreAsNewVersion(floor, newest + 1), name + " restore in a fresh store");
  }
  Expect(engine->Close(), name + " close a fresh store");
  engine.reset();
  SyncAll();
  const double bytes = static_cast<double>(DiskBytes(db));
  RemoveDir(run_dir);
  return bytes;
}

}  // namespace spool::bench
