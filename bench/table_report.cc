#include "table_report.h"

#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "catalog.h"
#include "engine.h"
#include "history_workloads.h"
#include "scaling_report.h"
#include "table_workloads.h"
#include "text_table.h"
#include "units.h"

namespace spool::bench {
namespace {

// How the written columns are measured (io_counters.h).
constexpr char kWrittenNote[] =
    "   written = bytes the process passed to write calls (/proc/self/io wchar) from open to close +\n"
    "   sync; device written = sectors its block device wrote meanwhile (/sys stat: the journal and\n"
    "   partial-page rewrites count, but so would another process's writes). Both ÷ payload.)\n";

// docs/benchmarks.md, "Targets".
constexpr double kW5AsOfVsLatest = 1.5;
constexpr double kW5AsOfVsBestPeer = 1.0;
constexpr double kW6HistoryGrowth = 1.5;
constexpr double kW6VsRocksDb = 2.0;
constexpr double kW5DiskPerPayload = 1.0;
constexpr double kVacuumVsFresh = 1.3;

std::string Cell(const Results& results, std::string_view workload, std::string_view row, std::string_view metric,
                 int decimals) {
  const auto s = results.Get(workload, row, metric);
  return s ? FormatNumber(s->median, decimals) : "–";
}

std::string RangeCell(const Results& results, std::string_view workload, std::string_view row, std::string_view metric,
                      int decimals) {
  const auto s = results.Get(workload, row, metric);
  return s ? FormatNumber(s->min, decimals) + "–" + FormatNumber(s->max, decimals) : "–";
}

std::string PeerName(const BestPeer& peer) {
  return peer.engine.empty() ? "none" : std::string(DisplayName(peer.engine));
}

void PrintW5(const BenchConfig& config, const Results& results, std::ostream& out) {
  const uint64_t v50 = W5PointVersion(config);
  TextTable table({"engine", fmt::format("as-of v{} s", v50), "min–max", "÷ Spool", "latest s", "min–max",
                   "as-of ÷ latest", "disk MB", "disk/payload", "written/payload", "device written/payload",
                   "load rows/s", "update commits/s"});
  const double spool_as_of = results.Median(kW5, kSpool, metric::kAsOfReadS);
  for (const Results::Row* row : results.RowsOf(kW5)) {
    const std::string& e = row->engine;
    const double as_of = results.Median(kW5, e, metric::kAsOfReadS);
    table.AddRow({RowLabel(kW5, e), Cell(results, kW5, e, metric::kAsOfReadS, kSecondsDecimals),
                  RangeCell(results, kW5, e, metric::kAsOfReadS, kSecondsDecimals),
                  FormatNumber(as_of / spool_as_of, 2), Cell(results, kW5, e, metric::kLatestReadS, kSecondsDecimals),
                  RangeCell(results, kW5, e, metric::kLatestReadS, kSecondsDecimals),
                  FormatNumber(as_of / results.Median(kW5, e, metric::kLatestReadS), 2),
                  Cell(results, kW5, e, metric::kDiskMB, 1), Cell(results, kW5, e, metric::kDiskPerPayload, 2),
                  Cell(results, kW5, e, metric::kWrittenPerPayload, 2),
                  Cell(results, kW5, e, metric::kDeviceWrittenPerPayload, 2),
                  Cell(results, kW5, e, metric::kLoadRecordsPerS, 0),
                  Cell(results, kW5, e, metric::kUpdateCommitsPerS, 0)});
  }
  out << fmt::format(
             "\n== W5: time travel — a keyed table, 100 versions each updating 1% of it; full read as of "
             "v50 (version {}) and of the latest ==\n",
             v50)
      << table.ToString();
  const BestPeer as_of_peer = FindBestPeer(results, kW5, metric::kAsOfReadS, false);
  const BestPeer latest_peer = FindBestPeer(results, kW5, metric::kLatestReadS, false);
  out << RatioLine("Spool as-of read ÷ Spool latest read",
                   spool_as_of / results.Median(kW5, kSpool, metric::kLatestReadS), "  (target ≤ 1.50)")
      << RatioLine("Spool as-of read ÷ best peer's (" + PeerName(as_of_peer) + ")", spool_as_of / as_of_peer.value,
                   "  (target ≤ 1.00)")
      << RatioLine("Spool latest read ÷ best peer's (" + PeerName(latest_peer) + ")",
                   results.Median(kW5, kSpool, metric::kLatestReadS) / latest_peer.value, "")
      << "  (Load: 1,000 rows per durable commit; update commits: 1% of the rows each, durable. Peers keep\n"
         "   key‖version entries, and a read is one ordered scan keeping each key's newest entry ≤ v; their\n"
         "   latest read is the same scan. Reads run on the reopened store, after one untimed read; each\n"
         "   sample is the median of 3 reads. disk = bytes allocated after close. payload = 116 B × rows\n"
         "   written by the load and the updates. Taking the rewind point at v50 is left out of written.\n"
      << kWrittenNote;
}

void PrintW6(const Results& results, std::ostream& out) {
  TextTable table({"engine", "rewind s", "min–max", "÷ Spool", "restore/copy s", "close s", "open s", "point taken s",
                   "point MB written"});
  const double spool = results.Median(kW6, kSpool, metric::kRewindS);
  for (const Results::Row* row : results.RowsOf(kW6)) {
    const std::string& e = row->engine;
    table.AddRow({RowLabel(kW6, e), Cell(results, kW6, e, metric::kRewindS, kSecondsDecimals),
                  RangeCell(results, kW6, e, metric::kRewindS, kSecondsDecimals),
                  FormatNumber(results.Median(kW6, e, metric::kRewindS) / spool, 2),
                  Cell(results, kW6, e, metric::kRewindRestoreS, kSecondsDecimals),
                  Cell(results, kW6, e, metric::kRewindCloseS, kSecondsDecimals),
                  Cell(results, kW6, e, metric::kRewindOpenS, kSecondsDecimals),
                  Cell(results, kW6, e, metric::kPointS, kSecondsDecimals),
                  Cell(results, kW6, e, metric::kPointWrittenMB, 1)});
  }
  out << "\n== W6: rewind — after W5's 100 versions, bring the table back to v50 and have it open there ==\n"
      << table.ToString();
  out << RatioLine("Spool rewind ÷ RocksDB checkpoint restore", spool / results.Median(kW6, kRocksDb, metric::kRewindS),
                   "  (target ≤ 2.00)")
      << RatioLine("Spool rewind ÷ RocksDB's open of the checkpoint alone (no close)",
                   spool / results.Median(kW6, kRocksDb, metric::kRewindOpenS), "")
      << "  (rewind = the whole step, timed from the store open at the newest version to the store open at v50:\n"
         "   Spool: Store::RewindTo v50 (the log cut after it, the cut archived; the state copy kept at the\n"
         "   rewind point adopted), close, Store::Open; RocksDB: close, open the Checkpoint taken at v50;\n"
         "   LevelDB: close, open the copy made at v50 (closed, table files hard-linked); LMDB, SQLite: close,\n"
         "   copy the backup taken at v50 back + fdatasync, open. \"point taken\" = making that checkpoint or\n"
         "   copy at v50 during the updates (Spool: a durable pin and Store::SaveStateCopy, as a pipeline's\n"
         "   rewind point does), left out of W5's figures. The versions after v50 stay readable in Spool's\n"
         "   archive; the peers drop them. Bringing the table back as a new version, keeping them\n"
         "   (Store::Restore), is the snapshot workload's restore.)\n";
}

// Spool's rewind with ×100 W6's history after the point ÷ with ×1.
double SpoolHistoryGrowth(const Results& results) {
  return MedianAt(results, kW6History, kSpool, 100, metric::kRewindS) /
         MedianAt(results, kW6History, kSpool, 1, metric::kRewindS);
}

void PrintW6History(const Results& results, std::ostream& out) {
  PrintSeries(
      results,
      {kW6History, metric::kRewindS, "W6 history: rewind to v50 (s) against the history after it", kSecondsDecimals},
      out);
  PrintSeries(results,
              {kW6History, metric::kAsOfReadS, "W6 history: full read as of v50 (s) against the history after it",
               kSecondsDecimals},
              out);
  PrintSeries(results,
              {kW6History, metric::kLatestReadS, "W5 against the versions: full read of the latest version (s)",
               kSecondsDecimals},
              out);
  PrintSeries(results,
              {kW6History, metric::kDiskPerPayload, "W5 against the versions: bytes on disk ÷ payload bytes", 2}, out);
  out << RatioLine("Spool rewind with ×100 the history ÷ with ×1", SpoolHistoryGrowth(results), "  (target ≤ 1.50)")
      << "  (×1 is W6's run; ×10 and ×100 are stores of their own, built the same way with 500 and 5,000\n"
         "   update commits after v50 (of 1% of the rows each: 550 and 5,050 versions of the table, against\n"
         "   W5's 100), closed, reopened, measured on disk, read once as of v50 and once as of the latest\n"
         "   version, then rewound.)\n";
}

void PrintW3Keyed(const Results& results, std::ostream& out) {
  TextTable table({"engine", "records/s", "min–max", "÷ Spool", "records/s incl. close", "payload MB/s", "disk/payload",
                   "written/payload", "device written/payload"});
  const double spool = results.Median(kW3Keyed, kSpool, metric::kRecordsPerS);
  for (const Results::Row* row : results.RowsOf(kW3Keyed)) {
    const std::string& e = row->engine;
    table.AddRow({RowLabel(kW3Keyed, e), Cell(results, kW3Keyed, e, metric::kRecordsPerS, 0),
                  RangeCell(results, kW3Keyed, e, metric::kRecordsPerS, 0),
                  FormatNumber(results.Median(kW3Keyed, e, metric::kRecordsPerS) / spool, 2),
                  Cell(results, kW3Keyed, e, metric::kRecordsPerSInclClose, 0),
                  Cell(results, kW3Keyed, e, metric::kPayloadMBPerS, 1),
                  Cell(results, kW3Keyed, e, metric::kDiskPerPayload, 2),
                  Cell(results, kW3Keyed, e, metric::kWrittenPerPayload, 2),
                  Cell(results, kW3Keyed, e, metric::kDeviceWrittenPerPayload, 2)});
  }
  out << "\n== W3 keyed: W3's records as rows of a keyed Spool table (log + state), 1,000 per durable commit ==\n"
      << table.ToString();
  const BestPeer peer = FindBestPeer(results, kW3Keyed, metric::kRecordsPerS);
  out << RatioLine("Spool keyed table ÷ best peer's plain W3 (" + PeerName(peer) + ")", spool / peer.value,
                   "  (W3's target, ≥ 2.00, is the log's; shown for reference)")
      << RatioLine("Spool keyed table ÷ Spool's log alone",
                   spool / results.Median(kW3Keyed, kSpoolLogRow, metric::kRecordsPerS), "")
      << "  (Peers and Spool's log run plain W3 (key → value puts) in the same rotation. records/s stops at\n"
         "   the last acknowledged commit, as in W3; \"incl. close\" adds closing the store (Spool: the state's\n"
         "   last batches written to LMDB; RocksDB: the memtable flushed). disk = bytes allocated after close.\n"
      << kWrittenNote;
}

TargetCheck LowerIsBetter(std::string workload, std::string target, std::string measured, double value, double bound) {
  TargetCheck check{std::move(workload), std::move(target), std::move(measured), value, bound, false, false};
  check.available = std::isfinite(value);
  return check;
}

}  // namespace

void PrintTableWorkloads(const BenchConfig& config, const Results& results, std::ostream& out) {
  if (config.Runs(kW3Keyed)) PrintW3Keyed(results, out);
  if (config.Runs(kW5)) PrintW5(config, results, out);
  if (config.Runs(kW5RowsSeries)) {
    PrintSeries(
        results,
        {kW5RowsSeries, metric::kAsOfReadS, "W5 scaling: full read as of v50 (s) against the rows", kSecondsDecimals},
        out);
    PrintSeries(results,
                {kW5RowsSeries, metric::kLatestReadS,
                 "W5 scaling: full read of the latest version (s) against the rows", kSecondsDecimals},
                out);
    out << "  (W5's table and history — 100 update commits of 1% of the rows — at 10%, 100% and 1000% of its rows.)\n";
  }
  if (config.Runs(kW6)) PrintW6(results, out);
  if (config.Runs(kW6History)) PrintW6History(results, out);
}

void CheckTableTargets(const Results& results, std::vector<TargetCheck>* checks) {
  const double as_of = results.Median(kW5, kSpool, metric::kAsOfReadS);
  checks->push_back(LowerIsBetter(kW5, "as-of read ≤ 1.5 × Spool's latest read", "Spool as-of v50 ÷ Spool latest",
                                  as_of / results.Median(kW5, kSpool, metric::kLatestReadS), kW5AsOfVsLatest));
  const BestPeer peer = FindBestPeer(results, kW5, metric::kAsOfReadS, false);
  checks->push_back(LowerIsBetter(kW5, "as-of read ≤ the best peer",
                                  "Spool as-of v50 ÷ best peer (" + PeerName(peer) + ")", as_of / peer.value,
                                  kW5AsOfVsBestPeer));
  checks->push_back(LowerIsBetter(kW5, "disk ≤ 1.0 × payload", "Spool bytes on disk ÷ payload bytes",
                                  results.Median(kW5, kSpool, metric::kDiskPerPayload), kW5DiskPerPayload));
  checks->push_back(LowerIsBetter(kVacuum, "after vacuuming 90% of the history, ≤ 1.3 × a fresh store of what is kept",
                                  "Spool disk after vacuum ÷ fresh store",
                                  results.Median(kVacuum, kSpool, metric::kAfterPerFresh), kVacuumVsFresh));
  checks->push_back(LowerIsBetter(kW6, "flat in history after the point (100× ≤ 1.5× the time)",
                                  "Spool rewind, ×100 history ÷ ×1", SpoolHistoryGrowth(results), kW6HistoryGrowth));
  checks->push_back(LowerIsBetter(
      kW6, "≤ 2 × RocksDB's checkpoint restore", "Spool rewind ÷ RocksDB rewind",
      results.Median(kW6, kSpool, metric::kRewindS) / results.Median(kW6, kRocksDb, metric::kRewindS), kW6VsRocksDb));
}

}  // namespace spool::bench
