// A store's tables as SQLite virtual tables (docs/sql.md, "Tables"):
//
//   "main.shop.orders"                 the table's columns, read in place,
//                                      with a hidden "$as_of" argument:
//                                      "main.shop.orders"(5) reads version
//                                      5, ('2026-11-29 18:30:00') the
//                                      newest commit at or before then
//   "table_changes:main.shop.orders"   its change feed: the columns, then
//                                      _change_type, _commit_version and
//                                      _commit_timestamp; hidden "$from"
//                                      and "$to" (versions or times)
//
// Constraints on the primary key (equality on its first columns, then a
// range on the next) become the read's key range, so a point lookup reads
// one key, at any version; SQLite checks them again.
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "row_stream.h"
#include "spool/storage/store.h"
#include "sql_internal.h"
#include "vtab_module.h"

namespace spool::sql {
// Named apart: a unity build compiles the two modules' files as one.
namespace table_vtab {
namespace {

constexpr std::string_view kChangeColumns[] = {"_change_type", "_commit_version", "_commit_timestamp"};

const char* DeclaredType(ColumnType type) {
  switch (type) {
    case ColumnType::kInt64:
      return "INTEGER";
    case ColumnType::kDouble:
      return "REAL";
    case ColumnType::kString:
      return "TEXT";
    case ColumnType::kBool:
      return "BOOLEAN";
    case ColumnType::kTimestamp:
      return "TIMESTAMP";
    case ColumnType::kBytes:
      break;
  }
  return "BLOB";
}

struct TableVtab : sqlite3_vtab {
  Context* context = nullptr;
  TableInfo table;       // as declared
  bool changes = false;  // the change feed
  size_t Visible() const { return table.schema.columns().size() + (changes ? std::size(kChangeColumns) : 0); }
  // The hidden arguments: "$as_of", or "$from" and "$to".
  size_t Hidden() const { return changes ? 2 : 1; }
};

// How xBestIndex planned a scan, as xFilter reads it back from idxStr:
// "u<columns used, hex>" then one code per argument, in argv's order —
// "a0"/"a1" a hidden argument, "=k" "gk" "Gk" "lk" "Lk" (=, >, >=, <, <=)
// on key column k (hex).
struct Plan {
  uint64_t used = ~uint64_t{0};
  struct Arg {
    char op;
    size_t index;
  };
  std::vector<Arg> args;

  std::string Encode() const {
    char text[32];
    std::snprintf(text, sizeof text, "u%llx", static_cast<unsigned long long>(used));
    std::string encoded = text;
    for (const Arg& a : args) {
      std::snprintf(text, sizeof text, ";%c%zx", a.op, a.index);
      encoded += text;
    }
    return encoded;
  }
  static Plan Decode(const char* text) {
    Plan plan;
    if (text == nullptr) return plan;
    std::string_view rest(text);
    plan.used = std::stoull(std::string(rest.substr(1, rest.find(';') - 1)), nullptr, 16);
    for (size_t at = rest.find(';'); at != std::string_view::npos; at = rest.find(';', at + 1)) {
      const size_t end = rest.find(';', at + 1);
      const std::string index(
          rest.substr(at + 2, end == std::string_view::npos ? std::string_view::npos : end - at - 2));
      plan.args.push_back(Arg{rest[at + 1], std::stoul(index, nullptr, 16)});
    }
    return plan;
  }
};

// The table a virtual table's name stands for: the store's table of that
// name, its change feed's ("table_changes:…"), or the table as it was at a
// version or time ("table_at:…@…"). Errors: NotFound (no such table, or
// none then), InvalidArgument.
Status TableOf(Store* store, std::string name, TableInfo* table) {
  std::optional<ReadOptions> as_of;
  if (name.starts_with(kChangesTablePrefix)) {
    name = name.substr(kChangesTablePrefix.size());
  } else if (name.starts_with(kPastTablePrefix)) {
    const size_t at = name.find('@');
    const std::string when = name.substr(at + 1);
    name = name.substr(kPastTablePrefix.size(), at - kPastTablePrefix.size());
    as_of.emplace();
    int64_t micros = 0;
    if (!when.empty() && when.find_first_not_of("0123456789") == std::string::npos && when.size() < 20) {
      as_of->version = std::stoull(when);
    } else if (ParseSqlTimestamp(when, &micros) && micros >= 0) {
      as_of->timestamp_us = static_cast<uint64_t>(micros);
    } else {
      return Status::InvalidArgument("table_at: '" + when + "' is neither a version nor a time (yyyy-MM-dd HH:mm:ss)");
    }
  }
  TableId id;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(name, &id));
  if (!as_of) return store->GetTable(id, table);
  // The table as the read sees it, which it gives before any row.
  return store->Read(
      id, *as_of, [](const Row&) { return false; }, table);
}

int Connect(sqlite3* db, void* aux, int, const char* const* argv, sqlite3_vtab** out, char** error) {
  auto* context = static_cast<Context*>(aux);
  std::string name = argv[2];
  auto vtab = std::make_unique<TableVtab>();
  vtab->context = context;
  vtab->changes = name.starts_with(kChangesTablePrefix);
  Status s = TableOf(context->store, name, &vtab->table);
  if (!s.ok()) {
    context->error = s;
    *error = sqlite3_mprintf("%s", std::string(s.message()).c_str());
    return SQLITE_ERROR;
  }
  std::string declaration = "CREATE TABLE x(";
  for (const Column& column : vtab->table.schema.columns()) {
    declaration += "\"" + column.name + "\" " + DeclaredType(column.type) + ", ";
  }
  if (vtab->changes) {
    declaration +=
        "\"_change_type\" TEXT, \"_commit_version\" INTEGER, \"_commit_timestamp\" TIMESTAMP, "
        "\"$from\" HIDDEN, \"$to\" HIDDEN)";
  } else {
    declaration += "\"$as_of\" HIDDEN)";
  }
  if (sqlite3_declare_vtab(db, declaration.c_str()) != SQLITE_OK) {
    *error = sqlite3_mprintf("table %s: %s", name.c_str(), sqlite3_errmsg(db));
    return SQLITE_ERROR;
  }
  *out = vtab.release();
  return SQLITE_OK;
}

// Separate from Connect so that the module is not eponymous: its tables are
// the ones the session declares.
int Create(sqlite3* db, void* aux, int argc, const char* const* argv, sqlite3_vtab** out, char** error) {
  return Connect(db, aux, argc, argv, out, error);
}

int Disconnect(sqlite3_vtab* vtab) {
  delete static_cast<TableVtab*>(vtab);
  return SQLITE_OK;
}

int BestIndex(sqlite3_vtab* base, sqlite3_index_info* info) {
  const auto* vtab = static_cast<TableVtab*>(base);
  Plan plan;
  plan.used = info->colUsed;
  int next_arg = 1;
  const auto use = [&](int c, char op, size_t index, bool omit) {
    info->aConstraintUsage[c].argvIndex = next_arg++;
    info->aConstraintUsage[c].omit = omit ? 1 : 0;
    plan.args.push_back({op, index});
  };
  // The hidden arguments, which a call like t(5) constrains with "=":
  // usable in any plan SQLite may pick or none.
  const int hidden = static_cast<int>(vtab->Visible());
  for (int c = 0; c < info->nConstraint; ++c) {
    const auto& constraint = info->aConstraint[c];
    if (constraint.iColumn < hidden || constraint.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!constraint.usable) return SQLITE_CONSTRAINT;
    use(c, 'a', static_cast<size_t>(constraint.iColumn - hidden), true);
  }
  double rows = 1e6;
  if (!vtab->changes && vtab->table.schema.has_key()) {
    const auto& key = vtab->table.schema.key_columns();
    const auto find = [&](size_t column, bool (*matches)(unsigned char)) {
      for (int c = 0; c < info->nConstraint; ++c) {
        const auto& constraint = info->aConstraint[c];
        // Only byte order (BINARY) is the key's order.
        if (constraint.usable && constraint.iColumn == static_cast<int>(column) && matches(constraint.op) &&
            info->aConstraintUsage[c].argvIndex == 0 &&
            sqlite3_stricmp(sqlite3_vtab_collation(info, c), "BINARY") == 0) {
          return c;
        }
      }
      return -1;
    };
    size_t k = 0;
    for (; k < key.size(); ++k) {
      const int c = find(key[k], [](unsigned char op) { return op == SQLITE_INDEX_CONSTRAINT_EQ; });
      if (c < 0) break;
      use(c, '=', k, false);
      rows /= 100;
    }
    if (k == key.size()) {
      rows = 1;
      info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
    } else {
      const int lower = find(key[k], [](unsigned char op) {
        return op == SQLITE_INDEX_CONSTRAINT_GT || op == SQLITE_INDEX_CONSTRAINT_GE;
      });
      if (lower >= 0) {
        use(lower, info->aConstraint[lower].op == SQLITE_INDEX_CONSTRAINT_GT ? 'g' : 'G', k, false);
        rows /= 4;
      }
      const int upper = find(key[k], [](unsigned char op) {
        return op == SQLITE_INDEX_CONSTRAINT_LT || op == SQLITE_INDEX_CONSTRAINT_LE;
      });
      if (upper >= 0) {
        use(upper, info->aConstraint[upper].op == SQLITE_INDEX_CONSTRAINT_LT ? 'l' : 'L', k, false);
        rows /= 4;
      }
    }
  }
  info->estimatedRows = static_cast<sqlite3_int64>(rows < 1 ? 1 : rows);
  info->estimatedCost = rows < 1 ? 1 : rows;
  const std::string encoded = plan.Encode();
  info->idxStr = sqlite3_mprintf("%s", encoded.c_str());
  info->needToFreeIdxStr = 1;
  return SQLITE_OK;
}

// A constraint's value as a key column's value, when it compares the same
// way in SQLite as in the key's order; false to leave the bound to SQLite.
bool KeyValue(ColumnType type, sqlite3_value* value, Value* out) {
  const int storage = sqlite3_value_type(value);
  const auto text = [&] {
    return std::string(reinterpret_cast<const char*>(sqlite3_value_text(value)),
                       static_cast<size_t>(sqlite3_value_bytes(value)));
  };
  switch (type) {
    case ColumnType::kInt64:
      if (storage != SQLITE_INTEGER) return false;
      *out = static_cast<int64_t>(sqlite3_value_int64(value));
      return true;
    case ColumnType::kDouble:
      if (storage != SQLITE_FLOAT && storage != SQLITE_INTEGER) return false;
      *out = sqlite3_value_double(value);
      return true;
    case ColumnType::kString:
      if (storage != SQLITE_TEXT) return false;
      *out = text();
      return true;
    case ColumnType::kBool:
      if (storage != SQLITE_INTEGER || (sqlite3_value_int64(value) != 0 && sqlite3_value_int64(value) != 1))
        return false;
      *out = sqlite3_value_int64(value) == 1;
      return true;
    case ColumnType::kTimestamp: {
      // Only a timestamp spelled as the column spells it compares as text
      // the way the times compare.
      int64_t micros = 0;
      if (storage != SQLITE_TEXT || !ParseSqlTimestamp(text(), &micros) || FormatTimestampMicros(micros) != text()) {
        return false;
      }
      *out = Timestamp{micros};
      return true;
    }
    case ColumnType::kBytes:
      if (storage != SQLITE_BLOB) return false;
      *out = Bytes{std::string(static_cast<const char*>(sqlite3_value_blob(value)),
                               static_cast<size_t>(sqlite3_value_bytes(value)))};
      return true;
  }
  return false;
}

// A version argument (as_of, from, to): a number is a version, text a time.
Status VersionArg(std::string_view what, sqlite3_value* value, std::optional<uint64_t>* version,
                  std::optional<uint64_t>* timestamp_us) {
  if (sqlite3_value_type(value) == SQLITE_INTEGER && sqlite3_value_int64(value) >= 0) {
    *version = static_cast<uint64_t>(sqlite3_value_int64(value));
    return Status::OK();
  }
  int64_t micros = 0;
  if (sqlite3_value_type(value) == SQLITE_TEXT &&
      ParseSqlTimestamp(reinterpret_cast<const char*>(sqlite3_value_text(value)), &micros) && micros >= 0) {
    *timestamp_us = static_cast<uint64_t>(micros);
    return Status::OK();
  }
  const char* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  return Status::InvalidArgument(std::string(what) + " must be a version (a whole number) or a time ('yyyy-MM-dd " +
                                 "HH:mm:ss'), not " + (text == nullptr ? "null" : "'" + std::string(text) + "'"));
}

struct TableCursor : sqlite3_vtab_cursor {
  std::unique_ptr<RowStream> stream;
  sqlite3_value* hidden[2] = {nullptr, nullptr};
  bool eof = true;
  sqlite3_int64 rowid = 0;

  ~TableCursor() { Reset(); }
  void Reset() {
    stream.reset();
    for (sqlite3_value*& value : hidden) {
      sqlite3_value_free(value);
      value = nullptr;
    }
  }
};

// Whether a statement reads column `i`, by SQLite's colUsed mask (whose
// last bit stands for every column past the 63rd).
bool Used(uint64_t used, size_t i) { return (used & (uint64_t{1} << std::min<size_t>(i, 63))) != 0; }

// Fills a row's cells from a row of the table as `table` was when read.
// Past `declared` (the columns the virtual table has), nothing: a table
// dropped and created again may have had more.
void PutRow(RowWriter* writer, Cell* cells, size_t declared, const TableInfo& table, const RowView& row,
            uint64_t used) {
  const std::vector<Column>& columns = table.schema.columns();
  for (size_t i = 0; i < row.size() && i < columns.size() && i < declared; ++i) {
    if (row.IsNull(i) || !Used(used, i)) continue;
    switch (columns[i].type) {
      case ColumnType::kInt64:
        writer->SetInt(&cells[i], row.Int64(i));
        break;
      case ColumnType::kDouble:
        writer->SetDouble(&cells[i], row.Double(i));
        break;
      case ColumnType::kString:
        writer->SetText(&cells[i], row.Chars(i));
        break;
      case ColumnType::kBool:
        writer->SetInt(&cells[i], row.Bool(i) ? 1 : 0);
        break;
      case ColumnType::kTimestamp:
        writer->SetText(&cells[i], FormatTimestampMicros(row.TimestampOf(i).micros));
        break;
      case ColumnType::kBytes:
        writer->SetBlob(&cells[i], row.Chars(i));
        break;
    }
  }
}

// The change feed's versions: [from, to], a time meaning the first commit
// at or after it (from) or the last at or before it (to), as Delta's.
Status ChangeRange(Store* store, sqlite3_value* from_arg, sqlite3_value* to_arg, uint64_t* from, uint64_t* to) {
  const VersionRange range = store->AvailableVersions();
  *from = range.oldest;
  *to = 0;
  for (int end = 0; end < 2; ++end) {
    sqlite3_value* arg = end == 0 ? from_arg : to_arg;
    if (arg == nullptr) continue;
    std::optional<uint64_t> version, timestamp_us;
    SPOOL_RETURN_IF_ERROR(VersionArg(end == 0 ? "table_changes' first version" : "table_changes' last version", arg,
                                     &version, &timestamp_us));
    if (timestamp_us) {
      uint64_t at = 0;
      Status s = store->log()->VersionAtTime(*timestamp_us, &at);
      if (s.IsNotFound()) {
        if (end == 1)
          return Status::InvalidArgument("table_changes: no commit at or before " + FormatTimestampUtc(*timestamp_us));
        at = 0;
      } else {
        SPOOL_RETURN_IF_ERROR(s);
      }
      LogEntry entry;
      const bool exact = at != 0 && store->log()->Read(at, &entry).ok() && entry.timestamp_us == *timestamp_us;
      version = end == 1 || exact ? at : at + 1;
    }
    (end == 0 ? *from : *to) = *version;
  }
  return Status::OK();
}

// The key range of a plan's key arguments: equal values on the first key
// columns, then bounds on the next. A value that does not compare as the
// key does (KeyValue) ends the range there: what follows is SQLite's to
// filter.
struct KeyBounds {
  Row prefix;
  std::optional<Value> lower, upper;
  bool lower_exclusive = false, upper_inclusive = true;
  bool cut = false;

  void Add(char op, std::optional<Value> value) {
    if (cut) return;
    if (!value) {
      cut = op == '=';  // later key columns cannot be bounded either
      return;
    }
    if (op == '=') {
      prefix.push_back(std::move(*value));
    } else if (op == 'g' || op == 'G') {
      lower = std::move(value);
      lower_exclusive = op == 'g';
    } else {
      upper = std::move(value);
      upper_inclusive = op == 'L';
    }
  }
  // Whether the range is one whole key: a row or none.
  bool Point(const Schema& schema) const {
    return !cut && !prefix.empty() && prefix.size() == schema.key_columns().size();
  }
  void Apply(ReadOptions* options) const {
    if (!prefix.empty() || lower) {
      options->start_key = prefix;
      if (lower) options->start_key->push_back(*lower);
      options->start_exclusive = lower && lower_exclusive;
    }
    if (!prefix.empty() || upper) {
      options->end_key = prefix;
      if (upper) options->end_key->push_back(*upper);
      options->end_inclusive = !upper || upper_inclusive;
    }
  }
};

// The change feed's read of versions the hidden arguments name.
Status StartChanges(TableCursor* cursor, const TableVtab& vtab, uint64_t used) {
  Store* store = vtab.context->store;
  uint64_t from = 0, to = 0;
  SPOOL_RETURN_IF_ERROR(ChangeRange(store, cursor->hidden[0], cursor->hidden[1], &from, &to));
  const size_t columns = vtab.table.schema.columns().size();
  cursor->stream->Start(
      [store, id = vtab.table.id, from, to, columns, used](RowWriter* writer) {
        return store->Changes(id, from, to, [&](const ChangeRow& change) {
          Cell* cells = writer->AddRow();
          for (size_t i = 0; i < change.row.size() && i < columns; ++i) {
            if (Used(used, i)) writer->SetValue(&cells[i], change.row[i]);
          }
          if (Used(used, columns)) writer->SetText(&cells[columns], ChangeTypeName(change.change_type));
          if (Used(used, columns + 1)) writer->SetInt(&cells[columns + 1], static_cast<int64_t>(change.commit_version));
          if (Used(used, columns + 2)) {
            writer->SetText(&cells[columns + 2],
                            FormatTimestampMicros(static_cast<int64_t>(change.commit_timestamp_us)));
          }
          return writer->Wanted();
        });
      },
      /*inline_read=*/false);
  return Status::OK();
}

// The table's read, as of the hidden argument, over the key range.
Status StartScan(TableCursor* cursor, const TableVtab& vtab, uint64_t used, const KeyBounds& bounds) {
  ReadOptions options;
  if (cursor->hidden[0] != nullptr) {
    SPOOL_RETURN_IF_ERROR(
        VersionArg("the version to read as of", cursor->hidden[0], &options.version, &options.timestamp_us));
  }
  bounds.Apply(&options);
  cursor->stream->Start(
      [store = vtab.context->store, id = vtab.table.id, options, used,
       declared = vtab.table.schema.columns().size()](RowWriter* writer) {
        TableInfo read;
        return store->Scan(
            id, options,
            [&](const RowView& row) {
              PutRow(writer, writer->AddRow(), declared, read, row, used);
              return writer->Wanted();
            },
            &read);
      },
      /*inline_read=*/bounds.Point(vtab.table.schema));
  return Status::OK();
}

int Filter(sqlite3_vtab_cursor* base, int, const char* idx, int argc, sqlite3_value** argv) {
  auto* cursor = static_cast<TableCursor*>(base);
  const auto* vtab = static_cast<TableVtab*>(cursor->pVtab);
  cursor->Reset();
  cursor->rowid = 0;
  const Plan plan = Plan::Decode(idx);
  const Schema& schema = vtab->table.schema;
  KeyBounds bounds;
  for (size_t i = 0; i < plan.args.size() && static_cast<int>(i) < argc; ++i) {
    const Plan::Arg& arg = plan.args[i];
    if (arg.op == 'a') {
      cursor->hidden[arg.index] = sqlite3_value_dup(argv[i]);
      continue;
    }
    Value value;
    const bool fits = KeyValue(schema.columns()[schema.key_columns()[arg.index]].type, argv[i], &value);
    bounds.Add(arg.op, fits ? std::optional<Value>(std::move(value)) : std::nullopt);
  }
  cursor->stream = std::make_unique<RowStream>(vtab->context, vtab->Visible());
  Status s = vtab->changes ? StartChanges(cursor, *vtab, plan.used) : StartScan(cursor, *vtab, plan.used, bounds);
  if (s.ok()) {
    cursor->eof = !cursor->stream->Next();
    s = cursor->stream->status();
  }
  return s.ok() ? SQLITE_OK : VtabError(vtab->context, base->pVtab, s);
}

int Next(sqlite3_vtab_cursor* base) {
  auto* cursor = static_cast<TableCursor*>(base);
  cursor->eof = !cursor->stream->Next();
  ++cursor->rowid;
  if (!cursor->stream->status().ok()) {
    return VtabError(static_cast<TableVtab*>(base->pVtab)->context, base->pVtab, cursor->stream->status());
  }
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) { return static_cast<TableCursor*>(base)->eof ? 1 : 0; }

int ColumnValue(sqlite3_vtab_cursor* base, sqlite3_context* result, int i) {
  auto* cursor = static_cast<TableCursor*>(base);
  const auto* vtab = static_cast<TableVtab*>(base->pVtab);
  const auto column = static_cast<size_t>(i);
  if (column >= vtab->Visible()) {
    sqlite3_value* arg = cursor->hidden[column - vtab->Visible()];
    if (arg != nullptr) sqlite3_result_value(result, arg);
    return SQLITE_OK;
  }
  const Cell& cell = cursor->stream->cell(column);
  switch (cell.type) {
    case SQLITE_INTEGER:
      sqlite3_result_int64(result, cell.integer);
      break;
    case SQLITE_FLOAT: {
      double value = 0;
      std::memcpy(&value, &cell.integer, sizeof value);
      sqlite3_result_double(result, value);
      break;
    }
    case SQLITE_TEXT: {
      const std::string_view text = cursor->stream->bytes(cell);
      sqlite3_result_text(result, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      break;
    }
    case SQLITE_BLOB: {
      const std::string_view bytes = cursor->stream->bytes(cell);
      sqlite3_result_blob(result, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
      break;
    }
    default:
      sqlite3_result_null(result);
  }
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = static_cast<TableCursor*>(base)->rowid;
  return SQLITE_OK;
}

int Rename(sqlite3_vtab*, const char*) { return SQLITE_ERROR; }

const sqlite3_module kModule =
    ReadOnlyModule({Create, Connect, BestIndex, Disconnect, OpenCursor<TableCursor>, CloseCursor<TableCursor>, Filter,
                    Next, Eof, ColumnValue, Rowid, Rename});

}  // namespace
}  // namespace table_vtab

Status RegisterTableModules(sqlite3* db, Context* context) {
  if (sqlite3_create_module(db, "spool_table", &table_vtab::kModule, context) != SQLITE_OK) {
    return Status::Failed(std::string("SQLite refused the table module: ") + sqlite3_errmsg(db));
  }
  return Status::OK();
}

}  // namespace spool::sql
