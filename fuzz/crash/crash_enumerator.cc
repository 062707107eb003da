#include "crash_enumerator.h"

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>

#include "log_format.h"
#include "progress.h"
#include "spool/testing/mem_env.h"
#include "summary.h"

namespace spool::crashtest {
namespace {

constexpr size_t kMaxFailuresKept = 5;

bool RotateModes() {
  const char* modes = std::getenv("SPOOL_CRASH_MODES");
  return modes != nullptr && std::string_view(modes) == "rotate";
}

// glibc raises its mmap threshold to the size of the largest block the
// program frees. LMDB's environment callocs a 2 MiB dirty list at every
// open, so once a store had been closed that block came from the heap and
// was cleared by hand: a crash case opens stores many times, and clearing
// was a fifth of a rewind case's profile. Held at 1 MiB, such blocks are
// fresh zero pages (a rewind campaign ran 7 % faster).
void HoldMmapThreshold() {
#ifdef __GLIBC__
  static std::once_flag once;
  std::call_once(once, [] { mallopt(M_MMAP_THRESHOLD, 1 << 20); });
#endif
}

// Flips one bit in a random segment's durable bytes; false if there were none.
bool FlipRandomBit(FaultEnv* env, uint64_t seed) {
  std::vector<std::string> names;
  if (!env->ListDir(kLogDir, &names).ok()) return false;
  std::vector<std::string> segments;
  for (const std::string& name : names) {
    if (name.ends_with(".seg")) segments.push_back(name);
  }
  if (segments.empty()) return false;
  const std::string path = JoinPath(kLogDir, segments[seed % segments.size()]);
  uint64_t size = 0;
  if (!env->GetFileSize(path, &size).ok() || size == 0) return false;
  return env->FlipBit(path, seed).ok();
}

// What the log reads back as after recovery: the open's or the read's error,
// or its entries.
struct Recovered {
  Status status;
  std::vector<LogEntry> entries;
};

Recovered Recover(FaultEnv* env, const LogWorkload& workload) {
  Recovered out;
  std::unique_ptr<Log> log;
  out.status = OpenWorkloadLog(env, workload.options, &log);
  if (out.status.ok()) out.status = ReadEntries(log.get(), &out.entries);
  return out;
}

bool SameEntries(const std::vector<LogEntry>& a, const std::vector<LogEntry>& b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i].position != b[i].position || a[i].body != b[i].body) return false;
  }
  return true;
}

// The first version of the log's last group commit (0: no record): the
// records recovery may drop as a torn write, since nothing written after
// them proves that they were synced.
uint64_t LastGroupFirstVersion(Env* env) {
  std::vector<std::string> names;
  if (!env->ListDir(kLogDir, &names).ok()) return 0;
  std::string newest, meta_bytes;
  for (const std::string& name : names) {
    if (name.ends_with(".seg") && name > newest) newest = name;
  }
  logfmt::Meta meta;
  std::string bytes;
  if (newest.empty() || !ReadFileToString(env, JoinPath(kLogDir, "META"), &meta_bytes).ok() ||
      !logfmt::DecodeMeta(meta_bytes, &meta).ok() || !ReadFileToString(env, JoinPath(kLogDir, newest), &bytes).ok()) {
    return 0;
  }
  uint64_t first = 0;
  logfmt::RecordHeader header;
  for (uint64_t at = logfmt::kSegmentHeaderBytes;
       at < bytes.size() &&
       logfmt::DecodeRecord(meta.store_id, std::string_view(bytes).substr(at), &header) == logfmt::RecordCheck::kValid;
       at += logfmt::RecordBytes(header.payload_length)) {
    first = header.group_first_version();
  }
  return first;
}

// Classifies what a recovered log read back after a flip against what it
// read back before (whose last group begins at `last_group`).
MediaFault ClassifyMediaFault(const Recovered& clean, uint64_t last_group, const Recovered& flipped,
                              std::string* detail) {
  if (!flipped.status.ok()) {
    if (flipped.status.IsCorruption()) return MediaFault::kDetected;
    *detail = "recovery failed with a non-corruption error: " + flipped.status.ToString();
    return MediaFault::kUndetected;
  }
  const size_t n = clean.entries.size();
  if (flipped.entries.size() == n && SameEntries(flipped.entries, clean.entries, n)) return MediaFault::kNoEffect;
  const size_t kept = flipped.entries.size();
  if (kept < n && SameEntries(flipped.entries, clean.entries, kept) &&
      clean.entries[kept].position.version >= last_group) {
    return MediaFault::kTailDropped;
  }
  *detail = "read back " + std::to_string(flipped.entries.size()) + " records where the log holds " +
            std::to_string(n) + ", without an error";
  return MediaFault::kUndetected;
}

// Opens the recovered log and runs every check against the model.
void CheckRecovered(const LogWorkload& workload, FaultEnv* env, LogModel* model, bool media_fault,
                    StateResult* result) {
  std::unique_ptr<Log> log;
  const uint64_t before = env->io_calls();
  Status s = OpenWorkloadLog(env, workload.options, &log);
  result->recovery_calls = env->io_calls() - before;
  ++result->recoveries;
  if (!s.ok()) {
    if (!(media_fault && s.IsCorruption())) result->violations.push_back({"recoverable", s.ToString()});
    return;
  }
  const std::string archive = JoinPath(kLogDir, "archive");
  model->Check(log.get(), env, archive, media_fault, &result->violations);
  if (media_fault) return;
  uint64_t cut = 0;
  if (model->truncation_in_flight(&cut)) {  // the user retries the interrupted truncation
    LogPosition head;
    s = log->TruncateAfter(cut, false, &head);
    if (!s.ok()) return result->violations.push_back({"truncation converges", "retry: " + s.ToString()});
    model->TruncateAcked(cut, head.epoch);
    model->Check(log.get(), env, archive, false, &result->violations);
  }
  std::vector<LogEntry> first;
  (void)ReadEntries(log.get(), &first);
  log.reset();
  s = OpenWorkloadLog(env, workload.options, &log);
  ++result->recoveries;
  std::vector<LogEntry> second;
  if (s.ok()) s = ReadEntries(log.get(), &second);
  if (!s.ok() || second.size() != first.size() ||
      (!first.empty() &&
       (first.back().position != second.back().position || first.back().body != second.back().body))) {
    return result->violations.push_back({"idempotent", "a second recovery differs: " + s.ToString()});
  }
  // The next version: past every one the log ever held (a truncation's
  // cut ones included), so at least the one after the newest.
  LogCommit commit;
  const uint64_t next = log->NextVersion();
  s = log->Append(LogWrite{"WRITE", "after-recovery"}, &commit);
  if (!s.ok() || commit.position.version != log->Newest().version || commit.position.version != next ||
      (!first.empty() && commit.position.version <= first.back().position.version)) {
    if (!first.empty() || !s.ok()) result->violations.push_back({"writable", "append after recovery: " + s.ToString()});
  }
}

}  // namespace

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}

void RecordResult(const std::string& description, const StateResult& result, CrashFigures* figures) {
  ++figures->states_checked;
  figures->recoveries += result.recoveries;
  if (result.media_fault != MediaFault::kNone) ++figures->media_faults;
  if (result.media_fault == MediaFault::kDetected) ++figures->media_faults_detected;
  if (result.media_fault == MediaFault::kTailDropped) ++figures->media_faults_tail_dropped;
  if (result.media_fault == MediaFault::kNoEffect) ++figures->media_faults_no_effect;
  figures->violations += result.violations.size();
  for (const Violation& v : result.violations) {
    if (figures->failures.size() >= kMaxFailuresKept) break;
    figures->failures.push_back(description + ": " + v.invariant + ": " + v.detail);
  }
}

void PrintFigures(const std::string& family, const CrashFigures& f, bool campaign) {
  RecordFigures(family, f, campaign);
  std::printf(
      "[crash] %-28s crash points %5llu  states %7llu  recovery-crash states %6llu  recoveries %7llu  violations "
      "%llu\n",
      f.workload.c_str(), static_cast<unsigned long long>(f.crash_points),
      static_cast<unsigned long long>(f.states_checked), static_cast<unsigned long long>(f.recovery_crash_states),
      static_cast<unsigned long long>(f.recoveries), static_cast<unsigned long long>(f.violations));
  if (f.media_faults > 0) {
    std::printf("[crash] %-28s media faults %llu: detected %llu, torn tail dropped %llu, no effect %llu\n", "",
                static_cast<unsigned long long>(f.media_faults),
                static_cast<unsigned long long>(f.media_faults_detected),
                static_cast<unsigned long long>(f.media_faults_tail_dropped),
                static_cast<unsigned long long>(f.media_faults_no_effect));
  }
  for (const std::string& failure : f.failures) std::printf("[crash]   %s\n", failure.c_str());
}

std::string DescribeState(const LogWorkload& workload, const CrashState& s) { return DescribeCrash(workload.name, s); }

std::string DescribeCrash(const std::string& workload, const CrashState& s) {
  std::string out = workload + " call=" + std::to_string(s.crash_call) + " mode=" + std::string(CrashModeName(s.mode)) +
                    " seed=" + std::to_string(s.seed);
  if (s.recovery_crash_call != 0) out += " recovery-call=" + std::to_string(s.recovery_crash_call);
  if (s.flip_bit) out += " flip-bit";
  if (s.fail_sync_call != 0) out += " fail-sync=" + std::to_string(s.fail_sync_call);
  return out;
}

// Runs the workload to the state's crash (and recovery crash) and builds the
// disk that survives; false when a crash point was not reached.
bool Crash(const LogWorkload& workload, const CrashState& state, FaultEnv* env, LogModel* model, StateResult* result) {
  if (state.crash_call != 0) env->CrashAtCall(state.crash_call);
  if (state.fail_sync_call != 0) env->FailSyncAtCall(state.fail_sync_call);
  LogOptions options = workload.options;
  options.env = env;
  workload.run(env, options, model);
  result->workload_calls = env->io_calls();
  result->reached = state.crash_call == 0 || env->crashed();
  env->SimulateCrash(state.mode, state.seed);
  if (state.recovery_crash_call == 0) return true;
  env->CrashAtCall(env->io_calls() + state.recovery_crash_call);
  {
    std::unique_ptr<Log> log;
    (void)OpenWorkloadLog(env, workload.options, &log);
  }
  if (!env->crashed()) {
    result->reached = false;
    return false;
  }
  env->SimulateCrash(state.mode, Mix(state.seed, state.recovery_crash_call));
  return true;
}

StateResult CheckState(const LogWorkload& workload, const CrashState& state) {
  StateResult result;
  MemEnv mem;
  FaultEnv env(&mem);
  LogModel model;
  if (!Crash(workload, state, &env, &model, &result)) return result;
  bool flipped = false;
  if (state.flip_bit) {
    // The flip lands on a recovered log (what recovery wrote kept, as after
    // a process kill), so whatever it changes is judged against that log
    // read back without it.
    const Recovered clean = Recover(&env, workload);
    ++result.recoveries;
    env.SimulateCrash(CrashMode::kProcessKill, state.seed);
    const uint64_t last_group = LastGroupFirstVersion(&env);
    flipped = clean.status.ok() && FlipRandomBit(&env, state.seed);
    if (flipped) {
      std::string detail;
      result.media_fault = ClassifyMediaFault(clean, last_group, Recover(&env, workload), &detail);
      ++result.recoveries;
      if (result.media_fault == MediaFault::kUndetected) result.violations.push_back({"media fault detected", detail});
    }
  }
  CheckRecovered(workload, &env, &model, flipped, &result);
  return result;
}

std::vector<CrashMode> EnumeratedModes(uint64_t call) {
  if (!RotateModes()) return {std::begin(kAllCrashModes), std::end(kAllCrashModes)};
  return {kAllCrashModes[call % std::size(kAllCrashModes)]};
}

uint64_t EnumeratedModesPerPoint() { return RotateModes() ? 1 : std::size(kAllCrashModes); }

CrashFigures EnumerateCrashes(const LogWorkload& workload, bool crash_recovery) {
  CrashFigures figures;
  figures.workload = workload.name;
  figures.crash_points = CheckState(workload, CrashState{}).workload_calls;
  cli::ProgressBar bar("crash points of " + workload.name, "points", cli::ProgressEnabled(cli::ProgressMode::kAuto));
  for (uint64_t call = 1; call <= figures.crash_points; ++call) {
    bar.Update(call - 1, figures.crash_points);
    for (CrashMode mode : EnumeratedModes(call)) {
      CrashState state{call, mode, Mix(call, static_cast<uint64_t>(mode)), 0, false, 0};
      StateResult result = CheckState(workload, state);
      RecordResult(DescribeState(workload, state), result, &figures);
      if (!crash_recovery) continue;
      for (uint64_t r = 1; r <= result.recovery_calls; ++r) {
        state.recovery_crash_call = r;
        StateResult nested = CheckState(workload, state);
        if (!nested.reached) continue;
        ++figures.recovery_crash_states;
        RecordResult(DescribeState(workload, state), nested, &figures);
      }
    }
  }
  bar.Update(figures.crash_points, figures.crash_points);
  return figures;
}

CrashFigures RunCampaign(uint64_t first_seed, uint64_t cycles) {
  CrashFigures figures;
  figures.workload = "random campaign from seed " + std::to_string(first_seed);
  cli::ProgressBar bar("log campaign", "cycles", cli::ProgressEnabled(cli::ProgressMode::kAuto));
  for (uint64_t seed = first_seed; seed < first_seed + cycles; ++seed) {
    bar.Update(seed - first_seed, cycles);
    LogWorkload workload = RandomWorkload(seed);
    std::mt19937_64 rng(Mix(seed, 0xca5e));
    const uint64_t calls = CheckState(workload, CrashState{}).workload_calls;
    CrashState state;
    state.crash_call = 1 + rng() % (calls + 1);
    state.mode = kAllCrashModes[rng() % std::size(kAllCrashModes)];
    state.seed = rng();
    state.flip_bit = rng() % 10 == 0;
    state.fail_sync_call = rng() % 10 == 0 ? 1 + rng() % (calls + 1) : 0;
    if (rng() % 4 == 0) state.recovery_crash_call = 1 + rng() % 4;
    StateResult result = CheckState(workload, state);
    ++figures.crash_points;
    if (state.recovery_crash_call != 0 && result.reached) ++figures.recovery_crash_states;
    RecordResult(DescribeState(workload, state), result, &figures);
  }
  bar.Update(cycles, cycles);
  return figures;
}

CrashFigures EnumerateCheckedCrashes(const std::string& name, const CheckFunction& check,
                                     const std::function<bool(uint64_t call, CrashMode mode)>& nest,
                                     uint64_t max_recovery_calls) {
  HoldMmapThreshold();
  CrashFigures figures;
  figures.workload = name;
  const StateResult clean = check(CrashState{});
  figures.crash_points = clean.workload_calls;
  RecordResult(DescribeCrash(name, CrashState{}), clean, &figures);
  cli::ProgressBar bar("crash points of " + name, "points", cli::ProgressEnabled(cli::ProgressMode::kAuto));
  for (uint64_t call = 1; call <= figures.crash_points; ++call) {
    bar.Update(call - 1, figures.crash_points);
    for (CrashMode mode : EnumeratedModes(call)) {
      CrashState state{call, mode, Mix(call, static_cast<uint64_t>(mode)), 0, false, 0};
      RecordResult(DescribeCrash(name, state), check(state), &figures);
      if (!nest(call, mode)) continue;
      for (uint64_t r = 1; r <= max_recovery_calls; ++r) {
        state.recovery_crash_call = r;
        const StateResult nested = check(state);
        if (!nested.reached) break;
        ++figures.recovery_crash_states;
        RecordResult(DescribeCrash(name, state), nested, &figures);
      }
    }
  }
  bar.Update(figures.crash_points, figures.crash_points);
  return figures;
}

CrashFigures RunCheckedCampaign(const std::string& name, const CheckFunction& check, uint64_t first_seed,
                                uint64_t cycles, uint64_t salt, uint64_t nest_one_in, uint64_t max_recovery_call) {
  HoldMmapThreshold();
  CrashFigures figures;
  figures.workload = name + "-campaign";
  const uint64_t calls = check(CrashState{}).workload_calls;
  cli::ProgressBar bar(name + " campaign", "cycles", cli::ProgressEnabled(cli::ProgressMode::kAuto));
  for (uint64_t seed = first_seed; seed < first_seed + cycles; ++seed) {
    bar.Update(seed - first_seed, cycles);
    std::mt19937_64 rng(Mix(seed, salt));
    CrashState state{1 + rng() % std::max<uint64_t>(calls, 1),
                     kAllCrashModes[rng() % std::size(kAllCrashModes)],
                     rng(),
                     0,
                     false,
                     0};
    if (rng() % nest_one_in == 0) state.recovery_crash_call = 1 + rng() % max_recovery_call;
    StateResult result = check(state);
    if (!result.reached && state.recovery_crash_call != 0) {  // recovery was shorter: crash it at its end
      state.recovery_crash_call = 0;
      result = check(state);
    }
    ++figures.crash_points;
    if (state.recovery_crash_call != 0) ++figures.recovery_crash_states;
    RecordResult(DescribeCrash(name, state), result, &figures);
  }
  bar.Update(cycles, cycles);
  return figures;
}

CampaignSeeds CampaignSeedsFromEnv(const std::string& prefix, uint64_t cycles) {
  CampaignSeeds seeds{1, cycles};
  if (const char* seed = std::getenv((prefix + "_SEED").c_str())) seeds.first_seed = std::strtoull(seed, nullptr, 10);
  if (const char* n = std::getenv((prefix + "_CYCLES").c_str())) seeds.cycles = std::strtoull(n, nullptr, 10);
  return seeds;
}

void PrintCampaignSeeds(const std::string& name, const CampaignSeeds& seeds) {
  std::printf("[crash] %s campaign: seeds %llu-%llu\n", name.c_str(), static_cast<unsigned long long>(seeds.first_seed),
              static_cast<unsigned long long>(seeds.first_seed + seeds.cycles - 1));
}

}  // namespace spool::crashtest
