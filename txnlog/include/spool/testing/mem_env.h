// MemEnv: an Env that keeps every file and directory in memory. Fast enough
// to run a crash enumeration of thousands of states; the usual base of a
// FaultEnv in tests. Sync and SyncDir are no-ops (FaultEnv models
// durability). Thread-safe. NowMicros is a settable clock that starts at a
// fixed time and advances by one microsecond per call unless set.
//
// Part of the installed package for testing (spool/testing/, in
// spool::txnlog), with FaultEnv: for tests of an embedder's own use of
// Spool, not for production.
#pragma once

#include <memory>

#include "spool/txnlog/env.h"

namespace spool {

class MemEnv : public Env {
 public:
  MemEnv();
  ~MemEnv() override;

  Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override;
  Status ListDir(const std::string& dir, std::vector<std::string>* names) override;
  bool FileExists(const std::string& path) override;
  Status GetFileSize(const std::string& path, uint64_t* size) override;
  Status RemoveFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status LinkFile(const std::string& from, const std::string& to) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveDir(const std::string& dir) override;
  Status SyncDir(const std::string& dir) override;
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override;
  uint64_t NowMicros() override;

  // Sets the clock; later calls to NowMicros return `micros` and then go on
  // advancing by one per call.
  void SetNowMicros(uint64_t micros);

  // Makes this Env a copy of `other`: its files and directories (files
  // linked to one another stay linked, to their copy) and its clock, not
  // its locks (those held on this Env stay held). Handles open on this Env
  // keep the data they had, as if their files had been removed. A crash
  // test prepares a store once and starts each case from a copy of it.
  void CopyFrom(const MemEnv& other);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace spool
