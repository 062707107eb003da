// The string and byte fields of a verified FlatBuffers table, read into
// std::string. Internal to storage.
#pragma once

#include <cstdint>
#include <string>

#include <flatbuffers/flatbuffers.h>

namespace spool {

// A field left out reads as empty.
inline std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }
inline std::string Str(const flatbuffers::Vector<uint8_t>* v) {
  return v != nullptr ? std::string(reinterpret_cast<const char*>(v->data()), v->size()) : std::string();
}

}  // namespace spool
