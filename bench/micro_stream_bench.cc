// spool_micro_bench, the pipeline runtime (stream): expressions over rows,
// a topic source's parsing of JSON messages, and one micro-batch step of
// the operators, through the runtime's own
// classes (micro_bench.cc lists every benchmark). Operators run on a batch
// copied in outside the timing; their state writes go to a Transaction that
// is not committed (micro_storage_bench.cc measures commits).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "flow_parts.h"  // stream internals: Operator, CompileStep
#include "micro_bench.h"
#include "operators_internal.h"
#include "records.h"
#include "spool/storage/store.h"
#include "spool/stream/expression.h"
#include "spool/stream/records.h"
#include "stream_events.h"
#include "units.h"

namespace spool::bench {
namespace {

using stream_internal::Batch;
using stream_internal::BatchContext;
using stream_internal::CompileContext;
using stream_internal::Operator;

constexpr uint64_t kEventKeys = 10'000;
constexpr size_t kBatchRows = 1'000;
constexpr std::array<std::string_view, 5> kNames = {"x", "X", "alice", "Bob", "carol"};
constexpr char kFilter[] = "amount > 10 AND lower(name) = 'x'";
constexpr char kCaseWhen[] = "CASE WHEN amount > 500 THEN 'large' WHEN amount > 0 THEN 'small' ELSE 'refund' END";

// --- The events: key (one of 10,000), name, amount (-99 to 900; about 2%
// of names and 2.5% of amounts NULL), at (a millisecond apart).

Status EventSchema(Schema* schema) {
  return Schema::Make({{"key", ColumnType::kInt64, false},
                       {"name", ColumnType::kString, true},
                       {"amount", ColumnType::kInt64, true},
                       {"at", ColumnType::kTimestamp, false}},
                      {}, schema);
}

Row EventRow(uint64_t offset) {
  const uint64_t r = Mix(offset);
  Row row(4);
  row[0] = static_cast<int64_t>(r % kEventKeys);
  if ((r >> 20) % 50 != 0) row[1] = std::string(kNames[(r >> 14) % kNames.size()]);
  if ((r >> 28) % 40 != 0) row[2] = static_cast<int64_t>((r >> 32) % 1000) - 99;
  row[3] = Timestamp{kEpochUs + static_cast<int64_t>(offset) * 1000};
  return row;
}

std::vector<Row> Events(uint64_t first, size_t count) {
  std::vector<Row> rows;
  for (uint64_t offset = first; offset < first + count; ++offset) rows.push_back(EventRow(offset));
  return rows;
}

// The model each result is checked against: what the expressions mean,
// in plain C++.
bool ModelFilter(const Row& row) {
  if (IsNull(row[1]) || IsNull(row[2]) || std::get<int64_t>(row[2]) <= 10) return false;
  std::string name = std::get<std::string>(row[1]);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name == "x";
}

std::string ModelCaseWhen(const Row& row) {
  if (IsNull(row[2])) return "refund";
  const int64_t amount = std::get<int64_t>(row[2]);
  return amount > 500 ? "large" : amount > 0 ? "small" : "refund";
}

// --- Expressions.

void BM_ExprParseFilter(benchmark::State& state) {
  Schema schema;
  if (!Ok(state, EventSchema(&schema), "EventSchema")) return;
  Expression filter;
  for (auto _ : state) {
    if (!Ok(state, Expression::Parse(kFilter, schema, &filter), "Expression::Parse")) return;
    benchmark::DoNotOptimize(&filter);
  }
  if (filter.type() != ColumnType::kBool) state.SkipWithError("the filter does not parse as a bool");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExprParseFilter);

// Matches on each row: how many pass. Checked row by row against the model
// before the timing, and the count after it.
Status CountMatches(const Expression& filter, const std::vector<Row>& rows, size_t* matched) {
  *matched = 0;
  for (const Row& row : rows) {
    bool match = false;
    SPOOL_RETURN_IF_ERROR(filter.Matches(row, &match));
    if (match) ++*matched;
  }
  return Status::OK();
}

void BM_ExprFilter(benchmark::State& state) {
  Schema schema;
  Expression filter;
  if (!Ok(state, EventSchema(&schema), "EventSchema") ||
      !Ok(state, Expression::Parse(kFilter, schema, &filter), "Expression::Parse")) {
    return;
  }
  const std::vector<Row> rows = Events(0, kBatchRows);
  size_t expected = 0;
  for (const Row& row : rows) {
    bool match = false;
    if (!Ok(state, filter.Matches(row, &match), "Matches")) return;
    if (match != ModelFilter(row)) {
      state.SkipWithError("the filter disagrees with the model on a row");
      return;
    }
    if (match) ++expected;
  }
  size_t matched = 0;
  for (auto _ : state) {
    if (!Ok(state, CountMatches(filter, rows, &matched), "Matches")) return;
    benchmark::DoNotOptimize(matched);
  }
  if (matched != expected || expected == 0 || expected == rows.size()) {
    state.SkipWithError("the filter passed another number of rows than the model");
    return;
  }
  SetItems(state, rows.size());
  state.counters["selectivity"] = static_cast<double>(expected) / static_cast<double>(rows.size());
}
BENCHMARK(BM_ExprFilter);

// Evaluate on each row: how many are 'large'.
Status CountLarge(const Expression& projection, const std::vector<Row>& rows, size_t* large) {
  *large = 0;
  Value value;
  for (const Row& row : rows) {
    SPOOL_RETURN_IF_ERROR(projection.Evaluate(row, &value));
    const std::string* s = std::get_if<std::string>(&value);
    if (s != nullptr && *s == "large") ++*large;
  }
  return Status::OK();
}

void BM_ExprCaseWhen(benchmark::State& state) {
  Schema schema;
  Expression projection;
  if (!Ok(state, EventSchema(&schema), "EventSchema") ||
      !Ok(state, Expression::Parse(kCaseWhen, schema, &projection), "Expression::Parse")) {
    return;
  }
  const std::vector<Row> rows = Events(0, kBatchRows);
  size_t expected = 0;
  Value value;
  for (const Row& row : rows) {
    if (!Ok(state, projection.Evaluate(row, &value), "Evaluate")) return;
    if (value != Value(ModelCaseWhen(row))) {
      state.SkipWithError("the CASE WHEN disagrees with the model on a row");
      return;
    }
    if (ModelCaseWhen(row) == "large") ++expected;
  }
  size_t large = 0;
  for (auto _ : state) {
    if (!Ok(state, CountLarge(projection, rows, &large), "Evaluate")) return;
    benchmark::DoNotOptimize(large);
  }
  if (large != expected || expected == 0) {
    state.SkipWithError("the CASE WHEN gave another number of 'large' rows than the model");
    return;
  }
  SetItems(state, rows.size());
}
BENCHMARK(BM_ExprCaseWhen);

// --- Records: a topic source's parsing of its messages.

// W4's event messages ({"key":…,"amount":…,"at":…,"note":"…"}, about 100
// bytes) through the RecordParser a topic source keeps: the flat-object
// fast path. Each row is checked against the event it was made from.
void BM_RecordParseJson(benchmark::State& state) {
  const std::vector<Column> columns = EventColumns();
  Schema schema;
  std::unique_ptr<const RecordParser> parser;
  if (!Ok(state, Schema::Make(columns, {}, &schema), "Schema::Make") ||
      !Ok(state, RecordParser::Make(schema, RecordOptions{}, &parser), "RecordParser::Make")) {
    return;
  }
  const std::vector<std::string> messages = EventMessages(0, kBatchRows);
  std::vector<Row> rows(messages.size());
  size_t bytes = 0;
  for (const std::string& m : messages) bytes += m.size();
  for (auto _ : state) {
    for (size_t i = 0; i < messages.size(); ++i) {
      if (!Ok(state, parser->ParseJson(messages[i], &rows[i]), "ParseJson")) return;
    }
    benchmark::DoNotOptimize(rows.data());
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const StreamEvent e = EventAt(i);
    const auto* note = rows[i].size() == 4 ? std::get_if<std::string>(&rows[i][3]) : nullptr;
    if (rows[i][0] != Value(e.key) || rows[i][1] != Value(e.amount) || note == nullptr ||
        messages[i].find(*note) == std::string::npos) {
      state.SkipWithError("a parsed row differs from its event");
      return;
    }
  }
  SetItems(state, kBatchRows);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_RecordParseJson);

// --- Operators.

// Where the stateful operators keep their state tables: a scratch store
// whose log does not sync (the step's CPU is what is measured).
StoreOptions OperatorStoreOptions() {
  StoreOptions options;
  options.log.durability = Durability::kNoSync;
  return options;
}

// Compiles `step` over `input` as a flow named `flow` would, creates its
// state tables and starts it.
Status StartOperator(const StepSpec& step, const Schema& input, const std::string& flow, Store* store,
                     std::unique_ptr<Operator>* op) {
  CompileContext ctx;
  ctx.store = store;
  SPOOL_RETURN_IF_ERROR(stream_internal::CompileStep(step, input, "flows." + flow, ctx, op));
  stream_internal::StateTables tables;
  // The benchmark stands in for the pipeline runtime, whose state tables
  // these are.
  Transaction create("CREATE TABLE");
  create.AllowSpoolTables();
  for (const stream_internal::StateTableSpec& spec : (*op)->StateTables()) {
    TableId id;
    SPOOL_RETURN_IF_ERROR(stream_internal::StateTableId(flow, spec.suffix, &id));
    create.CreateTable(id, TableKind::kInternalState, spec.schema);
    tables.ids.push_back(id);
  }
  if (!create.empty()) SPOOL_RETURN_IF_ERROR(store->Commit(create));
  Transaction setup("MOVE STATE");
  setup.AllowSpoolTables();
  SPOOL_RETURN_IF_ERROR((*op)->Start(store, tables, &setup));
  return setup.empty() ? Status::OK() : store->Commit(setup);
}

// A fresh batch of `input` and a fresh transaction for one step.
void NewStep(const std::vector<Row>& input, BatchContext* ctx, Transaction* txn, Batch* batch) {
  batch->rows = input;
  *txn = Transaction("STREAMING UPDATE");
  txn->AllowSpoolTables();
  ctx->txn = txn;
}

Status Process(const std::vector<Operator*>& ops, BatchContext* ctx, Batch* batch) {
  for (Operator* op : ops) SPOOL_RETURN_IF_ERROR(op->Process(*ctx, batch));
  return Status::OK();
}

// One timed step: NewStep outside the timing, then Process of each operator
// in turn.
Status Step(benchmark::State& state, const std::vector<Row>& input, const std::vector<Operator*>& ops,
            BatchContext* ctx, Transaction* txn, Batch* batch) {
  state.PauseTiming();
  NewStep(input, ctx, txn, batch);
  state.ResumeTiming();
  return Process(ops, ctx, batch);
}

// Filter, then select: CompileStep's FilterOp and SelectOp, stateless.
void BM_OpFilterSelect(benchmark::State& state) {
  Schema schema;
  if (!Ok(state, EventSchema(&schema), "EventSchema")) return;
  std::unique_ptr<Operator> filter, select;
  CompileContext compile;
  if (!Ok(state, stream_internal::CompileStep(FilterStep{kFilter}, schema, "flows.bench", compile, &filter),
          "filter") ||
      !Ok(state,
          stream_internal::CompileStep(SelectStep{{{"key", "key"}, {"size", kCaseWhen}, {"cents", "amount * 100"}}},
                                       filter->output(), "flows.bench", compile, &select),
          "select")) {
    return;
  }
  const std::vector<Row> input = Events(0, kBatchRows);
  std::vector<Row> expected;
  for (const Row& row : input) {
    if (ModelFilter(row)) expected.push_back({row[0], ModelCaseWhen(row), std::get<int64_t>(row[2]) * 100});
  }
  const std::vector<Operator*> ops = {filter.get(), select.get()};
  Transaction txn;
  BatchContext ctx;
  Batch batch;
  for (auto _ : state) {
    if (!Ok(state, Step(state, input, ops, &ctx, &txn, &batch), "Process")) return;
  }
  if (batch.rows != expected || expected.empty()) {
    state.SkipWithError("filter + select output differs from the model");
    return;
  }
  SetItems(state, input.size());
}
BENCHMARK(BM_OpFilterSelect);

// A key's totals, as the aggregate must report them.
struct AggregateTotals {
  int64_t events = 0;
  int64_t amounts = 0;  // non-NULL amounts
  int64_t sum = 0;
};

// count(*) and sum(amount) by key: AggregateOp with its groups in memory,
// writing an upsert of each touched group to its state table. The batches
// cycle through 10,000 events, so a step touches about 950 groups of the
// 10,000. One cycle before the timing looks every group up in the state
// table (a group's first sight in a run), so the steps timed are the steady
// state: every group in memory.
void BM_OpAggregate(benchmark::State& state) {
  constexpr size_t kBatches = 10;
  Schema schema;
  ScratchStore scratch;
  std::unique_ptr<Operator> op;
  const AggregateStep step{{"key"}, {{"events", AggregateFn::kCount, ""}, {"total", AggregateFn::kSum, "amount"}}, {}};
  if (!Ok(state, EventSchema(&schema), "EventSchema") ||
      !Ok(state, scratch.Open(OperatorStoreOptions()), "Store::Open") ||
      !Ok(state, StartOperator(step, schema, "bench_aggregate", scratch.get(), &op), "aggregate")) {
    return;
  }
  std::vector<std::vector<Row>> batches;
  for (size_t b = 0; b < kBatches; ++b) batches.push_back(Events(b * kBatchRows, kBatchRows));
  Transaction txn;
  BatchContext ctx;
  ctx.store = scratch.get();
  Batch batch;
  const std::vector<Operator*> ops = {op.get()};
  size_t steps = 0;
  for (; steps < kBatches; ++steps) {
    NewStep(batches[steps], &ctx, &txn, &batch);
    if (!Ok(state, Process(ops, &ctx, &batch), "Process")) return;
  }
  for (auto _ : state) {
    if (!Ok(state, Step(state, batches[steps % kBatches], ops, &ctx, &txn, &batch), "Process")) return;
    ++steps;
  }
  // Each output row (key, events, total) must be its key's totals over
  // every step so far.
  std::map<int64_t, AggregateTotals> model;
  for (size_t s = 0; s < steps; ++s) {
    for (const Row& row : batches[s % kBatches]) {
      AggregateTotals& totals = model[std::get<int64_t>(row[0])];
      ++totals.events;
      if (IsNull(row[2])) continue;
      ++totals.amounts;
      totals.sum += std::get<int64_t>(row[2]);
    }
  }
  std::set<int64_t> touched;
  for (const Row& row : batches[(steps - 1) % kBatches]) touched.insert(std::get<int64_t>(row[0]));
  bool right = batch.rows.size() == touched.size();
  for (const Row& row : batch.rows) {
    const AggregateTotals& totals = model[std::get<int64_t>(row[0])];
    const Value total = totals.amounts == 0 ? Value() : Value(totals.sum);
    right = right && touched.count(std::get<int64_t>(row[0])) == 1 && row[1] == Value(totals.events) && row[2] == total;
  }
  if (!right) {
    state.SkipWithError("the aggregate's output differs from the model's totals");
    return;
  }
  SetItems(state, kBatchRows);
  state.counters["groups_out"] = static_cast<double>(touched.size());
}
BENCHMARK(BM_OpAggregate);

// Dedup by id with a watermark on `at` (1.5 ms behind): DedupOp. Batch b
// holds ids b*1000 .. b*1000+849 once, 100 of them again and 50 ids of
// batch b-1, which is still within the watermark: 850 rows pass, and each
// step forgets the ids that fell below the watermark.
constexpr size_t kDedupNew = 850;
constexpr size_t kDedupRepeats = 100;
constexpr uint64_t kDedupDelayUs = 1500;

Status DedupSchema(Schema* schema) {
  return Schema::Make(
      {{"id", ColumnType::kInt64, false}, {"at", ColumnType::kTimestamp, false}, {"amount", ColumnType::kInt64, true}},
      {}, schema);
}

std::vector<Row> DedupBatch(uint64_t b) {
  std::vector<Row> rows;
  for (uint64_t i = 0; i < kBatchRows; ++i) {
    uint64_t id = b * kBatchRows + i;
    if (i >= kDedupNew + kDedupRepeats) id = (b - 1) * kBatchRows + (i - kDedupNew - kDedupRepeats);
    else if (i >= kDedupNew) id = b * kBatchRows + (i - kDedupNew);
    rows.push_back({static_cast<int64_t>(id), Timestamp{kEpochUs + static_cast<int64_t>(b * kBatchRows + i)},
                    static_cast<int64_t>(Mix(id) % 1000)});
  }
  return rows;
}

bool DedupKeptBatch(const Batch& batch, uint64_t b) {
  if (batch.rows.size() != kDedupNew) return false;
  for (size_t i = 0; i < kDedupNew; ++i) {
    if (batch.rows[i][0] != Value(static_cast<int64_t>(b * kBatchRows + i))) return false;
  }
  return true;
}

void BM_OpDedup(benchmark::State& state) {
  Schema schema;
  ScratchStore scratch;
  std::unique_ptr<Operator> op;
  const DedupStep step{{"id"}, WatermarkSpec{"at", kDedupDelayUs}};
  if (!Ok(state, DedupSchema(&schema), "DedupSchema") ||
      !Ok(state, scratch.Open(OperatorStoreOptions()), "Store::Open") ||
      !Ok(state, StartOperator(step, schema, "bench_dedup", scratch.get(), &op), "dedup")) {
    return;
  }
  Transaction txn;
  BatchContext ctx;
  ctx.store = scratch.get();
  Batch batch;
  // The first batch, outside the timing: each later one repeats ids of the
  // one before.
  const std::vector<Operator*> ops = {op.get()};
  uint64_t b = 1;
  NewStep(DedupBatch(b), &ctx, &txn, &batch);
  if (!Ok(state, Process(ops, &ctx, &batch), "Process")) return;
  for (auto _ : state) {
    state.PauseTiming();
    NewStep(DedupBatch(++b), &ctx, &txn, &batch);
    state.ResumeTiming();
    if (!Ok(state, Process(ops, &ctx, &batch), "Process")) return;
    if (batch.rows.size() != kDedupNew) {
      state.SkipWithError("dedup kept another number of rows than the new ids");
      return;
    }
  }
  if (!DedupKeptBatch(batch, b) || ctx.late_rows != 0) {
    state.SkipWithError("dedup kept other rows than each new id once, or dropped rows as late");
    return;
  }
  SetItems(state, kBatchRows);
}
BENCHMARK(BM_OpDedup);

}  // namespace
}  // namespace spool::bench
