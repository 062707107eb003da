#include "history_workloads.h"

#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "check.h"
#include "engine.h"
#include "files.h"
#include "report.h"
#include "stopwatch.h"
#include "table_model.h"
#include "units.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

TableShape HistoryShape(const BenchConfig& config) {
  TableShape shape = ShapeOf(config);
  shape.point = kHistoryFloor;
  return shape;
}

// The table's reads as of the floor and of the newest version, checked.
void CheckReads(VersionedEngine& engine, const TableShape& shape, const Digest& at_floor, const Digest& latest,
                std::string_view after) {
  const std::string name(engine.name());
  Digest digest;
  Expect(engine.ReadAsOf(shape.point_version(), DigestInto(&digest)),
         name + " read as of the floor " + std::string(after));
  CheckRead(digest, at_floor, name, "the read as of the floor " + std::string(after));
  digest = Digest();
  Expect(engine.ReadLatest(DigestInto(&digest)), name + " latest read " + std::string(after));
  CheckRead(digest, latest, name, "the latest read " + std::string(after));
}

void RunChangeFeed(VersionedEngine& engine, const TableShape& shape, Results* results) {
  const std::string name(engine.name());
  ChangeDigest got;
  Stopwatch watch;
  Expect(engine.ScanChanges(
             shape.point_version(), shape.UpdateVersion(kHistoryUpdates),
             [&](uint64_t version, std::string_view key, std::string_view value) { got.Add(version, key, value); }),
         name + " change feed");
  const double seconds = watch.Seconds();
  const ChangeDigest expected = ModelChanges(shape, kHistoryFloor, kHistoryUpdates);
  if (got != expected) {
    throw BenchError(fmt::format("{}: the change feed after version {} returned other changes ({}, {} expected)", name,
                                 shape.point_version(), got.changes(), expected.changes()));
  }
  const double changes = static_cast<double>(got.changes());
  results->Add(kChangeFeed, name, metric::kChangeRowsPerS, changes / seconds);
  results->Add(kChangeFeed, name, metric::kChangeFeedS, seconds);
  results->Add(kChangeFeed, name, metric::kChangeRows, changes);
}

// Bytes on disk of a fresh store of engine `name` holding what a vacuum
// to the floor keeps: the table as of the floor, the updates after it and,
// when `restored`, the restore of the table to the floor as a new version.
double FreshStoreBytes(const BenchConfig& config, const std::string& name, int rep, const TableShape& shape,
                       bool restored) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  const std::string run_dir = config.RunDir("history-fresh", name, rep);
  const std::string db = run_dir + "/db";
  FreshDir(run_dir);
  FreshDir(db);
  Expect(engine->Open(db), name + " open a fresh store");
  const uint64_t floor = BuildRetained(*engine, shape, kHistoryFloor, kHistoryUpdates);
  if (restored) {
    const uint64_t newest = shape.UpdateVersion(kHistoryUpdates - kHistoryFloor);
    Expect(engine->RestoreAsNewVersion(floor, newest + 1), name + " restore in a fresh store");
  }
  Expect(engine->Close(), name + " close a fresh store");
  engine.reset();
  SyncAll();
  const double bytes = static_cast<double>(DiskBytes(db));
  RemoveDir(run_dir);
  return bytes;
}

void RunOnEngine(const BenchConfig& config, const std::string& name, int rep, const TableShape& shape,
                 Results* results) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  if (engine == nullptr) return;  // no table variant (spool-group)
  const std::string run_dir = config.RunDir("history", name, rep);
  BuildAndReopen(*engine, shape, kHistoryUpdates, run_dir);
  const std::string db = run_dir + "/db";
  const Digest at_floor = ModelDigest(shape, kHistoryFloor);
  CheckReads(*engine, shape, at_floor, ModelDigest(shape, kHistoryUpdates), "(warm-up)");
  std::string line = fmt::format("history {} rep {}/{}:", name, rep, config.reps);

  if (config.Runs(kChangeFeed)) {
    RunChangeFeed(*engine, shape, results);
    line += fmt::format(" change feed {:.0f} rows/s", results->Get(kChangeFeed, name, metric::kChangeRowsPerS)->max);
  }
  const double rows = static_cast<double>(shape.rows);
  uint64_t newest = shape.UpdateVersion(kHistoryUpdates);
  if (config.Runs(kSnapshot)) {
    Stopwatch watch;
    Expect(engine->TakeSnapshot(run_dir + "/snapshot"), name + " snapshot");
    const double snapshot_s = watch.Seconds();
    watch.Restart();
    Expect(engine->RestoreAsNewVersion(shape.point_version(), ++newest), name + " restore");
    const double restore_s = watch.Seconds();
    Digest digest;
    Expect(engine->ReadLatest(DigestInto(&digest)), name + " read after the restore");
    CheckRead(digest, at_floor, name, "the read after the restore");
    results->Add(kSnapshot, name, metric::kSnapshotS, snapshot_s);
    results->Add(kSnapshot, name, metric::kRecordsPerS, rows / snapshot_s);
    results->Add(kSnapshot, name, metric::kRestoreS, restore_s);
    line += fmt::format(", snapshot {:.4f} s, restore {:.4f} s", snapshot_s, restore_s);
  }
  if (config.Runs(kVacuum)) {
    SyncAll();
    const double before = static_cast<double>(DiskBytes(db));
    Stopwatch watch;
    Expect(engine->Vacuum(shape.point_version()), name + " vacuum");
    const double seconds = watch.Seconds();
    SyncAll();
    const double after = static_cast<double>(DiskBytes(db));
    // The floor still reads as it was; the newest version is the floor's
    // again when the restore ran.
    CheckReads(*engine, shape, at_floor, config.Runs(kSnapshot) ? at_floor : ModelDigest(shape, kHistoryUpdates),
               "after the vacuum");
    const double fresh = FreshStoreBytes(config, name, rep, shape, config.Runs(kSnapshot));
    results->Add(kVacuum, name, metric::kVacuumS, seconds);
    results->Add(kVacuum, name, metric::kDiskMBBefore, before / kBytesPerMB);
    results->Add(kVacuum, name, metric::kReclaimedMB, (before - after) / kBytesPerMB);
    results->Add(kVacuum, name, metric::kDiskMBAfter, after / kBytesPerMB);
    results->Add(kVacuum, name, metric::kFreshMB, fresh / kBytesPerMB);
    results->Add(kVacuum, name, metric::kAfterPerFresh, after / fresh);
    line += fmt::format(
        ", vacuum {:.4f} s ({:.1f} of {:.1f} MB reclaimed; left: {}), {:.2f} × a fresh store's {:.1f} MB", seconds,
        (before - after) / kBytesPerMB, before / kBytesPerMB, DiskBreakdown(db), after / fresh, fresh / kBytesPerMB);
  }
  std::cerr << line << "\n";
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
}

}  // namespace

void RunHistoryOps(const BenchConfig& config, int rep, Results* results) {
  const TableShape shape = HistoryShape(config);
  for (const std::string& name : config.engines) RunOnEngine(config, name, rep, shape, results);
}

void PrintHistoryOps(const BenchConfig& config, const Results& results, std::ostream& out) {
  const TableShape shape = HistoryShape(config);
  const std::string sizes = fmt::format("  ({} rows, then {} update commits of {} rows; the floor is v{}.\n",
                                        shape.rows, kHistoryUpdates, shape.update_rows, shape.point_version());
  if (config.Runs(kChangeFeed)) {
    PrintTable(results,
               {kChangeFeed,
                "Change feed: every change of the 100 versions after the floor",
                {metric::kChangeRowsPerS, "change rows/s", 0},
                {{metric::kChangeFeedS, "scan s", 4}, {metric::kChangeRows, "rows", 0}}},
               out);
    out << sizes << "   Spool: Store::Changes (its change data feed, from the log); peers: one\n"
        << "   ordered scan of every key‖version entry keeping those of the versions asked for.)\n";
  }
  if (config.Runs(kSnapshot)) {
    PrintTable(results,
               {kSnapshot,
                "Snapshot of the newest version, then a restore to the floor as a new version",
                {metric::kSnapshotS, "snapshot s", 4},
                {{metric::kRecordsPerS, "table rows/s", 0}, {metric::kRestoreS, "restore s", 4}}},
               out);
    out << sizes << "   Spool: Store::TakeSnapshot, Store::Restore (one RESTORE commit). Peers:\n"
        << "   the snapshot is their rewind point's copy (RocksDB Checkpoint, LevelDB files hard-linked while\n"
        << "   closed, mdb_env_copy2, SQLite online backup); the restore reads the table as of the floor and\n"
        << "   commits every row whose latest value differs, durably. The table is then checked to read as\n"
        << "   of the floor.)\n";
  }
  if (config.Runs(kVacuum)) {
    PrintTable(results,
               {kVacuum,
                "Vacuum: drop the history no read as of the floor or later needs",
                {metric::kVacuumS, "vacuum s", 4},
                {{metric::kDiskMBBefore, "MB before", 1},
                 {metric::kReclaimedMB, "MB reclaimed", 1},
                 {metric::kDiskMBAfter, "MB after", 1},
                 {metric::kFreshMB, "fresh store MB", 1},
                 {metric::kAfterPerFresh, "after ÷ fresh", 2}}},
               out);
    out << sizes << "   Spool: a pin at the floor and Store::Vacuum with no retention: log\n"
        << "   segments, snapshots and history index runs below the floor (it may first take a base snapshot,\n"
        << "   so it can grow the store). Peers: one durable write deleting\n"
        << "   every entry older than its key's newest at or before the floor, then RocksDB and LevelDB\n"
        << "   compact the whole range; LMDB and SQLite leave the pages on their free lists. Reads as of\n"
        << "   the floor and of the newest version are checked after it. A fresh store of the same engine\n"
        << "   then holds just the history kept, written as the workload wrote it: \"after ÷ fresh\" is what\n"
        << "   the vacuumed store takes beyond that.)\n";
  }
}

}  // namespace spool::bench
