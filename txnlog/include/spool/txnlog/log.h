// Log: Spool's append-only transaction log (docs/design.md).
//
// A log is a directory of segment files. Every commit is one record at one
// version (a counter from 1), written in an epoch (a counter bumped by
// every TruncateAfter), with a strictly increasing commit timestamp in
// microseconds. Versions are never used twice: a truncation cuts versions
// off, and the next commit continues past the highest ever assigned, so
// along the log's history versions are dense within an epoch and may jump
// where a new epoch starts. The byte layout is in docs/log_format.md.
//
// Thread-safety: a Log is safe for concurrent use. Concurrent Append calls are
// grouped: one leader writes and syncs the whole group (group commit).
// Iterators may be used concurrently with appends; each iterator is used by
// one thread at a time. Lifetimes: iterators must be destroyed before the Log.
//
// Failure model: after a failed write or sync the Log is poisoned, like an
// LMDB environment after MDB_PANIC: every later mutating call returns
// Status::Failed carrying the original error. Reopen the directory to go on;
// recovery then finds what is durable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/env.h"
#include "spool/txnlog/status.h"

namespace spool {

// When Append returns, relative to durability.
enum class Durability : unsigned char {
  // Append returns after the record is on stable storage (fdatasync).
  // Preserves A, C, I and D: an acknowledged commit survives any crash.
  // Concurrent committers share syncs; a leader waits at most half a sync
  // for the previous group's committers to come back.
  kSync,
  // Like kSync (A, C, I and D), but the leader of a group first waits up to
  // LogOptions::group_window_us for more committers to join its group, so
  // that more commits share one sync: higher throughput, higher latency.
  kGroupWindow,
  // Append returns after the record is handed to the OS, without a sync.
  // Preserves A, C and I, not D: a crash of the machine may lose acknowledged
  // commits, but recovery still yields a prefix of the commits without holes.
  // For benchmarks and bulk loads; label its figures as such.
  kNoSync,
};

// A commit's place in the log.
struct LogPosition {
  uint64_t epoch = 0;
  uint64_t version = 0;
  friend bool operator==(const LogPosition&, const LogPosition&) = default;
};

struct LogOptions {
  // All I/O goes through this Env. Must outlive the Log.
  Env* env = Env::Default();
  // Create an empty log when the directory holds none.
  bool create_if_missing = true;
  Durability durability = Durability::kSync;
  // kGroupWindow only: how long a group's leader waits for more committers.
  uint64_t group_window_us = 200;
  // A segment is sealed and a new one started once it reaches this size.
  // Retention deletes whole segments, so the segment holding a vacuum's
  // floor keeps up to this much below it: 8 MiB bounds that, and costs
  // W1, W3 and W7 nothing measurable against 64 MiB (docs/benchmarks.md).
  uint64_t segment_size_bytes = 8ull << 20;
  // For groups under 64 KiB, segments are filled with zeros ahead of the
  // write position, this many bytes at a time, so that appends overwrite
  // allocated blocks and a sync need not update the file's size (measured
  // here: 1.3-1.5x the single-writer commits per second of appending to a
  // growing file). 0 disables preallocation.
  uint64_t preallocate_bytes = 1ull << 20;
  // Payloads at least this large are stored zstd-compressed (level 1) when
  // that saves at least an eighth of their size. 0 disables compression.
  uint64_t compress_min_bytes = 4096;
  // Open a log whose middle is corrupt by keeping its longest valid prefix
  // and dropping the rest (reported in LogRecoveryReport). Off: such a log
  // fails to open with Status::Corruption naming the segment and offset.
  bool salvage = false;
  // Where TruncateAfter moves a cut suffix. Empty: "<dir>/archive".
  std::string archive_dir;
  // Open without changing any file (inspect, verify, dump): a torn tail is
  // reported but left in place, an interrupted truncation is honoured but not
  // completed, no lock is taken and every mutating call returns NotSupported.
  bool read_only = false;
  // With read_only: open for reading the oldest commits only, without
  // reading the segment being written to its end (the cost of an open, in
  // proportion to that segment). Newest() is then not the log's newest
  // commit, and reads past the oldest segment's first commit may fail.
  bool oldest_only = false;
  // The store id stamped on a new log (every checksum is seeded with it, so
  // records of another store never verify). 0: a random one. Tests set it to
  // make runs replay byte for byte.
  uint64_t new_store_id = 0;
  // A commit that something durable beside the log shows was acknowledged
  // (a store's applied state), in the log of store `known_durable_store_id`.
  // A torn write can only hold commits never acknowledged: when the end of
  // the segment being written is missing or damaged and this position, in
  // that segment's epoch, lies past what is left, opening fails with
  // Corruption naming the position, changing nothing, instead of cutting the
  // tail away. Ignored in Durability::kNoSync (which may lose acknowledged
  // commits), for another store's id, and in salvage mode.
  LogPosition known_durable;
  uint64_t known_durable_store_id = 0;
  // Whether the newest position a clean close recorded in CLOSED counts as
  // known_durable too (the larger of the two, in the active segment's
  // epoch): the close had synced every record up to it. A store's log sets
  // it, so that its newest commits are vouched for when the close left
  // them to the next open's replay instead of applying them to the state.
  bool known_durable_from_clean_close = false;
};

// What a caller commits: an operation name ("WRITE", "STREAMING UPDATE", …)
// and an opaque body that the layer above defines (it verifies its own bytes).
struct LogWrite {
  std::string_view operation;
  std::string_view body;
  // false: in the sync modes, return once the record is written, without
  // waiting for a sync; it becomes durable with the next synced append (or
  // Flush), and a crash before then may lose it (and only it and other such
  // records after the last sync). For records that describe what a synced
  // commit already holds, such as progress events.
  bool sync = true;
};

// One commit as read back from the log.
struct LogEntry {
  LogPosition position;
  uint64_t timestamp_us = 0;
  std::string operation;
  std::string body;
};

// What Append acknowledged.
struct LogCommit {
  LogPosition position;
  uint64_t timestamp_us = 0;
};

// What recovery found and did when the log was opened.
struct LogRecoveryReport {
  uint64_t segments = 0;
  uint64_t records_scanned = 0;       // records read to find the end
  uint64_t torn_tail_bytes = 0;       // bytes cut from the end as a torn write
  bool truncation_completed = false;  // an interrupted TruncateAfter was finished
  uint64_t retention_completed = 0;   // segments deleted to finish a retention
  // Salvage mode only: what was dropped, and why.
  uint64_t salvaged_from_version = 0;  // first version dropped; 0 = nothing
  std::string salvage_reason;
};

// One segment file, as `spool log inspect` shows it.
struct LogSegmentInfo {
  uint64_t number = 0;
  std::string file_name;
  uint64_t epoch = 0;
  uint64_t first_version = 0;
  uint64_t last_version = 0;    // first_version - 1 when empty
  uint64_t data_end_bytes = 0;  // end of the last record
  uint64_t file_size_bytes = 0;
  LogPosition previous;  // the predecessor's last position
  uint64_t previous_segment = 0;
};

// An epoch and the first version written in it.
struct LogEpochStart {
  uint64_t epoch = 0;
  uint64_t first_version = 0;
};

struct LogStats {
  uint64_t appends = 0;
  uint64_t groups = 0;          // group commits performed (one write each)
  uint64_t syncs = 0;           // data syncs performed
  uint64_t bytes_appended = 0;  // bytes written to segments, headers included
  uint64_t payload_bytes = 0;   // operation + body bytes given by callers
  uint64_t queued = 0;          // requests waiting or running now (a gauge)
};

class LogIterator;

// An append queued by Log::AppendAsync. Destroying it waits for its outcome.
// It must be destroyed before the Log it came from.
class PendingAppend {
 public:
  virtual ~PendingAppend() = default;
  // Returns once the append is written and, in the sync modes, synced: what
  // Append would have returned, and there `commit`. Callable more than once.
  // Errors: as Append's.
  virtual Status Wait(LogCommit* commit) = 0;
};

class Log {
 public:
  // Opens (and recovers) the log in `dir`, creating it when allowed.
  // Errors: Corruption (names segment and offset; see LogOptions::salvage),
  // NotFound (no log and !create_if_missing), Busy (another Log holds the
  // directory), IOError.
  static Status Open(const LogOptions& options, const std::string& dir, std::unique_ptr<Log>* log,
                     LogRecoveryReport* report = nullptr);

  virtual ~Log() = default;

  // Appends one commit, assigning it the next version and a timestamp
  // max(now, previous + 1). Returns when the commit is durable in the chosen
  // Durability (unless write.sync is false). Errors: InvalidArgument (record too large), Failed (the log
  // is poisoned; carries the first error), IOError, NoSpace.
  virtual Status Append(const LogWrite& write, LogCommit* commit) = 0;

  // Queues an append and returns without waiting for it: the log's own
  // thread writes and syncs it (grouped with what is queued by then), so a
  // committer can prepare its next commit while this one syncs. Versions
  // follow the order of the calls, as with Append; readers see the commit
  // once its group is durable, as with Append. A crash before then may lose
  // it and the appends queued after it, never one without those before it.
  // Errors, here or from Wait: as Append's.
  virtual Status AppendAsync(const LogWrite& write, std::unique_ptr<PendingAppend>* pending) = 0;

  // Cuts every commit after `version` and starts a new epoch; the next
  // Append gets NextVersion(), as before the cut: the cut versions are
  // never used again. The cut suffix is moved to the archive
  // (discard_suffix = false) or deleted. A crash at any point leaves the old
  // log or the truncated one, and reopening completes an interrupted cut.
  // Waits for in-flight appends. `*new_head`: (the new epoch, `version`).
  // With `first`, the new epoch's first commit is written with the cut, in
  // one step: a crash leaves both or neither (`*first_commit`: its position
  // and timestamp). Errors: InvalidArgument (version beyond the newest, or
  // `first` too large), NotFound (version older than the oldest retained, or
  // not on the log's history: cut by an earlier truncation), Failed, IOError.
  Status TruncateAfter(uint64_t version, bool discard_suffix, LogPosition* new_head) {
    return TruncateAfter(version, discard_suffix, new_head, nullptr, nullptr);
  }
  virtual Status TruncateAfter(uint64_t version, bool discard_suffix, LogPosition* new_head, const LogWrite* first,
                               LogCommit* first_commit) = 0;

  // An iterator positioned at the first commit at or after `from_version`
  // (the oldest retained one when 0); it crosses the jumps in versions where
  // an epoch starts. Errors: NotFound (not retained), InvalidArgument
  // (beyond NextVersion()).
  virtual Status NewIterator(uint64_t from_version, std::unique_ptr<LogIterator>* iterator) = 0;

  // Reads one version. Errors: NotFound (not retained, or not on the log's
  // history), Corruption.
  virtual Status Read(uint64_t version, LogEntry* entry) = 0;

  // The latest version whose timestamp is <= timestamp_us, found by binary
  // search. Errors: NotFound (every retained commit is later, or the log is
  // empty).
  virtual Status VersionAtTime(uint64_t timestamp_us, uint64_t* version) = 0;

  // Oldest and newest retained positions; version 0 when the log is empty.
  virtual LogPosition Oldest() = 0;
  virtual LogPosition Newest() = 0;
  // The version the next Append gets: past every version ever assigned,
  // so after a truncation more than Newest().version + 1.
  virtual uint64_t NextVersion() = 0;
  // Where the log's history stands just before its oldest retained commit:
  // version 0 when retention never deleted a commit of it (the history is
  // whole). State recorded there, or later on the history, can be brought
  // up to date from the log.
  virtual LogPosition BeforeOldest() = 0;
  virtual uint64_t CurrentEpoch() = 0;
  // The id stamped on every segment of this log (and seeding its checksums).
  virtual uint64_t StoreId() = 0;
  // Epoch starts still visible in retained segments, oldest first.
  virtual std::vector<LogEpochStart> EpochHistory() = 0;

  // Deletes whole segments every version of which is older than
  // `pinned_version` (the oldest version any reader, point or snapshot still
  // needs). The segment being written is never deleted. Crash-safe: a retry
  // or a reopen completes it. Returns how many segments were deleted.
  // Errors: Failed (an earlier failure poisoned the log), NotSupported
  // (read-only), IOError (which poisons it).
  virtual Status DeleteSegmentsBefore(uint64_t pinned_version, uint64_t* deleted) = 0;

  virtual std::vector<LogSegmentInfo> Segments() = 0;
  virtual LogStats Stats() = 0;

  // Syncs anything appended without a sync (Durability::kNoSync, or
  // LogWrite::sync false). Errors: Failed, IOError.
  virtual Status Flush() = 0;

  // For a read-only log whose writer (another handle, in this process or
  // another) goes on appending: takes in the commits appended to the
  // segment being written since the open or the last Refresh, reading only
  // their bytes, so that Newest() and reads see them — what opening the log
  // again would see of that segment, without scanning it from its start. A
  // record being written, or the zero-filled space after the last one, ends
  // what is taken in; a later Refresh goes on from there. Sets *stale (and
  // takes in nothing) when the writer has started a newer segment since,
  // which a new segment, a roll or a truncation does: open the log again to
  // see past it. Errors: NotSupported (not read-only, or oldest_only),
  // IOError. Thread-safety: as reads; one Refresh at a time.
  virtual Status Refresh(bool* stale) = 0;

  // For a read-only log beside its writer: makes durable what this handle
  // reads — the segment being written and the log's directory — should
  // the writer not have synced it yet, so that a reader never reports a
  // commit a power loss could take back. Errors: NotSupported (not
  // read-only), IOError.
  virtual Status MakeReadDurable() = 0;
};

// Reads commits in version order. Not thread-safe.
class LogIterator {
 public:
  virtual ~LogIterator() = default;
  // Reads the next commit. Returns false at the end of the log (as of that
  // call) or on error; then status() says which.
  virtual bool Next(LogEntry* entry) = 0;
  // OK at the end of the log. Errors: Corruption (a damaged record, naming
  // segment and offset), IOError.
  virtual Status status() const = 0;
};

// Reads an archived cut: the directory "<archive>/epoch-NNNNNN" that a
// TruncateAfter which started epoch N filled with the commits it cut. Calls
// `visit` with each commit in version order, every record verified, until
// `visit` returns false (a cut of no commit visits nothing). Errors:
// NotFound (no such cut), Corruption (a bad record, or a gap between the
// cut's files), IOError.
Status ScanArchivedCut(Env* env, const std::string& cut_dir, const std::function<bool(const LogEntry&)>& visit);

// The version the truncation that made the cut in `cut_dir` kept: the one
// its first commit followed on the log's history (which may be more than
// one before it: versions an earlier truncation cut are never used again).
// Errors: NotFound (no such cut, or one of no commit), Corruption, IOError.
Status ArchivedCutPoint(Env* env, const std::string& cut_dir, uint64_t* point);

// Whether `name`, in the log's archive, is an archived cut's directory,
// "epoch-" and the epoch N whose truncation made it, and that N into
// `*new_epoch`. Other names in the archive are not cuts.
bool ParseArchivedCutName(std::string_view name, uint64_t* new_epoch);

// Whether the cut in `cut_dir` was archived whole (its COMPLETE marker).
bool ArchivedCutComplete(Env* env, const std::string& cut_dir);

// Deletes the archived cut in `cut_dir` so that a crash at any point leaves
// either the whole cut or one that reads as incomplete and that the next
// call removes. OK if it does not exist. Errors: IOError.
Status RemoveArchivedCut(Env* env, const std::string& cut_dir);

// Reads and checks every retained record of the log in `dir` (checksums,
// versions, epochs, payloads) without changing anything. `*records` counts
// the records checked. Errors: Corruption naming the first bad segment and
// offset, NotFound, IOError.
Status VerifyLog(Env* env, const std::string& dir, uint64_t* records);

}  // namespace spool
