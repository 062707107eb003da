#include "mixed_crash.h"

#include <filesystem>
#include <map>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "commit_codec.h"
#include "pipeline_crash.h"
#include "spool/rewind/rewind.h"
#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"

namespace spool::crashtest {
namespace {

enum class OpKind { kInput, kUpdate, kPoint, kRewind, kSubsetRewind, kUndo, kFullRefresh, kReset, kFinish };

struct Op {
  OpKind kind = OpKind::kUpdate;
  uint64_t max_batches = 0;  // kUpdate: 0 = to the end
  int file = 0;              // kInput: the first of two files
  size_t point = 0;          // kRewind, kSubsetRewind: the n-th point recorded (modulo how many there are)
};

// The sequence of `seed`: operations at random, then the finish: an update
// to the end, or, when the update cannot follow what a subset rewind or
// refresh changed upstream, the full refresh its error asks for.
std::vector<Op> Sequence(uint64_t seed) {
  std::mt19937_64 rng(Mix(seed, 0x313ed));
  std::vector<Op> ops;
  int next_file = 5;  // WriteCrashInputs wrote orders-0..4
  const int n = 4 + static_cast<int>(rng() % 7);
  for (int i = 0; i < n; ++i) {
    Op op;
    const uint64_t roll = rng() % 100;
    if (roll < 15) {
      op.kind = OpKind::kInput;
      op.file = next_file;
      next_file += 2;
    } else if (roll < 45) {
      op.kind = OpKind::kUpdate;
      op.max_batches = rng() % 2 == 0 ? 0 : 1 + rng() % 4;
    } else if (roll < 60) {
      op.kind = OpKind::kPoint;
    } else if (roll < 72) {
      op.kind = OpKind::kRewind;
      op.point = rng();
    } else if (roll < 80) {
      op.kind = OpKind::kSubsetRewind;
      op.point = rng();
    } else if (roll < 86) {
      op.kind = OpKind::kUndo;
    } else if (roll < 93) {
      op.kind = OpKind::kFullRefresh;
    } else {
      op.kind = OpKind::kReset;
    }
    ops.push_back(op);
  }
  ops.push_back(Op{OpKind::kFinish});
  return ops;
}

// One run of a sequence: its environment and what it recorded.
struct Run {
  FaultEnv* env = nullptr;
  std::string state_dir;
  std::vector<std::string> points;  // rewind point ids, in the order recorded
  std::vector<bool> succeeded;      // per op: whether it succeeded (a refusal does)
};

// Opens the store and the pipeline; false when the process died.
Status OpenPipeline(const Run& run, std::unique_ptr<Store>* store, std::unique_ptr<Pipeline>* pipeline) {
  SPOOL_RETURN_IF_ERROR(Store::Open(CrashStoreOptions(run.env, run.state_dir), kCrashStoreDir, store));
  return Pipeline::Open(store->get(), CrashPipelineSpec(), pipeline, PipelineOptions{run.env});
}

// The micro-batches committed since version `after`: an update's batch
// commits ("STREAMING UPDATE"; a flow's idle offset commit, marked "idle",
// is none). Errors: the log's, or Corruption.
Status BatchesCommittedSince(Store* store, uint64_t after, uint64_t* batches) {
  *batches = 0;
  CommitRecord record;
  return VisitCommitsSince(store, after, [&](const LogEntry& entry) {
    if (entry.operation != "STREAMING UPDATE") return Status::OK();
    SPOOL_RETURN_IF_ERROR(DecodeCommit(entry.body, &record));
    const nlohmann::json parameters = nlohmann::json::parse(record.parameters_json, nullptr, false);
    if (parameters.is_discarded()) return Status::Corruption("a streaming update's parameters are not JSON");
    if (!parameters.contains("idle")) ++*batches;
    return Status::OK();
  });
}

// Runs `op` (`again`: carrying on after a crash in it, which began when the
// log's newest version was `began`). A refusal (a point a later rewind cut
// off, an undo with nothing to undo) is no error: the operation changes
// nothing, in every run alike. Errors: the process died, or an operation
// failed.
Status RunOp(const Op& op, Run* run, bool again, uint64_t began) {
  if (op.kind == OpKind::kInput) return WriteCrashOrderFiles(run->env, op.file, 2);
  std::unique_ptr<Store> store;
  std::unique_ptr<Pipeline> pipeline;
  SPOOL_RETURN_IF_ERROR(OpenPipeline(*run, &store, &pipeline));
  switch (op.kind) {
    case OpKind::kUpdate: {
      UpdateOptions options;
      options.max_batches = op.max_batches;
      if (again && op.max_batches != 0) {
        // The crash-free run's update commits max_batches batches in all:
        // carrying on runs only those the interrupted one had left (more
        // would read files before the next inputs arrive, which the
        // crash-free run reads after them, in another order).
        uint64_t done = 0;
        SPOOL_RETURN_IF_ERROR(BatchesCommittedSince(store.get(), began, &done));
        if (done >= op.max_batches) return Status::OK();
        options.max_batches = op.max_batches - done;
      }
      UpdateResult result;
      SPOOL_RETURN_IF_ERROR(pipeline->Update(options, &result));
      const bool stopped = op.max_batches != 0 && result.state == UpdateState::kCanceled;
      return result.state == UpdateState::kCompleted || stopped ? Status::OK() : Status::Aborted(result.error);
    }
    case OpKind::kPoint: {
      RewindPoint point;
      Status s = RecordRewindPoint(store.get(), *pipeline, "mixed", false, &point);
      if (s.IsInvalidArgument()) return Status::OK();  // no commits yet: refused
      SPOOL_RETURN_IF_ERROR(s);
      run->points.push_back(point.id);
      return Status::OK();
    }
    case OpKind::kRewind:
    case OpKind::kSubsetRewind: {
      if (run->points.empty()) return Status::OK();
      RewindSpec spec;
      spec.rewind_point_id = run->points[op.point % run->points.size()];
      if (op.kind == OpKind::kSubsetRewind) spec.datasets = std::vector<RewindDataset>{{"main.s.orders", true, true}};
      RewindPlan plan;
      Status s = PlanRewind(store.get(), *pipeline, spec, &plan);
      if (!s.ok()) return s.IsAborted() || s.IsIOError() ? s : Status::OK();  // refused
      RewindRun rewind{"", UpdateCause::kApiCall, false};
      return ExecuteRewind(store.get(), *pipeline, plan, &rewind);
    }
    case OpKind::kUndo: {
      UndoPlan plan;
      Status s = PlanUndo(store.get(), &plan);
      if (!s.ok()) return s.IsAborted() || s.IsIOError() ? s : Status::OK();  // nothing to undo
      RewindRun undo{"", UpdateCause::kApiCall, false};
      return ExecuteUndo(store.get(), *pipeline, plan, &undo);
    }
    case OpKind::kFinish: {
      UpdateResult result;
      SPOOL_RETURN_IF_ERROR(pipeline->Update(UpdateOptions{}, &result));
      if (result.state == UpdateState::kCompleted) return Status::OK();
      UpdateRequest refresh;
      refresh.full_refresh = true;
      return RunCrashRequest(store.get(), pipeline.get(), refresh);
    }
    case OpKind::kFullRefresh:
    case OpKind::kReset: {
      bool reset = false;
      if (again) SPOOL_RETURN_IF_ERROR(ResetCommittedSince(store.get(), began, &reset));
      UpdateRequest request;
      if (!reset) {  // a reset already committed is carried on by a plain update
        if (op.kind == OpKind::kFullRefresh) request.full_refresh = true;
        else request.reset_checkpoint_selection = {"revenue"};
      }
      return RunCrashRequest(store.get(), pipeline.get(), request);
    }
    case OpKind::kInput:
      break;
  }
  return Status::OK();
}

// began[i] of an op the process died before (in opening the store to
// read the newest version): carrying it on is running it from its start.
constexpr uint64_t kNotBegun = UINT64_MAX;

uint64_t NewestVersion(const Run& run) {
  std::unique_ptr<Store> store;
  if (!Store::Open(CrashStoreOptions(run.env, run.state_dir), kCrashStoreDir, &store).ok()) return 0;
  return store->log()->Newest().version;
}

// Runs ops [from, end); the index of the op the process died in
// (ops.size(): none). An op may fail without a crash — an update that
// cannot follow a dataset a subset rewind or refresh changed, as the
// reference documents say — and the sequence goes on; whether it failed is
// part of the outcome every run must share.
size_t RunOps(const std::vector<Op>& ops, size_t from, Run* run, std::vector<uint64_t>* began, Status* failed) {
  for (size_t i = from; i < ops.size(); ++i) {
    (*began)[i] = NewestVersion(*run);
    if (run->env->crashed()) {  // in opening the store: the op did not begin
      (*began)[i] = kNotBegun;
      return i;
    }
    *failed = RunOp(ops[i], run, false, (*began)[i]);
    if (run->env->crashed()) return i;
    run->succeeded[i] = failed->ok();
  }
  return ops.size();
}

// The datasets as compared: main.s.enriched without the revenue its lookup
// join read, which depends on how the flows' batches interleave (which a
// crash and its carrying on may change), not on what was processed.
CrashTables Comparable(CrashTables tables) {
  for (Row& row : tables["main.s.enriched"]) {
    if (!row.empty()) row.pop_back();
  }
  return tables;
}

struct Reference {
  bool ok = false;
  std::string error;
  CrashTables tables;
  std::vector<bool> succeeded;
  uint64_t calls = 0;  // I/O calls of the crash-free run (its first inputs written before it)
};

// The crash-free run of the sequence of `seed`.
Reference MakeReference(uint64_t seed) {
  Reference r;
  const std::string dir = TempCrashDir();
  MemEnv mem;
  Status s = dir.empty() ? Status::IOError("no temporary directory") : WriteCrashInputs(&mem);  // durable before
  FaultEnv env(&mem);
  const std::vector<Op> ops = Sequence(seed);
  Run run{&env, dir + "/state", {}, std::vector<bool>(ops.size(), false)};
  std::vector<uint64_t> began(ops.size(), 0);
  if (s.ok()) RunOps(ops, 0, &run, &began, &s);
  else r.error = s.ToString();
  if (r.error.empty() && !run.succeeded.back()) r.error = "the final update failed: " + s.ToString();
  if (r.error.empty()) {
    r.calls = env.io_calls();
    r.succeeded = run.succeeded;
    s = ReadCrashTables(&env, run.state_dir, &r.tables);
    if (!s.ok()) r.error = s.ToString();
    r.tables = Comparable(std::move(r.tables));
  }
  r.ok = r.error.empty();
  std::error_code ignored;
  if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  return r;
}

}  // namespace

std::string MixedWorkloadName(uint64_t seed) { return "mixed-" + std::to_string(seed); }

namespace {

StateResult CheckMixed(uint64_t seed, const CrashState& state, const Reference& reference) {
  StateResult result;
  result.workload_calls = reference.calls;
  if (!reference.ok) {
    result.violations.push_back({"workload", "the crash-free run failed: " + reference.error});
    return result;
  }
  const std::string dir = TempCrashDir();
  if (dir.empty()) {
    result.violations.push_back({"setup", "cannot make a temporary directory"});
    return result;
  }
  MemEnv mem;
  Status s = WriteCrashInputs(&mem);
  FaultEnv env(&mem);
  const std::vector<Op> ops = Sequence(seed);
  Run run{&env, dir + "/state", {}, std::vector<bool>(ops.size(), false)};
  std::vector<uint64_t> began(ops.size(), 0);
  if (state.crash_call != 0) env.CrashAtCall(state.crash_call);
  size_t at = s.ok() ? RunOps(ops, 0, &run, &began, &s) : 0;
  result.reached = state.crash_call == 0 || env.crashed();
  env.SimulateCrash(state.mode, state.seed);
  // Carrying on: the interrupted op again, then the rest; crashed once more
  // when asked.
  if (result.reached && state.recovery_crash_call != 0) env.CrashAtCall(env.io_calls() + state.recovery_crash_call);
  for (int attempt = 0; result.reached && at < ops.size(); ++attempt) {
    ++result.recoveries;
    std::unique_ptr<Store> store;
    if (Status open = Store::Open(CrashStoreOptions(&env, run.state_dir), kCrashStoreDir, &store); !open.ok()) {
      if (env.crashed()) {  // crashed again while recovering
        env.SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
        continue;
      }
      result.violations.push_back({"recoverable", open.ToString()});
      break;
    }
    if (began[at] == kNotBegun) began[at] = store->log()->Newest().version;
    store.reset();
    s = RunOp(ops[at], &run, /*again=*/true, began[at]);
    if (!env.crashed()) {
      run.succeeded[at] = s.ok();
      at = RunOps(ops, at + 1, &run, &began, &s);
    }
    if (at == ops.size()) {
      env.CrashAtCall(0);  // the crash asked for during the carrying on did not come
      break;
    }
    if (attempt > 2) {
      result.violations.push_back({"converges", "carrying on at op " + std::to_string(at) + " keeps crashing"});
      break;
    }
    env.SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
  }
  if (result.reached && result.violations.empty()) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (run.succeeded[i] != reference.succeeded[i]) {
        result.violations.push_back(
            {"same outcome", "op " + std::to_string(i) + (run.succeeded[i] ? " succeeded" : " failed") +
                                 " where the crash-free run's " + (reference.succeeded[i] ? "succeeded" : "failed")});
      }
    }
    CrashTables got;
    if (Status read = ReadCrashTables(&env, run.state_dir, &got); !read.ok()) {
      result.violations.push_back({"exactly-once", "reading the datasets failed: " + read.ToString()});
    }
    got = Comparable(std::move(got));
    for (const auto& [name, rows] : reference.tables) {
      const std::vector<Row>& have = got[name];
      if (have != rows) result.violations.push_back({"exactly-once", name + ": " + ClassifyRows(rows, have)});
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}

}  // namespace

StateResult CheckMixedState(uint64_t seed, const CrashState& state) {
  return CheckMixed(seed, state, MakeReference(seed));
}

CrashFigures RunMixedCampaign(uint64_t first_seed, uint64_t cycles) {
  CrashFigures figures;
  figures.workload = "mixed-campaign";
  for (uint64_t seed = first_seed; seed < first_seed + cycles; ++seed) {
    std::mt19937_64 rng(Mix(seed, 0x3ced));
    const Reference reference = MakeReference(seed);
    CrashState state;
    state.crash_call = 1 + rng() % std::max<uint64_t>(reference.calls, 1);
    state.mode = kAllCrashModes[rng() % std::size(kAllCrashModes)];
    state.seed = rng();
    if (rng() % 4 == 0) state.recovery_crash_call = 1 + rng() % 60;
    ++figures.crash_points;
    if (state.recovery_crash_call != 0) ++figures.recovery_crash_states;
    RecordResult(DescribeCrash(MixedWorkloadName(seed), state), CheckMixed(seed, state, reference), &figures);
  }
  return figures;
}

}  // namespace spool::crashtest
