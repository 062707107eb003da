// The row and key encodings: rows round-trip exactly, damaged bytes are
// refused, and key bytes sort exactly like key values.
#include "row_codec.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

namespace spool {
namespace {

Schema AllTypes(bool keyed) {
  Schema schema;
  Status s = Schema::Make({{"i", ColumnType::kInt64, !keyed},
                           {"d", ColumnType::kDouble, true},
                           {"s", ColumnType::kString, true},
                           {"b", ColumnType::kBool, true},
                           {"t", ColumnType::kTimestamp, true},
                           {"y", ColumnType::kBytes, true}},
                          keyed ? std::vector<std::string>{"i"} : std::vector<std::string>{}, &schema);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return schema;
}

Value RandomValue(ColumnType type, std::mt19937_64& rng, bool nullable) {
  if (nullable && rng() % 5 == 0) return Value{};
  switch (type) {
    case ColumnType::kInt64:
      return static_cast<int64_t>(rng());
    case ColumnType::kDouble: {
      const double specials[] = {0.0,
                                 -0.0,
                                 1.5,
                                 -1.5,
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::denorm_min()};
      if (rng() % 4 == 0) return specials[rng() % std::size(specials)];
      return std::ldexp(static_cast<double>(static_cast<int64_t>(rng() >> 11)), static_cast<int>(rng() % 80) - 40);
    }
    case ColumnType::kString:
    case ColumnType::kBytes: {
      std::string s(rng() % 6, '\0');
      for (char& c : s)
        c = "\x00\x01\xff"
            "ab"[rng() % 5];
      if (type == ColumnType::kString) return s;
      return Bytes{s};
    }
    case ColumnType::kBool:
      return rng() % 2 == 0;
    case ColumnType::kTimestamp:
      return Timestamp{static_cast<int64_t>(rng())};
  }
  return Value{};
}

Row RandomRow(const Schema& schema, std::mt19937_64& rng) {
  Row row;
  for (const Column& column : schema.columns()) row.push_back(RandomValue(column.type, rng, column.nullable));
  return row;
}

// -1, 0 or 1, comparing values the way keys order: null first, then by value
// (doubles numerically, -0.0 equal to 0.0, NaN last).
int CompareValues(const Value& a, const Value& b) {
  if (IsNull(a) || IsNull(b)) return IsNull(a) == IsNull(b) ? 0 : (IsNull(a) ? -1 : 1);
  if (const auto* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    if (std::isnan(*x) || std::isnan(y)) return std::isnan(*x) == std::isnan(y) ? 0 : (std::isnan(*x) ? 1 : -1);
    return *x < y ? -1 : (*x > y ? 1 : 0);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

int Sign(int c) { return (c > 0) - (c < 0); }

TEST(RowCodecTest, RowsRoundTripExactly) {
  std::mt19937_64 rng(7);
  for (bool keyed : {false, true}) {
    const Schema schema = AllTypes(keyed);
    Row decoded;  // reused, as scans do: nothing of an earlier row may remain
    for (int i = 0; i < 2000; ++i) {
      const Row row = RandomRow(schema, rng);
      std::string bytes;
      EncodeRow(schema, row, &bytes);
      ASSERT_TRUE(DecodeRow(schema, bytes, &decoded).ok());
      ASSERT_EQ(decoded.size(), row.size());
      for (size_t c = 0; c < row.size(); ++c) {
        if (const auto* d = std::get_if<double>(&row[c])) {  // bit-exact, -0.0 included
          EXPECT_EQ(std::signbit(*d), std::signbit(std::get<double>(decoded[c])));
        }
        EXPECT_EQ(CompareValues(decoded[c], row[c]), 0);
      }
    }
  }
}

TEST(RowCodecTest, RowViewsReadEveryValueInPlace) {
  std::mt19937_64 rng(5);
  const Schema schema = AllTypes(false);
  RowView view;  // reused, as scans do
  for (int i = 0; i < 2000; ++i) {
    const Row row = RandomRow(schema, rng);
    std::string bytes;
    EncodeRow(schema, row, &bytes);
    ASSERT_TRUE(ParseRow(schema, bytes, &view).ok());
    ASSERT_EQ(view.size(), row.size());
    for (size_t c = 0; c < row.size(); ++c) {
      ASSERT_EQ(view.IsNull(c), IsNull(row[c])) << c;
      if (IsNull(row[c])) continue;
      const char* begin = bytes.data();
      if (const auto* v = std::get_if<int64_t>(&row[c])) {
        EXPECT_EQ(view.Int64(c), *v);
      }
      if (const auto* v = std::get_if<Timestamp>(&row[c])) {
        EXPECT_EQ(view.TimestampOf(c), *v);
      }
      if (const auto* v = std::get_if<double>(&row[c])) {
        EXPECT_EQ(std::bit_cast<uint64_t>(view.Double(c)), std::bit_cast<uint64_t>(*v));
      }
      if (const auto* v = std::get_if<bool>(&row[c])) {
        EXPECT_EQ(view.Bool(c), *v);
      }
      if (const auto* v = std::get_if<std::string>(&row[c])) {
        EXPECT_EQ(view.Chars(c), *v);
      }
      if (const auto* v = std::get_if<Bytes>(&row[c])) {
        EXPECT_EQ(view.Chars(c), v->data);
      }
      // In place: every value points into the encoded row.
      EXPECT_TRUE(view.Chars(c).data() >= begin && view.Chars(c).data() <= begin + bytes.size()) << c;
    }
  }
}

TEST(RowCodecTest, RowsKeepTheByteFormatTheyAreStoredIn) {
  // Rows are in the log, snapshots and the state: the column count, the
  // null bitmap (bit i of byte i/8), then each non-null value — integers
  // and timestamps as zigzag varints, doubles as little-endian fixed64s,
  // strings and bytes as a varint length and the bytes, bools as one byte.
  using namespace std::string_literals;
  const Schema schema = AllTypes(/*keyed=*/false);
  std::string bytes = "~";  // appended after what is there
  EncodeRow(schema, Row{int64_t{-1}, 1.0, std::string("ab"), true, Timestamp{300}, Bytes{"\0"s}}, &bytes);
  EXPECT_EQ(bytes,
            "~\x06\x00\x01\0\0\0\0\0\0\xf0\x3f\x02"
            "ab\x01\xd8\x04\x01\0"s);
  bytes.clear();
  EncodeRow(schema, Row{Value(), 0.0, Value(), false, Value(), Value()}, &bytes);
  EXPECT_EQ(bytes, "\x06\x35\0\0\0\0\0\0\0\0\x00"s);
}

TEST(RowCodecTest, IntegersTakeBytesByTheirMagnitude) {
  // Zigzag varints: counts, sums and small keys of either sign in a byte or
  // two; the extremes in ten; every one read back exactly.
  Schema schema;
  ASSERT_TRUE(Schema::Make({{"a", ColumnType::kInt64, false},
                            {"b", ColumnType::kInt64, false},
                            {"c", ColumnType::kInt64, false},
                            {"t", ColumnType::kTimestamp, false}},
                           {}, &schema)
                  .ok());
  auto encoded = [&](const Row& row) {
    std::string bytes;
    EncodeRow(schema, row, &bytes);
    Row decoded;
    EXPECT_TRUE(DecodeRow(schema, bytes, &decoded).ok());
    EXPECT_EQ(decoded, row);
    return bytes.size();
  };
  // 1 byte of column count, 1 of null bitmap, then the values.
  EXPECT_EQ(encoded(Row{int64_t{0}, int64_t{-1}, int64_t{63}, Timestamp{-64}}), 2u + 4u);
  EXPECT_EQ(encoded(Row{int64_t{64}, int64_t{-65}, int64_t{8191}, Timestamp{-8192}}), 2u + 8u);
  EXPECT_EQ(encoded(Row{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), int64_t{1} << 40,
                        Timestamp{1'700'000'000'000'000}}),
            2u + 10u + 10u + 6u + 8u);
  // An integer whose varint never ends is corruption, not a value.
  std::string bytes = "\x04";
  bytes += '\0';
  bytes += std::string(11, '\x80');
  Row decoded;
  EXPECT_TRUE(DecodeRow(schema, bytes, &decoded).IsCorruption());
}

TEST(RowCodecTest, TruncatedOrPaddedRowsAreCorruption) {
  std::mt19937_64 rng(11);
  const Schema schema = AllTypes(false);
  for (int i = 0; i < 200; ++i) {
    std::string bytes;
    EncodeRow(schema, RandomRow(schema, rng), &bytes);
    Row decoded;
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_TRUE(DecodeRow(schema, std::string_view(bytes).substr(0, n), &decoded).IsCorruption()) << n;
    }
    EXPECT_TRUE(DecodeRow(schema, bytes + "x", &decoded).IsCorruption());
  }
  Schema other;
  ASSERT_TRUE(Schema::Make({{"only", ColumnType::kInt64, true}}, {}, &other).ok());
  std::string bytes;
  EncodeRow(schema, RandomRow(schema, rng), &bytes);
  Row decoded;
  EXPECT_TRUE(DecodeRow(other, bytes, &decoded).IsCorruption());
}

TEST(RowCodecTest, KeyBytesSortLikeKeyValues) {
  std::mt19937_64 rng(13);
  for (ColumnType type : {ColumnType::kInt64, ColumnType::kDouble, ColumnType::kString, ColumnType::kBool,
                          ColumnType::kTimestamp, ColumnType::kBytes}) {
    // A composite key: the typed column, then an int64 to break ties.
    Schema schema;
    ASSERT_TRUE(Schema::Make({{"k", type, false}, {"n", ColumnType::kInt64, false}}, {"k", "n"}, &schema).ok());
    for (int i = 0; i < 3000; ++i) {
      const Row a = RandomRow(schema, rng);
      Row b = RandomRow(schema, rng);
      if (rng() % 3 == 0) b[0] = a[0];  // equal first parts exercise the second
      std::string ka;
      std::string kb;
      EncodeKey(schema, a, &ka);
      EncodeKey(schema, b, &kb);
      int expected = CompareValues(a[0], b[0]);
      if (expected == 0) expected = CompareValues(a[1], b[1]);
      ASSERT_EQ(Sign(ka.compare(kb)), expected) << ColumnTypeName(type) << " case " << i;
    }
  }
}

TEST(RowCodecTest, StringKeysWithEmbeddedZerosAndPrefixesSortCorrectly) {
  Schema schema;
  ASSERT_TRUE(
      Schema::Make({{"k", ColumnType::kString, false}, {"n", ColumnType::kInt64, false}}, {"k", "n"}, &schema).ok());
  const std::vector<std::string> ordered = {
      "", std::string("\0", 1), std::string("\0\0", 2), std::string("\0a", 2), "a", std::string("a\0", 2), "ab", "b"};
  std::string previous;
  for (size_t i = 0; i < ordered.size(); ++i) {
    std::string key;
    EncodeKey(schema, {ordered[i], int64_t{0}}, &key);
    if (i > 0) {
      EXPECT_LT(previous, key) << i;
    }
    previous = key;
  }
}

}  // namespace
}  // namespace spool
