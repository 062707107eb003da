#include "jetstream_engines.h"

#include <cctype>
#include <chrono>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "end_to_end_workload.h"
#include "engine.h"
#include "jetstream_workload.h"
#include "nats_client.h"
#include "spool/storage/schema.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "stopwatch.h"
#include "stream_pipeline.h"
#include "stream_step_workload.h"

namespace spool::bench {
namespace {

constexpr char kJsFlow[] = "totals";
constexpr char kJsSink[] = "totals_out";
constexpr char kUpsert[] = "upsert";

// A key and its totals after a batch.
using Touched = std::pair<int64_t, KeyTotals>;

JetStreamSpec JsSpec(const std::string& url, std::string stream, std::string subject) {
  JetStreamSpec spec;
  spec.connection.servers = {url};
  spec.stream = std::move(stream);
  spec.subject = std::move(subject);
  return spec;
}

// W4's pipeline (stream_pipeline.h) with the stream for its source, the
// filter, and a sink of its table's upserts.
PipelineSpec SpoolJsPipeline(const std::string& url) {
  PipelineBuilder builder("bench");
  builder.StreamingTable(kTotalsTable);
  FlowBuilder flow = builder.Flow(kJsFlow);
  flow.FromJetStream(JsSpec(url, kJsEventsStream, kJsEventsSubject), EventColumns());
  flow.Filter(kE2EFilter);
  flow.Aggregate({"key"}, {{"events", AggregateFn::kCount, ""}, {"amount_sum", AggregateFn::kSum, "amount"}});
  flow.MaxBatchRows(kW4EventsPerStep);
  flow.Into(kTotalsTable);
  // "{table}" stands for the table's name: the subject is JsTotalsSubject's.
  builder.Sink(kJsSink, kTotalsTable, JsSpec(url, JsTotalsStream(kSpool), "totals.spool.{table}"), SinkMode::kUpserts);
  return builder.Build();
}

class SpoolJsEngine final : public JsEngine {
 public:
  ~SpoolJsEngine() override { (void)Close(); }
  std::string_view name() const override { return kSpool; }

  // The tables, the sink's progress included, set up by an update of the
  // stream while it is empty.
  Status SetUp(const JsPlace& place) override {
    SPOOL_RETURN_IF_ERROR(Store::Open(SpoolStoreOptions(), place.dir + "/store", &store_));
    SPOOL_RETURN_IF_ERROR(Pipeline::Open(store_.get(), SpoolJsPipeline(place.url), &pipeline_));
    UpdateResult setup;
    return RunUpdate(pipeline_.get(), UpdateOptions{}, &setup);
  }

  Status Open(const JsPlace& place) override {
    server_cpu_s_ = place.server_cpu_s;
    return Status::OK();
  }

  // The update, timed; the phases split at its last batch's on_batch
  // (the sink publishes after the pass over the flow).
  Status Run(uint64_t, JsRun* run) override {
    const uint64_t before = store_->log()->Newest().version;
    UpdateOptions options;
    Stopwatch watch;
    CpuStopwatch cpu;
    double last_batch_s = 0, last_batch_cpu_s = 0, last_batch_server_s = 0;
    options.on_batch = [&](const std::string&, uint64_t) {
      last_batch_s = watch.Seconds();
      last_batch_cpu_s = cpu.Seconds();
      last_batch_server_s = server_cpu_s_();
    };
    UpdateResult result;
    const Status s = RunUpdate(pipeline_.get(), options, &result);
    run->seconds = watch.Seconds();
    run->cpu_s = cpu.Seconds();
    SPOOL_RETURN_IF_ERROR(s);
    run->read_step_s = last_batch_s;
    run->publish_s = run->seconds - last_batch_s;
    run->publish_cpu_s = run->cpu_s - last_batch_cpu_s;
    run->server_publish_cpu_s = server_cpu_s_() - last_batch_server_s;
    run->batches = result.batches;
    if (result.sinks.size() != 1 || result.sinks[0].failed) return Status::Aborted("the sink did not publish");
    run->messages = result.sinks[0].messages;
    return TimeChangeFeed(before, &run->change_feed_s);
  }

  Status Totals(std::vector<KeyTotals>* totals) override { return ReadTotals(store_.get(), totals); }

  Status Close() override {
    pipeline_.reset();
    store_.reset();
    return Status::OK();
  }

 private:
  // How long the table's change feed after `before` takes to read, every
  // change row visited (pre-images too: the sink skips them as it goes).
  Status TimeChangeFeed(uint64_t before, double* seconds) {
    TableId table;
    SPOOL_RETURN_IF_ERROR(TableId::Parse(kTotalsTable, &table));
    uint64_t rows = 0;
    Stopwatch watch;
    SPOOL_RETURN_IF_ERROR(store_->Changes(table, before + 1, store_->log()->Newest().version, [&](const ChangeRow&) {
      ++rows;
      return true;
    }));
    *seconds = watch.Seconds();
    return rows > 0 ? Status::OK() : Status::Corruption("the change feed of the run is empty");
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
  std::function<double()> server_cpu_s_;
};

// Each kept event of `batch` folded into per-key deltas, in key order.
Status FoldBatch(const NatsBatch& batch, std::map<int64_t, KeyTotals>* deltas) {
  deltas->clear();
  for (std::string_view message : batch.data) {
    StreamEvent e;
    if (!ParseEventMessage(message, &e) || e.key < 0 || static_cast<uint64_t>(e.key) >= kStreamKeys) {
      return Status::Corruption("not an event: " + std::string(message.substr(0, 120)));
    }
    if (!JsKeeps(e)) continue;
    KeyTotals& d = (*deltas)[e.key];
    ++d.count;
    d.sum += e.amount;
  }
  return Status::OK();
}

// What Spool's sink publishes for an upsert (stream/sinks.cc): the row as
// JSON with the change's type, version and time, headers naming the table,
// version and change, and an id unique to the engine, batch and key.
void TotalsMessages(std::string_view engine, uint64_t last_sequence, uint64_t version,
                    const std::vector<Touched>& touched, std::vector<NatsOutMessage>* out) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string at = FormatTimestampMicros(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
  const std::string version_text = std::to_string(version);
  out->clear();
  for (size_t i = 0; i < touched.size(); ++i) {
    const auto& [key, totals] = touched[i];
    NatsOutMessage& m = out->emplace_back();
    m.id = fmt::format("{}.{}.{}", engine, last_sequence, i + 1);
    m.headers = {{"Spool-Table", kTotalsTable}, {"Spool-Version", version_text}, {"Spool-Change-Type", kUpsert}};
    m.data = fmt::format(
        R"({{"key":{},"events":{},"amount_sum":{},"_change_type":"{}","_commit_version":{},"_commit_timestamp":"{}"}})",
        key, totals.count, totals.sum, kUpsert, version, at);
  }
}

// The loop the limit and the peer share: fetch a batch, the step, then one
// message per key it touched, published and acknowledged.
class HandBuiltJsEngine : public JsEngine {
 public:
  Status Open(const JsPlace& place) override {
    client_ = std::make_unique<NatsClient>();
    subject_ = JsTotalsSubject(name());
    server_cpu_s_ = place.server_cpu_s;
    return client_->Connect(place.url);
  }

  Status Run(uint64_t events, JsRun* run) override {
    Stopwatch watch;
    CpuStopwatch cpu;
    Status s = client_->ReadStream(kJsEventsStream, kJsEventsSubject, events, kW4EventsPerStep, false,
                                   [&](const NatsBatch& batch) { return RunBatch(batch, run); });
    run->seconds = watch.Seconds();
    run->cpu_s = cpu.Seconds();
    run->read_step_s = run->seconds - run->publish_s;
    return s;
  }

  Status Close() override {
    client_.reset();
    return Status::OK();
  }

 protected:
  // The step on one batch, whose kept events are `deltas`: the new totals
  // of every key it touched, in key order.
  virtual Status Step(const NatsBatch& batch, const std::map<int64_t, KeyTotals>& deltas,
                      std::vector<Touched>* touched) = 0;

 private:
  // The step on a batch fetched, then its messages published.
  Status RunBatch(const NatsBatch& batch, JsRun* run) {
    touched_.clear();
    SPOOL_RETURN_IF_ERROR(FoldBatch(batch, &deltas_));
    SPOOL_RETURN_IF_ERROR(Step(batch, deltas_, &touched_));
    Stopwatch publish;
    CpuStopwatch publish_cpu;
    const double server_before = server_cpu_s_();
    TotalsMessages(name(), batch.last_sequence, ++run->batches, touched_, &out_);
    SPOOL_RETURN_IF_ERROR(client_->PublishAndWait(subject_, out_));
    run->messages += out_.size();
    run->publish_s += publish.Seconds();
    run->publish_cpu_s += publish_cpu.Seconds();
    run->server_publish_cpu_s += server_cpu_s_() - server_before;
    return Status::OK();
  }

  std::unique_ptr<NatsClient> client_;
  std::string subject_;
  std::function<double()> server_cpu_s_;
  std::map<int64_t, KeyTotals> deltas_;
  std::vector<Touched> touched_;
  std::vector<NatsOutMessage> out_;
};

// The limit: the totals in memory, nothing stored.
class LimitJsEngine final : public HandBuiltJsEngine {
 public:
  std::string_view name() const override { return kNatsLimit; }

  Status Totals(std::vector<KeyTotals>* totals) override {
    *totals = totals_;
    return Status::OK();
  }

 protected:
  Status Step(const NatsBatch&, const std::map<int64_t, KeyTotals>& deltas, std::vector<Touched>* touched) override {
    for (const auto& [key, delta] : deltas) {
      KeyTotals& t = totals_[static_cast<size_t>(key)];
      t.count += delta.count;
      t.sum += delta.sum;
      touched->emplace_back(key, t);
    }
    return Status::OK();
  }

 private:
  std::vector<KeyTotals> totals_ = std::vector<KeyTotals>(kStreamKeys);
};

// The hand-built peer: W4's RocksDB step (stream_step_engine.h), with the
// stream sequence read up to as its offset.
class RocksDbJsEngine final : public HandBuiltJsEngine {
 public:
  explicit RocksDbJsEngine(PeerState state) : state_(state) {}
  ~RocksDbJsEngine() override { (void)Close(); }
  std::string_view name() const override { return kNatsRocksDb; }

  Status Open(const JsPlace& place) override {
    store_ = NewRocksDbStepStore();
    SPOOL_RETURN_IF_ERROR(store_->Open(place.dir + "/rocksdb"));
    return HandBuiltJsEngine::Open(place);
  }

  Status Totals(std::vector<KeyTotals>* totals) override { return ReadPeerTotals(*store_, totals); }

  Status Close() override {
    Status s = store_ == nullptr ? Status::OK() : store_->Close();
    store_.reset();
    SPOOL_RETURN_IF_ERROR(HandBuiltJsEngine::Close());
    return s;
  }

 protected:
  // As RunPeerStep: each key's totals read, added to, written (with its
  // output row), the offset, one durable commit.
  Status Step(const NatsBatch& batch, const std::map<int64_t, KeyTotals>& deltas,
              std::vector<Touched>* touched) override {
    using Table = PeerStepStore::Totals;
    const Table state_table = state_ == PeerState::kStateTable ? Table::kState : Table::kOutput;
    SPOOL_RETURN_IF_ERROR(store_->Begin());
    for (const auto& [key, delta] : deltas) {
      KeyTotals totals;
      bool found = false;
      SPOOL_RETURN_IF_ERROR(store_->GetTotals(state_table, key, &totals, &found));
      totals.count += delta.count;
      totals.sum += delta.sum;
      if (state_table == Table::kState) SPOOL_RETURN_IF_ERROR(store_->PutTotals(Table::kState, key, totals));
      SPOOL_RETURN_IF_ERROR(store_->PutTotals(Table::kOutput, key, totals));
      touched->emplace_back(key, totals);
    }
    SPOOL_RETURN_IF_ERROR(store_->PutOffset(batch.last_sequence + 1));
    return store_->Commit();
  }

 private:
  const PeerState state_;
  std::unique_ptr<PeerStepStore> store_;
};

std::string StreamToken(std::string_view engine) {
  std::string token(engine);
  for (char& c : token) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return token;
}

}  // namespace

std::string JsTotalsStream(std::string_view engine) { return "TOTALS_" + StreamToken(engine); }
std::string JsTotalsSubjects(std::string_view engine) { return fmt::format("totals.{}.>", engine); }
// Spool's sink names its table ("totals.spool.{table}"); the others the same.
std::string JsTotalsSubject(std::string_view engine) { return fmt::format("totals.{}.totals", engine); }

std::unique_ptr<JsEngine> NewSpoolJsEngine() { return std::make_unique<SpoolJsEngine>(); }
std::unique_ptr<JsEngine> NewLimitJsEngine() { return std::make_unique<LimitJsEngine>(); }
std::unique_ptr<JsEngine> NewRocksDbJsEngine(PeerState state) { return std::make_unique<RocksDbJsEngine>(state); }

}  // namespace spool::bench
