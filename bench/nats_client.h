// NatsClient: a libnats connection and its JetStream context, with what the
// jetstream workload does by hand: streams made and dropped, messages
// published asynchronously and waited for (every one acknowledged), a pull
// reader of a stream, and a stream read back whole.
//
// Publishing is what a hand-built producer does, and what Spool's sink
// does (stream/jetstream.cc): js_PublishMsgAsync of each message, its id in
// Nats-Msg-Id, then js_PublishAsyncComplete; an ack handler counts the
// acknowledgements, duplicates and refusals.
//
// Errors of every call: IOError naming the call and what libnats said.
// Thread-safety: one thread at a time (libnats' own threads call the ack
// handler).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nats/nats.h>

#include "spool/txnlog/status.h"

namespace spool::bench {

struct NatsOutMessage {
  std::string id;  // Nats-Msg-Id; empty for none
  std::vector<std::pair<std::string, std::string>> headers;
  std::string data;
};

// A batch of messages read from a stream (one fetch or more), in order.
struct NatsBatch {
  std::vector<std::string_view> data;  // each message's data
  std::vector<std::string_view> ids;   // each one's Nats-Msg-Id ("" for none), when asked for
  uint64_t last_sequence = 0;          // the stream sequence of the last one
};

class NatsClient {
 public:
  NatsClient() = default;
  ~NatsClient();
  NatsClient(const NatsClient&) = delete;
  NatsClient& operator=(const NatsClient&) = delete;

  Status Connect(const std::string& url);

  // A stream with file storage holding `subjects` ("a.b", "a.>", …).
  Status CreateStream(const std::string& name, const std::string& subjects);
  Status DeleteStream(const std::string& name);
  Status StreamMessages(const std::string& name, uint64_t* messages);

  // Publishes `messages` to `subject` and waits until the stream has stored
  // each one. Errors: IOError for a refusal, a duplicate (a message id the
  // stream had stored already) or an ack missing.
  Status PublishAndWait(const std::string& subject, const std::vector<NatsOutMessage>& messages);

  // Reads `stream` (its subjects `filter`) through an ephemeral pull
  // consumer from its first message on, unacknowledged (as Spool's source
  // reads), `batch` messages a batch — one fetch, or more when a fetch
  // brings fewer — until `total` were read. `with_ids`: each message's
  // Nats-Msg-Id too. The views are valid during the visit.
  using BatchVisit = std::function<Status(const NatsBatch& batch)>;
  Status ReadStream(const std::string& stream, const std::string& filter, uint64_t total, uint64_t batch, bool with_ids,
                    const BatchVisit& visit);

 private:
  struct Acks {
    std::mutex mu;
    uint64_t received = 0;
    uint64_t duplicates = 0;
    std::string first_error;
  };
  static void OnAck(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* err, void* closure);
  Status FetchBatch(natsSubscription* sub, uint64_t want, bool with_ids, std::vector<natsMsg*>* held, NatsBatch* batch);

  natsConnection* connection_ = nullptr;
  jsCtx* js_ = nullptr;
  Acks acks_;
};

}  // namespace spool::bench
