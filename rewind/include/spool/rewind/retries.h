// How an update is retried (DESIGN.md §6; the reference's update behaviour):
// an update a person starts runs in development mode — one attempt, failing
// fast; one started by the API, a job, or running continuously runs in
// production mode — a failure that was transient (an I/O error reading a
// source; nothing was committed for it) is retried, a bounded number of
// times, with a growing wait, each retry a WARN `update_retry` event.
#pragma once

#include <cstdint>
#include <functional>

#include "spool/rewind/update_request.h"
#include "spool/stream/pipeline.h"

namespace spool {

struct RetryPolicy {
  int max_retries = 3;
  uint64_t first_wait_us = 1000000;  // doubled after each retry
  // Called before each retry with its number (1, 2, …).
  std::function<void(int retry)> before_retry;
};

// Production mode: not a person's triggered update.
bool ProductionMode(UpdateCause cause, bool continuous);

// Runs pipeline->Update, retried as above; *attempts counts the runs. The
// result is the last run's. Errors: as Pipeline::Update.
Status RunUpdateWithRetries(Store* store, Pipeline* pipeline, UpdateOptions options, UpdateCause cause,
                            const RetryPolicy& policy, UpdateResult* result, int* attempts = nullptr);

}  // namespace spool
