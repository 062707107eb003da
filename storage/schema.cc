#include "spool/storage/schema.h"

#include "spool/storage/table.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>

namespace spool {
namespace {

bool IsIdentifierStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentifierChar(char c) { return IsIdentifierStart(c) || (c >= '0' && c <= '9'); }

// Errors: InvalidArgument saying what is wrong with the part `what`.
Status CheckIdentifier(std::string_view part, std::string_view what) {
  if (part.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
  if (part.size() > TableId::kMaxIdentifierPartBytes) {
    return Status::InvalidArgument(std::string(what) + " is longer than " +
                                   std::to_string(TableId::kMaxIdentifierPartBytes) + " bytes");
  }
  if (!IsIdentifierStart(part[0])) {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(part) + "' must start with a letter or '_'");
  }
  for (char c : part) {
    if (!IsIdentifierChar(c)) {
      return Status::InvalidArgument(std::string(what) + " '" + std::string(part) +
                                     "' may hold only letters, digits and '_'");
    }
  }
  return Status::OK();
}

}  // namespace

Status TableId::Parse(std::string_view text, TableId* id) {
  const size_t first = text.find('.');
  const size_t second = first == std::string_view::npos ? first : text.find('.', first + 1);
  if (second == std::string_view::npos || text.find('.', second + 1) != std::string_view::npos) {
    return Status::InvalidArgument("table identifier '" + std::string(text) +
                                   "' must have the form catalog.schema.table");
  }
  TableId parsed{std::string(text.substr(0, first)), std::string(text.substr(first + 1, second - first - 1)),
                 std::string(text.substr(second + 1))};
  SPOOL_RETURN_IF_ERROR(CheckIdentifier(parsed.catalog, "catalog"));
  SPOOL_RETURN_IF_ERROR(CheckIdentifier(parsed.schema, "schema"));
  SPOOL_RETURN_IF_ERROR(CheckIdentifier(parsed.table, "table"));
  *id = std::move(parsed);
  return Status::OK();
}

std::string_view ColumnTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kInt64: return "int64";
    case ColumnType::kDouble: return "double";
    case ColumnType::kString: return "string";
    case ColumnType::kBool: return "bool";
    case ColumnType::kTimestamp: return "timestamp";
    case ColumnType::kBytes: return "bytes";
  }
  return "unknown";
}

Status ParseColumnType(std::string_view name, ColumnType* type) {
  for (ColumnType t : {ColumnType::kInt64, ColumnType::kDouble, ColumnType::kString, ColumnType::kBool,
                       ColumnType::kTimestamp, ColumnType::kBytes}) {
    if (ColumnTypeName(t) == name) {
      *type = t;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown column type '" + std::string(name) +
                                 "' (int64, double, string, bool, timestamp, bytes)");
}

bool IsNull(const Value& value) { return std::holds_alternative<std::monostate>(value); }

ColumnType TypeOf(const Value& value) {
  switch (value.index()) {
    case 1: return ColumnType::kInt64;
    case 2: return ColumnType::kDouble;
    case 3: return ColumnType::kString;
    case 4: return ColumnType::kBool;
    case 5: return ColumnType::kTimestamp;
    default: return ColumnType::kBytes;
  }
}

Status Schema::Make(std::vector<Column> columns, std::vector<std::string> primary_key, Schema* schema) {
  if (columns.empty()) return Status::InvalidArgument("a table needs at least one column");
  if (columns.size() > kMaxColumns) {
    return Status::InvalidArgument("a table has at most " + std::to_string(kMaxColumns) + " columns");
  }
  Schema made;
  std::set<std::string> names;
  for (const Column& column : columns) {
    SPOOL_RETURN_IF_ERROR(CheckIdentifier(column.name, "column name"));
    if (!names.insert(column.name).second) {
      return Status::InvalidArgument("column '" + column.name + "' appears twice");
    }
  }
  made.columns_ = std::move(columns);
  for (const std::string& key : primary_key) {
    std::optional<size_t> index = made.FindColumn(key);
    if (!index) return Status::InvalidArgument("primary key column '" + key + "' is not a column of the table");
    if (made.columns_[*index].nullable) {
      return Status::InvalidArgument("primary key column '" + key + "' must not be nullable");
    }
    if (std::find(made.key_columns_.begin(), made.key_columns_.end(), *index) != made.key_columns_.end()) {
      return Status::InvalidArgument("primary key column '" + key + "' appears twice");
    }
    made.key_columns_.push_back(*index);
  }
  *schema = std::move(made);
  return Status::OK();
}

std::optional<size_t> Schema::FindColumn(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name == name) return i;
  }
  return std::nullopt;
}

Status Schema::Validate(const Row& row) const {
  if (row.size() != columns_.size()) {
    return Status::InvalidArgument("row has " + std::to_string(row.size()) + " values but the table has " +
                                   std::to_string(columns_.size()) + " columns");
  }
  for (size_t i = 0; i < row.size(); ++i) {
    const Column& column = columns_[i];
    if (IsNull(row[i])) {
      if (!column.nullable) return Status::InvalidArgument("column '" + column.name + "' must not be null");
      continue;
    }
    if (TypeOf(row[i]) != column.type) {
      return Status::InvalidArgument("column '" + column.name + "' is " + std::string(ColumnTypeName(column.type)) +
                                     " but the value is " + std::string(ColumnTypeName(TypeOf(row[i]))));
    }
  }
  return Status::OK();
}

std::string FormatTimestampUtc(uint64_t micros) {
  const auto seconds = static_cast<time_t>(micros / 1000000);
  struct tm parts {};
  gmtime_r(&seconds, &parts);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02d %02d:%02d:%02d.%06u UTC", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, static_cast<unsigned>(micros % 1000000));
  return text;
}

std::string_view TableKindName(TableKind kind) {
  switch (kind) {
    case TableKind::kStreamingTable: return "streaming_table";
    case TableKind::kMaterializedView: return "materialized_view";
    case TableKind::kInternalState: return "internal_state";
  }
  return "unknown";
}

Status ParseTableKind(std::string_view name, TableKind* kind) {
  for (TableKind k : {TableKind::kStreamingTable, TableKind::kMaterializedView, TableKind::kInternalState}) {
    if (name == TableKindName(k)) {
      *kind = k;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown table kind '" + std::string(name) +
                                 "': use streaming_table, materialized_view or internal_state");
}

std::string_view ChangeTypeName(ChangeType type) {
  switch (type) {
    case ChangeType::kInsert: return "insert";
    case ChangeType::kUpdatePreimage: return "update_preimage";
    case ChangeType::kUpdatePostimage: return "update_postimage";
    case ChangeType::kDelete: return "delete";
  }
  return "unknown";
}

}  // namespace spool
