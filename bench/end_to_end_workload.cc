#include "end_to_end_workload.h"

#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "check.h"
#include "child_process.h"
#include "engine.h"
#include "files.h"
#include "stopwatch.h"
#include "stream_pipeline.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr char kUpdaterReportPrefix[] = "updated";
constexpr char kUpdaterFlag[] = "--e2e-updater";

std::string StoreDir(const std::string& dir) { return dir + "/store"; }
std::string TopicDir(const std::string& dir) { return dir + "/topic"; }

// What the updater reports.
struct UpdateReport {
  double seconds = 0;
  uint64_t batches = 0;
  uint64_t input_rows = 0;
  uint64_t output_rows = 0;
};

UpdateReport ParseReport(const ChildOutcome& child) {
  std::istringstream in(child.report);
  std::string prefix;
  UpdateReport r;
  in >> prefix >> r.seconds >> r.batches >> r.input_rows >> r.output_rows;
  const bool exited = WIFEXITED(child.wait_status) && WEXITSTATUS(child.wait_status) == 0;
  if (!in || prefix != kUpdaterReportPrefix || !exited) {
    throw BenchError(
        fmt::format("the end-to-end updater failed (report \"{}\", wait status {})", child.report, child.wait_status));
  }
  return r;
}

// The table the update wrote, checked against the model.
void CheckTable(const std::string& dir, uint64_t events) {
  std::unique_ptr<Store> store;
  StoreOptions options = SpoolStoreOptions();
  options.create_if_missing = false;
  Expect(Store::Open(options, StoreDir(dir), &store), "spool reopen after the end-to-end update");
  std::vector<KeyTotals> totals;
  Expect(ReadTotals(store.get(), &totals), "spool reading the end-to-end totals");
  CheckTotals(kSpool, totals, ModelTotals(events, /*positive_only=*/true));
}

}  // namespace

void RunE2E(const BenchConfig& config, int rep, Results* results) {
  if (!config.RunsEngine(kSpool)) return;
  const uint64_t events = config.Scaled(kE2EEvents, kE2EMinEvents);
  const std::string dir = config.RunDir(kE2E, std::string(kSpool), rep);
  FreshDir(dir);
  Stopwatch staging;
  Expect(Topic::Create(Env::Default(), TopicDir(dir), TopicConfig{}), "spool topic create");
  Expect(ProduceEvents(TopicDir(dir), 0, events, kE2EProduceBatch), "spool producing the events");
  const double staged_s = staging.Seconds();
  const double topic_mb = static_cast<double>(DiskBytes(TopicDir(dir))) / kBytesPerMB;
  SyncAll();
  const ChildOutcome child =
      RunChild({config.self_path, kUpdaterFlag, dir, "--state-map-gib", std::to_string(config.state_map_gib)},
               ChildEnd::kWaitForExit);
  const UpdateReport report = ParseReport(child);
  if (report.input_rows != events) {
    throw BenchError(fmt::format("the end-to-end update read {} events of {}", report.input_rows, events));
  }
  CheckTable(dir, events);
  RemoveDir(dir);
  const double per_s = static_cast<double>(events) / report.seconds;
  const double rss_mb = static_cast<double>(child.peak_rss_bytes) / kBytesPerMB;
  results->Add(kE2E, kSpool, metric::kEventsPerS, per_s);
  results->Add(kE2E, kSpool, metric::kUpdateS, report.seconds);
  results->Add(kE2E, kSpool, metric::kPeakRssMB, rss_mb);
  results->Add(kE2E, kSpool, metric::kBatches, static_cast<double>(report.batches));
  results->Add(kE2E, kSpool, metric::kOutputRows, static_cast<double>(report.output_rows));
  results->Add(kE2E, kSpool, metric::kTopicMB, topic_mb);
  std::cerr << fmt::format(
      "e2e spool rep {}/{}: {} events ({:.0f} MB topic, produced in {:.1f} s) in {:.2f} s: "
      "{:.0f} events/s, {} batches, peak RSS {:.0f} MB (table checked)\n",
      rep, config.reps, events, topic_mb, staged_s, report.seconds, per_s, report.batches, rss_mb);
}

int RunE2EUpdater(const std::string& dir) {
  std::unique_ptr<Store> store;
  Expect(Store::Open(SpoolStoreOptions(), StoreDir(dir), &store), "spool open");
  std::unique_ptr<Pipeline> pipeline;
  Expect(Pipeline::Open(store.get(), EventPipelineSpec({TopicDir(dir), kE2EFilter, 0}), &pipeline), "pipeline open");
  UpdateResult result;
  Stopwatch watch;
  Expect(RunUpdate(pipeline.get(), UpdateOptions{}, &result), "the end-to-end update");
  const double seconds = watch.Seconds();
  const FlowUpdateStats& flow = result.flows.at(0);
  const std::string report =
      fmt::format("{} {} {} {} {}\n", kUpdaterReportPrefix, seconds, result.batches, flow.input_rows, flow.output_rows);
  ExpectSys(::write(STDOUT_FILENO, report.data(), report.size()) == static_cast<ssize_t>(report.size()),
            "write report");
  return 0;
}

}  // namespace spool::bench
