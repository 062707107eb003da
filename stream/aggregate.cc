// Grouped aggregation, global (upserts per group) or in tumbling event-time
// windows (one appended row per closed window), with its state in an
// internal table: one row per group (and window) holding each aggregate's
// count of non-null inputs and its running value.
//
// A global aggregate of counts, sums, minima and maxima whose flow is the
// only writer of its target keeps its groups in the target instead: each
// output row holds the group's whole state (a sum, minimum or maximum is
// NULL exactly when it has no input yet), so the state rows, which would
// repeat the output rows, are not written, and a group this run has not
// met is read from the target. Where the groups live travels with the
// state table, so that every restore, rewind and reset of it moves it too:
// in the target, the state table holds one marker row (a __group of "\0",
// the target's name and the columns holding the groups: see TargetMarker)
// and nothing else. A run starts keeping them in the target only when the
// state table and the target are both empty (a new flow, or after a full
// refresh); a checkpoint reset, which empties the state but keeps the
// target, or a definition under which the target can no longer hold them
// (another flow writing it, a renamed aggregate), moves them back into
// the state table first.
#include <algorithm>

#include <absl/container/flat_hash_map.h>

#include "operators_internal.h"
#include "spool/stream/expression.h"

namespace spool::stream_internal {
namespace {

struct Accumulator {
  int64_t count = 0;  // non-null inputs (all rows for count(*))
  Value value;        // sum, min, max; avg: the sum as a double
};

// A group (in a window): its accumulators are kept apart (AggregateOp::accs_).
struct Group {
  std::string key;  // as AggregateOp::BuildKey makes it
  int64_t window_start = 0;
  Row groups;
};

class AggregateOp : public Operator {
 public:
  Status Init(const AggregateStep& step, const Schema& input, const std::string& place) {
    step_ = step;
    place_ = place;
    SPOOL_RETURN_IF_ERROR(FindColumns(input, step.group_by, place, "group_by", &group_columns_));
    if (group_columns_.empty() && !step.window) {
      return Status::InvalidArgument(place +
                                     ": a streaming aggregate needs group_by columns (its rows are updated "
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
    SPOOL_RETURN_IF_ERROR(AddAggregates(step, input, place, &out, &state));
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
           std::string(ColumnTypeName(output_.columns()[output_.columns().size() - step_.aggregates.size() + i].type)) +
           ",";
    }
    f += "]";
    if (step_.window) f += " window=" + step_.window->time_column + "/" + std::to_string(step_.window->size_us) + "us";
    return f + ")";
  }

  std::vector<StateTableSpec> StateTables() const override { return {{"aggregate", state_schema_}}; }

  void SetTarget(const TableId& target, bool only_writer) override {
    target_ = target;
    only_writer_ = only_writer;
  }

  Status Start(Store* store, const stream_internal::StateTables& tables, Transaction* setup) override {
    store_ = store;
    state_id_ = tables.ids[0];
    // What a run keeps in memory starts from what the store holds.
    ClearGroups();
    reset_ = false;
    in_target_ = mark_target_ = false;
    watermark_.reset();
    if (!step_.window) return ChooseHome(setup);
    // Windowed state is bounded by the watermark: keep it all in memory.
    Status decoded;
    SPOOL_RETURN_IF_ERROR(store_->Read(state_id_, {}, [&](const Row& row) {
      const uint32_t slot = NewSlot();
      decoded = Decode(row, slot);
      if (!decoded.ok()) return false;
      Group& g = groups_[slot];
      BuildKey(g.window_start, &g.key);
      g.key += std::get<Bytes>(row[1]).data;
      index_.emplace(g.key, slot);
      return true;
    }));
    return decoded;
  }

  std::optional<int64_t> watermark() const override { return watermark_; }
  void set_watermark(int64_t micros) override { watermark_ = micros; }

  Status Reset(BatchContext& ctx) override {
    ctx.txn->Truncate(state_id_);
    ClearGroups();
    reset_ = true;  // nothing in the store is current any more
    in_target_ = mark_target_ = false;
    return Status::OK();
  }

  // In three passes over the batch, so that the memory each row's group
  // needs is requested for many rows before any of it is waited for (with
  // 10,000 groups, a lookup that waits is most of a row's cost): each row's
  // key (its slot in the index requested), then its group (its
  // accumulators requested), then the accumulation.
  Status Process(BatchContext& ctx, Batch* batch) override {
    const std::vector<Row>& rows = batch->rows;
    std::optional<int64_t> max_time;
    KeyRows(ctx, rows, &max_time);
    SPOOL_RETURN_IF_ERROR(FindSlots(rows));
    std::vector<uint32_t> touched;
    SPOOL_RETURN_IF_ERROR(AccumulateRows(rows, &touched));
    std::vector<Row> out;
    WriteGroups(ctx, touched, &out);
    if (step_.window && max_time) {
      watermark_ =
          std::max(watermark_.value_or(INT64_MIN), SubtractSaturating(*max_time, step_.window->watermark_delay_us));
      CloseWindows(ctx, &out);
    }
    batch->rows = std::move(out);
    return Status::OK();
  }
  // Every group a commit of the flow wrote is in memory (FindSlot reads the
  // store only for a group this run has not seen, none after a Reset).
  bool ProcessesAhead() const override { return true; }
  void InputsRead(const std::vector<bool>&, std::vector<bool>* inputs) const override {
    inputs->assign(inputs->size(), false);
    for (size_t c : group_columns_) (*inputs)[c] = true;
    if (step_.window) (*inputs)[time_column_] = true;
    for (const Expression& e : exprs_) e.MarkColumnsRead(inputs);
  }

 private:
  // The index of a group's key: its slot in groups_, dirty_ and (times the
  // number of aggregates) accs_. A slot freed by a closed window is reused.
  using Index = absl::flat_hash_map<std::string, uint32_t>;
  static constexpr size_t kWindowBytes = 8;
  static constexpr uint32_t kLate = UINT32_MAX;         // Process: a row no group takes
  static constexpr uint32_t kPending = UINT32_MAX - 1;  // Process: a row whose slot is not found yet

  // Each aggregate's expression (exprs_, columns_), its output column
  // and its two state columns (its count of inputs and its value).
  Status AddAggregates(const AggregateStep& step, const Schema& input, const std::string& place,
                       std::vector<Column>* out, std::vector<Column>* state) {
    for (size_t i = 0; i < step.aggregates.size(); ++i) {
      const AggregateSpec& agg = step.aggregates[i];
      const std::string at = place + ".aggregates[" + std::to_string(i) + "] " + agg.name;
      Expression e;
      ColumnType type = ColumnType::kInt64;
      if (agg.expression.empty()) {
        if (agg.fn != AggregateFn::kCount)
          return Status::InvalidArgument(at + ": " + std::string(AggregateFnName(agg.fn)) + " needs an expression");
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
      out->push_back({agg.name, out_type, agg.fn != AggregateFn::kCount});
      state->push_back({"__count_" + std::to_string(i), ColumnType::kInt64, false});
      state->push_back({"__value_" + std::to_string(i), value_type, true});
      columns_.push_back(e.column());
      exprs_.push_back(std::move(e));
    }
    return Status::OK();
  }

  // Process's first pass: each row's key (keys_), its slot in the index
  // requested; a row no window takes (late) counted and marked kLate.
  void KeyRows(BatchContext& ctx, const std::vector<Row>& rows, std::optional<int64_t>* max_time) {
    keys_.resize(rows.size());
    slots_.assign(rows.size(), kLate);
    for (size_t i = 0; i < rows.size(); ++i) {
      int64_t start = 0;
      if (!InWindow(rows[i], &start, max_time)) {
        ++ctx.late_rows;
        continue;
      }
      std::string& key = keys_[i];
      BuildKey(start, &key);
      for (size_t c : group_columns_) AppendKeyBytes(rows[i][c], &key);
      index_.prefetch(key);
      slots_[i] = kPending;
    }
  }

  // The second: each row's group (slots_), its accumulators requested.
  Status FindSlots(const std::vector<Row>& rows) {
    const size_t n = exprs_.size();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (slots_[i] == kLate) continue;
      SPOOL_RETURN_IF_ERROR(FindSlot(keys_[i], rows[i], &slots_[i]));
      __builtin_prefetch(accs_.data() + slots_[i] * n, 1);
      __builtin_prefetch(&groups_[slots_[i]]);  // for its output row
    }
    return Status::OK();
  }

  // The third: each row accumulated into its group; `*touched`, the groups
  // the batch changed, in the order it first did.
  Status AccumulateRows(const std::vector<Row>& rows, std::vector<uint32_t>* touched) {
    const size_t n = exprs_.size();
    Value v;
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint32_t slot = slots_[i];
      if (slot == kLate) continue;
      if (!dirty_[slot]) touched->push_back(slot);
      dirty_[slot] = true;
      Accumulator* accs = accs_.data() + slot * n;
      for (size_t a = 0; a < n; ++a) {
        if (step_.aggregates[a].expression.empty()) {
          ++accs[a].count;
          continue;
        }
        const Value* input = &v;
        if (columns_[a]) input = &rows[i][*columns_[a]];
        else SPOOL_RETURN_IF_ERROR(exprs_[a].Evaluate(rows[i], &v));
        if (IsNull(*input)) continue;
        SPOOL_RETURN_IF_ERROR(Accumulate(a, *input, &accs[a]));
      }
    }
    return Status::OK();
  }

  // The touched groups' state rows (none when the target holds the groups,
  // but its marker once) and, without windows, their output rows into
  // `*out`.
  void WriteGroups(BatchContext& ctx, const std::vector<uint32_t>& touched, std::vector<Row>* out) {
    out->reserve(step_.window ? 0 : touched.size());
    // Its state rows, then the flow's writes of the output and checkpoint.
    ctx.txn->Reserve((in_target_ ? 0 : touched.size()) + (mark_target_ ? 1 : 0) + touched.size() + 1);
    // The state table is named only in a batch that writes to it.
    std::optional<Transaction::TableRef> state;
    if (!in_target_ || mark_target_) state = ctx.txn->Table(state_id_);
    if (mark_target_) {
      ctx.txn->Write(*state, MarkerRow(TargetMarker()));
      mark_target_ = false;
    }
    // Each group's values (a heap block of their own) are requested a few
    // groups before they are copied into its rows.
    constexpr size_t kAhead = 8;
    for (size_t t = 0; t < touched.size(); ++t) {
      if (t + kAhead < touched.size()) __builtin_prefetch(groups_[touched[t + kAhead]].groups.data());
      const uint32_t slot = touched[t];
      dirty_[slot] = false;
      if (!in_target_) ctx.txn->Write(*state, Encode(slot));
      if (!step_.window) out->push_back(Output(slot));
    }
  }

  // A group's key in index_: in windows, the window (big-endian start, sign
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
  // The window start BuildKey put in `key` (0 without windows).
  int64_t KeyWindow(std::string_view key) const {
    if (!step_.window) return 0;
    uint64_t u = 0;
    for (size_t i = 0; i < kWindowBytes; ++i) u = u << 8 | static_cast<uint8_t>(key[i]);
    return static_cast<int64_t>(u ^ (1ull << 63));
  }

  // Whether `row` counts: always without windows; in windows, when its
  // event time is neither NULL nor behind the watermark. Sets *start to
  // its window and raises *max_time to its time.
  bool InWindow(const Row& row, int64_t* start, std::optional<int64_t>* max_time) const {
    if (!step_.window) return true;
    if (IsNull(row[time_column_])) return false;
    const int64_t t = std::get<Timestamp>(row[time_column_]).micros;
    if (watermark_ && t < *watermark_) return false;
    *max_time = std::max(max_time->value_or(t), t);
    *start = WindowStart(t, static_cast<int64_t>(step_.window->size_us));
    return true;
  }

  void ClearGroups() {
    index_.clear();
    groups_.clear();
    dirty_.clear();
    accs_.clear();
    free_slots_.clear();
  }

  // A slot with a new group's accumulators.
  uint32_t NewSlot() {
    const size_t n = exprs_.size();
    if (!free_slots_.empty()) {
      const uint32_t slot = free_slots_.back();
      free_slots_.pop_back();
      std::fill_n(accs_.data() + slot * n, n, Accumulator{});
      return slot;
    }
    groups_.emplace_back();
    dirty_.push_back(false);
    accs_.resize(accs_.size() + n);
    return static_cast<uint32_t>(groups_.size() - 1);
  }

  // The slot of group `key`, which `row` belongs to: in memory, else (a
  // global aggregate's group that this run has not met) as the store holds
  // it, else new.
  Status FindSlot(const std::string& key, const Row& row, uint32_t* slot) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      *slot = it->second;
      return Status::OK();
    }
    *slot = NewSlot();
    Group& g = groups_[*slot];
    g.key = key;
    bool found = false;
    if (!step_.window && !reset_ && in_target_) {
      Row target_key, stored;
      for (size_t j : target_key_) target_key.push_back(row[group_columns_[j]]);
      SPOOL_RETURN_IF_ERROR(store_->Get(*target_, target_key, &stored, &found));
      if (found) FromOutput(stored, target_columns_, *slot);
    } else if (!step_.window && !reset_) {
      Row stored;
      SPOOL_RETURN_IF_ERROR(store_->Get(state_id_, {Bytes{std::string(GroupKey(key))}}, &stored, &found));
      if (found) SPOOL_RETURN_IF_ERROR(Decode(stored, *slot));
    }
    if (!found) {
      g.window_start = KeyWindow(key);
      g.groups.clear();
      for (size_t c : group_columns_) g.groups.push_back(row[c]);
    }
    index_.emplace(key, *slot);
    return Status::OK();
  }

  // The marker's __group (see the top of the file) when the groups may be
  // kept in the target: "\0", the target's name, then the name of each
  // output column (the target's column holding it), each after a "\0".
  // Empty when they may not.
  std::string TargetMarker() const {
    if (!target_ || !only_writer_ || step_.window) return "";
    for (const AggregateSpec& agg : step_.aggregates) {
      if (agg.fn == AggregateFn::kAvg) return "";  // its output, sum ÷ count, loses the sum
    }
    std::string marker = std::string(1, '\0') + target_->ToString();
    for (const std::string& name : OutputNames()) marker += std::string(1, '\0') + name;
    return marker;
  }

  std::vector<std::string> OutputNames() const {
    std::vector<std::string> names;
    for (const Column& c : output_.columns()) names.push_back(c.name);
    return names;
  }

  Row MarkerRow(const std::string& marker) const {
    Row row(state_schema_.columns().size());  // NULLs …
    row[0] = Bytes{marker};
    for (size_t a = 0; a < exprs_.size(); ++a) row[1 + group_columns_.size() + 2 * a] = int64_t{0};  // … and no inputs
    return row;
  }

  // Where this run keeps the groups: where the last one did, as the state
  // table's first row says (a marker is alone in it), unless the target can
  // no longer hold them; in the target when they may be and both tables
  // are empty.
  Status ChooseHome(Transaction* setup) {
    std::optional<std::string> marker;
    bool groups = false;
    SPOOL_RETURN_IF_ERROR(store_->Read(state_id_, {}, [&](const Row& row) {
      const std::string& group = std::get<Bytes>(row[0]).data;
      if (!group.empty() && group[0] == '\0') marker = group;
      else groups = true;
      return false;
    }));
    const std::string home = TargetMarker();
    if (marker && *marker == home) return UseTarget(/*mark=*/false);
    if (marker) return MoveGroupsOut(*marker, setup);
    if (groups || home.empty()) return Status::OK();
    bool empty = true;
    SPOOL_RETURN_IF_ERROR(store_->Read(*target_, {}, [&](const Row&) { return empty = false; }));
    return empty ? UseTarget(/*mark=*/true) : Status::OK();
  }

  // Keeps the groups in the target: where its columns and key are.
  // `mark`: the first batch writes the marker.
  Status UseTarget(bool mark) {
    TableInfo target;
    SPOOL_RETURN_IF_ERROR(store_->GetTable(*target_, &target));
    SPOOL_RETURN_IF_ERROR(ColumnsIn(target, OutputNames(), &target_columns_));
    target_key_.clear();
    for (size_t k : target.schema.key_columns()) {  // the groups' columns (Pipeline::FitTarget)
      const auto j = std::find(target_columns_.begin(), target_columns_.end(), k) - target_columns_.begin();
      if (static_cast<size_t>(j) >= group_columns_.size()) {
        return Status::Corruption(place_ + ": " + target.id.ToString() + " is not keyed by the aggregate's groups");
      }
      target_key_.push_back(static_cast<size_t>(j));
    }
    in_target_ = true;
    mark_target_ = mark;
    return Status::OK();
  }

  // Moves the groups a run kept in the target `marker` names into the state
  // table, in `setup`: the marker goes, and a state row comes for each of
  // the target's rows.
  Status MoveGroupsOut(const std::string& marker, Transaction* setup) {
    std::vector<std::string> parts;
    for (size_t at = 1; at <= marker.size();) {
      const size_t end = std::min(marker.find('\0', at), marker.size());
      parts.push_back(marker.substr(at, end - at));
      at = end + 1;
    }
    TableId from;
    if (parts.size() != 1 + output_.columns().size() || !TableId::Parse(parts[0], &from).ok()) {
      return Status::Corruption(place_ + ": the aggregate's state table holds a marker of " +
                                std::to_string(parts.size() - 1) + " columns, not " +
                                std::to_string(output_.columns().size()));
    }
    TableInfo target;
    Status s = store_->GetTable(from, &target);
    if (s.IsNotFound()) {
      return Status::InvalidArgument(place_ + ": the aggregate kept its groups in " + parts[0] +
                                     ", which no longer exists; a full refresh or a reset of the flow's checkpoint "
                                     "is needed");
    }
    SPOOL_RETURN_IF_ERROR(s);
    std::vector<size_t> columns;
    SPOOL_RETURN_IF_ERROR(ColumnsIn(target, {parts.begin() + 1, parts.end()}, &columns));
    const Transaction::TableRef state = setup->Table(state_id_);
    setup->Delete(state, {Bytes{marker}});
    const std::vector<size_t> group_columns(columns.begin(),
                                            columns.begin() + static_cast<long>(group_columns_.size()));
    const uint32_t slot = NewSlot();
    SPOOL_RETURN_IF_ERROR(store_->Read(from, {}, [&](const Row& row) {
      groups_[slot].key = KeyBytes(row, group_columns);
      FromOutput(row, columns, slot);
      setup->Write(state, Encode(slot));
      return true;
    }));
    groups_[slot] = Group{};
    free_slots_.push_back(slot);
    return Status::OK();
  }

  // The positions in `table` of the columns `names`, which hold the
  // groups. Errors: Corruption (one is missing: columns are never dropped).
  Status ColumnsIn(const TableInfo& table, const std::vector<std::string>& names, std::vector<size_t>* columns) const {
    Status s = FindColumns(table.schema, names, place_ + ": " + table.id.ToString(), "the groups' marker", columns);
    return s.ok() ? s : Status::Corruption(s.message());
  }

  // Reads into `slot` (whose key is set) the group a target's row holds,
  // the output's columns at `columns` of it: a count is its count; a sum,
  // minimum or maximum had inputs exactly when it is not NULL (how many
  // matters to none of them).
  void FromOutput(const Row& row, const std::vector<size_t>& columns, uint32_t slot) {
    Group& g = groups_[slot];
    g.window_start = 0;
    g.groups.clear();
    for (size_t j = 0; j < group_columns_.size(); ++j) g.groups.push_back(row[columns[j]]);
    Accumulator* accs = accs_.data() + slot * exprs_.size();
    for (size_t a = 0; a < exprs_.size(); ++a) {
      const Value& v = row[columns[group_columns_.size() + a]];
      if (step_.aggregates[a].fn == AggregateFn::kCount) accs[a] = {IsNull(v) ? 0 : std::get<int64_t>(v), Value()};
      else accs[a] = {IsNull(v) ? 0 : 1, v};
    }
  }

  // Windows that end at or below the watermark are final: appends them to
  // `out` and forgets them, in window then group order.
  void CloseWindows(BatchContext& ctx, std::vector<Row>* out) {
    const int64_t size = static_cast<int64_t>(step_.window->size_us);
    std::vector<Index::iterator> closed;
    for (auto it = index_.begin(); it != index_.end(); ++it) {
      if (groups_[it->second].window_start + size <= *watermark_) closed.push_back(it);
    }
    std::sort(closed.begin(), closed.end(), [](const auto& a, const auto& b) { return a->first < b->first; });
    for (const auto& it : closed) {
      const uint32_t slot = it->second;
      ctx.txn->Delete(state_id_, {Timestamp{groups_[slot].window_start}, Bytes{std::string(GroupKey(it->first))}});
      out->push_back(Output(slot));
      groups_[slot] = Group{};
      free_slots_.push_back(slot);
    }
    for (const auto& it : closed) index_.erase(it);
  }

  Status Accumulate(size_t i, const Value& v, Accumulator* acc) {
    const AggregateFn fn = step_.aggregates[i].fn;
    const bool first = acc->count++ == 0;
    switch (fn) {
      case AggregateFn::kCount:
        return Status::OK();
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
        const double d =
            std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
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

  // The state row of the group in `slot`.
  Row Encode(uint32_t slot) const {
    const Group& g = groups_[slot];
    Row row;
    row.reserve(state_schema_.columns().size());
    if (step_.window) row.push_back(Timestamp{g.window_start});
    row.push_back(Bytes{std::string(GroupKey(g.key))});
    row.insert(row.end(), g.groups.begin(), g.groups.end());
    const Accumulator* accs = accs_.data() + slot * exprs_.size();
    for (size_t a = 0; a < exprs_.size(); ++a) {
      row.push_back(accs[a].count);
      row.push_back(accs[a].count == 0 ? Value() : accs[a].value);
    }
    return row;
  }

  // Reads a state row into the group in `slot` (its key aside).
  Status Decode(const Row& row, uint32_t slot) {
    Group& g = groups_[slot];
    size_t c = 0;
    if (step_.window) g.window_start = std::get<Timestamp>(row[c++]).micros;
    ++c;  // __group
    g.groups.clear();
    for (size_t i = 0; i < group_columns_.size(); ++i) g.groups.push_back(row[c++]);
    Accumulator* accs = accs_.data() + slot * exprs_.size();
    for (size_t a = 0; a < exprs_.size(); ++a) {
      accs[a].count = std::get<int64_t>(row[c++]);
      accs[a].value = row[c++];
    }
    return Status::OK();
  }

  // The output row of the group in `slot`.
  Row Output(uint32_t slot) const {
    const Group& g = groups_[slot];
    Row row;
    row.reserve(output_.columns().size());
    if (step_.window) {
      row.push_back(Timestamp{g.window_start});
      row.push_back(Timestamp{g.window_start + static_cast<int64_t>(step_.window->size_us)});
    }
    row.insert(row.end(), g.groups.begin(), g.groups.end());
    const Accumulator* accs = accs_.data() + slot * exprs_.size();
    for (size_t a = 0; a < exprs_.size(); ++a) {
      const Accumulator& acc = accs[a];
      switch (step_.aggregates[a].fn) {
        case AggregateFn::kCount:
          row.push_back(acc.count);
          break;
        case AggregateFn::kAvg:
          row.push_back(acc.count == 0 ? Value() : Value(std::get<double>(acc.value) / static_cast<double>(acc.count)));
          break;
        default:
          row.push_back(acc.count == 0 ? Value() : acc.value);
          break;
      }
    }
    return row;
  }

  AggregateStep step_;
  std::string place_;
  std::vector<size_t> group_columns_;
  size_t time_column_ = 0;
  std::vector<Expression> exprs_;
  std::vector<std::optional<size_t>> columns_;  // per aggregate: its input column, when a bare reference
  Schema state_schema_;
  Store* store_ = nullptr;
  TableId state_id_;
  Index index_;
  std::vector<Group> groups_;
  std::vector<bool> dirty_;  // touched by the batch being processed
  std::vector<Accumulator> accs_;
  std::vector<uint32_t> free_slots_;
  std::vector<std::string> keys_;  // Process's, per row, kept for their capacity
  std::vector<uint32_t> slots_;
  std::optional<int64_t> watermark_;
  bool reset_ = false;
  std::optional<TableId> target_;  // the flow's (its last step's)
  bool only_writer_ = false;
  bool in_target_ = false;              // this run keeps the groups in target_ …
  bool mark_target_ = false;            // … and its first batch writes the marker
  std::vector<size_t> target_columns_;  // in_target_: each output column's position in the target
  std::vector<size_t> target_key_;      // … and the target's key columns, as indexes of group_columns_
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
