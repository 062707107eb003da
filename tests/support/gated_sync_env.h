// GatedSyncEnv: an Env whose file syncs wait while a gate is closed, so a
// test can hold a group commit's leader inside its sync while more callers
// queue behind it. Shared by the tests of the log, the tables and the topic.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "spool/txnlog/env.h"

namespace spool::testing {

class GatedSyncEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;

  Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override {
    std::unique_ptr<File> inner;
    SPOOL_RETURN_IF_ERROR(target()->OpenFile(path, mode, &inner));
    *file = std::make_unique<GatedFile>(this, std::move(inner));
    return Status::OK();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void WaitForBlockedSyncs(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return blocked_ >= n; });
  }

 private:
  class GatedFile : public File {
   public:
    GatedFile(GatedSyncEnv* env, std::unique_ptr<File> inner) : env_(env), inner_(std::move(inner)) {}
    Status Read(uint64_t offset, size_t n, std::string* out) override { return inner_->Read(offset, n, out); }
    Status Write(uint64_t offset, std::string_view data) override { return inner_->Write(offset, data); }
    Status Truncate(uint64_t size) override { return inner_->Truncate(size); }
    Status Size(uint64_t* size) override { return inner_->Size(size); }
    Status Close() override { return inner_->Close(); }
    Status Sync() override {
      std::unique_lock<std::mutex> lock(env_->mu_);
      ++env_->blocked_;
      env_->cv_.notify_all();
      env_->cv_.wait(lock, [&] { return env_->open_; });
      --env_->blocked_;
      return inner_->Sync();
    }

   private:
    GatedSyncEnv* env_;
    std::unique_ptr<File> inner_;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int blocked_ = 0;
};

}  // namespace spool::testing
