// The engines of the jetstream workload (jetstream_workload.h): Spool's
// pipeline with a JetStream source and sink, the bare libnats loop (the
// limit) and libnats with RocksDB (the hand-built peer). Each reads the
// events stream kJsEventsStream whole in batches of kW4EventsPerStep and
// publishes to a stream of its own, JsTotalsStream(name).
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"
#include "stream_events.h"
#include "stream_step_engine.h"

namespace spool::bench {

// Where an engine runs: its scratch directory (empty), the server's URL,
// and the server's CPU time so far (seconds), for the split of a run.
struct JsPlace {
  std::string dir;
  std::string url;
  std::function<double()> server_cpu_s;
};

// What one timed run measured.
struct JsRun {
  double seconds = 0;               // from the start until every message is acknowledged
  double read_step_s = 0;           // of which reading and the step (Spool: until its last batch committed)
  double publish_s = 0;             // and publishing, acks waited for (Spool: its sink, after the last batch)
  double cpu_s = 0;                 // the process's CPU time, every thread
  double publish_cpu_s = 0;         // of which while publishing
  double server_publish_cpu_s = 0;  // the server's while publishing
  // Spool: its table's change feed over the run's versions, read again
  // after the run (timed apart): what its sink reads before publishing.
  double change_feed_s = 0;
  uint64_t batches = 0;
  uint64_t messages = 0;  // published and acknowledged
};

class JsEngine {
 public:
  virtual ~JsEngine() = default;
  virtual std::string_view name() const = 0;
  // Before the events are loaded, untimed (Spool: its tables set up).
  virtual Status SetUp(const JsPlace&) { return Status::OK(); }
  // Before the run, untimed.
  virtual Status Open(const JsPlace& place) = 0;
  // Reads the `events` events of the stream and publishes the totals.
  virtual Status Run(uint64_t events, JsRun* run) = 0;
  // The per-key totals (indexed by key) the engine ended with: what it
  // committed (Spool's table, RocksDB's output rows) or held (the limit).
  virtual Status Totals(std::vector<KeyTotals>* totals) = 0;
  virtual Status Close() = 0;
};

// The stream an engine publishes to ("TOTALS_NATS_LIMIT"), its subjects
// ("totals.nats-limit.>") and the one subject it publishes to.
std::string JsTotalsStream(std::string_view engine);
std::string JsTotalsSubjects(std::string_view engine);
std::string JsTotalsSubject(std::string_view engine);

// Whether an event passes the workload's filter (kE2EFilter: amount > 0).
inline bool JsKeeps(const StreamEvent& e) { return e.amount > 0; }

std::unique_ptr<JsEngine> NewSpoolJsEngine();
std::unique_ptr<JsEngine> NewLimitJsEngine();
// Keeping each key's totals where `state` says (--w4-peer-state).
std::unique_ptr<JsEngine> NewRocksDbJsEngine(PeerState state);

}  // namespace spool::bench
