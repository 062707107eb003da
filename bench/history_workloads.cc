#include "history_workloads.h"

#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "check.h"
#include "engine.h"
#include "files.h"
#include "history_steps.h"
#include "report.h"
#include "stopwatch.h"
#include "table_model.h"
#include "units.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

// The results of the change feed.
void AddChangeFeed(const std::string& name, const ChangeFeed& feed, Results* results) {
  results->Add(kChangeFeed, name, metric::kChangeRowsPerS, feed.rows / feed.seconds);
  results->Add(kChangeFeed, name, metric::kChangeFeedS, feed.seconds);
  results->Add(kChangeFeed, name, metric::kChangeRows, feed.rows);
}

// The results of the vacuum.
void AddVacuum(const std::string& name, const Vacuumed& v, Results* results) {
  results->Add(kVacuum, name, metric::kVacuumS, v.seconds);
  results->Add(kVacuum, name, metric::kDiskMBBefore, v.before / kBytesPerMB);
  results->Add(kVacuum, name, metric::kReclaimedMB, (v.before - v.after) / kBytesPerMB);
  results->Add(kVacuum, name, metric::kDiskMBAfter, v.after / kBytesPerMB);
  results->Add(kVacuum, name, metric::kFreshMB, v.fresh / kBytesPerMB);
  results->Add(kVacuum, name, metric::kAfterPerFresh, v.after / v.fresh);
}

void RunOnEngine(const BenchConfig& config, const std::string& name, int rep, const History& h, Results* results) {
  std::unique_ptr<VersionedEngine> engine = MakeVersionedEngine(name);
  if (engine == nullptr) return;  // no table variant (spool-group)
  const std::string run_dir = config.RunDir("history", name, rep);
  BuildAndReopen(*engine, h.shape, h.updates, run_dir, Point::kNone);
  const std::string db = run_dir + "/db";
  const Digest at_floor = ModelDigest(h.shape, h.floor());
  CheckHistoryReads(*engine, h, at_floor, ModelDigest(h.shape, h.updates), "(warm-up)");
  std::string line = fmt::format("history {} rep {}/{}:", name, rep, config.reps);

  if (config.Runs(kChangeFeed)) {
    const ChangeFeed feed = TimedChangeFeed(*engine, h);
    AddChangeFeed(name, feed, results);
    line += fmt::format(" change feed {:.0f} rows/s", feed.rows / feed.seconds);
  }
  const double rows = static_cast<double>(h.shape.rows);
  uint64_t newest = h.shape.UpdateVersion(h.updates);
  if (config.Runs(kSnapshot)) {
    Stopwatch watch;
    Expect(engine->TakeSnapshot(run_dir + "/snapshot"), name + " snapshot");
    const double snapshot_s = watch.Seconds();
    watch.Restart();
    Expect(engine->RestoreAsNewVersion(h.shape.point_version(), ++newest), name + " restore");
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
    Vacuumed v = TimedVacuum(*engine, h, db);
    // The floor still reads as it was; the newest version is the floor's
    // again when the restore ran.
    CheckHistoryReads(*engine, h, at_floor, config.Runs(kSnapshot) ? at_floor : ModelDigest(h.shape, h.updates),
                      "after the vacuum");
    v.fresh = FreshStoreBytes(config, name, rep, h, config.Runs(kSnapshot));
    AddVacuum(name, v, results);
    line +=
        fmt::format(", vacuum {:.4f} s ({:.1f} of {:.1f} MB reclaimed; left: {}), {:.2f} × a fresh store's {:.1f} MB",
                    v.seconds, (v.before - v.after) / kBytesPerMB, v.before / kBytesPerMB, DiskBreakdown(db),
                    v.after / v.fresh, v.fresh / kBytesPerMB);
  }
  std::cerr << line << "\n";
  Expect(engine->Close(), name + " close");
  engine.reset();
  RemoveDir(run_dir);
}

}  // namespace

void RunHistoryOps(const BenchConfig& config, int rep, Results* results) {
  const History h = HistoryOf(config, kHistoryUpdates);
  for (const std::string& name : config.engines) RunOnEngine(config, name, rep, h, results);
}

void PrintHistoryOps(const BenchConfig& config, const Results& results, std::ostream& out) {
  const TableShape shape = HistoryOf(config, kHistoryUpdates).shape;
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
