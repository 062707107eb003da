#include "nats_server_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>

#include "spool/txnlog/status.h"

namespace spool {
namespace {

using Clock = std::chrono::steady_clock;

// How long a server may take to serve JetStream after it starts, and to
// exit after SIGTERM (a JetStream server flushes its streams first).
constexpr auto kReadyTimeout = std::chrono::seconds(30);
constexpr auto kStopTimeout = std::chrono::seconds(30);
// Between two checks of a server starting or stopping: a bounded poll of
// another process, not synchronisation.
constexpr auto kPollPause = std::chrono::milliseconds(10);
// Each readiness request waits this long for its answer.
constexpr int kCheckWaitMs = 500;
// Starts again on another port when the one picked was taken meanwhile.
constexpr int kPortAttempts = 5;

// A port no one listens on now (bound to 127.0.0.1:0, read back, closed).
Status PickFreePort(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError("picking a port: socket: " + std::string(std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(0x7F000001U);  // 127.0.0.1
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) return Status::IOError("picking a port: bind 127.0.0.1:0: " + std::string(std::strerror(saved)));
  *port = ntohs(address.sin_port);
  return Status::OK();
}

// The file's bytes; empty when it cannot be read.
std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (in) bytes << in.rdbuf();
  return bytes.str();
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// fork/exec of `binary -c config`, stdout and stderr to `log`, stdin from
// /dev/null; the child dies with the thread that forked it. -1 when it
// cannot be started.
pid_t SpawnServer(const std::string& binary, const std::string& config, const std::string& log) {
  std::vector<std::string> args = {binary, "-c", config};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) {
    if (log_fd >= 0) ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return -1;
  }
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(null_fd);
  return child > 0 ? child : -1;
}

// Whether the server at `url` answers a JetStream request; if not, why.
bool ServesJetStream(const std::string& url, std::string* why_not) {
  natsOptions* options = nullptr;
  natsConnection* connection = nullptr;
  jsCtx* js = nullptr;
  jsAccountInfo* info = nullptr;
  natsStatus s = natsOptions_Create(&options);
  if (s == NATS_OK) s = natsOptions_SetURL(options, url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(options, kCheckWaitMs);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(options, false);
  if (s == NATS_OK) s = natsConnection_Connect(&connection, options);
  if (s == NATS_OK) s = natsConnection_JetStream(&js, connection, nullptr);
  jsOptions request;
  jsOptions_Init(&request);
  request.Wait = kCheckWaitMs;
  jsErrCode code = static_cast<jsErrCode>(0);
  if (s == NATS_OK) s = js_GetAccountInfo(&info, js, &request, &code);
  if (s != NATS_OK) *why_not = fmt::format("{} (JetStream error {})", natsStatus_GetText(s), static_cast<int>(code));
  if (info != nullptr) jsAccountInfo_Destroy(info);
  if (js != nullptr) jsCtx_Destroy(js);
  if (connection != nullptr) natsConnection_Destroy(connection);
  if (options != nullptr) natsOptions_Destroy(options);
  return s == NATS_OK;
}

}  // namespace

std::string NatsQuoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string FindNatsServer() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (!dir.empty()) candidates.push_back(dir + "/nats-server");
    }
  }
  candidates.emplace_back("/usr/sbin/nats-server");
  candidates.emplace_back("/usr/bin/nats-server");
  for (const std::string& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

NatsServerProcess::~NatsServerProcess() { (void)Stop(); }  // killed and reaped whatever it says

std::string NatsServerProcess::url() const { return fmt::format("nats://127.0.0.1:{}", port_); }

std::string NatsServerProcess::ConfigText() const {
  return fmt::format(
      "# Written by Spool (tools/nats_process/nats_server_process.cc) for a server of its own.\n"
      "server_name: \"spool-local\"\n"
      "listen: \"127.0.0.1:{}\"\n"
      "jetstream {{\n  store_dir: {}\n}}\n",
      port_, NatsQuoted(dir_ + "/jetstream"));
}

Status NatsServerProcess::Start(const std::string& dir) {
  if (running()) return Status::InvalidArgument("nats-server: started twice");
  dir_ = dir;
  std::string how;
  for (int attempt = 1; attempt <= kPortAttempts; ++attempt) {
    SPOOL_RETURN_IF_ERROR(PickFreePort(&port_));
    SPOOL_RETURN_IF_ERROR(Launch());
    bool ready = false;
    SPOOL_RETURN_IF_ERROR(WaitReady(&ready, &how));
    if (ready) return Status::OK();
    // Exited before it was ready: another process may have taken the port.
    if (LogTail().find("address already in use") == std::string::npos) break;
  }
  return Status::IOError("nats-server at " + url() + " " + how + " before it was ready; its log ends:\n" + LogTail());
}

Status NatsServerProcess::Launch() {
  const std::string binary = FindNatsServer();
  if (binary.empty()) {
    return Status::NotFound(
        "nats-server: not found on the PATH, in /usr/sbin or in /usr/bin (scripts/setup.sh installs "
        "Debian's nats-server)");
  }
  const std::string config_path = dir_ + "/nats-server.conf";
  std::ofstream config(config_path, std::ios::trunc);
  config << ConfigText();
  if (!config.flush()) return Status::IOError("nats-server: writing " + config_path);
  pid_ = SpawnServer(binary, config_path, dir_ + "/nats-server.log");
  if (pid_ <= 0) return Status::IOError("nats-server: cannot start " + binary + " (its log: " + dir_ + ")");
  return Status::OK();
}

Status NatsServerProcess::WaitReady(bool* ready, std::string* how) {
  const auto deadline = Clock::now() + kReadyTimeout;
  std::string why_not;
  while (true) {
    if (Exited(how)) return Status::OK();
    if ((*ready = ServesJetStream(url(), &why_not))) return Status::OK();
    if (Clock::now() >= deadline) {
      (void)Stop();
      return Status::IOError(
          fmt::format("nats-server at {} did not serve JetStream within {} s (the last check: {}); "
                      "its log ends:\n{}",
                      url(), kReadyTimeout.count(), why_not, LogTail()));
    }
    std::this_thread::sleep_for(kPollPause);
  }
}

bool NatsServerProcess::Exited(std::string* how) {
  if (pid_ <= 0) return true;
  int status = 0;
  pid_t reaped = 0;
  do {
    reaped = ::waitpid(pid_, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == 0) return false;
  *how = reaped == pid_ ? DescribeWaitStatus(status) : std::string("could not be waited for");
  pid_ = -1;
  return true;
}

Status NatsServerProcess::Stop() {
  if (pid_ <= 0) return Status::OK();
  const pid_t pid = pid_;
  std::string how;
  if (Exited(&how)) return Status::IOError(fmt::format("nats-server (pid {}) {} before it was stopped", pid, how));
  if (::kill(pid, SIGTERM) != 0) return Status::IOError("kill nats-server: " + std::string(std::strerror(errno)));
  const auto deadline = Clock::now() + kStopTimeout;
  while (!Exited(&how)) {
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
      pid_ = -1;
      return Status::IOError(fmt::format("nats-server (pid {}) did not exit within {} s of SIGTERM: killed it", pid,
                                         kStopTimeout.count()));
    }
    std::this_thread::sleep_for(kPollPause);
  }
  return Status::OK();
}

Status NatsServerProcess::CpuSeconds(double* seconds) const {
  const std::string stat = ReadFile(fmt::format("/proc/{}/stat", pid_));
  // After the command's ")": state is field 3, utime 14 and stime 15.
  const size_t close = stat.rfind(')');
  if (pid_ <= 0 || close == std::string::npos) return Status::IOError("nats-server: no /proc/<pid>/stat");
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> values;
  for (std::string field; fields >> field && values.size() < 13;) values.push_back(field);
  if (values.size() < 13) return Status::IOError("nats-server: /proc/<pid>/stat is short");
  const double ticks = static_cast<double>(std::stoull(values[11]) + std::stoull(values[12]));
  *seconds = ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return Status::OK();
}

std::string NatsServerProcess::LogTail() const {
  const std::string log = ReadFile(dir_ + "/nats-server.log");
  constexpr size_t kTail = 2000;
  return log.size() > kTail ? log.substr(log.size() - kTail) : log;
}

}  // namespace spool
