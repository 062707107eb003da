// Store: opening, recovery of the state, and the commit path.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "commit_codec.h"
#include "helper_thread.h"
#include "kill_point.h"
#include "row_codec.h"
#include "snapshot_file.h"
#include "state_store.h"
#include "store_impl.h"
#include "store_internal.h"
#include "varint.h"

namespace spool {
namespace {

// A close leaves fewer staged commits than both of these to the next open
// (Recover replays them from the log's tail, still in memory), rather than
// write and sync a batch of them to LMDB: a rewind's close, with its one
// RESTORE commit staged, is then a third of what it was (bench w6p).
constexpr uint64_t kReplayedAtOpenCommits = 64;
constexpr uint64_t kReplayedAtOpenBytes = 64 << 10;

// Spool's own tables are changed by its runtime only (Transaction::AllowSpoolTables).
Status RefuseSpoolTable(const TableId& id) {
  if (!id.IsSpools()) return Status::OK();
  return Status::InvalidArgument("table " + id.ToString() +
                                 " is Spool's own (operator state or the pipeline's "
                                 "definition): it cannot be written, deleted, dropped, altered or restored by hand; "
                                 "a full refresh of the dataset its flow writes rebuilds it");
}

// Makes `dir` a store (marker written atomically) or checks that it is one.
Status PrepareDirectory(const StoreOptions& options, const std::string& dir) {
  Env* env = options.env;
  std::vector<std::string> names;
  Status listed = env->ListDir(dir, &names);
  if (!listed.ok() && !listed.IsNotFound()) return listed;
  const std::string marker_path = JoinPath(dir, kMarkerName);
  if (listed.ok() && std::find(names.begin(), names.end(), kMarkerName) != names.end()) {
    std::string marker;
    SPOOL_RETURN_IF_ERROR(ReadFileToString(env, marker_path, &marker));
    if (marker != kMarker) return Status::Corruption(marker_path + " is not a store marker this version reads");
    return Status::OK();
  }
  if (!options.create_if_missing) return Status::NotFound(dir + " is not a Spool store");
  // An interrupted creation leaves at most these behind.
  const bool empty = !listed.ok() || std::all_of(names.begin(), names.end(), [](const std::string& n) {
    return n == kStoreLockName || n == std::string(kMarkerName) + ".tmp";
  });
  if (!empty) return Status::InvalidArgument(dir + " holds other files and is not a Spool store; nothing was changed");
  SPOOL_RETURN_IF_ERROR(env->CreateDir(dir));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(DirName(dir)));
  return WriteFileAtomically(env, marker_path, kMarker);
}

std::string TableError(const TableId& id, std::string_view what) {
  return "table " + id.ToString() + ": " + std::string(what);
}

}  // namespace

namespace {

// A row change with the first 16 bytes of its key as two integers that
// order as the bytes do: most pairs of keys differ there, so sorting a
// commit's changes by key seldom reads the keys themselves.
struct SortedChange {
  explicit SortedChange(const RowChangeRecord& c) : change(&c) {
    uint8_t bytes[16] = {};  // a shorter key: zeros, and the tie goes to the keys
    std::memcpy(bytes, c.key.data(), std::min(c.key.size(), sizeof(bytes)));
    for (int i = 0; i < 8; ++i) {
      high = high << 8 | bytes[i];
      low = low << 8 | bytes[8 + i];
    }
  }
  friend bool operator<(const SortedChange& a, const SortedChange& b) {
    if (a.high != b.high) return a.high < b.high;
    if (a.low != b.low) return a.low < b.low;
    return a.change->key < b.change->key;
  }
  uint64_t high = 0;
  uint64_t low = 0;
  const RowChangeRecord* change;
};

// Whether `change`, made by a commit at `version`, replaces a row that a
// version showed (not one an earlier change of the same commit wrote):
// the rows the history index keeps.
bool Replaces(const RowChangeRecord& change, uint64_t version) {
  return change.kind != RowChangeKind::kInsert && change.pre_version != version;
}

}  // namespace

void AddHistoryRuns(const CommitRecord& record, uint64_t version, StateDelta* delta) {
  std::vector<SortedChange> replaced;
  for (const TableChangeSet& table : record.tables) {
    // Each key has at most one entry in the run: only its first change in
    // the commit replaces a row a version showed.
    replaced.clear();
    for (const RowChangeRecord& change : table.changes) {
      if (Replaces(change, version)) replaced.emplace_back(change);
    }
    if (replaced.empty()) continue;
    std::sort(replaced.begin(), replaced.end());  // the keys are distinct
    size_t bytes = 0;
    for (const SortedChange& sorted : replaced) bytes += sorted.change->key.size() + sorted.change->pre.size() + 16;
    std::string run;
    run.reserve(bytes);
    for (const SortedChange& sorted : replaced) {
      const RowChangeRecord& change = *sorted.change;
      AppendHistoryEntry(&run, change.key, change.pre_version, change.pre);
    }
    delta->Put(StateHistoryKey(table.uid, version), SealHistoryRun(std::move(run)));
  }
}

StateDelta DeltaFromCommit(const CommitRecord& record, const LogEntry& entry, uint64_t store_id, StagedChanges* staged,
                           StateDelta* history) {
  StateDelta delta;
  for (const DdlRecord& ddl : record.ddl) {
    if (ddl.after) {
      delta.Put(StateCatalogKey(ddl.after->uid), EncodeTableInfo(*ddl.after));
    } else {
      delta.Delete(StateCatalogKey(ddl.before->uid));
    }
  }
  if (!record.ddl.empty()) {
    CommitRecord history_ddl;
    history_ddl.ddl = record.ddl;
    delta.Put(StateDdlKey(entry.position.version), EncodeCommit(history_ddl));
  }
  const uint64_t version = entry.position.version;
  size_t changes = record.checkpoints.size();
  for (const TableChangeSet& table : record.tables) changes += table.changes.size() + 1;
  delta.changes.reserve(delta.changes.size() + changes);
  if (history != nullptr) {
    for (auto& run : history->changes) delta.changes.push_back(std::move(run));
    delta.bytes += history->bytes;
  } else {
    AddHistoryRuns(record, version, &delta);
  }
  if (staged != nullptr) {
    staged->MoveInto(&delta);  // the rows and the checkpoints
  } else {
    for (const TableChangeSet& table : record.tables) {
      uint32_t keyless_index = 0;
      for (const RowChangeRecord& change : table.changes) {
        std::string key = change.key.empty() ? StateRowKey(table.uid, KeylessRowId(version, keyless_index++))
                                             : StateRowKey(table.uid, change.key);
        if (change.kind == RowChangeKind::kDelete) {
          delta.Delete(std::move(key));
        } else {
          delta.Put(std::move(key), StateRowValue(version, change.post));
        }
      }
    }
    for (const CheckpointRecord& checkpoint : record.checkpoints) {
      if (checkpoint.after) {
        delta.Put(StateCheckpointKey(checkpoint.flow), *checkpoint.after);
      } else {
        delta.Delete(StateCheckpointKey(checkpoint.flow));
      }
    }
  }
  // Each table's last change; a dropped table's goes with it.
  std::string at;
  PutBigEndian64(&at, version);
  for (const TableChangeSet& table : record.tables) delta.Put(StateLastChangeKey(table.uid), at);
  for (const DdlRecord& ddl : record.ddl) {
    if (ddl.after) {
      delta.Put(StateLastChangeKey(ddl.after->uid), at);
    } else {
      delta.Delete(StateLastChangeKey(ddl.before->uid));
    }
  }
  delta.position = StatePosition{store_id, entry.position.epoch, entry.position.version, entry.timestamp_us};
  return delta;
}

std::string StateLastChangeKey(uint64_t uid) {
  std::string key(kStateLastChangePrefix);
  PutBigEndian64(&key, uid);
  return key;
}

std::string StateDdlKey(uint64_t version) {
  std::string key(kStateDdlPrefix);
  PutBigEndian64(&key, version);
  return key;
}

std::string StateHistoryKey(uint64_t uid, uint64_t version) {
  std::string key = StateHistoryPrefix(uid);
  PutBigEndian64(&key, version);
  return key;
}

std::string StateRowValue(uint64_t written, std::string_view row) {
  std::string value;
  value.reserve(row.size() + 5);
  PutVarint(&value, written);
  value.append(row);
  return value;
}

// ---------------------------------------------------------------------------
// Opening and recovery

StoreImpl::StoreImpl(StoreOptions options, std::string dir, std::unique_ptr<FileLock> lock)
    : options_(std::move(options)), dir_(std::move(dir)), lock_(std::move(lock)) {}

StoreImpl::~StoreImpl() {
  if (!in_flight_.empty()) (void)LockSettled();
  if (state_ != nullptr && !options_.read_only) {
    // What is staged is applied for a faster next open (the log has it all
    // anyway), unless there is so little that replaying it costs the next
    // open less than a synced batch costs this close. The log's clean close
    // vouches for those commits at the next open, as the state would.
    Status flushed = state_->FlushUnlessBelow(kReplayedAtOpenCommits, kReplayedAtOpenBytes);
    (void)flushed;
  }
  state_.reset();
  events_.reset();
  log_.reset();
}

Status StoreImpl::Writable(std::string_view what) const {
  if (!options_.read_only) return Status::OK();
  return Status::NotSupported("store " + dir_ + " is open read-only: cannot " + std::string(what));
}

Status StoreImpl::Open(const StoreOptions& options, const std::string& dir, std::unique_ptr<StoreImpl>* store) {
  if (options.read_only) return OpenReadOnly(options, dir, store);
  SPOOL_RETURN_IF_ERROR(PrepareDirectory(options, dir));
  std::unique_ptr<FileLock> lock;
  Status s = options.env->LockFile(JoinPath(dir, kStoreLockName), &lock);
  if (s.IsBusy()) return Status::Busy("store " + dir + " is open in another process or handle");
  SPOOL_RETURN_IF_ERROR(s);
  std::unique_ptr<StoreImpl> opened(new StoreImpl(options, dir, std::move(lock)));
  SPOOL_RETURN_IF_ERROR(opened->OpenParts());
  *store = std::move(opened);
  return Status::OK();
}

// Beside a writer, nothing locked, created or changed. The state's pinned
// read transaction fixes what LMDB holds; the log, opened after it, adds
// the commits LMDB has not had yet (staged in memory) up to its newest
// record, which the reader makes durable. A writer caught halfway through
// something — a record half written, a rewind that has moved the state
// and not yet the log, a segment vacuumed between listing and opening —
// is met by opening again, a few times, before its error is returned.
Status StoreImpl::OpenReadOnly(const StoreOptions& options, const std::string& dir, std::unique_ptr<StoreImpl>* store) {
  StoreOptions existing = options;
  existing.create_if_missing = false;
  SPOOL_RETURN_IF_ERROR(PrepareDirectory(existing, dir));
  constexpr int kAttempts = 8;
  Status s;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::unique_ptr<StoreImpl> opened(new StoreImpl(existing, dir, nullptr));
    s = opened->OpenParts();
    if (s.ok()) s = opened->log_->MakeReadDurable();
    if (s.ok()) {
      *store = std::move(opened);
      return Status::OK();
    }
    if (!s.IsCorruption() && !s.IsNotFound() && !s.IsAborted()) break;
  }
  return s.WithContext("read-only open of store " + dir);
}

// The state, the log and the event log, and what recovery makes of them.
Status StoreImpl::OpenParts() {
  const bool read_only = options_.read_only;
  StateStoreOptions state_options;
  state_options.path = options_.state_dir.empty() ? JoinPath(dir_, "state") : options_.state_dir;
  state_options.batch_commits = options_.state_batch_commits;
  state_options.batch_bytes = options_.state_batch_bytes;
  state_options.background = options_.state_background_apply;
  state_options.map_size_bytes = options_.state_map_bytes;
  state_options.check_on_open = options_.check_state_on_open;
  state_options.read_only = read_only;
  SPOOL_RETURN_IF_ERROR(StateStore::Open(state_options, &state_));
  // The state applies only commits the log acknowledged: what it applied
  // tells the log's recovery a damaged tail from a torn one.
  StatePosition applied;
  SPOOL_RETURN_IF_ERROR(state_->AppliedPosition(&applied));
  LogOptions log_options = options_.log;
  log_options.env = options_.env;
  log_options.read_only = read_only;
  log_options.known_durable = LogPosition{applied.epoch, applied.version};
  log_options.known_durable_store_id = applied.store_id;
  log_options.known_durable_from_clean_close = true;
  SPOOL_RETURN_IF_ERROR(Log::Open(log_options, JoinPath(dir_, "log"), &log_).WithContext("store log"));
  SPOOL_RETURN_IF_ERROR(
      EventLog::Open(options_.env, JoinPath(dir_, "events"), &events_, read_only).WithContext("event log"));
  return Recover();
}

std::string StoreImpl::snapshot_dir() const { return JoinPath(dir_, "snapshots"); }

bool StoreImpl::OnHistory(const LogPosition& position) { return PositionOnHistory(position.epoch, position.version); }

// Whether (epoch, version) is a position of the log's current history, so
// that state recorded there can be brought forward by replaying the log.
bool StoreImpl::PositionOnHistory(uint64_t epoch, uint64_t version) { return OnHistoryIn(version, epoch); }

bool StoreImpl::VersionOnHistory(uint64_t version) { return OnHistoryIn(version, std::nullopt); }

bool StoreImpl::OnHistoryIn(uint64_t version, std::optional<uint64_t> epoch) {
  const LogPosition newest = log_->Newest();
  if (version > newest.version) return false;
  if (version == 0) return log_->BeforeOldest().version == 0;
  // The segment holding the version says its epoch: no record is read.
  const std::vector<LogSegmentInfo> segments = log_->Segments();
  if (std::any_of(segments.begin(), segments.end(), [&](const LogSegmentInfo& s) {
        return s.first_version <= version && version <= s.last_version && (!epoch || s.epoch == *epoch);
      })) {
    return true;
  }
  // Just before the oldest retained commit: the first segment names it.
  return !segments.empty() && segments.front().previous.version == version &&
         (!epoch || segments.front().previous.epoch == *epoch);
}

Status StoreImpl::Recover() {
  StatePosition applied;
  SPOOL_RETURN_IF_ERROR(state_->AppliedPosition(&applied));
  const uint64_t store_id = log_->StoreId();
  // An empty state (a new store, or the state directory lost) starts from
  // the newest snapshot rather than replaying the whole log.
  const bool usable = (applied.version == 0 && applied.store_id == 0 && log_->Newest().version == 0) ||
                      (applied.store_id == store_id && PositionOnHistory(applied.epoch, applied.version));
  if (!usable && options_.read_only) {
    // Rebuilding writes; a writer mid-rewind leaves this for a moment.
    return Status::Aborted("the state (version " + std::to_string(applied.version) + " of epoch " +
                           std::to_string(applied.epoch) +
                           ") is not on the log's history: a rewind or a rebuild its writer has not finished, or one "
                           "a crash interrupted (opening the store for writing finishes it)");
  }
  if (!usable) SPOOL_RETURN_IF_ERROR(RebuildState());
  {
    // Commits before the replay are not seen one by one: any table may have
    // changed up to there.
    std::lock_guard lock(changes_mu_);
    change_floor_ = state_->position().version;
  }
  SPOOL_RETURN_IF_ERROR(Replay(state_->position().version + 1));
  SPOOL_RETURN_IF_ERROR(LoadCatalog());
  // Leftovers of interrupted snapshot writes.
  std::vector<std::string> names;
  if (!options_.read_only && options_.env->ListDir(snapshot_dir(), &names).ok()) {
    for (const std::string& name : names) {
      if (name.ends_with(".tmp")) SPOOL_RETURN_IF_ERROR(options_.env->RemoveFile(JoinPath(snapshot_dir(), name)));
    }
  }
  std::vector<SnapshotInfo> snapshots;
  SPOOL_RETURN_IF_ERROR(ListSnapshotFiles(&snapshots));
  if (!snapshots.empty()) last_snapshot_version_ = snapshots.back().version;
  last_snapshot_us_ = options_.env->NowMicros();
  return LoadPins();
}

// The state is missing, from another store, or from a history that a
// truncation cut: start again from the newest usable snapshot, or from
// nothing when the log still begins at version 1.
Status StoreImpl::RebuildState() {
  std::vector<SnapshotInfo> snapshots;
  SPOOL_RETURN_IF_ERROR(ListSnapshots(&snapshots));
  const uint64_t oldest = log_->Oldest().version;
  const uint64_t before_oldest = log_->BeforeOldest().version;
  const uint64_t store_id = log_->StoreId();
  std::vector<std::string> damaged;  // snapshots skipped: each "file: what is wrong"
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    if (it->version < before_oldest) break;  // the log after it is gone
    SnapshotHeader header;
    Status s =
        state_->Reset(StatePosition{store_id, it->epoch, it->version, it->timestamp_us}, [&](const StateLoader& put) {
          Status put_status;
          Status read = ReadSnapshot(options_.env, JoinPath(snapshot_dir(), it->file_name), store_id, &header,
                                     [&](std::string_view k, std::string_view v) {
                                       put_status = put(k, v);
                                       return put_status.ok();
                                     });
          if (!read.ok()) return read;
          SPOOL_RETURN_IF_ERROR(put_status);
          // The history index covers what replay adds.
          std::string floor;
          PutBigEndian64(&floor, it->version);
          return put(kStateHistoryFloorKey, floor);
        });
    if (s.ok()) {
      rebuilt_from_ = it->file_name;
      return ReportDamagedSnapshots(damaged);
    }
    if (!s.IsCorruption()) return s;
    // A damaged snapshot: said so, and an older one tried.
    damaged.push_back(it->file_name + ": " + std::string(s.message()));
  }
  if (before_oldest == 0) {
    SPOOL_RETURN_IF_ERROR(state_->Reset(StatePosition{store_id, 0, 0, 0}, nullptr));
    rebuilt_from_.clear();
    return ReportDamagedSnapshots(damaged);
  }
  std::string why;
  for (const std::string& d : damaged) why += "; damaged snapshot " + d;
  return Status::Corruption("store " + dir_ + ": the state cannot be rebuilt: no usable snapshot at or after version " +
                            std::to_string(before_oldest) + ", the oldest retained log version is " +
                            std::to_string(oldest) + why);
}

// A damaged snapshot the state was rebuilt without is damage all the same:
// a WARN event names it (the store works on from an older one).
Status StoreImpl::ReportDamagedSnapshots(const std::vector<std::string>& damaged) {
  for (const std::string& d : damaged) {
    Event event;
    event.level = EventLevel::kWarn;
    event.event_type = "snapshot_damaged";
    event.message = "Snapshot " + d + "; the state was rebuilt from an older snapshot and the log.";
    SPOOL_RETURN_IF_ERROR(events_->Append(&event));
  }
  return Status::OK();
}

Status StoreImpl::RewindTo(uint64_t version, LogPosition* head, std::string_view update_id) {
  const uint64_t started = options_.env->NowMicros();
  std::unique_lock commit_lock = LockSettled();
  const LogPosition newest = log_->Newest();
  SPOOL_RETURN_IF_ERROR(CanRewindTo(version));
  // The RESTORE commit that records the rewind in each table it brings back
  // (its history, and the change feed's net change over the cut), written
  // with the cut in one step.
  std::vector<TableInfo> restored;
  SPOOL_RETURN_IF_ERROR(TablesChangedAfter(version, &restored));
  CommitRecord record;
  nlohmann::json names = nlohmann::json::array();
  for (const TableInfo& table : restored) {
    record.tables.push_back(TableChangeSet{table.uid, {}});
    names.push_back(table.id.ToString());
  }
  record.parameters_json =
      nlohmann::json{{"version", version},
                     {"tables", names},
                     {"rewind", {{"epoch", newest.epoch + 1}, {"cut_from", version + 1}, {"cut_to", newest.version}}}}
          .dump();
  record.update_id = update_id;
  record.execution_time_us = options_.env->NowMicros() - started;
  const std::string body = EncodeCommit(record);
  const LogWrite write{"RESTORE", body};
  LogPosition cut;
  LogCommit marker;
  SPOOL_RETURN_IF_ERROR(log_->TruncateAfter(version, /*discard_suffix=*/false, &cut, &write, &marker));
  SPOOL_KILL_POINT("store.rewind.log_cut");
  // The cut is durable: the rest is what reopening the store would do, but
  // with the state of the point swapped in when a copy of it was kept.
  SPOOL_RETURN_IF_ERROR(state_->DropStaged());
  SPOOL_RETURN_IF_ERROR(AdoptStateCopy(version));
  SPOOL_KILL_POINT("store.rewind.state_adopted");
  SPOOL_RETURN_IF_ERROR(Recover());
  SPOOL_KILL_POINT("store.rewind.recovered");
  SPOOL_RETURN_IF_ERROR(PruneStateCopies(/*keep_newest=*/false));
  {
    // Every table counts as changed up to the rewind's commit.
    std::lock_guard lock(changes_mu_);
    last_change_.clear();
    change_floor_ = std::max(change_floor_, marker.position.version);
  }
  bytes_since_snapshot_ = 0;
  {
    std::lock_guard lock(pins_mu_);
    const size_t before = pins_.size();
    std::erase_if(pins_, [&](const auto& pin) { return pin.second > version; });
    if (pins_.size() != before) SPOOL_RETURN_IF_ERROR(SavePinsLocked());
  }
  if (head != nullptr) *head = marker.position;
  return Status::OK();
}

Status StoreImpl::CatalogAndDdlAfter(uint64_t version, std::map<std::string, TableInfo>* catalog,
                                     std::vector<std::vector<DdlRecord>>* later) {
  std::vector<std::pair<uint64_t, std::string>> encoded;
  {
    std::shared_lock lock(catalog_mu_);
    *catalog = catalog_;
    for (auto it = ddl_.rbegin(); it != ddl_.rend() && it->first > version; ++it) encoded.push_back(*it);
  }
  later->clear();
  for (const auto& [ddl_version, bytes] : encoded) {
    CommitRecord record;
    SPOOL_RETURN_IF_ERROR(
        DecodeCommit(bytes, &record).WithContext("DDL history of version " + std::to_string(ddl_version)));
    later->push_back(std::move(record.ddl));
  }
  return Status::OK();
}

// The tables a rewind to `version` brings back: those that exist then and
// whose rows or definition changed since (dropped since included).
Status StoreImpl::TablesChangedAfter(uint64_t version, std::vector<TableInfo>* tables) {
  std::map<uint64_t, TableInfo> found;  // by uid
  std::map<std::string, TableInfo> catalog;
  std::vector<std::vector<DdlRecord>> later;
  SPOOL_RETURN_IF_ERROR(CatalogAndDdlAfter(version, &catalog, &later));
  // Undone newest first: each table as it was at `version` wins.
  for (const std::vector<DdlRecord>& commit : later) {
    for (const DdlRecord& ddl : commit) {
      if (ddl.before && ddl.before->created_version() <= version) found[ddl.before->uid] = *ddl.before;
    }
  }
  for (const auto& [name, table] : catalog) {
    if (table.created_version() > version || found.count(table.uid) != 0) continue;
    std::string at;
    bool known = false;
    SPOOL_RETURN_IF_ERROR(state_->Get(StateLastChangeKey(table.uid), &at, &known));
    const uint64_t last = known && at.size() == 8 ? GetBigEndian64(at) : LastChangeBound(table);
    if (last > version) found[table.uid] = table;
  }
  tables->clear();
  for (auto& [uid, table] : found) tables->push_back(std::move(table));
  return Status::OK();
}

Status StoreImpl::ChangesBeyond(uint64_t version, const std::set<TableId>& owned, std::vector<std::string>* others,
                                std::vector<std::string>* recreated) {
  std::unique_lock commit_lock = LockSettled();  // every queued commit's last change staged
  others->clear();
  recreated->clear();
  std::map<std::string, TableInfo> catalog;
  std::vector<std::vector<DdlRecord>> later;
  SPOOL_RETURN_IF_ERROR(CatalogAndDdlAfter(version, &catalog, &later));
  std::set<std::string> noted;
  auto note = [&](std::vector<std::string>* list, std::string what) {
    if (noted.insert(what).second) list->push_back(std::move(what));
  };
  for (const std::vector<DdlRecord>& commit : later) {
    for (const DdlRecord& ddl : commit) {
      if (ddl.before && ddl.after && ddl.before->uid == ddl.after->uid &&
          ddl.before->properties != ddl.after->properties) {
        note(others, ddl.after->id.ToString() + "'s properties");
      }
      if (!ddl.before || ddl.after) continue;  // a drop
      const TableInfo& dropped = *ddl.before;
      if (owned.count(dropped.id) == 0) {
        note(others, dropped.id.ToString() + ", dropped since");
      } else if (dropped.created_version() <= version) {
        note(recreated, dropped.id.ToString());
      }
    }
  }
  for (const auto& [name, table] : catalog) {
    if (owned.count(table.id) != 0) continue;
    std::string at;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(state_->Get(StateLastChangeKey(table.uid), &at, &found));
    const uint64_t last = found && at.size() == 8 ? GetBigEndian64(at) : LastChangeBound(table);
    if (last > version) note(others, name);
  }
  return Status::OK();
}

// The version must be on the log, and its state rebuildable once the log is
// cut after it: from a snapshot at or before it whose following commits the
// log keeps, or from the log's first commit.
Status StoreImpl::CanRewindTo(uint64_t version) {
  const uint64_t newest = log_->Newest().version;
  if (version > newest) {
    return Status::InvalidArgument("cannot rewind to version " + std::to_string(version) + ": the newest is " +
                                   std::to_string(newest));
  }
  const uint64_t oldest = log_->Oldest().version;
  const uint64_t before_oldest = log_->BeforeOldest().version;
  if (IsCutVersion(version)) {
    return Status::NotFound("cannot rewind to version " + std::to_string(version) +
                            ": a rewind cut it (read it from the archive; it is not on the current history)");
  }
  if (before_oldest == 0) return Status::OK();
  if (version < oldest) {
    return Status::NotFound("cannot rewind to version " + std::to_string(version) +
                            ": the oldest version the log keeps is " + std::to_string(oldest));
  }
  std::vector<SnapshotInfo> snapshots;
  SPOOL_RETURN_IF_ERROR(ListSnapshotFiles(&snapshots));
  for (const SnapshotInfo& snapshot : snapshots) {
    if (snapshot.version <= version && snapshot.version >= before_oldest) return Status::OK();
  }
  return Status::NotFound("cannot rewind to version " + std::to_string(version) +
                          ": no snapshot at or before it is followed by the commits the log keeps (from version " +
                          std::to_string(oldest) + ")");
}

Status StoreImpl::StageCommit(const CommitRecord& record, const LogEntry& entry, StagedChanges* staged,
                              StateDelta* history) {
  {
    std::lock_guard lock(changes_mu_);
    for (const TableChangeSet& set : record.tables) last_change_[set.uid] = entry.position.version;
    for (const DdlRecord& ddl : record.ddl) {
      const TableInfo& table = ddl.after ? *ddl.after : *ddl.before;
      last_change_[table.uid] = entry.position.version;
    }
  }
  return state_->Stage(DeltaFromCommit(record, entry, log_->StoreId(), staged, history));
}

uint64_t StoreImpl::LastChangeBound(const TableInfo& table) {
  std::lock_guard lock(changes_mu_);
  auto it = last_change_.find(table.uid);
  const uint64_t seen = it == last_change_.end() ? 0 : it->second;
  return std::max({seen, change_floor_, table.created_version()});
}

Status StoreImpl::Replay(uint64_t from_version) {
  if (from_version > log_->Newest().version) return Status::OK();
  std::unique_ptr<LogIterator> it;
  SPOOL_RETURN_IF_ERROR(log_->NewIterator(from_version, &it));
  LogEntry entry;
  CommitRecord record;
  while (it->Next(&entry)) {
    Status s = DecodeCommit(entry.body, &record);
    if (!s.ok()) return s.WithContext("log version " + std::to_string(entry.position.version));
    SPOOL_RETURN_IF_ERROR(StageCommit(record, entry));
  }
  return it->status();
}

Status StoreImpl::LoadCatalog() {
  std::map<std::string, TableInfo> catalog;
  std::unique_ptr<StateView> view;
  SPOOL_RETURN_IF_ERROR(state_->NewView(std::string(kStateCatalogPrefix), PrefixEnd(kStateCatalogPrefix), &view));
  for (; view->Valid(); view->Next()) {
    TableInfo table;
    SPOOL_RETURN_IF_ERROR(DecodeTableInfo(view->value(), &table).WithContext("state catalog"));
    catalog[table.id.ToString()] = std::move(table);
  }
  SPOOL_RETURN_IF_ERROR(view->status());
  std::vector<std::pair<uint64_t, std::string>> ddl;
  SPOOL_RETURN_IF_ERROR(state_->NewView(std::string(kStateDdlPrefix), PrefixEnd(kStateDdlPrefix), &view));
  for (; view->Valid(); view->Next()) {
    if (view->key().size() != 9) {
      return Status::Corruption("state DDL key of " + std::to_string(view->key().size()) + " bytes");
    }
    ddl.emplace_back(GetBigEndian64(view->key().substr(1)), std::string(view->value()));
  }
  SPOOL_RETURN_IF_ERROR(view->status());
  std::unique_lock lock(catalog_mu_);
  catalog_ = std::move(catalog);
  ddl_ = std::move(ddl);
  return Status::OK();
}

// ---------------------------------------------------------------------------
// The commit path

// From this many replaced rows a commit's history runs are made on
// StoreImpl::history_helper_: below it, handing them over costs more than
// sorting and copying them.
constexpr size_t kHelperHistoryRows = 256;

// A commit queued for the log and not yet staged (Store::in_flight_).
struct InFlightCommit {
  uint64_t version = 0;
  std::string operation;
  CommitRecord record;
  std::map<std::string, TableInfo> catalog;  // after the commit, when it has DDL
  StagedChanges local;                       // state key -> value after it (its builder's)
  // Its history runs, made by StoreImpl::history_helper_ as job `history_job`
  // (0: by staging instead); read once that job is done, which may be while
  // the helper makes a later commit's.
  StateDelta history;
  uint64_t history_job = 0;
  uint64_t rows = 0;
  uint64_t started_us = 0;
  uint64_t body_bytes = 0;
  std::unique_ptr<PendingAppend> append;  // null: appended durably already, at `written`
  LogCommit written;
  bool settled = false;  // staged, or failed
  Status status;
  std::optional<CommitResult> result;  // once its log append succeeded
};

// Turns a Transaction into a CommitRecord, checking every operation against
// the catalog and rows as the transaction's earlier operations left them.
class StoreImpl::Builder {
 public:
  // A row before a change: its bytes and the version that wrote them.
  struct Image {
    uint64_t written = 0;
    std::string row;
  };

  // `txn`: the transaction whose operations Add takes (null when the
  // store adds only its own, which name no table).
  Builder(StoreImpl* store, uint64_t version, const Transaction* txn = nullptr)
      : store_(store), version_(version), txn_(txn) {
    std::shared_lock lock(store->catalog_mu_);
    catalog_ = store->catalog_;
    if (txn != nullptr) found_.resize(txn->tables().size());
  }

  // Makes room for the row changes of the transaction, so that a big one
  // does not grow its maps and vectors change by change.
  void Reserve() {
    std::vector<size_t> rows(found_.size());
    for (const Transaction::Op& op : txn_->ops()) {
      std::optional<Transaction::TableRef> ref;
      if (const auto* write = std::get_if<Transaction::WriteOp>(&op)) ref = write->table;
      else if (const auto* del = std::get_if<Transaction::DeleteOp>(&op)) ref = del->table;
      if (ref && ref->index < rows.size()) ++rows[ref->index];  // Find refuses another's
    }
    size_t total = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] != 0) reserved_.emplace_back(txn_->tables()[i], rows[i]);
      total += rows[i];
    }
    local_.reserve(total);
  }

  // Applies `op`, the transaction's operation number `index` (when it has
  // one: operations the store adds itself have none).
  static constexpr size_t kNoIndex = SIZE_MAX;
  Status Add(const Transaction::Op& op, size_t index = kNoIndex) {
    current_op_ = index;
    const bool rows_only =
        std::holds_alternative<Transaction::WriteOp>(op) || std::holds_alternative<Transaction::DeleteOp>(op) ||
        std::holds_alternative<Transaction::TruncateOp>(op) || std::holds_alternative<Transaction::CheckpointOp>(op);
    if (!rows_only) ++ddl_ops_;  // what Prefetch computed before it may be stale
    return std::visit([this](const auto& o) { return Apply(o); }, op);
  }

  // Called up to kLookAhead operations before Add(op, index), after the
  // Add of operation index - kLookAhead: for an upsert into
  // a keyed table, computes the row's state key (kept for Add) and starts
  // loading the staged entry its pre-image lookup will read. The lookups of
  // a big transaction then wait for memory together rather than one by one.
  static constexpr size_t kLookAhead = 8;
  void Prefetch(const Transaction::Op& op, size_t index) {
    const auto* write = std::get_if<Transaction::WriteOp>(&op);
    TableInfo* table = nullptr;
    if (write == nullptr || !Find(write->table, &table).ok() || !table->schema.has_key() ||
        !table->schema.Validate(write->row).ok()) {
      return;
    }
    if (reader_ == nullptr && !MakeReader().ok()) return;
    Ahead& ahead = ahead_[index % kLookAhead];
    ahead.valid = true;
    ahead.op = index;
    ahead.ddl_ops = ddl_ops_;
    ahead.state_key = StateRowPrefix(table->uid);
    EncodeKey(table->schema, write->row, &ahead.state_key);
    // Every place LookupKey will look, the key hashed once for them all.
    const StagedChanges::Probe probe = StagedChanges::MakeProbe(ahead.state_key);
    ahead.hash = probe.hash;
    local_.Prefetch(probe);
    for (const auto& queued : store_->in_flight_) queued->local.Prefetch(probe);
    ahead.read = reader_->MakeProbe(ahead.state_key);
    ahead.reader_epoch = reader_epoch_;
    StateReader::Prefetch(ahead.read);
  }

  Status MakeReader() {
    SPOOL_RETURN_IF_ERROR(store_->state_->NewReader(&reader_));
    ++reader_epoch_;
    return Status::OK();
  }

  // Raw row changes (restore): `key` is the row's key within the table.
  Status PutRaw(const TableInfo& table, std::string_view key, std::optional<std::string> row) {
    std::string state_key = StateRowKey(table.uid, key);
    const StagedChanges::Probe probe = StagedChanges::MakeProbe(state_key);
    std::optional<Image> before;
    SPOOL_RETURN_IF_ERROR(Lookup(probe, nullptr, &before));
    Record(table, std::move(state_key), probe.hash, std::move(before), std::move(row), /*keyless_insert=*/false);
    return Status::OK();
  }

  CommitRecord& record() { return record_; }
  const std::map<std::string, TableInfo>& catalog() const { return catalog_; }
  // Done reading: ends the LMDB read transaction before the commit is staged.
  void EndReads() {
    reader_.reset();
    ++reader_epoch_;
  }
  // Makes `table` part of the commit, changed or not (its history shows it).
  void Include(const TableInfo& table) { Touch(table); }
  uint64_t rows() const { return rows_; }
  // Of those, the rows that replace one a version showed: its history runs' entries.
  uint64_t replaced_rows() const { return replaced_rows_; }
  // The state keys this commit sets, with their values after it (taken).
  StagedChanges TakeLocal() { return std::move(local_); }

 private:
  const TableId& Id(Transaction::TableRef ref) const { return txn_->table(ref); }

  Status Find(Transaction::TableRef ref, TableInfo** table) {
    if (ref.index >= found_.size()) {
      return Status::InvalidArgument("a table reference that this transaction's Table() did not give");
    }
    // Each table the transaction names is looked up in the catalog once
    // (again after a drop, which may remove what was found).
    TableInfo*& found = found_[ref.index];
    if (found == nullptr) {
      auto it = catalog_.find(Id(ref).ToString());
      if (it == catalog_.end()) return Status::NotFound("table " + Id(ref).ToString() + " does not exist");
      found = &it->second;
    }
    *table = found;
    return Status::OK();
  }

  Status Apply(const Transaction::CreateOp& op) {
    const TableId& id = Id(op.table);
    if (catalog_.count(id.ToString()) != 0) return Status::InvalidArgument(TableError(id, "already exists"));
    if (op.schema.columns().empty())
      return Status::InvalidArgument(TableError(id, "a table needs at least one column"));
    if (Status s = CheckNoChangeFeedColumns(op.schema); !s.ok())
      return Status::InvalidArgument(TableError(id, s.message()));
    if (created_ == (1u << TableInfo::kUidIndexBits)) {
      return Status::InvalidArgument("a commit may create at most " + std::to_string(1u << TableInfo::kUidIndexBits) +
                                     " tables");
    }
    TableInfo table{id, version_ << TableInfo::kUidIndexBits | created_++, op.kind, op.schema, op.properties};
    for (auto it = table.properties.begin(); it != table.properties.end();) {
      it = it->second.empty() ? table.properties.erase(it) : std::next(it);
    }
    record_.ddl.push_back(DdlRecord{DdlKind::kCreate, std::nullopt, table});
    catalog_[id.ToString()] = std::move(table);
    return Status::OK();
  }

  Status Apply(const Transaction::AddColumnOp& op) {
    TableInfo* table = nullptr;
    SPOOL_RETURN_IF_ERROR(Find(op.table, &table));
    if (!op.column.nullable) {
      return Status::InvalidArgument(
          TableError(Id(op.table),
                     "added column '" + op.column.name + "' must be nullable: rows written before it have no value"));
    }
    std::vector<Column> columns = table->schema.columns();
    columns.push_back(op.column);
    std::vector<std::string> key;
    for (size_t index : table->schema.key_columns()) key.push_back(columns[index].name);
    TableInfo after = *table;
    Status s = Schema::Make(std::move(columns), key, &after.schema);
    if (s.ok()) s = CheckNoChangeFeedColumns(after.schema);
    if (!s.ok()) return Status::InvalidArgument(TableError(Id(op.table), s.message()));
    record_.ddl.push_back(DdlRecord{DdlKind::kAlter, *table, after});
    *table = std::move(after);
    return Status::OK();
  }

  Status Apply(const Transaction::SetPropertiesOp& op) {
    TableInfo* table = nullptr;
    SPOOL_RETURN_IF_ERROR(Find(op.table, &table));
    TableInfo after = *table;
    for (const auto& [key, value] : op.properties) {
      if (key.empty()) return Status::InvalidArgument(TableError(Id(op.table), "a property needs a name"));
      if (value.empty()) after.properties.erase(key);
      else after.properties[key] = value;
    }
    record_.ddl.push_back(DdlRecord{DdlKind::kAlter, *table, after});
    *table = std::move(after);
    return Status::OK();
  }

  Status Apply(const Transaction::DropOp& op) {
    TableInfo* table = nullptr;
    SPOOL_RETURN_IF_ERROR(Find(op.table, &table));
    // The rows go as deletes, so the feed and time travel see them go.
    SPOOL_RETURN_IF_ERROR(DeleteAll(*table));
    record_.ddl.push_back(DdlRecord{DdlKind::kDrop, *table, std::nullopt});
    std::fill(found_.begin(), found_.end(), nullptr);
    catalog_.erase(Id(op.table).ToString());
    return Status::OK();
  }

  Status Apply(const Transaction::WriteOp& op) {
    TableInfo* table = nullptr;
    SPOOL_RETURN_IF_ERROR(Find(op.table, &table));
    // Prefetch validated the row and computed its key, against the same
    // catalog when no definition changed since.
    Ahead* ahead = current_op_ == kNoIndex ? nullptr : &ahead_[current_op_ % kLookAhead];
    const bool computed = ahead != nullptr && ahead->valid && ahead->op == current_op_ && ahead->ddl_ops == ddl_ops_;
    if (ahead != nullptr) ahead->valid = false;
    if (!computed) {
      Status s = table->schema.Validate(op.row);
      if (!s.ok()) return Status::InvalidArgument(TableError(Id(op.table), s.message()));
    }
    std::string row;
    EncodeRow(table->schema, op.row, &row);
    if (!table->schema.has_key()) {
      // Keyless: an append whose row id the version and index give.
      std::string state_key = StateRowKey(table->uid, KeylessRowId(version_, keyless_index_[table->uid]++));
      const size_t hash = StagedChanges::MakeProbe(state_key).hash;
      Record(*table, std::move(state_key), hash, std::nullopt, std::move(row), /*keyless_insert=*/true);
      return Status::OK();
    }
    // The key where Prefetch left it (its read probe views it there), or made now.
    std::string made_key;
    std::string& state_key = computed ? ahead->state_key : made_key;
    size_t hash = computed ? ahead->hash : 0;
    if (!computed) {
      made_key = StateRowPrefix(table->uid);
      EncodeKey(table->schema, op.row, &made_key);
      hash = StagedChanges::MakeProbe(made_key).hash;
    }
    // Where the state store stages the key, as Prefetch found it, unless
    // the reader was made again since.
    const StateReader::Probe* read = computed && ahead->reader_epoch == reader_epoch_ ? &ahead->read : nullptr;
    std::optional<Image> before;
    SPOOL_RETURN_IF_ERROR(Lookup(StagedChanges::Probe{state_key, hash}, read, &before));
    Record(*table, std::move(state_key), hash, std::move(before), std::move(row), false);
    return Status::OK();
  }

  Status Apply(const Transaction::DeleteOp& op) {
    TableInfo* table = nullptr;
    SPOOL_RETURN_IF_ERROR(Find(op.table, &table));
    if (!table->schema.has_key()) {
      return Status::InvalidArgument(
          TableError(Id(op.table), "has no primary key: it is append-only, rows cannot be deleted by key"));
    }
    std::string state_key = StateRowPrefix(table->uid);
    Status s = EncodeKeyValues(table->schema, op.key, /*allow_prefix=*/false, &state_key);
    if (!s.ok()) return Status::InvalidArgument(TableError(Id(op.table), s.message()));
    const StagedChanges::Probe probe = StagedChanges::MakeProbe(state_key);
    std::optional<Image> before;
    SPOOL_RETURN_IF_ERROR(Lookup(probe, nullptr, &before));
    if (before) Record(*table, std::move(state_key), probe.hash, std::move(before), std::nullopt, false);
    else Touch(*table);  // no row to delete: the commit still shows in the table's history
    return Status::OK();
  }

  Status Apply(const Transaction::TruncateOp& op) {
    TableInfo* table = nullptr;
    SPOOL_RETURN_IF_ERROR(Find(op.table, &table));
    Touch(*table);
    return DeleteAll(*table);
  }

  Status Apply(const Transaction::CheckpointOp& op) {
    if (op.flow.empty()) return Status::InvalidArgument("a checkpoint needs a flow name");
    const std::string key = StateCheckpointKey(op.flow);
    std::optional<std::string_view> before;
    SPOOL_RETURN_IF_ERROR(LookupKey(StagedChanges::MakeProbe(key), nullptr, &before));
    record_.checkpoints.push_back(
        CheckpointRecord{op.flow, before ? std::optional<std::string>(*before) : std::nullopt, op.data});
    local_.Set(key, op.data);
    return Status::OK();
  }

  Status DeleteAll(const TableInfo& table) {
    // The committed rows (those of queued commits staged first), then this
    // transaction's changes over them.
    if (!store_->in_flight_.empty()) {
      SPOOL_RETURN_IF_ERROR(store_->SettleLocked(nullptr));
      EndReads();  // the reader may predate what was staged
    }
    const std::string prefix = StateRowPrefix(table.uid);
    std::map<std::string, Image> rows;
    std::unique_ptr<StateView> view;
    SPOOL_RETURN_IF_ERROR(store_->state_->NewView(prefix, PrefixEnd(prefix), &view));
    for (; view->Valid(); view->Next()) {
      SPOOL_RETURN_IF_ERROR(ToImage(view->value(), &rows[std::string(view->key())]));
    }
    SPOOL_RETURN_IF_ERROR(view->status());
    for (const auto& [state_key, value] : local_.entries()) {
      if (!state_key.starts_with(prefix)) continue;
      if (value) SPOOL_RETURN_IF_ERROR(ToImage(*value, &rows[state_key]));
      else rows.erase(state_key);
    }
    for (auto& [state_key, row] : rows) {
      Record(table, state_key, StagedChanges::MakeProbe(state_key).hash, std::move(row), std::nullopt, false);
    }
    return Status::OK();
  }

  // A row as the state holds it (`value`), and the version that wrote it.
  static Status ToImage(std::string_view value, Image* image) {
    std::string_view row;
    SPOOL_RETURN_IF_ERROR(SplitStateRow(value, &image->written, &row));
    image->row.assign(row);
    return Status::OK();
  }

  // The value at a state key (its probe: the key hashed once for every
  // commit's changes it is looked up in; `read`: where the state store
  // stages it, as Prefetch found, or null), viewed where it is staged or in
  // LMDB: valid until the next change.
  Status LookupKey(const StagedChanges::Probe& probe, const StateReader::Probe* read,
                   std::optional<std::string_view>* value) {
    const auto view = [value](const StateValue& staged) {
      if (staged) *value = *staged;
    };
    if (const StateValue* staged = local_.Find(probe)) {
      view(*staged);
      return Status::OK();
    }
    // Then the commits queued before this one, newest first.
    for (auto queued = store_->in_flight_.rbegin(); queued != store_->in_flight_.rend(); ++queued) {
      if (const StateValue* staged = (*queued)->local.Find(probe)) {
        view(*staged);
        return Status::OK();
      }
    }
    if (reader_ == nullptr) SPOOL_RETURN_IF_ERROR(MakeReader());
    bool found = false;
    std::string_view stored;
    SPOOL_RETURN_IF_ERROR(reader_->Get(read != nullptr ? *read : reader_->MakeProbe(probe.key), &stored, &found));
    if (found) *value = stored;
    return Status::OK();
  }

  Status Lookup(const StagedChanges::Probe& probe, const StateReader::Probe* read, std::optional<Image>* row) {
    std::optional<std::string_view> value;
    SPOOL_RETURN_IF_ERROR(LookupKey(probe, read, &value));
    if (!value) return Status::OK();
    row->emplace();
    return ToImage(*value, &**row);
  }

  // The table's change set in the record, created empty on first use.
  TableChangeSet& Touch(const TableInfo& table) {
    // Most changes are to the table of the change before.
    if (touched_ < record_.tables.size() && record_.tables[touched_].uid == table.uid) return record_.tables[touched_];
    auto [it, inserted] = table_index_.try_emplace(table.uid, record_.tables.size());
    touched_ = it->second;
    if (inserted) {
      record_.tables.push_back(TableChangeSet{table.uid, {}});
      for (const auto& [id, rows] : reserved_) {
        if (id == table.id) record_.tables.back().changes.reserve(rows);
      }
    }
    return record_.tables[it->second];
  }

  // One row change at `state_key` (the table's row prefix, then the key;
  // `hash`, StagedChanges::MakeProbe's of it): `before` and `after` absent
  // mean the row did not or does not exist.
  void Record(const TableInfo& table, std::string state_key, size_t hash, std::optional<Image> before,
              std::optional<std::string> after, bool keyless_insert) {
    TableChangeSet& set = Touch(table);
    if (!before && !after) return;
    RowChangeRecord change;
    change.kind = !before ? RowChangeKind::kInsert : !after ? RowChangeKind::kDelete : RowChangeKind::kUpdate;
    if (!keyless_insert) change.key = std::string_view(state_key).substr(kStateRowPrefixBytes);
    if (before) {
      change.pre = std::move(before->row);
      change.pre_version = before->written;
    }
    if (after) {
      local_.Set(std::move(state_key), hash, StateRowValue(version_, *after));
      change.post = std::move(*after);
    } else {
      local_.Set(std::move(state_key), hash, std::nullopt);
    }
    replaced_rows_ += Replaces(change, version_);
    set.changes.push_back(std::move(change));
    ++rows_;
  }

  StoreImpl* store_;
  uint64_t version_;
  std::map<std::string, TableInfo> catalog_;
  // State key -> value after this transaction.
  StagedChanges local_;
  const Transaction* txn_;
  std::vector<TableInfo*> found_;           // in catalog_, by TableRef::index; null: not looked up
  std::map<uint64_t, size_t> table_index_;  // uid -> index in record_.tables
  size_t touched_ = SIZE_MAX;               // the index Touch last gave
  std::map<uint64_t, uint32_t> keyless_index_;
  uint64_t created_ = 0;                 // tables this commit created
  std::unique_ptr<StateReader> reader_;  // made on the first lookup
  uint64_t reader_epoch_ = 0;            // one more whenever reader_ is made or dropped
  CommitRecord record_;
  uint64_t rows_ = 0;
  uint64_t replaced_rows_ = 0;
  std::vector<std::pair<TableId, size_t>> reserved_;  // row operations per table
  // Prefetch's work for operation `op`, valid while ddl_ops_ is unchanged.
  struct Ahead {
    bool valid = false;
    size_t op = 0;
    uint64_t ddl_ops = 0;
    std::string state_key;
    size_t hash = 0;            // StagedChanges::MakeProbe(state_key)'s
    StateReader::Probe read;    // reader_->MakeProbe(state_key) …
    uint64_t reader_epoch = 0;  // … in this reader_epoch_
  };
  Ahead ahead_[kLookAhead];
  size_t current_op_ = 0;
  uint64_t ddl_ops_ = 0;  // operations applied that may change a table's definition
};

Status StoreImpl::Commit(const Transaction& txn, CommitResult* result) {
  PendingCommit pending;
  SPOOL_RETURN_IF_ERROR(BuildCommit(txn, /*wait=*/true, &pending));
  return Wait(&pending, result);
}

Status StoreImpl::CommitAsync(const Transaction& txn, PendingCommit* pending) {
  return BuildCommit(txn, /*wait=*/false, pending);
}

Status StoreImpl::BuildCommit(const Transaction& txn, bool wait, PendingCommit* pending) {
  if (txn.empty()) return Status::InvalidArgument("the transaction is empty");
  if (txn.operation().empty()) return Status::InvalidArgument("a commit needs an operation name");
  if (!txn.allows_spool_tables()) {
    for (const TableId& id : txn.tables()) SPOOL_RETURN_IF_ERROR(RefuseSpoolTable(id));
  }
  const uint64_t started = options_.env->NowMicros();
  std::lock_guard commit_lock(commit_mu_);
  Builder builder(this, NextVersionLocked(), &txn);
  builder.Reserve();
  const std::vector<Transaction::Op>& ops = txn.ops();
  for (size_t i = 0; i < Builder::kLookAhead && i < ops.size(); ++i) builder.Prefetch(ops[i], i);
  for (size_t i = 0; i < ops.size(); ++i) {
    Status s = builder.Add(ops[i], i);
    if (!s.ok()) {
      return Status(s.IsNotFound() ? Status::InvalidArgument(s.message()) : s)
          .WithContext("operation " + std::to_string(i + 1) + " of " + std::to_string(txn.ops().size()));
    }
    // Into the slot operation i used.
    if (i + Builder::kLookAhead < ops.size()) builder.Prefetch(ops[i + Builder::kLookAhead], i + Builder::kLookAhead);
  }
  CommitRecord& record = builder.record();
  record.parameters_json = txn.parameters_json();
  record.update_id = txn.update_id();
  record.metrics = txn.metrics();
  builder.EndReads();
  SPOOL_RETURN_IF_ERROR(QueueCommitLocked(txn.operation(), started, &builder, wait, &pending->commit_));
  // Later builders start from catalog_: it must hold this commit's DDL.
  if (!pending->commit_->record.ddl.empty()) (void)SettleLocked(pending->commit_.get());
  return Status::OK();
}

Status StoreImpl::Wait(PendingCommit* pending, CommitResult* result) {
  if (pending->empty()) return Status::InvalidArgument("no commit to wait for");
  std::lock_guard commit_lock(commit_mu_);
  return WaitLocked(*pending->commit_, result);
}

Status StoreImpl::WaitLocked(InFlightCommit& commit, CommitResult* result) {
  if (!commit.settled) (void)SettleLocked(&commit);
  if (result != nullptr && commit.result) *result = *commit.result;
  return commit.status;
}

uint64_t StoreImpl::NextVersionLocked() const {
  return in_flight_.empty() ? log_->NextVersion() : in_flight_.back()->version + 1;
}

Status StoreImpl::QueueCommitLocked(const std::string& operation, uint64_t started_us, Builder* builder, bool wait,
                                    std::shared_ptr<InFlightCommit>* queued) {
  auto commit = std::make_shared<InFlightCommit>();
  commit->version = NextVersionLocked();
  commit->operation = operation;
  commit->record = std::move(builder->record());
  commit->record.execution_time_us = options_.env->NowMicros() - started_us;
  if (!commit->record.ddl.empty()) commit->catalog = builder->catalog();
  commit->local = builder->TakeLocal();
  commit->rows = builder->rows();
  commit->started_us = started_us;
  const std::string body = EncodeCommit(commit->record);
  commit->body_bytes = body.size();
  // A big commit's history runs are made on the helper while the record is
  // written and synced (and, for CommitAsync, while the caller goes on).
  if (builder->replaced_rows() >= kHelperHistoryRows) {
    commit->history_job =
        history_helper_.Start([commit] { AddHistoryRuns(commit->record, commit->version, &commit->history); });
  }
  // A committer that waits anyway leads its own append (no hand-off to the
  // log's thread and back).
  if (wait) {
    SPOOL_RETURN_IF_ERROR(log_->Append(LogWrite{commit->operation, body}, &commit->written));
  } else {
    SPOOL_RETURN_IF_ERROR(log_->AppendAsync(LogWrite{commit->operation, body}, &commit->append));
  }
  in_flight_.push_back(commit);
  *queued = std::move(commit);
  return Status::OK();
}

Status StoreImpl::SettleLocked(const InFlightCommit* upto) {
  while (!in_flight_.empty()) {
    std::shared_ptr<InFlightCommit> commit = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (commit->history_job != 0) history_helper_.WaitFor(commit->history_job);  // done with its record
    LogCommit written = commit->written;
    if (commit->append != nullptr) commit->status = commit->append->Wait(&written);
    commit->append.reset();
    commit->settled = true;
    if (commit->status.ok() && written.position.version != commit->version) {
      commit->status = Status::Failed("the log gave commit version " + std::to_string(written.position.version) +
                                      " where the store expected " + std::to_string(commit->version));
    }
    if (commit->status.ok()) {
      SPOOL_KILL_POINT("store.commit.durable");
      const LogEntry entry{written.position, written.timestamp_us, commit->operation, {}};
      StateDelta* runs = commit->history_job != 0 ? &commit->history : nullptr;
      Status staged = StageCommit(commit->record, entry, &commit->local, runs);
      {
        std::unique_lock lock(catalog_mu_);
        if (!commit->record.ddl.empty()) {
          catalog_ = std::move(commit->catalog);
          CommitRecord history;
          history.ddl = commit->record.ddl;
          ddl_.emplace_back(written.position.version, EncodeCommit(history));
        }
        stats_.commits++;
        stats_.rows_written += commit->rows;
        const uint64_t latency = options_.env->NowMicros() - commit->started_us;
        const auto bucket =
            std::lower_bound(std::begin(kCommitLatencyBoundsUs), std::end(kCommitLatencyBoundsUs), latency);
        stats_.commit_latency[static_cast<size_t>(bucket - std::begin(kCommitLatencyBoundsUs))]++;
        stats_.commit_latency_sum_us += latency;
      }
      commit->result =
          CommitResult{written.position.epoch, written.position.version, written.timestamp_us, commit->record.metrics};
      bytes_since_snapshot_ += commit->body_bytes;
      commit->status = staged.ok() ? MaybeSnapshotLocked() : staged;
    }
    // Done with: what later builders looked up is in the state now.
    commit->local = {};
    commit->record = {};
    if (commit.get() == upto) return commit->status;
  }
  return Status::OK();
}

std::unique_lock<std::mutex> StoreImpl::LockSettled() {
  std::unique_lock lock(commit_mu_);
  (void)SettleLocked(nullptr);  // each commit's outcome is its Wait's
  return lock;
}

Status StoreImpl::Restore(const TableId& id, uint64_t version, CommitResult* result) {
  SPOOL_RETURN_IF_ERROR(RefuseSpoolTable(id));
  return RestoreTables({id}, {}, version, result);
}

Status StoreImpl::RestoreTables(const std::vector<TableId>& tables, const std::vector<std::string>& flows,
                                uint64_t version, CommitResult* result, std::string_view update_id) {
  const uint64_t started = options_.env->NowMicros();
  std::unique_lock lock = LockSettled();
  Builder builder(this, NextVersionLocked());
  // A version a rewind cut is restored from the archive.
  std::vector<ArchivedCut> cuts;
  if (IsCutVersion(version)) SPOOL_RETURN_IF_ERROR(ListArchivedCuts(&cuts));
  int64_t restored = 0, removed = 0;
  for (const TableId& id : tables) {
    SPOOL_RETURN_IF_ERROR(RestoreTableLocked(&cuts, id, version, &builder, &restored, &removed));
  }
  for (const std::string& flow : flows) {
    std::string data;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(GetCheckpointAtLocked(&cuts, flow, version, &data, &found));
    SPOOL_RETURN_IF_ERROR(
        builder.Add(Transaction::CheckpointOp{flow, found ? std::optional<std::string>(data) : std::nullopt}));
  }
  CommitRecord& record = builder.record();
  nlohmann::json names = nlohmann::json::array();
  for (const TableId& id : tables) names.push_back(id.ToString());
  record.parameters_json = nlohmann::json{{"version", version}, {"tables", names}}.dump();
  record.update_id = update_id;
  record.metrics["numRestoredRows"] = restored;
  record.metrics["numRemovedRows"] = removed;
  builder.EndReads();
  std::shared_ptr<InFlightCommit> queued;
  SPOOL_RETURN_IF_ERROR(QueueCommitLocked("RESTORE", started, &builder, /*wait=*/true, &queued));
  return WaitLocked(*queued, result);
}

// One table's difference from its rows at `version` (none when it did not
// exist then) into `builder`.
Status StoreImpl::RestoreTableLocked(const std::vector<ArchivedCut>* cuts, const TableId& id, uint64_t version,
                                     Builder* builder, int64_t* restored, int64_t* removed) {
  Capture now;
  SPOOL_RETURN_IF_ERROR(CaptureTableLocked(id, ReadOptions{}, &now));
  std::map<std::string, std::string> rows;
  TableInfo then;
  Status captured = RowsAtLocked(cuts, id, version, &then, &rows);
  if (!captured.IsNotFound() || IsCutVersion(version)) {  // NotFound: no table had the name then, nor rows
    SPOOL_RETURN_IF_ERROR(captured);
    if (then.uid != now.table.uid) {
      return Status::InvalidArgument("table " + id.ToString() + " was created again at version " +
                                     std::to_string(now.table.created_version()) +
                                     "; it cannot be restored to version " + std::to_string(version) + ", before that");
    }
  }
  Status s;
  // Every current row that differs, then every row that came back.
  const size_t changes_before = builder->rows();
  SPOOL_RETURN_IF_ERROR(ScanCaptured(now, "", "", [&](std::string_view key, std::string_view row) {
    auto it = rows.find(std::string(key));
    if (it == rows.end()) {
      s = builder->PutRaw(now.table, std::string(key), std::nullopt);
      ++*removed;
    } else {
      if (it->second != row) {
        s = builder->PutRaw(now.table, it->first, it->second);
        ++*restored;
      }
      rows.erase(it);
    }
    return s.ok();
  }));
  SPOOL_RETURN_IF_ERROR(s);
  for (auto& [key, row] : rows) {
    SPOOL_RETURN_IF_ERROR(builder->PutRaw(now.table, key, row));
    ++*restored;
  }
  // Nothing differs: still part of the commit, so history shows the restore.
  if (builder->rows() == changes_before) builder->Include(now.table);
  return Status::OK();
}

}  // namespace spool
