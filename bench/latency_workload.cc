#include "latency_workload.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "check.h"
#include "engine.h"
#include "files.h"
#include "records.h"
#include "report.h"
#include "stats.h"
#include "stopwatch.h"
#include "stream_events.h"
#include "stream_pipeline.h"
#include "stream_step_engine.h"
#include "text_table.h"

namespace spool::bench {
namespace {

constexpr uint64_t kPauseSeed = 0x1a7e9c5e0ull;
// Events produced, and waited for, before the timed ones: the first one
// meets the consumer starting (Spool's update initialising its flow and
// source), which is not what the workload measures.
constexpr uint64_t kWarmupEvents = 1;

// The pause before producing event `offset`: in [0, kLatencyTriggerUs), so
// that events land anywhere in the consumer's trigger interval. Pacing, not
// synchronisation: the producer waits for the consumer on a CommitBoard.
std::chrono::microseconds PauseBefore(uint64_t offset) {
  return std::chrono::microseconds(Mix(kPauseSeed ^ offset) % kLatencyTriggerUs);
}

// What the consumer thread tells the producer: how many events, from offset
// 0 on, committed steps hold; and that it has ended (after a failure, or
// when stopped), so that no wait outlives it.
class CommitBoard {
 public:
  void Report(uint64_t events_committed) {
    {
      std::lock_guard lock(mu_);
      committed_ = std::max(committed_, events_committed);
    }
    changed_.notify_one();
  }

  void Finish() {
    {
      std::lock_guard lock(mu_);
      finished_ = true;
    }
    changed_.notify_one();
  }

  // Waits until events [0, events) are committed; false when the consumer
  // ended first.
  bool WaitFor(uint64_t events) {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return committed_ >= events || finished_; });
    return committed_ >= events;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  uint64_t committed_ = 0;
  bool finished_ = false;
};

// One engine's producer and consumer. Produce runs on the producer thread,
// Consume on the consumer thread; the rest with no Consume running.
class LatencyEngine {
 public:
  virtual ~LatencyEngine() = default;

  virtual std::string_view name() const = 0;
  // Untimed: creates the stores in `dir`, an empty directory.
  virtual Status Open(const std::string& dir) = 0;
  // Makes event `offset` (the next one) durable in the engine's topic.
  virtual Status Produce(uint64_t offset) = 0;
  // Processes new events, reporting each committed step to `board`, until
  // `stop` is set (seen within a trigger interval).
  virtual Status Consume(CommitBoard* board, const std::atomic<bool>& stop) = 0;
  // The per-key totals (indexed by key) of the output table.
  virtual Status ReadOutput(std::vector<KeyTotals>* totals) = 0;
  virtual Status Close() = 0;
};

// Spool: the consumer is a continuous Pipeline::Update.
class SpoolLatency final : public LatencyEngine {
 public:
  ~SpoolLatency() override { (void)Close(); }

  std::string_view name() const override { return kSpool; }

  Status Open(const std::string& dir) override {
    const std::string topic_dir = dir + "/topic";
    SPOOL_RETURN_IF_ERROR(Store::Open(SpoolStoreOptions(), dir + "/store", &store_));
    SPOOL_RETURN_IF_ERROR(Topic::Create(Env::Default(), topic_dir, TopicConfig{}));
    SPOOL_RETURN_IF_ERROR(Pipeline::Open(store_.get(), EventPipelineSpec({topic_dir, "", 0}), &pipeline_));
    // Sets up the tables on the empty topic, so that the continuous update
    // starts with them there and the topic read to its end.
    UpdateResult setup;
    SPOOL_RETURN_IF_ERROR(RunUpdate(pipeline_.get(), UpdateOptions{}, &setup));
    // The topic source opens the topic for reading only, so the producer
    // can hold it open meanwhile.
    return Topic::Open(Env::Default(), topic_dir, &topic_);
  }

  Status Produce(uint64_t offset) override {
    EventMessage(offset, &message_);
    const TopicWrite write{{}, message_};
    TopicProduced produced;
    SPOOL_RETURN_IF_ERROR(topic_->Produce({&write, 1}, &produced));
    if (produced.first_offset == offset) return Status::OK();
    return Status::Corruption("event " + std::to_string(offset) + " got offset " +
                              std::to_string(produced.first_offset));
  }

  Status Consume(CommitBoard* board, const std::atomic<bool>& stop) override {
    UpdateOptions options;
    options.continuous = true;
    options.trigger_interval_us = kLatencyTriggerUs;
    options.stop = &stop;
    // input_rows, not on_batch's output rows, says which events a batch
    // committed: the events this update read, and the set-up update left
    // none unread, so after a batch the events [0, input_rows) are in.
    options.on_progress = [board](const FlowProgress& progress) { board->Report(progress.input_rows); };
    UpdateResult result;
    SPOOL_RETURN_IF_ERROR(pipeline_->Update(options, &result));
    if (result.state == UpdateState::kCanceled) return Status::OK();  // stopped, as asked
    return Status::Aborted("the continuous update ended " + std::string(UpdateStateName(result.state)) + ": " +
                           result.error);
  }

  Status ReadOutput(std::vector<KeyTotals>* totals) override { return ReadTotals(store_.get(), totals); }

  Status Close() override {
    topic_.reset();
    pipeline_.reset();
    store_.reset();
    return Status::OK();
  }

 private:
  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<Topic> topic_;
  std::string message_;
};

// A peer by hand: the producer appends to the peer's topic table, a
// consumer thread polls for new events and runs W4's step on them.
//
// PeerStepStore is single-threaded, and two threads use it here: the
// producer (AppendEvents) and the consumer (the step). They never do at the
// same time, because the producer appends an event only once the consumer
// reported the step holding the one before, and the consumer touches the
// store only after an append (published through newest_) and until its
// report. newest_ and the board's mutex order the two threads' uses.
class PeerLatency final : public LatencyEngine {
 public:
  PeerLatency(std::unique_ptr<PeerStepStore> store, PeerState state) : store_(std::move(store)), state_(state) {}
  ~PeerLatency() override { (void)Close(); }

  std::string_view name() const override { return store_->name(); }

  Status Open(const std::string& dir) override { return store_->Open(dir); }

  Status Produce(uint64_t offset) override {
    EventMessage(offset, &message_[0]);
    SPOOL_RETURN_IF_ERROR(store_->AppendEvents(offset, message_));
    newest_.store(offset + 1, std::memory_order_release);
    return Status::OK();
  }

  // Like Spool's continuous mode: a step as soon as there is something new,
  // else a trigger interval's sleep. The poll is a load of newest_, a
  // stand-in for reading the peer's topic table for its newest offset: it
  // costs the peers nothing, which favours them.
  Status Consume(CommitBoard* board, const std::atomic<bool>& stop) override {
    uint64_t next = 0;
    while (!stop.load()) {
      const uint64_t newest = newest_.load(std::memory_order_acquire);
      if (newest == next) {
        std::this_thread::sleep_for(std::chrono::microseconds(kLatencyTriggerUs));
        continue;
      }
      uint64_t output_rows = 0;
      SPOOL_RETURN_IF_ERROR(RunPeerStep(*store_, state_, next, newest - next, &output_rows));
      next = newest;
      board->Report(next);
    }
    return Status::OK();
  }

  Status ReadOutput(std::vector<KeyTotals>* totals) override { return ReadPeerTotals(*store_, totals); }

  Status Close() override { return store_->Close(); }

 private:
  const std::unique_ptr<PeerStepStore> store_;
  const PeerState state_;
  std::vector<std::string> message_ = std::vector<std::string>(1);  // the one event of an append
  std::atomic<uint64_t> newest_{0};                                 // events appended: [0, newest_)
};

// Null for engines without a stream variant ("spool-group").
std::unique_ptr<LatencyEngine> MakeLatencyEngine(std::string_view engine, PeerState state) {
  if (engine == kSpool) return std::make_unique<SpoolLatency>();
  std::unique_ptr<PeerStepStore> store = MakePeerStepStore(engine);
  if (store == nullptr) return nullptr;
  return std::make_unique<PeerLatency>(std::move(store), state);
}

struct LoopRun {
  std::vector<double> latencies_us;  // one per timed event
  Status produced;
  Status consumed;
};

// The closed loop: kWarmupEvents + `events` events, one at a time, each
// waited for. Throws nothing while the consumer thread runs: failures are
// in the statuses.
LoopRun ClosedLoop(LatencyEngine& engine, uint64_t events) {
  LoopRun run;
  run.latencies_us.reserve(events);
  CommitBoard board;
  std::atomic<bool> stop{false};
  std::thread consumer([&] {
    run.consumed = engine.Consume(&board, stop);
    board.Finish();
  });
  for (uint64_t offset = 0; offset < kWarmupEvents + events; ++offset) {
    std::this_thread::sleep_for(PauseBefore(offset));
    run.produced = engine.Produce(offset);
    const Stopwatch since_durable;  // t0: the produce returned, the event is durable
    if (!run.produced.ok() || !board.WaitFor(offset + 1)) break;
    if (offset >= kWarmupEvents) run.latencies_us.push_back(since_durable.Micros());
  }
  stop.store(true);
  consumer.join();
  return run;
}

double Mean(const std::vector<double>& samples) {
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

void AddResults(const BenchConfig& config, const std::string& name, int rep, const std::vector<double>& latencies_us,
                Results* results) {
  const double p50_us = Percentile(latencies_us, 0.5);
  const double p99_us = Percentile(latencies_us, 0.99);
  results->Add(kLatency, name, metric::kP50Us, p50_us);
  results->Add(kLatency, name, metric::kP99Us, p99_us);
  results->Add(kLatency, name, metric::kMaxUs, Percentile(latencies_us, 1.0));
  results->Add(kLatency, name, metric::kMeanUs, Mean(latencies_us));
  std::cerr << fmt::format("latency {} rep {}/{}: p50 {:.0f} µs, p99 {:.0f} µs (output checked)\n", name, rep,
                           config.reps, p50_us, p99_us);
}

// Opens the engine, runs the closed loop, checks that every event was
// timed and the output table against the model.
void RunLatencyEngine(const BenchConfig& config, LatencyEngine& engine, int rep, uint64_t events,
                      const std::vector<KeyTotals>& expected, Results* results) {
  const std::string name(engine.name());
  const std::string dir = config.RunDir(kLatency, name, rep);
  FreshDir(dir);
  Expect(engine.Open(dir), name + " open");
  SyncAll();
  const LoopRun run = ClosedLoop(engine, events);
  Expect(run.produced, name + " producing");
  Expect(run.consumed, name + " consuming");
  if (run.latencies_us.size() != events) {
    throw BenchError(
        fmt::format("{}: the consumer ended after {} of {} timed events", name, run.latencies_us.size(), events));
  }
  std::vector<KeyTotals> totals;
  Expect(engine.ReadOutput(&totals), name + " reading the output");
  CheckTotals(name, totals, expected);
  Expect(engine.Close(), name + " close");
  RemoveDir(dir);
  AddResults(config, name, rep, run.latencies_us, results);
}

}  // namespace

void RunLatency(const BenchConfig& config, int rep, Results* results) {
  const uint64_t events = config.Scaled(kLatencyEvents, kLatencyMinEvents);
  const std::vector<KeyTotals> expected = ModelTotals(kWarmupEvents + events, false);
  for (const std::string& name : config.engines) {
    std::unique_ptr<LatencyEngine> engine = MakeLatencyEngine(name, PeerStateNamed(config.peer_state));
    if (engine != nullptr) RunLatencyEngine(config, *engine, rep, events, expected, results);
  }
}

void PrintLatency(const BenchConfig& config, const Results& results, std::ostream& out) {
  PrintTable(results,
             {kLatency,
              "Latency: an event produced → visible in the output table, continuous mode",
              {metric::kP50Us, "p50 µs", 0},
              {{metric::kP99Us, "p99 µs", 0}, {metric::kMaxUs, "max µs", 0}, {metric::kMeanUs, "mean µs", 0}}},
             out);
  out << fmt::format(
      "  ({} timed events of W4's, after {} untimed, one at a time in a closed loop: each produced durably\n"
      "   after a pause in [0, {} ms), the same pauses for every engine, once the one before is visible.\n"
      "   Latency: from the produce returning to the commit of the step holding the event returning, after\n"
      "   which every read of the current version sees its row. An idle consumer looks again every {} ms:\n"
      "   Spool's continuous Pipeline::Update (trigger_interval_us), the peers a thread running W4's step\n"
      "   by hand on what is new, told of new events through memory rather than by reading their topic\n"
      "   table. ÷ Spool above 1: slower.)\n",
      FormatNumber(static_cast<double>(config.Scaled(kLatencyEvents, kLatencyMinEvents)), 0), kWarmupEvents,
      FormatNumber(kLatencyTriggerUs / 1000.0, 0), FormatNumber(kLatencyTriggerUs / 1000.0, 0));
}

}  // namespace spool::bench
