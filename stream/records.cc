// Record parsing (formats and policies in spool/stream/records.h).
//
// A JSON object is read twice at most: a SAX pass fills the row straight
// from the parser's events, with no document built, and gives up on
// anything it would have to judge (a syntax error, a nested value, a key
// that is unknown or repeated, a value that does not convert); the record is
// then parsed again into a document, whose reading is the reference for
// errors, rescue and repeated keys. Both convert values with ScalarToValue.
#include "spool/stream/records.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "csv_reader.h"

namespace spool {
namespace {

using ordered_json = nlohmann::ordered_json;

// Limits on a JSON record that does not take the fast path: deeper values
// would be copied and printed recursively, and a document's object finds a
// key by a linear search (quadratic in its keys).
constexpr size_t kMaxJsonNesting = 256;
constexpr size_t kMaxJsonKeys = 4 * Schema::kMaxColumns;
static_assert(kMaxJsonKeys >= Schema::kMaxColumns, "a record naming every column is within the limit");

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::array<int8_t, 256> kBase64Index = [] {
  std::array<int8_t, 256> index{};
  index.fill(-1);
  for (int8_t i = 0; i < 64; ++i) index[static_cast<unsigned char>(kBase64Alphabet[i])] = i;
  return index;
}();

template <typename T>
bool ParseWhole(std::string_view text, T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

// `text` equals `lower` (lower-case ASCII) but for the case of letters.
bool EqualsIgnoreCase(std::string_view text, std::string_view lower) {
  return std::equal(text.begin(), text.end(), lower.begin(), lower.end(), [](char c, char l) {
    return (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) == l;
  });
}

std::string Shown(std::string_view text) {
  return text.size() > 40 ? "'" + std::string(text.substr(0, 40)) + "…'" : "'" + std::string(text) + "'";
}

// ---------------------------------------------------------------------------
// Where a record came from, for errors

struct RecordPlace {
  std::string_view source;
  uint64_t line = 0;  // 0: a record that is not a line of a file
};

Status RecordError(const RecordPlace& at, std::string_view what) {
  std::string where(at.source);
  if (at.line > 0) where += (where.empty() ? "line " : " line ") + std::to_string(at.line);
  if (!where.empty()) where += ": ";
  return Status::InvalidArgument(where.append(what));
}

Status FieldError(const RecordPlace& at, const Column& column, std::string_view what) {
  return RecordError(at, "column '" + column.name + "': " + std::string(what));
}

// "unknown column 'colour' (the table has: id, name)".
std::string UnknownColumn(std::string_view name, const Schema& schema) {
  std::string columns;
  for (const Column& c : schema.columns()) columns += (columns.empty() ? "" : ", ") + c.name;
  return "unknown column '" + std::string(name) + "' (the table has: " + columns + ")";
}

// ---------------------------------------------------------------------------
// Values from text (CSV, and JSON strings that stand for other types)

Status TextToValue(const RecordPlace& at, const Column& column, std::string_view text, bool quoted, Value* value) {
  if (text.empty() && !quoted) {
    if (!column.nullable) {
      return FieldError(at, column, "must not be null (an empty field is null; quote \"\" for an empty string)");
    }
    *value = std::monostate{};
    return Status::OK();
  }
  const auto bad = [&](std::string_view expected) {
    return FieldError(at, column, "expected " + std::string(expected) + ", got " + Shown(text));
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
    case ColumnType::kBool:
      if (!EqualsIgnoreCase(text, "true") && !EqualsIgnoreCase(text, "false")) return bad("true or false");
      *value = EqualsIgnoreCase(text, "true");
      return Status::OK();
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

// ---------------------------------------------------------------------------
// Values from JSON

// One JSON value as the SAX parser reports it or a document holds it.
struct JsonScalar {
  enum class Kind : uint8_t { kNull, kBool, kInteger, kUnsigned, kFloat, kString, kOther };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double number = 0;
  std::string* text = nullptr;         // kString; moved from when converted
  const ordered_json* node = nullptr;  // kOther: an array or object of a document
};

JsonScalar ScalarOf(ordered_json& j) {
  using Kind = JsonScalar::Kind;
  switch (j.type()) {
    case ordered_json::value_t::null: return {};
    case ordered_json::value_t::boolean: return {.kind = Kind::kBool, .boolean = j.get<bool>()};
    case ordered_json::value_t::number_integer: return {.kind = Kind::kInteger, .integer = j.get<int64_t>()};
    case ordered_json::value_t::number_unsigned:
      return {.kind = Kind::kUnsigned, .unsigned_integer = j.get<uint64_t>()};
    case ordered_json::value_t::number_float: return {.kind = Kind::kFloat, .number = j.get<double>()};
    case ordered_json::value_t::string: return {.kind = Kind::kString, .text = j.get_ptr<std::string*>()};
    default: return {.kind = Kind::kOther, .node = &j};
  }
}

ordered_json ScalarJson(const JsonScalar& s) {
  switch (s.kind) {
    case JsonScalar::Kind::kNull: return nullptr;
    case JsonScalar::Kind::kBool: return s.boolean;
    case JsonScalar::Kind::kInteger: return s.integer;
    case JsonScalar::Kind::kUnsigned: return s.unsigned_integer;
    case JsonScalar::Kind::kFloat: return s.number;
    case JsonScalar::Kind::kString: return *s.text;
    case JsonScalar::Kind::kOther: return *s.node;
  }
  return nullptr;
}

std::string JsonText(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

// A JSON value as a value of `column`'s type: strict, no conversions but
// those the formats name.
Status ScalarToValue(const RecordPlace& at, const Column& column, JsonScalar& j, Value* value) {
  using Kind = JsonScalar::Kind;
  if (j.kind == Kind::kNull) {
    if (!column.nullable) return FieldError(at, column, "must not be null");
    *value = std::monostate{};
    return Status::OK();
  }
  const auto bad = [&](std::string_view expected) {
    return FieldError(at, column, "expected " + std::string(expected) + ", got " + JsonText(ScalarJson(j)));
  };
  switch (column.type) {
    case ColumnType::kInt64:
    case ColumnType::kTimestamp: {
      if (j.kind == Kind::kString && column.type == ColumnType::kTimestamp) {
        return TextToValue(at, column, *j.text, true, value);
      }
      if (j.kind != Kind::kInteger && j.kind != Kind::kUnsigned) {
        return bad(column.type == ColumnType::kInt64 ? "an int64" : "a timestamp");
      }
      if (j.kind == Kind::kUnsigned && j.unsigned_integer > static_cast<uint64_t>(INT64_MAX)) {
        return bad("an int64 in range");
      }
      const int64_t n = j.kind == Kind::kInteger ? j.integer : static_cast<int64_t>(j.unsigned_integer);
      if (column.type == ColumnType::kInt64) *value = n;
      else *value = Timestamp{n};
      return Status::OK();
    }
    case ColumnType::kDouble: {
      if (j.kind == Kind::kInteger) *value = static_cast<double>(j.integer);
      else if (j.kind == Kind::kUnsigned) *value = static_cast<double>(j.unsigned_integer);
      else if (j.kind == Kind::kFloat) *value = j.number;
      if (j.kind == Kind::kInteger || j.kind == Kind::kUnsigned || j.kind == Kind::kFloat) return Status::OK();
      const std::string_view text = j.kind == Kind::kString ? std::string_view(*j.text) : std::string_view();
      if (text != "NaN" && text != "Infinity" && text != "-Infinity") {
        return bad("a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
      }
      return TextToValue(at, column, text, true, value);
    }
    case ColumnType::kString:
      if (j.kind != Kind::kString) return bad("a string");
      *value = std::move(*j.text);
      return Status::OK();
    case ColumnType::kBool:
      if (j.kind != Kind::kBool) return bad("true or false");
      *value = j.boolean;
      return Status::OK();
    case ColumnType::kBytes:
      if (j.kind != Kind::kString) return bad("a base64 string");
      return TextToValue(at, column, *j.text, true, value);
  }
  return bad("a known type");
}

// How deeply arrays and objects nest in JSON text, and how many keys it
// holds (at most, when the text is malformed).
struct JsonShape {
  size_t depth = 0;
  size_t keys = 0;
};

JsonShape ShapeOf(std::string_view text) {
  JsonShape shape;
  size_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) i += text[i] == '\\' ? 1u : 0u;
    } else if (c == '[' || c == '{') {
      shape.depth = std::max(shape.depth, ++depth);
    } else if (c == ']' || c == '}') {
      depth -= depth > 0 ? 1u : 0u;
    } else if (c == ':') {
      ++shape.keys;
    }
  }
  return shape;
}

// "[json.exception.parse_error.101] parse error at line 1, column 9: …" as
// "parse error at column 9: …"; "[json.exception.out_of_range.406] number
// overflow parsing '1e999'" as "number overflow parsing '1e999'".
std::string ParseErrorText(const ordered_json::exception& e) {
  std::string what = e.what();
  if (size_t end = what.find("] "); end != std::string::npos) what = what.substr(end + 2);
  if (size_t l1 = what.find("at line 1, "); l1 != std::string::npos) what.replace(l1, 11, "at ");
  return what;
}

// ---------------------------------------------------------------------------
// Rows

using ColumnSet = std::bitset<Schema::kMaxColumns>;

// What a record could not use, under kRescue: the rescue column's value.
class Rescued {
 public:
  // A null is not added: it holds nothing to rescue.
  void Add(const std::string& name, ordered_json value) {
    if (!value.is_null()) fields_[name] = std::move(value);
  }
  void Corrupt(std::string_view raw) { fields_["_corrupt_record"] = std::string(raw); }
  // Null when nothing was added.
  Value Take(std::string_view source) {
    if (fields_.is_null()) return std::monostate{};
    fields_["_file_path"] = std::string(source);
    return JsonText(fields_);
  }

 private:
  ordered_json fields_;  // null until the first field
};

// The schema and options of one read, checked.
class RecordParser {
 public:
  // Errors: InvalidArgument when the options do not fit the schema.
  static Status Make(const Schema& schema, const RecordOptions& options, std::optional<RecordParser>* parser);

  const Schema& schema() const { return schema_; }
  const RecordOptions& options() const { return options_; }
  bool rescuing() const { return rescue_.has_value(); }
  bool IsKey(size_t index) const {
    return std::find(schema_.key_columns().begin(), schema_.key_columns().end(), index) != schema_.key_columns().end();
  }
  // The column a record's field `name` fills: not the rescue column under
  // kRescue. `hint`, the column after the previous field's, is tried first.
  std::optional<size_t> FindField(std::string_view name, size_t hint) const {
    const std::vector<Column>& columns = schema_.columns();
    std::optional<size_t> index = hint < columns.size() && columns[hint].name == name ? hint : schema_.FindColumn(name);
    return index == rescue_ ? std::nullopt : index;
  }

  // The first NOT NULL column a record must name (keys only: of the key)
  // that `given` lacks; null when none.
  const Column* MissingColumn(const ColumnSet& given) const {
    for (size_t i = 0; i < schema_.columns().size(); ++i) {
      const Column& column = schema_.columns()[i];
      if (!given[i] && !column.nullable && (!options_.keys_only || IsKey(i))) return &column;
    }
    return nullptr;
  }

  // The row from one record's values (`given`: the columns it named): the
  // rescued fields (kRescue) into their column; the key alone when
  // keys_only. Errors: InvalidArgument for a missing NOT NULL column.
  Status FinishRow(const RecordPlace& at, Row&& values, const ColumnSet& given, Rescued* rescued, Row* row) const;
  // The row of a record that could not be read at all (kRescue).
  Status CorruptRow(const RecordPlace& at, std::string_view raw, Row* row) const {
    Rescued rescued;
    rescued.Corrupt(raw);
    return FinishRow(at, Row(schema_.columns().size()), ColumnSet(), &rescued, row);
  }

 private:
  RecordParser(const Schema& schema, const RecordOptions& options) : schema_(schema), options_(options) {}

  const Schema& schema_;
  const RecordOptions& options_;
  std::optional<size_t> rescue_;  // the rescue column, under kRescue
};

Status RecordParser::Make(const Schema& schema, const RecordOptions& options, std::optional<RecordParser>* parser) {
  parser->emplace(RecordParser(schema, options));
  if (options.bad_records != BadRecordPolicy::kRescue) return Status::OK();
  if (options.keys_only) {
    return Status::InvalidArgument("bad records cannot be rescued when reading keys only (the records of a delete)");
  }
  const std::optional<size_t> rescue = schema.FindColumn(options.rescue_column);
  if (!rescue || schema.columns()[*rescue].type != ColumnType::kString || !schema.columns()[*rescue].nullable) {
    return Status::InvalidArgument("rescuing bad records needs a nullable string column '" + options.rescue_column +
                                   "' in the schema to hold them");
  }
  for (const Column& column : schema.columns()) {
    if (!column.nullable) {
      return Status::InvalidArgument("column '" + column.name +
                                     "' must be nullable when bad records are rescued (a record whose value for it "
                                     "does not parse is still a row)");
    }
  }
  (*parser)->rescue_ = rescue;
  return Status::OK();
}

Status RecordParser::FinishRow(const RecordPlace& at, Row&& values, const ColumnSet& given, Rescued* rescued,
                               Row* row) const {
  if (const Column* missing = MissingColumn(given)) {
    return RecordError(at, "column '" + missing->name + "' is missing and must not be null");
  }
  if (rescue_ && rescued != nullptr) values[*rescue_] = rescued->Take(options_.source_name);
  if (!options_.keys_only) {
    *row = std::move(values);
    return Status::OK();
  }
  row->clear();
  for (size_t index : schema_.key_columns()) row->push_back(std::move(values[index]));
  return Status::OK();
}

// ---------------------------------------------------------------------------
// JSON objects

// The SAX pass: each handler returns false to give the record up.
class FastJsonRecord {
 public:
  FastJsonRecord(const RecordParser& parser, const RecordPlace& at, Row* values, ColumnSet* given)
      : parser_(parser), at_(at), values_(values), given_(given) {}

  bool null() { return Scalar({}); }
  bool boolean(bool b) { return Scalar({.kind = JsonScalar::Kind::kBool, .boolean = b}); }
  bool number_integer(int64_t n) { return Scalar({.kind = JsonScalar::Kind::kInteger, .integer = n}); }
  bool number_unsigned(uint64_t n) { return Scalar({.kind = JsonScalar::Kind::kUnsigned, .unsigned_integer = n}); }
  bool number_float(double d, const std::string&) { return Scalar({.kind = JsonScalar::Kind::kFloat, .number = d}); }
  bool string(std::string& s) { return Scalar({.kind = JsonScalar::Kind::kString, .text = &s}); }
  bool binary(ordered_json::binary_t&) { return false; }
  bool start_object(size_t) { return depth_++ == 0; }
  bool end_object() { return depth_-- == 1; }
  bool start_array(size_t) { return false; }
  bool end_array() { return false; }
  bool key(std::string& name) {
    const std::optional<size_t> index = parser_.FindField(name, column_ + 1);
    if (!index || given_->test(*index)) return false;
    given_->set(*index);
    column_ = *index;
    skip_ = parser_.options().keys_only && !parser_.IsKey(column_);
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  bool Scalar(JsonScalar s) {
    if (depth_ != 1) return false;  // not an object
    return skip_ || ScalarToValue(at_, parser_.schema().columns()[column_], s, &(*values_)[column_]).ok();
  }

  const RecordParser& parser_;
  const RecordPlace& at_;
  Row* values_;
  ColumnSet* given_;
  int depth_ = 0;
  size_t column_ = std::numeric_limits<size_t>::max();  // the current key's; +1 wraps to 0
  bool skip_ = false;
};

// The document pass: the reference reading, with errors and rescue.
// `rescued` is null under kFail.
Status ParseJsonDocument(const RecordParser& parser, const RecordPlace& at, std::string_view text, Row* values,
                         ColumnSet* given, Rescued* rescued) {
  const JsonShape shape = ShapeOf(text);
  if (shape.depth > kMaxJsonNesting || shape.keys > kMaxJsonKeys) {
    if (rescued == nullptr) {
      return RecordError(at, shape.keys > kMaxJsonKeys
                                 ? "JSON with more than " + std::to_string(kMaxJsonKeys) + " keys"
                                 : "JSON nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
    }
    rescued->Corrupt(text);
    return Status::OK();
  }
  ordered_json object;
  try {
    object = ordered_json::parse(text);
  } catch (const ordered_json::exception& e) {
    if (rescued == nullptr) return RecordError(at, "malformed JSON: " + ParseErrorText(e));
    rescued->Corrupt(text);
    return Status::OK();
  }
  if (!object.is_object()) {
    if (rescued == nullptr) return RecordError(at, std::string("expected a JSON object, got ") + object.type_name());
    rescued->Corrupt(text);
    return Status::OK();
  }
  for (auto field = object.begin(); field != object.end(); ++field) {
    const std::optional<size_t> index = parser.FindField(field.key(), 0);
    if (!index) {
      if (rescued == nullptr) return RecordError(at, UnknownColumn(field.key(), parser.schema()));
      rescued->Add(field.key(), std::move(field.value()));
      continue;
    }
    given->set(*index);
    if (parser.options().keys_only && !parser.IsKey(*index)) continue;
    JsonScalar scalar = ScalarOf(field.value());
    Status s = ScalarToValue(at, parser.schema().columns()[*index], scalar, &(*values)[*index]);
    if (!s.ok() && rescued == nullptr) return s;
    if (!s.ok()) rescued->Add(field.key(), std::move(field.value()));
  }
  return Status::OK();
}

Status ParseJsonObject(const RecordParser& parser, const RecordPlace& at, std::string_view text, Row* row) {
  const size_t width = parser.schema().columns().size();
  Row values(width);
  ColumnSet given;
  FastJsonRecord fast(parser, at, &values, &given);
  bool taken = false;
  try {
    taken = ordered_json::sax_parse(text.begin(), text.end(), &fast);
  } catch (const ordered_json::exception&) {
    taken = false;
  }
  if (taken) return parser.FinishRow(at, std::move(values), given, nullptr, row);
  values.assign(width, Value());
  given.reset();
  Rescued rescued;
  Rescued* rescue = parser.rescuing() ? &rescued : nullptr;
  SPOOL_RETURN_IF_ERROR(ParseJsonDocument(parser, at, text, &values, &given, rescue));
  return parser.FinishRow(at, std::move(values), given, rescue, row);
}

// One line of JSON lines; a blank one gives no row.
Status ReadJsonLine(const RecordParser& parser, const RecordPlace& at, std::string_view line, const RecordSink& emit) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return Status::OK();
  Row row;
  SPOOL_RETURN_IF_ERROR(ParseJsonObject(parser, at, line, &row));
  return emit(std::move(row), at.line);
}

Status ReadJsonLines(const RecordParser& parser, std::string_view data, const RecordSink& emit) {
  RecordPlace at{parser.options().source_name, 0};
  for (size_t pos = 0; pos < data.size();) {
    const size_t end = std::min(data.find('\n', pos), data.size());
    ++at.line;
    SPOOL_RETURN_IF_ERROR(ReadJsonLine(parser, at, data.substr(pos, end - pos), emit));
    pos = end + 1;
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// CSV

constexpr size_t kExtraField = std::numeric_limits<size_t>::max();

// The header: for each field position its column (kExtraField: a name
// rescued as an unknown field) and its name.
struct CsvHeader {
  std::vector<size_t> columns;
  std::vector<std::string> names;
};

Status ReadCsvHeader(const RecordParser& parser, const RecordPlace& at, const CsvRecord& record, CsvHeader* header) {
  ColumnSet given;
  for (size_t i = 0; i < record.size; ++i) {
    const std::string_view name = record[i].text();
    const std::optional<size_t> index = parser.FindField(name, 0);
    if (!index && !parser.rescuing()) return RecordError(at, "header: " + UnknownColumn(name, parser.schema()));
    if (index && given[*index] && !parser.rescuing()) {
      return RecordError(at, "header: column '" + std::string(name) + "' appears twice");
    }
    const bool extra = !index || given[*index];
    if (!extra) given.set(*index);
    header->columns.push_back(extra ? kExtraField : *index);
    header->names.emplace_back(name);
  }
  if (const Column* missing = parser.MissingColumn(given)) {
    return RecordError(at, "header: column '" + missing->name + "' is missing and must not be null");
  }
  return Status::OK();
}

Status ParseCsvRecord(const RecordParser& parser, const RecordPlace& at, const CsvHeader& header,
                      const CsvRecord& record, Row* row) {
  if (record.size != header.columns.size()) {
    if (parser.rescuing()) return parser.CorruptRow(at, record.raw, row);
    return RecordError(at, std::to_string(record.size) + " field(s), but the header has " +
                               std::to_string(header.columns.size()));
  }
  Row values(parser.schema().columns().size());
  ColumnSet given;
  Rescued rescued;
  for (size_t i = 0; i < record.size; ++i) {
    const CsvField& field = record[i];
    const size_t index = header.columns[i];
    if (index == kExtraField) {
      if (field.quoted || !field.raw.empty()) rescued.Add(header.names[i], std::string(field.text()));
      continue;
    }
    given.set(index);
    if (parser.options().keys_only && !parser.IsKey(index)) continue;
    Status s = TextToValue(at, parser.schema().columns()[index], field.text(), field.quoted, &values[index]);
    if (!s.ok() && !parser.rescuing()) return s;
    if (!s.ok()) rescued.Add(header.names[i], std::string(field.text()));
  }
  return parser.FinishRow(at, std::move(values), given, &rescued, row);
}

Status ReadCsv(const RecordParser& parser, std::string_view data, const RecordSink& emit) {
  CsvReader reader(data);
  CsvRecord record;
  CsvHeader header;
  bool have_header = false;
  RecordPlace at{parser.options().source_name, 0};
  while (true) {
    bool got = false;
    Row row;
    if (Status s = reader.Next(&record, &got); !s.ok()) {
      if (!parser.rescuing() || !have_header) return RecordError({at.source, reader.error_line()}, s.message());
      at.line = record.line;
      SPOOL_RETURN_IF_ERROR(parser.CorruptRow(at, reader.SkipBadRecord(), &row));
      SPOOL_RETURN_IF_ERROR(emit(std::move(row), at.line));
      continue;
    }
    if (!got) return Status::OK();
    if (record.blank()) continue;
    at.line = record.line;
    if (!have_header) {
      SPOOL_RETURN_IF_ERROR(ReadCsvHeader(parser, at, record, &header));
      have_header = true;
      continue;
    }
    SPOOL_RETURN_IF_ERROR(ParseCsvRecord(parser, at, header, record, &row));
    SPOOL_RETURN_IF_ERROR(emit(std::move(row), at.line));
  }
}

Status ReadAll(const RecordParser& parser, std::string_view data, const RecordSink& emit) {
  return parser.options().format == RecordFormat::kCsv ? ReadCsv(parser, data, emit)
                                                       : ReadJsonLines(parser, data, emit);
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
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"us", 1ull},               {"microsecond", 1ull},          {"microseconds", 1ull},
      {"ms", 1'000ull},           {"millisecond", 1'000ull},      {"milliseconds", 1'000ull},
      {"s", 1'000'000ull},        {"second", 1'000'000ull},       {"seconds", 1'000'000ull},
      {"m", 60'000'000ull},       {"minute", 60'000'000ull},      {"minutes", 60'000'000ull},
      {"h", 3'600'000'000ull},    {"hour", 3'600'000'000ull},     {"hours", 3'600'000'000ull},
      {"d", 86'400'000'000ull},   {"day", 86'400'000'000ull},     {"days", 86'400'000'000ull}};
  const size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  uint64_t n = 0;
  if (ParseWhole(text.substr(0, digits), &n)) {
    std::string_view unit = text.substr(digits);
    unit.remove_prefix(std::min(unit.find_first_not_of(' '), unit.size()));
    for (const auto& [name, scale] : kUnits) {
      if (!EqualsIgnoreCase(unit, name)) continue;
      if (n > static_cast<uint64_t>(INT64_MAX) / scale) break;  // fits an int64 of microseconds
      *micros = n * scale;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("duration " + Shown(text) +
                                 " must be a number and a unit: us, ms, s, m, h or d, or the unit as a word (e.g. 168h, "
                                 "7d, 10 minutes, 1 hour), at most 2^63 microseconds");
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
  const auto bad = [&] {
    return Status::InvalidArgument("expected base64 (RFC 4648, with padding), got " + Shown(text));
  };
  if (text.size() % 4 != 0) return bad();
  bytes->clear();
  bytes->reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const size_t pad = last ? static_cast<size_t>(std::count(text.end() - 2, text.end(), '=')) : 0;
    if (pad == 1 && text[i + 2] == '=') return bad();
    uint32_t group = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int index = k >= 4 - pad ? 0 : kBase64Index[static_cast<unsigned char>(text[i + k])];
      if (index < 0) return bad();
      group = group << 6 | static_cast<uint32_t>(index);
    }
    for (size_t k = 0; k < 3 - pad; ++k) bytes->push_back(static_cast<char>((group >> (16 - 8 * k)) & 0xff));
  }
  return Status::OK();
}

Status ReadRecords(std::string_view data, const Schema& schema, const RecordOptions& options,
                   const RecordSink& emit) {
  std::optional<RecordParser> parser;
  SPOOL_RETURN_IF_ERROR(RecordParser::Make(schema, options, &parser));
  return ReadAll(*parser, data, emit);
}

Status ReadRecords(std::istream& in, const Schema& schema, const RecordOptions& options, const RecordSink& emit) {
  std::optional<RecordParser> parser;
  SPOOL_RETURN_IF_ERROR(RecordParser::Make(schema, options, &parser));
  const auto read_failed = [&] { return Status::IOError(options.source_name + ": read failed"); };
  if (options.format == RecordFormat::kCsv) {
    std::string data;
    char chunk[1 << 16];
    while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) data.append(chunk, static_cast<size_t>(in.gcount()));
    if (in.bad()) return read_failed();
    return ReadAll(*parser, data, emit);
  }
  std::string line;
  RecordPlace at{options.source_name, 0};
  while (std::getline(in, line)) {
    ++at.line;
    SPOOL_RETURN_IF_ERROR(ReadJsonLine(*parser, at, line, emit));
  }
  if (in.bad()) return read_failed();
  return Status::OK();
}

Status ParseJsonRecord(std::string_view text, const Schema& schema, const RecordOptions& options, Row* row) {
  std::optional<RecordParser> parser;
  SPOOL_RETURN_IF_ERROR(RecordParser::Make(schema, options, &parser));
  return ParseJsonObject(*parser, RecordPlace{options.source_name, 0}, text, row);
}

}  // namespace spool
