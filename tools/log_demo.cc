#include "log_demo.h"

#include <stdlib.h>

#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "cli_format.h"
#include "commands.h"
#include "spool/testing/fault_env.h"
#include "spool/txnlog/log.h"

namespace spool::cli {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string DemoBody(uint64_t writer, uint64_t i) {
  return fmt::format("{{\"sensor\":\"s-{:02}\",\"seq\":{},\"reading\":{:.2f}}}", writer, i,
                     static_cast<double>((writer * 7919 + i * 104729) % 10000) / 100.0);
}

// What the writers were told: acknowledged commits by version.
struct Acknowledged {
  std::mutex mu;
  std::map<uint64_t, std::string> bodies;
  uint64_t failed_appends = 0;
};

// Each writer commits until it has made `per_writer` commits or an append
// fails (the simulated power cut).
void RunWriters(Log* log, int writers, uint64_t per_writer, uint64_t round, Acknowledged* acked) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(writers));
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([=] {
      for (uint64_t i = 0; i < per_writer; ++i) {
        const std::string body = DemoBody(static_cast<uint64_t>(w), round * per_writer + i);
        LogCommit commit;
        Status s = log->Append(LogWrite{"WRITE", body}, &commit);
        std::lock_guard<std::mutex> lock(acked->mu);
        if (!s.ok()) {
          ++acked->failed_appends;
          return;
        }
        acked->bodies[commit.position.version] = body;
      }
    });
  }
  for (auto& t : threads) t.join();
}

std::string MakeTempDir() {
  char pattern[] = "/tmp/spool-demo-XXXXXX";
  const char* dir = mkdtemp(pattern);
  return dir == nullptr ? std::string() : std::string(dir);
}

struct Survival {
  uint64_t acknowledged = 0;
  uint64_t survived = 0;
  uint64_t lost = 0;
  uint64_t mismatched = 0;
  uint64_t unacknowledged_kept = 0;
};

// Compares the recovered log with what was acknowledged.
Status CheckSurvival(Log* log, Acknowledged& acked, Survival* out) {
  std::unique_ptr<LogIterator> it;
  SPOOL_RETURN_IF_ERROR(log->NewIterator(0, &it));
  std::map<uint64_t, std::string> recovered;
  LogEntry entry;
  while (it->Next(&entry)) recovered[entry.position.version] = entry.body;
  SPOOL_RETURN_IF_ERROR(it->status());
  out->acknowledged = acked.bodies.size();
  for (const auto& [version, body] : acked.bodies) {
    auto found = recovered.find(version);
    if (found == recovered.end()) {
      ++out->lost;
    } else if (found->second != body) {
      ++out->mismatched;
    } else {
      ++out->survived;
    }
  }
  for (const auto& [version, body] : recovered) {
    if (acked.bodies.count(version) == 0) ++out->unacknowledged_kept;
  }
  return Status::OK();
}

// The demo's four steps on one log, each printing what it did; a step that
// fails says so and returns the exit code.
class LogDemo {
 public:
  LogDemo(const LogDemoOptions& options, std::string log_dir)
      : options_(options), log_dir_(std::move(log_dir)), fault_(Env::Default()) {}

  int Run() {
    if (int code = WriteDurably(); code != kExitOk) return code;
    CutThePower();
    if (int code = Recover(); code != kExitOk) return code;
    return Truncate();
  }

  // Whether every acknowledged commit survived (after Run).
  bool ok() const { return survival_.lost == 0 && survival_.mismatched == 0; }

 private:
  // 1. Durable commits from concurrent writers, on the real disk.
  int WriteDurably() {
    LogOptions log_options;
    log_options.env = &fault_;
    Status s = Log::Open(log_options, log_dir_, &log_);
    if (!s.ok()) return (std::cerr << "spool: " << s.ToString() << "\n", kExitError);
    per_writer_ = std::max<uint64_t>(1, options_.commits / static_cast<uint64_t>(options_.writers));
    const auto start = Clock::now();
    RunWriters(log_.get(), options_.writers, per_writer_, 0, &acked_);
    const double write_seconds = SecondsSince(start);
    const LogStats stats = log_->Stats();
    std::cout << fmt::format(
        "1. wrote {} commits from {} writers, each durable (fdatasync) before acknowledged:\n"
        "     {:.0f} commits/s, {:.1f} commits per sync (group commit)\n",
        FormatCount(stats.appends), options_.writers, static_cast<double>(stats.appends) / write_seconds,
        static_cast<double>(stats.appends) / static_cast<double>(std::max<uint64_t>(1, stats.syncs)));
    return kExitOk;
  }

  // 2. Cut the power at a seeded I/O call while the writers go on.
  void CutThePower() {
    std::mt19937_64 rng(options_.seed);
    const uint64_t crash_call = fault_.io_calls() + 1 + rng() % 64;
    fault_.CrashAtCall(crash_call);
    RunWriters(log_.get(), options_.writers, per_writer_, 1, &acked_);
    log_.reset();
    fault_.SimulateCrash(CrashMode::kPowerLoss, options_.seed);
    std::cout << fmt::format(
        "2. cut the power at I/O call #{} (seed {}) while {} writers kept committing:\n"
        "     {} commits acknowledged in all, {} appends cut off by the crash\n",
        crash_call, options_.seed, options_.writers, FormatCount(acked_.bodies.size()), acked_.failed_appends);
  }

  // 3. Recover from what the disk kept.
  int Recover() {
    LogOptions reopen;
    LogRecoveryReport report;
    const auto start = Clock::now();
    Status s = Log::Open(reopen, log_dir_, &log_, &report);
    const double recover_seconds = SecondsSince(start);
    if (!s.ok()) return (std::cerr << "spool: recovery failed: " << s.ToString() << "\n", kExitFailure);
    s = CheckSurvival(log_.get(), acked_, &survival_);
    if (!s.ok()) return (std::cerr << "spool: reading back failed: " << s.ToString() << "\n", kExitFailure);
    std::cout << fmt::format(
        "3. reopened in {:.2f} ms: scanned {} records of the active segment, cut a torn tail of {}\n"
        "     {} of {} acknowledged commits survived ({} lost, {} changed); {} unacknowledged kept whole\n",
        recover_seconds * 1000, FormatCount(report.records_scanned), FormatBytes(report.torn_tail_bytes),
        FormatCount(survival_.survived), FormatCount(survival_.acknowledged), survival_.lost, survival_.mismatched,
        survival_.unacknowledged_kept);
    return kExitOk;
  }

  // 4. Rewind the log: truncate after a version, into a new epoch.
  int Truncate() {
    const uint64_t cut_after = log_->Newest().version / 2;
    LogPosition head;
    Status s = log_->TruncateAfter(cut_after, /*discard_suffix=*/false, &head);
    LogCommit commit;
    if (s.ok()) s = log_->Append(LogWrite{"WRITE", DemoBody(99, 0)}, &commit);
    if (!s.ok()) return (std::cerr << "spool: truncation failed: " << s.ToString() << "\n", kExitFailure);
    std::cout << fmt::format(
        "4. truncated after version {}: epoch {} begins; the cut suffix is archived; the next commit is {}/{}\n",
        cut_after, head.epoch, commit.position.epoch, commit.position.version);
    std::cout << fmt::format("\nInspect it: spool log inspect {}\n", log_dir_);
    log_.reset();
    return kExitOk;
  }

  const LogDemoOptions& options_;
  const std::string log_dir_;
  FaultEnv fault_;  // under the log until the power cut: outlives it
  std::unique_ptr<Log> log_;
  Acknowledged acked_;
  uint64_t per_writer_ = 0;
  Survival survival_;
};

}  // namespace

int RunLogDemo(const LogDemoOptions& options) {
  const std::string dir = options.dir.empty() ? MakeTempDir() : options.dir;
  if (dir.empty() || !Env::Default()->CreateDir(dir).ok()) {
    std::cerr << "spool: cannot create the directory " << (dir.empty() ? "(temporary)" : dir) << "\n";
    return kExitError;
  }
  std::cout << fmt::format("Spool log demo: an embedded store in {}\n\n", dir);
  LogDemo demo(options, JoinPath(dir, "log"));
  if (int code = demo.Run(); code != kExitOk) return code;
  if (!options.keep && options.dir.empty()) {
    (void)RemoveTree(Env::Default(), dir);
    std::cout << "(temporary directory removed; pass --keep to keep it)\n";
  }
  std::cout << (demo.ok() ? "\nOK: no acknowledged commit was lost.\n" : "\nFAILED: acknowledged commits were lost.\n");
  return demo.ok() ? kExitOk : kExitFailure;
}

}  // namespace spool::cli
