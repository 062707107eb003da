#include "cli_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <iostream>

#include "commands.h"
#include "row_format.h"

namespace spool::cli {

std::string FormatTimestamp(uint64_t timestamp_us) { return FormatTimestampMicros(static_cast<int64_t>(timestamp_us)); }

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string Preview(std::string_view bytes, size_t max) {
  std::string out;
  for (char c : bytes.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out.push_back(c);
    } else {
      out += fmt::format("\\x{:02x}", u);
    }
  }
  if (bytes.size() > max) out += "…";
  return out;
}

std::string Table::ToString() const {
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto render = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    return line + "\n";
  };
  std::string out = render(header_);
  size_t total = 0;
  for (size_t w : widths) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& row : rows_) out += render(row);
  return out;
}

int ReportError(const Status& s) {
  std::cerr << "spool: " << s.ToString() << "\n";
  return s.IsCorruption() ? kExitFailure : kExitError;
}

}  // namespace spool::cli
