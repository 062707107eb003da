// Topic: a durable, append-only message queue with retention by age and by
// size (docs/design.md: the topic source, Spool's stand-in for Kafka).
//
// A topic is a directory holding a txnlog Log and a small configuration
// file (the layout and the bytes are in docs/topic_format.md). Messages have
// dense offsets from 0 that never move: retention deletes the oldest whole
// segments of the log, and the oldest retained offset grows. Every message
// carries the commit timestamp of the log record that holds it (strictly
// increasing from record to record, equal within one).
//
// Durability: Produce returns once its batch is on stable storage (fsync'd).
// An acknowledged batch survives any crash; an unacknowledged one is after
// recovery either entirely there or not at all, and offsets stay dense.
// Concurrent Produce calls are grouped: one caller writes the waiting
// batches as one log record with one sync (each batch keeps consecutive
// offsets), so N concurrent producers cost about one fsync.
//
// Thread-safety: a Topic is safe for concurrent use: Produce, Read, Info,
// ApplyRetention, SetRetention and the cursor calls may be called from any
// threads at once. Read sees every batch acknowledged before it started.
//
// Failure model: after a failed write or sync the topic's log is poisoned
// (see spool/txnlog/log.h): every later Produce and ApplyRetention returns
// Status::Failed. Reopen the topic to go on; recovery finds what is durable.
//
// Reading: Read visits messages from any retained offset, finding the
// offset's record by a binary search over the log's records (each probe
// decompresses one). A reader that goes on batch after batch keeps a
// TopicCursor instead: it searches once, then reads on sequentially.
//
// Lifetimes: the Env must outlive the Topic, and the Topic its cursors. One
// Topic handle at a time may have a directory open (Open of a second one
// returns Busy).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "spool/txnlog/env.h"
#include "spool/txnlog/status.h"

namespace spool {

// --- Limits. Each batch is one log record, so a batch stays well below the
// log's largest record (64 MiB).
inline constexpr uint64_t kMaxTopicBatchMessages = 1u << 20;
inline constexpr uint64_t kMaxTopicBatchBytes = 32ull << 20;  // the record body, see docs/topic_format.md
// Segment sizes a topic accepts (the log's own limits).
inline constexpr uint64_t kMinTopicSegmentBytes = 64ull << 10;
inline constexpr uint64_t kMaxTopicSegmentBytes = 1ull << 30;
static_assert(kMaxTopicBatchBytes <= kMaxTopicSegmentBytes, "a batch fits a segment");

inline constexpr uint64_t kDefaultTopicRetentionAgeUs = 7ull * 24 * 3600 * 1'000'000;
inline constexpr uint64_t kDefaultTopicSegmentBytes = 8ull << 20;

struct TopicRetention {
  // A sealed segment is deleted once every message in it is older than this
  // (by its timestamp, against Env::NowMicros). 0: no age limit.
  uint64_t age_us = kDefaultTopicRetentionAgeUs;
  // While the log holds more bytes than this, its oldest sealed segments are
  // deleted. 0: no size limit.
  uint64_t bytes = 0;
  friend bool operator==(const TopicRetention&, const TopicRetention&) = default;
};

struct TopicConfig {
  TopicRetention retention;
  // The log starts a new segment at this size; retention deletes whole
  // segments, so this is also its granularity. Between
  // kMinTopicSegmentBytes and kMaxTopicSegmentBytes.
  uint64_t segment_size_bytes = kDefaultTopicSegmentBytes;
  friend bool operator==(const TopicConfig&, const TopicConfig&) = default;
};

// A message to produce. The bytes are copied before Produce returns.
struct TopicWrite {
  std::string_view key;
  std::string_view value;
};

// The bytes of the log record body that `batch` takes: what
// kMaxTopicBatchBytes bounds (13 bytes, plus 8 and the key and value bytes
// of each message).
uint64_t TopicBatchBytes(std::span<const TopicWrite> batch);

// A message as read back.
struct TopicMessage {
  uint64_t offset = 0;
  uint64_t timestamp_us = 0;
  std::string key;
  std::string value;
};

// Where a cursor is: the offset it visits next, and the log version of the
// record that holds it (at the end of a record: of the record that starts
// there, which the topic may not hold yet). A position from one handle of a
// topic is good on any other handle of the same topic.
struct TopicPosition {
  uint64_t offset = 0;
  uint64_t version = 0;  // 0: not known
};

// What Produce acknowledged: offsets first_offset .. first_offset + count - 1.
struct TopicProduced {
  uint64_t first_offset = 0;
  uint64_t count = 0;
  uint64_t timestamp_us = 0;
};

struct TopicReadLimits {
  uint64_t max_messages = std::numeric_limits<uint64_t>::max();
  // Stops before the message that would take the key and value bytes
  // visited past this; the first message is visited whatever its size.
  uint64_t max_bytes = std::numeric_limits<uint64_t>::max();
};

struct TopicInfo {
  std::string dir;
  uint64_t oldest_offset = 0;  // == next_offset when the topic holds no message
  uint64_t next_offset = 0;    // the offset the next message gets
  uint64_t messages = 0;       // retained: next_offset - oldest_offset
  uint64_t bytes = 0;          // the log's data, headers included
  uint64_t segments = 0;
  uint64_t oldest_timestamp_us = 0;  // 0 when the topic holds no message
  uint64_t newest_timestamp_us = 0;
  uint64_t producers_queued = 0;  // Produce calls waiting or writing now (a gauge)
  TopicConfig config;
};

// What a retention pass deleted.
struct TopicRetentionReport {
  uint64_t segments_deleted = 0;
  uint64_t messages_deleted = 0;
  uint64_t bytes_deleted = 0;
  uint64_t oldest_offset_before = 0;
  uint64_t oldest_offset = 0;  // after the pass
};

using TopicVisitor = std::function<bool(const TopicMessage&)>;

// Reads a topic in offset order, each Read going on where the previous one
// stopped. It keeps its place in the log and the record it is in (a record
// may span many Reads), so it never searches after its first positioning.
// It sees what its Topic handle sees: through a handle from Open, batches
// acknowledged after the cursor was made too; through one from
// OpenForReading, what the topic held when that handle was opened (open
// the topic again and ResumeCursor there to see more).
//
// Thread-safety: one cursor is not safe for concurrent use; distinct cursors
// of one Topic are. Lifetimes: the Topic must outlive the cursor.
class TopicCursor {
 public:
  virtual ~TopicCursor() = default;

  // Calls `visit` with each message from position().offset on, as
  // Topic::Read does, moving past every message visited (the one `visit`
  // returned false for too). Reaching the end visits nothing and is OK.
  // Errors (the cursor stays where it was: a later Read tries again):
  // OutOfRange (retention deleted the cursor's offset since it got there,
  // e.g. a producer's retention overtook it; the message names the offset
  // and the oldest retained one, as Read's does; every later Read fails
  // so), Corruption (a record that does not decode, or does not start at
  // the offset where the previous one ended; naming the topic, the log
  // version and the offset), IOError.
  virtual Status Read(const TopicReadLimits& limits, const TopicVisitor& visit) = 0;

  virtual TopicPosition position() const = 0;
};

class Topic {
 public:
  // Creates an empty topic in `dir` (the directory is created; its parent
  // must exist). Errors: InvalidArgument (a segment size out of range; `dir`
  // is already a topic; `dir` holds other files), NotFound (no parent
  // directory), IOError, NoSpace. A crash during Create leaves no topic, or
  // a partial one that Create completes when called again.
  static Status Create(Env* env, const std::string& dir, const TopicConfig& config);

  // Opens the topic in `dir` and recovers its log. Errors: NotFound (`dir`
  // is not a topic), Busy (another handle has it open), Corruption (naming
  // the file, or the record and offset), IOError.
  static Status Open(Env* env, const std::string& dir, std::unique_ptr<Topic>* topic);
  // Opens the topic to read what it holds now, without the lock, so that a
  // producer (in this process or another) may keep it open meanwhile, and
  // without changing any file. Produce, ApplyRetention and SetRetention
  // return NotSupported. Messages produced after this call are not seen:
  // open again to see them. Errors: as Open, but never Busy.
  static Status OpenForReading(Env* env, const std::string& dir, std::unique_ptr<Topic>* topic);
  // The oldest offset the topic at `dir` retains (TopicInfo::oldest_offset),
  // read from its oldest record alone: unlike an open, in time independent
  // of how much the topic holds. Errors: as OpenForReading.
  static Status OldestOffset(Env* env, const std::string& dir, uint64_t* offset);

  virtual ~Topic() = default;

  virtual const std::string& dir() const = 0;

  // Appends `batch` (key and value bytes of any kind, empty ones included)
  // with consecutive offsets and returns once it is durable; `*produced`
  // (when not null) receives the offsets. A Produce that
  // makes the log start a new segment then applies retention; a failure of
  // that pass is not this call's (it poisons the log, so the next Produce
  // reports it). Errors (nothing written): InvalidArgument (an empty batch,
  // more than kMaxTopicBatchMessages, a body over kMaxTopicBatchBytes).
  // After the write: Failed, IOError, NoSpace (as Log::Append).
  virtual Status Produce(std::span<const TopicWrite> batch, TopicProduced* produced) = 0;

  // Calls `visit` with each message from `from_offset` on, in offset order,
  // until `limits` or the end is reached or `visit` returns false. Reading
  // from exactly the next offset visits nothing. Errors: OutOfRange
  // (`from_offset` is older than the oldest retained one; the message names
  // both), InvalidArgument (`from_offset` is past the next offset),
  // Corruption (a record that does not decode, naming the topic, the log
  // version and the offset), IOError.
  virtual Status Read(uint64_t from_offset, const TopicReadLimits& limits, const TopicVisitor& visit) = 0;

  // A cursor at `from_offset`, whose record is found as Read finds it (the
  // search reads and decompresses records). Errors: as Read.
  virtual Status NewCursor(uint64_t from_offset, std::unique_ptr<TopicCursor>* cursor) = 0;
  // A cursor at `from.offset`, placed without a search when the record at
  // `from.version` holds that offset: `from` is another cursor's position,
  // taken through this handle or another one of the same topic (a reader
  // that opens the topic again to see new messages goes on so). Otherwise,
  // and when `from.version` is 0, as NewCursor. Errors: as Read.
  virtual Status ResumeCursor(const TopicPosition& from, std::unique_ptr<TopicCursor>* cursor) = 0;

  virtual TopicInfo Info() = 0;

  // A topic opened for reading: takes in the batches producers appended
  // since the open or the last Refresh, reading only their records (not the
  // whole segment being written, as an open does), so that Info, Read and
  // cursors of this handle see them. Sets *stale, taking in nothing, when
  // that cannot be done (the log started a new segment since, or a batch
  // was being written as it looked): open the topic again then, and
  // ResumeCursor there. Errors: NotSupported (a topic opened to produce:
  // it sees every batch already), Corruption (a new record that does not
  // decode as the topic's), IOError.
  virtual Status Refresh(bool* stale) = 0;

  // Deletes whole sealed segments whose every message is older than the age
  // limit, then the oldest sealed segments while the log exceeds the size
  // limit. The segment holding the newest message is always kept (it holds
  // the next offset). Crash-safe: a crash leaves the segments deleted or
  // not, and reopening completes the deletion. Errors: Failed, IOError,
  // Corruption (the new oldest record does not decode).
  virtual Status ApplyRetention(TopicRetentionReport* report) = 0;

  // Replaces the retention settings, durably (the configuration file is
  // replaced atomically); they apply from the next retention pass.
  // Errors: IOError, NoSpace (the old settings stay in effect).
  virtual Status SetRetention(const TopicRetention& retention) = 0;
};

}  // namespace spool
