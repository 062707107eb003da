// Topic on a txnlog Log: producing in groups, finding an offset's record,
// reading through cursors, retention and the TOPIC file. The bytes are in
// topic_format.h.
#include "spool/stream/topic.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "invariant.h"
#include "spool/txnlog/log.h"
#include "topic_format.h"

namespace spool {
namespace {

// A group of concurrent batches stops taking more past this many body
// bytes (its first batch goes whatever its size): records stay small enough
// that finding an offset, which reads whole records, stays cheap.
constexpr uint64_t kMaxGroupBodyBytes = 1ull << 20;
static_assert(kMaxGroupBodyBytes <= kMaxTopicBatchBytes);

LogOptions TopicLogOptions(Env* env, const TopicConfig& config) {
  LogOptions options;
  options.env = env;
  options.durability = Durability::kSync;
  options.segment_size_bytes = config.segment_size_bytes;
  // Zero-fill at most a quarter segment ahead: small segments stay small.
  options.preallocate_bytes = std::min<uint64_t>(1ull << 20, config.segment_size_bytes / 4);
  return options;
}

// Every record of a topic's log is one the topic wrote.
Status CheckOperation(const LogEntry& entry) {
  if (entry.operation == topicfmt::kProduceOperation) return Status::OK();
  return Status::Corruption("operation " + entry.operation + " is not " + std::string(topicfmt::kProduceOperation));
}

// Where a record sits: its log version, first offset, size and timestamp.
struct RecordBound {
  uint64_t version = 0;  // 0: no record (an empty topic)
  uint64_t offset = 0;
  uint64_t count = 0;
  uint64_t timestamp_us = 0;
};

// The bounds of the oldest records read in this process, by topic
// directory, log store id and version: a record of a topic's log never
// changes once written, so the oldest one is read once however often it
// is asked for — at each open, and by each rewind's check that its sources
// still retain what it would read again (a whole record: up to 1 MiB to
// decompress and check). A version retention has removed is no longer
// asked for; the map is emptied when full.
class OldestBounds {
 public:
  bool Find(const std::string& dir, uint64_t store_id, uint64_t version, RecordBound* bound) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = bounds_.find(std::tie(dir, store_id, version));
    if (it == bounds_.end()) return false;
    *bound = it->second;
    return true;
  }
  void Remember(const std::string& dir, uint64_t store_id, const RecordBound& bound) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bounds_.size() >= kMaxBounds) bounds_.clear();
    bounds_[std::make_tuple(dir, store_id, bound.version)] = bound;
  }

 private:
  static constexpr size_t kMaxBounds = 256;
  std::mutex mu_;
  std::map<std::tuple<std::string, uint64_t, uint64_t>, RecordBound, std::less<>> bounds_;
};

OldestBounds& OldestBoundsRead() {
  static OldestBounds* bounds = new OldestBounds();  // never destroyed: used until exit
  return *bounds;
}

class TopicCursorImpl;

class TopicImpl final : public Topic {
 public:
  TopicImpl(Env* env, std::string dir, const TopicConfig& config, std::unique_ptr<Log> log, bool read_only)
      : env_(env),
        dir_(std::move(dir)),
        segment_size_bytes_(config.segment_size_bytes),
        read_only_(read_only),
        log_(std::move(log)),
        config_(config) {}

  // The offset of the oldest retained record; all a topic opened to read
  // its oldest record (OpenFor::kOldest, not recovered) can answer.
  Status OldestRecordOffset(uint64_t* offset) {
    if (log_->Oldest().version == 0) return Status::NotFound("topic " + dir_ + " is empty");
    RecordBound bound;
    SPOOL_RETURN_IF_ERROR(ReadOldestBound(&bound));
    *offset = bound.offset;
    return Status::OK();
  }

  Status Recover();

  const std::string& dir() const override { return dir_; }
  Status Produce(std::span<const TopicWrite> batch, TopicProduced* produced) override;
  Status Read(uint64_t from_offset, const TopicReadLimits& limits, const TopicVisitor& visit) override;
  Status NewCursor(uint64_t from_offset, std::unique_ptr<TopicCursor>* cursor) override;
  Status ResumeCursor(const TopicPosition& from, std::unique_ptr<TopicCursor>* cursor) override;
  TopicInfo Info() override;
  Status Refresh(bool* stale) override;
  Status ApplyRetention(TopicRetentionReport* report) override;
  Status SetRetention(const TopicRetention& retention) override;

 private:
  struct ProduceRequest {
    std::span<const TopicWrite> batch;
    uint64_t body_bytes = 0;
    TopicProduced* produced = nullptr;
    Status status;
    bool done = false;
  };
  // What retention compares to tell whether the log may have started a new
  // segment since: the active segment's end and the log's bytes appended.
  struct RollCheck {
    uint64_t active_end_bytes = 0;
    uint64_t bytes_appended = 0;
  };

  // --- Producing.
  Status CheckBatch(std::span<const TopicWrite> batch) const;
  // REQUIRES: mu_ is held and the caller's request is at the queue's front.
  std::vector<ProduceRequest*> CollectGroup();
  Status WriteGroup(uint64_t base_offset, const std::vector<ProduceRequest*>& group, RecordBound* written);
  void FinishGroup(const Status& s, const RecordBound& written, const std::vector<ProduceRequest*>& group);
  void MaybeApplyRetention();

  // --- Reading (with TopicCursorImpl, which uses these).
  friend class TopicCursorImpl;
  Status CheckReadable(uint64_t offset);
  RecordBound Newest();
  Status FindVersion(uint64_t offset, uint64_t* version);
  Status ReadBound(uint64_t version, RecordBound* bound);
  Status ReadOldestBound(RecordBound* bound);  // ReadBound of the oldest version, read once (OldestBounds)
  Status RecordError(const LogEntry& entry, const Status& s) const;
  Status OutOfRange(uint64_t offset, uint64_t oldest) const;

  // --- Retention. REQUIRES: retention_mu_ is held.
  Status ApplyRetentionLocked(TopicRetentionReport* report);
  Status AgePin(uint64_t age_us, uint64_t* pinned);
  bool MayHaveRolledLocked();
  std::vector<LogSegmentInfo> ResetRollCheckLocked();

  Env* const env_;
  const std::string dir_;
  const uint64_t segment_size_bytes_;  // fixed when the topic is created
  const bool read_only_;               // OpenForReading
  const std::unique_ptr<Log> log_;

  std::mutex mu_;  // guards what follows, down to retention_mu_
  std::condition_variable produce_cv_;
  std::deque<ProduceRequest*> produce_queue_;  // the front one writes for the group it takes
  TopicConfig config_;
  RecordBound oldest_;  // the oldest retained record
  RecordBound newest_;

  std::mutex retention_mu_;  // serialises retention passes; taken before mu_, never after
  RollCheck roll_check_;     // guarded by retention_mu_
};

Status TopicImpl::Recover() {
  const uint64_t newest = log_->Newest().version;
  if (newest == 0) return Status::OK();  // an empty topic
  RecordBound oldest;
  RecordBound last;
  SPOOL_RETURN_IF_ERROR(ReadOldestBound(&oldest));
  SPOOL_RETURN_IF_ERROR(ReadBound(newest, &last));
  if (oldest.offset > last.offset) {
    return Status::Corruption("topic " + dir_ + ": the oldest record (version " + std::to_string(oldest.version) +
                              ") starts at offset " + std::to_string(oldest.offset) + ", after the newest one's " +
                              std::to_string(last.offset));
  }
  std::lock_guard<std::mutex> retention_lock(retention_mu_);
  ResetRollCheckLocked();
  std::lock_guard<std::mutex> lock(mu_);
  oldest_ = oldest;
  newest_ = last;
  return Status::OK();
}

Status TopicImpl::Refresh(bool* stale) {
  if (!read_only_) return Status::NotSupported("topic " + dir_ + " is open to produce: Refresh is for readers");
  SPOOL_RETURN_IF_ERROR(log_->Refresh(stale).WithContext("topic " + dir_));
  const uint64_t newest_version = log_->Newest().version;
  RecordBound oldest;
  RecordBound known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    oldest = oldest_;
    known = newest_;
  }
  if (*stale || newest_version == known.version) return Status::OK();
  RecordBound last;
  SPOOL_RETURN_IF_ERROR(ReadBound(newest_version, &last));
  if (oldest.version == 0) SPOOL_RETURN_IF_ERROR(ReadOldestBound(&oldest));
  if (last.offset < known.offset + known.count) {
    return Status::Corruption("topic " + dir_ + ": the newest record (version " + std::to_string(last.version) +
                              ") starts at offset " + std::to_string(last.offset) +
                              ", before the end of the one before (" + std::to_string(known.offset + known.count) +
                              ")");
  }
  std::lock_guard<std::mutex> lock(mu_);
  oldest_ = oldest;
  newest_ = last;
  return Status::OK();
}

// --- Producing ------------------------------------------------------------

Status TopicImpl::CheckBatch(std::span<const TopicWrite> batch) const {
  if (batch.empty()) return Status::InvalidArgument("topic " + dir_ + ": a batch needs at least one message");
  if (batch.size() > kMaxTopicBatchMessages) {
    return Status::InvalidArgument("topic " + dir_ + ": a batch of " + std::to_string(batch.size()) +
                                   " messages is over the limit of " + std::to_string(kMaxTopicBatchMessages));
  }
  const uint64_t bytes = TopicBatchBytes(batch);
  if (bytes > kMaxTopicBatchBytes) {
    return Status::InvalidArgument("topic " + dir_ + ": a batch of " + std::to_string(bytes) +
                                   " bytes is over the limit of " + std::to_string(kMaxTopicBatchBytes));
  }
  return Status::OK();
}

Status TopicImpl::Produce(std::span<const TopicWrite> batch, TopicProduced* produced) {
  if (read_only_) return Status::NotSupported("topic " + dir_ + " is open for reading only");
  SPOOL_RETURN_IF_ERROR(CheckBatch(batch));
  ProduceRequest request{batch, topicfmt::MessagesBytes(batch), produced, Status(), false};
  std::unique_lock<std::mutex> lock(mu_);
  produce_queue_.push_back(&request);
  produce_cv_.wait(lock, [&] { return request.done || produce_queue_.front() == &request; });
  if (request.done) return request.status;
  // The leader: it writes its own batch and those queued behind it.
  const std::vector<ProduceRequest*> group = CollectGroup();
  const uint64_t base_offset = newest_.offset + newest_.count;
  lock.unlock();
  RecordBound written;
  Status s = WriteGroup(base_offset, group, &written);
  FinishGroup(s, written, group);
  if (s.ok()) MaybeApplyRetention();
  return s;
}

std::vector<TopicImpl::ProduceRequest*> TopicImpl::CollectGroup() {
  std::vector<ProduceRequest*> group{produce_queue_.front()};
  uint64_t messages = group[0]->batch.size();
  uint64_t bytes = group[0]->body_bytes;
  for (size_t i = 1; i < produce_queue_.size(); ++i) {
    ProduceRequest* next = produce_queue_[i];
    if (messages + next->batch.size() > kMaxTopicBatchMessages || bytes + next->body_bytes > kMaxGroupBodyBytes) break;
    messages += next->batch.size();
    bytes += next->body_bytes;
    group.push_back(next);
  }
  return group;
}

// Writes the group as one record with one sync. Runs without mu_.
Status TopicImpl::WriteGroup(uint64_t base_offset, const std::vector<ProduceRequest*>& group, RecordBound* written) {
  uint64_t count = 0;
  uint64_t bytes = topicfmt::kRecordHeaderBytes;
  for (const ProduceRequest* r : group) {
    count += r->batch.size();
    bytes += r->body_bytes;
  }
  SPOOL_CHECK(count >= 1 && count <= kMaxTopicBatchMessages,
              "a produce group writes 1 to kMaxTopicBatchMessages messages");
  std::string body;
  body.reserve(bytes);
  topicfmt::PutRecordHeader(topicfmt::RecordHeader{base_offset, static_cast<uint32_t>(count)}, &body);
  for (const ProduceRequest* r : group) topicfmt::PutMessages(r->batch, &body);
  SPOOL_CHECK(body.size() == bytes, "a topic record fills the bytes its group measured");
  LogCommit commit;
  Status s = log_->Append(LogWrite{topicfmt::kProduceOperation, body}, &commit);
  if (!s.ok()) return s.WithContext("topic " + dir_);
  *written = RecordBound{commit.position.version, base_offset, count, commit.timestamp_us};
  return Status::OK();
}

// Publishes what the group wrote and wakes its members and the next leader.
void TopicImpl::FinishGroup(const Status& s, const RecordBound& written, const std::vector<ProduceRequest*>& group) {
  std::lock_guard<std::mutex> lock(mu_);
  if (s.ok()) {
    SPOOL_CHECK(written.offset == newest_.offset + newest_.count, "a topic's offsets follow on without a gap");
    if (oldest_.version == 0) oldest_ = written;
    newest_ = written;
  }
  uint64_t offset = written.offset;
  for (ProduceRequest* r : group) {
    SPOOL_CHECK(produce_queue_.front() == r, "produce groups finish in their queue's order");
    produce_queue_.pop_front();
    r->status = s;
    if (s.ok() && r->produced != nullptr) *r->produced = TopicProduced{offset, r->batch.size(), written.timestamp_us};
    offset += r->batch.size();
    r->done = true;
  }
  produce_cv_.notify_all();
}

// Retention runs after a Produce only when the log may have sealed a
// segment: nothing can become deletable otherwise without the clock moving,
// and an ApplyRetention call covers that.
void TopicImpl::MaybeApplyRetention() {
  std::lock_guard<std::mutex> lock(retention_mu_);
  if (!MayHaveRolledLocked()) return;
  TopicRetentionReport ignored;
  (void)ApplyRetentionLocked(&ignored);  // an I/O failure poisons the log: the next Produce reports it
}

// Takes the log's current segments as the base of the next roll check, and
// returns them.
std::vector<LogSegmentInfo> TopicImpl::ResetRollCheckLocked() {
  const uint64_t bytes_appended = log_->Stats().bytes_appended;  // before Segments(): a check errs early, not late
  std::vector<LogSegmentInfo> segments = log_->Segments();
  roll_check_ = RollCheck{segments.empty() ? 0 : segments.back().data_end_bytes, bytes_appended};
  return segments;
}

// The log seals its active segment when a record would take it past the
// segment size, so no roll can have happened before the bytes appended
// since the last check, added to the active end then, pass that size.
bool TopicImpl::MayHaveRolledLocked() {
  const uint64_t appended = log_->Stats().bytes_appended - roll_check_.bytes_appended;
  return roll_check_.active_end_bytes + appended > segment_size_bytes_;
}

// --- Reading --------------------------------------------------------------

Status TopicImpl::OutOfRange(uint64_t offset, uint64_t oldest) const {
  return Status::OutOfRange("topic " + dir_ + ": offset " + std::to_string(offset) +
                            " is no longer retained (oldest retained offset: " + std::to_string(oldest) + ")");
}

Status TopicImpl::CheckReadable(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t next = newest_.offset + newest_.count;
  if (offset < oldest_.offset) return OutOfRange(offset, oldest_.offset);
  if (offset > next) {
    return Status::InvalidArgument("topic " + dir_ + ": offset " + std::to_string(offset) +
                                   " is past the end (next offset: " + std::to_string(next) + ")");
  }
  return Status::OK();
}

RecordBound TopicImpl::Newest() {
  std::lock_guard<std::mutex> lock(mu_);
  return newest_;
}

// The version of the record holding `offset`: the newest record for a
// reader at the tail, else a binary search over record base offsets.
// REQUIRES: CheckReadable(offset) passed and offset < the next offset.
Status TopicImpl::FindVersion(uint64_t offset, uint64_t* version) {
  RecordBound oldest;
  RecordBound newest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    oldest = oldest_;
    newest = newest_;
  }
  if (offset >= newest.offset) {
    *version = newest.version;
    return Status::OK();
  }
  // Invariant: the record holding `offset` is one of versions lo .. hi.
  uint64_t lo = oldest.version;
  uint64_t hi = newest.version - 1;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    RecordBound bound;
    SPOOL_RETURN_IF_ERROR(ReadBound(mid, &bound));
    if (bound.offset <= offset) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  *version = lo;
  return Status::OK();
}

// A reader's place in the topic: the log iterator past the record it is in,
// and that record, decoded (its messages view entry_.body).
class TopicCursorImpl final : public TopicCursor {
 public:
  TopicCursorImpl(TopicImpl* topic, uint64_t offset) : topic_(topic), offset_(offset) {}

  Status Seek(uint64_t version_hint);
  Status Read(const TopicReadLimits& limits, const TopicVisitor& visit) override;
  TopicPosition position() const override {
    return TopicPosition{offset_, index_ < header_.count ? entry_.position.version : next_version_};
  }

 private:
  Status Enter(uint64_t version);
  Status NextRecord(bool entering);
  Status ReadEntry();
  Status OpenIterator();
  Status IteratorStatus();
  Status Retained(Status s);
  bool Visit(const topicfmt::MessageView& m, const TopicVisitor& visit);

  TopicImpl* const topic_;
  uint64_t offset_;                  // of the next message to visit
  uint64_t next_version_ = 0;        // the record after the one in entry_
  std::unique_ptr<LogIterator> it_;  // at next_version_; null: opened when needed
  LogEntry entry_;                   // holds offset_ while index_ < header_.count
  topicfmt::RecordHeader header_;
  std::vector<topicfmt::MessageView> messages_;
  uint32_t index_ = 0;    // offset_'s message in the record
  TopicMessage message_;  // reused, so its strings keep their capacity
};

// Places the cursor in the record at `version_hint` when that holds offset_,
// else in the one a search finds. At the end of the topic there is no
// record to hold it yet: the next one is read once the topic has it.
Status TopicCursorImpl::Seek(uint64_t version_hint) {
  const RecordBound newest = topic_->Newest();
  if (offset_ == newest.offset + newest.count) {
    next_version_ = newest.version + 1;
    return Status::OK();
  }
  if (version_hint != 0 && Enter(version_hint).ok()) return Status::OK();
  uint64_t version = 0;
  Status s = topic_->FindVersion(offset_, &version);
  if (s.ok()) s = Enter(version);
  return Retained(s);
}

Status TopicCursorImpl::Read(const TopicReadLimits& limits, const TopicVisitor& visit) {
  SPOOL_RETURN_IF_ERROR(topic_->CheckReadable(offset_));
  uint64_t visited = 0;
  uint64_t visited_bytes = 0;
  while (visited < limits.max_messages) {
    if (index_ == header_.count) {
      const RecordBound newest = topic_->Newest();
      if (offset_ == newest.offset + newest.count) return Status::OK();
      SPOOL_RETURN_IF_ERROR(Retained(NextRecord(/*entering=*/false)));
    }
    const topicfmt::MessageView& m = messages_[index_];
    const uint64_t bytes = m.key.size() + m.value.size();
    if (visited > 0 && visited_bytes + bytes > limits.max_bytes) return Status::OK();
    ++visited;
    visited_bytes += bytes;
    if (!Visit(m, visit)) return Status::OK();
  }
  return Status::OK();
}

bool TopicCursorImpl::Visit(const topicfmt::MessageView& m, const TopicVisitor& visit) {
  message_.offset = offset_;
  message_.timestamp_us = entry_.timestamp_us;
  message_.key.assign(m.key);
  message_.value.assign(m.value);
  ++index_;
  ++offset_;
  return visit(message_);
}

// Reads the record at `version`, which must hold offset_.
Status TopicCursorImpl::Enter(uint64_t version) {
  it_.reset();
  next_version_ = version;
  return NextRecord(/*entering=*/true);
}

// Reads the record at next_version_ and moves into it. Entering, the
// record must hold offset_; else it must start at offset_, where the
// previous one ended. On an error the cursor stays before the record.
Status TopicCursorImpl::NextRecord(bool entering) {
  header_ = topicfmt::RecordHeader{};  // messages_ is about to dangle
  index_ = 0;
  SPOOL_RETURN_IF_ERROR(ReadEntry());
  topicfmt::RecordHeader header;
  Status s = CheckOperation(entry_);
  if (s.ok()) s = topicfmt::DecodeRecord(entry_.body, &header, &messages_);
  if (!s.ok()) {
    s = s.WithContext("expected offset " + std::to_string(offset_));
  } else if (entering ? !(header.base_offset <= offset_ && offset_ < header.base_offset + header.count)
                      : header.base_offset != offset_) {
    s = Status::Corruption("starts at offset " + std::to_string(header.base_offset) + ", expected offset " +
                           std::to_string(offset_));
  }
  if (!s.ok()) {
    it_.reset();  // a later Read reads this record again
    return topic_->RecordError(entry_, s);
  }
  SPOOL_CHECK(entry_.position.version == next_version_, "a topic reader reads its log's versions in order");
  header_ = header;
  index_ = static_cast<uint32_t>(offset_ - header.base_offset);
  ++next_version_;
  return Status::OK();
}

// The log record at next_version_, into entry_. REQUIRES: the topic holds
// it (offset_ is before the topic's next offset).
Status TopicCursorImpl::ReadEntry() {
  if (it_ == nullptr) SPOOL_RETURN_IF_ERROR(OpenIterator());
  if (it_->Next(&entry_)) return Status::OK();
  SPOOL_RETURN_IF_ERROR(IteratorStatus());
  // An iterator that ran to the end of a segment retention has deleted since
  // cannot find the segment after it: open one at the version it stopped at.
  SPOOL_RETURN_IF_ERROR(OpenIterator());
  if (it_->Next(&entry_)) return Status::OK();
  SPOOL_RETURN_IF_ERROR(IteratorStatus());
  it_.reset();
  return Status::Corruption("topic " + topic_->dir_ + ": the log ends before version " + std::to_string(next_version_) +
                            ", which holds offset " + std::to_string(offset_));
}

Status TopicCursorImpl::OpenIterator() {
  it_.reset();
  return topic_->log_->NewIterator(next_version_, &it_).WithContext("topic " + topic_->dir_);
}

Status TopicCursorImpl::IteratorStatus() {
  Status s = it_->status();
  if (s.ok()) return s;
  it_.reset();
  return s.WithContext("topic " + topic_->dir_);
}

// A record the log no longer has was deleted by retention after the offset
// was checked: OutOfRange when the offset went with it.
Status TopicCursorImpl::Retained(Status s) {
  if (s.IsNotFound()) SPOOL_RETURN_IF_ERROR(topic_->CheckReadable(offset_));
  return s;
}

Status TopicImpl::Read(uint64_t from_offset, const TopicReadLimits& limits, const TopicVisitor& visit) {
  if (limits.max_messages == 0) return CheckReadable(from_offset);
  std::unique_ptr<TopicCursor> cursor;
  SPOOL_RETURN_IF_ERROR(NewCursor(from_offset, &cursor));
  return cursor->Read(limits, visit);
}

Status TopicImpl::NewCursor(uint64_t from_offset, std::unique_ptr<TopicCursor>* cursor) {
  return ResumeCursor(TopicPosition{from_offset, 0}, cursor);
}

Status TopicImpl::ResumeCursor(const TopicPosition& from, std::unique_ptr<TopicCursor>* cursor) {
  SPOOL_RETURN_IF_ERROR(CheckReadable(from.offset));
  auto impl = std::make_unique<TopicCursorImpl>(this, from.offset);
  SPOOL_RETURN_IF_ERROR(impl->Seek(from.version));
  *cursor = std::move(impl);
  return Status::OK();
}

Status TopicImpl::RecordError(const LogEntry& entry, const Status& s) const {
  return s.WithContext("topic " + dir_ + ": record at log version " + std::to_string(entry.position.version));
}

Status TopicImpl::ReadBound(uint64_t version, RecordBound* bound) {
  LogEntry entry;
  SPOOL_RETURN_IF_ERROR(log_->Read(version, &entry).WithContext("topic " + dir_));
  topicfmt::RecordHeader header;
  Status s = CheckOperation(entry);
  if (s.ok()) s = topicfmt::ParseRecordHeader(entry.body, &header);
  if (!s.ok()) return RecordError(entry, s);
  *bound = RecordBound{version, header.base_offset, header.count, entry.timestamp_us};
  return Status::OK();
}

Status TopicImpl::ReadOldestBound(RecordBound* bound) {
  const uint64_t version = log_->Oldest().version;
  if (OldestBoundsRead().Find(dir_, log_->StoreId(), version, bound)) return Status::OK();
  SPOOL_RETURN_IF_ERROR(ReadBound(version, bound));
  OldestBoundsRead().Remember(dir_, log_->StoreId(), *bound);
  return Status::OK();
}

TopicInfo TopicImpl::Info() {
  TopicInfo info;
  info.dir = dir_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info.config = config_;
    info.next_offset = newest_.offset + newest_.count;
    info.oldest_offset = oldest_.version == 0 ? info.next_offset : oldest_.offset;
    info.messages = info.next_offset - info.oldest_offset;
    info.oldest_timestamp_us = oldest_.timestamp_us;
    info.newest_timestamp_us = newest_.timestamp_us;
    info.producers_queued = produce_queue_.size();
  }
  for (const LogSegmentInfo& segment : log_->Segments()) {
    info.bytes += segment.data_end_bytes;
    ++info.segments;
  }
  return info;
}

// --- Retention ------------------------------------------------------------

Status TopicImpl::ApplyRetention(TopicRetentionReport* report) {
  if (read_only_) return Status::NotSupported("topic " + dir_ + " is open for reading only");
  std::lock_guard<std::mutex> lock(retention_mu_);
  return ApplyRetentionLocked(report);
}

// Segments up to the newest one whose every record is older than `age_us`
// go: `*pinned` is the first version to keep (0: none goes).
Status TopicImpl::AgePin(uint64_t age_us, uint64_t* pinned) {
  *pinned = 0;
  const uint64_t now = env_->NowMicros();
  if (age_us == 0 || now <= age_us) return Status::OK();
  uint64_t version = 0;
  Status s = log_->VersionAtTime(now - age_us - 1, &version);  // the newest record older than the limit
  if (s.IsNotFound()) return Status::OK();
  SPOOL_RETURN_IF_ERROR(s.WithContext("topic " + dir_));
  *pinned = version + 1;
  return Status::OK();
}

// The first version to keep so that the log holds at most `limit` bytes
// (0: none goes). The active segment always stays.
uint64_t SizePin(const std::vector<LogSegmentInfo>& segments, uint64_t limit) {
  if (limit == 0) return 0;
  uint64_t total = 0;
  for (const LogSegmentInfo& s : segments) total += s.data_end_bytes;
  uint64_t pinned = 0;
  for (size_t i = 0; i + 1 < segments.size() && total > limit; ++i) {
    total -= segments[i].data_end_bytes;
    pinned = segments[i].last_version + 1;
  }
  return pinned;
}

Status TopicImpl::ApplyRetentionLocked(TopicRetentionReport* report) {
  TopicRetention retention;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retention = config_.retention;
    *report = TopicRetentionReport{};
    report->oldest_offset_before = report->oldest_offset = oldest_.offset;
  }
  const std::vector<LogSegmentInfo> segments = ResetRollCheckLocked();
  uint64_t pinned = 0;
  SPOOL_RETURN_IF_ERROR(AgePin(retention.age_us, &pinned));
  // The newest record holds the next offset: it always stays.
  pinned = std::min(std::max(pinned, SizePin(segments, retention.bytes)), log_->Newest().version);
  if (pinned <= log_->Oldest().version) return Status::OK();
  uint64_t deleted = 0;
  SPOOL_RETURN_IF_ERROR(log_->DeleteSegmentsBefore(pinned, &deleted).WithContext("topic " + dir_));
  if (deleted == 0) return Status::OK();
  report->segments_deleted = deleted;
  for (size_t i = 0; i < deleted && i < segments.size(); ++i) report->bytes_deleted += segments[i].data_end_bytes;
  RecordBound oldest;
  SPOOL_RETURN_IF_ERROR(ReadOldestBound(&oldest));
  std::lock_guard<std::mutex> lock(mu_);
  oldest_ = oldest;
  report->oldest_offset = oldest.offset;
  report->messages_deleted = oldest.offset - report->oldest_offset_before;
  return Status::OK();
}

Status TopicImpl::SetRetention(const TopicRetention& retention) {
  if (read_only_) return Status::NotSupported("topic " + dir_ + " is open for reading only");
  std::lock_guard<std::mutex> retention_lock(retention_mu_);
  TopicConfig config;
  {
    std::lock_guard<std::mutex> lock(mu_);
    config = config_;
  }
  config.retention = retention;
  const std::string path = JoinPath(dir_, topicfmt::kConfigFileName);
  SPOOL_RETURN_IF_ERROR(WriteFileAtomically(env_, path, topicfmt::EncodeConfig(config)).WithContext("topic " + dir_));
  std::lock_guard<std::mutex> lock(mu_);
  config_ = config;
  return Status::OK();
}

// --- Creating and opening -------------------------------------------------

// A directory Create may use: new, empty, or left by an interrupted Create.
Status CheckCreatable(Env* env, const std::string& dir) {
  if (env->FileExists(JoinPath(dir, topicfmt::kConfigFileName))) {
    return Status::InvalidArgument("topic " + dir + " already exists");
  }
  std::vector<std::string> names;
  Status s = env->ListDir(dir, &names);
  if (s.IsNotFound()) return Status::OK();
  SPOOL_RETURN_IF_ERROR(s);
  const std::string tmp = std::string(topicfmt::kConfigFileName) + ".tmp";
  for (const std::string& name : names) {
    if (name != topicfmt::kLogDirName && name != tmp) {
      return Status::InvalidArgument("cannot create a topic in " + dir + ": it holds other files (" + name + ")");
    }
  }
  return Status::OK();
}

}  // namespace

uint64_t TopicBatchBytes(std::span<const TopicWrite> batch) {
  return topicfmt::kRecordHeaderBytes + topicfmt::MessagesBytes(batch);
}

Status Topic::Create(Env* env, const std::string& dir, const TopicConfig& config) {
  SPOOL_RETURN_IF_ERROR(topicfmt::CheckConfig(config).WithContext("topic " + dir));
  SPOOL_RETURN_IF_ERROR(CheckCreatable(env, dir));
  Status s = env->CreateDir(dir);
  if (s.ok()) s = env->SyncDir(DirName(dir));
  std::unique_ptr<Log> log;
  if (s.ok()) s = Log::Open(TopicLogOptions(env, config), JoinPath(dir, topicfmt::kLogDirName), &log);
  log.reset();
  // The configuration goes last: a directory without it is no topic yet.
  if (s.ok()) s = WriteFileAtomically(env, JoinPath(dir, topicfmt::kConfigFileName), topicfmt::EncodeConfig(config));
  return s.WithContext("cannot create topic " + dir);
}

namespace {

// How a topic is opened: to produce, to read, or (read only, not
// recovered) to read its oldest record alone.
enum class OpenFor : unsigned char { kProducing, kReading, kOldest };

Status OpenTopic(Env* env, const std::string& dir, OpenFor open_for, std::unique_ptr<TopicImpl>* topic) {
  const std::string config_path = JoinPath(dir, topicfmt::kConfigFileName);
  std::string text;
  Status s = ReadFileToString(env, config_path, &text);
  if (s.IsNotFound()) return Status::NotFound(dir + " is not a topic (it has no " + config_path + ")");
  SPOOL_RETURN_IF_ERROR(s.WithContext("topic " + dir));
  TopicConfig config;
  SPOOL_RETURN_IF_ERROR(topicfmt::ParseConfig(text, &config).WithContext("topic " + dir + ": " + config_path));
  LogOptions options = TopicLogOptions(env, config);
  options.create_if_missing = false;
  options.read_only = open_for != OpenFor::kProducing;
  options.oldest_only = open_for == OpenFor::kOldest;
  std::unique_ptr<Log> log;
  s = Log::Open(options, JoinPath(dir, topicfmt::kLogDirName), &log);
  if (s.IsNotFound()) return Status::Corruption("topic " + dir + ": its log is missing: " + std::string(s.message()));
  SPOOL_RETURN_IF_ERROR(s.WithContext("topic " + dir));
  auto impl = std::make_unique<TopicImpl>(env, dir, config, std::move(log), options.read_only);
  if (open_for != OpenFor::kOldest) SPOOL_RETURN_IF_ERROR(impl->Recover());
  *topic = std::move(impl);
  return Status::OK();
}

}  // namespace

Status Topic::Open(Env* env, const std::string& dir, std::unique_ptr<Topic>* topic) {
  std::unique_ptr<TopicImpl> impl;
  SPOOL_RETURN_IF_ERROR(OpenTopic(env, dir, OpenFor::kProducing, &impl));
  *topic = std::move(impl);
  return Status::OK();
}

Status Topic::OpenForReading(Env* env, const std::string& dir, std::unique_ptr<Topic>* topic) {
  std::unique_ptr<TopicImpl> impl;
  SPOOL_RETURN_IF_ERROR(OpenTopic(env, dir, OpenFor::kReading, &impl));
  *topic = std::move(impl);
  return Status::OK();
}

Status Topic::OldestOffset(Env* env, const std::string& dir, uint64_t* offset) {
  std::unique_ptr<TopicImpl> oldest;
  SPOOL_RETURN_IF_ERROR(OpenTopic(env, dir, OpenFor::kOldest, &oldest));
  if (oldest->OldestRecordOffset(offset).ok()) return Status::OK();
  // No record to read there (an empty topic), or a damaged one: the whole
  // open answers, or says what is wrong.
  std::unique_ptr<Topic> topic;
  SPOOL_RETURN_IF_ERROR(OpenForReading(env, dir, &topic));
  *offset = topic->Info().oldest_offset;
  return Status::OK();
}

}  // namespace spool
