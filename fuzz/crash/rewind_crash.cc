#include "rewind_crash.h"

#include <cstdio>
#include <filesystem>

#include "pipeline_crash.h"
#include "spool/rewind/rewind.h"
#include "spool/txnlog/fault_env.h"
#include "spool/txnlog/mem_env.h"

namespace spool::crashtest {
namespace {

constexpr uint64_t kBatchesBeforePoint = 5;

// The store before the rewind: part of the input, a rewind point, the rest.
struct Setup {
  RewindPoint point;
  LogPosition newest;    // before the rewind
  uint64_t epoch = 0;    // the log's current epoch before the rewind
};

Status Prepare(MemEnv* mem, const std::string& state_dir, Setup* setup) {
  SPOOL_RETURN_IF_ERROR(WriteCrashInputs(mem));
  std::string error;
  if (!RunCrashUpdate(mem, state_dir, &error, kBatchesBeforePoint)) return Status::Aborted(error);
  {
    std::unique_ptr<Store> store;
    SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(mem, state_dir), kCrashStoreDir, &store));
    std::unique_ptr<Pipeline> pipeline;
    SPOOL_RETURN_IF_ERROR(Pipeline::Open(store.get(), CrashPipelineSpec(), &pipeline, PipelineOptions{mem}));
    SPOOL_RETURN_IF_ERROR(RecordRewindPoint(store.get(), *pipeline, "before the rest", false, &setup->point));
  }
  if (!RunCrashUpdate(mem, state_dir, &error)) return Status::Aborted(error);
  std::unique_ptr<Store> store;
  SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(mem, state_dir), kCrashStoreDir, &store));
  setup->newest = store->log()->Newest();
  setup->epoch = store->log()->CurrentEpoch();
  return Status::OK();
}

// Opens the store and rewinds it to the point; false when the process died.
bool Rewind(Env* env, const std::string& state_dir, const RewindPoint& point, std::string* error) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store);
  std::unique_ptr<Pipeline> pipeline;
  if (s.ok()) s = Pipeline::Open(store.get(), CrashPipelineSpec(), &pipeline, PipelineOptions{env});
  RewindSpec spec;
  spec.rewind_point_id = point.id;
  RewindPlan plan;
  if (s.ok()) s = PlanRewind(store.get(), *pipeline, spec, &plan);
  RewindRun run{"rewind-update", UpdateCause::kApiCall, /*dry_run=*/false};
  if (s.ok()) s = ExecuteRewind(store.get(), *pipeline, plan, &run);
  if (!s.ok()) *error = s.ToString();
  return s.ok();
}

// The tables after an uninterrupted rewind, and after its replay.
struct References {
  CrashTables at_point;
  CrashTables replayed;
};

const References& Expected() {
  static const References references = [] {
    References r;
    const std::string dir = TempCrashDir();
    MemEnv mem;
    Setup setup;
    std::string error;
    Status s = dir.empty() ? Status::IOError("no temporary directory") : Prepare(&mem, dir + "/state", &setup);
    if (s.ok() && !Rewind(&mem, dir + "/state", setup.point, &error)) s = Status::Aborted(error);
    if (s.ok()) s = ReadCrashTables(&mem, dir + "/state", &r.at_point);
    if (s.ok() && !RunCrashUpdate(&mem, dir + "/state", &error)) s = Status::Aborted(error);
    if (s.ok()) s = ReadCrashTables(&mem, dir + "/state", &r.replayed);
    if (!s.ok()) std::fprintf(stderr, "rewind crash setup: %s\n", s.ToString().c_str());
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return r;
  }();
  return references;
}

void CompareTables(const std::string& invariant, const CrashTables& want, const CrashTables& got, StateResult* result) {
  for (const auto& [name, rows] : want) {
    auto it = got.find(name);
    const std::vector<Row> none;
    const std::vector<Row>& have = it == got.end() ? none : it->second;
    if (have != rows) result->violations.push_back({invariant, name + ": " + ClassifyRows(rows, have)});
  }
}

// After the crash: the cut is atomic and the guard tells the truth.
void CheckAfterCrash(Env* env, const std::string& state_dir, const Setup& setup, StateResult* result) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(CrashStoreOptions(env, state_dir), kCrashStoreDir, &store);
  ++result->recoveries;
  if (!s.ok()) {
    result->violations.push_back({"recoverable", s.ToString()});
    return;
  }
  const LogPosition newest = store->log()->Newest();
  const bool cut = store->log()->CurrentEpoch() > setup.epoch;
  if (cut ? newest.version != setup.point.position.version : !(newest == setup.newest)) {
    result->violations.push_back({"atomic cut", "newest version " + std::to_string(newest.version) + " in epoch " +
                                                    std::to_string(store->log()->CurrentEpoch()) +
                                                    ": neither the store before the rewind nor at the point"});
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
    if (!cut) result->violations.push_back({"guard", "rewind_completed was written but the store was not cut"});
    CrashTables tables;
    if ((s = ReadCrashTables(store.get(), &tables)).ok()) CompareTables("completed at the point", Expected().at_point, tables, result);
  }
  if (cut && started.empty()) result->violations.push_back({"guard", "the store was cut without rewind_started"});
}

}  // namespace

StateResult CheckRewindState(const CrashState& state) {
  StateResult result;
  const References& expected = Expected();
  if (expected.at_point.empty() || expected.replayed.empty()) {
    result.violations.push_back({"setup", "the uninterrupted rewind and replay failed"});
    return result;
  }
  const std::string dir = TempCrashDir();
  const std::string state_dir = dir + "/state";
  MemEnv mem;
  Setup setup;
  if (Status s = dir.empty() ? Status::IOError("no temporary directory") : Prepare(&mem, state_dir, &setup); !s.ok()) {
    result.violations.push_back({"setup", s.ToString()});
    return result;
  }
  FaultEnv env(&mem);
  if (state.crash_call != 0) env.CrashAtCall(state.crash_call);
  std::string error;
  const bool finished = Rewind(&env, state_dir, setup.point, &error);
  result.workload_calls = env.io_calls();
  result.reached = state.crash_call == 0 || env.crashed();
  if (state.crash_call == 0 && !finished) result.violations.push_back({"workload", "the crash-free rewind failed: " + error});
  env.SimulateCrash(state.mode, state.seed);
  if (result.reached) {
    CheckAfterCrash(&env, state_dir, setup, &result);
    // The retried rewind, crashed again when asked, then retried once more.
    if (state.recovery_crash_call != 0) {
      env.CrashAtCall(env.io_calls() + state.recovery_crash_call);
      (void)Rewind(&env, state_dir, setup.point, &error);
      if (!env.crashed()) result.reached = false;
      else env.SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
    }
  }
  if (result.reached) {
    ++result.recoveries;
    CrashTables tables;
    std::optional<IncompleteRewind> incomplete;
    if (!Rewind(&env, state_dir, setup.point, &error)) {
      result.violations.push_back({"converges", "rewinding again failed: " + error});
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
    if (!RunCrashUpdate(&env, state_dir, &error)) {
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

CrashFigures EnumerateRewindCrashes(bool crash_recovery) {
  return EnumerateCheckedCrashes(
      "rewind", CheckRewindState,
      [&](uint64_t, CrashMode mode) { return crash_recovery && mode == CrashMode::kPowerLoss; }, 8);
}

CrashFigures RunRewindCampaign(uint64_t first_seed, uint64_t cycles) {
  return RunCheckedCampaign("rewind", CheckRewindState, first_seed, cycles, 0x2e71d, 3, 40);
}

}  // namespace spool::crashtest
