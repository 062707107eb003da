// Stateless operators (filter, select, map, lookup join) and the shared
// helpers of the stateful ones.
#include <bit>
#include <unordered_map>

#include "flow_parts.h"
#include "operators_internal.h"
#include "spool/stream/expression.h"

namespace spool::stream_internal {

void AppendKeyBytes(const Value& value, std::string* out) {
  // The type's digit and a fixed-width part are made in a buffer and
  // appended at once: a push_back per byte checks the capacity each time.
  char head[9];
  head[0] = static_cast<char>('0' + value.index());
  size_t n = 1;
  auto fixed = [&](uint64_t v) {
    for (size_t i = 0; i < 8; ++i) head[1 + i] = static_cast<char>(v >> (56 - 8 * i));
    n = 9;
  };
  std::string_view chars;  // after the head: a string's bytes, the head holding its length
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) fixed(static_cast<uint64_t>(v));
        else if constexpr (std::is_same_v<T, double>) fixed(std::bit_cast<uint64_t>(v));
        else if constexpr (std::is_same_v<T, std::string>) {
          fixed(v.size());
          chars = v;
        } else if constexpr (std::is_same_v<T, bool>) head[n++] = v ? '1' : '0';
        else if constexpr (std::is_same_v<T, Timestamp>) fixed(static_cast<uint64_t>(v.micros));
        else if constexpr (std::is_same_v<T, Bytes>) {
          fixed(v.data.size());
          chars = v.data;
        }
      },
      value);
  out->append(head, n);
  out->append(chars);
}

std::string KeyBytes(const Row& row, const std::vector<size_t>& columns) {
  std::string out;
  for (size_t c : columns) AppendKeyBytes(row[c], &out);
  return out;
}

Status FindColumns(const Schema& schema, const std::vector<std::string>& names, const std::string& place,
                   std::string_view what, std::vector<size_t>* columns) {
  columns->clear();
  for (const std::string& name : names) {
    std::optional<size_t> c = schema.FindColumn(name);
    if (!c)
      return Status::InvalidArgument(place + ": " + std::string(what) + " names unknown column '" + name +
                                     "' (columns: " + ColumnNames(schema) + ")");
    columns->push_back(*c);
  }
  return Status::OK();
}

std::string ColumnNames(const Schema& schema) {
  std::string out;
  for (const Column& c : schema.columns()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

Status MakeSchema(std::vector<Column> columns, const std::vector<std::string>& key, const std::string& place,
                  Schema* schema) {
  Status s = Schema::Make(std::move(columns), key, schema);
  if (!s.ok()) return Status::InvalidArgument(place + ": " + std::string(s.message()));
  return Status::OK();
}

Status CheckDuration(uint64_t micros, bool allow_zero, const std::string& place, std::string_view what) {
  if ((micros == 0 && !allow_zero) || micros > static_cast<uint64_t>(INT64_MAX)) {
    return Status::InvalidArgument(place + ": " + std::string(what) + " must be " +
                                   (allow_zero ? "" : "longer than zero and ") + "at most 2^63 microseconds");
  }
  return Status::OK();
}

std::string StateTableStem(const std::string& flow) {
  const size_t dot = flow.rfind('.');
  if (dot == std::string::npos) return flow;
  uint64_t hash = 14695981039346656037ull;  // FNV-1a: stable wherever the store is opened
  for (char c : flow) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string stem = flow.substr(dot + 1, 60) + "_";
  for (int shift = 60; shift >= 32; shift -= 4) stem += kHex[(hash >> shift) & 0xf];
  return stem;
}

Status StateTableId(const std::string& flow, const std::string& suffix, TableId* id) {
  return TableId::Parse("__spool.state." + StateTableStem(flow) + "__" + suffix, id);
}

namespace {

class FilterOp : public Operator {
 public:
  FilterOp(Expression condition, const Schema& input) : condition_(std::move(condition)) { output_ = input; }
  Status Process(BatchContext&, Batch* batch) override {
    size_t kept = 0;
    for (Row& row : batch->rows) {
      bool match = false;
      SPOOL_RETURN_IF_ERROR(condition_.Matches(row, &match));
      if (!match) continue;
      if (&batch->rows[kept] != &row) batch->rows[kept] = std::move(row);
      ++kept;
    }
    batch->rows.resize(kept);
    return Status::OK();
  }
  bool ProcessesAhead() const override { return true; }
  void InputsRead(const std::vector<bool>& outputs, std::vector<bool>* inputs) const override {
    *inputs = outputs;  // its rows pass on whole
    condition_.MarkColumnsRead(inputs);
  }

 private:
  Expression condition_;
};

class SelectOp : public Operator {
 public:
  SelectOp(std::vector<Expression> exprs, Schema output) : exprs_(std::move(exprs)) { output_ = std::move(output); }
  Status Process(BatchContext&, Batch* batch) override {
    Row out;
    for (Row& row : batch->rows) {
      out.resize(exprs_.size());  // it holds the previous input row
      for (size_t i = 0; i < exprs_.size(); ++i) SPOOL_RETURN_IF_ERROR(exprs_[i].Evaluate(row, &out[i]));
      row.swap(out);
    }
    return Status::OK();
  }
  bool ProcessesAhead() const override { return true; }
  // Every expression is evaluated, read or not: one may fail (a cast).
  void InputsRead(const std::vector<bool>&, std::vector<bool>* inputs) const override {
    inputs->assign(inputs->size(), false);
    for (const Expression& e : exprs_) e.MarkColumnsRead(inputs);
  }

 private:
  std::vector<Expression> exprs_;
};

class MapOp : public Operator {
 public:
  MapOp(MapStep step, Schema output, std::string place) : step_(std::move(step)), place_(std::move(place)) {
    output_ = std::move(output);
  }
  Status Process(BatchContext&, Batch* batch) override {
    std::vector<Row> out;
    for (const Row& row : batch->rows) {
      const size_t before = out.size();
      Status s = step_.fn(row, &out);
      if (!s.ok()) return s.WithContext(place_);
      for (size_t i = before; i < out.size(); ++i) {
        s = output_.Validate(out[i]);
        if (!s.ok())
          return Status::InvalidArgument(place_ +
                                         ": emitted a row that does not fit its columns: " + std::string(s.message()));
      }
    }
    batch->rows = std::move(out);
    return Status::OK();
  }

 private:
  MapStep step_;
  std::string place_;
};

// Each row joined with the current rows of a table: by point reads when the
// join keys are the table's primary key, otherwise through a hash table of
// the table built once per batch.
class LookupJoinOp : public Operator {
 public:
  Status Init(const LookupJoinStep& step, const Schema& input, const TableInfo& table, const std::string& place) {
    step_ = step;
    table_ = table;
    std::vector<std::string> left_names, right_names;
    for (const JoinKey& k : step.on) left_names.push_back(k.left), right_names.push_back(k.right);
    SPOOL_RETURN_IF_ERROR(FindColumns(input, left_names, place, "on.left", &left_keys_));
    SPOOL_RETURN_IF_ERROR(FindColumns(table.schema, right_names, place, "on.right", &right_keys_));
    for (size_t i = 0; i < left_keys_.size(); ++i) {
      const ColumnType l = input.columns()[left_keys_[i]].type, r = table.schema.columns()[right_keys_[i]].type;
      if (l != r) {
        return Status::InvalidArgument(place + ": join key " + step.on[i].left + " (" + std::string(ColumnTypeName(l)) +
                                       ") and " + step.on[i].right + " (" + std::string(ColumnTypeName(r)) +
                                       ") have different types");
      }
    }
    std::vector<std::string> taken = step.columns;
    if (taken.empty()) {
      for (size_t c = 0; c < table.schema.columns().size(); ++c) {
        if (std::find(right_keys_.begin(), right_keys_.end(), c) == right_keys_.end()) {
          taken.push_back(table.schema.columns()[c].name);
        }
      }
    }
    SPOOL_RETURN_IF_ERROR(FindColumns(table.schema, taken, place, "columns", &right_columns_));
    std::vector<Column> columns = input.columns();
    for (size_t c : right_columns_) {
      Column column = table.schema.columns()[c];
      if (input.FindColumn(column.name)) {
        return Status::InvalidArgument(place + ": column '" + column.name + "' of " + step.table +
                                       " is also a column of the stream; pick the table's columns with \"columns\" "
                                       "or rename the stream's with a select");
      }
      if (step.type == JoinType::kLeft) column.nullable = true;
      columns.push_back(std::move(column));
    }
    point_reads_ = right_keys_ == table.schema.key_columns();
    return MakeSchema(std::move(columns), {}, place, &output_);
  }

  Status Process(BatchContext& ctx, Batch* batch) override {
    const TableId& id = table_.id;
    if (!point_reads_) {
      // The table by join key, built again only when the table changed.
      TableInfo info;
      SPOOL_RETURN_IF_ERROR(ctx.store->GetTable(id, &info));
      const uint64_t bound = ctx.store->LastChangeBound(info);
      if (info.uid != cached_uid_ || bound != cached_bound_) {
        table_by_key_.clear();
        cached_uid_ = 0;
        SPOOL_RETURN_IF_ERROR(ctx.store->Read(id, {}, [&](const Row& row) {
          if (!HasNull(row, right_keys_)) table_by_key_.emplace(KeyBytes(row, right_keys_), row);
          return true;
        }));
        cached_uid_ = info.uid;
        cached_bound_ = bound;
      }
    }
    const auto& table = table_by_key_;
    std::vector<Row> out;
    Row key, found;
    for (Row& row : batch->rows) {
      std::vector<const Row*> matches;
      if (!HasNull(row, left_keys_)) {
        if (point_reads_) {
          key.clear();
          for (size_t c : left_keys_) key.push_back(row[c]);
          bool exists = false;
          SPOOL_RETURN_IF_ERROR(ctx.store->Get(id, key, &found, &exists));
          if (exists) matches.push_back(&found);
        } else {
          auto [begin, end] = table.equal_range(KeyBytes(row, left_keys_));
          for (auto it = begin; it != end; ++it) matches.push_back(&it->second);
        }
      }
      if (matches.empty() && step_.type == JoinType::kLeft) {
        Row joined = std::move(row);
        joined.resize(output_.columns().size());
        out.push_back(std::move(joined));
        continue;
      }
      for (const Row* match : matches) {
        Row joined = row;
        for (size_t c : right_columns_) joined.push_back((*match)[c]);
        out.push_back(std::move(joined));
      }
    }
    batch->rows = std::move(out);
    return Status::OK();
  }

 private:
  LookupJoinStep step_;
  TableInfo table_;
  std::vector<size_t> left_keys_, right_keys_, right_columns_;
  bool point_reads_ = false;
  std::unordered_multimap<std::string, Row> table_by_key_;  // not point reads: the table by join key …
  uint64_t cached_uid_ = 0;                                 // … as of this table …
  uint64_t cached_bound_ = 0;                               // … and its LastChangeBound
};

}  // namespace

bool HasNull(const Row& row, const std::vector<size_t>& columns) {
  for (size_t c : columns) {
    if (IsNull(row[c])) return true;
  }
  return false;
}

Status CompileStep(const StepSpec& spec, const Schema& input, const std::string& place, CompileContext& ctx,
                   std::unique_ptr<Operator>* op) {
  if (const auto* filter = std::get_if<FilterStep>(&spec)) {
    Expression condition;
    Status s = Expression::Parse(filter->condition, input, &condition);
    if (!s.ok()) return Status::InvalidArgument(place + ".filter: " + std::string(s.message()));
    if (condition.type() != ColumnType::kBool) {
      return Status::InvalidArgument(place + ".filter: the condition is " +
                                     std::string(ColumnTypeName(condition.type())) + ", not bool");
    }
    *op = std::make_unique<FilterOp>(std::move(condition), input);
    return Status::OK();
  }
  if (const auto* select = std::get_if<SelectStep>(&spec)) {
    std::vector<Expression> exprs;
    std::vector<Column> columns;
    for (size_t i = 0; i < select->columns.size(); ++i) {
      const auto& [name, text] = select->columns[i];
      Expression e;
      Status s = Expression::Parse(text, input, &e);
      if (!s.ok())
        return Status::InvalidArgument(place + ".select[" + std::to_string(i) + "] " + name + ": " +
                                       std::string(s.message()));
      columns.push_back(Column{name, e.type(), e.nullable()});
      exprs.push_back(std::move(e));
    }
    Schema output;
    SPOOL_RETURN_IF_ERROR(MakeSchema(std::move(columns), {}, place + ".select", &output));
    *op = std::make_unique<SelectOp>(std::move(exprs), std::move(output));
    return Status::OK();
  }
  if (const auto* map = std::get_if<MapStep>(&spec)) {
    if (!map->fn) return Status::InvalidArgument(place + ".map " + map->name + ": no function given");
    Schema output;
    SPOOL_RETURN_IF_ERROR(MakeSchema(map->columns, {}, place + ".map " + map->name, &output));
    *op = std::make_unique<MapOp>(*map, std::move(output), place + ".map " + map->name);
    return Status::OK();
  }
  if (const auto* join = std::get_if<LookupJoinStep>(&spec)) {
    TableInfo table;
    Status s = ctx.resolve_table(join->table, &table);
    if (!s.ok()) return Status::InvalidArgument(place + ".lookup_join: " + std::string(s.message()));
    auto lookup = std::make_unique<LookupJoinOp>();
    SPOOL_RETURN_IF_ERROR(lookup->Init(*join, input, table, place + ".lookup_join"));
    *op = std::move(lookup);
    return Status::OK();
  }
  return CompileStatefulStep(spec, input, place, ctx, op);
}

}  // namespace spool::stream_internal
