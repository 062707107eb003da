// SQLite with key‖version entries (versioned_engine.h): WAL mode,
// synchronous=FULL, a WITHOUT ROWID key-value table, one transaction of
// INSERT OR REPLACE per commit; a read is SELECT … ORDER BY k (the primary
// key's order, no sort). The rewind point is an online backup
// (sqlite3_backup) into a file of its own; a rewind closes the database,
// copies the backup back over it, syncs it and reopens. A snapshot is the
// same backup; a vacuum's deletes are one transaction of DELETEs (the pages
// go to the free list; no VACUUM, which rewrites the whole file).
#include <sqlite3.h>

#include <filesystem>

#include "engine.h"
#include "sqlite_db.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

class VersionedSqlite final : public VersionedPeer {
 public:
  ~VersionedSqlite() override { (void)Close(); }

  std::string_view name() const override { return kSqlite; }

  Status Open(const std::string& dir) override {
    dir_ = dir;
    SPOOL_RETURN_IF_ERROR(sqlite::Open(sqlite::KvDbPath(dir), sqlite::kKvSchema, &db_));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "BEGIN", &begin_));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "COMMIT", &commit_));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)", &put_));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "DELETE FROM kv WHERE k = ?1", &delete_));
    return sqlite::Prepare(db_, "SELECT k, v FROM kv ORDER BY k", &scan_);
  }

  Status Commit(uint64_t version, std::span<const Record> rows) override {
    SPOOL_RETURN_IF_ERROR(Step(begin_, "BEGIN"));
    std::string key;
    for (const Record& r : rows) {
      versioned::EncodeKey(r.key, version, &key);
      sqlite::Bind(put_, 1, key);
      sqlite::Bind(put_, 2, r.value);
      Status s = Step(put_, "INSERT");
      if (!s.ok()) {
        (void)sqlite::Exec(db_, "ROLLBACK");
        return s;
      }
    }
    return Step(commit_, "COMMIT");
  }

  Status TakeSnapshot(const std::string& snapshot_dir) override {
    std::error_code ec;
    std::filesystem::create_directories(snapshot_dir, ec);
    if (ec) return Status::IOError("create " + snapshot_dir + ": " + ec.message());
    const std::string path = sqlite::KvDbPath(snapshot_dir);
    sqlite3* copy = nullptr;
    if (sqlite3_open_v2(path.c_str(), &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      sqlite3_close(copy);
      return Status::IOError("sqlite open " + path);
    }
    // The destination's default journal and synchronous=FULL: the backup's
    // last step syncs the copy.
    sqlite3_backup* backup = sqlite3_backup_init(copy, "main", db_, "main");
    int rc = backup == nullptr ? sqlite3_errcode(copy) : sqlite3_backup_step(backup, -1);
    if (backup != nullptr) sqlite3_backup_finish(backup);
    const std::string message = sqlite3_errmsg(copy);
    sqlite3_close(copy);
    if (rc != SQLITE_DONE) return Status::IOError("sqlite backup to " + path + ": " + message);
    SPOOL_RETURN_IF_ERROR(versioned::SyncPath(path));
    return versioned::SyncPath(snapshot_dir);
  }

  Status Rewind(RewindTimes* times) override {
    const std::string dir = dir_;
    Stopwatch watch;
    SPOOL_RETURN_IF_ERROR(Close());  // checkpoints the WAL and removes it
    times->close_s = watch.Seconds();
    watch.Restart();
    for (const char* suffix : {"-wal", "-shm"}) {
      std::error_code ec;
      std::filesystem::remove(sqlite::KvDbPath(dir) + suffix, ec);
    }
    SPOOL_RETURN_IF_ERROR(versioned::CopyFileDurably(sqlite::KvDbPath(point_dir()), sqlite::KvDbPath(dir)));
    times->restore_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Open(dir));
    times->open_s = watch.Seconds();
    return Status::OK();
  }

  Status Close() override {
    for (sqlite3_stmt** stmt : {&begin_, &commit_, &put_, &delete_, &scan_}) sqlite::Finalize(stmt);
    return sqlite::CloseConnection(&db_);
  }

 protected:
  Status ScanEntries(const EntryVisitor& visit) override {
    int rc = SQLITE_ROW;
    Status s;
    while (s.ok() && (rc = sqlite3_step(scan_)) == SQLITE_ROW) {
      s = visit(sqlite::ColumnBytes(scan_, 0), sqlite::ColumnBytes(scan_, 1));
    }
    sqlite3_reset(scan_);
    SPOOL_RETURN_IF_ERROR(s);
    return rc == SQLITE_DONE ? Status::OK() : sqlite::Error(db_, "scan");
  }

  Status DeleteEntries(std::span<const std::string> versioned_keys) override {
    SPOOL_RETURN_IF_ERROR(Step(begin_, "BEGIN"));
    for (const std::string& key : versioned_keys) {
      sqlite::Bind(delete_, 1, key);
      Status s = Step(delete_, "DELETE");
      if (!s.ok()) {
        (void)sqlite::Exec(db_, "ROLLBACK");
        return s;
      }
    }
    return Step(commit_, "COMMIT");
  }

 private:
  Status Step(sqlite3_stmt* stmt, std::string_view what) {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? Status::OK() : sqlite::Error(db_, what);
  }

  std::string dir_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
  sqlite3_stmt* scan_ = nullptr;
};

}  // namespace

std::unique_ptr<VersionedEngine> NewVersionedSqlite() { return std::make_unique<VersionedSqlite>(); }

}  // namespace spool::bench
