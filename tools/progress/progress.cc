#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "count_format.h"

namespace spool::cli {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

// Seconds as "m:ss" or "h:mm:ss".
std::string Clock(double seconds) {
  const auto s = static_cast<uint64_t>(std::llround(std::max(0.0, seconds)));
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof(text), "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  } else {
    std::snprintf(text, sizeof(text), "%llu:%02llu", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  }
  return text;
}

}  // namespace

bool ProgressEnabled(ProgressMode mode) {
  if (mode != ProgressMode::kAuto) return mode == ProgressMode::kOn;
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

ProgressBar::ProgressBar(std::string label, std::string unit, bool enabled)
    : label_(std::move(label)), unit_(std::move(unit)), enabled_(enabled), started_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { Finish(); }

std::string ProgressBar::Render(const std::string& label, const std::string& unit, uint64_t done, uint64_t total,
                                std::chrono::duration<double> elapsed, unsigned width) {
  std::string line = label;
  const double seconds = elapsed.count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  if (total > 0) {
    const double share = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const auto filled = static_cast<unsigned>(share * width);
    line += "  [" + std::string(filled, '#') + std::string(width - filled, '-') + "]";
    char percent[8];
    std::snprintf(percent, sizeof(percent), "%3d%%", static_cast<int>(share * 100));
    line += std::string("  ") + percent + "  " + FormatCount(done) + "/" + FormatCount(total) + " " + unit;
  } else {
    line += "  " + FormatCount(done) + " " + unit;
  }
  if (seconds > 0) line += "  " + FormatCount(static_cast<uint64_t>(rate)) + "/s";
  if (total > 0 && done < total && rate > 0) line += "  ETA " + Clock(static_cast<double>(total - done) / rate);
  if (total > 0 && done >= total) line += "  " + Clock(seconds);
  return line;
}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  done_ = done;
  total_ = total;
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drew_ && now - drawn_ < kRedrawEvery && !(total > 0 && done >= total)) return;
  drawn_ = now;
  Draw();
}

void ProgressBar::Draw() {
  const std::string line = Render(label_, unit_, done_, total_, std::chrono::steady_clock::now() - started_);
  // Back to the line's start, the line, and the rest of an older, longer one cleared.
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drew_ = true;
}

void ProgressBar::Finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  Draw();
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace spool::cli
