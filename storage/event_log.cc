#include "spool/storage/event_log.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_codec.h"
#include "event_generated.h"
#include "fb_fields.h"
#include "spool/txnlog/env.h"
#include "spool/txnlog/log.h"
#include "varint.h"

namespace spool {

std::string FormatUuid4(uint64_t high, uint64_t low) {
  high = (high & ~0xf000ull) | 0x4000ull;      // version 4
  low = (low & ~(3ull << 62)) | (2ull << 62);  // RFC 4122 variant
  char text[40];
  std::snprintf(text, sizeof(text), "%08llx-%04llx-%04llx-%04llx-%012llx", static_cast<unsigned long long>(high >> 32),
                static_cast<unsigned long long>((high >> 16) & 0xffff), static_cast<unsigned long long>(high & 0xffff),
                static_cast<unsigned long long>(low >> 48), static_cast<unsigned long long>(low & 0xffffffffffffull));
  return text;
}

namespace {

constexpr std::string_view kEventOperation = "EVENT";
constexpr std::string_view kLevelNames[] = {"INFO", "WARN", "ERROR", "METRICS"};

// A version-4 UUID from a hash of what makes this event unique.
std::string NewEventId(uint64_t store_id, uint64_t now_us, uint64_t counter, const Event& event) {
  const std::string seed = std::to_string(store_id) + "/" + std::to_string(now_us) + "/" + std::to_string(counter) +
                           "/" + event.event_type + "/" + event.message;
  const XXH128_hash_t h = XXH3_128bits(seed.data(), seed.size());
  return FormatUuid4(h.high64, h.low64);
}

// The index of event types (each type's sequences, ascending) outlives the
// open in TYPES beside the segments, so that the first query for a type
// after an open reads the events of that type, not every event since the
// log began:
//   "SPOOLTYP" varint(1) varint(store id) varint(indexed_to)
//   varint(timestamp of event indexed_to) varint(types)
//   { varint(name bytes) name varint(count) varint(sequence delta)* }*
//   checksum: XXH3-64 of all before it, 8 bytes big-endian
constexpr std::string_view kTypesFileName = "TYPES";
constexpr std::string_view kTypesMagic = "SPOOLTYP";
constexpr uint64_t kTypesVersion = 1;

using TypeIndex = std::map<std::string, std::vector<uint64_t>, std::less<>>;

struct TypesFile {
  uint64_t store_id = 0;
  uint64_t indexed_to = 0;
  uint64_t indexed_timestamp_us = 0;
  TypeIndex by_type;
};

std::string EncodeTypes(const TypesFile& f) {
  std::string out(kTypesMagic);
  for (uint64_t v : {kTypesVersion, f.store_id, f.indexed_to, f.indexed_timestamp_us, uint64_t{f.by_type.size()}}) {
    PutVarint(&out, v);
  }
  for (const auto& [type, sequences] : f.by_type) {
    PutVarint(&out, type.size());
    out += type;
    PutVarint(&out, sequences.size());
    uint64_t previous = 0;
    for (uint64_t sequence : sequences) PutVarint(&out, sequence - std::exchange(previous, sequence));
  }
  PutBigEndian64(&out, XXH3_64bits(out.data(), out.size()));
  return out;
}

// False for anything but a whole, checked TYPES of ascending sequences.
bool DecodeTypes(std::string_view in, TypesFile* f) {
  if (in.size() < kTypesMagic.size() + 8 || !in.starts_with(kTypesMagic)) return false;
  const std::string_view body = in.substr(0, in.size() - 8);
  if (GetBigEndian64(in.substr(body.size())) != XXH3_64bits(body.data(), body.size())) return false;
  std::string_view at = body.substr(kTypesMagic.size());
  uint64_t version = 0, types = 0;
  if (!GetVarint(&at, &version) || version != kTypesVersion || !GetVarint(&at, &f->store_id) ||
      !GetVarint(&at, &f->indexed_to) || !GetVarint(&at, &f->indexed_timestamp_us) || !GetVarint(&at, &types)) {
    return false;
  }
  for (uint64_t t = 0; t < types; ++t) {
    uint64_t name_bytes = 0, count = 0;
    if (!GetVarint(&at, &name_bytes) || name_bytes > at.size()) return false;
    std::vector<uint64_t>& sequences = f->by_type[std::string(at.substr(0, name_bytes))];
    at.remove_prefix(name_bytes);
    if (!GetVarint(&at, &count) || count > at.size()) return false;
    uint64_t sequence = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t delta = 0;
      if (!GetVarint(&at, &delta) || delta == 0 || (sequence += delta) > f->indexed_to) return false;
      sequences.push_back(sequence);
    }
  }
  return at.empty();
}

}  // namespace

std::string EncodeEvent(const Event& e) {
  flatbuffers::FlatBufferBuilder fbb(256 + e.message.size() + e.details_json.size());
  // Strings with their length: a message may hold NUL bytes.
  auto str = [&](const std::string& s) { return fbb.CreateString(s); };
  auto record =
      fb::CreateEventRecord(fbb, str(e.id), str(e.origin.pipeline_id), str(e.origin.update_id), str(e.origin.flow_name),
                            str(e.origin.dataset_name), static_cast<uint8_t>(e.level), str(e.event_type),
                            str(e.message), str(e.details_json));
  fbb.Finish(record, fb::EventRecordIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Status DecodeEvent(const LogEntry& entry, Event* e) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(entry.body.data());
  flatbuffers::Verifier verifier(bytes, entry.body.size());
  if (entry.operation != kEventOperation || !fb::VerifyEventRecordBuffer(verifier)) {
    return Status::Corruption("event " + std::to_string(entry.position.version) + " is not an event record");
  }
  const fb::EventRecord* r = fb::GetEventRecord(bytes);
  if (r->level() < 1 || r->level() > std::size(kLevelNames)) {
    return Status::Corruption("event " + std::to_string(entry.position.version) + " has an unknown level");
  }
  e->id = Str(r->id());
  e->sequence = entry.position.version;
  e->origin = EventOrigin{Str(r->pipeline_id()), Str(r->update_id()), Str(r->flow_name()), Str(r->dataset_name())};
  e->timestamp_us = entry.timestamp_us;
  e->level = static_cast<EventLevel>(r->level());
  e->event_type = Str(r->event_type());
  e->message = Str(r->message());
  e->details_json = Str(r->details());
  return Status::OK();
}

namespace {

bool Matches(const EventQuery& q, const Event& e) {
  auto same = [](const std::optional<std::string>& want, const std::string& have) { return !want || *want == have; };
  return same(q.event_type, e.event_type) && (!q.level || *q.level == e.level) &&
         (!q.since_us || e.timestamp_us >= *q.since_us) && same(q.pipeline_id, e.origin.pipeline_id) &&
         same(q.update_id, e.origin.update_id) && same(q.flow_name, e.origin.flow_name) &&
         same(q.dataset_name, e.origin.dataset_name);
}

class EventLogImpl final : public EventLog {
 public:
  EventLogImpl(Env* env, const std::string& dir, std::unique_ptr<Log> log, bool read_only)
      : env_(env), types_path_(JoinPath(dir, kTypesFileName)), log_(std::move(log)), read_only_(read_only) {
    LoadTypes();
  }
  // A clean close keeps the index of types for the next open.
  ~EventLogImpl() override { SaveTypes(); }

  using EventLog::Append;
  Status Append(Event* event, bool sync) override {
    if (event->event_type.empty()) return Status::InvalidArgument("an event needs an event_type");
    const nlohmann::json details = nlohmann::json::parse(event->details_json, nullptr, /*allow_exceptions=*/false);
    if (details.is_discarded() || !details.is_object()) {
      return Status::InvalidArgument("event details must be a JSON object, got: " + event->details_json.substr(0, 80));
    }
    event->id = NewEventId(log_->StoreId(), env_->NowMicros(), counter_.fetch_add(1), *event);
    const std::string body = EncodeEvent(*event);
    LogCommit commit;
    SPOOL_RETURN_IF_ERROR(log_->Append(LogWrite{kEventOperation, body, sync}, &commit));
    event->sequence = commit.position.version;
    event->timestamp_us = commit.timestamp_us;
    {
      std::lock_guard lock(index_mu_);
      if (event->sequence == indexed_to_ + 1) Index(event->event_type, event->sequence);
    }
    return Status::OK();
  }

  Status Sync() override { return log_->Flush(); }

  Status Query(const EventQuery& query, std::vector<Event>* events) override {
    events->clear();
    uint64_t from = 0;  // the oldest
    if (query.since_us && *query.since_us > 0 && log_->VersionAtTime(*query.since_us - 1, &from).ok()) ++from;
    if (from > log_->Newest().version) return Status::OK();
    if (query.event_type) return QueryType(query, std::max(from, log_->Oldest().version), events);
    std::unique_ptr<LogIterator> it;
    SPOOL_RETURN_IF_ERROR(log_->NewIterator(from, &it));
    LogEntry entry;
    bool more = true;
    while (more && it->Next(&entry)) SPOOL_RETURN_IF_ERROR(Collect(query, entry, events, &more));
    return it->status();
  }

 private:
  // REQUIRES: index_mu_ held.
  void Index(const std::string& type, uint64_t sequence) {
    by_type_[type].push_back(sequence);
    indexed_to_ = sequence;
  }

  // The index TYPES holds, when it fits this log: its store, and its newest
  // event still there with the same timestamp (a log salvaged after it would
  // use the sequences it cut again). Appends keep it current from here on.
  void LoadTypes() {
    std::string bytes;
    TypesFile f;
    LogEntry newest;
    if (!ReadFileToString(env_, types_path_, &bytes).ok() || !DecodeTypes(bytes, &f) || f.store_id != log_->StoreId() ||
        f.indexed_to == 0 || f.indexed_to > log_->Newest().version || !log_->Read(f.indexed_to, &newest).ok() ||
        newest.timestamp_us != f.indexed_timestamp_us) {
      return;
    }
    std::lock_guard lock(index_mu_);
    by_type_ = std::move(f.by_type);
    indexed_to_ = saved_to_ = f.indexed_to;
  }

  // Writes the index to TYPES when it grew since it was loaded or saved
  // (WriteFileInPlace: a TYPES lost, torn or stale fails LoadTypes' checks
  // and costs the next open only the scan).
  void SaveTypes() {
    std::lock_guard lock(index_mu_);
    if (read_only_ || indexed_to_ == 0 || !CatchUpLocked().ok() || indexed_to_ == saved_to_) return;
    TypesFile f{log_->StoreId(), indexed_to_, 0, {}};
    LogEntry newest;
    if (!log_->Read(indexed_to_, &newest).ok()) return;
    f.indexed_timestamp_us = newest.timestamp_us;
    f.by_type = by_type_;
    (void)WriteFileInPlace(env_, types_path_, EncodeTypes(f));
  }

  // Brings the index of event types up to the newest event: reads each
  // event's type only.
  Status CatchUpLocked() {
    if (indexed_to_ >= log_->Newest().version) return Status::OK();
    std::unique_ptr<LogIterator> it;
    SPOOL_RETURN_IF_ERROR(log_->NewIterator(std::max(indexed_to_ + 1, log_->Oldest().version), &it));
    LogEntry entry;
    while (it->Next(&entry)) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(entry.body.data());
      flatbuffers::Verifier verifier(bytes, entry.body.size());
      if (entry.operation != kEventOperation || !fb::VerifyEventRecordBuffer(verifier)) {
        return Status::Corruption("event " + std::to_string(entry.position.version) + " is not an event record");
      }
      Index(Str(fb::GetEventRecord(bytes)->event_type()), entry.position.version);
      ++indexed_by_reading_;
    }
    return it->status();
  }

  uint64_t EventsIndexedByReading() override {
    std::lock_guard lock(index_mu_);
    return indexed_by_reading_;
  }

  // A query for one type reads the events of that type only.
  Status QueryType(const EventQuery& query, uint64_t from, std::vector<Event>* events) {
    std::vector<uint64_t> sequences;
    {
      std::lock_guard lock(index_mu_);
      SPOOL_RETURN_IF_ERROR(CatchUpLocked());
      auto found = by_type_.find(*query.event_type);
      if (found == by_type_.end()) return Status::OK();
      sequences.assign(std::lower_bound(found->second.begin(), found->second.end(), from), found->second.end());
    }
    LogEntry entry;
    bool more = true;
    for (size_t i = 0; more && i < sequences.size(); ++i) {
      SPOOL_RETURN_IF_ERROR(log_->Read(sequences[i], &entry));
      SPOOL_RETURN_IF_ERROR(Collect(query, entry, events, &more));
    }
    return Status::OK();
  }

  // Adds the event in `entry` if it matches; `*more` turns false past the
  // query's time range or limit.
  static Status Collect(const EventQuery& query, const LogEntry& entry, std::vector<Event>* events, bool* more) {
    if (query.until_us && entry.timestamp_us > *query.until_us) {
      *more = false;
      return Status::OK();
    }
    Event event;
    SPOOL_RETURN_IF_ERROR(DecodeEvent(entry, &event));
    if (!Matches(query, event)) return Status::OK();
    events->push_back(std::move(event));
    *more = query.limit == 0 || events->size() < query.limit;
    return Status::OK();
  }

  Env* env_;
  const std::string types_path_;
  std::unique_ptr<Log> log_;
  const bool read_only_;
  std::atomic<uint64_t> counter_{0};
  // Every event's sequence by its type, for the events up to indexed_to_
  // (in memory: loaded from TYPES, or built on the first query for a type).
  std::mutex index_mu_;
  TypeIndex by_type_;
  uint64_t indexed_to_ = 0;
  uint64_t saved_to_ = 0;  // what TYPES holds
  uint64_t indexed_by_reading_ = 0;
};

}  // namespace

std::string_view EventLevelName(EventLevel level) {
  const auto index = static_cast<size_t>(level) - 1;
  return index < std::size(kLevelNames) ? kLevelNames[index] : "UNKNOWN";
}

Status ParseEventLevel(std::string_view name, EventLevel* level) {
  for (size_t i = 0; i < std::size(kLevelNames); ++i) {
    if (kLevelNames[i] == name) {
      *level = static_cast<EventLevel>(i + 1);
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown event level '" + std::string(name) + "' (INFO, WARN, ERROR, METRICS)");
}

Status EventLog::Open(Env* env, const std::string& dir, std::unique_ptr<EventLog>* events, bool read_only) {
  LogOptions options;
  options.env = env;
  options.read_only = read_only;
  // Events are small and few next to table commits: smaller segments, and
  // less zero-filling ahead of them.
  options.segment_size_bytes = 8ull << 20;
  options.preallocate_bytes = 64ull << 10;
  std::unique_ptr<Log> log;
  SPOOL_RETURN_IF_ERROR(Log::Open(options, dir, &log));
  *events = std::make_unique<EventLogImpl>(env, dir, std::move(log), read_only);
  return Status::OK();
}

}  // namespace spool
