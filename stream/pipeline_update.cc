// An update (docs/architecture.md, "An update"): its refresh planned and the
// update recorded; the definition checked against the tables and the
// checkpoints; what it refreshes reset; the tables set up; each flow's
// source and steps started; passes over the flows in DAG order running
// their micro-batches; its end.
#include <algorithm>
#include <chrono>
#include <mutex>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

namespace {

// In continuous mode, an idle flow's offset is committed once it lags this
// many versions behind.
constexpr uint64_t kIdleLagVersions = 1000;

bool Terminal(UpdateState state) {
  return state == UpdateState::kCompleted || state == UpdateState::kFailed || state == UpdateState::kCanceled;
}

// One run of Pipeline::Update, in its steps (Run), and what they share.
// `*started` is set once the update is recorded (its create_update event),
// from when it must end in a terminal state.
class UpdateRun {
 public:
  UpdateRun(Pipeline::Impl& p, const UpdateOptions& options, UpdateResult* result, bool* started)
      : p_(p), options_(options), result_(*result), started_(*started) {}

  // OK when the update ran, whatever its outcome (the result's state and
  // error); an error when it could not start or go on.
  Status Run();

 private:
  // The steps. Each returns an error when the update cannot go on; one
  // that ends the update for a reason of its own (a definition that does
  // not fit, a failed commit) records it FAILED and sets `ended_`.
  Status Begin();
  Status CheckDefinition();
  Status Reset();
  Status SetUpTables();
  Status StartFlows();
  Status StartFlow(CompiledFlow& flow);
  Status StartRunning();
  Status RunPasses();
  Status RunPass(bool* any);
  bool Runs(size_t f);
  Status RunFlow(size_t f, bool* any);
  Status FlowFailed(size_t f, const Status& s, bool commit_failed);
  Status SaveIdleOffsets();
  Status RunSinks();
  Status FinishSinks();
  void WaitForTrigger();
  Status Finish();

  const std::string& update_id() const { return result_.update_id; }
  // An update_progress event: the update entered `state`.
  Status Progress(UpdateState state);
  // The first failure is the update's error; a flow's is an ERROR event of
  // its own, the update's FAILED state (Progress) carries it.
  Status Fail(const std::string& message, const CompiledFlow* flow);
  // Fail for `flow`, which failed with `s`.
  Status FailFlow(const CompiledFlow& flow, const Status& s);
  // Ends the update FAILED (Fail has given it its error).
  Status EndFailed();
  // Whether the update is asked to stop, or has run its max_batches.
  bool Stopping();
  // How many batches after the next one may be prepared while it commits:
  // none after the batches the update stops at anyway.
  uint64_t AheadBudget() const;

  Pipeline::Impl& p_;
  const UpdateOptions& options_;
  UpdateResult& result_;
  bool& started_;
  std::unique_ptr<UpdateClaim> claim_;  // the store's one update, held to the end
  Pipeline::Impl::RefreshPlan refresh_;
  Pipeline::Impl::Checkpoints checkpoints_;
  bool ended_ = false;     // FAILED by a step of its own
  bool canceled_ = false;  // stopped
  // By flow index:
  std::vector<bool> failed_;
  std::vector<bool> done_;         // a `once` flow that ran, or one not selected
  std::vector<bool> pending_;      // in this pass: committed, or has more
  std::vector<bool> sink_failed_;  // by sink index
};

Status UpdateRun::Run() {
  result_ = UpdateResult{};
  SPOOL_RETURN_IF_ERROR(p_.PlanRefresh(options_, &refresh_));  // a selection that does not fit changes nothing
  SPOOL_RETURN_IF_ERROR(Begin());
  SPOOL_RETURN_IF_ERROR(CheckDefinition());
  if (ended_) return Status::OK();
  if (refresh_.any_reset()) SPOOL_RETURN_IF_ERROR(Reset());
  SPOOL_RETURN_IF_ERROR(SetUpTables());
  if (ended_) return Status::OK();
  SPOOL_RETURN_IF_ERROR(StartFlows());
  SPOOL_RETURN_IF_ERROR(StartRunning());
  Status passes = RunPasses();
  // What the sinks acknowledged is recorded however the passes ended.
  Status sinks = FinishSinks();
  SPOOL_RETURN_IF_ERROR(passes);
  if (ended_) return sinks;
  SPOOL_RETURN_IF_ERROR(sinks);
  return Finish();
}

// The update's id claimed (the store runs one update at a time) and the
// update recorded: create_update and QUEUED (unless it retries an update
// recorded already), then INITIALIZING.
Status UpdateRun::Begin() {
  result_.update_id = options_.update_id.empty() ? NewUpdateId() : options_.update_id;
  SPOOL_RETURN_IF_ERROR(p_.store->ClaimUpdate(update_id(), &claim_));
  started_ = options_.retry_attempt;
  if (!options_.retry_attempt) {
    SPOOL_RETURN_IF_ERROR(p_.Event(EventLevel::kInfo, "create_update",
                                   "Update " + update_id().substr(0, 6) + " started by " + options_.cause + ".",
                                   json{{"create_update",
                                         {{"cause", options_.cause},
                                          {"continuous", options_.continuous},
                                          {"definition_number", p_.definition_number}}}},
                                   update_id()));
    started_ = true;
    SPOOL_RETURN_IF_ERROR(Progress(UpdateState::kQueued));
  }
  return Progress(UpdateState::kInitializing);
}

// The checkpoints, and what the definition asks of them and of the tables
// (as Validate checks it): a definition that does not fit ends the update.
Status UpdateRun::CheckDefinition() {
  SPOOL_RETURN_IF_ERROR(p_.LoadCheckpoints(refresh_, &checkpoints_));
  const CompiledFlow* failing = nullptr;
  Status s = p_.CheckDefinition(refresh_, checkpoints_, &failing);
  if (s.ok() || !s.IsInvalidArgument()) return s;
  SPOOL_RETURN_IF_ERROR(Fail(std::string(s.message()), failing));
  return EndFailed();
}

// RESETTING: what the full refresh loses said in WARN events, then the
// reset committed. A reset that fails ends the update, and is its error.
Status UpdateRun::Reset() {
  SPOOL_RETURN_IF_ERROR(Progress(UpdateState::kResetting));
  std::vector<std::string> losses;
  SPOOL_RETURN_IF_ERROR(p_.RefreshLosses(refresh_, &losses));
  for (const std::string& loss : losses) {
    SPOOL_RETURN_IF_ERROR(p_.Event(EventLevel::kWarn, "update_progress", loss,
                                   json{{"update_progress", {{"state", "RESETTING"}, {"warning", loss}}}},
                                   update_id()));
  }
  Status reset = p_.ApplyReset(refresh_, update_id());
  if (reset.ok()) return reset;
  SPOOL_RETURN_IF_ERROR(Fail("Resetting failed: " + std::string(reset.message()), nullptr));
  SPOOL_RETURN_IF_ERROR(EndFailed());
  return reset;
}

// SETTING_UP_TABLES: tables that fail to set up end the update (an error
// unless the definition was refused).
Status UpdateRun::SetUpTables() {
  SPOOL_RETURN_IF_ERROR(Progress(UpdateState::kSettingUpTables));
  Status s = p_.SetUpTables(update_id());
  if (s.ok()) return s;
  SPOOL_RETURN_IF_ERROR(Fail(std::string(s.message()), nullptr));
  SPOOL_RETURN_IF_ERROR(EndFailed());
  return s.IsInvalidArgument() ? Status::OK() : s;
}

Status UpdateRun::StartFlows() {
  failed_.assign(p_.flows.size(), false);
  for (CompiledFlow& flow : p_.flows) SPOOL_RETURN_IF_ERROR(StartFlow(flow));
  return Status::OK();
}

// The flow's source and steps start from its checkpoint and state tables.
// A triggered update bounds the source to what it holds now: a source that
// cannot be bounded fails the flow. What a step moves between its tables
// (a MOVE STATE commit) is committed before any flow writes: another may
// write the target the state leaves.
Status UpdateRun::StartFlow(CompiledFlow& flow) {
  const Checkpoint& cp = checkpoints_.at[flow.index];
  Transaction setup = RuntimeTransaction("MOVE STATE", JsonText(json{{"flow", flow.spec->name}}), update_id());
  StateTables tables;
  for (const auto& [id, schema] : flow.state[0]) tables.ids.push_back(id);
  int side_index = 0;
  SPOOL_RETURN_IF_ERROR(flow.source->Start(p_.store, cp.offset, tables));
  if (!options_.continuous) {
    Status s = flow.source->BoundToNow();
    if (!s.ok()) {
      failed_[flow.index] = true;
      if (result_.error.empty()) result_.transient = s.IsIOError();  // a server out of reach: retried
      SPOOL_RETURN_IF_ERROR(FailFlow(flow, s));
    }
  }
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    StateTables op_tables;
    for (const auto& [id, schema] : flow.state[1 + i]) op_tables.ids.push_back(id);
    SPOOL_RETURN_IF_ERROR(flow.ops[i]->Start(p_.store, op_tables, &setup));
    if (Source* side = flow.ops[i]->side()) {
      const size_t n = static_cast<size_t>(side_index++);
      SPOOL_RETURN_IF_ERROR(side->Start(p_.store, n < cp.sides.size() ? cp.sides[n] : "", StateTables{}));
    }
    auto w = cp.watermarks.find(flow.rank[i]);
    if (w != cp.watermarks.end()) flow.ops[i]->set_watermark(w->second);
  }
  if (!setup.empty()) SPOOL_RETURN_IF_ERROR(p_.store->Commit(setup));
  return Status::OK();
}

// RUNNING, each flow's figures starting: failed when it failed to start,
// skipped when the refresh leaves it out.
Status UpdateRun::StartRunning() {
  SPOOL_RETURN_IF_ERROR(Progress(UpdateState::kRunning));
  for (const CompiledFlow& flow : p_.flows) result_.flows.push_back(FlowUpdateStats{flow.spec->name});
  for (size_t f = 0; f < failed_.size(); ++f) result_.flows[f].failed = failed_[f];
  done_ = refresh_.excluded;
  for (size_t f = 0; f < done_.size(); ++f) result_.flows[f].skipped = refresh_.excluded[f];
  pending_.assign(p_.flows.size(), false);
  sink_failed_.assign(p_.sinks.size(), false);
  for (auto& sink : p_.sinks) {
    sink->Start();
    result_.sinks.push_back(SinkUpdateStats{sink->spec().name});
  }
  return Status::OK();
}

// Passes over the flows in DAG order. Triggered mode drains each flow in
// turn, so that a flow sees everything upstream of it processed: its
// results (a lookup join's above all) depend on the input alone, and a
// rerun after a crash writes what a run without one would. Continuous mode
// takes one batch of each flow with data a pass, so that none starves
// another, and waits a trigger interval when a pass finds nothing. A
// materialized view waits for a pass in which nothing upstream of it
// moved, so that it refreshes once.
Status UpdateRun::RunPasses() {
  while (true) {
    bool any = false;
    SPOOL_RETURN_IF_ERROR(RunPass(&any));
    if (ended_) return Status::OK();
    SPOOL_RETURN_IF_ERROR(RunSinks());
    if (Stopping()) {
      canceled_ = true;
      return Status::OK();
    }
    if (any) continue;
    SPOOL_RETURN_IF_ERROR(SaveIdleOffsets());
    if (ended_ || !options_.continuous) return Status::OK();
    // Caught up: the batches' progress events become durable before the wait.
    SPOOL_RETURN_IF_ERROR(p_.SyncEvents());
    WaitForTrigger();
  }
}

// `*any`: a flow committed a batch or has more.
Status UpdateRun::RunPass(bool* any) {
  for (size_t f : p_.order) {
    if (Stopping()) break;
    pending_[f] = false;
    if (!Runs(f)) continue;
    SPOOL_RETURN_IF_ERROR(RunFlow(f, any));
    if (ended_) break;
  }
  return Status::OK();
}

// Whether flow `f` runs in this pass: not when it failed or is done, nor
// when a flow upstream of it failed (it is skipped), nor a materialized
// view while anything upstream of it moves, nor a `once` flow that ran its
// definition (it is skipped).
bool UpdateRun::Runs(size_t f) {
  const CompiledFlow& flow = p_.flows[f];
  FlowUpdateStats& stats = result_.flows[f];
  if (failed_[f] || done_[f]) return false;
  bool upstream_failed = false, upstream_pending = false;
  for (size_t up : flow.upstream) {
    upstream_failed = upstream_failed || failed_[up];
    upstream_pending = upstream_pending || pending_[up];
  }
  if (upstream_failed) {
    failed_[f] = stats.skipped = true;
    return false;
  }
  if (flow.materialized && upstream_pending) return false;
  if (flow.spec->once && checkpoints_.at[f].once_done == flow.definition) {
    done_[f] = stats.skipped = true;
    return false;
  }
  return true;
}

// Flow `f`'s batches in this pass: all it has in triggered mode, one in
// continuous mode; when it stops, those still committing are reported.
Status UpdateRun::RunFlow(size_t f, bool* any) {
  CompiledFlow& flow = p_.flows[f];
  FlowRun run{flow, checkpoints_.at[f], result_.flows[f], update_id(), options_};
  bool more = true;
  while (true) {
    BatchOutcome batch;
    const bool go_on = more && !failed_[f] && !Stopping();
    // Stopped with a batch still committing: it is reported all the same.
    Status s = go_on ? p_.RunBatch(run, AheadBudget(), &batch) : p_.FinishCommitting(run, &batch.commit_failed);
    if (!s.ok()) return FlowFailed(f, s, batch.commit_failed);
    if (!go_on) return Status::OK();
    done_[f] = flow.spec->once;
    pending_[f] = pending_[f] || batch.committed || batch.more;
    *any = *any || batch.committed || batch.more;
    if (batch.committed) result_.batches++;
    more = batch.more && batch.committed && !options_.continuous;
  }
}

// Flow `f` failed with `s`. A commit that failed may have poisoned the
// store: the update ends. Any other failure stops this flow and those
// downstream of it.
Status UpdateRun::FlowFailed(size_t f, const Status& s, bool commit_failed) {
  failed_[f] = result_.flows[f].failed = true;
  if (result_.error.empty()) result_.transient = s.IsIOError() && !commit_failed;
  SPOOL_RETURN_IF_ERROR(FailFlow(p_.flows[f], s));
  return commit_failed ? EndFailed() : Status::OK();
}

// Caught up: records where flows that found nothing new stand, so that
// their offsets stay within what the log retains (in continuous mode only
// once they lag far behind, so that these commits die out). A failure
// ends the update.
Status UpdateRun::SaveIdleOffsets() {
  for (size_t f : p_.order) {
    if (failed_[f]) continue;
    bool committed = false;
    Status s = p_.SaveIdleOffset(p_.flows[f], checkpoints_.at[f], update_id(),
                                 options_.continuous ? kIdleLagVersions : 1, &committed);
    if (!s.ok()) {
      failed_[f] = result_.flows[f].failed = true;
      SPOOL_RETURN_IF_ERROR(FailFlow(p_.flows[f], s));
      return EndFailed();
    }
  }
  return Status::OK();
}

// Each sink publishes what its dataset committed since its last round. A
// sink that fails publishes no more in this update, which ends FAILED (a
// message system out of reach is a transient failure, retried).
Status UpdateRun::RunSinks() {
  for (size_t i = 0; i < p_.sinks.size(); ++i) {
    if (sink_failed_[i]) continue;
    SinkRunner& sink = *p_.sinks[i];
    SinkUpdateStats& stats = result_.sinks[i];
    SinkRound round;
    Status s = sink.Publish(update_id(), &round);
    if (!s.ok()) {
      sink_failed_[i] = stats.failed = true;
      if (result_.error.empty()) result_.transient = s.IsIOError();
      const std::string message = "Sink '" + sink.spec().name + "' failed: " + std::string(s.message());
      SPOOL_RETURN_IF_ERROR(Fail(message, nullptr));
      SPOOL_RETURN_IF_ERROR(
          p_.Event(EventLevel::kError, "sink_progress", message,
                   json{{"sink_progress",
                         {{"sink", sink.spec().name}, {"status", "FAILED"}, {"error", std::string(s.message())}}}},
                   update_id()));
      continue;
    }
    stats.messages += round.messages;
    stats.published = sink.published();
    if (!round.warning.empty()) {
      SPOOL_RETURN_IF_ERROR(p_.Event(EventLevel::kWarn, "sink_progress", round.warning,
                                     json{{"sink_progress", {{"sink", sink.spec().name}, {"warning", round.warning}}}},
                                     update_id()));
    }
    if (round.to == 0) continue;
    SPOOL_RETURN_IF_ERROR(p_.Event(EventLevel::kInfo, "sink_progress",
                                   "Sink '" + sink.spec().name + "' published " + std::to_string(round.messages) +
                                       " changes of versions " + std::to_string(round.from) + " to " +
                                       std::to_string(round.to) + " to " + sink.subject() + ".",
                                   json{{"sink_progress",
                                         {{"sink", sink.spec().name},
                                          {"status", "RUNNING"},
                                          {"subject", sink.subject()},
                                          {"messages", round.messages},
                                          {"from_version", round.from},
                                          {"to_version", round.to}}}},
                                   update_id(), nullptr, true));
  }
  return Status::OK();
}

// Records what each sink acknowledged since its last commit.
Status UpdateRun::FinishSinks() {
  Status first;
  for (size_t i = 0; i < p_.sinks.size(); ++i) {
    Status s = p_.sinks[i]->Finish(update_id());
    if (first.ok()) first = s;
  }
  return first;
}

// Waits the trigger interval in slices, so that a stop flag set by a signal
// handler is seen.
void UpdateRun::WaitForTrigger() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(options_.trigger_interval_us);
  std::unique_lock lock(p_.mu);
  while (!p_.stop && !(options_.stop != nullptr && options_.stop->load()) && std::chrono::steady_clock::now() < until) {
    p_.wake.wait_until(lock, std::min(until, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)));
  }
}

// The update's terminal state: CANCELED when stopped with no flow failed,
// else FAILED or COMPLETED; a transient failure the caller retries is left
// to it.
Status UpdateRun::Finish() {
  {
    std::lock_guard lock(p_.mu);
    p_.stop = false;  // a Stop() reaches the update running (or the next one)
  }
  const bool any_failed = std::find(failed_.begin(), failed_.end(), true) != failed_.end() ||
                          std::find(sink_failed_.begin(), sink_failed_.end(), true) != sink_failed_.end();
  if (canceled_ && !any_failed) {
    SPOOL_RETURN_IF_ERROR(Progress(UpdateState::kStopping));
    return Progress(UpdateState::kCanceled);
  }
  if (any_failed && result_.transient && options_.defer_transient_failure) {
    result_.state = UpdateState::kFailed;  // the caller retries, or records it
    return p_.SyncEvents();
  }
  return Progress(any_failed ? UpdateState::kFailed : UpdateState::kCompleted);
}

Status UpdateRun::Progress(UpdateState state) {
  result_.state = state;
  const std::string_view error = state == UpdateState::kFailed ? std::string_view(result_.error) : "";
  SPOOL_RETURN_IF_ERROR(RecordUpdateProgress(p_.store, p_.pipeline_id, update_id(), state, error));
  p_.unsynced_events = 0;  // a synced event: every event before it is durable
  return Status::OK();
}

Status UpdateRun::Fail(const std::string& message, const CompiledFlow* flow) {
  if (result_.error.empty()) result_.error = message;
  if (flow == nullptr) return Status::OK();
  return p_.Event(EventLevel::kError, "flow_progress", message,
                  json{{"flow_progress", {{"status", "FAILED"}, {"error", message}}}}, update_id(), flow);
}

Status UpdateRun::FailFlow(const CompiledFlow& flow, const Status& s) {
  return Fail("Flow '" + flow.spec->name + "' failed: " + std::string(s.message()), &flow);
}

Status UpdateRun::EndFailed() {
  ended_ = true;
  return Progress(UpdateState::kFailed);
}

bool UpdateRun::Stopping() {
  std::lock_guard lock(p_.mu);
  return p_.stop || (options_.stop != nullptr && options_.stop->load()) ||
         (options_.max_batches != 0 && result_.batches >= options_.max_batches);
}

uint64_t UpdateRun::AheadBudget() const {
  return options_.continuous ? 0 : options_.max_batches == 0 ? UINT64_MAX : options_.max_batches - result_.batches - 1;
}

Status RunUpdate(Pipeline::Impl& p, const UpdateOptions& options, UpdateResult* result, bool* started) {
  // However the update ends, no batch is being prepared or committed after
  // it: the next update starts every source and step from the store.
  struct EndBatches {
    Pipeline::Impl& p;
    ~EndBatches() { p.EndBatches(); }
  } end_batches{p};
  UpdateRun run(p, options, result, started);  // ends first: the store's update claim goes before EndBatches
  return run.Run();
}

}  // namespace

Status Pipeline::Update(const UpdateOptions& options, UpdateResult* result) {
  bool started = false;
  Status s = RunUpdate(*impl_, options, result, &started);
  if (!s.ok() && started && !Terminal(result->state)) {
    // It could not go on (the store failed): it ends FAILED all the same,
    // so that nobody waits for it. Best effort: the store may be failing.
    if (result->error.empty()) result->error = std::string(s.message());
    result->state = UpdateState::kFailed;
    (void)RecordUpdateProgress(impl_->store, impl_->pipeline_id, result->update_id, UpdateState::kFailed,
                               result->error);
  }
  return s;
}

}  // namespace spool
