// What Spool needs of a message system (internal to stream/): a log it reads
// by sequence (a source) and a subject it publishes to (a sink). JetStream
// implements both (jetstream.cc); another system (Kafka: a partition's
// offsets, its idempotent producer) would be one more implementation of
// these two classes, while the sources and sinks built on them
// (message_source.cc, sinks.cc) stay as they are.
//
// Spool's log stays the only truth: a MessageLog holds no position of its
// own for Spool (the source keeps the sequence it has read up to in its
// flow's checkpoint), and a MessagePublisher's progress is kept in the
// store by the sink.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spool/stream/pipeline_spec.h"
#include "spool/txnlog/status.h"

namespace spool::stream_internal {

// Where a message log stands now.
struct MessageLogState {
  uint64_t first = 0;  // the oldest sequence it holds (last + 1 when it holds none)
  uint64_t last = 0;   // the newest sequence it ever stored (0: none yet)
  // Changes when the log is deleted and created again under the same name
  // (its sequences then start again): JetStream's creation time.
  std::string incarnation;
};

struct LogMessage {
  uint64_t sequence = 0;
  int64_t timestamp_us = 0;
  std::string_view data;
  uint64_t pending = 0;  // messages of the read's subjects after it, when it was read
};

// A log of messages numbered by sequence (JetStream: a stream, read
// through a subject filter). Errors of every call: Unavailable-like
// conditions (the server down or restarting past the connection's
// max_wait) are IOError, which an update treats as transient; what the
// server refuses (no such stream, no permission) is InvalidArgument naming
// it.
class MessageLog {
 public:
  virtual ~MessageLog() = default;
  // "JetStream stream ORDERS (subjects orders.>) at nats://…", for messages.
  virtual const std::string& name() const = 0;
  virtual Status State(MessageLogState* state) = 0;
  // The sequence of the first message of the read's subjects stored at or
  // after `time_us` (last + 1 when none is).
  virtual Status SequenceAt(int64_t time_us, uint64_t* sequence) = 0;
  // Reads the read's messages with sequences from `from` to `to`
  // (inclusive), in order, at most `max_messages` of them and about
  // `max_bytes` (0: no bound), calling `visit` with each; returns when it
  // reached either bound or found no more now. A visit's error ends the
  // read and is its result.
  virtual Status Read(uint64_t from, uint64_t to, uint64_t max_messages, uint64_t max_bytes,
                      const std::function<Status(const LogMessage&)>& visit) = 0;
};

// Opens the stream `spec.stream` of a JetStream server for reading its
// subjects `spec.subject` (all when empty). Errors: IOError (unreachable),
// InvalidArgument (refused credentials, no such stream, a filter that is
// none of the stream's subjects).
Status OpenJetStreamLog(const JetStreamSpec& spec, std::unique_ptr<MessageLog>* log);

// A message to publish. `id` deduplicates it: the system stores one message
// per id within its duplicate window.
struct OutMessage {
  std::string id;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string data;
};

// The bytes a message takes against a system's size limit: its data and
// its headers (the id among them) as NATS frames them.
inline uint64_t MessageBytes(const OutMessage& m) {
  uint64_t bytes = m.data.size() + sizeof("NATS/1.0\r\n\r\n") + sizeof("Nats-Msg-Id: \r\n") + m.id.size();
  for (const auto& [key, value] : m.headers) bytes += key.size() + value.size() + sizeof(": \r\n");
  return bytes;
}

// The last message a subject holds: its sequence, id and headers.
struct LastMessage {
  bool found = false;
  uint64_t sequence = 0;
  std::string id;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view Header(std::string_view key) const {
    for (const auto& [k, v] : headers) {
      if (k == key) return v;
    }
    return {};
  }
};

// One subject of a message system that a sink publishes to.
class MessagePublisher {
 public:
  virtual ~MessagePublisher() = default;
  virtual const std::string& name() const = 0;  // for messages
  // How long the system remembers ids to deduplicate re-sends, in
  // microseconds.
  virtual uint64_t duplicate_window_us() const = 0;
  // The largest message it takes, in bytes (MessageBytes).
  virtual uint64_t max_message_bytes() const = 0;
  virtual Status Last(LastMessage* last) = 0;
  // Sends `messages` in order, without waiting for them to be stored
  // (beyond a bounded number in flight). `fence`: the first is refused
  // unless the subject's last message has the sequence `expected_last`
  // (0: the subject holds none), which fences a second writer. Errors:
  // IOError (unreachable), InvalidArgument (a message refused at once).
  virtual Status Send(const std::vector<OutMessage>& messages, bool fence, uint64_t expected_last) = 0;
  // Waits until every message sent is stored (or recognised as a
  // duplicate); `*last`: the highest sequence stored. Errors: IOError
  // (unreachable: some may be stored), Aborted (the subject moved: another
  // writer), InvalidArgument (a message refused, naming why).
  virtual Status Complete(uint64_t* last) = 0;
};

// Opens the subject `subject` of the stream `spec.stream` for publishing.
// Errors: as OpenJetStreamLog's; InvalidArgument when the subject is not
// one the stream stores.
Status OpenJetStreamPublisher(const JetStreamSpec& spec, const std::string& subject,
                              std::unique_ptr<MessagePublisher>* publisher);

}  // namespace spool::stream_internal
