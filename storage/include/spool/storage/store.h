// Store: one directory owned by one process (DESIGN.md §2). It holds the
// log (the only source of truth), the event log, and — as issue 3 goes on —
// the LMDB state, snapshots and the archive.
//
//   <dir>/STORE      marks the directory as a store (format version)
//   <dir>/LOCK       held (flock) by the process that has the store open
//   <dir>/log/       the transaction log
//   <dir>/events/    the event log, which no rewind truncates
//
// Thread-safety: safe for concurrent use; see Log and EventLog.
#pragma once

#include <memory>
#include <string>

#include "spool/storage/event_log.h"
#include "spool/txnlog/log.h"

namespace spool {

struct StoreOptions {
  Env* env = Env::Default();
  // Create the store when `dir` does not exist or is empty.
  bool create_if_missing = true;
  // Options of the transaction log (its env is set to `env`).
  LogOptions log;
};

class Store {
 public:
  // Opens the store in `dir`, creating it when allowed, and recovers its log.
  // Errors: Busy (another process or handle has it open), NotFound (no
  // store and !create_if_missing), InvalidArgument (`dir` holds other files
  // and is not a store), Corruption, IOError.
  static Status Open(const StoreOptions& options, const std::string& dir, std::unique_ptr<Store>* store);
  ~Store();

  const std::string& dir() const { return dir_; }
  Log* log() { return log_.get(); }
  EventLog* events() { return events_.get(); }

 private:
  Store(std::string dir, std::unique_ptr<FileLock> lock);

  std::string dir_;
  std::unique_ptr<FileLock> lock_;  // released last
  std::unique_ptr<Log> log_;
  std::unique_ptr<EventLog> events_;
};

}  // namespace spool
