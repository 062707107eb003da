// Records to rows: every value type in both formats, every malformed record
// refused with its line and column, the rescue policy keeping what parsed,
// a parser made once agreeing with the functions and its fast path with the
// reference reading, and the value parsers (timestamps, durations, base64)
// on their own.
#include "spool/stream/records.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "records_internal.h"

namespace spool {
namespace {

// 2026-01-02 03:04:05.678901 UTC
constexpr int64_t kAt = 1767323045678901;
const Value kNull;

Schema MakeSchema(std::vector<Column> columns, std::vector<std::string> key) {
  Schema schema;
  Status s = Schema::Make(std::move(columns), key, &schema);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return schema;
}

// Every type; `id` the NOT NULL key.
Schema Typed() {
  return MakeSchema({{"id", ColumnType::kInt64, false},
                     {"name", ColumnType::kString, true},
                     {"price", ColumnType::kDouble, true},
                     {"ok", ColumnType::kBool, true},
                     {"at", ColumnType::kTimestamp, true},
                     {"data", ColumnType::kBytes, true}},
                    {"id"});
}

// All nullable, with a rescue column.
Schema Rescuing() {
  return MakeSchema({{"id", ColumnType::kInt64, true},
                     {"name", ColumnType::kString, true},
                     {"price", ColumnType::kDouble, true},
                     {"_rescued_data", ColumnType::kString, true}},
                    {});
}

RecordOptions Options(RecordFormat format, std::string source, BadRecordPolicy policy = BadRecordPolicy::kFail) {
  RecordOptions options;
  options.format = format;
  options.bad_records = policy;
  options.source_name = std::move(source);
  return options;
}

RecordOptions Json(BadRecordPolicy policy = BadRecordPolicy::kFail) {
  return Options(RecordFormat::kJsonLines, "in.jsonl", policy);
}
RecordOptions Csv(BadRecordPolicy policy = BadRecordPolicy::kFail) {
  return Options(RecordFormat::kCsv, "in.csv", policy);
}

struct Result {
  Status status;
  std::vector<Row> rows;
  std::vector<uint64_t> lines;
};

Result Read(std::string_view data, const Schema& schema, const RecordOptions& options) {
  Result r;
  r.status = ReadRecords(data, schema, options, [&r](Row&& row, uint64_t line) {
    r.rows.push_back(std::move(row));
    r.lines.push_back(line);
    return Status::OK();
  });
  return r;
}

// The message of the error reading `data` gives; also checks that the
// stream reader says the same.
std::string ErrorOf(std::string_view data, const Schema& schema, const RecordOptions& options) {
  const Result r = Read(data, schema, options);
  EXPECT_TRUE(r.status.IsInvalidArgument()) << data << ": " << r.status.ToString();
  std::istringstream in{std::string(data)};
  const Status streamed = ReadRecords(in, schema, options, [](Row&&, uint64_t) { return Status::OK(); });
  EXPECT_EQ(streamed.ToString(), r.status.ToString()) << data;
  return std::string(r.status.message());
}

// ---------------------------------------------------------------------------
// Values

TEST(RecordsTest, EveryTypeFromJsonLines) {
  const Result r = Read(
      "{\"id\":1,\"name\":\"Ada\",\"price\":2.5,\"ok\":true,\"at\":\"2026-01-02 03:04:05.678901\",\"data\":\"eHl6\"}\n"
      "{\"id\":-2,\"price\":3,\"at\":1767323045678901,\"ok\":false}\n"
      "{\"id\":3,\"name\":null,\"price\":\"NaN\",\"at\":\"1767323045678901\",\"data\":\"\"}\n"
      "{\"id\":4,\"price\":\"-Infinity\",\"at\":\"2026-01-02T03:04:05\",\"name\":\"\\u00e9\\n\"}\n",
      Typed(), Json());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0], (Row{int64_t{1}, std::string("Ada"), 2.5, true, Timestamp{kAt}, Bytes{"xyz"}}));
  EXPECT_EQ(r.rows[1], (Row{int64_t{-2}, kNull, 3.0, false, Timestamp{kAt}, kNull}));
  EXPECT_TRUE(std::isnan(std::get<double>(r.rows[2][2])));
  EXPECT_EQ(r.rows[2][1], kNull);
  EXPECT_EQ(r.rows[2][4], Value(Timestamp{kAt}));
  EXPECT_EQ(r.rows[2][5], Value(Bytes{""}));
  EXPECT_EQ(r.rows[3][1], Value(std::string("\xc3\xa9\n")));
  EXPECT_EQ(r.rows[3][2], Value(-INFINITY));
  EXPECT_EQ(r.rows[3][4], Value(Timestamp{kAt - 678901}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST(RecordsTest, EveryTypeFromCsv) {
  const Result r = Read(
      "id,name,price,ok,at,data\n"
      "1,Ada,2.5,TRUE,2026-01-02 03:04:05.678901,eHl6\n"
      "-2,,3,false,1767323045678901,\n"
      "3,\"\",NaN,,,\"\"\n"
      "4,x,-Infinity,True,2026-01-02T03:04:05,Zg==\n",
      Typed(), Csv());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0], (Row{int64_t{1}, std::string("Ada"), 2.5, true, Timestamp{kAt}, Bytes{"xyz"}}));
  EXPECT_EQ(r.rows[1], (Row{int64_t{-2}, kNull, 3.0, false, Timestamp{kAt}, kNull}));
  EXPECT_EQ(r.rows[2][1], Value(std::string()));  // a quoted empty field is an empty string
  EXPECT_TRUE(std::isnan(std::get<double>(r.rows[2][2])));
  EXPECT_EQ(r.rows[2][3], kNull);
  EXPECT_EQ(r.rows[2][5], Value(Bytes{""}));
  EXPECT_EQ(r.rows[3], (Row{int64_t{4}, std::string("x"), -INFINITY, true, Timestamp{kAt - 678901}, Bytes{"f"}}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{2, 3, 4, 5}));
}

TEST(RecordsTest, QuotedCsvFieldsHoldCommasQuotesAndLineBreaks) {
  const Result r =
      Read("name,id\n\"a, b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\nplain,4\n\"\"\"\",5", Typed(), Csv());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 5u);
  EXPECT_EQ(r.rows[0][1], Value(std::string("a, b")));
  EXPECT_EQ(r.rows[1][1], Value(std::string("say \"hi\"")));
  EXPECT_EQ(r.rows[2][1], Value(std::string("two\nlines")));
  EXPECT_EQ(r.rows[3][1], Value(std::string("plain")));
  EXPECT_EQ(r.rows[4][1], Value(std::string("\"")));
  EXPECT_EQ(r.rows[4][0], Value(int64_t{5}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{2, 3, 4, 6, 7}));  // the quoted line break counts
}

// An input without newlines (`spool write --file /dev/zero`) is one endless
// line: the reader refuses it once it passes the bound, rather than
// buffering it until memory runs out.
// An endless stream of '0', counting what it gave.
struct Zeros : std::streambuf {
  char chunk[4096];
  uint64_t given = 0;
  int_type underflow() override {
    std::fill(std::begin(chunk), std::end(chunk), '0');
    given += sizeof(chunk);
    setg(chunk, chunk, chunk + sizeof(chunk));
    return traits_type::to_int_type(chunk[0]);
  }
};

TEST(RecordsTest, AnEndlessLineIsRefusedAtTheBoundNotBuffered) {
  Zeros zeros;
  std::istream in(&zeros);
  RecordOptions options;
  options.source_name = "/dev/zero";
  const Status s = ReadRecords(in, Typed(), options, [](Row&&, uint64_t) { return Status::OK(); });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("/dev/zero line 1 is longer than 16 MiB"), std::string::npos) << s.ToString();
  EXPECT_LE(zeros.given, kMaxRecordLineBytes + 2 * sizeof(zeros.chunk));  // read no further than the bound
  // Lines up to the bound read as lines; the last may lack its newline.
  std::istringstream lines("a\n\nb");
  std::string line;
  bool too_long = true;
  std::vector<std::string> got;
  while (ReadBoundedLine(lines, 1, &line, &too_long)) got.push_back(too_long ? "<long>" : line);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "", "b"}));
}

TEST(RecordsTest, AnEndlessCsvRecordIsRefusedAtTheBoundNotBuffered) {
  Zeros zeros;
  std::istream in(&zeros);
  RecordOptions options;
  options.source_name = "/dev/zero";
  options.format = RecordFormat::kCsv;
  const Status s = ReadRecords(in, Typed(), options, [](Row&&, uint64_t) { return Status::OK(); });
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("the CSV record at line 1 is longer than 16 MiB"), std::string::npos) << s.ToString();
  EXPECT_LE(zeros.given, kMaxRecordLineBytes + (1 << 16) + 2 * sizeof(zeros.chunk));
}

TEST(RecordsTest, CrLfLineEndsAndBlankLinesAreSkipped) {
  Result r = Read("\r\nid,name\r\n1,x\r\n\r\n2,\"a\r\nb\"\r\n", Typed(), Csv());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0][1], Value(std::string("x")));
  EXPECT_EQ(r.rows[1][1], Value(std::string("a\r\nb")));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{3, 5}));
  r = Read("\n  \t\r\n{\"id\":1}\r\n\n{\"id\":2}", Typed(), Json());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{3, 5}));
}

TEST(RecordsTest, AnAbsentNullableColumnIsNull) {
  Result r = Read("{\"id\":7}", Typed(), Json());
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.rows[0], (Row{int64_t{7}, kNull, kNull, kNull, kNull, kNull}));
  r = Read("id\n7\n", Typed(), Csv());
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.rows[0], (Row{int64_t{7}, kNull, kNull, kNull, kNull, kNull}));
}

TEST(RecordsTest, ARepeatedJsonKeyKeepsItsLastValue) {
  const Result r =
      Read("{\"id\":1,\"name\":5,\"name\":\"y\"}\n{\"id\":2,\"name\":\"x\",\"name\":\"z\"}", Typed(), Json());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.rows[0][1], Value(std::string("y")));
  EXPECT_EQ(r.rows[1][1], Value(std::string("z")));
}

TEST(RecordsTest, KeysOnlyReadsTheKeyAndSkipsOtherColumns) {
  RecordOptions options = Json();
  options.keys_only = true;
  Result r = Read("{\"name\":[\"nested\"],\"price\":\"not read\",\"id\":5}", Typed(), options);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.rows, (std::vector<Row>{{int64_t{5}}}));
  EXPECT_EQ(ErrorOf("{\"name\":\"x\"}", Typed(), options),
            "in.jsonl line 1: column 'id' is missing and must not be null");
  EXPECT_EQ(ErrorOf("{\"id\":5,\"colour\":1}", Typed(), options),
            "in.jsonl line 1: unknown column 'colour' (the table has: id, name, price, ok, at, data)");
  options.format = RecordFormat::kCsv;
  r = Read("name,ok,id\nx,maybe,5\n", Typed(), options);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.rows, (std::vector<Row>{{int64_t{5}}}));
}

// ---------------------------------------------------------------------------
// kFail: each malformed record, with its line and column

TEST(RecordsTest, MalformedJsonLinesNameLineAndColumn) {
  const Schema schema = Typed();
  std::string many_keys = "{\"id\":1";
  for (int i = 0; i < 5000; ++i) many_keys += ",\"k" + std::to_string(i) + "\":0";
  many_keys += "}";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"id\":1}\n\n{\"id\":2,\"name\":\"x\"",
       "in.jsonl line 3: malformed JSON: parse error at column 19: syntax error while parsing object - unexpected end "
       "of input; expected '}'"},
      // A syntax error wins over an earlier wrong value, as a document reading would find it first.
      {"{\"id\":\"x\",\"name\":}",
       "in.jsonl line 1: malformed JSON: parse error at column 18: syntax error while parsing value - unexpected '}'; "
       "expected '[', '{', or a literal"},
      {"{\"id\":1} {\"id\":2}",
       "in.jsonl line 1: malformed JSON: parse error at column 10: syntax error while parsing value - unexpected '{'; "
       "expected end of input"},
      {"{\"id\":1e999}", "in.jsonl line 1: malformed JSON: number overflow parsing '1e999'"},
      {"[1,2]", "in.jsonl line 1: expected a JSON object, got array"},
      {"42", "in.jsonl line 1: expected a JSON object, got number"},
      {"{\"id\":1,\"colour\":\"red\"}",
       "in.jsonl line 1: unknown column 'colour' (the table has: id, name, price, ok, at, data)"},
      {"{\"name\":\"x\"}", "in.jsonl line 1: column 'id' is missing and must not be null"},
      {"{\"id\":null}", "in.jsonl line 1: column 'id': must not be null"},
      {"{\"id\":\"7\"}", "in.jsonl line 1: column 'id': expected an int64, got \"7\""},
      {"{\"id\":1.5}", "in.jsonl line 1: column 'id': expected an int64, got 1.5"},
      {"{\"id\":18446744073709551615}",
       "in.jsonl line 1: column 'id': expected an int64 in range, got 18446744073709551615"},
      {"{\"id\":1,\"name\":5}", "in.jsonl line 1: column 'name': expected a string, got 5"},
      {"{\"id\":1,\"name\":[\"a\",{\"b\":null}]}",
       "in.jsonl line 1: column 'name': expected a string, got [\"a\",{\"b\":null}]"},
      {"{\"id\":1,\"price\":\"cheap\"}",
       "in.jsonl line 1: column 'price': expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), got \"cheap\""},
      {"{\"id\":1,\"price\":true}",
       "in.jsonl line 1: column 'price': expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), got true"},
      {"{\"id\":1,\"ok\":1}", "in.jsonl line 1: column 'ok': expected true or false, got 1"},
      {"{\"id\":1,\"ok\":\"true\"}", "in.jsonl line 1: column 'ok': expected true or false, got \"true\""},
      {"{\"id\":1,\"at\":\"2024-02-30 10:00:00\"}",
       "in.jsonl line 1: column 'at': timestamp '2024-02-30 10:00:00' must be 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC) or "
       "an "
       "integer of microseconds"},
      {"{\"id\":1,\"at\":1.5}", "in.jsonl line 1: column 'at': expected a timestamp, got 1.5"},
      {"{\"id\":1,\"data\":\"a\"}",
       "in.jsonl line 1: column 'data': expected base64 (RFC 4648, with padding), got 'a'"},
      {"{\"id\":1,\"data\":5}", "in.jsonl line 1: column 'data': expected a base64 string, got 5"},
      {"{\"id\":1,\"name\":" + std::string(300, '[') + std::string(300, ']') + "}",
       "in.jsonl line 1: JSON nested deeper than 256 levels"},
      {many_keys, "in.jsonl line 1: JSON with more than 4096 keys"},
  };
  for (const auto& [data, message] : cases) EXPECT_EQ(ErrorOf(data, schema, Json()), message) << data;
}

TEST(RecordsTest, MalformedCsvNamesLineAndColumn) {
  const Schema schema = Typed();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"id,colour\n", "in.csv line 1: header: unknown column 'colour' (the table has: id, name, price, ok, at, data)"},
      {"id,id\n", "in.csv line 1: header: column 'id' appears twice"},
      {"\nname\n", "in.csv line 2: header: column 'id' is missing and must not be null"},
      {"id,name\n1,a\n2,a,b\n", "in.csv line 3: 3 field(s), but the header has 2"},
      {"id,name\n1\n", "in.csv line 2: 1 field(s), but the header has 2"},
      {"id\nabc\n", "in.csv line 2: column 'id': expected an int64, got 'abc'"},
      {"id\n" + std::string(50, '9') + "\n",
       "in.csv line 2: column 'id': expected an int64, got '" + std::string(40, '9') + "…'"},
      {"id,price\n1,1.2.3\n", "in.csv line 2: column 'price': expected a double, got '1.2.3'"},
      {"id,ok\n1,maybe\n", "in.csv line 2: column 'ok': expected true or false, got 'maybe'"},
      {"id,at\n1,yesterday\n",
       "in.csv line 2: column 'at': timestamp 'yesterday' must be 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC) or an integer "
       "of "
       "microseconds"},
      {"id,data\n1,Zg=\n", "in.csv line 2: column 'data': expected base64 (RFC 4648, with padding), got 'Zg='"},
      {"id,name\n,x\n",
       "in.csv line 2: column 'id': must not be null (an empty field is null; quote \"\" for an empty string)"},
      {"id,name\n1,ok\n2,\"bad\n3,worse\n", "in.csv line 3: malformed CSV: a quoted field is never closed"},
      {"id,name\n1,a\"b\n",
       "in.csv line 2: malformed CSV: a quote inside an unquoted field (quote the whole field and double the quote)"},
      {"id,name\n1,\"two\nlines\"x\n",
       "in.csv line 3: malformed CSV: text after a closing quote (a quote inside a quoted field is written \"\")"},
      {"id,\"na\n", "in.csv line 1: malformed CSV: a quoted field is never closed"},
  };
  for (const auto& [data, message] : cases) EXPECT_EQ(ErrorOf(data, schema, Csv()), message) << data;
}

TEST(RecordsTest, RowsBeforeAnErrorStayEmitted) {
  const Result r = Read("{\"id\":1}\n{\"id\":2}\n{\"id\":\"x\"}\n{\"id\":4}", Typed(), Json());
  EXPECT_TRUE(r.status.IsInvalidArgument());
  EXPECT_EQ(r.rows.size(), 2u);
}

TEST(RecordsTest, AnErrorFromEmitStopsTheRead) {
  for (const auto& [data, options] :
       {std::pair{std::string("{\"id\":1}\n{\"id\":2}\n"), Json()}, std::pair{std::string("id\n1\n2\n"), Csv()}}) {
    int calls = 0;
    const Status s = ReadRecords(data, Typed(), options, [&calls](Row&&, uint64_t) {
      ++calls;
      return Status::Aborted("enough");
    });
    EXPECT_EQ(s.ToString(), "Aborted: enough");
    EXPECT_EQ(calls, 1);
  }
}

TEST(RecordsTest, TheStreamReaderGivesWhatTheBufferReaderGives) {
  for (const auto& [data, options] : {std::pair{std::string("{\"id\":1,\"name\":\"a\"}\r\n\n{\"id\":2}"), Json()},
                                      std::pair{std::string("id,name\n1,\"x\ny\"\n2,b"), Csv()}}) {
    const Result buffered = Read(data, Typed(), options);
    ASSERT_TRUE(buffered.status.ok());
    std::istringstream in(data);
    Result streamed;
    ASSERT_TRUE(ReadRecords(in, Typed(), options, [&](Row&& row, uint64_t line) {
                  streamed.rows.push_back(std::move(row));
                  streamed.lines.push_back(line);
                  return Status::OK();
                }).ok());
    EXPECT_EQ(streamed.rows, buffered.rows);
    EXPECT_EQ(streamed.lines, buffered.lines);
  }
}

// A stream whose read fails after its first line.
class FailingBuffer : public std::streambuf {
 public:
  FailingBuffer() { setg(text_, text_, text_ + sizeof(text_) - 1); }

 protected:
  int_type underflow() override { throw std::ios_base::failure("device gone"); }

 private:
  char text_[10] = "{\"id\":1}\n";
};

TEST(RecordsTest, AFailedStreamReadIsAnIOError) {
  for (const RecordOptions& options : {Json(), Csv()}) {
    FailingBuffer buffer;
    std::istream in(&buffer);
    const Status s = ReadRecords(in, Typed(), options, [](Row&&, uint64_t) { return Status::OK(); });
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(s.message(), options.source_name + ": read failed");
  }
}

// ---------------------------------------------------------------------------
// kRescue

std::string Rescued(const Row& row) { return std::get<std::string>(row.back()); }

TEST(RecordsTest, RescueKeepsWhatParsedAndRescuesTheRestFromJson) {
  const Result r = Read(
      "{\"id\":1,\"name\":\"a\",\"colour\":null}\n"
      "{\"id\":\"x\",\"name\":\"b\",\"price\":2}\n"
      "{\"id\":3,\"colour\":{\"r\":1}}\n"
      "[1,2]\n"
      "{\"id\":\n"
      "{\"id\":4,\"_rescued_data\":\"mine\"}\n"
      "{\"price\":\"cheap\",\"id\":5,\"name\":[],\"id\":6}\n",
      Rescuing(), Json(BadRecordPolicy::kRescue));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 7u);
  EXPECT_EQ(r.rows[0], (Row{int64_t{1}, std::string("a"), kNull, kNull}));  // a null unknown field: nothing to rescue
  EXPECT_EQ(r.rows[1], (Row{kNull, std::string("b"), 2.0, std::string(R"({"id":"x","_file_path":"in.jsonl"})")}));
  EXPECT_EQ(r.rows[2], (Row{int64_t{3}, kNull, kNull, std::string(R"({"colour":{"r":1},"_file_path":"in.jsonl"})")}));
  EXPECT_EQ(r.rows[3],
            (Row{kNull, kNull, kNull, std::string(R"({"_corrupt_record":"[1,2]","_file_path":"in.jsonl"})")}));
  EXPECT_EQ(Rescued(r.rows[4]), R"({"_corrupt_record":"{\"id\":","_file_path":"in.jsonl"})");
  EXPECT_EQ(r.rows[5],
            (Row{int64_t{4}, kNull, kNull, std::string(R"({"_rescued_data":"mine","_file_path":"in.jsonl"})")}));
  EXPECT_EQ(r.rows[6],
            (Row{int64_t{6}, kNull, kNull, std::string(R"({"price":"cheap","name":[],"_file_path":"in.jsonl"})")}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(RecordsTest, RescueKeepsWhatParsedAndRescuesTheRestFromCsv) {
  const Result r = Read("id,name,colour\n1,a,\nx,b,red\n2,c,d,e\n3,,\"\"\n", Rescuing(), Csv(BadRecordPolicy::kRescue));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0], (Row{int64_t{1}, std::string("a"), kNull, kNull}));
  EXPECT_EQ(r.rows[1],
            (Row{kNull, std::string("b"), kNull, std::string(R"({"id":"x","colour":"red","_file_path":"in.csv"})")}));
  EXPECT_EQ(r.rows[2],
            (Row{kNull, kNull, kNull, std::string(R"({"_corrupt_record":"2,c,d,e","_file_path":"in.csv"})")}));
  EXPECT_EQ(r.rows[3], (Row{int64_t{3}, kNull, kNull, std::string(R"({"colour":"","_file_path":"in.csv"})")}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{2, 3, 4, 5}));
}

TEST(RecordsTest, RescueTakesUnsplittableCsvALineAtATime) {
  const Result r =
      Read("id,name,id\n1,a\"b,\n2,\"x\"y,\n3,\"unclosed,\n4,ok,9\n", Rescuing(), Csv(BadRecordPolicy::kRescue));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(Rescued(r.rows[0]), R"({"_corrupt_record":"1,a\"b,","_file_path":"in.csv"})");
  EXPECT_EQ(Rescued(r.rows[1]), R"({"_corrupt_record":"2,\"x\"y,","_file_path":"in.csv"})");
  EXPECT_EQ(Rescued(r.rows[2]), R"({"_corrupt_record":"3,\"unclosed,","_file_path":"in.csv"})");
  // A repeated header name is an unknown field.
  EXPECT_EQ(r.rows[3], (Row{int64_t{4}, std::string("ok"), kNull, std::string(R"({"id":"9","_file_path":"in.csv"})")}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{2, 3, 4, 5}));
}

TEST(RecordsTest, RescueStillRefusesAMalformedCsvHeader) {
  EXPECT_EQ(ErrorOf("id,\"name\n1,a\n", Rescuing(), Csv(BadRecordPolicy::kRescue)),
            "in.csv line 1: malformed CSV: a quoted field is never closed");
}

TEST(RecordsTest, RescueNeedsANullableStringColumnAndNullableColumns) {
  const RecordOptions rescue = Json(BadRecordPolicy::kRescue);
  EXPECT_EQ(ErrorOf("{}", Typed(), rescue),
            "rescuing bad records needs a nullable string column '_rescued_data' in the schema to hold them");
  EXPECT_EQ(
      ErrorOf("{}", MakeSchema({{"id", ColumnType::kInt64, true}, {"_rescued_data", ColumnType::kBytes, true}}, {}),
              rescue),
      "rescuing bad records needs a nullable string column '_rescued_data' in the schema to hold them");
  EXPECT_EQ(
      ErrorOf("{}", MakeSchema({{"id", ColumnType::kInt64, false}, {"_rescued_data", ColumnType::kString, true}}, {}),
              rescue),
      "column 'id' must be nullable when bad records are rescued (a record whose value for it does not parse is "
      "still a row)");
  RecordOptions keys = rescue;
  keys.keys_only = true;
  EXPECT_EQ(ErrorOf("{}", Rescuing(), keys),
            "bad records cannot be rescued when reading keys only (the records of a delete)");
  Row row;
  EXPECT_TRUE(ParseJsonRecord("{}", Typed(), rescue, &row).IsInvalidArgument());
}

TEST(RecordsTest, RescueColumnMayHaveAnotherName) {
  RecordOptions options = Json(BadRecordPolicy::kRescue);
  options.rescue_column = "bad";
  const Schema schema = MakeSchema({{"id", ColumnType::kInt64, true}, {"bad", ColumnType::kString, true}}, {});
  const Result r = Read("{\"id\":true}\n", schema, options);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.rows[0], (Row{kNull, std::string(R"({"id":true,"_file_path":"in.jsonl"})")}));
}

TEST(RecordsTest, RescuedTextThatIsNotUtf8IsReplaced) {
  const Result r = Read("{\"id\":\xff}\n", Rescuing(), Json(BadRecordPolicy::kRescue));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(Rescued(r.rows[0]), "{\"_corrupt_record\":\"{\\\"id\\\":\xef\xbf\xbd}\",\"_file_path\":\"in.jsonl\"}");
}

// ---------------------------------------------------------------------------
// ParseJsonRecord: a topic message

TEST(RecordsTest, ParseJsonRecordReadsOneObject) {
  RecordOptions options = Json();
  options.source_name = "topic orders offset 7";
  Row row;
  ASSERT_TRUE(ParseJsonRecord(R"({"id":1,"name":"a"})", Typed(), options, &row).ok());
  EXPECT_EQ(row, (Row{int64_t{1}, std::string("a"), kNull, kNull, kNull, kNull}));
  Status s = ParseJsonRecord(R"({"id":"x"})", Typed(), options, &row);
  EXPECT_EQ(s.message(), "topic orders offset 7: column 'id': expected an int64, got \"x\"");
  s = ParseJsonRecord("", Typed(), options, &row);
  EXPECT_EQ(
      s.message(),
      "topic orders offset 7: malformed JSON: parse error at column 1: syntax error while parsing value - unexpected "
      "end of input; expected '[', '{', or a literal");
  options.source_name.clear();
  s = ParseJsonRecord(R"({"name":"a"})", Typed(), options, &row);
  EXPECT_EQ(s.message(), "column 'id' is missing and must not be null");
  options.format = RecordFormat::kCsv;  // ignored: a message is JSON
  ASSERT_TRUE(ParseJsonRecord(R"({"id":2})", Typed(), options, &row).ok());
  EXPECT_EQ(row[0], Value(int64_t{2}));
}

TEST(RecordsTest, ParseJsonRecordRescues) {
  RecordOptions options = Json(BadRecordPolicy::kRescue);
  options.source_name = "orders";
  Row row;
  ASSERT_TRUE(ParseJsonRecord(R"({"id":1,"price":"x"})", Rescuing(), options, &row).ok());
  EXPECT_EQ(row, (Row{int64_t{1}, kNull, kNull, std::string(R"({"price":"x","_file_path":"orders"})")}));
  ASSERT_TRUE(ParseJsonRecord("not json", Rescuing(), options, &row).ok());
  EXPECT_EQ(row, (Row{kNull, kNull, kNull, std::string(R"({"_corrupt_record":"not json","_file_path":"orders"})")}));
  ASSERT_TRUE(ParseJsonRecord(R"({"id":2})", Rescuing(), options, &row).ok());
  EXPECT_EQ(row, (Row{int64_t{2}, kNull, kNull, kNull}));
}

// ---------------------------------------------------------------------------
// RecordParser: made once, and its fast path against the reference reading

std::unique_ptr<const RecordParser> MakeParser(const Schema& schema, const RecordOptions& options) {
  std::unique_ptr<const RecordParser> parser;
  Status s = RecordParser::Make(schema, options, &parser);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return parser;
}

// Equal, a double to the bit (NaN to NaN, -0.0 only to -0.0).
bool SameRow(const Row& a, const Row& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Value& x, const Value& y) {
    const double* dx = std::get_if<double>(&x);
    const double* dy = std::get_if<double>(&y);
    if (dx == nullptr || dy == nullptr) return x == y;
    return std::bit_cast<uint64_t>(*dx) == std::bit_cast<uint64_t>(*dy);
  });
}

// What ParseJson gives is what the reference gives, and so is what the
// fast path gives when it takes the record. Returns whether it took it.
bool ExpectFastPathAgrees(const RecordParser& parser, const std::string& text) {
  Row reference_row;
  const Status reference = ParseJsonReferenceOnly(parser, text, &reference_row);
  Row row;
  const Status combined = parser.ParseJson(text, &row);
  EXPECT_EQ(combined.ToString(), reference.ToString()) << text;
  if (reference.ok() && combined.ok()) {
    EXPECT_TRUE(SameRow(row, reference_row)) << text;
  }
  Row fast_row;
  const std::optional<Status> fast = ParseFlatJsonOnly(parser, text, &fast_row);
  if (!fast.has_value()) return false;
  EXPECT_EQ(fast->ToString(), reference.ToString()) << text;
  if (fast->ok() && reference.ok()) {
    EXPECT_TRUE(SameRow(fast_row, reference_row)) << text;
  }
  return true;
}

TEST(RecordsTest, AParserMadeOnceReadsEveryRecordAsTheFunctionsDo) {
  RecordOptions options = Json(BadRecordPolicy::kRescue);
  options.source_name = "topic orders";
  const auto parser = MakeParser(Rescuing(), options);
  for (const char* text : {R"({"id":1,"name":"a"})", R"({"id":"x"})", "not json", R"({"id":2,"id":3})", "{}"}) {
    Row once;
    Row each;
    ASSERT_TRUE(parser->ParseJson(text, &once).ok()) << text;
    ASSERT_TRUE(ParseJsonRecord(text, Rescuing(), options, &each).ok()) << text;
    EXPECT_EQ(once, each) << text;
  }
  // Read names the source it is given, in errors and in rescued data.
  Result r;
  const auto collect = [&r](Row&& row, uint64_t line) {
    r.rows.push_back(std::move(row));
    r.lines.push_back(line);
    return Status::OK();
  };
  ASSERT_TRUE(parser->Read("{\"id\":1}\n{\"id\":\"x\"}\n", "a.jsonl", collect).ok());
  EXPECT_EQ(r.rows[1], (Row{kNull, kNull, kNull, std::string(R"({"id":"x","_file_path":"a.jsonl"})")}));
  EXPECT_EQ(r.lines, (std::vector<uint64_t>{1, 2}));
  const auto strict = MakeParser(Typed(), Csv());
  EXPECT_EQ(strict->Read("id\nx\n", "b.csv", collect).message(),
            "b.csv line 2: column 'id': expected an int64, got 'x'");
  std::unique_ptr<const RecordParser> refused;
  EXPECT_TRUE(RecordParser::Make(Typed(), Json(BadRecordPolicy::kRescue), &refused).IsInvalidArgument());
}

TEST(RecordsTest, FlatObjectsTakeTheFastPathAndReadAsTheReferenceDoes) {
  const auto parser = MakeParser(Typed(), Json());
  const std::vector<std::string> flat = {
      R"({"id":4821,"name":"order 0000000042 from customer 4821 shipped","at":1700000000001000})",
      "{}",
      " \t\r\n{ \"id\" : -9223372036854775808 , \"price\" : -0.0 }\n ",
      R"({"data":"eHl6","ok":false,"price":1.5e-3,"id":18,"name":null})",
      R"({"id":9223372036854775807,"price":18446744073709551615,"at":"2026-01-02 03:04:05.678901"})",
      R"({"id":0,"price":"NaN","ok":true,"name":"\"\\\/\b\f\n\r\t"})",
      R"({"id":-0,"price":4.9e-324,"name":"\u0000\u00e9\u20AC\ud83d\ude00 caf\u00E9"})",
      "{\"id\":1,\"name\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf \xf4\x8f\xbf\xbf\"}",
      R"({"\u0069d":7,"price":1E+2,"at":-5})",
  };
  for (const std::string& text : flat) EXPECT_TRUE(ExpectFastPathAgrees(*parser, text)) << text;
  Row row;
  ASSERT_TRUE(parser->ParseJson(flat[6], &row).ok());
  EXPECT_EQ(row[1], Value(std::string("\0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 caf\xc3\xa9", 16)));
  EXPECT_EQ(row[2], Value(4.9e-324));
}

TEST(RecordsTest, NumbersOfEveryLengthReadAsTheReferenceDoes) {
  // The fast path reads runs of eight digits at once: every length from 1
  // to 22 digits, each digit value in every position, both signs, into an
  // int64, a double and a timestamp column, with what follows the number
  // varied (a digit run may end anywhere in the eight bytes it loads).
  const auto parser = MakeParser(Typed(), Json());
  std::mt19937_64 rng(20261203);
  int fast = 0;
  for (int length = 1; length <= 22; ++length) {
    for (int trial = 0; trial < 40; ++trial) {
      std::string digits;
      for (int i = 0; i < length; ++i)
        digits += static_cast<char>('0' + (i == 0 && length > 1 ? 1 + rng() % 9 : rng() % 10));
      if (trial < 10) digits[rng() % digits.size()] = static_cast<char>('0' + trial % 10);
      if (length > 1 && digits[0] == '0') digits[0] = '9';
      const std::string number = (rng() % 2 == 0 ? "-" : "") + digits;
      const char* tails[] = {"}", ",\"ok\":true}", " }", ".5}", "e3}"};
      const std::string tail = tails[rng() % std::size(tails)];
      for (const char* column : {"id", "price", "at"}) {
        const std::string text = std::string("{\"") + column + "\":" + number + tail;
        fast += ExpectFastPathAgrees(*parser, text) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(fast, 22 * 40);  // most of them took the fast path
}

TEST(RecordsTest, FastPathGivesUpWhatItDoesNotReadExactlyAsTheReference) {
  const auto parser = MakeParser(Typed(), Json());
  const std::vector<std::string> given_up = {
      R"({"id":1,"name":"a","name":"b"})",  // a repeated key: the last one wins
      R"({"id":1,"colour":"red"})",         // an unknown column
      R"({"id":1,"name":["a"]})",           // nested
      R"({"id":1,"name":{}})",
      "\xef\xbb\xbf{\"id\":1}",                      // a byte order mark, which nlohmann skips
      std::string("{\"id\":1}\0trailing", 17),       // nlohmann ends the text at a NUL byte
      R"({"id":1,"price":9223372036854775808000})",  // an integer overflow, which nlohmann reads as a double
      R"({"id":1,"price":-9223372036854775809})",
      R"({"id":1,"price":1e-400})",   // underflow to zero
      R"({"id":1,"price":1e999})",    // overflow: an error
      R"({"id":1,"name":"\ud83d"})",  // a high surrogate alone
      R"({"id":1,"name":"\ude00\ud83d"})",
      R"({"id":1,"name":"\u12"})",
      R"({"id":1,"name":"\x"})",
      "{\"id\":1,\"name\":\"\xc0\xaf\"}",  // overlong forms
      "{\"id\":1,\"name\":\"\xe0\x80\xaf\"}",
      "{\"id\":1,\"name\":\"\xf0\x80\x80\xaf\"}",
      "{\"id\":1,\"name\":\"\xed\xa0\x80\"}",      // an encoded surrogate
      "{\"id\":1,\"name\":\"\xf4\x90\x80\x80\"}",  // past U+10FFFF
      "{\"id\":1,\"name\":\"\xe2\x82\"}",          // a truncated sequence
      "{\"id\":1,\"name\":\"tab\there\"}",         // a raw control character
      R"({"id":01})",
      R"({"id":1.})",
      R"({"id":.5})",
      R"({"id":+1})",
      R"({"id":-})",
      R"({"id":1e})",
      R"({"id":1,})",
      R"({"id":1)",
      R"({"id" 1})",
      R"({id:1})",
      R"({"id":1}})",
      R"({"id":1} x)",
      "{\"id\":1}\f",
      R"({"id":tru})",
      R"({"id":nul})",
      R"([{"id":1}])",
      R"("id")",
      "",
      "   ",
      R"({"id":"7"})",  // a value that does not convert
      R"({"id":1,"ok":1})",
  };
  for (const std::string& text : given_up) {
    Row row;
    EXPECT_FALSE(ParseFlatJsonOnly(*parser, text, &row).has_value()) << text;
    ExpectFastPathAgrees(*parser, text);
  }
  Row row;
  ASSERT_TRUE(parser->ParseJson(given_up[6], &row).ok());
  EXPECT_EQ(row[2], Value(9223372036854775808000.0));
}

// Random flat objects of every kind of token, most of them values that fit
// their column (so that many records take the fast path), and random damage.
class JsonRecordGenerator {
 public:
  explicit JsonRecordGenerator(uint64_t seed) : rng_(seed) {}

  std::string Record() {
    std::string text = Space() + "{";
    const size_t fields = Pick(7);
    for (size_t i = 0; i < fields; ++i) text += (i > 0 ? "," : "") + Space() + Field() + Space();
    text += "}" + Space();
    return Pick(4) == 0 ? Damage(text) : text;
  }

 private:
  size_t Pick(size_t n) { return static_cast<size_t>(rng_() % n); }
  template <typename T>
  const T& OneOf(const std::vector<T>& choices) {
    return choices[Pick(choices.size())];
  }

  std::string Space() { return OneOf<std::string>({"", "", "", " ", "\n\t ", "\r\n"}); }
  // A key and, three times in four, a value of its column's type.
  std::string Field() {
    static const std::string kKeys[] = {R"("id")",   R"("name")",   R"("price")",         R"("ok")",   R"("at")",
                                        R"("data")", R"("colour")", R"("_rescued_data")", R"("na\me")"};
    const size_t column = Pick(std::size(kKeys));
    const std::string key = column == 0 && Pick(4) == 0 ? R"("\u0069d")" : kKeys[column];
    return key + Space() + ":" + Space() + (Pick(4) == 0 ? Scalar() : ValueFor(column));
  }
  std::string ValueFor(size_t column) {
    switch (column) {
      case 0:
        return Integer();
      case 2:
        return Pick(2) == 0 ? Float() : Integer();
      case 3:
        return Literal();
      case 4:
        return Pick(2) == 0 ? Integer() : OneOf<std::string>({R"("2026-01-02 03:04:05")", R"("17673230456789")"});
      case 5:
        return OneOf<std::string>({R"("eHl6")", R"("Zg==")", R"("")", R"("Zg=")"});
      default:
        return String();
    }
  }
  std::string Scalar() {
    switch (Pick(5)) {
      case 0:
        return Integer();
      case 1:
        return Float();
      case 2:
        return String();
      case 3:
        return Literal();
      default:
        return OneOf<std::string>({R"("NaN")", R"("-Infinity")", R"("Infinity")", "[1]", "{\"a\":1}", "[]"});
    }
  }
  std::string Literal() { return OneOf<std::string>({"true", "false", "null", "true", "false", "tru", "nulll"}); }
  std::string Integer() {
    const std::string sign = Pick(2) == 0 ? "-" : "";
    switch (Pick(4)) {
      case 0:
        return sign + std::to_string(rng_() >> Pick(64));
      case 1:
        return sign + OneOf<std::string>({"0", "9223372036854775807", "9223372036854775808", "18446744073709551615",
                                          "18446744073709551616", "01", "", "00"});
      case 2:
        return sign + std::to_string(rng_()) + std::to_string(rng_() % 1000);
      default:
        return std::to_string(static_cast<int64_t>(rng_()));
    }
  }
  std::string Float() {
    std::string digits = std::to_string(rng_() >> Pick(64));
    if (Pick(2) == 0) digits.insert(1, ".");
    const std::string exponent = Pick(2) == 0 ? ""
                                              : OneOf<std::string>({"e", "E", "e+", "e-", "E-"}) +
                                                    std::to_string(Pick(2) == 0 ? Pick(20) : Pick(700));
    const std::string special = OneOf<std::string>({"1.", ".5", "1e", "-0.0", "2.2250738585072011e-308", "4.9e-324"});
    return Pick(8) == 0 ? special : (Pick(2) == 0 ? "-" : "") + digits + exponent;
  }
  // Two strings in three of well-formed pieces only.
  std::string String() {
    static const std::vector<std::string> kGood = {"a",
                                                   "Z",
                                                   " ",
                                                   "\\\"",
                                                   "\\\\",
                                                   "\\/",
                                                   "\\b",
                                                   "\\f",
                                                   "\\n",
                                                   "\\r",
                                                   "\\t",
                                                   "\\u00e9",
                                                   "\\u0000",
                                                   "\\u20AC",
                                                   "\\uD83D\\uDE00",
                                                   "\\udbff\\udfff",
                                                   "\xc3\xa9",
                                                   "\xe2\x82\xac",
                                                   "\xf0\x9f\x98\x80",
                                                   "\xe0\xa0\x80",
                                                   "\xed\x9f\xbf",
                                                   "\xf4\x8f\xbf\xbf",
                                                   "\x7f"};
    static const std::vector<std::string> kBad = {
        "\\ud83d",      "\\ude00",          "\\u12", "\\q",      "\xc0\xaf", "\xe0\x80\xaf",      "\xf0\x80\x80\xaf",
        "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff",  "\xe2\x82", "\x01",     std::string(1, '\0')};
    const bool clean = Pick(3) != 0;
    std::string text = "\"";
    for (size_t i = Pick(12); i > 0; --i) text += clean || Pick(2) == 0 ? OneOf(kGood) : OneOf(kBad);
    return text + "\"";
  }
  std::string Damage(std::string text) {
    if (text.empty()) return text;
    const size_t at = Pick(text.size());
    switch (Pick(4)) {
      case 0:
        text[at] = static_cast<char>(rng_());
        break;
      case 1:
        text.erase(at, 1);
        break;
      case 2:
        text.insert(at, 1, OneOf<char>({'"', '\\', ',', ':', '{', '}', '[', '0', '\0', '\xe9'}));
        break;
      default:
        text.resize(at);
        break;
    }
    return text;
  }

  std::mt19937_64 rng_;
};

TEST(RecordsTest, FastPathAgreesWithTheReferenceOnRandomAndDamagedRecords) {
  RecordOptions keys_only = Json();
  keys_only.keys_only = true;
  const std::vector<std::pair<Schema, RecordOptions>> setups = {
      {Typed(), Json()}, {Rescuing(), Json(BadRecordPolicy::kRescue)}, {Typed(), keys_only}};
  for (size_t k = 0; k < setups.size(); ++k) {
    const auto parser = MakeParser(setups[k].first, setups[k].second);
    JsonRecordGenerator generator(k);
    size_t taken = 0;
    constexpr size_t kRecords = 20'000;
    for (size_t i = 0; i < kRecords; ++i) taken += ExpectFastPathAgrees(*parser, generator.Record()) ? 1u : 0u;
    EXPECT_GT(taken, kRecords / 10) << "the fast path must take a share of the records to be tested";
  }
}

// Leaving columns NULL (RecordOptions::leave_null) turns no record from
// good to bad or back and changes no error and no rescued data: the rows
// are those read without it, but NULL in those columns. On random and
// damaged records, whose fast path and reference reading still agree.
TEST(RecordsTest, ColumnsLeftNullAreCheckedAsBeforeButNotKept) {
  struct Setup {
    Schema schema;
    RecordOptions options;
    std::vector<bool> leave_null;
  };
  const std::vector<Setup> setups = {{Typed(), Json(), {false, true, false, true, true, true}},  // id and price kept
                                     {Typed(), Json(), {true, false, true, false, false, false}},
                                     {Rescuing(), Json(BadRecordPolicy::kRescue), {true, true, false, false}}};
  for (size_t k = 0; k < setups.size(); ++k) {
    const Setup& setup = setups[k];
    RecordOptions leaving = setup.options;
    leaving.leave_null = setup.leave_null;
    const auto whole = MakeParser(setup.schema, setup.options);
    const auto pruned = MakeParser(setup.schema, leaving);
    JsonRecordGenerator generator(100 + k);
    size_t taken = 0;
    size_t dropped = 0;  // values of left columns that were not kept
    constexpr size_t kRecords = 10'000;
    for (size_t i = 0; i < kRecords; ++i) {
      const std::string text = generator.Record();
      Row expected;
      const Status s = whole->ParseJson(text, &expected);
      Row row;
      EXPECT_EQ(pruned->ParseJson(text, &row).ToString(), s.ToString()) << text;
      taken += ExpectFastPathAgrees(*pruned, text) ? 1u : 0u;
      if (!s.ok()) continue;
      for (size_t c = 0; c < setup.leave_null.size(); ++c) {
        if (!setup.leave_null[c] || expected[c] == kNull) continue;
        expected[c] = kNull;
        ++dropped;
      }
      EXPECT_TRUE(SameRow(row, expected)) << text;
    }
    EXPECT_GT(taken, kRecords / 10) << "the fast path must take a share of the records to be tested";
    EXPECT_GT(dropped, kRecords / 100) << "good records must give the left columns values";
  }
}

TEST(RecordsTest, CsvColumnsLeftNullAreCheckedAsBeforeButNotKept) {
  RecordOptions leaving = Csv();
  leaving.leave_null = {false, true, false, true, true, true};
  const Result r = Read("id,name,price,ok,at,data\n1,Ada,2.5,TRUE,2026-01-02 03:04:05.678901,eHl6\n", Typed(), leaving);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.rows, (std::vector<Row>{{int64_t{1}, kNull, 2.5, kNull, kNull, kNull}}));
  for (const std::string bad : {"2,x,1,maybe,,\n", "2,x,1,,noon,\n", "2,x,1,,,Zg=\n"}) {
    const std::string data = "id,name,price,ok,at,data\n" + bad;
    EXPECT_EQ(ErrorOf(data, Typed(), leaving), ErrorOf(data, Typed(), Csv())) << bad;
  }
}

TEST(RecordsTest, ColumnsToLeaveNullMustFitTheSchemaAndTheOptions) {
  RecordOptions options = Json();
  options.leave_null = {true, false};
  Row row;
  Status s = ParseJsonRecord("{}", Typed(), options, &row);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("2 flags for a schema of 6 columns"), std::string::npos) << s.ToString();
  options.leave_null = {false, true, false, false, false, false};
  options.keys_only = true;
  s = ParseJsonRecord(R"({"id":1})", Typed(), options, &row);
  EXPECT_NE(s.message().find("no column can be left null when reading keys only"), std::string::npos) << s.ToString();
  RecordOptions rescuing = Json(BadRecordPolicy::kRescue);
  rescuing.leave_null = {false, false, false, true};
  s = ParseJsonRecord(R"({"id":1})", Rescuing(), rescuing, &row);
  EXPECT_NE(s.message().find("the rescue column '_rescued_data' cannot be left null"), std::string::npos)
      << s.ToString();
  rescuing.leave_null = {false, false, false, false};  // all flags false: as without
  ASSERT_TRUE(ParseJsonRecord(R"({"id":1,"name":"a"})", Rescuing(), rescuing, &row).ok());
  EXPECT_EQ(row, (Row{int64_t{1}, std::string("a"), kNull, kNull}));
}

TEST(RecordsTest, FastPathReadsEveryNumberAsTheReferenceDoes) {
  const auto parser =
      MakeParser(MakeSchema({{"n", ColumnType::kDouble, true}, {"i", ColumnType::kInt64, true}}, {}), Json());
  std::mt19937_64 rng(11);
  size_t taken = 0;
  for (int i = 0; i < 50'000; ++i) {
    char text[96];
    const double value = std::bit_cast<double>(rng());
    const int digits = static_cast<int>(rng() % 18) + 1;
    std::snprintf(text, sizeof(text), "{\"n\":%.*g,\"i\":%lld}", digits, std::isfinite(value) ? value : 1.0,
                  static_cast<long long>(rng()));
    taken += ExpectFastPathAgrees(*parser, text) ? 1u : 0u;
  }
  EXPECT_GT(taken, 45'000u);
}

// The fast path skips a string's plain bytes eight at a time: a byte it
// must stop at (a quote, a backslash, a control byte, the lead of a UTF-8
// sequence, good or bad) is found at every place within and across the
// words it reads, and what follows it is read as the reference reads it.
// Integers are read as they are scanned up to 18 digits and by
// std::from_chars beyond: both sides of the boundary read as the reference.
TEST(RecordsTest, FastPathFindsEveryStopByteWhereverItFallsAndReadsIntegersOfEveryLength) {
  const auto parser = MakeParser(Typed(), Json());
  const std::vector<std::string> stops = {"\\\"",         "\\\\",
                                          "\\u00e9",      "\x01",
                                          "\x1f",         std::string(1, '\0'),
                                          "\x7f",         "\xc3\xa9",
                                          "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                          "\xff",         "\xc3",
                                          "\x80",         "\""};
  size_t taken = 0;
  for (const std::string& stop : stops) {
    for (size_t before = 0; before <= 17; ++before) {
      for (size_t after : {0u, 1u, 7u, 8u, 9u, 20u}) {
        const std::string name = std::string(before, 'a') + stop + std::string(after, 'b');
        taken += ExpectFastPathAgrees(*parser, R"({"id":1,"name":")" + name + R"(","ok":true})") ? 1u : 0u;
        taken += ExpectFastPathAgrees(*parser, R"({"id":1,"name":")" + name + R"("})") ? 1u : 0u;
      }
    }
  }
  EXPECT_GT(taken, 1'000u);
  // Those beyond int64 the fast path leaves to the reference (which reads
  // them as doubles, and refuses them for the int64 column).
  for (const std::string digits :
       {"1", "12", "999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "123456789012345678901234567890"}) {
    for (const std::string sign : {"", "-"}) {
      const std::string number = sign + digits;
      int64_t value = 0;
      const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
      const bool fits = error == std::errc() && end == number.data() + number.size();
      const std::string text = R"({"id":)" + number + R"(,"price":)" + number + "}";
      EXPECT_EQ(ExpectFastPathAgrees(*parser, text), fits) << text;
    }
  }
}

// ---------------------------------------------------------------------------
// Value parsers

TEST(RecordsTest, DurationsInEveryForm) {
  constexpr uint64_t kSecond = 1'000'000, kMinute = 60 * kSecond, kHour = 60 * kMinute, kDay = 24 * kHour;
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"0s", 0},
      {"500ms", 500'000},
      {"90s", 90 * kSecond},
      {"15m", 15 * kMinute},
      {"36h", 36 * kHour},
      {"7d", 7 * kDay},
      {"500 milliseconds", 500'000},
      {"1 millisecond", 1'000},
      {"1 second", kSecond},
      {"30 seconds", 30 * kSecond},
      {"1 minute", kMinute},
      {"10 minutes", 10 * kMinute},
      {"1 hour", kHour},
      {"2 hours", 2 * kHour},
      {"1 day", kDay},
      {"2 days", 2 * kDay},
      {"2 day", 2 * kDay},
      {"10 Minutes", 10 * kMinute},
      {"7 D", 7 * kDay},
      {"10minutes", 10 * kMinute},
      {"18446744073709ms", 18446744073709'000},
  };
  for (const auto& [text, micros] : cases) {
    uint64_t got = 1;
    const Status s = ParseDuration(text, &got);
    EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
    EXPECT_EQ(got, micros) << text;
  }
}

TEST(RecordsTest, MalformedDurationsAreRefused) {
  for (const std::string text : {"", "s", "7", "7x", "-1s", "+1s", "1.5h", "7 fortnights", " 7d", "7d ", "7 days ago",
                                 "minutes", "7ss", "7 mins", "18446744073709551615d", "18446744073709552s",
                                 "99999999999999999999999s", "9223372036854775808us", "106751992d"}) {
    uint64_t got = 0;
    const Status s = ParseDuration(text, &got);
    EXPECT_TRUE(s.IsInvalidArgument()) << "'" << text << "'";
  }
  uint64_t got = 0;
  EXPECT_EQ(ParseDuration("7x", &got).message(),
            "duration '7x' must be a number and a unit: us, ms, s, m, h or d, or the unit as a word (e.g. 168h, 7d, "
            "10 minutes, 1 hour), at most 2^63 microseconds");
  ASSERT_TRUE(ParseDuration("9223372036854775807us", &got).ok());
  EXPECT_EQ(got, 9223372036854775807u);
  ASSERT_TRUE(ParseDuration("250 microseconds", &got).ok());
  EXPECT_EQ(got, 250u);
}

TEST(RecordsTest, Timestamps) {
  int64_t micros = 0;
  ASSERT_TRUE(ParseTimestamp("2026-01-02 03:04:05.678901", &micros).ok());
  EXPECT_EQ(micros, kAt);
  ASSERT_TRUE(ParseTimestamp("2026-01-02T03:04:05", &micros).ok());
  EXPECT_EQ(micros, kAt - 678901);
  ASSERT_TRUE(ParseTimestamp("-1", &micros).ok());
  EXPECT_EQ(micros, -1);
  for (const char* bad : {"", "-", "2024-02-30 10:00:00", "99999999999999999999", "12ab"}) {
    EXPECT_TRUE(ParseTimestamp(bad, &micros).IsInvalidArgument()) << bad;
  }
  EXPECT_EQ(ParseTimestamp("last tuesday", &micros).message(),
            "timestamp 'last tuesday' must be 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC) or an integer of microseconds");
}

TEST(RecordsTest, Base64RoundTripsAndRefusesMalformedText) {
  const std::vector<std::pair<std::string, std::string>> known = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"\xff\xfe", "//4="}};
  for (const auto& [bytes, text] : known) {
    EXPECT_EQ(EncodeBase64(bytes), text);
    std::string decoded = "junk";
    ASSERT_TRUE(DecodeBase64(text, &decoded).ok()) << text;
    EXPECT_EQ(decoded, bytes);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  std::string decoded;
  ASSERT_TRUE(DecodeBase64(EncodeBase64(all), &decoded).ok());
  EXPECT_EQ(decoded, all);
  for (const char* bad : {"a", "Zg=", "Z===", "Zg=A", "Zm9v=Zg=", "Zm 9", "Zm9v\n"}) {
    EXPECT_EQ(DecodeBase64(bad, &decoded).message(),
              "expected base64 (RFC 4648, with padding), got '" + std::string(bad) + "'")
        << bad;
  }
}

}  // namespace
}  // namespace spool
