// Helpers shared by the operators (internal to stream/).
#pragma once

#include <string>
#include <vector>

#include "flow_parts.h"

namespace spool::stream_internal {

// The indexes of `names` in `schema`. Errors: InvalidArgument "PLACE: WHAT
// names unknown column 'x' (columns: …)".
Status FindColumns(const Schema& schema, const std::vector<std::string>& names, const std::string& place,
                   std::string_view what, std::vector<size_t>* columns);
std::string ColumnNames(const Schema& schema);
// Schema::Make with errors prefixed by `place`.
Status MakeSchema(std::vector<Column> columns, const std::vector<std::string>& key, const std::string& place,
                  Schema* schema);
bool HasNull(const Row& row, const std::vector<size_t>& columns);

// What a flow's state tables are named after: the flow's name, or for a
// flow named after its target (dots, which a table name cannot hold) the
// target's table name and eight hex digits of a hash of the whole name.
std::string StateTableStem(const std::string& flow);
// `__spool.state.<stem>__<suffix>`.
Status StateTableId(const std::string& flow, const std::string& suffix, TableId* id);

// Aggregate, dedup, stream join and AUTO CDC.
Status CompileStatefulStep(const StepSpec& spec, const Schema& input, const std::string& place, CompileContext& ctx,
                           std::unique_ptr<Operator>* op);
Status CompileAggregate(const AggregateStep& step, const Schema& input, const std::string& place,
                        std::unique_ptr<Operator>* op);
Status CompileDedup(const DedupStep& step, const Schema& input, const std::string& place,
                    std::unique_ptr<Operator>* op);
Status CompileStreamJoin(const StreamJoinStep& step, const Schema& input, const std::string& place, CompileContext& ctx,
                         std::unique_ptr<Operator>* op);
Status CompileAutoCdc(const AutoCdcStep& step, const Schema& input, const std::string& place,
                      std::unique_ptr<Operator>* op);

// a - b for b >= 0, stopping at INT64_MIN instead of overflowing (a
// watermark far in the past).
inline int64_t SubtractSaturating(int64_t a, uint64_t b) {
  int64_t out;
  if (b > static_cast<uint64_t>(INT64_MAX) || __builtin_sub_overflow(a, static_cast<int64_t>(b), &out))
    return INT64_MIN;
  return out;
}

// Checks a duration given to a step (a builder may pass any number).
// Errors: InvalidArgument "PLACE: WHAT must be …".
Status CheckDuration(uint64_t micros, bool allow_zero, const std::string& place, std::string_view what);

// The window [start, start + size) holding `micros`.
inline int64_t WindowStart(int64_t micros, int64_t size) {
  int64_t start = micros - micros % size;
  if (micros % size < 0) start -= size;
  return start;
}

}  // namespace spool::stream_internal
