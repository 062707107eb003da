#include "helper_thread.h"

#include <pthread.h>

namespace spool {

void NameThisThread(const std::string& name) {
  constexpr size_t kMaxName = 15;  // and the terminating NUL: 16 bytes
  (void)pthread_setname_np(pthread_self(), name.substr(0, kMaxName).c_str());
}

HelperThread::~HelperThread() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t HelperThread::Start(std::function<void()> job) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !job_; });
  job_ = std::move(job);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
  return ++started_;
}

void HelperThread::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return finished_ == started_; });
}

void HelperThread::WaitFor(uint64_t ticket, uint64_t spin_us) {
  const auto done = [this, ticket] { return finished_.load(std::memory_order_acquire) >= ticket; };
  if (spin_us != 0 && SpinUntil(done, spin_us)) return;
  std::unique_lock lock(mu_);
  cv_.wait(lock, done);
}

void HelperThread::Loop() {
  NameThisThread(name_);
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return job_ || quit_; });
    if (!job_) return;  // quitting, with nothing left to run
    lock.unlock();
    job_();  // Start leaves job_ alone until it is cleared
    lock.lock();
    job_ = nullptr;
    finished_.fetch_add(1, std::memory_order_release);
    cv_.notify_all();
  }
}

}  // namespace spool
