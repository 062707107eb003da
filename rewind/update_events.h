// The events the rewind layer records for the updates it runs (rewinds,
// validations, retries), beside those Pipeline::Update records.
#pragma once

#include <string>
#include <string_view>

#include "json_reader.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"

namespace spool {

// Appends an event of update `update_id` of `pipeline`, its details `details`
// (a JSON object); durable on return, or with `sync` false with the next
// synced event (EventLog::Append). Errors: as EventLog::Append.
Status AppendUpdateEvent(Store* store, const Pipeline& pipeline, const std::string& update_id, EventLevel level,
                         std::string_view type, std::string message, const json& details, bool sync = true);

}  // namespace spool
