// Runs this executable again as a child process — fork + exec, so that no
// engine's threads or locks are inherited half way — and reads the one line
// it reports on stdout. W7's killed writer and the end-to-end run's updater
// (whose memory high-water mark is then its own) are such children.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spool::bench {

// What becomes of the child once it has reported.
enum class ChildEnd {
  kKillAfterReport,  // SIGKILL it, then reap it
  kWaitForExit,      // reap it when it exits by itself
};

struct ChildOutcome {
  std::string report;           // its first stdout line, without the newline
  int wait_status = 0;          // as wait4 gives it
  uint64_t peak_rss_bytes = 0;  // its memory high-water mark (ru_maxrss)
};

// Starts `args` (args[0] the executable; the child's stdout a pipe to this
// process, its stderr this process's), reads its report line (until newline
// or EOF) and ends it as `end` says. Throws BenchError when fork, pipe or
// wait fails; what the child did is for the caller to judge.
ChildOutcome RunChild(const std::vector<std::string>& args, ChildEnd end);

}  // namespace spool::bench
