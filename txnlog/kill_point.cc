#include "kill_point.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>

#if defined(SPOOL_KILL_POINTS)
// The linker's bounds of the section every SPOOL_KILL_POINT adds its name to.
extern "C" {
extern const char* const __start_spool_kill_points[] __attribute__((weak));
extern const char* const __stop_spool_kill_points[] __attribute__((weak));
}
#endif

namespace spool::kill_point {
namespace {

uint64_t EnvNumber(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? 0 : std::strtoull(value, nullptr, 10);
}

// What a process with kill points was told by its environment.
struct Runtime {
  std::mutex mu;
  uint64_t odds = 0;
  std::string focus;
  uint64_t focus_odds = 0;
  std::mt19937_64 rng;
  uint64_t* counts = nullptr;  // 1 + Defined().size() counters, or null

  Runtime() {
    odds = EnvNumber("SPOOL_KILL_ODDS");
    if (const char* focus_name = std::getenv("SPOOL_KILL_FOCUS")) focus = focus_name;
    focus_odds = EnvNumber("SPOOL_KILL_FOCUS_ODDS");
    rng.seed(EnvNumber("SPOOL_KILL_SEED"));
    const char* path = std::getenv("SPOOL_KILL_COUNTS");
    if (path == nullptr) return;
    const size_t bytes = (1 + Defined().size()) * sizeof(uint64_t);
    const int fd = ::open(path, O_RDWR);
    if (fd < 0) return;
    void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map != MAP_FAILED) counts = static_cast<uint64_t*>(map);
  }
};

Runtime& TheRuntime() {
  static Runtime* runtime = new Runtime();  // never destroyed: points may be hit during exit
  return *runtime;
}

}  // namespace

bool CompiledIn() {
#if defined(SPOOL_KILL_POINTS)
  return true;
#else
  return false;
#endif
}

const std::vector<std::string>& Defined() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
#if defined(SPOOL_KILL_POINTS)
    if (__start_spool_kill_points != nullptr) {
      for (const char* const* p = __start_spool_kill_points; p != __stop_spool_kill_points; ++p) out.emplace_back(*p);
    }
#endif
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());  // a point in an inline function may repeat
    return out;
  }();
  return names;
}

void Hit(const char* name) {
  Runtime& runtime = TheRuntime();
  std::lock_guard lock(runtime.mu);
  const std::vector<std::string>& defined = Defined();
  const size_t index =
      static_cast<size_t>(std::lower_bound(defined.begin(), defined.end(), std::string_view(name)) - defined.begin());
  if (runtime.counts != nullptr && index < defined.size()) ++runtime.counts[1 + index];
  const uint64_t odds = runtime.focus == name ? runtime.focus_odds : runtime.odds;
  if (odds == 0 || runtime.rng() % odds != 0) return;
  if (runtime.counts != nullptr) runtime.counts[0] = 1 + index;
  std::raise(SIGKILL);
}

}  // namespace spool::kill_point
