// A pipeline spec compiled: its datasets and flows, the DAG they form, each
// flow's source, steps, state tables and fit to its target.
#include <algorithm>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "operators_internal.h"
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

namespace {

bool ValidFlowName(std::string_view name) {
  if (name.empty() || name.size() > 100 || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A materialized view's query: from datasets, through filters, selects,
// lookup joins and a grouped aggregate without windows, not `once`.
Status CheckViewQuery(const CompiledFlow& flow) {
  const FlowSpec& f = *flow.spec;
  if (f.source.kind != SourceKind::kDataset) {
    return Status::InvalidArgument(flow.place + ".source: a materialized view is computed from datasets, not " +
                                   (f.source.kind == SourceKind::kFiles ? "files" : "a message source") +
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
  return Status::OK();
}

// The flow's state tables, per component: [0] the source's, then each
// step's, named by its rank among the stateful steps.
Status AddStateTables(CompiledFlow& flow) {
  auto add_state = [&](std::vector<StateTableSpec> specs, const std::string& prefix) -> Status {
    std::vector<std::pair<TableId, Schema>> tables;
    for (StateTableSpec& t : specs) {
      TableId id;
      SPOOL_RETURN_IF_ERROR(StateTableId(flow.spec->name, prefix + t.suffix, &id));
      tables.emplace_back(id, std::move(t.schema));
    }
    flow.state.push_back(std::move(tables));
    return Status::OK();
  };
  SPOOL_RETURN_IF_ERROR(add_state(flow.source->StateTables(), "source_"));
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    SPOOL_RETURN_IF_ERROR(add_state(flow.ops[i]->StateTables(), "state" + std::to_string(flow.rank[i]) + "_"));
  }
  return Status::OK();
}

}  // namespace

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
  if (s.IsNotFound())
    return Status::InvalidArgument("no dataset of the pipeline and no table of the store is named " + name);
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
    case SourceKind::kJetStream:
      return MakeJetStreamSource(source, place, flow.max_batch_rows, out);
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
    if (!dataset_index.emplace(d.name, i).second)
      return Status::InvalidArgument(place + ": a second dataset of that name");
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
      return Status::InvalidArgument(flow.place +
                                     ": a flow name is 1-100 letters, digits and '_', not starting with a "
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
      return Status::InvalidArgument("datasets[" + std::to_string(dataset_index[d.spec.name]) + "] " +
                                     Quoted(d.spec.name) + ": no flow writes it");
    }
  }
  SPOOL_RETURN_IF_ERROR(Order());
  for (size_t f : order) SPOOL_RETURN_IF_ERROR(CompileFlow(flows[f]));
  return CompileSinks();
}

// Each sink publishes a dataset of the pipeline, to the subject its
// template names for it.
Status Pipeline::Impl::CompileSinks() {
  std::set<std::string> names;
  for (size_t i = 0; i < spec.sinks.size(); ++i) {
    const SinkSpec& k = spec.sinks[i];
    const std::string place = "sinks[" + std::to_string(i) + "] " + Quoted(k.name);
    if (!ValidFlowName(k.name)) {
      return Status::InvalidArgument(place +
                                     ": a sink name is 1-100 letters, digits and '_', not starting with a digit");
    }
    if (!names.insert(k.name).second) return Status::InvalidArgument(place + ": a second sink of that name");
    auto it = dataset_index.find(k.dataset);
    if (it == dataset_index.end()) {
      return Status::InvalidArgument(place + ".dataset: " + Quoted(k.dataset) + " is not a dataset of the pipeline");
    }
    const CompiledDataset& d = datasets[it->second];
    if (k.mode == SinkMode::kUpserts && !(d.schema && d.schema->has_key())) {
      return Status::InvalidArgument(place + ".mode: upserts needs a keyed dataset, and " + k.dataset +
                                     " has no primary key (publish its changes)");
    }
    const JetStreamSpec js = k.jetstream;
    sinks.push_back(std::make_unique<stream_internal::SinkRunner>(
        k, d.id, store, env, [js](const std::string& subject, std::unique_ptr<stream_internal::MessagePublisher>* out) {
          return stream_internal::OpenJetStreamPublisher(js, subject, out);
        }));
  }
  return Status::OK();
}

Status Pipeline::Impl::CompileFlow(CompiledFlow& flow) {
  const FlowSpec& f = *flow.spec;
  if (flow.materialized) SPOOL_RETURN_IF_ERROR(CheckViewQuery(flow));
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
  Schema schema;
  SPOOL_RETURN_IF_ERROR(CompileSteps(flow, &schema));
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
  SPOOL_RETURN_IF_ERROR(AddStateTables(flow));
  PipelineSpec one;
  one.flows.push_back(FlowSpec{});
  one.flows[0] = f;
  flow.definition = PipelineSpecToJson(one);
  return Status::OK();
}

Status Pipeline::Impl::CompileSteps(CompiledFlow& flow, Schema* output) {
  const FlowSpec& f = *flow.spec;
  CompileContext ctx;
  ctx.store = store;
  ctx.resolve_table = [&](const std::string& name, TableInfo* table) { return ResolveTable(name, table); };
  ctx.make_source = [&](const SourceSpec& s, const std::string& place, std::unique_ptr<Source>* out) {
    if (f.once) return Status::InvalidArgument(place + ": a `once` flow reads one source");
    return MakeSource(s, f, place, out);
  };
  Schema schema = flow.source->schema();
  size_t stateful_steps = 0;
  std::string fingerprint = "source=" + std::string(SourceKindName(f.source.kind)) + ":" + SourceLocation(f.source);
  for (size_t i = 0; i < f.steps.size(); ++i) {
    const std::string place = flow.place + ".steps[" + std::to_string(i) + "]";
    if (!flow.ops.empty() && flow.ops.back()->emits_upserts()) {
      return Status::InvalidArgument(place +
                                     ": follows a step that updates rows by key, which must be the flow's last step");
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
  *output = schema;
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
      return Status::InvalidArgument(place + ": the flow writes column '" + out.name +
                                     "', which the target does not have " + DescribeColumns(t));
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
      return Status::InvalidArgument(place + ": the flow updates rows by key (" + want +
                                     "), so the target's primary key must be those columns; it is " +
                                     DescribeColumns(t));
    }
    // The keys it deletes come in its own key order: the target's may differ.
    for (const std::string& k : key) {
      flow.delete_order.push_back(
          static_cast<size_t>(std::find(output_key.begin(), output_key.end(), k) - output_key.begin()));
    }
  }
  flow.same_columns = output.columns().size() == t.columns().size();
  for (size_t c = 0; c < t.columns().size(); ++c)
    flow.same_columns = flow.same_columns && flow.target_columns[c] == static_cast<int>(c);
  for (size_t k : t.key_columns()) {
    if (flow.target_columns[k] < 0) {
      return Status::InvalidArgument(place + ": the flow gives no value for key column '" + t.columns()[k].name + "'");
    }
  }
  return Status::OK();
}

}  // namespace spool
