// Records as a person writes them: JSON lines and CSV parsed into rows of a
// Schema, one record at a time. Shared by `spool write` and the pipeline
// sources (docs/design.md): a directory of JSON-lines or CSV files, and a topic
// whose message values are JSON objects.
//
// Values, in every format:
//   int64      decimal digits, optional '-'
//   double     a decimal number; NaN, Infinity and -Infinity as those words
//   string     the text (JSON: a string)
//   bool       true or false (CSV: any case)
//   timestamp  "yyyy-MM-dd HH:mm:ss[.ffffff]" (UTC), or an integer of
//              microseconds since 1970-01-01 (JSON: a number or a string)
//   bytes      standard base64 with padding (RFC 4648 §4)
//   null       JSON null or an absent key; CSV an empty unquoted field
//              (an empty string is a quoted empty field: "")
//
// Input is JSON lines (one object per line, keys = column names; blank lines
// are skipped; a key given twice keeps its last value) or CSV (RFC 4180, a
// header line of column names first; quoted fields may hold commas, quotes
// as "" and line breaks; blank lines are skipped). Lines end with "\n" or
// "\r\n" (CSV: a lone "\r" too).
//
// Bad records (RecordOptions::bad_records):
//   kFail    The first record that does not fit stops the read with
//            InvalidArgument "<source> line <n>: <what>", naming the column
//            where there is one: malformed JSON or CSV, a line that is not
//            a JSON object, an unknown column, a value of the wrong type, a
//            missing or null value of a NOT NULL column, a CSV record with
//            the wrong number of fields; JSON nested deeper than 256 levels
//            or holding more than 4,096 keys (limits that keep a hostile
//            line from exhausting the stack or taking quadratic time).
//   kRescue  A record that does not fit is still a row: the columns that
//            parsed hold their values, the others null, and the rescue
//            column holds a JSON object of what did not fit, as Databricks'
//            rescued data column does:
//              {"<column or unknown field>": <its value>, ...,
//               "_corrupt_record": "<the raw line>", "_file_path": "<source>"}
//            A field's value is the JSON value as given (JSON lines) or its
//            text as a string (CSV); a null unknown field is dropped, having
//            nothing to rescue. `_corrupt_record` stands for a line that is
//            not a JSON object at all, CSV that cannot be split (the
//            record's first line; reading goes on at the next line) and a
//            CSV record with the wrong number of fields (all of its text).
//            Unknown fields (JSON keys, CSV header names that are not
//            columns or repeat one) are rescued, not errors; a field named
//            like the rescue column is an unknown field. Good records have
//            null in the rescue column. Text that is not valid UTF-8 is
//            rescued with U+FFFD in its place; an unknown field named
//            `_file_path` is overwritten by the source.
//            Requirements, refused with InvalidArgument before any record is
//            read: the schema has the rescue column as a nullable string;
//            every other column is nullable (a record whose NOT NULL value
//            does not parse could not be a row); keys_only is off.
//            A malformed CSV header is still an error: without it no field
//            has a column.
//
// Thread-safety: plain functions and values, and RecordParser, whose const
// methods may be called from any threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/schema.h"
#include "spool/txnlog/status.h"

namespace spool {

// A timestamp "yyyy-MM-dd HH:mm:ss[.ffffff]" (UTC; 'T' may stand for the
// space) or an integer of microseconds. Errors: InvalidArgument.
// (FormatTimestampMicros, in spool/storage/schema.h, shows one.)
Status ParseTimestamp(std::string_view text, int64_t* micros);

// A whole number and a unit, optionally with spaces between, to
// microseconds: "250us", "500ms", "90s", "15m", "36h", "7d", or the unit as a
// word, singular or plural, in any case: "250 microseconds", "500
// milliseconds", "1 second", "10 minutes", "1 hour", "2 days". Errors:
// InvalidArgument "duration '…' must be a number and a unit: …" (also when
// the result does not fit an int64).
Status ParseDuration(std::string_view text, uint64_t* micros);

std::string EncodeBase64(std::string_view bytes);
// Errors: InvalidArgument (a character outside the alphabet, bad padding).
Status DecodeBase64(std::string_view text, std::string* bytes);

enum class RecordFormat { kJsonLines, kCsv };
enum class BadRecordPolicy { kFail, kRescue };

struct RecordOptions {
  RecordFormat format = RecordFormat::kJsonLines;
  // Each row is the values of the key columns in key order (the records of
  // a delete); other known columns are read over but not converted.
  bool keys_only = false;
  BadRecordPolicy bad_records = BadRecordPolicy::kFail;
  // kRescue: a nullable string column of the schema.
  std::string rescue_column = "_rescued_data";
  // The file path or topic name, in errors and in rescued data.
  std::string source_name;
  // Columns every row leaves NULL, by index in the schema (empty: none):
  // a record's values for them are still checked, so that a record is bad
  // or good as without this, but not kept, sparing their conversion (a
  // pipeline source whose flow reads no such column). Not the rescue
  // column, nor with keys_only.
  std::vector<bool> leave_null;
};

// Receives one row and the line its record starts on (from 1). A status
// that is not OK stops the read and is returned as it is.
using RecordSink = std::function<Status(Row&& row, uint64_t line)>;

// Parses every record of `data` (a file read whole), calling `emit` for each
// in order. Errors: InvalidArgument (the options do not fit the schema; with
// kFail, the first bad record, named as described above), or what `emit`
// returned. Rows emitted before an error stay emitted.
Status ReadRecords(std::string_view data, const Schema& schema, const RecordOptions& options, const RecordSink& emit);

// The longest line of JSON lines (a record) a stream may hold: a longer one
// is refused, read no further, rather than buffered without bound (an
// input without newlines, such as /dev/zero, is one endless line).
inline constexpr size_t kMaxRecordLineBytes = 16 << 20;

// Reads a line of `in` without its '\n' into `*line`, at most `max` bytes;
// false at the end of the input. `*too_long`: the line goes on past `max`
// (what follows is not read).
bool ReadBoundedLine(std::istream& in, size_t max, std::string* line, bool* too_long);

// As above, reading `in` to its end (JSON lines a line at a time). Errors:
// as above, and InvalidArgument for a line over kMaxRecordLineBytes;
// IOError "<source>: read failed".
Status ReadRecords(std::istream& in, const Schema& schema, const RecordOptions& options, const RecordSink& emit);

// One JSON object (a topic message's value) to `*row`, whatever
// options.format says. Errors name no line: "<source>: column 'c': …".
// Errors: InvalidArgument (the options do not fit the schema; with kFail,
// the record does not fit). A caller with many records keeps a
// RecordParser instead, which checks the options once.
Status ParseJsonRecord(std::string_view text, const Schema& schema, const RecordOptions& options, Row* row);

// Reads records of one schema and options, checked once when it is made, so
// that each record costs only its parsing: what a pipeline source keeps for
// every record it reads. Its results are those of the functions above.
//
// A JSON object is read by a fast path when it is flat (scalars only) and
// its keys are distinct column names; anything else, and every record that
// does not fit, is read again by the reference reading, which gives the
// errors and the rescued data. Both give the same rows.
//
// Thread-safety: the methods are const and may be called from any threads
// at once. Lifetimes: the parser keeps copies of the schema and options.
class RecordParser {
 public:
  // Errors: InvalidArgument (the options do not fit the schema).
  static Status Make(const Schema& schema, const RecordOptions& options, std::unique_ptr<const RecordParser>* parser);

  virtual ~RecordParser() = default;

  // As ParseJsonRecord with this parser's schema and options. Errors:
  // InvalidArgument (with kFail, the record does not fit).
  virtual Status ParseJson(std::string_view text, Row* row) const = 0;

  // As ReadRecords of `data`, with `source_name` in place of
  // options.source_name (a files source names each file). Errors: as
  // ReadRecords'.
  virtual Status Read(std::string_view data, std::string_view source_name, const RecordSink& emit) const = 0;
};

}  // namespace spool
