// spool_micro_bench, the state (storage): 1,000 upserts on a table of
// 10,000 keys, staged into the in-memory state and committed whole
// (micro_bench.cc lists every benchmark).
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "commit_codec.h"
#include "micro_bench.h"
#include "records.h"
#include "row_codec.h"
#include "spool/storage/store.h"
#include "state_store.h"
#include "store_internal.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr uint64_t kTableKeys = 10'000;
constexpr size_t kUpserts = 1'000;
constexpr uint64_t kKeyStride = kTableKeys / kUpserts;
static_assert(kKeyStride * kUpserts == kTableKeys, "a batch's keys are distinct");

Status AccountSchema(Schema* schema) {
  return Schema::Make({{"id", ColumnType::kInt64, false},
                       {"name", ColumnType::kString, true},
                       {"balance", ColumnType::kInt64, true},
                       {"updated", ColumnType::kTimestamp, true}},
                      {"id"}, schema);
}

// Account `id` as upsert batch `revision` writes it (revision 0: as loaded).
Row AccountRow(uint64_t id, uint64_t revision) {
  return Row{static_cast<int64_t>(id), "account-" + std::to_string(id),
             static_cast<int64_t>(Mix(id ^ (revision << 20)) % 1'000'000),
             Timestamp{kEpochUs + static_cast<int64_t>(revision)}};
}

// The i-th key upsert batch `revision` writes: a stride through the table,
// its start moving from batch to batch, so that every batch writes 1,000
// distinct keys and ten batches write all 10,000.
uint64_t UpsertKey(uint64_t revision, size_t i) { return (revision * 7919 + i * kKeyStride) % kTableKeys; }

// --- Staging: the state changes of a committed record, applied in memory.

// One commit of the upserts of batch `revision`, as Store::Commit records
// them: updates with their pre-images (written at version 1).
CommitRecord UpsertCommit(const Schema& schema, uint64_t revision) {
  TableChangeSet set{kTableUid, {}};
  for (size_t i = 0; i < kUpserts; ++i) {
    const uint64_t id = UpsertKey(revision, i);
    RowChangeRecord change;
    change.kind = RowChangeKind::kUpdate;
    EncodeKey(schema, AccountRow(id, 0), &change.key);
    EncodeRow(schema, AccountRow(id, 0), &change.pre);
    EncodeRow(schema, AccountRow(id, revision), &change.post);
    change.pre_version = 1;
    set.changes.push_back(std::move(change));
  }
  CommitRecord record;
  record.tables.push_back(std::move(set));
  return record;
}

// The table's 10,000 rows, staged by the commit at version 1.
StateOverlay LoadedTable(const Schema& schema) {
  StateDelta delta;
  for (uint64_t id = 0; id < kTableKeys; ++id) {
    std::string key;
    std::string row;
    EncodeKey(schema, AccountRow(id, 0), &key);
    EncodeRow(schema, AccountRow(id, 0), &row);
    delta.Put(StateRowKey(kTableUid, key), StateRowValue(1, row));
  }
  delta.position = StatePosition{kStoreId, 1, 1, 1};
  StateOverlay overlay;
  overlay.Add(std::move(delta));
  return overlay;
}

// Whether the overlay holds `record`'s rows as written at `version`, and
// the history run of their pre-images.
Status CheckStaged(const StateOverlay& overlay, const CommitRecord& record, uint64_t version) {
  for (const RowChangeRecord& change : record.tables[0].changes) {
    const StateValue* value = overlay.Find(StateRowKey(kTableUid, change.key));
    if (value == nullptr || !value->has_value() || **value != StateRowValue(version, change.post)) {
      return Status::Corruption("an upserted row is not staged as written");
    }
  }
  const StateValue* history = overlay.Find(StateHistoryKey(kTableUid, version));
  if (history == nullptr || !history->has_value()) return Status::Corruption("the history run is not staged");
  if (overlay.position.version != version) return Status::Corruption("the staged position is not the last commit's");
  return Status::OK();
}

// DeltaFromCommit and StateOverlay::Add: what StateStore::Stage does with
// each commit under its lock, in memory. The overlay starts as the loaded
// table and, as the store's does, goes to LMDB (here: is dropped, outside
// the timing) after StateStoreOptions::batch_commits commits.
void BM_StateApplyUpserts(benchmark::State& state) {
  constexpr uint64_t kRevisions = 10;
  Schema schema;
  if (!Ok(state, AccountSchema(&schema), "AccountSchema")) return;
  std::vector<CommitRecord> records;
  for (uint64_t revision = 1; revision <= kRevisions; ++revision) records.push_back(UpsertCommit(schema, revision));
  const StateOverlay loaded = LoadedTable(schema);
  const uint64_t batch_commits = StateStoreOptions().batch_commits;
  StateOverlay overlay = loaded;
  uint64_t version = 1, staged = 0;
  for (auto _ : state) {
    if (staged == batch_commits) {
      state.PauseTiming();
      overlay = loaded;
      staged = 0;
      state.ResumeTiming();
    }
    ++version;
    const LogEntry entry{LogPosition{1, version}, static_cast<uint64_t>(kEpochUs) + version, "WRITE", {}};
    overlay.Add(DeltaFromCommit(records[version % kRevisions], entry, kStoreId));
    ++staged;
  }
  if (!Ok(state, CheckStaged(overlay, records[version % kRevisions], version), "staged state")) return;
  SetItems(state, kUpserts);
}
BENCHMARK(BM_StateApplyUpserts);

// --- A whole commit.

// Store::Commit of 1,000 upserts: the Builder (validation, row and key
// encoding, a pre-image lookup per row), EncodeCommit, the log append and
// staging. The log is a MemEnv in Durability::kNoSync (no I/O, no fsync),
// snapshots are off and the state's LMDB batches are kept out of the loop
// (the table is in LMDB before it; what the loop stages stays in memory): the
// committer's CPU, without any disk. No preallocation either: filling a
// MemFile with zeros ahead measures the MemEnv, not the log (on a real file
// it makes new page-cache pages before the write, which would make them
// anyway). The argument is how many commits stay queued (CommitAsync) while
// the next is built, as a pipeline's flow keeps two (0: Store::Commit): each
// pre-image is then looked up in them too. Consecutive batches write
// disjoint keys, so those lookups miss, as most of a stream step's do.
void BM_StoreCommitUpserts(benchmark::State& state) {
  const size_t queued = static_cast<size_t>(state.range(0));
  Schema schema;
  TableId table;
  if (!Ok(state, AccountSchema(&schema), "AccountSchema") ||
      !Ok(state, TableId::Parse("bench.micro.accounts", &table), "TableId")) {
    return;
  }
  StoreOptions options;
  options.log.durability = Durability::kNoSync;
  options.log.preallocate_bytes = 0;
  options.snapshot_every_versions = 0;
  options.snapshot_every_bytes = 0;
  options.state_batch_commits = std::numeric_limits<uint64_t>::max();
  options.state_batch_bytes = std::numeric_limits<uint64_t>::max();
  ScratchStore scratch;
  if (!Ok(state, scratch.Open(options), "Store::Open")) return;
  Store* store = scratch.get();
  Transaction load("CREATE TABLE");
  load.CreateTable(table, TableKind::kStreamingTable, schema);
  for (uint64_t id = 0; id < kTableKeys; ++id) load.Write(table, AccountRow(id, 0));
  if (!Ok(state, store->Commit(load), "loading the table") || !Ok(state, store->FlushState(), "FlushState")) return;

  uint64_t revision = 0;
  CommitResult result;
  Transaction txn;
  std::deque<PendingCommit> pending;
  for (auto _ : state) {
    state.PauseTiming();
    ++revision;
    txn = Transaction("WRITE");
    for (size_t i = 0; i < kUpserts; ++i) {
      const uint64_t id = UpsertKey(revision, i);
      txn.Write(table, AccountRow(id, revision));
    }
    state.ResumeTiming();
    if (queued == 0) {
      if (!Ok(state, store->Commit(txn, &result), "Store::Commit")) return;
      continue;
    }
    if (!Ok(state, store->CommitAsync(txn, &pending.emplace_back()), "Store::CommitAsync")) return;
    if (pending.size() > queued) {
      if (!Ok(state, store->Wait(&pending.front(), &result), "Store::Wait")) return;
      pending.pop_front();
    }
  }
  for (; !pending.empty(); pending.pop_front()) {
    if (!Ok(state, store->Wait(&pending.front(), &result), "Store::Wait")) return;
  }
  if (result.version != 1 + revision) {
    state.SkipWithError("the commits did not get consecutive versions");
    return;
  }
  Row row;
  for (size_t i = 0; i < kUpserts; ++i) {
    const uint64_t id = UpsertKey(revision, i);
    bool found = false;
    if (!Ok(state, store->Get(table, {static_cast<int64_t>(id)}, &row, &found), "Store::Get")) return;
    if (!found || row != AccountRow(id, revision)) {
      state.SkipWithError("a row does not read back as its last upsert wrote it");
      return;
    }
  }
  SetItems(state, kUpserts);
}
BENCHMARK(BM_StoreCommitUpserts)->Arg(0)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace spool::bench
