// A dataset's change data feed published to a message system (sinks.h).
#include "sinks.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "parse_whole.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/records.h"

namespace spool::stream_internal {
namespace {

using json = nlohmann::ordered_json;

// A round publishes whole versions, in calls of about this many messages.
constexpr size_t kPublishChunk = 1024;

const TableId& ProgressTable() {
  static const TableId id = [] {
    TableId parsed;
    (void)TableId::Parse(kSinkProgressTable, &parsed);
    return parsed;
  }();
  return id;
}

std::string ExpandSubject(std::string subject, const TableId& table) {
  for (auto [name, value] : {std::pair<std::string_view, const std::string&>{"{catalog}", table.catalog},
                             {"{schema}", table.schema},
                             {"{table}", table.table}}) {
    for (size_t at = subject.find(name); at != std::string::npos; at = subject.find(name, at + value.size())) {
      subject.replace(at, name.size(), value);
    }
  }
  return subject;
}

// A JSON string of `text`; bytes that are not UTF-8 each become U+FFFD,
// as JsonText writes them.
void AppendJsonString(std::string_view text, std::string* out) {
  if (!IsUtf8(text)) {
    *out += JsonText(json(std::string(text)));
    return;
  }
  out->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          *out += escaped;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// A value as a Spool source reads it back: numbers (a double's shortest
// exact form; "NaN", "Infinity", "-Infinity" as strings), strings,
// booleans, null, timestamps as text, bytes as base64.
void AppendJsonValue(const Value& value, std::string* out) {
  char number[32];
  switch (value.index()) {
    case 0:
      *out += "null";
      return;
    case 1: {
      const auto r = std::to_chars(number, number + sizeof(number), std::get<int64_t>(value));
      out->append(number, r.ptr);
      return;
    }
    case 2: {
      const double d = std::get<double>(value);
      if (!std::isfinite(d)) {
        *out += std::isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        return;
      }
      const auto r = std::to_chars(number, number + sizeof(number), d);
      out->append(number, r.ptr);
      return;
    }
    case 3:
      AppendJsonString(std::get<std::string>(value), out);
      return;
    case 4:
      *out += std::get<bool>(value) ? "true" : "false";
      return;
    case 5:
      AppendJsonString(FormatTimestampMicros(std::get<Timestamp>(value).micros), out);
      return;
    default:
      AppendJsonString(EncodeBase64(std::get<Bytes>(value).data), out);
  }
}

std::string_view ChangeName(ChangeType type, SinkMode mode) {
  if (mode == SinkMode::kUpserts) return type == ChangeType::kDelete ? "delete" : "upsert";
  return ChangeTypeName(type);
}

// The message of one change: the row's columns and the change feed's, as a
// JSON object that a Spool source (a topic's, a JetStream's) reads back.
// Written by hand: it is the sink's hottest path.
std::string MessageBody(const Schema& schema, const ChangeRow& change, std::string_view type) {
  std::string out = "{";
  for (size_t i = 0; i < schema.columns().size(); ++i) {
    AppendJsonString(schema.columns()[i].name, &out);
    out.push_back(':');
    AppendJsonValue(change.row[i], &out);
    out.push_back(',');
  }
  out += "\"_change_type\":\"";
  out += type;
  out += "\",\"_commit_version\":";
  out += std::to_string(change.commit_version);
  out += ",\"_commit_timestamp\":";
  AppendJsonString(FormatTimestampMicros(static_cast<int64_t>(change.commit_timestamp_us)), &out);
  out.push_back('}');
  return out;
}

// "<version>.<index>" after the sink's prefix.
bool ParseMessageId(std::string_view id, std::string_view prefix, uint64_t* version, uint64_t* index) {
  if (id.substr(0, prefix.size()) != prefix) return false;
  id.remove_prefix(prefix.size());
  const size_t dot = id.find('.');
  return dot != std::string_view::npos && ParseWhole(id.substr(0, dot), version) &&
         ParseWhole(id.substr(dot + 1), index);
}

}  // namespace

const Schema& SinkRunner::ProgressSchema() {
  static const Schema schema = [] {
    Schema s;
    (void)Schema::Make({{"sink", ColumnType::kString, false},
                        {"acked", ColumnType::kInt64, false},
                        {"pending", ColumnType::kInt64, false},
                        {"pending_since", ColumnType::kTimestamp, false},
                        {"subject_sequence", ColumnType::kInt64, false}},
                       {"sink"}, &s);
    return s;
  }();
  return schema;
}

SinkRunner::SinkRunner(const SinkSpec& spec, const TableId& dataset, Store* store, Env* env, Opener open)
    : spec_(spec), dataset_(dataset), store_(store), env_(env), open_(std::move(open)) {
  subject_ = ExpandSubject(spec.jetstream.subject, dataset);
  char store_id[17];
  std::snprintf(store_id, sizeof(store_id), "%016llx", static_cast<unsigned long long>(store->log()->StoreId()));
  id_prefix_ = std::string(store_id) + "." + spec.name + ".";
}

SinkRunner::~SinkRunner() = default;

void SinkRunner::Start() { resumed_ = false; }

// What the store and the subject say of where the sink stands. The
// subject's last message is the sink's own, or the subject has not moved
// since the sink's last round: anything else is another writer, which the
// sink refuses to publish beside.
Status SinkRunner::Resume(std::string* warning) {
  stored_ = Progress{};
  Row row;
  bool found = false;
  Status s = store_->Get(ProgressTable(), {spec_.name}, &row, &found);
  if (!s.ok() && !s.IsNotFound()) return s;
  if (found) {
    stored_ =
        Progress{static_cast<uint64_t>(std::get<int64_t>(row[1])), static_cast<uint64_t>(std::get<int64_t>(row[2])),
                 std::get<Timestamp>(row[3]).micros, static_cast<uint64_t>(std::get<int64_t>(row[4]))};
  }
  now_ = stored_;
  skip_version_ = skip_index_ = 0;
  if (publisher_ == nullptr) SPOOL_RETURN_IF_ERROR(open_(subject_, &publisher_));
  // A round a crash left unfinished is sent again. Within the duplicate
  // window the system drops what it stored of it already; past the window
  // only the subject's last message (below) tells what it stored.
  const uint64_t since_us =
      static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(env_->NowMicros()) - stored_.pending_since_us));
  if (stored_.pending > stored_.acked && since_us > publisher_->duplicate_window_us()) {
    *warning = "sink '" + spec_.name + "' resumes a round left unfinished " + std::to_string(since_us / 1000000) +
               " s ago, longer than the " + std::to_string(publisher_->duplicate_window_us() / 1000000) +
               " s duplicate window of " + publisher_->name() +
               ": it skips what the subject's last message shows stored, and relies on the round's messages "
               "having been stored in order";
  }
  LastMessage last;
  SPOOL_RETURN_IF_ERROR(publisher_->Last(&last));
  now_.subject_sequence = last.found ? last.sequence : 0;
  resumed_ = true;
  if (!last.found) return Status::OK();
  uint64_t version = 0, index = 0;
  const bool ours = ParseMessageId(last.id, id_prefix_, &version, &index);
  if (ours && version > stored_.acked && version <= stored_.pending) {
    // A round that crashed or failed: what it stored goes out no more.
    skip_version_ = version;
    skip_index_ = index;
    return Status::OK();
  }
  if (last.sequence == stored_.subject_sequence || (ours && version <= stored_.acked)) return Status::OK();
  if (!ours && stored_.subject_sequence == 0 && stored_.acked == 0) return Status::OK();  // the sink's first round
  resumed_ = false;
  return Status::InvalidArgument(
      "sink '" + spec_.name + "': " + publisher_->name() + " moved to sequence " + std::to_string(last.sequence) +
      " (message id '" + last.id + "') since the sink's last round left it at " +
      std::to_string(stored_.subject_sequence) + " (having published up to version " + std::to_string(stored_.acked) +
      ", maybe " + std::to_string(stored_.pending) + ")" +
      (ours ? ", with a version this sink has not published: another copy of this store publishes to it"
            : ": another writer publishes to it") +
      "; the sink publishes only to a subject it alone writes");
}

Status SinkRunner::Commit(const Progress& progress, const std::string& update_id) {
  Transaction txn("SINK PROGRESS", JsonText(json{{"sink", spec_.name},
                                                 {"dataset", dataset_.ToString()},
                                                 {"acked", progress.acked},
                                                 {"pending", progress.pending}}));
  txn.SetUpdateId(update_id);
  txn.AllowSpoolTables();
  TableInfo info;
  if (store_->GetTable(ProgressTable(), &info).IsNotFound()) {
    txn.CreateTable(ProgressTable(), TableKind::kInternalState, ProgressSchema());
  }
  txn.Write(ProgressTable(), {spec_.name, static_cast<int64_t>(progress.acked), static_cast<int64_t>(progress.pending),
                              Timestamp{progress.pending_since_us}, static_cast<int64_t>(progress.subject_sequence)});
  SPOOL_RETURN_IF_ERROR(store_->Commit(txn));
  stored_ = progress;
  return Status::OK();
}

Status SinkRunner::Publish(const std::string& update_id, SinkRound* round) {
  *round = SinkRound{};
  if (!resumed_) SPOOL_RETURN_IF_ERROR(Resume(&round->warning));
  TableInfo info;
  Status s = store_->GetTable(dataset_, &info);
  if (s.IsNotFound()) return Status::OK();  // not created yet
  SPOOL_RETURN_IF_ERROR(s);
  const uint64_t target = store_->LastChangeBound(info);
  if (target > now_.pending) {
    // Durable before anything of it is published: the message system then
    // never holds a version the store does not know the sink may have sent.
    Progress next = now_;
    next.pending = target;
    next.pending_since_us = static_cast<int64_t>(env_->NowMicros());
    SPOOL_RETURN_IF_ERROR(Commit(next, update_id));
    now_ = next;
  }
  if (now_.acked >= now_.pending) return Status::OK();
  SPOOL_RETURN_IF_ERROR(PublishVersions(now_.acked + 1, now_.pending, round));
  now_.acked = now_.pending;
  return Status::OK();
}

Status SinkRunner::Finish(const std::string& update_id) {
  if (!resumed_ || (now_.acked == stored_.acked && now_.subject_sequence == stored_.subject_sequence)) {
    return Status::OK();
  }
  return Commit(now_, update_id);
}

// The changes of versions [from, to], published whole version by whole
// version: a message over the system's limit fails its version before any
// of the version is sent.
Status SinkRunner::PublishVersions(uint64_t from, uint64_t to, SinkRound* round) {
  std::vector<OutMessage> out;
  size_t whole = 0;  // messages of out[0, whole) are of whole versions
  uint64_t version = 0, index = 0;
  Status failed;
  TableInfo table;
  // Sends whole versions, in chunks that stay in flight together; the
  // round waits for them all at its end.
  bool fence = true;
  auto flush = [&](size_t count) {
    if (count == 0) return Status::OK();
    const auto end = out.begin() + static_cast<std::ptrdiff_t>(count);
    std::vector<OutMessage> chunk(std::make_move_iterator(out.begin()), std::make_move_iterator(end));
    out.erase(out.begin(), end);
    whole -= count;
    SPOOL_RETURN_IF_ERROR(publisher_->Send(chunk, fence, now_.subject_sequence));
    fence = false;
    round->messages += chunk.size();
    return Status::OK();
  };
  const std::string table_name = dataset_.ToString();
  Status s = store_->Changes(
      dataset_, from, to,
      [&](const ChangeRow& change) {
        if (change.commit_version != version) {
          whole = out.size();
          if (whole >= kPublishChunk && !(failed = flush(whole)).ok()) return false;
          version = change.commit_version;
          index = 0;
        }
        if (spec_.mode == SinkMode::kUpserts && change.change_type == ChangeType::kUpdatePreimage) return true;
        ++index;  // the messages of a version are numbered 1, 2, …: a gap is a lost message
        if (version < skip_version_ || (version == skip_version_ && index <= skip_index_)) return true;
        const std::string_view type = ChangeName(change.change_type, spec_.mode);
        OutMessage m;
        m.id = id_prefix_ + std::to_string(version) + "." + std::to_string(index);
        m.headers = {{"Spool-Table", table_name},
                     {"Spool-Version", std::to_string(version)},
                     {"Spool-Change-Type", std::string(type)}};
        m.data = MessageBody(table.schema, change, type);
        if (MessageBytes(m) > publisher_->max_message_bytes()) {
          failed = Status::InvalidArgument("a change of version " + std::to_string(version) + " is a message of " +
                                           std::to_string(MessageBytes(m)) + " bytes, over the " +
                                           std::to_string(publisher_->max_message_bytes()) + " bytes " +
                                           publisher_->name() + " takes: nothing of the version was published");
          out.resize(whole);  // the versions before it still go
          return false;
        }
        out.push_back(std::move(m));
        return true;
      },
      &table);
  if (s.ok() && failed.ok()) whole = out.size();
  Status flushed = flush(whole);
  uint64_t last = now_.subject_sequence;
  Status stored = fence ? Status::OK() : publisher_->Complete(&last);  // fence: nothing was sent
  if (stored.ok()) now_.subject_sequence = std::max(now_.subject_sequence, last);
  if (flushed.ok()) flushed = stored;
  SPOOL_RETURN_IF_ERROR(failed);
  SPOOL_RETURN_IF_ERROR(s.WithContext("the change feed of " + table_name));
  SPOOL_RETURN_IF_ERROR(flushed);
  skip_version_ = skip_index_ = 0;
  round->from = from;
  round->to = to;
  return Status::OK();
}

}  // namespace spool::stream_internal
