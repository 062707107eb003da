#include "pipeline_crash.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "spool/rewind/updates.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/topic.h"
#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"

namespace spool::crashtest {

constexpr char kFilesDir[] = "/in";
constexpr char kTopicDir[] = "/topic";

const char* const kDatasets[] = {"main.s.orders",   "main.s.events", "main.s.revenue", "main.s.unique",
                                 "main.s.enriched", "main.s.latest", "main.s.per_key"};

const char* const kCountries[] = {"de", "fr", "it"};

// Files orders-<first>.jsonl onwards, five orders each.
Status WriteOrderFiles(Env* env, int first, int count) {
  int id = first * 5;
  for (int f = first; f < first + count; ++f) {
    std::string text;
    for (int line = 0; line < 5; ++line, ++id) {
      const int amount = (id * 7) % 11 - 2;       // some filtered out
      const int dup = id % 4 == 3 ? id - 1 : id;  // duplicates for the dedup
      text += "{\"id\": " + std::to_string(dup) + ", \"country\": \"" + kCountries[id % 3] +
              "\", \"amount\": " + std::to_string(amount) + "}\n";
    }
    std::unique_ptr<File> file;
    SPOOL_RETURN_IF_ERROR(
        env->OpenFile(std::string(kFilesDir) + "/orders-" + std::to_string(f) + ".jsonl", OpenMode::kTruncate, &file));
    SPOOL_RETURN_IF_ERROR(file->Write(0, text));
    SPOOL_RETURN_IF_ERROR(file->Sync());
  }
  return Status::OK();
}

Status WriteCrashInputs(Env* env) {
  SPOOL_RETURN_IF_ERROR(env->CreateDir(kFilesDir));
  SPOOL_RETURN_IF_ERROR(WriteOrderFiles(env, 0, 5));
  SPOOL_RETURN_IF_ERROR(Topic::Create(env, kTopicDir, TopicConfig{}));
  std::unique_ptr<Topic> topic;
  SPOOL_RETURN_IF_ERROR(Topic::Open(env, kTopicDir, &topic));
  for (int batch = 0; batch < 3; ++batch) {
    std::vector<std::string> values;
    for (int i = 0; i < 9; ++i) {
      const int n = batch * 9 + i;
      // Change events for 4 keys, sequences out of order, some deletes.
      values.push_back("{\"key\": " + std::to_string(n % 4) + ", \"seq\": " + std::to_string((n * 5) % 13) +
                       ", \"country\": \"" + kCountries[n % 3] + "\", \"op\": \"" + (n % 7 == 6 ? "DELETE" : "UPSERT") +
                       "\"}");
    }
    std::vector<TopicWrite> writes;
    for (const std::string& v : values) writes.push_back({"", v});
    TopicProduced produced;
    SPOOL_RETURN_IF_ERROR(topic->Produce(writes, &produced));
  }
  return Status::OK();
}

PipelineSpec CrashPipelineSpec(bool redefined) {
  PipelineBuilder b("crash");
  b.StreamingTable("main.s.orders");
  b.StreamingTable("main.s.events");
  b.StreamingTable("main.s.revenue");
  b.StreamingTable("main.s.unique");
  b.StreamingTable("main.s.enriched");
  b.StreamingTable("main.s.latest");
  b.StreamingTable("main.s.per_key");
  b.Flow("ingest")
      .FromFiles(kFilesDir, {{"id", ColumnType::kInt64, false},
                             {"country", ColumnType::kString, false},
                             {"amount", ColumnType::kInt64, true}})
      .Filter("amount > 0")
      .Into("main.s.orders");
  const std::vector<Column> event_columns = {{"key", ColumnType::kInt64, false},
                                             {"seq", ColumnType::kInt64, false},
                                             {"country", ColumnType::kString, true},
                                             {"op", ColumnType::kString, true}};
  b.Flow("events").FromTopic(kTopicDir, event_columns).MaxBatchRows(7).Into("main.s.events");
  // Reads and aggregates its next batch while one commits (its state ahead
  // of the store's until the commit lands).
  b.Flow("per_key")
      .FromTopic(kTopicDir, event_columns)
      .Aggregate({"key"}, {{"events", AggregateFn::kCount, ""}, {"seq_sum", AggregateFn::kSum, "seq"}})
      .Into("main.s.per_key");
  b.Flow("revenue")
      .FromDataset("main.s.orders")
      .Aggregate({"country"}, {{"orders", AggregateFn::kCount, ""},
                               {"revenue", redefined ? AggregateFn::kAvg : AggregateFn::kSum, "amount"}})
      .Into("main.s.revenue");
  b.Flow("unique").FromDataset("main.s.orders").Dedup({"id"}).Into("main.s.unique");
  b.Flow("enriched")
      .FromDataset("main.s.events")
      .Step(LookupJoinStep{"main.s.revenue", {{"country", "country"}}, JoinType::kLeft, {"revenue"}})
      .Into("main.s.enriched");
  AutoCdcStep cdc;
  cdc.keys = {"key"};
  cdc.sequence_by = "seq";
  cdc.apply_as_deletes = "op = 'DELETE'";
  cdc.except_column_list = {"op"};
  b.Flow("latest").FromDataset("main.s.events").Step(cdc).Into("main.s.latest");
  PipelineSpec spec = b.Build();
  spec.flows[0].max_batch_files = 2;
  for (size_t f = 2; f < spec.flows.size(); ++f) spec.flows[f].max_batch_rows = 4;  // per_key and the dataset readers
  return spec;
}

StoreOptions CrashStoreOptions(Env* env, const std::string& state_dir) {
  StoreOptions options;
  options.env = env;
  options.state_dir = state_dir;
  options.snapshot_every_versions = 0;
  options.snapshot_every_bytes = 0;
  options.state_batch_commits = 4;
  options.state_background_apply = false;
  options.log.segment_size_bytes = 64 << 10;
  options.log.preallocate_bytes = 16 << 10;
  return options;
}

bool RunCrashUpdate(Env* env, const std::string& state_dir, std::string* error, uint64_t max_batches, bool redefined) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store);
  std::unique_ptr<Pipeline> pipeline;
  if (s.ok()) s = Pipeline::Open(store.get(), CrashPipelineSpec(redefined), &pipeline, PipelineOptions{env});
  UpdateResult result;
  UpdateOptions options;
  options.max_batches = max_batches;
  if (s.ok()) s = pipeline->Update(options, &result);
  // An update that stopped at max_batches ends CANCELED.
  const bool stopped = max_batches != 0 && result.state == UpdateState::kCanceled;
  if (s.ok() && result.state != UpdateState::kCompleted && !stopped) s = Status::Aborted(result.error);
  if (!s.ok()) *error = s.ToString();
  return s.ok();
}

Status RunCrashRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request) {
  RetryPolicy once;
  once.max_retries = 0;
  UpdateOutcome outcome;
  SPOOL_RETURN_IF_ERROR(RunUpdateRequest(store, pipeline, request, UpdateOptions{}, once, &outcome));
  return outcome.result.state == UpdateState::kCompleted ? Status::OK() : Status::Aborted(outcome.result.error);
}

Status VisitCommitsSince(Store* store, uint64_t after, const std::function<Status(const LogEntry& entry)>& visit) {
  if (store->log()->Newest().version <= after) return Status::OK();
  std::unique_ptr<LogIterator> it;
  SPOOL_RETURN_IF_ERROR(store->log()->NewIterator(after + 1, &it));
  LogEntry entry;
  while (it->Next(&entry)) SPOOL_RETURN_IF_ERROR(visit(entry));
  return it->status();
}

Status ResetCommittedSince(Store* store, uint64_t after, bool* reset) {
  *reset = false;
  return VisitCommitsSince(store, after, [&](const LogEntry& entry) {
    *reset |= entry.operation == "FULL REFRESH" || entry.operation == "RESET CHECKPOINTS";
    return Status::OK();
  });
}

Status ReadCrashTables(Env* env, const std::string& state_dir, CrashTables* tables) {
  std::unique_ptr<Store> store;
  SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store));
  return ReadCrashTables(store.get(), tables);
}

Status ReadCrashTables(Store* store, CrashTables* tables) {
  tables->clear();
  for (const char* name : kDatasets) {
    TableId id;
    SPOOL_RETURN_IF_ERROR(TableId::Parse(name, &id));
    std::vector<Row>& rows = (*tables)[name];
    SPOOL_RETURN_IF_ERROR(store->Read(id, {}, [&](const Row& row) {
      rows.push_back(row);
      return true;
    }));
  }
  return Status::OK();
}

std::string ClassifyRows(const std::vector<Row>& want, const std::vector<Row>& got) {
  std::map<Row, int64_t> count;
  for (const Row& r : want) ++count[r];
  for (const Row& r : got) --count[r];
  int64_t lost = 0, duplicated = 0;
  for (const auto& [row, n] : count) (n > 0 ? lost : duplicated) += std::abs(n);
  if (lost == 0 && duplicated == 0) return "reordered rows";
  return std::to_string(lost) + " lost and " + std::to_string(duplicated) + " duplicated rows (" +
         std::to_string(want.size()) + " expected, " + std::to_string(got.size()) + " read)";
}

namespace {

const CrashTables& ReferenceTables() {
  static const CrashTables tables = [] {
    CrashTables t;
    MemEnv mem;
    std::string state_dir = (std::filesystem::temp_directory_path() / "spool-pipeline-ref-XXXXXX").string();
    if (mkdtemp(state_dir.data()) == nullptr || !WriteCrashInputs(&mem).ok()) return t;
    std::string error;
    if (RunCrashUpdate(&mem, state_dir + "/state", &error)) (void)ReadCrashTables(&mem, state_dir + "/state", &t);
    std::error_code ignored;
    std::filesystem::remove_all(state_dir, ignored);
    return t;
  }();
  return tables;
}

}  // namespace

Status WriteMoreCrashInputs(Env* env) { return WriteOrderFiles(env, 5, 2); }

Status WriteCrashOrderFiles(Env* env, int first, int count) {
  SPOOL_RETURN_IF_ERROR(WriteOrderFiles(env, first, count));
  return env->SyncDir(kFilesDir);
}

std::string TempCrashDir() {
  const std::filesystem::path shm = "/dev/shm";
  std::error_code ec;
  const std::filesystem::path root =
      std::filesystem::is_directory(shm, ec) ? shm : std::filesystem::temp_directory_path();
  std::string dir = (root / "spool-pipeline-crash-XXXXXX").string();
  return mkdtemp(dir.data()) != nullptr ? dir : std::string();
}

StateResult CheckPipelineState(const CrashState& state) {
  StateResult result;
  const CrashTables& reference = ReferenceTables();
  for (const char* name : kDatasets) {
    auto it = reference.find(name);
    if (it == reference.end() || it->second.empty()) {
      result.violations.push_back({"setup", std::string("the crash-free run left ") + name + " empty"});
      return result;
    }
  }
  const std::string dir = TempCrashDir();
  if (dir.empty()) {
    result.violations.push_back({"setup", "cannot make a temporary directory"});
    return result;
  }
  const std::string state_dir = dir + "/state";
  MemEnv mem;
  if (Status s = WriteCrashInputs(&mem); !s.ok()) {
    result.violations.push_back({"setup", s.ToString()});
    return result;
  }
  FaultEnv env(&mem);
  if (state.crash_call != 0) env.CrashAtCall(state.crash_call);
  std::string error;
  const bool finished = RunCrashUpdate(&env, state_dir, &error);
  result.workload_calls = env.io_calls();
  result.reached = state.crash_call == 0 || env.crashed();
  if (state.crash_call == 0 && !finished)
    result.violations.push_back({"workload", "the crash-free run failed: " + error});
  env.SimulateCrash(state.mode, state.seed);
  if (state.recovery_crash_call != 0 && result.reached) {
    env.CrashAtCall(env.io_calls() + state.recovery_crash_call);
    (void)RunCrashUpdate(&env, state_dir, &error);
    if (!env.crashed()) result.reached = false;
    else env.SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
  }
  if (result.reached) {
    // Recover and finish the update, then compare every dataset.
    ++result.recoveries;
    if (!RunCrashUpdate(&env, state_dir, &error)) {
      result.violations.push_back({"exactly-once", "the update after recovery failed: " + error});
    } else {
      CrashTables got;
      if (Status s = ReadCrashTables(&env, state_dir, &got); !s.ok()) {
        result.violations.push_back({"exactly-once", "reading the datasets failed: " + s.ToString()});
      }
      for (const auto& [name, rows] : reference) {
        if (got[name] != rows)
          result.violations.push_back({"exactly-once", name + ": " + ClassifyRows(rows, got[name])});
      }
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}

CrashFigures EnumeratePipelineCrashes(bool crash_recovery) {
  // Recovery crashed again at each of its first calls after every eighth
  // power-loss point, to bound the run.
  return EnumerateCheckedCrashes(
      "pipeline", CheckPipelineState,
      [&](uint64_t call, CrashMode mode) { return crash_recovery && mode == CrashMode::kPowerLoss && call % 8 == 0; },
      6);
}

CrashFigures RunPipelineCampaign(uint64_t first_seed, uint64_t cycles) {
  return RunCheckedCampaign("pipeline", CheckPipelineState, first_seed, cycles, 0x5eed, 5, 20);
}

}  // namespace spool::crashtest
