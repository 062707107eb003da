#include "spool/rewind/retries.h"

#include <chrono>
#include <thread>

#include "update_events.h"

namespace spool {

bool RetriesAutomatically(StartedBy started_by, bool continuous) {
  return continuous || started_by != StartedBy::kPerson;
}

Status RunUpdateWithRetries(Store* store, Pipeline* pipeline, UpdateOptions options, UpdateCause cause,
                            const RetryPolicy& policy, UpdateResult* result, int* attempts) {
  options.cause = std::string(UpdateCauseName(cause));
  if (options.update_id.empty()) options.update_id = NewUpdateId();
  options.defer_transient_failure = true;
  const int retries = RetriesAutomatically(policy.started_by, options.continuous) ? policy.max_retries : 0;
  uint64_t wait_us = policy.first_wait_us;
  for (int attempt = 1;; ++attempt) {
    if (attempts != nullptr) *attempts = attempt;
    options.retry_attempt = attempt > 1;
    SPOOL_RETURN_IF_ERROR(pipeline->Update(options, result));
    if (result->state != UpdateState::kFailed || !result->transient) return Status::OK();
    if (attempt > retries) {  // the attempt left its failure to record
      return RecordUpdateProgress(store, pipeline->id(), options.update_id, UpdateState::kFailed, result->error);
    }
    SPOOL_RETURN_IF_ERROR(AppendUpdateEvent(
        store, *pipeline, options.update_id, EventLevel::kWarn, "update_retry",
        "Update " + options.update_id.substr(0, 6) + " failed with a transient error; retry " +
            std::to_string(attempt) + " of " + std::to_string(retries) + " in " + std::to_string(wait_us / 1000) +
            " ms: " + result->error,
        json{{"update_retry",
              {{"retry", attempt}, {"of", retries}, {"wait_ms", wait_us / 1000}, {"error", result->error}}}}));
    SPOOL_RETURN_IF_ERROR(RecordUpdateProgress(store, pipeline->id(), options.update_id, UpdateState::kInitializing));
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us));  // a backoff, not a synchronisation
    wait_us *= 2;
    if (policy.before_retry) policy.before_retry(attempt);
  }
}

}  // namespace spool
