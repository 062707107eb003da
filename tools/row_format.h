// Rows as a person types and reads them: the value formats shared by
// `spool write`, `spool read` and `spool changes`.
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
// are skipped) or CSV (RFC 4180, a header line of column names first; quoted
// fields may hold commas, quotes as "" and line breaks).
//
// Thread-safety: plain functions and values; a RowPrinter is used by one
// thread.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/schema.h"

namespace spool::cli {

class Table;

// A timestamp "yyyy-MM-dd HH:mm:ss[.ffffff]" (UTC; 'T' may stand for the
// space) or an integer of microseconds. Errors: InvalidArgument.
Status ParseTimestamp(std::string_view text, int64_t* micros);
// (FormatTimestampMicros, in spool/storage/schema.h, shows one.)

// "90s", "15m", "36h", "7d" -> microseconds. Errors: InvalidArgument.
Status ParseDuration(std::string_view text, uint64_t* micros);

std::string EncodeBase64(std::string_view bytes);
// Errors: InvalidArgument (a character outside the alphabet, bad padding).
Status DecodeBase64(std::string_view text, std::string* bytes);

// A value as text: the CSV and table form, with "NULL" for null (the table
// form; CSV writes null as an empty field itself).
std::string ValueText(const Value& value);

enum class RecordFormat { kJsonLines, kCsv };

// Reads every record of `in` and converts each to a row of `schema` (with
// `keys_only`: the values of the key columns in key order, other known
// columns ignored). All or nothing: an error names `source_name`, the line
// and the column, and `*rows` is then unspecified. Errors: InvalidArgument
// (malformed input, unknown or missing column, wrong type), IOError.
Status ReadRecords(std::istream& in, std::string_view source_name, RecordFormat format, const Schema& schema,
                   bool keys_only, std::vector<Row>* rows);

enum class OutputFormat { kTable, kJsonLines, kCsv };

// Prints rows with the given column names: an aligned text table (on
// Finish), JSON lines (one object per row, keys = column names) or CSV with
// a header line. `*out` must outlive the printer.
class RowPrinter {
 public:
  RowPrinter(OutputFormat format, std::vector<std::string> columns, std::ostream* out);
  ~RowPrinter();
  RowPrinter(const RowPrinter&) = delete;
  RowPrinter& operator=(const RowPrinter&) = delete;

  // REQUIRES: values.size() == the number of columns.
  void Add(const Row& values);
  // Prints what is buffered (the text table). Call once, after the rows.
  void Finish();
  uint64_t rows() const { return rows_; }

 private:
  OutputFormat format_;
  size_t columns_;
  std::vector<std::string> names_;  // JSON keys
  std::ostream* out_;
  std::unique_ptr<Table> table_;  // kTable only
  uint64_t rows_ = 0;
};

}  // namespace spool::cli
