// The records every engine is given: a 16-byte key and a 100-byte row-like
// value (docs/benchmarks.md), generated deterministically so that a child process
// and its parent agree on them and every engine sees the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spool::bench {

inline constexpr size_t kKeyBytes = 16;
inline constexpr size_t kValueBytes = 100;
inline constexpr size_t kRecordBytes = kKeyBytes + kValueBytes;

// One put of key -> value. Views into a RecordSet.
struct Record {
  std::string_view key;
  std::string_view value;
};

// SplitMix64: a fast, well-mixed hash; every field of a value is drawn from
// it, so a record (or a stream event) can be rebuilt from its coordinates.
uint64_t Mix(uint64_t x);

// Writes the key of record `index` of writer `stream` into `out`
// (kKeyBytes): keys are unique across streams and ascend within one.
void MakeKey(uint32_t stream, uint64_t index, char* out);
// Writes the value of that record into `out` (kValueBytes): a delimited row
// of ids, amounts, timestamps and labels, as a table of events would hold.
void MakeValue(uint32_t stream, uint64_t index, char* out);

// Records [first, first + count) of one stream, stored contiguously.
// Not copyable (the views point into it); movable (the bytes stay where
// they are, so the views stay valid).
class RecordSet {
 public:
  RecordSet(uint32_t stream, uint64_t first, size_t count);
  RecordSet(RecordSet&&) noexcept = default;
  RecordSet& operator=(RecordSet&&) noexcept = default;

  size_t size() const { return records_.size(); }
  const Record& operator[](size_t i) const { return records_[i]; }
  // `count` records from `begin`, clamped to the end.
  std::span<const Record> Slice(size_t begin, size_t count) const;
  // Key and value bytes, back to back, of every record.
  std::string_view bytes() const { return bytes_; }

 private:
  std::string bytes_;
  std::vector<Record> records_;
};

// `bytes` of rows (keys and values back to back) for the hash and
// compression measurements.
std::string MakeRows(size_t bytes);

}  // namespace spool::bench
