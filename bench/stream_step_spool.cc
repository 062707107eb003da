// Spool as W4's engine (stream_step_engine.h), through its pipeline runtime:
// a Store (default StoreOptions: log kSync) in <dir>/store, a topic in
// <dir>/topic with one 1,000-event record per step produced before the
// run, and the event pipeline (stream_pipeline.h) with max_batch_rows = the
// step's events, so that each micro-batch is one step: one commit holding
// the output rows (an upsert per key touched), the aggregate's state rows
// and the flow's checkpoint. The pipeline's tables are set up by an update
// run on the empty topic at Open, so the timed update is the steps alone.
#include <memory>

#include "engine.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "stream_pipeline.h"
#include "stream_step_engine.h"

namespace spool::bench {
namespace {

class SpoolStreamStep final : public StreamStepEngine {
 public:
  ~SpoolStreamStep() override { (void)Close(); }

  std::string_view name() const override { return kSpool; }

  Status Open(const std::string& dir, uint64_t events_per_step, uint64_t keys) override {
    events_per_step_ = events_per_step;
    keys_ = keys;
    topic_dir_ = dir + "/topic";
    SPOOL_RETURN_IF_ERROR(Store::Open(SpoolStoreOptions(), dir + "/store", &store_));
    // Created empty now, so the set-up update below finds it.
    SPOOL_RETURN_IF_ERROR(Topic::Create(Env::Default(), topic_dir_, TopicConfig{}));
    const PipelineSpec spec = EventPipelineSpec({topic_dir_, "", events_per_step});
    SPOOL_RETURN_IF_ERROR(Pipeline::Open(store_.get(), spec, &pipeline_));
    UpdateResult setup;
    return RunUpdate(pipeline_.get(), UpdateOptions{}, &setup);
  }

  Status Stage(uint64_t count) override { return ProduceEvents(topic_dir_, 0, count, events_per_step_, keys_); }

  Status Run(const StepDone& done) override {
    UpdateOptions options;
    uint64_t rows_before = 0;
    options.on_batch = [&](const std::string&, uint64_t rows_out) {
      done(rows_out - rows_before);
      rows_before = rows_out;
    };
    UpdateResult result;
    return RunUpdate(pipeline_.get(), options, &result);
  }

  Status ReadOutput(std::vector<KeyTotals>* totals) override { return ReadTotals(store_.get(), totals, keys_); }

  Status Close() override {
    pipeline_.reset();
    store_.reset();
    return Status::OK();
  }

 private:
  uint64_t events_per_step_ = 0;
  uint64_t keys_ = kStreamKeys;
  std::string topic_dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
};

}  // namespace

std::unique_ptr<StreamStepEngine> NewSpoolStreamStep() { return std::make_unique<SpoolStreamStep>(); }

}  // namespace spool::bench
