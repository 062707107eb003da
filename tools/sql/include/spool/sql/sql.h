// SQL over a store (docs/sql.md): its tables, their history, change feed,
// event log, rewind points, snapshots, archived cuts and the pipeline's
// flows, as SQLite virtual tables read in place — nothing is copied into
// SQLite. A small translation lets the Spark SQL of the reference
// documents run as written (the `:` JSON path, INTERVAL arithmetic,
// DESCRIBE HISTORY, VERSION AS OF, unquoted three-part names).
//
//   std::unique_ptr<sql::Session> session;
//   Status s = sql::Session::Open(store, &session);
//   s = session->Execute("SELECT * FROM \"main.shop.orders\" WHERE id = 7", {}, results);
//
// No statement changes a Spool table: the virtual tables cannot be
// written, and ATTACH, VACUUM INTO and the pragmas that change the
// connection are refused. Scratch tables (CREATE TEMP TABLE) are the
// session's own.
//
// Thread-safety: a Session is used by one thread at a time, except
// Interrupt, which any thread (or a signal handler) may call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/schema.h"
#include "spool/txnlog/status.h"

namespace spool {
class Store;
}

namespace spool::sql {

// A result column: its name and the type its expression declares (empty
// for expressions that declare none).
struct ResultColumn {
  std::string name;
  std::string declared_type;
  friend bool operator==(const ResultColumn&, const ResultColumn&) = default;
};

// What a statement's rows are handed to. A result row's values are
// SQLite's: null, int64_t, double, std::string (text) or Bytes (a blob).
struct ResultHandler {
  // Once per statement that returns rows, before its first row.
  std::function<void(const std::vector<ResultColumn>& columns)> on_columns;
  // Each row; false stops the statement (not an error).
  std::function<bool(const Row& row)> on_row;
};

struct QueryOptions {
  // A statement still running after this long fails with Aborted; 0: no
  // limit.
  uint64_t timeout_ms = 60'000;
};

class Session {
 public:
  // A session over `store`, which must outlive it (or be swapped out with
  // Reset first). The store may be open for writing or read-only.
  // Errors: as Store::ListTables' reads (Corruption, IOError).
  static Status Open(Store* store, std::unique_ptr<Session>* session);
  virtual ~Session() = default;

  // Runs the statements in `text`, one after another, handing each one's
  // rows to `results`. Errors, each naming the statement and what is wrong
  // (nothing is changed by any): InvalidArgument (syntax, an unknown table,
  // column or function, a Spark construct the translation does not know, a
  // statement that would write, a version or timestamp outside what the
  // store keeps), NotFound (a table, version or archived cut that is gone),
  // Aborted (the timeout passed, or Interrupt), Corruption, IOError.
  virtual Status Execute(std::string_view text, const QueryOptions& options, const ResultHandler& results) = 0;

  // Stops the statement running now (it fails with Aborted) and none
  // after it. Safe from any thread and from a signal handler.
  virtual void Interrupt() = 0;

  // Reads `store` from now on (a newer read-only handle of the same store,
  // say): the tables are declared again from its catalog; scratch tables
  // stay. The old store may be closed once this returns. Errors: as Open.
  virtual Status Reset(Store* store) = 0;

  // The names a statement can read from: the store's tables, then the
  // table-valued functions (history, event_log, …).
  virtual std::vector<std::string> TableNames() = 0;
  // The CREATE statements that declare `name` (all tables when empty), as
  // the shell's .schema shows them. Errors: NotFound.
  virtual Status Schema(std::string_view name, std::string* text) = 0;
};

// One-shot: a session over `store` running `text`. Errors: as Execute.
Status Query(Store* store, std::string_view text, const QueryOptions& options, const ResultHandler& results);

// The Spark SQL that the translation understands, rewritten into SQLite's
// (docs/sql.md lists each construct). `tables`: the store's table names,
// which unquoted three-part names and table_at must match. Fills
// `*declare` with the virtual tables a session declares for the text: the
// change feeds it reads ("table_changes:a.b.c") and the tables dropped
// since that it reads as of a version ("table_at:a.b.c@5"). Errors:
// InvalidArgument naming the construct and where it is (line and column).
Status TranslateSpark(std::string_view text, const std::vector<std::string>& tables, std::string* sqlite,
                      std::vector<std::string>* declare);

}  // namespace spool::sql
