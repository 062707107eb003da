#include "pipeline_rewind_report.h"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "engine.h"
#include "pipeline_rewind_workload.h"
#include "table_workloads.h"
#include "text_table.h"
#include "units.h"

namespace spool::bench {
namespace {

// docs/benchmarks.md, "Targets" (W6).
constexpr double kHistoryGrowth = 1.5;
constexpr double kVsFullRefresh = 100.0;
constexpr double kVsRocksDb = 2.0;

constexpr const char* kHistoryRows[] = {kW6pX1, kW6pX10, kW6pX100};

std::string Cell(const Results& results, std::string_view row, std::string_view metric, int decimals) {
  const auto s = results.Get(kW6Pipeline, row, metric);
  return s ? FormatNumber(s->median, decimals) : "–";
}

std::string RangeCell(const Results& results, std::string_view row, std::string_view metric) {
  const auto s = results.Get(kW6Pipeline, row, metric);
  return s ? FormatNumber(s->min, kSecondsDecimals) + "–" + FormatNumber(s->max, kSecondsDecimals) : "–";
}

// "×N": a run's history after the point as a multiple of ×1's.
std::string Multiple(const Results& results, std::string_view row) {
  const double m = results.Median(kW6Pipeline, row, metric::kUpdatesAfterPoint) /
                   results.Median(kW6Pipeline, kW6pX1, metric::kUpdatesAfterPoint);
  return std::isfinite(m) ? "×" + FormatNumber(m, 0) : "–";
}

double Rewind(const Results& results, std::string_view row) {
  return results.Median(kW6Pipeline, row, metric::kPipelineRewindS);
}
double HistoryGrowth(const Results& results, std::string_view row) {
  return Rewind(results, row) / Rewind(results, kW6pX1);
}
double RefreshOverRewind(const Results& results) {
  return results.Median(kW6Pipeline, kW6pX1, metric::kFullRefreshS) / Rewind(results, kW6pX1);
}
// Both as updates on the open store: the rewind's plan and execution alone.
double RefreshOverRewindUpdate(const Results& results) {
  return results.Median(kW6Pipeline, kW6pX1, metric::kFullRefreshS) /
         results.Median(kW6Pipeline, kW6pX1, metric::kRewindUpdateS);
}
double OverRocksDb(const Results& results) { return Rewind(results, kW6pX1) / Rewind(results, kRocksDb); }

void AddHistoryRows(const Results& results, TextTable* table) {
  for (const char* row : kHistoryRows) {
    if (!results.Get(kW6Pipeline, row, metric::kPipelineRewindS)) continue;
    table->AddRow(
        {"Spool pipeline, " + Multiple(results, row) + " history", Cell(results, row, metric::kUpdatesAfterPoint, 0),
         Cell(results, row, metric::kEventsAfterPoint, 0), Cell(results, row, metric::kStoreMBBeforeRewind, 0),
         Cell(results, row, metric::kPipelineRewindS, kSecondsDecimals),
         RangeCell(results, row, metric::kPipelineRewindS), FormatNumber(HistoryGrowth(results, row), 2),
         Cell(results, row, metric::kRewindPlanS, kSecondsDecimals),
         Cell(results, row, metric::kRewindExecuteS, kSecondsDecimals),
         Cell(results, row, metric::kRewindReopenCloseS, kSecondsDecimals),
         Cell(results, row, metric::kRewindReopenS, kSecondsDecimals), Cell(results, row, metric::kFullRefreshS, 3),
         FormatNumber(results.Median(kW6Pipeline, row, metric::kFullRefreshS) / Rewind(results, row), 1),
         Cell(results, row, metric::kRecordPointS, kSecondsDecimals)});
  }
}

void AddRocksDbRow(const Results& results, TextTable* table) {
  const std::string row(kRocksDb);
  if (!results.Get(kW6Pipeline, row, metric::kPipelineRewindS)) return;
  table->AddRow({"RocksDB checkpoint, table alone (" + Cell(results, row, metric::kRowsAtPoint, 0) + " rows)",
                 std::to_string(kW5Updates - kW5Point), "–", "–",
                 Cell(results, row, metric::kPipelineRewindS, kSecondsDecimals),
                 RangeCell(results, row, metric::kPipelineRewindS), "–", "–", "–",
                 Cell(results, row, metric::kRewindReopenCloseS, kSecondsDecimals),
                 Cell(results, row, metric::kRewindReopenS, kSecondsDecimals), "–", "–", "–"});
}

TargetCheck Check(std::string target, std::string measured, double value, double bound, bool higher_is_better) {
  TargetCheck check{kW6Pipeline, std::move(target), std::move(measured), value, bound, higher_is_better, false};
  check.available = std::isfinite(value);
  return check;
}

}  // namespace

void PrintPipelineRewind(const BenchConfig& config, const Results& results, std::ostream& out) {
  if (!config.Runs(kW6Pipeline)) return;
  TextTable table({"run", "updates after point", "events after", "store MB", "rewind s", "min–max", "÷ ×1", "plan s",
                   "execute s", "close s", "open s", "full refresh s", "refresh ÷ rewind", "point s"});
  AddHistoryRows(results, &table);
  AddRocksDbRow(results, &table);
  out << fmt::format(
             "\n== W6 pipeline: rewind topic → orders → totals (tables, offsets, state) to a rewind point; "
             "{} updates of {} events before it ==\n",
             kW6pUpdatesBeforePoint, config.Scaled(kW6pEventsPerUpdate, kW6pMinEventsPerUpdate))
      << table.ToString();
  out << RatioLine("Spool rewind, " + Multiple(results, kW6pX10) + " history ÷ ×1", HistoryGrowth(results, kW6pX10),
                   "  (target ≤ 1.50)")
      << RatioLine("Spool rewind, " + Multiple(results, kW6pX100) + " history ÷ ×1", HistoryGrowth(results, kW6pX100),
                   "  (target ≤ 1.50)")
      << RatioLine("full refresh ÷ Spool rewind (×1 store)", RefreshOverRewind(results), "  (target ≥ 100)")
      << RatioLine(
             "full refresh ÷ Spool rewind without the close and reopen (plan + execute: both updates on the "
             "open store)",
             RefreshOverRewindUpdate(results), "")
      << RatioLine("Spool pipeline rewind (×1) ÷ RocksDB checkpoint restore of the table alone", OverRocksDb(results),
                   "  (target ≤ 2.00)")
      << "  (rewind = from the store open at its newest version to the store and pipeline open at the point:\n"
         "   PlanRewind + ExecuteRewind (rewind_point_id, whole pipeline: log cut after the point, archived by\n"
         "   hard links; the point's state copy swapped in; the old state deleted later in the background),\n"
         "   close, Store::Open + Pipeline::Open. point s = recording the point (untimed in the rewind): its\n"
         "   snapshot and its state copy. Each history size is a store of its own, closed and reopened before\n"
         "   its one rewind. full refresh = Pipeline::Update with full_refresh\n"
         "   on the same store just before the point was recorded, rebuilding both tables from the topic (which\n"
         "   then held exactly the point's events). RocksDB: close, open the Checkpoint taken at the point, for a\n"
         "   key‖version table with as many rows as the pipeline's tables at the point (W6's table machinery,\n"
         "   50 update commits after the point). Every table is checked against a model after each step.)\n";
}

void CheckPipelineRewindTargets(const Results& results, std::vector<TargetCheck>* checks) {
  checks->push_back(Check("pipeline rewind flat in history after the point (100× ≤ 1.5× the time)",
                          "Spool pipeline rewind, " + Multiple(results, kW6pX100) + " history ÷ ×1",
                          HistoryGrowth(results, kW6pX100), kHistoryGrowth, false));
  checks->push_back(Check("≥ 100 × faster than a full refresh of the same pipeline",
                          "full refresh ÷ Spool pipeline rewind (×1)", RefreshOverRewind(results), kVsFullRefresh,
                          true));
  checks->push_back(Check("≤ 2 × RocksDB's checkpoint restore, restoring offsets and state too",
                          "Spool pipeline rewind (×1) ÷ RocksDB table rewind", OverRocksDb(results), kVsRocksDb,
                          false));
}

}  // namespace spool::bench
