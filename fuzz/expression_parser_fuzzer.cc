// Fuzz target: the expression language (spool/stream/expression.h).
// Input: an expression's text. Oracle, beyond "no crash, no hang, no
// undefined behaviour, no unbounded recursion": a refused expression is
// InvalidArgument "at column N: …" with N within the text (or just past
// it); an accepted one evaluates over three fixed rows (values, nulls,
// extremes) to NULL — only if it may be NULL — or to a value of its type,
// or to InvalidArgument naming a column within the text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

#include "spool/stream/expression.h"

namespace {

using spool::ColumnType;
using spool::Row;
using spool::Value;

void Check(bool ok, const char* what, std::string_view text) {
  if (!ok) {
    std::fprintf(stderr, "expression_parser_fuzzer: invariant violated: %s\nexpression: %.*s\n", what,
                 static_cast<int>(text.size()), text.data());
    std::abort();
  }
}

const spool::Schema& Input() {
  static const spool::Schema schema = [] {
    spool::Schema s;
    const spool::Status made = spool::Schema::Make({{"i", ColumnType::kInt64, false},
                                                    {"d", ColumnType::kDouble, true},
                                                    {"s", ColumnType::kString, true},
                                                    {"b", ColumnType::kBool, true},
                                                    {"t", ColumnType::kTimestamp, true},
                                                    {"x", ColumnType::kBytes, true}},
                                                   {}, &s);
    if (!made.ok()) std::abort();
    return s;
  }();
  return schema;
}

// The column an error names, checked to lie within the text.
void CheckErrorColumn(const spool::Status& s, std::string_view text) {
  Check(s.IsInvalidArgument(), "an error that is not InvalidArgument", text);
  const std::string_view message = s.message();
  Check(message.starts_with("at column "), "an error without its column", text);
  const size_t column = std::strtoull(std::string(message.substr(10)).c_str(), nullptr, 10);
  Check(column >= 1 && column <= text.size() + 1, "an error naming a column outside the text", text);
}

bool OfType(const Value& v, ColumnType type) {
  switch (type) {
    case ColumnType::kInt64:
      return std::holds_alternative<int64_t>(v);
    case ColumnType::kDouble:
      return std::holds_alternative<double>(v);
    case ColumnType::kString:
      return std::holds_alternative<std::string>(v);
    case ColumnType::kBool:
      return std::holds_alternative<bool>(v);
    case ColumnType::kTimestamp:
      return std::holds_alternative<spool::Timestamp>(v);
    case ColumnType::kBytes:
      return std::holds_alternative<spool::Bytes>(v);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  spool::Expression e;
  const spool::Status parsed = spool::Expression::Parse(text, Input(), &e);
  if (!parsed.ok()) {
    CheckErrorColumn(parsed, text);
    return 0;
  }
  static const Row rows[] = {
      {int64_t{42}, 2.5, std::string("Ada"), true, spool::Timestamp{1767323045678901}, spool::Bytes{"xyz"}},
      {int64_t{0}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}},
      {std::numeric_limits<int64_t>::min(), -0.0, std::string(), false, spool::Timestamp{-1}, spool::Bytes{}},
  };
  for (const Row& row : rows) {
    Value v;
    const spool::Status s = e.Evaluate(row, &v);
    if (!s.ok()) {
      CheckErrorColumn(s, text);
      continue;
    }
    if (spool::IsNull(v)) {
      Check(e.nullable(), "NULL from an expression said not to be nullable", text);
    } else {
      Check(OfType(v, e.type()), "a value not of the expression's type", text);
    }
  }
  return 0;
}
