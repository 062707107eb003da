#include "text_table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "count_format.h"

namespace spool::bench {
namespace {

constexpr char kColumnGap[] = "  ";

// Display width: the en dash and the multiplication sign are one column
// wide but several UTF-8 bytes.
size_t Width(const std::string& text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u; }));
}

}  // namespace

std::string TextTable::ToString() const {
  std::vector<size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto render = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      const std::string pad(widths[i] - Width(row[i]), ' ');
      line += LeftAligned(i) ? row[i] + pad : pad + row[i];
      if (i + 1 < row.size()) line += kColumnGap;
    }
    return line + "\n";
  };
  std::string out = render(header_);
  for (const auto& row : rows_) out += render(row);
  return out;
}

std::string FormatNumber(double value, int decimals) {
  if (std::isnan(value)) return "n/a";
  if (decimals == 0) return cli::GroupThousands(fmt::format("{:.0f}", value));
  return fmt::format("{:.{}f}", value, decimals);
}

std::string RatioLine(std::string_view label, double value, std::string_view target) {
  return fmt::format("  {}: {}{}\n", label, FormatNumber(value, 2), target);
}

}  // namespace spool::bench
