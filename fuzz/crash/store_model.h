// StoreModel: what a store's tables must hold at every version, computed
// from the transactions given to it with the simplest possible semantics
// (a map per table), and the checks of a Store against it (DESIGN.md §10,
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
  TableInfo info;                        // uid is not modelled
  std::map<std::string, Row> rows;       // keyed: encoded key; keyless: append order
  uint64_t next_append = 0;
  friend bool operator==(const ModelTable&, const ModelTable&) = default;
};

struct ModelState {
  std::map<std::string, ModelTable> tables;       // by name
  std::map<std::string, std::string> checkpoints;  // by flow
  uint64_t timestamp_us = 0;
};

class StoreModel {
 public:
  StoreModel() : states_(1) {}

  // The state after `txn` applied to the newest state, or nullopt when the
  // store must refuse it.
  std::optional<ModelState> Apply(const Transaction& txn) const;
  // Records the state of the next version (attempted commit).
  void Push(ModelState state) { states_.push_back(std::move(state)); }
  // The restore of `table` to `version` as the next state.
  std::optional<ModelState> Restore(const std::string& table, uint64_t version) const;
  // Store::RestoreTables: several tables and checkpoints, as one next state.
  std::optional<ModelState> RestoreTables(const std::vector<std::string>& tables, const std::vector<std::string>& flows,
                                          uint64_t version) const;
  void SetTimestamp(uint64_t version, uint64_t timestamp_us) { states_[version].timestamp_us = timestamp_us; }
  // Forget versions after `version` (a commit that was attempted but lost).
  void Truncate(uint64_t version) { states_.resize(version + 1); }

  uint64_t newest() const { return states_.size() - 1; }
  const ModelState& state(uint64_t version) const { return states_[version]; }

  // Checks that version `v` of every table (and no other table) reads back
  // from `store` as the model has it.
  void CheckVersion(Store* store, uint64_t v, std::vector<Violation>* violations) const;
  // Checks the current state, checkpoints included.
  void CheckCurrent(Store* store, std::vector<Violation>* violations) const;
  // Checks that the change feed over (from, to] of every table applied to
  // state `from` gives state `to`.
  void CheckFeed(Store* store, uint64_t from, uint64_t to, std::vector<Violation>* violations) const;

 private:
  std::vector<ModelState> states_;  // index = version; 0 = empty
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
