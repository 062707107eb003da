// Fuzz target: a request to the HTTP API's handling (tools/api_service.h)
// over a real store with a pipeline. The input is a method selector byte,
// a token selector byte, the target after "/api/2.0/pipelines/<id>" up to
// the first newline, and the body. Oracle, beyond "no crash, no hang, no
// undefined behaviour": every answer is JSON with a known status; every
// error carries error_code and message; a request without the right token
// is 401 and starts nothing.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api_service.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"

namespace {

void Check(bool ok, const char* what, std::string_view input) {
  if (!ok) {
    std::fprintf(stderr, "api_request_fuzzer: invariant violated: %s\ninput: %.*s\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
  }
}

// One store for the whole run: a pipeline over an empty directory of files.
struct Fixture {
  Fixture() {
    std::string dir = (std::filesystem::temp_directory_path() / "spool-api-fuzz-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    std::filesystem::create_directories(dir + "/in");
    spool::StoreOptions options;
    options.state_dir = dir + "/state";
    if (!spool::Store::Open(options, dir + "/store", &store).ok()) std::abort();
    spool::PipelineBuilder b("fuzz");
    b.StreamingTable("main.s.orders");
    b.Flow("ingest").FromFiles(dir + "/in", {{"id", spool::ColumnType::kInt64, false}}).Into("main.s.orders");
    const spool::PipelineSpec spec = b.Build();
    if (!spool::SetPipelineDefinition(store.get(), spec, &id).ok()) std::abort();
    if (!spool::Pipeline::Open(store.get(), spec, &pipeline).ok()) std::abort();
    service = std::make_unique<spool::cli::ApiService>(store.get(), pipeline.get(), "fuzz-token");
    root = dir;
  }
  ~Fixture() {
    service.reset();
    pipeline.reset();
    store.reset();
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
  }
  std::string root;
  std::unique_ptr<spool::Store> store;
  std::string id;
  std::unique_ptr<spool::Pipeline> pipeline;
  std::unique_ptr<spool::cli::ApiService> service;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (size < 2) return 0;
  static const char* const kMethods[] = {"GET", "POST", "PUT", "DELETE"};
  const std::string method = kMethods[data[0] % 4];
  const bool authorized = data[1] % 4 != 0;
  std::string_view rest = input.substr(2);
  const size_t newline = rest.find('\n');
  const std::string target = "/api/2.0/pipelines/" + fixture.id + std::string(rest.substr(0, newline));
  const std::string body(newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1));
  const uint64_t events_before = [] {
    std::vector<spool::Event> events;
    return fixture.store->events()->Query(spool::EventQuery{}, &events).ok() ? events.size() : 0;
  }();
  const spool::cli::ApiResponse response =
      fixture.service->Handle({method, target, authorized ? "Bearer fuzz-token" : "Bearer fuzz-tokem", body});
  fixture.service->WaitIdle();
  const int status = response.status;
  Check(status == 200 || status == 400 || status == 401 || status == 404 || status == 409, "a known status", input);
  const nlohmann::json answer = nlohmann::json::parse(response.body, nullptr, false);
  Check(!answer.is_discarded(), "the answer is JSON", input);
  if (status != 200) {
    Check(answer.is_object() && answer.contains("error_code") && answer.contains("message"), "an error's shape", input);
  }
  if (!authorized) {
    Check(status == 401, "no token, no entry", input);
    std::vector<spool::Event> events;
    Check(fixture.store->events()->Query(spool::EventQuery{}, &events).ok() && events.size() == events_before,
          "an unauthorized request changes nothing", input);
  }
  return 0;
}
