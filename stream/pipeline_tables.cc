// What a definition asks of the store's tables and checkpoints: checked
// before an update writes anything (and by validation), then the tables
// set up.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

Status Pipeline::Impl::PlanTableSetup(const TableId& id, const Schema& schema, bool replaceable,
                                      const std::string& place, TableSetup* setup, TableInfo* existing) {
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
  return Status::InvalidArgument(place + ": table " + id.ToString() + " has columns " +
                                 DescribeColumns(existing->schema) + " but the definition gives " +
                                 DescribeColumns(schema) + "; a full refresh of it is needed");
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
      return Status::InvalidArgument("Flow '" + flow.spec->name +
                                     "' has state that its new definition cannot use (was: " + cp.fingerprint +
                                     "; now: " + flow.fingerprint + "). A full refresh of " + flow.spec->target +
                                     " or a reset of the flow's checkpoint is needed.");
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
  auto ensure = [&](const TableId& id, TableKind kind, const Schema& schema,
                    const std::map<std::string, std::string>& props, const std::string& place,
                    bool replaceable) -> Status {
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

}  // namespace spool
