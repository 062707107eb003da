// A flow's next batches read and processed on the helper thread while the
// runner commits the ones before them (Pipeline::Impl::Ahead).
#include "pipeline_impl.h"

namespace spool {

using namespace stream_internal;

void Pipeline::Impl::StartAhead(CompiledFlow& flow, const Checkpoint& cp, const std::string& update_id,
                                uint64_t budget) {
  JoinAhead();  // the job before, ended already; its queue dropped
  {
    std::lock_guard lock(ahead.mu);
    ahead.flow = &flow;
    ahead.done = ahead.stop = false;
  }
  helper.Start([this, &flow, cp, update_id, budget] { PrepareAhead(flow, cp, update_id, budget); });
}

void Pipeline::Impl::PrepareAhead(CompiledFlow& flow, Checkpoint cp, const std::string& update_id, uint64_t budget) {
  for (uint64_t n = 0; n < budget; ++n) {
    {
      std::unique_lock lock(ahead.mu);
      ahead.changed.wait(lock, [this] { return ahead.stop || ahead.ready.size() < kAheadBatches; });
      if (ahead.stop) break;
    }
    PreparedBatch batch;
    Status s = PrepareBatch(flow, cp, update_id, &batch);
    // The source continues after it (Source::ReadsAhead).
    const bool go_on = s.ok() && !batch.skipped && batch.more;
    if (go_on) {
      flow.source->Committed();
      cp = batch.next;
    }
    {
      std::lock_guard lock(ahead.mu);
      ahead.ready.emplace_back(std::move(s), std::move(batch));
    }
    ahead.changed.notify_all();
    if (!go_on) break;
  }
  {
    std::lock_guard lock(ahead.mu);
    ahead.done = true;
  }
  ahead.changed.notify_all();
}

bool Pipeline::Impl::TakeAhead(const CompiledFlow& flow, Status* status, PreparedBatch* batch) {
  std::unique_lock lock(ahead.mu);
  if (ahead.flow != &flow) return false;
  ahead.changed.wait(lock, [this] { return !ahead.ready.empty() || ahead.done; });
  if (ahead.ready.empty()) {
    ahead.flow = nullptr;  // the helper's job has ended
    return false;
  }
  *status = std::move(ahead.ready.front().first);
  *batch = std::move(ahead.ready.front().second);
  ahead.ready.pop_front();
  lock.unlock();
  ahead.changed.notify_all();
  return true;
}

void Pipeline::Impl::JoinAhead() {
  {
    std::lock_guard lock(ahead.mu);
    ahead.stop = true;
  }
  ahead.changed.notify_all();
  helper.Wait();
  std::lock_guard lock(ahead.mu);
  ahead.flow = nullptr;
  ahead.ready.clear();
}

void Pipeline::Impl::EndBatches() {
  JoinAhead();
  for (CompiledFlow& flow : flows) {
    for (CompiledFlow::Committing& c : flow.committing) (void)store->Wait(&c.commit);  // durable, though not reported
    flow.committing.clear();
  }
}

}  // namespace spool
