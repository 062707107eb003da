// `spool pipeline set | show` and `spool update`: define a store's pipeline
// and run updates of it.
#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "commands.h"
#include "json_format.h"
#include "json_text.h"
#include "plots.h"
#include "progress.h"
#include "spool/rewind/retries.h"
#include "spool/rewind/rewind.h"
#include "spool/rewind/rewind_points.h"
#include "spool/rewind/update_request.h"
#include "spool/rewind/updates.h"
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

int RunShow(const std::string& dir, bool as_json, const std::string& plot) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, &store, StoreAccess::kRead);
  PipelineSpec spec;
  std::string id;
  int64_t number = 0;
  if (s.ok()) s = GetPipelineDefinition(store.get(), &spec, &id, &number);
  if (!s.ok()) return ReportError(s);
  if (!plot.empty()) {
    GraphNotes notes;
    notes.title =
        fmt::format("pipeline {} ({}), definition #{}", spec.name.empty() ? "unnamed" : spec.name, id, number);
    s = WritePlot(plot, PipelineGraphSvg(spec, notes));
    return s.ok() ? kExitOk : ReportError(s);
  }
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
    std::string source = std::string(SourceKindName(f.source.kind)) + " " + SourceLocation(f.source);
    std::string data;
    bool found = false;
    s = store->GetCheckpoint(f.name, &data, &found);
    if (!s.ok()) return ReportError(s);
    flows.AddRow({f.name + (f.once ? " (once)" : ""), source, std::to_string(f.steps.size()), f.target,
                  found ? Preview(data, 60) : "none"});
  }
  std::cout << flows.ToString();
  if (spec.sinks.empty()) return kExitOk;
  // What each sink has published: the version up to which the message
  // system stores every change, from its progress row.
  Table sinks({"sink", "dataset", "mode", "publishes to", "published up to"});
  TableId progress;
  (void)TableId::Parse(kSinkProgressTable, &progress);
  for (const SinkSpec& k : spec.sinks) {
    Row row;
    bool found = false;
    s = store->Get(progress, {k.name}, &row, &found);
    if (!s.ok() && !s.IsNotFound()) return ReportError(s);
    sinks.AddRow({k.name, k.dataset, k.mode == SinkMode::kUpserts ? "upserts" : "changes",
                  "jetstream " + k.jetstream.stream + " " + k.jetstream.subject,
                  found ? "version " + std::to_string(std::get<int64_t>(row[1])) : "nothing yet"});
  }
  std::cout << "\n" << sinks.ToString();
  return kExitOk;
}

// The store in `dir` and the pipeline its recorded definition describes.
Status OpenPipeline(const std::string& dir, std::unique_ptr<Store>* store, PipelineSpec* spec,
                    std::unique_ptr<Pipeline>* pipeline) {
  SPOOL_RETURN_IF_ERROR(OpenStore(dir, store));
  SPOOL_RETURN_IF_ERROR(GetPipelineDefinition(store->get(), spec));
  return Pipeline::Open(store->get(), *spec, pipeline);
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
  std::string json;              // the reference body: text, @FILE or - (stdin)
  std::string rewind_point;      // --rewind-point ID
  std::string rewind_timestamp;  // --rewind-timestamp "yyyy-MM-dd HH:mm:ss"
  bool dry_run = false;
  bool validate_only = false;
  bool full_refresh = false;
  std::vector<std::string> full_refresh_tables;
  std::vector<std::string> refresh_tables;
  std::vector<std::string> reset_flows;
  bool cascade = false;
  bool refresh_failed = false;
};

// The request: the --json body, or the flags (a person's: USER_ACTION).
Status BuildRequest(const UpdateArgs& args, UpdateRequest* request) {
  const bool flags = !args.rewind_point.empty() || !args.rewind_timestamp.empty() || args.dry_run ||
                     args.validate_only || args.full_refresh || !args.full_refresh_tables.empty() ||
                     !args.refresh_tables.empty() || !args.reset_flows.empty();
  if (!args.json.empty()) {
    if (flags) return Status::InvalidArgument("give the request either as --json or as flags, not both");
    std::string body = args.json;
    if (body == "-" || body.starts_with("@")) {
      const std::string path = body == "-" ? "/dev/stdin" : body.substr(1);
      std::ifstream in(path);
      if (!in) return Status::NotFound("cannot read the request body " + path);
      std::stringstream text;
      text << in.rdbuf();
      body = text.str();
    }
    return ParseUpdateRequest(body, request);
  }
  request->cause = UpdateCause::kUserAction;
  // A dry run of a refresh is its validation.
  const bool refresh = args.full_refresh || !args.full_refresh_tables.empty() || !args.refresh_tables.empty() ||
                       !args.reset_flows.empty() || args.refresh_failed;
  const bool rewind = !args.rewind_point.empty() || !args.rewind_timestamp.empty();
  request->validate_only = args.validate_only || (args.dry_run && refresh && !rewind);
  request->full_refresh = args.full_refresh;
  request->full_refresh_selection = args.full_refresh_tables;
  request->refresh_selection = args.refresh_tables;
  request->reset_checkpoint_selection = args.reset_flows;
  if (rewind || (args.dry_run && !refresh)) {
    RewindSpec& spec = request->rewind_spec.emplace();
    if (!args.rewind_point.empty()) spec.rewind_point_id = args.rewind_point;
    if (!args.rewind_timestamp.empty()) spec.rewind_timestamp = args.rewind_timestamp;
    spec.dry_run = args.dry_run;
  }
  return Status::OK();
}

// Runs `request` (UpdateOutcome says what it was) and prints what it did.
// A pipeline update records rewind points on their interval, and stops
// after its batch on Ctrl-C.
// A dry run's preview: the pipeline graph with what the rewind would bring
// back — datasets, their table versions, the offsets their flows replay from.
Status PlotRewindPreview(const Pipeline& pipeline, const RewindPlan& plan, const RewindPoint& point,
                         const std::string& path) {
  GraphNotes notes;
  notes.title =
      fmt::format("rewind preview: {} to version {} ({} UTC)", plan.whole_pipeline ? "the pipeline" : "some datasets",
                  plan.target.version, FormatTimestamp(plan.target_timestamp_us));
  for (const RewindDataset& d : plan.datasets) {
    notes.highlighted.insert(d.identifier);
    for (const RewindPointDataset& at : point.datasets) {
      if (at.identifier != d.identifier) continue;
      notes.dataset_notes[d.identifier] =
          fmt::format("back to table version {}{}", at.table_version, d.reset_checkpoints ? "" : ", offsets kept");
      if (!d.reset_checkpoints) continue;
      for (const auto& [flow, checkpoint] : at.checkpoints)
        notes.flow_notes[flow] = "replays from " + Preview(checkpoint, 36);
    }
  }
  return WritePlot(path, PipelineGraphSvg(pipeline.spec(), notes));
}

// What a rewind (or its dry run) did, as the person who asked reads it.
int ReportRewind(Store* store, Pipeline* pipeline, const UpdateOutcome& outcome, const std::string& plot) {
  const RewindPlan& plan = *outcome.rewind;
  const std::string target =
      fmt::format("version {} ({})", plan.target.version, FormatTimestamp(plan.target_timestamp_us));
  if (outcome.dry_run_point) {
    if (!plot.empty()) {
      const Status s = PlotRewindPreview(*pipeline, plan, *outcome.dry_run_point, plot);
      if (!s.ok()) return ReportError(s);
    }
    std::cout << fmt::format(
        "dry run: a rewind to {} is valid; nothing was changed.\n"
        "rewind point {} records it: spool rewind {} --point {}\n",
        target, outcome.dry_run_point->id, store->dir(), outcome.dry_run_point->id);
    return kExitOk;
  }
  std::string what = "the pipeline";
  if (!plan.whole_pipeline) {
    what.clear();
    for (const RewindDataset& d : plan.datasets) what += (what.empty() ? "" : ", ") + d.identifier;
  }
  const bool offsets = std::all_of(plan.datasets.begin(), plan.datasets.end(),
                                   [](const RewindDataset& d) { return d.reset_checkpoints; });
  std::string kept;
  for (const std::string& k : plan.kept) kept += (kept.empty() ? "" : ", ") + k;
  std::cout << fmt::format(
      "rewound {} to {}: {} datasets, with their state{}{}.\n"
      "Replay is the next update: spool update {}\n",
      what, target, plan.datasets.size(), offsets ? " and offsets" : "",
      kept.empty() ? "" : "; kept what changed since outside the pipeline: " + kept, store->dir());
  return kExitOk;
}

// An update's flows, as a table, and how it ended.
int ReportUpdate(const UpdateResult& result) {
  Table table({"flow", "batches", "rows in", "rows out", "deleted", "late", "status"});
  for (const FlowUpdateStats& f : result.flows) {
    table.AddRow({f.flow, FormatCount(f.batches), FormatCount(f.input_rows), FormatCount(f.output_rows),
                  FormatCount(f.deleted_rows), FormatCount(f.late_rows),
                  f.failed    ? "FAILED"
                  : f.skipped ? "skipped"
                              : "ok"});
  }
  std::cout << fmt::format("update {} {}\n", result.update_id, UpdateStateName(result.state)) << table.ToString();
  if (!result.sinks.empty()) {
    Table sinks({"sink", "messages", "published up to", "status"});
    for (const SinkUpdateStats& k : result.sinks) {
      sinks.AddRow({k.sink, FormatCount(k.messages), k.published ? "version " + std::to_string(k.published) : "-",
                    k.failed ? "FAILED" : "ok"});
    }
    std::cout << sinks.ToString();
  }
  if (result.state == UpdateState::kFailed) {
    std::cerr << "error: " << result.error << "\n";
    return kExitUpdateFailed;
  }
  return kExitOk;
}

int RunRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request, UpdateOptions options,
               const std::string& plot = {}) {
  const bool runs_flows = !request.rewind_spec && !request.validate_only;
  std::unique_ptr<ProgressBar> bar;  // the flow being run's
  std::string bar_flow;
  if (runs_flows) {
    options.stop = &interrupted;
    options.on_progress = [&, show = ShowProgress()](const FlowProgress& p) {
      if (bar == nullptr || bar_flow != p.flow) {
        bar.reset();  // the previous flow's line stays
        bar_flow = std::string(p.flow);
        bar = std::make_unique<ProgressBar>("flow " + bar_flow, std::string(p.backlog_unit), show);
      }
      bar->Update(p.input_rows, p.input_rows + p.backlog);
    };
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
  }
  UpdateOutcome outcome;
  // A person's update fails fast, unless it runs continuously.
  RetryPolicy policy;
  policy.started_by = StartedBy::kPerson;
  const Status s = RunUpdateRequest(store, pipeline, request, options, policy, &outcome);
  bar.reset();
  if (!s.ok()) return ReportError(s);
  switch (outcome.kind) {
    case UpdateOutcome::Kind::kRewind:
      return ReportRewind(store, pipeline, outcome, plot);
    case UpdateOutcome::Kind::kValidation:
      for (const std::string& warning : outcome.warnings) std::cerr << "warning: " << warning << "\n";
      std::cout << fmt::format("pipeline {} is valid: {} datasets, {} flows; no table was changed (update {})\n",
                               pipeline->id(), pipeline->spec().datasets.size(), pipeline->spec().flows.size(),
                               outcome.update_id);
      return kExitOk;
    case UpdateOutcome::Kind::kUpdate:
      break;
  }
  return ReportUpdate(outcome.result);
}

int RunUpdate(const UpdateArgs& args) {
  UpdateRequest request;
  Status s = BuildRequest(args, &request);
  if (!s.ok()) return ReportError(s);
  UpdateOptions options;
  options.continuous = args.continuous;
  options.max_batches = args.max_batches;
  options.cascade = args.cascade;
  options.refresh_failed = args.refresh_failed;
  s = ParseDuration(args.interval, &options.trigger_interval_us);
  if (!s.ok()) return ReportError(s);
  std::unique_ptr<Store> store;
  PipelineSpec spec;
  std::unique_ptr<Pipeline> pipeline;
  s = OpenPipeline(args.dir, &store, &spec, &pipeline);
  if (!s.ok()) return ReportError(s);
  return RunRequest(store.get(), pipeline.get(), request, options);
}

// spool rewind: a rewind by flags, with the reference UI's shortcuts, or
// the undo of the last one.
struct RewindArgs {
  std::string dir;
  std::string point;      // --point ID
  std::string timestamp;  // --timestamp "yyyy-MM-dd HH:mm:ss"
  bool latest = false;
  bool yesterday = false;
  bool undo = false;
  std::vector<std::string> datasets;  // each rewound with its downstream
  bool keep_checkpoints = false;
  bool dry_run = false;
  std::string plot;  // with dry_run: the preview's SVG file
};

int RunRewindCommand(const RewindArgs& args) {
  const int targets = !args.point.empty() + !args.timestamp.empty() + args.latest + args.yesterday + args.undo;
  if (targets != 1) {
    return ReportError(
        Status::InvalidArgument("give exactly one of --point, --timestamp, --latest, --yesterday and --undo"));
  }
  if (args.undo && (args.dry_run || !args.datasets.empty() || args.keep_checkpoints)) {
    return ReportError(Status::InvalidArgument("--undo takes no other option: it undoes the last rewind as it was"));
  }
  std::unique_ptr<Store> store;
  PipelineSpec spec;
  std::unique_ptr<Pipeline> pipeline;
  Status s = OpenPipeline(args.dir, &store, &spec, &pipeline);
  if (!s.ok()) return ReportError(s);
  if (args.undo) {
    UndoPlan plan;
    s = PlanUndo(store.get(), &plan);
    RewindRun run{"", UpdateCause::kUserAction, false};
    if (s.ok()) s = ExecuteUndo(store.get(), *pipeline, plan, &run);
    if (!s.ok()) return ReportError(s);
    std::cout << fmt::format("undid the rewind of update {} to version {}: the store is at version {} again.\n",
                             plan.rewind_update_id, plan.target.version, store->log()->Newest().version);
    return kExitOk;
  }
  RewindSpec rewind;
  rewind.dry_run = args.dry_run;
  if (!args.point.empty()) rewind.rewind_point_id = args.point;
  if (!args.timestamp.empty()) rewind.rewind_timestamp = args.timestamp;
  if (args.latest || args.yesterday) {
    constexpr uint64_t kDayUs = 24ull * 3600 * 1000000;
    const uint64_t now = store->options().env->NowMicros();
    RewindPoint point;
    s = LatestRewindPoint(store.get(), args.yesterday ? (now > kDayUs ? now - kDayUs : 0) : now, &point);
    if (!s.ok()) return ReportError(s);
    rewind.rewind_point_id = point.id;
  }
  if (!args.datasets.empty()) {
    rewind.datasets.emplace();
    for (const std::string& d : args.datasets)
      rewind.datasets->push_back(RewindDataset{d, true, !args.keep_checkpoints});
  } else if (args.keep_checkpoints) {
    return ReportError(Status::InvalidArgument("--keep-checkpoints applies to the datasets named with --dataset"));
  }
  UpdateRequest request;
  request.cause = UpdateCause::kUserAction;
  request.rewind_spec = std::move(rewind);
  return RunRequest(store.get(), pipeline.get(), request, UpdateOptions{}, args.plot);
}

struct PointsArgs {
  std::string dir;
  std::string since;  // a duration back from now; empty: all
  bool as_json = false;
};

int RunRewindPoints(const PointsArgs& args) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(args.dir, &store, StoreAccess::kRead);
  if (!s.ok()) return ReportError(s);
  uint64_t since_us = 0;
  if (!args.since.empty()) {
    uint64_t back = 0;
    s = ParseDuration(args.since, &back);
    if (!s.ok()) return ReportError(s.WithContext("--since"));
    const uint64_t now = store->options().env->NowMicros();
    since_us = now > back ? now - back : 0;
  }
  std::vector<RewindPoint> points;
  s = ListRewindPoints(store.get(), since_us, &points);
  if (!s.ok()) return ReportError(s);
  if (args.as_json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const RewindPoint& p : points) out.push_back(RewindPointJson(p, RewindPointUse(store.get(), p)));
    std::cout << JsonText(out, 2) << "\n";
    return kExitOk;
  }
  Table table({"rewind_point_id", "recorded", "version", "dry run", "message"});
  for (const RewindPoint& p : points) {
    // A point that can no longer be used is shown, and marked: cut off by a
    // later rewind, or beyond retention.
    const PointUse use = RewindPointUse(store.get(), p);
    const std::string version = std::to_string(p.position.version) + (use == PointUse::kUsable ? ""
                                                                      : use == PointUse::kCut  ? " (cut)"
                                                                                               : " (beyond retention)");
    table.AddRow({p.id, FormatTimestamp(p.recorded_us), version, p.dry_run ? "yes" : "no", p.message});
  }
  std::cout << table.ToString();
  return kExitOk;
}

struct FindArgs {
  std::string dir;
  std::string table;
  std::string where;
  bool deletes = false;
  bool as_json = false;
};

// The first commit that brought bad data, and a rewind point just before it.
int RunFindPoint(const FindArgs& args) {
  TableId table;
  Status s = TableId::Parse(args.table, &table);
  if (!s.ok()) return ReportError(s.WithContext("--table"));
  std::unique_ptr<Store> store;
  PipelineSpec spec;
  std::unique_ptr<Pipeline> pipeline;
  s = OpenPipeline(args.dir, &store, &spec, &pipeline);
  BadCommit bad;
  if (s.ok()) s = FindFirstBadCommit(store.get(), table, args.where, args.deletes, &bad);
  if (!s.ok()) return ReportError(s);
  if (!bad.found) {
    if (args.as_json) {
      std::cout << JsonText(nlohmann::ordered_json{{"found", false}}, 2) << "\n";
      return kExitOk;
    }
    std::cout << fmt::format("no retained commit of {} has {} matching {}: nothing to rewind\n", args.table,
                             args.deletes ? "deletes" : "inserts or updates", args.where);
    return kExitOk;
  }
  const uint64_t point_version = bad.first_bad - 1;
  if (!args.as_json) {
    std::cout << fmt::format("first bad commit: version {} ({}), {} matching row(s)\n", bad.first_bad,
                             FormatTimestamp(bad.first_bad_timestamp_us), bad.matching_rows);
  }
  if (Status can = store->CanRewindTo(point_version); !can.ok()) {
    return ReportError(can.WithContext("the version before it cannot be rewound to"));
  }
  RewindPoint point;
  s = RecordRewindPointAt(store.get(), *pipeline, point_version,
                          "The last version before the first commit of " + args.table + " matching " + args.where + ".",
                          /*dry_run=*/true, &point);
  if (!s.ok()) return ReportError(s);
  if (args.as_json) {
    std::cout << JsonText(nlohmann::ordered_json{{"found", true},
                                                 {"first_bad_version", bad.first_bad},
                                                 {"first_bad_timestamp", FormatTimestamp(bad.first_bad_timestamp_us)},
                                                 {"matching_rows", bad.matching_rows},
                                                 {"rewind_point", RewindPointJson(point, PointUse::kUsable)}},
                          2)
              << "\n";
    return kExitOk;
  }
  // Said plainly: this command records a new point (a listing just before
  // it did not show it).
  std::cout << fmt::format(
      "recorded a new rewind point {} at version {} ({}), the last before it. To rewind there:\n"
      "  spool update {} --rewind-point {}\n",
      point.id, point_version, FormatTimestamp(point.timestamp_us), args.dir, point.id);
  return kExitOk;
}

// `spool pipeline set|show`.
void RegisterPipelineDefinition(CLI::App& app, int* exit_code) {
  CLI::App* pipeline = app.add_subcommand("pipeline", "Define the store's pipeline");
  pipeline->require_subcommand(1);
  auto set_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* set = pipeline->add_subcommand("set", "Record SPEC.json (checked first) as the pipeline's definition");
  set->add_option("dir", set_args->first, "Store directory")->required();
  set->add_option("spec", set_args->second, "The JSON spec (docs/pipelines.md); - for stdin")->required();
  set->callback([=] { *exit_code = RunSet(set_args->first, set_args->second); });

  struct ShowArgs {
    std::string dir, plot;
    bool as_json = false;
  };
  auto show_args = std::make_shared<ShowArgs>();
  CLI::App* show = pipeline->add_subcommand("show", "The pipeline's id, datasets, flows and checkpoints");
  show->add_option("dir", show_args->dir, "Store directory")->required();
  CLI::Option* show_json = show->add_flag("--json", show_args->as_json, "Print the spec as JSON");
  show->add_option("--plot", show_args->plot, "Draw the pipeline's graph (sources, flows, datasets) into this SVG file")
      ->excludes(show_json);
  show->callback([=] { *exit_code = RunShow(show_args->dir, show_args->as_json, show_args->plot); });
}

void RegisterUpdate(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<UpdateArgs>();
  CLI::App* update =
      app.add_subcommand("update", "Run an update of the pipeline: every flow processes what is available");
  update->add_option("dir", args->dir, "Store directory")->required();
  update->add_flag("--continuous", args->continuous,
                   "Keep processing until interrupted (Ctrl-C stops after the batch)");
  update->add_option("--max-batches", args->max_batches, "Stop after this many micro-batches (0: no bound)");
  update->add_option("--trigger-interval", args->interval, "Continuous mode: wait this long when idle (default 1s)");
  update->add_option("--json", args->json,
                     "The request as the reference API's body: JSON text, @FILE or - (stdin); e.g. a rewind_spec");
  update->add_option("--rewind-point", args->rewind_point, "Rewind the pipeline to this rewind point (its id)");
  update->add_option("--rewind-timestamp", args->rewind_timestamp,
                     "Rewind the pipeline to the last commit at or before this UTC time, \"yyyy-MM-dd HH:mm:ss\"");
  update->add_flag("--dry-run", args->dry_run,
                   "Validate the rewind and record a rewind point for it, or validate the refresh (warning of rows "
                   "a full refresh would lose); change nothing");
  update->add_flag("--validate-only", args->validate_only, "Check the pipeline's definition; write nothing");
  update->add_flag("--full-refresh", args->full_refresh,
                   "Truncate every dataset, clear every flow's offsets and state, and rebuild from the sources");
  update->add_option("--full-refresh-table", args->full_refresh_tables, "Fully refresh this dataset (repeatable)");
  update->add_flag("--cascade", args->cascade,
                   "With a full refresh: also the streaming tables downstream of the named ones");
  update->add_option("--refresh-table", args->refresh_tables, "Run only the flows writing this dataset (repeatable)");
  update->add_flag("--refresh-failed", args->refresh_failed,
                   "Run only the flows that failed in the last update, and those downstream of them");
  update->add_option("--reset-checkpoint", args->reset_flows,
                     "Clear this flow's offsets and state, keeping its table's rows (repeatable; a flow name)");
  update->callback([=] { *exit_code = RunUpdate(*args); });
}

void RegisterRewind(CLI::App& app, int* exit_code) {
  auto rewind_args = std::make_shared<RewindArgs>();
  CLI::App* rewind = app.add_subcommand(
      "rewind",
      "Rewind the pipeline (table data, offsets and state) to a point, or undo the last rewind; replay is the "
      "next update");
  rewind->add_option("dir", rewind_args->dir, "Store directory")->required();
  rewind->add_option("--point", rewind_args->point, "To this rewind point (its id, see spool rewind-points)");
  rewind->add_option("--timestamp", rewind_args->timestamp,
                     "To the last commit at or before this UTC time, \"yyyy-MM-dd HH:mm:ss\"");
  rewind->add_flag("--latest", rewind_args->latest, "To the latest rewind point");
  rewind->add_flag("--yesterday", rewind_args->yesterday, "To the latest rewind point at least 24 hours old");
  rewind->add_flag("--undo", rewind_args->undo,
                   "Undo the last rewind, bringing back what it took, while nothing was committed since");
  rewind->add_option("--dataset", rewind_args->datasets,
                     "Rewind only this dataset and those downstream of it (repeatable; default: all)");
  rewind->add_flag("--keep-checkpoints", rewind_args->keep_checkpoints,
                   "With --dataset: restore table data (and operator state) only, keeping source offsets");
  CLI::Option* dry_run =
      rewind->add_flag("--dry-run", rewind_args->dry_run, "Validate and record a rewind point for it; change nothing");
  rewind
      ->add_option("--plot", rewind_args->plot,
                   "With --dry-run: draw what the rewind would bring back (datasets, versions, offsets) into this "
                   "SVG file")
      ->needs(dry_run);
  rewind->callback([=] { *exit_code = RunRewindCommand(*rewind_args); });
}

// `spool rewind-points DIR` and `spool rewind-points find`.
void RegisterRewindPoints(CLI::App& app, int* exit_code) {
  auto points_args = std::make_shared<PointsArgs>();
  CLI::App* points = app.add_subcommand("rewind-points", "List the pipeline's rewind points, newest first");
  // Not required: `spool rewind-points find DIR …` gives it to the subcommand.
  points->add_option("dir", points_args->dir, "Store directory");
  points->add_option("--since", points_args->since, "Only points recorded within this long (e.g. 7d)");
  points->add_flag("--json", points_args->as_json, "JSON output");
  points->callback([=] {
    if (!points->get_subcommands().empty()) return;
    if (points_args->dir.empty()) {
      *exit_code = ReportError(Status::InvalidArgument("rewind-points: give the store directory"));
      return;
    }
    *exit_code = RunRewindPoints(*points_args);
  });
  auto find_args = std::make_shared<FindArgs>();
  CLI::App* find = points->add_subcommand(
      "find", "Find the first commit whose changes match a predicate, and record a new rewind point just before it");
  find->add_option("dir", find_args->dir, "Store directory")->required();
  find->add_option("--table", find_args->table, "The table the bad data landed in (catalog.schema.table)")->required();
  find->add_option("--where", find_args->where, "An expression over its columns that selects the bad rows")->required();
  find->add_flag("--deletes", find_args->deletes, "Look for deleted rows instead of inserted or updated ones");
  find->add_flag("--json", find_args->as_json, "JSON output");
  find->callback([=] { *exit_code = RunFindPoint(*find_args); });
}

}  // namespace

void RegisterPipelineCommands(CLI::App& app, int* exit_code) {
  RegisterPipelineDefinition(app, exit_code);
  RegisterUpdate(app, exit_code);
  RegisterRewind(app, exit_code);
  RegisterRewindPoints(app, exit_code);
}

}  // namespace spool::cli
