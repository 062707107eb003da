// A history run: what one commit changed in one table, as the history
// index keeps it (StateHistoryKey; docs/storage_format.md). Internal to
// storage.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"
#include "varint.h"

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
// Reads the pair at the front of `*run`; false when it is cut short.
inline bool ParseHistoryEntry(std::string_view* run, std::string_view* key, std::string_view* value) {
  uint64_t key_bytes = 0, value_bytes = 0;
  if (!GetVarint(run, &key_bytes) || key_bytes > run->size()) return false;
  *key = run->substr(0, key_bytes);
  run->remove_prefix(key_bytes);
  if (!GetVarint(run, &value_bytes) || value_bytes > run->size()) return false;
  *value = run->substr(0, value_bytes);
  run->remove_prefix(value_bytes);
  return true;
}
// As ParseHistoryEntry. Errors: Corruption (truncated).
Status NextHistoryEntry(std::string_view* run, std::string_view* key, std::string_view* value);

// The value stored for `run`: compressed, or `run` itself.
std::string SealHistoryRun(std::string run);
// Memory that runs decompress into, unzeroed, mapped (with huge pages
// asked for past kHugePageBytes; advice only).
class RunBuffer {
 public:
  // `bytes` rounded up to a power of two (at least 64 KiB), so a buffer
  // serves the next reads of about the same size. Errors: IOError (out of
  // memory).
  static Status Map(size_t bytes, std::unique_ptr<RunBuffer>* buffer);
  RunBuffer(const RunBuffer&) = delete;
  RunBuffer& operator=(const RunBuffer&) = delete;
  ~RunBuffer();

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kHugePageBytes = 32 << 20;
  RunBuffer(char* data, size_t size) : data_(data), size_(size) {}
  char* data_;
  size_t size_;
};

// One RunBuffer kept between reads. A read's runs take a buffer of their
// size; fresh memory is faulted in a page at a time, which on this VM
// cost more than decompressing into it (at W5's 100,000 rows, a sixth of
// the as-of read's time on its thread; at a million rows, with 65 MB of
// runs, a fifth of a 0.45 s read). Thread-safe: a read that finds the
// kept buffer taken or too small maps its own.
class RunMemory {
 public:
  // A buffer of at least `bytes`. Errors: IOError (out of memory).
  Status Take(size_t bytes, std::unique_ptr<RunBuffer>* buffer);
  // Done with `buffer`: kept if it is no more than kKeepBytes and larger
  // than the one kept.
  void Give(std::unique_ptr<RunBuffer> buffer);

 private:
  static constexpr size_t kKeepBytes = size_t{256} << 20;
  std::mutex mu_;
  std::unique_ptr<RunBuffer> kept_;  // guarded by mu_
};

// The runs of one read, checked: compressed ones decompressed into one
// buffer that lives as long as this (on two threads when there is much of
// it), plain ones read in place.
class OpenedRuns {
 public:
  // `memory`: where the buffer comes from and goes back to (outlives this).
  explicit OpenedRuns(RunMemory* memory) : memory_(memory) {}
  OpenedRuns(const OpenedRuns&) = delete;
  OpenedRuns& operator=(const OpenedRuns&) = delete;
  ~OpenedRuns();
  // Replaces each stored value in `*runs` with the run it holds, and checks
  // every run: each entry whole, the keys ascending. Once per object.
  // Errors: Corruption (a compressed run that does not decompress to its
  // stated length, a truncated entry, keys out of order), IOError (no
  // memory for them), the runs then unchanged.
  Status Open(std::vector<std::string_view>* runs);
  // After Open: how many leading bytes every key of every run shares.
  size_t shared_prefix() const { return shared_prefix_; }

 private:
  static constexpr size_t kTwoThreadBytes = 1 << 20;
  RunMemory* memory_;
  std::unique_ptr<RunBuffer> bytes_;
  size_t shared_prefix_ = 0;
};

}  // namespace spool
