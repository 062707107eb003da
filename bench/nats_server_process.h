// NatsServerProcess: a nats-server of the benchmark's own, for the jetstream
// workload — JetStream on, listening on 127.0.0.1 at a free port, its store
// and its log in a scratch directory. The tests' harness
// (tests/support/nats_server.h) does the same for gtest; the benchmark
// cannot link gtest, hence this small launcher.
//
// Start writes the configuration, starts the server with fork/exec (it dies
// with the thread that started it: PR_SET_PDEATHSIG, so a benchmark that
// crashes leaves no server behind) and polls a libnats connection and a
// JetStream account-info request until the server answers, or a deadline
// passes. Stop sends SIGTERM and reaps it (SIGKILL if it lingers); the
// destructor stops a server still running. Failures throw BenchError,
// naming what failed and ending with the server's log.
//
// Thread-safety: one thread, the one that started it.
#pragma once

#include <sys/types.h>

#include <string>

namespace spool::bench {

class NatsServerProcess {
 public:
  NatsServerProcess() = default;
  ~NatsServerProcess();
  NatsServerProcess(const NatsServerProcess&) = delete;
  NatsServerProcess& operator=(const NatsServerProcess&) = delete;

  // Starts a server whose files go in `dir` (an existing, empty directory)
  // and waits until it serves JetStream.
  void Start(const std::string& dir);
  // SIGTERM, and waits for the server to exit. Nothing when it is not running.
  void Stop();

  bool running() const { return pid_ > 0; }
  // "nats://127.0.0.1:PORT".
  std::string url() const;
  // The server's CPU time so far, user and system, in seconds.
  double CpuSeconds() const;

 private:
  std::string ConfigText() const;
  void Launch();
  // False when the server exited before it was ready (reaped: `how` says
  // how); throws when the deadline passes.
  bool WaitReady(std::string* how);
  bool Exited(std::string* how);
  std::string LogTail() const;

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace spool::bench
