#include "pipeline_rewind_workload.h"

#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "check.h"
#include "engine.h"
#include "files.h"
#include "spool/rewind/rewind.h"
#include "spool/rewind/rewind_points.h"
#include "stopwatch.h"
#include "stream_pipeline.h"
#include "table_workloads.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr uint64_t kProduceBatch = 10'000;  // messages per Produce

// The phases of one timed rewind, in seconds.
struct RewindPhases {
  double plan_s = 0;
  double execute_s = 0;
  double close_s = 0;
  double open_s = 0;
  double total() const { return plan_s + execute_s + close_s + open_s; }
};

// A store in `dir` with its topic and the layered pipeline; events are
// numbered from 0 in the order they were produced.
class PipelineStore {
 public:
  explicit PipelineStore(std::string dir) : dir_(std::move(dir)) {}

  void Create() {
    FreshDir(dir_);
    Expect(Topic::Create(Env::Default(), topic_dir(), TopicConfig{}), "spool topic create");
    Open();
    Expect(SetPipelineDefinition(store_.get(), spec_), "spool pipeline definition");
    OpenPipeline();
  }
  void Open() { Expect(Store::Open(SpoolStoreOptions(), store_dir(), &store_), "spool open"); }
  void OpenPipeline() { Expect(Pipeline::Open(store_.get(), spec_, &pipeline_), "spool pipeline open"); }
  void Close() {
    pipeline_.reset();
    store_.reset();  // flushes the staged state to LMDB
  }

  // Produces `events` new events (untimed) and runs one triggered update.
  void Update(uint64_t events) {
    Expect(ProduceEvents(topic_dir(), produced_, events, kProduceBatch), "spool producing events");
    produced_ += events;
    Run(UpdateOptions{}, "spool update");
  }
  double FullRefresh() {
    UpdateOptions options;
    options.full_refresh = true;
    Stopwatch watch;
    Run(options, "spool full refresh");
    return watch.Seconds();
  }
  RewindPoint RecordPoint(double* seconds) {
    RewindPoint point;
    Stopwatch watch;
    Expect(RecordRewindPoint(store_.get(), *pipeline_, "w6p rewind point", false, &point), "spool rewind point");
    *seconds = watch.Seconds();
    point_events_ = produced_;
    return point;
  }
  RewindPhases TimedRewind(const RewindPoint& point);

  // Checks both tables against the model of the first `events` events.
  void CheckTables(uint64_t events, std::string_view when);
  uint64_t Rows();

  uint64_t produced() const { return produced_; }
  uint64_t point_events() const { return point_events_; }
  std::string store_dir() const { return dir_ + "/store"; }

 private:
  std::string topic_dir() const { return dir_ + "/topic"; }
  void Run(const UpdateOptions& options, std::string_view what) {
    UpdateResult result;
    Expect(RunUpdate(pipeline_.get(), options, &result), what);
  }

  const std::string dir_;
  const PipelineSpec spec_ = LayeredEventPipelineSpec(dir_ + "/topic");
  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
  uint64_t produced_ = 0;
  uint64_t point_events_ = 0;
};

RewindPhases PipelineStore::TimedRewind(const RewindPoint& point) {
  RewindPhases phases;
  RewindSpec spec;
  spec.rewind_point_id = point.id;
  Stopwatch watch;
  RewindPlan plan;
  Expect(PlanRewind(store_.get(), *pipeline_, spec, &plan), "spool plan rewind");
  phases.plan_s = watch.Seconds();
  watch.Restart();
  RewindRun run{"", UpdateCause::kUserAction, false};
  Expect(ExecuteRewind(store_.get(), *pipeline_, plan, &run), "spool rewind");
  phases.execute_s = watch.Seconds();
  watch.Restart();
  Close();
  phases.close_s = watch.Seconds();
  watch.Restart();
  Open();
  OpenPipeline();
  phases.open_s = watch.Seconds();
  return phases;
}

void PipelineStore::CheckTables(uint64_t events, std::string_view when) {
  uint64_t orders = 0;
  Expect(CountRows(store_.get(), kOrdersTable, &orders), "spool reading the orders");
  if (orders != events) {
    throw BenchError(fmt::format("spool: {} holds {} rows {}, {} expected", kOrdersTable, orders, when, events));
  }
  std::vector<KeyTotals> totals;
  Expect(ReadTotals(store_.get(), &totals), "spool reading the totals");
  CheckTotals(fmt::format("spool ({})", when), totals, ModelTotals(events, /*positive_only=*/false));
}

uint64_t PipelineStore::Rows() {
  uint64_t orders = 0, totals = 0;
  Expect(CountRows(store_.get(), kOrdersTable, &orders), "spool reading the orders");
  Expect(CountRows(store_.get(), kTotalsTable, &totals), "spool reading the totals");
  return orders + totals;
}

std::string RowOf(uint64_t multiplier) {
  if (multiplier == 1) return kW6pX1;
  return multiplier == 10 ? kW6pX10 : kW6pX100;
}

// One store of the history series: built, rewound, checked.
struct HistoryRun {
  RewindPhases phases;
  double refresh_s = 0;
  double point_s = 0;
  uint64_t updates_after = 0;
  uint64_t rows_at_point = 0;
  double store_mb = 0;
};

HistoryRun RunHistory(const BenchConfig& config, int rep, uint64_t multiplier) {
  const uint64_t events = config.Scaled(kW6pEventsPerUpdate, kW6pMinEventsPerUpdate);
  PipelineStore run(config.RunDir(kW6Pipeline, RowOf(multiplier), rep));
  run.Create();
  for (uint64_t u = 0; u < kW6pUpdatesBeforePoint; ++u) run.Update(events);
  HistoryRun out;
  out.refresh_s = run.FullRefresh();
  run.CheckTables(run.produced(), "after the full refresh");
  const RewindPoint point = run.RecordPoint(&out.point_s);
  out.rows_at_point = run.Rows();
  out.updates_after = multiplier * kW6pUpdatesAfterPoint;
  for (uint64_t u = 0; u < out.updates_after; ++u) run.Update(events);
  run.Close();
  SyncAll();
  out.store_mb = static_cast<double>(DiskBytes(run.store_dir())) / kBytesPerMB;
  run.Open();
  run.OpenPipeline();
  out.phases = run.TimedRewind(point);
  run.CheckTables(run.point_events(), "after the rewind");
  if (multiplier == 1) {
    run.Update(0);  // replays the events after the point
    run.CheckTables(run.produced(), "after the rewind and a replay");
  }
  run.Close();
  RemoveDir(config.RunDir(kW6Pipeline, RowOf(multiplier), rep));
  return out;
}

void AddHistory(const std::string& row, const HistoryRun& run, uint64_t events_per_update, Results* results) {
  results->Add(kW6Pipeline, row, metric::kPipelineRewindS, run.phases.total());
  results->Add(kW6Pipeline, row, metric::kRewindPlanS, run.phases.plan_s);
  results->Add(kW6Pipeline, row, metric::kRewindExecuteS, run.phases.execute_s);
  results->Add(kW6Pipeline, row, metric::kRewindUpdateS, run.phases.plan_s + run.phases.execute_s);
  results->Add(kW6Pipeline, row, metric::kRewindReopenCloseS, run.phases.close_s);
  results->Add(kW6Pipeline, row, metric::kRewindReopenS, run.phases.open_s);
  results->Add(kW6Pipeline, row, metric::kFullRefreshS, run.refresh_s);
  results->Add(kW6Pipeline, row, metric::kRecordPointS, run.point_s);
  results->Add(kW6Pipeline, row, metric::kUpdatesAfterPoint, static_cast<double>(run.updates_after));
  results->Add(kW6Pipeline, row, metric::kEventsAfterPoint, static_cast<double>(run.updates_after * events_per_update));
  results->Add(kW6Pipeline, row, metric::kRowsAtPoint, static_cast<double>(run.rows_at_point));
  results->Add(kW6Pipeline, row, metric::kStoreMBBeforeRewind, run.store_mb);
}

}  // namespace

void RunW6Pipeline(const BenchConfig& config, int rep, Results* results) {
  if (!config.RunsEngine(kSpool)) return;
  const uint64_t events = config.Scaled(kW6pEventsPerUpdate, kW6pMinEventsPerUpdate);
  uint64_t rows_at_point = 0;
  for (uint64_t multiplier : kW6pHistoryMultipliers) {
    const HistoryRun run = RunHistory(config, rep, multiplier);
    AddHistory(RowOf(multiplier), run, events, results);
    rows_at_point = run.rows_at_point;
    const RewindPhases& p = run.phases;
    std::cerr << fmt::format(
        "w6p spool ×{} rep {}/{}: {} updates after the point ({:.0f} MB store), rewind {:.4f} s "
        "(plan {:.4f}, execute {:.4f}, close {:.4f}, open {:.4f}); full refresh {:.3f} s "
        "(tables checked)\n",
        multiplier, rep, config.reps, run.updates_after, run.store_mb, p.total(), p.plan_s, p.execute_s, p.close_s,
        p.open_s, run.refresh_s);
  }
  if (!config.RunsEngine(kRocksDb)) return;
  const TableRewind rocks =
      MeasureTableRewind(kRocksDb, rows_at_point, config.RunDir(kW6Pipeline, std::string(kRocksDb), rep));
  const std::string row(kRocksDb);
  results->Add(kW6Pipeline, row, metric::kPipelineRewindS, rocks.total_s);
  results->Add(kW6Pipeline, row, metric::kRewindReopenCloseS, rocks.times.close_s);
  results->Add(kW6Pipeline, row, metric::kRewindReopenS, rocks.times.open_s);
  results->Add(kW6Pipeline, row, metric::kRowsAtPoint, static_cast<double>(rows_at_point));
  std::cerr << fmt::format("w6p rocksdb rep {}/{}: checkpoint restore of a {}-row table {:.4f} s (table checked)\n",
                           rep, config.reps, rows_at_point, rocks.total_s);
}

}  // namespace spool::bench
