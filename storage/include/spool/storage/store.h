// Store: one directory owned by one process (docs/design.md): versioned
// tables on the transaction log.
//
//   <dir>/STORE       marks the directory as a store (format version)
//   <dir>/LOCK        held (flock) by the process that has the store open
//   <dir>/log/        the transaction log: the only source of truth
//   <dir>/state/      LMDB: current rows, catalog, checkpoints (derived)
//   <dir>/snapshots/  consistent copies of the state at one version (derived)
//   <dir>/log/archive log suffixes cut by truncations, kept until vacuum
//   <dir>/events/     the event log, which no rewind truncates
//   <dir>/PINS        versions that vacuum must keep (rewind points, …)
//
// Every table commit is one log record at one version (table.h). The state
// is brought up to date from the log when the store opens, so deleting any
// derived file loses nothing the log still holds.
//
// Time travel reads a version either backward — the current state with every
// later commit undone from the pre-images the log keeps — or forward — the
// newest snapshot at or before it with the log after it replayed —
// whichever reads fewer bytes. Any version whose commit is retained can be
// read.
//
// Thread-safety: safe for concurrent use. Commits are serialised; reads run
// concurrently with them and see every acknowledged commit. Callbacks given
// to reads run without any store lock held, but must not close the store.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spool/storage/event_log.h"
#include "spool/storage/table.h"
#include "spool/txnlog/log.h"

namespace spool {

class StoreImpl;

struct StoreOptions {
  Env* env = Env::Default();
  // Create the store when `dir` does not exist or is empty.
  bool create_if_missing = true;
  // Options of the transaction log (its env is set to `env`).
  LogOptions log;
  // Where the LMDB state lives. LMDB does its own I/O on the real file
  // system, so this must be a real directory; empty: "<dir>/state", which
  // needs `env` to be the real file system. Tests that run the log on a
  // FaultEnv put the state in a temporary directory of their own.
  std::string state_dir;
  // Staged commits go to LMDB in batches of this many commits (or bytes),
  // written by a background thread (or by the committer when false).
  uint64_t state_batch_commits = 512;
  uint64_t state_batch_bytes = 32ull << 20;
  bool state_background_apply = true;
  // The LMDB map's size: the most the state (rows, history, catalog) can
  // grow to, reserved as address space, not memory, when the store opens.
  // Lower it where address space is limited (ulimit -v, valgrind); a state
  // that outgrows it fails its commits with NoSpace.
  uint64_t state_map_bytes = 256ull << 30;
  // Open checks the state's LMDB file whole before using it: every page's
  // structure and every value's checksum (docs/operations.md, "Damage").
  // Damage fails Open with Corruption and `spool repair` as the way out,
  // where LMDB itself would return wrong rows or crash. Costs one read of
  // the state; turn it off only where the disk is trusted.
  bool check_state_on_open = true;
  // Automatic snapshots: after this many versions, bytes of commits, or
  // microseconds since the last one (0 disables each trigger).
  uint64_t snapshot_every_versions = 10000;
  uint64_t snapshot_every_bytes = 256ull << 20;
  uint64_t snapshot_every_us = 0;
  // How long vacuum keeps history, and the least it accepts unless forced.
  uint64_t retention_us = 7ull * 24 * 3600 * 1000000;
  uint64_t min_retention_us = 7ull * 24 * 3600 * 1000000;
  // How many state copies (SaveStateCopy) are kept, the newest first; each
  // is the size of the current state without its history. 0: none.
  uint64_t state_copies = 2;
  // Open beside the process that holds the store for writing (or with no
  // writer at all), changing nothing and never blocking it: the store as of
  // its last durable commit at the open, read consistently for as long as
  // it stays open (open it again to see later commits). What this handle
  // reads is made durable first, so it never shows a commit a power loss
  // could take back. Every call that would write — commits, restores,
  // rewinds, snapshots, pins, vacuum, update claims — returns
  // NotSupported. Another handle of the same store in this process cannot
  // sit beside it (Busy): read through that one. The state's file is
  // checked (check_state_on_open) only when no writer has it open; the
  // writer checked it when it opened. LMDB keeps the pages a reader reads
  // until it closes: a reader that stays open long holds disk.
  bool read_only = false;
};

// The versions a read may ask for.
struct VersionRange {
  uint64_t oldest = 0;  // 0 when the store has no commits
  uint64_t newest = 0;
  uint64_t oldest_timestamp_us = 0;
  uint64_t newest_timestamp_us = 0;
};

struct SnapshotInfo {
  std::string file_name;
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
  uint64_t bytes = 0;
  uint64_t entries = 0;  // rows, catalog entries and checkpoints
};

struct VacuumOptions {
  std::optional<uint64_t> retain_us;  // default: StoreOptions::retention_us
  bool dry_run = false;
  bool force = false;  // allow a window below StoreOptions::min_retention_us
  // Called as the deletions go, with the files deleted of those doomed (for
  // a progress bar).
  std::function<void(uint64_t done, uint64_t total)> on_progress;
};

struct VacuumReport {
  uint64_t floor_version = 0;      // the oldest version kept
  std::vector<std::string> paths;  // deleted (or, dry run, to delete)
  uint64_t bytes = 0;
  uint64_t log_segments = 0;
  uint64_t snapshots = 0;
  uint64_t archive_files = 0;
  uint64_t history_runs = 0;  // history index runs dropped, one per commit and table (not in a dry run)
  // The state's file: compacted when a quarter or more of it was free
  // pages (after the history dropped), its size before and after.
  bool state_compacted = false;
  uint64_t state_bytes_before = 0;
  uint64_t state_bytes_after = 0;
  bool snapshot_taken = false;  // a base snapshot was taken (or would be)
  std::string held_by;          // what set the floor: "retention", "pin NAME", …
};

// The upper bounds (microseconds) of the commit latency histogram's buckets.
inline constexpr uint64_t kCommitLatencyBoundsUs[] = {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000, 1000000};

struct StoreStats {
  uint64_t commits = 0;
  uint64_t rows_written = 0;
  // Commit latency, from Commit's call to its return (the log's sync
  // included), by the Env's clock: commit_latency[i] counts the commits of
  // at most kCommitLatencyBoundsUs[i] µs that no lower bound holds; the last
  // element, the slower ones.
  std::array<uint64_t, std::size(kCommitLatencyBoundsUs) + 1> commit_latency{};
  uint64_t commit_latency_sum_us = 0;
  uint64_t state_batches = 0;
  uint64_t snapshots_taken = 0;
  std::string snapshot_error;  // the last automatic snapshot that failed
};

// Keeps what a reader needs from vacuum while it lives.
class VersionPin {
 public:
  virtual ~VersionPin() = default;
};

// A commit queued by Store::CommitAsync, for Store::Wait.
struct InFlightCommit;
class PendingCommit {
 public:
  bool empty() const { return commit_ == nullptr; }

 private:
  friend class StoreImpl;
  std::shared_ptr<InFlightCommit> commit_;
};

// One file, or one set of files, that VerifyStore checked.
struct StoreFileCheck {
  std::string kind;  // "marker", "log", "state", "state copy", "snapshot", "pins", "events", "archived cut"
  std::string path;
  uint64_t bytes = 0;
  uint64_t items = 0;  // records, entries or pins checked
  Status status;       // OK, or the damage found
};

struct VerifyReport {
  std::vector<StoreFileCheck> files;
  bool damaged() const;
  uint64_t bytes() const;  // checked, all files together
};

// Checks the store in `dir` while it is closed, changing nothing: every
// record of the log, every page and value of the state and of its copies,
// every snapshot, the pins, the event log and the archived cuts, each
// against its checksums; and them against each other: the state, its
// copies, the snapshots and the pins are of this store and at versions its
// log has, and no damaged log record is one the state applied. Damage goes
// in the report. Errors: Busy (the store is open), NotFound (not a store),
// IOError.
Status VerifyStore(const StoreOptions& options, const std::string& dir, VerifyReport* report);

struct RepairReport {
  uint64_t version = 0;              // the state's position after the repair
  std::string rebuilt_from;          // the snapshot file, or empty: the log's start
  std::vector<std::string> removed;  // damaged files deleted: "what: why"
};

// Rebuilds the state of the closed store in `dir` from the newest intact
// snapshot and the log, deleting damaged snapshots, state copies, archived
// cuts and a damaged PINS file (its pins come back with the pipeline's
// next update); a damaged event log is set aside (renamed) for a new one.
// Crash-safe: the old state is set aside by one rename before the rebuild,
// which a crash leaves to the next open to finish. Errors: Busy, NotFound,
// Corruption (the log itself is damaged: the state cannot be rebuilt from
// it), IOError.
Status RepairStore(const StoreOptions& options, const std::string& dir, RepairReport* report);

// The store's update slot while it lives (Store::ClaimUpdate).
class UpdateClaim {
 public:
  virtual ~UpdateClaim() = default;
};

class Store {
 public:
  // Opens the store in `dir`, creating it when allowed, recovers its log and
  // brings the state up to date (read-only: see StoreOptions::read_only).
  // Errors: Busy (another process or handle has it open; read-only: a
  // handle of this process has, or the writer rewound at every attempt to
  // open), NotFound (no store and !create_if_missing, or read-only), InvalidArgument
  // (`dir` holds other files and is not a store), Corruption, IOError.
  static Status Open(const StoreOptions& options, const std::string& dir, std::unique_ptr<Store>* store);
  ~Store();

  const std::string& dir() const;
  // The store's log, for reading positions, segments and records. Every
  // record in it is a table commit the state replays: appending to it
  // directly (anything but Store::Commit) makes the next open fail to
  // decode it.
  Log* log();
  EventLog* events();
  const StoreOptions& options() const;

  // Commits `txn` as one version. Errors (nothing written): InvalidArgument
  // naming the table, column or operation that does not fit. After the log
  // write: Failed, IOError, NoSpace (as Log::Append).
  Status Commit(const Transaction& txn, CommitResult* result = nullptr);

  // Commit in two halves: CommitAsync checks and builds the commit and
  // queues it for the log, returning before its sync, so that the caller can
  // prepare its next commit meanwhile; Wait returns what Commit would have.
  // Later commits build on a queued one (they see its rows); readers see it
  // once it is waited for (by Wait, or by any later Commit or call that
  // needs the current state). A crash before it is durable loses it and the
  // commits queued after it, never one without those before. A commit that
  // changes a table's definition is waited for inside CommitAsync.
  // Errors: as Commit's, from CommitAsync (nothing written) or from Wait.
  Status CommitAsync(const Transaction& txn, PendingCommit* pending);
  Status Wait(PendingCommit* pending, CommitResult* result = nullptr);

  // The current catalog, by name.
  std::vector<TableInfo> ListTables();
  // Errors: NotFound.
  Status GetTable(const TableId& id, TableInfo* table);

  // Reads a table (its current version, or as of options.version or
  // options.timestamp_us), calling `visit` with each row in key order (row
  // order of commit for keyless tables) until it returns false. `*table`
  // and `*version_read`, when given, are filled before the first row is
  // visited: the table as of the version read. Rows written before a
  // column was added read it as null. A read as of an older version may
  // leave the memory it decompressed the history into to the store, for
  // the next such read (one buffer, up to 256 MiB, freed when the store
  // closes). Errors: NotFound (no such
  // table at that version), InvalidArgument (a version or timestamp outside
  // the available range, naming the range), Corruption, IOError.
  Status Read(const TableId& id, const ReadOptions& options, const std::function<bool(const Row&)>& visit,
              TableInfo* table = nullptr, uint64_t* version_read = nullptr);
  // Read without copying: each row as a view of the store's memory, valid
  // only during the call to `visit` (copy what must outlive it). Errors: as
  // Read's.
  Status Scan(const TableId& id, const ReadOptions& options, const std::function<bool(const RowView&)>& visit,
              TableInfo* table = nullptr, uint64_t* version_read = nullptr);
  // Point read of a keyed table's current row. Errors: NotFound (table),
  // InvalidArgument (key does not fit).
  Status Get(const TableId& id, const Row& key, Row* row, bool* found);

  // A version at or after the table's last change (its rows, definition or
  // truncation): exactly its last commit's when this handle saw that commit,
  // otherwise the version the store was opened at. Cheap (no I/O): lets a
  // reader skip looking for changes that cannot be there.
  uint64_t LastChangeBound(const TableInfo& table);

  // A flow checkpoint as of the current version (*found false when the flow
  // has none). Errors: Corruption (its value in the state is damaged, named),
  // IOError.
  Status GetCheckpoint(const std::string& flow, std::string* data, bool* found);
  // A flow checkpoint as of `version`: what the first commit after it that
  // set the checkpoint found there, else the current one. Reads the commits
  // after `version`. Errors: InvalidArgument (beyond the newest), NotFound
  // (the log no longer holds the commits after it), Corruption.
  Status GetCheckpointAt(const std::string& flow, uint64_t version, std::string* data, bool* found);

  // Every retained commit that touched the table, newest first (at most
  // `limit`, 0 = all; none before version `from`). Errors: NotFound.
  Status History(const TableId& id, std::vector<HistoryEntry>* history, uint64_t limit = 0, uint64_t from = 0);

  // The change data feed of versions [from, to] (to = 0: newest), in commit
  // order; `*table` (the table as of `to`) is filled before the first
  // change. Errors: NotFound, InvalidArgument (outside the available range).
  Status Changes(const TableId& id, uint64_t from, uint64_t to, const std::function<bool(const ChangeRow&)>& visit,
                 TableInfo* table = nullptr);

  // Brings a table back to `version` with one new RESTORE commit writing
  // the difference (metrics numRestoredRows, numRemovedRows). Errors:
  // NotFound (no such table), InvalidArgument (a version outside the
  // available range, saying which are), Failed, IOError.
  Status Restore(const TableId& id, uint64_t version, CommitResult* result = nullptr);
  // The same for several tables and flow checkpoints in one RESTORE commit
  // (a rewind of some datasets), whose parameters are {"version": version,
  // "tables": [their names]}: each table's rows as they were at
  // `version` (none when it did not exist yet), each checkpoint as it was
  // then (cleared when it had none). Errors: NotFound (a table that does not
  // exist now), InvalidArgument (a table created again since `version`, or
  // `version` outside the available range).
  // `update_id`: the update (a rewind) the commit belongs to, in history.
  Status RestoreTables(const std::vector<TableId>& tables, const std::vector<std::string>& flows, uint64_t version,
                       CommitResult* result = nullptr, std::string_view update_id = {});

  // Rewinds the whole store to `version` (a whole-pipeline rewind): every
  // commit after it is cut from the log and moved to the log's archive, a
  // new epoch starts, and the tables, checkpoints and history are what they
  // were at `version`: the applied state replayed up to it when it is not
  // past it, else rebuilt from the newest snapshot at or before it and the
  // log. With the cut, in one step, goes one RESTORE commit at the next
  // version (past every version the cut held: versions are never used
  // again, and a cut version stays readable from the archive). It names
  // each table that changed after `version` and exists then, so their
  // histories show the rewind (parameters: "version", "tables", and
  // "rewind": the new epoch and the cut's versions; `update_id`), and the
  // change feed yields there what the rewind undid to a reader that had
  // read cut versions. The cost depends on the distance back to that
  // snapshot, not on how much history follows `version`. Named pins past
  // `version` are dropped. Crash-safe: a crash leaves the store before or
  // after the cut, and reopening completes the rest; rewinding again, to
  // the same or another version, converges. Readers taken before go on
  // reading what they had. `*head`: the RESTORE commit's position.
  // Errors: InvalidArgument (`version` beyond the newest), NotFound (older
  // than the log keeps, cut by an earlier rewind, or no snapshot from which
  // to rebuild it: nothing is changed), Failed, IOError.
  Status RewindTo(uint64_t version, LogPosition* head = nullptr, std::string_view update_id = {});
  // What RewindTo(version) checks before it changes anything: OK when it
  // would go ahead. Errors: RewindTo's refusals (InvalidArgument, NotFound).
  Status CanRewindTo(uint64_t version);
  // Whether the commit at `position` is on the log's current history (not
  // cut by a rewind, nor past the newest).
  bool OnHistory(const LogPosition& position);

  // What a RewindTo(`version`) would take back besides the tables `owned`
  // (a pipeline's): `*others`, one line per change after `version` — the
  // rows or definition of a table not owned ("main.x.y"), a table not owned
  // dropped since, or any table's properties ("main.s.t's properties");
  // `*recreated`, the owned tables that existed at `version` and were
  // dropped or created again since (a restore cannot bring those back).
  // Reads no log: each table's last change is kept in the state; a table
  // whose last change is not known counts as changed. Errors: Corruption,
  // IOError.
  Status ChangesBeyond(uint64_t version, const std::set<TableId>& owned, std::vector<std::string>* others,
                       std::vector<std::string>* recreated);

  VersionRange AvailableVersions();
  // How many commits of the current history follow `version` (versions a
  // rewind cut are on no history: they do not count).
  uint64_t CommitsAfter(uint64_t version);

  // A history a rewind cut off: the commits RewindTo moved to the log's
  // archive, read back (and verified) whole.
  struct ArchivedCut {
    std::string dir;         // <store>/log/archive/epoch-NNNNNN
    uint64_t new_epoch = 0;  // the epoch the cut started
    uint64_t point = 0;      // the version the cut followed on the history
    uint64_t first_version = 0, last_version = 0;
    uint64_t first_timestamp_us = 0, last_timestamp_us = 0;
    uint64_t commits = 0;
    bool complete = true;  // false: a vacuum was interrupted deleting it
  };
  // The archived cuts, oldest first. Errors: Corruption (naming the cut), IOError.
  Status ListArchivedCuts(std::vector<ArchivedCut>* cuts);
  // Time travel into a cut history: the table's rows as of `version` of the
  // cut (its rows at the cut's point — from the current history, or from
  // the archive when a later rewind cut that too — then the cut's commits up
  // to `version`), in key order (commit order for keyless tables);
  // `*table`, when given, is the table as of then. Changes nothing. Read
  // (with ReadOptions::version) reads a cut version the same way.
  // Errors: InvalidArgument (`version` outside the cut, or its point no
  // longer retained), NotFound (no such table then, or the version not in
  // the archive), Corruption, IOError.
  Status ReadArchived(const ArchivedCut& cut, const TableId& id, uint64_t version,
                      const std::function<bool(const Row&)>& visit, TableInfo* table = nullptr);

  // Writes a snapshot of the current state, durably. Errors:
  // InvalidArgument (no commits yet), IOError, NoSpace.
  Status TakeSnapshot(SnapshotInfo* info = nullptr);
  // The same, calling `on_progress` with the entries written so far (every
  // 4,096, and at the end).
  Status TakeSnapshot(SnapshotInfo* info, const std::function<void(uint64_t entries)>& on_progress);
  // Snapshots on the current history, oldest first. Errors: IOError.
  Status ListSnapshots(std::vector<SnapshotInfo>* snapshots);

  // Keeps a ready copy of the state at the newest version (as a rewind
  // point does), durably: a RewindTo that version swaps it in instead of
  // rebuilding the state from a snapshot, whatever the amount of history
  // after it. Only the newest StoreOptions::state_copies are kept, and a
  // rewind drops the copies it cut. Errors: IOError, NoSpace.
  Status SaveStateCopy();

  // Keeps `version` (and everything reading it needs) from vacuum until the
  // pin is destroyed.
  std::unique_ptr<VersionPin> PinVersion(uint64_t version);
  // Durable named pins (rewind points): kept until removed. Errors:
  // InvalidArgument (a bad name, a version past the newest), NotFound (a
  // version vacuum removed already), IOError (the PINS file is written
  // atomically).
  Status AddPin(const std::string& name, uint64_t version);
  // Removes the pin `name`. Errors: NotFound (no such pin), IOError (the
  // PINS file is rewritten atomically).
  Status RemovePin(const std::string& name);
  std::vector<std::pair<std::string, uint64_t>> Pins();

  // Deletes log segments, snapshots and archived cuts that no version within
  // the retention window, pin or live reader needs. Errors: InvalidArgument
  // (window below the safety minimum without force), IOError.
  Status Vacuum(const VacuumOptions& options, VacuumReport* report);

  // One update at a time (docs/design.md): claims the store's update slot for
  // `update_id` until `*claim` is destroyed. Other processes cannot open the
  // store meanwhile (its lock file); this keeps two updates of one process
  // apart. Errors: Busy, whose message starts with RESOURCE_CONFLICT and
  // names the running update.
  Status ClaimUpdate(const std::string& update_id, std::unique_ptr<UpdateClaim>* claim);
  // The update holding the slot; empty when none.
  std::string RunningUpdate();

  // Writes every staged commit to LMDB now. Errors: IOError, NoSpace.
  Status FlushState();
  // The snapshot file the state was last rebuilt from, by this handle's
  // open or a rewind; empty when it was not rebuilt, or rebuilt from the
  // log's start.
  const std::string& rebuilt_from() const;
  StoreStats Stats();

 private:
  explicit Store(std::unique_ptr<StoreImpl> impl);

  // The commit path, recovery, reads, pins and vacuum, and their state
  // (storage/store_impl.h, internal to the library).
  const std::unique_ptr<StoreImpl> impl_;
};

}  // namespace spool
