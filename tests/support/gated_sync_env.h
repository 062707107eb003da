// GatedSyncEnv: an Env whose file syncs wait while a gate is closed, so a
// test can hold a group commit's leader inside its sync while more callers
// queue behind it. Shared by the tests of the log, the tables and the topic.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "file_wrapping_env.h"

namespace spool::testing {

class GatedSyncEnv : public FileWrappingEnv {
 public:
  using FileWrappingEnv::FileWrappingEnv;
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

 protected:
  std::unique_ptr<File> Wrap(std::unique_ptr<File> inner) override {
    return std::make_unique<GatedFile>(this, std::move(inner));
  }

 private:
  class GatedFile : public FileWrapper {
   public:
    GatedFile(GatedSyncEnv* env, std::unique_ptr<File> inner) : FileWrapper(std::move(inner)), env_(env) {}
    Status Sync() override {
      std::unique_lock<std::mutex> lock(env_->mu_);
      ++env_->blocked_;
      env_->cv_.notify_all();
      env_->cv_.wait(lock, [&] { return env_->open_; });
      --env_->blocked_;
      return FileWrapper::Sync();
    }

   private:
    GatedSyncEnv* env_;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int blocked_ = 0;
};

}  // namespace spool::testing
