// StreamStepEngine: W4's stream step (docs/benchmarks.md) on one engine. A step
// reads the next events of the stream (stream_events.h), updates each key's
// count and sum (read-modify-write), writes one output row per key it
// touched (the key's new totals) and commits that state, the output rows
// and the source offset in one durable transaction.
//
// Spool does it through its pipeline runtime (stream_pipeline.h): a topic
// source, a grouped aggregate into a keyed streaming table, one micro-batch
// per step, run by Pipeline::Update. The peers do it by hand, the way their
// users would (PeerStepStore below): the events staged beforehand, durably,
// in the peer's own "topic" (a table keyed by offset), read back by offset
// range each step; state and output in two tables keyed by key; the offset
// in a record of its own; one write transaction per step, synced.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"
#include "stream_events.h"

namespace spool::bench {

// Called after each step's durable commit with the output rows it wrote.
using StepDone = std::function<void(uint64_t output_rows)>;

class StreamStepEngine {
 public:
  virtual ~StreamStepEngine() = default;

  virtual std::string_view name() const = 0;
  // Creates the engine's stores in `dir` (an empty directory), for steps of
  // `events_per_step` events whose keys are drawn from `keys` keys
  // (kStreamKeys in W4).
  virtual Status Open(const std::string& dir, uint64_t events_per_step, uint64_t keys) = 0;
  // Untimed: makes events [0, count) of Open's key space durable in the
  // engine's source, one batch of events_per_step per write.
  virtual Status Stage(uint64_t count) = 0;
  // Runs steps until every staged event is read, calling `done` after each.
  virtual Status Run(const StepDone& done) = 0;
  // The per-key totals (indexed by key, one per key of Open's key space) of
  // the output table.
  virtual Status ReadOutput(std::vector<KeyTotals>* totals) = 0;
  // Closes every store; idempotent.
  virtual Status Close() = 0;
};

// A peer's store, holding the events, the state, the output and the offset;
// the step itself (RunPeerStep below) is the same for every peer. Errors:
// the engine's, as Status.
class PeerStepStore {
 public:
  virtual ~PeerStepStore() = default;

  virtual std::string_view name() const = 0;
  // Opens (creating) the store in `dir`, an existing directory.
  virtual Status Open(const std::string& dir) = 0;
  // One durable write of `messages` at offsets first_offset, first_offset + 1, …
  virtual Status AppendEvents(uint64_t first_offset, std::span<const std::string> messages) = 0;

  // The step's write transaction: Begin, then reads and puts, then Commit,
  // which returns once it is durable.
  virtual Status Begin() = 0;
  // Visits the messages at offsets [from, from + count), in offset order.
  virtual Status ReadEvents(uint64_t from, uint64_t count,
                            const std::function<void(std::string_view message)>& visit) = 0;
  // The step's two tables of totals by key: the state and the output.
  enum class Totals { kState, kOutput };
  // A key's row, as committed by earlier steps.
  virtual Status GetTotals(Totals table, int64_t key, KeyTotals* totals, bool* found) = 0;
  virtual Status PutTotals(Totals table, int64_t key, const KeyTotals& totals) = 0;
  virtual Status PutOffset(uint64_t next_offset) = 0;
  virtual Status Commit() = 0;

  // The committed source offset (0 when none is).
  virtual Status ReadOffset(uint64_t* next_offset) = 0;
  // Every output row, in key order.
  virtual Status ReadOutput(const std::function<void(int64_t key, const KeyTotals& totals)>& visit) = 0;
  virtual Status Close() = 0;
};

// Where a peer keeps each key's running totals: in a state table beside its
// output (W4's definition, the default), or in its output rows alone,
// as Spool's aggregate does when its flow is the only writer of its target
// (spool-bench --w4-peer-state output).
enum class PeerState { kStateTable, kOutputRows };

// A new, closed engine; null for engines without a stream variant
// ("spool-group").
std::unique_ptr<StreamStepEngine> MakeStreamStepEngine(std::string_view engine, PeerState state);
// What --w4-peer-state chose (BenchConfig::peer_state).
inline PeerState PeerStateNamed(std::string_view name) {
  return name == "output" ? PeerState::kOutputRows : PeerState::kStateTable;
}

// The step by hand, for steps of any size (W4's and the latency workload's):
// one write transaction reading events [from, from + count), updating each
// key's state (kept where `state` says), writing its output row and the
// offset from + count, committed durably. `*output_rows`: the keys it
// touched. Errors: the store's; Corruption when the events are not all there.
Status RunPeerStep(PeerStepStore& store, PeerState state, uint64_t from, uint64_t count, uint64_t* output_rows);
// The per-key totals (indexed by key, `keys` of them) of the store's
// output. Errors: the store's; Corruption for a key out of range.
Status ReadPeerTotals(PeerStepStore& store, std::vector<KeyTotals>* totals, uint64_t keys = kStreamKeys);
// A new, closed peer store; null for Spool's engines and unknown names.
std::unique_ptr<PeerStepStore> MakePeerStepStore(std::string_view engine);

std::unique_ptr<StreamStepEngine> NewSpoolStreamStep();
std::unique_ptr<PeerStepStore> NewRocksDbStepStore();
std::unique_ptr<PeerStepStore> NewLevelDbStepStore();
std::unique_ptr<PeerStepStore> NewLmdbStepStore();
std::unique_ptr<PeerStepStore> NewSqliteStepStore();

// What the key-value peers (RocksDB, LevelDB, LMDB) share: one keyspace,
// entries "e" + offset (8 bytes, big-endian) → message, "s" + key → state,
// "o" + key → output, "next_offset" → the next offset (its first letter is
// none of the prefixes, so a scan of one kind of entry never meets it);
// totals as two little-endian int64 (count, sum).
namespace stepkv {

inline constexpr std::string_view kOffsetKey = "next_offset";
inline constexpr size_t kTotalsBytes = 16;

std::string EventKey(uint64_t offset);
std::string OutputKey(int64_t key);
// A key's entry in the state or the output.
std::string TotalsKey(PeerStepStore::Totals table, int64_t key);
std::string EncodeTotals(const KeyTotals& totals);
std::string EncodeOffset(uint64_t offset);
// Errors: Corruption (not 16 or 8 bytes).
Status DecodeTotals(std::string_view bytes, KeyTotals* totals);
Status DecodeOffset(std::string_view bytes, uint64_t* offset);
// An output entry's key. Errors: Corruption (another kind of entry).
Status DecodeOutputKey(std::string_view entry_key, int64_t* key);
// The first key after every output entry: where a scan of them stops.
std::string OutputEnd();

}  // namespace stepkv
}  // namespace spool::bench
