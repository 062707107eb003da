// The pipeline's public calls, its events, the format of a flow's
// checkpoint and the recorded definition. The rest of the runtime is
// divided by concern (see pipeline_impl.h).
#include "spool/stream/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "parse_whole.h"
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

namespace {

const char* const kDefinitionTable = "__spool.pipeline.definition";

// flow_progress events written without a sync before one is synced.
constexpr uint32_t kMaxUnsyncedEvents = 32;

// A watermark's key in a checkpoint: its step, in decimal digits as Encode
// writes it. Stored data, so checked, never thrown over.
Status ParseWatermarkStep(const std::string& flow, const std::string& key, size_t* step) {
  if (!ParseWhole(key, step)) {
    return Status::Corruption("checkpoint of flow " + flow + ": watermark key '" + key + "' is not a step number");
  }
  return Status::OK();
}

}  // namespace

Status RecordUpdateProgress(Store* store, const std::string& pipeline_id, const std::string& update_id,
                            UpdateState state, std::string_view error, bool sync) {
  Event e;
  e.origin.pipeline_id = pipeline_id;
  e.origin.update_id = update_id;
  e.event_type = "update_progress";
  json progress = {{"state", UpdateStateName(state)}};
  e.message = "Update " + update_id.substr(0, 6) + " is " + std::string(UpdateStateName(state)) + ".";
  if (!error.empty()) {
    e.level = EventLevel::kError;
    progress["error"] = error;
    e.message = "Update " + update_id.substr(0, 6) + " failed: " + std::string(error);
  }
  e.details_json = JsonText(json{{"update_progress", progress}});
  return store->events()->Append(&e, sync);
}

std::string NewUpdateId() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  const uint64_t high = rng();
  return FormatUuid4(high, rng());
}

std::string_view UpdateStateName(UpdateState state) {
  switch (state) {
    case UpdateState::kQueued:
      return "QUEUED";
    case UpdateState::kInitializing:
      return "INITIALIZING";
    case UpdateState::kResetting:
      return "RESETTING";
    case UpdateState::kSettingUpTables:
      return "SETTING_UP_TABLES";
    case UpdateState::kRunning:
      return "RUNNING";
    case UpdateState::kStopping:
      return "STOPPING";
    case UpdateState::kCompleted:
      return "COMPLETED";
    case UpdateState::kFailed:
      return "FAILED";
    case UpdateState::kCanceled:
      return "CANCELED";
  }
  return "?";
}

namespace stream_internal {

std::string Checkpoint::Encode() const {
  json j = {{"fingerprint", fingerprint}, {"offset", offset}, {"sides", sides}, {"batch_id", batch_id}};
  json w = json::object();
  for (const auto& [step, micros] : watermarks) w[std::to_string(step)] = micros;
  j["watermarks"] = w;
  if (!origin.empty()) j["origin"] = origin;
  if (!once_done.empty()) j["once_done"] = once_done;
  if (version != 0) j["version"] = version;
  if (!definition.empty()) j["definition"] = definition;
  return JsonText(j);
}

Status Checkpoint::Decode(const std::string& flow, const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("checkpoint of flow " + flow + " is not JSON");
  try {
    fingerprint = j.at("fingerprint").get<std::string>();
    offset = j.at("offset").get<std::string>();
    sides = j.at("sides").get<std::vector<std::string>>();
    batch_id = j.at("batch_id").get<uint64_t>();
    for (const auto& [key, micros] : j.at("watermarks").items()) {
      size_t step = 0;
      SPOOL_RETURN_IF_ERROR(ParseWatermarkStep(flow, key, &step));
      watermarks[step] = micros.get<int64_t>();
    }
    if (j.contains("origin")) origin = j.at("origin").get<std::string>();
    if (j.contains("once_done")) once_done = j.at("once_done").get<std::string>();
    if (j.contains("version")) version = j.at("version").get<uint64_t>();
    if (j.contains("definition")) definition = j.at("definition").get<std::string>();
  } catch (const std::exception& e) {
    return Status::Corruption("checkpoint of flow " + flow + ": " + e.what());
  }
  return Status::OK();
}

std::string DescribeColumns(const Schema& s) {
  std::string out;
  for (const Column& c : s.columns()) {
    out += (out.empty() ? "" : ", ") + c.name + " " + std::string(ColumnTypeName(c.type)) +
           (c.nullable ? "" : " not null");
  }
  std::string key;
  for (size_t k : s.key_columns()) key += (key.empty() ? "" : ", ") + s.columns()[k].name;
  return "(" + out + ")" + (key.empty() ? "" : " key (" + key + ")");
}

}  // namespace stream_internal

Status Pipeline::Impl::Event(EventLevel level, const std::string& type, const std::string& message, const json& details,
                             const std::string& update_id, const CompiledFlow* flow, bool progress) {
  spool::Event e;
  e.origin.pipeline_id = pipeline_id;
  e.origin.update_id = update_id;
  if (flow != nullptr) {
    e.origin.flow_name = flow->spec->name;
    e.origin.dataset_name = flow->spec->target;
  }
  e.level = level;
  e.event_type = type;
  e.message = message;
  e.details_json = JsonText(details);
  const bool sync = !progress || ++unsynced_events >= kMaxUnsyncedEvents;
  SPOOL_RETURN_IF_ERROR(store->events()->Append(&e, sync));
  if (sync) unsynced_events = 0;
  return Status::OK();
}

Status Pipeline::Impl::SyncEvents() {
  if (unsynced_events == 0) return Status::OK();
  SPOOL_RETURN_IF_ERROR(store->events()->Sync());
  unsynced_events = 0;
  return Status::OK();
}

Pipeline::Pipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pipeline::~Pipeline() = default;
const PipelineSpec& Pipeline::spec() const { return impl_->spec; }
const std::string& Pipeline::id() const { return impl_->pipeline_id; }

Status Pipeline::CheckSourcesRetain(uint64_t version, const std::vector<std::string>& flows,
                                    const std::map<std::string, std::string>& known) const {
  Impl& p = *impl_;
  for (CompiledFlow& flow : p.flows) {
    if (!flows.empty() && std::find(flows.begin(), flows.end(), flow.spec->name) == flows.end()) continue;
    std::string data;
    bool found = false;
    if (auto it = known.find(flow.spec->name); it != known.end()) {
      data = it->second;
      found = true;
    } else {
      SPOOL_RETURN_IF_ERROR(p.store->GetCheckpointAt(flow.spec->name, version, &data, &found));
    }
    Checkpoint cp;
    if (found) SPOOL_RETURN_IF_ERROR(cp.Decode(flow.spec->name, data));
    StateTables tables;
    for (const auto& [id, schema] : flow.state[0]) tables.ids.push_back(id);
    Status s = flow.source->CheckRetained(p.store, version, cp.offset, tables);
    if (!s.ok()) return Status::InvalidArgument("flow '" + flow.spec->name + "': " + std::string(s.message()));
  }
  return Status::OK();
}

std::vector<PipelineDataset> Pipeline::Datasets() const {
  const Impl& p = *impl_;
  std::vector<PipelineDataset> out;
  std::vector<bool> listed(p.datasets.size(), false);
  auto add = [&](size_t d) {
    if (listed[d]) return;
    listed[d] = true;
    const CompiledDataset& dataset = p.datasets[d];
    PipelineDataset info{dataset.id, dataset.spec.kind, {}, {}, {}, false};
    for (size_t f : dataset.flows) {
      const CompiledFlow& flow = p.flows[f];
      info.flows.push_back(flow.spec->name);
      info.external_source = info.external_source || flow.spec->source.kind != SourceKind::kDataset;
      for (size_t up : flow.upstream) {
        const TableId& id = p.flows[up].target;
        if (std::find(info.upstream.begin(), info.upstream.end(), id) == info.upstream.end())
          info.upstream.push_back(id);
      }
      for (const auto& component : flow.state) {
        for (const auto& [id, schema] : component) info.state_tables.push_back(id);
      }
    }
    out.push_back(std::move(info));
  };
  for (size_t f : p.order) add(p.flows[f].target_dataset);
  for (size_t d = 0; d < p.datasets.size(); ++d) add(d);  // datasets no flow writes
  return out;
}

Status Pipeline::Open(Store* store, PipelineSpec spec, std::unique_ptr<Pipeline>* pipeline,
                      const PipelineOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->store = store;
  impl->env = options.env;
  impl->spec = std::move(spec);
  SPOOL_RETURN_IF_ERROR(impl->Compile());
  Status s = GetPipelineDefinition(store, nullptr, &impl->pipeline_id, &impl->definition_number);
  if (!s.ok() && !s.IsNotFound()) return s;
  pipeline->reset(new Pipeline(std::move(impl)));
  return Status::OK();
}

void Pipeline::Stop() {
  std::lock_guard lock(impl_->mu);
  impl_->stop = true;
  impl_->wake.notify_all();
}

Status Pipeline::Validate(const UpdateOptions& options, std::vector<std::string>* warnings) {
  Impl::RefreshPlan refresh;
  SPOOL_RETURN_IF_ERROR(impl_->PlanRefresh(options, &refresh));
  Impl::Checkpoints checkpoints;
  SPOOL_RETURN_IF_ERROR(impl_->LoadCheckpoints(refresh, &checkpoints));
  const CompiledFlow* failing = nullptr;
  SPOOL_RETURN_IF_ERROR(impl_->CheckDefinition(refresh, checkpoints, &failing));
  return impl_->RefreshLosses(refresh, warnings);
}

// --- the recorded definition ------------------------------------------------

namespace {

struct RecordedDefinition {
  std::string pipeline_id;
  int64_t number = 0;  // 1 for the first definition, 2 for the next, …
  std::string spec;
};

Status ReadDefinition(Store* store, RecordedDefinition* out) {
  TableId table;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(kDefinitionTable, &table));
  std::optional<Row> row;
  Status s = store->Read(table, {}, [&](const Row& r) {
    row = r;
    return false;
  });
  if (s.IsNotFound() || (s.ok() && !row)) {
    return Status::NotFound("no pipeline is defined in this store; set one with `spool pipeline set`");
  }
  SPOOL_RETURN_IF_ERROR(s);
  if (row->size() != 4 || !std::holds_alternative<std::string>((*row)[0]) ||
      !std::holds_alternative<int64_t>((*row)[1]) || !std::holds_alternative<std::string>((*row)[3])) {
    return Status::Corruption(std::string(kDefinitionTable) + " does not hold a pipeline definition");
  }
  *out = RecordedDefinition{std::get<std::string>((*row)[0]), std::get<int64_t>((*row)[1]),
                            std::get<std::string>((*row)[3])};
  return Status::OK();
}

}  // namespace

Status SetPipelineDefinition(Store* store, const PipelineSpec& spec, std::string* pipeline_id, CommitResult* result) {
  for (size_t f = 0; f < spec.flows.size(); ++f) {
    for (size_t i = 0; i < spec.flows[f].steps.size(); ++i) {
      if (std::holds_alternative<MapStep>(spec.flows[f].steps[i])) {
        return Status::InvalidArgument("flows[" + std::to_string(f) + "] \"" + spec.flows[f].name + "\".steps[" +
                                       std::to_string(i) +
                                       "]: a user operator is C++ code, which a recorded "
                                       "definition cannot hold; run such a pipeline with Pipeline::Open");
      }
    }
  }
  std::unique_ptr<Pipeline> compiled;
  SPOOL_RETURN_IF_ERROR(Pipeline::Open(store, spec, &compiled));
  RecordedDefinition previous;
  Status s = ReadDefinition(store, &previous);
  if (!s.ok() && !s.IsNotFound()) return s;
  const std::string id = s.ok() ? previous.pipeline_id : NewUpdateId();
  TableId table;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(kDefinitionTable, &table));
  Transaction txn("SET PIPELINE",
                  JsonText(json{{"pipeline_id", id}, {"name", spec.name}, {"number", previous.number + 1}}));
  txn.AllowSpoolTables();
  if (s.IsNotFound()) {
    Schema schema;
    SPOOL_RETURN_IF_ERROR(Schema::Make({{"pipeline_id", ColumnType::kString, false},
                                        {"number", ColumnType::kInt64, false},
                                        {"name", ColumnType::kString, true},
                                        {"spec", ColumnType::kString, false}},
                                       {"pipeline_id"}, &schema));
    txn.CreateTable(table, TableKind::kInternalState, schema);
  }
  txn.Write(table, {id, previous.number + 1, spec.name, PipelineSpecToJson(spec)});
  SPOOL_RETURN_IF_ERROR(store->Commit(txn, result));
  if (pipeline_id != nullptr) *pipeline_id = id;
  return Status::OK();
}

Status GetPipelineDefinition(Store* store, PipelineSpec* spec, std::string* pipeline_id, int64_t* number) {
  RecordedDefinition recorded;
  SPOOL_RETURN_IF_ERROR(ReadDefinition(store, &recorded));
  if (pipeline_id != nullptr) *pipeline_id = recorded.pipeline_id;
  if (number != nullptr) *number = recorded.number;
  if (spec == nullptr) return Status::OK();
  Status s = ParsePipelineSpec(recorded.spec, spec);
  if (!s.ok())
    return Status::Corruption("the recorded pipeline definition does not parse: " + std::string(s.message()));
  return Status::OK();
}

}  // namespace spool
