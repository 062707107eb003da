// Rows as a person reads them: the value text and the row printer of
// `spool read` and `spool changes`. The value formats, and the reading of
// records for `spool write`, are the stream library's
// (spool/stream/records.h).
//
// Thread-safety: plain functions and values; a RowPrinter is used by one
// thread.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "spool/storage/schema.h"

namespace spool::cli {

class Table;

// A value as text: the CSV and table form, with "NULL" for null (the table
// form; CSV writes null as an empty field itself).
std::string ValueText(const Value& value);

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
