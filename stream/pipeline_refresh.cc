// What an update refreshes: the datasets it truncates, the flows whose
// checkpoints and state it resets, the flows it leaves out; what a full
// refresh would lose; and the reset commit.
#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

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

namespace {

using RefreshPlan = Pipeline::Impl::RefreshPlan;

// The datasets a full refresh truncates: all of them, or those selected,
// and the streaming tables fed by one (with `cascade`; refused without).
Status PlanTruncation(Pipeline::Impl& p, const UpdateOptions& options, RefreshPlan* plan) {
  for (const std::string& name : options.full_refresh_selection) {
    size_t d = 0;
    SPOOL_RETURN_IF_ERROR(p.FindDataset(name, "full_refresh_selection", &d));
    plan->truncate[d] = true;
  }
  // A streaming table fed by a refreshed one would see its rows go: it is
  // refreshed too, or the refresh is refused. (A materialized view
  // recomputes; a flow with skip_change_commits ignores the truncation.)
  for (size_t f : p.order) {
    const CompiledFlow& flow = p.flows[f];
    const SourceSpec& source = flow.spec->source;
    if (source.kind != SourceKind::kDataset || source.skip_change_commits || flow.materialized) continue;
    auto upstream = p.dataset_index.find(source.dataset);
    if (upstream == p.dataset_index.end() || !plan->truncate[upstream->second] || plan->truncate[flow.target_dataset]) {
      continue;
    }
    if (!options.cascade) {
      return Status::InvalidArgument(flow.spec->target + " reads " + source.dataset +
                                     ", which the full refresh "
                                     "truncates: refresh it too (name it in full_refresh_selection, or cascade)");
    }
    plan->truncate[flow.target_dataset] = true;
  }
  return Status::OK();
}

// The flows writing a truncated dataset start over; refused for a dataset
// with pipelines.reset.allowed = false.
Status PlanDatasetResets(const Pipeline::Impl& p, RefreshPlan* plan) {
  for (size_t d = 0; d < p.datasets.size(); ++d) {
    if (!plan->truncate[d]) continue;
    auto allowed = p.datasets[d].spec.properties.find("pipelines.reset.allowed");
    if (allowed != p.datasets[d].spec.properties.end() && allowed->second == "false") {
      return Status::InvalidArgument(p.datasets[d].spec.name +
                                     " has pipelines.reset.allowed = false: a full refresh "
                                     "would lose rows its sources may no longer hold; append with a flow instead, or "
                                     "set the property to true");
    }
    for (size_t f : p.datasets[d].flows) plan->reset[f] = true;
  }
  return Status::OK();
}

// The flows reset_checkpoint_selection names start over too (not a
// materialized view's, which keeps no checkpoint).
Status PlanCheckpointResets(const Pipeline::Impl& p, const UpdateOptions& options, RefreshPlan* plan) {
  for (const std::string& name : options.reset_checkpoint_selection) {
    auto it = std::find_if(p.flows.begin(), p.flows.end(), [&](const CompiledFlow& f) { return f.spec->name == name; });
    if (it != p.flows.end() && it->materialized) {
      return Status::InvalidArgument(
          "reset_checkpoint_selection: flow '" + name + "' computes materialized view " + it->spec->target +
          ", to which a checkpoint reset does not apply (it keeps no "
          "checkpoint: an update recomputes what changed); a full refresh recomputes it whole");
    }
    if (it != p.flows.end()) {
      plan->reset[it->index] = true;
      continue;
    }
    std::string names, writers;
    for (const CompiledFlow& f : p.flows) names += (names.empty() ? "" : ", ") + f.spec->name;
    for (const CompiledFlow& f : p.flows) {
      if (f.spec->target == name || f.spec->target.ends_with("." + name))
        writers += (writers.empty() ? "" : ", ") + f.spec->name;
    }
    if (!writers.empty()) {
      return Status::InvalidArgument("reset_checkpoint_selection: '" + name +
                                     "' names a table, not a flow; the flows "
                                     "writing it: " +
                                     writers);
    }
    return Status::InvalidArgument("reset_checkpoint_selection: the pipeline has no flow named '" + name +
                                   "' (its flows: " + names + ")");
  }
  return Status::OK();
}

// A refresh of the failed tables leaves out every flow but those that
// failed in the last update and those downstream of them.
Status ExcludeAllButFailed(Pipeline::Impl& p, RefreshPlan* plan) {
  std::set<std::string> failed;
  SPOOL_RETURN_IF_ERROR(p.FailedInLastUpdate(&failed));
  if (failed.empty()) return Status::InvalidArgument("refresh of failed tables: no flow failed in the last update");
  std::vector<bool> selected(p.flows.size(), false);
  for (size_t f : p.order) {  // upstream first: a flow runs when it failed or reads one that runs
    selected[f] = failed.count(p.flows[f].spec->name) != 0;
    for (size_t up : p.flows[f].upstream) selected[f] = selected[f] || selected[up];
  }
  for (size_t f = 0; f < p.flows.size(); ++f) plan->excluded[f] = plan->excluded[f] || !selected[f];
  return Status::OK();
}

// refresh_selection leaves out the flows into the datasets it does not
// name, unless the plan refreshes or resets them.
Status ExcludeUnselected(Pipeline::Impl& p, const UpdateOptions& options, RefreshPlan* plan) {
  std::vector<bool> selected(p.datasets.size(), false);
  for (const std::string& name : options.refresh_selection) {
    size_t d = 0;
    SPOOL_RETURN_IF_ERROR(p.FindDataset(name, "refresh_selection", &d));
    selected[d] = true;
  }
  for (size_t d = 0; d < p.datasets.size(); ++d) selected[d] = selected[d] || plan->truncate[d];
  // A flow whose checkpoint is reset runs, whether its table is selected
  // or not: the selections add up.
  for (const CompiledFlow& flow : p.flows) {
    plan->excluded[flow.index] = !selected[flow.target_dataset] && !plan->reset[flow.index];
  }
  return Status::OK();
}

}  // namespace

Status Pipeline::Impl::PlanRefresh(const UpdateOptions& options, RefreshPlan* plan) {
  plan->truncate.assign(datasets.size(), options.full_refresh);
  plan->reset.assign(flows.size(), false);
  plan->excluded.assign(flows.size(), false);
  SPOOL_RETURN_IF_ERROR(PlanTruncation(*this, options, plan));
  SPOOL_RETURN_IF_ERROR(PlanDatasetResets(*this, plan));
  SPOOL_RETURN_IF_ERROR(PlanCheckpointResets(*this, options, plan));
  if (options.refresh_failed) SPOOL_RETURN_IF_ERROR(ExcludeAllButFailed(*this, plan));
  if (!options.refresh_selection.empty()) SPOOL_RETURN_IF_ERROR(ExcludeUnselected(*this, options, plan));
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
    schema_changes.push_back(
        {{"table", id.ToString()}, {"from", DescribeColumns(table.schema)}, {"to", DescribeColumns(schema)}});
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

}  // namespace spool
