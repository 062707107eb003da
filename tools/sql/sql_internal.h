// The parts of the SQL session (tools/sql): the context the virtual
// tables and functions share, and how each registers itself on a
// connection. Internal to the spool_sql library.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

struct sqlite3;
struct sqlite3_vtab;

namespace spool {
class Store;
}

namespace spool::sql {

// A store table's change feed is the virtual table of this name and the
// table's (table_changes('a.b.c', …) reads "table_changes:a.b.c").
inline constexpr std::string_view kChangesTablePrefix = "table_changes:";
// A table the store no longer has, as of a version or time, is the
// virtual table of this name, the table's and the version's
// ("table_at:a.b.c@5", "table_at:a.b.c@2026-11-29 18:30:00"), declared with
// the table's columns then.
inline constexpr std::string_view kPastTablePrefix = "table_at:";

// What the virtual tables of one session read, and how they stop.
struct Context {
  Store* store = nullptr;
  // The running statement's deadline and interruption: a cursor waiting for
  // rows gives up at either.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::atomic<bool> interrupted{false};
  uint64_t timeout_ms = 0;
  // When the running statement started (the store's clock): what now() and
  // current_timestamp() say throughout it.
  int64_t now_us = 0;
  // The Status behind the last error a virtual table reported, so that the
  // statement fails with its code (NotFound, Corruption, …), not SQLite's.
  Status error;

  bool Stopped() const {
    return interrupted.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= deadline;
  }
  // Aborted, saying whether Interrupt or the timeout stopped the statement.
  Status StopStatus() const;
};

// Reports `s` from a virtual table's method: keeps it in the context and
// puts its message in the table's error text. Returns SQLITE_ERROR.
int VtabError(Context* context, sqlite3_vtab* vtab, const Status& s);

// Registers the modules and functions on `db` (RegisterTableModules: the
// store's tables and their change feeds; RegisterMetaModules: history,
// event_log, rewind_points, snapshots, archive, flows; RegisterFunctions:
// the Spark time functions). Errors: Failed (SQLite refused).
Status RegisterTableModules(sqlite3* db, Context* context);
Status RegisterMetaModules(sqlite3* db, Context* context);
Status RegisterFunctions(sqlite3* db, Context* context);

// The table-valued functions' names and columns (their CREATE TABLE body),
// for the shell's .tables and .schema.
struct MetaTableColumns {
  std::string name;
  std::string columns;  // the visible ones
  std::string args;     // the argument's name; empty: none
};
std::vector<MetaTableColumns> MetaTables();

// `text` between `quote`s, each quote in it doubled: a SQL identifier
// ('"') or string ('\'').
std::string QuoteSql(std::string_view text, char quote);

// Timestamps in SQL are text, "yyyy-MM-dd HH:mm:ss.ffffff" (UTC), whose
// order as text is their order in time. Parses that, without the fraction
// or the time too ("yyyy-MM-dd"). False when malformed.
bool ParseSqlTimestamp(std::string_view text, int64_t* micros);

}  // namespace spool::sql
