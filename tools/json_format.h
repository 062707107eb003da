// JSON forms of what the CLI's --json output and the HTTP API show. Heavy
// (nlohmann-json): included only by the .cc files that write JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "spool/rewind/rewind_points.h"
#include "spool/storage/event_log.h"

namespace spool::cli {

// An event as the reference API's events list shows it.
nlohmann::ordered_json EventJson(const Event& e);
// A rewind point; `on_history`: whether a rewind can still use it.
nlohmann::ordered_json RewindPointJson(const RewindPoint& p, bool on_history);

}  // namespace spool::cli
