// A checked parse of a whole number, for stored data and specs: the text is
// one number of T as std::from_chars reads it — no sign on an unsigned, no
// spaces, nothing after it, not empty — or the parse fails. Never throws
// (std::stoull and friends do, and accept "12abc").
#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

namespace spool {

template <typename T>
bool ParseWhole(std::string_view text, T* out) {
  const char* end = text.data() + text.size();
  const auto [last, error] = std::from_chars(text.data(), end, *out);
  return !text.empty() && error == std::errc() && last == end;
}

}  // namespace spool
