#include "store_model.h"

#include <algorithm>

#include "row_codec.h"

namespace spool::crashtest {
namespace {

std::string AppendKey(uint64_t n) {
  std::string key;
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>((n >> shift) & 0xff));
  return key;
}

Row Widen(Row row, size_t width) {
  row.resize(std::max(row.size(), width), Value{});
  return row;
}

std::string DescribeValue(const Value& v) {
  if (IsNull(v)) return "null";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* t = std::get_if<Timestamp>(&v)) return "ts:" + std::to_string(t->micros);
  return "bytes(" + std::to_string(std::get<Bytes>(v).data.size()) + ")";
}

bool SameTable(const TableInfo& a, const TableInfo& b) {
  return a.id == b.id && a.kind == b.kind && a.schema == b.schema && a.properties == b.properties;
}

}  // namespace

std::string DescribeRow(const Row& row) {
  std::string out = "[";
  for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + DescribeValue(row[i]);
  return out + "]";
}

std::optional<ModelState> StoreModel::Apply(const Transaction& txn) const {
  if (txn.empty() || txn.operation().empty()) return std::nullopt;
  ModelState next = newest_state();
  next.timestamp_us = 0;  // set when the commit is acknowledged
  const uint64_t version = next_;
  for (const Transaction::Op& any : txn.ops()) {
    bool ok = std::visit(
        [&](const auto& op) -> bool {
          using Op = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<Op, Transaction::CheckpointOp>) {
            if (op.flow.empty()) return false;
            if (op.data) next.checkpoints[op.flow] = *op.data;
            else next.checkpoints.erase(op.flow);
            return true;
          } else {
            const TableId& id = txn.table(op.table);
            const std::string name = id.ToString();
            auto it = next.tables.find(name);
            if constexpr (std::is_same_v<Op, Transaction::CreateOp>) {
              if (it != next.tables.end() || op.schema.columns().empty()) return false;
              ModelTable table;
              table.info = TableInfo{id, version, op.kind, op.schema, {}};
              for (const auto& [k, v] : op.properties) {
                if (!v.empty()) table.info.properties[k] = v;
              }
              next.tables[name] = std::move(table);
              return true;
            } else {
              if (it == next.tables.end()) return false;
              ModelTable& table = it->second;
              const Schema& schema = table.info.schema;
              if constexpr (std::is_same_v<Op, Transaction::AddColumnOp>) {
                if (!op.column.nullable) return false;
                std::vector<Column> columns = schema.columns();
                columns.push_back(op.column);
                std::vector<std::string> key;
                for (size_t index : schema.key_columns()) key.push_back(columns[index].name);
                Schema wider;
                if (!Schema::Make(std::move(columns), key, &wider).ok()) return false;
                table.info.schema = wider;
                for (auto& [k, row] : table.rows) row.push_back(Value{});
                return true;
              } else if constexpr (std::is_same_v<Op, Transaction::SetPropertiesOp>) {
                for (const auto& [k, v] : op.properties) {
                  if (k.empty()) return false;
                  if (v.empty()) table.info.properties.erase(k);
                  else table.info.properties[k] = v;
                }
                return true;
              } else if constexpr (std::is_same_v<Op, Transaction::DropOp>) {
                next.tables.erase(it);
                return true;
              } else if constexpr (std::is_same_v<Op, Transaction::WriteOp>) {
                if (!schema.Validate(op.row).ok()) return false;
                if (!schema.has_key()) {
                  table.rows[AppendKey(table.next_append++)] = op.row;
                } else {
                  std::string key;
                  EncodeKey(schema, op.row, &key);
                  table.rows[key] = op.row;
                }
                return true;
              } else if constexpr (std::is_same_v<Op, Transaction::DeleteOp>) {
                std::string key;
                if (!schema.has_key() || !EncodeKeyValues(schema, op.key, false, &key).ok()) return false;
                table.rows.erase(key);
                return true;
              } else {
                static_assert(std::is_same_v<Op, Transaction::TruncateOp>);
                table.rows.clear();
                return true;
              }
            }
          }
        },
        any);
    if (!ok) return std::nullopt;
  }
  return next;
}

std::optional<ModelState> StoreModel::Restore(const std::string& name, uint64_t version) const {
  if (version == 0 || states_.count(version) == 0) return std::nullopt;
  ModelState next = newest_state();
  next.timestamp_us = 0;
  auto now = next.tables.find(name);
  const auto& old_tables = states_.at(version).tables;
  auto then = old_tables.find(name);
  // A table restored to before it existed is emptied; one created again
  // since cannot go back to its predecessor.
  if (now == next.tables.end() || (then != old_tables.end() && then->second.info.uid != now->second.info.uid)) {
    return std::nullopt;
  }
  const size_t width = now->second.info.schema.columns().size();
  now->second.rows.clear();
  if (then == old_tables.end()) return next;
  for (const auto& [key, row] : then->second.rows) now->second.rows[key] = Widen(row, width);
  return next;
}

std::optional<ModelState> StoreModel::RestoreTables(const std::vector<std::string>& tables,
                                                    const std::vector<std::string>& flows, uint64_t version) const {
  if (version == 0 || states_.count(version) == 0) return std::nullopt;
  StoreModel one;  // Restore works on the newest state: chain the tables through it
  one.states_ = states_;
  for (const std::string& table : tables) {
    std::optional<ModelState> next = one.Restore(table, version);
    if (!next) return std::nullopt;
    one.states_.rbegin()->second = std::move(*next);
  }
  ModelState next = one.newest_state();
  next.timestamp_us = 0;
  const ModelState& then_state = states_.at(version);
  for (const std::string& flow : flows) {
    auto then = then_state.checkpoints.find(flow);
    if (then == then_state.checkpoints.end()) next.checkpoints.erase(flow);
    else next.checkpoints[flow] = then->second;
  }
  return next;
}

std::vector<uint64_t> StoreModel::versions() const {
  std::vector<uint64_t> out;
  for (const auto& [version, state] : states_) out.push_back(version);
  return out;
}

void StoreModel::CheckVersion(Store* store, uint64_t v, std::vector<Violation>* violations) const {
  const ModelState& state = states_.at(v);
  auto fail = [&](const std::string& detail) {
    violations->push_back({"retained version reads back", "version " + std::to_string(v) + ": " + detail});
  };
  std::vector<std::string> names;
  for (const auto& [name, table] : state.tables) names.push_back(name);
  for (const auto& [name, table] : newest_state().tables) names.push_back(name);
  for (const std::string& name : names) {
    TableId id;
    if (!TableId::Parse(name, &id).ok()) continue;
    ReadOptions options;
    options.version = v;
    std::vector<Row> rows;
    TableInfo info;
    Status s = store->Read(
        id, options,
        [&](const Row& r) {
          rows.push_back(r);
          return true;
        },
        &info);
    auto it = state.tables.find(name);
    if (it == state.tables.end()) {
      if (!s.IsNotFound()) fail(name + " should not exist, read gave " + s.ToString());
      continue;
    }
    if (!s.ok()) {
      fail(name + ": " + s.ToString());
      continue;
    }
    if (!SameTable(info, it->second.info)) fail(name + ": table definition differs");
    std::vector<Row> expected;
    for (const auto& [key, row] : it->second.rows) expected.push_back(row);
    if (rows != expected) {
      size_t i = 0;
      while (i < rows.size() && i < expected.size() && rows[i] == expected[i]) ++i;
      fail(name + ": " + std::to_string(rows.size()) + " rows, expected " + std::to_string(expected.size()) +
           "; first difference at row " + std::to_string(i) + ": " + (i < rows.size() ? DescribeRow(rows[i]) : "none") +
           " vs " + (i < expected.size() ? DescribeRow(expected[i]) : "none"));
    }
  }
  // By timestamp: the commit's own timestamp finds the commit.
  if (v > 0 && state.timestamp_us != 0 && !state.tables.empty()) {
    TableId id;
    if (!TableId::Parse(state.tables.begin()->first, &id).ok()) return;
    ReadOptions options;
    options.timestamp_us = state.timestamp_us;
    uint64_t read = 0;
    Status s = store->Read(
        id, options, [](const Row&) { return false; }, nullptr, &read);
    if (!s.ok() || read != v) {
      violations->push_back({"timestamp resolves to its commit", "timestamp of version " + std::to_string(v) +
                                                                     " read version " + std::to_string(read) + ": " +
                                                                     s.ToString()});
    }
  }
}

void StoreModel::CheckCurrent(Store* store, std::vector<Violation>* violations) const {
  const ModelState& state = newest_state();
  const std::vector<TableInfo> tables = store->ListTables();
  if (tables.size() != state.tables.size()) {
    violations->push_back(
        {"catalog", std::to_string(tables.size()) + " tables, expected " + std::to_string(state.tables.size())});
  }
  for (const auto& [flow, data] : state.checkpoints) {
    std::string got;
    bool found = false;
    Status s = store->GetCheckpoint(flow, &got, &found);
    if (!s.ok() || !found || got != data) {
      violations->push_back({"checkpoint", flow + ": got '" + got + "' expected '" + data + "' " + s.ToString()});
    }
  }
  CheckVersion(store, newest(), violations);
}

void StoreModel::CheckFeed(Store* store, uint64_t from, uint64_t to, std::vector<Violation>* violations) const {
  for (const auto& [name, table] : states_.at(to).tables) {
    auto fail = [&, n = name](const std::string& detail) {
      violations->push_back({"feed = difference of states",
                             n + " (" + std::to_string(from) + ", " + std::to_string(to) + "]: " + detail});
    };
    const Schema& schema = table.info.schema;
    const size_t width = schema.columns().size();
    std::map<std::string, Row> keyed;             // keyed tables
    std::multiset<std::vector<std::string>> bag;  // keyless: rows as described values
    auto as_bag = [](const Row& row) {
      std::vector<std::string> out;
      for (const Value& v : row) out.push_back(DescribeRow(Row{v}));
      return out;
    };
    const ModelState& from_state = states_.at(from);
    auto then = from_state.tables.find(name);
    if (then != from_state.tables.end() && then->second.info.uid == table.info.uid) {
      for (const auto& [key, row] : then->second.rows) {
        if (schema.has_key()) keyed[key] = Widen(row, width);
        else bag.insert(as_bag(Widen(row, width)));
      }
    }
    TableId id;
    if (!TableId::Parse(name, &id).ok()) continue;
    std::string problem;
    Status s = store->Changes(id, from + 1, to, [&](const ChangeRow& c) {
      if (c.commit_version <= from || c.commit_version > to)
        problem = "change of version " + std::to_string(c.commit_version);
      if (!schema.has_key()) {
        if (c.change_type == ChangeType::kInsert) {
          bag.insert(as_bag(c.row));
        } else if (c.change_type == ChangeType::kDelete) {
          auto it = bag.find(as_bag(c.row));
          if (it == bag.end()) problem = "delete of a row that is not there: " + DescribeRow(c.row);
          else bag.erase(it);
        } else {
          problem = "an update in a keyless table";
        }
        return problem.empty();
      }
      std::string key;
      EncodeKey(schema, c.row, &key);
      auto it = keyed.find(key);
      switch (c.change_type) {
        case ChangeType::kInsert:
          if (it != keyed.end()) problem = "insert of a present key: " + DescribeRow(c.row);
          keyed[key] = c.row;
          break;
        case ChangeType::kUpdatePreimage:
        case ChangeType::kDelete:
          if (it == keyed.end() || it->second != c.row) {
            problem = "pre-image " + DescribeRow(c.row) +
                      " is not the row there: " + (it == keyed.end() ? "none" : DescribeRow(it->second));
          }
          if (c.change_type == ChangeType::kDelete) keyed.erase(key);
          break;
        case ChangeType::kUpdatePostimage:
          keyed[key] = c.row;
          break;
      }
      return problem.empty();
    });
    if (!s.ok()) {
      fail(s.ToString());
      continue;
    }
    if (!problem.empty()) {
      fail(problem);
      continue;
    }
    if (schema.has_key()) {
      std::map<std::string, Row> expected;
      for (const auto& [key, row] : table.rows) expected[key] = row;
      if (keyed != expected)
        fail("replayed feed gives " + std::to_string(keyed.size()) + " rows, expected " +
             std::to_string(expected.size()) + " (or different values)");
    } else {
      std::multiset<std::vector<std::string>> expected;
      for (const auto& [key, row] : table.rows) expected.insert(as_bag(row));
      if (bag != expected)
        fail("replayed feed gives " + std::to_string(bag.size()) + " rows, expected " +
             std::to_string(expected.size()) + " (or different values)");
    }
  }
}

Transaction RandomTransactions::Next(const ModelState& state) {
  Transaction txn("WRITE");
  const int ops = 1 + Uniform(4);
  for (int i = 0; i < ops; ++i) AddOp(state, &txn);
  if (Uniform(10) == 0)
    txn.SetCheckpoint("flow" + std::to_string(Uniform(3)), "offset-" + std::to_string(Uniform(1000)));
  return txn;
}

void RandomTransactions::AddOp(const ModelState& state, Transaction* txn) {
  TableId id;
  (void)TableId::Parse(TableName(), &id);
  auto it = state.tables.find(id.ToString());
  const int roll = Uniform(100);
  if (it == state.tables.end() || roll < 2) {
    Schema schema;
    const bool keyed = Uniform(3) != 0;
    std::vector<Column> columns{
        {"k", ColumnType::kInt64, !keyed}, {"v", ColumnType::kString, true}, {"d", ColumnType::kDouble, true}};
    (void)Schema::Make(columns, keyed ? std::vector<std::string>{"k"} : std::vector<std::string>{}, &schema);
    txn->CreateTable(id, keyed ? TableKind::kStreamingTable : TableKind::kMaterializedView, schema,
                     {{"pipelines.reset.allowed", Uniform(2) ? "true" : "false"}});
    return;
  }
  const Schema& schema = it->second.info.schema;
  if (roll < 4) return txn->DropTable(id);
  if (roll < 6) {
    const ColumnType types[] = {ColumnType::kBool, ColumnType::kTimestamp, ColumnType::kBytes, ColumnType::kInt64};
    return txn->AddColumn(id, Column{"c" + std::to_string(schema.columns().size()), types[Uniform(4)], true});
  }
  if (roll < 8) return txn->Truncate(id);
  if (roll < 10) return txn->SetProperties(id, {{"p" + std::to_string(Uniform(3)), Uniform(2) ? "x" : ""}});
  if (roll < 30 && schema.has_key()) return txn->Delete(id, Row{int64_t{Uniform(30)}});
  if (roll < 32) {  // a row that does not fit: the transaction is refused
    return txn->Write(id, Row{std::string("wrong")});
  }
  txn->Write(id, RandomRow(schema));
}

Row RandomTransactions::RandomRow(const Schema& schema) {
  Row row;
  for (const Column& c : schema.columns()) {
    if (c.nullable && Uniform(5) == 0) {
      row.push_back(Value{});
      continue;
    }
    switch (c.type) {
      case ColumnType::kInt64:
        row.push_back(int64_t{Uniform(30)});
        break;
      case ColumnType::kDouble:
        row.push_back(Uniform(100) / 4.0);
        break;
      case ColumnType::kString:
        row.push_back(std::string(static_cast<size_t>(Uniform(20)), static_cast<char>('a' + Uniform(26))));
        break;
      case ColumnType::kBool:
        row.push_back(Uniform(2) == 1);
        break;
      case ColumnType::kTimestamp:
        row.push_back(Timestamp{Uniform(1000000)});
        break;
      case ColumnType::kBytes:
        row.push_back(Bytes{std::string(static_cast<size_t>(Uniform(8)), '\0')});
        break;
    }
  }
  return row;
}

}  // namespace spool::crashtest
