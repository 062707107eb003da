// spool-bench: Spool's transaction log side by side with RocksDB, LMDB,
// SQLite and LevelDB, in one run, on the workloads of docs/benchmarks.md that a
// log alone can run (W1, W2, W3, W7) and the machine's limits; with
// Spool's table API, W3 keyed, W5 time travel and W6 rewind
// (table_workloads.h); with its pipeline runtime, W4 the stream step
// (stream_step_workload.h) and an end-to-end update of 10 million events
// (end_to_end_workload.h), and W6 for a whole pipeline: its tables,
// offsets and state (pipeline_rewind_workload.h), and W4's step between
// NATS JetStream streams against libnats alone and libnats with RocksDB
// (jetstream_workload.h). Prints one table per
// workload and the targets; --json writes the same as JSON.
// docs/benchmarks.md says how to run it.
#include <chrono>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "check.h"
#include "commit_workloads.h"
#include "config.h"
#include "end_to_end_workload.h"
#include "engine.h"
#include "files.h"
#include "history_series.h"
#include "history_workloads.h"
#include "jetstream_workload.h"
#include "latency_workload.h"
#include "machine_limits.h"
#include "pipeline_rewind_workload.h"
#include "plot.h"
#include "recovery.h"
#include "report.h"
#include "run_info.h"
#include "sql_workload.h"
#include "stream_step_workload.h"
#include "table_workloads.h"

namespace spool::bench {
namespace {

constexpr char kDefaultDir[] = "/var/tmp/spool-bench";
constexpr int kExitError = 1;

std::vector<std::string> AllWorkloads() {
  return {kLimits,        kW1,         kW2,           kW2Writers, kW3,        kW3Keyed,    kW4,       kW4Keys,
          kLatency,       kW5,         kW5RowsSeries, kW6,        kW6History, kChangeFeed, kSnapshot, kVacuum,
          kHistorySeries, kW6Pipeline, kW7,           kW7Log,     kE2E,       kSql,        kJetStream};
}

// Hidden options: how RunKilledWriter starts W7's writer, and RunE2E the
// end-to-end updater.
struct ChildArgs {
  std::string w7_engine;
  uint64_t w7_bytes = 0;
  std::string e2e_dir;
  std::string sql_reader_dir;
  std::string sql_reader_stop;
};

void AddOptions(CLI::App& app, BenchConfig* config, ChildArgs* child) {
  app.add_option("--dir", config->dir, "Scratch directory, wiped at the start of the run")->capture_default_str();
  app.add_option("--workloads", config->workloads, "Comma list of workloads to run")
      ->delimiter(',')
      ->check(CLI::IsMember(AllWorkloads()))
      ->capture_default_str();
  app.add_option("--engines", config->engines, "Comma list of engines")
      ->delimiter(',')
      ->check(CLI::IsMember(KnownEngines()))
      ->capture_default_str();
  app.add_option("--reps", config->reps, "Repetitions per figure (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--scale", config->scale, "Multiplies record counts and W7's bytes (0.001 for a smoke run)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--w4-peer-state", config->peer_state,
                 "Where W4's and the latency workload's peers keep each key's totals: in a state table beside the "
                 "output (W4's definition), or in the output rows alone (as Spool's aggregate does)")
      ->check(CLI::IsMember({"table", "output"}))
      ->capture_default_str();
  app.add_option("--w6-history-multipliers", config->history_multipliers,
                 "W6's history series: comma list of how many times W6's history after the point each store of "
                 "its own holds (the smoke run uses small ones)")
      ->delimiter(',')
      ->check(CLI::Range(uint64_t{2}, uint64_t{1'000}))
      ->capture_default_str();
  app.add_option("--history-updates", config->history_updates,
                 "The history-updates series: comma list of update commits its tables hold at --scale 1 (--scale "
                 "multiplies them; 4,000 takes minutes per peer)")
      ->delimiter(',')
      ->check(CLI::Range(uint64_t{10}, uint64_t{100'000}))
      ->capture_default_str();
  app.add_option("--state-map-gib", config->state_map_gib,
                 "The LMDB map of Spool's state, GiB of address space reserved (not memory): lower it for valgrind "
                 "or under ulimit -v")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--json", config->json_path, "Also write the results as JSON to this file");
  CLI::Option* on = app.add_flag_callback(
      "--progress", [config] { config->progress = cli::ProgressMode::kOn; },
      "Print a progress line (share done, time left) after each workload run");
  app.add_flag_callback(
         "--no-progress", [config] { config->progress = cli::ProgressMode::kOff; },
         "No progress lines (default: only when stderr is a terminal)")
      ->excludes(on);
  app.add_option("--w7-writer", child->w7_engine, "Internal: run as W7's writer for this engine")->group("");
  app.add_option("--w7-bytes", child->w7_bytes, "Internal: W7 writer's payload bytes")->group("");
  app.add_option("--sql-reader", child->sql_reader_dir, "Internal: run as the SQL workload's reader of this store")
      ->group("");
  app.add_option("--sql-reader-stop", child->sql_reader_stop, "Internal: the SQL reader stops when this file exists")
      ->group("");
  app.add_option("--e2e-updater", child->e2e_dir, "Internal: run as the end-to-end updater in this directory")
      ->group("");
}

// Runs the selected workloads in a fixed order, whatever order they were
// named in, one repetition of each at a time: figures compared across
// workloads (W2 ÷ W1, W1 ÷ limits) are then measured minutes apart, not the
// length of the run.
void RunAll(const BenchConfig& config, bool show_progress, Results* results) {
  using Step = void (*)(const BenchConfig&, int, Results*);
  std::vector<Step> steps;
  if (config.Runs(kLimits)) steps.push_back(RunLimits);
  if (config.Runs(kW1)) steps.push_back(RunW1);
  if (config.Runs(kW2)) steps.push_back(RunW2);
  if (config.Runs(kW2Writers)) steps.push_back(RunW2Writers);
  if (config.Runs(kW3)) steps.push_back(RunW3);
  if (config.Runs(kW3Keyed)) steps.push_back(RunW3Keyed);
  if (config.Runs(kW4)) steps.push_back(RunW4);
  if (config.Runs(kW4Keys)) steps.push_back(RunW4Keys);
  if (config.Runs(kLatency)) steps.push_back(RunLatency);
  if (config.Runs(kW5) || config.Runs(kW6) || config.Runs(kW6History)) steps.push_back(RunW5W6);
  if (config.Runs(kW5RowsSeries)) steps.push_back(RunW5Rows);
  if (config.Runs(kChangeFeed) || config.Runs(kSnapshot) || config.Runs(kVacuum)) steps.push_back(RunHistoryOps);
  if (config.Runs(kHistorySeries)) steps.push_back(RunHistorySeries);
  if (config.Runs(kW6Pipeline)) steps.push_back(RunW6Pipeline);
  if (config.Runs(kW7) || config.Runs(kW7Log)) steps.push_back(RunW7);
  if (config.Runs(kE2E)) steps.push_back(RunE2E);
  if (config.Runs(kSql)) steps.push_back(RunSql);
  if (config.Runs(kJetStream)) steps.push_back(RunJetStream);
  // The workloads print a line per run; the bar, a line per workload run
  // between them, with the time left.
  const auto started = std::chrono::steady_clock::now();
  const uint64_t total = steps.size() * static_cast<uint64_t>(config.reps);
  uint64_t done = 0;
  for (int rep = 1; rep <= config.reps; ++rep) {
    for (Step step : steps) {
      step(config, rep, results);
      ++done;
      if (show_progress) {
        std::cerr << cli::ProgressBar::Render("spool-bench", "workload runs", done, total,
                                              std::chrono::steady_clock::now() - started)
                  << "\n";
      }
    }
  }
}

// `spool-bench plot FILE --out DIR`: charts of a --json file (plot.h).
CLI::App* AddPlotCommand(CLI::App& app, PlotOptions* options) {
  CLI::App* plot = app.add_subcommand("plot", "Draw charts of a spool-bench --json file with gnuplot");
  plot->add_option("json", options->json_path, "A file spool-bench --json wrote")->required();
  plot->add_option("--out", options->out_dir, "Directory for the charts (created when missing)")->required();
  plot->add_option("--format", options->format, "png or svg")
      ->check(CLI::IsMember({"png", "svg"}))
      ->capture_default_str();
  return plot;
}

int Plot(const PlotOptions& options) {
  for (const std::string& chart : DrawPlots(options)) std::cout << chart << "\n";
  return 0;
}

int Run(BenchConfig config) {
  config.self_path = std::filesystem::read_symlink("/proc/self/exe").string();
  PrepareRunDir(config.dir);
  Results results;
  const RunInfo info = CollectRunInfo(config);
  RunAll(config, cli::ProgressEnabled(config.progress), &results);
  const std::vector<TargetCheck> checks = CheckTargets(results);
  PrintReport(config, info, results, checks, std::cout);
  if (!config.json_path.empty()) WriteJson(info, results, checks, config.json_path);
  RemoveDir(config.dir);
  return 0;
}

}  // namespace
}  // namespace spool::bench

int main(int argc, char** argv) {
  using namespace spool::bench;
  BenchConfig config;
  config.dir = kDefaultDir;
  config.engines = DefaultEngines();
  config.workloads = AllWorkloads();
  ChildArgs child;
  CLI::App app{
      "spool-bench: Spool's log, tables and pipelines against RocksDB, LMDB, SQLite and LevelDB "
      "(docs/benchmarks.md)"};
  AddOptions(app, &config, &child);
  PlotOptions plot;
  CLI::App* plot_command = AddPlotCommand(app, &plot);
  CLI11_PARSE(app, argc, argv);
  SetSpoolStateMapBytes(config.state_map_gib << 30);
  try {
    if (*plot_command) return Plot(plot);
    if (!child.w7_engine.empty()) RunW7Writer(child.w7_engine, config.dir, child.w7_bytes);
    if (!child.e2e_dir.empty()) return RunE2EUpdater(child.e2e_dir);
    if (!child.sql_reader_dir.empty()) return RunSqlReader(child.sql_reader_dir, child.sql_reader_stop);
    return Run(std::move(config));
  } catch (const std::exception& e) {
    std::cerr << "spool-bench: " << e.what() << "\n";
    return kExitError;
  }
}
