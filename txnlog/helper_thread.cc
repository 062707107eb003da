#include "spool/txnlog/helper_thread.h"

namespace spool {

HelperThread::~HelperThread() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HelperThread::Start(std::function<void()> job) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !job_; });
  job_ = std::move(job);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
}

void HelperThread::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !job_; });
}

void HelperThread::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return job_ || quit_; });
    if (!job_) return;  // quitting, with nothing left to run
    lock.unlock();
    job_();  // Start leaves job_ alone until it is cleared
    lock.lock();
    job_ = nullptr;
    cv_.notify_all();
  }
}

}  // namespace spool
