// Crash enumeration and random crash campaigns over the log (the README's crash-safety section):
// run a workload under FaultEnv, crash at an I/O call, build the surviving
// disk in a crash mode, recover (optionally crashing recovery itself at
// each of its own I/O calls), and check the recovered log against the
// model. Every state is identified by (workload, call, mode, seed[,
// recovery call]) and replays exactly from it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "log_model.h"
#include "log_workloads.h"
#include "spool/testing/fault_env.h"

namespace spool::crashtest {

// One crash state to check.
struct CrashState {
  uint64_t crash_call = 0;  // 0: run to the end, then crash
  CrashMode mode = CrashMode::kPowerLoss;
  uint64_t seed = 0;
  uint64_t recovery_crash_call = 0;  // 0: recovery is not interrupted
  bool flip_bit = false;             // a media fault in durable data
  uint64_t fail_sync_call = 0;       // 0: no failed fsync
};

// What a flipped bit in a durable segment did (the crash tests' media faults),
// against a recovery of the same crash without the flip.
enum class MediaFault {
  kNone,         // none injected (or no durable segment byte to flip)
  kNoEffect,     // the log reads back as without it: the byte was in a torn
                 // tail or past the records, which recovery drops anyway
  kDetected,     // opening or reading failed with Corruption
  kTailDropped,  // its checksum failed in the log's last group commit,
                 // which recovery took for a torn write and dropped
  kUndetected,   // anything else: a violation
};

struct StateResult {
  bool reached = true;  // the crash (and recovery crash) points were reached
  MediaFault media_fault = MediaFault::kNone;
  uint64_t workload_calls = 0;  // I/O calls the workload made
  uint64_t recovery_calls = 0;  // I/O calls of the final recovery
  uint64_t recoveries = 0;      // opens performed while checking
  std::vector<Violation> violations;
};

// Runs and checks one state.
StateResult CheckState(const LogWorkload& workload, const CrashState& state);

// "segment-roll call=17 mode=torn-4k seed=99 recovery-call=2"
std::string DescribeState(const LogWorkload& workload, const CrashState& state);
std::string DescribeCrash(const std::string& workload, const CrashState& state);

struct CrashFigures {
  std::string workload;
  uint64_t crash_points = 0;
  uint64_t states_checked = 0;
  uint64_t recovery_crash_states = 0;
  uint64_t recoveries = 0;
  uint64_t violations = 0;
  // Media faults injected, and how each was caught (detected: an error or
  // a dropped torn tail; no effect: the flipped byte was never read).
  uint64_t media_faults = 0;
  uint64_t media_faults_detected = 0;
  uint64_t media_faults_tail_dropped = 0;
  uint64_t media_faults_no_effect = 0;
  std::vector<std::string> failures;  // the first few, each with its replay line and what broke
};

// Adds one checked state to the figures (keeping the first few failures,
// each with its replay line).
void RecordResult(const std::string& description, const StateResult& result, CrashFigures* figures);

// Prints the figures on one line ("[crash] workload crash points …") and
// the failures kept, each with the line that replays it; with
// SPOOL_CRASH_FIGURES_DIR set, also records them there under `family`
// (summary.h; `campaign`: its crash points are random cycles).
void PrintFigures(const std::string& family, const CrashFigures& figures, bool campaign = false);

// A seed derived from two numbers (a crash point and a mode, …).
uint64_t Mix(uint64_t a, uint64_t b);

// Every crash point x every mode (x every recovery crash point when
// `crash_recovery`).
CrashFigures EnumerateCrashes(const LogWorkload& workload, bool crash_recovery);

// A campaign's seeds: PREFIX_SEED (default 1) and PREFIX_CYCLES (default
// `cycles`) from the environment, so that a run can be replayed or extended.
struct CampaignSeeds {
  uint64_t first_seed = 1;
  uint64_t cycles = 0;
};
CampaignSeeds CampaignSeedsFromEnv(const std::string& prefix, uint64_t cycles);

// The crash modes an enumeration tries at crash point `call`: every mode;
// with SPOOL_CRASH_MODES=rotate in the environment, one, the next mode at
// each point (every point and every mode, a seventh of the states: the
// sanitizer builds, whose full enumeration the Release build has run).
std::vector<CrashMode> EnumeratedModes(uint64_t call);
// How many EnumeratedModes gives at each point.
uint64_t EnumeratedModesPerPoint();

// A workload that one function runs and checks from a crash state (the
// pipeline's, the rewind's).
using CheckFunction = std::function<StateResult(const CrashState&)>;

// The crash-free run (which counts the I/O calls), then every call x every
// mode; after each crash for which `nest(call, mode)` holds, the recovery
// crashed again at each of its first `max_recovery_calls` calls (while
// reached).
CrashFigures EnumerateCheckedCrashes(const std::string& name, const CheckFunction& check,
                                     const std::function<bool(uint64_t call, CrashMode mode)>& nest,
                                     uint64_t max_recovery_calls);

// `cycles` random crash points and modes from consecutive seeds (mixed with
// `salt`); one in `nest_one_in` crashed again during recovery, at one of its
// first `max_recovery_call` calls (at its end when recovery was shorter).
CrashFigures RunCheckedCampaign(const std::string& name, const CheckFunction& check, uint64_t first_seed,
                                uint64_t cycles, uint64_t salt, uint64_t nest_one_in, uint64_t max_recovery_call);
// "[crash] NAME campaign: seeds FIRST-LAST", the line that replays it.
void PrintCampaignSeeds(const std::string& name, const CampaignSeeds& seeds);

// `cycles` random workloads from consecutive seeds starting at `first_seed`,
// each crashed at a random point in a random mode, with occasional media
// faults and failed fsyncs.
CrashFigures RunCampaign(uint64_t first_seed, uint64_t cycles);

}  // namespace spool::crashtest
