#include "nats_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <utility>

#include "nats_server_process.h"

namespace spool::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a server may take to exit after SIGTERM (a JetStream server
// flushes its streams first) before the harness kills it.
constexpr milliseconds kStopTimeout = std::chrono::seconds(30);
// Between two readiness checks of a server that is starting, and between
// two tries of a call that met a passing error.
constexpr milliseconds kRetryPause{25};
// Each libnats request of the harness waits this long for its answer; a
// retry loop around it has its own, longer, deadline.
constexpr int64_t kRequestWaitMs = 2000;
// How many times Start picks new ports when another process took one of
// them between the pick and the server's bind.
constexpr int kPortAttempts = 5;
constexpr const char* kProbeStream = "SPOOL_READY_PROBE";
constexpr const char* kProbeSubject = "spool_ready_probe";

// The pause of a bounded polling loop that waits on another process; never
// synchronisation within this one.
void PauseBeforeRetry() { std::this_thread::sleep_for(kRetryPause); }

int64_t MillisecondsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? left : 0;
}

std::string Errno(const std::string& call) { return call + ": " + std::strerror(errno); }

// libnats' account of its last failure: the status, the text the server or
// library gave (thread-local in libnats, so read right after the call), and
// the JetStream error code when there is one.
std::string NatsError(natsStatus status, jsErrCode js_error) {
  std::string text = natsStatus_GetText(status);
  natsStatus ignored = NATS_OK;
  const char* last = nats_GetLastError(&ignored);
  // The last error often only repeats the status (after a source position).
  if (last != nullptr && std::strstr(last, text.c_str()) == nullptr) text += std::string(": ") + last;
  if (static_cast<int>(js_error) != 0) text += " (JetStream error " + std::to_string(static_cast<int>(js_error)) + ")";
  return text;
}

// Runs `attempt` (natsStatus(jsErrCode*)) until it succeeds, fails with an
// error `transient(status, js_error)` does not call passing, or
// `retry_for` has passed since the first try.
template <typename Attempt, typename Transient>
::testing::AssertionResult Retrying(const std::string& what, milliseconds retry_for, Attempt attempt,
                                    Transient transient) {
  const auto start = Clock::now();
  for (int tries = 1;; ++tries) {
    jsErrCode js_error = static_cast<jsErrCode>(0);
    const natsStatus status = attempt(&js_error);
    if (status == NATS_OK) return ::testing::AssertionSuccess();
    const std::string error = NatsError(status, js_error);
    const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    if (!transient(status, js_error) || elapsed >= retry_for) {
      auto failure = ::testing::AssertionFailure() << what << " failed";
      if (tries > 1) failure << " (" << tries << " tries over " << elapsed.count() << " ms)";
      return failure << ": " << error;
    }
    PauseBeforeRetry();
  }
}

// Errors after which a JetStream API request (idempotent in the harness's
// uses) may succeed when sent again: nobody answered (no leader yet), the
// answer did not come in time, the connection dropped while waiting, or
// JetStream said it is temporarily unavailable.
bool ApiErrorIsTransient(natsStatus status, jsErrCode js_error) {
  return status == NATS_NO_RESPONDERS || status == NATS_TIMEOUT || status == NATS_CONNECTION_DISCONNECTED ||
         js_error == JSClusterNotAvailErr;
}

jsOptions RequestOptions() {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = kRequestWaitMs;
  return options;
}

std::string Loopback(int port) { return "127.0.0.1:" + std::to_string(port); }

sockaddr_in LoopbackAddress(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(0x7F000001U);  // 127.0.0.1 (INADDR_LOOPBACK has an old-style cast)
  return address;
}

// Ports no one listens on now: `count` sockets bound to 127.0.0.1:0 at
// once (so the ports differ), read back and closed. Another process may
// take one before the server binds it: the callers retry on that race.
::testing::AssertionResult PickFreePorts(size_t count, std::vector<int>* ports) {
  std::vector<int> sockets;
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  ports->clear();
  for (size_t i = 0; i < count && result; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      result = ::testing::AssertionFailure() << "picking a free port: " << Errno("socket");
      break;
    }
    sockets.push_back(fd);
    sockaddr_in address = LoopbackAddress(0);
    socklen_t length = sizeof address;
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      result = ::testing::AssertionFailure() << "picking a free port: " << Errno("bind to 127.0.0.1:0");
    } else if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      result = ::testing::AssertionFailure() << "picking a free port: " << Errno("getsockname");
    } else {
      ports->push_back(ntohs(address.sin_port));
    }
  }
  for (int fd : sockets) close(fd);
  return result;
}

// GET http://127.0.0.1:port/path; false with `error` set when there is no answer.
bool HttpGet(int port, const std::string& path, int* code, std::string* body, std::string* error) {
  const std::string where = "GET http://" + Loopback(port) + path;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = where + ": " + Errno("socket");
    return false;
  }
  // The monitoring port answers at once or not at all: bound the wait so a
  // wedged server fails the readiness check instead of hanging it.
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address = LoopbackAddress(port);
  std::string response;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  if (!ok) *error = where + ": " + Errno("connect");
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (ok && send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    *error = where + ": " + Errno("send");
    ok = false;
  }
  char buffer[4096];
  for (ssize_t n = 1; ok && n > 0;) {
    n = recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) response.append(buffer, static_cast<size_t>(n));
    if (n < 0) {
      *error = where + ": " + Errno("recv");
      ok = false;
    }
  }
  close(fd);
  if (!ok) return false;
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  const size_t space = response.find(' ');
  const size_t header_end = response.find("\r\n\r\n");
  if (space == std::string::npos || header_end == std::string::npos ||
      std::from_chars(response.data() + space + 1, response.data() + response.size(), *code).ec != std::errc()) {
    *error = where + ": not an HTTP response: " + response.substr(0, 200);
    return false;
  }
  *body = response.substr(header_end + 4);
  return true;
}

std::string ReadFrom(const std::string& path, uint64_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(offset));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

// Waits up to `timeout` for the child `pid` to exit, and reaps it; true
// when it has (`status` is then its wait status). A pidfd lets poll() wait
// for the exit itself; kernels without pidfds (before 5.3) get a polling
// loop on waitpid.
bool ReapWithin(pid_t pid, milliseconds timeout, int* status) {
  const auto deadline = Clock::now() + timeout;
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd exited{pidfd, POLLIN, 0};
    int ready = 0;
    do {
      ready = poll(&exited, 1, static_cast<int>(MillisecondsLeft(deadline)));
    } while (ready < 0 && errno == EINTR);
    close(pidfd);
    if (ready <= 0) return false;
    return waitpid(pid, status, 0) == pid;
  }
#endif
  for (;;) {
    const pid_t reaped = waitpid(pid, status, WNOHANG);
    if (reaped == pid) return true;
    if (reaped < 0 && errno != EINTR) return false;
    if (Clock::now() >= deadline) return false;
    PauseBeforeRetry();
  }
}

// fork/exec of `binary -c config`, its stdout and stderr appended to `log`,
// stdin from /dev/null. The child gets SIGKILL when the thread that forked
// it ends (PR_SET_PDEATHSIG), so a test process that crashes or is killed
// takes its servers with it.
::testing::AssertionResult SpawnServer(const std::string& binary, const std::string& config, const std::string& log,
                                       pid_t* pid) {
  std::vector<std::string> args = {binary, "-c", config};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return ::testing::AssertionFailure() << "starting nats-server: " << Errno("open " + log);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    close(log_fd);
    return ::testing::AssertionFailure() << "starting nats-server: " << Errno("open /dev/null");
  }
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec: the test process
    // may have other threads (libnats has some), whose locks are frozen here.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    // The server must not hold the test's sockets and files open.
    if (close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 4096; ++fd) close(fd);
    }
    execv(argv[0], argv.data());
    static const char kExecFailed[] = "spool test harness: execv of nats-server failed\n";
    [[maybe_unused]] ssize_t written = write(STDERR_FILENO, kExecFailed, sizeof kExecFailed - 1);
    _exit(127);
  }
  const int fork_errno = errno;
  close(log_fd);
  close(null_fd);
  if (child < 0) return ::testing::AssertionFailure() << "starting nats-server: fork: " << std::strerror(fork_errno);
  *pid = child;
  return ::testing::AssertionSuccess();
}

}  // namespace

// ---- NatsClient ----

NatsClient::~NatsClient() { Close(); }

void NatsClient::Close() {
  if (jetstream_ != nullptr) jsCtx_Destroy(jetstream_);
  if (connection_ != nullptr) natsConnection_Destroy(connection_);
  jetstream_ = nullptr;
  connection_ = nullptr;
}

::testing::AssertionResult NatsClient::Connect(const std::string& urls, const NatsAuth& auth) {
  Close();
  // natsOptions_SetURL takes one URL; a list goes to SetServers.
  std::vector<std::string> servers;
  std::stringstream list(urls);
  for (std::string server; std::getline(list, server, ',');) servers.push_back(server);
  std::vector<const char*> server_pointers;
  for (const std::string& server : servers) server_pointers.push_back(server.c_str());
  natsOptions* options = nullptr;
  natsStatus status = natsOptions_Create(&options);
  if (status == NATS_OK) {
    status = natsOptions_SetServers(options, server_pointers.data(), static_cast<int>(server_pointers.size()));
  }
  if (status == NATS_OK && !auth.user.empty()) {
    status = natsOptions_SetUserInfo(options, auth.user.c_str(), auth.password.c_str());
  }
  if (status == NATS_OK && !auth.token.empty()) status = natsOptions_SetToken(options, auth.token.c_str());
  if (status == NATS_OK && !auth.tls_ca_file.empty()) status = natsOptions_SetSecure(options, true);
  if (status == NATS_OK && !auth.tls_ca_file.empty()) {
    status = natsOptions_LoadCATrustedCertificates(options, auth.tls_ca_file.c_str());
  }
  if (status == NATS_OK) status = natsOptions_SetName(options, "spool-test-harness");
  if (status == NATS_OK) status = natsOptions_SetTimeout(options, kRequestWaitMs);
  // After a server goes away: try the others (or it, restarted) every
  // 100 ms for a minute, and fail the requests waiting on the lost
  // connection at once rather than after their whole wait.
  if (status == NATS_OK) status = natsOptions_SetReconnectWait(options, 100);
  if (status == NATS_OK) status = natsOptions_SetMaxReconnect(options, 600);
  if (status == NATS_OK) status = natsOptions_SetFailRequestsOnDisconnect(options, true);
  if (status == NATS_OK) status = natsConnection_Connect(&connection_, options);
  const std::string error = status == NATS_OK ? "" : NatsError(status, static_cast<jsErrCode>(0));
  natsOptions_Destroy(options);
  if (status != NATS_OK) {
    connection_ = nullptr;
    return ::testing::AssertionFailure() << "connecting to " << urls << ": " << error;
  }
  jsOptions js_options = RequestOptions();
  status = natsConnection_JetStream(&jetstream_, connection_, &js_options);
  if (status != NATS_OK) {
    const std::string js_error = NatsError(status, static_cast<jsErrCode>(0));
    Close();
    return ::testing::AssertionFailure() << "opening a JetStream context on " << urls << ": " << js_error;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult NatsClient::CreateStream(const std::string& name, const NatsStreamOptions& options) {
  if (jetstream_ == nullptr) return ::testing::AssertionFailure() << "CreateStream(" << name << "): not connected";
  std::vector<const char*> subjects;
  for (const std::string& subject : options.subjects) subjects.push_back(subject.c_str());
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = name.c_str();
  config.Subjects = subjects.empty() ? nullptr : subjects.data();
  config.SubjectsLen = static_cast<int>(subjects.size());
  if (options.max_msgs > 0) config.MaxMsgs = options.max_msgs;
  config.Duplicates = std::chrono::duration_cast<std::chrono::nanoseconds>(options.duplicate_window).count();
  config.Replicas = options.replicas;
  config.Storage = options.memory_storage ? js_MemoryStorage : js_FileStorage;
  jsOptions request = RequestOptions();
  return Retrying(
      "creating stream " + name, retry_for_,
      [&](jsErrCode* js_error) {
        jsStreamInfo* info = nullptr;
        const natsStatus status = js_AddStream(&info, jetstream_, &config, &request, js_error);
        if (info != nullptr) jsStreamInfo_Destroy(info);
        return status;
      },
      ApiErrorIsTransient);
}

::testing::AssertionResult NatsClient::DeleteStream(const std::string& name) {
  if (jetstream_ == nullptr) return ::testing::AssertionFailure() << "DeleteStream(" << name << "): not connected";
  jsOptions request = RequestOptions();
  bool first_try = true;
  return Retrying(
      "deleting stream " + name, retry_for_,
      [&](jsErrCode* js_error) {
        const natsStatus status = js_DeleteStream(jetstream_, name.c_str(), &request, js_error);
        // A try that timed out may have deleted it: "not found" on a later try means done.
        const bool deleted_before = !first_try && *js_error == JSStreamNotFoundErr;
        first_try = false;
        return deleted_before ? NATS_OK : status;
      },
      ApiErrorIsTransient);
}

::testing::AssertionResult NatsClient::PurgeStream(const std::string& name, uint64_t before_sequence) {
  if (jetstream_ == nullptr) return ::testing::AssertionFailure() << "PurgeStream(" << name << "): not connected";
  jsOptions request = RequestOptions();
  request.Stream.Purge.Sequence = before_sequence;
  return Retrying(
      "purging stream " + name + " below sequence " + std::to_string(before_sequence), retry_for_,
      [&](jsErrCode* js_error) { return js_PurgeStream(jetstream_, name.c_str(), &request, js_error); },
      ApiErrorIsTransient);
}

::testing::AssertionResult NatsClient::Publish(const std::string& subject, std::string_view data, uint64_t* sequence,
                                               const std::string& msg_id) {
  if (jetstream_ == nullptr) return ::testing::AssertionFailure() << "Publish(" << subject << "): not connected";
  jsPubOptions options;
  jsPubOptions_Init(&options);
  options.MaxWait = kRequestWaitMs;
  if (!msg_id.empty()) options.MsgId = msg_id.c_str();
  const bool repeatable = !msg_id.empty();
  uint64_t acknowledged = 0;
  auto result = Retrying(
      "publishing " + std::to_string(data.size()) + " bytes to " + subject, retry_for_,
      [&](jsErrCode* js_error) {
        jsPubAck* ack = nullptr;
        const natsStatus status = js_Publish(&ack, jetstream_, subject.c_str(), data.data(),
                                             static_cast<int>(data.size()), &options, js_error);
        if (ack != nullptr) {
          acknowledged = ack->Sequence;
          jsPubAck_Destroy(ack);
        }
        return status;
      },
      // No responders: no stream took it (none has the subject, or the
      // stream has no leader now), so sending it again cannot store it twice.
      [&](natsStatus status, jsErrCode js_error) {
        return status == NATS_NO_RESPONDERS || (repeatable && ApiErrorIsTransient(status, js_error));
      });
  if (result && sequence != nullptr) *sequence = acknowledged;
  return result;
}

::testing::AssertionResult NatsClient::GetMessage(const std::string& stream, uint64_t sequence, std::string* data) {
  if (jetstream_ == nullptr) return ::testing::AssertionFailure() << "GetMessage(" << stream << "): not connected";
  jsOptions request = RequestOptions();
  return Retrying(
      "reading message " + std::to_string(sequence) + " of stream " + stream, retry_for_,
      [&](jsErrCode* js_error) {
        natsMsg* message = nullptr;
        const natsStatus status = js_GetMsg(&message, jetstream_, stream.c_str(), sequence, &request, js_error);
        if (message != nullptr) {
          data->assign(natsMsg_GetData(message), static_cast<size_t>(natsMsg_GetDataLength(message)));
          natsMsg_Destroy(message);
        }
        return status;
      },
      ApiErrorIsTransient);
}

::testing::AssertionResult NatsClient::GetStreamState(const std::string& name, NatsStreamState* state) {
  if (jetstream_ == nullptr) return ::testing::AssertionFailure() << "GetStreamState(" << name << "): not connected";
  jsOptions request = RequestOptions();
  return Retrying(
      "reading the state of stream " + name, retry_for_,
      [&](jsErrCode* js_error) {
        jsStreamInfo* info = nullptr;
        const natsStatus status = js_GetStreamInfo(&info, jetstream_, name.c_str(), &request, js_error);
        if (info == nullptr) return status;
        *state = NatsStreamState{};
        state->messages = info->State.Msgs;
        state->first_sequence = info->State.FirstSeq;
        state->last_sequence = info->State.LastSeq;
        if (info->Cluster != nullptr) {
          if (info->Cluster->Leader != nullptr) state->leader = info->Cluster->Leader;
          for (int i = 0; i < info->Cluster->ReplicasLen; ++i) {
            const jsPeerInfo* peer = info->Cluster->Replicas[i];
            state->followers_current.emplace_back(peer->Name, peer->Current && !peer->Offline);
          }
        }
        jsStreamInfo_Destroy(info);
        return status;
      },
      ApiErrorIsTransient);
}

// ---- NatsEndpoint ----

namespace {

template <typename Call>
::testing::AssertionResult WithClient(const NatsEndpoint& endpoint, Call call) {
  NatsClient client;
  ::testing::AssertionResult connected = client.Connect(endpoint.url(), endpoint.auth());
  if (!connected) return connected;
  return call(client);
}

}  // namespace

::testing::AssertionResult NatsEndpoint::Connect(NatsClient* client) const { return client->Connect(url(), auth()); }

::testing::AssertionResult NatsEndpoint::CreateStream(const std::string& name, const NatsStreamOptions& options) const {
  return WithClient(*this, [&](NatsClient& client) { return client.CreateStream(name, options); });
}

::testing::AssertionResult NatsEndpoint::DeleteStream(const std::string& name) const {
  return WithClient(*this, [&](NatsClient& client) { return client.DeleteStream(name); });
}

::testing::AssertionResult NatsEndpoint::PurgeStream(const std::string& name, uint64_t before_sequence) const {
  return WithClient(*this, [&](NatsClient& client) { return client.PurgeStream(name, before_sequence); });
}

::testing::AssertionResult NatsEndpoint::Publish(const std::string& subject, std::string_view data, uint64_t* sequence,
                                                 const std::string& msg_id) const {
  return WithClient(*this, [&](NatsClient& client) { return client.Publish(subject, data, sequence, msg_id); });
}

::testing::AssertionResult NatsEndpoint::GetMessage(const std::string& stream, uint64_t sequence,
                                                    std::string* data) const {
  return WithClient(*this, [&](NatsClient& client) { return client.GetMessage(stream, sequence, data); });
}

::testing::AssertionResult NatsEndpoint::GetStreamState(const std::string& name, NatsStreamState* state) const {
  return WithClient(*this, [&](NatsClient& client) { return client.GetStreamState(name, state); });
}

// ---- NatsServer ----

NatsServer::NatsServer(NatsServerOptions options)
    : options_(std::move(options)), own_dir_(std::make_unique<TempDir>()), server_name_("spool-nats") {
  dir_ = own_dir_->path();
}

NatsServer::NatsServer(NatsServerOptions options, std::string dir, std::string server_name)
    : options_(std::move(options)), dir_(std::move(dir)), server_name_(std::move(server_name)) {}

NatsServer::~NatsServer() {
  if (running()) (void)Signal(SIGTERM, "the harness stopped it");
  // After a failed test the scratch directory is about to go: show what
  // the server said, which is often why.
  std::error_code ignored;
  if (::testing::Test::HasFailure() && std::filesystem::exists(log_path(), ignored)) {
    std::cerr << "[nats harness] the log of " << server_name_ << " ends:\n" << LogTail(30) << std::flush;
  }
}

void NatsServer::SetPorts(int client_port, int monitor_port, int route_port, std::vector<int> peer_route_ports) {
  client_port_ = client_port;
  monitor_port_ = monitor_port;
  route_port_ = route_port;
  peer_route_ports_ = std::move(peer_route_ports);
}

std::string NatsServer::url() const { return "nats://" + Loopback(client_port_); }

std::string NatsServer::LogTail(int lines) const {
  const std::string log = ReadFrom(log_path(), 0);
  // Walk back from the end of the last line over `lines` line ends; `begin`
  // ends at 0 or at the line end before the first line wanted.
  size_t begin = log.size();
  if (begin > 0 && log[begin - 1] == '\n') --begin;
  for (int i = 0; i < lines && begin > 0; ++i) {
    const size_t newline = log.rfind('\n', begin - 1);
    begin = newline == std::string::npos ? 0 : newline;
  }
  return log.substr(begin == 0 ? 0 : begin + 1);
}

std::string NatsServer::ConfigText() const {
  std::ostringstream config;
  config << "# Written by Spool's test harness (tests/support/nats_server.cc) for one test.\n"
         << "server_name: " << NatsQuoted(server_name_) << "\n"
         << "listen: " << NatsQuoted(Loopback(client_port_)) << "\n"
         << "http: " << NatsQuoted(Loopback(monitor_port_)) << "\n"
         << "jetstream {\n  store_dir: " << NatsQuoted(store_dir()) << "\n}\n";
  if (options_.max_payload > 0) config << "max_payload: " << options_.max_payload << "\n";
  if (!options_.tls_cert_file.empty()) {
    config << "tls {\n  cert_file: " << NatsQuoted(options_.tls_cert_file)
           << "\n  key_file: " << NatsQuoted(options_.tls_key_file) << "\n}\n";
  }
  if (!options_.auth.user.empty()) {
    config << "authorization {\n  user: " << NatsQuoted(options_.auth.user)
           << "\n  password: " << NatsQuoted(options_.auth.password) << "\n}\n";
  } else if (!options_.auth.token.empty()) {
    config << "authorization {\n  token: " << NatsQuoted(options_.auth.token) << "\n}\n";
  }
  if (route_port_ != 0) {
    config << "cluster {\n  name: \"spool-test\"\n  listen: " << NatsQuoted(Loopback(route_port_)) << "\n  routes: [\n";
    for (int peer : peer_route_ports_) config << "    " << NatsQuoted("nats-route://" + Loopback(peer)) << "\n";
    config << "  ]\n}\n";
  }
  return config.str();
}

::testing::AssertionResult NatsServer::Launch() {
  if (dir_.empty()) {
    return ::testing::AssertionFailure() << "starting nats-server: no scratch directory (mkdtemp failed)";
  }
  const std::string binary = FindNatsServer();
  if (binary.empty()) {
    return ::testing::AssertionFailure() << "starting nats-server: not found on the PATH, in /usr/sbin or in /usr/bin "
                                            "(scripts/setup.sh installs Debian's nats-server)";
  }
  {
    std::ofstream config(config_path(), std::ios::trunc);
    config << ConfigText();
    if (!config.flush()) return ::testing::AssertionFailure() << "starting nats-server: writing " << config_path();
  }
  std::error_code no_log;
  const uintmax_t log_size = std::filesystem::file_size(log_path(), no_log);
  run_log_offset_ = no_log ? 0 : log_size;
  {
    std::ofstream log(log_path(), std::ios::app);
    log << "---- spool test harness: starting " << binary << " -c " << config_path() << " (" << server_name_
        << ", clients on " << Loopback(client_port_) << ") ----\n";
  }
  return SpawnServer(binary, config_path(), log_path(), &pid_);
}

bool NatsServer::Exited(std::string* how) {
  if (pid_ <= 0) {
    *how = "is not running";
    return true;
  }
  int status = 0;
  pid_t reaped = 0;
  do {
    reaped = waitpid(pid_, &status, WNOHANG);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == 0) return false;
  *how = reaped == pid_ ? DescribeWaitStatus(status) : "could not be waited for (" + Errno("waitpid") + ")";
  pid_ = -1;
  return true;
}

bool NatsServer::LostPortRace() const {
  return ReadFrom(log_path(), run_log_offset_).find("address already in use") != std::string::npos;
}

bool NatsServer::CheckJetStream(std::string* why_not) const {
  NatsClient client;
  ::testing::AssertionResult connected = client.Connect(url(), auth());
  if (!connected) {
    *why_not = connected.message();
    return false;
  }
  // Short: a cluster's member does not answer at all until a meta leader
  // is elected (about half a second after start), and the poll should
  // notice the election soon after.
  jsOptions request = RequestOptions();
  request.Wait = 500;
  jsAccountInfo* info = nullptr;
  jsErrCode js_error = static_cast<jsErrCode>(0);
  const natsStatus status = js_GetAccountInfo(&info, client.jetstream(), &request, &js_error);
  if (info != nullptr) jsAccountInfo_Destroy(info);
  if (status != NATS_OK) *why_not = "JetStream account info through " + url() + ": " + NatsError(status, js_error);
  return status == NATS_OK;
}

bool NatsServer::CheckHealthz(std::string* why_not) const {
  // The full check: JetStream on, and (clustered) in touch with the meta
  // leader and current with every stream this server holds a replica of;
  // or (alone) every stream in the store recovered.
  int code = 0;
  std::string body;
  if (!HttpGet(monitor_port_, "/healthz", &code, &body, why_not)) return false;
  if (code != 200) *why_not = "GET /healthz on " + Loopback(monitor_port_) + ": " + std::to_string(code) + " " + body;
  return code == 200;
}

::testing::AssertionResult NatsServer::NotReady(const std::string& what) const {
  return ::testing::AssertionFailure() << what << "\nits log (" << log_path() << ") ends:\n" << LogTail();
}

::testing::AssertionResult NatsServer::WaitReady(Clock::time_point deadline) {
  // Both checks: the JetStream request proves what a test needs first (the
  // client port takes these credentials and JetStream answers there), and
  // /healthz adds what one request cannot show (this server is current with
  // the meta leader and with every stream it holds a replica of). Once,
  // a member's /healthz was seen saying "ok" within milliseconds of its
  // start, while its peers still had no meta leader: it is not trusted alone.
  std::string why_not;
  for (;;) {
    std::string how;
    if (Exited(&how)) return NotReady(server_name_ + " (nats-server at " + url() + ") " + how + " before it was ready");
    if (CheckJetStream(&why_not) && CheckHealthz(&why_not)) return ::testing::AssertionSuccess();
    if (Clock::now() >= deadline) {
      return NotReady(server_name_ + " (nats-server at " + url() + ", pid " + std::to_string(pid_) +
                      ") was not ready in time; the last check: " + why_not);
    }
    PauseBeforeRetry();
  }
}

::testing::AssertionResult NatsServer::Start() {
  if (running()) return ::testing::AssertionFailure() << "Start: " << server_name_ << " is running already";
  // A cluster's member keeps the ports the cluster gave it; a server alone
  // picks its own the first time, and again if it loses them to a race.
  const bool pick = client_port_ == 0 && route_port_ == 0;
  for (int attempt = 1;; ++attempt) {
    if (pick) {
      std::vector<int> ports;
      ::testing::AssertionResult picked = PickFreePorts(2, &ports);
      if (!picked) return picked;
      client_port_ = ports[0];
      monitor_port_ = ports[1];
    }
    ::testing::AssertionResult launched = Launch();
    if (!launched) return launched;
    ::testing::AssertionResult ready = WaitReady(Clock::now() + options_.ready_timeout);
    if (!ready && !pick && !running() && LostPortRace()) {
      return ready << "\n(another process took a port this server keeps across restarts)";
    }
    if (ready || !pick || attempt == kPortAttempts || running() || !LostPortRace()) return ready;
  }
}

::testing::AssertionResult NatsServer::Signal(int signal_number, const char* what) {
  if (pid_ <= 0) return ::testing::AssertionSuccess();
  const pid_t pid = pid_;
  std::string how;
  if (Exited(&how)) {
    return NotReady(server_name_ + " (pid " + std::to_string(pid) + ") had ended by itself before " + what + ": it " +
                    how);
  }
  if (kill(pid, signal_number) != 0) {
    return ::testing::AssertionFailure() << what << ": " << Errno("kill " + std::to_string(pid));
  }
  int status = 0;
  if (!ReapWithin(pid, kStopTimeout, &status)) {
    kill(pid, SIGKILL);
    const bool reaped = ReapWithin(pid, kStopTimeout, &status);
    pid_ = -1;
    return NotReady(server_name_ + " (pid " + std::to_string(pid) + ") did not exit within " +
                    std::to_string(kStopTimeout.count()) + " ms of " + strsignal(signal_number) + " (" + what + "); " +
                    (reaped ? "killed it" : "it does not exit even after SIGKILL"));
  }
  pid_ = -1;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult NatsServer::Stop() { return Signal(SIGTERM, "Stop"); }

::testing::AssertionResult NatsServer::Kill() { return Signal(SIGKILL, "Kill"); }

::testing::AssertionResult NatsServer::Restart() {
  if (client_port_ == 0) return ::testing::AssertionFailure() << "Restart: " << server_name_ << " was never started";
  if (running()) {
    ::testing::AssertionResult stopped = Stop();
    if (!stopped) return stopped;
  }
  return Start();
}

// ---- NatsCluster ----

NatsCluster::NatsCluster(NatsServerOptions options) : options_(std::move(options)) {
  for (int i = 0; i < kSize; ++i) {
    const std::string member_dir = dir_.path().empty() ? "" : dir_.Sub("n" + std::to_string(i));
    std::error_code ignored;
    if (!member_dir.empty()) std::filesystem::create_directories(member_dir, ignored);
    servers_.push_back(
        std::unique_ptr<NatsServer>(new NatsServer(options_, member_dir, "spool-nats-" + std::to_string(i))));
  }
}

NatsCluster::~NatsCluster() {
  // SIGTERM to all first, so that their shutdowns overlap; the members'
  // destructors then reap them.
  for (const auto& server : servers_) {
    if (server->running()) kill(server->pid(), SIGTERM);
  }
  servers_.clear();
}

std::string NatsCluster::url() const {
  std::string urls;
  for (const auto& server : servers_) urls += (urls.empty() ? "" : ",") + server->url();
  return urls;
}

int NatsCluster::IndexOf(std::string_view server_name) const {
  for (int i = 0; i < kSize; ++i) {
    if (servers_[static_cast<size_t>(i)]->server_name() == server_name) return i;
  }
  return -1;
}

::testing::AssertionResult NatsCluster::PickPorts() {
  std::vector<int> ports;
  ::testing::AssertionResult picked = PickFreePorts(3 * kSize, &ports);
  if (!picked) return picked;
  for (size_t i = 0; i < kSize; ++i) {
    std::vector<int> peers;
    for (size_t j = 0; j < kSize; ++j) {
      if (j != i) peers.push_back(ports[2 * kSize + j]);
    }
    servers_[i]->SetPorts(ports[i], ports[kSize + i], ports[2 * kSize + i], std::move(peers));
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult NatsCluster::Start() {
  for (const auto& server : servers_) {
    if (server->running()) return ::testing::AssertionFailure() << "NatsCluster::Start: a member is running already";
  }
  const bool pick = servers_[0]->port() == 0;
  for (int attempt = 1;; ++attempt) {
    if (pick) {
      ::testing::AssertionResult picked = PickPorts();
      if (!picked) return picked;
    }
    // All three first: none can be ready before a meta leader is elected,
    // which takes two of them.
    for (const auto& server : servers_) {
      ::testing::AssertionResult launched = server->Launch();
      if (!launched) return launched;
    }
    ::testing::AssertionResult ready = WaitReady(Clock::now() + options_.ready_timeout);
    if (ready || !pick || attempt == kPortAttempts) return ready;
    bool lost_port_race = false;
    for (const auto& server : servers_) lost_port_race |= !server->running() && server->LostPortRace();
    if (!lost_port_race) return ready;
    for (const auto& server : servers_) (void)server->Kill();
  }
}

::testing::AssertionResult NatsCluster::WaitReady() { return WaitReady(Clock::now() + options_.ready_timeout); }

::testing::AssertionResult NatsCluster::WaitReady(Clock::time_point deadline) {
  for (int i = 0; i < kSize; ++i) {
    if (!servers_[static_cast<size_t>(i)]->running()) {
      return ::testing::AssertionFailure() << "the cluster is not ready: member " << i << " is not running";
    }
  }
  for (const auto& server : servers_) {
    ::testing::AssertionResult ready = server->WaitReady(deadline);
    if (!ready) return ready;
  }
  return ProbeReplicatedStream(deadline);
}

::testing::AssertionResult NatsCluster::ProbeReplicatedStream(Clock::time_point deadline) {
  // Each member being current with the meta leader is not yet enough: the
  // leader must also count all three as available for a new stream's
  // replicas, which it learns from their periodic reports.
  NatsClient client;
  client.set_retry_for(milliseconds(0));
  NatsStreamOptions probe;
  probe.subjects = {kProbeSubject};
  probe.replicas = kSize;
  std::string last_error;
  for (;;) {
    ::testing::AssertionResult created =
        client.connection() != nullptr ? ::testing::AssertionSuccess() : client.Connect(url(), auth());
    if (created) created = client.CreateStream(kProbeStream, probe);
    if (created) {
      client.set_retry_for(milliseconds(MillisecondsLeft(deadline)));
      return client.DeleteStream(kProbeStream);
    }
    last_error = created.message();
    if (Clock::now() >= deadline) {
      auto failure = ::testing::AssertionFailure() << "the cluster at " << url() << " could not create a stream of "
                                                   << kSize << " replicas in time; the last try: " << last_error;
      for (const auto& server : servers_)
        failure << "\nthe log of " << server->server_name() << " ends:\n" << server->LogTail(15);
      return failure;
    }
    PauseBeforeRetry();
  }
}

::testing::AssertionResult NatsCluster::Stop(int i) {
  if (i < 0 || i >= kSize) return ::testing::AssertionFailure() << "NatsCluster::Stop(" << i << "): no such member";
  return servers_[static_cast<size_t>(i)]->Stop();
}

::testing::AssertionResult NatsCluster::Kill(int i) {
  if (i < 0 || i >= kSize) return ::testing::AssertionFailure() << "NatsCluster::Kill(" << i << "): no such member";
  return servers_[static_cast<size_t>(i)]->Kill();
}

::testing::AssertionResult NatsCluster::Restart(int i) {
  if (i < 0 || i >= kSize) return ::testing::AssertionFailure() << "NatsCluster::Restart(" << i << "): no such member";
  const auto deadline = Clock::now() + options_.ready_timeout;
  // The member's own Restart waits for it to serve JetStream and be current
  // with the streams it holds; then the cluster as a whole.
  ::testing::AssertionResult restarted = servers_[static_cast<size_t>(i)]->Restart();
  if (!restarted) return restarted;
  return ProbeReplicatedStream(deadline);
}

}  // namespace spool::testing
