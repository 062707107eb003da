// Fuzz target: record parsing (spool/stream/records.h).
// Input: one flags byte, then the records. Flags: bit 0 CSV (else JSON
// lines), bit 1 the rescue policy (else fail), bit 2 keys only (fail only).
// Oracle, beyond "no crash, no hang, no undefined behaviour":
//   - the buffer and stream readers emit the same rows and lines and end
//     with the same status;
//   - every row fits its schema (the key's columns when keys only), lines
//     rise strictly and lie within the text;
//   - kFail: a refused text is InvalidArgument naming a line within it;
//   - kRescue: nothing is refused but a malformed CSV header; a rescued row's
//     rescue column is a JSON object naming the source;
//   - ParseJsonRecord of the whole text agrees with the policy likewise;
//   - a RecordParser reads the text as ReadRecords does, and on the whole
//     text and on each line its fast path for flat objects, whenever it
//     takes one, gives what the reference reading gives, as does ParseJson.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "records_internal.h"
#include "spool/stream/records.h"

namespace {

using spool::ColumnType;
using spool::Row;
using spool::Schema;
using spool::Status;

constexpr std::string_view kSource = "src";

void Check(bool ok, const char* what, std::string_view text) {
  if (!ok) {
    std::fprintf(stderr, "records_fuzzer: invariant violated: %s\ninput: %.*s\n", what, static_cast<int>(text.size()),
                 text.data());
    std::abort();
  }
}

// Every type. kFail: a NOT NULL key of two columns; kRescue: all nullable,
// and the rescue column.
Schema MakeSchema(bool rescuing) {
  std::vector<spool::Column> columns = {{"id", ColumnType::kInt64, rescuing},    {"s", ColumnType::kString, true},
                                        {"d", ColumnType::kDouble, true},        {"b", ColumnType::kBool, true},
                                        {"t", ColumnType::kTimestamp, rescuing}, {"x", ColumnType::kBytes, true}};
  if (rescuing) columns.push_back({"_rescued_data", ColumnType::kString, true});
  Schema schema;
  const std::vector<std::string> key = rescuing ? std::vector<std::string>{} : std::vector<std::string>{"id", "t"};
  if (!Schema::Make(std::move(columns), key, &schema).ok()) std::abort();
  return schema;
}

// Equal, NaN to NaN too.
bool SameRow(const Row& a, const Row& b) {
  const auto same = [](const spool::Value& x, const spool::Value& y) {
    const double* dx = std::get_if<double>(&x);
    const double* dy = std::get_if<double>(&y);
    return dx != nullptr && dy != nullptr && std::isnan(*dx) ? std::isnan(*dy) : x == y;
  };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same);
}

bool SameRows(const std::vector<Row>& a, const std::vector<Row>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), SameRow);
}

struct Outcome {
  Status status;
  std::vector<Row> rows;
  std::vector<uint64_t> lines;
};

spool::RecordSink Collect(Outcome* outcome) {
  return [outcome](Row&& row, uint64_t line) {
    outcome->rows.push_back(std::move(row));
    outcome->lines.push_back(line);
    return Status::OK();
  };
}

// "src line N: …" with N within the text.
void CheckErrorLine(const Status& s, uint64_t line_count, std::string_view text) {
  Check(s.IsInvalidArgument(), "an error that is not InvalidArgument", text);
  const std::string_view message = s.message();
  Check(message.starts_with("src line "), "an error without its line", text);
  const uint64_t line = std::strtoull(std::string(message.substr(9)).c_str(), nullptr, 10);
  Check(line >= 1 && line <= line_count, "an error naming a line outside the text", text);
}

void CheckRow(const Row& row, const spool::RecordOptions& options, const Schema& schema, std::string_view text) {
  if (options.keys_only) {
    Check(row.size() == schema.key_columns().size(), "a key of the wrong width", text);
    for (size_t i = 0; i < row.size(); ++i) {
      const spool::Column& column = schema.columns()[schema.key_columns()[i]];
      Check(!spool::IsNull(row[i]) && spool::TypeOf(row[i]) == column.type, "a key value of the wrong type", text);
    }
    return;
  }
  Check(schema.Validate(row).ok(), "a row that does not fit the schema", text);
  if (options.bad_records != spool::BadRecordPolicy::kRescue || spool::IsNull(row.back())) return;
  const auto rescued = nlohmann::json::parse(std::get<std::string>(row.back()), nullptr, false);
  Check(rescued.is_object() && !rescued.empty(), "rescued data that is not an object", text);
  Check(rescued.value("_file_path", "") == kSource, "rescued data without its source", text);
}

// ParseJson gives what the reference reading gives; so does the fast path
// when it takes `text`.
void CheckFastPath(const spool::RecordParser& parser, std::string_view text) {
  Row reference_row;
  const Status reference = ParseJsonReferenceOnly(parser, text, &reference_row);
  Row row;
  const Status combined = parser.ParseJson(text, &row);
  Check(combined.ToString() == reference.ToString() && (!combined.ok() || SameRow(row, reference_row)),
        "ParseJson reads otherwise than the reference", text);
  const std::optional<Status> fast = ParseFlatJsonOnly(parser, text, &row);
  if (!fast.has_value()) return;
  Check(fast->ToString() == reference.ToString() && (!fast->ok() || SameRow(row, reference_row)),
        "the fast path reads otherwise than the reference", text);
}

void CheckParser(const Schema& schema, const spool::RecordOptions& options, std::string_view text,
                 const Outcome& buffered) {
  std::unique_ptr<const spool::RecordParser> parser;
  const Status made = spool::RecordParser::Make(schema, options, &parser);
  Check(made.ok(), "a parser refused options ReadRecords took", text);
  Outcome read;
  read.status = parser->Read(text, kSource, Collect(&read));
  Check(read.status.ToString() == buffered.status.ToString() && SameRows(read.rows, buffered.rows) &&
            read.lines == buffered.lines,
        "RecordParser::Read reads otherwise than ReadRecords", text);
  CheckFastPath(*parser, text);
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    CheckFastPath(*parser, text.substr(pos, end - pos));
    pos = end + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  spool::RecordOptions options;
  options.format = (flags & 1) != 0 ? spool::RecordFormat::kCsv : spool::RecordFormat::kJsonLines;
  options.bad_records = (flags & 2) != 0 ? spool::BadRecordPolicy::kRescue : spool::BadRecordPolicy::kFail;
  options.keys_only = (flags & 6) == 4;
  options.source_name = kSource;
  const bool rescue = options.bad_records == spool::BadRecordPolicy::kRescue;
  static const Schema strict = MakeSchema(false), rescuing = MakeSchema(true);
  const Schema& schema = rescue ? rescuing : strict;

  Outcome buffered, streamed;
  buffered.status = spool::ReadRecords(text, schema, options, Collect(&buffered));
  std::istringstream in{std::string(text)};
  streamed.status = spool::ReadRecords(in, schema, options, Collect(&streamed));
  Check(buffered.status.ToString() == streamed.status.ToString(), "the stream reader ends otherwise", text);
  Check(SameRows(buffered.rows, streamed.rows) && buffered.lines == streamed.lines, "the stream reader emits otherwise",
        text);

  // At most: CSV ends a line at a lone '\r' too.
  const uint64_t line_count = 1 + static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n') +
                                                        std::count(text.begin(), text.end(), '\r'));
  for (size_t i = 0; i < buffered.rows.size(); ++i) {
    CheckRow(buffered.rows[i], options, schema, text);
    Check(buffered.lines[i] >= 1 && buffered.lines[i] <= line_count, "a row's line outside the text", text);
    Check(i == 0 || buffered.lines[i] > buffered.lines[i - 1], "lines that do not rise", text);
  }
  if (!buffered.status.ok()) {
    CheckErrorLine(buffered.status, line_count, text);
    Check(!rescue || (options.format == spool::RecordFormat::kCsv && buffered.rows.empty() &&
                      buffered.status.message().find("malformed CSV") != std::string_view::npos),
          "kRescue refused something other than a CSV header", text);
  }

  Row row;
  const Status one = spool::ParseJsonRecord(text, schema, options, &row);
  Check(one.ok() || (!rescue && one.IsInvalidArgument() && one.message().starts_with("src: ")),
        "ParseJsonRecord failed otherwise than InvalidArgument \"src: …\" under kFail", text);
  if (one.ok()) CheckRow(row, options, schema, text);
  CheckParser(schema, options, text, buffered);
  return 0;
}
