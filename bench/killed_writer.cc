#include "killed_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

#include "check.h"

namespace spool::bench {
namespace {

constexpr uint64_t kRssUnitBytes = 1024;  // ru_maxrss is in KiB
constexpr std::string_view kReportPrefix = "written ";

// Reads the child's report line from `fd` (until newline or EOF).
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

KilledWriter RunKilledWriter(const std::string& self_path, const std::string& engine, const std::string& dir,
                             uint64_t payload_bytes) {
  int fds[2];
  ExpectSys(::pipe2(fds, O_CLOEXEC) == 0, "pipe");
  const pid_t pid = Spawn({self_path, "--w7-writer", engine, "--dir", dir, "--w7-bytes", std::to_string(payload_bytes)},
                          fds[1], fds[0]);
  ::close(fds[1]);
  const std::string line = ReadLine(fds[0]);
  ::close(fds[0]);
  ::kill(pid, SIGKILL);
  int status = 0;
  struct rusage usage {};
  ExpectSys(::wait4(pid, &status, 0, &usage) == pid, "wait4");
  if (!line.starts_with(kReportPrefix) || !WIFSIGNALED(status)) {
    throw BenchError("W7 writer for " + engine + " failed (report \"" + line + "\", wait status " +
                     std::to_string(status) + ")");
  }
  KilledWriter writer;
  writer.records = std::stoull(line.substr(kReportPrefix.size()));
  writer.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * kRssUnitBytes;
  return writer;
}

}  // namespace spool::bench
