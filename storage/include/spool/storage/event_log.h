// EventLog: the store's append-only log of pipeline events (docs/design.md),
// which no rewind truncates. Each event has an id, a sequence (dense from
// 1), an origin, a timestamp, a level, a type, a message and JSON details,
// the shape of the reference event log.
//
// It is a txnlog Log of its own in its own directory, so it has the log's
// durability and crash safety: Append returns once the event is durable.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spool/txnlog/env.h"
#include "spool/txnlog/status.h"

namespace spool {

// A version-4 UUID's text from 128 bits (their version and variant bits are
// set): event ids, pipeline ids, update ids.
std::string FormatUuid4(uint64_t high, uint64_t low);

enum class EventLevel : uint8_t { kInfo = 1, kWarn, kError, kMetrics };

std::string_view EventLevelName(EventLevel level);  // "INFO", "WARN", "ERROR", "METRICS"
// Errors: InvalidArgument.
Status ParseEventLevel(std::string_view name, EventLevel* level);

struct EventOrigin {
  std::string pipeline_id;
  std::string update_id;
  std::string flow_name;
  std::string dataset_name;
  friend bool operator==(const EventOrigin&, const EventOrigin&) = default;
};

struct Event {
  std::string id;         // a UUID, assigned by Append
  uint64_t sequence = 0;  // assigned by Append: 1, 2, 3, …
  EventOrigin origin;
  uint64_t timestamp_us = 0;  // assigned by Append
  EventLevel level = EventLevel::kInfo;
  std::string event_type;  // e.g. "create_update", "flow_progress", "rewind_summary"
  std::string message;
  std::string details_json = "{}";  // a JSON object
};

// Which events Query returns: all that match every field set.
struct EventQuery {
  std::optional<std::string> event_type;
  std::optional<EventLevel> level;
  std::optional<uint64_t> since_us;  // inclusive
  std::optional<uint64_t> until_us;  // inclusive
  std::optional<std::string> pipeline_id;
  std::optional<std::string> update_id;
  std::optional<std::string> flow_name;
  std::optional<std::string> dataset_name;
  uint64_t limit = 0;  // 0: no limit
};

class EventLog {
 public:
  // Opens (creating when missing) the event log in `dir`; `read_only`, as
  // LogOptions::read_only: beside its writer, creating and changing nothing,
  // and Append returns NotSupported. Errors: as Log::Open.
  static Status Open(Env* env, const std::string& dir, std::unique_ptr<EventLog>* events, bool read_only = false);
  virtual ~EventLog() = default;

  // Appends `event` (its id, sequence and timestamp are assigned and written
  // back) and returns once it is durable. Errors: InvalidArgument (empty
  // type, details that are not a JSON object), Failed, IOError.
  Status Append(Event* event) { return Append(event, /*sync=*/true); }
  // sync = false: returns once the event is written; it becomes durable with
  // the next synced event, and a crash before then may lose it. For events
  // that report what a durable commit already holds (a batch's
  // flow_progress), so that a batch costs one sync, not two. Errors: as
  // Append(event).
  virtual Status Append(Event* event, bool sync) = 0;
  // Makes every event appended so far durable. Errors: Failed, IOError.
  virtual Status Sync() = 0;

  // Events matching `query`, in sequence order. Errors: Corruption, IOError.
  virtual Status Query(const EventQuery& query, std::vector<Event>* events) = 0;

  // How many events this handle read to index their types: a query by
  // type reads the events it has not indexed yet, those since the index
  // a clean close kept (TYPES) or, without one, every event.
  virtual uint64_t EventsIndexedByReading() = 0;
};

}  // namespace spool
