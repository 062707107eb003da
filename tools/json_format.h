// JSON forms of what the CLI's --json output and the HTTP API show. Heavy
// (nlohmann-json): included only by the .cc files that write JSON.
#pragma once

#include <nlohmann/json.hpp>

#include "spool/rewind/rewind_points.h"
#include "spool/storage/event_log.h"
#include "spool/storage/store.h"

namespace spool::cli {

// An event as the reference API's events list shows it.
nlohmann::ordered_json EventJson(const Event& e);
// A rewind point; `on_history`: whether a rewind can still use it.
nlohmann::ordered_json RewindPointJson(const RewindPoint& p, PointUse use);
// A value: null, a number, a string or a boolean; timestamps and bytes as
// their text (row_format.h), non-finite doubles too.
nlohmann::ordered_json ValueJson(const Value& value);
// A table's history entry, in Delta's DESCRIBE HISTORY names.
nlohmann::ordered_json HistoryJson(const HistoryEntry& h);

}  // namespace spool::cli
