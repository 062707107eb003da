// An update: its refresh planned, the definition checked, what it resets
// reset, the tables set up, the flows started, then passes over the flows
// in DAG order running their micro-batches, and the update's end.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>

#include "pipeline_impl.h"
#include "spool/stream/json_text.h"

namespace spool {

using namespace stream_internal;

namespace {

// In continuous mode, an idle flow's offset is committed once it lags this
// many versions behind.
constexpr uint64_t kIdleLagVersions = 1000;

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

}  // namespace spool
