// Compiling a pipeline, setting up its tables and running updates.
#include "spool/stream/pipeline.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "flow_parts.h"
#include "helper_thread.h"
#include "json_text.h"
#include "operators_internal.h"

namespace spool {

using namespace stream_internal;
using json = nlohmann::ordered_json;

namespace {

const char* const kDefinitionTable = "__spool.pipeline.definition";

// flow_progress events written without a sync before one is synced.
constexpr uint32_t kMaxUnsyncedEvents = 32;
// In continuous mode, an idle flow's offset is committed once it lags this
// many versions behind.
constexpr uint64_t kIdleLagVersions = 1000;

bool ValidFlowName(std::string_view name) {
  if (name.empty() || name.size() > 100 || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A random id (pipelines, updates).
}  // namespace

Status RecordUpdateProgress(Store* store, const std::string& pipeline_id, const std::string& update_id,
                            UpdateState state, std::string_view error) {
  Event e;
  e.origin.pipeline_id = pipeline_id;
  e.origin.update_id = update_id;
  e.event_type = "update_progress";
  json progress = {{"state", UpdateStateName(state)}};
  e.message = "Update " + update_id.substr(0, 6) + " is " + std::string(UpdateStateName(state)) + ".";
  if (!error.empty()) {
    e.level = EventLevel::kError;
    progress["error"] = error;
    e.message = "Update " + update_id.substr(0, 6) + " failed: " + std::string(error);
  }
  e.details_json = JsonText(json{{"update_progress", progress}});
  return store->events()->Append(&e);
}

std::string NewUpdateId() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  const uint64_t high = rng();
  return FormatUuid4(high, rng());
}

namespace {

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// A commit of the pipeline runtime, which may change Spool's own tables
// (operator state, the definition).
Transaction RuntimeTransaction(std::string operation, std::string parameters_json, const std::string& update_id) {
  Transaction txn(std::move(operation), std::move(parameters_json));
  txn.SetUpdateId(update_id);
  txn.AllowSpoolTables();
  return txn;
}

// What a flow's checkpoint holds.
struct Checkpoint {
  std::string fingerprint;
  std::string offset;                 // the source's
  std::vector<std::string> sides;     // a stream join's right sources
  std::map<size_t, int64_t> watermarks;  // by step
  uint64_t batch_id = 0;              // batches committed
  std::string origin;                 // where its source's first batch since its last reset began ("": unknown)
  std::string once_done;              // a `once` flow: the definition it ran
  uint64_t version = 0;               // a materialized view: the store version it was computed at …
  std::string definition;             // … and the definition it was computed by

  std::string Encode() const {
    json j = {{"fingerprint", fingerprint}, {"offset", offset}, {"sides", sides}, {"batch_id", batch_id}};
    json w = json::object();
    for (const auto& [step, micros] : watermarks) w[std::to_string(step)] = micros;
    j["watermarks"] = w;
    if (!origin.empty()) j["origin"] = origin;
    if (!once_done.empty()) j["once_done"] = once_done;
    if (version != 0) j["version"] = version;
    if (!definition.empty()) j["definition"] = definition;
    return JsonText(j);
  }
  Status Decode(const std::string& flow, const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::Corruption("checkpoint of flow " + flow + " is not JSON");
    try {
      fingerprint = j.at("fingerprint").get<std::string>();
      offset = j.at("offset").get<std::string>();
      sides = j.at("sides").get<std::vector<std::string>>();
      batch_id = j.at("batch_id").get<uint64_t>();
      for (const auto& [step, micros] : j.at("watermarks").items()) watermarks[std::stoull(step)] = micros.get<int64_t>();
      if (j.contains("origin")) origin = j.at("origin").get<std::string>();
      if (j.contains("once_done")) once_done = j.at("once_done").get<std::string>();
      if (j.contains("version")) version = j.at("version").get<uint64_t>();
      if (j.contains("definition")) definition = j.at("definition").get<std::string>();
    } catch (const std::exception& e) {
      return Status::Corruption("checkpoint of flow " + flow + ": " + e.what());
    }
    return Status::OK();
  }
};

// One micro-batch read and processed: its commit, and what its report needs.
struct PreparedBatch {
  Transaction txn;
  Checkpoint next;       // the flow's checkpoint once it commits
  bool skipped = false;  // nothing to do: no commit
  bool more = false;     // the source has more after it
  uint64_t input_rows = 0;
  uint64_t output_rows = 0;
  uint64_t deleted_rows = 0;
  uint64_t late_rows = 0;
  Source::Backlog backlog;  // after its read
  std::chrono::steady_clock::time_point started;
};

struct CompiledDataset {
  DatasetSpec spec;
  TableId id;
  std::optional<Schema> schema;  // once known
  std::vector<size_t> flows;     // writing it
};

struct CompiledFlow {
  const FlowSpec* spec = nullptr;
  size_t index = 0;
  std::string place;
  TableId target;
  size_t target_dataset = 0;
  bool materialized = false;
  std::unique_ptr<Source> source;
  std::vector<std::unique_ptr<Operator>> ops;
  std::vector<int> target_columns;  // target column -> output column (-1: NULL)
  bool same_columns = false;         // the flow writes the target's columns, in its order
  std::vector<size_t> delete_order;  // the target's key columns, as positions in the flow's delete keys
  bool upserts = false;
  std::string fingerprint;
  std::string definition;  // the flow's spec as JSON, for `once`
  std::vector<size_t> upstream;  // flows it reads from (by index)
  std::vector<TableId> inputs;   // a materialized view: the tables it reads
  std::vector<size_t> rank;      // per step: its rank among the stateful steps
  // State tables per component: [0] the source, then the steps.
  std::vector<std::vector<std::pair<TableId, Schema>>> state;
  // The source and every step may work on the next batches while one
  // commits (Pipeline::Impl::Ahead).
  bool runs_ahead = false;
  // Batches queued for the log (Store::CommitAsync) while the next ones
  // are committed, oldest first; each reported once durable.
  struct Committing {
    PendingCommit commit;
    PreparedBatch batch;  // its transaction cleared
  };
  std::deque<Committing> committing;
  Source::Backlog backlog;  // after the last committed batch's read
};

std::string DescribeColumns(const Schema& s) {
  std::string out;
  for (const Column& c : s.columns()) {
    out += (out.empty() ? "" : ", ") + c.name + " " + std::string(ColumnTypeName(c.type)) + (c.nullable ? "" : " not null");
  }
  std::string key;
  for (size_t k : s.key_columns()) key += (key.empty() ? "" : ", ") + s.columns()[k].name;
  return "(" + out + ")" + (key.empty() ? "" : " key (" + key + ")");
}

}  // namespace

std::string_view UpdateStateName(UpdateState state) {
  switch (state) {
    case UpdateState::kQueued: return "QUEUED";
    case UpdateState::kInitializing: return "INITIALIZING";
    case UpdateState::kResetting: return "RESETTING";
    case UpdateState::kSettingUpTables: return "SETTING_UP_TABLES";
    case UpdateState::kRunning: return "RUNNING";
    case UpdateState::kStopping: return "STOPPING";
    case UpdateState::kCompleted: return "COMPLETED";
    case UpdateState::kFailed: return "FAILED";
    case UpdateState::kCanceled: return "CANCELED";
  }
  return "?";
}

struct Pipeline::Impl {
  Store* store = nullptr;
  Env* env = nullptr;
  PipelineSpec spec;
  std::string pipeline_id;
  int64_t definition_number = 0;  // of the recorded definition (0: none)
  std::vector<CompiledDataset> datasets;
  std::map<std::string, size_t> dataset_index;
  std::vector<CompiledFlow> flows;
  std::vector<size_t> order;  // flows in DAG order

  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  // flow_progress events written since the event log's last sync.
  uint32_t unsynced_events = 0;

  Status Compile();
  Status CompileFlow(CompiledFlow& flow);
  Status ResolveTable(const std::string& name, TableInfo* table);
  Status MakeSource(const SourceSpec& spec, const FlowSpec& flow, const std::string& place, std::unique_ptr<Source>* out);
  // Tells the flow's source which of its columns no step reads (column
  // pruning: Source::LeaveNull), walking the steps back from the target.
  Status PruneSourceColumns(CompiledFlow& flow);
  Status FitTarget(CompiledFlow& flow, const Schema& output, const std::vector<std::string>& output_key);
  Status Order();

  // What an update's refresh options ask for, resolved (per dataset and
  // flow index); InvalidArgument naming what does not fit.
  struct RefreshPlan {
    std::vector<bool> truncate;  // datasets fully refreshed
    std::vector<bool> reset;     // flows whose checkpoint and state are cleared
    std::vector<bool> excluded;  // flows left out by refresh_selection
    bool any_reset() const { return std::find(reset.begin(), reset.end(), true) != reset.end(); }
  };
  Status PlanRefresh(const UpdateOptions& options, RefreshPlan* plan);
  Status FindDataset(const std::string& name, const std::string& field, size_t* index);
  Status FailedInLastUpdate(std::set<std::string>* failed);
  // One commit: the truncated datasets emptied, the reset flows'
  // checkpoints and state tables cleared.
  Status ApplyReset(const RefreshPlan& plan, const std::string& update_id);
  // What the planned full refresh would lose: data its tables were built
  // from that their sources no longer hold, one message per flow.
  Status RefreshLosses(const RefreshPlan& plan, std::vector<std::string>* losses);
  // The flows' checkpoints as the store holds them (none for a flow the
  // plan resets: it starts over).
  struct Checkpoints {
    std::vector<Checkpoint> at;
    std::vector<bool> found;
  };
  Status LoadCheckpoints(const RefreshPlan& plan, Checkpoints* checkpoints);
  // What an update with `plan` refuses in the definition, before it writes
  // anything, and what its validation says (one check, so that validation
  // predicts the run): a flow whose state its new definition cannot use; a
  // flow whose state tables are missing (INTERNAL_STATE_MISSING); a table
  // whose columns or key the definition changes, unless the plan rebuilds
  // it (a full refresh of a dataset, a reset of a flow's state) or it is a
  // materialized view's. InvalidArgument with the message the update fails
  // with; `*flow`, the flow it names (null: none).
  Status CheckDefinition(const RefreshPlan& plan, const Checkpoints& checkpoints, const CompiledFlow** flow);
  // What SetUpTables does to a table for the definition to have it with
  // `schema`: nothing, create it, add the definition's new columns, or
  // (`replaceable`) drop and create it again; InvalidArgument naming
  // `place` when its columns cannot become those without a full refresh.
  enum class TableSetup { kNone, kCreate, kAddColumns, kReplace };
  Status PlanTableSetup(const TableId& id, const Schema& schema, bool replaceable, const std::string& place,
                        TableSetup* setup, TableInfo* existing);
  Status SetUpTables(const std::string& update_id);
  Status WriteDifference(const TableId& id, const Schema& schema, std::vector<Row> rows, Transaction& txn, Batch* batch);
  // Reads and processes one micro-batch of `flow` after `cp`.
  Status PrepareBatch(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id, PreparedBatch* prepared);
  // Runs one micro-batch: prepares it (or takes the one prepared ahead),
  // commits it and reports it. `ahead_budget`: how many batches after it
  // may be prepared while it commits, when the flow can; the batch is then
  // left committing (flow.committing, up to kCommitting of them) and
  // reported by a later RunBatch, after a later commit is queued, or by
  // FinishCommitting.
  Status RunBatch(CompiledFlow& flow, Checkpoint& cp, const std::string& update_id, FlowUpdateStats& stats,
                  const UpdateOptions& options, uint64_t ahead_budget, bool* more, bool* committed,
                  bool* commit_failed);
  // Waits for the flow's committing batches but the newest `keep`, oldest
  // first, and reports each. `commit_failed`: set when a commit failed.
  Status FinishCommitting(CompiledFlow& flow, const std::string& update_id, FlowUpdateStats& stats,
                          const UpdateOptions& options, bool* commit_failed, size_t keep = 0);
  // A durable batch: its figures, its flow_progress event, the callbacks.
  Status Report(CompiledFlow& flow, const PreparedBatch& batch, const CommitResult& result, const std::string& update_id,
                FlowUpdateStats& stats, const UpdateOptions& options);
  Status SaveIdleOffset(CompiledFlow& flow, Checkpoint& cp, const std::string& update_id, uint64_t min_lag,
                        bool* committed);
  // Appends an event. A batch's flow_progress (`progress`) is written without
  // a sync, as the commit it reports is durable already: one sync per batch,
  // not two. Every kMaxUnsyncedEvents-th one, every other event, and
  // SyncEvents make them durable, so a crash loses at most that many.
  Status Event(EventLevel level, const std::string& type, const std::string& message, json details,
               const std::string& update_id, const CompiledFlow* flow = nullptr, bool progress = false);
  Status SyncEvents();
  // The batches of one flow that the helper thread prepares, in order, up
  // to kAheadBatches of them before the runner takes them, while the runner
  // commits the ones before them: neither thread waits for the other to
  // hand it work, unless it is ahead of the other.
  static constexpr size_t kAheadBatches = 2;
  // A flow running ahead leaves its batches queued for the log without
  // waiting for their syncs until kCommitting later batches are queued
  // too: a sync that is slow, or a log thread short of CPU, holds up the
  // runner only when it is that far behind.
  static constexpr size_t kCommitting = 2;
  struct Ahead {
    std::mutex mu;
    std::condition_variable changed;
    const CompiledFlow* flow = nullptr;  // whose batches; null: none
    std::deque<std::pair<Status, PreparedBatch>> ready;  // prepared, not yet taken
    bool done = false;  // the helper prepares no more
    bool stop = false;  // the runner takes no more
  };
  // Starts the helper on at most `budget` batches of `flow` after `cp`,
  // which the source has been told are committed.
  void StartAhead(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id, uint64_t budget);
  // The helper's job.
  void PrepareAhead(CompiledFlow& flow, Checkpoint cp, const std::string& update_id, uint64_t budget);
  // The flow's next batch prepared ahead, and how its preparation went,
  // waiting for it when needed. False when the helper prepares no more of
  // the flow's batches (it has ended: the flow's next batch is the
  // runner's to prepare).
  bool TakeAhead(const CompiledFlow& flow, Status* status, PreparedBatch* batch);
  // Stops the helper and drops what it prepared: no batch is being prepared
  // ahead after it.
  void JoinAhead();
  // And for every committing batch: none is being committed after it.
  void EndBatches();

  Ahead ahead;
  // Prepares a flow's next batches (last, so that it ends before the flows
  // and what it uses).
  HelperThread helper{"spool-flow"};
};

Status Pipeline::Impl::ResolveTable(const std::string& name, TableInfo* table) {
  auto it = dataset_index.find(name);
  if (it != dataset_index.end()) {
    const CompiledDataset& d = datasets[it->second];
    if (!d.schema) return Status::InvalidArgument("dataset " + name + " has no known columns yet");
    table->id = d.id;
    table->kind = d.spec.kind;
    table->schema = *d.schema;
    return Status::OK();
  }
  TableId id;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(name, &id));
  Status s = store->GetTable(id, table);
  if (s.IsNotFound()) return Status::InvalidArgument("no dataset of the pipeline and no table of the store is named " + name);
  return s;
}

Status Pipeline::Impl::MakeSource(const SourceSpec& source, const FlowSpec& flow, const std::string& place,
                                  std::unique_ptr<Source>* out) {
  switch (source.kind) {
    case SourceKind::kDataset: {
      TableInfo table;
      Status s = ResolveTable(source.dataset, &table);
      if (!s.ok()) return Status::InvalidArgument(place + ".dataset: " + std::string(s.message()));
      const CompiledDataset& target = datasets[dataset_index.at(flow.target)];
      const bool as_table = target.spec.kind == TableKind::kMaterializedView;
      return MakeDatasetSource(source, table, target.id, flow.max_batch_rows, as_table, out);
    }
    case SourceKind::kFiles:
      return MakeFileSource(source, env, place, flow.max_batch_files, flow.max_batch_rows, out);
    case SourceKind::kTopic:
      return MakeTopicSource(source, env, place, flow.max_batch_rows, out);
  }
  return Status::InvalidArgument(place + ": unknown source");
}

// The DAG: a flow comes after every flow writing a dataset it reads.
Status Pipeline::Impl::Order() {
  auto reads = [&](const FlowSpec& f) {
    std::vector<std::string> names;
    if (f.source.kind == SourceKind::kDataset) names.push_back(f.source.dataset);
    for (const StepSpec& step : f.steps) {
      if (const auto* j = std::get_if<LookupJoinStep>(&step)) names.push_back(j->table);
      if (const auto* j = std::get_if<StreamJoinStep>(&step); j && j->right.kind == SourceKind::kDataset) {
        names.push_back(j->right.dataset);
      }
    }
    return names;
  };
  for (CompiledFlow& flow : flows) {
    for (const std::string& name : reads(*flow.spec)) {
      auto it = dataset_index.find(name);
      if (it == dataset_index.end()) continue;
      for (size_t writer : datasets[it->second].flows) flow.upstream.push_back(writer);
    }
  }
  // Depth-first, reporting the first cycle found as a path.
  std::vector<int> mark(flows.size(), 0);  // 0 new, 1 on the path, 2 done
  std::vector<size_t> path;
  std::function<Status(size_t)> visit = [&](size_t f) -> Status {
    if (mark[f] == 2) return Status::OK();
    if (mark[f] == 1) {
      std::string cycle;
      auto start = std::find(path.begin(), path.end(), f);
      for (auto it = start; it != path.end(); ++it) cycle += flows[*it].spec->name + " -> ";
      return Status::InvalidArgument("flows: the pipeline has a cycle: " + cycle + flows[f].spec->name);
    }
    mark[f] = 1;
    path.push_back(f);
    for (size_t up : flows[f].upstream) SPOOL_RETURN_IF_ERROR(visit(up));
    path.pop_back();
    mark[f] = 2;
    order.push_back(f);
    return Status::OK();
  };
  for (size_t f = 0; f < flows.size(); ++f) SPOOL_RETURN_IF_ERROR(visit(f));
  return Status::OK();
}

Status Pipeline::Impl::Compile() {
  for (size_t i = 0; i < spec.datasets.size(); ++i) {
    const DatasetSpec& d = spec.datasets[i];
    const std::string place = "datasets[" + std::to_string(i) + "] " + Quoted(d.name);
    CompiledDataset cd{d, {}, std::nullopt, {}};
    Status s = TableId::Parse(d.name, &cd.id);
    if (!s.ok()) return Status::InvalidArgument(place + ": " + std::string(s.message()));
    if (cd.id.catalog == "__spool") return Status::InvalidArgument(place + ": catalog __spool is Spool's own");
    if (d.kind != TableKind::kStreamingTable && d.kind != TableKind::kMaterializedView) {
      return Status::InvalidArgument(place + ": a dataset is a streaming_table or a materialized_view");
    }
    if (!dataset_index.emplace(d.name, i).second) return Status::InvalidArgument(place + ": a second dataset of that name");
    if (!d.columns.empty()) {
      Schema schema;
      SPOOL_RETURN_IF_ERROR(MakeSchema(d.columns, d.primary_key, place, &schema));
      SPOOL_RETURN_IF_ERROR(CheckNoChangeFeedColumns(schema).WithContext(place));
      cd.schema = schema;
    }
    datasets.push_back(std::move(cd));
  }
  std::set<std::string> names, stems;
  for (size_t i = 0; i < spec.flows.size(); ++i) {
    const FlowSpec& f = spec.flows[i];
    CompiledFlow flow;
    flow.spec = &f;
    flow.index = i;
    flow.place = "flows[" + std::to_string(i) + "] " + Quoted(f.name);
    if (!ValidFlowName(f.name) && f.name != f.target) {
      return Status::InvalidArgument(flow.place + ": a flow name is 1-100 letters, digits and '_', not starting with a "
                                                  "digit, or its target's full identifier (the default)");
    }
    if (!names.insert(f.name).second) return Status::InvalidArgument(flow.place + ": a second flow of that name");
    if (!stems.insert(StateTableStem(f.name)).second) {
      return Status::InvalidArgument(flow.place + ": its state tables' names (" + StateTableStem(f.name) +
                                     "__…) are another flow's; rename one of them");
    }
    auto it = dataset_index.find(f.target);
    if (it == dataset_index.end()) {
      return Status::InvalidArgument(flow.place + ".target: " + Quoted(f.target) + " is not a dataset of the pipeline");
    }
    flow.target_dataset = it->second;
    flow.target = datasets[it->second].id;
    CompiledDataset& target = datasets[it->second];
    flow.materialized = target.spec.kind == TableKind::kMaterializedView;
    if (flow.materialized && !target.flows.empty()) {
      return Status::InvalidArgument(flow.place + ".target: materialized view " + f.target + " already has flow " +
                                     Quoted(spec.flows[target.flows[0]].name) + "; a materialized view has one query");
    }
    target.flows.push_back(i);
    flows.push_back(std::move(flow));
  }
  for (const CompiledDataset& d : datasets) {
    if (d.flows.empty()) {
      return Status::InvalidArgument("datasets[" + std::to_string(dataset_index[d.spec.name]) + "] " + Quoted(d.spec.name) +
                                     ": no flow writes it");
    }
  }
  SPOOL_RETURN_IF_ERROR(Order());
  for (size_t f : order) SPOOL_RETURN_IF_ERROR(CompileFlow(flows[f]));
  return Status::OK();
}

Status Pipeline::Impl::CompileFlow(CompiledFlow& flow) {
  const FlowSpec& f = *flow.spec;
  if (flow.materialized) {
    if (f.source.kind != SourceKind::kDataset) {
      return Status::InvalidArgument(flow.place + ".source: a materialized view is computed from datasets, not " +
                                     (f.source.kind == SourceKind::kFiles ? "files" : "a topic") +
                                     " (ingest them into a streaming table first)");
    }
    for (size_t i = 0; i < f.steps.size(); ++i) {
      const StepSpec& s = f.steps[i];
      const bool ok = std::holds_alternative<FilterStep>(s) || std::holds_alternative<SelectStep>(s) ||
                      std::holds_alternative<LookupJoinStep>(s) || std::holds_alternative<MapStep>(s) ||
                      (std::holds_alternative<AggregateStep>(s) && !std::get<AggregateStep>(s).window);
      if (!ok) {
        return Status::InvalidArgument(flow.place + ".steps[" + std::to_string(i) +
                                       "]: a materialized view's query is filters, selects, lookup joins and a "
                                       "grouped aggregate without windows");
      }
    }
    if (f.once) return Status::InvalidArgument(flow.place + ".once: applies to flows into streaming tables");
  }
  SPOOL_RETURN_IF_ERROR(MakeSource(f.source, f, flow.place + ".source", &flow.source));
  if (flow.materialized) {
    TableInfo input;
    SPOOL_RETURN_IF_ERROR(ResolveTable(f.source.dataset, &input));
    flow.inputs.push_back(input.id);
    for (const StepSpec& step : f.steps) {
      if (const auto* join = std::get_if<LookupJoinStep>(&step)) {
        TableId id;
        if (TableId::Parse(join->table, &id).ok()) flow.inputs.push_back(id);
      }
    }
  }
  CompileContext ctx;
  ctx.store = store;
  ctx.resolve_table = [&](const std::string& name, TableInfo* table) { return ResolveTable(name, table); };
  ctx.make_source = [&](const SourceSpec& s, const std::string& place, std::unique_ptr<Source>* out) {
    if (f.once) return Status::InvalidArgument(place + ": a `once` flow reads one source");
    return MakeSource(s, f, place, out);
  };
  Schema schema = flow.source->schema();
  size_t stateful_steps = 0;
  std::string fingerprint = "source=" + std::string(f.source.kind == SourceKind::kDataset ? "dataset:" + f.source.dataset
                                                     : (f.source.kind == SourceKind::kFiles ? "files:" : "topic:") + f.source.path);
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const std::string place = flow.place + ".steps[" + std::to_string(i) + "]";
    if (!flow.ops.empty() && flow.ops.back()->emits_upserts()) {
      return Status::InvalidArgument(place + ": follows a step that updates rows by key, which must be the flow's last step");
    }
    std::unique_ptr<Operator> op;
    SPOOL_RETURN_IF_ERROR(CompileStep(f.steps[i], schema, place, ctx, &op));
    const std::string fp = op->Fingerprint();
    // Stateful steps are named by their rank among stateful steps, so that
    // adding or removing a filter or select before one changes nothing.
    flow.rank.push_back(stateful_steps);
    if (!fp.empty()) fingerprint += " | " + std::to_string(stateful_steps++) + ":" + fp;
    schema = op->output();
    flow.ops.push_back(std::move(op));
  }
  // The source is always part of it: its offsets mean nothing to another one.
  flow.fingerprint = fingerprint;
  flow.runs_ahead = !flow.materialized && !f.once && flow.source->ReadsAhead() &&
                    std::all_of(flow.ops.begin(), flow.ops.end(), [](const std::unique_ptr<Operator>& op) {
                      return op->ProcessesAhead() && op->side() == nullptr;
                    });
  const std::vector<std::string> no_key;
  SPOOL_RETURN_IF_ERROR(FitTarget(flow, schema, flow.ops.empty() ? no_key : flow.ops.back()->output_key()));
  SPOOL_RETURN_IF_ERROR(PruneSourceColumns(flow));
  if (!flow.ops.empty()) {
    flow.ops.back()->SetTarget(flow.target, !flow.materialized && datasets[flow.target_dataset].flows.size() == 1);
  }
  // State tables.
  auto add_state = [&](std::vector<StateTableSpec> specs, const std::string& prefix) -> Status {
    std::vector<std::pair<TableId, Schema>> tables;
    for (StateTableSpec& t : specs) {
      TableId id;
      SPOOL_RETURN_IF_ERROR(StateTableId(f.name, prefix + t.suffix, &id));
      tables.emplace_back(id, std::move(t.schema));
    }
    flow.state.push_back(std::move(tables));
    return Status::OK();
  };
  SPOOL_RETURN_IF_ERROR(add_state(flow.source->StateTables(), "source_"));
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    SPOOL_RETURN_IF_ERROR(add_state(flow.ops[i]->StateTables(), "state" + std::to_string(flow.rank[i]) + "_"));
  }
  PipelineSpec one;
  one.flows.push_back(FlowSpec{});
  one.flows[0] = f;
  flow.definition = PipelineSpecToJson(one);
  return Status::OK();
}

Status Pipeline::Impl::PruneSourceColumns(CompiledFlow& flow) {
  // How many columns the rows into step i have (i = ops.size(): the target's rows).
  const auto width = [&](size_t i) {
    return (i == 0 ? flow.source->schema() : flow.ops[i - 1]->output()).columns().size();
  };
  std::vector<bool> read(width(flow.ops.size()), true);  // all go to the target (FitTarget)
  for (size_t i = flow.ops.size(); i-- > 0;) {
    std::vector<bool> inputs(width(i));
    flow.ops[i]->InputsRead(read, &inputs);
    read = std::move(inputs);
  }
  if (std::find(read.begin(), read.end(), false) == read.end()) return Status::OK();
  read.flip();
  return flow.source->LeaveNull(read);
}

// Maps the flow's output onto its target's columns, inferring the target's
// columns and key when the spec does not declare them.
Status Pipeline::Impl::FitTarget(CompiledFlow& flow, const Schema& output, const std::vector<std::string>& output_key) {
  CompiledDataset& target = datasets[flow.target_dataset];
  const std::string place = flow.place + " into " + target.spec.name;
  flow.upserts = !output_key.empty();
  if (!target.schema) {
    std::vector<std::string> key = target.spec.primary_key.empty() ? output_key : target.spec.primary_key;
    Schema schema;
    SPOOL_RETURN_IF_ERROR(MakeSchema(output.columns(), key, place, &schema));
    SPOOL_RETURN_IF_ERROR(CheckNoChangeFeedColumns(schema).WithContext(place));
    target.schema = schema;
  }
  const Schema& t = *target.schema;
  flow.target_columns.assign(t.columns().size(), -1);
  for (size_t c = 0; c < output.columns().size(); ++c) {
    const Column& out = output.columns()[c];
    std::optional<size_t> at = t.FindColumn(out.name);
    if (!at) {
      return Status::InvalidArgument(place + ": the flow writes column '" + out.name + "', which the target does not have " +
                                     DescribeColumns(t));
    }
    const Column& col = t.columns()[*at];
    if (col.type != out.type) {
      return Status::InvalidArgument(place + ": column '" + out.name + "' is " + std::string(ColumnTypeName(out.type)) +
                                     " in the flow but " + std::string(ColumnTypeName(col.type)) +
                                     " in the target; CAST it in a select");
    }
    if (out.nullable && !col.nullable) {
      return Status::InvalidArgument(place + ": column '" + out.name +
                                     "' can be NULL in the flow but not in the target; filter the NULLs out or "
                                     "coalesce them first");
    }
    flow.target_columns[*at] = static_cast<int>(c);
  }
  for (size_t c = 0; c < t.columns().size(); ++c) {
    if (flow.target_columns[c] < 0 && !t.columns()[c].nullable) {
      return Status::InvalidArgument(place + ": the flow gives no value for column '" + t.columns()[c].name +
                                     "', which cannot be NULL");
    }
  }
  if (flow.upserts) {
    std::vector<std::string> key;
    for (size_t k : t.key_columns()) key.push_back(t.columns()[k].name);
    std::vector<std::string> a = key, b = output_key;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) {
      std::string want;
      for (const std::string& k : output_key) want += (want.empty() ? "" : ", ") + k;
      return Status::InvalidArgument(place + ": the flow updates rows by key (" + want + "), so the target's primary key must be those columns; it is " +
                                     DescribeColumns(t));
    }
    // The keys it deletes come in its own key order: the target's may differ.
    for (const std::string& k : key) {
      flow.delete_order.push_back(static_cast<size_t>(std::find(output_key.begin(), output_key.end(), k) - output_key.begin()));
    }
  }
  flow.same_columns = output.columns().size() == t.columns().size();
  for (size_t c = 0; c < t.columns().size(); ++c) flow.same_columns = flow.same_columns && flow.target_columns[c] == static_cast<int>(c);
  for (size_t k : t.key_columns()) {
    if (flow.target_columns[k] < 0) {
      return Status::InvalidArgument(place + ": the flow gives no value for key column '" + t.columns()[k].name + "'");
    }
  }
  return Status::OK();
}

Status Pipeline::Impl::Event(EventLevel level, const std::string& type, const std::string& message, json details,
                             const std::string& update_id, const CompiledFlow* flow, bool progress) {
  spool::Event e;
  e.origin.pipeline_id = pipeline_id;
  e.origin.update_id = update_id;
  if (flow != nullptr) {
    e.origin.flow_name = flow->spec->name;
    e.origin.dataset_name = flow->spec->target;
  }
  e.level = level;
  e.event_type = type;
  e.message = message;
  e.details_json = JsonText(details);
  const bool sync = !progress || ++unsynced_events >= kMaxUnsyncedEvents;
  SPOOL_RETURN_IF_ERROR(store->events()->Append(&e, sync));
  if (sync) unsynced_events = 0;
  return Status::OK();
}

void Pipeline::Impl::StartAhead(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id,
                                 uint64_t budget) {
  JoinAhead();  // the job before, ended already; its queue dropped
  {
    std::lock_guard lock(ahead.mu);
    ahead.flow = &flow;
    ahead.done = ahead.stop = false;
  }
  helper.Start([this, &flow, cp, update_id, budget] { PrepareAhead(flow, cp, update_id, budget); });
}

void Pipeline::Impl::PrepareAhead(CompiledFlow& flow, Checkpoint cp, const std::string& update_id, uint64_t budget) {
  for (uint64_t n = 0; n < budget; ++n) {
    {
      std::unique_lock lock(ahead.mu);
      ahead.changed.wait(lock, [this] { return ahead.stop || ahead.ready.size() < kAheadBatches; });
      if (ahead.stop) break;
    }
    PreparedBatch batch;
    Status s = PrepareBatch(flow, cp, update_id, &batch);
    // The source continues after it (Source::ReadsAhead).
    const bool go_on = s.ok() && !batch.skipped && batch.more;
    if (go_on) {
      flow.source->Committed();
      cp = batch.next;
    }
    {
      std::lock_guard lock(ahead.mu);
      ahead.ready.emplace_back(std::move(s), std::move(batch));
    }
    ahead.changed.notify_all();
    if (!go_on) break;
  }
  {
    std::lock_guard lock(ahead.mu);
    ahead.done = true;
  }
  ahead.changed.notify_all();
}

bool Pipeline::Impl::TakeAhead(const CompiledFlow& flow, Status* status, PreparedBatch* batch) {
  std::unique_lock lock(ahead.mu);
  if (ahead.flow != &flow) return false;
  ahead.changed.wait(lock, [this] { return !ahead.ready.empty() || ahead.done; });
  if (ahead.ready.empty()) {
    ahead.flow = nullptr;  // the helper's job has ended
    return false;
  }
  *status = std::move(ahead.ready.front().first);
  *batch = std::move(ahead.ready.front().second);
  ahead.ready.pop_front();
  lock.unlock();
  ahead.changed.notify_all();
  return true;
}

void Pipeline::Impl::JoinAhead() {
  {
    std::lock_guard lock(ahead.mu);
    ahead.stop = true;
  }
  ahead.changed.notify_all();
  helper.Wait();
  std::lock_guard lock(ahead.mu);
  ahead.flow = nullptr;
  ahead.ready.clear();
}

void Pipeline::Impl::EndBatches() {
  JoinAhead();
  for (CompiledFlow& flow : flows) {
    for (CompiledFlow::Committing& c : flow.committing) (void)store->Wait(&c.commit);  // durable, though not reported
    flow.committing.clear();
  }
}

Status Pipeline::Impl::SyncEvents() {
  if (unsynced_events == 0) return Status::OK();
  SPOOL_RETURN_IF_ERROR(store->events()->Sync());
  unsynced_events = 0;
  return Status::OK();
}

Status Pipeline::Impl::FindDataset(const std::string& name, const std::string& field, size_t* index) {
  auto it = dataset_index.find(name);
  if (it != dataset_index.end()) {
    *index = it->second;
    return Status::OK();
  }
  std::string names;
  for (const CompiledDataset& d : datasets) names += (names.empty() ? "" : ", ") + d.spec.name;
  return Status::InvalidArgument(field + ": the pipeline has no dataset " + name + " (its datasets: " + names + ")");
}

Status Pipeline::Impl::PlanRefresh(const UpdateOptions& options, RefreshPlan* plan) {
  plan->truncate.assign(datasets.size(), options.full_refresh);
  plan->reset.assign(flows.size(), false);
  plan->excluded.assign(flows.size(), false);
  for (const std::string& name : options.full_refresh_selection) {
    size_t d = 0;
    SPOOL_RETURN_IF_ERROR(FindDataset(name, "full_refresh_selection", &d));
    plan->truncate[d] = true;
  }
  // A streaming table fed by a refreshed one would see its rows go: it is
  // refreshed too, or the refresh is refused. (A materialized view
  // recomputes; a flow with skip_change_commits ignores the truncation.)
  for (size_t f : order) {
    const CompiledFlow& flow = flows[f];
    const SourceSpec& source = flow.spec->source;
    if (source.kind != SourceKind::kDataset || source.skip_change_commits || flow.materialized) continue;
    auto upstream = dataset_index.find(source.dataset);
    if (upstream == dataset_index.end() || !plan->truncate[upstream->second] || plan->truncate[flow.target_dataset]) continue;
    if (!options.cascade) {
      return Status::InvalidArgument(flow.spec->target + " reads " + source.dataset + ", which the full refresh "
                                     "truncates: refresh it too (name it in full_refresh_selection, or cascade)");
    }
    plan->truncate[flow.target_dataset] = true;
  }
  for (size_t d = 0; d < datasets.size(); ++d) {
    if (!plan->truncate[d]) continue;
    auto allowed = datasets[d].spec.properties.find("pipelines.reset.allowed");
    if (allowed != datasets[d].spec.properties.end() && allowed->second == "false") {
      return Status::InvalidArgument(datasets[d].spec.name + " has pipelines.reset.allowed = false: a full refresh "
                                     "would lose rows its sources may no longer hold; append with a flow instead, or "
                                     "set the property to true");
    }
    for (size_t f : datasets[d].flows) plan->reset[f] = true;
  }
  for (const std::string& name : options.reset_checkpoint_selection) {
    auto it = std::find_if(flows.begin(), flows.end(), [&](const CompiledFlow& f) { return f.spec->name == name; });
    if (it != flows.end() && it->materialized) {
      return Status::InvalidArgument("reset_checkpoint_selection: flow '" + name + "' computes materialized view " +
                                     it->spec->target + ", to which a checkpoint reset does not apply (it keeps no "
                                     "checkpoint: an update recomputes what changed); a full refresh recomputes it whole");
    }
    if (it != flows.end()) {
      plan->reset[it->index] = true;
      continue;
    }
    std::string names, writers;
    for (const CompiledFlow& f : flows) names += (names.empty() ? "" : ", ") + f.spec->name;
    for (const CompiledFlow& f : flows) {
      if (f.spec->target == name || f.spec->target.ends_with("." + name)) writers += (writers.empty() ? "" : ", ") + f.spec->name;
    }
    if (!writers.empty()) {
      return Status::InvalidArgument("reset_checkpoint_selection: '" + name + "' names a table, not a flow; the flows "
                                     "writing it: " + writers);
    }
    return Status::InvalidArgument("reset_checkpoint_selection: the pipeline has no flow named '" + name +
                                   "' (its flows: " + names + ")");
  }
  if (options.refresh_failed) {
    std::set<std::string> failed;
    SPOOL_RETURN_IF_ERROR(FailedInLastUpdate(&failed));
    if (failed.empty()) return Status::InvalidArgument("refresh of failed tables: no flow failed in the last update");
    std::vector<bool> selected(flows.size(), false);
    for (size_t f : order) {  // upstream first: a flow runs when it failed or reads one that runs
      selected[f] = failed.count(flows[f].spec->name) != 0;
      for (size_t up : flows[f].upstream) selected[f] = selected[f] || selected[up];
    }
    for (size_t f = 0; f < flows.size(); ++f) plan->excluded[f] = plan->excluded[f] || !selected[f];
  }
  if (!options.refresh_selection.empty()) {
    std::vector<bool> selected(datasets.size(), false);
    for (const std::string& name : options.refresh_selection) {
      size_t d = 0;
      SPOOL_RETURN_IF_ERROR(FindDataset(name, "refresh_selection", &d));
      selected[d] = true;
    }
    for (size_t d = 0; d < datasets.size(); ++d) selected[d] = selected[d] || plan->truncate[d];
    // A flow whose checkpoint is reset runs, whether its table is selected
    // or not: the selections add up.
    for (CompiledFlow& flow : flows) plan->excluded[flow.index] = !selected[flow.target_dataset] && !plan->reset[flow.index];
  }
  return Status::OK();
}

// The flows whose failure the last update that ran flows (not a rewind)
// recorded: its ERROR flow_progress events.
Status Pipeline::Impl::FailedInLastUpdate(std::set<std::string>* failed) {
  EventQuery created;
  created.event_type = "create_update";
  std::vector<spool::Event> updates;
  SPOOL_RETURN_IF_ERROR(store->events()->Query(created, &updates));
  auto last = std::find_if(updates.rbegin(), updates.rend(), [](const spool::Event& e) {
    return e.details_json.find("\"rewind\":true") == std::string::npos;
  });
  if (last == updates.rend()) return Status::OK();
  EventQuery errors;
  errors.event_type = "flow_progress";
  errors.level = EventLevel::kError;
  errors.update_id = last->origin.update_id;
  std::vector<spool::Event> events;
  SPOOL_RETURN_IF_ERROR(store->events()->Query(errors, &events));
  for (const spool::Event& e : events) failed->insert(e.origin.flow_name);
  return Status::OK();
}

Status Pipeline::Impl::RefreshLosses(const RefreshPlan& plan, std::vector<std::string>* losses) {
  losses->clear();
  for (CompiledFlow& flow : flows) {
    if (!plan.truncate[flow.target_dataset]) continue;
    std::string data;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(store->GetCheckpoint(flow.spec->name, &data, &found));
    Checkpoint cp;
    if (found) SPOOL_RETURN_IF_ERROR(cp.Decode(flow.spec->name, data));
    StateTables tables;
    for (const auto& [id, schema] : flow.state[0]) tables.ids.push_back(id);
    std::string loss;
    SPOOL_RETURN_IF_ERROR(flow.source->FullRefreshLoss(store, cp.offset, cp.origin, tables, &loss));
    if (!loss.empty()) {
      losses->push_back("a full refresh of " + flow.spec->target + " would lose rows it was built from: flow '" +
                        flow.spec->name + "': " + loss);
    }
  }
  return Status::OK();
}

// The FULL REFRESH (or RESET CHECKPOINTS) commit: each refreshed dataset
// emptied, each reset flow's checkpoint cleared and its state tables
// emptied. A table whose columns or key the definition changed is dropped
// and created again with the definition's (its properties kept), so that a
// full refresh adopts the change it exists for; the commit's parameters
// list those schema changes.
Status Pipeline::Impl::ApplyReset(const RefreshPlan& plan, const std::string& update_id) {
  const bool full = std::find(plan.truncate.begin(), plan.truncate.end(), true) != plan.truncate.end();
  json refreshed = json::array(), reset = json::array(), schema_changes = json::array();
  Transaction txn = RuntimeTransaction("FULL REFRESH", "{}", update_id);
  auto empty_or_replace = [&](const TableId& id, TableKind kind, const Schema& schema,
                              const std::map<std::string, std::string>& properties) -> Status {
    TableInfo table;
    Status s = store->GetTable(id, &table);
    if (s.IsNotFound()) return Status::OK();  // SetUpTables creates it
    SPOOL_RETURN_IF_ERROR(s);
    if (table.schema == schema) {
      txn.Truncate(id);
      return Status::OK();
    }
    std::map<std::string, std::string> kept = table.properties;
    for (const auto& [name, value] : properties) kept[name] = value;
    txn.DropTable(id);
    txn.CreateTable(id, kind, schema, std::move(kept));
    schema_changes.push_back({{"table", id.ToString()}, {"from", DescribeColumns(table.schema)},
                              {"to", DescribeColumns(schema)}});
    return Status::OK();
  };
  for (size_t d = 0; d < datasets.size(); ++d) {
    if (!plan.truncate[d]) continue;
    const CompiledDataset& dataset = datasets[d];
    refreshed.push_back(dataset.spec.name);
    SPOOL_RETURN_IF_ERROR(empty_or_replace(dataset.id, dataset.spec.kind, *dataset.schema, dataset.spec.properties));
  }
  for (const CompiledFlow& flow : flows) {
    if (!plan.reset[flow.index]) continue;
    reset.push_back(flow.spec->name);
    std::string data;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(store->GetCheckpoint(flow.spec->name, &data, &found));
    if (found) txn.SetCheckpoint(flow.spec->name, std::nullopt);
    for (const auto& component : flow.state) {
      for (const auto& [id, schema] : component) {
        SPOOL_RETURN_IF_ERROR(empty_or_replace(id, TableKind::kInternalState, schema, {}));
      }
    }
  }
  json parameters = {{"datasets", refreshed}, {"flows", reset}};
  if (!schema_changes.empty()) parameters["schema_changes"] = schema_changes;
  txn.SetOperation(full ? "FULL REFRESH" : "RESET CHECKPOINTS", JsonText(parameters));
  if (txn.empty()) return Status::OK();  // nothing there yet
  return store->Commit(txn);
}

Status Pipeline::Impl::PlanTableSetup(const TableId& id, const Schema& schema, bool replaceable, const std::string& place,
                                      TableSetup* setup, TableInfo* existing) {
  Status s = store->GetTable(id, existing);
  if (s.IsNotFound()) {
    *setup = TableSetup::kCreate;
    return Status::OK();
  }
  SPOOL_RETURN_IF_ERROR(s);
  if (existing->schema == schema) {
    *setup = TableSetup::kNone;
    return Status::OK();
  }
  const auto& have = existing->schema.columns();
  const auto& want = schema.columns();
  const bool extends = want.size() > have.size() && std::equal(have.begin(), have.end(), want.begin()) &&
                       existing->schema.key_columns() == schema.key_columns() &&
                       std::all_of(want.begin() + static_cast<long>(have.size()), want.end(),
                                   [](const Column& c) { return c.nullable; });
  if (extends) {
    *setup = TableSetup::kAddColumns;
    return Status::OK();
  }
  if (replaceable) {
    *setup = TableSetup::kReplace;
    return Status::OK();
  }
  return Status::InvalidArgument(place + ": table " + id.ToString() + " has columns " + DescribeColumns(existing->schema) +
                                 " but the definition gives " + DescribeColumns(schema) +
                                 "; a full refresh of it is needed");
}

Status Pipeline::Impl::LoadCheckpoints(const RefreshPlan& plan, Checkpoints* checkpoints) {
  checkpoints->at.assign(flows.size(), Checkpoint{});
  checkpoints->found.assign(flows.size(), false);
  for (const CompiledFlow& flow : flows) {
    if (plan.reset[flow.index]) continue;  // cleared: it starts over
    std::string data;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(store->GetCheckpoint(flow.spec->name, &data, &found));
    checkpoints->found[flow.index] = found;
    if (found) SPOOL_RETURN_IF_ERROR(checkpoints->at[flow.index].Decode(flow.spec->name, data));
  }
  return Status::OK();
}

Status Pipeline::Impl::CheckDefinition(const RefreshPlan& plan, const Checkpoints& checkpoints,
                                       const CompiledFlow** failing) {
  *failing = nullptr;
  TableSetup setup;
  TableInfo existing;
  for (size_t d = 0; d < datasets.size(); ++d) {
    const CompiledDataset& dataset = datasets[d];
    const bool rebuilt = plan.truncate[d] || dataset.spec.kind == TableKind::kMaterializedView;
    SPOOL_RETURN_IF_ERROR(PlanTableSetup(dataset.id, *dataset.schema, rebuilt,
                                         "datasets[" + std::to_string(d) + "] " + Quoted(dataset.spec.name), &setup,
                                         &existing));
  }
  for (const CompiledFlow& flow : flows) {
    const Checkpoint& cp = checkpoints.at[flow.index];
    // A flow that has committed batches has its state; a materialized view
    // is recomputed when its definition changes.
    const bool has_state = checkpoints.found[flow.index] && cp.batch_id > 0 && !flow.materialized;
    *failing = &flow;
    if (has_state && cp.fingerprint != flow.fingerprint) {
      return Status::InvalidArgument("Flow '" + flow.spec->name + "' has state that its new definition cannot use (was: " +
                                     cp.fingerprint + "; now: " + flow.fingerprint + "). A full refresh of " +
                                     flow.spec->target + " or a reset of the flow's checkpoint is needed.");
    }
    const bool rebuilt = plan.reset[flow.index] || flow.materialized;
    for (const auto& component : flow.state) {
      for (const auto& [id, schema] : component) {
        SPOOL_RETURN_IF_ERROR(PlanTableSetup(id, schema, rebuilt, flow.place, &setup, &existing));
        if (has_state && setup == TableSetup::kCreate) {
          return Status::InvalidArgument(std::string(kInternalStateMissing) + ": flow '" + flow.spec->name +
                                         "' has committed batches but its state table " + id.ToString() +
                                         " is missing, so its results would be wrong: a full refresh of " +
                                         flow.spec->target + " rebuilds it");
        }
      }
    }
  }
  *failing = nullptr;
  return Status::OK();
}

// Creates the datasets and state tables that do not exist yet, adds the
// columns a definition added, and replaces a materialized view (and its
// flow's state) whose definition changed, in one commit. CheckDefinition
// has refused what it cannot do.
Status Pipeline::Impl::SetUpTables(const std::string& update_id) {
  Transaction txn = RuntimeTransaction("SETUP TABLES", JsonText(json{{"pipeline", spec.name}}), update_id);
  auto ensure = [&](const TableId& id, TableKind kind, const Schema& schema, const std::map<std::string, std::string>& props,
                    const std::string& place, bool replaceable) -> Status {
    TableSetup setup;
    TableInfo existing;
    SPOOL_RETURN_IF_ERROR(PlanTableSetup(id, schema, replaceable, place, &setup, &existing));
    switch (setup) {
      case TableSetup::kNone:
        break;
      case TableSetup::kReplace:
        txn.DropTable(id);
        [[fallthrough]];
      case TableSetup::kCreate:
        txn.CreateTable(id, kind, schema, props);
        break;
      case TableSetup::kAddColumns:
        for (size_t c = existing.schema.columns().size(); c < schema.columns().size(); ++c) {
          txn.AddColumn(id, schema.columns()[c]);
        }
        break;
    }
    return Status::OK();
  };
  for (size_t i = 0; i < datasets.size(); ++i) {
    const CompiledDataset& d = datasets[i];
    SPOOL_RETURN_IF_ERROR(ensure(d.id, d.spec.kind, *d.schema, d.spec.properties,
                                 "datasets[" + std::to_string(i) + "] " + Quoted(d.spec.name),
                                 d.spec.kind == TableKind::kMaterializedView));
  }
  for (const CompiledFlow& flow : flows) {
    for (const auto& tables : flow.state) {
      for (const auto& [id, schema] : tables) {
        SPOOL_RETURN_IF_ERROR(ensure(id, TableKind::kInternalState, schema, {}, flow.place, flow.materialized));
      }
    }
  }
  if (txn.empty()) return Status::OK();
  return store->Commit(txn);
}

// A flow whose source found nothing new may still have moved past commits
// that did not concern it: its offset is committed alone, when it lags at
// least `min_lag` versions behind, so that it stays within what the log
// retains.
Status Pipeline::Impl::SaveIdleOffset(CompiledFlow& flow, Checkpoint& cp, const std::string& update_id,
                                      uint64_t min_lag, bool* committed) {
  *committed = false;
  if (flow.materialized || flow.spec->once || cp.batch_id == 0 || flow.source->uncommitted_versions() < min_lag) {
    return Status::OK();
  }
  Checkpoint next = cp;
  next.offset = flow.source->NextOffset();
  Transaction txn = RuntimeTransaction(
      "STREAMING UPDATE", JsonText(json{{"flow", flow.spec->name}, {"epochId", cp.batch_id}, {"idle", true}}), update_id);
  txn.SetCheckpoint(flow.spec->name, next.Encode());
  SPOOL_RETURN_IF_ERROR(store->Commit(txn));
  flow.source->Committed();
  cp = next;
  *committed = true;
  return Status::OK();
}

// Makes `id` hold exactly `rows`: by key, the rows that changed and the
// keys that went; without a key, all rows again if any differs. `batch`
// receives the counts.
Status Pipeline::Impl::WriteDifference(const TableId& id, const Schema& schema, std::vector<Row> rows, Transaction& txn,
                                       Batch* batch) {
  batch->rows.clear();
  batch->deletes.clear();
  if (schema.has_key()) {
    std::map<std::string, Row> current;
    SPOOL_RETURN_IF_ERROR(store->Read(id, {}, [&](const Row& row) {
      current.emplace(KeyBytes(row, schema.key_columns()), row);
      return true;
    }));
    for (Row& row : rows) {
      auto it = current.find(KeyBytes(row, schema.key_columns()));
      const bool same = it != current.end() && it->second == row;
      if (it != current.end()) current.erase(it);
      if (!same) batch->rows.push_back(row), txn.Write(id, std::move(row));
    }
    for (const auto& [key, row] : current) {
      Row k;
      for (size_t c : schema.key_columns()) k.push_back(row[c]);
      batch->deletes.push_back(k);
      txn.Delete(id, std::move(k));
    }
    return Status::OK();
  }
  std::vector<Row> current;
  SPOOL_RETURN_IF_ERROR(store->Read(id, {}, [&](const Row& row) {
    current.push_back(row);
    return true;
  }));
  std::vector<Row> sorted = rows;
  std::sort(sorted.begin(), sorted.end());
  std::sort(current.begin(), current.end());
  if (sorted == current) return Status::OK();
  txn.Truncate(id);
  batch->deletes.resize(current.size());
  for (Row& row : rows) batch->rows.push_back(row), txn.Write(id, std::move(row));
  return Status::OK();
}

Status Pipeline::Impl::PrepareBatch(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id,
                                    PreparedBatch* prepared) {
  prepared->started = std::chrono::steady_clock::now();
  Transaction& txn = prepared->txn;
  txn = RuntimeTransaction("STREAMING UPDATE",
                           JsonText(json{{"outputMode", flow.upserts ? "Update" : "Append"},
                                         {"flow", flow.spec->name},
                                         {"epochId", cp.batch_id}}),
                           update_id);
  BatchContext ctx;
  ctx.store = store;
  ctx.txn = &txn;
  Batch batch;
  Checkpoint& next = prepared->next;
  next = cp;
  bool* more = &prepared->more;
  *more = false;
  const Schema& t = *datasets[flow.target_dataset].schema;
  bool recompute = false;
  if (flow.materialized) {
    // A materialized view, refreshed when an input changed: incrementally
    // (its query over the new rows, the aggregate's state carried on) when
    // its source only gained rows since and nothing else it reads changed;
    // otherwise recomputed whole, writing the difference.
    const VersionRange range = store->AvailableVersions();
    const uint64_t from = std::max<uint64_t>(cp.version + 1, range.oldest);
    // Never refreshed, or the log no longer holds what changed since.
    bool changed = cp.batch_id == 0 || cp.version + 1 < range.oldest || cp.definition != flow.definition;
    recompute = changed;
    std::vector<Row> appended;
    for (size_t i = 0; i < flow.inputs.size() && !recompute && range.newest > cp.version; ++i) {
      TableInfo input;
      SPOOL_RETURN_IF_ERROR(store->GetTable(flow.inputs[i], &input));
      if (store->LastChangeBound(input) <= cp.version) continue;  // unchanged: no need to look
      SPOOL_RETURN_IF_ERROR(store->Changes(flow.inputs[i], from, range.newest, [&](const ChangeRow& change) {
        changed = true;
        recompute = i != 0 || change.change_type != ChangeType::kInsert;
        if (!recompute) appended.push_back(change.row);
        return !recompute;
      }));
    }
    if (!changed) {
      prepared->skipped = true;
      return Status::OK();
    }
    txn.SetOperation("MATERIALIZED VIEW REFRESH",
                     JsonText(json{{"flow", flow.spec->name}, {"mode", recompute ? "RECOMPUTE" : "INCREMENTAL"}}));
    if (recompute) {
      for (auto& op : flow.ops) SPOOL_RETURN_IF_ERROR(op->Reset(ctx));
      SPOOL_RETURN_IF_ERROR(flow.source->ReadAll(ctx, &batch));
    } else {
      batch.rows = std::move(appended);
    }
    next.version = range.newest;
    next.definition = flow.definition;
  } else if (flow.spec->once) {
    SPOOL_RETURN_IF_ERROR(flow.source->ReadAll(ctx, &batch));
    next.once_done = flow.definition;
  } else {
    SPOOL_RETURN_IF_ERROR(flow.source->Read(ctx, &batch, more));
  }
  // The operators' second streams.
  std::vector<Batch> sides(flow.ops.size());
  uint64_t input_rows = batch.rows.size();
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    if (Source* side = flow.ops[i]->side()) {
      bool side_more = false;
      SPOOL_RETURN_IF_ERROR(side->Read(ctx, &sides[i], &side_more));
      *more = *more || side_more;
      input_rows += sides[i].rows.size();
    }
  }
  prepared->backlog = flow.source->backlog();
  if (!flow.materialized && !flow.spec->once && input_rows == 0 && txn.empty()) {
    prepared->skipped = true;
    return Status::OK();
  }
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    ctx.side = std::move(sides[i]);
    SPOOL_RETURN_IF_ERROR(flow.ops[i]->Process(ctx, &batch));
  }
  // The flow's columns in the target's order (when they differ).
  std::vector<Row> rows = std::move(batch.rows);
  if (!flow.same_columns) {
    for (Row& row : rows) {
      Row out(t.columns().size());
      for (size_t c = 0; c < out.size(); ++c) {
        if (flow.target_columns[c] >= 0) out[c] = std::move(row[static_cast<size_t>(flow.target_columns[c])]);
      }
      row = std::move(out);
    }
  }
  if (recompute) {
    SPOOL_RETURN_IF_ERROR(WriteDifference(flow.target, t, std::move(rows), txn, &batch));
    prepared->output_rows = batch.rows.size();
  } else {
    prepared->output_rows = rows.size();
    txn.Reserve(rows.size() + batch.deletes.size() + 1);  // and the checkpoint
    const Transaction::TableRef target = txn.Table(flow.target);
    for (Row& row : rows) txn.Write(target, std::move(row));
    for (const Row& key : batch.deletes) {
      Row target_key;
      for (size_t i : flow.delete_order) target_key.push_back(key[i]);
      txn.Delete(target, std::move(target_key));
    }
  }
  next.fingerprint = flow.fingerprint;
  if (cp.batch_id == 0) next.origin = flow.source->ReadFromOffset();
  next.offset = flow.source->NextOffset();
  next.batch_id = cp.batch_id + 1;
  next.sides.clear();
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    if (auto w = flow.ops[i]->watermark()) next.watermarks[flow.rank[i]] = *w;
    if (Source* side = flow.ops[i]->side()) next.sides.push_back(side->NextOffset());
  }
  txn.SetCheckpoint(flow.spec->name, next.Encode());
  txn.AddMetric("numInputRows", static_cast<int64_t>(input_rows));
  if (ctx.late_rows != 0) txn.AddMetric("numLateRowsDropped", static_cast<int64_t>(ctx.late_rows));
  prepared->input_rows = input_rows;
  prepared->deleted_rows = batch.deletes.size();
  prepared->late_rows = ctx.late_rows;
  return Status::OK();
}

Status Pipeline::Impl::RunBatch(CompiledFlow& flow, Checkpoint& cp, const std::string& update_id,
                                FlowUpdateStats& stats, const UpdateOptions& options, uint64_t ahead_budget,
                                bool* more, bool* committed, bool* commit_failed) {
  *committed = false;
  PreparedBatch batch;
  Status prepared;
  const bool taken = TakeAhead(flow, &prepared, &batch);
  if (!taken) prepared = PrepareBatch(flow, cp, update_id, &batch);
  if (!prepared.ok() || batch.skipped) {
    SPOOL_RETURN_IF_ERROR(FinishCommitting(flow, update_id, stats, options, commit_failed));
    return prepared;
  }
  *more = batch.more;
  // While this batch commits, the next ones are read and processed on
  // another thread: the source continues after this batch already, and a
  // failed commit ends the update, the next starting over from the store.
  // The helper may be at it already (`taken`: it told the source of this
  // batch unless it was the source's last), and goes on until its budget
  // or the source's rows run out.
  const bool runs_ahead = batch.more && (taken || (ahead_budget != 0 && flow.runs_ahead));
  if (runs_ahead && !taken) {
    flow.source->Committed();
    StartAhead(flow, batch.next, update_id, ahead_budget);
  }
  // Queued behind the batch before it, which syncs meanwhile.
  PendingCommit pending;
  Status s = store->CommitAsync(batch.txn, &pending);
  batch.txn = Transaction();
  // A refused transaction (a row that does not fit) changed nothing; any
  // other failure came after the log write.
  if (!s.ok()) *commit_failed = !s.IsInvalidArgument();
  Status before = FinishCommitting(flow, update_id, stats, options, commit_failed, runs_ahead ? kCommitting - 1 : 0);
  if (s.ok()) s = before;
  if (!s.ok()) {
    JoinAhead();  // and drop what it prepared
    return s;
  }
  *committed = true;
  cp = batch.next;
  if (runs_ahead) {
    flow.committing.push_back(CompiledFlow::Committing{std::move(pending), std::move(batch)});
    return Status::OK();
  }
  CommitResult result;
  s = store->Wait(&pending, &result);
  if (!s.ok()) {
    *commit_failed = true;
    return s;
  }
  flow.source->Committed();
  for (auto& op : flow.ops) {
    if (Source* side = op->side()) side->Committed();
  }
  return Report(flow, batch, result, update_id, stats, options);
}

Status Pipeline::Impl::FinishCommitting(CompiledFlow& flow, const std::string& update_id, FlowUpdateStats& stats,
                                        const UpdateOptions& options, bool* commit_failed, size_t keep) {
  while (flow.committing.size() > keep) {
    CompiledFlow::Committing committing = std::move(flow.committing.front());
    flow.committing.pop_front();
    CommitResult result;
    Status s = store->Wait(&committing.commit, &result);
    if (!s.ok()) {
      *commit_failed = true;
      return s;
    }
    SPOOL_RETURN_IF_ERROR(Report(flow, committing.batch, result, update_id, stats, options));
  }
  return Status::OK();
}

Status Pipeline::Impl::Report(CompiledFlow& flow, const PreparedBatch& batch, const CommitResult& result,
                              const std::string& update_id, FlowUpdateStats& stats, const UpdateOptions& options) {
  flow.backlog = batch.backlog;
  stats.batches++;
  stats.input_rows += batch.input_rows;
  stats.output_rows += batch.output_rows;
  stats.deleted_rows += batch.deleted_rows;
  stats.late_rows += batch.late_rows;
  const uint64_t batch_id = batch.next.batch_id - 1;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - batch.started).count();
  SPOOL_RETURN_IF_ERROR(Event(EventLevel::kInfo, "flow_progress",
               "Flow '" + flow.spec->name + "' committed batch " + std::to_string(batch_id) + " at version " +
                   std::to_string(result.version) + ".",
               json{{"flow_progress",
                     {{"status", "RUNNING"},
                      {"batch_id", batch_id},
                      {"version", result.version},
                      {"metrics",
                       {{"num_input_rows", batch.input_rows},
                        {"num_output_rows", batch.output_rows},
                        {"num_deleted_rows", batch.deleted_rows},
                        {"num_late_rows_dropped", batch.late_rows},
                        {"duration_ms", ms},
                        {"backlog_" + std::string(batch.backlog.unit), batch.backlog.amount}}}}}},
               update_id, &flow, /*progress=*/true));
  if (options.on_batch) options.on_batch(flow.spec->name, stats.output_rows);
  if (options.on_progress) {
    options.on_progress(FlowProgress{flow.spec->name, stats.batches, stats.input_rows, stats.output_rows,
                                     flow.backlog.unit, flow.backlog.amount});
  }
  return Status::OK();
}

Pipeline::Pipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pipeline::~Pipeline() = default;
const PipelineSpec& Pipeline::spec() const { return impl_->spec; }
const std::string& Pipeline::id() const { return impl_->pipeline_id; }

Status Pipeline::CheckSourcesRetain(uint64_t version, const std::vector<std::string>& flows,
                                    const std::map<std::string, std::string>& known) const {
  Impl& p = *impl_;
  for (CompiledFlow& flow : p.flows) {
    if (!flows.empty() && std::find(flows.begin(), flows.end(), flow.spec->name) == flows.end()) continue;
    std::string data;
    bool found = false;
    if (auto it = known.find(flow.spec->name); it != known.end()) {
      data = it->second;
      found = true;
    } else {
      SPOOL_RETURN_IF_ERROR(p.store->GetCheckpointAt(flow.spec->name, version, &data, &found));
    }
    Checkpoint cp;
    if (found) SPOOL_RETURN_IF_ERROR(cp.Decode(flow.spec->name, data));
    StateTables tables;
    for (const auto& [id, schema] : flow.state[0]) tables.ids.push_back(id);
    Status s = flow.source->CheckRetained(p.store, version, cp.offset, tables);
    if (!s.ok()) return Status::InvalidArgument("flow '" + flow.spec->name + "': " + std::string(s.message()));
  }
  return Status::OK();
}

std::vector<PipelineDataset> Pipeline::Datasets() const {
  const Impl& p = *impl_;
  std::vector<PipelineDataset> out;
  std::vector<bool> listed(p.datasets.size(), false);
  auto add = [&](size_t d) {
    if (listed[d]) return;
    listed[d] = true;
    const CompiledDataset& dataset = p.datasets[d];
    PipelineDataset info{dataset.id, dataset.spec.kind, {}, {}, {}, false};
    for (size_t f : dataset.flows) {
      const CompiledFlow& flow = p.flows[f];
      info.flows.push_back(flow.spec->name);
      info.external_source = info.external_source || flow.spec->source.kind != SourceKind::kDataset;
      for (size_t up : flow.upstream) {
        const TableId& id = p.flows[up].target;
        if (std::find(info.upstream.begin(), info.upstream.end(), id) == info.upstream.end()) info.upstream.push_back(id);
      }
      for (const auto& component : flow.state) {
        for (const auto& [id, schema] : component) info.state_tables.push_back(id);
      }
    }
    out.push_back(std::move(info));
  };
  for (size_t f : p.order) add(p.flows[f].target_dataset);
  for (size_t d = 0; d < p.datasets.size(); ++d) add(d);  // datasets no flow writes
  return out;
}

Status Pipeline::Open(Store* store, PipelineSpec spec, std::unique_ptr<Pipeline>* pipeline,
                      const PipelineOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->store = store;
  impl->env = options.env;
  impl->spec = std::move(spec);
  SPOOL_RETURN_IF_ERROR(impl->Compile());
  Status s = GetPipelineDefinition(store, nullptr, &impl->pipeline_id, &impl->definition_number);
  if (!s.ok() && !s.IsNotFound()) return s;
  pipeline->reset(new Pipeline(std::move(impl)));
  return Status::OK();
}

void Pipeline::Stop() {
  std::lock_guard lock(impl_->mu);
  impl_->stop = true;
  impl_->wake.notify_all();
}

Status Pipeline::Validate(const UpdateOptions& options, std::vector<std::string>* warnings) {
  Impl::RefreshPlan refresh;
  SPOOL_RETURN_IF_ERROR(impl_->PlanRefresh(options, &refresh));
  Impl::Checkpoints checkpoints;
  SPOOL_RETURN_IF_ERROR(impl_->LoadCheckpoints(refresh, &checkpoints));
  const CompiledFlow* failing = nullptr;
  SPOOL_RETURN_IF_ERROR(impl_->CheckDefinition(refresh, checkpoints, &failing));
  return impl_->RefreshLosses(refresh, warnings);
}

namespace {

bool Terminal(UpdateState state) {
  return state == UpdateState::kCompleted || state == UpdateState::kFailed || state == UpdateState::kCanceled;
}

// Pipeline::Update's work; `*started` is set once the update is recorded
// (its create_update event), from when it must end in a terminal state.
Status RunUpdate(Pipeline::Impl& p, const UpdateOptions& options, UpdateResult* result, bool* started) {
  // However the update ends, no batch is being prepared or committed after
  // it: the next update starts every source and step from the store.
  struct EndBatches {
    Pipeline::Impl& p;
    ~EndBatches() { p.EndBatches(); }
  } end_batches{p};
  *result = UpdateResult{};
  Pipeline::Impl::RefreshPlan refresh;
  SPOOL_RETURN_IF_ERROR(p.PlanRefresh(options, &refresh));  // a selection that does not fit changes nothing
  result->update_id = options.update_id.empty() ? NewUpdateId() : options.update_id;
  const std::string& update_id = result->update_id;
  std::unique_ptr<UpdateClaim> claim;
  SPOOL_RETURN_IF_ERROR(p.store->ClaimUpdate(update_id, &claim));
  auto progress = [&](UpdateState state) {
    result->state = state;
    const std::string_view error = state == UpdateState::kFailed ? std::string_view(result->error) : "";
    SPOOL_RETURN_IF_ERROR(RecordUpdateProgress(p.store, p.pipeline_id, update_id, state, error));
    p.unsynced_events = 0;  // a synced event: every event before it is durable
    return Status::OK();
  };
  *started = options.retry_attempt;
  if (!options.retry_attempt) {
    SPOOL_RETURN_IF_ERROR(p.Event(EventLevel::kInfo, "create_update",
                                  "Update " + update_id.substr(0, 6) + " started by " + options.cause + ".",
                                  json{{"create_update",
                                        {{"cause", options.cause},
                                         {"continuous", options.continuous},
                                         {"definition_number", p.definition_number}}}},
                                  update_id));
    *started = true;
    SPOOL_RETURN_IF_ERROR(progress(UpdateState::kQueued));
  }
  SPOOL_RETURN_IF_ERROR(progress(UpdateState::kInitializing));
  // The first failure is the update's error; a flow's is an ERROR event of
  // its own, the update's FAILED state (progress) carries it.
  auto fail = [&](const std::string& message, const CompiledFlow* flow) -> Status {
    if (result->error.empty()) result->error = message;
    if (flow == nullptr) return Status::OK();
    return p.Event(EventLevel::kError, "flow_progress", message,
                   json{{"flow_progress", {{"status", "FAILED"}, {"error", message}}}}, update_id, flow);
  };
  // The checkpoints, and what the definition asks of them and of the
  // tables (as Validate checks it).
  Pipeline::Impl::Checkpoints loaded;
  SPOOL_RETURN_IF_ERROR(p.LoadCheckpoints(refresh, &loaded));
  std::vector<Checkpoint>& checkpoints = loaded.at;
  const CompiledFlow* failing = nullptr;
  if (Status s = p.CheckDefinition(refresh, loaded, &failing); !s.ok()) {
    if (!s.IsInvalidArgument()) return s;
    SPOOL_RETURN_IF_ERROR(fail(std::string(s.message()), failing));
    SPOOL_RETURN_IF_ERROR(progress(UpdateState::kFailed));
    return Status::OK();
  }
  if (refresh.any_reset()) {
    SPOOL_RETURN_IF_ERROR(progress(UpdateState::kResetting));
    std::vector<std::string> losses;
    SPOOL_RETURN_IF_ERROR(p.RefreshLosses(refresh, &losses));
    for (const std::string& loss : losses) {
      SPOOL_RETURN_IF_ERROR(p.Event(EventLevel::kWarn, "update_progress", loss,
                                    json{{"update_progress", {{"state", "RESETTING"}, {"warning", loss}}}}, update_id));
    }
    Status reset = p.ApplyReset(refresh, update_id);
    if (!reset.ok()) {
      SPOOL_RETURN_IF_ERROR(fail("Resetting failed: " + std::string(reset.message()), nullptr));
      SPOOL_RETURN_IF_ERROR(progress(UpdateState::kFailed));
      return reset;
    }
  }
  SPOOL_RETURN_IF_ERROR(progress(UpdateState::kSettingUpTables));
  Status s = p.SetUpTables(update_id);
  if (!s.ok()) {
    SPOOL_RETURN_IF_ERROR(fail(std::string(s.message()), nullptr));
    SPOOL_RETURN_IF_ERROR(progress(UpdateState::kFailed));
    return s.IsInvalidArgument() ? Status::OK() : s;
  }
  std::vector<bool> failed_at_start(p.flows.size(), false);
  for (CompiledFlow& flow : p.flows) {
    Transaction setup = RuntimeTransaction("MOVE STATE", JsonText(json{{"flow", flow.spec->name}}), update_id);
    StateTables tables;
    for (const auto& [id, schema] : flow.state[0]) tables.ids.push_back(id);
    int side_index = 0;
    SPOOL_RETURN_IF_ERROR(flow.source->Start(p.store, checkpoints[flow.index].offset, tables));
    if (!options.continuous) {
      s = flow.source->BoundToNow();
      if (!s.ok()) {
        failed_at_start[flow.index] = true;
        SPOOL_RETURN_IF_ERROR(fail("Flow '" + flow.spec->name + "' failed: " + std::string(s.message()), &flow));
      }
    }
    for (size_t i = 0; i < flow.ops.size(); ++i) {
      StateTables op_tables;
      for (const auto& [id, schema] : flow.state[1 + i]) op_tables.ids.push_back(id);
      SPOOL_RETURN_IF_ERROR(flow.ops[i]->Start(p.store, op_tables, &setup));
      if (Source* side = flow.ops[i]->side()) {
        const std::vector<std::string>& offsets = checkpoints[flow.index].sides;
        const size_t n = static_cast<size_t>(side_index++);
        SPOOL_RETURN_IF_ERROR(side->Start(p.store, n < offsets.size() ? offsets[n] : "", StateTables{}));
      }
      auto w = checkpoints[flow.index].watermarks.find(flow.rank[i]);
      if (w != checkpoints[flow.index].watermarks.end()) flow.ops[i]->set_watermark(w->second);
    }
    // Before any flow writes: another may write the target the state leaves.
    if (!setup.empty()) SPOOL_RETURN_IF_ERROR(p.store->Commit(setup));
  }
  SPOOL_RETURN_IF_ERROR(progress(UpdateState::kRunning));
  for (const CompiledFlow& flow : p.flows) result->flows.push_back(FlowUpdateStats{flow.spec->name});
  std::vector<bool> failed = failed_at_start;
  for (size_t f = 0; f < failed.size(); ++f) result->flows[f].failed = failed[f];
  std::vector<bool> done = refresh.excluded;          // a `once` flow that ran, or one not selected
  for (size_t f = 0; f < done.size(); ++f) result->flows[f].skipped = refresh.excluded[f];
  std::vector<bool> pending(p.flows.size(), false);  // in this pass: committed, or has more
  auto stopping = [&]() {
    std::lock_guard lock(p.mu);
    return p.stop || (options.stop != nullptr && options.stop->load()) ||
           (options.max_batches != 0 && result->batches >= options.max_batches);
  };
  // Passes over the flows in DAG order. Triggered mode drains each flow in
  // turn, so that a flow sees everything upstream of it processed: its
  // results (a lookup join's above all) depend on the input alone, and a
  // rerun after a crash writes what a run without one would. Continuous mode
  // takes one batch of each flow with data a pass, so that none starves
  // another, and waits a trigger interval when a pass finds nothing. A
  // materialized view waits for a pass in which nothing upstream of it
  // moved, so that it refreshes once.
  bool canceled = false;
  while (true) {
    bool any = false;
    for (size_t f : p.order) {
      if (stopping()) break;
      CompiledFlow& flow = p.flows[f];
      FlowUpdateStats& stats = result->flows[f];
      pending[f] = false;
      if (failed[f] || done[f]) continue;
      bool upstream_failed = false, upstream_pending = false;
      for (size_t up : flow.upstream) {
        upstream_failed = upstream_failed || failed[up];
        upstream_pending = upstream_pending || pending[up];
      }
      if (upstream_failed) {
        failed[f] = stats.skipped = true;
        continue;
      }
      if (flow.materialized && upstream_pending) continue;
      Checkpoint& cp = checkpoints[f];
      if (flow.spec->once && cp.once_done == flow.definition) {
        done[f] = stats.skipped = true;
        continue;
      }
      bool more = true;
      while (true) {
        bool committed = false, commit_failed = false;
        const bool run = more && !failed[f] && !stopping();
        more = false;
        if (run) {
          // None after the batches the update stops at anyway.
          const uint64_t ahead_budget = options.continuous       ? 0
                                        : options.max_batches == 0 ? UINT64_MAX
                                                                   : options.max_batches - result->batches - 1;
          s = p.RunBatch(flow, cp, update_id, stats, options, ahead_budget, &more, &committed, &commit_failed);
        } else {
          // Stopped with a batch still committing: it is reported all the same.
          s = p.FinishCommitting(flow, update_id, stats, options, &commit_failed);
        }
        if (!s.ok()) {
          failed[f] = stats.failed = true;
          if (result->error.empty()) result->transient = s.IsIOError() && !commit_failed;
          SPOOL_RETURN_IF_ERROR(fail("Flow '" + flow.spec->name + "' failed: " + std::string(s.message()), &flow));
          // A commit that failed may have poisoned the store: stop everything.
          // Any other failure stops this flow and those downstream of it.
          if (commit_failed) {
            SPOOL_RETURN_IF_ERROR(progress(UpdateState::kFailed));
            return Status::OK();
          }
          break;
        }
        if (!run) break;
        done[f] = flow.spec->once;
        pending[f] = pending[f] || committed || more;
        any = any || committed || more;
        if (committed) result->batches++;
        if (!committed || options.continuous) more = false;
      }
    }
    if (stopping()) {
      canceled = true;
      break;
    }
    if (any) continue;
    // Caught up: record where flows that found nothing new stand, so that
    // their offsets stay within what the log retains (in continuous mode
    // only once they lag far behind, so that these commits die out).
    for (size_t f : p.order) {
      if (failed[f]) continue;
      bool committed = false;
      s = p.SaveIdleOffset(p.flows[f], checkpoints[f], update_id, options.continuous ? kIdleLagVersions : 1, &committed);
      if (!s.ok()) {
        failed[f] = result->flows[f].failed = true;
        SPOOL_RETURN_IF_ERROR(fail("Flow '" + p.flows[f].spec->name + "' failed: " + std::string(s.message()), &p.flows[f]));
        SPOOL_RETURN_IF_ERROR(progress(UpdateState::kFailed));
        return Status::OK();
      }
    }
    if (!options.continuous) break;
    // Caught up: the batches' progress events become durable before the wait.
    SPOOL_RETURN_IF_ERROR(p.SyncEvents());
    // Waits in slices, so that a stop flag set by a signal handler is seen.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(options.trigger_interval_us);
    std::unique_lock lock(p.mu);
    while (!p.stop && !(options.stop != nullptr && options.stop->load()) && std::chrono::steady_clock::now() < until) {
      p.wake.wait_until(lock, std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)));
    }
  }
  {
    std::lock_guard lock(p.mu);
    p.stop = false;  // a Stop() reaches the update running (or the next one)
  }
  const bool any_failed = std::find(failed.begin(), failed.end(), true) != failed.end();
  if (canceled && !any_failed) {
    SPOOL_RETURN_IF_ERROR(progress(UpdateState::kStopping));
    SPOOL_RETURN_IF_ERROR(progress(UpdateState::kCanceled));
    return Status::OK();
  }
  if (any_failed && result->transient && options.defer_transient_failure) {
    result->state = UpdateState::kFailed;  // the caller retries, or records it
    return p.SyncEvents();
  }
  return progress(any_failed ? UpdateState::kFailed : UpdateState::kCompleted);
}

}  // namespace

Status Pipeline::Update(const UpdateOptions& options, UpdateResult* result) {
  bool started = false;
  const Status s = RunUpdate(*impl_, options, result, &started);
  if (!s.ok() && started && !Terminal(result->state)) {
    // It could not go on (the store failed): it ends FAILED all the same,
    // so that nobody waits for it. Best effort: the store may be failing.
    if (result->error.empty()) result->error = std::string(s.message());
    result->state = UpdateState::kFailed;
    (void)RecordUpdateProgress(impl_->store, impl_->pipeline_id, result->update_id, UpdateState::kFailed, result->error);
  }
  return s;
}

// --- the recorded definition ------------------------------------------------

namespace {

struct RecordedDefinition {
  std::string pipeline_id;
  int64_t number = 0;  // 1 for the first definition, 2 for the next, …
  std::string spec;
};

Status ReadDefinition(Store* store, RecordedDefinition* out) {
  TableId table;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(kDefinitionTable, &table));
  std::optional<Row> row;
  Status s = store->Read(table, {}, [&](const Row& r) {
    row = r;
    return false;
  });
  if (s.IsNotFound() || (s.ok() && !row)) {
    return Status::NotFound("no pipeline is defined in this store; set one with `spool pipeline set`");
  }
  SPOOL_RETURN_IF_ERROR(s);
  if (row->size() != 4 || !std::holds_alternative<std::string>((*row)[0]) ||
      !std::holds_alternative<int64_t>((*row)[1]) || !std::holds_alternative<std::string>((*row)[3])) {
    return Status::Corruption(std::string(kDefinitionTable) + " does not hold a pipeline definition");
  }
  *out = RecordedDefinition{std::get<std::string>((*row)[0]), std::get<int64_t>((*row)[1]), std::get<std::string>((*row)[3])};
  return Status::OK();
}

}  // namespace

Status SetPipelineDefinition(Store* store, const PipelineSpec& spec, std::string* pipeline_id, CommitResult* result) {
  for (size_t f = 0; f < spec.flows.size(); ++f) {
    for (size_t i = 0; i < spec.flows[f].steps.size(); ++i) {
      if (std::holds_alternative<MapStep>(spec.flows[f].steps[i])) {
        return Status::InvalidArgument("flows[" + std::to_string(f) + "] \"" + spec.flows[f].name + "\".steps[" +
                                       std::to_string(i) + "]: a user operator is C++ code, which a recorded "
                                       "definition cannot hold; run such a pipeline with Pipeline::Open");
      }
    }
  }
  std::unique_ptr<Pipeline> compiled;
  SPOOL_RETURN_IF_ERROR(Pipeline::Open(store, spec, &compiled));
  RecordedDefinition previous;
  Status s = ReadDefinition(store, &previous);
  if (!s.ok() && !s.IsNotFound()) return s;
  const std::string id = s.ok() ? previous.pipeline_id : NewUpdateId();
  TableId table;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(kDefinitionTable, &table));
  Transaction txn("SET PIPELINE", JsonText(json{{"pipeline_id", id}, {"name", spec.name}, {"number", previous.number + 1}}));
  txn.AllowSpoolTables();
  if (s.IsNotFound()) {
    Schema schema;
    SPOOL_RETURN_IF_ERROR(Schema::Make({{"pipeline_id", ColumnType::kString, false},
                                        {"number", ColumnType::kInt64, false},
                                        {"name", ColumnType::kString, true},
                                        {"spec", ColumnType::kString, false}},
                                       {"pipeline_id"}, &schema));
    txn.CreateTable(table, TableKind::kInternalState, schema);
  }
  txn.Write(table, {id, previous.number + 1, spec.name, PipelineSpecToJson(spec)});
  SPOOL_RETURN_IF_ERROR(store->Commit(txn, result));
  if (pipeline_id != nullptr) *pipeline_id = id;
  return Status::OK();
}

Status GetPipelineDefinition(Store* store, PipelineSpec* spec, std::string* pipeline_id, int64_t* number) {
  RecordedDefinition recorded;
  SPOOL_RETURN_IF_ERROR(ReadDefinition(store, &recorded));
  if (pipeline_id != nullptr) *pipeline_id = recorded.pipeline_id;
  if (number != nullptr) *number = recorded.number;
  if (spec == nullptr) return Status::OK();
  Status s = ParsePipelineSpec(recorded.spec, spec);
  if (!s.ok()) return Status::Corruption("the recorded pipeline definition does not parse: " + std::string(s.message()));
  return Status::OK();
}

}  // namespace spool
