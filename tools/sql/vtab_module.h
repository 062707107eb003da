// What both modules of virtual tables are made of (table_vtabs.cc,
// meta_vtabs.cc): tables that are read, never written, with no
// transactions of their own. Internal to the spool_sql library.
#pragma once

#include <sqlite3.h>

namespace spool::sql {

// xOpen and xClose for a cursor type whose destructor lets go of what it
// holds.
template <class Cursor>
int OpenCursor(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = new Cursor();
  return SQLITE_OK;
}
template <class Cursor>
int CloseCursor(sqlite3_vtab_cursor* cursor) {
  delete static_cast<Cursor*>(cursor);
  return SQLITE_OK;
}

struct ReadOnlyVtabMethods {
  decltype(sqlite3_module::xCreate) create;  // null: the module's tables are eponymous only
  decltype(sqlite3_module::xConnect) connect;
  decltype(sqlite3_module::xBestIndex) best_index;
  decltype(sqlite3_module::xDisconnect) disconnect;  // also xDestroy: nothing outlives a table
  decltype(sqlite3_module::xOpen) open;
  decltype(sqlite3_module::xClose) close;
  decltype(sqlite3_module::xFilter) filter;
  decltype(sqlite3_module::xNext) next;
  decltype(sqlite3_module::xEof) eof;
  decltype(sqlite3_module::xColumn) column;
  decltype(sqlite3_module::xRowid) rowid;
  decltype(sqlite3_module::xRename) rename = nullptr;
};

inline sqlite3_module ReadOnlyModule(const ReadOnlyVtabMethods& m) {
  sqlite3_module module{};
  module.iVersion = 1;
  module.xCreate = m.create;
  module.xConnect = m.connect;
  module.xBestIndex = m.best_index;
  module.xDisconnect = m.disconnect;
  module.xDestroy = m.disconnect;
  module.xOpen = m.open;
  module.xClose = m.close;
  module.xFilter = m.filter;
  module.xNext = m.next;
  module.xEof = m.eof;
  module.xColumn = m.column;
  module.xRowid = m.rowid;
  module.xRename = m.rename;
  return module;
}

}  // namespace spool::sql
