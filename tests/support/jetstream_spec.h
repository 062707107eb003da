// Where a test's flows and sinks find JetStream: a JetStreamSpec for a
// stream of a server or cluster the harness started (nats_server.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "nats_server.h"
#include "spool/stream/pipeline_spec.h"

namespace spool::testing {

// `stream` (and `subject`) on `server`'s URLs, waiting `max_wait_us` for a
// server out of reach.
inline JetStreamSpec JetStreamOn(const NatsEndpoint& server, std::string stream, std::string subject = "",
                                 uint64_t max_wait_us = 5'000'000) {
  JetStreamSpec js;
  const std::string urls = server.url();  // a cluster's: comma-separated
  for (size_t at = 0; at <= urls.size();) {
    const size_t comma = std::min(urls.find(',', at), urls.size());
    js.connection.servers.push_back(urls.substr(at, comma - at));
    at = comma + 1;
  }
  js.connection.max_wait_us = max_wait_us;
  js.stream = std::move(stream);
  js.subject = std::move(subject);
  return js;
}

}  // namespace spool::testing
