// Fuzz target: the decoder of an event log entry (storage/event.fbs, read
// back by `spool events` and GET /events). Input: the entry's body. Any
// input must decode or give Corruption, never crash; and what decodes must
// survive a round trip: encoded again and decoded, every field is the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "event_codec.h"

namespace {

bool Same(const spool::Event& a, const spool::Event& b) {
  return a.id == b.id && a.sequence == b.sequence && a.origin.pipeline_id == b.origin.pipeline_id &&
         a.origin.update_id == b.origin.update_id && a.origin.flow_name == b.origin.flow_name &&
         a.origin.dataset_name == b.origin.dataset_name && a.timestamp_us == b.timestamp_us && a.level == b.level &&
         a.event_type == b.event_type && a.message == b.message && a.details_json == b.details_json;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  spool::LogEntry entry;
  entry.position = spool::LogPosition{1, 7};
  entry.timestamp_us = 1700000000000000;
  entry.operation = "EVENT";
  entry.body.assign(reinterpret_cast<const char*>(data), size);
  spool::Event event;
  if (!spool::DecodeEvent(entry, &event).ok()) return 0;
  spool::LogEntry again = entry;
  again.body = spool::EncodeEvent(event);
  spool::Event decoded;
  if (!spool::DecodeEvent(again, &decoded).ok() || !Same(event, decoded)) std::abort();
  return 0;
}
