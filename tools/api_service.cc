#include "api_service.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "api_responses.h"
#include "json_format.h"
#include "json_text.h"
#include "spool/rewind/updates.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/records.h"

namespace spool::cli {
namespace {

using json = nlohmann::ordered_json;

constexpr uint64_t kDefaultPage = 25;
constexpr uint64_t kMaxPage = 1000;

std::string UrlDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

struct Target {
  std::vector<std::string> path;  // the segments after "/"
  std::map<std::string, std::string> query;
};

Target ParseTarget(std::string_view target) {
  Target t;
  const size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  while (!path.empty()) {
    const size_t slash = path.find('/');
    if (slash != 0) t.path.push_back(UrlDecode(path.substr(0, slash)));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  if (question == std::string_view::npos) return t;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    t.query[UrlDecode(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : UrlDecode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return t;
}

// A whole number query parameter within [1, max]; `fallback` when absent.
Status QueryCount(const Target& t, const std::string& name, uint64_t fallback, uint64_t max, uint64_t* out) {
  auto it = t.query.find(name);
  if (it == t.query.end()) {
    *out = fallback;
    return Status::OK();
  }
  const std::string& text = it->second;
  if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), ::isdigit) || std::stoull(text) == 0 ||
      std::stoull(text) > max) {
    return Status::InvalidArgument(name + " must be a whole number from 1 to " + std::to_string(max) + ", not '" +
                                   text + "'");
  }
  *out = std::stoull(text);
  return Status::OK();
}

// Refuses a query parameter the endpoint does not take, naming those it does.
Status OnlyParameters(const Target& t, std::initializer_list<std::string_view> known) {
  for (const auto& [name, value] : t.query) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string names;
    for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
    return Status::InvalidArgument(
        "unknown query parameter '" + name + "'" +
        (names.empty() ? std::string(": this endpoint takes none") : " (this endpoint takes " + names + ")"));
  }
  return Status::OK();
}

// A row as an object of its columns.
json RowObject(const Schema& schema, const Row& row) {
  json object = json::object();
  for (size_t i = 0; i < row.size() && i < schema.columns().size(); ++i)
    object[schema.columns()[i].name] = ValueJson(row[i]);
  return object;
}

// Milliseconds since the epoch, as the reference API gives times.
int64_t Millis(uint64_t micros) { return static_cast<int64_t>(micros / 1000); }

}  // namespace

struct ApiService::Impl {
  Impl(Store* s, Pipeline* p, std::string t) : store(s), pipeline(p), token(std::move(t)) {}

  Store* store;
  Pipeline* pipeline;
  std::string token;

  std::mutex mu;
  std::condition_variable idle;
  bool running = false;  // guarded by mu
  // The running update's stop flag (a Pipeline::Stop while none runs would
  // stop the next one instead); cleared as each update starts.
  std::atomic<bool> stop{false};
  std::thread worker;               // the last update's
  std::string current;              // the last update's id (guarded by mu)
  bool current_continuous = false;  // it runs until stopped (guarded by mu)

  ApiResponse Route(const ApiRequest& request);
  ApiResponse StartUpdate(const std::string& body);
  ApiResponse ListUpdates(const Target& t);
  ApiResponse GetUpdate(const std::string& update_id);
  ApiResponse GetPipeline();
  ApiResponse ListEvents(const Target& t);
  ApiResponse ListRewindPoints(const Target& t);
  Status ParseSince(const std::string& text, uint64_t* since_us);
  ApiResponse PreviewRewind(const std::string& body);
  ApiResponse Metrics();
  ApiResponse TableHistory(const TableId& id, const Target& t);
  ApiResponse TableRows(const TableId& id, const Target& t);
  ApiResponse TableChanges(const TableId& id, const Target& t);
  Status UpdateStates(std::map<std::string, std::string>* states);
  void Run(std::string update_id, const UpdateRequest& request);
};

ApiService::ApiService(Store* store, Pipeline* pipeline, std::string token)
    : impl_(std::make_unique<Impl>(store, pipeline, std::move(token))) {}

ApiService::~ApiService() {
  StopUpdate();
  WaitIdle();
  if (impl_->worker.joinable()) impl_->worker.join();
}

void ApiService::StopUpdate() { impl_->stop = true; }

void ApiService::WaitIdle() {
  std::unique_lock lock(impl_->mu);
  impl_->idle.wait(lock, [&] { return !impl_->running; });
}

ApiResponse ApiService::Handle(const ApiRequest& request) {
  const std::string expected = "Bearer " + impl_->token;
  // Compared whole, whatever the first difference (no early exit).
  bool same = request.authorization.size() == expected.size();
  for (size_t i = 0; i < expected.size() && i < request.authorization.size(); ++i) {
    same = same && request.authorization[i] == expected[i];
  }
  if (!same) return ApiError(401, "UNAUTHENTICATED", "a valid bearer token is required: Authorization: Bearer <token>");
  return impl_->Route(request);
}

ApiResponse ApiService::Impl::Route(const ApiRequest& request) {
  const Target t = ParseTarget(request.target);
  const std::vector<std::string>& p = t.path;
  if (p.size() == 1 && p[0] == "metrics" && request.method == "GET") {
    if (Status s = OnlyParameters(t, {}); !s.ok()) return ApiFromStatus(s);
    return Metrics();
  }
  if (p.size() == 4 && p[0] == "api" && p[1] == "2.0" && p[2] == "sql" && p[3] == "statements" &&
      request.method == "POST") {
    if (Status s = OnlyParameters(t, {}); !s.ok()) return ApiFromStatus(s);
    return SqlStatement(store, request.body);
  }
  if (p.size() < 4 || p[0] != "api" || p[1] != "2.0" || p[2] != "pipelines") {
    return ApiError(404, "ENDPOINT_NOT_FOUND", "no endpoint " + request.method + " " + request.target);
  }
  if (p[3] != pipeline->id()) {
    return ApiError(404, "RESOURCE_DOES_NOT_EXIST",
                    "no pipeline has id " + p[3] + " (this server's: " + pipeline->id() + ")");
  }
  if (p.size() == 4 && request.method == "GET") {
    if (Status s = OnlyParameters(t, {}); !s.ok()) return ApiFromStatus(s);
    return GetPipeline();
  }
  if (p.size() == 4) return ApiError(404, "ENDPOINT_NOT_FOUND", "no endpoint " + request.method + " " + request.target);
  const std::string& what = p[4];
  const bool get = request.method == "GET", post = request.method == "POST";
  // The endpoint's handler, once its query parameters are known ones.
  auto with = [&](std::initializer_list<std::string_view> known, auto handle) -> ApiResponse {
    if (Status s = OnlyParameters(t, known); !s.ok()) return ApiFromStatus(s);
    return handle();
  };
  if (what == "updates" && p.size() == 5 && post) return with({}, [&] { return StartUpdate(request.body); });
  if (what == "updates" && p.size() == 5 && get)
    return with({"max_results", "page_token"}, [&] { return ListUpdates(t); });
  if (what == "updates" && p.size() == 6 && get) return with({}, [&] { return GetUpdate(p[5]); });
  if (what == "events" && p.size() == 5 && get) {
    return with({"event_type", "level", "start_time", "end_time", "max_results", "page_token"},
                [&] { return ListEvents(t); });
  }
  if (what == "stop" && p.size() == 5 && post) {
    return with({}, [&] {
      stop = true;  // the running update's; the next one starts afresh
      return ApiOk(json::object());
    });
  }
  if (what == "rewind-points" && p.size() == 5 && get) {
    return with({"since", "max_results"}, [&] { return ListRewindPoints(t); });
  }
  if (what == "rewind-preview" && p.size() == 5 && post) return with({}, [&] { return PreviewRewind(request.body); });
  if (what == "tables" && p.size() == 7 && get) {
    TableId id;
    if (Status s = TableId::Parse(p[5], &id); !s.ok()) return ApiFromStatus(s);
    if (p[6] == "history") return with({"max_results"}, [&] { return TableHistory(id, t); });
    if (p[6] == "rows") return with({"version", "timestamp", "max_results"}, [&] { return TableRows(id, t); });
    if (p[6] == "changes") return with({"from", "to", "max_results"}, [&] { return TableChanges(id, t); });
  }
  return ApiError(404, "ENDPOINT_NOT_FOUND", "no endpoint " + request.method + " " + request.target);
}

ApiResponse ApiService::Impl::StartUpdate(const std::string& body) {
  UpdateRequest request;
  Status s = ParseUpdateRequest(body.empty() ? "{}" : body, &request);
  if (!s.ok()) return ApiFromStatus(s);
  {
    std::unique_lock lock(mu);
    // A rewind of a continuous pipeline stops its update after the current
    // batch first, as a stop would; the pipeline stays stopped after the
    // rewind (its replay is the next update).
    if (running && current_continuous && request.rewind_spec && !request.rewind_spec->dry_run) {
      stop = true;
      idle.wait(lock, [&] { return !running; });
    }
    if (running) {
      return ApiError(
          409, "RESOURCE_CONFLICT",
          "an update is running on pipeline " + pipeline->id() + ": stop it (POST …/stop) or wait for it to end");
    }
    running = true;  // this request's until it is refused or its update ends
  }
  // What can be refused is refused now, changing nothing, with the checks
  // the run makes: the fields, a rewind's validation, the selections and
  // definition, an incomplete rewind.
  s = CheckUpdateRequestRuns(store, pipeline, request, UpdateOptions{});
  std::lock_guard lock(mu);
  if (!s.ok()) {
    running = false;
    idle.notify_all();
    return ApiFromStatus(s);
  }
  if (worker.joinable()) worker.join();  // the last one has ended
  stop = false;
  const std::string update_id = NewUpdateId();
  current = update_id;
  current_continuous = pipeline->spec().continuous && !request.rewind_spec && !request.validate_only;
  worker = std::thread([this, update_id, request] { Run(update_id, request); });
  return ApiOk(json{{"update_id", update_id}});
}

// An update over the API retries transient failures (RetryPolicy), whatever
// the request's cause. Its events record how it ended, error included.
void ApiService::Impl::Run(std::string update_id, const UpdateRequest& request) {
  UpdateOptions options;
  options.update_id = std::move(update_id);
  options.stop = &stop;
  UpdateOutcome outcome;
  RetryPolicy policy;
  policy.started_by = StartedBy::kApi;
  (void)RunUpdateRequest(store, pipeline, request, options, policy, &outcome);
  std::lock_guard lock(mu);
  running = false;
  idle.notify_all();
}

// The last state of every update in the event log.
Status ApiService::Impl::UpdateStates(std::map<std::string, std::string>* states) {
  EventQuery query;
  query.event_type = "update_progress";
  std::vector<Event> events;
  SPOOL_RETURN_IF_ERROR(store->events()->Query(query, &events));
  for (const Event& e : events) {
    const json details = json::parse(e.details_json, nullptr, false);
    if (details.is_object() && details.contains("update_progress")) {
      (*states)[e.origin.update_id] = details["update_progress"].value("state", "");
    }
  }
  return Status::OK();
}

ApiResponse ApiService::Impl::ListUpdates(const Target& t) {
  uint64_t max = 0, from = 0;
  Status s = QueryCount(t, "max_results", kDefaultPage, kMaxPage, &max);
  if (s.ok() && t.query.count("page_token") != 0) s = QueryCount(t, "page_token", 0, UINT64_MAX >> 1, &from);
  EventQuery query;
  query.event_type = "create_update";
  std::vector<Event> created;
  if (s.ok()) s = store->events()->Query(query, &created);
  std::map<std::string, std::string> states;
  if (s.ok()) s = UpdateStates(&states);
  if (!s.ok()) return ApiFromStatus(s);
  json updates = json::array();
  uint64_t last = 0;
  bool more = false;
  std::set<std::string> listed;  // one entry an update (older stores recorded a retry's create_update again)
  for (auto it = created.rbegin(); it != created.rend(); ++it) {  // newest first, before the page token
    const Event& e = *it;
    if (from != 0 && e.sequence >= from) continue;
    if (!listed.insert(e.origin.update_id).second) continue;
    if (updates.size() == max) {
      more = true;
      break;
    }
    last = e.sequence;
    const json details = json::parse(e.details_json, nullptr, false);
    const std::string cause =
        details.is_object() && details.contains("create_update") ? details["create_update"].value("cause", "") : "";
    updates.push_back({{"update_id", e.origin.update_id},
                       {"state", states[e.origin.update_id]},
                       {"cause", cause},
                       {"creation_time", Millis(e.timestamp_us)}});
  }
  json out = {{"updates", updates}};
  if (more) out["next_page_token"] = std::to_string(last);
  return ApiOk(out);
}

// The pipeline as it runs: its id, name and spec (sources and sinks
// included), and how far each sink has published.
ApiResponse ApiService::Impl::GetPipeline() {
  const PipelineSpec& spec = pipeline->spec();
  json sinks = json::array();
  TableId progress;
  (void)TableId::Parse(kSinkProgressTable, &progress);
  for (const SinkSpec& k : spec.sinks) {
    Row row;
    bool found = false;
    Status s = store->Get(progress, {k.name}, &row, &found);
    if (!s.ok() && !s.IsNotFound()) return ApiFromStatus(s);
    json j = {{"name", k.name}, {"dataset", k.dataset}};
    if (found) j["published_version"] = std::get<int64_t>(row[1]);
    sinks.push_back(j);
  }
  return ApiOk({{"pipeline_id", pipeline->id()},
                {"name", spec.name},
                {"spec", json::parse(PipelineSpecToJson(spec))},
                {"sinks", sinks}});
}

ApiResponse ApiService::Impl::GetUpdate(const std::string& update_id) {
  EventQuery query;
  query.update_id = update_id;
  std::vector<Event> events;
  Status s = store->events()->Query(query, &events);
  if (!s.ok()) return ApiFromStatus(s);
  json update = {{"pipeline_id", pipeline->id()}, {"update_id", update_id}};
  bool known = false;
  for (const Event& e : events) {
    const json details = json::parse(e.details_json, nullptr, false);
    if (!details.is_object()) continue;
    if (e.event_type == "create_update" && details.contains("create_update")) {
      if (known) continue;  // an older store's retry
      known = true;
      update["cause"] = details["create_update"].value("cause", "");
      update["creation_time"] = Millis(e.timestamp_us);
      for (const char* flag : {"full_refresh", "validate_only", "rewind", "dry_run"}) {
        if (details["create_update"].contains(flag)) update[flag] = details["create_update"][flag];
      }
    } else if (e.event_type == "update_progress" && details.contains("update_progress")) {
      const json& progress = details["update_progress"];
      if (progress.contains("warning")) {
        update["warnings"].push_back(progress["warning"]);
        continue;
      }
      update["state"] = progress.value("state", "");
      if (progress.contains("error")) update["error"] = progress["error"];
    }
  }
  if (!known) {
    std::lock_guard lock(mu);
    if (update_id != current) {
      return ApiError(404, "RESOURCE_DOES_NOT_EXIST", "pipeline " + pipeline->id() + " has no update " + update_id);
    }
    update["state"] = "QUEUED";  // accepted, not yet recorded
  }
  return ApiOk(json{{"update", update}});
}

ApiResponse ApiService::Impl::ListEvents(const Target& t) {
  EventQuery query;
  uint64_t max = 0, before = 0;
  Status s = QueryCount(t, "max_results", 100, kMaxPage, &max);
  if (s.ok() && t.query.count("page_token") != 0) s = QueryCount(t, "page_token", 0, UINT64_MAX >> 1, &before);
  if (auto it = t.query.find("event_type"); s.ok() && it != t.query.end()) query.event_type = it->second;
  if (auto it = t.query.find("level"); s.ok() && it != t.query.end()) {
    EventLevel level;
    s = ParseEventLevel(it->second, &level);
    query.level = level;
  }
  for (const char* bound : {"start_time", "end_time"}) {
    auto it = t.query.find(bound);
    if (!s.ok() || it == t.query.end()) continue;
    int64_t micros = 0;
    s = ParseTimestamp(it->second, &micros);
    if (s.ok() && micros < 0) s = Status::InvalidArgument("before 1970");
    if (!s.ok()) {
      s = Status::InvalidArgument(std::string(bound) + ": " + std::string(s.message()));
      break;
    }
    (std::string(bound) == "start_time" ? query.since_us : query.until_us) = static_cast<uint64_t>(micros);
  }
  std::vector<Event> events;
  if (s.ok()) s = store->events()->Query(query, &events);
  if (!s.ok()) return ApiFromStatus(s);
  json out_events = json::array();
  uint64_t last = 0;
  bool more = false;
  for (auto it = events.rbegin(); it != events.rend(); ++it) {  // newest first, before the page token
    if (before != 0 && it->sequence >= before) continue;
    if (out_events.size() == max) {
      more = true;
      break;
    }
    out_events.push_back(EventJson(*it));
    last = it->sequence;
  }
  json out = {{"events", out_events}};
  if (more) out["next_page_token"] = std::to_string(last);
  return ApiOk(out);
}

// What a rewind would do, as its dry run validates it, changing nothing
// (not even a rewind point): the target and the datasets, cascades resolved.
ApiResponse ApiService::Impl::PreviewRewind(const std::string& body) {
  UpdateRequest request;
  Status s = ParseUpdateRequest(body.empty() ? "{}" : body, &request);
  if (s.ok() && !request.rewind_spec) s = Status::InvalidArgument("rewind_spec: missing: the rewind to preview");
  RewindPlan plan;
  if (s.ok()) s = PlanRewind(store, *pipeline, *request.rewind_spec, &plan);
  if (!s.ok()) return ApiFromStatus(s);
  json datasets = json::array();
  for (const RewindDataset& d : plan.datasets) {
    datasets.push_back(
        {{"identifier", d.identifier}, {"cascade", d.cascade}, {"reset_checkpoints", d.reset_checkpoints}});
  }
  return ApiOk(json{{"target",
                     {{"epoch", plan.target.epoch},
                      {"version", plan.target.version},
                      {"timestamp", FormatTimestampUtc(plan.target_timestamp_us)}}},
                    {"rewind_point_id", plan.point ? plan.point->id : ""},
                    {"whole_pipeline", plan.whole_pipeline},
                    {"by_restore", plan.by_restore},
                    {"kept", plan.kept},
                    {"versions_after_target", store->CommitsAfter(plan.target.version)},
                    {"datasets", datasets}});
}

ApiResponse ApiService::Impl::TableHistory(const TableId& id, const Target& t) {
  uint64_t max = 0;
  Status s = QueryCount(t, "max_results", 100, kMaxPage, &max);
  std::vector<HistoryEntry> history;
  if (s.ok()) s = store->History(id, &history, max);
  if (!s.ok()) return ApiFromStatus(s);
  json out = json::array();
  for (const HistoryEntry& h : history) out.push_back(HistoryJson(h));
  return ApiOk(json{{"table", id.ToString()}, {"history", out}});
}

// A table now, or as of `version` or `timestamp`: its rows as objects.
ApiResponse ApiService::Impl::TableRows(const TableId& id, const Target& t) {
  ReadOptions options;
  uint64_t max = 0;
  Status s = QueryCount(t, "max_results", 1000, 100000, &max);
  if (auto it = t.query.find("version"); s.ok() && it != t.query.end()) {
    uint64_t version = 0;
    s = QueryCount(t, "version", 0, UINT64_MAX >> 1, &version);
    options.version = version;
  }
  if (auto it = t.query.find("timestamp"); s.ok() && it != t.query.end()) {
    int64_t micros = 0;
    s = ParseTimestamp(it->second, &micros);
    if (s.ok() && micros < 0) s = Status::InvalidArgument("timestamp: before 1970");
    if (s.ok() && options.version) s = Status::InvalidArgument("give version or timestamp, not both");
    options.timestamp_us = static_cast<uint64_t>(micros);
  }
  TableInfo table;
  uint64_t version = 0;
  json rows = json::array();
  bool more = false;
  if (s.ok()) {
    s = store->Read(
        id, options,
        [&](const Row& row) {
          if (rows.size() == max) {
            more = true;
            return false;
          }
          rows.push_back(RowObject(table.schema, row));
          return true;
        },
        &table, &version);
  }
  if (!s.ok()) return ApiFromStatus(s);
  return ApiOk(json{{"table", id.ToString()}, {"version", version}, {"rows", rows}, {"truncated", more}});
}

// The change data feed of versions from..to (to: the newest when absent).
ApiResponse ApiService::Impl::TableChanges(const TableId& id, const Target& t) {
  uint64_t from = 0, to = 0, max = 0;
  Status s = QueryCount(t, "from", 0, UINT64_MAX >> 1, &from);
  if (s.ok() && from == 0) s = Status::InvalidArgument("from: the first version is required");
  if (s.ok() && t.query.count("to") != 0) s = QueryCount(t, "to", 0, UINT64_MAX >> 1, &to);
  if (s.ok()) s = QueryCount(t, "max_results", 1000, 100000, &max);
  json changes = json::array();
  bool more = false;
  TableInfo table;
  if (s.ok()) {
    s = store->Changes(
        id, from, to,
        [&](const ChangeRow& change) {
          if (changes.size() == max) {
            more = true;
            return false;
          }
          json object = RowObject(table.schema, change.row);
          object["_change_type"] = ChangeTypeName(change.change_type);
          object["_commit_version"] = change.commit_version;
          object["_commit_timestamp"] = FormatTimestampUtc(change.commit_timestamp_us);
          changes.push_back(std::move(object));
          return true;
        },
        &table);
  }
  if (!s.ok()) return ApiFromStatus(s);
  return ApiOk(json{{"table", id.ToString()}, {"changes", changes}, {"truncated", more}});
}

// Prometheus text: the store's and its log's counters since it was opened,
// and what the event log counts (updates by state, batches, rewinds).
ApiResponse ApiService::Impl::Metrics() {
  prometheus::Registry registry;
  auto counter = [&](const std::string& name, const std::string& help, double value) {
    prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({}).Increment(value);
  };
  const StoreStats store_stats = store->Stats();
  const LogStats log_stats = store->log()->Stats();
  counter("spool_commits_total", "Commits of the store since it was opened", static_cast<double>(store_stats.commits));
  counter("spool_rows_written_total", "Row changes committed since the store was opened",
          static_cast<double>(store_stats.rows_written));
  counter("spool_snapshots_total", "Snapshots of the state taken since the store was opened",
          static_cast<double>(store_stats.snapshots_taken));
  counter("spool_log_appends_total", "Records appended to the log", static_cast<double>(log_stats.appends));
  counter("spool_log_group_commits_total", "Group commits (one write each)", static_cast<double>(log_stats.groups));
  counter("spool_log_fsyncs_total", "Data syncs of the log", static_cast<double>(log_stats.syncs));
  counter("spool_log_bytes_total", "Bytes written to the log's segments",
          static_cast<double>(log_stats.bytes_appended));
  prometheus::Histogram::BucketBoundaries bounds;
  for (uint64_t us : kCommitLatencyBoundsUs) bounds.push_back(static_cast<double>(us) / 1e6);
  std::vector<double> buckets;
  for (uint64_t n : store_stats.commit_latency) buckets.push_back(static_cast<double>(n));
  prometheus::BuildHistogram()
      .Name("spool_commit_latency_seconds")
      .Help("Commit latency since the store was opened, the log's sync included")
      .Register(registry)
      .Add({}, bounds)
      .ObserveMultiple(buckets, static_cast<double>(store_stats.commit_latency_sum_us) / 1e6);
  // From the event log: every update, batch and rewind it holds.
  std::map<std::string, double> by_type;
  double vacuumed_bytes = 0;
  for (const char* type : {"flow_progress", "rewind_completed", "create_update", "vacuum"}) {
    EventQuery query;
    query.event_type = type;
    std::vector<Event> events;
    if (Status s = store->events()->Query(query, &events); !s.ok()) return ApiFromStatus(s);
    by_type[type] = static_cast<double>(events.size());
    if (std::string_view(type) != "vacuum") continue;
    for (const Event& e : events) {
      const json details = json::parse(e.details_json, nullptr, /*allow_exceptions=*/false);
      if (details.is_object()) vacuumed_bytes += details.value("bytes", 0.0);
    }
  }
  counter("spool_vacuums_total", "Vacuums run", by_type["vacuum"]);
  counter("spool_vacuum_bytes_total", "Bytes vacuum deleted", vacuumed_bytes);
  counter("spool_flow_batches_total", "Micro-batches (and flow failures) recorded", by_type["flow_progress"]);
  counter("spool_rewinds_total", "Rewinds completed (undos included)", by_type["rewind_completed"]);
  counter("spool_updates_total", "Updates started", by_type["create_update"]);
  bool busy = false;
  {
    std::lock_guard lock(mu);
    busy = running;
  }
  prometheus::BuildGauge()
      .Name("spool_update_running")
      .Help("1 while an update runs")
      .Register(registry)
      .Add({})
      .Set(busy || !store->RunningUpdate().empty() ? 1 : 0);
  return {200, prometheus::TextSerializer().Serialize(registry.Collect()), "text/plain; version=0.0.4"};
}

// The rewind points, newest first: those recorded since `since` (a
// duration back from now, "7d", or a UTC time), at most `max_results`.
ApiResponse ApiService::Impl::ListRewindPoints(const Target& t) {
  uint64_t max = 0, since_us = 0;
  Status s = QueryCount(t, "max_results", kMaxPage, kMaxPage, &max);
  if (auto it = t.query.find("since"); s.ok() && it != t.query.end()) s = ParseSince(it->second, &since_us);
  std::vector<RewindPoint> points;
  if (s.ok()) s = spool::ListRewindPoints(store, since_us, &points);
  if (!s.ok()) return ApiFromStatus(s);
  json out = json::array();
  for (const RewindPoint& p : points) {
    if (out.size() == max) break;
    out.push_back(RewindPointJson(p, RewindPointUse(store, p)));
  }
  return ApiOk(json{{"rewind_points", out}});
}

// `since`: a duration back from the store's clock ("7d", "90m") or a UTC
// time ("2026-09-29 08:36:55").
Status ApiService::Impl::ParseSince(const std::string& text, uint64_t* since_us) {
  uint64_t back_us = 0;
  if (ParseDuration(text, &back_us).ok()) {
    const uint64_t now = store->options().env->NowMicros();
    *since_us = now > back_us ? now - back_us : 0;
    return Status::OK();
  }
  int64_t micros = 0;
  if (ParseTimestamp(text, &micros).ok() && micros >= 0) {
    *since_us = static_cast<uint64_t>(micros);
    return Status::OK();
  }
  return Status::InvalidArgument("since: '" + text +
                                 "' is neither a duration (7d, 90m) nor a UTC time (yyyy-MM-dd HH:mm:ss)");
}

}  // namespace spool::cli
