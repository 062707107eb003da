// The NATS test harness against real nats-server processes on loopback:
// what a test of a NATS source or sink relies on it for (a stream that
// keeps its messages across a restart, a cluster that keeps serving an R3
// stream with a member down) holds, and its options reach the server.
#include "nats_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace spool::testing {
namespace {

TEST(NatsServerTest, PublishedMessageReadsBack) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  EXPECT_EQ(server.url(), "nats://127.0.0.1:" + std::to_string(server.port()));
  ASSERT_TRUE(server.CreateStream("orders", {.subjects = {"orders.>"}}));

  uint64_t first = 0;
  uint64_t second = 0;
  ASSERT_TRUE(server.Publish("orders.eu", "first order", &first));
  ASSERT_TRUE(server.Publish("orders.us", "second order", &second));
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 2u);

  std::string data;
  ASSERT_TRUE(server.GetMessage("orders", 1, &data));
  EXPECT_EQ(data, "first order");
  ASSERT_TRUE(server.GetMessage("orders", 2, &data));
  EXPECT_EQ(data, "second order");
  NatsStreamState state;
  ASSERT_TRUE(server.GetStreamState("orders", &state));
  EXPECT_EQ(state.messages, 2u);
  EXPECT_EQ(state.last_sequence, 2u);

  // No stream takes this subject: the publish must fail, not hang or
  // report a sequence.
  NatsClient client;
  ASSERT_TRUE(server.Connect(&client));
  client.set_retry_for(std::chrono::milliseconds(0));
  EXPECT_FALSE(client.Publish("nobody.listens", "lost"));

  ASSERT_TRUE(server.DeleteStream("orders"));
  EXPECT_FALSE(client.GetStreamState("orders", &state));
}

TEST(NatsServerTest, RestartKeepsTheStreamOnTheSamePort) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  const std::string url = server.url();
  ASSERT_TRUE(server.CreateStream("events"));
  ASSERT_TRUE(server.Publish("events", "before the restart"));

  ASSERT_TRUE(server.Restart());
  EXPECT_EQ(server.url(), url);
  std::string data;
  ASSERT_TRUE(server.GetMessage("events", 1, &data));
  EXPECT_EQ(data, "before the restart");

  // A kill (a crash, to the server) keeps what was acknowledged too, and
  // the sequence goes on where it was.
  uint64_t sequence = 0;
  ASSERT_TRUE(server.Publish("events", "before the kill", &sequence));
  EXPECT_EQ(sequence, 2u);
  ASSERT_TRUE(server.Kill());
  EXPECT_FALSE(server.running());
  ASSERT_TRUE(server.Restart());
  ASSERT_TRUE(server.GetMessage("events", 2, &data));
  EXPECT_EQ(data, "before the kill");
  ASSERT_TRUE(server.Publish("events", "after the kill", &sequence));
  EXPECT_EQ(sequence, 3u);
}

TEST(NatsServerTest, RestartFailsClearlyWhenItsPortWasTaken) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(server.Stop());
  // Another process listens on the server's port meanwhile (SO_REUSEADDR:
  // the stopped server's closed connections may linger in TIME_WAIT).
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server.port()));
  ASSERT_EQ(inet_pton(AF_INET, "127.0.0.1", &address.sin_addr), 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
  ASSERT_EQ(listen(fd, 1), 0) << std::strerror(errno);

  const ::testing::AssertionResult restarted = server.Restart();
  close(fd);
  ASSERT_FALSE(restarted);
  EXPECT_NE(std::string(restarted.message()).find("another process took a port"), std::string::npos)
      << restarted.message();
  EXPECT_FALSE(server.running());
}

TEST(NatsServerTest, StreamDropsOldMessagesByLimitAndPurge) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(server.CreateStream("limited", {.max_msgs = 2}));
  for (const char* message : {"one", "two", "three"}) ASSERT_TRUE(server.Publish("limited", message));
  NatsStreamState state;
  ASSERT_TRUE(server.GetStreamState("limited", &state));
  EXPECT_EQ(state.messages, 2u);
  EXPECT_EQ(state.first_sequence, 2u);
  EXPECT_EQ(state.last_sequence, 3u);
  std::string data;
  EXPECT_FALSE(server.GetMessage("limited", 1, &data));

  ASSERT_TRUE(server.CreateStream("purged"));
  for (const char* message : {"one", "two", "three", "four"}) ASSERT_TRUE(server.Publish("purged", message));
  ASSERT_TRUE(server.PurgeStream("purged", 3));
  ASSERT_TRUE(server.GetStreamState("purged", &state));
  EXPECT_EQ(state.messages, 2u);
  EXPECT_EQ(state.first_sequence, 3u);
  ASSERT_TRUE(server.GetMessage("purged", 3, &data));
  EXPECT_EQ(data, "three");
}

TEST(NatsServerTest, RepeatedMessageIdIsDroppedWithinTheWindow) {
  NatsServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(server.CreateStream("dedup", {.duplicate_window = std::chrono::minutes(1)}));
  uint64_t first = 0;
  uint64_t repeat = 0;
  ASSERT_TRUE(server.Publish("dedup", "once", &first, "id-1"));
  ASSERT_TRUE(server.Publish("dedup", "once", &repeat, "id-1"));
  EXPECT_EQ(repeat, first);
  NatsStreamState state;
  ASSERT_TRUE(server.GetStreamState("dedup", &state));
  EXPECT_EQ(state.messages, 1u);
}

TEST(NatsServerTest, UserAndPasswordAreRequired) {
  // Characters the configuration must quote (a quote would need escaping
  // too, but libnats 3.4.1 does not escape one in its CONNECT message).
  NatsServerOptions options;
  options.auth.user = "spool";
  options.auth.password = "pa$$ word#1";
  NatsServer server(options);
  ASSERT_TRUE(server.Start());
  NatsClient client;
  EXPECT_FALSE(client.Connect(server.url()));
  NatsAuth wrong = options.auth;
  wrong.password = "wrong";
  EXPECT_FALSE(client.Connect(server.url(), wrong));
  ASSERT_TRUE(client.Connect(server.url(), options.auth));
  ASSERT_TRUE(server.CreateStream("secured"));
  ASSERT_TRUE(server.Publish("secured", "ok"));
}

TEST(NatsServerTest, TokenIsRequired) {
  NatsServer server({.auth = {.token = "s3cret-token"}});
  ASSERT_TRUE(server.Start());
  NatsClient client;
  EXPECT_FALSE(client.Connect(server.url()));
  EXPECT_FALSE(client.Connect(server.url(), {.token = "wrong"}));
  ASSERT_TRUE(client.Connect(server.url(), {.token = "s3cret-token"}));
}

TEST(NatsServerTest, MaxPayloadLimitsMessages) {
  NatsServer server({.max_payload = 1024});
  ASSERT_TRUE(server.Start());
  ASSERT_TRUE(server.CreateStream("small"));
  EXPECT_TRUE(server.Publish("small", std::string(1000, 'x')));
  EXPECT_FALSE(server.Publish("small", std::string(2000, 'x')));
}

TEST(NatsServerTest, StopAndDestructorLeaveNoProcess) {
  pid_t pid = -1;
  {
    NatsServer server;
    ASSERT_TRUE(server.Start());
    pid = server.pid();
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(server.Stop());
    EXPECT_FALSE(server.running());
    // Reaped: no such process any more, not even a zombie.
    EXPECT_EQ(kill(pid, 0), -1);
    EXPECT_EQ(errno, ESRCH);
    NatsClient client;
    EXPECT_FALSE(client.Connect(server.url()));

    ASSERT_TRUE(server.Start());
    pid = server.pid();
  }
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(NatsClusterTest, ReplicatedStreamSurvivesAKilledMember) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.Start());
  EXPECT_EQ(cluster.url(), cluster.url(0) + "," + cluster.url(1) + "," + cluster.url(2));
  ASSERT_TRUE(cluster.CreateStream("replicated", {.subjects = {"replicated.>"}, .replicas = 3}));
  NatsStreamState state;
  ASSERT_TRUE(cluster.GetStreamState("replicated", &state));
  EXPECT_NE(cluster.IndexOf(state.leader), -1) << state.leader;
  EXPECT_EQ(state.followers_current.size(), 2u);
  uint64_t sequence = 0;
  ASSERT_TRUE(cluster.Publish("replicated.a", "before the kill", &sequence));
  EXPECT_EQ(sequence, 1u);

  // Member 1 may be the stream's leader: the publish then waits out an
  // election (the helper retries while no leader answers).
  ASSERT_TRUE(cluster.Kill(1));
  NatsClient member_1;
  EXPECT_FALSE(member_1.Connect(cluster.url(1), cluster.auth()));
  ASSERT_TRUE(cluster.Publish("replicated.b", "with a member down", &sequence));
  EXPECT_EQ(sequence, 2u);
  std::string data;
  ASSERT_TRUE(cluster.GetMessage("replicated", 1, &data));
  EXPECT_EQ(data, "before the kill");
  ASSERT_TRUE(cluster.GetMessage("replicated", 2, &data));
  EXPECT_EQ(data, "with a member down");

  // Back, member 1 takes part in the stream again: with the third member
  // (neither 1 nor the leader) killed, a publish commits only with member
  // 1's acknowledgement, and the messages it missed are there.
  ASSERT_TRUE(cluster.Restart(1));
  ASSERT_TRUE(member_1.Connect(cluster.url(1), cluster.auth()));
  ASSERT_TRUE(cluster.GetStreamState("replicated", &state));
  const int leader = cluster.IndexOf(state.leader);
  ASSERT_NE(leader, -1) << state.leader;
  if (leader != 1) {
    const std::pair<std::string, bool> caught_up(cluster.server(1).server_name(), true);
    EXPECT_NE(std::find(state.followers_current.begin(), state.followers_current.end(), caught_up),
              state.followers_current.end());
  }
  int third = 0;
  while (third == 1 || third == leader) ++third;
  ASSERT_TRUE(cluster.Kill(third));
  ASSERT_TRUE(cluster.Publish("replicated.c", "with member 1 back", &sequence));
  EXPECT_EQ(sequence, 3u);
  ASSERT_TRUE(cluster.GetStreamState("replicated", &state));
  EXPECT_EQ(state.messages, 3u);
  ASSERT_TRUE(cluster.GetMessage("replicated", 2, &data));
  EXPECT_EQ(data, "with a member down");
}

}  // namespace
}  // namespace spool::testing
