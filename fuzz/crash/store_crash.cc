#include "store_crash.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"

namespace spool::crashtest {
namespace {

constexpr char kStoreDir[] = "/store";
constexpr uint64_t kHour = 3600ull * 1000000;

TableId Id(const char* text) {
  TableId id;
  (void)TableId::Parse(text, &id);
  return id;
}

Schema KeyedSchema() {
  Schema schema;
  (void)Schema::Make({{"k", ColumnType::kInt64, false}, {"v", ColumnType::kString, true}}, {"k"}, &schema);
  return schema;
}

Schema KeylessSchema() {
  Schema schema;
  (void)Schema::Make({{"msg", ColumnType::kString, true}}, {}, &schema);
  return schema;
}

void CreateBoth(StoreRunner& r) {
  Transaction txn("CREATE TABLE");
  txn.CreateTable(Id("main.s.users"), TableKind::kStreamingTable, KeyedSchema());
  txn.CreateTable(Id("main.s.events"), TableKind::kStreamingTable, KeylessSchema());
  r.Commit(txn);
}

// One step of a pipeline: rows to both tables and the flow's offset.
void Step(StoreRunner& r, int i, size_t value_bytes = 8) {
  Transaction txn("STREAMING UPDATE");
  // Letters from a generator, so that large values do not compress away.
  std::string value(value_bytes, 'a');
  uint64_t x = static_cast<uint64_t>(i) + 1;
  for (char& c : value) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>('a' + (x >> 59));
  }
  txn.Write(Id("main.s.users"), Row{int64_t{i % 5}, value});
  if (i % 3 == 2) txn.Delete(Id("main.s.users"), Row{int64_t{(i + 1) % 5}});
  txn.Write(Id("main.s.events"), Row{"event " + std::to_string(i)});
  txn.SetCheckpoint("flow", "offset=" + std::to_string(i));
  r.Commit(txn);
}

std::vector<StoreWorkload> MakeWorkloads() {
  std::vector<StoreWorkload> workloads;
  StoreOptions base;
  base.snapshot_every_versions = 0;
  base.snapshot_every_bytes = 0;
  base.state_batch_commits = 4;
  base.state_background_apply = false;  // deterministic batches
  base.log.segment_size_bytes = 64 << 10;
  base.log.preallocate_bytes = 16 << 10;

  workloads.push_back({"multi-table-commits", base, [](StoreRunner& r) {
                         if (!r.Open()) return;
                         CreateBoth(r);
                         for (int i = 0; i < 6; ++i) Step(r, i);
                         Transaction refresh("FULL REFRESH");
                         refresh.Truncate(Id("main.s.events"));
                         refresh.AddColumn(Id("main.s.users"), Column{"n", ColumnType::kInt64, true});
                         r.Commit(refresh);
                       }});

  workloads.push_back({"snapshot-publication", base, [](StoreRunner& r) {
                         if (!r.Open()) return;
                         CreateBoth(r);
                         for (int i = 0; i < 3; ++i) Step(r, i);
                         r.Snapshot();
                         Step(r, 3);
                         r.Snapshot();
                         Step(r, 4);
                       }});

  workloads.push_back({"restore", base, [](StoreRunner& r) {
                         if (!r.Open()) return;
                         CreateBoth(r);
                         for (int i = 0; i < 4; ++i) Step(r, i);
                         r.Restore("main.s.users", 2);
                         r.Restore("main.s.events", 3);
                         Step(r, 4);
                         // Both tables and the flow's checkpoint in one commit (a subset rewind).
                         r.RestoreTables({"main.s.users", "main.s.events"}, {"flow"}, 4);
                         Step(r, 5);
                       }});

  workloads.push_back({"vacuum-pinned-readers", base, [](StoreRunner& r) {
                         if (!r.Open()) return;
                         CreateBoth(r);
                         // 16 KB rows: 64 KiB segments hold about 4 commits.
                         for (int i = 0; i < 12; ++i) Step(r, i, 16000);
                         r.AddPin("rewind-point", 8);
                         r.AdvanceClock(1000 * kHour);
                         r.WithReader(5, [&] { r.Vacuum(kHour); });
                         Step(r, 12, 16000);
                         r.Vacuum(kHour);
                         r.Expect(r.store() == nullptr || r.store()->log()->Oldest().version > 1,
                                  "the vacuums deleted log segments");
                       }});

  workloads.push_back({"rewind", base, [](StoreRunner& r) {
                         if (!r.Open()) return;
                         CreateBoth(r);                           // version 1
                         for (int i = 0; i < 6; ++i) Step(r, i);  // 2..7
                         r.Snapshot();                            // at 7
                         r.AddPin("late", 6);
                         Step(r, 6);      // 8
                         r.RewindTo(5);   // before the snapshot: rebuilt from the log; RESTORE 9
                         Step(r, 7);      // 10
                         r.RewindTo(10);  // to the newest: nothing cut but a RESTORE, 11
                         Step(r, 8);      // 12
                         r.Snapshot();    // at 12, new epoch
                         Step(r, 9);      // 13
                         r.RewindTo(12);  // from that snapshot; RESTORE 14
                         Step(r, 10);     // 15
                       }});

  StoreOptions inline_apply = base;
  inline_apply.state_batch_commits = 2;
  workloads.push_back({"state-apply", inline_apply, [](StoreRunner& r) {
                         if (!r.Open()) return;
                         CreateBoth(r);
                         for (int i = 0; i < 7; ++i) Step(r, i);
                       }});
  return workloads;
}

// A rewind to `version` took effect, with its RESTORE commit `restore`.
void RewoundTo(Store* store, uint64_t version, uint64_t restore, StoreModel* model) {
  model->Rewind(version, restore);
  LogEntry entry;
  if (store->log()->Read(restore, &entry).ok()) model->SetTimestamp(restore, entry.timestamp_us);
}

// Reopens the store after a crash and runs every check.
void CheckRecovered(const StoreOptions& options, const StoreRunner& runner, StoreModel* model, StateResult* result) {
  auto violation = [&](const std::string& invariant, const std::string& detail) {
    result->violations.push_back({invariant, detail});
  };
  std::unique_ptr<Store> store;
  Status s = Store::Open(options, kStoreDir, &store);
  ++result->recoveries;
  if (!s.ok()) return violation("recoverable", s.ToString());
  const uint64_t newest = store->log()->Newest().version;
  uint64_t acked = runner.acked();
  if (const auto& rewind = runner.pending_rewind(); rewind && store->log()->CurrentEpoch() > rewind->epoch_before) {
    // The cut was made before the crash, and with it the RESTORE commit.
    if (newest != rewind->restore) {
      return violation("rewind is atomic", "a new epoch began but the newest version is " + std::to_string(newest) +
                                               ", not the rewind's RESTORE commit " + std::to_string(rewind->restore));
    }
    RewoundTo(store.get(), rewind->version, rewind->restore, model);
    acked = newest;
  }
  if (newest < acked) {
    return violation(
        "durable", "newest version " + std::to_string(newest) + " but " + std::to_string(acked) + " were acknowledged");
  }
  if (newest > model->newest()) {
    return violation("no phantom", "newest version " + std::to_string(newest) + " but only " +
                                       std::to_string(model->newest()) + " were attempted");
  }
  model->Forget(newest);
  const uint64_t oldest = std::max<uint64_t>(store->log()->Oldest().version, 1);
  // Pins of versions still on the history (a rewind drops those past it).
  const std::vector<uint64_t> history = model->versions();
  for (const auto& [name, version] : runner.pins()) {
    if (std::binary_search(history.begin(), history.end(), version) && oldest > version) {
      violation("vacuum keeps pins",
                "oldest version " + std::to_string(oldest) + " is past the pin at " + std::to_string(version));
      break;
    }
  }
  auto check_all = [&](Store* opened) {
    model->CheckCurrent(opened, &result->violations);
    for (uint64_t v : model->versions()) {
      if (v >= oldest && v < newest) model->CheckVersion(opened, v, &result->violations);
    }
    if (newest >= oldest) model->CheckFeed(opened, opened->log()->BeforeOldest().version, newest, &result->violations);
  };
  check_all(store.get());
  // Derived state: without LMDB, the store rebuilds the same tables.
  store.reset();
  std::error_code ignored;
  std::filesystem::remove_all(options.state_dir, ignored);
  s = Store::Open(options, kStoreDir, &store);
  ++result->recoveries;
  if (!s.ok()) return violation("state is derived", "reopening without the LMDB state: " + s.ToString());
  const size_t before_rebuild = result->violations.size();
  model->CheckCurrent(store.get(), &result->violations);
  for (size_t i = before_rebuild; i < result->violations.size(); ++i) {
    result->violations[i].invariant = "state is derived: " + result->violations[i].invariant;
  }
  // Idempotent, then writable.
  store.reset();
  s = Store::Open(options, kStoreDir, &store);
  ++result->recoveries;
  if (!s.ok() || store->log()->Newest().version != newest) {
    return violation("idempotent", "a second recovery differs: " + s.ToString());
  }
  Transaction after("CREATE TABLE");
  after.CreateTable(Id("main.s.after_recovery"), TableKind::kStreamingTable, KeylessSchema());
  after.Write(Id("main.s.after_recovery"), Row{std::string("x")});
  std::optional<ModelState> next = model->Apply(after);
  CommitResult commit;
  s = store->Commit(after, &commit);
  if (!s.ok() || !next || commit.version != newest + 1)
    return violation("writable", "commit after recovery: " + s.ToString());
  model->Push(std::move(*next));
  model->CheckCurrent(store.get(), &result->violations);
}

}  // namespace

StoreRunner::StoreRunner(Env* env, MemEnv* clock, StoreOptions options, StoreModel* model,
                         std::vector<Violation>* violations)
    : env_(env), clock_(clock), options_(std::move(options)), model_(model), violations_(violations) {}

StoreRunner::~StoreRunner() = default;

bool StoreRunner::Open() {
  Status s = Store::Open(options_, kStoreDir, &store_);
  dead_ = !s.ok();
  return !dead_;
}

void StoreRunner::Finish(const Status& s, const CommitResult& result) {
  if (!s.ok()) {
    dead_ = true;
    return;
  }
  acked_ = result.version;
  model_->SetTimestamp(result.version, result.timestamp_us);
}

void StoreRunner::Commit(const Transaction& txn) {
  if (dead_) return;
  std::optional<ModelState> next = model_->Apply(txn);
  if (!next) {  // bad input: refused, and nothing changes
    const uint64_t before = store_->log()->Newest().version;
    Status s = store_->Commit(txn);
    if (s.ok() || store_->log()->Newest().version != before) {
      violations_->push_back({"bad input changes nothing", "the store took a transaction the model refuses"});
    }
    if (!s.IsInvalidArgument()) dead_ = true;  // an I/O error: the process is as good as dead
    return;
  }
  model_->Push(std::move(*next));
  CommitResult result;
  Finish(store_->Commit(txn, &result), result);
}

void StoreRunner::Restore(const std::string& table, uint64_t version) {
  if (dead_) return;
  std::optional<ModelState> next = model_->Restore(table, version);
  if (!next) {
    dead_ = true;
    return;
  }
  model_->Push(std::move(*next));
  TableId id;
  (void)TableId::Parse(table, &id);
  CommitResult result;
  Finish(store_->Restore(id, version, &result), result);
}

void StoreRunner::RestoreTables(const std::vector<std::string>& tables, const std::vector<std::string>& flows,
                                uint64_t version) {
  if (dead_) return;
  std::optional<ModelState> next = model_->RestoreTables(tables, flows, version);
  if (!next) {
    dead_ = true;
    return;
  }
  model_->Push(std::move(*next));
  std::vector<TableId> ids;
  for (const std::string& table : tables) {
    TableId id;
    (void)TableId::Parse(table, &id);
    ids.push_back(id);
  }
  CommitResult result;
  Finish(store_->RestoreTables(ids, flows, version, &result), result);
}

void StoreRunner::Snapshot() {
  if (!dead_ && !store_->TakeSnapshot().ok()) dead_ = true;
}

void StoreRunner::Vacuum(uint64_t retain_us) {
  if (dead_) return;
  VacuumOptions options;
  options.retain_us = retain_us;
  options.force = true;
  VacuumReport report;
  if (!store_->Vacuum(options, &report).ok()) dead_ = true;
}

void StoreRunner::AddPin(const std::string& name, uint64_t version) {
  if (dead_) return;
  Status s = store_->AddPin(name, version);
  if (s.IsNotFound()) return;  // vacuumed already: refused, nothing changes
  if (!s.ok()) {
    dead_ = true;
    return;
  }
  pins_[name] = version;
}

void StoreRunner::RewindTo(uint64_t version, bool pinned) {
  if (dead_) return;
  const LogPosition before = store_->log()->Newest();
  pending_rewind_ = PendingRewind{version, store_->log()->CurrentEpoch(), store_->log()->NextVersion()};
  LogPosition head;
  Status s = store_->RewindTo(version, &head);
  if (s.IsNotFound() || s.IsInvalidArgument()) {  // refused: nothing changes
    pending_rewind_.reset();
    if (!(store_->log()->Newest() == before)) {
      violations_->push_back({"a refused rewind changes nothing", s.ToString()});
    }
    if (pinned) violations_->push_back({"vacuum keeps pinned versions rewindable", s.ToString()});
    return;
  }
  if (!s.ok()) {
    dead_ = true;
    return;
  }
  pending_rewind_.reset();
  if (head.version != model_->next()) {
    violations_->push_back({"versions are never used again", "the rewind's RESTORE commit is version " +
                                                                 std::to_string(head.version) + ", not " +
                                                                 std::to_string(model_->next())});
  }
  RewoundTo(store_.get(), version, head.version, model_);
  acked_ = head.version;
  std::erase_if(pins_, [&](const auto& pin) { return pin.second > version; });
}

void StoreRunner::WithReader(uint64_t version, const std::function<void()>& inner) {
  if (dead_) return;
  std::unique_ptr<VersionPin> pin = store_->PinVersion(version);
  inner();
  // While the pin is held, nothing it needs may go, crash or no crash.
  if (!dead_ && store_->log()->Oldest().version > version) {
    violations_->push_back({"vacuum keeps live readers", "oldest version " +
                                                             std::to_string(store_->log()->Oldest().version) +
                                                             " is past a reader at " + std::to_string(version)});
  }
}

void StoreRunner::Expect(bool condition, const std::string& what) {
  if (!dead_ && !condition) violations_->push_back({"workload", "expected: " + what});
}

void StoreRunner::Kill() {
  store_.reset();
  dead_ = true;
}

void StoreRunner::AdvanceClock(uint64_t us) { clock_->SetNowMicros(clock_->NowMicros() + us); }

StoreWorkload RandomStoreWorkload(uint64_t seed) {
  StoreWorkload workload;
  workload.name = "random-" + std::to_string(seed);
  std::mt19937_64 rng(Mix(seed, 0x5709e));
  StoreOptions& options = workload.options;
  options.snapshot_every_versions = rng() % 3 == 0 ? 1 + rng() % 6 : 0;
  options.snapshot_every_bytes = 0;
  options.state_batch_commits = 1 + rng() % 6;
  options.state_background_apply = false;
  options.log.segment_size_bytes = 64 << 10;
  options.log.preallocate_bytes = (rng() % 3) * (16 << 10);
  workload.run = [seed](StoreRunner& r) {
    if (!r.Open()) return;
    RandomTransactions random(seed);
    const int steps = 4 + random.Uniform(12);
    for (int i = 0; i < steps && !r.dead(); ++i) {
      const int roll = random.Uniform(100);
      const uint64_t newest = r.model().newest();
      // A version of the history: any, or (`committed`) not the empty store's.
      auto some_version = [&](bool committed) {
        const std::vector<uint64_t> versions = r.model().versions();
        const int first = committed ? 1 : 0;
        return versions[static_cast<size_t>(first + random.Uniform(static_cast<int>(versions.size()) - first))];
      };
      if (roll < 8 && newest > 0) {
        r.Restore(random.TableName(), some_version(true));
      } else if (roll < 13) {
        r.Snapshot();
      } else if (roll < 17 && newest > 0) {
        r.AddPin("point-" + std::to_string(i), some_version(true));
      } else if (roll < 22) {
        r.AdvanceClock(1000 * kHour);
        r.Vacuum(kHour);
      } else if (roll < 28 && newest > 0) {
        r.RewindTo(some_version(false));
      } else if (roll < 31 && !r.pins().empty()) {
        auto pin = r.pins().begin();
        std::advance(pin, random.Uniform(static_cast<int>(r.pins().size())));
        r.RewindTo(pin->second, /*pinned=*/true);
      } else {
        r.Commit(random.Next(r.model().state(newest)));
      }
    }
  };
  return workload;
}

CrashFigures RunStoreCampaign(uint64_t first_seed, uint64_t cycles) {
  CrashFigures figures;
  figures.workload = "random store workloads";
  for (uint64_t i = 0; i < cycles; ++i) {
    const uint64_t seed = first_seed + i;
    const StoreWorkload workload = RandomStoreWorkload(seed);
    const uint64_t calls = CheckStoreState(workload, CrashState{}).workload_calls;
    std::mt19937_64 rng(Mix(seed, 0xca5e));
    CrashState state{1 + rng() % std::max<uint64_t>(calls, 1),
                     kAllCrashModes[rng() % std::size(kAllCrashModes)],
                     rng(),
                     0,
                     false,
                     0};
    if (rng() % 5 == 0) state.recovery_crash_call = 1 + rng() % 12;
    if (rng() % 10 == 0) state.fail_sync_call = 1 + rng() % std::max<uint64_t>(calls, 1);
    StateResult result = CheckStoreState(workload, state);
    if (!result.reached && state.recovery_crash_call != 0) {  // recovery was shorter: crash it at its end
      state.recovery_crash_call = 0;
      result = CheckStoreState(workload, state);
    }
    ++figures.crash_points;
    if (state.recovery_crash_call != 0) ++figures.recovery_crash_states;
    RecordResult(DescribeCrash(workload.name, state), result, &figures);
  }
  return figures;
}

const std::vector<StoreWorkload>& StandardStoreWorkloads() {
  static const std::vector<StoreWorkload> workloads = MakeWorkloads();
  return workloads;
}

StateResult CheckStoreState(const StoreWorkload& workload, const CrashState& state) {
  StateResult result;
  MemEnv mem;
  FaultEnv env(&mem);
  // LMDB's own fsyncs are not what this checks: on tmpfs they cost nothing.
  const std::filesystem::path shm = "/dev/shm";
  std::error_code ec;
  const std::filesystem::path root =
      std::filesystem::is_directory(shm, ec) ? shm : std::filesystem::temp_directory_path();
  std::string state_dir = (root / "spool-crash-XXXXXX").string();
  if (mkdtemp(state_dir.data()) == nullptr) {
    result.violations.push_back({"setup", "cannot make a temporary directory"});
    return result;
  }
  StoreOptions options = workload.options;
  options.env = &env;
  options.state_dir = state_dir + "/state";
  StoreModel model;
  if (state.crash_call != 0) env.CrashAtCall(state.crash_call);
  // A failed fsync: the store refuses what it could not make durable, and
  // the process stops there (then crashes).
  if (state.fail_sync_call != 0) env.FailSyncAtCall(state.fail_sync_call);
  {
    StoreRunner runner(&env, &mem, options, &model, &result.violations);
    workload.run(runner);
    result.workload_calls = env.io_calls();
    result.reached = state.crash_call == 0 || env.crashed() || (state.fail_sync_call != 0 && runner.dead());
    if (state.crash_call == 0 && state.fail_sync_call == 0 && runner.dead()) {
      result.violations.push_back({"workload", "the crash-free run stopped early"});
    }
    runner.Kill();
    env.SimulateCrash(state.mode, state.seed);
    if (state.recovery_crash_call != 0) {
      env.CrashAtCall(env.io_calls() + state.recovery_crash_call);
      {
        std::unique_ptr<Store> store;
        (void)Store::Open(options, kStoreDir, &store);
      }
      if (!env.crashed()) {
        result.reached = false;
      } else {
        env.SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
      }
    }
    if (result.reached) {
      const uint64_t before = env.io_calls();
      CheckRecovered(options, runner, &model, &result);
      result.recovery_calls = env.io_calls() - before;
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(state_dir, ignored);
  return result;
}

CrashFigures EnumerateStoreCrashes(const StoreWorkload& workload, bool crash_recovery) {
  CrashFigures figures;
  figures.workload = workload.name;
  // The crash-free run counts the workload's I/O calls, and is checked too.
  StateResult clean = CheckStoreState(workload, CrashState{});
  figures.crash_points = clean.workload_calls;
  RecordResult(DescribeCrash(workload.name, CrashState{}), clean, &figures);
  for (uint64_t call = 1; call <= figures.crash_points; ++call) {
    for (CrashMode mode : EnumeratedModes(call)) {
      CrashState state{call, mode, Mix(call, static_cast<uint64_t>(mode)), 0, false, 0};
      StateResult result = CheckStoreState(workload, state);
      RecordResult(DescribeCrash(workload.name, state), result, &figures);
      // Recovery's own I/O (the first open after the crash), crashed in the
      // modes that lose the most of it: every unsynced write, any subset of
      // them, or sectors turned to garbage.
      if (!crash_recovery ||
          (mode != CrashMode::kPowerLoss && mode != CrashMode::kReorder && mode != CrashMode::kGarbage)) {
        continue;
      }
      for (uint64_t r = 1;; ++r) {
        state.recovery_crash_call = r;
        StateResult nested = CheckStoreState(workload, state);
        if (!nested.reached) break;
        ++figures.recovery_crash_states;
        RecordResult(DescribeCrash(workload.name, state), nested, &figures);
      }
    }
  }
  return figures;
}

}  // namespace spool::crashtest
