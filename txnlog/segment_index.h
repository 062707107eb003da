// Segment index files ("NNN.idx"): the sparse index of a sealed segment,
// saved when the segment is sealed so that finding a version or a timestamp
// in it after a reopen needs no scan. Derived data: written without a sync,
// checked on load, rebuilt by a scan when missing, stale or damaged.
// Internal to txnlog.
//
// index_file := magic:u64 = "SPOOLIDX"  format_version:u32 = 1  entry_count:u32
//               store_id:u64  segment_number:u64  first_version:u64
//               data_end:u64  entry*  checksum:u64
// entry      := version:u64  timestamp_us:u64  offset:u64
// checksum   := XXH3(store_id, everything before it)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "log_format.h"
#include "log_impl.h"

namespace spool {

inline constexpr std::string_view kIndexSuffix = ".idx";

// What an index file must match to be used: the segment it indexes and the
// end of that segment's data.
struct IndexIdentity {
  uint64_t store_id = 0;
  uint64_t segment_number = 0;
  uint64_t first_version = 0;
  uint64_t data_end = 0;
};

std::string EncodeIndexFile(const IndexIdentity& identity, const std::vector<IndexEntry>& entries);

// Errors: Corruption saying what does not match.
Status DecodeIndexFile(std::string_view bytes, const IndexIdentity& identity, std::vector<IndexEntry>* entries);

// "000000000042.idx"
std::string IndexFileName(uint64_t segment_number);

}  // namespace spool
