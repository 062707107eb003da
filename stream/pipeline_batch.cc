// One micro-batch of a flow: read from its source, run through its
// operators, written to its target with the new checkpoint in one commit,
// and reported once durable.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "pipeline_impl.h"
#include "spool/stream/json_text.h"

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

}  // namespace spool
