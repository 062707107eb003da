// The bytes of an event in the event log (storage/event.fbs): internal to
// storage/ and its fuzz target.
#pragma once

#include <string>

#include "spool/storage/event_log.h"
#include "spool/txnlog/log.h"

namespace spool {

// The record of `e` (its id, origin, level, type, message and details; the
// sequence and timestamp are the log entry's).
std::string EncodeEvent(const Event& e);
// The event a log entry holds. Errors: Corruption when the entry is not an
// EVENT whose body is a verified event record with a known level.
Status DecodeEvent(const LogEntry& entry, Event* e);

}  // namespace spool
