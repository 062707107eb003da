#include "targets.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "config.h"
#include "engine.h"
#include "jetstream_workload.h"
#include "pipeline_rewind_report.h"
#include "sql_workload.h"
#include "stream_step_workload.h"
#include "table_report.h"
#include "units.h"

namespace spool::bench {
namespace {

// docs/benchmarks.md, "Targets".
constexpr double kW1VsOverwrite = 0.9;
constexpr double kW1VsBestPeer = 1.0;
constexpr double kW2VsOwnW1 = 3.0;
constexpr double kW2VsBestPeer = 1.5;
constexpr double kW3VsSequential = 0.5;
constexpr double kW3VsBestPeer = 2.0;
constexpr double kW4VsBestPeer = 2.0;
constexpr double kW7ReopenSeconds = 0.5;

bool IsPeer(std::string_view engine) {
  const std::vector<std::string> known = KnownEngines();
  const bool is_engine = std::find(known.begin(), known.end(), engine) != known.end();
  return is_engine && engine != kSpool && engine != kSpoolGroup;
}

TargetCheck Ratio(std::string workload, std::string target, std::string measured, double numerator, double denominator,
                  double bound) {
  TargetCheck check{
      std::move(workload), std::move(target), std::move(measured), numerator / denominator, bound, true, false};
  check.available = std::isfinite(check.value);
  return check;
}

std::string PeerLabel(const BestPeer& peer) { return "best peer (" + std::string(DisplayName(peer.engine)) + ")"; }

void CheckW1(const Results& results, std::vector<TargetCheck>* checks) {
  const double spool = SpoolMedian(results, kW1, metric::kCommitsPerS);
  checks->push_back(Ratio(kW1, "≥ 0.9 × raw 4-KiB overwrite + fdatasync rate", "Spool W1 ÷ overwrite rate", spool,
                          CeilingMedian(results, kW1, kRawOverwrite, metric::kCommitsPerS, metric::kOverwriteSyncPerS),
                          kW1VsOverwrite));
  const BestPeer peer = FindBestPeer(results, kW1, metric::kCommitsPerS);
  checks->push_back(Ratio(kW1, "≥ the best peer", "Spool W1 ÷ " + PeerLabel(peer), spool, peer.value, kW1VsBestPeer));
}

void CheckW2(const Results& results, std::vector<TargetCheck>* checks) {
  const double spool = SpoolMedian(results, kW2, metric::kCommitsPerS);
  checks->push_back(Ratio(kW2, "≥ 3 × Spool's own W1 (group commit)", "Spool W2 ÷ Spool W1", spool,
                          SpoolMedian(results, kW1, metric::kCommitsPerS), kW2VsOwnW1));
  const BestPeer peer = FindBestPeer(results, kW2, metric::kCommitsPerS);
  checks->push_back(
      Ratio(kW2, "≥ 1.5 × the best peer", "Spool W2 ÷ " + PeerLabel(peer), spool, peer.value, kW2VsBestPeer));
}

void CheckW3(const Results& results, std::vector<TargetCheck>* checks) {
  checks->push_back(
      Ratio(kW3, "≥ 0.5 × the sequential-write limit", "Spool payload MB/s ÷ buffered seq. write",
            SpoolMedian(results, kW3, metric::kPayloadMBPerS),
            CeilingMedian(results, kW3, kRawSequential, metric::kPayloadMBPerS, metric::kSeqBufferedMBPerS),
            kW3VsSequential));
  const BestPeer peer = FindBestPeer(results, kW3, metric::kRecordsPerS);
  checks->push_back(Ratio(kW3, "≥ 2 × the best peer", "Spool W3 ÷ " + PeerLabel(peer),
                          SpoolMedian(results, kW3, metric::kRecordsPerS), peer.value, kW3VsBestPeer));
}

void CheckW4(const Results& results, std::vector<TargetCheck>* checks) {
  const BestPeer peer = FindBestPeer(results, kW4, metric::kEventsPerS);
  checks->push_back(Ratio(kW4, "≥ 2 × the best peer, exactly-once intact", "Spool W4 ÷ " + PeerLabel(peer),
                          SpoolMedian(results, kW4, metric::kEventsPerS), peer.value, kW4VsBestPeer));
}

void CheckW7(const Results& results, std::vector<TargetCheck>* checks) {
  TargetCheck check{kW7,
                    "reopen ≤ 0.5 s after 1 GB written",
                    "Spool reopen seconds",
                    SpoolMedian(results, kW7, metric::kReopenS),
                    kW7ReopenSeconds,
                    false,
                    false};
  check.available = std::isfinite(check.value);
  checks->push_back(std::move(check));
}

}  // namespace

TargetCheck MakeCheck(std::string workload, std::string target, std::string measured, double value, double bound,
                      bool higher_is_better) {
  TargetCheck check{std::move(workload), std::move(target), std::move(measured), value, bound, higher_is_better, false};
  check.available = std::isfinite(check.value);
  return check;
}

double TargetCheck::shortfall() const {
  if (!available || met()) return 0;
  return higher_is_better ? 1 - value / bound : value / bound - 1;
}

std::vector<TargetCheck> CheckTargets(const Results& results) {
  std::vector<TargetCheck> checks;
  CheckW1(results, &checks);
  CheckW2(results, &checks);
  CheckW3(results, &checks);
  CheckW4(results, &checks);
  CheckW7(results, &checks);
  CheckTableTargets(results, &checks);
  CheckPipelineRewindTargets(results, &checks);
  CheckSqlTargets(results, &checks);
  CheckJetStreamTargets(results, &checks);
  return checks;
}

BestPeer FindBestPeer(const Results& results, const std::string& workload, const std::string& metric,
                      bool higher_is_better) {
  BestPeer best{"", kNaN};
  for (const Results::Row* row : results.RowsOf(workload)) {
    if (!IsPeer(row->engine)) continue;
    const auto summary = results.Get(workload, row->engine, metric);
    if (!summary) continue;
    const bool better = higher_is_better ? summary->median > best.value : summary->median < best.value;
    if (std::isnan(best.value) || better) best = BestPeer{row->engine, summary->median};
  }
  return best;
}

double SpoolMedian(const Results& results, const std::string& workload, const std::string& metric) {
  return results.Median(workload, kSpool, metric);
}

double MachineMedian(const Results& results, const std::string& metric) {
  return results.Median(kLimits, kMachine, metric);
}

double CeilingMedian(const Results& results, const std::string& workload, const std::string& row,
                     const std::string& metric, const std::string& limits_metric) {
  const auto summary = results.Get(workload, row, metric);
  return summary ? summary->median : MachineMedian(results, limits_metric);
}

}  // namespace spool::bench
