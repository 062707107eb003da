// StoreImpl: the store behind Store (spool/storage/store.h), which hands
// each of its calls to it. Internal to storage: the installed header
// declares only what an embedder uses, and this one the rest — the commit
// path, recovery, time travel, pins and vacuum, and the state they share.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "helper_thread.h"
#include "history_run.h"
#include "spool/storage/store.h"

namespace spool {

class StagedChanges;
class StateStore;
struct CommitRecord;
struct DdlRecord;
struct RowChangeRecord;
struct StateDelta;

class StoreImpl {
 public:
  using ArchivedCut = Store::ArchivedCut;

  // As Store::Open, which wraps the store opened.
  static Status Open(const StoreOptions& options, const std::string& dir, std::unique_ptr<StoreImpl>* store);
  ~StoreImpl();
  // OK, or NotSupported naming `what` when the store is open read-only.
  Status Writable(std::string_view what) const;

  // Store's calls, documented there.
  const std::string& dir() const { return dir_; }
  Log* log() { return log_.get(); }
  EventLog* events() { return events_.get(); }
  const StoreOptions& options() const { return options_; }
  Status Commit(const Transaction& txn, CommitResult* result = nullptr);
  Status CommitAsync(const Transaction& txn, PendingCommit* pending);
  Status Wait(PendingCommit* pending, CommitResult* result = nullptr);
  std::vector<TableInfo> ListTables();
  Status GetTable(const TableId& id, TableInfo* table);
  Status Read(const TableId& id, const ReadOptions& options, const std::function<bool(const Row&)>& visit,
              TableInfo* table = nullptr, uint64_t* version_read = nullptr);
  Status Scan(const TableId& id, const ReadOptions& options, const std::function<bool(const RowView&)>& visit,
              TableInfo* table = nullptr, uint64_t* version_read = nullptr);
  Status Get(const TableId& id, const Row& key, Row* row, bool* found);
  uint64_t LastChangeBound(const TableInfo& table);
  Status GetCheckpoint(const std::string& flow, std::string* data, bool* found);
  Status GetCheckpointAt(const std::string& flow, uint64_t version, std::string* data, bool* found);
  Status History(const TableId& id, std::vector<HistoryEntry>* history, uint64_t limit = 0, uint64_t from = 0);
  Status Changes(const TableId& id, uint64_t from, uint64_t to, const std::function<bool(const ChangeRow&)>& visit,
                 TableInfo* table = nullptr);
  Status Restore(const TableId& id, uint64_t version, CommitResult* result = nullptr);
  Status RestoreTables(const std::vector<TableId>& tables, const std::vector<std::string>& flows, uint64_t version,
                       CommitResult* result = nullptr, std::string_view update_id = {});
  Status RewindTo(uint64_t version, LogPosition* head = nullptr, std::string_view update_id = {});
  Status CanRewindTo(uint64_t version);
  bool OnHistory(const LogPosition& position);
  Status ChangesBeyond(uint64_t version, const std::set<TableId>& owned, std::vector<std::string>* others,
                       std::vector<std::string>* recreated);
  VersionRange AvailableVersions();
  uint64_t CommitsAfter(uint64_t version);
  Status ListArchivedCuts(std::vector<ArchivedCut>* cuts);
  Status ReadArchived(const ArchivedCut& cut, const TableId& id, uint64_t version,
                      const std::function<bool(const Row&)>& visit, TableInfo* table = nullptr);
  Status TakeSnapshot(SnapshotInfo* info = nullptr);
  Status TakeSnapshot(SnapshotInfo* info, const std::function<void(uint64_t entries)>& on_progress);
  Status ListSnapshots(std::vector<SnapshotInfo>* snapshots);
  Status SaveStateCopy();
  std::unique_ptr<VersionPin> PinVersion(uint64_t version);
  Status AddPin(const std::string& name, uint64_t version);
  Status RemovePin(const std::string& name);
  std::vector<std::pair<std::string, uint64_t>> Pins();
  Status Vacuum(const VacuumOptions& options, VacuumReport* report);
  Status ClaimUpdate(const std::string& update_id, std::unique_ptr<UpdateClaim>* claim);
  std::string RunningUpdate();
  Status FlushState();
  const std::string& rebuilt_from() const { return rebuilt_from_; }
  StoreStats Stats();

 private:
  StoreImpl(StoreOptions options, std::string dir, std::unique_ptr<FileLock> lock);

  class Builder;
  class PinImpl;
  class UpdateClaimImpl;

  // The version the next commit gets (commits queued count).
  uint64_t NextVersionLocked() const;
  // Commit and CommitAsync: `wait`, the commit is appended durably before
  // it returns (it still settles in order, in Wait).
  Status BuildCommit(const Transaction& txn, bool wait, PendingCommit* pending);
  // Queues the commit `builder` built (its record, catalog and state keys
  // taken) for the log, appended already when `wait`: in_flight_'s last.
  Status QueueCommitLocked(const std::string& operation, uint64_t started_us, Builder* builder, bool wait,
                           std::shared_ptr<InFlightCommit>* queued);
  // Settles the queued commits up to `commit`: Wait's part under commit_mu_.
  Status WaitLocked(InFlightCommit& commit, CommitResult* result);
  // Waits for the queued commits in order, staging each that is durable,
  // until `upto` is (every one when null). Returns upto's outcome.
  Status SettleLocked(const InFlightCommit* upto);
  // commit_mu_, held with nothing queued: the state is the log's newest.
  std::unique_lock<std::mutex> LockSettled();

  static Status OpenReadOnly(const StoreOptions& options, const std::string& dir, std::unique_ptr<StoreImpl>* store);
  Status OpenParts();
  Status Recover();
  Status RebuildState();
  Status ReportDamagedSnapshots(const std::vector<std::string>& damaged);
  Status Replay(uint64_t from_version);
  Status LoadCatalog();
  // REQUIRES: commit_mu_ held, nothing queued.
  Status TablesChangedAfter(uint64_t version, std::vector<TableInfo>* tables);
  // The current catalog and the DDL of every commit after `version`, the
  // newest first. Errors: Corruption (a DDL record).
  Status CatalogAndDdlAfter(uint64_t version, std::map<std::string, TableInfo>* catalog,
                            std::vector<std::vector<DdlRecord>>* later);
  // `staged`, `history`: what the commit path made (DeltaFromCommit), or
  // null on replay.
  Status StageCommit(const CommitRecord& record, const LogEntry& entry, StagedChanges* staged = nullptr,
                     StateDelta* history = nullptr);
  bool PositionOnHistory(uint64_t epoch, uint64_t version);
  // Whether `version` is a commit of the current history (not one a rewind
  // cut), or the point just before the oldest retained commit.
  bool VersionOnHistory(uint64_t version);
  bool OnHistoryIn(uint64_t version, std::optional<uint64_t> epoch);
  Status TakeSnapshotLocked(SnapshotInfo* info, const std::function<void(uint64_t entries)>& on_progress = {});
  Status ListSnapshotFiles(std::vector<SnapshotInfo>* snapshots);
  std::string ArchiveDir() const;
  Status MaybeSnapshotLocked();
  Status LoadPins();
  Status SavePinsLocked();
  // Vacuum's steps (store_maintenance.cc).
  struct VacuumPlan;
  void DecideVacuumFloor(uint64_t retain_us, VacuumPlan* plan, VacuumReport* report);
  Status FindDoomedSegments(VacuumPlan* plan, VacuumReport* report);
  void FindDoomedSnapshots(VacuumPlan* plan, VacuumReport* report);
  Status FindDoomedCuts(VacuumPlan* plan, VacuumReport* report);
  Status DeleteDoomed(const VacuumPlan& plan, const VacuumOptions& options, VacuumReport* report);
  Status PruneHistory(uint64_t floor, VacuumReport* report);
  // The history index's floor H: it holds every change after this version
  // (0 when H is absent). Errors: Corruption (a malformed H), IOError.
  Status HistoryFloor(uint64_t* floor);
  Status RecordVacuum(const VacuumReport& report);
  // State copies: each named for its position; those on the history, and
  // (keep_newest) only the newest StoreOptions::state_copies.
  struct StateCopy {
    std::string name;
    uint64_t epoch = 0;
    uint64_t version = 0;
  };
  Status StateCopies(std::vector<StateCopy>* copies);
  Status PruneStateCopies(bool keep_newest);
  Status AdoptStateCopy(uint64_t version);
  Status ResolveVersion(const ReadOptions& options, uint64_t newest, uint64_t* version);
  Status TableAtLocked(const TableId& id, uint64_t version, TableInfo* table);
  struct Capture;
  Status CaptureTable(const TableId& id, const ReadOptions& options, Capture* capture);
  Status CaptureTableLocked(const TableId& id, const ReadOptions& options, Capture* capture);
  Status RestoreTableLocked(const std::vector<ArchivedCut>* cuts, const TableId& id, uint64_t version, Builder* builder,
                            int64_t* restored, int64_t* removed);
  // With `cuts`, a version a rewind cut is read from the archive.
  Status GetCheckpointAtLocked(const std::vector<ArchivedCut>* cuts, const std::string& flow, uint64_t version,
                               std::string* data, bool* found);
  Status ScanCaptured(Capture& capture, const std::string& begin, const std::string& end,
                      const std::function<bool(std::string_view key, std::string_view row)>& visit);
  Status ScanForward(Capture& capture, const SnapshotInfo& base, const std::string& begin, const std::string& end,
                     const std::function<bool(std::string_view key, std::string_view row)>& visit);
  Status ScanBackward(Capture& capture, const std::string& begin, const std::string& end,
                      const std::function<bool(std::string_view key, std::string_view row)>& visit);
  Status ScanIndexed(Capture& capture, const std::string& begin, const std::string& end,
                     const std::function<bool(std::string_view key, std::string_view row)>& visit);
  uint64_t LogBytesBetween(uint64_t after, uint64_t upto);
  // Versions a rewind cut (archived): whether `version` is one (within the
  // newest, not on the current history); which cut of `cuts` holds it
  // (NotFound: vacuumed); that cut's commits up to it (NotFound: not there).
  bool IsCutVersion(uint64_t version);
  Status ScanCutVersion(const TableId& id, const ReadOptions& options, const std::function<bool(const RowView&)>& visit,
                        TableInfo* table, uint64_t* version_read);
  Status CutHolding(const std::vector<ArchivedCut>& cuts, uint64_t version, const ArchivedCut** holding);
  Status ScanArchivedUpTo(const ArchivedCut& cut, uint64_t version,
                          const std::function<Status(const LogEntry&, CommitRecord&)>& visit);
  // REQUIRES: commit_mu_ held, nothing queued. A table's rows as of
  // `version` (key -> encoded row) and the table then; with `cuts`, a
  // version a rewind cut is read from the archive: the rows at its cut's
  // point, then the cut's commits up to it. Errors: NotFound (no such table
  // then, or the archive no longer holds the version), InvalidArgument (not
  // retained).
  Status RowsAtLocked(const std::vector<ArchivedCut>* cuts, const TableId& id, uint64_t version, TableInfo* table,
                      std::map<std::string, std::string>* rows);
  Status ArchivedRowsLocked(const std::vector<ArchivedCut>& cuts, const TableId& id, uint64_t version, TableInfo* table,
                            std::map<std::string, std::string>* rows);
  // The change feed's rows for a rewind's RESTORE commit (`entry`), for a
  // reader whose last version read, `seen`, the rewind cut: what takes the
  // table from its rows at `seen` back to those at the rewind's point.
  Status RewindNetChange(uint64_t uid, uint64_t seen, uint64_t point,
                         const std::function<bool(ChangeType, const std::string& row)>& emit);
  Status ScanCommits(uint64_t uid, uint64_t from, uint64_t to,
                     const std::function<bool(const LogEntry&, CommitRecord&)>& visit);
  Status ScanChanges(uint64_t uid, uint64_t from, uint64_t to,
                     const std::function<void(std::string& key, RowChangeRecord& change)>& visit);
  std::string snapshot_dir() const;

  StoreOptions options_;
  std::string dir_;
  std::unique_ptr<FileLock> lock_;  // released last
  std::unique_ptr<Log> log_;
  std::unique_ptr<EventLog> events_;
  std::unique_ptr<StateStore> state_;

  // Serialises commits, snapshots, restore and vacuum; held while a reader
  // captures a consistent view.
  std::mutex commit_mu_;
  // Commits queued for the log and not yet staged, oldest first (guarded
  // by commit_mu_): builders look up rows in them before the state.
  std::deque<std::shared_ptr<InFlightCommit>> in_flight_;
  // Makes big queued commits' history runs while their records are written
  // (InFlightCommit::history): work the committer's thread then does not.
  HelperThread history_helper_{"spool-history"};
  // Guards catalog_, ddl_ (a current copy for readers) and stats_.
  std::shared_mutex catalog_mu_;
  std::map<std::string, TableInfo> catalog_;  // by TableId::ToString()
  // DDL of retained versions, in order: what time travel undoes to find a
  // table's definition at an older version.
  std::vector<std::pair<uint64_t, std::string>> ddl_;  // version, encoded DdlRecord
  StoreStats stats_;
  uint64_t last_snapshot_version_ = 0;
  std::string rebuilt_from_;
  uint64_t last_snapshot_us_ = 0;
  uint64_t bytes_since_snapshot_ = 0;

  std::mutex changes_mu_;                     // guards what follows
  uint64_t change_floor_ = 0;                 // commits up to here were not seen one by one
  std::map<uint64_t, uint64_t> last_change_;  // table uid -> version of its last commit seen

  std::mutex pins_mu_;
  std::multiset<uint64_t> live_pins_;
  std::map<std::string, uint64_t> pins_;

  std::mutex update_mu_;
  std::string running_update_;  // guarded by update_mu_

  // The memory as-of reads decompress history runs into, kept between them.
  RunMemory run_memory_;
};

}  // namespace spool
