#include "count_format.h"

namespace spool::cli {

std::string GroupThousands(std::string_view digits) {
  const size_t sign = digits.starts_with('-') ? 1 : 0;
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatCount(uint64_t n) { return GroupThousands(std::to_string(n)); }

}  // namespace spool::cli
