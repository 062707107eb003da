#include "stream_pipeline.h"

#include <algorithm>
#include <memory>

namespace spool::bench {
namespace {

constexpr char kFlowName[] = "totals";
constexpr char kOrdersFlowName[] = "orders";

FlowBuilder& AggregateTotals(FlowBuilder& flow) {
  return flow.Aggregate({"key"}, {{"events", AggregateFn::kCount, ""}, {"amount_sum", AggregateFn::kSum, "amount"}});
}

// The int64 in `column` of `row`, if it has one.
bool IntAt(const Row& row, std::optional<size_t> column, int64_t* value) {
  if (!column || *column >= row.size()) return false;
  const int64_t* v = std::get_if<int64_t>(&row[*column]);
  if (v != nullptr) *value = *v;
  return v != nullptr;
}

}  // namespace

Status ProduceEvents(const std::string& dir, uint64_t first, uint64_t count, uint64_t batch_messages, uint64_t keys) {
  std::unique_ptr<Topic> topic;
  SPOOL_RETURN_IF_ERROR(Topic::Open(Env::Default(), dir, &topic));
  std::vector<TopicWrite> batch;
  for (uint64_t at = first; at < first + count; at += batch_messages) {
    const std::vector<std::string> messages = EventMessages(at, std::min(batch_messages, first + count - at), keys);
    batch.clear();
    for (const std::string& m : messages) batch.push_back(TopicWrite{{}, m});
    SPOOL_RETURN_IF_ERROR(topic->Produce(batch, nullptr));
  }
  return Status::OK();
}

PipelineSpec EventPipelineSpec(const EventPipeline& pipeline) {
  PipelineBuilder builder("bench");
  builder.StreamingTable(kTotalsTable);
  FlowBuilder flow = builder.Flow(kFlowName);
  flow.FromTopic(pipeline.topic_dir, EventColumns());
  if (!pipeline.filter.empty()) flow.Filter(pipeline.filter);
  AggregateTotals(flow);
  if (pipeline.max_batch_rows != 0) flow.MaxBatchRows(pipeline.max_batch_rows);
  flow.Into(kTotalsTable);
  return builder.Build();
}

PipelineSpec LayeredEventPipelineSpec(const std::string& topic_dir) {
  PipelineBuilder builder("bench");
  builder.StreamingTable(kOrdersTable);
  builder.StreamingTable(kTotalsTable);
  builder.Flow(kOrdersFlowName).FromTopic(topic_dir, EventColumns()).Into(kOrdersTable);
  FlowBuilder totals = builder.Flow(kFlowName);
  totals.FromDataset(kOrdersTable);
  AggregateTotals(totals).Into(kTotalsTable);
  return builder.Build();
}

Status RunUpdate(Pipeline* pipeline, const UpdateOptions& options, UpdateResult* result) {
  SPOOL_RETURN_IF_ERROR(pipeline->Update(options, result));
  if (result->state == UpdateState::kCompleted) return Status::OK();
  return Status::Aborted("the update ended " + std::string(UpdateStateName(result->state)) + ": " + result->error);
}

Status ReadTotals(Store* store, std::vector<KeyTotals>* totals, uint64_t keys) {
  TableId id;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(kTotalsTable, &id));
  TableInfo table;
  SPOOL_RETURN_IF_ERROR(store->GetTable(id, &table));
  const std::optional<size_t> key_column = table.schema.FindColumn("key");
  const std::optional<size_t> count_column = table.schema.FindColumn("events");
  const std::optional<size_t> sum_column = table.schema.FindColumn("amount_sum");
  totals->assign(keys, KeyTotals{});
  Status row_status;
  SPOOL_RETURN_IF_ERROR(store->Read(id, {}, [&](const Row& row) {
    int64_t key = 0;
    KeyTotals t;
    const bool fits = IntAt(row, key_column, &key) && IntAt(row, count_column, &t.count) &&
                      IntAt(row, sum_column, &t.sum) && key >= 0 && static_cast<uint64_t>(key) < keys;
    if (!fits) row_status = Status::Corruption(std::string(kTotalsTable) + " holds a row that is not a key's totals");
    if (fits) (*totals)[static_cast<size_t>(key)] = t;
    return fits;
  }));
  return row_status;
}

Status CountRows(Store* store, const std::string& table, uint64_t* rows) {
  TableId id;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(table, &id));
  *rows = 0;
  return store->Scan(id, ReadOptions{}, [&](const RowView&) {
    ++*rows;
    return true;
  });
}

}  // namespace spool::bench
