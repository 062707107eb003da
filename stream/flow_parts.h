// The moving parts of a flow (internal to stream/): sources that read
// micro-batches and operators that transform them, with their state in
// internal tables of the store (docs/design.md).
//
// One micro-batch of one flow is one commit. The runner
// (pipeline_batch.cc) opens a Transaction, asks each source for rows,
// passes them through the operators, which add their state changes to the
// same Transaction, and writes the output; the flow's checkpoint (source
// offsets, watermarks, fingerprint) goes into that commit too. Components
// may cache state in memory across batches: a commit that fails ends the
// run, and the next run starts from what the store holds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spool/storage/store.h"
#include "spool/stream/pipeline_spec.h"

namespace spool::stream_internal {

// Rows of one batch at one point of a flow.
struct Batch {
  std::vector<Row> rows;     // appended (or, terminal keyed steps, upserted) rows
  std::vector<Row> deletes;  // terminal keyed steps: keys to delete
};

// A state table a component keeps: `suffix` makes its name
// `__spool.state.<flow>__<suffix>`.
struct StateTableSpec {
  std::string suffix;
  Schema schema;
};

// What one batch's components share.
struct BatchContext {
  Store* store = nullptr;
  Transaction* txn = nullptr;
  uint64_t late_rows = 0;               // rows dropped behind a watermark
  class Source* side_source = nullptr;  // an operator's second stream …
  Batch side;                           // … and its rows in this batch
};

// Where a component's state tables are.
struct StateTables {
  std::vector<TableId> ids;  // as the component's StateTables() lists them
};

// Reads a source as micro-batches from a committed offset.
class Source {
 public:
  virtual ~Source() = default;
  // The columns of its rows.
  virtual const Schema& schema() const = 0;
  virtual std::vector<StateTableSpec> StateTables() const { return {}; }
  // The offset recorded in the last committed checkpoint ("" before the
  // first batch) and where its state is.
  virtual Status Start(Store* store, const std::string& offset, const stream_internal::StateTables& tables) = 0;
  // A triggered update reads no further than what the source holds when it
  // begins (so that it ends while producers keep writing).
  virtual Status BoundToNow() { return Status::OK(); }
  // Reads the rows after the committed offset (at most `max_rows`, when
  // the source can stop there) into `*batch`; *more: rows remain.
  virtual Status Read(BatchContext& ctx, Batch* batch, bool* more) = 0;
  // What the last Read left for later batches, for flow_progress: an
  // amount of "records", "files" or "versions" (commits of a dataset).
  struct Backlog {
    std::string_view unit;
    uint64_t amount = 0;
  };
  virtual Backlog backlog() const = 0;
  // How many versions the offset after an empty Read is past the committed
  // one (a dataset source moving past commits of other tables).
  virtual uint64_t uncommitted_versions() const { return 0; }
  // The offset after what Read returned, for the batch's checkpoint.
  virtual std::string NextOffset() const = 0;
  // Where the last Read began, as the source resolved it (a topic read from
  // its start begins at its oldest retained offset); "" when it cannot say.
  // The first batch's is where the flow's table was built from.
  virtual std::string ReadFromOffset() const { return ""; }
  // Whether the last Read moved the source's offset without giving rows (a
  // new flow's start resolved to a position that a later update would
  // resolve otherwise): its checkpoint is committed all the same.
  virtual bool MovedWithoutRows() const { return false; }
  // The batch committed: Read continues after it.
  virtual void Committed() = 0;
  // Whether the runner may call Committed before the commit is durable and
  // Read the next batches on another thread while it is written: the
  // source keeps its position in memory and its Read depends on nothing a
  // commit of the flow changes. A failed commit then ends the update, and
  // the next one starts the source again from the stored offset.
  virtual bool ReadsAhead() const { return false; }
  // Columns of its rows (one flag per column of schema()) that no step of
  // the flow reads: the source may leave them NULL in every row, as long as
  // it reads the same records as good or bad (column pruning). Called once,
  // before Start.
  virtual Status LeaveNull(const std::vector<bool>& /*columns*/) { return Status::OK(); }
  // Everything it reads once (a `once` flow's backfill, a materialized
  // view's recomputation): all rows now, as one batch.
  virtual Status ReadAll(BatchContext& ctx, Batch* batch) = 0;
  // Whether the source still holds what a replay from an earlier `version`
  // needs: `offset` is the source's offset in the flow's checkpoint there
  // ("" before its first batch), `tables` its state tables (readable as of
  // `version`). A dataset's data comes back with the store. Errors:
  // InvalidArgument saying what is gone.
  virtual Status CheckRetained(Store*, uint64_t /*version*/, const std::string& /*offset*/,
                               const stream_internal::StateTables& /*tables*/) {
    return Status::OK();
  }
  // What a full refresh (reading the source again from its start) would
  // lose: what the flow read from `origin` (where its first batch since its
  // last reset began; "" when unknown) up to `offset` (its current
  // checkpoint's) that the source no longer holds, said with counts in
  // `*loss`; empty when nothing. A dataset is read as it is: nothing.
  virtual Status FullRefreshLoss(Store*, const std::string& /*offset*/, const std::string& /*origin*/,
                                 const stream_internal::StateTables& /*tables*/, std::string* loss) {
    loss->clear();
    return Status::OK();
  }
};

class Operator {
 public:
  virtual ~Operator() = default;
  const Schema& output() const { return output_; }
  // Terminal keyed steps (a grouped aggregate, AUTO CDC) emit upserts and
  // deletes by this key of the output; others append.
  const std::vector<std::string>& output_key() const { return output_key_; }
  bool emits_upserts() const { return !output_key_.empty(); }
  // What the state means, for the compatibility check; empty: stateless.
  virtual std::string Fingerprint() const { return ""; }
  virtual std::vector<StateTableSpec> StateTables() const { return {}; }
  // The flow's target, told to the flow's last step; `only_writer`: no
  // other flow writes it. A step whose output rows hold its whole state
  // (a grouped aggregate of counts, sums, minima and maxima) may keep it
  // there rather than in a state table of its own (see AggregateOp).
  virtual void SetTarget(const TableId& /*target*/, bool /*only_writer*/) {}
  // Before the first batch of a run. Changes the step's state needs before
  // any batch (moving it out of a target it can no longer keep it in) go
  // to `setup`, which the runner commits before any flow runs a batch.
  virtual Status Start(Store* /*store*/, const stream_internal::StateTables& /*tables*/, Transaction* /*setup*/) {
    return Status::OK();
  }
  // A watermark (micros) the checkpoint carries, when it keeps one.
  virtual std::optional<int64_t> watermark() const { return std::nullopt; }
  virtual void set_watermark(int64_t /*micros*/) {}
  // Which columns of its input it reads (`*inputs`, one flag per input
  // column, sized by the caller), given which of its output columns the
  // steps after it read (`outputs`). By default every one: the step passes
  // its rows on whole, or hands them to code that may read any column.
  virtual void InputsRead(const std::vector<bool>& /*outputs*/, std::vector<bool>* inputs) const {
    inputs->assign(inputs->size(), true);
  }
  // Transforms `batch` in place; state changes go to ctx.txn.
  virtual Status Process(BatchContext& ctx, Batch* batch) = 0;
  // Whether Process may run for the next batches, on another thread, while
  // the earlier batches' commits are written: the step keeps its state in
  // memory and reads nothing from the store that a commit of its own flow
  // changes (see Source::ReadsAhead).
  virtual bool ProcessesAhead() const { return false; }
  // Forgets every state (a recomputation): clears its tables in ctx.txn.
  virtual Status Reset(BatchContext& /*ctx*/) { return Status::OK(); }
  // A second stream it reads (a stream join's right side), which the
  // runner starts, reads before Process (into ctx.side) and checkpoints.
  virtual Source* side() { return nullptr; }

 protected:
  Schema output_;
  std::vector<std::string> output_key_;
};

// Compiles one step over rows of `input`. `place` prefixes errors.
// `store` resolves lookup tables; `dataset_schema` those of the pipeline.
struct CompileContext {
  Store* store = nullptr;
  std::function<Status(const std::string& name, TableInfo* table)> resolve_table;
  std::function<Status(const SourceSpec& spec, const std::string& place, std::unique_ptr<Source>* source)> make_source;
};
Status CompileStep(const StepSpec& spec, const Schema& input, const std::string& place, CompileContext& ctx,
                   std::unique_ptr<Operator>* op);

// Sources. `max_rows` bounds a batch (0: no bound); `target` is the dataset
// the reading flow writes.
Status MakeDatasetSource(const SourceSpec& spec, const TableInfo& table, const TableId& target, uint64_t max_rows,
                         bool as_table, std::unique_ptr<Source>* source);
Status MakeFileSource(const SourceSpec& spec, Env* env, const std::string& place, uint64_t max_files, uint64_t max_rows,
                      std::unique_ptr<Source>* source);
Status MakeTopicSource(const SourceSpec& spec, Env* env, const std::string& place, uint64_t max_rows,
                       std::unique_ptr<Source>* source);
// A JetStream stream (docs/jetstream.md); it connects when first read.
Status MakeJetStreamSource(const SourceSpec& spec, const std::string& place, uint64_t max_rows,
                           std::unique_ptr<Source>* source);

// The schema files and topic sources give their rows: the declared columns,
// and `_rescued_data` under the rescue policy. Errors: InvalidArgument.
Status RecordSchema(const SourceSpec& spec, const std::string& place, Schema* schema);

// Keys of in-memory maps: the values' bytes, unambiguous.
void AppendKeyBytes(const Value& value, std::string* out);
std::string KeyBytes(const Row& row, const std::vector<size_t>& columns);

}  // namespace spool::stream_internal
