// RecordScanner: reads the records of one segment in order, checking each
// one's checksum, epoch and version. Shared by recovery, iterators, index
// building and verification. Internal to txnlog. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "log_format.h"
#include "spool/txnlog/env.h"

namespace spool {

class RecordScanner {
 public:
  // Scans `file` from `offset` up to `limit` (exclusive) expecting records
  // of `epoch` numbered from `next_version`. `*file` must outlive the scanner.
  RecordScanner(File* file, uint64_t store_id, uint64_t epoch, uint64_t offset, uint64_t limit, uint64_t next_version);

  // Reads the next record. Returns false at `limit`, at the first record
  // that is not valid (see stop()), or on an I/O error (see status()). The
  // payload view is valid until the next call.
  bool Next(logfmt::RecordHeader* header, std::string_view* payload);

  // Offset of the record Next returned last.
  uint64_t record_offset() const { return record_offset_; }
  // End of the last valid record (where the scan stopped).
  uint64_t offset() const { return offset_; }
  uint64_t next_version() const { return next_version_; }
  // kValid when the scan reached `limit`; otherwise why it stopped.
  logfmt::RecordCheck stop() const { return stop_; }
  const Status& status() const { return status_; }

 private:
  // Makes buf_ hold [offset_, offset_ + n) or as much of it as exists
  // before limit_. Returns the bytes available from offset_.
  std::string_view Fill(uint64_t n);

  File* file_;
  uint64_t store_id_;
  uint64_t epoch_;
  uint64_t offset_;
  uint64_t limit_;
  uint64_t next_version_;
  uint64_t record_offset_ = 0;
  logfmt::RecordCheck stop_ = logfmt::RecordCheck::kValid;
  Status status_;
  std::string buf_;
  uint64_t buf_offset_ = 0;  // file offset of buf_[0]
  uint64_t read_bytes_;      // the next Fill's read, growing as the scan goes on
};

// After a record that is not valid at `bad_offset` of a segment being
// written, decides whether the rest of the segment is a torn tail (true) or
// proof of corruption (false): a later valid record of `epoch`, from a group
// that started after `bad_version` and was written after a sync, means the
// bad record had been durable. `tail` holds the file's bytes from
// `bad_offset` to its end.
bool IsTornTail(std::string_view tail, uint64_t store_id, uint64_t epoch, uint64_t bad_version);

}  // namespace spool
