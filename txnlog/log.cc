// The Log's request queue, group commit, and its read paths.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "invariant.h"
#include "kill_point.h"
#include "log_impl.h"
#include "payload.h"
#include "record_scanner.h"

namespace spool {

struct LogImpl::Op {
  enum class Kind : uint8_t { kAppend, kTruncate, kRetention, kFlush };
  Kind kind = Kind::kAppend;
  // kAppend
  std::string payload;
  uint8_t flags = 0;
  flatbuffers::DetachedBuffer entry;  // the payload uncompressed, until the leader compresses it
  bool payload_ready = true;          // payload and flags are made
  bool sync = true;                   // LogWrite::sync
  bool async = false;                 // AppendAsync's: no thread waits to lead it
  uint64_t payload_bytes = 0;
  LogCommit* commit = nullptr;
  // kTruncate (with `payload`, `flags` and `commit` of its first commit
  // when `first`), kRetention
  bool first = false;
  uint64_t version = 0;
  bool discard = false;
  LogPosition* new_head = nullptr;
  uint64_t* deleted = nullptr;
  // Outcome, guarded by mu_.
  Status status;
  bool done = false;
  std::condition_variable cv;
  // Set (under mu_) when done or at the front; read while spinning without it.
  std::atomic<bool> woken{false};
};

LogImpl::LogImpl(const LogOptions& options, std::string dir) : options_(options), dir_(std::move(dir)) {}

LogImpl::~LogImpl() {
  async_leader_.Wait();
  // Make kNoSync appends durable on a clean close; errors are for Flush().
  if (options_.read_only || !poisoned_.ok() || segments_.empty()) return;
  if (unsynced_data_ && !segments_.back()->file->Sync().ok()) return;
  RecordCleanClose(Newest());
}

Status Log::Open(const LogOptions& options, const std::string& dir, std::unique_ptr<Log>* log,
                 LogRecoveryReport* report) {
  if (options.segment_size_bytes < logfmt::kMinSegmentBytes || options.segment_size_bytes > logfmt::kMaxSegmentBytes) {
    return Status::InvalidArgument("segment_size_bytes must be between " + std::to_string(logfmt::kMinSegmentBytes) +
                                   " and " + std::to_string(logfmt::kMaxSegmentBytes));
  }
  auto impl = std::make_unique<LogImpl>(options, dir);
  LogRecoveryReport ignored;
  SPOOL_RETURN_IF_ERROR(impl->Recover(report != nullptr ? report : &ignored));
  *log = std::move(impl);
  return Status::OK();
}

Status LogImpl::CheckWritable() {
  if (options_.read_only) return Status::NotSupported("log " + dir_ + " is open read-only");
  return poisoned_;
}

Status LogImpl::Poison(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (poisoned_.ok()) poisoned_ = Status::Failed("log " + dir_ + " refuses writes after: " + s.ToString());
  return s;
}

// --- The queue.

Status LogImpl::MakeAppend(const LogWrite& write, bool compress, Op* op) {
  op->kind = Op::Kind::kAppend;
  op->payload_bytes = write.operation.size() + write.body.size();
  op->sync = write.sync;
  SPOOL_RETURN_IF_ERROR(WrapPayload(write, &op->entry));
  op->payload_ready = compress;
  if (compress) MakePayload(op);
  return Status::OK();
}

void LogImpl::MakePayload(Op* op) {
  // An async append's committer is not waiting for its payload.
  CompressPayload(EntryBytes(op->entry), options_.compress_min_bytes, /*split_big=*/!op->async, &op->payload,
                  &op->flags);
  op->entry = {};
}

Status LogImpl::Append(const LogWrite& write, LogCommit* commit) {
  Op op;
  op.commit = commit;
  SPOOL_RETURN_IF_ERROR(MakeAppend(write, /*compress=*/true, &op));
  return Submit(&op);
}

class LogImpl::Pending final : public PendingAppend {
 public:
  explicit Pending(LogImpl* log) : log_(log) {
    op.async = true;
    op.commit = &commit;
  }
  ~Pending() override { (void)Wait(nullptr); }

  Status Wait(LogCommit* out) override {
    std::unique_lock<std::mutex> lock(log_->mu_);
    op.cv.wait(lock, [&] { return op.done; });
    if (out != nullptr) *out = commit;
    return op.status;
  }

  Op op;
  LogCommit commit;

 private:
  LogImpl* log_;
};

Status LogImpl::AppendAsync(const LogWrite& write, std::unique_ptr<PendingAppend>* pending) {
  auto append = std::make_unique<Pending>(this);
  Op* op = &append->op;
  Status s = MakeAppend(write, /*compress=*/false, op);
  std::unique_lock<std::mutex> lock(mu_);
  if (s.ok()) s = CheckWritable();
  if (!s.ok()) {
    op->done = true;  // never queued
    return s;
  }
  Enqueue(op, lock);
  LeadAsyncAppends(lock);
  *pending = std::move(append);
  return Status::OK();
}

void LogImpl::Enqueue(Op* op, std::unique_lock<std::mutex>& lock) {
  room_cv_.wait(lock, [&] { return queue_.size() < logfmt::kMaxQueuedAppends; });
  queue_.push_back(op);
  queued_.store(queue_.size(), std::memory_order_release);
  if (queue_.front() != op) queue_.front()->cv.notify_one();  // a group window may be waiting
}

void LogImpl::LeadAsyncAppends(std::unique_lock<std::mutex>& lock) {
  if (async_leading_ || queue_.empty() || !queue_.front()->async) return;
  async_leading_ = true;
  lock.unlock();
  async_leader_.Start([this] {
    std::unique_lock<std::mutex> lead(mu_);
    while (!queue_.empty() && queue_.front()->async) RunAsLeader(queue_.front(), lead);
    async_leading_ = false;
  });
  lock.lock();
}

Status LogImpl::Submit(Op* op) {
  std::unique_lock<std::mutex> lock(mu_);
  SPOOL_RETURN_IF_ERROR(CheckWritable());
  Enqueue(op, lock);
  if (queue_.front() != op) {
    const uint64_t spin_us =
        std::min<uint64_t>(2 * sync_micros_average_.load(std::memory_order_relaxed), kMaxSpinMicros);
    lock.unlock();
    SpinUntil([op] { return op->woken.load(std::memory_order_acquire); }, spin_us);
    lock.lock();
  }
  op->cv.wait(lock, [&] { return op->done || queue_.front() == op; });
  if (!op->done) RunAsLeader(op, lock);
  LeadAsyncAppends(lock);  // one queued behind this op's group
  return op->status;
}

void LogImpl::RunAsLeader(Op* op, std::unique_lock<std::mutex>& lock) {
  std::vector<Op*> members;
  Status s = poisoned_;
  if (s.ok() && op->kind == Op::Kind::kAppend) {
    WaitForGroup(op, lock);
    CompressQueued(lock);
    CollectGroup(&members);
    lock.unlock();
    s = WriteGroup(members);
    lock.lock();
  } else {
    members.push_back(op);
    if (s.ok()) {
      lock.unlock();
      s = RunExclusiveOp(op);
      lock.lock();
    }
  }
  for (Op* member : members) {
    SPOOL_CHECK(queue_.front() == member, "a group's members leave the queue in its order");
    queue_.pop_front();
    member->status = s;
    member->done = true;
    member->woken.store(true, std::memory_order_release);
    if (member != op || member->async) member->cv.notify_one();  // an async one may have a waiter
  }
  queued_.store(queue_.size(), std::memory_order_release);
  if (!queue_.empty()) {
    queue_.front()->woken.store(true, std::memory_order_release);
    queue_.front()->cv.notify_one();
  }
  room_cv_.notify_all();
}

// REQUIRES: mu_ held; `op` leads. Gives committers a moment to join the
// group before it is written. kGroupWindow waits the configured window.
// kSync waits only when the previous group had more members than are
// queued now: those committers are likely on their way back with their
// next commit (a closed loop of N writers otherwise settles into groups
// alternating between k and N - k). The wait is bounded by half the
// measured sync time, so it never costs more than it can save; a single
// writer never waits.
void LogImpl::WaitForGroup(Op* op, std::unique_lock<std::mutex>& lock) {
  if (options_.durability == Durability::kGroupWindow && options_.group_window_us > 0) {
    op->cv.wait_for(lock, std::chrono::microseconds(options_.group_window_us),
                    [this] { return queue_.size() >= logfmt::kMaxGroupRecords; });
    return;
  }
  const size_t expected = static_cast<size_t>(previous_group_size_);
  if (options_.durability != Durability::kSync || expected <= 1 || queue_.size() >= expected) return;
  const uint64_t wait_us = std::clamp<uint64_t>(sync_micros_average_.load(std::memory_order_relaxed) / 2,
                                                kMinGroupWaitMicros, kMaxGroupWaitMicros);
  lock.unlock();
  SpinUntil([this, expected] { return queued_.load(std::memory_order_acquire) >= expected; }, wait_us);
  lock.lock();
}

void LogImpl::CompressQueued(std::unique_lock<std::mutex>& lock) {
  std::vector<Op*> queued;
  for (Op* op : queue_) {
    if (op->kind != Op::Kind::kAppend || queued.size() >= logfmt::kMaxGroupRecords) break;
    if (!op->payload_ready) queued.push_back(op);
  }
  if (queued.empty()) return;
  // Ops stay where they are while their leader works: only a leader takes
  // them off the queue, and only a leader reads their payloads.
  lock.unlock();
  for (Op* op : queued) MakePayload(op);
  lock.lock();
  for (Op* op : queued) op->payload_ready = true;
}

// REQUIRES: mu_ held. Assigns versions and timestamps to the appends at the
// front of the queue, in order, up to the first one without its payload yet.
void LogImpl::CollectGroup(std::vector<Op*>* group) {
  const Segment& active = *segments_.back();
  uint64_t version = active.last_version;
  uint64_t timestamp_us = active.last_timestamp_us;
  uint64_t bytes = 0;
  for (Op* op : queue_) {
    if (op->kind != Op::Kind::kAppend || !op->payload_ready || group->size() >= logfmt::kMaxGroupRecords) break;
    if (!group->empty() && bytes + op->payload.size() > logfmt::kMaxGroupBytes) break;
    bytes += logfmt::RecordBytes(op->payload.size());
    timestamp_us = std::max(options_.env->NowMicros(), timestamp_us + 1);
    op->commit->position = LogPosition{epoch_, ++version};
    op->commit->timestamp_us = timestamp_us;
    group->push_back(op);
  }
}

// Writes `group` at the end of the active segment with one write and (in the
// sync modes, unless no member asks for it) one sync. Runs as the leader, without mu_.
Status LogImpl::WriteGroup(const std::vector<Op*>& group) {
  uint64_t bytes = 0;
  for (const Op* op : group) bytes += logfmt::RecordBytes(op->payload.size());
  Status s = EnsureRoomFor(bytes);
  if (!s.ok()) return Poison(s);
  Segment* active = segments_.back().get();
  const uint64_t start = active->data_end;
  group_buffer_.clear();
  std::vector<IndexEntry> new_index;
  for (size_t i = 0; i < group.size(); ++i) {
    const Op* op = group[i];
    logfmt::RecordHeader header;
    header.flags = static_cast<uint8_t>(op->flags | (previous_group_synced_ ? logfmt::kFlagAfterSync : 0));
    header.group_index = static_cast<uint16_t>(i);
    header.epoch = op->commit->position.epoch;
    header.version = op->commit->position.version;
    header.timestamp_us = op->commit->timestamp_us;
    new_index.push_back(IndexEntry{header.version, header.timestamp_us, start + group_buffer_.size()});
    logfmt::AppendRecord(meta_.store_id, header, op->payload, &group_buffer_);
  }
  SPOOL_CHECK(group_buffer_.size() == bytes, "a group's records fill the bytes it measured");
  s = Preallocate(start + bytes);
  SPOOL_KILL_POINT("log.append.before_write");
  if (s.ok()) s = active->file->Write(start, group_buffer_);
  SPOOL_KILL_POINT("log.append.written");
  const bool sync = options_.durability != Durability::kNoSync &&
                    std::any_of(group.begin(), group.end(), [](const Op* member) { return member->sync; });
  if (s.ok() && sync) {
    const uint64_t sync_start_us = options_.env->NowMicros();
    s = active->file->Sync();
    SPOOL_KILL_POINT("log.append.synced");
    const uint64_t sync_us = options_.env->NowMicros() - sync_start_us;
    const uint64_t average = sync_micros_average_.load(std::memory_order_relaxed);
    sync_micros_average_.store((average * 7 + std::min(sync_us, kMaxSpinMicros * 4)) / 8, std::memory_order_relaxed);
  }
  if (!s.ok()) return Poison(s);
  previous_group_size_ = group.size();
  previous_group_synced_ = sync;
  unsynced_data_ = !sync;
  for (const IndexEntry& entry : new_index) AddIndexEntry(active, entry);
  {
    std::lock_guard<std::mutex> index_lock(active->index_mu);
    active->indexed_end = start + bytes;
    active->indexed_next_version = group.back()->commit->position.version + 1;
  }
  std::lock_guard<std::mutex> lock(mu_);
  active->data_end = start + bytes;
  active->last_version = group.back()->commit->position.version;
  active->last_timestamp_us = group.back()->commit->timestamp_us;
  stats_.appends += group.size();
  stats_.groups += 1;
  stats_.syncs += sync ? 1 : 0;
  stats_.bytes_appended += bytes;
  for (const Op* op : group) stats_.payload_bytes += op->payload_bytes;
  return Status::OK();
}

Status LogImpl::RunExclusiveOp(Op* op) {
  switch (op->kind) {
    case Op::Kind::kTruncate:
      return DoTruncate(op->version, op->discard, op->new_head, op->first ? &op->payload : nullptr, op->flags,
                        op->commit);
    case Op::Kind::kRetention:
      return DoRetention(op->version, op->deleted);
    case Op::Kind::kFlush: {
      if (!unsynced_data_) return Status::OK();
      Status s = segments_.back()->file->Sync();
      if (!s.ok()) return Poison(s);
      unsynced_data_ = false;
      previous_group_synced_ = true;
      std::lock_guard<std::mutex> lock(mu_);
      stats_.syncs += 1;
      return Status::OK();
    }
    case Op::Kind::kAppend:
      break;
  }
  SPOOL_UNREACHABLE("appends run in groups, never as an exclusive op");
}

Status LogImpl::TruncateAfter(uint64_t version, bool discard_suffix, LogPosition* new_head, const LogWrite* first,
                              LogCommit* first_commit) {
  Op op;
  LogCommit ignored_commit;
  if (first != nullptr) {
    SPOOL_RETURN_IF_ERROR(CheckWritable());
    SPOOL_RETURN_IF_ERROR(EncodePayload(*first, options_.compress_min_bytes, &op.payload, &op.flags));
    op.first = true;
    op.commit = first_commit != nullptr ? first_commit : &ignored_commit;
  }
  op.kind = Op::Kind::kTruncate;
  op.version = version;
  op.discard = discard_suffix;
  LogPosition ignored;
  op.new_head = new_head != nullptr ? new_head : &ignored;
  SPOOL_RETURN_IF_ERROR(Submit(&op));
  if (first != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.payload_bytes += first->operation.size() + first->body.size();
  }
  return Status::OK();
}

Status LogImpl::DeleteSegmentsBefore(uint64_t pinned_version, uint64_t* deleted) {
  Op op;
  op.kind = Op::Kind::kRetention;
  op.version = pinned_version;
  uint64_t ignored = 0;
  op.deleted = deleted != nullptr ? deleted : &ignored;
  *op.deleted = 0;
  return Submit(&op);
}

Status LogImpl::Flush() {
  Op op;
  op.kind = Op::Kind::kFlush;
  return Submit(&op);
}

// --- Positions.

LogPosition LogImpl::Oldest() {
  std::lock_guard<std::mutex> lock(mu_);
  const Segment& first = *segments_.front();
  if (NewestLocked().version == 0) return LogPosition{epoch_, 0};
  return LogPosition{first.header.epoch, first.header.first_version};
}

LogPosition LogImpl::Newest() {
  std::lock_guard<std::mutex> lock(mu_);
  return NewestLocked();
}

LogPosition LogImpl::NewestLocked() const {
  const Segment& last = *segments_.back();
  if (last.last_version >= last.header.first_version) return LogPosition{last.header.epoch, last.last_version};
  // An empty segment: its predecessor's end, which a truncation to version
  // 0 (or a new log) leaves at nothing.
  if (last.header.prev_last_version == 0) return LogPosition{epoch_, 0};
  return LogPosition{last.header.prev_epoch, last.header.prev_last_version};
}

LogPosition LogImpl::BeforeOldest() {
  std::lock_guard<std::mutex> lock(mu_);
  const logfmt::SegmentHeader& front = segments_.front()->header;
  return LogPosition{front.prev_epoch, front.prev_last_version};
}

uint64_t LogImpl::NextVersion() {
  std::lock_guard<std::mutex> lock(mu_);
  return segments_.back()->last_version + 1;
}

uint64_t LogImpl::CurrentEpoch() {
  std::lock_guard<std::mutex> lock(mu_);
  return epoch_;
}

std::vector<LogEpochStart> LogImpl::EpochHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LogEpochStart> history;
  for (const auto& segment : segments_) {
    if (history.empty() || history.back().epoch != segment->header.epoch) {
      history.push_back(LogEpochStart{segment->header.epoch, segment->header.first_version});
    }
  }
  return history;
}

std::vector<LogSegmentInfo> LogImpl::Segments() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LogSegmentInfo> infos;
  for (const auto& segment : segments_) {
    LogSegmentInfo info;
    const logfmt::SegmentHeader& h = segment->header;
    info.number = h.number;
    info.file_name = logfmt::SegmentFileName(h.number);
    info.epoch = h.epoch;
    info.first_version = h.first_version;
    info.last_version = segment->last_version;
    info.data_end_bytes = segment->data_end;
    (void)segment->file->Size(&info.file_size_bytes);
    info.previous = LogPosition{h.prev_epoch, h.prev_last_version};
    info.previous_segment = h.prev_number;
    infos.push_back(info);
  }
  return infos;
}

LogStats LogImpl::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  LogStats stats = stats_;
  stats.queued = queue_.size();
  return stats;
}

}  // namespace spool
