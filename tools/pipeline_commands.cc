// `spool pipeline set | show` and `spool update`: define a store's pipeline
// and run updates of it.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_format.h"
#include "commands.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/records.h"

namespace spool::cli {
namespace {

Status ReadSpecFile(const std::string& path, PipelineSpec* spec) {
  std::ifstream in(path == "-" ? "/dev/stdin" : path);
  if (!in) return Status::NotFound("cannot read pipeline spec " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParsePipelineSpec(text.str(), spec).WithContext(path);
}

int RunSet(const std::string& dir, const std::string& file) {
  PipelineSpec spec;
  Status s = ReadSpecFile(file, &spec);
  if (!s.ok()) return ReportError(s);
  std::unique_ptr<Store> store;
  s = OpenStore(dir, &store);
  if (!s.ok()) return ReportError(s);
  std::string id;
  CommitResult result;
  s = SetPipelineDefinition(store.get(), spec, &id, &result);
  if (!s.ok()) return ReportError(s);
  std::cout << fmt::format("pipeline {} ({}) defined at version {}: {} datasets, {} flows\n", id,
                           spec.name.empty() ? "unnamed" : spec.name, result.version, spec.datasets.size(),
                           spec.flows.size());
  return kExitOk;
}

int RunShow(const std::string& dir, bool as_json) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, &store);
  PipelineSpec spec;
  std::string id;
  int64_t number = 0;
  if (s.ok()) s = GetPipelineDefinition(store.get(), &spec, &id, &number);
  if (!s.ok()) return ReportError(s);
  if (as_json) {
    std::cout << PipelineSpecToJson(spec) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("pipeline {} ({}), definition #{}\n\n", id, spec.name.empty() ? "unnamed" : spec.name,
                           number);
  Table datasets({"dataset", "kind", "written by"});
  for (const DatasetSpec& d : spec.datasets) {
    std::string writers;
    for (const FlowSpec& f : spec.flows) {
      if (f.target == d.name) writers += (writers.empty() ? "" : ", ") + f.name;
    }
    datasets.AddRow({d.name, std::string(TableKindName(d.kind)), writers});
  }
  std::cout << datasets.ToString() << "\n";
  Table flows({"flow", "source", "steps", "target", "checkpoint"});
  for (const FlowSpec& f : spec.flows) {
    std::string source = f.source.kind == SourceKind::kDataset ? "dataset " + f.source.dataset
                         : f.source.kind == SourceKind::kFiles ? "files " + f.source.path
                                                               : "topic " + f.source.path;
    std::string data;
    bool found = false;
    s = store->GetCheckpoint(f.name, &data, &found);
    if (!s.ok()) return ReportError(s);
    flows.AddRow({f.name + (f.once ? " (once)" : ""), source, std::to_string(f.steps.size()), f.target,
                  found ? Preview(data, 60) : "none"});
  }
  std::cout << flows.ToString();
  return kExitOk;
}

std::atomic<bool> interrupted{false};

// The first Ctrl-C stops the update after its batch; a second one kills.
extern "C" void OnSignal(int signal) {
  interrupted = true;
  std::signal(signal, SIG_DFL);
}

struct UpdateArgs {
  std::string dir;
  bool continuous = false;
  uint64_t max_batches = 0;
  std::string interval = "1s";
};

int RunUpdate(const UpdateArgs& args) {
  UpdateOptions options;
  options.continuous = args.continuous;
  options.max_batches = args.max_batches;
  Status s = ParseDuration(args.interval, &options.trigger_interval_us);
  if (!s.ok()) return ReportError(s);
  std::unique_ptr<Store> store;
  s = OpenStore(args.dir, &store);
  PipelineSpec spec;
  if (s.ok()) s = GetPipelineDefinition(store.get(), &spec);
  std::unique_ptr<Pipeline> pipeline;
  if (s.ok()) s = Pipeline::Open(store.get(), spec, &pipeline);
  if (!s.ok()) return ReportError(s);
  options.cause = "USER_ACTION";
  options.stop = &interrupted;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  UpdateResult result;
  s = pipeline->Update(options, &result);
  if (!s.ok()) return ReportError(s);
  Table table({"flow", "batches", "rows in", "rows out", "deleted", "late", "status"});
  for (const FlowUpdateStats& f : result.flows) {
    table.AddRow({f.flow, FormatCount(f.batches), FormatCount(f.input_rows), FormatCount(f.output_rows),
                  FormatCount(f.deleted_rows), FormatCount(f.late_rows),
                  f.failed ? "FAILED" : f.skipped ? "skipped" : "ok"});
  }
  std::cout << fmt::format("update {} {}\n", result.update_id, UpdateStateName(result.state)) << table.ToString();
  if (result.state == UpdateState::kFailed) {
    std::cerr << "error: " << result.error << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void RegisterPipelineCommands(CLI::App& app, int* exit_code) {
  CLI::App* pipeline = app.add_subcommand("pipeline", "Define the store's pipeline");
  pipeline->require_subcommand(1);
  auto set_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* set = pipeline->add_subcommand("set", "Record SPEC.json (checked first) as the pipeline's definition");
  set->add_option("dir", set_args->first, "Store directory")->required();
  set->add_option("spec", set_args->second, "The JSON spec (docs/pipelines.md); - for stdin")->required();
  set->callback([=] { *exit_code = RunSet(set_args->first, set_args->second); });

  auto show_args = std::make_shared<std::pair<std::string, bool>>();
  CLI::App* show = pipeline->add_subcommand("show", "The pipeline's id, datasets, flows and checkpoints");
  show->add_option("dir", show_args->first, "Store directory")->required();
  show->add_flag("--json", show_args->second, "Print the spec as JSON");
  show->callback([=] { *exit_code = RunShow(show_args->first, show_args->second); });

  auto args = std::make_shared<UpdateArgs>();
  CLI::App* update = app.add_subcommand("update", "Run an update of the pipeline: every flow processes what is available");
  update->add_option("dir", args->dir, "Store directory")->required();
  update->add_flag("--continuous", args->continuous, "Keep processing until interrupted (Ctrl-C stops after the batch)");
  update->add_option("--max-batches", args->max_batches, "Stop after this many micro-batches (0: no bound)");
  update->add_option("--trigger-interval", args->interval, "Continuous mode: wait this long when idle (default 1s)");
  update->callback([=] { *exit_code = RunUpdate(*args); });
}

}  // namespace spool::cli
