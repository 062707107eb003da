#include "stream_step_workload.h"

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "check.h"
#include "files.h"
#include "stats.h"
#include "stopwatch.h"
#include "stream_events.h"
#include "stream_step_engine.h"

namespace spool::bench {
namespace {

struct StepShape {
  uint64_t steps = 0;
  uint64_t keys = kStreamKeys;  // the key space the events' keys are drawn from
  uint64_t events() const { return steps * kW4EventsPerStep; }
};

// Output rows the whole run must write: the keys each step touches.
uint64_t ExpectedOutputRows(const StepShape& shape) {
  uint64_t rows = 0;
  for (uint64_t s = 0; s < shape.steps; ++s) rows += DistinctKeys(s * kW4EventsPerStep, kW4EventsPerStep, shape.keys);
  return rows;
}

// What the steps must have written: the per-key totals and the output rows.
struct ExpectedOutput {
  std::vector<KeyTotals> totals;
  uint64_t output_rows = 0;
};

ExpectedOutput ExpectedOf(const StepShape& shape) {
  return ExpectedOutput{ModelTotals(shape.events(), false, shape.keys), ExpectedOutputRows(shape)};
}

// A run of the steps: its shape, the model it is checked against, where
// its figures go.
struct StepPlan {
  StepShape shape;
  ExpectedOutput expected;
  Results::Place place;
};

// What one timed run of the steps measured.
struct StepRun {
  double seconds = 0;
  std::vector<double> latencies_us;  // one per step
  uint64_t output_rows = 0;
  double cpu_seconds = 0;  // of every thread of the process
};

StepRun TimedSteps(StreamStepEngine& engine) {
  StepRun run;
  Stopwatch run_watch;
  CpuStopwatch cpu_watch;
  Stopwatch step_watch;
  const Status s = engine.Run([&](uint64_t rows) {
    run.latencies_us.push_back(step_watch.Micros());
    run.output_rows += rows;
    step_watch.Restart();
  });
  run.seconds = run_watch.Seconds();
  run.cpu_seconds = cpu_watch.Seconds();
  Expect(s, std::string(engine.name()) + " steps");
  return run;
}

void AddResults(const BenchConfig& config, const std::string& name, int rep, const StepPlan& plan, const StepRun& run,
                Results* results) {
  const double steps = static_cast<double>(plan.shape.steps);
  const double per_s = static_cast<double>(plan.shape.events()) / run.seconds;
  const double p50_us = Percentile(run.latencies_us, 0.5);
  const double p99_us = Percentile(run.latencies_us, 0.99);
  const double cpu_us_per_step = run.cpu_seconds * 1e6 / steps;
  results->AddTo(plan.place, name, metric::kEventsPerS, per_s);
  results->AddTo(plan.place, name, metric::kP50Us, p50_us);
  results->AddTo(plan.place, name, metric::kP99Us, p99_us);
  results->AddTo(plan.place, name, metric::kOutputRowsPerStep, static_cast<double>(run.output_rows) / steps);
  results->AddTo(plan.place, name, metric::kCpuPerStepUs, cpu_us_per_step);
  const std::string keys = plan.place.point ? fmt::format(" {} keys", plan.shape.keys) : "";
  std::cerr << fmt::format(
      "w4 {}{} rep {}/{}: {:.0f} events/s, step p50 {:.0f} µs, p99 {:.0f} µs, CPU {:.0f} µs per step (output "
      "checked)\n",
      name, keys, rep, config.reps, per_s, p50_us, p99_us, cpu_us_per_step);
}

// Stages the events, runs the steps (timed), then checks the step count,
// the output rows written and the output table against the model.
void RunW4Engine(const BenchConfig& config, StreamStepEngine& engine, int rep, const StepPlan& plan, Results* results) {
  const std::string name(engine.name());
  const std::string row = plan.place.point ? name + "-" + std::to_string(plan.shape.keys) : name;
  const std::string dir = config.RunDir(plan.place.workload, row, rep);
  FreshDir(dir);
  Expect(engine.Open(dir, kW4EventsPerStep, plan.shape.keys), name + " open");
  Expect(engine.Stage(plan.shape.events()), name + " staging the events");
  SyncAll();
  const StepRun run = TimedSteps(engine);
  const ExpectedOutput& expected = plan.expected;
  if (run.latencies_us.size() != plan.shape.steps || run.output_rows != expected.output_rows) {
    throw BenchError(fmt::format("{}: {} steps writing {} output rows, {} and {} expected", name,
                                 run.latencies_us.size(), run.output_rows, plan.shape.steps, expected.output_rows));
  }
  std::vector<KeyTotals> totals;
  Expect(engine.ReadOutput(&totals), name + " reading the output");
  CheckTotals(name, totals, expected.totals);
  Expect(engine.Close(), name + " close");
  RemoveDir(dir);
  AddResults(config, name, rep, plan, run, results);
}

void RunW4OnEngines(const BenchConfig& config, int rep, const StepPlan& plan, Results* results) {
  for (const std::string& name : config.engines) {
    std::unique_ptr<StreamStepEngine> engine = MakeStreamStepEngine(name, PeerStateNamed(config.peer_state));
    if (engine != nullptr) RunW4Engine(config, *engine, rep, plan, results);
  }
}

}  // namespace

void RunW4(const BenchConfig& config, int rep, Results* results) {
  const StepShape shape{config.Scaled(kW4Steps, kW4MinSteps)};
  RunW4OnEngines(config, rep, StepPlan{shape, ExpectedOf(shape), Results::Place{kW4, std::nullopt}}, results);
}

void RunW4Keys(const BenchConfig& config, int rep, Results* results) {
  for (uint64_t multiplier : kW4KeysMultipliers) {
    const StepShape shape{config.Scaled(kW4Steps, kW4MinSteps), kStreamKeys * multiplier};
    const Results::Point point{kKeysPoint, static_cast<double>(shape.keys)};
    RunW4OnEngines(config, rep, StepPlan{shape, ExpectedOf(shape), Results::Place{kW4Keys, point}}, results);
  }
}

}  // namespace spool::bench
