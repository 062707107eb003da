// StoreModel: what a store's tables must hold at every version, computed
// from the transactions given to it with the simplest possible semantics
// (a map per table), and the checks of a Store against it (docs/design.md,
// invariants 4 and 5):
//   every retained version of every table reads back exactly as the model
//   says, by version and by timestamp; the change feed between two
//   versions, applied to the first state, gives the second; checkpoints
//   match.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "log_model.h"
#include "spool/storage/store.h"

namespace spool::crashtest {

struct ModelTable {
  TableInfo info;                   // uid is not modelled
  std::map<std::string, Row> rows;  // keyed: encoded key; keyless: append order
  uint64_t next_append = 0;
  friend bool operator==(const ModelTable&, const ModelTable&) = default;
};

struct ModelState {
  std::map<std::string, ModelTable> tables;        // by name
  std::map<std::string, std::string> checkpoints;  // by flow
  uint64_t timestamp_us = 0;
};

class StoreModel {
 public:
  StoreModel() { states_[0] = ModelState{}; }

  // The state after `txn` applied to the newest state, or nullopt when the
  // store must refuse it.
  std::optional<ModelState> Apply(const Transaction& txn) const;
  // Records the state of the next version (attempted commit).
  void Push(ModelState state) { states_[next_++] = std::move(state); }
  // The restore of `table` to `version` as the next state.
  std::optional<ModelState> Restore(const std::string& table, uint64_t version) const;
  // Store::RestoreTables: several tables and checkpoints, as one next state.
  std::optional<ModelState> RestoreTables(const std::vector<std::string>& tables, const std::vector<std::string>& flows,
                                          uint64_t version) const;
  void SetTimestamp(uint64_t version, uint64_t timestamp_us) { states_.at(version).timestamp_us = timestamp_us; }
  // Forget versions after `version` (commits attempted but lost): the next
  // commit may take their numbers, which no durable commit held.
  void Forget(uint64_t version) {
    states_.erase(states_.upper_bound(version), states_.end());
    next_ = version + 1;
  }
  // A rewind to `version` that took effect: the versions after it leave the
  // history, and its RESTORE commit, version `restore` (past every version
  // used before), holds the same state.
  void Rewind(uint64_t version, uint64_t restore) {
    ModelState at = states_.at(version);
    states_.erase(states_.upper_bound(version), states_.end());
    at.timestamp_us = 0;
    states_[restore] = std::move(at);
    next_ = restore + 1;
  }

  uint64_t newest() const { return states_.rbegin()->first; }
  // The version a commit attempted now gets.
  uint64_t next() const { return next_; }
  const ModelState& state(uint64_t version) const { return states_.at(version); }
  // The versions of the history, oldest first (0: the empty store).
  std::vector<uint64_t> versions() const;

  // Checks that version `v` of every table (and no other table) reads back
  // from `store` as the model has it.
  void CheckVersion(Store* store, uint64_t v, std::vector<Violation>* violations) const;
  // Checks the current state, checkpoints included.
  void CheckCurrent(Store* store, std::vector<Violation>* violations) const;
  // Checks that the change feed over (from, to] of every table applied to
  // state `from` gives state `to`.
  void CheckFeed(Store* store, uint64_t from, uint64_t to, std::vector<Violation>* violations) const;

 private:
  const ModelState& newest_state() const { return states_.rbegin()->second; }

  std::map<uint64_t, ModelState> states_;  // the history's versions; 0 = empty
  uint64_t next_ = 1;
};

// Random transactions over up to four tables named main.s.t0..t3 (keyed
// and keyless): creates, drops, added columns, property changes, writes,
// deletes, truncates, checkpoints, and rows that do not fit (which the
// store must refuse).
class RandomTransactions {
 public:
  explicit RandomTransactions(uint64_t seed) : rng_(seed) {}
  Transaction Next(const ModelState& state);
  int Uniform(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  std::string TableName() { return "main.s.t" + std::to_string(Uniform(4)); }

 private:
  void AddOp(const ModelState& state, Transaction* txn);
  Row RandomRow(const Schema& schema);
  std::mt19937_64 rng_;
};

// "[1, \"a\"]": a row in a violation message.
std::string DescribeRow(const Row& row);

}  // namespace spool::crashtest
