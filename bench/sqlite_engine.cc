// SQLite as an engine: WAL mode, synchronous=FULL (the WAL is synced at
// every commit), a WITHOUT ROWID key-value table, and one transaction of
// INSERT OR REPLACE statements per commit. Concurrent committers share the
// one connection under a mutex, as SQLite serialises writers anyway.
#include <sqlite3.h>

#include <mutex>

#include "engine.h"

namespace spool::bench {
namespace {

constexpr char kDbFileName[] = "bench.sqlite";
constexpr char kSchema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;";
// W7 only: never checkpoint, so the whole WAL is there to recover.
constexpr char kNoCheckpoint[] = "PRAGMA wal_autocheckpoint=0;";

class SqliteEngine final : public Engine {
 public:
  explicit SqliteEngine(const EngineOptions& options) : options_(options) {}
  ~SqliteEngine() override { (void)Close(); }

  std::string_view name() const override { return kSqlite; }
  std::string_view log_file_suffix() const override { return "-wal"; }

  Status Open(const std::string& dir) override {
    const std::string path = dir + "/" + kDbFileName;
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) return Error("open " + path);
    SPOOL_RETURN_IF_ERROR(Exec(kSchema));
    if (options_.hold_whole_log) SPOOL_RETURN_IF_ERROR(Exec(kNoCheckpoint));
    SPOOL_RETURN_IF_ERROR(Prepare("BEGIN", &begin_));
    SPOOL_RETURN_IF_ERROR(Prepare("COMMIT", &commit_));
    SPOOL_RETURN_IF_ERROR(Prepare("INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)", &put_));
    return Prepare("SELECT v FROM kv WHERE k = ?1", &get_);
  }

  Status Commit(std::span<const Record> records) override {
    std::lock_guard<std::mutex> lock(mu_);
    SPOOL_RETURN_IF_ERROR(Step(begin_, SQLITE_DONE, "BEGIN"));
    for (const Record& r : records) {
      Bind(put_, 1, r.key);
      Bind(put_, 2, r.value);
      Status s = Step(put_, SQLITE_DONE, "INSERT");
      if (!s.ok()) {
        (void)Exec("ROLLBACK");
        return s;
      }
    }
    return Step(commit_, SQLITE_DONE, "COMMIT");
  }

  Status ReadBack(const Record& last) override {
    Bind(get_, 1, last.key);
    if (sqlite3_step(get_) != SQLITE_ROW) {
      sqlite3_reset(get_);
      return Status::NotFound("sqlite has no row for the last key");
    }
    const auto* bytes = static_cast<const char*>(sqlite3_column_blob(get_, 0));
    const std::string_view value(bytes, static_cast<size_t>(sqlite3_column_bytes(get_, 0)));
    const bool same = value == last.value;
    sqlite3_reset(get_);
    return same ? Status::OK() : Status::Corruption("sqlite returned another value");
  }

  Status Close() override {
    for (sqlite3_stmt** stmt : {&begin_, &commit_, &put_, &get_}) {
      sqlite3_finalize(*stmt);
      *stmt = nullptr;
    }
    if (db_ == nullptr) return Status::OK();
    const int rc = sqlite3_close(db_);
    db_ = nullptr;
    return rc == SQLITE_OK ? Status::OK() : Status::IOError("sqlite3_close failed");
  }

 private:
  Status Error(std::string_view what) const {
    return Status::IOError("sqlite " + std::string(what) + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  }

  Status Exec(const char* sql) {
    return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? Status::OK() : Error(sql);
  }

  Status Prepare(const char* sql, sqlite3_stmt** stmt) {
    return sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr) == SQLITE_OK ? Status::OK() : Error(sql);
  }

  static void Bind(sqlite3_stmt* stmt, int index, std::string_view bytes) {
    sqlite3_bind_blob(stmt, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
  }

  Status Step(sqlite3_stmt* stmt, int expected, std::string_view what) {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == expected ? Status::OK() : Error(what);
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
