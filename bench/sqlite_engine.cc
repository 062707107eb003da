// SQLite as an engine: WAL mode, synchronous=FULL (the WAL is synced at
// every commit), a WITHOUT ROWID key-value table, and one transaction of
// INSERT OR REPLACE statements per commit. Concurrent committers share the
// one connection under a mutex, as SQLite serialises writers anyway.
#include <sqlite3.h>

#include <mutex>

#include "engine.h"
#include "sqlite_db.h"

namespace spool::bench {
namespace {

// W7 only: never checkpoint, so the whole WAL is there to recover.
constexpr char kNoCheckpoint[] = "PRAGMA wal_autocheckpoint=0;";

class SqliteEngine final : public Engine {
 public:
  explicit SqliteEngine(const EngineOptions& options) : options_(options) {}
  ~SqliteEngine() override { (void)Close(); }

  std::string_view name() const override { return kSqlite; }
  std::string_view log_file_suffix() const override { return "-wal"; }

  Status Open(const std::string& dir) override {
    SPOOL_RETURN_IF_ERROR(sqlite::Open(sqlite::KvDbPath(dir), sqlite::kKvSchema, &db_));
    if (options_.hold_whole_log) SPOOL_RETURN_IF_ERROR(sqlite::Exec(db_, kNoCheckpoint));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "BEGIN", &begin_));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "COMMIT", &commit_));
    SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)", &put_));
    return sqlite::Prepare(db_, "SELECT v FROM kv WHERE k = ?1", &get_);
  }

  Status Commit(std::span<const Record> records) override {
    std::lock_guard<std::mutex> lock(mu_);
    SPOOL_RETURN_IF_ERROR(Step(begin_, SQLITE_DONE, "BEGIN"));
    for (const Record& r : records) {
      sqlite::Bind(put_, 1, r.key);
      sqlite::Bind(put_, 2, r.value);
      Status s = Step(put_, SQLITE_DONE, "INSERT");
      if (!s.ok()) {
        (void)sqlite::Exec(db_, "ROLLBACK");
        return s;
      }
    }
    return Step(commit_, SQLITE_DONE, "COMMIT");
  }

  Status ReadBack(const Record& last) override {
    sqlite::Bind(get_, 1, last.key);
    if (sqlite3_step(get_) != SQLITE_ROW) {
      sqlite3_reset(get_);
      return Status::NotFound("sqlite has no row for the last key");
    }
    const bool same = sqlite::ColumnBytes(get_, 0) == last.value;
    sqlite3_reset(get_);
    return same ? Status::OK() : Status::Corruption("sqlite returned another value");
  }

  Status Close() override {
    for (sqlite3_stmt** stmt : {&begin_, &commit_, &put_, &get_}) sqlite::Finalize(stmt);
    return sqlite::CloseConnection(&db_);
  }

 private:
  Status Step(sqlite3_stmt* stmt, int expected, std::string_view what) {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == expected ? Status::OK() : sqlite::Error(db_, what);
  }

  const EngineOptions options_;
  std::mutex mu_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
  sqlite3_stmt* get_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> NewSqliteEngine(const EngineOptions& options) {
  return std::make_unique<SqliteEngine>(options);
}

}  // namespace spool::bench
