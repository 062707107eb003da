// MemEnv: an Env that keeps every file and directory in memory. Fast enough
// to run a crash enumeration of thousands of states; the usual base of a
// FaultEnv in tests. Sync and SyncDir are no-ops (FaultEnv models
// durability). Thread-safe. NowMicros is a settable clock that starts at a
// fixed time and advances by one microsecond per call unless set.
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

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace spool
