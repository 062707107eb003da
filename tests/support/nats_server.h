// Real NATS servers for the tests of the NATS JetStream sources and sinks:
// NatsServer runs one nats-server (JetStream on) on loopback, NatsCluster
// three of them as one JetStream cluster, and NatsClient is a libnats
// connection with the few stream operations those tests need (create,
// publish, read, purge, delete).
//
// Each server is a child of the test process, started with fork/exec from
// a configuration written into a scratch directory of its own (its
// JetStream store and its log are there too), and reaped by the harness:
// Stop and Kill wait for it, and the destructor stops it. A server also
// dies with the thread that started it (PR_SET_PDEATHSIG), so a test that
// crashes or is killed by CTest's timeout leaves no server behind; start
// servers from the thread that will stop them (the test's own thread).
//
// Every call that can fail returns a ::testing::AssertionResult that names
// what failed and, for a server that did not come up, ends with its log:
//   NatsServer server;
//   ASSERT_TRUE(server.Start());
//   ASSERT_TRUE(server.CreateStream("orders", {.subjects = {"orders.>"}}));
//   ASSERT_TRUE(server.Publish("orders.eu", "{\"id\": 1}", &sequence));
// None of these classes is safe to use from two threads at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nats/nats.h>

#include "temp_dir.h"

namespace spool::testing {

// How a server asks clients to authenticate: user and password, a token,
// or (all empty) not at all.
// (Every member of these option structs has an initializer, so that a
// designated initializer may name only some: -Wmissing-field-initializers.)
struct NatsAuth {
  std::string user{};
  std::string password{};
  std::string token{};
  // A client of a TLS server: the CA that signed the server's certificate.
  std::string tls_ca_file{};
};

struct NatsServerOptions {
  NatsAuth auth{};
  // The largest message the server accepts, in bytes; 0 keeps the
  // server's default (1 MiB).
  int64_t max_payload = 0;
  // TLS, required of every client: the server's certificate and key (its
  // clients then need auth.tls_ca_file).
  std::string tls_cert_file{};
  std::string tls_key_file{};
  // How long Start and Restart wait for the server (or the cluster) to
  // serve JetStream before they give up.
  std::chrono::milliseconds ready_timeout = std::chrono::seconds(60);
};

struct NatsStreamOptions {
  // Empty: the stream takes the subject of its own name.
  std::vector<std::string> subjects{};
  // Above this many messages the stream drops its oldest; 0: no limit.
  int64_t max_msgs = 0;
  // The window in which a repeated Nats-Msg-Id is dropped; 0: the server's
  // default (two minutes).
  std::chrono::milliseconds duplicate_window{0};
  int replicas = 1;
  bool memory_storage = false;
};

struct NatsStreamState {
  uint64_t messages = 0;
  uint64_t first_sequence = 0;
  uint64_t last_sequence = 0;
  // The server_name of the stream's leader; empty when not clustered.
  std::string leader{};
  // The other replicas and whether each has all the leader's messages.
  std::vector<std::pair<std::string, bool>> followers_current{};
};

// One libnats connection (with its JetStream context) to a server or a
// cluster. It reconnects, to another server of the list if need be, when
// the one it is on goes away. The stream operations retry, until
// retry_for() has passed, on errors that mean "not now" rather than "no":
// no responders (a stream without a leader, during an election), timeouts
// and disconnects for operations that can safely run twice, and JetStream's
// "temporarily unavailable".
class NatsClient {
 public:
  NatsClient() = default;
  ~NatsClient();
  NatsClient(const NatsClient&) = delete;
  NatsClient& operator=(const NatsClient&) = delete;

  // `urls`: one nats:// URL or several separated by commas.
  [[nodiscard]] ::testing::AssertionResult Connect(const std::string& urls, const NatsAuth& auth = {});
  void Close();

  // Creates the stream, or finds it there with the same configuration.
  [[nodiscard]] ::testing::AssertionResult CreateStream(const std::string& name, const NatsStreamOptions& options = {});
  [[nodiscard]] ::testing::AssertionResult DeleteStream(const std::string& name);
  // Drops the stream's messages below `before_sequence`.
  [[nodiscard]] ::testing::AssertionResult PurgeStream(const std::string& name, uint64_t before_sequence);
  // Publishes and waits for the stream's acknowledgement; `sequence` gets
  // the message's stream sequence (for a repeated `msg_id`, the first
  // one's). A publish is retried after a timeout or a disconnect only with
  // a `msg_id`: without one, a retry could store the message twice.
  [[nodiscard]] ::testing::AssertionResult Publish(const std::string& subject, std::string_view data,
                                                   uint64_t* sequence = nullptr, const std::string& msg_id = "");
  // The data of the stream's message at `sequence`.
  [[nodiscard]] ::testing::AssertionResult GetMessage(const std::string& stream, uint64_t sequence, std::string* data);
  [[nodiscard]] ::testing::AssertionResult GetStreamState(const std::string& name, NatsStreamState* state);

  std::chrono::milliseconds retry_for() const { return retry_for_; }
  void set_retry_for(std::chrono::milliseconds retry_for) { retry_for_ = retry_for; }
  // For calls the helpers above do not cover; null before Connect.
  natsConnection* connection() const { return connection_; }
  jsCtx* jetstream() const { return jetstream_; }

 private:
  natsConnection* connection_ = nullptr;
  jsCtx* jetstream_ = nullptr;
  // Long enough for a JetStream election after a server is killed (nats-server 2.9
  // takes up to about ten seconds), short enough to fail a test in time.
  std::chrono::milliseconds retry_for_ = std::chrono::seconds(30);
};

// What a server and a cluster have in common: a URL, credentials, and the
// stream helpers, each of which opens a connection of its own for the one
// call (so a helper works the same before and after a restart).
class NatsEndpoint {
 public:
  virtual ~NatsEndpoint() = default;
  virtual std::string url() const = 0;
  virtual const NatsAuth& auth() const = 0;

  // Connects `client` with this endpoint's URL and credentials.
  [[nodiscard]] ::testing::AssertionResult Connect(NatsClient* client) const;
  [[nodiscard]] ::testing::AssertionResult CreateStream(const std::string& name,
                                                        const NatsStreamOptions& options = {}) const;
  [[nodiscard]] ::testing::AssertionResult DeleteStream(const std::string& name) const;
  [[nodiscard]] ::testing::AssertionResult PurgeStream(const std::string& name, uint64_t before_sequence) const;
  [[nodiscard]] ::testing::AssertionResult Publish(const std::string& subject, std::string_view data,
                                                   uint64_t* sequence = nullptr, const std::string& msg_id = "") const;
  [[nodiscard]] ::testing::AssertionResult GetMessage(const std::string& stream, uint64_t sequence,
                                                      std::string* data) const;
  [[nodiscard]] ::testing::AssertionResult GetStreamState(const std::string& name, NatsStreamState* state) const;
};

class NatsCluster;

// One nats-server on 127.0.0.1 with JetStream, listening for clients on a
// free port and serving monitoring (/healthz, /varz) on another. The ports
// are chosen by the first Start and kept, with the store, by Restart.
class NatsServer : public NatsEndpoint {
 public:
  explicit NatsServer(NatsServerOptions options = {});
  // Stops the server (SIGTERM, then SIGKILL if it lingers), removes its
  // directory, and after a failed test prints the end of its log.
  ~NatsServer() override;
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  // Starts the server and waits until it serves JetStream. Ports are picked
  // by binding port 0; if another process takes one before the server binds
  // it, Start picks again.
  [[nodiscard]] ::testing::AssertionResult Start();
  // SIGTERM, and waits for the server to exit. Fails when it had already
  // exited by itself (a crash, or the thread that started it has ended).
  [[nodiscard]] ::testing::AssertionResult Stop();
  // SIGKILL, and waits for the server to exit: a crash, as far as the server
  // is concerned (what it acknowledged is in its store: the kernel has it).
  [[nodiscard]] ::testing::AssertionResult Kill();
  // Stops the server if it runs, then starts it again on the same ports
  // with the same store, and waits until it serves JetStream.
  [[nodiscard]] ::testing::AssertionResult Restart();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // "nats://127.0.0.1:PORT", without credentials (see auth()).
  std::string url() const override;
  const NatsAuth& auth() const override { return options_.auth; }
  int port() const { return client_port_; }
  int monitor_port() const { return monitor_port_; }
  const std::string& server_name() const { return server_name_; }
  const std::string& dir() const { return dir_; }
  std::string store_dir() const { return dir_ + "/jetstream"; }
  std::string config_path() const { return dir_ + "/nats-server.conf"; }
  std::string log_path() const { return dir_ + "/nats-server.log"; }
  // The last `lines` lines of the server's log (every run of it, each
  // after a line the harness writes when it starts the server).
  std::string LogTail(int lines = 40) const;

 private:
  friend class NatsCluster;

  // A member of a cluster: in `dir`, named `server_name`; its ports are set
  // by the cluster with SetPorts before the first Launch.
  NatsServer(NatsServerOptions options, std::string dir, std::string server_name);
  void SetPorts(int client_port, int monitor_port, int route_port, std::vector<int> peer_route_ports);
  ::testing::AssertionResult Launch();
  // Waits until the server serves JetStream and its /healthz says it is
  // current, or fails with its log when it exits or the deadline passes.
  ::testing::AssertionResult WaitReady(std::chrono::steady_clock::time_point deadline);
  bool CheckJetStream(std::string* why_not) const;
  bool CheckHealthz(std::string* why_not) const;
  // True when the server has exited (it is then reaped, and `how` says
  // how); false while it runs.
  bool Exited(std::string* how);
  // True when the last run exited because a port it was to listen on was taken.
  bool LostPortRace() const;
  // Sends the signal and reaps the server (SIGKILL after kStopTimeout).
  ::testing::AssertionResult Signal(int signal_number, const char* what);
  ::testing::AssertionResult NotReady(const std::string& what) const;
  std::string ConfigText() const;

  NatsServerOptions options_;
  std::unique_ptr<TempDir> own_dir_;  // null for a cluster's member
  std::string dir_;
  std::string server_name_;
  int client_port_ = 0;
  int monitor_port_ = 0;
  int route_port_ = 0;  // 0: not a cluster member
  std::vector<int> peer_route_ports_;
  pid_t pid_ = -1;
  uint64_t run_log_offset_ = 0;  // where the log of the current run begins
};

// Three NatsServers forming one JetStream cluster on loopback (each with
// its own store, server_name spool-nats-0..2, routes to the two others).
// Ready means every member serves JetStream, is current with the cluster's
// meta leader and with the streams it holds, and a stream of three
// replicas can be created: the harness creates and deletes a probe stream,
// SPOOL_READY_PROBE on subject spool_ready_probe, so a test's streams must
// not take that subject (nor `>`).
class NatsCluster : public NatsEndpoint {
 public:
  static constexpr int kSize = 3;

  // `options` applies to every member.
  explicit NatsCluster(NatsServerOptions options = {});
  ~NatsCluster() override;
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  [[nodiscard]] ::testing::AssertionResult Start();
  [[nodiscard]] ::testing::AssertionResult Stop(int i);
  [[nodiscard]] ::testing::AssertionResult Kill(int i);
  // Starts member `i` again (stopping it first if it runs), on its ports and
  // with its store, and waits until the cluster is ready again.
  [[nodiscard]] ::testing::AssertionResult Restart(int i);
  // Waits until the cluster is ready (see above), or fails saying why not.
  [[nodiscard]] ::testing::AssertionResult WaitReady();

  // The three members' URLs, separated by commas.
  std::string url() const override;
  std::string url(int i) const { return servers_.at(static_cast<size_t>(i))->url(); }
  const NatsAuth& auth() const override { return options_.auth; }
  NatsServer& server(int i) { return *servers_.at(static_cast<size_t>(i)); }
  // The member of that server_name (as NatsStreamState::leader names it), or -1.
  int IndexOf(std::string_view server_name) const;

 private:
  ::testing::AssertionResult PickPorts();
  ::testing::AssertionResult WaitReady(std::chrono::steady_clock::time_point deadline);
  ::testing::AssertionResult ProbeReplicatedStream(std::chrono::steady_clock::time_point deadline);

  NatsServerOptions options_;
  TempDir dir_;
  std::vector<std::unique_ptr<NatsServer>> servers_;
};

}  // namespace spool::testing
