// NatsServerProcess: a nats-server of Spool's own, for `spool demo
// --jetstream` and spool-bench's jetstream workload — JetStream on,
// listening on 127.0.0.1 at a free port, its store and its log in a scratch
// directory. The tests' harness (tests/support/nats_server.h) does more
// (clusters, credentials, TLS, restarts) for gtest.
//
// Start writes the configuration, starts the server with fork/exec (it dies
// with the thread that started it: PR_SET_PDEATHSIG, so a benchmark that
// crashes leaves no server behind) and polls a libnats connection and a
// JetStream account-info request until the server answers, or a deadline
// passes. Stop sends SIGTERM and reaps it (SIGKILL if it lingers); the
// destructor stops a server still running. Errors name what failed and,
// for a server that did not come up, end with its log.
//
// Thread-safety: one thread, the one that started it.
#pragma once

#include <sys/types.h>

#include <string>

#include "spool/txnlog/status.h"

namespace spool {

// The nats-server binary: the first on the PATH, else where Debian's
// package puts it (/usr/sbin, which a user's PATH may lack); empty if none.
std::string FindNatsServer();
// `text` as a double-quoted string of nats-server's configuration format.
std::string NatsQuoted(const std::string& text);

class NatsServerProcess {
 public:
  NatsServerProcess() = default;
  ~NatsServerProcess();
  NatsServerProcess(const NatsServerProcess&) = delete;
  NatsServerProcess& operator=(const NatsServerProcess&) = delete;

  // Starts a server whose files go in `dir` (an existing, empty directory)
  // and waits until it serves JetStream. Errors: NotFound (no nats-server
  // installed), IOError.
  Status Start(const std::string& dir);
  // SIGTERM, and waits for the server to exit. Nothing when it is not
  // running. Errors: IOError (it had exited by itself, or would not exit).
  Status Stop();

  bool running() const { return pid_ > 0; }
  // "nats://127.0.0.1:PORT".
  std::string url() const;
  // The server's CPU time so far, user and system, in seconds. Errors: IOError.
  Status CpuSeconds(double* seconds) const;

 private:
  std::string ConfigText() const;
  Status Launch();
  // *ready false when the server exited before it was ready (reaped: `how`
  // says how); IOError when the deadline passes.
  Status WaitReady(bool* ready, std::string* how);
  bool Exited(std::string* how);
  std::string LogTail() const;

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace spool
