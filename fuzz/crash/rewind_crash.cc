#include "rewind_crash.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "pipeline_crash.h"
#include "spool/rewind/rewind.h"
#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"

namespace spool::crashtest {
namespace {

constexpr uint64_t kBatchesBeforePoint = 5;
// By timestamp: the clock at the point's commits, then a minute later for
// the rest; the rewind asks for the time half a minute after the point.
constexpr uint64_t kPointTimeUs = 1790671000ull * 1000000;
constexpr uint64_t kMinuteUs = 60ull * 1000000;

bool IsSubset(RewindScope scope) { return scope == RewindScope::kSubset || scope == RewindScope::kSubsetTimestamp; }
bool ByTimestamp(RewindScope scope) {
  return scope == RewindScope::kTimestamp || scope == RewindScope::kSubsetTimestamp;
}
bool IsRefresh(RewindScope scope) {
  return scope == RewindScope::kFullRefresh || scope == RewindScope::kCheckpointReset ||
         scope == RewindScope::kFullRefreshRedefined;
}
// The definition the request runs, and every update after it.
bool Redefined(RewindScope scope) { return scope == RewindScope::kFullRefreshRedefined; }
// The operations that cut the log (the store goes back to the point).
bool IsCut(RewindScope scope) { return scope == RewindScope::kWholePipeline || scope == RewindScope::kTimestamp; }

// The store before the rewind: part of the input, a rewind point, the rest.
struct Setup {
  RewindPoint point;
  LogPosition newest;  // before the rewind
  uint64_t epoch = 0;  // the log's current epoch before the rewind
};

bool Rewind(RewindScope scope, Env* env, const std::string& state_dir, const RewindPoint& point, std::string* error);

// Whole pipeline: the point in the middle of the first update. Some
// datasets: after the first update, before more orders arrive, so that
// orders' downstream has read some of what the rewind takes back. Undo:
// the whole pipeline rewound to its point, uninterrupted.
Status Prepare(RewindScope scope, MemEnv* mem, const std::string& state_dir, Setup* setup) {
  if (scope == RewindScope::kUndo) {
    SPOOL_RETURN_IF_ERROR(Prepare(RewindScope::kWholePipeline, mem, state_dir, setup));
    std::string error;
    if (!Rewind(RewindScope::kWholePipeline, mem, state_dir, setup->point, &error)) return Status::Aborted(error);
    std::unique_ptr<Store> store;
    SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(mem, state_dir), kCrashStoreDir, &store));
    setup->newest = store->log()->Newest();
    setup->epoch = store->log()->CurrentEpoch();
    return Status::OK();
  }
  SPOOL_RETURN_IF_ERROR(WriteCrashInputs(mem));
  std::string error;
  if (IsRefresh(scope)) {  // the whole input, then more, which the request's update reads
    if (!RunCrashUpdate(mem, state_dir, &error)) return Status::Aborted(error);
    SPOOL_RETURN_IF_ERROR(WriteMoreCrashInputs(mem));
    std::unique_ptr<Store> store;
    SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(mem, state_dir), kCrashStoreDir, &store));
    setup->newest = store->log()->Newest();
    setup->epoch = store->log()->CurrentEpoch();
    return Status::OK();
  }
  if (ByTimestamp(scope)) mem->SetNowMicros(kPointTimeUs);
  const uint64_t batches = IsCut(scope) ? kBatchesBeforePoint : 0;
  if (!RunCrashUpdate(mem, state_dir, &error, batches)) return Status::Aborted(error);
  {
    std::unique_ptr<Store> store;
    SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(mem, state_dir), kCrashStoreDir, &store));
    std::unique_ptr<Pipeline> pipeline;
    SPOOL_RETURN_IF_ERROR(Pipeline::Open(store.get(), CrashPipelineSpec(), &pipeline, PipelineOptions{mem}));
    SPOOL_RETURN_IF_ERROR(RecordRewindPoint(store.get(), *pipeline, "before the rest", false, &setup->point));
  }
  if (IsSubset(scope)) SPOOL_RETURN_IF_ERROR(WriteMoreCrashInputs(mem));
  if (ByTimestamp(scope)) mem->SetNowMicros(kPointTimeUs + kMinuteUs);
  if (!RunCrashUpdate(mem, state_dir, &error)) return Status::Aborted(error);
  std::unique_ptr<Store> store;
  SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(mem, state_dir), kCrashStoreDir, &store));
  setup->newest = store->log()->Newest();
  setup->epoch = store->log()->CurrentEpoch();
  return Status::OK();
}

// Opens the store and rewinds it to the point (undoes the rewind); false
// when the process died.
bool Rewind(RewindScope scope, Env* env, const std::string& state_dir, const RewindPoint& point, std::string* error) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store);
  std::unique_ptr<Pipeline> pipeline;
  if (s.ok()) s = Pipeline::Open(store.get(), CrashPipelineSpec(Redefined(scope)), &pipeline, PipelineOptions{env});
  if (scope == RewindScope::kUndo) {
    UndoPlan plan;
    if (s.ok()) s = PlanUndo(store.get(), &plan);
    if (!s.ok() && s.ToString().find("undone already") != std::string::npos) return true;  // done before
    RewindRun run{"undo-update", UpdateCause::kApiCall, /*dry_run=*/false};
    if (s.ok()) s = ExecuteUndo(store.get(), *pipeline, plan, &run);
    if (!s.ok()) *error = s.ToString();
    return s.ok();
  }
  if (IsRefresh(scope)) {
    UpdateRequest request;
    if (scope == RewindScope::kCheckpointReset) request.reset_checkpoint_selection = {"revenue"};
    else request.full_refresh = true;
    if (s.ok()) s = RunCrashRequest(store.get(), pipeline.get(), request);
    if (!s.ok()) *error = s.ToString();
    return s.ok();
  }
  RewindSpec spec;
  if (ByTimestamp(scope)) {
    spec.rewind_timestamp = FormatTimestampMicros(static_cast<int64_t>(kPointTimeUs + kMinuteUs / 2)).substr(0, 19);
  } else {
    spec.rewind_point_id = point.id;
  }
  if (IsSubset(scope)) {
    spec.datasets = std::vector<RewindDataset>{{"main.s.orders", true, true}};  // events and latest stay
  }
  RewindPlan plan;
  if (s.ok()) s = PlanRewind(store.get(), *pipeline, spec, &plan);
  RewindRun run{"rewind-update", UpdateCause::kApiCall, /*dry_run=*/false};
  if (s.ok()) s = ExecuteRewind(store.get(), *pipeline, plan, &run);
  if (!s.ok()) *error = s.ToString();
  return s.ok();
}

// A scope's store before the rewind, prepared once: each case starts from
// a copy of it (its log's files and its state directory), which is what
// Prepare would make again, since it is deterministic.
struct Prepared {
  Status status;
  std::string dir;  // the state directory is dir + "/state"
  MemEnv mem;
  Setup setup;

  ~Prepared() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
};

const Prepared& PreparedStore(RewindScope scope) {
  static std::mutex mu;
  static std::map<RewindScope, std::unique_ptr<Prepared>> prepared;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Prepared>& p = prepared[scope];
  if (p == nullptr) {
    p = std::make_unique<Prepared>();
    p->dir = TempCrashDir();
    p->status = p->dir.empty() ? Status::IOError("no temporary directory")
                               : Prepare(scope, &p->mem, p->dir + "/state", &p->setup);
  }
  return *p;
}

// Makes `mem` and `state_dir` (which must not exist) the store before the
// rewind, as Prepare does.
Status CopyPrepared(RewindScope scope, MemEnv* mem, const std::string& state_dir, Setup* setup) {
  const Prepared& p = PreparedStore(scope);
  SPOOL_RETURN_IF_ERROR(p.status);
  std::error_code ec;
  std::filesystem::copy(p.dir + "/state", state_dir, std::filesystem::copy_options::recursive, ec);
  if (ec) return Status::IOError("copy the prepared state directory to " + state_dir + ": " + ec.message());
  mem->CopyFrom(p.mem);
  *setup = p.setup;
  return Status::OK();
}

// The tables before the rewind (a run without any rewind), after an
// uninterrupted rewind, and after its replay (which must equal the first).
// For an undo: before it (rewound), after it and after the next update
// (both the run without any rewind).
struct References {
  CrashTables before;
  CrashTables at_point;
  CrashTables replayed;
};

References MakeReferences(RewindScope scope) {
  References r;
  const std::string dir = TempCrashDir();
  MemEnv mem;
  Setup setup;
  std::string error;
  Status s =
      dir.empty() ? Status::IOError("no temporary directory") : CopyPrepared(scope, &mem, dir + "/state", &setup);
  if (s.ok()) s = ReadCrashTables(&mem, dir + "/state", &r.before);
  if (s.ok() && !Rewind(scope, &mem, dir + "/state", setup.point, &error)) s = Status::Aborted(error);
  if (s.ok()) s = ReadCrashTables(&mem, dir + "/state", &r.at_point);
  if (s.ok() && !RunCrashUpdate(&mem, dir + "/state", &error, 0, Redefined(scope))) s = Status::Aborted(error);
  if (s.ok()) s = ReadCrashTables(&mem, dir + "/state", &r.replayed);
  // The replay gives the tables of a run without the rewind; after a
  // refresh or reset, those the request gave.
  const CrashTables& unrewound = scope == RewindScope::kUndo || IsRefresh(scope) ? r.at_point : r.before;
  if (s.ok() && r.replayed != unrewound) s = Status::Aborted("the replay differs from the run without a rewind");
  if (s.ok() && r.at_point == r.before) s = Status::Aborted("the rewind changed no table");
  if (!s.ok()) {
    std::fprintf(stderr, "rewind crash setup: %s\n", s.ToString().c_str());
    r = References{};
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return r;
}

const References& Expected(RewindScope scope) {
  static const std::map<RewindScope, References> references = [] {
    std::map<RewindScope, References> all;
    for (RewindScope s : kAllRewindScopes) all[s] = MakeReferences(s);
    return all;
  }();
  return references.at(scope);
}

void CompareTables(const std::string& invariant, const CrashTables& want, const CrashTables& got, StateResult* result) {
  for (const auto& [name, rows] : want) {
    auto it = got.find(name);
    const std::vector<Row> none;
    const std::vector<Row>& have = it == got.end() ? none : it->second;
    if (have != rows) result->violations.push_back({invariant, name + ": " + ClassifyRows(rows, have)});
  }
}

// Reopens the store after a crash (a recovery); null, with the violation,
// when it cannot.
std::unique_ptr<Store> Recover(Env* env, const std::string& state_dir, StateResult* result) {
  std::unique_ptr<Store> store;
  const Status s = Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store);
  ++result->recoveries;
  if (!s.ok()) result->violations.push_back({"recoverable", s.ToString()});
  return store;
}

// After a crash of an undo: not begun (the rewound tables), done (the
// tables before the rewind), or in between and reported as an incomplete
// rewind.
void CheckAfterUndoCrash(Env* env, const std::string& state_dir, StateResult* result) {
  std::unique_ptr<Store> store = Recover(env, state_dir, result);
  if (store == nullptr) return;
  Status s;
  std::optional<IncompleteRewind> incomplete;
  if (!(s = FindIncompleteRewind(store.get(), &incomplete)).ok()) {
    result->violations.push_back({"guard", s.ToString()});
    return;
  }
  bool started = false, completed = false;
  for (const char* type : {"rewind_started", "rewind_completed"}) {
    EventQuery query;
    query.event_type = type;
    std::vector<Event> events;
    if (!(s = store->events()->Query(query, &events)).ok()) result->violations.push_back({"guard", s.ToString()});
    for (const Event& e : events) {
      if (e.details_json.find("\"undo\"") == std::string::npos) continue;
      (type == std::string("rewind_started") ? started : completed) = true;
    }
  }
  if (started && !completed) {
    if (!incomplete) result->violations.push_back({"guard", "an undo started, did not complete, and is not reported"});
    return;  // in between: only the guard holds
  }
  if (incomplete) result->violations.push_back({"guard", "an incomplete rewind is reported but no undo is under way"});
  CrashTables tables;
  if ((s = ReadCrashTables(store.get(), &tables)).ok()) {
    const References& expected = Expected(RewindScope::kUndo);
    CompareTables(completed ? "atomic: undone" : "atomic: still rewound",
                  completed ? expected.at_point : expected.before, tables, result);
  } else {
    result->violations.push_back({"atomic", s.ToString()});
  }
}

// After the crash: the rewind is atomic and the guard tells the truth.
void CheckAfterCrash(RewindScope scope, Env* env, const std::string& state_dir, const Setup& setup,
                     StateResult* result) {
  std::unique_ptr<Store> store = Recover(env, state_dir, result);
  if (store == nullptr) return;
  Status s;
  const References& expected = Expected(scope);
  const LogPosition newest = store->log()->Newest();
  const bool cut = store->log()->CurrentEpoch() > setup.epoch;
  // Whether the rewind took effect: the cut, or the RESTORE commit.
  bool rewound = cut;
  if (IsCut(scope)) {
    // The cut and its RESTORE commit (at the version after every one used
    // before) come together.
    LogEntry restore;
    const bool whole = newest.version == setup.newest.version + 1 &&
                       store->log()->Read(newest.version, &restore).ok() && restore.operation == "RESTORE";
    if (cut ? !whole : !(newest == setup.newest)) {
      result->violations.push_back(
          {"atomic", "newest version " + std::to_string(newest.version) + " in epoch " +
                         std::to_string(store->log()->CurrentEpoch()) +
                         ": neither the store before the rewind nor the cut with its RESTORE"});
    }
  } else {
    rewound = newest.version == setup.newest.version + 1;
    if (cut || !(rewound || newest == setup.newest)) {
      result->violations.push_back({"atomic", "newest version " + std::to_string(newest.version) + " in epoch " +
                                                  std::to_string(store->log()->CurrentEpoch()) +
                                                  ": neither the store before the rewind nor one RESTORE after it"});
    }
  }
  {
    CrashTables tables;
    if ((s = ReadCrashTables(store.get(), &tables)).ok()) {
      CompareTables(rewound ? "atomic: restored" : "atomic: untouched", rewound ? expected.at_point : expected.before,
                    tables, result);
    } else {
      result->violations.push_back({"atomic", s.ToString()});
    }
  }
  std::optional<IncompleteRewind> incomplete;
  if (!(s = FindIncompleteRewind(store.get(), &incomplete)).ok()) {
    result->violations.push_back({"guard", s.ToString()});
    return;
  }
  std::vector<Event> started;
  EventQuery query;
  query.event_type = "rewind_started";
  if (!(s = store->events()->Query(query, &started)).ok()) result->violations.push_back({"guard", s.ToString()});
  if (!started.empty() && !incomplete) {  // completed: the store must be at the point
    if (!rewound) result->violations.push_back({"guard", "rewind_completed was written but the store was not rewound"});
    CrashTables tables;
    if ((s = ReadCrashTables(store.get(), &tables)).ok())
      CompareTables("completed at the point", expected.at_point, tables, result);
  }
  if (rewound && started.empty())
    result->violations.push_back({"guard", "the store was rewound without rewind_started"});
}

// What a user does after the crash: a rewind or undo is run again; a
// refresh or reset is run again if its RESET commit is not in the log, and
// otherwise the pipeline is updated (running the reset twice would reset
// twice).
bool CarryOn(RewindScope scope, Env* env, const std::string& state_dir, const Setup& setup, std::string* error) {
  if (IsRefresh(scope)) {
    std::unique_ptr<Store> store;
    Status s = Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store);
    bool reset = false;
    if (s.ok()) s = ResetCommittedSince(store.get(), setup.newest.version, &reset);
    store.reset();
    if (!s.ok()) {
      *error = s.ToString();
      return false;
    }
    if (reset) return RunCrashUpdate(env, state_dir, error, 0, Redefined(scope));
  }
  return Rewind(scope, env, state_dir, setup.point, error);
}

}  // namespace

StateResult CheckRewindState(RewindScope scope, const CrashState& state) {
  StateResult result;
  const References& expected = Expected(scope);
  if (expected.at_point.empty() || expected.replayed.empty()) {
    result.violations.push_back({"setup", "the uninterrupted rewind and replay failed"});
    return result;
  }
  const std::string dir = TempCrashDir();
  const std::string state_dir = dir + "/state";
  MemEnv mem;
  Setup setup;
  if (Status s = dir.empty() ? Status::IOError("no temporary directory") : CopyPrepared(scope, &mem, state_dir, &setup);
      !s.ok()) {
    result.violations.push_back({"setup", s.ToString()});
    return result;
  }
  FaultEnv env(&mem);
  if (state.crash_call != 0) env.CrashAtCall(state.crash_call);
  std::string error;
  const bool finished = Rewind(scope, &env, state_dir, setup.point, &error);
  result.workload_calls = env.io_calls();
  result.reached = state.crash_call == 0 || env.crashed();
  if (state.crash_call == 0 && !finished)
    result.violations.push_back({"workload", "the crash-free rewind failed: " + error});
  env.SimulateCrash(state.mode, state.seed);
  if (result.reached) {
    if (IsRefresh(scope)) {
      // An update of many commits: only that it recovers, here; the rest
      // is what carrying on gives.
      Recover(&env, state_dir, &result);
    } else if (scope == RewindScope::kUndo) {
      CheckAfterUndoCrash(&env, state_dir, &result);
    } else {
      CheckAfterCrash(scope, &env, state_dir, setup, &result);
    }
    // The retried rewind, crashed again when asked, then retried once more.
    if (state.recovery_crash_call != 0) {
      env.CrashAtCall(env.io_calls() + state.recovery_crash_call);
      (void)CarryOn(scope, &env, state_dir, setup, &error);
      if (!env.crashed()) result.reached = false;
      else env.SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
    }
  }
  if (result.reached) {
    ++result.recoveries;
    CrashTables tables;
    std::optional<IncompleteRewind> incomplete;
    if (!CarryOn(scope, &env, state_dir, setup, &error)) {
      result.violations.push_back({"converges", "carrying on failed: " + error});
    } else if (Status s = ReadCrashTables(&env, state_dir, &tables); !s.ok()) {
      result.violations.push_back({"converges", s.ToString()});
    } else {
      CompareTables("converges", expected.at_point, tables, &result);
      std::unique_ptr<Store> store;
      if (Store::Open(CrashStoreOptions(&env, state_dir), kCrashStoreDir, &store).ok() &&
          FindIncompleteRewind(store.get(), &incomplete).ok() && incomplete) {
        result.violations.push_back({"converges", "the retried rewind left an incomplete rewind"});
      }
    }
    if (!RunCrashUpdate(&env, state_dir, &error, 0, Redefined(scope))) {
      result.violations.push_back({"replay", "the update after the rewind failed: " + error});
    } else if (Status s = ReadCrashTables(&env, state_dir, &tables); !s.ok()) {
      result.violations.push_back({"replay", s.ToString()});
    } else {
      CompareTables("replay", expected.replayed, tables, &result);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}

const char* RewindScopeName(RewindScope scope) {
  switch (scope) {
    case RewindScope::kWholePipeline:
      return "rewind";
    case RewindScope::kSubset:
      return "rewind-subset";
    case RewindScope::kUndo:
      return "rewind-undo";
    case RewindScope::kTimestamp:
      return "rewind-timestamp";
    case RewindScope::kSubsetTimestamp:
      return "rewind-subset-timestamp";
    case RewindScope::kFullRefresh:
      return "full-refresh";
    case RewindScope::kCheckpointReset:
      return "checkpoint-reset";
    case RewindScope::kFullRefreshRedefined:
      return "full-refresh-redefined";
  }
  return "?";
}

CrashFigures EnumerateRewindCrashes(RewindScope scope, bool crash_recovery) {
  return EnumerateCheckedCrashes(
      RewindScopeName(scope), [scope](const CrashState& state) { return CheckRewindState(scope, state); },
      [&](uint64_t, CrashMode mode) { return crash_recovery && mode == CrashMode::kPowerLoss; }, 8);
}

CrashFigures RunRewindCampaign(RewindScope scope, uint64_t first_seed, uint64_t cycles) {
  return RunCheckedCampaign(
      RewindScopeName(scope), [scope](const CrashState& state) { return CheckRewindState(scope, state); }, first_seed,
      cycles, 0x2e71d, 3, 40);
}

}  // namespace spool::crashtest
