// Crash enumeration over the store (the README's crash-safety section, layer 2): a workload of
// table commits, snapshots, restores and vacuums runs on a FaultEnv (the
// log, snapshots, pins and event log) with its LMDB state in a real
// temporary directory; it is crashed at one I/O call in one crash mode (and
// optionally crashed again during recovery), reopened, and checked against
// the StoreModel:
//   durable and atomic  the recovered newest version is at least the last
//                       acknowledged one and at most the last attempted;
//   every retained version of every table reads back as the model says,
//   the change feed equals the difference of states, checkpoints match;
//   derived state       deleting the LMDB state and reopening gives the same
//                       tables (rebuilt from a snapshot and the log);
//   pins                no vacuum removed a version a pin or live reader held;
//   idempotent          a second recovery gives the same store;
//   writable            the recovered store takes the next commit.
// LMDB does its own I/O, outside FaultEnv: it keeps every batch it
// committed, which is what LMDB guarantees for a process kill and, with
// its synced commits, for power loss.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crash_enumerator.h"
#include "spool/storage/store.h"
#include "spool/testing/mem_env.h"
#include "store_model.h"

namespace spool::crashtest {

// What a store workload does, through this runner: every call records the
// attempt in the model first, and once one call fails (the process died)
// the rest do nothing.
class StoreRunner {
 public:
  StoreRunner(Env* env, MemEnv* clock, StoreOptions options, StoreModel* model, std::vector<Violation>* violations);
  ~StoreRunner();

  bool Open();
  void Commit(const Transaction& txn);
  void Restore(const std::string& table, uint64_t version);
  void RestoreTables(const std::vector<std::string>& tables, const std::vector<std::string>& flows, uint64_t version);
  void Snapshot();
  void Vacuum(uint64_t retain_us);
  void AddPin(const std::string& name, uint64_t version);
  // Rewinds the whole store (Store::RewindTo). Until it is acknowledged a
  // recovered store may be before or after the cut; once it is, versions
  // after `version` are gone from the model. `pinned`: the version is a
  // durable pin's, which vacuum must keep rewindable (a refusal is a
  // violation).
  void RewindTo(uint64_t version, bool pinned = false);
  const std::map<std::string, uint64_t>& pins() const { return pins_; }
  // Holds a live reader's pin at `version` across `inner`.
  void WithReader(uint64_t version, const std::function<void()>& inner);
  void AdvanceClock(uint64_t us);
  // A violation unless `condition` (checked only while the process lives).
  void Expect(bool condition, const std::string& what);
  Store* store() { return dead_ ? nullptr : store_.get(); }
  const StoreModel& model() const { return *model_; }
  // The process dies: the store object goes without another call.
  void Kill();

  bool dead() const { return dead_; }
  uint64_t acked() const { return acked_; }
  // A rewind that was attempted and not acknowledged: its version, the
  // log's epoch before it (a recovered store past the cut has a later one),
  // and the version its RESTORE commit gets.
  struct PendingRewind {
    uint64_t version = 0;
    uint64_t epoch_before = 0;
    uint64_t restore = 0;
  };
  const std::optional<PendingRewind>& pending_rewind() const { return pending_rewind_; }

 private:
  void Finish(const Status& s, const CommitResult& result);

  Env* env_;
  MemEnv* clock_;
  StoreOptions options_;
  StoreModel* model_;
  std::vector<Violation>* violations_;
  std::unique_ptr<Store> store_;
  bool dead_ = false;
  uint64_t acked_ = 0;
  std::map<std::string, uint64_t> pins_;  // acknowledged durable pins
  std::optional<PendingRewind> pending_rewind_;
};

struct StoreWorkload {
  std::string name;
  // Store options the workload needs (env and state_dir are set by the
  // enumerator).
  StoreOptions options;
  std::function<void(StoreRunner&)> run;
};

// Multi-table commits, snapshot publication, restore, vacuum with pinned
// readers, and commits with the state applied inline in small batches.
const std::vector<StoreWorkload>& StandardStoreWorkloads();

// A random workload from `seed` (named "random-SEED"): random transactions
// (some of them refused), restores, snapshots, pins and vacuums, with random
// batch, snapshot and preallocation settings.
StoreWorkload RandomStoreWorkload(uint64_t seed);

// `cycles` random workloads from consecutive seeds, each crashed at a
// random call in a random mode, one in five crashed again in recovery.
// figures.crash_points counts the cycles.
CrashFigures RunStoreCampaign(uint64_t first_seed, uint64_t cycles);

StateResult CheckStoreState(const StoreWorkload& workload, const CrashState& state);
// Every crash point x every mode; with `crash_recovery`, also every I/O call
// of the recovery that follows, crashed again in the power-loss, reorder
// and garbage modes.
CrashFigures EnumerateStoreCrashes(const StoreWorkload& workload, bool crash_recovery);

}  // namespace spool::crashtest
