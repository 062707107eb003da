// The JSON spec of a pipeline, both ways, and the builder.
#include "spool/stream/pipeline_spec.h"

#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "json_text.h"
#include "spool/storage/table.h"
#include "spool/stream/records.h"

namespace spool {
namespace {

Status ParseColumns(const Reader& r, std::string_view key, std::vector<Column>* columns, bool required) {
  if (!r.Has(key)) return required ? r.FieldError(key, "missing") : Status::OK();
  const json& list = r.At(key);
  if (!list.is_array()) return r.FieldError(key, "expected a list of columns");
  for (size_t i = 0; i < list.size(); ++i) {
    Reader c(list[i], r.Sub(key) + "[" + std::to_string(i) + "]");
    SPOOL_RETURN_IF_ERROR(c.CheckObject({"name", "type", "nullable"}));
    Column column;
    std::string type;
    SPOOL_RETURN_IF_ERROR(c.String("name", &column.name, true));
    SPOOL_RETURN_IF_ERROR(c.String("type", &type, true));
    Status s = ParseColumnType(type, &column.type);
    if (!s.ok()) return c.FieldError("type", s.message());
    SPOOL_RETURN_IF_ERROR(c.Bool("nullable", &column.nullable));
    columns->push_back(std::move(column));
  }
  if (required && columns->empty()) return r.FieldError(key, "must declare at least one column");
  return Status::OK();
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// A JetStream connection: servers, and the names (never the values) of
// what holds its secrets.
Status ParseNatsConnection(const Reader& r, NatsConnectionSpec* c) {
  SPOOL_RETURN_IF_ERROR(r.Strings("servers", &c->servers, true));
  if (c->servers.empty()) return r.FieldError("servers", "must name at least one server (nats://host:port)");
  for (size_t i = 0; i < c->servers.size(); ++i) {
    if (c->servers[i].find("://") == std::string::npos) {
      return Status::InvalidArgument(r.Sub("servers") + "[" + std::to_string(i) + "]: '" + c->servers[i] +
                                     "' is not a URL (nats://host:port)");
    }
  }
  if (r.Has("credentials")) {
    Reader k(r.At("credentials"), r.Sub("credentials"));
    SPOOL_RETURN_IF_ERROR(k.CheckObject(
        {"user_env", "user_file", "password_env", "password_file", "token_env", "token_file", "creds_file"}));
    for (auto [key, field] : {std::pair{"user_env", &c->user_env},
                              {"user_file", &c->user_file},
                              {"password_env", &c->password_env},
                              {"password_file", &c->password_file},
                              {"token_env", &c->token_env},
                              {"token_file", &c->token_file},
                              {"creds_file", &c->creds_file}}) {
      SPOOL_RETURN_IF_ERROR(k.String(key, field, false));
    }
    const bool user = !c->user_env.empty() || !c->user_file.empty();
    const bool password = !c->password_env.empty() || !c->password_file.empty();
    const bool token = !c->token_env.empty() || !c->token_file.empty();
    if (user != password) return k.Error("a user needs a password, and a password a user");
    if (int(user) + int(token) + int(!c->creds_file.empty()) > 1) {
      return k.Error("name one way to authenticate: user and password, a token, or a creds file");
    }
    if ((!c->user_env.empty() && !c->user_file.empty()) || (!c->password_env.empty() && !c->password_file.empty()) ||
        (!c->token_env.empty() && !c->token_file.empty())) {
      return k.Error("each secret comes from an environment variable or a file, not both");
    }
  }
  if (r.Has("tls")) {
    Reader t(r.At("tls"), r.Sub("tls"));
    SPOOL_RETURN_IF_ERROR(t.CheckObject({"ca_file", "cert_file", "key_file"}));
    SPOOL_RETURN_IF_ERROR(t.String("ca_file", &c->tls_ca_file, false));
    SPOOL_RETURN_IF_ERROR(t.String("cert_file", &c->tls_cert_file, false));
    SPOOL_RETURN_IF_ERROR(t.String("key_file", &c->tls_key_file, false));
    if (c->tls_cert_file.empty() != c->tls_key_file.empty()) return t.Error("cert_file and key_file go together");
  }
  SPOOL_RETURN_IF_ERROR(r.Duration("max_wait", &c->max_wait_us, false));
  return Status::OK();
}

// "first", "new", {"sequence": n} or {"time": "yyyy-MM-dd HH:mm:ss"}.
Status ParseStartAt(const Reader& r, JetStreamSpec* js) {
  if (!r.Has("start")) return Status::OK();
  const json& start = r.At("start");
  if (start.is_string() && start.get<std::string>() == "first") js->start = StartAt::kFirst;
  else if (start.is_string() && start.get<std::string>() == "new") js->start = StartAt::kNew;
  else if (start.is_object()) {
    Reader s(start, r.Sub("start"));
    SPOOL_RETURN_IF_ERROR(s.CheckObject({"sequence", "time"}));
    if (s.Has("sequence") == s.Has("time")) return s.Error("give one of \"sequence\" or \"time\"");
    if (s.Has("sequence")) {
      js->start = StartAt::kSequence;
      SPOOL_RETURN_IF_ERROR(s.Count("sequence", &js->start_sequence));
      if (js->start_sequence == 0) return s.FieldError("sequence", "stream sequences start at 1");
    } else {
      js->start = StartAt::kTime;
      std::string text;
      SPOOL_RETURN_IF_ERROR(s.String("time", &text, true));
      Status t = ParseTimestamp(text, &js->start_time_us);
      if (!t.ok()) return s.FieldError("time", t.message());
    }
  } else {
    return r.FieldError("start", "expected \"first\", \"new\", {\"sequence\": n} or {\"time\": \"…\"}");
  }
  return Status::OK();
}

// `for_sink`: a sink's subject is the one it publishes to, and it has no
// start position.
Status ParseJetStream(const Reader& r, bool for_sink, JetStreamSpec* js) {
  if (for_sink) {
    SPOOL_RETURN_IF_ERROR(r.CheckObject({"servers", "credentials", "tls", "max_wait", "stream", "subject"}));
  } else {
    SPOOL_RETURN_IF_ERROR(r.CheckObject({"servers", "credentials", "tls", "max_wait", "stream", "subject", "start"}));
  }
  SPOOL_RETURN_IF_ERROR(ParseNatsConnection(r, &js->connection));
  SPOOL_RETURN_IF_ERROR(r.String("stream", &js->stream, true));
  if (js->stream.find_first_of(" \t\r\n.*>") != std::string::npos) {
    return r.FieldError("stream", "'" + js->stream + "' is not a stream name (no spaces, '.', '*' or '>')");
  }
  SPOOL_RETURN_IF_ERROR(r.String("subject", &js->subject, for_sink));
  if (js->subject.find_first_of(" \t\r\n") != std::string::npos) {
    return r.FieldError("subject", "'" + js->subject + "' has white space");
  }
  if (for_sink && js->subject.find_first_of("*>") != std::string::npos) {
    return r.FieldError("subject", "'" + js->subject + "': a sink publishes to one subject, without wildcards");
  }
  return for_sink ? Status::OK() : ParseStartAt(r, js);
}

Status ParseSource(const Reader& r, SourceSpec* source) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject(
      {"dataset", "skip_change_commits", "files", "topic", "jetstream", "format", "columns", "bad_records"}));
  const int kinds = r.Has("dataset") + r.Has("files") + r.Has("topic") + r.Has("jetstream");
  if (kinds != 1) return r.Error("name exactly one of \"dataset\", \"files\", \"topic\" or \"jetstream\"");
  if (r.Has("dataset")) {
    source->kind = SourceKind::kDataset;
    SPOOL_RETURN_IF_ERROR(r.String("dataset", &source->dataset, true));
    SPOOL_RETURN_IF_ERROR(r.Bool("skip_change_commits", &source->skip_change_commits));
    for (std::string_view key : {"format", "columns", "bad_records"}) {
      if (r.Has(key)) return r.FieldError(key, "applies to files and topic sources, not to a dataset");
    }
    return Status::OK();
  }
  if (r.Has("skip_change_commits")) return r.FieldError("skip_change_commits", "applies to dataset sources only");
  if (r.Has("jetstream")) {
    source->kind = SourceKind::kJetStream;
    SPOOL_RETURN_IF_ERROR(ParseJetStream(Reader(r.At("jetstream"), r.Sub("jetstream")), false, &source->jetstream));
  } else {
    source->kind = r.Has("files") ? SourceKind::kFiles : SourceKind::kTopic;
    SPOOL_RETURN_IF_ERROR(r.String(r.Has("files") ? "files" : "topic", &source->path, true));
    source->path = AbsolutePath(source->path);
  }
  std::string format = "jsonl";
  SPOOL_RETURN_IF_ERROR(r.String("format", &format, false));
  if (format == "jsonl" || format == "json") source->format = FileFormat::kJsonLines;
  else if (format == "csv" && source->kind == SourceKind::kFiles) source->format = FileFormat::kCsv;
  else
    return r.FieldError("format",
                        "'" + format +
                            (source->kind == SourceKind::kFiles ? "' is not jsonl or csv"
                                                                : "' is not json (messages are JSON objects)"));
  std::string bad = "fail";
  SPOOL_RETURN_IF_ERROR(r.String("bad_records", &bad, false));
  if (bad == "fail") source->bad_records = BadRecords::kFail;
  else if (bad == "rescue") source->bad_records = BadRecords::kRescue;
  else return r.FieldError("bad_records", "'" + bad + "' is not fail or rescue");
  return ParseColumns(r, "columns", &source->columns, true);
}

Status ParseJoinKeys(const Reader& r, std::vector<JoinKey>* on) {
  if (!r.Has("on")) return r.FieldError("on", "missing");
  const json& list = r.At("on");
  if (!list.is_array() || list.empty()) return r.FieldError("on", "expected a non-empty list of {\"left\", \"right\"}");
  for (size_t i = 0; i < list.size(); ++i) {
    Reader k(list[i], r.Sub("on") + "[" + std::to_string(i) + "]");
    SPOOL_RETURN_IF_ERROR(k.CheckObject({"left", "right"}));
    JoinKey key;
    SPOOL_RETURN_IF_ERROR(k.String("left", &key.left, true));
    SPOOL_RETURN_IF_ERROR(k.String("right", &key.right, true));
    on->push_back(std::move(key));
  }
  return Status::OK();
}

Status ParseAggregate(const Reader& r, AggregateStep* step) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"group_by", "aggregates", "window"}));
  SPOOL_RETURN_IF_ERROR(r.Strings("group_by", &step->group_by, false));
  if (!r.Has("aggregates") || !r.At("aggregates").is_array() || r.At("aggregates").empty()) {
    return r.FieldError("aggregates", "expected a non-empty list of {\"name\", \"fn\", \"expr\"}");
  }
  const json& list = r.At("aggregates");
  for (size_t i = 0; i < list.size(); ++i) {
    Reader a(list[i], r.Sub("aggregates") + "[" + std::to_string(i) + "]");
    SPOOL_RETURN_IF_ERROR(a.CheckObject({"name", "fn", "expr"}));
    AggregateSpec agg;
    std::string fn;
    SPOOL_RETURN_IF_ERROR(a.String("name", &agg.name, true));
    SPOOL_RETURN_IF_ERROR(a.String("fn", &fn, true));
    SPOOL_RETURN_IF_ERROR(a.String("expr", &agg.expression, false));
    bool known = false;
    for (AggregateFn f :
         {AggregateFn::kCount, AggregateFn::kSum, AggregateFn::kMin, AggregateFn::kMax, AggregateFn::kAvg}) {
      if (fn == AggregateFnName(f)) agg.fn = f, known = true;
    }
    if (!known) return a.FieldError("fn", "'" + fn + "' is not count, sum, min, max or avg");
    step->aggregates.push_back(std::move(agg));
  }
  if (r.Has("window")) {
    Reader w(r.At("window"), r.Sub("window"));
    SPOOL_RETURN_IF_ERROR(w.CheckObject({"time", "size", "watermark"}));
    WindowSpec window;
    SPOOL_RETURN_IF_ERROR(w.String("time", &window.time_column, true));
    SPOOL_RETURN_IF_ERROR(w.Duration("size", &window.size_us, true));
    SPOOL_RETURN_IF_ERROR(w.Duration("watermark", &window.watermark_delay_us, false));
    if (window.size_us == 0) return w.FieldError("size", "must be longer than zero");
    step->window = window;
  }
  return Status::OK();
}

Status ParseSelect(const Reader& r, const json& list, SelectStep* step) {
  if (!list.is_array() || list.empty()) {
    return r.Error("expected a non-empty list of column names or {\"name\", \"expr\"}");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string place = r.place() + "[" + std::to_string(i) + "]";
    if (list[i].is_string()) {
      step->columns.emplace_back(list[i].get<std::string>(), "`" + list[i].get<std::string>() + "`");
      continue;
    }
    Reader c(list[i], place);
    SPOOL_RETURN_IF_ERROR(c.CheckObject({"name", "expr"}));
    std::pair<std::string, std::string> column;
    SPOOL_RETURN_IF_ERROR(c.String("name", &column.first, true));
    SPOOL_RETURN_IF_ERROR(c.String("expr", &column.second, true));
    step->columns.push_back(std::move(column));
  }
  return Status::OK();
}

Status ParseDedup(const Reader& r, DedupStep* dedup) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"keys", "watermark"}));
  SPOOL_RETURN_IF_ERROR(r.Strings("keys", &dedup->keys, true));
  if (r.Has("watermark")) {
    Reader w(r.At("watermark"), r.Sub("watermark"));
    SPOOL_RETURN_IF_ERROR(w.CheckObject({"time", "delay"}));
    WatermarkSpec wm;
    SPOOL_RETURN_IF_ERROR(w.String("time", &wm.time_column, true));
    SPOOL_RETURN_IF_ERROR(w.Duration("delay", &wm.delay_us, false));
    dedup->watermark = wm;
  }
  return Status::OK();
}

Status ParseLookupJoin(const Reader& r, LookupJoinStep* join) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"table", "on", "type", "columns"}));
  SPOOL_RETURN_IF_ERROR(r.String("table", &join->table, true));
  SPOOL_RETURN_IF_ERROR(ParseJoinKeys(r, &join->on));
  std::string type = "inner";
  SPOOL_RETURN_IF_ERROR(r.String("type", &type, false));
  if (type == "inner") join->type = JoinType::kInner;
  else if (type == "left") join->type = JoinType::kLeft;
  else return r.FieldError("type", "'" + type + "' is not inner or left");
  return r.Strings("columns", &join->columns, false);
}

Status ParseStreamJoin(const Reader& r, StreamJoinStep* join) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"right", "on", "left_time", "right_time", "within", "watermark", "columns"}));
  if (!r.Has("right")) return r.FieldError("right", "missing");
  SPOOL_RETURN_IF_ERROR(ParseSource(Reader(r.At("right"), r.Sub("right")), &join->right));
  SPOOL_RETURN_IF_ERROR(ParseJoinKeys(r, &join->on));
  SPOOL_RETURN_IF_ERROR(r.String("left_time", &join->left_time, true));
  SPOOL_RETURN_IF_ERROR(r.String("right_time", &join->right_time, true));
  SPOOL_RETURN_IF_ERROR(r.Duration("within", &join->within_us, true));
  SPOOL_RETURN_IF_ERROR(r.Duration("watermark", &join->watermark_delay_us, false));
  return r.Strings("columns", &join->columns, false);
}

Status ParseAutoCdc(const Reader& r, AutoCdcStep* cdc) {
  SPOOL_RETURN_IF_ERROR(
      r.CheckObject({"keys", "sequence_by", "apply_as_deletes", "column_list", "except_column_list",
                     "stored_as_scd_type", "track_history_column_list", "track_history_except_column_list"}));
  SPOOL_RETURN_IF_ERROR(r.Strings("keys", &cdc->keys, true));
  SPOOL_RETURN_IF_ERROR(r.String("sequence_by", &cdc->sequence_by, true));
  SPOOL_RETURN_IF_ERROR(r.String("apply_as_deletes", &cdc->apply_as_deletes, false));
  SPOOL_RETURN_IF_ERROR(r.Strings("column_list", &cdc->column_list, false));
  SPOOL_RETURN_IF_ERROR(r.Strings("except_column_list", &cdc->except_column_list, false));
  SPOOL_RETURN_IF_ERROR(r.Strings("track_history_column_list", &cdc->track_history_column_list, false));
  SPOOL_RETURN_IF_ERROR(r.Strings("track_history_except_column_list", &cdc->track_history_except_column_list, false));
  if (r.Has("stored_as_scd_type")) {
    const json& t = r.At("stored_as_scd_type");
    const std::string text = t.is_string() ? t.get<std::string>() : t.is_number_integer() ? t.dump() : "";
    if (text != "1" && text != "2") return r.FieldError("stored_as_scd_type", "expected 1 or 2");
    cdc->scd_type = text == "1" ? 1 : 2;
  }
  return Status::OK();
}

// Parses one kind of step into `*step`, as `parse` reads its body.
template <typename Step>
Status ParseInto(const Reader& r, Status (*parse)(const Reader&, Step*), StepSpec* step) {
  Step parsed;
  SPOOL_RETURN_IF_ERROR(parse(r, &parsed));
  *step = std::move(parsed);
  return Status::OK();
}

Status ParseStep(const json& j, const std::string& place, StepSpec* step) {
  if (!j.is_object() || j.size() != 1) {
    return Status::InvalidArgument(place +
                                   ": a step is an object with one key: filter, select, aggregate, dedup, "
                                   "lookup_join, stream_join or auto_cdc");
  }
  const std::string kind = j.begin().key();
  const json& body = j.begin().value();
  Reader r(body, place + "." + kind);
  if (kind == "filter") {
    if (!body.is_string() || body.get<std::string>().empty()) return r.Error("expected a condition (a string)");
    *step = FilterStep{body.get<std::string>()};
    return Status::OK();
  }
  if (kind == "select") {
    SelectStep select;
    SPOOL_RETURN_IF_ERROR(ParseSelect(r, body, &select));
    *step = std::move(select);
    return Status::OK();
  }
  if (kind == "aggregate") return ParseInto(r, &ParseAggregate, step);
  if (kind == "dedup") return ParseInto(r, &ParseDedup, step);
  if (kind == "lookup_join") return ParseInto(r, &ParseLookupJoin, step);
  if (kind == "stream_join") return ParseInto(r, &ParseStreamJoin, step);
  if (kind == "auto_cdc") return ParseInto(r, &ParseAutoCdc, step);
  if (kind == "map") return r.Error("a user operator is C++ code (FlowBuilder::Map): a JSON spec cannot give one");
  return Status::InvalidArgument(place + ": unknown step '" + kind +
                                 "' (known: filter, select, aggregate, dedup, lookup_join, stream_join, auto_cdc)");
}

Status ParseFlow(const Reader& r, FlowSpec* flow) {
  SPOOL_RETURN_IF_ERROR(
      r.CheckObject({"name", "target", "source", "steps", "once", "max_batch_rows", "max_batch_files"}));
  SPOOL_RETURN_IF_ERROR(r.String("target", &flow->target, true));
  if (r.Has("name")) {
    SPOOL_RETURN_IF_ERROR(r.String("name", &flow->name, true));
  } else {
    flow->name = flow->target;  // the default: its target's full identifier
  }
  if (!r.Has("source")) return r.FieldError("source", "missing");
  SPOOL_RETURN_IF_ERROR(ParseSource(Reader(r.At("source"), r.Sub("source")), &flow->source));
  SPOOL_RETURN_IF_ERROR(r.Bool("once", &flow->once));
  SPOOL_RETURN_IF_ERROR(r.Count("max_batch_rows", &flow->max_batch_rows));
  SPOOL_RETURN_IF_ERROR(r.Count("max_batch_files", &flow->max_batch_files));
  if (r.Has("steps")) {
    const json& steps = r.At("steps");
    if (!steps.is_array()) return r.FieldError("steps", "expected a list of steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      StepSpec step;
      SPOOL_RETURN_IF_ERROR(ParseStep(steps[i], r.Sub("steps") + "[" + std::to_string(i) + "]", &step));
      flow->steps.push_back(std::move(step));
    }
  }
  return Status::OK();
}

Status ParseDataset(const Reader& r, DatasetSpec* dataset) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"name", "kind", "columns", "primary_key", "properties"}));
  SPOOL_RETURN_IF_ERROR(r.String("name", &dataset->name, true));
  std::string kind = "streaming_table";
  SPOOL_RETURN_IF_ERROR(r.String("kind", &kind, false));
  if (kind == "streaming_table") dataset->kind = TableKind::kStreamingTable;
  else if (kind == "materialized_view") dataset->kind = TableKind::kMaterializedView;
  else return r.FieldError("kind", "'" + kind + "' is not streaming_table or materialized_view");
  SPOOL_RETURN_IF_ERROR(ParseColumns(r, "columns", &dataset->columns, false));
  SPOOL_RETURN_IF_ERROR(r.Strings("primary_key", &dataset->primary_key, false));
  return r.StringMap("properties", &dataset->properties);
}

Status ParseSink(const Reader& r, SinkSpec* sink) {
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"name", "dataset", "mode", "jetstream"}));
  SPOOL_RETURN_IF_ERROR(r.String("name", &sink->name, true));
  for (char c : sink->name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return r.FieldError("name", "'" + sink->name + "' may hold only letters, digits and '_'");
    }
  }
  SPOOL_RETURN_IF_ERROR(r.String("dataset", &sink->dataset, true));
  std::string mode = "changes";
  SPOOL_RETURN_IF_ERROR(r.String("mode", &mode, false));
  if (mode == "changes") sink->mode = SinkMode::kChanges;
  else if (mode == "upserts") sink->mode = SinkMode::kUpserts;
  else return r.FieldError("mode", "'" + mode + "' is not changes or upserts");
  if (!r.Has("jetstream")) return r.FieldError("jetstream", "missing: where the sink publishes");
  return ParseJetStream(Reader(r.At("jetstream"), r.Sub("jetstream")), true, &sink->jetstream);
}

// --- to JSON ---------------------------------------------------------------

json ColumnsJson(const std::vector<Column>& columns) {
  json out = json::array();
  for (const Column& c : columns) {
    out.push_back({{"name", c.name}, {"type", ColumnTypeName(c.type)}, {"nullable", c.nullable}});
  }
  return out;
}

// Exact, so that a recorded spec reads back as it was.
std::string DurationText(uint64_t us) { return std::to_string(us) + " microseconds"; }

json JetStreamJson(const JetStreamSpec& js, bool for_sink) {
  const NatsConnectionSpec& c = js.connection;
  json out = {{"servers", c.servers}};
  json credentials = json::object();
  for (auto [key, value] : {std::pair{"user_env", &c.user_env},
                            {"user_file", &c.user_file},
                            {"password_env", &c.password_env},
                            {"password_file", &c.password_file},
                            {"token_env", &c.token_env},
                            {"token_file", &c.token_file},
                            {"creds_file", &c.creds_file}}) {
    if (!value->empty()) credentials[key] = *value;
  }
  if (!credentials.empty()) out["credentials"] = credentials;
  json tls = json::object();
  for (auto [key, value] :
       {std::pair{"ca_file", &c.tls_ca_file}, {"cert_file", &c.tls_cert_file}, {"key_file", &c.tls_key_file}}) {
    if (!value->empty()) tls[key] = *value;
  }
  if (!tls.empty()) out["tls"] = tls;
  out["max_wait"] = DurationText(c.max_wait_us);
  out["stream"] = js.stream;
  if (!js.subject.empty()) out["subject"] = js.subject;
  if (for_sink) return out;
  switch (js.start) {
    case StartAt::kFirst:
      out["start"] = "first";
      break;
    case StartAt::kNew:
      out["start"] = "new";
      break;
    case StartAt::kSequence:
      out["start"] = {{"sequence", js.start_sequence}};
      break;
    case StartAt::kTime:
      out["start"] = {{"time", FormatTimestampMicros(js.start_time_us)}};
      break;
  }
  return out;
}

json SourceJson(const SourceSpec& s) {
  if (s.kind == SourceKind::kDataset) {
    json out = {{"dataset", s.dataset}};
    if (s.skip_change_commits) out["skip_change_commits"] = true;
    return out;
  }
  json out = s.kind == SourceKind::kJetStream ? json{{"jetstream", JetStreamJson(s.jetstream, false)}}
                                              : json{{s.kind == SourceKind::kFiles ? "files" : "topic", s.path}};
  out["format"] = s.format == FileFormat::kCsv ? "csv" : "jsonl";
  out["columns"] = ColumnsJson(s.columns);
  if (s.bad_records == BadRecords::kRescue) out["bad_records"] = "rescue";
  return out;
}

json JoinKeysJson(const std::vector<JoinKey>& on) {
  json out = json::array();
  for (const JoinKey& k : on) out.push_back({{"left", k.left}, {"right", k.right}});
  return out;
}

struct StepJson {
  json operator()(const FilterStep& s) const { return {{"filter", s.condition}}; }
  json operator()(const SelectStep& s) const {
    json cols = json::array();
    for (const auto& [name, expr] : s.columns) cols.push_back({{"name", name}, {"expr", expr}});
    return {{"select", cols}};
  }
  json operator()(const AggregateStep& s) const {
    json aggs = json::array();
    for (const AggregateSpec& a : s.aggregates) {
      json j = {{"name", a.name}, {"fn", AggregateFnName(a.fn)}};
      if (!a.expression.empty()) j["expr"] = a.expression;
      aggs.push_back(j);
    }
    json out = {{"group_by", s.group_by}, {"aggregates", aggs}};
    if (s.window) {
      out["window"] = {{"time", s.window->time_column},
                       {"size", DurationText(s.window->size_us)},
                       {"watermark", DurationText(s.window->watermark_delay_us)}};
    }
    return {{"aggregate", out}};
  }
  json operator()(const DedupStep& s) const {
    json out = {{"keys", s.keys}};
    if (s.watermark)
      out["watermark"] = {{"time", s.watermark->time_column}, {"delay", DurationText(s.watermark->delay_us)}};
    return {{"dedup", out}};
  }
  json operator()(const LookupJoinStep& s) const {
    json out = {{"table", s.table}, {"on", JoinKeysJson(s.on)}, {"type", s.type == JoinType::kLeft ? "left" : "inner"}};
    if (!s.columns.empty()) out["columns"] = s.columns;
    return {{"lookup_join", out}};
  }
  json operator()(const StreamJoinStep& s) const {
    json out = {{"right", SourceJson(s.right)},
                {"on", JoinKeysJson(s.on)},
                {"left_time", s.left_time},
                {"right_time", s.right_time},
                {"within", DurationText(s.within_us)},
                {"watermark", DurationText(s.watermark_delay_us)}};
    if (!s.columns.empty()) out["columns"] = s.columns;
    return {{"stream_join", out}};
  }
  json operator()(const AutoCdcStep& s) const {
    json out = {{"keys", s.keys}, {"sequence_by", s.sequence_by}, {"stored_as_scd_type", s.scd_type}};
    if (!s.apply_as_deletes.empty()) out["apply_as_deletes"] = s.apply_as_deletes;
    if (!s.column_list.empty()) out["column_list"] = s.column_list;
    if (!s.except_column_list.empty()) out["except_column_list"] = s.except_column_list;
    if (!s.track_history_column_list.empty()) out["track_history_column_list"] = s.track_history_column_list;
    if (!s.track_history_except_column_list.empty()) {
      out["track_history_except_column_list"] = s.track_history_except_column_list;
    }
    return {{"auto_cdc", out}};
  }
  json operator()(const MapStep& s) const { return {{"map", s.name}}; }
};

}  // namespace

std::string_view AggregateFnName(AggregateFn fn) {
  switch (fn) {
    case AggregateFn::kCount:
      return "count";
    case AggregateFn::kSum:
      return "sum";
    case AggregateFn::kMin:
      return "min";
    case AggregateFn::kMax:
      return "max";
    case AggregateFn::kAvg:
      return "avg";
  }
  return "?";
}

std::string_view SourceKindName(SourceKind kind) {
  switch (kind) {
    case SourceKind::kDataset:
      return "dataset";
    case SourceKind::kFiles:
      return "files";
    case SourceKind::kTopic:
      return "topic";
    case SourceKind::kJetStream:
      return "jetstream";
  }
  return "?";
}

std::string SourceLocation(const SourceSpec& source) {
  switch (source.kind) {
    case SourceKind::kDataset:
      return source.dataset;
    case SourceKind::kJetStream:
      return source.jetstream.stream + (source.jetstream.subject.empty() ? "" : " " + source.jetstream.subject);
    default:
      return source.path;
  }
}

Status ParsePipelineSpec(std::string_view text, PipelineSpec* spec) {
  json j;
  std::string duplicate;
  ParseJsonKeysOnce(text, &j, &duplicate);
  if (j.is_discarded()) {
    // Parse again to learn where: nlohmann reports the byte.
    try {
      json parsed = json::parse(text);
      (void)parsed;
    } catch (const json::exception& e) {
      return Status::InvalidArgument("pipeline spec is not valid JSON: " + std::string(e.what()));
    }
    return Status::InvalidArgument("pipeline spec is not valid JSON");
  }
  if (!duplicate.empty()) {
    return Status::InvalidArgument("pipeline spec: field '" + duplicate + "' is given twice in one object");
  }
  *spec = PipelineSpec{};
  Reader r(j, "spec");
  SPOOL_RETURN_IF_ERROR(r.CheckObject({"name", "continuous", "configuration", "datasets", "flows", "sinks"}));
  SPOOL_RETURN_IF_ERROR(r.String("name", &spec->name, false));
  SPOOL_RETURN_IF_ERROR(r.Bool("continuous", &spec->continuous));
  SPOOL_RETURN_IF_ERROR(r.StringMap("configuration", &spec->configuration));
  for (std::string_view key : {"datasets", "flows"}) {
    if (!r.Has(key) || !r.At(key).is_array()) return r.FieldError(key, "expected a list");
  }
  const json& datasets = r.At("datasets");
  for (size_t i = 0; i < datasets.size(); ++i) {
    DatasetSpec dataset;
    SPOOL_RETURN_IF_ERROR(ParseDataset(Reader(datasets[i], "datasets[" + std::to_string(i) + "]"), &dataset));
    spec->datasets.push_back(std::move(dataset));
  }
  const json& flows = r.At("flows");
  for (size_t i = 0; i < flows.size(); ++i) {
    FlowSpec flow;
    SPOOL_RETURN_IF_ERROR(ParseFlow(Reader(flows[i], "flows[" + std::to_string(i) + "]"), &flow));
    spec->flows.push_back(std::move(flow));
  }
  if (r.Has("sinks")) {
    const json& sinks = r.At("sinks");
    if (!sinks.is_array()) return r.FieldError("sinks", "expected a list");
    for (size_t i = 0; i < sinks.size(); ++i) {
      SinkSpec sink;
      SPOOL_RETURN_IF_ERROR(ParseSink(Reader(sinks[i], "sinks[" + std::to_string(i) + "]"), &sink));
      spec->sinks.push_back(std::move(sink));
    }
  }
  return Status::OK();
}

std::string PipelineSpecToJson(const PipelineSpec& spec) {
  json datasets = json::array();
  for (const DatasetSpec& d : spec.datasets) {
    json j = {{"name", d.name}, {"kind", TableKindName(d.kind)}};
    if (!d.columns.empty()) j["columns"] = ColumnsJson(d.columns);
    if (!d.primary_key.empty()) j["primary_key"] = d.primary_key;
    if (!d.properties.empty()) j["properties"] = d.properties;
    datasets.push_back(j);
  }
  json flows = json::array();
  for (const FlowSpec& f : spec.flows) {
    json steps = json::array();
    for (const StepSpec& s : f.steps) steps.push_back(std::visit(StepJson{}, s));
    json j = {{"name", f.name}, {"target", f.target}, {"source", SourceJson(f.source)}, {"steps", steps}};
    if (f.once) j["once"] = true;
    j["max_batch_rows"] = f.max_batch_rows;
    j["max_batch_files"] = f.max_batch_files;
    flows.push_back(j);
  }
  json out = {{"name", spec.name}};
  if (spec.continuous) out["continuous"] = true;
  if (!spec.configuration.empty()) out["configuration"] = spec.configuration;
  out["datasets"] = datasets;
  out["flows"] = flows;
  if (!spec.sinks.empty()) {
    json sinks = json::array();
    for (const SinkSpec& k : spec.sinks) {
      sinks.push_back({{"name", k.name},
                       {"dataset", k.dataset},
                       {"mode", k.mode == SinkMode::kUpserts ? "upserts" : "changes"},
                       {"jetstream", JetStreamJson(k.jetstream, true)}});
    }
    out["sinks"] = sinks;
  }
  return JsonText(out, 2);
}

// --- builder ---------------------------------------------------------------

FlowBuilder& FlowBuilder::FromDataset(std::string dataset, bool skip_change_commits) {
  flow().source = SourceSpec{};
  flow().source.dataset = std::move(dataset);
  flow().source.skip_change_commits = skip_change_commits;
  return *this;
}
FlowBuilder& FlowBuilder::FromFiles(std::string dir, std::vector<Column> columns, FileFormat format,
                                    BadRecords bad_records) {
  flow().source =
      SourceSpec{SourceKind::kFiles, "", false, std::move(dir), std::move(columns), format, bad_records, {}};
  return *this;
}
FlowBuilder& FlowBuilder::FromTopic(std::string dir, std::vector<Column> columns, BadRecords bad_records) {
  flow().source = SourceSpec{SourceKind::kTopic,     "",          false, std::move(dir), std::move(columns),
                             FileFormat::kJsonLines, bad_records, {}};
  return *this;
}
FlowBuilder& FlowBuilder::FromJetStream(JetStreamSpec jetstream, std::vector<Column> columns, BadRecords bad_records) {
  flow().source =
      SourceSpec{SourceKind::kJetStream, "", false, "", std::move(columns), FileFormat::kJsonLines, bad_records,
                 std::move(jetstream)};
  return *this;
}
FlowBuilder& FlowBuilder::Filter(std::string condition) { return Step(FilterStep{std::move(condition)}); }
FlowBuilder& FlowBuilder::Select(std::vector<std::pair<std::string, std::string>> columns) {
  return Step(SelectStep{std::move(columns)});
}
FlowBuilder& FlowBuilder::Aggregate(std::vector<std::string> group_by, std::vector<AggregateSpec> aggregates,
                                    std::optional<WindowSpec> window) {
  return Step(AggregateStep{std::move(group_by), std::move(aggregates), std::move(window)});
}
FlowBuilder& FlowBuilder::Dedup(std::vector<std::string> keys, std::optional<WatermarkSpec> watermark) {
  return Step(DedupStep{std::move(keys), std::move(watermark)});
}
FlowBuilder& FlowBuilder::Step(StepSpec step) {
  flow().steps.push_back(std::move(step));
  return *this;
}
FlowBuilder& FlowBuilder::Map(std::string name, std::vector<Column> columns,
                              std::function<Status(const Row& in, std::vector<Row>* out)> fn) {
  return Step(MapStep{std::move(name), std::move(columns), std::move(fn)});
}
FlowBuilder& FlowBuilder::Once(bool once) {
  flow().once = once;
  return *this;
}
FlowBuilder& FlowBuilder::MaxBatchRows(uint64_t rows) {
  flow().max_batch_rows = rows;
  return *this;
}
FlowBuilder& FlowBuilder::Into(std::string target) {
  if (flow().name.empty()) flow().name = target;  // the default name
  flow().target = std::move(target);
  return *this;
}

DatasetBuilder& DatasetBuilder::Columns(std::vector<Column> columns) {
  dataset().columns = std::move(columns);
  return *this;
}
DatasetBuilder& DatasetBuilder::PrimaryKey(std::vector<std::string> key) {
  dataset().primary_key = std::move(key);
  return *this;
}
DatasetBuilder& DatasetBuilder::Property(std::string name, std::string value) {
  dataset().properties[std::move(name)] = std::move(value);
  return *this;
}

DatasetBuilder PipelineBuilder::StreamingTable(std::string name) {
  spec_.datasets.push_back(DatasetSpec{std::move(name), TableKind::kStreamingTable, {}, {}, {}});
  return DatasetBuilder(&spec_.datasets, spec_.datasets.size() - 1);
}
DatasetBuilder PipelineBuilder::MaterializedView(std::string name) {
  spec_.datasets.push_back(DatasetSpec{std::move(name), TableKind::kMaterializedView, {}, {}, {}});
  return DatasetBuilder(&spec_.datasets, spec_.datasets.size() - 1);
}
FlowBuilder PipelineBuilder::Flow(std::string name) {
  spec_.flows.push_back(FlowSpec{});
  spec_.flows.back().name = std::move(name);
  return FlowBuilder(&spec_.flows, spec_.flows.size() - 1);
}

void PipelineBuilder::Sink(std::string name, std::string dataset, JetStreamSpec jetstream, SinkMode mode) {
  spec_.sinks.push_back(SinkSpec{std::move(name), std::move(dataset), mode, std::move(jetstream)});
}

}  // namespace spool
