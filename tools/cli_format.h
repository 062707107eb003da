// Small formatting helpers shared by the spool CLI's commands.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "count_format.h"  // FormatCount

namespace spool::cli {

// "2026-11-29 15:31:02.123456" (UTC).
std::string FormatTimestamp(uint64_t timestamp_us);
// "1.5 MiB"
std::string FormatBytes(uint64_t bytes);
// Printable preview of bytes: text as is, others as \xNN, cut at `max`.
std::string Preview(std::string_view bytes, size_t max);

// A plain text table: a header row, then rows; columns padded to fit.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Aligned columns. On a terminal the table fits its width (80 columns when
  // it is not known): the widest columns are cut, ending in "…". Elsewhere
  // (a pipe, a file) nothing is cut.
  std::string ToString() const;
  // The same fitted to `max_width` columns (0: no limit).
  std::string ToString(size_t max_width) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace spool::cli
