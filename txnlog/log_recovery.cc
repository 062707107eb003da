// Opening a log: find the live chain of segments from their headers, finish
// an interrupted truncation or retention, and find the end of the segment
// being written. Sealed segments are not scanned (their ends are in their
// successors' headers), so opening costs the active segment, not the log.
#include <algorithm>
#include <cstring>
#include <random>
#include <unordered_set>

#include "kill_point.h"
#include "log_impl.h"
#include "record_scanner.h"
#include "segment_index.h"

namespace spool {

struct LogImpl::FoundSegment {
  logfmt::SegmentHeader header;
  std::string path;
  std::unique_ptr<File> file;  // open as the log will use it
};

namespace {

uint64_t RandomStoreId(Env* env) {
  std::random_device device;
  uint64_t id = (static_cast<uint64_t>(device()) << 32) ^ device() ^ env->NowMicros();
  return id == 0 ? 1 : id;
}

bool AllZero(std::string_view bytes) {
  // A zero first byte, and every byte equal to the one before it: one
  // vectorised memcmp instead of a loop that stops at the first non-zero.
  return bytes.empty() || (bytes[0] == 0 && std::memcmp(bytes.data(), bytes.data() + 1, bytes.size() - 1) == 0);
}

// Whether `file` holds only zeros from `from` to `to` (a preallocated tail,
// a megabyte for a topic's segment), read a chunk at a time.
Status ZeroFrom(File* file, uint64_t from, uint64_t to, bool* zero) {
  constexpr uint64_t kChunkBytes = 64 << 10;
  std::string chunk;
  for (uint64_t at = from; at < to; at += kChunkBytes) {
    SPOOL_RETURN_IF_ERROR(file->Read(at, static_cast<size_t>(std::min(kChunkBytes, to - at)), &chunk));
    if (!AllZero(chunk)) {
      *zero = false;
      return Status::OK();
    }
  }
  *zero = true;
  return Status::OK();
}

}  // namespace

// Creates the directory and META when allowed, takes the lock, reads META.
Status LogImpl::OpenDirectory() {
  Env* env = options_.env;
  const std::string meta_path = JoinPath(dir_, logfmt::kMetaFileName);
  if (!env->FileExists(meta_path)) {
    // Segments without META: its META is lost, this is not a new log.
    std::vector<std::string> names;
    if (env->ListDir(dir_, &names).ok()) {
      for (const std::string& name : names) {
        uint64_t number = 0;
        if (logfmt::ParseSegmentFileName(name, &number)) {
          return Status::Corruption("log " + dir_ + " has segments but no META file");
        }
      }
    }
    if (options_.read_only || !options_.create_if_missing) return Status::NotFound("no log in " + dir_);
    SPOOL_RETURN_IF_ERROR(env->CreateDir(dir_));
    SPOOL_RETURN_IF_ERROR(env->SyncDir(DirName(dir_)));
  }
  if (!options_.read_only) SPOOL_RETURN_IF_ERROR(env->LockFile(JoinPath(dir_, logfmt::kLockFileName), &lock_file_));
  if (!env->FileExists(meta_path)) {
    meta_.store_id = options_.new_store_id != 0 ? options_.new_store_id : RandomStoreId(env);
    meta_.floor_segment = 1;
    return WriteMeta();
  }
  std::string bytes;
  SPOOL_RETURN_IF_ERROR(ReadFileToString(env, meta_path, &bytes));
  return logfmt::DecodeMeta(bytes, &meta_).WithContext(meta_path);
}

// Index files whose segment is gone (cut, retained away) are removed.
// Each segment's index name made once: made for every pair instead, it was
// 87 % of opening a log of 3,000 segments (0.65 s).
void LogImpl::RemoveOrphanIndexes(const std::vector<std::string>& index_files, const std::vector<FoundSegment>& found) {
  if (options_.read_only) return;
  std::unordered_set<std::string> live;
  for (const FoundSegment& f : found) live.insert(IndexFileName(f.header.number));
  for (const std::string& name : index_files) {
    if (live.count(name) == 0) (void)options_.env->RemoveFile(JoinPath(dir_, name));
  }
}

// Reads every segment header; removes leftovers of interrupted writes
// (temporary files) and of an interrupted retention (segments below the
// floor). Returns the rest sorted by number (the names are, and a
// segment's name is its number in twelve zero-padded digits).
Status LogImpl::LoadSegments(std::vector<FoundSegment>* found) {
  Env* env = options_.env;
  const OpenMode mode = options_.read_only ? OpenMode::kReadOnly : OpenMode::kReadWrite;
  std::vector<std::string> names;
  SPOOL_RETURN_IF_ERROR(env->ListDir(dir_, &names));
  std::sort(names.begin(), names.end());
  std::vector<std::string> index_files;
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir_, name);
    uint64_t number = 0;
    if (name.ends_with(logfmt::kTempSuffix)) {
      if (!options_.read_only) SPOOL_RETURN_IF_ERROR(env->RemoveFile(path));
      continue;
    }
    if (name.ends_with(kIndexSuffix)) {
      index_files.push_back(name);
      continue;
    }
    if (!logfmt::ParseSegmentFileName(name, &number)) continue;
    next_segment_number_ = std::max(next_segment_number_, number + 1);
    if (number < meta_.floor_segment) {
      if (!options_.read_only) SPOOL_RETURN_IF_ERROR(env->RemoveFile(path));
      continue;
    }
    FoundSegment segment;
    // Opened once, kept for AdoptChain: a second open and close per
    // segment were a third of opening a log of many segments.
    SPOOL_RETURN_IF_ERROR(env->OpenFile(path, mode, &segment.file));
    std::string bytes;
    SPOOL_RETURN_IF_ERROR(segment.file->Read(0, logfmt::kSegmentHeaderBytes, &bytes));
    segment.path = path;
    SPOOL_RETURN_IF_ERROR(logfmt::DecodeSegmentHeader(bytes, &segment.header).WithContext("segment " + path));
    if (segment.header.store_id != meta_.store_id) {
      return Status::Corruption("segment " + path + " belongs to another store (foreign segment)");
    }
    if (segment.header.number != number) {
      return Status::Corruption("segment " + path + " says it is segment " + std::to_string(segment.header.number) +
                                " (duplicated or renamed segment)");
    }
    found->push_back(std::move(segment));
  }
  RemoveOrphanIndexes(index_files, *found);
  return Status::OK();
}

// Walks back from the newest segment through the predecessors named in the
// headers. Segments off that chain are only allowed between the newest
// segment and its predecessor when the newest starts a new epoch: the
// suffix of an interrupted truncation (`*cut`).
Status LogImpl::BuildChain(std::vector<FoundSegment>& found, std::vector<FoundSegment*>* chain,
                           std::vector<uint64_t>* cut) {
  auto find = [&](uint64_t number) -> FoundSegment* {  // `found` is by number
    const auto at = std::lower_bound(found.begin(), found.end(), number,
                                     [](const FoundSegment& f, uint64_t n) { return f.header.number < n; });
    return at != found.end() && at->header.number == number ? &*at : nullptr;
  };
  FoundSegment* current = &found.back();
  chain->push_back(current);
  while (current->header.prev_number >= meta_.floor_segment) {
    const logfmt::SegmentHeader& h = current->header;
    FoundSegment* prev = find(h.prev_number);
    if (prev == nullptr) {
      return Status::Corruption("segment " + logfmt::SegmentFileName(h.prev_number) + " is missing (" + current->path +
                                " follows it)");
    }
    // Versions go on where the predecessor ends, or (a new epoch: the
    // versions a truncation cut are never used again) past it.
    const bool continues =
        h.epoch > h.prev_epoch ? h.first_version > h.prev_last_version : h.first_version == h.prev_last_version + 1;
    if (prev->header.epoch != h.prev_epoch || !continues || prev->header.first_version > h.prev_last_version + 1 ||
        h.epoch < h.prev_epoch) {
      return Status::Corruption("segment " + current->path + " does not continue " + prev->path +
                                " (stale or misplaced segment)");
    }
    chain->push_back(prev);
    current = prev;
  }
  std::reverse(chain->begin(), chain->end());
  const FoundSegment& newest = *chain->back();
  std::unordered_set<const FoundSegment*> on_chain(chain->begin(), chain->end());
  for (const FoundSegment& f : found) {
    if (on_chain.count(&f) != 0) continue;
    const bool in_cut = newest.header.epoch > newest.header.prev_epoch && f.header.number > newest.header.prev_number &&
                        f.header.number < newest.header.number && f.header.epoch < newest.header.epoch;
    if (!in_cut) return Status::Corruption("segment " + f.path + " is not part of the log (stale segment)");
    cut->push_back(f.header.number);
  }
  if (chain->front()->header.number != meta_.floor_segment && chain->front()->header.prev_number != 0) {
    return Status::Corruption("segment " + logfmt::SegmentFileName(meta_.floor_segment) + " is missing");
  }
  return Status::OK();
}

// Takes the chain's files and sets each sealed segment's end from its
// successor's header.
Status LogImpl::AdoptChain(const std::vector<FoundSegment*>& chain) {
  for (size_t i = 0; i < chain.size(); ++i) {
    auto segment = std::make_shared<Segment>();
    segment->header = chain[i]->header;
    segment->path = chain[i]->path;
    segment->file = std::move(chain[i]->file);
    segment->indexed_end = logfmt::kSegmentHeaderBytes;
    segment->indexed_next_version = segment->header.first_version;
    segment->data_end = logfmt::kSegmentHeaderBytes;
    segment->last_version = segment->header.first_version - 1;
    segment->last_timestamp_us = segment->header.prev_last_timestamp_us;
    if (i + 1 < chain.size()) {
      const logfmt::SegmentHeader& next = chain[i + 1]->header;
      uint64_t size = 0;
      SPOOL_RETURN_IF_ERROR(segment->file->Size(&size));
      if (size < next.prev_end_offset || next.prev_end_offset < logfmt::kSegmentHeaderBytes) {
        return Status::Corruption("segment " + segment->path + " is shorter (" + std::to_string(size) +
                                  " bytes) than its successor records (" + std::to_string(next.prev_end_offset) + ")");
      }
      segment->data_end = next.prev_end_offset;
      segment->last_version = next.prev_last_version;
      segment->last_timestamp_us = next.prev_last_timestamp_us;
    }
    segments_.push_back(std::move(segment));
  }
  epoch_ = segments_.back()->header.epoch;
  return Status::OK();
}

// Scans the segment being written to its end. A bad record followed only by
// bytes of unacknowledged groups is a torn tail and is cut away; one
// followed by a record that proves it had been synced is corruption.
Status LogImpl::RecoverActiveTail(const CleanClose& closed, LogRecoveryReport* report) {
  Segment* active = segments_.back().get();
  uint64_t size = 0;
  SPOOL_RETURN_IF_ERROR(active->file->Size(&size));
  RecordScanner scanner(active->file.get(), meta_.store_id, active->header.epoch, logfmt::kSegmentHeaderBytes, size,
                        active->header.first_version);
  logfmt::RecordHeader header;
  std::string_view payload;
  while (scanner.Next(&header, &payload)) {
    AddIndexEntry(active, IndexEntry{header.version, header.timestamp_us, scanner.record_offset()});
    active->last_timestamp_us = header.timestamp_us;
    ++report->records_scanned;
  }
  SPOOL_RETURN_IF_ERROR(scanner.status());
  const uint64_t end = scanner.offset();
  active->data_end = end;
  active->last_version = scanner.next_version() - 1;
  active->indexed_end = end;
  active->indexed_next_version = scanner.next_version();
  allocated_end_ = size;
  SPOOL_RETURN_IF_ERROR(CheckKnownDurable(*active, end, closed));
  bool zero = true;
  SPOOL_RETURN_IF_ERROR(ZeroFrom(active->file.get(), end, size, &zero));
  // Intact: made durable, unless a clean close left it so.
  if (zero) return options_.read_only || closed.clean ? Status::OK() : active->file->Sync();
  std::string tail;
  SPOOL_RETURN_IF_ERROR(active->file->Read(end, static_cast<size_t>(size - end), &tail));
  const std::string where = "segment " + active->path + " offset " + std::to_string(end);
  if (!IsTornTail(tail, meta_.store_id, active->header.epoch, scanner.next_version())) {
    const std::string reason = std::string(logfmt::RecordCheckName(scanner.stop())) +
                               ", and a later record that was written after a sync follows (not a torn write)";
    if (!options_.salvage) return Status::Corruption(where + ": " + reason);
    report->salvaged_from_version = scanner.next_version();
    report->salvage_reason = where + ": " + reason;
  }
  report->torn_tail_bytes = size - end;
  if (options_.read_only) return Status::OK();
  allocated_end_ = end;
  SPOOL_KILL_POINT("log.recovery.before_tail_truncate");
  SPOOL_RETURN_IF_ERROR(active->file->Truncate(end));
  SPOOL_KILL_POINT("log.recovery.tail_truncated");
  return active->file->Sync();
}

// Whether the last handle closed the log cleanly, every record it wrote
// synced, and its newest record then: its CLOSED says so. Taken back at
// once, written over in place and not synced, so that a writer that dies
// from here on leaves it saying "opened" and the next open syncs the tail.
// A power loss that undoes the taking back undoes this writer's unsynced
// records with it: what the disk holds after one is durable. Not clean
// when it cannot be taken back, nor for a read-only open, which writes
// nothing (and needs no sync), though the position is read for it too.
LogImpl::CleanClose LogImpl::TakeCleanClose() {
  CleanClose closed;
  const std::string path = JoinPath(dir_, logfmt::kClosedFileName);
  std::string bytes;
  if (!ReadFileToString(options_.env, path, &bytes).ok() ||
      !logfmt::DecodeClosedClean(bytes, &closed.newest.epoch, &closed.newest.version)) {
    return CleanClose{};
  }
  if (options_.read_only) return closed;
  if (!WriteFileInPlace(options_.env, path, logfmt::kClosedOpen).ok()) return CleanClose{};
  closed.clean = true;
  return closed;
}

// A clean close, every record synced: CLOSED says so, and up to which
// record, for the next open to skip syncing the tail (a device flush) and
// to know those records were acknowledged. Not synced: lost, it costs that
// open the sync and the knowledge.
void LogImpl::RecordCleanClose(const LogPosition& newest) {
  (void)WriteFileInPlace(options_.env, JoinPath(dir_, logfmt::kClosedFileName),
                         logfmt::EncodeClosedClean(newest.epoch, newest.version));
}

// A commit known to have been acknowledged — by the caller (a store's
// applied state) or, when asked, by the last clean close — past the end of
// what is left of the segment being written: its bytes are damaged or
// lost, not torn.
Status LogImpl::CheckKnownDurable(const Segment& active, uint64_t end, const CleanClose& closed) {
  const uint64_t epoch = active.header.epoch;
  uint64_t known = options_.known_durable_store_id == meta_.store_id && options_.known_durable.epoch == epoch
                       ? options_.known_durable.version
                       : 0;
  const char* by = "the store's state had applied them";
  if (options_.known_durable_from_clean_close && closed.newest.epoch == epoch && closed.newest.version > known) {
    known = closed.newest.version;
    by = "the log's last clean close had synced them";
  }
  if (options_.salvage || options_.durability == Durability::kNoSync || known <= active.last_version) {
    return Status::OK();
  }
  return Status::Corruption("segment " + active.path + " offset " + std::to_string(end) + ": version " +
                            std::to_string(active.last_version + 1) + " of epoch " + std::to_string(epoch) +
                            " is damaged or missing, but commits up to version " + std::to_string(known) +
                            " were acknowledged (" + by +
                            "): not a torn write, so the log is left as it is; restore the store from a copy, or "
                            "open the log with salvage to keep what precedes the damage");
}

// Salvage mode: verify every sealed segment and keep the longest valid
// prefix of the log.
Status LogImpl::SalvageSealed(LogRecoveryReport* report) {
  for (size_t i = 0; i + 1 < segments_.size(); ++i) {
    Segment* segment = segments_[i].get();
    RecordScanner scanner(segment->file.get(), meta_.store_id, segment->header.epoch, logfmt::kSegmentHeaderBytes,
                          segment->data_end, segment->header.first_version);
    logfmt::RecordHeader header;
    std::string_view payload;
    while (scanner.Next(&header, &payload)) ++report->records_scanned;
    SPOOL_RETURN_IF_ERROR(scanner.status());
    if (scanner.stop() == logfmt::RecordCheck::kValid) continue;
    report->salvaged_from_version = scanner.next_version();
    report->salvage_reason = "segment " + segment->path + " offset " + std::to_string(scanner.offset()) + ": " +
                             std::string(logfmt::RecordCheckName(scanner.stop()));
    if (options_.read_only) return Status::OK();
    return CutForSalvage(i, scanner.offset(), scanner.next_version());
  }
  return Status::OK();
}

// Drops everything from `offset` of segment `segment_index` on: later
// segments are deleted newest first (so a crash leaves a prefix), then the
// segment is cut and becomes the one being written.
Status LogImpl::CutForSalvage(size_t segment_index, uint64_t offset, uint64_t next_version) {
  while (segments_.size() > segment_index + 1) {
    RemoveIndex(segments_.back()->header.number);
    SPOOL_RETURN_IF_ERROR(options_.env->RemoveFile(segments_.back()->path));
    SPOOL_RETURN_IF_ERROR(options_.env->SyncDir(dir_));
    segments_.pop_back();
  }
  Segment* segment = segments_.back().get();
  RemoveIndex(segment->header.number);
  SPOOL_RETURN_IF_ERROR(segment->file->Truncate(offset));
  SPOOL_RETURN_IF_ERROR(segment->file->Sync());
  segment->data_end = offset;
  segment->last_version = next_version - 1;
  segment->index.clear();
  segment->indexed_end = logfmt::kSegmentHeaderBytes;
  segment->indexed_next_version = segment->header.first_version;
  epoch_ = segment->header.epoch;
  allocated_end_ = offset;
  return Status::OK();
}

Status LogImpl::Recover(LogRecoveryReport* report) {
  Status s = OpenDirectory();
  if (!s.ok()) return Poison(s);
  // Taken back before anything else, whatever the tail turns out to be.
  const CleanClose closed = TakeCleanClose();
  s = RecoverParts(closed, report);
  if (s.ok()) return s;
  // Refused, the log as it was: the clean close's word stands, so that
  // opening again refuses again instead of taking damage for a torn write.
  if (s.IsCorruption() && closed.clean) RecordCleanClose(closed.newest);
  return Poison(s);
}

Status LogImpl::RecoverParts(const CleanClose& closed, LogRecoveryReport* report) {
  std::vector<FoundSegment> found;
  SPOOL_RETURN_IF_ERROR(LoadSegments(&found));
  if (found.empty()) return StartFirstSegment(report);
  std::vector<FoundSegment*> chain;
  std::vector<uint64_t> cut;
  SPOOL_RETURN_IF_ERROR(BuildChain(found, &chain, &cut));
  SPOOL_RETURN_IF_ERROR(AdoptChain(chain));
  report->segments = segments_.size();
  if (options_.read_only && options_.oldest_only) return AssumeActiveRecords();
  SPOOL_RETURN_IF_ERROR(CheckNewestEpoch());
  if (!options_.read_only) SPOOL_RETURN_IF_ERROR(FinishTruncation(cut, report));
  if (options_.salvage) SPOOL_RETURN_IF_ERROR(SalvageSealed(report));
  return RecoverActiveTail(closed, report);
}

// A log without segments: a new one (segment 1, epoch 1), unless META says
// segments were retained, which are then lost.
Status LogImpl::StartFirstSegment(LogRecoveryReport* report) {
  if (meta_.floor_segment != 1) return Status::Corruption("every segment of log " + dir_ + " is missing");
  if (options_.read_only) return Status::NotFound("log " + dir_ + " has no segments yet");
  logfmt::SegmentHeader first;
  first.store_id = meta_.store_id;
  first.number = 1;
  first.epoch = 1;
  first.first_version = 1;
  std::shared_ptr<Segment> segment;
  SPOOL_RETURN_IF_ERROR(CreateSegment(first, &segment));
  segments_.push_back(std::move(segment));
  next_segment_number_ = 2;
  allocated_end_ = logfmt::kSegmentHeaderBytes;
  report->segments = 1;
  return Status::OK();
}

// LogOptions::oldest_only: the active segment's records are not looked
// for: one is assumed where there are bytes, for a read of the oldest
// commit to find.
Status LogImpl::AssumeActiveRecords() {
  Segment* active = segments_.back().get();
  uint64_t size = 0;
  SPOOL_RETURN_IF_ERROR(active->file->Size(&size));
  active->data_end = size;
  if (size > logfmt::kSegmentHeaderBytes) active->last_version = active->header.first_version;
  return Status::OK();
}

// The kept segment of an archived cut still holds the cut's records past
// its end: only the successor says where it ends. A truncation that began
// a newer epoch than any segment left — as META or a complete cut says —
// proves the successor lost.
Status LogImpl::CheckNewestEpoch() {
  if (meta_.epoch > epoch_) {
    return Status::Corruption("log " + dir_ + ": META says a truncation began epoch " + std::to_string(meta_.epoch) +
                              ", but the newest segment left is of epoch " + std::to_string(epoch_) +
                              ": the log's newest segments are missing");
  }
  if (CutArchived(epoch_ + 1)) {
    return Status::Corruption("log " + dir_ + ": " + CutDir(epoch_ + 1) +
                              " holds the commits that the truncation starting epoch " + std::to_string(epoch_ + 1) +
                              " cut, but no segment of that epoch is left: the log's newest segments are missing");
  }
  return Status::OK();
}

// An interrupted truncation: one that never reached its commit point leaves
// at most the start of its cut directory, removed; one past it has its
// step 2 redone (`cut`: the segments its successor cut off), archiving when
// its manifest is there and discarding otherwise; and META gets its epoch.
Status LogImpl::FinishTruncation(const std::vector<uint64_t>& cut, LogRecoveryReport* report) {
  const std::string next_cut = CutDir(epoch_ + 1);
  if (options_.env->FileExists(next_cut)) SPOOL_RETURN_IF_ERROR(RemoveArchivedCut(options_.env, next_cut));
  const logfmt::SegmentHeader& newest = segments_.back()->header;
  std::shared_ptr<Segment> kept = segments_.size() >= 2 ? segments_[segments_.size() - 2] : nullptr;
  const bool truncated = newest.epoch > newest.prev_epoch;
  const bool archiving = truncated && CutDirPrepared(newest.epoch);
  if (!cut.empty() || (archiving && !CutArchived(newest.epoch))) {
    SPOOL_RETURN_IF_ERROR(CompleteCut(kept.get(), newest, cut, /*discard_suffix=*/!archiving));
    report->truncation_completed = true;
  }
  // A truncation (not the log's first segment, epoch 1) that stopped
  // before META recorded its epoch.
  if (truncated && newest.epoch > 1 && meta_.epoch < newest.epoch) {
    meta_.epoch = newest.epoch;
    SPOOL_RETURN_IF_ERROR(WriteMeta());
  }
  return Status::OK();
}

}  // namespace spool
