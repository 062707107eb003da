// A progress bar for long work (replays, full refreshes, vacuum, snapshots,
// benchmarks, crash campaigns): on a terminal, one line on stderr redrawn in
// place with the share done, the rate and the time left; elsewhere nothing,
// so logs and pipes stay clean. The one place Spool draws progress.
//
//   ProgressBar bar("replay orders", "records", ProgressEnabled(mode));
//   for (...) bar.Update(done, total);  // total 0: not known (no share, no ETA)
//   bar.Finish();                       // leaves the last line, ends it
//
// Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace spool::cli {

// --progress / --no-progress / neither.
enum class ProgressMode : unsigned char { kAuto, kOn, kOff };

// Whether to draw: kAuto draws when stderr is a terminal (and TERM is not
// "dumb").
bool ProgressEnabled(ProgressMode mode);

class ProgressBar {
 public:
  ProgressBar(std::string label, std::string unit, bool enabled);
  ~ProgressBar();  // Finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `done` of `total` units (total 0: unknown). Redraws at most every
  // 100 ms, and always when done reaches total.
  void Update(uint64_t done, uint64_t total = 0);
  // Draws the final state and ends the line. Idempotent.
  void Finish();

  // The line Update would draw after `elapsed` (for tests): e.g.
  // "replay  [########------------]  40%  4,000/10,000 records  2,000/s  ETA 0:03".
  static std::string Render(const std::string& label, const std::string& unit, uint64_t done, uint64_t total,
                            std::chrono::duration<double> elapsed, unsigned width = 20);

 private:
  void Draw();

  const std::string label_;
  const std::string unit_;
  const bool enabled_;
  const std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point drawn_{};
  uint64_t done_ = 0;
  uint64_t total_ = 0;
  bool drew_ = false;
  bool finished_ = false;
};

}  // namespace spool::cli
