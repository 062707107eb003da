// LEB128 varints, as row encodings and snapshot blocks write lengths, and
// big-endian fixed64s, which sort like the numbers in state keys.
// Internal to storage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spool {

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads a varint from the front of `*in`; false when it is truncated or
// longer than ten bytes.
inline bool GetVarint(std::string_view* in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

inline void PutBigEndian64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

// REQUIRES: in.size() >= 8; reads the first eight bytes.
inline uint64_t GetBigEndian64(std::string_view in) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = v << 8 | static_cast<uint8_t>(in[i]);
  return v;
}

}  // namespace spool
