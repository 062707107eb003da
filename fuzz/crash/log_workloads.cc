#include "log_workloads.h"

#include <atomic>
#include <random>
#include <thread>

namespace spool::crashtest {
namespace {

// Joins parts into a tag. (Built with append: GCC 12 reports a false
// -Wrestrict on chained operator+ of temporaries.)
std::string Tag(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

// Appends `body`, recording the attempt and the acknowledgement.
bool Append(Log* log, LogModel* model, const std::string& body) {
  model->AppendAttempted(body);
  LogCommit commit;
  if (!log->Append(LogWrite{"WRITE", body}, &commit).ok()) return false;
  model->AppendAcked(body, commit);
  return true;
}

// Truncates after `version`; with a `first` body, the new epoch's first
// commit is written with the cut (as a store's rewind writes its RESTORE).
bool Truncate(Log* log, LogModel* model, uint64_t version, const std::string& first = {}) {
  model->TruncateAttempted(version, first);
  LogPosition head;
  LogCommit commit;
  const LogWrite write{"RESTORE", first};
  if (!log->TruncateAfter(version, /*discard_suffix=*/false, &head, first.empty() ? nullptr : &write, &commit).ok()) {
    return false;
  }
  model->TruncateAcked(version, head.epoch);
  if (!first.empty()) model->AppendAcked(first, commit);
  return true;
}

bool Retain(Log* log, LogModel* model, uint64_t pinned_version) {
  model->RetentionAttempted(pinned_version);
  uint64_t deleted = 0;
  return log->DeleteSegmentsBefore(pinned_version, &deleted).ok();
}

// Runs `writers` threads, each appending `each` bodies.
bool ConcurrentAppends(Log* log, LogModel* model, const std::string& tag, int writers, uint64_t each, size_t bytes) {
  std::vector<std::thread> threads;
  std::atomic<bool> ok{true};
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (uint64_t i = 0; i < each && ok; ++i) {
        if (!Append(log, model, WorkloadBody(Tag({tag, "-w", std::to_string(w)}), i, bytes, false))) ok = false;
      }
    });
  }
  for (auto& t : threads) t.join();
  return ok;
}

using Step = std::function<bool(Log*, LogModel*)>;

// A workload that opens the log and runs `steps` until one fails.
LogWorkload Sequence(std::string name, LogOptions options, std::vector<Step> steps) {
  LogWorkload w;
  w.name = std::move(name);
  w.options = options;
  w.run = [steps = std::move(steps)](Env* env, const LogOptions& opts, LogModel* model) {
    std::unique_ptr<Log> log;
    if (!OpenWorkloadLog(env, opts, &log).ok()) return;
    for (const Step& step : steps) {
      if (!step(log.get(), model)) return;
    }
  };
  return w;
}

Step Appends(std::string tag, uint64_t count, size_t bytes, bool compressible) {
  return [=](Log* log, LogModel* model) {
    for (uint64_t i = 0; i < count; ++i) {
      if (!Append(log, model, WorkloadBody(tag, i, bytes, compressible && i % 3 == 0))) return false;
    }
    return true;
  };
}

}  // namespace

LogOptions BaseOptions() {
  LogOptions options;
  options.new_store_id = kStoreId;
  options.segment_size_bytes = 64 << 10;
  options.preallocate_bytes = 16 << 10;
  options.compress_min_bytes = 2048;
  return options;
}

std::string WorkloadBody(const std::string& tag, uint64_t i, size_t bytes, bool compressible) {
  std::string body = Tag({tag, "#", std::to_string(i), ":"});
  std::mt19937_64 rng(std::hash<std::string>{}(body));
  while (body.size() < bytes) body.push_back(compressible ? 'c' : static_cast<char>(rng()));
  return body;
}

Status OpenWorkloadLog(Env* env, const LogOptions& options, std::unique_ptr<Log>* log) {
  // The store directory, made durable the way the store layer makes it.
  SPOOL_RETURN_IF_ERROR(env->CreateDir(DirName(kLogDir)));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(DirName(DirName(kLogDir))));
  LogOptions opts = options;
  opts.env = env;
  return Log::Open(opts, kLogDir, log);
}

std::vector<LogWorkload> StandardWorkloads() {
  std::vector<LogWorkload> workloads;
  workloads.push_back(Sequence("single-commits", BaseOptions(), {Appends("single", 12, 100, true)}));
  workloads.push_back(Sequence("four-concurrent-committers", BaseOptions(), {[](Log* log, LogModel* model) {
                                 return ConcurrentAppends(log, model, "concurrent", 4, 4, 100);
                               }}));
  workloads.push_back(Sequence("segment-roll", BaseOptions(), {Appends("roll", 24, 6000, false)}));
  workloads.push_back(Sequence(
      "truncate-and-retry", BaseOptions(),
      {Appends("before-cut", 20, 4000, false), [](Log* log, LogModel* model) { return Truncate(log, model, 8); },
       Appends("after-cut", 4, 300, false)}));
  // The second cut falls in the segment the first one kept: the first
  // cut's archive (a link to that segment) must stay whole.
  workloads.push_back(
      Sequence("truncate-twice-in-one-segment", BaseOptions(),
               {Appends("first", 12, 200, false), [](Log* log, LogModel* model) { return Truncate(log, model, 9); },
                Appends("second", 2, 200, false), [](Log* log, LogModel* model) { return Truncate(log, model, 5); },
                Appends("third", 2, 200, false)}));
  // A store's rewind: the cut and the new epoch's first commit in one step.
  workloads.push_back(Sequence("truncate-with-first-commit", BaseOptions(),
                               {Appends("before-cut", 20, 4000, false),
                                [](Log* log, LogModel* model) { return Truncate(log, model, 8, "first-of-epoch-2"); },
                                Appends("after-cut", 3, 300, false)}));
  workloads.push_back(
      Sequence("retention", BaseOptions(),
               {Appends("old", 36, 4000, false), [](Log* log, LogModel* model) { return Retain(log, model, 20); },
                Appends("new", 3, 300, false)}));
  return workloads;
}

LogWorkload RandomWorkload(uint64_t seed) {
  std::mt19937_64 rng(seed);
  LogOptions options = BaseOptions();
  options.segment_size_bytes = (64u << 10) * (1 + rng() % 3);
  const uint64_t preallocate[] = {0, 4096, 16384, 65536};
  options.preallocate_bytes = preallocate[rng() % 4];
  options.durability = rng() % 4 == 0 ? Durability::kGroupWindow : Durability::kSync;
  options.group_window_us = 50;
  std::vector<Step> steps;
  const int ops = 3 + static_cast<int>(rng() % 12);
  uint64_t appended = 0;  // an upper bound on the newest version
  for (int op = 0; op < ops; ++op) {
    const std::string tag = Tag({"s", std::to_string(seed), "o", std::to_string(op)});
    const uint64_t kind = rng() % 10;
    if (kind < 5) {
      const uint64_t count = 1 + rng() % 8;
      steps.push_back(Appends(tag, count, 16 + rng() % 9000, rng() % 2 == 0));
      appended += count;
    } else if (kind < 7) {
      const int writers = 2 + static_cast<int>(rng() % 3);
      const uint64_t each = 1 + rng() % 4;
      const size_t bytes = 16 + rng() % 3000;
      steps.push_back(
          [=](Log* log, LogModel* model) { return ConcurrentAppends(log, model, tag, writers, each, bytes); });
      appended += each * static_cast<uint64_t>(writers);
    } else if (kind < 8 && appended > 0) {
      const uint64_t fraction = rng() % 100;
      steps.push_back([=](Log* log, LogModel* model) {
        const uint64_t oldest = log->Oldest().version;
        const uint64_t newest = log->Newest().version;
        if (oldest == 0 || oldest > newest) return true;  // nothing retained to cut after
        uint64_t version = oldest + (newest - oldest) * fraction / 100;
        LogEntry entry;
        if (!log->Read(version, &entry).ok()) version = newest;  // one an earlier cut took
        return Truncate(log, model, version, fraction % 2 == 0 ? Tag({tag, "-first"}) : std::string());
      });
    } else if (kind < 9) {
      const uint64_t fraction = rng() % 100;
      steps.push_back(
          [=](Log* log, LogModel* model) { return Retain(log, model, log->Newest().version * fraction / 100); });
    } else {
      steps.push_back([](Log* log, LogModel*) { return log->Flush().ok(); });
    }
  }
  return Sequence(Tag({"random-", std::to_string(seed)}), options, std::move(steps));
}

}  // namespace spool::crashtest
