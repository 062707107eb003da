// TruncateAfter and retention: the two operations that remove commits.
//
// Truncation protocol (docs/log_format.md, "Truncation"):
//   0. To archive the cut (rather than discard it): create its directory,
//      link into it the kept segment S and every later segment, and write
//      the manifest naming their records that the cut takes (S's past the
//      end X of the last kept record), all synced.
//   1. Create segment N of epoch E+1 whose header names S and X. N's durable
//      creation is the commit point: from then on S is read only up to X,
//      and segments numbered between S and N are the cut suffix.
//   2. Remove the later segments from the log directory; then, archiving,
//      write the cut's COMPLETE marker.
// A crash before 1 leaves the old log (and perhaps a cut directory that the
// next truncation to that epoch replaces); after it, reopening redoes 2,
// archiving when the manifest is there and discarding otherwise. S keeps its
// bytes past X (no byte of the cut is copied) until retention deletes it;
// it is never written or truncated again, since an archive may link it.
#include <algorithm>

#include "cut_manifest.h"
#include "invariant.h"
#include "kill_point.h"
#include "log_impl.h"
#include "record_scanner.h"

namespace spool {

std::string LogImpl::CutDir(uint64_t new_epoch) const {
  return JoinPath(archive_dir(), cutfmt::ArchiveName(new_epoch));
}

Status LogImpl::WriteMeta() {
  return WriteFileAtomically(options_.env, JoinPath(dir_, logfmt::kMetaFileName), logfmt::EncodeMeta(meta_));
}

// One truncation's state, from finding the cut to adopting the new epoch.
struct LogImpl::Truncation {
  uint64_t version = 0;  // the last version kept
  bool discard_suffix = false;
  std::shared_ptr<Segment> kept;     // S, which holds `version`; null when `version` is 0
  uint64_t kept_end = 0;             // where S's records end before the cut
  std::vector<uint64_t> cut;         // the segments after S, by number
  std::vector<cutfmt::Piece> moved;  // the records of the cut segments
  uint64_t next_version = 0;         // past every version ever assigned
  uint64_t last_timestamp_us = 0;    // of the newest commit before the cut
  logfmt::SegmentHeader successor;   // N, whose creation is the commit point
  // The new epoch's first commit, framed, when the caller gives one.
  std::string first_record;
  uint64_t first_timestamp_us = 0;
};

Status LogImpl::DoTruncate(uint64_t version, bool discard_suffix, LogPosition* new_head,
                           const std::string* first_payload, uint8_t first_flags, LogCommit* first_commit) {
  Truncation t;
  t.version = version;
  t.discard_suffix = discard_suffix;
  SPOOL_RETURN_IF_ERROR(FindCut(&t));
  SPOOL_RETURN_IF_ERROR(MakeSuccessor(&t));
  // The new epoch's first commit, if any, goes into the segment before it
  // exists under its name: it is part of the commit point.
  if (first_payload != nullptr) FrameFirstCommit(*first_payload, first_flags, &t);
  // Steps 0 and 1 (the commit point).
  if (!discard_suffix) SPOOL_RETURN_IF_ERROR(PrepareCutDir(t.kept.get(), t.successor, t.kept_end, std::move(t.moved)));
  std::shared_ptr<Segment> next;
  SPOOL_KILL_POINT("log.truncate.cut_dir_prepared");
  Status s = CreateSegment(t.successor, &next, t.first_record, t.first_timestamp_us);
  if (!s.ok()) return Poison(s);
  SPOOL_KILL_POINT("log.truncate.committed");
  AdoptSuccessor(t, std::move(next));
  *new_head = LogPosition{t.successor.epoch, version};
  if (first_payload != nullptr) {
    *first_commit = LogCommit{LogPosition{t.successor.epoch, t.successor.first_version}, t.first_timestamp_us};
    std::lock_guard<std::mutex> lock(mu_);
    stats_.appends += 1;
    stats_.bytes_appended += t.first_record.size();
  }
  // Step 2, its COMPLETE marker synced last: META's syncs take its
  // creation to the disk with their own where the file system journals,
  // which leaves that last sync little to do.
  s = CompleteCut(t.kept.get(), t.successor, t.cut, discard_suffix, /*sync_marker=*/false);
  if (!s.ok()) return Poison(s);
  SPOOL_KILL_POINT("log.truncate.completed");
  // META remembers the epoch, so that losing its segments is detected even
  // after the cut's archive is gone (vacuumed, or never kept).
  meta_.epoch = t.successor.epoch;
  s = WriteMeta();
  if (s.ok() && !discard_suffix) s = options_.env->SyncDir(CutDir(t.successor.epoch));
  if (!s.ok()) return Poison(s);
  return Status::OK();
}

// Which segment keeps `t->version` (S) and which segments the cut takes,
// checking that the version can be truncated after.
Status LogImpl::FindCut(Truncation* t) {
  const uint64_t version = t->version;
  std::lock_guard<std::mutex> lock(mu_);
  const Segment& front = *segments_.front();
  const uint64_t oldest = front.header.first_version;
  const uint64_t newest = NewestLocked().version;
  t->next_version = segments_.back()->last_version + 1;
  t->last_timestamp_us = segments_.back()->last_timestamp_us;
  if (version > newest) {
    return Status::InvalidArgument("cannot truncate after version " + std::to_string(version) +
                                   ": the newest version is " + std::to_string(newest));
  }
  if (version == 0 ? front.header.prev_last_version != 0 : version < oldest) {
    return Status::NotFound("version " + std::to_string(version) + " is older than the oldest retained version " +
                            std::to_string(oldest));
  }
  for (const auto& segment : segments_) {
    if (version >= segment->header.first_version && version <= segment->last_version) {
      t->kept = segment;
      t->kept_end = segment->data_end;
    } else if (t->kept != nullptr || version == 0) {
      t->cut.push_back(segment->header.number);
      // A segment that an earlier cut kept ends before its file does.
      if (segment->data_end > logfmt::kSegmentHeaderBytes) {
        t->moved.push_back(cutfmt::Piece{logfmt::SegmentFileName(segment->header.number), logfmt::kSegmentHeaderBytes,
                                         segment->data_end, segment->header.first_version});
      }
    }
  }
  if (t->kept == nullptr && version != 0) {
    return Status::NotFound("cannot truncate after version " + std::to_string(version) +
                            ": it is not on the log's history (an earlier truncation cut it)");
  }
  return Status::OK();
}

// The header of N: the new epoch, starting past every version ever
// assigned, and its predecessor pointer (S, version, X), X found by reading
// S's records up to the end of `t->version`.
Status LogImpl::MakeSuccessor(Truncation* t) {
  logfmt::SegmentHeader& header = t->successor;
  header.store_id = meta_.store_id;
  header.number = next_segment_number_;
  header.epoch = epoch_ + 1;
  header.first_version = t->next_version;
  if (t->kept == nullptr) return Status::OK();
  const Segment& kept = *t->kept;
  std::shared_ptr<Segment> located;
  IndexEntry from;
  SPOOL_RETURN_IF_ERROR(Locate(t->version, &located, &from));
  SPOOL_CHECK(located == t->kept, "the kept segment holds the rewind's version");
  RecordScanner scanner(kept.file.get(), meta_.store_id, kept.header.epoch, from.offset, kept.data_end, from.version);
  logfmt::RecordHeader record;
  std::string_view payload;
  while (scanner.next_version() <= t->version && scanner.Next(&record, &payload)) {
  }
  if (scanner.next_version() != t->version + 1) {
    return Status::Corruption("cannot find the end of version " + std::to_string(t->version) + " in " + kept.path);
  }
  header.prev_number = kept.header.number;
  header.prev_epoch = kept.header.epoch;
  header.prev_last_version = t->version;
  header.prev_end_offset = scanner.offset();
  header.prev_last_timestamp_us = record.timestamp_us;
  return Status::OK();
}

// Frames the new epoch's first commit, committed after the newest before
// the cut.
void LogImpl::FrameFirstCommit(const std::string& payload, uint8_t flags, Truncation* t) {
  t->first_timestamp_us = std::max(options_.env->NowMicros(), t->last_timestamp_us + 1);
  logfmt::RecordHeader record;
  record.flags = static_cast<uint8_t>(flags | logfmt::kFlagAfterSync);
  record.epoch = t->successor.epoch;
  record.version = t->successor.first_version;
  record.timestamp_us = t->first_timestamp_us;
  logfmt::AppendRecord(meta_.store_id, record, payload, &t->first_record);
}

// After the commit point: N is the segment being written, the cut segments
// leave the chain, and S ends at X (its index with it).
void LogImpl::AdoptSuccessor(const Truncation& t, std::shared_ptr<Segment> next) {
  const logfmt::SegmentHeader& header = t.successor;
  ++next_segment_number_;
  allocated_end_ = next->data_end;
  previous_group_synced_ = true;
  unsynced_data_ = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch_ = header.epoch;
    segments_.erase(std::remove_if(segments_.begin(), segments_.end(),
                                   [&](const auto& seg) {
                                     return std::find(t.cut.begin(), t.cut.end(), seg->header.number) != t.cut.end();
                                   }),
                    segments_.end());
    if (t.kept != nullptr) {
      t.kept->data_end = header.prev_end_offset;
      t.kept->last_version = t.version;
      t.kept->last_timestamp_us = header.prev_last_timestamp_us;
    }
    segments_.push_back(std::move(next));
  }
  if (t.kept != nullptr) {
    std::lock_guard<std::mutex> lock(t.kept->index_mu);
    std::vector<IndexEntry>& index = t.kept->index;
    while (!index.empty() && index.back().version > t.version) index.pop_back();
    if (t.kept->indexed_next_version > t.version + 1) {
      t.kept->indexed_end = header.prev_end_offset;
      t.kept->indexed_next_version = t.version + 1;
    }
  }
}

// Step 0: the cut's directory, holding a link to each file with records of
// the cut and the manifest that says which records, all durable before the
// commit point. Everything is written first and synced after, the manifest
// first: where the file system journals, its sync commits the directories'
// changes with it, and theirs find little left to do.
Status LogImpl::PrepareCutDir(const Segment* kept, const logfmt::SegmentHeader& successor, uint64_t kept_end,
                              std::vector<cutfmt::Piece> moved) {
  Env* env = options_.env;
  const std::string root = archive_dir();
  const std::string dir = CutDir(successor.epoch);
  const bool new_root = !env->FileExists(root);
  if (new_root) SPOOL_RETURN_IF_ERROR(env->CreateDir(root));
  // Left by a truncation to this epoch that never reached its commit point.
  if (env->FileExists(dir)) SPOOL_RETURN_IF_ERROR(RemoveArchivedCut(env, dir));
  SPOOL_RETURN_IF_ERROR(env->CreateDir(dir));
  cutfmt::Manifest manifest;
  if (kept != nullptr && kept_end > successor.prev_end_offset) {
    manifest.pieces.push_back(cutfmt::Piece{logfmt::SegmentFileName(kept->header.number), successor.prev_end_offset,
                                            kept_end, successor.prev_last_version + 1});
  }
  manifest.pieces.insert(manifest.pieces.end(), std::make_move_iterator(moved.begin()),
                         std::make_move_iterator(moved.end()));
  for (const cutfmt::Piece& piece : manifest.pieces) {
    SPOOL_RETURN_IF_ERROR(env->LinkFile(JoinPath(dir_, piece.file_name), JoinPath(dir, piece.file_name)));
  }
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(JoinPath(dir, cutfmt::kManifestName), OpenMode::kTruncate, &file));
  SPOOL_RETURN_IF_ERROR(file->Write(0, cutfmt::EncodeManifest(manifest)));
  SPOOL_RETURN_IF_ERROR(file->Sync());
  SPOOL_RETURN_IF_ERROR(file->Close());
  if (new_root) SPOOL_RETURN_IF_ERROR(env->SyncDir(DirName(root)));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(root));
  return env->SyncDir(dir);
}

bool LogImpl::CutDirPrepared(uint64_t new_epoch) {
  return options_.env->FileExists(JoinPath(CutDir(new_epoch), cutfmt::kManifestName));
}

bool LogImpl::CutArchived(uint64_t new_epoch) { return ArchivedCutComplete(options_.env, CutDir(new_epoch)); }

// Step 2; idempotent, so recovery can redo it. The cut segments leave the
// log directory (archived, their links stay in the cut's directory), and
// the cut's COMPLETE marker follows — synced unless `sync_marker` is false,
// when the caller syncs the cut's directory before it returns.
Status LogImpl::CompleteCut(const Segment* kept, const logfmt::SegmentHeader& successor,
                            const std::vector<uint64_t>& cut_segments, bool discard_suffix, bool sync_marker) {
  Env* env = options_.env;
  if (kept != nullptr) RemoveIndex(kept->header.number);  // a stale one never matches S's new end anyway
  for (uint64_t number : cut_segments) {
    RemoveIndex(number);
    Status s = env->RemoveFile(SegmentPath(number));
    if (!s.ok() && !s.IsNotFound()) return s;
  }
  if (!cut_segments.empty()) SPOOL_RETURN_IF_ERROR(env->SyncDir(dir_));
  SPOOL_KILL_POINT("log.truncate.cut_segments_removed");
  if (discard_suffix || CutArchived(successor.epoch)) return Status::OK();
  const std::string dir = CutDir(successor.epoch);
  std::unique_ptr<File> marker;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(JoinPath(dir, cutfmt::kCompleteName), OpenMode::kCreate, &marker));
  SPOOL_RETURN_IF_ERROR(marker->Close());
  return sync_marker ? env->SyncDir(dir) : Status::OK();
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
  SPOOL_KILL_POINT("log.retention.meta_written");
  for (size_t i = 0; s.ok() && i < doomed.size(); ++i) {
    s = options_.env->RemoveFile(doomed[i]->path);
    SPOOL_KILL_POINT("log.retention.segment_removed");
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
