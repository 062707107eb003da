// The jetstream workload (docs/benchmarks.md, "JetStream in and out"):
// events from a NATS JetStream stream → W4's step (the filter kE2EFilter,
// amount > 0; count and sum of the amount by key; a durable commit) →
// each key's new totals published to a JetStream subject, every message
// acknowledged.
//
// Each repetition starts a nats-server of its own (nats_server_process.h)
// in its scratch directory, loads W4's events (stream_events.h) into the
// stream kJsEventsStream (file storage) before anything is timed, and
// then runs, in turn, each engine over the whole stream, batches of
// kW4EventsPerStep events, each publishing to a stream of its own
// (TOTALS_<ENGINE>):
//   spool          the pipeline runtime: a JetStream source, the filter
//                  and the aggregate into a keyed streaming table
//                  (max_batch_rows = a batch), and a sink of that table's
//                  upserts (jetstream_engines.h); one triggered
//                  Pipeline::Update, timed from its call to its return
//                  (its sink publishes after the pass over the flow).
//   nats-limit     the limit: a bare libnats loop — fetch a batch from an
//                  ephemeral pull consumer, fold it into per-key totals held
//                  in memory, publish one message per key the batch touched
//                  (as the sink does: the key's totals, with a msg id and
//                  the sink's headers) and wait for the acks. No storage.
//   nats-rocksdb   the hand-built peer: the same loop, with W4's RocksDB
//                  step in the middle (stream_step_engine.h): each key's
//                  totals read from RocksDB, added to and written with the
//                  output rows and the stream sequence read up to, in one
//                  WriteBatch with sync = true; then the same publishing.
// The run of each ends when every event is read and every message it
// publishes is acknowledged.
//
// Exactly once, checked after each run: the engine's totals (Spool's table,
// RocksDB's output rows, the limit's memory) equal the model of the events,
// and its stream read back — every message applied by key, in order —
// equals them too, with as many messages as the batches touched keys and
// no message id twice. A difference fails the run.
//
// Figures: events/s; where the time goes (reading and the step, then
// publishing; the process's CPU and the server's, per batch).
// --scale multiplies the batches (at least kW4MinSteps).
#pragma once

#include <ostream>
#include <vector>

#include "config.h"
#include "results.h"
#include "targets.h"

namespace spool::bench {

inline constexpr char kJetStream[] = "jetstream";

// The rows of its table besides Spool's.
inline constexpr char kNatsLimit[] = "nats-limit";
inline constexpr char kNatsRocksDb[] = "nats-rocksdb";

inline constexpr char kJsEventsStream[] = "EVENTS";
inline constexpr char kJsEventsSubject[] = "events";

namespace metric {
// Until the last batch is committed (Spool: its last on_batch), and after.
inline constexpr char kReadStepS[] = "read_and_step_s";
inline constexpr char kPublishS[] = "publish_s";
inline constexpr char kMessages[] = "messages_published";
inline constexpr char kCpuPerBatchUs[] = "cpu_per_batch_us";
inline constexpr char kPublishCpuPerBatchUs[] = "publish_cpu_per_batch_us";
// Spool: its table's change feed over the run read again, timed apart.
inline constexpr char kChangeFeedReadS[] = "change_feed_read_s";
inline constexpr char kServerCpuPerBatchUs[] = "server_cpu_per_batch_us";
inline constexpr char kServerPublishCpuPerBatchUs[] = "server_publish_cpu_per_batch_us";
}  // namespace metric

// Repetition `rep` (1-based): Spool when it is among the engines, the
// limit and the peer when RocksDB is.
void RunJetStream(const BenchConfig& config, int rep, Results* results);
void PrintJetStream(const BenchConfig& config, const Results& results, std::ostream& out);
// Spool ≥ kJsVsLimit × the limit, ≥ kJsVsPeer × the peer.
void CheckJetStreamTargets(const Results& results, std::vector<TargetCheck>* checks);

inline constexpr double kJsVsLimit = 0.5;
inline constexpr double kJsVsPeer = 1.5;

}  // namespace spool::bench
