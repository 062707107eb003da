#include "spool/storage/schema.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>

#include "spool/storage/table.h"

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
    case ColumnType::kInt64:
      return "int64";
    case ColumnType::kDouble:
      return "double";
    case ColumnType::kString:
      return "string";
    case ColumnType::kBool:
      return "bool";
    case ColumnType::kTimestamp:
      return "timestamp";
    case ColumnType::kBytes:
      return "bytes";
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

Status Schema::Make(std::vector<Column> columns, const std::vector<std::string>& primary_key, Schema* schema) {
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

Status CheckNoChangeFeedColumns(const Schema& schema) {
  for (std::string_view reserved : kChangeFeedColumns) {
    if (schema.FindColumn(reserved)) {
      return Status::InvalidArgument("column name '" + std::string(reserved) +
                                     "' is reserved: the change feed adds a column of that name to every row "
                                     "(rename the column, or select it under another name)");
    }
  }
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

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

// Days since 1970-01-01 of a proleptic Gregorian date, and back (Howard
// Hinnant's algorithms: exact for every int64 day count used here).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

unsigned DaysInMonth(int64_t year, unsigned month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Parses exactly `digits` decimal digits at text[pos].
bool Digits(std::string_view text, size_t pos, size_t digits, unsigned* out) {
  if (pos + digits > text.size()) return false;
  *out = 0;
  for (size_t i = pos; i < pos + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    *out = *out * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return true;
}

}  // namespace

bool ParseDateTimeUtc(std::string_view text, int64_t* micros) {
  unsigned year, month, day, hour, minute, second;
  if (text.size() < 19 || !Digits(text, 0, 4, &year) || text[4] != '-' || !Digits(text, 5, 2, &month) ||
      text[7] != '-' || !Digits(text, 8, 2, &day) || (text[10] != ' ' && text[10] != 'T') ||
      !Digits(text, 11, 2, &hour) || text[13] != ':' || !Digits(text, 14, 2, &minute) || text[16] != ':' ||
      !Digits(text, 17, 2, &second)) {
    return false;
  }
  unsigned fraction = 0;
  if (text.size() > 19) {
    const size_t digits = text.size() - 20;
    if (text[19] != '.' || digits == 0 || digits > 6 || !Digits(text, 20, digits, &fraction)) return false;
    for (size_t i = digits; i < 6; ++i) fraction *= 10;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  const int64_t seconds =
      DaysFromCivil(year, month, day) * kSecondsPerDay + int64_t{hour} * 3600 + int64_t{minute} * 60 + second;
  *micros = seconds * kMicrosPerSecond + fraction;
  return true;
}

std::string FormatTimestampMicros(int64_t micros) {
  int64_t seconds = micros / kMicrosPerSecond;
  int64_t fraction = micros % kMicrosPerSecond;
  if (fraction < 0) {
    fraction += kMicrosPerSecond;
    --seconds;
  }
  int64_t days = seconds / kSecondsPerDay;
  int64_t in_day = seconds % kSecondsPerDay;
  if (in_day < 0) {
    in_day += kSecondsPerDay;
    --days;
  }
  int64_t year = 0;
  unsigned month = 0, day = 0;
  CivilFromDays(days, &year, &month, &day);
  char text[64];
  std::snprintf(text, sizeof(text), "%04lld-%02u-%02u %02lld:%02lld:%02lld.%06lld", static_cast<long long>(year), month,
                day, static_cast<long long>(in_day / 3600), static_cast<long long>(in_day / 60 % 60),
                static_cast<long long>(in_day % 60), static_cast<long long>(fraction));
  return text;
}

std::string FormatTimestampUtc(uint64_t micros) { return FormatTimestampMicros(static_cast<int64_t>(micros)) + " UTC"; }

Transaction::TableRef Transaction::Table(const TableId& id) {
  // Rows come in runs of one table: the last one named usually answers.
  if (!tables_.empty() && tables_.back() == id) return TableRef{static_cast<uint32_t>(tables_.size() - 1)};
  auto [it, added] = table_refs_.try_emplace(id, TableRef{static_cast<uint32_t>(tables_.size())});
  if (added) tables_.push_back(id);
  return it->second;
}

std::string_view TableKindName(TableKind kind) {
  switch (kind) {
    case TableKind::kStreamingTable:
      return "streaming_table";
    case TableKind::kMaterializedView:
      return "materialized_view";
    case TableKind::kInternalState:
      return "internal_state";
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
    case ChangeType::kInsert:
      return "insert";
    case ChangeType::kUpdatePreimage:
      return "update_preimage";
    case ChangeType::kUpdatePostimage:
      return "update_postimage";
    case ChangeType::kDelete:
      return "delete";
  }
  return "unknown";
}

}  // namespace spool
