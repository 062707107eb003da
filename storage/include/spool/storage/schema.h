// Tables' identifiers, schemas and values (docs/design.md).
//
// A table is named `catalog.schema.table`; its schema is a list of typed,
// nullable columns and an optional primary key (a list of column indexes).
// A Row holds one Value per column, in schema order.
//
// Thread-safety: plain values; const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool {

// `catalog.schema.table`: three non-empty parts of letters, digits and '_',
// each starting with a letter or '_', at most kMaxIdentifierPartBytes long.
struct TableId {
  static constexpr size_t kMaxIdentifierPartBytes = 128;

  std::string catalog;
  std::string schema;
  std::string table;

  // Errors: InvalidArgument naming what is wrong with `text`.
  static Status Parse(std::string_view text, TableId* id);
  std::string ToString() const { return catalog + "." + schema + "." + table; }
  // Whether it names one of Spool's own tables (the catalog `__spool`:
  // operator state, the pipeline definition), which no one changes by hand.
  bool IsSpools() const { return catalog == kSpoolCatalog; }
  static constexpr std::string_view kSpoolCatalog = "__spool";
  friend bool operator==(const TableId&, const TableId&) = default;
  friend auto operator<=>(const TableId&, const TableId&) = default;
};

enum class ColumnType : uint8_t { kInt64 = 1, kDouble, kString, kBool, kTimestamp, kBytes };

std::string_view ColumnTypeName(ColumnType type);
// Parses "int64", "double", "string", "bool", "timestamp", "bytes".
// Errors: InvalidArgument.
Status ParseColumnType(std::string_view name, ColumnType* type);

// A timestamp in microseconds since the Unix epoch (UTC).
struct Timestamp {
  int64_t micros = 0;
  friend bool operator==(const Timestamp&, const Timestamp&) = default;
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

// "2026-11-29 18:00:00.123456 UTC": how errors and listings show a time.
std::string FormatTimestampUtc(uint64_t micros);
// "2026-11-29 15:31:02.123456" for any int64 (years before 1970 too).
std::string FormatTimestampMicros(int64_t micros);
// "yyyy-MM-dd HH:mm:ss[.ffffff]" (UTC; 'T' may stand for the space) to
// microseconds since the epoch; false when malformed or out of range.
bool ParseDateTimeUtc(std::string_view text, int64_t* micros);

// Raw bytes, distinct from a string.
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes&, const Bytes&) = default;
  friend auto operator<=>(const Bytes&, const Bytes&) = default;
};

// One cell: null or a value of one of the column types.
using Value = std::variant<std::monostate, int64_t, double, std::string, bool, Timestamp, Bytes>;
using Row = std::vector<Value>;
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ColumnType::kInt64), Value>, int64_t> &&
        std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ColumnType::kDouble), Value>, double> &&
        std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ColumnType::kString), Value>, std::string> &&
        std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ColumnType::kBool), Value>, bool> &&
        std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ColumnType::kTimestamp), Value>, Timestamp> &&
        std::is_same_v<std::variant_alternative_t<static_cast<size_t>(ColumnType::kBytes), Value>, Bytes>,
    "Value's alternatives after monostate are in ColumnType's order (TypeOf)");

// Both inline: rows are checked and encoded value by value, millions a second.
inline bool IsNull(const Value& value) { return std::holds_alternative<std::monostate>(value); }
// The column type a non-null value has: the alternatives after monostate
// are in ColumnType's order.
inline ColumnType TypeOf(const Value& value) { return static_cast<ColumnType>(value.index()); }

struct Column {
  std::string name;
  ColumnType type = ColumnType::kString;
  bool nullable = true;
  friend bool operator==(const Column&, const Column&) = default;
};

enum class TableKind : uint8_t { kStreamingTable = 1, kMaterializedView, kInternalState };

class Schema {
 public:
  static constexpr size_t kMaxColumns = 1024;

  Schema() = default;
  // Errors: InvalidArgument for duplicate or malformed column names, too many
  // columns, or a key naming a missing or nullable column.
  static Status Make(std::vector<Column> columns, const std::vector<std::string>& primary_key, Schema* schema);

  const std::vector<Column>& columns() const { return columns_; }
  // Column indexes of the primary key, in key order; empty when keyless.
  const std::vector<size_t>& key_columns() const { return key_columns_; }
  bool has_key() const { return !key_columns_.empty(); }
  std::optional<size_t> FindColumn(std::string_view name) const;

  // Checks that `row` fits: one value per column, each null only where the
  // column is nullable, each of the column's type. Errors: InvalidArgument
  // naming the column.
  Status Validate(const Row& row) const;

  friend bool operator==(const Schema&, const Schema&) = default;

 private:
  std::vector<Column> columns_;
  std::vector<size_t> key_columns_;
};

// The columns the change feed adds to a table's rows. A table cannot have
// columns of these names (as in Delta Lake): its feed would carry two
// values under one name, and a reader of it (the JSON feed, a flow reading
// the table) would lose one.
inline constexpr std::string_view kChangeFeedColumns[] = {"_change_type", "_commit_version", "_commit_timestamp"};

// InvalidArgument naming the column when `schema` has one of
// kChangeFeedColumns.
Status CheckNoChangeFeedColumns(const Schema& schema);

}  // namespace spool
