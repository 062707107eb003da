// `spool serve DIR`: the reference REST API for the store's pipeline, on
// loopback by default, until Ctrl-C.
#include <sys/stat.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "api_service.h"
#include "commands.h"
#include "http_server.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"

namespace spool::cli {
namespace {

constexpr char kTokenVariable[] = "SPOOL_API_TOKEN";

struct ServeArgs {
  std::string dir;
  std::string listen = "127.0.0.1:8080";
  std::string token_file;
  uint64_t max_body_bytes = 1 << 20;
  uint64_t max_connections = 64;
};

// The bearer token: the file's first line, else the environment's; never
// the command line, where other users could read it. A token file that
// group or others may read or write is refused, as ssh refuses such a
// private key: anyone who can read the token can drive the pipeline.
Status ReadToken(const ServeArgs& args, std::string* token) {
  if (!args.token_file.empty()) {
    struct stat st {};
    if (::stat(args.token_file.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
      return Status::InvalidArgument(
          fmt::format("the token file {} is open to group or others (mode {:04o}): "
                      "`chmod 600 {}` and start again",
                      args.token_file, st.st_mode & 07777, args.token_file));
    }
    std::ifstream in(args.token_file);
    if (!in) return Status::NotFound("cannot read the token file " + args.token_file);
    std::getline(in, *token);
    while (!token->empty() && std::isspace(static_cast<unsigned char>(token->back()))) token->pop_back();
  } else if (const char* value = std::getenv(kTokenVariable); value != nullptr) {
    *token = value;
  }
  if (token->size() < 8) {
    return Status::InvalidArgument(std::string("a bearer token of at least 8 characters is needed: give --token-file "
                                               "FILE or set ") +
                                   kTokenVariable);
  }
  return Status::OK();
}

Status ParseListen(const std::string& listen, HttpServerOptions* options) {
  const size_t colon = listen.rfind(':');
  const std::string port = colon == std::string::npos ? "" : listen.substr(colon + 1);
  if (colon == std::string::npos || port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), ::isdigit) || std::stoul(port) > 65535) {
    return Status::InvalidArgument("--listen '" + listen + "' must be HOST:PORT, e.g. 127.0.0.1:8080");
  }
  options->host = listen.substr(0, colon);
  options->port = static_cast<uint16_t>(std::stoul(port));
  return Status::OK();
}

int RunServe(const ServeArgs& args) {
  std::string token;
  HttpServerOptions options;
  options.max_body_bytes = args.max_body_bytes;
  options.max_connections = args.max_connections;
  Status s = ReadToken(args, &token);
  if (s.ok()) s = ParseListen(args.listen, &options);
  std::unique_ptr<Store> store;
  if (s.ok()) s = OpenStore(args.dir, &store);
  PipelineSpec spec;
  std::unique_ptr<Pipeline> pipeline;
  if (s.ok()) s = GetPipelineDefinition(store.get(), &spec);
  if (s.IsNotFound()) s = WithHint(s, "define one with `spool pipeline set " + args.dir + " SPEC.json`");
  if (s.ok()) s = Pipeline::Open(store.get(), spec, &pipeline);
  if (!s.ok()) return ReportError(s);
  // Ctrl-C and SIGTERM are waited for here, not delivered to the server's threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ApiService api(store.get(), pipeline.get(), token);
  std::unique_ptr<HttpServer> server;
  s = HttpServer::Start(options, &api, &server);
  if (!s.ok()) return ReportError(s);
  std::cout << fmt::format("serving pipeline {} ({}) of {} on http://{}:{}/api/2.0/pipelines/{}/ ; Ctrl-C stops\n",
                           pipeline->id(), spec.name, args.dir, options.host, server->port(), pipeline->id())
            << std::flush;
  int received = 0;
  sigwait(&signals, &received);
  std::cout << "stopping: the running update, if any, stops after its batch\n";
  server->Stop();
  return kExitOk;
}

}  // namespace

void RegisterServeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* serve = app.add_subcommand("serve", "Serve the reference REST API for the store's pipeline");
  serve->add_option("dir", args->dir, "Store directory")->required();
  serve->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0: any free one)")->capture_default_str();
  serve->add_option(
      "--token-file", args->token_file,
      std::string("The bearer token clients must send, read from this file (default: $") + kTokenVariable + ")");
  serve->add_option("--max-body", args->max_body_bytes, "Largest request body, in bytes")->capture_default_str();
  serve->add_option("--max-connections", args->max_connections, "Most connections at once")->capture_default_str();
  serve->callback([=] { *exit_code = RunServe(*args); });
}

}  // namespace spool::cli
