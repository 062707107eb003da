// JSON text that never throws on bytes that are not UTF-8, and the check
// of UTF-8 itself.
//
// What Spool writes as JSON may quote bytes from outside: a bad record in
// an error message, a topic message's value, a path in a request. nlohmann's
// dump() throws on invalid UTF-8 by default; JsonText replaces each bad
// byte with U+FFFD instead. A template, so that this header does not pull
// nlohmann-json into the files that include it: `Json` is
// nlohmann::json or nlohmann::ordered_json.
//
// Internal (not installed): stream/, rewind/ and tools/ use it
// (spool_stream_internal).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spool {

// Whether `bytes` is well-formed UTF-8 (what a JSON string, or SQL text,
// must be): no overlong forms, surrogates or code points past U+10FFFF.
inline bool IsUtf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > bytes.size()) return false;
    uint32_t code = n == 1 ? lead : lead & (0x7fu >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(bytes[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      code = code << 6 | (c & 0x3fu);
    }
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[n] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

template <typename Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace spool
