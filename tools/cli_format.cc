#include "cli_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "row_format.h"

namespace spool::cli {

std::string FormatTimestamp(uint64_t timestamp_us) { return FormatTimestampMicros(static_cast<int64_t>(timestamp_us)); }

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

namespace {

// Columns a UTF-8 string takes (one per code point).
size_t DisplayWidth(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// `s` cut to `width` columns, "…" last when cut.
std::string Cut(const std::string& s, size_t width) {
  if (DisplayWidth(s) <= width) return s;
  std::string out;
  size_t columns = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool starts = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts && ++columns > width - 1) break;
    out += s[i];
  }
  return out + "…";
}

// The terminal's width when stdout is one (80 if it does not say), else 0.
size_t TerminalWidth() {
  if (::isatty(STDOUT_FILENO) != 1) return 0;
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

std::string Table::ToString() const { return ToString(TerminalWidth()); }

std::string Table::ToString(size_t max_width) const {
  constexpr size_t kGap = 2, kNarrowest = 6;
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto total = [&] {
    size_t sum = 0;
    for (size_t w : widths) sum += w + kGap;
    return sum > kGap ? sum - kGap : 0;
  };
  // Narrow the widest column a column at a time until the table fits.
  while (max_width > 0 && total() > max_width) {
    auto widest = std::max_element(widths.begin(), widths.end());
    if (*widest <= kNarrowest) break;
    --*widest;
  }
  auto render = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string cell = i < widths.size() ? Cut(row[i], widths[i]) : row[i];
      line += cell;
      if (i + 1 < row.size()) line += std::string(widths[i] - DisplayWidth(cell) + kGap, ' ');
    }
    return line + "\n";
  };
  std::string out = render(header_);
  out += std::string(total(), '-') + "\n";
  for (const auto& row : rows_) out += render(row);
  return out;
}

int ReportError(const Status& s) {
  std::cerr << "spool: " << s.ToString() << "\n";
  return s.IsCorruption() ? kExitFailure : kExitError;
}

}  // namespace spool::cli
