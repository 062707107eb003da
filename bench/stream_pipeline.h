// Spool's side of the stream workloads (W4, end-to-end): the events
// (stream_events.h) produced into a Spool topic, the pipeline that reads
// them — topic source, an optional filter, a grouped aggregate (count and
// sum of the amount by key) into a keyed streaming table — and that table
// read back as per-key totals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/topic.h"
#include "stream_events.h"

namespace spool::bench {

// The target: key, events (count), amount_sum (sum of amount), keyed by key.
inline constexpr char kTotalsTable[] = "main.bench.totals";
// The layered pipeline's first table: the events as read (no key, append-only).
inline constexpr char kOrdersTable[] = "main.bench.orders";

struct EventPipeline {
  std::string topic_dir;
  std::string filter;           // a condition, or empty for none
  uint64_t max_batch_rows = 0;  // 0: the runtime's default (FlowSpec)
};

// Produces events [first, first + count) into the topic in `dir` (made by
// Topic::Create), `batch_messages` per Produce: each batch one durable log
// record; their keys drawn from `keys` keys. Errors: as Topic::Open and
// Topic::Produce.
Status ProduceEvents(const std::string& dir, uint64_t first, uint64_t count, uint64_t batch_messages,
                     uint64_t keys = kStreamKeys);

PipelineSpec EventPipelineSpec(const EventPipeline& pipeline);
// The layered pipeline (W6's whole-pipeline rewind): flow "orders" appends
// the topic's events to kOrdersTable; flow "totals" reads that table and
// aggregates it (count and sum of the amount by key, its operator state in
// the flow's state table) into kTotalsTable. So the store holds table rows,
// a source offset and operator state.
PipelineSpec LayeredEventPipelineSpec(const std::string& topic_dir);

// Errors: as Pipeline::Update; Aborted when the update ran but did not
// complete (naming its state and first error).
Status RunUpdate(Pipeline* pipeline, const UpdateOptions& options, UpdateResult* result);

// The per-key totals (indexed by key, `keys` of them) kTotalsTable holds.
// Errors: as Store::Read; Corruption for a row that is not (key, count,
// sum) or a key out of range.
Status ReadTotals(Store* store, std::vector<KeyTotals>* totals, uint64_t keys = kStreamKeys);
// The number of rows `table` (catalog.schema.table) holds. Errors: as
// Store::Scan.
Status CountRows(Store* store, const std::string& table, uint64_t* rows);

}  // namespace spool::bench
