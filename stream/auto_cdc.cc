// AUTO CDC (APPLY CHANGES): change events applied by key in sequence_by
// order, whatever order they arrive in.
//
// SCD type 1 keeps one row per key: the event with the highest sequence
// wins. The state holds each key's highest sequence and whether it was a
// delete (a tombstone), so a late older event neither overwrites a newer
// row nor resurrects a deleted one. Of events with equal sequences the
// first to arrive counts.
//
// SCD type 2 keeps history rows with __START_AT and __END_AT (the
// sequences that opened and closed them). The state holds every event of
// every key; a batch refolds the keys it touches and writes the difference,
// so an event arriving out of order lands where its sequence puts it.
#include <unordered_map>

#include "operators_internal.h"
#include "spool/stream/expression.h"

namespace spool::stream_internal {
namespace {

struct CdcEvent {
  Value seq;
  bool deleted = false;
  Row values;  // the selected non-key columns
};

class AutoCdcOp : public Operator {
 public:
  Status Init(const AutoCdcStep& step, const Schema& input, const std::string& place) {
    step_ = step;
    place_ = place;
    SPOOL_RETURN_IF_ERROR(FindColumns(input, step.keys, place, "keys", &keys_));
    std::vector<size_t> seq;
    SPOOL_RETURN_IF_ERROR(FindColumns(input, {step.sequence_by}, place, "sequence_by", &seq));
    seq_ = seq[0];
    seq_type_ = input.columns()[seq_].type;
    if (seq_type_ == ColumnType::kBool || seq_type_ == ColumnType::kBytes) {
      return Status::InvalidArgument(place + ": sequence_by column '" + step.sequence_by + "' is " +
                                     std::string(ColumnTypeName(seq_type_)) +
                                     "; it must be a number, string or timestamp");
    }
    if (!step.apply_as_deletes.empty()) {
      Status s = Expression::Parse(step.apply_as_deletes, input, &deletes_);
      if (!s.ok()) return Status::InvalidArgument(place + ".apply_as_deletes: " + std::string(s.message()));
      if (deletes_.type() != ColumnType::kBool) {
        return Status::InvalidArgument(place + ".apply_as_deletes: the condition is " +
                                       std::string(ColumnTypeName(deletes_.type())) + ", not bool");
      }
    }
    if (!step.column_list.empty() && !step.except_column_list.empty()) {
      return Status::InvalidArgument(place + ": give column_list or except_column_list, not both");
    }
    if (step.scd_type != 1 && step.scd_type != 2)
      return Status::InvalidArgument(place + ": stored_as_scd_type is 1 or 2");
    if (!step.track_history_column_list.empty() && !step.track_history_except_column_list.empty()) {
      return Status::InvalidArgument(place +
                                     ": give track_history_column_list or track_history_except_column_list, not both");
    }
    std::vector<size_t> chosen;
    SPOOL_RETURN_IF_ERROR(ChooseColumns(step, input, place, &chosen));
    return MakeSchemas(step, input, place, chosen);
  }

  std::string Fingerprint() const override {
    std::string f = "auto_cdc(scd" + std::to_string(step_.scd_type) + " keys=[";
    for (const std::string& k : step_.keys) f += k + ",";
    f += "] sequence_by=" + step_.sequence_by + " columns=[";
    for (size_t c = 0; c < output_.columns().size(); ++c) f += output_.columns()[c].name + ",";
    return f + "])";
  }
  std::vector<StateTableSpec> StateTables() const override { return {{"cdc", state_schema_}}; }

  Status Start(Store* store, const stream_internal::StateTables& tables, Transaction* /*setup*/) override {
    store_ = store;
    state_id_ = tables.ids[0];
    latest_.clear();
    return Status::OK();
  }

  Status Process(BatchContext& ctx, Batch* batch) override {
    // The batch's events by key, in arrival order.
    std::map<std::string, std::vector<CdcEvent>> by_key;
    std::map<std::string, Row> key_values;
    for (const Row& row : batch->rows) {
      for (size_t i = 0; i < keys_.size(); ++i) {
        if (IsNull(row[keys_[i]])) {
          return Status::InvalidArgument(place_ + ": key column '" + step_.keys[i] + "' is NULL in a change event");
        }
      }
      if (IsNull(row[seq_])) {
        return Status::InvalidArgument(place_ + ": sequence_by column '" + step_.sequence_by +
                                       "' is NULL in a change event");
      }
      CdcEvent e;
      e.seq = row[seq_];
      if (!step_.apply_as_deletes.empty()) SPOOL_RETURN_IF_ERROR(deletes_.Matches(row, &e.deleted));
      for (size_t c : values_) e.values.push_back(row[c]);
      std::string key = KeyBytes(row, keys_);
      if (!key_values.count(key)) {
        Row k;
        for (size_t c : keys_) k.push_back(row[c]);
        key_values.emplace(key, std::move(k));
      }
      by_key[key].push_back(std::move(e));
    }
    batch->rows.clear();
    batch->deletes.clear();
    for (auto& [key, events] : by_key) {
      const Row& k = key_values.at(key);
      if (step_.scd_type == 1) SPOOL_RETURN_IF_ERROR(ApplyType1(ctx, key, k, events, batch));
      else SPOOL_RETURN_IF_ERROR(ApplyType2(ctx, k, events, batch));
    }
    return Status::OK();
  }

 private:
  // The selected columns (column_list, or all but except_column_list),
  // which must keep the keys.
  Status ChooseColumns(const AutoCdcStep& step, const Schema& input, const std::string& place,
                       std::vector<size_t>* chosen) const {
    if (!step.column_list.empty()) {
      SPOOL_RETURN_IF_ERROR(FindColumns(input, step.column_list, place, "column_list", chosen));
    } else {
      std::vector<size_t> except;
      SPOOL_RETURN_IF_ERROR(FindColumns(input, step.except_column_list, place, "except_column_list", &except));
      for (size_t c = 0; c < input.columns().size(); ++c) {
        if (std::find(except.begin(), except.end(), c) == except.end()) chosen->push_back(c);
      }
    }
    for (size_t k : keys_) {
      if (std::find(chosen->begin(), chosen->end(), k) == chosen->end()) {
        return Status::InvalidArgument(place + ": key column '" + input.columns()[k].name +
                                       "' must be kept in the target");
      }
    }
    return Status::OK();
  }

  // The output's columns: the keys first as the input orders them, then the
  // other selected ones (values_), then in SCD type 2 __START_AT and
  // __END_AT. The state's: the keys, the sequence, whether it deletes, and
  // in SCD type 2 the values.
  Status MakeSchemas(const AutoCdcStep& step, const Schema& input, const std::string& place,
                     const std::vector<size_t>& chosen) {
    std::vector<Column> out, state;
    for (size_t k : keys_) {
      Column c = input.columns()[k];
      c.nullable = false;
      out.push_back(c);
      state.push_back(c);
    }
    state.push_back({"__seq", seq_type_, false});
    state.push_back({"__deleted", ColumnType::kBool, false});
    for (size_t c : chosen) {
      if (std::find(keys_.begin(), keys_.end(), c) != keys_.end()) continue;
      values_.push_back(c);
      Column column = input.columns()[c];
      out.push_back(column);
      column.nullable = true;
      if (step.scd_type == 2) state.push_back(column);
    }
    std::vector<std::string> key = step.keys;
    std::vector<std::string> state_key = step.keys;
    if (step.scd_type == 2) {
      out.push_back({"__START_AT", seq_type_, false});
      out.push_back({"__END_AT", seq_type_, true});
      key.push_back("__START_AT");
      state_key.push_back("__seq");
      SPOOL_RETURN_IF_ERROR(TrackHistory(step, input, place));
    } else if (!step.track_history_column_list.empty() || !step.track_history_except_column_list.empty()) {
      return Status::InvalidArgument(place + ": track_history lists apply to stored_as_scd_type 2");
    }
    SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(out), key, place, &output_));
    SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(state), state_key, place, &state_schema_));
    output_key_ = key;
    return Status::OK();
  }

  // The values whose changes open a new history row (tracked_, as indexes
  // into values_): those track_history_column_list names, or all but those
  // track_history_except_column_list names.
  Status TrackHistory(const AutoCdcStep& step, const Schema& input, const std::string& place) {
    std::vector<size_t> listed;
    const bool only = !step.track_history_column_list.empty();
    SPOOL_RETURN_IF_ERROR(
        FindColumns(input, only ? step.track_history_column_list : step.track_history_except_column_list, place,
                    only ? "track_history_column_list" : "track_history_except_column_list", &listed));
    for (size_t i = 0; i < values_.size(); ++i) {
      const bool in_list = std::find(listed.begin(), listed.end(), values_[i]) != listed.end();
      if (in_list == only) tracked_.push_back(i);
    }
    return Status::OK();
  }

  struct Latest {
    Value seq;
    bool deleted = false;
  };

  Status ApplyType1(BatchContext& ctx, const std::string& key, const Row& k, const std::vector<CdcEvent>& events,
                    Batch* batch) {
    auto it = latest_.find(key);
    if (it == latest_.end()) {
      Row stored;
      bool found = false;
      SPOOL_RETURN_IF_ERROR(store_->Get(state_id_, k, &stored, &found));
      std::optional<Latest> latest;
      if (found) latest = Latest{stored[keys_.size()], std::get<bool>(stored[keys_.size() + 1])};
      it = latest_.emplace(key, latest).first;
    }
    const CdcEvent* winner = nullptr;
    for (const CdcEvent& e : events) {
      const Value& best = winner ? winner->seq : (it->second ? it->second->seq : Value());
      if ((winner || it->second) && !(best < e.seq)) continue;
      winner = &e;
    }
    if (winner == nullptr) return Status::OK();
    it->second = Latest{winner->seq, winner->deleted};
    Row state = k;
    state.push_back(winner->seq);
    state.push_back(winner->deleted);
    ctx.txn->Write(state_id_, std::move(state));
    if (winner->deleted) {
      batch->deletes.push_back(k);
    } else {
      Row out = k;
      out.insert(out.end(), winner->values.begin(), winner->values.end());
      batch->rows.push_back(std::move(out));
    }
    return Status::OK();
  }

  // The history rows of one key's events (sorted by sequence).
  std::vector<Row> Fold(const Row& k, const std::vector<CdcEvent>& events) const {
    std::vector<Row> rows;
    bool open = false;
    const size_t start = k.size() + values_.size();
    for (const CdcEvent& e : events) {
      if (e.deleted) {
        if (open) rows.back()[start + 1] = e.seq;
        open = false;
        continue;
      }
      if (open) {
        Row& current = rows.back();
        bool same = true;
        for (size_t t : tracked_) same = same && current[k.size() + t] == e.values[t];
        if (same) {
          for (size_t i = 0; i < e.values.size(); ++i) current[k.size() + i] = e.values[i];
          continue;
        }
        current[start + 1] = e.seq;
      }
      Row row = k;
      row.insert(row.end(), e.values.begin(), e.values.end());
      row.push_back(e.seq);
      row.push_back(Value());
      rows.push_back(std::move(row));
      open = true;
    }
    return rows;
  }

  Status ApplyType2(BatchContext& ctx, const Row& k, const std::vector<CdcEvent>& incoming, Batch* batch) {
    std::vector<CdcEvent> stored;
    ReadOptions range;
    range.start_key = k;
    Status decoded;
    SPOOL_RETURN_IF_ERROR(store_->Read(state_id_, range, [&](const Row& row) {
      for (size_t i = 0; i < k.size(); ++i) {
        if (!(row[i] == k[i])) return false;
      }
      CdcEvent e;
      e.seq = row[k.size()];
      e.deleted = std::get<bool>(row[k.size() + 1]);
      e.values.assign(row.begin() + static_cast<std::ptrdiff_t>(k.size() + 2), row.end());
      stored.push_back(std::move(e));
      return true;
    }));
    std::vector<CdcEvent> merged = stored;
    bool added = false;
    for (const CdcEvent& e : incoming) {
      auto at = std::lower_bound(merged.begin(), merged.end(), e.seq,
                                 [](const CdcEvent& a, const Value& seq) { return a.seq < seq; });
      if (at != merged.end() && at->seq == e.seq) continue;  // the first with this sequence counts
      merged.insert(at, e);
      Row state = k;
      state.push_back(e.seq);
      state.push_back(e.deleted);
      state.insert(state.end(), e.values.begin(), e.values.end());
      ctx.txn->Write(state_id_, std::move(state));
      added = true;
    }
    if (!added) return Status::OK();
    const std::vector<Row> before = Fold(k, stored), after = Fold(k, merged);
    const size_t start = k.size() + values_.size();
    std::map<Value, const Row*> old_rows;
    for (const Row& row : before) old_rows.emplace(row[start], &row);
    for (const Row& row : after) {
      auto it = old_rows.find(row[start]);
      const bool same = it != old_rows.end() && *it->second == row;
      if (it != old_rows.end()) old_rows.erase(it);
      if (!same) batch->rows.push_back(row);
    }
    for (const auto& [start_at, row] : old_rows) {
      Row key = k;
      key.push_back(start_at);
      batch->deletes.push_back(std::move(key));
    }
    return Status::OK();
  }

  AutoCdcStep step_;
  std::string place_;
  std::vector<size_t> keys_;
  size_t seq_ = 0;
  ColumnType seq_type_ = ColumnType::kInt64;
  Expression deletes_;
  std::vector<size_t> values_;   // input columns kept besides the keys
  std::vector<size_t> tracked_;  // SCD 2: indexes into values_
  Schema state_schema_;
  Store* store_ = nullptr;
  TableId state_id_;
  std::unordered_map<std::string, std::optional<Latest>> latest_;  // SCD 1, by key
};

}  // namespace

Status CompileAutoCdc(const AutoCdcStep& step, const Schema& input, const std::string& place,
                      std::unique_ptr<Operator>* op) {
  auto cdc = std::make_unique<AutoCdcOp>();
  SPOOL_RETURN_IF_ERROR(cdc->Init(step, input, place + ".auto_cdc"));
  *op = std::move(cdc);
  return Status::OK();
}

}  // namespace spool::stream_internal
