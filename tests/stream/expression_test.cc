// The expression language: values as SQL would compute them (three-valued
// logic, NULL propagation, numeric promotion), and every malformed
// expression refused with the column and the reason.
#include "spool/stream/expression.h"

#include <cmath>

#include <gtest/gtest.h>

namespace spool {
namespace {

Schema Input() {
  Schema schema;
  EXPECT_TRUE(Schema::Make({{"id", ColumnType::kInt64, false},
                            {"name", ColumnType::kString, true},
                            {"price", ColumnType::kDouble, true},
                            {"active", ColumnType::kBool, true},
                            {"at", ColumnType::kTimestamp, true},
                            {"data", ColumnType::kBytes, true},
                            {"end", ColumnType::kInt64, true}},
                           {}, &schema)
                  .ok());
  return schema;
}

// 2026-01-02 03:04:05.678901 UTC
constexpr int64_t kAt = 1767323045678901;

Row Full() { return Row{int64_t{42}, std::string("Ada"), 2.5, true, Timestamp{kAt}, Bytes{"xyz"}, int64_t{7}}; }
Row Nulls() {
  return Row{int64_t{42},      std::monostate{}, std::monostate{}, std::monostate{},
             std::monostate{}, std::monostate{}, std::monostate{}};
}

Value Eval(std::string_view text, const Row& row) {
  Expression e;
  Status s = Expression::Parse(text, Input(), &e);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  Value v;
  if (!s.ok()) return v;
  s = e.Evaluate(row, &v);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return v;
}

struct Case {
  std::string text;
  Row row;
  Value expected;
};

// The columns an expression reads, wherever they sit in it: what a flow
// keeps of its source's rows (column pruning).
TEST(ExpressionTest, MarksEveryColumnItReadsAndNoOther) {
  const std::vector<std::pair<std::string, std::vector<bool>>> cases = {
      {"1 + 2", {false, false, false, false, false, false, false}},
      {"id", {true, false, false, false, false, false, false}},
      {"CASE WHEN price > 1 THEN lower(name) ELSE coalesce(name, 'x') END",
       {false, true, true, false, false, false, false}},
      {"NOT active OR date_trunc('day', at) IS NULL AND length(CAST(`end` AS string)) = 1",
       {false, false, false, true, true, false, true}},
  };
  for (const auto& [text, expected] : cases) {
    Expression e;
    ASSERT_TRUE(Expression::Parse(text, Input(), &e).ok()) << text;
    std::vector<bool> read(expected.size(), false);
    e.MarkColumnsRead(&read);
    EXPECT_EQ(read, expected) << text;
    read.assign(read.size(), true);  // it only sets flags
    e.MarkColumnsRead(&read);
    EXPECT_EQ(read, std::vector<bool>(expected.size(), true)) << text;
  }
}

TEST(ExpressionTest, ValuesAreWhatSqlComputes) {
  const Value null;
  const std::vector<Case> cases = {
      {"id + 1", Full(), int64_t{43}},
      {"id - 50 * 2", Full(), int64_t{-58}},
      {"(id - 50) * 2", Full(), int64_t{-16}},
      {"id / 4", Full(), 10.5},
      {"id % 5", Full(), int64_t{2}},
      {"-id", Full(), int64_t{-42}},
      {"price * 2", Full(), 5.0},
      {"id + price", Full(), 44.5},
      {"1e3 + .5", Full(), 1000.5},
      {"name || '!'", Full(), std::string("Ada!")},
      {"'it''s'", Full(), std::string("it's")},
      {"`end` + 1", Full(), int64_t{8}},
      {"lower(name)", Full(), std::string("ada")},
      {"UPPER(name)", Full(), std::string("ADA")},
      {"length(name) + length(data)", Full(), int64_t{6}},
      {"abs(-3)", Full(), int64_t{3}},
      {"abs(-2.5)", Full(), 2.5},
      {"round(2.567, 2)", Full(), 2.57},
      {"round(1250, -2)", Full(), int64_t{1300}},
      {"round(-1250, -2)", Full(), int64_t{-1300}},
      {"round(1249, -2)", Full(), int64_t{1200}},
      {"coalesce(name, 'none')", Nulls(), std::string("none")},
      {"coalesce(price, id)", Nulls(), 42.0},
      {"CASE WHEN id > 40 THEN 'big' ELSE 'small' END", Full(), std::string("big")},
      {"case when id > 100 then 1 end", Full(), null},
      {"CASE WHEN id > 1 THEN 1 ELSE 2.5 END", Full(), 1.0},
      {"CAST(id AS string)", Full(), std::string("42")},
      {"CAST('7' AS int64) + 1", Full(), int64_t{8}},
      {"CAST(price AS int64)", Full(), int64_t{2}},
      {"CAST('true' AS bool)", Full(), true},
      {"CAST(at AS string)", Full(), std::string("2026-01-02 03:04:05.678901")},
      {"CAST('2026-01-02 03:04:05.678901' AS timestamp) = at", Full(), true},
      {"date_trunc('hour', at)", Full(), Timestamp{kAt - (kAt % 3600000000)}},
      {"date_trunc('DAY', at) = TIMESTAMP '2026-01-02 00:00:00'", Full(), true},
      {"at > TIMESTAMP '2026-01-01 00:00:00'", Full(), true},
      {"id = 42.0", Full(), true},
      {"name <> 'Bob' AND id >= 42 AND price < 3", Full(), true},
      {"active = true", Full(), true},
      // NULL: propagation and three-valued logic.
      {"name IS NULL", Nulls(), true},
      {"name IS NOT NULL", Full(), true},
      {"price + 1", Nulls(), null},
      {"name = 'x'", Nulls(), null},
      {"NOT (name = 'x')", Nulls(), null},
      {"name = 'x' OR id = 42", Nulls(), true},
      {"name = 'x' AND id = 0", Nulls(), false},
      {"name = 'x' AND id = 42", Nulls(), null},
      {"NULL", Full(), null},
      {"coalesce(NULL, NULL)", Full(), null},
  };
  for (const Case& c : cases) {
    const Value got = Eval(c.text, c.row);
    if (const auto* d = std::get_if<double>(&c.expected)) {
      ASSERT_TRUE(std::holds_alternative<double>(got)) << c.text;
      EXPECT_NEAR(std::get<double>(got), *d, 1e-12) << c.text;
    } else {
      EXPECT_EQ(got, c.expected) << c.text;
    }
  }
}

TEST(ExpressionTest, TypesAreKnownBeforeAnyRow) {
  Expression e;
  ASSERT_TRUE(Expression::Parse("id / 2", Input(), &e).ok());
  EXPECT_EQ(e.type(), ColumnType::kDouble);
  EXPECT_FALSE(e.nullable());
  ASSERT_TRUE(Expression::Parse("coalesce(price, 0)", Input(), &e).ok());
  EXPECT_EQ(e.type(), ColumnType::kDouble);
  EXPECT_FALSE(e.nullable());
  ASSERT_TRUE(Expression::Parse("name || 'x'", Input(), &e).ok());
  EXPECT_EQ(e.type(), ColumnType::kString);
  EXPECT_TRUE(e.nullable());
}

// Callers read a bare column in place instead of evaluating it: only an
// expression that is nothing but a column reference may say which.
TEST(ExpressionTest, OnlyABareColumnReferenceNamesItsColumn) {
  Expression e;
  EXPECT_FALSE(e.column().has_value());  // not parsed
  ASSERT_TRUE(Expression::Parse("price", Input(), &e).ok());
  EXPECT_EQ(e.column(), std::optional<size_t>(2));
  ASSERT_TRUE(Expression::Parse("(`end`)", Input(), &e).ok());
  EXPECT_EQ(e.column(), std::optional<size_t>(6));
  for (const char* text : {"price + 0", "-id", "coalesce(price, 1.0)", "42", "id = 1"}) {
    ASSERT_TRUE(Expression::Parse(text, Input(), &e).ok()) << text;
    EXPECT_FALSE(e.column().has_value()) << text;
  }
}

TEST(ExpressionTest, FiltersPassOnlyTrue) {
  Expression e;
  ASSERT_TRUE(Expression::Parse("price > 1", Input(), &e).ok());
  bool matches = true;
  ASSERT_TRUE(e.Matches(Full(), &matches).ok());
  EXPECT_TRUE(matches);
  ASSERT_TRUE(e.Matches(Nulls(), &matches).ok());
  EXPECT_FALSE(matches);  // NULL does not pass
  ASSERT_TRUE(Expression::Parse("id + 1", Input(), &e).ok());
  EXPECT_TRUE(e.Matches(Full(), &matches).IsInvalidArgument());
}

struct Bad {
  std::string text;
  std::string error;  // the whole message
};

TEST(ExpressionTest, MalformedExpressionsNameTheColumnAndTheReason) {
  const std::vector<Bad> cases = {
      {"", "at column 1: expected a value, found end of expression"},
      {"id +", "at column 5: expected a value, found end of expression"},
      {"idd > 1", "at column 1: unknown column 'idd'"},
      {"ID > 1", "at column 1: unknown column 'ID'"},
      {"name + 1", "at column 6: '+' needs numbers, not string"},
      {"id = 'x'", "at column 4: cannot compare int64 with string"},
      {"'abc", "at column 1: the string is not closed"},
      {"`abc", "at column 1: the quoted name is not closed"},
      {"foo(1)", "at column 1: unknown function 'foo'"},
      {"id > 1 AND name", "at column 12: AND needs a bool, not string"},
      {"NOT id", "at column 5: NOT needs a bool, not int64"},
      {"CASE WHEN 1 THEN 2 END", "at column 11: WHEN needs a bool, not int64"},
      {"CASE id END", "at column 6: CASE needs WHEN, found 'id'"},
      {"CASE WHEN true THEN 1 ELSE 'x' END", "at column 28: CASE mixes int64 and string"},
      {"CASE WHEN true THEN 1", "at column 22: expected end, found end of expression"},
      {"CAST(name AS blob)",
       "at column 14: expected a type (int64, double, string, bool, timestamp, bytes), found 'blob'"},
      {"CAST(data AS int64)", "at column 1: cannot cast bytes to int64"},
      {"99999999999999999999", "at column 1: integer 99999999999999999999 does not fit in int64"},
      {"1.2.3", "at column 1: malformed number '1.2.3'"},
      {"12abc", "at column 1: malformed number '12abc'"},
      {"id $ 2", "at column 4: unexpected character '$'"},
      {"(id", "at column 4: expected ')', found end of expression"},
      {"id 1", "at column 4: unexpected '1'"},
      {"round(price, id)", "at column 14: round's digits must be an integer literal"},
      {"round()", "at column 1: round takes 1 to 2 argument(s), not 0"},
      {"date_trunc('week', at)", "at column 12: date_trunc's unit must be 'second', 'minute', 'hour' or 'day'"},
      {"date_trunc('day', id)", "at column 19: date_trunc needs a timestamp, not int64"},
      {"TIMESTAMP '2026-13-01 00:00:00'",
       "at column 11: timestamp '2026-13-01 00:00:00' must be 'yyyy-MM-dd HH:mm:ss[.ffffff]'"},
      {"lower(id)", "at column 7: lower needs a string, not int64"},
      {"coalesce(name, 1)", "at column 16: coalesce mixes string and int64"},
      {"name || 1", "at column 6: || joins strings, not int64"},
      {"-name", "at column 1: '-' needs a number, not string"},
      {"name IS 1", "at column 9: expected null, found '1'"},
  };
  for (const Bad& c : cases) {
    Expression e;
    const Status s = Expression::Parse(c.text, Input(), &e);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.text << ": " << s.ToString();
    EXPECT_EQ(s.message(), c.error) << c.text;
  }
}

TEST(ExpressionTest, DeepNestingIsRefusedNotACrash) {
  for (const std::string& open : {std::string("("), std::string("NOT "), std::string("-")}) {
    std::string text;
    for (int i = 0; i < 300; ++i) text += open;
    text += "id";
    Expression e;
    const Status s = Expression::Parse(text, Input(), &e);
    EXPECT_TRUE(s.IsInvalidArgument()) << open;
    EXPECT_NE(s.message().find("nested more than 200 deep"), std::string::npos) << s.ToString();
  }
  std::string chain = "1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  Expression e;
  const Status s = Expression::Parse(chain, Input(), &e);
  EXPECT_EQ(s.message(), "at column 8193: longer than 4096 tokens");  // the 4,097th
  std::string ok = "id";
  for (int i = 0; i < 150; ++i) ok = "(" + ok + " + 1)";
  EXPECT_EQ(Eval(ok, Full()), Value{int64_t{192}});
}

TEST(ExpressionTest, EvaluationErrorsNameTheColumn) {
  const std::vector<Bad> cases = {
      {"id / 0", "at column 4: division by zero"},
      {"id % (id - 42)", "at column 4: division by zero"},
      {"9223372036854775807 + id", "at column 21: int64 overflow in 9223372036854775807 + 42"},
      {"CAST(name AS int64)", "at column 1: cannot cast 'Ada' to int64"},
      {"CAST(1e300 AS int64)", "at column 1: cannot cast '1e+300' to int64"},
      {"round(9223372036854775807, -1)", "at column 1: int64 overflow in round(9223372036854775807, -1)"},
      {"round(-9223372036854775807 - 1, -1)", "at column 1: int64 overflow in round(-9223372036854775808, -1)"},
      {"date_trunc('day', CAST(-9223372036854775807 - 1 AS timestamp))",
       "at column 1: timestamp overflow in date_trunc"},
  };
  for (const Bad& c : cases) {
    Expression e;
    ASSERT_TRUE(Expression::Parse(c.text, Input(), &e).ok()) << c.text;
    Value v;
    const Status s = e.Evaluate(Full(), &v);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.text << ": " << s.ToString();
    EXPECT_EQ(s.message(), c.error) << c.text;
  }
}

}  // namespace
}  // namespace spool
