// What the RocksDB engines share (rocksdb_engine.cc, versioned_rocksdb.cc):
// errors as Status and bytes in and out of rocksdb::Slice.
#pragma once

#include <string_view>

#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include "engine_status.h"

namespace spool::bench {

inline Status FromRocks(const rocksdb::Status& s, std::string_view what) { return FromEngineStatus(s, what); }

inline rocksdb::Slice RocksSlice(std::string_view bytes) { return rocksdb::Slice(bytes.data(), bytes.size()); }
inline std::string_view RocksView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

}  // namespace spool::bench
