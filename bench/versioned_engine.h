// VersionedEngine: a keyed table with time travel and rewind, for W5, W6
// and keyed W3 (docs/benchmarks.md) — Spool's table API, or a peer used the way
// its users do time travel by hand.
//
// Spool: one keyed table (key bytes primary key, value bytes) in a Store;
// a commit is one Transaction of upserts, time travel is Store::Read with
// ReadOptions::version; the rewind point is what a pipeline's is (a durable
// pin and Store::SaveStateCopy), and rewind is Store::RewindTo the point
// (the history after it cut to the log's archive, as the peers' copies lose
// it) then close and reopen. Bringing a table back while keeping the
// history, as a new version (Store::Restore), is the `snapshot` workload's
// restore.
//
// Peers (RocksDB, LMDB, SQLite, LevelDB): every write is a new entry
// key‖version (the version 8 bytes big-endian, so a key's entries sort by
// version); a read as of v is one ordered scan keeping, for each key, the
// newest entry with version ≤ v; the latest read is the same scan with v =
// the newest version. Rewind restores a copy of the store taken at the
// rewind point: RocksDB's Checkpoint (hard links), LevelDB's files
// hard-linked (the mutable ones copied) while closed, LMDB's mdb_env_copy
// and SQLite's online backup, both copied back over the store's file.
//
// The history operations (history_workloads.h): Spool's own — its change
// data feed (Store::Changes), Store::TakeSnapshot, Store::Restore (a new
// version) and Store::Vacuum (a pin holding the floor) — against the
// peers by hand (VersionedPeer): the change feed is one ordered scan of
// every entry keeping those of the versions asked for (key‖version entries
// have no index by version); a snapshot is the rewind point's copy; a
// restore reads the table as of the version and commits, as a new
// version, every row whose latest value differs; a vacuum deletes, in one
// durable write, every entry older than its key's newest entry at or
// before the floor, then reclaims the space as the engine's users do
// (RocksDB and LevelDB: a full CompactRange; LMDB and SQLite: none — the
// pages go to the free list, as without VACUUM).
//
// Every commit is durable (Spool's default kSync; peers fsync per commit).
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "records.h"
#include "spool/txnlog/status.h"

namespace spool::bench {

// Version numbers every engine shares: Spool's store versions. Version 1 is
// Spool's CREATE TABLE (peers have no DDL commit and leave it unused); data
// commits are numbered from 2, one version per commit.
inline constexpr uint64_t kFirstDataVersion = 2;

// Called with each row of a read, in key order.
using RowVisitor = std::function<void(std::string_view key, std::string_view value)>;
// Called with each row a commit wrote, and the commit's version.
using ChangeVisitor = std::function<void(uint64_t version, std::string_view key, std::string_view value)>;

// The phases of a rewind, in seconds.
struct RewindTimes {
  double restore_s = 0;  // Spool: Store::Restore (one durable commit); LMDB, SQLite: copy back + fsync
  double close_s = 0;    // closing the store at the newest version (Spool: after the restore)
  double open_s = 0;     // opening the store at the rewind point (RocksDB, LevelDB: the checkpoint)
};

class VersionedEngine {
 public:
  virtual ~VersionedEngine() = default;

  virtual std::string_view name() const = 0;
  // Opens the store in `dir` (an existing directory), creating the store —
  // and Spool's table — when missing.
  virtual Status Open(const std::string& dir) = 0;
  // One durable commit at `version` (the previous commit's plus one, from
  // kFirstDataVersion) upserting every row.
  virtual Status Commit(uint64_t version, std::span<const Record> rows) = 0;
  // A full read of the table as of `version`.
  virtual Status ReadAsOf(uint64_t version, const RowVisitor& visit) = 0;
  // A full read of the newest version.
  virtual Status ReadLatest(const RowVisitor& visit) = 0;
  // W6: makes the current version the rewind point. Peers copy or
  // checkpoint the store into `point_dir` (which does not exist yet).
  virtual Status MarkRewindPoint(const std::string& point_dir) = 0;
  // Bytes on disk inside the store's directory of what MarkRewindPoint
  // keeps (Spool's state copy), left out of the store's disk figures as
  // the peers' copies are, which live beside it.
  virtual uint64_t RewindPointBytes() { return 0; }
  // W6: brings the table back to the rewind point and leaves the store open
  // there (RocksDB and LevelDB on the checkpoint directory).
  virtual Status Rewind(RewindTimes* times) = 0;
  // Closes the store; idempotent.
  virtual Status Close() = 0;

  // The history operations (see the top of this file).
  // Every row written by the versions in (from, to], each once.
  virtual Status ScanChanges(uint64_t from, uint64_t to, const ChangeVisitor& visit) = 0;
  // A durable snapshot of the newest version (peers: in `snapshot_dir`,
  // which does not exist yet; Spool: in the store).
  virtual Status TakeSnapshot(const std::string& snapshot_dir) = 0;
  // Brings the table back to `version` with one durable commit at
  // `new_version` (the next version); the history stays.
  virtual Status RestoreAsNewVersion(uint64_t version, uint64_t new_version) = 0;
  // Drops the history no read as of `floor` or later needs.
  virtual Status Vacuum(uint64_t floor) = 0;
};

// A peer's versioned table: reads, the change feed, the restore, the
// vacuum and the rewind point built on a few calls each peer implements.
class VersionedPeer : public VersionedEngine {
 public:
  Status ReadAsOf(uint64_t version, const RowVisitor& visit) final;
  Status ReadLatest(const RowVisitor& visit) final;
  Status MarkRewindPoint(const std::string& point_dir) final;
  Status ScanChanges(uint64_t from, uint64_t to, const ChangeVisitor& visit) final;
  Status RestoreAsNewVersion(uint64_t version, uint64_t new_version) final;
  Status Vacuum(uint64_t floor) final;

 protected:
  // Called with each stored entry, key‖version and value; an error stops the scan.
  using EntryVisitor = std::function<Status(std::string_view versioned_key, std::string_view value)>;

  // Every entry in key order.
  virtual Status ScanEntries(const EntryVisitor& visit) = 0;
  // Deletes these entries in one durable write.
  virtual Status DeleteEntries(std::span<const std::string> versioned_keys) = 0;
  // Reclaims the space of deleted entries as the engine's users do.
  virtual Status Compact() { return Status::OK(); }

  // The rewind point's copy (MarkRewindPoint), for Rewind.
  const std::string& point_dir() const { return point_dir_; }

 private:
  std::string point_dir_;
};

// A new, closed engine; null for engines without a table variant ("spool-group").
std::unique_ptr<VersionedEngine> MakeVersionedEngine(std::string_view engine);

std::unique_ptr<VersionedEngine> NewSpoolTableEngine();
std::unique_ptr<VersionedEngine> NewVersionedRocksDb();
std::unique_ptr<VersionedEngine> NewVersionedLmdb();
std::unique_ptr<VersionedEngine> NewVersionedSqlite();
std::unique_ptr<VersionedEngine> NewVersionedLevelDb();

// What the peers share.
namespace versioned {

inline constexpr size_t kVersionBytes = 8;

// key‖version(be64), into `out` (replaced).
void EncodeKey(std::string_view key, uint64_t version, std::string* out);
// The inverse. Errors: Corruption (too short to hold a version).
Status SplitKey(std::string_view versioned_key, std::string_view* key, uint64_t* version);

// Folds an ordered scan of key‖version entries into the rows as of one
// version: Add each entry in order, then Finish.
class AsOfFolder {
 public:
  AsOfFolder(uint64_t version, const RowVisitor& visit) : version_(version), visit_(visit) {}
  // Errors: Corruption (an entry too short to hold a version).
  Status Add(std::string_view versioned_key, std::string_view value);
  void Finish();

 private:
  const uint64_t version_;
  const RowVisitor& visit_;
  std::string key_;  // the key whose entries are being read
  std::string row_;  // its newest value at or before version_
  bool have_key_ = false;
  bool have_row_ = false;
};

// Copies `from` to `to` (replacing it) and fdatasyncs it. Errors: IOError.
Status CopyFileDurably(const std::string& from, const std::string& to);
// fsync of a file or directory. Errors: IOError.
Status SyncPath(const std::string& path);

}  // namespace versioned
}  // namespace spool::bench
