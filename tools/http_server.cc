#include "http_server.h"

#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <nlohmann/json.hpp>

#include "api_service.h"
#include "json_text.h"

namespace spool::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string ErrorBody(std::string_view code, std::string_view message) {
  return JsonText(nlohmann::json{{"error_code", code}, {"message", message}});
}

class Session;

struct Shared {
  HttpServerOptions options;
  ApiService* api = nullptr;
  std::mutex mu;
  // Connections that have not yet sent the token, the oldest first; the
  // number of those that have.
  std::list<std::weak_ptr<Session>> unauthenticated;
  uint64_t authenticated = 0;
};

// One connection: requests read and answered in turn until it closes.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Shared* shared) : stream_(std::move(socket)), shared_(shared) {}
  ~Session() {
    if (!authenticated_) return;
    std::lock_guard lock(shared_->mu);
    --shared_->authenticated;
  }

  // Counts the connection among those without the token, dropping the
  // oldest of them when there are too many, and starts reading.
  void Start() {
    std::shared_ptr<Session> dropped;
    {
      std::lock_guard lock(shared_->mu);
      auto& waiting = shared_->unauthenticated;
      waiting.remove_if([](const std::weak_ptr<Session>& s) { return s.expired(); });
      if (waiting.size() >= shared_->options.max_connections) {
        dropped = waiting.front().lock();
        waiting.pop_front();
      }
      waiting.push_back(weak_from_this());
    }
    if (dropped != nullptr) asio::post(dropped->stream_.get_executor(), [dropped] { dropped->Drop(); });
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Read(); });
  }

  // Answers `status` with an error and closes (a connection over the limit).
  void Refuse(http::status status, std::string_view code, std::string_view message) {
    Respond(status, ErrorBody(code, message), /*keep_alive=*/false, 11);
  }

 private:
  // The headers within header_timeout, then the body within timeout.
  void Read() {
    parser_.emplace();
    parser_->body_limit(shared_->options.max_body_bytes);
    stream_.expires_after(shared_->options.header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
  }

  void OnHeader(beast::error_code ec, size_t bytes) {
    if (ec) return OnRead(ec, bytes);
    stream_.expires_after(shared_->options.timeout);
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  // A connection without the token that a newer one pushed out.
  void Drop() {
    if (authenticated_) return;
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

  // The request carried the token: the connection counts against
  // max_connections from now on. False when that is over the limit.
  bool Authenticated() {
    if (authenticated_) return true;
    std::lock_guard lock(shared_->mu);
    if (shared_->authenticated >= shared_->options.max_connections) return false;
    ++shared_->authenticated;
    authenticated_ = true;
    return true;
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout) return Close();
    if (ec == http::error::body_limit) {
      return Refuse(http::status::payload_too_large, "REQUEST_LIMIT_EXCEEDED",
                    "the body is over the limit of " + std::to_string(shared_->options.max_body_bytes) + " bytes");
    }
    if (ec) {
      if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
        return Refuse(http::status::bad_request, "MALFORMED_REQUEST",
                      "the request is not well-formed HTTP: " + ec.message());
      }
      return Close();
    }
    http::request<http::string_body> request = parser_->release();
    const ApiResponse response =
        shared_->api->Handle({std::string(request.method_string()), std::string(request.target()),
                              std::string(request[http::field::authorization]), request.body()});
    if (response.status != 401 && !Authenticated()) {
      return Refuse(http::status::service_unavailable, "TEMPORARILY_UNAVAILABLE",
                    "too many connections (the limit is " + std::to_string(shared_->options.max_connections) + ")");
    }
    Respond(static_cast<http::status>(response.status), response.body, request.keep_alive(), request.version(),
            response.content_type);
  }

  void Respond(http::status status, std::string body, bool keep_alive, unsigned version,
               const std::string& content_type = "application/json") {
    response_ = http::response<http::string_body>(status, version);
    response_.set(http::field::server, "spool");
    response_.set(http::field::content_type, content_type);
    response_.keep_alive(keep_alive);
    response_.body() = std::move(body);
    response_.prepare_payload();
    stream_.expires_after(shared_->options.timeout);
    http::async_write(stream_, response_, beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
  }

  void OnWrite(beast::error_code ec, size_t) {
    if (ec) return;
    if (!response_.keep_alive()) return Close();
    Read();
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  Shared* shared_;
  bool authenticated_ = false;  // on the session's strand; read under shared_->mu elsewhere
};

}  // namespace

struct HttpServer::Impl {
  Shared shared;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;

  void Accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec != asio::error::operation_aborted) Accept();
        return;
      }
      std::make_shared<Session>(std::move(socket), &shared)->Start();
      Accept();
    });
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start(const HttpServerOptions& options, ApiService* api, std::unique_ptr<HttpServer>* server) {
  auto impl = std::make_unique<Impl>();
  impl->shared.options = options;
  impl->shared.api = api;
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (ec) return Status::InvalidArgument("'" + options.host + "' is not an IP address to listen on");
  const tcp::endpoint endpoint(address, options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("cannot listen on " + options.host + ":" + std::to_string(options.port) + ": " +
                           ec.message());
  }
  impl->Accept();
  for (int i = 0; i < std::max(1, options.threads); ++i) impl->threads.emplace_back([io = &impl->ioc] { io->run(); });
  server->reset(new HttpServer(std::move(impl)));
  return Status::OK();
}

uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpServer::Stop() {
  if (impl_->threads.empty()) return;
  impl_->ioc.stop();
  for (std::thread& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace spool::cli
