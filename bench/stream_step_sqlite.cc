// SQLite as a W4 peer (stream_step_engine.h): WAL mode, synchronous=FULL;
// tables events(offset), state(k), output(k) and offsets(name), all keyed
// by an INTEGER PRIMARY KEY but the last; a step is BEGIN, a range SELECT of
// its events, a SELECT and an INSERT OR REPLACE of each key's state, an
// INSERT OR REPLACE of its output row and of the offset, COMMIT (the WAL
// synced), all with prepared statements.
#include <sqlite3.h>

#include <array>

#include "engine.h"
#include "sqlite_db.h"
#include "stream_step_engine.h"

namespace spool::bench {
namespace {

constexpr char kStreamDbFileName[] = "/stream.sqlite";
constexpr char kStreamSchema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS events(offset INTEGER PRIMARY KEY, message BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS state(k INTEGER PRIMARY KEY, count INTEGER NOT NULL, sum INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS output(k INTEGER PRIMARY KEY, count INTEGER NOT NULL, sum INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS offsets(name TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID;";

// The prepared statements, by what they do.
enum Statement : size_t {
  kBegin,
  kCommit,
  kPutEvent,
  kReadEvents,
  kGetState,
  kGetOutput,
  kPutState,
  kPutOutput,
  kPutOffset,
  kGetOffset,
  kReadOutput,
  kStatements
};
constexpr std::array<const char*, kStatements> kStatementSql = {
    "BEGIN",
    "COMMIT",
    "INSERT INTO events(offset, message) VALUES(?1, ?2)",
    "SELECT message FROM events WHERE offset >= ?1 AND offset < ?2 ORDER BY offset",
    "SELECT count, sum FROM state WHERE k = ?1",
    "SELECT count, sum FROM output WHERE k = ?1",
    "INSERT OR REPLACE INTO state(k, count, sum) VALUES(?1, ?2, ?3)",
    "INSERT OR REPLACE INTO output(k, count, sum) VALUES(?1, ?2, ?3)",
    "INSERT OR REPLACE INTO offsets(name, next) VALUES('events', ?1)",
    "SELECT next FROM offsets WHERE name = 'events'",
    "SELECT k, count, sum FROM output ORDER BY k",
};

class SqliteStepStore final : public PeerStepStore {
 public:
  ~SqliteStepStore() override { (void)Close(); }

  std::string_view name() const override { return kSqlite; }

  Status Open(const std::string& dir) override {
    SPOOL_RETURN_IF_ERROR(sqlite::Open(dir + kStreamDbFileName, kStreamSchema, &db_));
    for (size_t i = 0; i < kStatements; ++i) SPOOL_RETURN_IF_ERROR(sqlite::Prepare(db_, kStatementSql[i], &stmts_[i]));
    return Status::OK();
  }

  Status AppendEvents(uint64_t first_offset, std::span<const std::string> messages) override {
    SPOOL_RETURN_IF_ERROR(Begin());
    for (size_t i = 0; i < messages.size(); ++i) {
      sqlite3_bind_int64(stmts_[kPutEvent], 1, static_cast<int64_t>(first_offset + i));
      sqlite::Bind(stmts_[kPutEvent], 2, messages[i]);
      SPOOL_RETURN_IF_ERROR(Done(kPutEvent));
    }
    return Commit();
  }

  Status Begin() override { return Done(kBegin); }

  Status ReadEvents(uint64_t from, uint64_t count,
                    const std::function<void(std::string_view message)>& visit) override {
    sqlite3_stmt* read = stmts_[kReadEvents];
    sqlite3_bind_int64(read, 1, static_cast<int64_t>(from));
    sqlite3_bind_int64(read, 2, static_cast<int64_t>(from + count));
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(read)) == SQLITE_ROW) visit(sqlite::ColumnBytes(read, 0));
    sqlite3_reset(read);
    return rc == SQLITE_DONE ? Status::OK() : Error("event scan");
  }

  Status GetTotals(Totals table, int64_t key, KeyTotals* totals, bool* found) override {
    sqlite3_stmt* get = stmts_[table == Totals::kState ? kGetState : kGetOutput];
    sqlite3_bind_int64(get, 1, key);
    const int rc = sqlite3_step(get);
    *found = rc == SQLITE_ROW;
    if (*found) *totals = KeyTotals{sqlite3_column_int64(get, 0), sqlite3_column_int64(get, 1)};
    sqlite3_reset(get);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? Status::OK() : Error("totals read");
  }

  Status PutTotals(Totals table, int64_t key, const KeyTotals& totals) override {
    return Put(table == Totals::kState ? kPutState : kPutOutput, key, totals);
  }

  Status PutOffset(uint64_t next_offset) override {
    sqlite3_bind_int64(stmts_[kPutOffset], 1, static_cast<int64_t>(next_offset));
    return Done(kPutOffset);
  }

  Status Commit() override { return Done(kCommit); }

  Status ReadOffset(uint64_t* next_offset) override {
    sqlite3_stmt* get = stmts_[kGetOffset];
    const int rc = sqlite3_step(get);
    *next_offset = rc == SQLITE_ROW ? static_cast<uint64_t>(sqlite3_column_int64(get, 0)) : 0;
    sqlite3_reset(get);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? Status::OK() : Error("offset read");
  }

  Status ReadOutput(const std::function<void(int64_t key, const KeyTotals& totals)>& visit) override {
    sqlite3_stmt* read = stmts_[kReadOutput];
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(read)) == SQLITE_ROW) {
      visit(sqlite3_column_int64(read, 0), KeyTotals{sqlite3_column_int64(read, 1), sqlite3_column_int64(read, 2)});
    }
    sqlite3_reset(read);
    return rc == SQLITE_DONE ? Status::OK() : Error("output scan");
  }

  Status Close() override {
    for (sqlite3_stmt*& stmt : stmts_) sqlite::Finalize(&stmt);
    return sqlite::CloseConnection(&db_);
  }

 private:
  Status Error(std::string_view what) const { return sqlite::Error(db_, what); }

  // Runs a statement that returns no rows.
  Status Done(Statement statement) {
    const int rc = sqlite3_step(stmts_[statement]);
    sqlite3_reset(stmts_[statement]);
    if (rc == SQLITE_DONE) return Status::OK();
    const Status error = Error(kStatementSql[statement]);
    if (statement != kBegin && sqlite3_get_autocommit(db_) == 0) (void)sqlite::Exec(db_, "ROLLBACK");
    return error;
  }

  Status Put(Statement statement, int64_t key, const KeyTotals& totals) {
    sqlite3_stmt* put = stmts_[statement];
    sqlite3_bind_int64(put, 1, key);
    sqlite3_bind_int64(put, 2, totals.count);
    sqlite3_bind_int64(put, 3, totals.sum);
    return Done(statement);
  }

  sqlite3* db_ = nullptr;
  std::array<sqlite3_stmt*, kStatements> stmts_{};
};

}  // namespace

std::unique_ptr<PeerStepStore> NewSqliteStepStore() { return std::make_unique<SqliteStepStore>(); }

}  // namespace spool::bench
