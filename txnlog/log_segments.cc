// Segment files: creating them durably, rolling, and zero-filling ahead.
#include <algorithm>
#include <cassert>

#include "kill_point.h"
#include "log_impl.h"
#include "segment_index.h"

namespace spool {
namespace {
constexpr uint64_t kZeroChunkBytes = 1ull << 20;
constexpr uint64_t kPageBytes = 4096;
// Groups this large are written without zero-filling ahead: their data, not
// the file-size update, dominates their sync, and zero-filling would write
// the log twice. (Measured on W3's ~25 KiB compressed groups: growing the
// file on every commit cost 10-15% more than zero-filling 1 MiB ahead.)
constexpr uint64_t kLargeGroupBytes = 16 * kPageBytes;
}  // namespace

std::string LogImpl::SegmentPath(uint64_t number) const { return JoinPath(dir_, logfmt::SegmentFileName(number)); }

std::string LogImpl::archive_dir() const {
  return options_.archive_dir.empty() ? JoinPath(dir_, "archive") : options_.archive_dir;
}

// Creates a segment so that it exists under its final name only complete:
// header (and `first_record`) written and synced under a temporary name, renamed,
// directory synced. Nothing in it is acknowledged before this returns.
Status LogImpl::CreateSegment(const logfmt::SegmentHeader& header, std::shared_ptr<Segment>* segment,
                              std::string_view first_record, uint64_t first_timestamp_us) {
  const std::string path = SegmentPath(header.number);
  const std::string tmp = path + std::string(logfmt::kTempSuffix);
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(options_.env->OpenFile(tmp, OpenMode::kTruncate, &file));
  std::string bytes = logfmt::EncodeSegmentHeader(header);
  bytes.append(first_record);
  SPOOL_RETURN_IF_ERROR(file->Write(0, bytes));
  SPOOL_RETURN_IF_ERROR(file->Sync());
  SPOOL_KILL_POINT("log.segment.header_synced");
  SPOOL_RETURN_IF_ERROR(options_.env->RenameFile(tmp, path));
  SPOOL_KILL_POINT("log.segment.renamed");
  SPOOL_RETURN_IF_ERROR(options_.env->SyncDir(dir_));
  SPOOL_KILL_POINT("log.segment.dir_synced");
  auto created = std::make_shared<Segment>();
  created->header = header;
  created->path = path;
  created->file = std::move(file);
  created->data_end = bytes.size();
  created->last_version = header.first_version - 1;
  created->last_timestamp_us = header.prev_last_timestamp_us;
  created->indexed_end = bytes.size();
  created->indexed_next_version = header.first_version;
  if (!first_record.empty()) {
    created->index.push_back(IndexEntry{header.first_version, first_timestamp_us, logfmt::kSegmentHeaderBytes});
    created->last_version = header.first_version;
    created->last_timestamp_us = first_timestamp_us;
    created->indexed_next_version = header.first_version + 1;
  }
  *segment = std::move(created);
  return Status::OK();
}

// Seals the active segment and starts the next when `bytes` more would pass
// the size limit (an empty segment takes any group).
Status LogImpl::EnsureRoomFor(uint64_t bytes) {
  std::shared_ptr<Segment> active = segments_.back();
  const bool empty = active->last_version < active->header.first_version;
  if (empty || active->data_end + bytes <= options_.segment_size_bytes) return Status::OK();
  // The successor's header vouches for everything before it: sync first.
  if (unsynced_data_) SPOOL_RETURN_IF_ERROR(active->file->Sync());
  unsynced_data_ = false;
  // Drop the zero-filled tail; the successor's header says where data ends.
  SPOOL_KILL_POINT("log.roll.sealed_synced");
  SPOOL_RETURN_IF_ERROR(active->file->Truncate(active->data_end));
  SPOOL_KILL_POINT("log.roll.tail_truncated");
  SaveIndex(active.get());
  logfmt::SegmentHeader header;
  header.store_id = meta_.store_id;
  header.number = next_segment_number_;
  header.epoch = epoch_;
  header.first_version = active->last_version + 1;
  header.prev_number = active->header.number;
  header.prev_epoch = active->header.epoch;
  header.prev_last_version = active->last_version;
  header.prev_end_offset = active->data_end;
  header.prev_last_timestamp_us = active->last_timestamp_us;
  std::shared_ptr<Segment> next;
  SPOOL_RETURN_IF_ERROR(CreateSegment(header, &next));
  ++next_segment_number_;
  allocated_end_ = next->data_end;
  previous_group_synced_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  segments_.push_back(std::move(next));
  return Status::OK();
}

// Zero-fills the active segment ahead of `end`, so that small groups
// overwrite allocated blocks and their sync need not change the file size.
Status LogImpl::Preallocate(uint64_t end) {
  const uint64_t chunk = options_.preallocate_bytes;
  if (chunk == 0 || end <= allocated_end_) return Status::OK();
  const uint64_t data_end = segments_.back()->data_end;
  if (end - data_end >= kLargeGroupBytes) {
    allocated_end_ = end;
    return Status::OK();
  }
  const uint64_t target =
      std::min((end + chunk + kPageBytes - 1) / kPageBytes * kPageBytes, std::max(options_.segment_size_bytes, end));
  static const std::string zeros(kZeroChunkBytes, '\0');
  File* file = segments_.back()->file.get();
  for (uint64_t offset = std::max(allocated_end_, data_end); offset < target;) {
    const uint64_t n = std::min(kZeroChunkBytes, target - offset);
    SPOOL_RETURN_IF_ERROR(file->Write(offset, std::string_view(zeros).substr(0, n)));
    offset += n;
  }
  allocated_end_ = target;
  return Status::OK();
}

// Writes the complete sparse index of a segment being sealed. No sync: it
// is checked when loaded and rebuilt by a scan when it does not match.
void LogImpl::SaveIndex(Segment* segment) {
  std::string bytes;
  {
    std::lock_guard<std::mutex> lock(segment->index_mu);
    if (segment->indexed_end != segment->data_end || segment->index.empty()) return;
    bytes = EncodeIndexFile({meta_.store_id, segment->header.number, segment->header.first_version, segment->data_end},
                            segment->index);
  }
  const std::string path = JoinPath(dir_, IndexFileName(segment->header.number));
  const std::string tmp = path + std::string(logfmt::kTempSuffix);
  std::unique_ptr<File> file;
  Status s = options_.env->OpenFile(tmp, OpenMode::kTruncate, &file);
  if (s.ok()) s = file->Write(0, bytes);
  if (s.ok()) s = file->Close();
  if (s.ok()) s = options_.env->RenameFile(tmp, path);
  if (!s.ok()) (void)options_.env->RemoveFile(tmp);
}

// REQUIRES: segment->index_mu held.
bool LogImpl::LoadIndex(Segment* segment, uint64_t data_end, uint64_t last_version) {
  std::string bytes;
  if (!ReadFileToString(options_.env, JoinPath(dir_, IndexFileName(segment->header.number)), &bytes).ok()) {
    return false;
  }
  std::vector<IndexEntry> entries;
  const IndexIdentity identity{meta_.store_id, segment->header.number, segment->header.first_version, data_end};
  if (!DecodeIndexFile(bytes, identity, &entries).ok() || entries.back().version > last_version) return false;
  segment->index = std::move(entries);
  segment->indexed_end = data_end;
  segment->indexed_next_version = last_version + 1;
  return true;
}

void LogImpl::RemoveIndex(uint64_t segment_number) {
  (void)options_.env->RemoveFile(JoinPath(dir_, IndexFileName(segment_number)));
}

}  // namespace spool
