// The pipeline runtime's insides, shared by its files (internal to stream/):
// what a compiled pipeline holds (its datasets and flows), what a flow's
// checkpoint holds, and Pipeline::Impl, whose work the files divide by
// concern:
//   pipeline.cc          the public calls, events, the checkpoint's format and
//                        the recorded definition
//   pipeline_compile.cc  a spec compiled: datasets, flows, the DAG, targets
//   pipeline_refresh.cc  what an update refreshes, and the reset it commits
//   pipeline_tables.cc   the definition checked against the store's tables
//                        and checkpoints, and the tables set up
//   pipeline_update.cc   an update, step by step (docs/architecture.md)
//   pipeline_batch.cc    one micro-batch: prepared, committed, reported
//   pipeline_ahead.cc    a flow's next batches prepared on the helper thread
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flow_parts.h"
#include "helper_thread.h"
#include "sinks.h"
#include "spool/stream/pipeline.h"

namespace spool {

using json = nlohmann::ordered_json;

namespace stream_internal {

inline std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// A commit of the pipeline runtime, which may change Spool's own tables
// (operator state, the definition).
inline Transaction RuntimeTransaction(std::string operation, std::string parameters_json,
                                      const std::string& update_id) {
  Transaction txn(std::move(operation), std::move(parameters_json));
  txn.SetUpdateId(update_id);
  txn.AllowSpoolTables();
  return txn;
}

// "(name type[ not null], …) key (…)", for messages.
std::string DescribeColumns(const Schema& s);

// What a flow's checkpoint holds.
struct Checkpoint {
  std::string fingerprint;
  std::string offset;                    // the source's
  std::vector<std::string> sides;        // a stream join's right sources
  std::map<size_t, int64_t> watermarks;  // by step
  uint64_t batch_id = 0;                 // batches committed
  std::string origin;                    // where its source's first batch since its last reset began ("": unknown)
  std::string once_done;                 // a `once` flow: the definition it ran
  uint64_t version = 0;                  // a materialized view: the store version it was computed at …
  std::string definition;                // … and the definition it was computed by

  std::string Encode() const;
  // Errors: Corruption naming `flow` and what is wrong.
  Status Decode(const std::string& flow, const std::string& text);
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
  std::vector<int> target_columns;   // target column -> output column (-1: NULL)
  bool same_columns = false;         // the flow writes the target's columns, in its order
  std::vector<size_t> delete_order;  // the target's key columns, as positions in the flow's delete keys
  bool upserts = false;
  std::string fingerprint;
  std::string definition;        // the flow's spec as JSON, for `once`
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

// One flow's batches in one update, as RunBatch, FinishCommitting and
// Report see them: the flow, its checkpoint (the last batch committed),
// the update's figures for it, and the update's id and options.
struct FlowRun {
  CompiledFlow& flow;
  Checkpoint& cp;
  FlowUpdateStats& stats;
  const std::string& update_id;
  const UpdateOptions& options;
};

// What RunBatch did.
struct BatchOutcome {
  bool more = false;           // the source has more after the batch
  bool committed = false;      // the batch committed, or is left committing
  bool commit_failed = false;  // a commit failed: the store may be poisoned
};

}  // namespace stream_internal

struct Pipeline::Impl {
  using Checkpoint = stream_internal::Checkpoint;
  using CompiledDataset = stream_internal::CompiledDataset;
  using CompiledFlow = stream_internal::CompiledFlow;
  using PreparedBatch = stream_internal::PreparedBatch;
  using FlowRun = stream_internal::FlowRun;
  using BatchOutcome = stream_internal::BatchOutcome;
  using Source = stream_internal::Source;
  using Batch = stream_internal::Batch;

  Store* store = nullptr;
  Env* env = nullptr;
  PipelineSpec spec;
  std::string pipeline_id;
  int64_t definition_number = 0;  // of the recorded definition (0: none)
  std::vector<CompiledDataset> datasets;
  std::map<std::string, size_t> dataset_index;
  std::vector<CompiledFlow> flows;
  std::vector<size_t> order;                                        // flows in DAG order
  std::vector<std::unique_ptr<stream_internal::SinkRunner>> sinks;  // as the spec lists them

  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  // flow_progress events written since the event log's last sync.
  uint32_t unsynced_events = 0;

  // --- pipeline.cc
  // Appends an event. A batch's flow_progress (`progress`) is written without
  // a sync, as the commit it reports is durable already: one sync per batch,
  // not two. Every kMaxUnsyncedEvents-th one, every other event, and
  // SyncEvents make them durable, so a crash loses at most that many.
  Status Event(EventLevel level, const std::string& type, const std::string& message, const json& details,
               const std::string& update_id, const CompiledFlow* flow = nullptr, bool progress = false);
  Status SyncEvents();

  // --- pipeline_compile.cc
  Status Compile();
  Status CompileFlow(CompiledFlow& flow);
  // The flow's steps compiled onto its source's rows (flow.ops, flow.rank)
  // and its fingerprint: what its state means, the source and the stateful
  // steps. `*output`: the columns the last step writes.
  Status CompileSteps(CompiledFlow& flow, Schema* output);
  Status ResolveTable(const std::string& name, TableInfo* table);
  Status CompileSinks();
  Status MakeSource(const SourceSpec& source, const FlowSpec& flow, const std::string& place,
                    std::unique_ptr<Source>* out);
  // Tells the flow's source which of its columns no step reads (column
  // pruning: Source::LeaveNull), walking the steps back from the target.
  Status PruneSourceColumns(CompiledFlow& flow);
  Status FitTarget(CompiledFlow& flow, const Schema& output, const std::vector<std::string>& output_key);
  Status Order();

  // --- pipeline_refresh.cc
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

  // --- pipeline_tables.cc
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
  // with; `*failing`, the flow it names (null: none).
  Status CheckDefinition(const RefreshPlan& plan, const Checkpoints& checkpoints, const CompiledFlow** failing);
  // What SetUpTables does to a table for the definition to have it with
  // `schema`: nothing, create it, add the definition's new columns, or
  // (`replaceable`) drop and create it again; InvalidArgument naming
  // `place` when its columns cannot become those without a full refresh.
  enum class TableSetup { kNone, kCreate, kAddColumns, kReplace };
  Status PlanTableSetup(const TableId& id, const Schema& schema, bool replaceable, const std::string& place,
                        TableSetup* setup, TableInfo* existing);
  Status SetUpTables(const std::string& update_id);

  // --- pipeline_batch.cc
  // Reads and processes one micro-batch of `flow` after `cp`.
  Status PrepareBatch(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id, PreparedBatch* prepared);
  Status WriteDifference(const TableId& id, const Schema& schema, std::vector<Row> rows, Transaction& txn,
                         Batch* batch);
  // Runs one micro-batch of `run`: prepares it (or takes the one prepared
  // ahead), commits it and reports it. `ahead_budget`: how many batches
  // after it may be prepared while it commits, when the flow can; the batch
  // is then left committing (flow.committing, up to kCommitting of them)
  // and reported by a later RunBatch, after a later commit is queued, or by
  // FinishCommitting.
  Status RunBatch(FlowRun& run, uint64_t ahead_budget, BatchOutcome* outcome);
  // Waits for the flow's committing batches but the newest `keep`, oldest
  // first, and reports each. `commit_failed`: set when a commit failed.
  Status FinishCommitting(FlowRun& run, bool* commit_failed, size_t keep = 0);
  // A durable batch: its figures, its flow_progress event, the callbacks.
  Status Report(FlowRun& run, const PreparedBatch& batch, const CommitResult& result);
  Status SaveIdleOffset(CompiledFlow& flow, Checkpoint& cp, const std::string& update_id, uint64_t min_lag,
                        bool* committed);

  // --- pipeline_ahead.cc
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
    const CompiledFlow* flow = nullptr;                  // whose batches; null: none
    std::deque<std::pair<Status, PreparedBatch>> ready;  // prepared, not yet taken
    bool done = false;                                   // the helper prepares no more
    bool stop = false;                                   // the runner takes no more
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

}  // namespace spool
