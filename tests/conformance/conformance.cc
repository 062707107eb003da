#include "conformance.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange

#include <boost/asio.hpp>
#include <boost/beast.hpp>

#include "json_format.h"
#include "spool/stream/pipeline_spec.h"

#ifndef SPOOL_CLI
#error "SPOOL_CLI must name the spool binary"
#endif

namespace spool::conformance {

// --- GateEnv -------------------------------------------------------------------

Status GateEnv::OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) {
  {
    std::unique_lock lock(mu_);
    if (fail_times_ > 0 && !fail_marker_.empty() && path.find(fail_marker_) != std::string::npos) {
      --fail_times_;
      return Status::IOError("injected: cannot read " + path);
    }
    if (gate_closed_ && !gate_marker_.empty() && path.find(gate_marker_) != std::string::npos) {
      ++waiting_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !gate_closed_; });
      --waiting_;
    }
  }
  return EnvWrapper::OpenFile(path, mode, file);
}

void GateEnv::Close(const std::string& marker) {
  std::lock_guard lock(mu_);
  gate_marker_ = marker;
  gate_closed_ = true;
}

bool GateEnv::WaitUntilHeld() {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return waiting_ > 0; });
}

void GateEnv::Open() {
  std::lock_guard lock(mu_);
  gate_closed_ = false;
  cv_.notify_all();
}

void GateEnv::Fail(const std::string& marker, int times) {
  std::lock_guard lock(mu_);
  fail_marker_ = marker;
  fail_times_ = times;
}

// --- HTTP ----------------------------------------------------------------------

json Http::Json() const {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json::object() : j;
}

json Http::Field(const std::string& key) const {
  const json j = Json();
  return j.is_object() && j.contains(key) ? j[key] : json();
}

std::string Http::ErrorCode() const {
  const json j = Json();
  return j.is_object() && j.contains("error_code") && j["error_code"].is_string() ? j["error_code"].get<std::string>()
                                                                                  : "";
}

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

Http ReadResponse(beast::tcp_stream& stream) {
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64ull << 20);
  beast::error_code ec;
  http::read(stream, buffer, parser, ec);
  if (ec) return Http{-1, "reading the response: " + ec.message(), ""};
  const http::response<http::string_body>& response = parser.get();
  Http out{static_cast<int>(response.result_int()), response.body(), std::string(response[http::field::content_type])};
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return out;
}

bool Connect(uint16_t port, beast::tcp_stream* stream, std::string* error) {
  beast::error_code ec;
  stream->expires_after(std::chrono::seconds(60));
  stream->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) *error = "connecting: " + ec.message();
  return !ec;
}

}  // namespace

Http HttpRequest(uint16_t port, const std::string& method, const std::string& target, const std::string& body,
                 const std::string& authorization) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  std::string error;
  if (!Connect(port, &stream, &error)) return Http{-1, error, ""};
  http::request<http::string_body> request;
  request.method_string(method);
  request.target(target);
  request.version(11);
  request.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  if (!authorization.empty()) request.set(http::field::authorization, authorization);
  if (!body.empty()) request.set(http::field::content_type, "application/json");
  request.body() = body;
  request.prepare_payload();
  beast::error_code ec;
  http::write(stream, request, ec);
  if (ec) return Http{-1, "writing the request: " + ec.message(), ""};
  return ReadResponse(stream);
}

Http HttpRaw(uint16_t port, const std::string& bytes) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  std::string error;
  if (!Connect(port, &stream, &error)) return Http{-1, error, ""};
  beast::error_code ec;
  asio::write(stream, asio::buffer(bytes), ec);
  if (ec) return Http{-1, "writing the request: " + ec.message(), ""};
  return ReadResponse(stream);
}

// --- StoreFingerprint ------------------------------------------------------------

std::string RowText(const Row& row) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (const Value& v : row) values.push_back(cli::ValueJson(v));
  return values.dump();
}

namespace {

std::string TableText(const TableInfo& t) {
  std::string text = std::string(TableKindName(t.kind)) + " (";
  for (size_t i = 0; i < t.schema.columns().size(); ++i) {
    const Column& c = t.schema.columns()[i];
    text += (i == 0 ? "" : ", ") + c.name + " " + std::string(ColumnTypeName(c.type)) + (c.nullable ? "" : " NOT NULL");
  }
  text += ") key (";
  for (size_t i = 0; i < t.schema.key_columns().size(); ++i) {
    text += (i == 0 ? "" : ", ") + t.schema.columns()[t.schema.key_columns()[i]].name;
  }
  text += ") properties {";
  bool first = true;
  for (const auto& [k, v] : t.properties) {
    text += (first ? "" : ", ") + k + "=" + v;
    first = false;
  }
  return text + "} uid " + std::to_string(t.uid);
}

std::string HistoryText(const HistoryEntry& h) {
  std::string metrics;
  for (const auto& [k, v] : h.metrics) {
    if (k == "executionTimeUs") continue;  // not what the commit changed
    metrics += (metrics.empty() ? "" : ",") + k + "=" + std::to_string(v);
  }
  return "v" + std::to_string(h.version) + " @" + std::to_string(h.timestamp_us) + " " + h.operation + " " +
         h.parameters_json + " {" + metrics + "} update " + h.update_id;
}

std::string EventText(const Event& e) {
  return "#" + std::to_string(e.sequence) + " " + e.event_type + " " + std::string(EventLevelName(e.level)) +
         " update=" + e.origin.update_id + " flow=" + e.origin.flow_name + " id=" + e.id + " \"" + e.message + "\" " +
         e.details_json;
}

// The difference of two lists, at the first place they differ.
std::string ListDiff(const std::string& what, const std::vector<std::string>& before,
                     const std::vector<std::string>& after) {
  if (before == after) return "";
  std::ostringstream out;
  out << what << ": " << before.size() << " entries before, " << after.size() << " after\n";
  size_t i = 0;
  while (i < before.size() && i < after.size() && before[i] == after[i]) ++i;
  int shown = 0;
  for (size_t j = i; j < std::max(before.size(), after.size()) && shown < 8; ++j, ++shown) {
    if (j < before.size()) out << "    - [" << j << "] " << before[j] << "\n";
    if (j < after.size()) out << "    + [" << j << "] " << after[j] << "\n";
  }
  return out.str();
}

template <typename V>
std::string MapDiff(const std::string& what, const std::map<std::string, V>& before,
                    const std::map<std::string, V>& after) {
  std::string out;
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    if (it == after.end()) {
      out += what + " " + key + ": gone\n";
    } else if (!(it->second == value)) {
      if constexpr (std::is_same_v<V, std::string>) {
        out += what + " " + key + ":\n    - " + value + "\n    + " + it->second + "\n";
      } else {
        out += ListDiff(what + " " + key, value, it->second);
      }
    }
  }
  for (const auto& [key, value] : after) {
    if (before.count(key) == 0) out += what + " " + key + ": new\n";
  }
  return out;
}

}  // namespace

StoreFingerprint StoreFingerprint::Capture(Store* store, const Pipeline& pipeline) {
  StoreFingerprint f;
  for (const TableInfo& t : store->ListTables()) {
    const std::string name = t.id.ToString();
    f.tables[name] = TableText(t);
    std::vector<std::string>& rows = f.rows[name];
    Status s = store->Read(t.id, {}, [&](const Row& row) {
      rows.push_back(RowText(row));
      return true;
    });
    if (!s.ok()) rows.push_back("(read failed: " + s.ToString() + ")");
    std::vector<HistoryEntry> history;
    s = store->History(t.id, &history);
    if (!s.ok()) f.history[name].push_back("(history failed: " + s.ToString() + ")");
    for (const HistoryEntry& h : history) f.history[name].push_back(HistoryText(h));
  }
  for (const PipelineDataset& d : pipeline.Datasets()) {
    for (const std::string& flow : d.flows) {
      std::string data;
      bool found = false;
      const Status s = store->GetCheckpoint(flow, &data, &found);
      f.checkpoints[flow] = !s.ok() ? "(failed: " + s.ToString() + ")" : found ? data : "(none)";
    }
  }
  std::vector<Event> events;
  const Status s = store->events()->Query(EventQuery{}, &events);
  if (!s.ok()) f.events.push_back("(query failed: " + s.ToString() + ")");
  for (const Event& e : events) f.events.push_back(EventText(e));
  const LogPosition newest = store->log()->Newest();
  f.log_position = "epoch " + std::to_string(newest.epoch) + " version " + std::to_string(newest.version);
  return f;
}

std::string FingerprintDiff(const StoreFingerprint& before, const StoreFingerprint& after, bool ignore_events) {
  std::string out;
  if (before.log_position != after.log_position) {
    out += "log: " + before.log_position + " before, " + after.log_position + " after\n";
  }
  out += MapDiff("table", before.tables, after.tables);
  out += MapDiff("rows of", before.rows, after.rows);
  out += MapDiff("history of", before.history, after.history);
  out += MapDiff("checkpoint of flow", before.checkpoints, after.checkpoints);
  if (!ignore_events) out += ListDiff("event log", before.events, after.events);
  return out;
}

// --- the shop ----------------------------------------------------------------------

std::string ShopSpec(const std::string& topic_dir, const std::string& customers_dir, const ShopSpecOptions& o) {
  json orders = {{"name", "main.shop.orders"}};
  if (!o.orders_properties.empty()) orders["properties"] = o.orders_properties;
  json clean_steps = json::array();
  if (!o.clean_filter.empty()) clean_steps.push_back({{"filter", o.clean_filter}});
  clean_steps.push_back({{"select", json::array({"id", "country", {{"name", "amount"}, {"expr", o.amount_expr}}})}});
  json spec = {
      {"name", "shop"},
      {"datasets", json::array({{{"name", "main.shop.raw"}},
                                orders,
                                {{"name", "main.shop.revenue"}},
                                {{"name", "main.shop.big_orders"}},
                                {{"name", "main.shop.by_country"}, {"kind", "materialized_view"}},
                                {{"name", "main.shop.customers"}, {"primary_key", json::array({"customer_id"})}}})},
      {"flows",
       json::array({
           {{"name", "ingest"},
            {"target", "main.shop.raw"},
            {"source",
             {{"topic", topic_dir},
              {"columns", json::array({{{"name", "id"}, {"type", "int64"}, {"nullable", false}},
                                       {{"name", "country"}, {"type", "string"}, {"nullable", false}},
                                       {{"name", "amount"}, {"type", "int64"}}})}}}},
           {{"name", "clean"},
            {"target", "main.shop.orders"},
            {"source", {{"dataset", "main.shop.raw"}}},
            {"steps", clean_steps}},
           // No name: the flow's name is the table's full identifier.
           {{"target", "main.shop.revenue"},
            {"source", {{"dataset", "main.shop.orders"}}},
            {"steps", json::array({{{"aggregate",
                                     {{"group_by", o.revenue_group_by},
                                      {"aggregates",
                                       json::array({{{"name", "orders"}, {"fn", "count"}},
                                                    {{"name", "revenue"}, {"fn", "sum"}, {"expr", "amount"}}})}}}}})}},
           {{"name", "big_orders_flow"},
            {"target", "main.shop.big_orders"},
            {"source", {{"dataset", "main.shop.orders"}, {"skip_change_commits", o.big_orders_skip_change_commits}}},
            {"steps", json::array({{{"filter", "amount >= 15"}}})}},
           {{"name", "by_country"},
            {"target", "main.shop.by_country"},
            {"source", {{"dataset", "main.shop.orders"}}},
            {"steps",
             json::array(
                 {{{"aggregate",
                    {{"group_by", json::array({"country"})},
                     {"aggregates", json::array({{{"name", "avg_amount"}, {"fn", "avg"}, {"expr", "amount"}}})}}}}})}},
           {{"name", "customers"},
            {"target", "main.shop.customers"},
            {"source",
             {{"files", customers_dir},
              {"format", "jsonl"},
              {"bad_records", "fail"},
              {"columns", json::array({{{"name", "customer_id"}, {"type", "int64"}},
                                       {{"name", "name"}, {"type", "string"}},
                                       {{"name", "seq"}, {"type", "int64"}}})}}},
            {"steps", json::array({{{"filter", "customer_id IS NOT NULL AND seq IS NOT NULL"}},
                                   {{"auto_cdc", {{"keys", json::array({"customer_id"})}, {"sequence_by", "seq"}}}}})}},
       })}};
  if (!o.configuration.empty()) spec["configuration"] = o.configuration;
  return spec.dump();
}

json SpecOf(const Shop& shop) {
  return json::parse(ShopSpec(shop.topic_dir(), shop.customers_dir(), shop.spec_options()));
}

json WithMaxAmount(const Shop& shop) {
  json spec = SpecOf(shop);
  spec["flows"][2]["steps"][0]["aggregate"]["aggregates"].push_back(
      {{"name", "max_amount"}, {"fn", "max"}, {"expr", "amount"}});
  return spec;
}

Shop::Shop(const TempDir& root, const std::string& name, const ShopSpecOptions& options, uint64_t log_segment_bytes)
    : options_(options), log_segment_bytes_(log_segment_bytes) {
  const std::string base = root.Sub(name);
  store_dir_ = base + "/store";
  topic_dir_ = base + "/orders";
  customers_dir_ = base + "/customers";
  std::filesystem::create_directories(base);
  std::filesystem::create_directories(customers_dir_);
  TopicConfig topic;
  topic.segment_size_bytes = kMinTopicSegmentBytes;  // so that retention can drop some of it
  Status s = Topic::Create(Env::Default(), topic_dir_, topic);
  if (s.ok()) s = Topic::Open(Env::Default(), topic_dir_, &topic_);
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = Store::Open(StoreOptionsFor(), store_dir_, &store_);
  EXPECT_TRUE(s.ok()) << s.ToString();
  DeploySpec(ShopSpec(topic_dir_, customers_dir_, options_));
}

Shop::~Shop() {
  sources_.Open();  // nothing stays held at the gate
  StopServing();
  pipeline_.reset();
  topic_.reset();
  store_.reset();
}

void Shop::Serve() {
  service_ = std::make_unique<cli::ApiService>(store_.get(), pipeline_.get(), kToken);
  cli::HttpServerOptions options;
  options.port = 0;
  options.max_body_bytes = 64 << 10;
  const Status s = cli::HttpServer::Start(options, service_.get(), &server_);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

void Shop::StopServing() {
  if (server_) server_->Stop();
  server_.reset();
  service_.reset();  // stops a running update and waits for it
}

void Shop::Deploy(const ShopSpecOptions& options) {
  options_ = options;
  DeploySpec(ShopSpec(topic_dir_, customers_dir_, options_));
}

void Shop::DeploySpec(const std::string& spec_json) {
  StopServing();
  pipeline_.reset();
  PipelineSpec spec;
  Status s = ParsePipelineSpec(spec_json, &spec);
  if (s.ok()) s = SetPipelineDefinition(store_.get(), spec, &pipeline_id_);
  PipelineOptions options;
  options.env = &sources_;
  if (s.ok()) s = Pipeline::Open(store_.get(), spec, &pipeline_, options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Serve();
}

void Shop::Close() {
  StopServing();
  pipeline_.reset();
  store_.reset();
}

StoreOptions Shop::StoreOptionsFor() {
  StoreOptions options;
  options.env = &clock_;
  if (log_segment_bytes_ != 0) options.log.segment_size_bytes = log_segment_bytes_;
  return options;
}

void Shop::Reopen() {
  Status s = Store::Open(StoreOptionsFor(), store_dir_, &store_);
  PipelineSpec spec;
  if (s.ok()) s = GetPipelineDefinition(store_.get(), &spec, &pipeline_id_);
  PipelineOptions options;
  options.env = &sources_;
  if (s.ok()) s = Pipeline::Open(store_.get(), spec, &pipeline_, options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Serve();
}

void Shop::Produce(int64_t first, int64_t count) { ProduceOrders(first, count, false); }
void Shop::ProducePadded(int64_t first, int64_t count) { ProduceOrders(first, count, true); }

void Shop::ProduceOrders(int64_t first, int64_t count, bool padded) {
  std::vector<std::string> values, keys;
  std::mt19937_64 random(static_cast<uint64_t>(first));
  for (int64_t id = first; id < first + count; ++id) {
    values.push_back("{\"id\": " + std::to_string(id) + ", \"country\": \"" + (id % 3 == 0 ? "de" : "fr") +
                     "\", \"amount\": " + std::to_string(10 + id) + "}");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    std::string key;
    for (int j = 0; padded && j < 16; ++j) {
      const uint64_t bits = random();
      key.append(reinterpret_cast<const char*>(&bits), sizeof bits);
    }
    keys.push_back(std::move(key));
  }
  std::vector<TopicWrite> batch;
  for (size_t i = 0; i < values.size(); ++i) batch.push_back(TopicWrite{keys[i], values[i]});
  TopicProduced produced;
  const Status s = topic_->Produce(batch, &produced);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

uint64_t Shop::ExpireTopicRecords() {
  TopicRetention retention;
  retention.age_us = 0;
  retention.bytes = 1;
  TopicRetentionReport report;
  Status s = topic_->SetRetention(retention);
  if (s.ok()) s = topic_->ApplyRetention(&report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  uint64_t oldest = 0;
  s = Topic::OldestOffset(Env::Default(), topic_dir_, &oldest);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return oldest;
}

void Shop::AddCustomers(const std::string& file, const std::string& jsonl) {
  std::ofstream(customers_dir_ + "/" + file) << jsonl;
}

std::string Shop::Timestamp(uint64_t back_seconds) {
  return FormatTimestampMicros(static_cast<int64_t>(clock_.NowMicros() - back_seconds * kSecond)).substr(0, 19);
}

uint16_t Shop::port() const { return server_ ? server_->port() : 0; }

Http Shop::Call(const std::string& method, const std::string& path, const std::string& body, const std::string& token) {
  return HttpRequest(port(), method, api() + path, body, token.empty() ? "" : "Bearer " + token);
}

std::string Shop::Start(const std::string& body) {
  const Http r = Post("/updates", body);
  EXPECT_EQ(r.status, 200) << body << " -> " << r.body;
  if (r.status != 200) return "";
  return r.Json().value("update_id", "");
}

std::string Shop::Await(const std::string& update_id) {
  service_->WaitIdle();
  return GetUpdate(update_id).value("state", "(no state)");
}

std::string Shop::Run(const std::string& body, std::string* update_id) {
  const std::string id = Start(body);
  if (update_id != nullptr) *update_id = id;
  if (id.empty()) return "(not started)";
  return Await(id);
}

json Shop::GetUpdate(const std::string& update_id) {
  const Http r = Get("/updates/" + update_id);
  EXPECT_EQ(r.status, 200) << r.body;
  const json j = r.Json();
  return j.contains("update") ? j["update"] : json::object();
}

std::vector<std::string> Shop::Rows(const std::string& table) {
  TableId id;
  EXPECT_TRUE(TableId::Parse(table, &id).ok()) << table;
  std::vector<std::string> rows;
  const Status s = store_->Read(id, {}, [&](const Row& row) {
    rows.push_back(RowText(row));
    return true;
  });
  EXPECT_TRUE(s.ok()) << table << ": " << s.ToString();
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<std::string> Shop::RowsAt(const std::string& table, uint64_t version) {
  TableId id;
  EXPECT_TRUE(TableId::Parse(table, &id).ok()) << table;
  ReadOptions at;
  at.version = version;
  std::vector<std::string> rows;
  const Status s = store_->Read(id, at, [&](const Row& row) {
    rows.push_back(RowText(row));
    return true;
  });
  EXPECT_TRUE(s.ok()) << table << " at " << version << ": " << s.ToString();
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<HistoryEntry> Shop::History(const std::string& table) {
  TableId id;
  EXPECT_TRUE(TableId::Parse(table, &id).ok()) << table;
  std::vector<HistoryEntry> history;
  const Status s = store_->History(id, &history);
  EXPECT_TRUE(s.ok()) << table << ": " << s.ToString();
  return history;
}

std::string Shop::Checkpoint(const std::string& flow) {
  std::string data;
  bool found = false;
  const Status s = store_->GetCheckpoint(flow, &data, &found);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return found ? data : "(none)";
}

std::vector<Event> Shop::Events(const std::string& type) {
  EventQuery query;
  if (!type.empty()) query.event_type = type;
  std::vector<Event> events;
  const Status s = store_->events()->Query(query, &events);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return events;
}

std::string Shop::Errors(const std::string& update_id) {
  EventQuery query;
  query.update_id = update_id;
  query.level = EventLevel::kError;
  std::vector<Event> events;
  const Status s = store_->events()->Query(query, &events);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::string out;
  for (const Event& e : events) out += e.message + "\n";
  return out;
}

uint64_t Shop::InputRows(const std::string& update_id, const std::string& flow, uint64_t* batches) {
  EventQuery query;
  query.event_type = "flow_progress";
  query.update_id = update_id;
  query.flow_name = flow;
  std::vector<Event> events;
  const Status s = store_->events()->Query(query, &events);
  EXPECT_TRUE(s.ok()) << s.ToString();
  uint64_t rows = 0, n = 0;
  for (const Event& e : events) {
    const json details = json::parse(e.details_json, nullptr, false);
    if (!details.is_object() || !details.contains("flow_progress")) continue;
    const json& progress = details["flow_progress"];
    if (!progress.contains("metrics")) continue;
    rows += progress["metrics"].value("num_input_rows", uint64_t{0});
    ++n;
  }
  if (batches != nullptr) *batches = n;
  return rows;
}

RewindPoint Shop::RecordPeriodicPoint() {
  RewindPoint point;
  const Status s = RecordRewindPoint(store_.get(), *pipeline_, kPeriodicRewindPointMessage, false, &point);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return point;
}

void Shop::LeaveIncompleteRewind(uint64_t version) {
  // What a rewind writes before it changes anything: its update's events up
  // to RESETTING, and a durable rewind_started event (rewind/rewind.cc).
  const std::string update_id = NewUpdateId();
  auto append = [&](const std::string& type, const std::string& message, const json& details) {
    Event e;
    e.origin.pipeline_id = pipeline_id_;
    e.origin.update_id = update_id;
    e.event_type = type;
    e.message = message;
    e.details_json = details.dump();
    const Status s = store_->events()->Append(&e);
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  append("create_update", "Update " + update_id.substr(0, 6) + " started by USER_ACTION.",
         {{"create_update", {{"cause", "USER_ACTION"}, {"rewind", true}, {"dry_run", false}}}});
  for (UpdateState state : {UpdateState::kQueued, UpdateState::kInitializing, UpdateState::kResetting}) {
    ASSERT_TRUE(RecordUpdateProgress(store_.get(), pipeline_id_, update_id, state).ok());
  }
  append("rewind_started", "Rewinding the pipeline to version " + std::to_string(version) + ".",
         {{"rewind",
           {{"epoch", store_->log()->Newest().epoch},
            {"version", version},
            {"rewind_point_id", ""},
            {"whole_pipeline", true},
            {"datasets", json::array()}}}});
}

std::string Shop::RewindBody(const std::string& target_field, const std::string& target, const std::string& identifier,
                             bool dry_run) {
  // The reference documents' body, field for field.
  return R"({
  "cause": "USER_ACTION",
  "rewind_spec": {
    ")" + target_field +
         R"(": ")" + target + R"(",
    "datasets": [
      {
        "identifier": ")" +
         identifier + R"(",
        "cascade": true,
        "reset_checkpoints": true
      }
    ],
    "dry_run": )" +
         (dry_run ? "true" : "false") + R"(
  }
})";
}

RewindPoint GoodThenBad(Shop& shop, std::string* between, uint64_t gap_seconds) {
  shop.AddCustomers("c1.jsonl", R"({"customer_id": 1, "name": "ada", "seq": 1})"
                                "\n"
                                R"({"customer_id": 2, "name": "grace", "seq": 1})"
                                "\n");
  shop.Produce(1, 10);
  EXPECT_EQ(shop.Run(), "COMPLETED");
  const RewindPoint point = shop.RecordPeriodicPoint();
  shop.Tick(gap_seconds);
  if (between != nullptr) *between = shop.Timestamp(gap_seconds / 2);
  ShopSpecOptions bad = shop.spec_options();
  bad.amount_expr = "amount * 2";
  shop.Deploy(bad);
  shop.AddCustomers("c2.jsonl", R"({"customer_id": 2, "name": "grace hopper", "seq": 2})"
                                "\n"
                                R"({"customer_id": 3, "name": "edsger", "seq": 1})"
                                "\n");
  shop.Produce(11, 10);
  EXPECT_EQ(shop.Run(), "COMPLETED");
  return point;
}

void DeployFix(Shop& shop) {
  ShopSpecOptions good = shop.spec_options();
  good.amount_expr = "amount";
  shop.Deploy(good);
}

std::unique_ptr<Shop> RunWithoutTheBug(const TempDir& root, const std::string& name) {
  auto shop = std::make_unique<Shop>(root, name);
  shop->AddCustomers("c1.jsonl", R"({"customer_id": 1, "name": "ada", "seq": 1})"
                                 "\n"
                                 R"({"customer_id": 2, "name": "grace", "seq": 1})"
                                 "\n");
  shop->Produce(1, 10);
  EXPECT_EQ(shop->Run(), "COMPLETED");
  shop->AddCustomers("c2.jsonl", R"({"customer_id": 2, "name": "grace hopper", "seq": 2})"
                                 "\n"
                                 R"({"customer_id": 3, "name": "edsger", "seq": 1})"
                                 "\n");
  shop->Produce(11, 10);
  EXPECT_EQ(shop->Run(), "COMPLETED");
  return shop;
}

std::string DifferingTables(Shop& shop, Shop& reference) {
  std::string out;
  for (const std::string& table : ShopTables()) {
    const std::vector<std::string> got = shop.Rows(table), wanted = reference.Rows(table);
    if (got == wanted) continue;
    out += table + ":\n  got   ";
    for (const std::string& r : got) out += r + " ";
    out += "\n  wanted ";
    for (const std::string& r : wanted) out += r + " ";
    out += "\n";
  }
  return out;
}

// --- the CLI -----------------------------------------------------------------------------

CliResult RunCli(const std::vector<std::string>& args) {
  std::string command = "'" SPOOL_CLI "'";
  for (const std::string& arg : args) {
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += " " + quoted + "'";
  }
  command += " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

CliResult RunCliOn(Shop& shop, std::vector<std::string> args) {
  shop.Close();
  for (std::string& arg : args) {
    if (arg == "DIR") arg = shop.store_dir();
  }
  CliResult result = RunCli(args);
  shop.Reopen();
  return result;
}

void ExpectRefusedAtOnce(Shop& shop, const std::string& body, const std::string& code, const std::string& why) {
  const StoreFingerprint before = shop.Fingerprint();
  const Http r = shop.Post("/updates", body);
  EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
  EXPECT_EQ(r.ErrorCode(), code) << r.body;
  EXPECT_FALSE(r.Json().contains("update_id")) << r.body;
  EXPECT_NE(r.body.find(why), std::string::npos) << r.body;
  shop.service()->WaitIdle();
  EXPECT_UNCHANGED(shop, before);
}

}  // namespace spool::conformance
