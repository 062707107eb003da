// spool-crashfuzz: Spool's crash-point fuzzing as a tool (the README's crash-safety section). Every
// workload of the crash engine — the log's (appends, concurrent committers,
// segment roll, truncation, retention), the store's (multi-table commits,
// snapshots, state apply, restore, rewinds, vacuum with pinned readers), the
// pipeline's exactly-once updates and the rewinds (whole pipeline, some
// datasets, undo) — crashed on FaultEnv and checked against its model.
//
//   spool-crashfuzz --enumerate [--families log,store,pipeline,rewind]   (mixed: campaigns only)
//   spool-crashfuzz --random --seed S (--cycles N | --duration 1h)
//   spool-crashfuzz --blackbox [--dir D] [--seed S] (--cycles N | --duration 1h)
//   spool-crashfuzz --replay "FAMILY WORKLOAD call=… mode=… seed=… [recovery-call=…] [flip-bit] [fail-sync=…]"
//   spool-crashfuzz merge A.json B.json … [--json OUT]
//
// Exit: 0 no violation, 1 violations (each printed with its replay line),
// 2 bad arguments.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blackbox.h"
#include "crash_enumerator.h"
#include "kill_point.h"
#include "log_workloads.h"
#include "mixed_crash.h"
#include "pipeline_crash.h"
#include "rewind_crash.h"
#include "spool/stream/records.h"
#include "store_crash.h"
#include "summary.h"

namespace spool::crashtest {
namespace {

constexpr int kExitViolations = 1;
constexpr int kExitUsage = 2;

// One workload the tool can enumerate and replay; a family's campaign
// draws random workloads (or random crash states of its one workload).
struct Workload {
  std::string family;
  std::string name;
  std::function<CrashFigures()> enumerate;
  std::function<StateResult(const CrashState&)> check;
};

struct Family {
  std::string name;
  std::function<CrashFigures(uint64_t first_seed, uint64_t cycles)> campaign;
  // A workload named in a replay line that is not an enumerated one (a
  // campaign's random workload): its check, or null.
  std::function<std::function<StateResult(const CrashState&)>(const std::string& name)> random_check;
};

std::vector<Workload> AllWorkloads() {
  std::vector<Workload> out;
  for (const LogWorkload& w : StandardWorkloads()) {
    out.push_back({"log", w.name, [w] { return EnumerateCrashes(w, true); },
                   [w](const CrashState& s) { return CheckState(w, s); }});
  }
  for (const StoreWorkload& w : StandardStoreWorkloads()) {
    out.push_back({"store", w.name, [w] { return EnumerateStoreCrashes(w, true); },
                   [w](const CrashState& s) { return CheckStoreState(w, s); }});
  }
  out.push_back({"pipeline", "pipeline", [] { return EnumeratePipelineCrashes(true); }, CheckPipelineState});
  for (RewindScope scope : kAllRewindScopes) {
    out.push_back({"rewind", RewindScopeName(scope), [scope] { return EnumerateRewindCrashes(scope, true); },
                   [scope](const CrashState& s) { return CheckRewindState(scope, s); }});
  }
  return out;
}

// ("random-42", "random-") -> 42: a campaign's workload, named by its seed.
bool SeedOf(const std::string& name, const std::string& prefix, uint64_t* seed) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return false;
  char* end = nullptr;
  *seed = std::strtoull(name.c_str() + prefix.size(), &end, 10);
  return end != nullptr && *end == '\0';
}

std::vector<Family> AllFamilies() {
  std::vector<Family> out;
  out.push_back({"log", RunCampaign, [](const std::string& name) -> std::function<StateResult(const CrashState&)> {
                   uint64_t seed = 0;
                   if (!SeedOf(name, "random-", &seed)) return nullptr;
                   return [w = RandomWorkload(seed)](const CrashState& s) { return CheckState(w, s); };
                 }});
  out.push_back(
      {"store", RunStoreCampaign, [](const std::string& name) -> std::function<StateResult(const CrashState&)> {
         uint64_t seed = 0;
         if (!SeedOf(name, "random-", &seed)) return nullptr;
         return [w = RandomStoreWorkload(seed)](const CrashState& s) { return CheckStoreState(w, s); };
       }});
  out.push_back({"pipeline", RunPipelineCampaign, nullptr});
  out.push_back({"rewind",
                 [](uint64_t first, uint64_t cycles) {
                   CrashFigures all;
                   all.workload = "rewind-campaigns";
                   for (RewindScope scope : kAllRewindScopes) {
                     Accumulate(RunRewindCampaign(scope, first, cycles), "", &all);
                   }
                   return all;
                 },
                 nullptr});
  out.push_back(
      {"mixed", RunMixedCampaign, [](const std::string& name) -> std::function<StateResult(const CrashState&)> {
         uint64_t seed = 0;
         if (!SeedOf(name, "mixed-", &seed)) return nullptr;
         return [seed](const CrashState& s) { return CheckMixedState(seed, s); };
       }});
  return out;
}

// --- Modes

bool Selected(const std::vector<std::string>& families, const std::string& family) {
  return families.empty() || std::find(families.begin(), families.end(), family) != families.end();
}

int Enumerate(const std::vector<std::string>& families, const std::string& json_path) {
  Summary summary;
  const auto started = std::chrono::steady_clock::now();
  for (const Workload& w : AllWorkloads()) {
    if (Selected(families, w.family)) AddToSummary(&summary, w.family, w.enumerate());
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return ReportSummary(summary, json_path);
}

// Campaigns in rounds of `chunk` cycles per family, from `seed` on, until
// `cycles` are done or `duration_s` has passed.
int Random(const std::vector<std::string>& families, uint64_t seed, uint64_t cycles, double duration_s,
           const std::string& json_path) {
  constexpr uint64_t kChunk = 25;
  Summary summary;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  uint64_t next = seed;
  while (true) {
    const uint64_t round = cycles > 0 ? std::min(kChunk, seed + cycles - next) : kChunk;
    if (round == 0 || (duration_s > 0 && elapsed() >= duration_s)) break;
    for (const Family& family : AllFamilies()) {
      if (!Selected(families, family.name)) continue;
      CrashFigures f = family.campaign(next, round);
      f.workload = "random campaign";  // one row per family, however many rounds
      AddToSummary(&summary, family.name, f);
      summary.cycles += round;
    }
    next += round;
  }
  summary.seconds = elapsed();
  std::printf("seeds %llu to %llu\n", static_cast<unsigned long long>(seed), static_cast<unsigned long long>(next - 1));
  return ReportSummary(summary, json_path);
}

int Blackbox(const BlackboxOptions& options, const std::string& json_path) {
  Summary summary;
  const auto started = std::chrono::steady_clock::now();
  BlackboxFigures figures = RunBlackbox(options);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  AddToSummary(&summary, "blackbox", figures.crash);
  summary.blackbox = figures;
  std::printf("seeds %llu to %llu\n", static_cast<unsigned long long>(options.first_seed),
              static_cast<unsigned long long>(options.first_seed + figures.crash.crash_points - 1));
  return ReportSummary(summary, json_path);
}

// "log truncate-and-retry call=81 mode=torn-512 seed=2890705660990841234 recovery-call=6"
int Replay(const std::string& line) {
  std::istringstream in(line);
  std::string family, name, word;
  in >> family >> name;
  CrashState state;
  bool have_call = false;
  bool last = false;  // a printed violation goes on after "…: ": the case ends there
  while (!last && in >> word) {
    if (word.ends_with(':')) {
      word.pop_back();
      last = true;
    }
    const size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (key == "call") state.crash_call = std::strtoull(value.c_str(), nullptr, 10), have_call = true;
    else if (key == "mode") {
      if (Status s = ParseCrashMode(value, &state.mode); !s.ok()) {
        std::fprintf(stderr, "spool-crashfuzz: %s\n", s.ToString().c_str());
        return kExitUsage;
      }
    } else if (key == "seed") state.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "recovery-call") state.recovery_crash_call = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "fail-sync") state.fail_sync_call = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "flip-bit") state.flip_bit = true;
    else {
      std::fprintf(stderr, "spool-crashfuzz: --replay: unknown field '%s'\n", word.c_str());
      return kExitUsage;
    }
  }
  std::function<StateResult(const CrashState&)> check;
  for (const Workload& w : AllWorkloads()) {
    if (w.family == family && w.name == name) check = w.check;
  }
  for (const Family& f : AllFamilies()) {
    if (!check && f.name == family && f.random_check) check = f.random_check(name);
  }
  if (!check || !have_call) {
    std::fprintf(stderr,
                 "spool-crashfuzz: --replay wants \"FAMILY WORKLOAD call=N mode=M seed=S …\" as a violation prints "
                 "it; no workload '%s' in family '%s' (families: log, store, pipeline, rewind, mixed)\n",
                 name.c_str(), family.c_str());
    return kExitUsage;
  }
  const StateResult result = check(state);
  std::printf("replayed %s %s: crash point %s, %llu I/O calls in the workload, %llu recoveries\n", family.c_str(),
              DescribeCrash(name, state).c_str(), result.reached ? "reached" : "not reached",
              static_cast<unsigned long long>(result.workload_calls),
              static_cast<unsigned long long>(result.recoveries));
  for (const Violation& v : result.violations) std::printf("VIOLATION %s: %s\n", v.invariant.c_str(), v.detail.c_str());
  std::printf("%zu violation(s)\n", result.violations.size());
  return result.violations.empty() ? 0 : kExitViolations;
}

int Merge(const std::vector<std::string>& files, const std::string& json_path) {
  Summary summary;
  for (const std::string& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    Status s = in ? MergeSummaryJson(text.str(), &summary) : Status::NotFound("cannot read it");
    if (!s.ok()) {
      std::fprintf(stderr, "spool-crashfuzz: %s: %s\n", file.c_str(), std::string(s.message()).c_str());
      return kExitUsage;
    }
  }
  return ReportSummary(summary, json_path);
}

// This executable, to run again as --blackbox's child.
std::string SelfPath() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

}  // namespace
}  // namespace spool::crashtest

int main(int argc, char** argv) {
  using namespace spool::crashtest;
  CLI::App app{
      "spool-crashfuzz: crash-point fuzzing of every Spool layer against its model (the README's crash-safety "
      "section)"};
  bool enumerate = false, random = false, blackbox = false;
  std::string replay, json_path, duration, dir = "/tmp/spool-crashfuzz-blackbox", child_dir;
  uint64_t seed = 1, cycles = 0, max_ops = 300;
  std::vector<std::string> families;
  app.add_flag("--enumerate", enumerate,
               "Every crash point × every crash mode of every workload, and crashes in recovery");
  app.add_flag("--random", random,
               "Random campaigns: random workloads, crash points, modes, media faults, failed syncs");
  app.add_flag("--blackbox", blackbox,
               "A store on the real file system, written by a child process killed with SIGKILL at random times "
               "(and at kill points, when built in); checked after every restart");
  app.add_option("--dir", dir, "--blackbox's scratch directory (wiped first)")->capture_default_str();
  app.add_option("--max-ops", max_ops, "--blackbox: operations of one child before it exits cleanly")
      ->capture_default_str();
  app.add_option("--blackbox-child", child_dir)->group("");  // the child's side, run by --blackbox
  app.add_option("--seed", seed, "The first seed of --random and --blackbox")->capture_default_str();
  app.add_option("--cycles", cycles, "Cycles of --random per family");
  app.add_option("--duration", duration, "Run --random this long (90s, 30m, 1h, 2d) instead of --cycles");
  app.add_option("--replay", replay, "Replay one case as a violation prints it, verbose");
  app.add_option("--families", families, "Only these: log, store, pipeline, rewind, mixed")
      ->delimiter(',')
      ->check(CLI::IsMember({"log", "store", "pipeline", "rewind", "mixed"}));
  app.add_option("--json", json_path, "Also write the summary as JSON to this file");
  CLI::App* merge = app.add_subcommand("merge", "Merge JSON summaries (campaigns split by seed ranges)");
  std::vector<std::string> merge_files;
  merge->add_option("files", merge_files, "The summaries")->required();
  merge->add_option("--json", json_path, "Write the merged summary to this file");
  CLI11_PARSE(app, argc, argv);
  if (merge->parsed()) return Merge(merge_files, json_path);
  if (!child_dir.empty()) return RunBlackboxChild(child_dir, seed, max_ops);
  if (enumerate + random + blackbox + !replay.empty() != 1) {
    std::fprintf(stderr,
                 "spool-crashfuzz: give exactly one of --enumerate, --random, --blackbox, --replay, or merge\n");
    return kExitUsage;
  }
  if (!replay.empty()) return Replay(replay);
  if (enumerate) return Enumerate(families, json_path);
  double duration_s = 0;
  if (!duration.empty()) {
    uint64_t micros = 0;
    if (spool::Status s = spool::ParseDuration(duration, &micros); !s.ok()) {
      std::fprintf(stderr, "spool-crashfuzz: --duration: %s\n", std::string(s.message()).c_str());
      return kExitUsage;
    }
    duration_s = static_cast<double>(micros) / 1e6;
  }
  if ((cycles == 0) == (duration_s == 0)) {
    std::fprintf(stderr, "spool-crashfuzz: --%s needs --cycles N or --duration D\n", blackbox ? "blackbox" : "random");
    return kExitUsage;
  }
  if (blackbox) {
    BlackboxOptions options;
    options.dir = dir;
    options.self = SelfPath();
    options.first_seed = seed;
    options.cycles = cycles;
    options.duration_s = duration_s;
    options.max_ops = max_ops;
    return Blackbox(options, json_path);
  }
  return Random(families, seed, cycles, duration_s, json_path);
}
