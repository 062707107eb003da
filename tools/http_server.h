// The HTTP transport of the API (Boost.Beast; its headers stay in
// http_server.cc): keep-alive connections on a few threads, bounded body
// size, connection count and time per request. A body over the limit is
// answered 413, with the API's error shape; a request that does not arrive
// whole in time is dropped (its headers within header_timeout, however
// slowly they trickle). Only connections that have sent the bearer token
// count against max_connections (over it: 503): connections that have not
// yet are at most max_connections too, and a new one drops the oldest of
// them, so that clients without the token cannot keep out those with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "spool/txnlog/status.h"

namespace spool::cli {

class ApiService;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port (HttpServer::port says which)
  uint64_t max_body_bytes = 1 << 20;
  uint64_t max_connections = 64;
  std::chrono::seconds timeout{30};        // to read a request's body, or write a response
  std::chrono::seconds header_timeout{5};  // to read a request's headers
  int threads = 2;
};

class HttpServer {
 public:
  // Listens and serves `api` (which must outlive the server) until Stop or
  // destruction. Errors: InvalidArgument (host), IOError (cannot listen).
  static Status Start(const HttpServerOptions& options, ApiService* api, std::unique_ptr<HttpServer>* server);
  ~HttpServer();
  uint16_t port() const;
  // Stops listening and serving; waits for the threads.
  void Stop();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace spool::cli
