// Value parsing and printing for the spool CLI (formats in row_format.h), the
// JSON-lines and CSV record readers, and RowPrinter.
#include "row_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli_format.h"

namespace spool::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

template <typename T>
bool ParseWhole(std::string_view text, T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

int Base64Index(char c) {
  const char* at = std::find(kBase64Alphabet, kBase64Alphabet + 64, c);
  return at == kBase64Alphabet + 64 ? -1 : static_cast<int>(at - kBase64Alphabet);
}

std::string DoubleText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", d);
}

// Control characters as escapes, so a value keeps to one table cell.
std::string CellText(const Value& value) {
  std::string text = ValueText(value);
  if (std::none_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) return text;
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out.push_back(c);
  }
  return out;
}

std::string CsvQuote(std::string_view text, bool force) {
  if (!force && text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

ordered_json ValueJson(const Value& value) {
  switch (value.index()) {
    case 0: return nullptr;
    case 1: return std::get<int64_t>(value);
    case 2: {
      const double d = std::get<double>(value);
      return std::isfinite(d) ? ordered_json(d) : ordered_json(DoubleText(d));
    }
    case 3: return std::get<std::string>(value);
    case 4: return std::get<bool>(value);
    default: return ValueText(value);  // timestamp, bytes
  }
}

// ---------------------------------------------------------------------------
// Input: one record's fields to a row

// Where a record came from, for errors.
struct RecordPlace {
  std::string_view source;
  uint64_t line = 0;
};

Status FieldError(const RecordPlace& at, const Column& column, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{} line {}: column '{}': {}", at.source, at.line, column.name, what));
}

Status RecordError(const RecordPlace& at, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{} line {}: {}", at.source, at.line, what));
}

std::string ColumnList(const Schema& schema) {
  std::string out;
  for (const Column& c : schema.columns()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

std::string Shown(std::string_view text) {
  return text.size() > 40 ? "'" + std::string(text.substr(0, 40)) + "…'" : "'" + std::string(text) + "'";
}

// A CSV field (unquoted empty = null) as a value of `column`'s type.
Status TextToValue(const RecordPlace& at, const Column& column, std::string_view text, bool quoted, Value* value) {
  if (text.empty() && !quoted) {
    if (!column.nullable) return FieldError(at, column, "must not be null (an empty field is null; quote \"\" for an empty string)");
    *value = std::monostate{};
    return Status::OK();
  }
  const auto bad = [&](std::string_view expected) {
    return FieldError(at, column, fmt::format("expected {}, got {}", expected, Shown(text)));
  };
  switch (column.type) {
    case ColumnType::kInt64: {
      int64_t n = 0;
      if (!ParseWhole(text, &n)) return bad("an int64");
      *value = n;
      return Status::OK();
    }
    case ColumnType::kDouble: {
      double d = 0;
      if (!ParseWhole(text, &d)) return bad("a double");
      *value = d;
      return Status::OK();
    }
    case ColumnType::kString: *value = std::string(text); return Status::OK();
    case ColumnType::kBool: {
      std::string lower(text);
      std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
      if (lower != "true" && lower != "false") return bad("true or false");
      *value = lower == "true";
      return Status::OK();
    }
    case ColumnType::kTimestamp: {
      int64_t micros = 0;
      Status s = ParseTimestamp(text, &micros);
      if (!s.ok()) return FieldError(at, column, s.message());
      *value = Timestamp{micros};
      return Status::OK();
    }
    case ColumnType::kBytes: {
      std::string bytes;
      Status s = DecodeBase64(text, &bytes);
      if (!s.ok()) return FieldError(at, column, s.message());
      *value = Bytes{std::move(bytes)};
      return Status::OK();
    }
  }
  return bad("a known type");
}

// A JSON value as a value of `column`'s type: strict, no conversions but
// those the formats above name.
Status JsonToValue(const RecordPlace& at, const Column& column, const ordered_json& j, Value* value) {
  if (j.is_null()) {
    if (!column.nullable) return FieldError(at, column, "must not be null");
    *value = std::monostate{};
    return Status::OK();
  }
  const auto bad = [&](std::string_view expected) {
    return FieldError(at, column, fmt::format("expected {}, got {}", expected, j.dump(-1, ' ', false, ordered_json::error_handler_t::replace)));
  };
  switch (column.type) {
    case ColumnType::kInt64:
    case ColumnType::kTimestamp: {
      if (j.is_string() && column.type == ColumnType::kTimestamp) return TextToValue(at, column, j.get<std::string>(), true, value);
      if (!j.is_number_integer()) return bad(column.type == ColumnType::kInt64 ? "an int64" : "a timestamp");
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return bad("an int64 in range");
      const auto n = j.get<int64_t>();
      if (column.type == ColumnType::kInt64) *value = n;
      else *value = Timestamp{n};
      return Status::OK();
    }
    case ColumnType::kDouble: {
      if (j.is_number()) {
        *value = j.get<double>();
        return Status::OK();
      }
      const std::string text = j.is_string() ? j.get<std::string>() : "";
      if (text != "NaN" && text != "Infinity" && text != "-Infinity") return bad("a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
      return TextToValue(at, column, text, true, value);
    }
    case ColumnType::kString:
      if (!j.is_string()) return bad("a string");
      *value = j.get<std::string>();
      return Status::OK();
    case ColumnType::kBool:
      if (!j.is_boolean()) return bad("true or false");
      *value = j.get<bool>();
      return Status::OK();
    case ColumnType::kBytes:
      if (!j.is_string()) return bad("a base64 string");
      return TextToValue(at, column, j.get<std::string>(), true, value);
  }
  return bad("a known type");
}

// The row (or, keys only, the key) from one record's values by column
// index; `given[i]` says whether the record named column i.
Status FinishRow(const RecordPlace& at, const Schema& schema, bool keys_only, Row& values,
                 const std::vector<bool>& given, std::vector<Row>* rows) {
  for (size_t i = 0; i < schema.columns().size(); ++i) {
    const Column& column = schema.columns()[i];
    const bool needed = !keys_only || std::count(schema.key_columns().begin(), schema.key_columns().end(), i) > 0;
    if (needed && !given[i] && !column.nullable) {
      return RecordError(at, fmt::format("column '{}' is missing and must not be null", column.name));
    }
  }
  if (!keys_only) {
    rows->push_back(std::move(values));
    return Status::OK();
  }
  Row key;
  for (size_t index : schema.key_columns()) key.push_back(std::move(values[index]));
  rows->push_back(std::move(key));
  return Status::OK();
}

Status ReadJsonLine(const RecordPlace& at, std::string_view line, const Schema& schema, bool keys_only,
                    std::vector<Row>* rows) {
  ordered_json object;
  try {
    object = ordered_json::parse(line);
  } catch (const ordered_json::parse_error& e) {
    std::string what = e.what();
    if (size_t end = what.find("] "); end != std::string::npos) what = what.substr(end + 2);
    if (size_t l1 = what.find("at line 1, "); l1 != std::string::npos) what.replace(l1, 11, "at ");
    return RecordError(at, "malformed JSON: " + what);
  }
  if (!object.is_object()) return RecordError(at, std::string("expected a JSON object, got ") + object.type_name());
  Row values(schema.columns().size());
  std::vector<bool> given(values.size(), false);
  for (const auto& [name, j] : object.items()) {
    const std::optional<size_t> index = schema.FindColumn(name);
    if (!index) return RecordError(at, fmt::format("unknown column '{}' (the table has: {})", name, ColumnList(schema)));
    given[*index] = true;
    const bool is_key = std::count(schema.key_columns().begin(), schema.key_columns().end(), *index) > 0;
    if (keys_only && !is_key) continue;
    SPOOL_RETURN_IF_ERROR(JsonToValue(at, schema.columns()[*index], j, &values[*index]));
  }
  return FinishRow(at, schema, keys_only, values, given, rows);
}

Status ReadJsonLines(std::istream& in, std::string_view source, const Schema& schema, bool keys_only,
                     std::vector<Row>* rows) {
  std::string line;
  RecordPlace at{source, 0};
  while (std::getline(in, line)) {
    ++at.line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    SPOOL_RETURN_IF_ERROR(ReadJsonLine(at, line, schema, keys_only, rows));
  }
  if (in.bad()) return Status::IOError(fmt::format("{}: read failed", source));
  return Status::OK();
}

// ---------------------------------------------------------------------------
// CSV (RFC 4180)

struct CsvField {
  std::string text;
  bool quoted = false;
};

// Splits CSV text into records, counting lines (a quoted field may span
// several).
class CsvReader {
 public:
  CsvReader(std::string_view data, std::string_view source) : data_(data), source_(source) {}

  // The next record into `*fields`, and the line it starts on; `*got` false
  // at the end.
  Status Next(std::vector<CsvField>* fields, uint64_t* line, bool* got) {
    fields->clear();
    *got = pos_ < data_.size();
    *line = line_;
    while (*got) {
      CsvField field;
      SPOOL_RETURN_IF_ERROR(ReadField(&field));
      fields->push_back(std::move(field));
      if (pos_ >= data_.size()) break;
      const char c = data_[pos_++];
      if (c == ',') continue;
      if (c == '\r' && pos_ < data_.size() && data_[pos_] == '\n') ++pos_;
      ++line_;
      break;
    }
    return Status::OK();
  }

 private:
  // Reads a field up to (not past) its separator.
  Status ReadField(CsvField* field) {
    if (pos_ < data_.size() && data_[pos_] == '"') return ReadQuoted(field);
    const size_t end = std::min(data_.find_first_of(",\r\n", pos_), data_.size());
    field->text = data_.substr(pos_, end - pos_);
    pos_ = end;
    if (field->text.find('"') != std::string::npos) {
      return Error(line_, "a quote inside an unquoted field (quote the whole field and double the quote)");
    }
    return Status::OK();
  }

  Status ReadQuoted(CsvField* field) {
    const uint64_t start = line_;
    field->quoted = true;
    ++pos_;
    while (true) {
      if (pos_ >= data_.size()) return Error(start, "a quoted field is never closed");
      const char c = data_[pos_++];
      if (c == '"') {
        if (pos_ < data_.size() && data_[pos_] == '"') {
          field->text.push_back('"');
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
      field->text.push_back(c);
    }
    if (pos_ < data_.size() && data_[pos_] != ',' && data_[pos_] != '\n' && data_[pos_] != '\r') {
      return Error(line_, "text after a closing quote (a quote inside a quoted field is written \"\")");
    }
    return Status::OK();
  }

  Status Error(uint64_t line, std::string_view what) const {
    return Status::InvalidArgument(fmt::format("{} line {}: malformed CSV: {}", source_, line, what));
  }

  std::string_view data_;
  std::string_view source_;
  size_t pos_ = 0;
  uint64_t line_ = 1;
};

bool BlankRecord(const std::vector<CsvField>& fields) {
  return fields.size() == 1 && !fields[0].quoted && fields[0].text.empty();
}

// Maps the header's names to column indexes and checks that every column
// the rows need is there.
Status ReadCsvHeader(const RecordPlace& at, const std::vector<CsvField>& header, const Schema& schema, bool keys_only,
                     std::vector<size_t>* columns) {
  std::vector<bool> given(schema.columns().size(), false);
  for (const CsvField& field : header) {
    const std::optional<size_t> index = schema.FindColumn(field.text);
    if (!index) {
      return RecordError(at, fmt::format("header: unknown column '{}' (the table has: {})", field.text, ColumnList(schema)));
    }
    if (given[*index]) return RecordError(at, fmt::format("header: column '{}' appears twice", field.text));
    given[*index] = true;
    columns->push_back(*index);
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const bool needed = !keys_only || std::count(schema.key_columns().begin(), schema.key_columns().end(), i) > 0;
    const Column& column = schema.columns()[i];
    if (needed && !given[i] && !column.nullable) {
      return RecordError(at, fmt::format("header: column '{}' is missing and must not be null", column.name));
    }
  }
  return Status::OK();
}

Status ReadCsv(std::istream& in, std::string_view source, const Schema& schema, bool keys_only, std::vector<Row>* rows) {
  std::string data;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) data.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) return Status::IOError(fmt::format("{}: read failed", source));
  CsvReader reader(data, source);
  std::vector<CsvField> fields;
  std::vector<size_t> columns;  // header position -> column index
  bool got = false, have_header = false;
  RecordPlace at{source, 0};
  while (true) {
    SPOOL_RETURN_IF_ERROR(reader.Next(&fields, &at.line, &got));
    if (!got) return Status::OK();
    if (BlankRecord(fields)) continue;
    if (!have_header) {
      SPOOL_RETURN_IF_ERROR(ReadCsvHeader(at, fields, schema, keys_only, &columns));
      have_header = true;
      continue;
    }
    if (fields.size() != columns.size()) {
      return RecordError(at, fmt::format("{} field(s), but the header has {}", fields.size(), columns.size()));
    }
    Row values(schema.columns().size());
    std::vector<bool> given(values.size(), false);
    for (size_t i = 0; i < fields.size(); ++i) {
      const size_t index = columns[i];
      given[index] = true;
      const bool is_key = std::count(schema.key_columns().begin(), schema.key_columns().end(), index) > 0;
      if (keys_only && !is_key) continue;
      SPOOL_RETURN_IF_ERROR(TextToValue(at, schema.columns()[index], fields[i].text, fields[i].quoted, &values[index]));
    }
    SPOOL_RETURN_IF_ERROR(FinishRow(at, schema, keys_only, values, given, rows));
  }
}

}  // namespace

Status ParseTimestamp(std::string_view text, int64_t* micros) {
  const bool integer = !text.empty() && std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
  if (integer ? ParseWhole(text, micros) : ParseDateTimeUtc(text, micros)) return Status::OK();
  return Status::InvalidArgument("timestamp " + Shown(text) +
                                 " must be 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC) or an integer of microseconds");
}

Status ParseDuration(std::string_view text, uint64_t* micros) {
  static constexpr std::pair<char, uint64_t> kUnits[] = {
      {'s', 1'000'000ull}, {'m', 60'000'000ull}, {'h', 3'600'000'000ull}, {'d', 86'400'000'000ull}};
  for (const auto& [unit, scale] : kUnits) {
    uint64_t n = 0;
    if (text.size() < 2 || text.back() != unit || !ParseWhole(text.substr(0, text.size() - 1), &n)) continue;
    if (n > UINT64_MAX / scale) break;
    *micros = n * scale;
    return Status::OK();
  }
  return Status::InvalidArgument("duration " + Shown(text) + " must be a number and a unit: s, m, h or d (e.g. 168h, 7d)");
}

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = 0;
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    for (size_t k = 0; k < 3; ++k) {
      group = group << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) out.push_back(k <= n ? kBase64Alphabet[(group >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}

Status DecodeBase64(std::string_view text, std::string* bytes) {
  const auto bad = [&] { return Status::InvalidArgument("expected base64 (RFC 4648, with padding), got " + Shown(text)); };
  if (text.size() % 4 != 0) return bad();
  bytes->clear();
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const size_t pad = last ? static_cast<size_t>(std::count(text.end() - 2, text.end(), '=')) : 0;
    if (pad == 1 && text[i + 2] == '=') return bad();
    uint32_t group = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int index = k >= 4 - pad ? 0 : Base64Index(text[i + k]);
      if (index < 0) return bad();
      group = group << 6 | static_cast<uint32_t>(index);
    }
    for (size_t k = 0; k < 3 - pad; ++k) bytes->push_back(static_cast<char>((group >> (16 - 8 * k)) & 0xff));
  }
  return Status::OK();
}

std::string ValueText(const Value& value) {
  switch (value.index()) {
    case 0: return "NULL";
    case 1: return std::to_string(std::get<int64_t>(value));
    case 2: return DoubleText(std::get<double>(value));
    case 3: return std::get<std::string>(value);
    case 4: return std::get<bool>(value) ? "true" : "false";
    case 5: return FormatTimestampMicros(std::get<Timestamp>(value).micros);
    default: return EncodeBase64(std::get<Bytes>(value).data);
  }
}

Status ReadRecords(std::istream& in, std::string_view source_name, RecordFormat format, const Schema& schema,
                   bool keys_only, std::vector<Row>* rows) {
  rows->clear();
  return format == RecordFormat::kCsv ? ReadCsv(in, source_name, schema, keys_only, rows)
                                      : ReadJsonLines(in, source_name, schema, keys_only, rows);
}

// ---------------------------------------------------------------------------
// RowPrinter

RowPrinter::RowPrinter(OutputFormat format, std::vector<std::string> columns, std::ostream* out)
    : format_(format), columns_(columns.size()), out_(out) {
  switch (format_) {
    case OutputFormat::kTable: table_ = std::make_unique<Table>(std::move(columns)); break;
    case OutputFormat::kJsonLines: names_ = std::move(columns); break;
    case OutputFormat::kCsv: {
      std::string header;
      for (size_t i = 0; i < columns.size(); ++i) header += (i == 0 ? "" : ",") + CsvQuote(columns[i], false);
      *out_ << header << "\n";
      break;
    }
  }
}

RowPrinter::~RowPrinter() = default;

void RowPrinter::Add(const Row& values) {
  assert(values.size() == columns_);
  ++rows_;
  switch (format_) {
    case OutputFormat::kTable: {
      std::vector<std::string> cells;
      for (const Value& v : values) cells.push_back(CellText(v));
      table_->AddRow(std::move(cells));
      return;
    }
    case OutputFormat::kJsonLines: {
      ordered_json object = ordered_json::object();
      for (size_t i = 0; i < values.size() && i < names_.size(); ++i) object[names_[i]] = ValueJson(values[i]);
      *out_ << object.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
      return;
    }
    case OutputFormat::kCsv: {
      std::string line;
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) line.push_back(',');
        if (!IsNull(values[i])) {
          const std::string text = ValueText(values[i]);
          line += CsvQuote(text, text.empty());
        }
      }
      *out_ << line << "\n";
      return;
    }
  }
}

void RowPrinter::Finish() {
  if (table_ != nullptr) *out_ << table_->ToString();
  out_->flush();
}

}  // namespace spool::cli
