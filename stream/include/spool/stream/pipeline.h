// Pipeline: runs a PipelineSpec (pipeline_spec.h) on a Store as updates of
// micro-batches (docs/design.md).
//
// One micro-batch of one flow is one commit holding its output rows, its
// operator state (in internal tables `__spool.state.<flow>__<part>`) and its
// source offsets (the flow's checkpoint), so after any crash a rerun goes on
// exactly where the last commit left off: no row is lost or written twice.
//
// An update runs the flows in DAG order. Triggered (the default): each flow
// in turn processes what is available, so that a rerun after a crash writes
// what an uninterrupted run would; then the update completes. Continuous:
// passes take one batch of each flow, waiting `trigger_interval_us` when
// idle, until Stop, the `stop` flag or `max_batches`. Stop reaches the
// running update, or the next one if none runs. Each batch records a `flow_progress` event;
// the update's states are `update_progress` events. A flow that fails stops,
// with the flows downstream of it, and the update ends FAILED with an ERROR
// event naming the flow; the failing batch commits nothing.
//
// Each stateful flow's checkpoint carries a fingerprint of what its state
// means (operators, keys, aggregates, source). Running a definition whose
// fingerprint differs fails, naming the flow: a full refresh or checkpoint
// reset is needed. Filters and projections may change freely.
//
// Thread-safety: one update at a time per Pipeline; Stop may be called from
// any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/store.h"
#include "spool/stream/pipeline_spec.h"

namespace spool {

// Where a flow stands after a committed batch (UpdateOptions::on_progress).
struct FlowProgress {
  std::string_view flow;
  uint64_t batches = 0;     // this update's, so far
  uint64_t input_rows = 0;  // read from its source in this update, so far
  uint64_t output_rows = 0;
  std::string_view backlog_unit;  // what its source counts: "records", "files", "versions"
  uint64_t backlog = 0;           // how many its source holds that it has not read yet
};

struct UpdateOptions {
  std::string update_id;  // empty: a new one
  std::string cause = "API_CALL";
  bool continuous = false;
  uint64_t trigger_interval_us = 1000000;
  // Stop after this many micro-batches (all flows together); 0: no bound.
  uint64_t max_batches = 0;
  // Set (e.g. by a signal handler) to stop after the current batch; seen
  // within one trigger interval.
  const std::atomic<bool>* stop = nullptr;
  // Called after each committed batch (from the updating thread).
  std::function<void(const std::string& flow, uint64_t rows_out)> on_batch;
  // The same, with the flow's progress: for a progress bar.
  std::function<void(const FlowProgress& progress)> on_progress;

  // Refresh kinds (docs/design.md). The default refresh processes what is new.
  // A full refresh of a dataset truncates it, clears its flows' checkpoints
  // (offsets and state) and rebuilds it from all the data its sources still
  // hold: every dataset (`full_refresh`) or those named. Refused for a table
  // whose property pipelines.reset.allowed is "false", and for a streaming
  // table downstream of a refreshed one (reading it without
  // skip_change_commits) unless it is refreshed too; `cascade` adds those.
  bool full_refresh = false;
  std::vector<std::string> full_refresh_selection;  // dataset identifiers
  bool cascade = false;
  // Flows whose checkpoints are cleared, their tables' rows kept: they
  // reprocess from their sources' start. Flow names, as the spec gives them.
  std::vector<std::string> reset_checkpoint_selection;
  // Only the flows writing these datasets run (empty: all).
  std::vector<std::string> refresh_selection;
  // Only the flows that failed in the last update (the last one that ran
  // flows) and the flows downstream of them run. Refused when none failed.
  bool refresh_failed = false;

  // For a caller that retries (RunUpdateWithRetries): a later attempt of the
  // same update records no create_update and QUEUED again (the first
  // attempt did); and with defer_transient_failure, an attempt that fails
  // transiently (UpdateResult::transient) records no FAILED state, leaving
  // the update open for the caller to retry or to end.
  bool retry_attempt = false;
  bool defer_transient_failure = false;
};

struct FlowUpdateStats {
  std::string flow;
  uint64_t batches = 0;
  uint64_t input_rows = 0;
  uint64_t output_rows = 0;
  uint64_t deleted_rows = 0;
  uint64_t late_rows = 0;
  bool failed = false;
  bool skipped = false;  // downstream of a failed flow, or a `once` flow already done
};

// What a sink published in one update.
struct SinkUpdateStats {
  std::string sink;
  uint64_t messages = 0;   // published (a re-send after a crash included)
  uint64_t published = 0;  // the version up to which every change is stored
  bool failed = false;
};

// The states of docs/design.md that this runtime passes through.
enum class UpdateState : uint8_t {
  kQueued = 1,
  kInitializing,
  kResetting,
  kSettingUpTables,
  kRunning,
  kStopping,
  kCompleted,
  kFailed,
  kCanceled
};
std::string_view UpdateStateName(UpdateState state);  // "QUEUED", …, "CANCELED"

struct UpdateResult {
  std::string update_id;
  UpdateState state = UpdateState::kQueued;
  uint64_t batches = 0;
  std::vector<FlowUpdateStats> flows;
  std::vector<SinkUpdateStats> sinks;
  std::string error;  // the first failure, naming its flow or sink
  // The first failure was an I/O error reading a source, which a retry may
  // not meet again (nothing was committed for it).
  bool transient = false;
};

// A dataset as rewinds and refreshes see it (docs/design.md).
struct PipelineDataset {
  TableId id;
  TableKind kind = TableKind::kStreamingTable;
  std::vector<std::string> flows;     // writing it; a flow's checkpoint has its name
  std::vector<TableId> upstream;      // datasets of this pipeline its flows read
  std::vector<TableId> state_tables;  // its flows' internal tables (source and operator state)
  bool external_source = false;       // a flow reads files or a topic
};

struct PipelineOptions {
  // Where files and topic sources are read (the store has its own).
  Env* env = Env::Default();
};

class Pipeline {
 public:
  // Compiles `spec` against `store` (which must outlive the pipeline):
  // names, types, the DAG, targets. Errors: InvalidArgument naming the
  // place in the spec.
  static Status Open(Store* store, PipelineSpec spec, std::unique_ptr<Pipeline>* pipeline,
                     const PipelineOptions& options = {});
  ~Pipeline();

  const PipelineSpec& spec() const;
  // The pipeline id recorded with the definition (empty if none is recorded).
  const std::string& id() const;
  // Its datasets, in DAG order (upstream first).
  std::vector<PipelineDataset> Datasets() const;
  // Whether the sources of `flows` (empty: every flow) still hold what a
  // replay from `version` of the store needs: a topic the offsets there, a
  // directory the files read after it. Errors: InvalidArgument naming the
  // flow and what is gone.
  // `known` holds checkpoints at `version` already known (a rewind point
  // records them), by flow; the others are read from the log.
  Status CheckSourcesRetain(uint64_t version, const std::vector<std::string>& flows = {},
                            const std::map<std::string, std::string>& known = {}) const;

  // Runs one update. Returns OK when the update ran, whatever its outcome
  // (result->state, result->error); an error when it could not start (the
  // store failed, a definition that does not fit the tables; Busy, starting
  // RESOURCE_CONFLICT, while another update of the store runs).
  Status Update(const UpdateOptions& options, UpdateResult* result);
  // Checks `options` as Update would (the selections, pipelines.reset.allowed)
  // and writes nothing. Errors: Update's refusals. Else OK, with `*warnings` saying
  // what a full refresh among them would lose — rows a table was built from
  // that its source no longer holds, with counts. (Update records the same
  // as WARN events when it resets.)
  Status Validate(const UpdateOptions& options, std::vector<std::string>* warnings);
  // Asks a running update to stop after its current batch.
  void Stop();

  struct Impl;

 private:
  explicit Pipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The code an update fails with when a flow has committed batches but its
// state tables are gone (dropped by hand, or damaged): its results would be
// wrong. A full refresh of the flow's dataset rebuilds the state.
inline constexpr std::string_view kInternalStateMissing = "INTERNAL_STATE_MISSING";

// The table in which sinks keep what they have published (one row a sink,
// docs/jetstream.md). No rewind restores it: the subscribers have seen what
// they have seen, and the rewind reaches them through the change feed.
inline constexpr std::string_view kSinkProgressTable = "__spool.sinks.progress";

// A new id for an update (or a pipeline): a random version-4 UUID.
std::string NewUpdateId();

// An update_progress event: the update `update_id` of the pipeline entered
// `state` (as Pipeline::Update records them, and the rewind layer for the
// updates it runs); a FAILED one carries its `error` (an ERROR event).
// Durable on return, or with `sync` false with the next synced event
// (EventLog::Append). Errors: as EventLog::Append.
Status RecordUpdateProgress(Store* store, const std::string& pipeline_id, const std::string& update_id,
                            UpdateState state, std::string_view error = {}, bool sync = true);

// The pipeline definition recorded in the store (the internal table
// `__spool.pipeline.definition`: the pipeline id, the definition's number —
// 1, 2, … — and its JSON spec), so that history shows every definition and
// each update's create_update event names the number it ran.
// SetPipelineDefinition compiles `spec` first and changes nothing if it does
// not compile or holds user operators (C++ code cannot be recorded); it keeps
// the pipeline id, or makes one. Errors: InvalidArgument, as Store::Commit.
Status SetPipelineDefinition(Store* store, const PipelineSpec& spec, std::string* pipeline_id = nullptr,
                             CommitResult* result = nullptr);
// Any of the outputs may be null. Errors: NotFound (no definition
// recorded), Corruption.
Status GetPipelineDefinition(Store* store, PipelineSpec* spec, std::string* pipeline_id = nullptr,
                             int64_t* number = nullptr);

}  // namespace spool
