// A history run: what one commit changed in one table, as the history
// index keeps it (StateHistoryKey; docs/storage_format.md). Internal to
// storage.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool {

// A run is (varint key bytes, key, varint value bytes, value)* in key
// order, each value a row's value (the version that wrote it, then the
// row). One of kCompressedRunMinBytes or more is stored LZ4-compressed when
// that saves an eighth: kCompressedRunTag, varint(run bytes), the LZ4
// block. A plain run never starts with that byte, since its first key is
// not empty (only keyless inserts have no key, and inserts make no entry).
inline constexpr char kCompressedRunTag = 0;
inline constexpr size_t kCompressedRunMinBytes = 4096;

// Appends one (key, value) pair of a run.
void AppendHistoryEntry(std::string* run, std::string_view key, uint64_t written, std::string_view row);
// Reads the pair at the front of `*run`. Errors: Corruption (truncated).
Status NextHistoryEntry(std::string_view* run, std::string_view* key, std::string_view* value);

// The value stored for `run`: compressed, or `run` itself.
std::string SealHistoryRun(std::string run);
// The runs of one read: compressed ones decompressed into one buffer that
// lives as long as this (on two threads when there is much of it), plain
// ones read in place.
class OpenedRuns {
 public:
  // Replaces each stored value in `*runs` with the run it holds; once per
  // object. Errors: Corruption (a compressed run that does not decompress
  // to its stated length), the runs then unchanged.
  Status Open(std::vector<std::string_view>* runs);

 private:
  static constexpr size_t kTwoThreadBytes = 1 << 20;
  std::unique_ptr<char[]> bytes_;
};

}  // namespace spool
