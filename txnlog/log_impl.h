// LogImpl: the implementation behind Log. Internal to txnlog.
//
// Layout in memory: `segments_` is the live chain, oldest first; the last
// one is being written. A Segment's immutable fields never change; its
// mutable ones (the end of its data and its last version) are guarded by
// LogImpl::mu_ and only grow while it is the active segment.
//
// Writing: every mutating request (append, truncate, retention, flush) is an
// Op in `queue_`. The Op at the front is the leader: it alone writes files,
// without holding mu_. An append leader takes the appends behind it into its
// group, writes them with one write and one sync, then wakes them all.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cut_manifest.h"
#include "helper_thread.h"
#include "log_format.h"
#include "spool/txnlog/log.h"

namespace spool {

// Bounds of the wait a sync-mode leader allows for expected committers.
inline constexpr uint64_t kMinGroupWaitMicros = 20;
inline constexpr uint64_t kMaxGroupWaitMicros = 500;
// A queued committer spins (yielding) at most this long before sleeping.
inline constexpr uint64_t kMaxSpinMicros = 1000;
static_assert(kMaxGroupWaitMicros <= kMaxSpinMicros);

// A sparse index entry: the record of `version` starts at `offset`.
struct IndexEntry {
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
  uint64_t offset = 0;
};

struct Segment {
  logfmt::SegmentHeader header;
  std::string path;
  std::shared_ptr<File> file;  // read handle; the active segment's is also written

  // Guarded by LogImpl::mu_.
  uint64_t data_end = 0;
  uint64_t last_version = 0;  // header.first_version - 1 when empty
  uint64_t last_timestamp_us = 0;

  // The sparse index, complete up to `indexed_end`. Guarded by index_mu.
  std::mutex index_mu;
  std::vector<IndexEntry> index;
  uint64_t indexed_end = 0;
  uint64_t indexed_next_version = 0;
};

class LogImpl final : public Log {
 public:
  LogImpl(const LogOptions& options, std::string dir);
  ~LogImpl() override;

  Status Append(const LogWrite& write, LogCommit* commit) override;
  Status AppendAsync(const LogWrite& write, std::unique_ptr<PendingAppend>* pending) override;
  using Log::TruncateAfter;
  Status TruncateAfter(uint64_t version, bool discard_suffix, LogPosition* new_head, const LogWrite* first,
                       LogCommit* first_commit) override;
  Status NewIterator(uint64_t from_version, std::unique_ptr<LogIterator>* iterator) override;
  Status Read(uint64_t version, LogEntry* entry) override;
  Status VersionAtTime(uint64_t timestamp_us, uint64_t* version) override;
  LogPosition Oldest() override;
  LogPosition Newest() override;
  uint64_t NextVersion() override;
  LogPosition BeforeOldest() override;
  uint64_t CurrentEpoch() override;
  uint64_t StoreId() override { return meta_.store_id; }
  std::vector<LogEpochStart> EpochHistory() override;
  Status DeleteSegmentsBefore(uint64_t pinned_version, uint64_t* deleted) override;
  std::vector<LogSegmentInfo> Segments() override;
  LogStats Stats() override;
  Status Flush() override;
  Status Refresh(bool* stale) override;
  Status MakeReadDurable() override;

  // Opening (log_recovery.cc). A log it refuses is poisoned: its close
  // then writes nothing (CLOSED says what it said, or "opened").
  Status Recover(LogRecoveryReport* report);

  // The segment holding `version` and the sparse index entry at or before
  // it: reading on from `entry->offset` reaches `version`.
  // Errors: NotFound, Corruption.
  Status Locate(uint64_t version, std::shared_ptr<Segment>* segment, IndexEntry* entry);
  // The segment after `segment` in the chain, or null.
  std::shared_ptr<Segment> NextSegment(const Segment& segment);
  // A consistent view of a segment's end: (data_end, last_version).
  void SegmentEnd(const Segment& segment, uint64_t* data_end, uint64_t* last_version);
  uint64_t store_id() const { return meta_.store_id; }

 private:
  struct Op;
  class Pending;

  // --- The queue (log.cc).
  // Makes `op` the append of `write`. `compress`: its payload now; or
  // later, by whichever thread leads its group (CompressQueued), so that an
  // AppendAsync returns to its committer sooner.
  Status MakeAppend(const LogWrite& write, bool compress, Op* op);
  // The payload of `op`'s entry (compressed when that pays).
  void MakePayload(Op* op);
  // REQUIRES: mu_ held (`lock`). Queues `op` once the queue has room.
  void Enqueue(Op* op, std::unique_lock<std::mutex>& lock);
  Status Submit(Op* op);
  void RunAsLeader(Op* op, std::unique_lock<std::mutex>& lock);
  // Leads the queue on async_leader_ while an AppendAsync's Op is at its
  // front; `lock` is released while the helper is started.
  void LeadAsyncAppends(std::unique_lock<std::mutex>& lock);
  void WaitForGroup(Op* op, std::unique_lock<std::mutex>& lock);
  // REQUIRES: mu_ held (`lock`, released while it works); the caller leads.
  // Makes the payloads of the appends at the front of the queue that were
  // queued without one.
  void CompressQueued(std::unique_lock<std::mutex>& lock);
  void CollectGroup(std::vector<Op*>* group);
  Status WriteGroup(const std::vector<Op*>& group);
  Status RunExclusiveOp(Op* op);

  // --- Segments (log_segments.cc).
  Status EnsureRoomFor(uint64_t bytes);
  Status Preallocate(uint64_t end);
  // `first_record`: a framed record the segment holds from its creation
  // (the first commit of a truncation's epoch): version
  // header.first_version, committed at `first_timestamp_us`.
  Status CreateSegment(const logfmt::SegmentHeader& header, std::shared_ptr<Segment>* segment,
                       std::string_view first_record = {}, uint64_t first_timestamp_us = 0);
  Status EnsureIndexed(Segment* segment, uint64_t version);
  // Sealed segments: saves / adopts the sparse index file. Best effort.
  void SaveIndex(Segment* segment);
  bool LoadIndex(Segment* segment, uint64_t data_end, uint64_t last_version);
  void RemoveIndex(uint64_t segment_number);
  void AddIndexEntry(Segment* segment, const IndexEntry& entry);
  std::string SegmentPath(uint64_t number) const;
  std::string archive_dir() const;

  // --- Opening (log_recovery.cc).
  struct FoundSegment;
  Status OpenDirectory();
  Status LoadSegments(std::vector<FoundSegment>* found);
  void RemoveOrphanIndexes(const std::vector<std::string>& index_files, const std::vector<FoundSegment>& found);
  Status BuildChain(std::vector<FoundSegment>& found, std::vector<FoundSegment*>* chain, std::vector<uint64_t>* cut);
  Status AdoptChain(const std::vector<FoundSegment*>& chain);
  Status StartFirstSegment(LogRecoveryReport* report);
  Status AssumeActiveRecords();
  Status CheckNewestEpoch();
  Status FinishTruncation(const std::vector<uint64_t>& cut, LogRecoveryReport* report);
  // What the last writer's close left in CLOSED (TakeCleanClose).
  struct CleanClose {
    bool clean = false;  // taken back by this open: the tail needs no sync
    LogPosition newest;  // synced then ({0, 0}: not known)
  };
  Status RecoverParts(const CleanClose& closed, LogRecoveryReport* report);
  CleanClose TakeCleanClose();
  Status RecoverActiveTail(const CleanClose& closed, LogRecoveryReport* report);
  void RecordCleanClose(const LogPosition& newest);
  Status CheckKnownDurable(const Segment& active, uint64_t end, const CleanClose& closed);
  Status SalvageSealed(LogRecoveryReport* report);
  Status CutForSalvage(size_t segment_index, uint64_t offset, uint64_t next_version);

  // --- Truncation and retention (log_truncate.cc).
  struct Truncation;
  Status DoTruncate(uint64_t version, bool discard_suffix, LogPosition* new_head, const std::string* first_payload,
                    uint8_t first_flags, LogCommit* first_commit);
  // DoTruncate's steps, in order.
  Status FindCut(Truncation* t);
  Status MakeSuccessor(Truncation* t);
  void FrameFirstCommit(const std::string& payload, uint8_t flags, Truncation* t);
  void AdoptSuccessor(const Truncation& t, std::shared_ptr<Segment> next);
  Status CompleteCut(const Segment* kept, const logfmt::SegmentHeader& successor,
                     const std::vector<uint64_t>& cut_segments, bool discard_suffix, bool sync_marker = true);
  Status PrepareCutDir(const Segment* kept, const logfmt::SegmentHeader& successor, uint64_t kept_end,
                       std::vector<cutfmt::Piece> moved);
  std::string CutDir(uint64_t new_epoch) const;
  bool CutDirPrepared(uint64_t new_epoch);
  bool CutArchived(uint64_t new_epoch);
  Status DoRetention(uint64_t pinned_version, uint64_t* deleted);
  Status WriteMeta();

  // REQUIRES: mu_ held. What Newest() returns.
  LogPosition NewestLocked() const;

  Status Poison(const Status& s);
  Status CheckWritable();

  const LogOptions options_;
  const std::string dir_;
  std::unique_ptr<FileLock> lock_file_;
  logfmt::Meta meta_;

  std::mutex mu_;
  std::condition_variable room_cv_;  // queue_ has room
  std::deque<Op*> queue_;
  Status poisoned_;                                 // first fatal error; sticky
  std::vector<std::shared_ptr<Segment>> segments_;  // the live chain
  uint64_t epoch_ = 1;
  LogStats stats_;

  // Owned by the leader (the Op at the front of queue_).
  uint64_t next_segment_number_ = 1;
  uint64_t allocated_end_ = 0;  // active segment zero-filled up to here
  bool previous_group_synced_ = true;
  bool unsynced_data_ = false;
  uint64_t previous_group_size_ = 0;
  // Read without mu_ by committers deciding how long to spin.
  std::atomic<uint64_t> sync_micros_average_{0};  // exponential moving average
  std::atomic<size_t> queued_{0};                 // queue_.size(), for spinning readers
  std::string group_buffer_;
  // Leads the appends of AppendAsync, which have no thread waiting to lead
  // them; async_leading_ (under mu_) while it does. Last: it stops first.
  bool async_leading_ = false;
  HelperThread async_leader_{"spool-log"};
};

}  // namespace spool
