#include "summary.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace spool::crashtest {
namespace {

using nlohmann::ordered_json;

// Every figure of `f` but its name and failures.
ordered_json FiguresJson(const CrashFigures& f) {
  return {{"crash_points", f.crash_points},
          {"states_checked", f.states_checked},
          {"recovery_crash_states", f.recovery_crash_states},
          {"recoveries", f.recoveries},
          {"violations", f.violations},
          {"media_faults", f.media_faults},
          {"media_faults_detected", f.media_faults_detected},
          {"media_faults_tail_dropped", f.media_faults_tail_dropped},
          {"media_faults_no_effect", f.media_faults_no_effect}};
}

void FiguresFromJson(const ordered_json& j, CrashFigures* f) {
  f->crash_points = j.value("crash_points", uint64_t{0});
  f->states_checked = j.value("states_checked", uint64_t{0});
  f->recovery_crash_states = j.value("recovery_crash_states", uint64_t{0});
  f->recoveries = j.value("recoveries", uint64_t{0});
  f->violations = j.value("violations", uint64_t{0});
  f->media_faults = j.value("media_faults", uint64_t{0});
  f->media_faults_detected = j.value("media_faults_detected", uint64_t{0});
  f->media_faults_tail_dropped = j.value("media_faults_tail_dropped", uint64_t{0});
  f->media_faults_no_effect = j.value("media_faults_no_effect", uint64_t{0});
}

CrashFigures Total(const Summary& summary) {
  CrashFigures total;
  for (const auto& [key, f] : summary.by_workload) Accumulate(f, "", &total);
  return total;
}

// Media faults caught (an error, or a dropped torn tail) per fault that
// changed what recovery read; 1 when none did.
double DetectionRate(const CrashFigures& f) {
  const uint64_t effective = f.media_faults - f.media_faults_no_effect;
  return effective == 0 ? 1.0
                        : static_cast<double>(f.media_faults_detected + f.media_faults_tail_dropped) /
                              static_cast<double>(effective);
}

ordered_json ToJson(const Summary& summary) {
  ordered_json workloads = ordered_json::array();
  for (const auto& [key, f] : summary.by_workload) {
    ordered_json w = {{"workload", key}};
    w.update(FiguresJson(f));
    w["failures"] = f.failures;
    workloads.push_back(std::move(w));
  }
  const CrashFigures total = Total(summary);
  ordered_json t = FiguresJson(total);
  t["media_fault_detection"] = DetectionRate(total);
  t["cycles"] = summary.cycles;
  t["seconds"] = summary.seconds;
  t["cycles_per_second"] = summary.seconds > 0 ? static_cast<double>(summary.cycles) / summary.seconds : 0.0;
  ordered_json out = {{"workloads", workloads}, {"total", t}};
  if (const auto& b = summary.blackbox) {
    out["blackbox"] = {{"restarts", b->crash.crash_points},
                       {"killed_by_parent", b->killed_by_parent},
                       {"killed_at_points", b->killed_at_points},
                       {"clean_exits", b->clean_exits},
                       {"commits_acknowledged", b->commits_acknowledged},
                       {"versions_checked", b->versions_checked},
                       {"kill_points_defined", b->points_defined},
                       {"kill_points_hit", b->points_hit},
                       {"kill_points_killed", b->points_killed},
                       {"kill_points_never_hit", b->points_never_hit}};
  }
  return out;
}

Status FromJson(const ordered_json& j, Summary* summary) {
  if (!j.is_object() || !j.contains("workloads") || !j["workloads"].is_array() || !j.contains("total")) {
    return Status::InvalidArgument("not a spool-crashfuzz summary (no \"workloads\" and \"total\")");
  }
  for (const ordered_json& w : j["workloads"]) {
    const std::string key = w.value("workload", "");
    const size_t slash = key.find('/');
    if (slash == std::string::npos) return Status::InvalidArgument("a workload without its family: " + key);
    CrashFigures f;
    f.workload = key.substr(slash + 1);
    FiguresFromJson(w, &f);
    for (const auto& failure : w.value("failures", std::vector<std::string>{})) {
      f.failures.push_back(failure.substr(failure.find(' ') + 1));
    }
    AddToSummary(summary, key.substr(0, slash), f);
  }
  summary->cycles += j["total"].value("cycles", uint64_t{0});
  summary->seconds += j["total"].value("seconds", 0.0);
  return Status::OK();
}

}  // namespace

// Adds `f`'s counts to `*into`, and its first failures, each after `prefix`.
void Accumulate(const CrashFigures& f, const std::string& prefix, CrashFigures* into) {
  into->crash_points += f.crash_points;
  into->states_checked += f.states_checked;
  into->recovery_crash_states += f.recovery_crash_states;
  into->recoveries += f.recoveries;
  into->violations += f.violations;
  into->media_faults += f.media_faults;
  into->media_faults_detected += f.media_faults_detected;
  into->media_faults_tail_dropped += f.media_faults_tail_dropped;
  into->media_faults_no_effect += f.media_faults_no_effect;
  for (const std::string& failure : f.failures) {
    if (into->failures.size() < 20) into->failures.push_back(prefix + failure);
  }
}

void AddToSummary(Summary* summary, const std::string& family, const CrashFigures& f) {
  CrashFigures& into = summary->by_workload[family + "/" + f.workload];
  into.workload = f.workload;
  Accumulate(f, family + " ", &into);
}

std::string SummaryToJson(const Summary& summary) { return ToJson(summary).dump(2); }

Status MergeSummaryJson(const std::string& text, Summary* summary) {
  const ordered_json j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("not JSON");
  return FromJson(j, summary);
}

int ReportSummary(const Summary& summary, const std::string& json_path) {
  uint64_t violations = 0;
  std::printf("%-40s %12s %12s %12s %12s %10s\n", "workload", "crash points", "states", "in recovery", "recoveries",
              "violations");
  for (const auto& [key, f] : summary.by_workload) {
    std::printf("%-40s %12llu %12llu %12llu %12llu %10llu\n", key.c_str(),
                static_cast<unsigned long long>(f.crash_points), static_cast<unsigned long long>(f.states_checked),
                static_cast<unsigned long long>(f.recovery_crash_states), static_cast<unsigned long long>(f.recoveries),
                static_cast<unsigned long long>(f.violations));
    violations += f.violations;
  }
  const CrashFigures total = Total(summary);
  if (total.media_faults > 0) {
    std::printf(
        "media faults injected: %llu; detected %llu (an error %llu, a dropped torn tail %llu), no effect %llu "
        "(the flipped byte was never read); detection %.1f%%\n",
        static_cast<unsigned long long>(total.media_faults),
        static_cast<unsigned long long>(total.media_faults_detected + total.media_faults_tail_dropped),
        static_cast<unsigned long long>(total.media_faults_detected),
        static_cast<unsigned long long>(total.media_faults_tail_dropped),
        static_cast<unsigned long long>(total.media_faults_no_effect), 100.0 * DetectionRate(total));
  }
  if (const auto& b = summary.blackbox) {
    std::printf(
        "blackbox: %llu restarts (killed by the parent %llu, at a kill point %llu, clean exits %llu), "
        "%llu commits acknowledged, %llu retained versions read back\n",
        static_cast<unsigned long long>(b->crash.crash_points), static_cast<unsigned long long>(b->killed_by_parent),
        static_cast<unsigned long long>(b->killed_at_points), static_cast<unsigned long long>(b->clean_exits),
        static_cast<unsigned long long>(b->commits_acknowledged), static_cast<unsigned long long>(b->versions_checked));
    if (b->points_defined == 0) {
      std::printf("kill points: not in this build (configure with -DSPOOL_KILL_POINTS=ON)\n");
    } else {
      std::printf("kill points: %llu defined, %llu hit (%.0f%%), %llu killed at\n",
                  static_cast<unsigned long long>(b->points_defined), static_cast<unsigned long long>(b->points_hit),
                  100.0 * static_cast<double>(b->points_hit) / static_cast<double>(b->points_defined),
                  static_cast<unsigned long long>(b->points_killed));
      std::string never;
      for (const std::string& point : b->points_never_hit) never += (never.empty() ? "" : ", ") + point;
      if (!never.empty()) std::printf("kill points never reached by this workload: %s\n", never.c_str());
    }
  }
  if (summary.cycles > 0 && summary.seconds > 0) {
    std::printf("random cycles: %llu in %.1f s (%.1f/s)\n", static_cast<unsigned long long>(summary.cycles),
                summary.seconds, static_cast<double>(summary.cycles) / summary.seconds);
  } else if (summary.cycles > 0) {
    std::printf("random cycles: %llu\n", static_cast<unsigned long long>(summary.cycles));
  }
  for (const auto& [key, f] : summary.by_workload) {
    for (const std::string& failure : f.failures) std::printf("VIOLATION %s\n", failure.c_str());
  }
  std::printf("%llu violation(s)\n", static_cast<unsigned long long>(violations));
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << SummaryToJson(summary) << "\n";
    if (!out) {
      std::fprintf(stderr, "spool-crashfuzz: cannot write %s\n", json_path.c_str());
      return 2;
    }
  }
  return violations == 0 ? 0 : 1;
}

void RecordFigures(const std::string& family, const CrashFigures& figures, bool campaign) {
  const char* dir = std::getenv("SPOOL_CRASH_FIGURES_DIR");
  if (dir == nullptr || *dir == '\0') return;
  Summary summary;
  AddToSummary(&summary, family, figures);
  if (campaign) summary.cycles = figures.crash_points;
  std::string name = family + "-" + figures.workload;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(std::filesystem::path(dir) / (name + ".json")) << SummaryToJson(summary) << "\n";
}

}  // namespace spool::crashtest
