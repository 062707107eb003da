// The Log's read paths: locating a version through the sparse index,
// reading one commit, iterating, and finding the version of a timestamp.
#include <algorithm>

#include "invariant.h"
#include "log_impl.h"
#include "payload.h"
#include "record_scanner.h"

namespace spool {
namespace {

Status ScanError(const Segment& segment, const RecordScanner& scanner) {
  if (!scanner.status().ok()) return scanner.status();
  return Status::Corruption("segment " + segment.path + " offset " + std::to_string(scanner.offset()) + ": " +
                            std::string(logfmt::RecordCheckName(scanner.stop())));
}

class LogIteratorImpl final : public LogIterator {
 public:
  LogIteratorImpl(LogImpl* log, std::shared_ptr<Segment> segment, uint64_t offset, uint64_t next_version)
      : log_(log), segment_(std::move(segment)), offset_(offset), next_version_(next_version) {}

  bool Next(LogEntry* entry) override {
    while (status_.ok() && segment_ != nullptr) {
      uint64_t data_end = 0;
      uint64_t last_version = 0;
      log_->SegmentEnd(*segment_, &data_end, &last_version);
      if (next_version_ > last_version) {
        if (!Advance()) return false;
        continue;
      }
      if (scanner_ == nullptr || scanner_limit_ != data_end) {
        scanner_ = std::make_unique<RecordScanner>(segment_->file.get(), log_->store_id(), segment_->header.epoch,
                                                   offset_, data_end, next_version_);
        scanner_limit_ = data_end;
      }
      return ReadOne(entry);
    }
    return false;
  }

  Status status() const override { return status_; }

 private:
  // Moves to the next segment when it continues where this one ends (its
  // first version is past that when it starts an epoch).
  bool Advance() {
    std::shared_ptr<Segment> next = log_->NextSegment(*segment_);
    if (next == nullptr || next->header.prev_last_version + 1 != next_version_) return false;
    next_version_ = next->header.first_version;
    segment_ = std::move(next);
    offset_ = logfmt::kSegmentHeaderBytes;
    scanner_.reset();
    return true;
  }

  bool ReadOne(LogEntry* entry) {
    logfmt::RecordHeader header;
    std::string_view payload;
    if (!scanner_->Next(&header, &payload)) {
      status_ = ScanError(*segment_, *scanner_);
      return false;
    }
    entry->position = LogPosition{header.epoch, header.version};
    entry->timestamp_us = header.timestamp_us;
    status_ = DecodePayload(payload, header.flags, entry)
                  .WithContext("segment " + segment_->path + " offset " + std::to_string(scanner_->record_offset()));
    offset_ = scanner_->offset();
    ++next_version_;
    return status_.ok();
  }

  LogImpl* log_;
  std::shared_ptr<Segment> segment_;
  uint64_t offset_;
  uint64_t next_version_;
  std::unique_ptr<RecordScanner> scanner_;
  uint64_t scanner_limit_ = 0;
  Status status_;
};

}  // namespace

void LogImpl::SegmentEnd(const Segment& segment, uint64_t* data_end, uint64_t* last_version) {
  std::lock_guard<std::mutex> lock(mu_);
  *data_end = segment.data_end;
  *last_version = segment.last_version;
}

std::shared_ptr<Segment> LogImpl::NextSegment(const Segment& segment) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i + 1 < segments_.size(); ++i) {
    if (segments_[i].get() == &segment) return segments_[i + 1];
  }
  return nullptr;
}

void LogImpl::AddIndexEntry(Segment* segment, const IndexEntry& entry) {
  std::lock_guard<std::mutex> lock(segment->index_mu);
  if (segment->index.empty() || entry.offset >= segment->index.back().offset + logfmt::kIndexIntervalBytes) {
    SPOOL_CHECK(segment->index.empty() || entry.version > segment->index.back().version,
                "a segment's index grows in version order");
    segment->index.push_back(entry);
  }
}

// Extends the sparse index of `segment` until it covers `version` (or the
// segment's end), scanning and so verifying the records on the way.
Status LogImpl::EnsureIndexed(Segment* segment, uint64_t version) {
  uint64_t data_end = 0;
  uint64_t last_version = 0;
  bool sealed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    data_end = segment->data_end;
    last_version = segment->last_version;
    sealed = segment != segments_.back().get();
  }
  std::unique_lock<std::mutex> lock(segment->index_mu);
  if (segment->indexed_next_version > version || segment->indexed_end >= data_end) return Status::OK();
  if (sealed && segment->indexed_end == logfmt::kSegmentHeaderBytes && LoadIndex(segment, data_end, last_version)) {
    return Status::OK();
  }
  RecordScanner scanner(segment->file.get(), meta_.store_id, segment->header.epoch, segment->indexed_end, data_end,
                        segment->indexed_next_version);
  lock.unlock();
  logfmt::RecordHeader header;
  std::string_view payload;
  std::vector<IndexEntry> entries;
  while (scanner.next_version() <= version && scanner.Next(&header, &payload)) {
    entries.push_back(IndexEntry{header.version, header.timestamp_us, scanner.record_offset()});
  }
  if (scanner.next_version() <= version && scanner.next_version() <= last_version) {
    return ScanError(*segment, scanner);
  }
  for (const IndexEntry& entry : entries) AddIndexEntry(segment, entry);
  lock.lock();
  if (scanner.offset() > segment->indexed_end) {
    segment->indexed_end = scanner.offset();
    segment->indexed_next_version = scanner.next_version();
  }
  return Status::OK();
}

Status LogImpl::Locate(uint64_t version, std::shared_ptr<Segment>* segment, IndexEntry* entry) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t oldest = segments_.front()->header.first_version;
    const uint64_t newest = NewestLocked().version;
    if (version < oldest || version > newest || version == 0) {
      return Status::NotFound("version " + std::to_string(version) + " is not retained (retained: " +
                              std::to_string(oldest) + " to " + std::to_string(newest) + ")");
    }
    auto it = std::upper_bound(segments_.begin(), segments_.end(), version,
                               [](uint64_t v, const auto& s) { return v < s->header.first_version; });
    *segment = *(it - 1);
    if (version > (*segment)->last_version) {
      const uint64_t after = it == segments_.end() ? newest : (*it)->header.first_version;
      return Status::NotFound("version " + std::to_string(version) +
                              " is not on the log's history: a truncation cut it (the history goes from version " +
                              std::to_string((*segment)->last_version) + " to " + std::to_string(after) + ")");
    }
  }
  SPOOL_RETURN_IF_ERROR(EnsureIndexed(segment->get(), version));
  std::lock_guard<std::mutex> lock((*segment)->index_mu);
  const auto& index = (*segment)->index;
  auto it = std::upper_bound(index.begin(), index.end(), version,
                             [](uint64_t v, const IndexEntry& e) { return v < e.version; });
  SPOOL_CHECK(it != index.begin(), "a segment's index starts at or before every version it holds");
  *entry = *(it - 1);
  return Status::OK();
}

Status LogImpl::Read(uint64_t version, LogEntry* entry) {
  std::unique_ptr<LogIterator> iterator;
  SPOOL_RETURN_IF_ERROR(NewIterator(version, &iterator));
  if (iterator->Next(entry)) {
    if (entry->position.version == version) return Status::OK();
    // The iterator went on to the next commit on the history.
    return Status::NotFound("version " + std::to_string(version) +
                            " is not on the log's history: a truncation cut it (the history goes on at version " +
                            std::to_string(entry->position.version) + ")");
  }
  if (!iterator->status().ok()) return iterator->status();
  return Status::NotFound("version " + std::to_string(version) + " is not retained");
}

Status LogImpl::NewIterator(uint64_t from_version, std::unique_ptr<LogIterator>* iterator) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const LogPosition newest = NewestLocked();
    const auto& active = segments_.back();
    const uint64_t next = active->last_version + 1;
    if (from_version == 0) from_version = newest.version == 0 ? next : segments_.front()->header.first_version;
    if (from_version > next) {
      return Status::InvalidArgument("version " + std::to_string(from_version) + " is beyond the next version " +
                                     std::to_string(next));
    }
    if (from_version > newest.version) {
      *iterator = std::make_unique<LogIteratorImpl>(this, active, active->data_end, next);
      return Status::OK();
    }
    // A version a truncation cut: the history goes on where the next
    // segment starts (the oldest one, when it starts an epoch and retention
    // deleted its predecessor).
    auto it = std::upper_bound(segments_.begin(), segments_.end(), from_version,
                               [](uint64_t v, const auto& s) { return v < s->header.first_version; });
    const uint64_t before = it == segments_.begin() ? (*it)->header.prev_last_version : (*(it - 1))->last_version;
    if (from_version > before) from_version = (*it)->header.first_version;
  }
  std::shared_ptr<Segment> segment;
  IndexEntry from;
  SPOOL_RETURN_IF_ERROR(Locate(from_version, &segment, &from));
  auto it = std::make_unique<LogIteratorImpl>(this, segment, from.offset, from.version);
  LogEntry skipped;
  for (uint64_t v = from.version; v < from_version; ++v) {
    if (!it->Next(&skipped)) return it->status().ok() ? Status::Corruption("log ended early") : it->status();
  }
  *iterator = std::move(it);
  return Status::OK();
}

// The answer lies in the first segment holding a commit later than
// `timestamp_us`: among its commits, or just before it.
Status LogImpl::VersionAtTime(uint64_t timestamp_us, uint64_t* version) {
  std::shared_ptr<Segment> segment;
  bool first_segment = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Timestamps increase along the chain (an empty segment carries its
    // predecessor's last one), so the segments holding only commits at or
    // before the timestamp come first: binary search.
    auto later = std::partition_point(segments_.begin(), segments_.end(),
                                      [&](const auto& s) { return s->last_timestamp_us <= timestamp_us; });
    if (later == segments_.end()) {
      const uint64_t oldest = segments_.front()->header.first_version;
      const uint64_t newest = NewestLocked().version;
      if (newest == 0 || newest < oldest) return Status::NotFound("the log holds no commits");
      *version = newest;
      return Status::OK();
    }
    segment = *later;
    first_segment = later == segments_.begin();
  }
  SPOOL_RETURN_IF_ERROR(EnsureIndexed(segment.get(), UINT64_MAX));
  IndexEntry from;
  {
    std::lock_guard<std::mutex> lock(segment->index_mu);
    const auto& index = segment->index;
    auto it = std::upper_bound(index.begin(), index.end(), timestamp_us,
                               [](uint64_t t, const IndexEntry& e) { return t < e.timestamp_us; });
    if (it == index.begin()) {
      if (first_segment) {
        return Status::NotFound("every retained commit is later than timestamp " + std::to_string(timestamp_us));
      }
      *version = segment->header.prev_last_version;
      return Status::OK();
    }
    from = *(it - 1);
  }
  uint64_t data_end = 0;
  uint64_t last_version = 0;
  SegmentEnd(*segment, &data_end, &last_version);
  RecordScanner scanner(segment->file.get(), meta_.store_id, segment->header.epoch, from.offset, data_end,
                        from.version);
  logfmt::RecordHeader header;
  std::string_view payload;
  *version = from.version;
  while (scanner.Next(&header, &payload) && header.timestamp_us <= timestamp_us) *version = header.version;
  if (!scanner.status().ok() || scanner.stop() != logfmt::RecordCheck::kValid) return ScanError(*segment, scanner);
  return Status::OK();
}

Status VerifyLog(Env* env, const std::string& dir, uint64_t* records) {
  LogOptions options;
  options.env = env;
  options.read_only = true;
  std::unique_ptr<Log> log;
  SPOOL_RETURN_IF_ERROR(Log::Open(options, dir, &log));
  std::unique_ptr<LogIterator> it;
  SPOOL_RETURN_IF_ERROR(log->NewIterator(0, &it));
  LogEntry entry;
  *records = 0;
  while (it->Next(&entry)) ++*records;
  return it->status();
}

// Scans on from where the active segment's verified records end; only the
// writer changes the file, and only by appending there (a truncation starts
// a newer segment, which marks this handle stale instead). A record being
// written when the scan meets it marks the handle stale too: rare, and the
// open that follows sorts it out.
Status LogImpl::Refresh(bool* stale) {
  *stale = false;
  if (!options_.read_only || options_.oldest_only) {
    return Status::NotSupported("log " + dir_ + ": Refresh needs a log opened read-only, not oldest_only");
  }
  std::shared_ptr<Segment> active;
  uint64_t data_end = 0;
  uint64_t last_version = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active = segments_.back();
    data_end = active->data_end;
    last_version = active->last_version;
  }
  if (options_.env->FileExists(SegmentPath(active->header.number + 1))) {
    *stale = true;
    return Status::OK();
  }
  uint64_t size = 0;
  SPOOL_RETURN_IF_ERROR(active->file->Size(&size));
  RecordScanner scanner(active->file.get(), meta_.store_id, active->header.epoch, data_end, size, last_version + 1);
  logfmt::RecordHeader header;
  std::string_view payload;
  uint64_t last_timestamp_us = 0;
  while (scanner.Next(&header, &payload)) last_timestamp_us = header.timestamp_us;
  SPOOL_RETURN_IF_ERROR(scanner.status());
  if (scanner.stop() != logfmt::RecordCheck::kValid) {
    // Zeros are the space preallocated past the last record. Anything else
    // is a record being written, or damage that only an open (reading on
    // to tell a torn tail from a synced record after it) can judge.
    std::string next;
    SPOOL_RETURN_IF_ERROR(active->file->Read(scanner.offset(), logfmt::kRecordHeaderBytes, &next));
    if (!std::all_of(next.begin(), next.end(), [](char c) { return c == 0; })) {
      *stale = true;
      return Status::OK();
    }
  }
  if (scanner.offset() == data_end) return Status::OK();
  SPOOL_CHECK(scanner.next_version() > last_version + 1, "a refresh that read further read new versions");
  std::lock_guard<std::mutex> lock(mu_);
  active->data_end = scanner.offset();
  active->last_version = scanner.next_version() - 1;
  active->last_timestamp_us = last_timestamp_us;
  return Status::OK();
}

// The writer syncs a segment whole before it starts the next (EnsureRoomFor),
// so only the segment being written can hold unsynced commits. Syncing it
// takes a handle that may write; this one writes nothing.
Status LogImpl::MakeReadDurable() {
  if (!options_.read_only) return Status::NotSupported("log " + dir_ + ": MakeReadDurable is for a read-only log");
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    path = segments_.back()->path;
  }
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(options_.env->OpenFile(path, OpenMode::kReadWrite, &file));
  SPOOL_RETURN_IF_ERROR(file->Sync());
  SPOOL_RETURN_IF_ERROR(file->Close());
  return options_.env->SyncDir(dir_);
}

}  // namespace spool
