// One micro-batch of a flow: read from its source, run through its
// operators, written to its target with the new checkpoint in one commit,
// and reported once durable; and the offset alone of a flow that found
// nothing new.
#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

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
      "STREAMING UPDATE", JsonText(json{{"flow", flow.spec->name}, {"epochId", cp.batch_id}, {"idle", true}}),
      update_id);
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

namespace {

// One micro-batch of a flow read and processed (Pipeline::Impl::PrepareBatch):
// the source's rows after the checkpoint (a materialized view's: what
// changed in its inputs, or all of them), the operators' second streams,
// the operators run, the rows written to the target and the checkpoint
// after them, all in the batch's transaction.
class BatchPreparation {
 public:
  BatchPreparation(Pipeline::Impl& p, CompiledFlow& flow, const Checkpoint& cp, PreparedBatch* prepared)
      : p_(p), flow_(flow), cp_(cp), out_(*prepared), target_schema_(*p.datasets[flow.target_dataset].schema) {}

  Status Run(const std::string& update_id);

 private:
  Status ReadSource();
  Status ReadViewInputs();
  Status FindViewChanges(const VersionRange& range, bool* changed, std::vector<Row>* appended);
  Status ReadSides();
  Status RunOperators();
  std::vector<Row> InTargetOrder(std::vector<Row> rows) const;
  Status WriteRows(std::vector<Row> rows);
  void SetCheckpoint();

  Pipeline::Impl& p_;
  CompiledFlow& flow_;
  const Checkpoint& cp_;
  PreparedBatch& out_;
  const Schema& target_schema_;
  BatchContext ctx_;
  Batch batch_;
  std::vector<Batch> sides_;  // per step: its second stream's rows
  uint64_t input_rows_ = 0;
  bool recompute_ = false;  // a materialized view recomputed whole
};

Status BatchPreparation::Run(const std::string& update_id) {
  out_.started = std::chrono::steady_clock::now();
  out_.txn = RuntimeTransaction(
      "STREAMING UPDATE",
      JsonText(json{
          {"outputMode", flow_.upserts ? "Update" : "Append"}, {"flow", flow_.spec->name}, {"epochId", cp_.batch_id}}),
      update_id);
  ctx_.store = p_.store;
  ctx_.txn = &out_.txn;
  out_.next = cp_;
  out_.more = false;
  SPOOL_RETURN_IF_ERROR(ReadSource());
  if (out_.skipped) return Status::OK();
  SPOOL_RETURN_IF_ERROR(ReadSides());
  out_.backlog = flow_.source->backlog();
  if (!flow_.materialized && !flow_.spec->once && input_rows_ == 0 && out_.txn.empty() &&
      !flow_.source->MovedWithoutRows()) {
    out_.skipped = true;
    return Status::OK();
  }
  SPOOL_RETURN_IF_ERROR(RunOperators());
  SPOOL_RETURN_IF_ERROR(WriteRows(InTargetOrder(std::move(batch_.rows))));
  SetCheckpoint();
  return Status::OK();
}

// A materialized view's inputs (skipped when none changed), a `once`
// flow's whole source, or the flow's next micro-batch.
Status BatchPreparation::ReadSource() {
  if (flow_.materialized) {
    SPOOL_RETURN_IF_ERROR(ReadViewInputs());
  } else if (flow_.spec->once) {
    SPOOL_RETURN_IF_ERROR(flow_.source->ReadAll(ctx_, &batch_));
    out_.next.once_done = flow_.definition;
  } else {
    SPOOL_RETURN_IF_ERROR(flow_.source->Read(ctx_, &batch_, &out_.more));
  }
  input_rows_ = batch_.rows.size();
  return Status::OK();
}

// A materialized view, refreshed when an input changed: incrementally
// (its query over the new rows, the aggregate's state carried on) when
// its source only gained rows since and nothing else it reads changed;
// otherwise recomputed whole, writing the difference.
Status BatchPreparation::ReadViewInputs() {
  const VersionRange range = p_.store->AvailableVersions();
  bool changed = false;
  std::vector<Row> appended;
  SPOOL_RETURN_IF_ERROR(FindViewChanges(range, &changed, &appended));
  if (!changed) {
    out_.skipped = true;
    return Status::OK();
  }
  out_.txn.SetOperation("MATERIALIZED VIEW REFRESH",
                        JsonText(json{{"flow", flow_.spec->name}, {"mode", recompute_ ? "RECOMPUTE" : "INCREMENTAL"}}));
  if (recompute_) {
    for (auto& op : flow_.ops) SPOOL_RETURN_IF_ERROR(op->Reset(ctx_));
    SPOOL_RETURN_IF_ERROR(flow_.source->ReadAll(ctx_, &batch_));
  } else {
    batch_.rows = std::move(appended);
  }
  out_.next.version = range.newest;
  out_.next.definition = flow_.definition;
  return Status::OK();
}

// Whether the view's inputs changed since it was computed; `recompute_`
// unless only its source did, gaining `*appended`.
Status BatchPreparation::FindViewChanges(const VersionRange& range, bool* changed, std::vector<Row>* appended) {
  const uint64_t from = std::max<uint64_t>(cp_.version + 1, range.oldest);
  // Never refreshed, or the log no longer holds what changed since.
  *changed = cp_.batch_id == 0 || cp_.version + 1 < range.oldest || cp_.definition != flow_.definition;
  recompute_ = *changed;
  for (size_t i = 0; i < flow_.inputs.size() && !recompute_ && range.newest > cp_.version; ++i) {
    TableInfo input;
    SPOOL_RETURN_IF_ERROR(p_.store->GetTable(flow_.inputs[i], &input));
    if (p_.store->LastChangeBound(input) <= cp_.version) continue;  // unchanged: no need to look
    SPOOL_RETURN_IF_ERROR(p_.store->Changes(flow_.inputs[i], from, range.newest, [&](const ChangeRow& change) {
      *changed = true;
      recompute_ = i != 0 || change.change_type != ChangeType::kInsert;
      if (!recompute_) appended->push_back(change.row);
      return !recompute_;
    }));
  }
  return Status::OK();
}

// The operators' second streams (a stream join's right side): input rows
// of the batch too, which has more when one of them has.
Status BatchPreparation::ReadSides() {
  sides_.resize(flow_.ops.size());
  for (size_t i = 0; i < flow_.ops.size(); ++i) {
    if (Source* side = flow_.ops[i]->side()) {
      bool side_more = false;
      SPOOL_RETURN_IF_ERROR(side->Read(ctx_, &sides_[i], &side_more));
      out_.more = out_.more || side_more;
      input_rows_ += sides_[i].rows.size();
    }
  }
  return Status::OK();
}

Status BatchPreparation::RunOperators() {
  for (size_t i = 0; i < flow_.ops.size(); ++i) {
    ctx_.side = std::move(sides_[i]);
    SPOOL_RETURN_IF_ERROR(flow_.ops[i]->Process(ctx_, &batch_));
  }
  return Status::OK();
}

// The flow's columns in the target's order (when they differ).
std::vector<Row> BatchPreparation::InTargetOrder(std::vector<Row> rows) const {
  if (flow_.same_columns) return rows;
  for (Row& row : rows) {
    Row out(target_schema_.columns().size());
    for (size_t c = 0; c < out.size(); ++c) {
      if (flow_.target_columns[c] >= 0) out[c] = std::move(row[static_cast<size_t>(flow_.target_columns[c])]);
    }
    row = std::move(out);
  }
  return rows;
}

// The rows into the target: a recomputed view's difference from what the
// target holds; otherwise the rows written and the keys the flow deletes
// deleted.
Status BatchPreparation::WriteRows(std::vector<Row> rows) {
  Transaction& txn = out_.txn;
  if (recompute_) {
    SPOOL_RETURN_IF_ERROR(p_.WriteDifference(flow_.target, target_schema_, std::move(rows), txn, &batch_));
    out_.output_rows = batch_.rows.size();
    return Status::OK();
  }
  out_.output_rows = rows.size();
  txn.Reserve(rows.size() + batch_.deletes.size() + 1);  // and the checkpoint
  const Transaction::TableRef target = txn.Table(flow_.target);
  for (Row& row : rows) txn.Write(target, std::move(row));
  for (const Row& key : batch_.deletes) {
    Row target_key;
    for (size_t i : flow_.delete_order) target_key.push_back(key[i]);
    txn.Delete(target, std::move(target_key));
  }
  return Status::OK();
}

// The flow's checkpoint after the batch, in its commit, and its figures.
void BatchPreparation::SetCheckpoint() {
  Checkpoint& next = out_.next;
  next.fingerprint = flow_.fingerprint;
  if (cp_.batch_id == 0) next.origin = flow_.source->ReadFromOffset();
  next.offset = flow_.source->NextOffset();
  next.batch_id = cp_.batch_id + 1;
  next.sides.clear();
  for (size_t i = 0; i < flow_.ops.size(); ++i) {
    if (auto w = flow_.ops[i]->watermark()) next.watermarks[flow_.rank[i]] = *w;
    if (Source* side = flow_.ops[i]->side()) next.sides.push_back(side->NextOffset());
  }
  out_.txn.SetCheckpoint(flow_.spec->name, next.Encode());
  out_.txn.AddMetric("numInputRows", static_cast<int64_t>(input_rows_));
  if (ctx_.late_rows != 0) out_.txn.AddMetric("numLateRowsDropped", static_cast<int64_t>(ctx_.late_rows));
  out_.input_rows = input_rows_;
  out_.deleted_rows = batch_.deletes.size();
  out_.late_rows = ctx_.late_rows;
}

}  // namespace

Status Pipeline::Impl::PrepareBatch(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id,
                                    PreparedBatch* prepared) {
  return BatchPreparation(*this, flow, cp, prepared).Run(update_id);
}

Status Pipeline::Impl::RunBatch(FlowRun& run, uint64_t ahead_budget, BatchOutcome* outcome) {
  CompiledFlow& flow = run.flow;
  PreparedBatch batch;
  Status prepared;
  const bool taken = TakeAhead(flow, &prepared, &batch);
  if (!taken) prepared = PrepareBatch(flow, run.cp, run.update_id, &batch);
  if (!prepared.ok() || batch.skipped) {
    SPOOL_RETURN_IF_ERROR(FinishCommitting(run, &outcome->commit_failed));
    return prepared;
  }
  outcome->more = batch.more;
  // While this batch commits, the next ones are read and processed on
  // another thread: the source continues after this batch already, and a
  // failed commit ends the update, the next starting over from the store.
  // The helper may be at it already (`taken`: it told the source of this
  // batch unless it was the source's last), and goes on until its budget
  // or the source's rows run out.
  const bool runs_ahead = batch.more && (taken || (ahead_budget != 0 && flow.runs_ahead));
  if (runs_ahead && !taken) {
    flow.source->Committed();
    StartAhead(flow, batch.next, run.update_id, ahead_budget);
  }
  // Queued behind the batch before it, which syncs meanwhile.
  PendingCommit pending;
  Status s = store->CommitAsync(batch.txn, &pending);
  batch.txn = Transaction();
  // A refused transaction (a row that does not fit) changed nothing; any
  // other failure came after the log write.
  if (!s.ok()) outcome->commit_failed = !s.IsInvalidArgument();
  Status before = FinishCommitting(run, &outcome->commit_failed, runs_ahead ? kCommitting - 1 : 0);
  if (s.ok()) s = before;
  if (!s.ok()) {
    JoinAhead();  // and drop what it prepared
    return s;
  }
  outcome->committed = true;
  run.cp = batch.next;
  if (runs_ahead) {
    flow.committing.push_back(CompiledFlow::Committing{std::move(pending), std::move(batch)});
    return Status::OK();
  }
  CommitResult result;
  s = store->Wait(&pending, &result);
  if (!s.ok()) {
    outcome->commit_failed = true;
    return s;
  }
  flow.source->Committed();
  for (auto& op : flow.ops) {
    if (Source* side = op->side()) side->Committed();
  }
  return Report(run, batch, result);
}

Status Pipeline::Impl::FinishCommitting(FlowRun& run, bool* commit_failed, size_t keep) {
  CompiledFlow& flow = run.flow;
  while (flow.committing.size() > keep) {
    CompiledFlow::Committing committing = std::move(flow.committing.front());
    flow.committing.pop_front();
    CommitResult result;
    Status s = store->Wait(&committing.commit, &result);
    if (!s.ok()) {
      *commit_failed = true;
      return s;
    }
    SPOOL_RETURN_IF_ERROR(Report(run, committing.batch, result));
  }
  return Status::OK();
}

Status Pipeline::Impl::Report(FlowRun& run, const PreparedBatch& batch, const CommitResult& result) {
  CompiledFlow& flow = run.flow;
  FlowUpdateStats& stats = run.stats;
  flow.backlog = batch.backlog;
  stats.batches++;
  stats.input_rows += batch.input_rows;
  stats.output_rows += batch.output_rows;
  stats.deleted_rows += batch.deleted_rows;
  stats.late_rows += batch.late_rows;
  const uint64_t batch_id = batch.next.batch_id - 1;
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - batch.started).count();
  SPOOL_RETURN_IF_ERROR(Event(EventLevel::kInfo, "flow_progress",
                              "Flow '" + flow.spec->name + "' committed batch " + std::to_string(batch_id) +
                                  " at version " + std::to_string(result.version) + ".",
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
                              run.update_id, &flow, /*progress=*/true));
  if (run.options.on_batch) run.options.on_batch(flow.spec->name, stats.output_rows);
  if (run.options.on_progress) {
    run.options.on_progress(FlowProgress{flow.spec->name, stats.batches, stats.input_rows, stats.output_rows,
                                         flow.backlog.unit, flow.backlog.amount});
  }
  return Status::OK();
}

}  // namespace spool
