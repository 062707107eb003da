#include "record_scanner.h"

#include <algorithm>
#include <cassert>

namespace spool {
namespace {
// A scan reads a small chunk first (many read one record: a topic's bound,
// a version's commit) and doubles its reads up to the largest.
constexpr uint64_t kFirstReadBytes = 16ull << 10;
constexpr uint64_t kMaxReadBytes = 256ull << 10;
}  // namespace

RecordScanner::RecordScanner(File* file, uint64_t store_id, uint64_t epoch, uint64_t offset, uint64_t limit,
                             uint64_t next_version)
    : file_(file),
      store_id_(store_id),
      epoch_(epoch),
      offset_(offset),
      limit_(limit),
      next_version_(next_version),
      read_bytes_(kFirstReadBytes) {}

std::string_view RecordScanner::Fill(uint64_t n) {
  const uint64_t want_end = std::min(offset_ + n, limit_);
  const uint64_t have_end = buf_offset_ + buf_.size();
  if (offset_ >= buf_offset_ && want_end <= have_end) {
    return std::string_view(buf_).substr(offset_ - buf_offset_, want_end - offset_);
  }
  const uint64_t read_bytes = std::min(std::max(want_end - offset_, read_bytes_), limit_ - offset_);
  read_bytes_ = std::min(read_bytes_ * 2, kMaxReadBytes);
  Status s = file_->Read(offset_, static_cast<size_t>(read_bytes), &buf_);
  buf_offset_ = offset_;
  if (!s.ok()) {
    status_ = s;
    buf_.clear();
    return {};
  }
  return std::string_view(buf_).substr(0, std::min<uint64_t>(buf_.size(), want_end - offset_));
}

bool RecordScanner::Next(logfmt::RecordHeader* header, std::string_view* payload) {
  if (!status_.ok() || stop_ != logfmt::RecordCheck::kValid || offset_ >= limit_) return false;
  std::string_view bytes = Fill(logfmt::kRecordHeaderBytes);
  if (!status_.ok()) return false;
  logfmt::RecordCheck check = logfmt::DecodeRecord(store_id_, bytes, header);
  if (check == logfmt::RecordCheck::kShort && bytes.size() == logfmt::kRecordHeaderBytes) {
    bytes = Fill(logfmt::RecordBytes(header->payload_length));
    if (!status_.ok()) return false;
    check = logfmt::DecodeRecord(store_id_, bytes, header);
  }
  if (check == logfmt::RecordCheck::kValid && (header->epoch != epoch_ || header->version != next_version_)) {
    check = logfmt::RecordCheck::kUnexpected;
  }
  if (check != logfmt::RecordCheck::kValid) {
    stop_ = check;
    return false;
  }
  record_offset_ = offset_;
  *payload = bytes.substr(logfmt::kRecordHeaderBytes, header->payload_length);
  offset_ += logfmt::RecordBytes(header->payload_length);
  ++next_version_;
  return true;
}

bool IsTornTail(std::string_view tail, uint64_t store_id, uint64_t epoch, uint64_t bad_version) {
  // Records start at aligned offsets past the bad one (`tail` starts at one).
  for (size_t i = logfmt::kRecordAlignment; i + logfmt::kRecordHeaderBytes <= tail.size();
       i += logfmt::kRecordAlignment) {
    const char* p = tail.data() + i;
    // Cheap filters before the checksum: the epoch and a plausible version.
    if (logfmt::LoadFixed64(p + 16) != epoch) continue;
    const uint64_t version = logfmt::LoadFixed64(p + 24);
    if (version <= bad_version || version - bad_version > (1ull << 40)) continue;
    logfmt::RecordHeader header;
    if (logfmt::DecodeRecord(store_id, tail.substr(i), &header) != logfmt::RecordCheck::kValid) continue;
    if ((header.flags & logfmt::kFlagAfterSync) != 0 && header.group_first_version() > bad_version) return false;
  }
  return true;
}

}  // namespace spool
