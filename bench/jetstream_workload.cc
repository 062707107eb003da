#include "jetstream_workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "check.h"
#include "end_to_end_workload.h"
#include "engine.h"
#include "files.h"
#include "jetstream_engines.h"
#include "nats_client.h"
#include "nats_server_process.h"
#include "report.h"
#include "stream_step_workload.h"
#include "text_table.h"

namespace spool::bench {
namespace {

// Events a publish waits for while the stream is loaded; messages a fetch
// reads back.
constexpr uint64_t kLoadBatch = 1'000;
constexpr uint64_t kReadBackBatch = 4'096;

struct JsShape {
  uint64_t batches = 0;
  uint64_t events() const { return batches * kW4EventsPerStep; }
};

// What every engine must end with: the totals of the kept events, and one
// message per key each batch's kept events touched.
struct JsExpected {
  std::vector<KeyTotals> totals;
  uint64_t messages = 0;
};

uint64_t ExpectedMessages(const JsShape& shape) {
  uint64_t messages = 0;
  std::vector<uint64_t> last_batch(kStreamKeys, std::numeric_limits<uint64_t>::max());
  for (uint64_t offset = 0; offset < shape.events(); ++offset) {
    const StreamEvent e = EventAt(offset);
    const uint64_t batch = offset / kW4EventsPerStep;
    uint64_t& last = last_batch[static_cast<size_t>(e.key)];
    if (!JsKeeps(e) || last == batch) continue;
    last = batch;
    ++messages;
  }
  return messages;
}

// The events, published to the events stream, every one acknowledged.
Status LoadEvents(NatsClient& client, uint64_t events) {
  std::vector<NatsOutMessage> batch;
  for (uint64_t first = 0; first < events; first += kLoadBatch) {
    batch.clear();
    for (uint64_t offset = first; offset < std::min(events, first + kLoadBatch); ++offset) {
      EventMessage(offset, &batch.emplace_back().data);
    }
    SPOOL_RETURN_IF_ERROR(client.PublishAndWait(kJsEventsSubject, batch));
  }
  uint64_t stored = 0;
  SPOOL_RETURN_IF_ERROR(client.StreamMessages(kJsEventsStream, &stored));
  if (stored == events) return Status::OK();
  return Status::Corruption(fmt::format("the events stream holds {} messages, {} were published", stored, events));
}

// The integer after `field` in `message`.
bool IntAfter(std::string_view message, std::string_view field, int64_t* value) {
  const size_t at = message.find(field);
  if (at == std::string_view::npos) return false;
  const char* begin = message.data() + at + field.size();
  return std::from_chars(begin, message.data() + message.size(), *value).ec == std::errc();
}

// A published message: a key's totals, as Spool's sink writes a row.
bool ParseTotalsMessage(std::string_view message, int64_t* key, KeyTotals* totals) {
  return IntAfter(message, R"("key":)", key) && IntAfter(message, R"("events":)", &totals->count) &&
         IntAfter(message, R"("amount_sum":)", &totals->sum) && *key >= 0 && static_cast<uint64_t>(*key) < kStreamKeys;
}

// The engine's stream read back: as many messages as expected, no id
// twice, and applied by key in order, the totals of the model.
void CheckPublished(NatsClient& client, std::string_view engine, const JsExpected& expected) {
  const std::string stream = JsTotalsStream(engine);
  uint64_t stored = 0;
  Expect(client.StreamMessages(stream, &stored), "jetstream: reading back " + stream);
  if (stored != expected.messages) {
    throw BenchError(
        fmt::format("{}: exactly-once broken: {} holds {} messages, {} expected (one per key a batch "
                    "touched)",
                    engine, stream, stored, expected.messages));
  }
  std::vector<KeyTotals> applied(kStreamKeys);
  std::unordered_set<std::string> ids;
  const Status s =
      client.ReadStream(stream, JsTotalsSubjects(engine), stored, kReadBackBatch, true, [&](const NatsBatch& batch) {
        for (size_t i = 0; i < batch.data.size(); ++i) {
          int64_t key = 0;
          KeyTotals totals;
          if (!ParseTotalsMessage(batch.data[i], &key, &totals)) {
            return Status::Corruption("not a key's totals: " + std::string(batch.data[i].substr(0, 200)));
          }
          applied[static_cast<size_t>(key)] = totals;
          if (batch.ids[i].empty() || !ids.emplace(batch.ids[i]).second) {
            return Status::Corruption("a message id missing or seen twice: '" + std::string(batch.ids[i]) + "'");
          }
        }
        return Status::OK();
      });
  Expect(s, std::string(engine) + ": reading back " + stream);
  CheckTotals(std::string(engine) + " (its messages applied by key)", applied, expected.totals);
}

std::vector<std::unique_ptr<JsEngine>> MakeJsEngines(const BenchConfig& config) {
  std::vector<std::unique_ptr<JsEngine>> engines;
  if (config.RunsEngine(kSpool)) engines.push_back(NewSpoolJsEngine());
  // The hand-built loops are the peers' side: --engines spool (as
  // scripts/profile.sh runs it) leaves them out.
  if (config.RunsEngine(kRocksDb)) {
    engines.push_back(NewLimitJsEngine());
    engines.push_back(NewRocksDbJsEngine(PeerStateNamed(config.peer_state)));
  }
  return engines;
}

void AddJsResults(const BenchConfig& config, std::string_view name, int rep, const JsShape& shape, const JsRun& run,
                  double server_cpu_s, Results* results) {
  const double per_s = static_cast<double>(shape.events()) / run.seconds;
  const auto per_batch_us = [&](double seconds) { return seconds * 1e6 / static_cast<double>(shape.batches); };
  results->Add(kJetStream, name, metric::kEventsPerS, per_s);
  results->Add(kJetStream, name, metric::kReadStepS, run.read_step_s);
  results->Add(kJetStream, name, metric::kPublishS, run.publish_s);
  results->Add(kJetStream, name, metric::kMessages, static_cast<double>(run.messages));
  results->Add(kJetStream, name, metric::kCpuPerBatchUs, per_batch_us(run.cpu_s));
  results->Add(kJetStream, name, metric::kPublishCpuPerBatchUs, per_batch_us(run.publish_cpu_s));
  if (run.change_feed_s > 0) results->Add(kJetStream, name, metric::kChangeFeedReadS, run.change_feed_s);
  results->Add(kJetStream, name, metric::kServerCpuPerBatchUs, per_batch_us(server_cpu_s));
  results->Add(kJetStream, name, metric::kServerPublishCpuPerBatchUs, per_batch_us(run.server_publish_cpu_s));
  std::cerr << fmt::format(
      "jetstream {} rep {}/{}: {:.0f} events/s; read and step {:.3f} s, publish {:.3f} s ({} messages); CPU {:.0f} "
      "µs per batch ({:.0f} publishing), nats-server's {:.0f} ({:.0f} publishing) (exactly once checked)\n",
      name, rep, config.reps, per_s, run.read_step_s, run.publish_s, run.messages, per_batch_us(run.cpu_s),
      per_batch_us(run.publish_cpu_s), per_batch_us(server_cpu_s), per_batch_us(run.server_publish_cpu_s));
}

// What a repetition shares: the server, a client of it, the run's sizes.
// The benchmark's nats-server's CPU seconds so far (throws if unreadable).
double ServerCpuSeconds(const NatsServerProcess& server) {
  double seconds = 0;
  Expect(server.CpuSeconds(&seconds), "jetstream: the server's CPU time");
  return seconds;
}

struct JsRep {
  const BenchConfig& config;
  int rep;
  NatsServerProcess& server;
  NatsClient& client;
  JsShape shape;
  JsExpected expected;
};

JsPlace PlaceOf(const JsRep& r, const JsEngine& engine) {
  return {r.config.RunDir(kJetStream, std::string(engine.name()), r.rep), r.server.url(),
          [&server = r.server] { return ServerCpuSeconds(server); }};
}

// The engine's run (timed), then its checks: batches and messages, its
// totals, and its stream read back.
void RunJsEngine(const JsRep& r, JsEngine& engine, Results* results) {
  const std::string name(engine.name());
  const JsPlace place = PlaceOf(r, engine);
  Expect(engine.Open(place), name + ": open");
  SyncAll();
  const double server_before = ServerCpuSeconds(r.server);
  JsRun run;
  Expect(engine.Run(r.shape.events(), &run), name + ": the run");
  const double server_cpu_s = ServerCpuSeconds(r.server) - server_before;
  if (run.batches != r.shape.batches || run.messages != r.expected.messages) {
    throw BenchError(fmt::format("{}: {} batches publishing {} messages, {} and {} expected", name, run.batches,
                                 run.messages, r.shape.batches, r.expected.messages));
  }
  std::vector<KeyTotals> totals;
  Expect(engine.Totals(&totals), name + ": its totals");
  CheckTotals(name, totals, r.expected.totals);
  Expect(engine.Close(), name + ": close");
  CheckPublished(r.client, name, r.expected);
  Expect(r.client.DeleteStream(JsTotalsStream(name)), "jetstream: dropping a stream");
  RemoveDir(place.dir);
  AddJsResults(r.config, name, r.rep, r.shape, run, server_cpu_s, results);
}

double JsMedian(const Results& results, std::string_view engine, std::string_view name) {
  const std::optional<Summary> s = results.Get(kJetStream, engine, name);
  return s ? s->median : std::nan("");
}

// CPU µs per batch of `engine`, "<process> / <server>", while reading and
// stepping or while publishing.
std::string JsCpuSplit(const Results& results, std::string_view engine, bool publishing) {
  const auto median = [&](const char* name) { return JsMedian(results, engine, name); };
  const double process = median(metric::kPublishCpuPerBatchUs);
  const double server = median(metric::kServerPublishCpuPerBatchUs);
  if (publishing) return FormatNumber(process, 0) + " / " + FormatNumber(server, 0);
  return FormatNumber(median(metric::kCpuPerBatchUs) - process, 0) + " / " +
         FormatNumber(median(metric::kServerCpuPerBatchUs) - server, 0);
}

// Where Spool's time goes, beside the limit's: the two phases, the
// publishing rates, the CPU of each side in each.
void PrintJsTimeSplit(const Results& results, std::ostream& out) {
  const auto median = [&](std::string_view engine, const char* name) { return JsMedian(results, engine, name); };
  const auto publish_rate = [&](std::string_view engine) {
    return median(engine, metric::kMessages) / median(engine, metric::kPublishS);
  };
  const double read_step = median(kSpool, metric::kReadStepS), publish = median(kSpool, metric::kPublishS);
  out << fmt::format(
      "  Where Spool's time goes: reading and the step {} s, then the sink {} s ({}% of the run; reading\n"
      "   the change feed it publishes takes {} s of it, timed apart). Messages/s while publishing: Spool's\n"
      "   sink {}, the limit {}, the peer {}. CPU µs per batch, this process / nats-server, reading and\n"
      "   stepping: Spool {}, the limit {}; publishing: Spool {}, the limit {}.\n",
      FormatNumber(read_step, 3), FormatNumber(publish, 3), FormatNumber(100 * publish / (read_step + publish), 0),
      FormatNumber(median(kSpool, metric::kChangeFeedReadS), 3), FormatNumber(publish_rate(kSpool), 0),
      FormatNumber(publish_rate(kNatsLimit), 0), FormatNumber(publish_rate(kNatsRocksDb), 0),
      JsCpuSplit(results, kSpool, false), JsCpuSplit(results, kNatsLimit, false), JsCpuSplit(results, kSpool, true),
      JsCpuSplit(results, kNatsLimit, true));
}

}  // namespace

void RunJetStream(const BenchConfig& config, int rep, Results* results) {
  const JsShape shape{config.Scaled(kW4Steps, kW4MinSteps)};
  const std::string server_dir = config.RunDir(kJetStream, "nats-server", rep);
  FreshDir(server_dir);
  NatsServerProcess server;
  Expect(server.Start(server_dir), "jetstream: starting nats-server");
  NatsClient client;
  Expect(client.Connect(server.url()), "jetstream: connecting");
  Expect(client.CreateStream(kJsEventsStream, kJsEventsSubject), "jetstream: the events stream");
  const JsRep r{config, rep, server, client, shape, {ModelTotals(shape.events(), true), ExpectedMessages(shape)}};
  std::vector<std::unique_ptr<JsEngine>> engines = MakeJsEngines(config);
  for (const auto& engine : engines) {
    Expect(client.CreateStream(JsTotalsStream(engine->name()), JsTotalsSubjects(engine->name())),
           "jetstream: a totals stream");
    FreshDir(PlaceOf(r, *engine).dir);
    Expect(engine->SetUp(PlaceOf(r, *engine)), std::string(engine->name()) + ": set-up");
  }
  Expect(LoadEvents(client, shape.events()), "jetstream: loading the events");
  for (const auto& engine : engines) RunJsEngine(r, *engine, results);
  Expect(server.Stop(), "jetstream: stopping nats-server");
  RemoveDir(server_dir);
}

void CheckJetStreamTargets(const Results& results, std::vector<TargetCheck>* checks) {
  const double spool = JsMedian(results, kSpool, metric::kEventsPerS);
  checks->push_back(MakeCheck(kJetStream, "≥ 0.5 × the limit (bare libnats), exactly-once intact",
                              "Spool ÷ the bare libnats loop",
                              spool / JsMedian(results, kNatsLimit, metric::kEventsPerS), kJsVsLimit, true));
  checks->push_back(MakeCheck(kJetStream, "≥ 1.5 × the hand-built peer (libnats + RocksDB)",
                              "Spool ÷ libnats + RocksDB", spool / JsMedian(results, kNatsRocksDb, metric::kEventsPerS),
                              kJsVsPeer, true));
}

void PrintJetStream(const BenchConfig& config, const Results& results, std::ostream& out) {
  if (!config.Runs(kJetStream)) return;
  PrintTable(results,
             {kJetStream,
              "JetStream in and out: events from a stream → filter, count and sum by key, a durable commit → "
              "each key's totals published",
              {metric::kEventsPerS, "events/s", 0},
              {{metric::kReadStepS, "read+step s", 3},
               {metric::kPublishS, "publish s", 3},
               {metric::kCpuPerBatchUs, "CPU µs/batch", 0},
               {metric::kPublishCpuPerBatchUs, "… publishing", 0},
               {metric::kServerCpuPerBatchUs, "server CPU µs/batch", 0},
               {metric::kServerPublishCpuPerBatchUs, "… publishing", 0},
               {metric::kMessages, "messages", 0}}},
             out);
  const double spool = JsMedian(results, kSpool, metric::kEventsPerS);
  out << RatioLine("Spool ÷ the limit (bare libnats)", spool / JsMedian(results, kNatsLimit, metric::kEventsPerS),
                   "  (target ≥ 0.50)")
      << RatioLine("Spool ÷ the hand-built peer (libnats + RocksDB)",
                   spool / JsMedian(results, kNatsRocksDb, metric::kEventsPerS), "  (target ≥ 1.50)");
  PrintJsTimeSplit(results, out);
  out << fmt::format(
      "  (Every engine reads the stream in batches of {} events (an ephemeral pull consumer, no acks) and\n"
      "   publishes one message per key a batch touched — the key's totals as JSON, a Nats-Msg-Id, the\n"
      "   sink's headers — waiting for every ack. Spool: one triggered update of its pipeline (JetStream\n"
      "   source, filter {}, aggregate into a keyed table, one commit a batch) whose sink publishes the\n"
      "   table's upserts after the pass; read+step = until its last batch committed. The limit keeps the\n"
      "   totals in memory; the peer does W4's RocksDB step with the stream sequence in the WriteBatch.)\n",
      kW4EventsPerStep, kE2EFilter);
}

}  // namespace spool::bench
