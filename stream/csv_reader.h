// Splits CSV text (RFC 4180) into records of fields, counting lines: a
// quoted field may hold commas, quotes written "" and line breaks. Fields are
// views of the text where they can be (every unquoted field, and a quoted one
// without a doubled quote), so a record costs no allocation once the
// reader's buffers have grown.
//
// Thread-safety: one thread. The text must outlive the reader and every
// CsvRecord it fills.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool {

struct CsvField {
  std::string_view raw;   // as written, without the enclosing quotes
  std::string unescaped;  // raw with "" made ", when `escaped`
  bool quoted = false;
  bool escaped = false;
  std::string_view text() const { return escaped ? std::string_view(unescaped) : raw; }
};

// One record; `fields` keeps its capacity (and each field's buffer) from
// record to record, only the first `size` are this record's.
struct CsvRecord {
  std::vector<CsvField> fields;
  size_t size = 0;
  uint64_t line = 0;     // where it starts, from 1
  std::string_view raw;  // its text, without the line break that ends it

  const CsvField& operator[](size_t i) const { return fields[i]; }
  // One unquoted empty field: a blank line.
  bool blank() const { return size == 1 && !fields[0].quoted && fields[0].raw.empty(); }
};

class CsvReader {
 public:
  explicit CsvReader(std::string_view data) : data_(data) {}

  // Reads the next record into `*record`; `*got` false at the end. Errors:
  // InvalidArgument "malformed CSV: …" (a quote inside an unquoted field,
  // text after a closing quote, a quoted field never closed), found on line
  // error_line(); the reader then stays at that record until SkipBadRecord.
  Status Next(CsvRecord* record, bool* got);
  uint64_t error_line() const { return error_line_; }

  // After Next failed: returns the first line of the record it was reading
  // (without its line break) and goes on from the line after it.
  std::string_view SkipBadRecord();

 private:
  Status ReadField(CsvField* field);
  Status ReadQuoted(CsvField* field);
  Status Error(uint64_t line, std::string_view what);

  std::string_view data_;
  size_t pos_ = 0;
  uint64_t line_ = 1;
  size_t record_pos_ = 0;  // where the record Next last began starts
  uint64_t record_line_ = 1;
  uint64_t error_line_ = 0;
};

}  // namespace spool
