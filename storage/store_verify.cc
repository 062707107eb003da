// VerifyStore and RepairStore: every file of a closed store checked, and the
// state rebuilt when it is damaged (docs/operations.md, "Damage").
#include <algorithm>
#include <filesystem>
#include <optional>

#include "snapshot_file.h"
#include "spool/storage/store.h"
#include "state_store.h"
#include "store_internal.h"

namespace spool {

bool VerifyReport::damaged() const {
  return std::any_of(files.begin(), files.end(), [](const StoreFileCheck& f) { return !f.status.ok(); });
}

uint64_t VerifyReport::bytes() const {
  uint64_t total = 0;
  for (const StoreFileCheck& f : files) total += f.bytes;
  return total;
}

namespace {

std::string StateDirOf(const StoreOptions& options, const std::string& dir) {
  return options.state_dir.empty() ? JoinPath(dir, "state") : options.state_dir;
}

// Where a repair sets the old state aside until the rebuild is done.
std::string StateAsideOf(const StoreOptions& options, const std::string& dir) {
  return StateDirOf(options, dir) + ".repair-old";
}

std::string ArchiveDirOf(const StoreOptions& options, const std::string& dir) {
  return options.log.archive_dir.empty() ? JoinPath(JoinPath(dir, "log"), "archive") : options.log.archive_dir;
}

// Takes the closed store in `dir` for the caller alone.
Status TakeClosedStore(const StoreOptions& options, const std::string& dir, std::unique_ptr<FileLock>* lock) {
  if (!options.env->FileExists(JoinPath(dir, kMarkerName))) return Status::NotFound(dir + " is not a Spool store");
  Status s = options.env->LockFile(JoinPath(dir, kStoreLockName), lock);
  if (s.IsBusy()) return Status::Busy("store " + dir + " is open in another process: stop it first");
  return s;
}

uint64_t FileBytes(Env* env, const std::string& path) {
  uint64_t size = 0;
  return env->GetFileSize(path, &size).ok() ? size : 0;
}

class Verifier {
 public:
  Verifier(const StoreOptions& options, const std::string& dir, VerifyReport* report)
      : env_(options.env), options_(options), dir_(dir), report_(report) {}

  Status Run() {
    Marker();
    SPOOL_RETURN_IF_ERROR(State());
    Log();
    Cross();
    Snapshots();
    Pins();
    Events();
    ArchivedCuts();
    return Status::OK();
  }

 private:
  StoreFileCheck& Add(std::string kind, std::string path) {
    report_->files.push_back(StoreFileCheck{std::move(kind), std::move(path), 0, 0, Status::OK()});
    return report_->files.back();
  }

  void Marker() {
    StoreFileCheck& check = Add("marker", JoinPath(dir_, kMarkerName));
    std::string text;
    check.status = ReadFileToString(env_, check.path, &text);
    check.bytes = text.size();
    if (check.status.ok() && text != kMarker) {
      check.status = Status::Corruption(check.path + " is not a store marker this version reads");
    }
  }

  Status State() {
    const std::string state_dir = StateDirOf(options_, dir_);  // on the real file system, as LMDB needs
    std::error_code ec;
    if (!std::filesystem::exists(state_dir, ec)) return Status::OK();
    std::vector<StateFileReport> files;
    SPOOL_RETURN_IF_ERROR(StateStore::Verify(state_dir, &files));
    for (StateFileReport& f : files) {
      const bool live = !f.name.starts_with("copies");
      StoreFileCheck& check = Add(live ? "state" : "state copy", f.file);
      check.bytes = f.check.bytes;
      check.items = f.check.entries;
      check.status = f.status;
      if (!f.status.ok()) continue;
      if (live) applied_ = f.position;
      positions_.emplace_back(report_->files.size() - 1, f.position);
    }
    return Status::OK();
  }

  // Opened knowing what the state applied: a damaged record there is damage,
  // not a torn write.
  void Log() {
    StoreFileCheck& check = Add("log", JoinPath(dir_, "log"));
    LogOptions options = options_.log;
    options.env = env_;
    options.read_only = true;
    options.known_durable_from_clean_close = true;
    if (applied_) {
      options.known_durable = LogPosition{applied_->epoch, applied_->version};
      options.known_durable_store_id = applied_->store_id;
    }
    Status s = Log::Open(options, check.path, &log_);
    if (s.ok()) {
      for (const LogSegmentInfo& segment : log_->Segments()) check.bytes += segment.file_size_bytes;
      std::unique_ptr<LogIterator> it;
      s = log_->NewIterator(0, &it);
      LogEntry entry;
      while (s.ok() && it->Next(&entry)) ++check.items;
      if (s.ok()) s = it->status();
    }
    check.status = s;
    if (!s.ok()) log_.reset();
  }

  // The state and its copies against the log.
  void Cross() {
    if (!log_) return;
    const uint64_t store_id = log_->StoreId();
    const LogPosition newest = log_->Newest();
    auto check = [&](StoreFileCheck& file, const StatePosition& p) {
      if (p.store_id != 0 && p.store_id != store_id) {
        file.status = Status::Corruption(file.path + ": the state of another store");
      } else if (p.epoch == newest.epoch && p.version > newest.version) {
        file.status =
            Status::Corruption(file.path + ": applied version " + std::to_string(p.version) +
                               ", which the log does not have (it ends at " + std::to_string(newest.version) + ")");
      }
    };
    for (const auto& [index, position] : positions_) check(report_->files[index], position);
  }

  void Snapshots() {
    const std::string snapshots = JoinPath(dir_, "snapshots");
    std::vector<std::string> names;
    if (!env_->ListDir(snapshots, &names).ok()) return;
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      uint64_t epoch = 0, version = 0;
      if (!ParseSnapshotFileName(name, &epoch, &version)) continue;
      StoreFileCheck& check = Add("snapshot", JoinPath(snapshots, name));
      check.bytes = FileBytes(env_, check.path);
      if (!log_) {
        check.status = Status::Aborted("not checked: the log, which names the store, is damaged");
        continue;
      }
      SnapshotHeader header;
      check.status = ReadSnapshot(env_, check.path, log_->StoreId(), &header, [&](std::string_view, std::string_view) {
        ++check.items;
        return true;
      });
      if (check.status.ok() && (header.epoch != epoch || header.version != version)) {
        check.status = Status::Corruption(check.path + ": its header says epoch " + std::to_string(header.epoch) +
                                          " version " + std::to_string(header.version));
      }
    }
  }

  void Pins() {
    const std::string path = JoinPath(dir_, kStorePinsName);
    if (!env_->FileExists(path)) return;
    StoreFileCheck& check = Add("pins", path);
    std::string text;
    std::map<std::string, uint64_t> pins;
    check.status = ReadFileToString(env_, path, &text);
    if (check.status.ok()) check.status = ParsePins(path, text, &pins);
    check.bytes = text.size();
    check.items = pins.size();
  }

  void Events() {
    const std::string events = JoinPath(dir_, "events");
    if (!env_->FileExists(events)) return;
    StoreFileCheck& check = Add("events", events);
    check.status = VerifyLog(env_, events, &check.items);
    std::vector<std::string> names;
    if (env_->ListDir(events, &names).ok()) {
      for (const std::string& name : names) check.bytes += FileBytes(env_, JoinPath(events, name));
    }
  }

  void ArchivedCuts() {
    const std::string archive = ArchiveDirOf(options_, dir_);
    std::vector<std::string> names;
    if (!env_->ListDir(archive, &names).ok()) return;
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      uint64_t new_epoch = 0;
      if (!ParseArchivedCutName(name, &new_epoch)) continue;  // not a cut (ListArchivedCuts skips it too)
      const std::string cut = JoinPath(archive, name);
      if (!ArchivedCutComplete(env_, cut)) continue;  // an interrupted archive, removed by the next open
      StoreFileCheck& check = Add("archived cut", cut);
      std::vector<std::string> files;
      if (env_->ListDir(cut, &files).ok()) {
        for (const std::string& file : files) check.bytes += FileBytes(env_, JoinPath(cut, file));
      }
      check.status = ScanArchivedCut(env_, cut, [&](const LogEntry&) {
        ++check.items;
        return true;
      });
    }
  }

  Env* const env_;
  const StoreOptions& options_;
  const std::string dir_;
  VerifyReport* const report_;
  std::optional<StatePosition> applied_;                     // the live state's
  std::vector<std::pair<size_t, StatePosition>> positions_;  // report index, position: the state and its copies
  std::unique_ptr<spool::Log> log_;
};

}  // namespace

Status VerifyStore(const StoreOptions& options, const std::string& dir, VerifyReport* report) {
  report->files.clear();
  std::unique_ptr<FileLock> lock;
  SPOOL_RETURN_IF_ERROR(TakeClosedStore(options, dir, &lock));
  return Verifier(options, dir, report).Run();
}

// The old state is renamed aside first (one atomic step), so that a crash
// anywhere leaves either the old state, set aside for this function to
// delete when run again, or a state being rebuilt, which the next open
// carries on from its recorded position.
Status RepairStore(const StoreOptions& options, const std::string& dir, RepairReport* report) {
  *report = RepairReport{};
  Env* env = options.env;
  VerifyReport found;
  {
    std::unique_ptr<FileLock> lock;
    SPOOL_RETURN_IF_ERROR(TakeClosedStore(options, dir, &lock));
    SPOOL_RETURN_IF_ERROR(Verifier(options, dir, &found).Run());
    for (const StoreFileCheck& f : found.files) {
      if (f.status.ok()) continue;
      if (f.kind == "log") {
        return Status::Corruption("the log is damaged (" + std::string(f.status.message()) +
                                  "): the state is rebuilt from the log, so repair cannot help; restore the store "
                                  "from a backup");
      }
      if (f.kind == "marker") {
        return Status::Corruption(std::string(f.status.message()) + ": repair rewrites no marker; check that " + dir +
                                  " is a Spool store of this version");
      }
    }
    // What only copies or indexes the log, and the pins, go; the event log
    // (the store's diary, not made from anything) is set aside for the
    // operator, and a new one starts.
    for (const StoreFileCheck& f : found.files) {
      if (f.status.ok() || f.kind == "state" || f.kind == "state copy") continue;  // the state: below
      std::string why = f.path + ": " + std::string(f.status.message());
      if (f.kind == "events") {
        const std::string aside = f.path + ".damaged-" + std::to_string(env->NowMicros());
        SPOOL_RETURN_IF_ERROR(env->RenameFile(f.path, aside));
        SPOOL_RETURN_IF_ERROR(env->SyncDir(dir));
        why += " (set aside as " + aside + ")";
      } else if (f.kind == "archived cut") {
        SPOOL_RETURN_IF_ERROR(RemoveArchivedCut(env, f.path));
      } else {  // a snapshot, PINS
        SPOOL_RETURN_IF_ERROR(env->RemoveFile(f.path));
      }
      report->removed.push_back(why);
    }
    // The whole state goes, its copies with it: each is rebuilt or made
    // again as it is needed.
    const std::string state = StateDirOf(options, dir);
    const std::string aside = StateAsideOf(options, dir);
    std::error_code ec;
    std::filesystem::remove_all(aside, ec);
    if (ec) return Status::IOError("cannot remove " + aside + ": " + ec.message());
    if (std::filesystem::exists(state, ec)) {
      std::filesystem::rename(state, aside, ec);
      if (ec) return Status::IOError("cannot set " + state + " aside: " + ec.message());
      SPOOL_RETURN_IF_ERROR(Env::Default()->SyncDir(std::filesystem::path(state).parent_path().string()));
      for (const StoreFileCheck& f : found.files) {
        if (!f.status.ok() && (f.kind == "state" || f.kind == "state copy")) {
          report->removed.push_back(f.path + ": " + std::string(f.status.message()));
        }
      }
    }
  }
  std::unique_ptr<Store> store;
  SPOOL_RETURN_IF_ERROR(Store::Open(options, dir, &store));
  SPOOL_RETURN_IF_ERROR(store->FlushState());
  report->version = store->log()->Newest().version;
  report->rebuilt_from = store->rebuilt_from();
  store.reset();
  std::error_code ec;
  std::filesystem::remove_all(StateAsideOf(options, dir), ec);
  if (ec) return Status::IOError("cannot remove the old state: " + ec.message());
  return Status::OK();
}

}  // namespace spool
