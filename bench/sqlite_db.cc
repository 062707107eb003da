#include "sqlite_db.h"

namespace spool::bench::sqlite {

Status Error(sqlite3* db, std::string_view what) {
  return Status::IOError("sqlite " + std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

Status Open(const std::string& path, const char* sql, sqlite3** db) {
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), db, flags, nullptr) != SQLITE_OK) return Error(*db, "open " + path);
  return Exec(*db, sql);
}

Status Exec(sqlite3* db, const char* sql) {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? Status::OK() : Error(db, sql);
}

Status Prepare(sqlite3* db, const char* sql, sqlite3_stmt** stmt) {
  return sqlite3_prepare_v2(db, sql, -1, stmt, nullptr) == SQLITE_OK ? Status::OK() : Error(db, sql);
}

void Bind(sqlite3_stmt* stmt, int index, std::string_view bytes) {
  sqlite3_bind_blob(stmt, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
}

std::string_view ColumnBytes(sqlite3_stmt* stmt, int column) {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt, column));
  return std::string_view(bytes, static_cast<size_t>(sqlite3_column_bytes(stmt, column)));
}

void Finalize(sqlite3_stmt** stmt) {
  sqlite3_finalize(*stmt);
  *stmt = nullptr;
}

Status CloseConnection(sqlite3** db) {
  if (*db == nullptr) return Status::OK();
  const int rc = sqlite3_close(*db);
  *db = nullptr;
  return rc == SQLITE_OK ? Status::OK() : Status::IOError("sqlite3_close failed");
}

}  // namespace spool::bench::sqlite
