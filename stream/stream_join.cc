// Stream-to-stream inner join with a watermark: a row of either side
// matches the rows of the other side with equal keys and event times at
// most `within` apart, whichever batch they arrived in. Both sides' rows are
// buffered as state (one row each); a row whose time falls below the
// watermark less `within` can match no future row and is forgotten, and a
// row arriving below the watermark is late and dropped.
#include <algorithm>
#include <unordered_map>

#include "operators_internal.h"

namespace spool::stream_internal {
namespace {

struct Buffered {
  int64_t time = 0;
  int64_t ord = 0;  // unique within the side: the batch's version and the row's index
  Row row;
};

class StreamJoinOp : public Operator {
 public:
  Status Init(const StreamJoinStep& step, const Schema& left, std::unique_ptr<Source> right, const std::string& place) {
    step_ = step;
    place_ = place;
    right_ = std::move(right);
    const Schema& rs = right_->schema();
    std::vector<std::string> left_names, right_names;
    for (const JoinKey& k : step.on) left_names.push_back(k.left), right_names.push_back(k.right);
    if (step.on.empty()) return Status::InvalidArgument(place + ".on: name at least one pair of key columns");
    SPOOL_RETURN_IF_ERROR(CheckDuration(step.within_us, true, place, "within"));
    SPOOL_RETURN_IF_ERROR(CheckDuration(step.watermark_delay_us, true, place, "watermark"));
    SPOOL_RETURN_IF_ERROR(FindColumns(left, left_names, place, "on.left", &sides_[0].keys));
    SPOOL_RETURN_IF_ERROR(FindColumns(rs, right_names, place, "on.right", &sides_[1].keys));
    for (size_t i = 0; i < step.on.size(); ++i) {
      const ColumnType l = left.columns()[sides_[0].keys[i]].type, r = rs.columns()[sides_[1].keys[i]].type;
      if (l != r) {
        return Status::InvalidArgument(place + ": join key " + step.on[i].left + " (" + std::string(ColumnTypeName(l)) +
                                       ") and " + step.on[i].right + " (" + std::string(ColumnTypeName(r)) +
                                       ") have different types");
      }
    }
    std::vector<size_t> t;
    SPOOL_RETURN_IF_ERROR(FindColumns(left, {step.left_time}, place, "left_time", &t));
    sides_[0].time = t[0];
    SPOOL_RETURN_IF_ERROR(FindColumns(rs, {step.right_time}, place, "right_time", &t));
    sides_[1].time = t[0];
    if (left.columns()[sides_[0].time].type != ColumnType::kTimestamp ||
        rs.columns()[sides_[1].time].type != ColumnType::kTimestamp) {
      return Status::InvalidArgument(place + ": left_time and right_time must be timestamp columns");
    }
    std::vector<std::string> taken = step.columns;
    if (taken.empty()) {
      for (size_t c = 0; c < rs.columns().size(); ++c) {
        if (std::find(sides_[1].keys.begin(), sides_[1].keys.end(), c) == sides_[1].keys.end()) {
          taken.push_back(rs.columns()[c].name);
        }
      }
    }
    SPOOL_RETURN_IF_ERROR(FindColumns(rs, taken, place, "columns", &right_columns_));
    std::vector<Column> out = left.columns();
    for (size_t c : right_columns_) {
      if (left.FindColumn(rs.columns()[c].name)) {
        return Status::InvalidArgument(place + ": column '" + rs.columns()[c].name +
                                       "' is on both sides; pick the right side's columns with \"columns\" or rename "
                                       "them with a select before the join");
      }
      out.push_back(rs.columns()[c]);
    }
    SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(out), {}, place, &output_));
    for (int side = 0; side < 2; ++side) {
      std::vector<Column> columns = {{"__key", ColumnType::kBytes, false},
                                     {"__time", ColumnType::kTimestamp, false},
                                     {"__ord", ColumnType::kInt64, false}};
      for (Column c : (side == 0 ? left : rs).columns()) {
        c.nullable = true;
        columns.push_back(std::move(c));
      }
      SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(columns), {"__key", "__time", "__ord"}, place, &sides_[side].state));
    }
    return Status::OK();
  }

  std::string Fingerprint() const override {
    // The right source is part of it: its offsets mean nothing to another.
    std::string f = "stream_join(right=" +
                    // (files and topics were both named "topic:" here first: kept, so that
                    // their states stay usable)
                    (step_.right.kind == SourceKind::kDataset     ? "dataset:" + step_.right.dataset
                     : step_.right.kind == SourceKind::kJetStream ? "jetstream:" + SourceLocation(step_.right)
                                                                  : "topic:" + step_.right.path) +
                    " on=[";
    for (const JoinKey& k : step_.on) f += k.left + "=" + k.right + ",";
    return f + "] times=" + step_.left_time + "," + step_.right_time + ")";
  }
  std::vector<StateTableSpec> StateTables() const override {
    return {{"left", sides_[0].state}, {"right", sides_[1].state}};
  }
  std::optional<int64_t> watermark() const override { return watermark_; }
  void set_watermark(int64_t micros) override { watermark_ = micros; }
  Source* side() override { return right_.get(); }

  Status Start(Store* store, const stream_internal::StateTables& tables, Transaction* /*setup*/) override {
    store_ = store;
    watermark_.reset();
    for (int side = 0; side < 2; ++side) {
      Side& s = sides_[side];
      s.id = tables.ids[static_cast<size_t>(side)];
      s.buffer.clear();
      SPOOL_RETURN_IF_ERROR(store->Read(s.id, {}, [&](const Row& row) {
        Buffered b{std::get<Timestamp>(row[1]).micros, std::get<int64_t>(row[2]), Row(row.begin() + 3, row.end())};
        s.buffer.emplace(std::get<Bytes>(row[0]).data, std::move(b));
        return true;
      }));
    }
    return Status::OK();
  }

  Status Process(BatchContext& ctx, Batch* batch) override {
    const int64_t base = static_cast<int64_t>(store_->AvailableVersions().newest + 1) << 24;
    std::vector<Row> left = std::move(batch->rows), right = std::move(ctx.side.rows);
    Fresh fresh[2];
    std::optional<int64_t> max_time;
    SPOOL_RETURN_IF_ERROR(TakeArrivals(ctx, sides_[0], std::move(left), base, &fresh[0], &max_time));
    SPOOL_RETURN_IF_ERROR(TakeArrivals(ctx, sides_[1], std::move(right), base, &fresh[1], &max_time));
    std::vector<Row> out = Join(fresh[0], fresh[1]);
    for (int side = 0; side < 2; ++side) Buffer(ctx, sides_[side], fresh[side]);
    if (max_time) AdvanceWatermark(ctx, *max_time);
    batch->rows = std::move(out);
    return Status::OK();
  }

 private:
  struct Side {
    std::vector<size_t> keys;
    size_t time = 0;
    Schema state;
    TableId id;
    std::unordered_multimap<std::string, Buffered> buffer;
  };
  // A side's rows of this batch, by key, in the order they arrived.
  using Fresh = std::vector<std::pair<std::string, Buffered>>;

  // The rows that arrived on side `s` (from `base` on in the order of the
  // side's rows), into `*fresh`: a row with a NULL time or one behind the
  // watermark is late and dropped, one with a NULL key matches nothing.
  // Raises `*max_time` to their latest time.
  Status TakeArrivals(BatchContext& ctx, const Side& s, std::vector<Row> rows, int64_t base, Fresh* fresh,
                      std::optional<int64_t>* max_time) const {
    if (rows.size() >= (1u << 24)) return Status::InvalidArgument(place_ + ": a batch of 2^24 rows or more");
    int64_t index = 0;
    for (Row& row : rows) {
      if (IsNull(row[s.time])) {
        ++ctx.late_rows;
        continue;
      }
      const int64_t t = std::get<Timestamp>(row[s.time]).micros;
      if (watermark_ && t < *watermark_) {
        ++ctx.late_rows;
        continue;
      }
      *max_time = std::max(max_time->value_or(t), t);
      if (HasNull(row, s.keys)) continue;  // matches nothing
      std::string key = KeyBytes(row, s.keys);
      fresh->emplace_back(std::move(key), Buffered{t, base | index++, std::move(row)});
    }
    return Status::OK();
  }

  // New left rows against all right rows (buffered and new); new right rows
  // against buffered left rows only, so no pair is joined twice. Matches go
  // out in the order the rows arrived (by ord), whatever order the buffers
  // hold them in, so that a rerun writes the same rows in the same order.
  std::vector<Row> Join(const Fresh& left, const Fresh& right) const {
    std::vector<Row> out;
    auto emit = [&](const Row& l, const Row& r) {
      Row joined = l;
      for (size_t c : right_columns_) joined.push_back(r[c]);
      out.push_back(std::move(joined));
    };
    std::unordered_map<std::string_view, std::vector<const Buffered*>> fresh_right;
    for (const auto& [key, r] : right) fresh_right[key].push_back(&r);
    std::vector<const Buffered*> matches;
    for (const auto& [key, l] : left) {
      Matching(sides_[1], key, l.time, &matches);
      auto it = fresh_right.find(key);
      if (it != fresh_right.end()) {
        for (const Buffered* r : it->second) {
          if (Near(r->time, l.time)) matches.push_back(r);
        }
      }
      for (const Buffered* r : matches) emit(l.row, r->row);
    }
    for (const auto& [key, r] : right) {
      Matching(sides_[0], key, r.time, &matches);
      for (const Buffered* l : matches) emit(l->row, r.row);
    }
    return out;
  }

  // |a - b| <= within, without overflowing on extreme times.
  bool Near(int64_t a, int64_t b) const {
    const uint64_t gap = a > b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                               : static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
    return gap <= step_.within_us;
  }

  // The rows `other` buffers that match `key` at `time`, in arrival order.
  void Matching(const Side& other, const std::string& key, int64_t time, std::vector<const Buffered*>* matches) const {
    matches->clear();
    auto [begin, end] = other.buffer.equal_range(key);
    for (auto it = begin; it != end; ++it) {
      if (Near(it->second.time, time)) matches->push_back(&it->second);
    }
    std::sort(matches->begin(), matches->end(), [](const Buffered* a, const Buffered* b) { return a->ord < b->ord; });
  }

  // The side's new rows join its buffer and its state table.
  static void Buffer(BatchContext& ctx, Side& s, Fresh& fresh) {
    for (auto& [key, b] : fresh) {
      ctx.txn->Write(s.id, StateRow(key, b));
      s.buffer.emplace(std::move(key), std::move(b));
    }
  }

  // The watermark rises to `max_time` less its delay; rows older than it
  // less `within`, which no row to come can match, leave the buffers.
  void AdvanceWatermark(BatchContext& ctx, int64_t max_time) {
    watermark_ = std::max(watermark_.value_or(INT64_MIN), SubtractSaturating(max_time, step_.watermark_delay_us));
    const int64_t horizon = SubtractSaturating(*watermark_, step_.within_us);
    for (Side& s : sides_) {
      for (auto it = s.buffer.begin(); it != s.buffer.end();) {
        if (it->second.time < horizon) {
          ctx.txn->Delete(s.id, {Bytes{it->first}, Timestamp{it->second.time}, it->second.ord});
          it = s.buffer.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  static Row StateRow(const std::string& key, const Buffered& b) {
    Row row = {Bytes{key}, Timestamp{b.time}, b.ord};
    row.insert(row.end(), b.row.begin(), b.row.end());
    return row;
  }

  StreamJoinStep step_;
  std::string place_;
  std::unique_ptr<Source> right_;
  Side sides_[2];
  std::vector<size_t> right_columns_;
  Store* store_ = nullptr;
  std::optional<int64_t> watermark_;
};

}  // namespace

Status CompileStreamJoin(const StreamJoinStep& step, const Schema& input, const std::string& place, CompileContext& ctx,
                         std::unique_ptr<Operator>* op) {
  std::unique_ptr<Source> right;
  SPOOL_RETURN_IF_ERROR(ctx.make_source(step.right, place + ".stream_join.right", &right));
  if (!right->StateTables().empty()) {
    return Status::InvalidArgument(place + ".stream_join.right: the right side of a join is a dataset or a topic");
  }
  auto join = std::make_unique<StreamJoinOp>();
  SPOOL_RETURN_IF_ERROR(join->Init(step, input, std::move(right), place + ".stream_join"));
  *op = std::move(join);
  return Status::OK();
}

}  // namespace spool::stream_internal
