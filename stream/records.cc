// Record parsing (formats and policies in spool/stream/records.h).
//
// A JSON object is read twice at most: a hand-written scanner of flat
// objects fills the row straight from the text, with no document built and
// nothing allocated but the values (and a string with escapes, decoded), and
// gives up on anything it would have to judge (a syntax error, a nested value, a key that is unknown or
// repeated, a value that does not convert); the record is then parsed again
// into an nlohmann document, whose reading is the reference for errors,
// rescue and repeated keys. The scanner reads JSON exactly as nlohmann
// does, and both convert values with ScalarToValue.
#include "spool/stream/records.h"

#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <charconv>
#include <cmath>
#include <cstring>
#include <istream>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "csv_reader.h"
#include "json_text.h"
#include "parse_whole.h"

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

// `text` equals `lower` (lower-case ASCII) but for the case of letters.
bool EqualsIgnoreCase(std::string_view text, std::string_view lower) {
  return std::equal(text.begin(), text.end(), lower.begin(), lower.end(),
                    [](char c, char l) { return (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) == l; });
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

// TextToValue and ScalarToValue (below) convert into `*value`, or only check
// when `value` is null (a column left NULL): Keep then keeps nothing, and a
// string is not copied.
template <typename T>
void Keep(Value* value, T&& converted) {
  if (value != nullptr) *value = std::forward<T>(converted);
}

Status TextToValue(const RecordPlace& at, const Column& column, std::string_view text, bool quoted, Value* value) {
  if (text.empty() && !quoted) {
    if (!column.nullable) {
      return FieldError(at, column, "must not be null (an empty field is null; quote \"\" for an empty string)");
    }
    Keep(value, std::monostate{});
    return Status::OK();
  }
  const auto bad = [&](std::string_view expected) {
    return FieldError(at, column, "expected " + std::string(expected) + ", got " + Shown(text));
  };
  switch (column.type) {
    case ColumnType::kInt64: {
      int64_t n = 0;
      if (!ParseWhole(text, &n)) return bad("an int64");
      Keep(value, n);
      return Status::OK();
    }
    case ColumnType::kDouble: {
      double d = 0;
      if (!ParseWhole(text, &d)) return bad("a double");
      Keep(value, d);
      return Status::OK();
    }
    case ColumnType::kString:
      if (value != nullptr) *value = std::string(text);
      return Status::OK();
    case ColumnType::kBool:
      if (!EqualsIgnoreCase(text, "true") && !EqualsIgnoreCase(text, "false")) return bad("true or false");
      Keep(value, EqualsIgnoreCase(text, "true"));
      return Status::OK();
    case ColumnType::kTimestamp: {
      int64_t micros = 0;
      Status s = ParseTimestamp(text, &micros);
      if (!s.ok()) return FieldError(at, column, s.message());
      Keep(value, Timestamp{micros});
      return Status::OK();
    }
    case ColumnType::kBytes: {
      std::string bytes;
      Status s = DecodeBase64(text, &bytes);
      if (!s.ok()) return FieldError(at, column, s.message());
      Keep(value, Bytes{std::move(bytes)});
      return Status::OK();
    }
  }
  return bad("a known type");
}

// ---------------------------------------------------------------------------
// Values from JSON

// One JSON value as the scanner reads it or a document holds it.
struct JsonScalar {
  enum class Kind : uint8_t { kNull, kBool, kInteger, kUnsigned, kFloat, kString, kOther };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double number = 0;
  std::string_view text = {};          // kString
  std::string* movable = nullptr;      // kString of a document: moved from when converted
  const ordered_json* node = nullptr;  // kOther: an array or object of a document
};

JsonScalar ScalarOf(ordered_json& j) {
  using Kind = JsonScalar::Kind;
  switch (j.type()) {
    case ordered_json::value_t::null:
      return {};
    case ordered_json::value_t::boolean:
      return {.kind = Kind::kBool, .boolean = j.get<bool>()};
    case ordered_json::value_t::number_integer:
      return {.kind = Kind::kInteger, .integer = j.get<int64_t>()};
    case ordered_json::value_t::number_unsigned:
      return {.kind = Kind::kUnsigned, .unsigned_integer = j.get<uint64_t>()};
    case ordered_json::value_t::number_float:
      return {.kind = Kind::kFloat, .number = j.get<double>()};
    case ordered_json::value_t::string: {
      std::string* text = j.get_ptr<std::string*>();
      return {.kind = Kind::kString, .text = *text, .movable = text};
    }
    default:
      return {.kind = Kind::kOther, .node = &j};
  }
}

ordered_json ScalarJson(const JsonScalar& s) {
  switch (s.kind) {
    case JsonScalar::Kind::kNull:
      return nullptr;
    case JsonScalar::Kind::kBool:
      return s.boolean;
    case JsonScalar::Kind::kInteger:
      return s.integer;
    case JsonScalar::Kind::kUnsigned:
      return s.unsigned_integer;
    case JsonScalar::Kind::kFloat:
      return s.number;
    case JsonScalar::Kind::kString:
      return std::string(s.text);
    case JsonScalar::Kind::kOther:
      return *s.node;
  }
  return nullptr;
}

// The error of a JSON value that does not convert. Out of line: records
// that fit never build one, and their conversion saves fewer registers.
[[gnu::cold, gnu::noinline]] Status ScalarError(const RecordPlace& at, const Column& column, const JsonScalar& j,
                                                std::string_view expected) {
  return FieldError(at, column, "expected " + std::string(expected) + ", got " + JsonText(ScalarJson(j)));
}

// A JSON value as a value of `column`'s type: strict, no conversions but
// those the formats name.
Status ScalarToValue(const RecordPlace& at, const Column& column, JsonScalar& j, Value* value) {
  using Kind = JsonScalar::Kind;
  if (j.kind == Kind::kNull) {
    if (!column.nullable) return FieldError(at, column, "must not be null");
    Keep(value, std::monostate{});
    return Status::OK();
  }
  switch (column.type) {
    case ColumnType::kInt64:
    case ColumnType::kTimestamp: {
      if (j.kind == Kind::kString && column.type == ColumnType::kTimestamp) {
        return TextToValue(at, column, j.text, true, value);
      }
      if (j.kind != Kind::kInteger && j.kind != Kind::kUnsigned) {
        return ScalarError(at, column, j, column.type == ColumnType::kInt64 ? "an int64" : "a timestamp");
      }
      if (j.kind == Kind::kUnsigned && j.unsigned_integer > static_cast<uint64_t>(INT64_MAX)) {
        return ScalarError(at, column, j, "an int64 in range");
      }
      const int64_t n = j.kind == Kind::kInteger ? j.integer : static_cast<int64_t>(j.unsigned_integer);
      if (column.type == ColumnType::kInt64) Keep(value, n);
      else Keep(value, Timestamp{n});
      return Status::OK();
    }
    case ColumnType::kDouble: {
      if (j.kind == Kind::kInteger) Keep(value, static_cast<double>(j.integer));
      else if (j.kind == Kind::kUnsigned) Keep(value, static_cast<double>(j.unsigned_integer));
      else if (j.kind == Kind::kFloat) Keep(value, j.number);
      if (j.kind == Kind::kInteger || j.kind == Kind::kUnsigned || j.kind == Kind::kFloat) return Status::OK();
      const std::string_view text = j.kind == Kind::kString ? j.text : std::string_view();
      if (text != "NaN" && text != "Infinity" && text != "-Infinity") {
        return ScalarError(at, column, j, "a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
      }
      return TextToValue(at, column, text, true, value);
    }
    case ColumnType::kString:
      if (j.kind != Kind::kString) return ScalarError(at, column, j, "a string");
      if (value == nullptr) return Status::OK();
      if (j.movable != nullptr) *value = std::move(*j.movable);
      else *value = std::string(j.text);
      return Status::OK();
    case ColumnType::kBool:
      if (j.kind != Kind::kBool) return ScalarError(at, column, j, "true or false");
      Keep(value, j.boolean);
      return Status::OK();
    case ColumnType::kBytes:
      if (j.kind != Kind::kString) return ScalarError(at, column, j, "a base64 string");
      return TextToValue(at, column, j.text, true, value);
  }
  return ScalarError(at, column, j, "a known type");
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

// The schema and options of a read, checked; it refers to both.
class RecordRules {
 public:
  // Errors: InvalidArgument when the options do not fit the schema.
  static Status Make(const Schema& schema, const RecordOptions& options, std::optional<RecordRules>* rules);

  const Schema& schema() const { return schema_; }
  const RecordOptions& options() const { return options_; }
  bool rescuing() const { return rescue_.has_value(); }
  bool IsKey(size_t index) const {
    return std::find(schema_.key_columns().begin(), schema_.key_columns().end(), index) != schema_.key_columns().end();
  }
  // The column a record's field `name` fills, or kNoField: not the rescue
  // column under kRescue. `hint`, the column after the previous field's,
  // is tried first. (A plain index: an optional, passed through memory
  // field by field, cost the fast path a store-forwarding stall per field.)
  static constexpr size_t kNoField = SIZE_MAX;
  size_t FindField(std::string_view name, size_t hint) const {
    const std::vector<Column>& columns = schema_.columns();
    size_t index = hint;
    if (hint >= columns.size() || columns[hint].name != name) index = schema_.FindColumn(name).value_or(kNoField);
    return rescue_ && index == *rescue_ ? kNoField : index;
  }

  // Where the value of column `index` goes: null when every row leaves the
  // column NULL (RecordOptions::leave_null), its value only checked.
  Value* Slot(size_t index, Row* values) const { return leave_null_[index] ? nullptr : &(*values)[index]; }

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
  RecordRules(const Schema& schema, const RecordOptions& options) : schema_(schema), options_(options) {}

  const Schema& schema_;
  const RecordOptions& options_;
  std::optional<size_t> rescue_;  // the rescue column, under kRescue
  ColumnSet leave_null_;          // RecordOptions::leave_null
};

Status RecordRules::Make(const Schema& schema, const RecordOptions& options, std::optional<RecordRules>* rules) {
  rules->emplace(RecordRules(schema, options));
  const std::vector<bool>& leave_null = options.leave_null;
  const bool leaves_null = std::find(leave_null.begin(), leave_null.end(), true) != leave_null.end();
  if (!leave_null.empty() && leave_null.size() != schema.columns().size()) {
    return Status::InvalidArgument("the columns to leave null are " + std::to_string(leave_null.size()) +
                                   " flags for a schema of " + std::to_string(schema.columns().size()) + " columns");
  }
  if (leaves_null && options.keys_only) {
    return Status::InvalidArgument("no column can be left null when reading keys only (the records of a delete)");
  }
  for (size_t i = 0; i < leave_null.size(); ++i) (*rules)->leave_null_[i] = leave_null[i];
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
  if (leave_null.size() > *rescue && leave_null[*rescue]) {
    return Status::InvalidArgument("the rescue column '" + options.rescue_column + "' cannot be left null");
  }
  (*rules)->rescue_ = rescue;
  return Status::OK();
}

Status RecordRules::FinishRow(const RecordPlace& at, Row&& values, const ColumnSet& given, Rescued* rescued,
                              Row* row) const {
  if (const Column* missing = MissingColumn(given)) {
    return RecordError(at, "column '" + missing->name + "' is missing and must not be null");
  }
  if (rescue_ && rescued != nullptr) values[*rescue_] = rescued->Take(at.source);
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

// The eight bytes at `p` as a word, the first in its lowest byte.
uint64_t Word(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

// The fast path: a strict scanner of one flat object, {"name": scalar, ...},
// writing each value straight into its column. It reads the JSON grammar
// (RFC 8259) as nlohmann reads it, and gives up (returns false) on anything
// else and on anything it would have to judge: a nested value, a key that is
// unknown or repeated, a value that does not convert, and what nlohmann
// reads in its own way (a byte order mark, a NUL byte after the object, an
// integer too large for 64 bits, which nlohmann reads as a double). The
// document pass then reads the record.
class FlatJsonScanner {
 public:
  explicit FlatJsonScanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool Scan(const RecordRules& rules, const RecordPlace& at, Row* values, ColumnSet* given);

 private:
  bool Field(const RecordRules& rules, const RecordPlace& at, size_t* column, Row* values, ColumnSet* given);
  bool Scalar(JsonScalar* scalar);
  bool String(std::string_view* text);
  bool Unescape(const char* start, std::string_view* text);
  bool Escape();
  bool UnicodeEscape();
  bool Hex4(uint32_t* code);
  bool Utf8();
  bool Number(JsonScalar* scalar);
  bool Digits();
  bool Literal(std::string_view word);
  void SkipPlain();

  void SkipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool Eat(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  const char* p_;
  const char* const end_;
  std::string unescaped_;  // the last string that held escapes, decoded
};

bool FlatJsonScanner::Scan(const RecordRules& rules, const RecordPlace& at, Row* values, ColumnSet* given) {
  SkipSpace();
  if (!Eat('{')) return false;
  SkipSpace();
  if (!Eat('}')) {
    size_t column = std::numeric_limits<size_t>::max();  // the previous field's; +1 wraps to 0
    do {
      SkipSpace();
      if (!Field(rules, at, &column, values, given)) return false;
      SkipSpace();
    } while (Eat(','));
    if (!Eat('}')) return false;
  }
  SkipSpace();
  return p_ == end_;
}

// One "name": scalar, into the name's column.
bool FlatJsonScanner::Field(const RecordRules& rules, const RecordPlace& at, size_t* column, Row* values,
                            ColumnSet* given) {
  std::string_view name;
  if (!String(&name)) return false;
  const size_t index = rules.FindField(name, *column + 1);
  if (index == RecordRules::kNoField || given->test(index)) return false;
  given->set(index);
  *column = index;
  SkipSpace();
  if (!Eat(':')) return false;
  SkipSpace();
  JsonScalar scalar;
  if (!Scalar(&scalar)) return false;
  if (rules.options().keys_only && !rules.IsKey(index)) return true;
  return ScalarToValue(at, rules.schema().columns()[index], scalar, rules.Slot(index, values)).ok();
}

bool FlatJsonScanner::Scalar(JsonScalar* scalar) {
  using Kind = JsonScalar::Kind;
  if (p_ == end_) return false;
  switch (*p_) {
    case '"':
      scalar->kind = Kind::kString;
      return String(&scalar->text);
    case 't':
      *scalar = {.kind = Kind::kBool, .boolean = true};
      return Literal("true");
    case 'f':
      *scalar = {.kind = Kind::kBool, .boolean = false};
      return Literal("false");
    case 'n':
      *scalar = {};
      return Literal("null");
    default:
      return Number(scalar);
  }
}

bool FlatJsonScanner::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
  p_ += word.size();
  return true;
}

// A string: `*text` views the input, or unescaped_ when the string holds an
// escape (valid until the next string).
bool FlatJsonScanner::String(std::string_view* text) {
  if (!Eat('"')) return false;
  const char* start = p_;
  for (SkipPlain(); p_ != end_; SkipPlain()) {
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      *text = std::string_view(start, static_cast<size_t>(p_++ - start));
      return true;
    }
    if (c == '\\') return Unescape(start, text);
    if (c < 0x20) return false;  // a control character must be escaped
    if (c < 0x80) {
      ++p_;
    } else if (!Utf8()) {
      return false;
    }
  }
  return false;
}

// Moves p_ over the plain bytes of a string (printable ASCII but '"' and
// '\\'), eight at a time, to the first byte String must look at; the last
// few bytes of the text are left to it. Per byte of a word, the high bit
// of each term is set for a byte of 0x80 and above, '"', '\\' and a
// control byte; the lowest set bit is exact (a borrow can only mark bytes
// above a byte it truly marks).
void FlatJsonScanner::SkipPlain() {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x; };
  while (end_ - p_ >= 8) {
    const uint64_t w = Word(p_);
    const uint64_t marked =
        (w | zero_byte(w ^ (kOnes * '"')) | zero_byte(w ^ (kOnes * '\\')) | ((w - kOnes * 0x20) & ~w)) & kHigh;
    if (marked != 0) {
      p_ += std::countr_zero(marked) / 8;
      return;
    }
    p_ += 8;
  }
}

// The rest of a string from its first escape at p_, decoded after the
// plain bytes from `start`.
bool FlatJsonScanner::Unescape(const char* start, std::string_view* text) {
  unescaped_.assign(start, p_);
  while (p_ != end_) {
    const auto c = static_cast<unsigned char>(*p_);
    const char* from = p_;
    if (c == '"') {
      ++p_;
      *text = unescaped_;
      return true;
    }
    if (c == '\\') {
      if (!Escape()) return false;
      continue;
    }
    if (c < 0x20) return false;
    if (c < 0x80) {
      ++p_;
    } else if (!Utf8()) {
      return false;
    }
    unescaped_.append(from, p_);
  }
  return false;
}

// One escape at p_, appended to unescaped_.
bool FlatJsonScanner::Escape() {
  ++p_;  // the backslash
  if (p_ == end_) return false;
  const char c = *p_++;
  switch (c) {
    case '"':
    case '\\':
    case '/':
      unescaped_.push_back(c);
      return true;
    case 'b':
      unescaped_.push_back('\b');
      return true;
    case 'f':
      unescaped_.push_back('\f');
      return true;
    case 'n':
      unescaped_.push_back('\n');
      return true;
    case 'r':
      unescaped_.push_back('\r');
      return true;
    case 't':
      unescaped_.push_back('\t');
      return true;
    case 'u':
      return UnicodeEscape();
    default:
      return false;
  }
}

// \uXXXX after the 'u', as UTF-8; a high surrogate must be followed by
// \u and a low one, and a low one must follow a high one.
bool FlatJsonScanner::UnicodeEscape() {
  uint32_t code = 0;
  if (!Hex4(&code) || (code >= 0xDC00 && code <= 0xDFFF)) return false;
  if (code >= 0xD800 && code <= 0xDBFF) {
    uint32_t low = 0;
    if (!Eat('\\') || !Eat('u') || !Hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
  }
  const auto byte = [](uint32_t bits) { return static_cast<char>(bits); };
  if (code < 0x80) {
    unescaped_.push_back(byte(code));
  } else if (code < 0x800) {
    unescaped_ += {byte(0xC0 | code >> 6), byte(0x80 | (code & 0x3F))};
  } else if (code < 0x10000) {
    unescaped_ += {byte(0xE0 | code >> 12), byte(0x80 | (code >> 6 & 0x3F)), byte(0x80 | (code & 0x3F))};
  } else {
    unescaped_ += {byte(0xF0 | code >> 18), byte(0x80 | (code >> 12 & 0x3F)), byte(0x80 | (code >> 6 & 0x3F)),
                   byte(0x80 | (code & 0x3F))};
  }
  return true;
}

bool FlatJsonScanner::Hex4(uint32_t* code) {
  if (end_ - p_ < 4) return false;
  *code = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = *p_++;
    uint32_t digit = 0;
    if (c >= '0' && c <= '9') digit = static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') digit = static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') digit = static_cast<uint32_t>(c - 'A' + 10);
    else return false;
    *code = *code << 4 | digit;
  }
  return true;
}

// One well-formed UTF-8 sequence of two to four bytes at p_ (Unicode's
// table 3-7, as nlohmann checks it): no overlong forms, no surrogates,
// nothing past U+10FFFF.
bool FlatJsonScanner::Utf8() {
  const auto lead = static_cast<unsigned char>(*p_);
  size_t more = 0;
  unsigned char low = 0x80;  // the range of the byte after the lead
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    more = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    more = 2;
    low = lead == 0xE0 ? 0xA0 : low;
    high = lead == 0xED ? 0x9F : high;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    more = 3;
    low = lead == 0xF0 ? 0x90 : low;
    high = lead == 0xF4 ? 0x8F : high;
  } else {
    return false;
  }
  if (static_cast<size_t>(end_ - p_) <= more) return false;
  for (size_t i = 1; i <= more; ++i) {
    const auto c = static_cast<unsigned char>(p_[i]);
    if (c < (i == 1 ? low : 0x80) || c > (i == 1 ? high : 0xBF)) return false;
  }
  p_ += more + 1;
  return true;
}

// Whether the eight bytes of `word` (the first in its lowest byte) are all
// ASCII digits: each high nibble 3, and no low nibble above 9 (adding 6
// carries into the high nibble exactly then).
bool EightDigits(uint64_t word) {
  constexpr uint64_t kHighNibbles = 0xF0F0F0F0F0F0F0F0ull;
  constexpr uint64_t kThrees = 0x3030303030303030ull;
  return (word & kHighNibbles) == kThrees && ((word + 0x0606060606060606ull) & kHighNibbles) == kThrees;
}

// The number eight digits spell (EightDigits(word)): adjacent digits
// combined into pairs, pairs into fours, fours into the eight, each step
// in every lane at once, no lane overflowing into the next.
uint64_t EightDigitsValue(uint64_t word) {
  uint64_t d = word - 0x3030303030303030ull;          // each byte 0..9, the first digit lowest
  d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFull;    // 16-bit lanes: 0..99
  d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFull;  // 32-bit lanes: 0..9999
  return (d & 0xFFFF) * 10'000 + (d >> 32);
}

bool FlatJsonScanner::Digits() {
  const char* start = p_;
  while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  return p_ != start;
}

// A number as nlohmann reads it: without fraction and exponent an int64
// when it starts with '-', else a uint64; otherwise a double, which must be
// finite (nlohmann refuses an overflow). An integer out of its range gives
// up: nlohmann reads it as a double.
bool FlatJsonScanner::Number(JsonScalar* scalar) {
  using Kind = JsonScalar::Kind;
  const char* start = p_;
  const bool negative = Eat('-');
  const char* digits = p_;
  uint64_t magnitude = 0;  // of the integer part, while it has at most 18 digits
  if (!Eat('0')) {
    if (p_ == end_ || *p_ < '1' || *p_ > '9') return false;
    // Eight digits a step while they last (a timestamp in microseconds has
    // sixteen), then one at a time. Past 18 digits the magnitude wraps and
    // goes unused (`small`).
    for (; end_ - p_ >= 8 && EightDigits(Word(p_)); p_ += 8) {
      magnitude = magnitude * 100'000'000 + EightDigitsValue(Word(p_));
    }
    for (; p_ != end_ && *p_ >= '0' && *p_ <= '9'; ++p_) magnitude = magnitude * 10 + static_cast<uint64_t>(*p_ - '0');
  }
  const bool small = p_ - digits <= 18;  // below 10^18 < 2^63: read as it was scanned
  bool integer = true;
  if (Eat('.')) {
    if (!Digits()) return false;
    integer = false;
  }
  if (Eat('e') || Eat('E')) {
    if (!Eat('+')) Eat('-');
    if (!Digits()) return false;
    integer = false;
  }
  if (integer && small) {
    if (negative) *scalar = {.kind = Kind::kInteger, .integer = -static_cast<int64_t>(magnitude)};
    else *scalar = {.kind = Kind::kUnsigned, .unsigned_integer = magnitude};
    return true;
  }
  std::from_chars_result result;
  if (integer && negative) {
    scalar->kind = Kind::kInteger;
    result = std::from_chars(start, p_, scalar->integer);
  } else if (integer) {
    scalar->kind = Kind::kUnsigned;
    result = std::from_chars(start, p_, scalar->unsigned_integer);
  } else {
    scalar->kind = Kind::kFloat;
    result = std::from_chars(start, p_, scalar->number);
    if (result.ec == std::errc() && !std::isfinite(scalar->number)) return false;
  }
  return result.ec == std::errc() && result.ptr == p_;
}

// The document pass: the reference reading, with errors and rescue.
// `rescued` is null under kFail.
Status ParseJsonDocument(const RecordRules& rules, const RecordPlace& at, std::string_view text, Row* values,
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
    const size_t index = rules.FindField(field.key(), 0);
    if (index == RecordRules::kNoField) {
      if (rescued == nullptr) return RecordError(at, UnknownColumn(field.key(), rules.schema()));
      rescued->Add(field.key(), std::move(field.value()));
      continue;
    }
    given->set(index);
    if (rules.options().keys_only && !rules.IsKey(index)) continue;
    JsonScalar scalar = ScalarOf(field.value());
    Status s = ScalarToValue(at, rules.schema().columns()[index], scalar, rules.Slot(index, values));
    if (!s.ok() && rescued == nullptr) return s;
    if (!s.ok()) rescued->Add(field.key(), std::move(field.value()));
  }
  return Status::OK();
}

// The reference reading of one JSON object.
Status ParseJsonByDocument(const RecordRules& rules, const RecordPlace& at, std::string_view text, Row* row) {
  Row values(rules.schema().columns().size());
  ColumnSet given;
  Rescued rescued;
  Rescued* rescue = rules.rescuing() ? &rescued : nullptr;
  SPOOL_RETURN_IF_ERROR(ParseJsonDocument(rules, at, text, &values, &given, rescue));
  return rules.FinishRow(at, std::move(values), given, rescue, row);
}

// The fast path alone: nothing when it gives the record up.
std::optional<Status> ParseFlatObject(const RecordRules& rules, const RecordPlace& at, std::string_view text,
                                      Row* row) {
  Row values(rules.schema().columns().size());
  ColumnSet given;
  if (!FlatJsonScanner(text).Scan(rules, at, &values, &given)) return std::nullopt;
  return rules.FinishRow(at, std::move(values), given, nullptr, row);
}

Status ParseJsonObject(const RecordRules& rules, const RecordPlace& at, std::string_view text, Row* row) {
  if (std::optional<Status> fast = ParseFlatObject(rules, at, text, row)) return std::move(*fast);
  return ParseJsonByDocument(rules, at, text, row);
}

// One line of JSON lines; a blank one gives no row.
Status ReadJsonLine(const RecordRules& rules, const RecordPlace& at, std::string_view line, const RecordSink& emit) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return Status::OK();
  Row row;
  SPOOL_RETURN_IF_ERROR(ParseJsonObject(rules, at, line, &row));
  return emit(std::move(row), at.line);
}

Status ReadJsonLines(const RecordRules& rules, std::string_view data, std::string_view source, const RecordSink& emit) {
  RecordPlace at{source, 0};
  for (size_t pos = 0; pos < data.size();) {
    const size_t end = std::min(data.find('\n', pos), data.size());
    ++at.line;
    SPOOL_RETURN_IF_ERROR(ReadJsonLine(rules, at, data.substr(pos, end - pos), emit));
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

Status ReadCsvHeader(const RecordRules& rules, const RecordPlace& at, const CsvRecord& record, CsvHeader* header) {
  ColumnSet given;
  for (size_t i = 0; i < record.size; ++i) {
    const std::string_view name = record[i].text();
    const size_t index = rules.FindField(name, 0);
    const bool known = index != RecordRules::kNoField;
    if (!known && !rules.rescuing()) return RecordError(at, "header: " + UnknownColumn(name, rules.schema()));
    if (known && given[index] && !rules.rescuing()) {
      return RecordError(at, "header: column '" + std::string(name) + "' appears twice");
    }
    const bool extra = !known || given[index];
    if (!extra) given.set(index);
    header->columns.push_back(extra ? kExtraField : index);
    header->names.emplace_back(name);
  }
  if (const Column* missing = rules.MissingColumn(given)) {
    return RecordError(at, "header: column '" + missing->name + "' is missing and must not be null");
  }
  return Status::OK();
}

Status ParseCsvRecord(const RecordRules& rules, const RecordPlace& at, const CsvHeader& header, const CsvRecord& record,
                      Row* row) {
  if (record.size != header.columns.size()) {
    if (rules.rescuing()) return rules.CorruptRow(at, record.raw, row);
    return RecordError(
        at, std::to_string(record.size) + " field(s), but the header has " + std::to_string(header.columns.size()));
  }
  Row values(rules.schema().columns().size());
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
    if (rules.options().keys_only && !rules.IsKey(index)) continue;
    Status s = TextToValue(at, rules.schema().columns()[index], field.text(), field.quoted, rules.Slot(index, &values));
    if (!s.ok() && !rules.rescuing()) return s;
    if (!s.ok()) rescued.Add(header.names[i], std::string(field.text()));
  }
  return rules.FinishRow(at, std::move(values), given, &rescued, row);
}

Status ReadCsv(const RecordRules& rules, std::string_view data, std::string_view source, const RecordSink& emit) {
  CsvReader reader(data);
  CsvRecord record;
  CsvHeader header;
  bool have_header = false;
  RecordPlace at{source, 0};
  while (true) {
    bool got = false;
    Row row;
    if (Status s = reader.Next(&record, &got); !s.ok()) {
      if (!rules.rescuing() || !have_header) return RecordError({at.source, reader.error_line()}, s.message());
      at.line = record.line;
      SPOOL_RETURN_IF_ERROR(rules.CorruptRow(at, reader.SkipBadRecord(), &row));
      SPOOL_RETURN_IF_ERROR(emit(std::move(row), at.line));
      continue;
    }
    if (!got) return Status::OK();
    if (record.blank()) continue;
    at.line = record.line;
    if (!have_header) {
      SPOOL_RETURN_IF_ERROR(ReadCsvHeader(rules, at, record, &header));
      have_header = true;
      continue;
    }
    SPOOL_RETURN_IF_ERROR(ParseCsvRecord(rules, at, header, record, &row));
    SPOOL_RETURN_IF_ERROR(emit(std::move(row), at.line));
  }
}

Status ReadAll(const RecordRules& rules, std::string_view data, std::string_view source, const RecordSink& emit) {
  return rules.options().format == RecordFormat::kCsv ? ReadCsv(rules, data, source, emit)
                                                      : ReadJsonLines(rules, data, source, emit);
}

class RecordParserImpl final : public RecordParser {
 public:
  RecordParserImpl(const Schema& schema, const RecordOptions& options) : schema_(schema), options_(options) {}
  // Checks the options against the schema (the copies, which rules_ refers to).
  Status Init() { return RecordRules::Make(schema_, options_, &rules_); }

  Status ParseJson(std::string_view text, Row* row) const override {
    return ParseJsonObject(*rules_, Place(), text, row);
  }
  Status Read(std::string_view data, std::string_view source_name, const RecordSink& emit) const override {
    return ReadAll(*rules_, data, source_name, emit);
  }
  std::optional<Status> ParseFlatJson(std::string_view text, Row* row) const {
    return ParseFlatObject(*rules_, Place(), text, row);
  }
  Status ParseJsonReference(std::string_view text, Row* row) const {
    return ParseJsonByDocument(*rules_, Place(), text, row);
  }

 private:
  RecordPlace Place() const { return RecordPlace{options_.source_name, 0}; }

  const Schema schema_;
  const RecordOptions options_;
  std::optional<RecordRules> rules_;
};

}  // namespace

std::optional<Status> ParseFlatJsonOnly(const RecordParser& parser, std::string_view text, Row* row) {
  return static_cast<const RecordParserImpl&>(parser).ParseFlatJson(text, row);
}

Status ParseJsonReferenceOnly(const RecordParser& parser, std::string_view text, Row* row) {
  return static_cast<const RecordParserImpl&>(parser).ParseJsonReference(text, row);
}

Status ParseTimestamp(std::string_view text, int64_t* micros) {
  const bool integer = !text.empty() && std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
  if (integer ? ParseWhole(text, micros) : ParseDateTimeUtc(text, micros)) return Status::OK();
  return Status::InvalidArgument("timestamp " + Shown(text) +
                                 " must be 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC) or an integer of microseconds");
}

Status ParseDuration(std::string_view text, uint64_t* micros) {
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {{"us", 1ull},
                                                                     {"microsecond", 1ull},
                                                                     {"microseconds", 1ull},
                                                                     {"ms", 1'000ull},
                                                                     {"millisecond", 1'000ull},
                                                                     {"milliseconds", 1'000ull},
                                                                     {"s", 1'000'000ull},
                                                                     {"second", 1'000'000ull},
                                                                     {"seconds", 1'000'000ull},
                                                                     {"m", 60'000'000ull},
                                                                     {"minute", 60'000'000ull},
                                                                     {"minutes", 60'000'000ull},
                                                                     {"h", 3'600'000'000ull},
                                                                     {"hour", 3'600'000'000ull},
                                                                     {"hours", 3'600'000'000ull},
                                                                     {"d", 86'400'000'000ull},
                                                                     {"day", 86'400'000'000ull},
                                                                     {"days", 86'400'000'000ull}};
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
  return Status::InvalidArgument(
      "duration " + Shown(text) +
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

Status ReadRecords(std::string_view data, const Schema& schema, const RecordOptions& options, const RecordSink& emit) {
  std::optional<RecordRules> rules;
  SPOOL_RETURN_IF_ERROR(RecordRules::Make(schema, options, &rules));
  return ReadAll(*rules, data, options.source_name, emit);
}

Status ReadRecords(std::istream& in, const Schema& schema, const RecordOptions& options, const RecordSink& emit) {
  std::optional<RecordRules> rules;
  SPOOL_RETURN_IF_ERROR(RecordRules::Make(schema, options, &rules));
  const auto read_failed = [&] { return Status::IOError(options.source_name + ": read failed"); };
  if (options.format == RecordFormat::kCsv) {
    // Read whole (a quoted field may hold newlines), but no record longer
    // than a JSON line may be: the bytes since the last newline outside
    // quotes are counted as they come, so that an endless record (a
    // device, a file without newlines) is refused at the bound.
    std::string data;
    char chunk[1 << 16];
    bool quoted = false;
    size_t record_bytes = 0, line = 1;
    while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
      const auto n = static_cast<size_t>(in.gcount());
      for (size_t i = 0; i < n; ++i) {
        quoted ^= chunk[i] == '"';
        const bool ends = chunk[i] == '\n' && !quoted;
        line += chunk[i] == '\n';
        record_bytes = ends ? 0 : record_bytes + 1;
        if (record_bytes > kMaxRecordLineBytes) {
          return Status::InvalidArgument(options.source_name + ": the CSV record at line " + std::to_string(line) +
                                         " is longer than " + std::to_string(kMaxRecordLineBytes >> 20) +
                                         " MiB (read no further)");
        }
      }
      data.append(chunk, n);
    }
    if (in.bad()) return read_failed();
    return ReadAll(*rules, data, options.source_name, emit);
  }
  std::string line;
  RecordPlace at{options.source_name, 0};
  bool too_long = false;
  while (ReadBoundedLine(in, kMaxRecordLineBytes, &line, &too_long)) {
    ++at.line;
    if (too_long) {
      return Status::InvalidArgument(options.source_name + " line " + std::to_string(at.line) + " is longer than " +
                                     std::to_string(kMaxRecordLineBytes >> 20) +
                                     " MiB: not a record of JSON lines (read no further)");
    }
    SPOOL_RETURN_IF_ERROR(ReadJsonLine(*rules, at, line, emit));
  }
  if (in.bad()) return read_failed();
  return Status::OK();
}

bool ReadBoundedLine(std::istream& in, size_t max, std::string* line, bool* too_long) {
  line->clear();
  *too_long = false;
  std::streambuf* buffer = in.rdbuf();
  for (;;) {
    int c = 0;
    try {
      c = buffer->sbumpc();
    } catch (...) {  // what std::getline does with a device that throws
      in.setstate(std::ios::badbit);
      return false;
    }
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return !line->empty();
    }
    if (c == '\n') return true;
    if (line->size() == max) {
      *too_long = true;
      return true;
    }
    line->push_back(static_cast<char>(c));
  }
}

Status ParseJsonRecord(std::string_view text, const Schema& schema, const RecordOptions& options, Row* row) {
  std::optional<RecordRules> rules;
  SPOOL_RETURN_IF_ERROR(RecordRules::Make(schema, options, &rules));
  return ParseJsonObject(*rules, RecordPlace{options.source_name, 0}, text, row);
}

Status RecordParser::Make(const Schema& schema, const RecordOptions& options,
                          std::unique_ptr<const RecordParser>* parser) {
  auto impl = std::make_unique<RecordParserImpl>(schema, options);
  SPOOL_RETURN_IF_ERROR(impl->Init());
  *parser = std::move(impl);
  return Status::OK();
}

}  // namespace spool
