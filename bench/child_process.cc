#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "check.h"

namespace spool::bench {
namespace {

constexpr uint64_t kRssUnitBytes = 1024;  // ru_maxrss is in KiB

// Reads one line from `fd` (until newline or EOF).
std::string ReadLine(int fd) {
  std::string line;
  char c = 0;
  while (true) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line.push_back(c);
  }
  return line;
}

pid_t Spawn(const std::vector<std::string>& args, int stdout_fd, int unused_fd) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  ExpectSys(pid >= 0, "fork");
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::close(unused_fd);
    if (::dup2(stdout_fd, STDOUT_FILENO) < 0) ::_exit(127);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

ChildOutcome RunChild(const std::vector<std::string>& args, ChildEnd end) {
  int fds[2];
  ExpectSys(::pipe2(fds, O_CLOEXEC) == 0, "pipe");
  const pid_t pid = Spawn(args, fds[1], fds[0]);
  ::close(fds[1]);
  ChildOutcome outcome;
  outcome.report = ReadLine(fds[0]);
  ::close(fds[0]);
  if (end == ChildEnd::kKillAfterReport) ::kill(pid, SIGKILL);
  struct rusage usage {};
  ExpectSys(::wait4(pid, &outcome.wait_status, 0, &usage) == pid, "wait4");
  outcome.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * kRssUnitBytes;
  return outcome;
}

}  // namespace spool::bench
