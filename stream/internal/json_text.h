// JSON text that never throws on bytes that are not UTF-8.
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

#include <string>

namespace spool {

template <typename Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace spool
