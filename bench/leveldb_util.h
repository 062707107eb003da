// What the LevelDB engines share (leveldb_engine.cc, versioned_leveldb.cc):
// errors as Status and bytes in and out of leveldb::Slice.
#pragma once

#include <string_view>

#include <leveldb/slice.h>
#include <leveldb/status.h>

#include "engine_status.h"

namespace spool::bench {

inline Status FromLevel(const leveldb::Status& s, std::string_view what) { return FromEngineStatus(s, what); }

inline leveldb::Slice LevelSlice(std::string_view bytes) { return leveldb::Slice(bytes.data(), bytes.size()); }
inline std::string_view LevelView(const leveldb::Slice& s) { return std::string_view(s.data(), s.size()); }

}  // namespace spool::bench
