// LEB128 varints, as row encodings and snapshot blocks write lengths;
// big-endian fixed64s, which sort like the numbers in state keys; and the
// byte order of keys, compared eight bytes a step.
// Internal to storage.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace spool {

// Writes `v` at `out`, which has room for VarintLength(v) <= 10 bytes;
// returns the byte after it.
inline uint8_t* EncodeVarint(uint8_t* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

// Each writer encodes into a local buffer and appends it once: a
// push_back per byte checks the capacity and writes a terminator each time.
inline void PutVarint(std::string* out, uint64_t v) {
  uint8_t bytes[10];
  const uint8_t* end = EncodeVarint(bytes, v);
  out->append(reinterpret_cast<const char*>(bytes), static_cast<size_t>(end - bytes));
}

// The bytes PutVarint writes for `v`.
inline size_t VarintLength(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
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
  char bytes[8];
  for (size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((v >> (56 - 8 * i)) & 0xff);
  out->append(bytes, sizeof bytes);
}

// REQUIRES: in.size() >= 8; reads the first eight bytes.
inline uint64_t GetBigEndian64(std::string_view in) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = v << 8 | static_cast<uint8_t>(in[i]);
  return v;
}

// Byte order of two keys, as string_view::compare, but eight bytes a step
// and inline: scans compare keys sharing long prefixes 100,000s of times.
[[gnu::always_inline]] inline int CompareBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x = 0, y = 0;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  }
  for (; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<uint8_t>(a[i]) < static_cast<uint8_t>(b[i]) ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

}  // namespace spool
