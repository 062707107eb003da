// TextTable: a plain-text table whose columns are padded to fit. By default
// the first column is left-aligned and the others right-aligned (numbers);
// `align` overrides it, one letter per column: 'l' or 'r'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spool::bench {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::string align = {})
      : header_(std::move(header)), align_(std::move(align)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string ToString() const;

 private:
  bool LeftAligned(size_t column) const { return column < align_.size() ? align_[column] == 'l' : column == 0; }

  std::vector<std::string> header_;
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

// "3,214" for 0 decimals, "0.91" for 2; "n/a" for NaN.
std::string FormatNumber(double value, int decimals);

// How many decimals a time in seconds is shown with (a tenth of a ms).
inline constexpr int kSecondsDecimals = 4;

// A ratio under a report's table: "  <label>: <value, 2 decimals><target>\n".
std::string RatioLine(std::string_view label, double value, std::string_view target);

}  // namespace spool::bench
