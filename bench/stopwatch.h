// Stopwatch: elapsed wall time on the monotonic clock.
#pragma once

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

}  // namespace spool::bench
