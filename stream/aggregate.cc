// Grouped aggregation, global (upserts per group) or in tumbling event-time
// windows (one appended row per closed window), with its state in an
// internal table: one row per group (and window) holding each aggregate's
// count of non-null inputs and its running value.
#include <absl/container/node_hash_map.h>

#include <algorithm>

#include "operators_internal.h"
#include "spool/stream/expression.h"

namespace spool::stream_internal {
namespace {

struct Accumulator {
  int64_t count = 0;  // non-null inputs (all rows for count(*))
  Value value;        // sum, min, max; avg: the sum as a double
};

struct Group {
  int64_t window_start = 0;
  Row groups;
  std::vector<Accumulator> accs;
  bool dirty = false;
};

class AggregateOp : public Operator {
 public:
  Status Init(const AggregateStep& step, const Schema& input, const std::string& place) {
    step_ = step;
    place_ = place;
    SPOOL_RETURN_IF_ERROR(FindColumns(input, step.group_by, place, "group_by", &group_columns_));
    if (group_columns_.empty() && !step.window) {
      return Status::InvalidArgument(place + ": a streaming aggregate needs group_by columns (its rows are updated "
                                             "by group); to aggregate everything, group by a constant column made "
                                             "with a select");
    }
    if (step.window) {
      std::vector<size_t> time;
      SPOOL_RETURN_IF_ERROR(FindColumns(input, {step.window->time_column}, place + ".window", "time", &time));
      time_column_ = time[0];
      SPOOL_RETURN_IF_ERROR(CheckDuration(step.window->size_us, false, place + ".window", "size"));
      SPOOL_RETURN_IF_ERROR(CheckDuration(step.window->watermark_delay_us, true, place + ".window", "watermark"));
      if (input.columns()[time_column_].type != ColumnType::kTimestamp) {
        return Status::InvalidArgument(place + ".window: time column '" + step.window->time_column +
                                       "' is not a timestamp");
      }
    }
    std::vector<Column> out, state;
    if (step.window) {
      out.push_back({"window_start", ColumnType::kTimestamp, false});
      out.push_back({"window_end", ColumnType::kTimestamp, false});
      state.push_back({"__window_start", ColumnType::kTimestamp, false});
    }
    state.push_back({"__group", ColumnType::kBytes, false});
    for (size_t c : group_columns_) {
      Column column = input.columns()[c];
      if (!step.window && column.nullable) {
        return Status::InvalidArgument(place + ": group_by column '" + column.name +
                                       "' can be NULL, but the rows of a grouped aggregate are keyed by their "
                                       "groups; filter the NULLs out or coalesce them first");
      }
      out.push_back(column);
      column.nullable = true;
      state.push_back(column);
    }
    for (size_t i = 0; i < step.aggregates.size(); ++i) {
      const AggregateSpec& agg = step.aggregates[i];
      const std::string at = place + ".aggregates[" + std::to_string(i) + "] " + agg.name;
      Expression e;
      ColumnType type = ColumnType::kInt64;
      if (agg.expression.empty()) {
        if (agg.fn != AggregateFn::kCount) return Status::InvalidArgument(at + ": " + std::string(AggregateFnName(agg.fn)) + " needs an expression");
      } else {
        Status s = Expression::Parse(agg.expression, input, &e);
        if (!s.ok()) return Status::InvalidArgument(at + ": " + std::string(s.message()));
        type = e.type();
      }
      const bool numeric = type == ColumnType::kInt64 || type == ColumnType::kDouble;
      if ((agg.fn == AggregateFn::kSum || agg.fn == AggregateFn::kAvg) && !numeric) {
        return Status::InvalidArgument(at + ": " + std::string(AggregateFnName(agg.fn)) + " needs a number, not " +
                                       std::string(ColumnTypeName(type)));
      }
      ColumnType value_type = agg.fn == AggregateFn::kAvg ? ColumnType::kDouble : type;
      ColumnType out_type = agg.fn == AggregateFn::kCount ? ColumnType::kInt64 : value_type;
      out.push_back({agg.name, out_type, agg.fn != AggregateFn::kCount});
      state.push_back({"__count_" + std::to_string(i), ColumnType::kInt64, false});
      state.push_back({"__value_" + std::to_string(i), value_type, true});
      exprs_.push_back(std::move(e));
    }
    std::vector<std::string> state_key = {"__group"};
    if (step.window) state_key.insert(state_key.begin(), "__window_start");
    SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(state), state_key, place, &state_schema_));
    std::vector<std::string> key;
    if (!step.window) key = step.group_by;
    SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(out), key, place, &output_));
    output_key_ = key;
    return Status::OK();
  }

  std::string Fingerprint() const override {
    std::string f = "aggregate(group_by=[";
    for (const std::string& g : step_.group_by) f += g + ",";
    f += "] aggregates=[";
    for (size_t i = 0; i < step_.aggregates.size(); ++i) {
      f += std::string(AggregateFnName(step_.aggregates[i].fn)) + "(" + step_.aggregates[i].expression + "):" +
           std::string(ColumnTypeName(output_.columns()[output_.columns().size() - step_.aggregates.size() + i].type)) + ",";
    }
    f += "]";
    if (step_.window) f += " window=" + step_.window->time_column + "/" + std::to_string(step_.window->size_us) + "us";
    return f + ")";
  }

  std::vector<StateTableSpec> StateTables() const override { return {{"aggregate", state_schema_}}; }

  Status Start(Store* store, const stream_internal::StateTables& tables) override {
    store_ = store;
    state_id_ = tables.ids[0];
    // What a run keeps in memory starts from what the store holds.
    groups_.clear();
    reset_ = false;
    watermark_.reset();
    if (!step_.window) return Status::OK();
    // Windowed state is bounded by the watermark: keep it all in memory.
    Status decoded;
    SPOOL_RETURN_IF_ERROR(store_->Read(state_id_, {}, [&](const Row& row) {
      Group g;
      decoded = Decode(row, &g);
      if (!decoded.ok()) return false;
      std::string key;
      BuildKey(g.window_start, &key);
      key += std::get<Bytes>(row[1]).data;
      groups_.emplace(std::move(key), std::move(g));
      return true;
    }));
    return decoded;
  }

  std::optional<int64_t> watermark() const override { return watermark_; }
  void set_watermark(int64_t micros) override { watermark_ = micros; }

  Status Reset(BatchContext& ctx) override {
    ctx.txn->Truncate(state_id_);
    groups_.clear();
    reset_ = true;  // nothing in the store is current any more
    return Status::OK();
  }

  Status Process(BatchContext& ctx, Batch* batch) override {
    std::vector<Entry*> touched;
    std::optional<int64_t> max_time;
    const int64_t size = step_.window ? static_cast<int64_t>(step_.window->size_us) : 0;
    Value v;
    for (const Row& row : batch->rows) {
      int64_t start = 0;
      if (step_.window) {
        if (IsNull(row[time_column_])) {
          ++ctx.late_rows;
          continue;
        }
        const int64_t t = std::get<Timestamp>(row[time_column_]).micros;
        if (watermark_ && t < *watermark_) {
          ++ctx.late_rows;
          continue;
        }
        max_time = std::max(max_time.value_or(t), t);
        start = WindowStart(t, size);
      }
      Entry* entry = nullptr;
      SPOOL_RETURN_IF_ERROR(Find(start, row, &entry));
      Group* g = &entry->second;
      if (!g->dirty) touched.push_back(entry);
      g->dirty = true;
      for (size_t i = 0; i < exprs_.size(); ++i) {
        if (step_.aggregates[i].expression.empty()) {
          ++g->accs[i].count;
          continue;
        }
        SPOOL_RETURN_IF_ERROR(exprs_[i].Evaluate(row, &v));
        if (IsNull(v)) continue;
        SPOOL_RETURN_IF_ERROR(Accumulate(i, v, &g->accs[i]));
      }
    }
    std::vector<Row> out;
    for (Entry* entry : touched) {
      entry->second.dirty = false;
      ctx.txn->Write(state_id_, Encode(*entry));
      if (!step_.window) out.push_back(Output(entry->second));
    }
    if (step_.window && max_time) {
      watermark_ = std::max(watermark_.value_or(INT64_MIN), SubtractSaturating(*max_time, step_.window->watermark_delay_us));
      // Windows that end at or below the watermark are final: append them
      // and forget them, in window then group order.
      std::vector<Groups::iterator> closed;
      for (auto it = groups_.begin(); it != groups_.end(); ++it) {
        if (it->second.window_start + size <= *watermark_) closed.push_back(it);
      }
      std::sort(closed.begin(), closed.end(), [](const auto& a, const auto& b) { return a->first < b->first; });
      for (const auto& it : closed) {
        ctx.txn->Delete(state_id_, {Timestamp{it->second.window_start}, Bytes{std::string(GroupKey(it->first))}});
        out.push_back(Output(it->second));
        groups_.erase(it);
      }
    }
    batch->rows = std::move(out);
    return Status::OK();
  }
  // Every group a commit of the flow wrote is in groups_ (Find reads the
  // store only for a group this run has not seen, none after a Reset).
  bool ProcessesAhead() const override { return true; }

 private:
  // Nodes: Process keeps pointers to the groups it touched while it adds more.
  using Groups = absl::node_hash_map<std::string, Group>;
  using Entry = Groups::value_type;
  static constexpr size_t kWindowBytes = 8;

  // A group's key in groups_: in windows, the window (big-endian start, sign
  // flipped, so that keys sort by window first); then the group's key bytes
  // (its __group). Short keys stay within std::string's inline buffer.
  void BuildKey(int64_t window_start, std::string* key) const {
    key->clear();
    if (step_.window) {
      const uint64_t u = static_cast<uint64_t>(window_start) ^ (1ull << 63);
      for (int i = 7; i >= 0; --i) key->push_back(static_cast<char>(u >> (8 * i)));
    }
  }
  std::string_view GroupKey(std::string_view key) const { return key.substr(step_.window ? kWindowBytes : 0); }

  Status Find(int64_t window_start, const Row& row, Entry** out) {
    std::string& key = key_buffer_;
    BuildKey(window_start, &key);
    for (size_t c : group_columns_) AppendKeyBytes(row[c], &key);
    auto it = groups_.find(absl::string_view(key.data(), key.size()));
    if (it == groups_.end()) {
      Group g;
      g.window_start = window_start;
      bool found = false;
      if (!step_.window && !reset_) {
        Row stored;
        SPOOL_RETURN_IF_ERROR(store_->Get(state_id_, {Bytes{std::string(GroupKey(key))}}, &stored, &found));
        if (found) SPOOL_RETURN_IF_ERROR(Decode(stored, &g));
      }
      if (!found) {
        for (size_t c : group_columns_) g.groups.push_back(row[c]);
        g.accs.resize(exprs_.size());
      }
      it = groups_.emplace(key, std::move(g)).first;
    }
    *out = &*it;
    return Status::OK();
  }

  Status Accumulate(size_t i, const Value& v, Accumulator* acc) {
    const AggregateFn fn = step_.aggregates[i].fn;
    const bool first = acc->count++ == 0;
    switch (fn) {
      case AggregateFn::kCount: return Status::OK();
      case AggregateFn::kSum:
        if (first) {
          acc->value = v;
        } else if (const int64_t* n = std::get_if<int64_t>(&v)) {
          int64_t& sum = std::get<int64_t>(acc->value);
          if (__builtin_add_overflow(sum, *n, &sum)) {
            return Status::InvalidArgument(place_ + ".aggregates[" + std::to_string(i) + "] " +
                                           step_.aggregates[i].name + ": the sum overflows int64");
          }
        } else {
          std::get<double>(acc->value) += std::get<double>(v);
        }
        return Status::OK();
      case AggregateFn::kAvg: {
        const double d = std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
        acc->value = first ? d : std::get<double>(acc->value) + d;
        return Status::OK();
      }
      case AggregateFn::kMin:
        if (first || v < acc->value) acc->value = v;
        return Status::OK();
      case AggregateFn::kMax:
        if (first || acc->value < v) acc->value = v;
        return Status::OK();
    }
    return Status::OK();
  }

  Row Encode(const Entry& entry) const {
    const Group& g = entry.second;
    Row row;
    if (step_.window) row.push_back(Timestamp{g.window_start});
    row.push_back(Bytes{std::string(GroupKey(entry.first))});
    row.insert(row.end(), g.groups.begin(), g.groups.end());
    for (const Accumulator& acc : g.accs) {
      row.push_back(acc.count);
      row.push_back(acc.count == 0 ? Value() : acc.value);
    }
    return row;
  }

  Status Decode(const Row& row, Group* g) const {
    size_t c = 0;
    if (step_.window) g->window_start = std::get<Timestamp>(row[c++]).micros;
    ++c;  // __group
    g->groups.clear();
    for (size_t i = 0; i < group_columns_.size(); ++i) g->groups.push_back(row[c++]);
    g->accs.resize(exprs_.size());
    for (Accumulator& acc : g->accs) {
      acc.count = std::get<int64_t>(row[c++]);
      acc.value = row[c++];
    }
    return Status::OK();
  }

  Row Output(const Group& g) const {
    Row row;
    if (step_.window) {
      row.push_back(Timestamp{g.window_start});
      row.push_back(Timestamp{g.window_start + static_cast<int64_t>(step_.window->size_us)});
    }
    row.insert(row.end(), g.groups.begin(), g.groups.end());
    for (size_t i = 0; i < g.accs.size(); ++i) {
      const Accumulator& acc = g.accs[i];
      switch (step_.aggregates[i].fn) {
        case AggregateFn::kCount: row.push_back(acc.count); break;
        case AggregateFn::kAvg:
          row.push_back(acc.count == 0 ? Value() : Value(std::get<double>(acc.value) / static_cast<double>(acc.count)));
          break;
        default: row.push_back(acc.count == 0 ? Value() : acc.value); break;
      }
    }
    return row;
  }

  AggregateStep step_;
  std::string place_;
  std::vector<size_t> group_columns_;
  size_t time_column_ = 0;
  std::vector<Expression> exprs_;
  Schema state_schema_;
  Store* store_ = nullptr;
  TableId state_id_;
  Groups groups_;
  std::string key_buffer_;  // Find's, kept for its capacity
  std::optional<int64_t> watermark_;
  bool reset_ = false;
};

}  // namespace

Status CompileAggregate(const AggregateStep& step, const Schema& input, const std::string& place,
                        std::unique_ptr<Operator>* op) {
  auto agg = std::make_unique<AggregateOp>();
  SPOOL_RETURN_IF_ERROR(agg->Init(step, input, place + ".aggregate"));
  *op = std::move(agg);
  return Status::OK();
}

}  // namespace spool::stream_internal
