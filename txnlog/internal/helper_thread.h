// A second thread for work that overlaps its owner's: the owner starts one
// job, goes on with its own part, then waits for the job.
//
//   HelperThread helper("spool-compress");
//   helper.Start([&] { back = Compress(second_half); });
//   front = Compress(first_half);
//   helper.Wait();
//
// One job at a time: Start waits for the job before it. The thread starts
// with the first job and ends with the object, after its last job. Start
// returns the job's ticket, for an owner that has started later jobs since
// and needs only this one done (WaitFor). The thread carries a name (what
// top -H, ps -L and gdb show), so that an embedder can tell Spool's
// threads apart from its own and from each other.
//
// Internal (not installed): the log, the store and the pipeline use it
// (spool_txnlog_internal).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace spool {

// Names the calling thread `name`, cut to the 15 bytes Linux keeps.
void NameThisThread(const std::string& name);

// Yields the CPU until `ready()` or `budget_us` has passed. Waking a thread
// asleep on a condition variable costs tens of microseconds on a virtual
// machine (futex, inter-processor interrupt), a large share of a ~250 µs
// sync: a committer about to be served, or a leader expecting committers
// back, spins instead. Returns ready().
template <typename Ready>
bool SpinUntil(Ready ready, uint64_t budget_us) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget_us);
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Runs `job(k)` for every k in [0, count), on the caller's thread and up to
// `workers - 1` helpers named `name`, each taking the next k free; returns
// once every job is done.
template <typename Job>
void OnThreads(size_t count, size_t workers, const char* name, const Job& job) {
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < count;) job(k);
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(workers, count); ++t) {
    helpers.emplace_back([&] {
      NameThisThread(name);
      work();
    });
  }
  work();
  for (std::thread& helper : helpers) helper.join();
}

class HelperThread {
 public:
  // `name`: the thread's (NameThisThread).
  explicit HelperThread(std::string name) : name_(std::move(name)) {}
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;
  ~HelperThread();

  // Runs `job` on the thread, once the job before it is done. Returns its
  // ticket: 1 for the first job, then one more for each.
  uint64_t Start(std::function<void()> job);
  // Returns once no job is running or waiting to.
  void Wait();
  // Returns once the job with `ticket`, and so every job before it, is done;
  // spinning (SpinUntil) up to `spin_us` before it sleeps, for an owner
  // whose own part usually ends within a wake-up's time of the job's.
  void WaitFor(uint64_t ticket, uint64_t spin_us = 0);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;          // set: waiting to run or running
  uint64_t started_ = 0;               // jobs started
  std::atomic<uint64_t> finished_{0};  // jobs done (written under mu_)
  bool quit_ = false;
  const std::string name_;
  std::thread thread_;
};

}  // namespace spool
