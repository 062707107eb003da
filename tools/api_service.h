// The reference REST API over one store and its pipeline (docs/design.md),
// apart from any transport: a request in, a response out. `spool serve`
// puts it behind HTTP (http_server.h); tests call Handle directly.
//
//   POST /api/2.0/pipelines/{id}/updates            start an update (the reference body)
//   GET  /api/2.0/pipelines/{id}/updates            the updates, newest first (max_results, page_token)
//   GET  /api/2.0/pipelines/{id}/updates/{update}   one update and its state
//   GET  /api/2.0/pipelines/{id}/events             events (event_type, level, start_time, end_time,
//                                                   max_results, page_token), newest first
//   POST /api/2.0/pipelines/{id}/stop               stop the running update
//   GET  /api/2.0/pipelines/{id}/rewind-points      the rewind points, newest first
//   POST /api/2.0/pipelines/{id}/rewind-preview     what a rewind_spec would do (changes nothing)
//   GET  /api/2.0/pipelines/{id}/tables/{t}/history the table's commits, newest first (max_results)
//   GET  /api/2.0/pipelines/{id}/tables/{t}/rows    the table now, or as of version= or timestamp=
//   GET  /api/2.0/pipelines/{id}/tables/{t}/changes its change feed, from= to= (max_results)
//   POST /api/2.0/sql/statements                    a SQL statement over the store (docs/sql.md): the
//                                                   reference's SQL Statement Execution API shape
//   GET  /metrics                                   Prometheus text: commits, rows, log appends,
//                                                   fsyncs and bytes, batches, updates, rewinds
//
// Every request needs `Authorization: Bearer <token>`. Errors are
// {"error_code": ..., "message": ...}: 400 INVALID_PARAMETER_VALUE (or a
// rewind's INVALID_REWIND_SPECIFICATION.*), 401 UNAUTHENTICATED, 404
// RESOURCE_DOES_NOT_EXIST / ENDPOINT_NOT_FOUND, 409 RESOURCE_CONFLICT (an
// update is running), 500 INTERNAL_ERROR. A refused request changes nothing.
//
// Updates run one at a time on the service's own thread; POST answers with
// the update's id at once and GET follows its state.
//
// Thread-safety: Handle may be called from many threads at once.
#pragma once

#include <memory>
#include <string>

#include "spool/txnlog/status.h"

namespace spool {
class Store;
class Pipeline;
}  // namespace spool

namespace spool::cli {

struct ApiRequest {
  std::string method;         // "GET", "POST", …
  std::string target;         // path and query: "/api/2.0/pipelines/…/events?max_results=10"
  std::string authorization;  // the Authorization header's value
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string body;  // JSON (Prometheus text for /metrics)
  std::string content_type = "application/json";
};

class ApiService {
 public:
  // `store` and `pipeline` (the store's recorded pipeline) must outlive the
  // service; `token` is the bearer token every request must carry.
  ApiService(Store* store, Pipeline* pipeline, std::string token);
  ~ApiService();  // stops a running update and waits for it

  ApiResponse Handle(const ApiRequest& request);

  // Asks the running update, if any, to stop after its batch.
  void StopUpdate();
  // Waits until no update runs (for tests and shutdown).
  void WaitIdle();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace spool::cli
