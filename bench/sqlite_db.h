// What the SQLite engines share (sqlite_engine.cc, versioned_sqlite.cc,
// stream_step_sqlite.cc): a connection opened with its schema, prepared
// statements, errors as Status, closing. (Each engine's schema sets WAL
// mode and synchronous=FULL itself.)
//
// Thread-safety: connections are opened SQLITE_OPEN_NOMUTEX; callers use
// each from one thread at a time.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool::bench::sqlite {

// The key-value engines' database (sqlite_engine.cc, versioned_sqlite.cc):
// its file in the engine's directory `dir`, and its schema, one kv table.
inline std::string KvDbPath(const std::string& dir) { return dir + "/bench.sqlite"; }
inline constexpr char kKvSchema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;";

// IOError "sqlite <what>: <the connection's last error>".
Status Error(sqlite3* db, std::string_view what);
// Opens (creating) the database file `path` and runs `sql` on it (pragmas,
// schema). `*db` is set even when this fails: CloseConnection it.
Status Open(const std::string& path, const char* sql, sqlite3** db);
Status Exec(sqlite3* db, const char* sql);
Status Prepare(sqlite3* db, const char* sql, sqlite3_stmt** stmt);
// Binds `bytes` as a blob without copying them: they must outlive the step.
void Bind(sqlite3_stmt* stmt, int index, std::string_view bytes);
// A blob column of the current row, valid until the next step or reset.
std::string_view ColumnBytes(sqlite3_stmt* stmt, int column);
// Finalizes `*stmt` (if any) and nulls it.
void Finalize(sqlite3_stmt** stmt);
// Closes `*db` (if open) and nulls it; its statements must be finalized.
// Errors: IOError.
Status CloseConnection(sqlite3** db);

}  // namespace spool::bench::sqlite
