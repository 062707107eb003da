#include "catalog.h"

#include <algorithm>
#include <vector>

#include "commit_workloads.h"
#include "end_to_end_workload.h"
#include "engine.h"
#include "history_series.h"
#include "history_workloads.h"
#include "jetstream_workload.h"
#include "latency_workload.h"
#include "pipeline_rewind_workload.h"
#include "recovery.h"
#include "results.h"
#include "stream_step_workload.h"
#include "table_workloads.h"

namespace spool::bench {
namespace {

struct WorkloadEntry {
  std::string_view workload;
  std::string_view title;
  std::vector<std::string_view> headline;
};

// In the order the tool runs them.
const std::vector<WorkloadEntry>& Workloads() {
  static const std::vector<WorkloadEntry> entries = {
      {kLimits, "The machine's limits", {}},
      {kW1, "W1: one writer, 1 record per durable commit", {metric::kCommitsPerS}},
      {kW2, "W2: 4 writer threads, 1 record per durable commit", {metric::kCommitsPerS}},
      {kW2Writers, "W2 scaling: durable commits/s against the writers", {}},
      {kW3, "W3: batches of 1,000 records, 1 durable commit per batch", {metric::kRecordsPerS}},
      {kW3Keyed, "W3 keyed: W3's records as rows of a keyed table", {metric::kRecordsPerS}},
      {kW4, "W4: stream step, 1,000 events per durable step", {metric::kEventsPerS}},
      {kW4Keys, "W4 scaling: the stream step against the key space", {}},
      {kLatency, "Latency: an event produced → visible in the output table, continuous mode", {metric::kP50Us}},
      {kW5, "W5: time travel, full read of a 100,000-row table", {metric::kAsOfReadS, metric::kLatestReadS}},
      {kW5RowsSeries, "W5 scaling: full reads against the table's rows", {}},
      {kW6, "W6: rewind the table to v50 and reopen", {metric::kRewindS}},
      {kW6History, "W6 scaling: rewind against the history after the point", {}},
      {kChangeFeed, "Change data feed: scan of 100 versions' changes", {metric::kChangeRowsPerS}},
      {kSnapshot, "Snapshot of the newest version, restore to an older one", {metric::kSnapshotS, metric::kRestoreS}},
      {kVacuum, "Vacuum of the history below a floor", {metric::kVacuumS}},
      {kHistorySeries, "History length: change feed and vacuum against the update commits", {}},
      {kW6Pipeline, "W6 pipeline: rewind tables, offsets and state to a point", {metric::kPipelineRewindS}},
      {kW7, "W7: reopen after the writer was killed", {metric::kReopenS}},
      {kW7Log, "W7 scaling: reopen after a kill against the log written", {}},
      {kE2E, "End to end: triggered update, topic → filter → aggregate → table", {metric::kEventsPerS}},
      {kJetStream, "JetStream in and out: stream → W4's step → totals published", {metric::kEventsPerS}},
  };
  return entries;
}

const WorkloadEntry* FindWorkload(std::string_view workload) {
  const auto& entries = Workloads();
  const auto it =
      std::find_if(entries.begin(), entries.end(), [&](const WorkloadEntry& e) { return e.workload == workload; });
  return it == entries.end() ? nullptr : &*it;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "commits" → "commits/s"; "mb" → "MB/s"; a sync rate's unit is the syncs.
std::string RateUnit(std::string_view what) {
  const size_t last = what.rfind('_');
  const std::string_view word = last == std::string_view::npos ? what : what.substr(last + 1);
  if (word == "mb") return "MB/s";
  if (word == "fdatasync") return "fdatasyncs/s";
  return std::string(word) + "/s";
}

// The metric's unit and direction, read off its name.
MetricInfo UnitOf(std::string_view metric) {
  constexpr std::string_view kRate = "_per_s";
  if (EndsWith(metric, kRate)) return {"", RateUnit(metric.substr(0, metric.size() - kRate.size())), true};
  // A rate with a qualifier after it: "records_per_s_incl_close".
  if (const size_t at = metric.find("_per_s_"); at != std::string_view::npos) {
    return {"", RateUnit(metric.substr(0, at)), true};
  }
  if (EndsWith(metric, "_per_payload_byte")) return {"", "× payload", false};
  if (EndsWith(metric, "_per_fresh")) return {"", "× fresh store", false};
  if (EndsWith(metric, "ratio")) return {"", "×", true};
  if (EndsWith(metric, "_per_sync")) return {"", "commits/sync", true};
  if (EndsWith(metric, "_us")) return {"", "µs", false};
  if (EndsWith(metric, "_s")) return {"", "s", false};
  if (EndsWith(metric, "_mb") || metric.find("_mb_") != std::string_view::npos) return {"", "MB", false};
  return {"", "", false};
}

// "asof_read_s" → "asof read"; "commits_per_sync" → "commits per sync";
// "records_per_s_incl_close" → "records per s incl close".
std::string LabelOf(std::string_view metric) {
  for (std::string_view suffix : {"_per_s", "_us", "_s", "_mb"}) {
    if (EndsWith(metric, suffix) && metric.size() > suffix.size()) {
      metric.remove_suffix(suffix.size());
      break;
    }
  }
  std::string label(metric);
  std::replace(label.begin(), label.end(), '_', ' ');
  return label;
}

}  // namespace

MetricInfo DescribeMetric(std::string_view metric) {
  MetricInfo info = UnitOf(metric);
  info.label = LabelOf(metric);
  return info;
}

std::string WorkloadTitle(std::string_view workload) {
  const WorkloadEntry* entry = FindWorkload(workload);
  return std::string(entry == nullptr ? workload : entry->title);
}

bool IsHeadline(std::string_view workload, std::string_view metric) {
  const WorkloadEntry* entry = FindWorkload(workload);
  if (entry == nullptr) return false;
  return std::find(entry->headline.begin(), entry->headline.end(), metric) != entry->headline.end();
}

std::string RowLabel(std::string_view workload, std::string_view row) {
  if (row == kRawOverwrite) return "raw 4-KiB overwrite + fdatasync";
  if (row == kRawAppend) return "raw 4-KiB append + fdatasync";
  if (row == kRawSequential) return "raw sequential write + 1 fdatasync";
  if (row == kRawSyncedBatches) return "raw, each batch written + fdatasync";
  if (row == kEncodedSyncedBatches) return "Spool's codec, each batch written + fdatasync";
  if (row == kMachine) return "machine";
  if (row == kSpoolLogRow) return "Spool log only (plain W3)";
  if (row == kW6pX1) return "Spool pipeline, ×1 history";
  if (row == kW6pX10) return "Spool pipeline, ×10 history";
  if (row == kW6pX100) return "Spool pipeline, ×100 history";
  if (row == kNatsLimit) return "the limit: bare libnats loop";
  if (row == kNatsRocksDb) return "hand-built peer: libnats + RocksDB";
  if (row == kRocksDb && workload == kW6Pipeline) return "RocksDB checkpoint, the table alone";
  if (row == kSpool && (workload == kW3Keyed || workload == kW5 || workload == kW6)) {
    return workload == kW3Keyed ? "Spool keyed table" : "Spool table";
  }
  return std::string(DisplayName(row));
}

}  // namespace spool::bench
