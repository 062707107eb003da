// Stopwatch: elapsed wall time on the monotonic clock; CpuStopwatch: the
// CPU time (user and system) of every thread of the process.
#pragma once

#include <sys/resource.h>

#include <chrono>

namespace spool::bench {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void Restart() { start_ = Clock::now(); }
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double Micros() const { return std::chrono::duration<double, std::micro>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

class CpuStopwatch {
 public:
  CpuStopwatch() : start_(Now()) {}
  double Seconds() const { return Now() - start_; }

 private:
  static double Now() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }
  double start_;
};

}  // namespace spool::bench
