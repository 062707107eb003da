#include "spool/rewind/retries.h"

#include <chrono>
#include <thread>

#include "json_reader.h"
#include "spool/storage/event_log.h"
#include "spool/stream/json_text.h"

namespace spool {

bool ProductionMode(UpdateCause cause, bool continuous) { return continuous || cause != UpdateCause::kUserAction; }

Status RunUpdateWithRetries(Store* store, Pipeline* pipeline, UpdateOptions options, UpdateCause cause,
                            const RetryPolicy& policy, UpdateResult* result, int* attempts) {
  options.cause = std::string(UpdateCauseName(cause));
  if (options.update_id.empty()) options.update_id = NewUpdateId();
  const int retries = ProductionMode(cause, options.continuous) ? policy.max_retries : 0;
  uint64_t wait_us = policy.first_wait_us;
  for (int attempt = 1;; ++attempt) {
    if (attempts != nullptr) *attempts = attempt;
    SPOOL_RETURN_IF_ERROR(pipeline->Update(options, result));
    if (result->state != UpdateState::kFailed || !result->transient || attempt > retries) return Status::OK();
    Event e;
    e.origin.pipeline_id = pipeline->id();
    e.origin.update_id = options.update_id;
    e.level = EventLevel::kWarn;
    e.event_type = "update_retry";
    e.message = "Update " + options.update_id.substr(0, 6) + " failed with a transient error; retry " +
                std::to_string(attempt) + " of " + std::to_string(retries) + " in " + std::to_string(wait_us / 1000) +
                " ms: " + result->error;
    e.details_json = JsonText(json{{"update_retry", {{"retry", attempt}, {"of", retries}, {"wait_ms", wait_us / 1000},
                                                     {"error", result->error}}}});
    SPOOL_RETURN_IF_ERROR(store->events()->Append(&e));
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us));  // a backoff, not a synchronisation
    wait_us *= 2;
    if (policy.before_retry) policy.before_retry(attempt);
  }
}

}  // namespace spool
