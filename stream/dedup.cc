// Deduplication by keys: the first row of each key passes, later ones are
// dropped. The keys seen are state (one row each); with a watermark, a key
// is forgotten once its time falls below it and rows below it are late.
#include <unordered_map>

#include "operators_internal.h"

namespace spool::stream_internal {
namespace {

class DedupOp : public Operator {
 public:
  Status Init(const DedupStep& step, const Schema& input, const std::string& place) {
    step_ = step;
    output_ = input;
    SPOOL_RETURN_IF_ERROR(FindColumns(input, step.keys, place, "keys", &keys_));
    if (step.watermark) {
      std::vector<size_t> time;
      SPOOL_RETURN_IF_ERROR(FindColumns(input, {step.watermark->time_column}, place + ".watermark", "time", &time));
      time_column_ = time[0];
      SPOOL_RETURN_IF_ERROR(CheckDuration(step.watermark->delay_us, true, place + ".watermark", "delay"));
      if (input.columns()[time_column_].type != ColumnType::kTimestamp) {
        return Status::InvalidArgument(place + ".watermark: time column '" + step.watermark->time_column +
                                       "' is not a timestamp");
      }
    }
    return MakeSchema({{"__key", ColumnType::kBytes, false}, {"__time", ColumnType::kTimestamp, true}}, {"__key"},
                      place, &state_schema_);
  }

  std::string Fingerprint() const override {
    std::string f = "dedup(keys=[";
    for (const std::string& k : step_.keys) f += k + ",";
    return f + "]" + (step_.watermark ? " time=" + step_.watermark->time_column : "") + ")";
  }
  std::vector<StateTableSpec> StateTables() const override { return {{"dedup", state_schema_}}; }
  std::optional<int64_t> watermark() const override { return watermark_; }
  void set_watermark(int64_t micros) override { watermark_ = micros; }

  Status Start(Store* store, const stream_internal::StateTables& tables, Transaction* /*setup*/) override {
    store_ = store;
    state_id_ = tables.ids[0];
    seen_.clear();
    watermark_.reset();
    if (!step_.watermark) return Status::OK();  // unbounded: read keys as they come
    return store_->Read(state_id_, {}, [&](const Row& row) {
      seen_[std::get<Bytes>(row[0]).data] = IsNull(row[1]) ? INT64_MIN : std::get<Timestamp>(row[1]).micros;
      return true;
    });
  }

  Status Process(BatchContext& ctx, Batch* batch) override {
    size_t kept = 0;
    std::optional<int64_t> max_time;
    for (Row& row : batch->rows) {
      std::optional<int64_t> t;
      if (step_.watermark) {
        if (IsNull(row[time_column_])) {
          ++ctx.late_rows;
          continue;
        }
        t = std::get<Timestamp>(row[time_column_]).micros;
        if (watermark_ && *t < *watermark_) {
          ++ctx.late_rows;
          continue;
        }
        max_time = std::max(max_time.value_or(*t), *t);
      }
      std::string key = KeyBytes(row, keys_);
      auto it = seen_.find(key);
      if (it == seen_.end() && !step_.watermark) {
        Row stored;
        bool found = false;
        SPOOL_RETURN_IF_ERROR(store_->Get(state_id_, {Bytes{key}}, &stored, &found));
        if (found) it = seen_.emplace(key, INT64_MIN).first;
      }
      if (it != seen_.end()) continue;
      seen_.emplace(key, t.value_or(INT64_MIN));
      ctx.txn->Write(state_id_, {Bytes{std::move(key)}, t ? Value(Timestamp{*t}) : Value()});
      if (&batch->rows[kept] != &row) batch->rows[kept] = std::move(row);
      ++kept;
    }
    batch->rows.resize(kept);
    if (max_time) {
      watermark_ = std::max(watermark_.value_or(INT64_MIN), SubtractSaturating(*max_time, step_.watermark->delay_us));
      for (auto it = seen_.begin(); it != seen_.end();) {
        if (it->second < *watermark_) {
          ctx.txn->Delete(state_id_, {Bytes{it->first}});
          it = seen_.erase(it);
        } else {
          ++it;
        }
      }
    }
    return Status::OK();
  }

 private:
  DedupStep step_;
  std::vector<size_t> keys_;
  size_t time_column_ = 0;
  Schema state_schema_;
  Store* store_ = nullptr;
  TableId state_id_;
  std::unordered_map<std::string, int64_t> seen_;  // key -> its time
  std::optional<int64_t> watermark_;
};

}  // namespace

Status CompileDedup(const DedupStep& step, const Schema& input, const std::string& place,
                    std::unique_ptr<Operator>* op) {
  auto dedup = std::make_unique<DedupOp>();
  SPOOL_RETURN_IF_ERROR(dedup->Init(step, input, place + ".dedup"));
  *op = std::move(dedup);
  return Status::OK();
}

Status CompileStatefulStep(const StepSpec& spec, const Schema& input, const std::string& place, CompileContext& ctx,
                           std::unique_ptr<Operator>* op) {
  if (const auto* agg = std::get_if<AggregateStep>(&spec)) return CompileAggregate(*agg, input, place, op);
  if (const auto* dedup = std::get_if<DedupStep>(&spec)) return CompileDedup(*dedup, input, place, op);
  if (const auto* join = std::get_if<StreamJoinStep>(&spec)) return CompileStreamJoin(*join, input, place, ctx, op);
  if (const auto* cdc = std::get_if<AutoCdcStep>(&spec)) return CompileAutoCdc(*cdc, input, place, op);
  return Status::InvalidArgument(place + ": unknown step");
}

}  // namespace spool::stream_internal
