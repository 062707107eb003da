// How an update is retried (the reference's update behaviour): how it was
// started decides, not the request's cause. One a person starts (`spool
// update`, "Run now") runs once and fails fast; one started over the API,
// by a job, or running continuously is retried when a failure was
// transient (an I/O error reading a source; nothing was committed for it),
// a bounded number of times, with a growing wait. A retried update keeps
// its id and its one entry in the updates list; while it waits for its next
// attempt it is INITIALIZING (never FAILED), each retry a WARN
// `update_retry` event; it ends FAILED, with the last attempt's error, only
// when no retry is left.
#pragma once

#include <cstdint>
#include <functional>

#include "spool/rewind/update_request.h"
#include "spool/stream/pipeline.h"

namespace spool {

// Who started an update.
enum class StartedBy : uint8_t { kPerson, kApi, kJob };

struct RetryPolicy {
  StartedBy started_by = StartedBy::kApi;
  int max_retries = 3;
  uint64_t first_wait_us = 1000000;  // doubled after each retry
  // Called before each retry with its number (1, 2, …).
  std::function<void(int retry)> before_retry;
};

// Whether such an update is retried: all but a person's triggered one.
bool RetriesAutomatically(StartedBy started_by, bool continuous);

// Runs pipeline->Update, retried as above; `cause` is recorded with it.
// *attempts counts the runs. The result is the last run's. Errors: as
// Pipeline::Update.
Status RunUpdateWithRetries(Store* store, Pipeline* pipeline, UpdateOptions options, UpdateCause cause,
                            const RetryPolicy& policy, UpdateResult* result, int* attempts = nullptr);

}  // namespace spool
