// TruncateAfter and retention: the two operations that remove commits.
//
// Truncation protocol (docs/log_format.md, "Truncation"):
//   1. Create segment N of epoch E+1 whose header names the kept segment S
//      and the end X of the last kept record. N's durable creation is the
//      commit point: from then on S is read only up to X, and segments
//      numbered between S and N are the cut suffix.
//   2. Archive the cut (S's bytes past X and the later segments) or delete it.
//   3. Truncate S to X.
// A crash before 1 leaves the old log; after it, reopening redoes 2 and 3.
#include <algorithm>
#include <cassert>

#include "log_impl.h"
#include "record_scanner.h"

namespace spool {
namespace {
constexpr std::string_view kArchiveCompleteName = "COMPLETE";

std::string ArchiveName(uint64_t new_epoch) {
  std::string digits = std::to_string(new_epoch);
  return "epoch-" + std::string(digits.size() < 6 ? 6 - digits.size() : 0, '0') + digits;
}
}  // namespace

Status LogImpl::WriteMeta() {
  return WriteFileAtomically(options_.env, JoinPath(dir_, logfmt::kMetaFileName), logfmt::EncodeMeta(meta_));
}

Status LogImpl::DoTruncate(uint64_t version, bool discard_suffix, LogPosition* new_head) {
  std::shared_ptr<Segment> kept;
  std::vector<uint64_t> cut;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t oldest = segments_.front()->header.first_version;
    const uint64_t newest = segments_.back()->last_version;
    if (version > newest) {
      return Status::InvalidArgument("cannot truncate after version " + std::to_string(version) +
                                     ": the newest version is " + std::to_string(newest));
    }
    if (version + 1 < oldest || (version + 1 == oldest && oldest > 1)) {
      return Status::NotFound("version " + std::to_string(version) + " is older than the oldest retained version " +
                              std::to_string(oldest));
    }
    for (const auto& segment : segments_) {
      if (version >= segment->header.first_version && version <= segment->last_version) kept = segment;
      else if (kept != nullptr || version == 0) cut.push_back(segment->header.number);
    }
  }
  logfmt::SegmentHeader header;
  header.store_id = meta_.store_id;
  header.number = next_segment_number_;
  header.epoch = epoch_ + 1;
  header.first_version = version + 1;
  if (kept != nullptr) {
    std::shared_ptr<Segment> located;
    IndexEntry from;
    SPOOL_RETURN_IF_ERROR(Locate(version, &located, &from));
    assert(located == kept);
    RecordScanner scanner(kept->file.get(), meta_.store_id, kept->header.epoch, from.offset, kept->data_end,
                          from.version);
    logfmt::RecordHeader record;
    std::string_view payload;
    while (scanner.next_version() <= version && scanner.Next(&record, &payload)) {
    }
    if (scanner.next_version() != version + 1) return Status::Corruption("cannot find the end of version " +
                                                                         std::to_string(version) + " in " + kept->path);
    header.prev_number = kept->header.number;
    header.prev_epoch = kept->header.epoch;
    header.prev_last_version = version;
    header.prev_end_offset = scanner.offset();
    header.prev_last_timestamp_us = record.timestamp_us;
  }
  std::shared_ptr<Segment> next;
  Status s = CreateSegment(header, &next);  // the commit point
  if (!s.ok()) return Poison(s);
  ++next_segment_number_;
  allocated_end_ = next->data_end;
  previous_group_synced_ = true;
  unsynced_data_ = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch_ = header.epoch;
    segments_.erase(std::remove_if(segments_.begin(), segments_.end(),
                                   [&](const auto& seg) {
                                     return std::find(cut.begin(), cut.end(), seg->header.number) != cut.end();
                                   }),
                    segments_.end());
    if (kept != nullptr) {
      kept->data_end = header.prev_end_offset;
      kept->last_version = version;
      kept->last_timestamp_us = header.prev_last_timestamp_us;
    }
    segments_.push_back(next);
  }
  if (kept != nullptr) {
    std::lock_guard<std::mutex> lock(kept->index_mu);
    while (!kept->index.empty() && kept->index.back().version > version) kept->index.pop_back();
    if (kept->indexed_next_version > version + 1) {
      kept->indexed_end = header.prev_end_offset;
      kept->indexed_next_version = version + 1;
    }
  }
  *new_head = LogPosition{header.epoch, version};
  s = CompleteCut(kept, header, cut, discard_suffix);
  if (!s.ok()) return Poison(s);
  return Status::OK();
}

// Steps 2 and 3 of the protocol; idempotent, so recovery can redo them.
Status LogImpl::CompleteCut(const std::shared_ptr<Segment>& kept, const logfmt::SegmentHeader& successor,
                            const std::vector<uint64_t>& cut_segments, bool discard_suffix) {
  if (!discard_suffix) SPOOL_RETURN_IF_ERROR(ArchiveCut(kept, successor, cut_segments));
  for (uint64_t number : cut_segments) {
    Status s = options_.env->RemoveFile(SegmentPath(number));
    if (!s.ok() && !s.IsNotFound()) return s;
    RemoveIndex(number);
  }
  if (kept != nullptr) RemoveIndex(kept->header.number);
  if (kept != nullptr) {
    uint64_t size = 0;
    SPOOL_RETURN_IF_ERROR(kept->file->Size(&size));
    if (size > successor.prev_end_offset) {
      SPOOL_RETURN_IF_ERROR(kept->file->Truncate(successor.prev_end_offset));
      SPOOL_RETURN_IF_ERROR(kept->file->Sync());
    }
  }
  return options_.env->SyncDir(dir_);
}

// Moves the cut suffix into "<archive>/epoch-NNNNNN/": the kept segment's
// records past the cut as a segment file of their own, and the later
// segments by rename. A COMPLETE marker, written last, makes a retry skip it.
Status LogImpl::ArchiveCut(const std::shared_ptr<Segment>& kept, const logfmt::SegmentHeader& successor,
                           const std::vector<uint64_t>& cut_segments) {
  Env* env = options_.env;
  const std::string root = archive_dir();
  const std::string dir = JoinPath(root, ArchiveName(successor.epoch));
  const std::string marker = JoinPath(dir, kArchiveCompleteName);
  if (env->FileExists(marker)) return Status::OK();
  SPOOL_RETURN_IF_ERROR(env->CreateDir(root));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(DirName(root)));
  SPOOL_RETURN_IF_ERROR(env->CreateDir(dir));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(root));
  if (kept != nullptr) {
    const std::string tail_path = JoinPath(dir, logfmt::SegmentFileName(kept->header.number));
    if (!env->FileExists(tail_path)) {
      uint64_t size = 0;
      SPOOL_RETURN_IF_ERROR(kept->file->Size(&size));
      RecordScanner scanner(kept->file.get(), meta_.store_id, kept->header.epoch, successor.prev_end_offset, size,
                            successor.prev_last_version + 1);
      logfmt::RecordHeader record;
      std::string_view payload;
      while (scanner.Next(&record, &payload)) {
      }
      SPOOL_RETURN_IF_ERROR(scanner.status());
      if (scanner.offset() > successor.prev_end_offset) {
        logfmt::SegmentHeader tail = kept->header;
        tail.first_version = successor.prev_last_version + 1;
        tail.prev_number = kept->header.number;
        tail.prev_epoch = kept->header.epoch;
        tail.prev_last_version = successor.prev_last_version;
        tail.prev_end_offset = successor.prev_end_offset;
        tail.prev_last_timestamp_us = successor.prev_last_timestamp_us;
        std::string bytes = logfmt::EncodeSegmentHeader(tail);
        std::string records;
        SPOOL_RETURN_IF_ERROR(kept->file->Read(successor.prev_end_offset,
                                               static_cast<size_t>(scanner.offset() - successor.prev_end_offset),
                                               &records));
        bytes += records;
        SPOOL_RETURN_IF_ERROR(WriteFileAtomically(env, tail_path, bytes));
      }
    }
  }
  for (uint64_t number : cut_segments) {
    const std::string from = SegmentPath(number);
    if (env->FileExists(from)) SPOOL_RETURN_IF_ERROR(env->RenameFile(from, JoinPath(dir, logfmt::SegmentFileName(number))));
  }
  SPOOL_RETURN_IF_ERROR(env->SyncDir(dir));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(dir_));
  return WriteFileAtomically(env, marker, "");
}

Status LogImpl::DoRetention(uint64_t pinned_version, uint64_t* deleted) {
  std::vector<std::shared_ptr<Segment>> doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i + 1 < segments_.size() && segments_[i]->last_version < pinned_version; ++i) {
      doomed.push_back(segments_[i]);
    }
    if (doomed.empty()) return Status::OK();
  }
  const uint64_t floor = segments_[doomed.size()]->header.number;
  meta_.floor_segment = floor;
  Status s = WriteMeta();  // from here on, reopening finishes the deletion
  for (size_t i = 0; s.ok() && i < doomed.size(); ++i) {
    s = options_.env->RemoveFile(doomed[i]->path);
    RemoveIndex(doomed[i]->header.number);
  }
  if (s.ok()) s = options_.env->SyncDir(dir_);
  if (!s.ok()) return Poison(s);
  std::lock_guard<std::mutex> lock(mu_);
  segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(doomed.size()));
  *deleted = doomed.size();
  return Status::OK();
}

}  // namespace spool
