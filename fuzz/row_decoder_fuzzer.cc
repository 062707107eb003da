// Fuzz target: the row decoder and the key encoding (storage/row_codec.h).
// Input: a schema, then two row images A and B:
//   byte      n: 1 + n % 8 columns
//   n bytes   one per column: type 1 + (b & 7) % 6, nullable bit 3, key bit 4
//             (a key column is made non-nullable)
//   byte      L: A is the next L bytes (fewer if the input ends), B the rest
// Oracle, beyond "no crash, no hang, no undefined behaviour": a row that
// decodes fits the schema, encodes to bytes that decode to it again (a
// fixed point after one round), and its key encodes the same from the row
// and from its key values; when A and B both decode, their key encodings
// compare as their key values do (null first, -0.0 = 0.0, NaN last).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "row_codec.h"

namespace {

using spool::Value;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "row_decoder_fuzzer: invariant violated: %s\n", what);
    std::abort();
  }
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}

int CmpDouble(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return Cmp(std::isnan(a), std::isnan(b));
  return Cmp(a, b);  // -0.0 == 0.0
}

// The order key encodings must preserve, for values of one column's type.
int CompareValues(const Value& a, const Value& b) {
  if (spool::IsNull(a) || spool::IsNull(b)) return Cmp(!spool::IsNull(a), !spool::IsNull(b));
  if (const auto* x = std::get_if<int64_t>(&a)) return Cmp(*x, std::get<int64_t>(b));
  if (const auto* x = std::get_if<double>(&a)) return CmpDouble(*x, std::get<double>(b));
  if (const auto* x = std::get_if<std::string>(&a)) return Cmp(*x, std::get<std::string>(b));
  if (const auto* x = std::get_if<bool>(&a)) return Cmp(*x, std::get<bool>(b));
  if (const auto* x = std::get_if<spool::Timestamp>(&a)) return Cmp(x->micros, std::get<spool::Timestamp>(b).micros);
  return Cmp(std::get<spool::Bytes>(a).data, std::get<spool::Bytes>(b).data);
}

// Decodes one image; when it decodes, checks it and returns its key.
bool DecodeAndCheck(const spool::Schema& schema, std::string_view bytes, spool::Row* row, std::string* key) {
  if (!spool::DecodeRow(schema, bytes, row).ok()) return false;
  Check(schema.Validate(*row).ok(), "DecodeRow returned a row that does not fit its schema");
  std::string encoded;
  spool::EncodeRow(schema, *row, &encoded);
  spool::Row again;
  Check(spool::DecodeRow(schema, encoded, &again).ok(), "an encoded row does not decode");
  std::string twice;
  spool::EncodeRow(schema, again, &twice);
  Check(encoded == twice, "a row's encoding is not a fixed point");
  if (!schema.has_key()) return true;
  spool::EncodeKey(schema, *row, key);
  spool::Row values;
  for (size_t index : schema.key_columns()) values.push_back((*row)[index]);
  std::string from_values;
  Check(spool::EncodeKeyValues(schema, values, false, &from_values).ok(), "a decoded row's key values do not encode");
  Check(from_values == *key, "a key encodes differently from the row and from its values");
  values.resize(1);
  std::string prefix;
  Check(spool::EncodeKeyValues(schema, values, true, &prefix).ok(), "a decoded row's key prefix does not encode");
  Check(key->compare(0, prefix.size(), prefix) == 0, "a key prefix's encoding is not a prefix of the key's");
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t columns = 1 + data[0] % 8;
  if (size < 2 + columns) return 0;
  std::vector<spool::Column> defs;
  std::vector<std::string> key;
  for (size_t i = 0; i < columns; ++i) {
    const uint8_t b = data[1 + i];
    spool::Column column{"c" + std::to_string(i), static_cast<spool::ColumnType>(1 + (b & 7) % 6), (b & 0x08) != 0};
    if ((b & 0x10) != 0) {
      column.nullable = false;
      key.push_back(column.name);
    }
    defs.push_back(std::move(column));
  }
  spool::Schema schema;
  if (!spool::Schema::Make(std::move(defs), key, &schema).ok()) std::abort();
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2 + columns, size - 2 - columns);
  const size_t split = std::min<size_t>(data[1 + columns], rest.size());

  spool::Row a, b;
  std::string key_a, key_b;
  const bool have_a = DecodeAndCheck(schema, rest.substr(0, split), &a, &key_a);
  const bool have_b = DecodeAndCheck(schema, rest.substr(split), &b, &key_b);
  if (have_a && have_b && schema.has_key()) {
    int by_values = 0;
    for (size_t index : schema.key_columns()) {
      if ((by_values = CompareValues(a[index], b[index])) != 0) break;
    }
    const int by_bytes = Cmp(key_a, key_b);
    Check(by_values == by_bytes, "key encodings do not sort as the key values");
  }
  return 0;
}
