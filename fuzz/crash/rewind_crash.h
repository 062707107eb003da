// Crash enumeration over a rewind (docs/design.md, sections 10 and 11): the exactly-once
// pipeline of pipeline_crash.h runs part of its input, records a rewind
// point, runs to the end; then the rewind to that point runs on a FaultEnv
// and is crashed at one I/O call in one crash mode (optionally crashed again
// in the retried rewind). The rewind is of the whole pipeline (a log cut) or
// of some datasets (one RESTORE commit: orders and what it cascades to,
// while events and latest stay). After the crash:
//   atomic          a whole rewind left the store either before the cut
//                   (its newest version and epoch as before) or at the
//                   point (a later epoch), never a cut version again; a
//                   subset rewind left either no RESTORE commit or one,
//                   with the tables of an uninterrupted rewind;
//   guard           a rewind_started event without rewind_completed is
//                   reported as an incomplete rewind, and a completed one
//                   left the store at the point;
//   converges       rewinding again gives the tables of an uninterrupted
//                   rewind, row for row, and clears the incomplete rewind;
//   replay          the next update gives the tables of a run without any
//                   rewind (nothing lost or duplicated).
// Undo: the whole pipeline rewound, then the undo crashed. After the crash
// the tables are still rewound, or undone (those of the run without any
// rewind), or an incomplete rewind is reported; undoing again gives the
// run's tables, as does the next update.
// By timestamp: the whole pipeline (or the same datasets) rewound to a time
// between the point's commits and the next ones (the log's version at that
// time; no state copy is kept for it, so a whole rewind rebuilds the state
// from a snapshot), checked as the rewind to the point.
// Full refresh and checkpoint reset, the reference's other ways back: more
// input arrives after the run, then an update request with full_refresh
// (every dataset truncated, every checkpoint reset) or
// reset_checkpoint_selection ["revenue"] (its checkpoint and state reset,
// its table kept) runs and is crashed. After recovery, the request is run
// again if its RESET commit is not in the log, or a plain update runs if it
// is; the tables must equal a crash-free run of the request's, row for row,
// as must the tables after one more update. Full refresh adopting a new
// definition: the same, the request run with a definition whose aggregate
// changed its output type, so that its FULL REFRESH commit creates revenue,
// enriched and revenue's state table again (the schema change it records);
// every later update runs that definition.
#pragma once

#include <cstdint>

#include "crash_enumerator.h"

namespace spool::crashtest {

enum class RewindScope {
  kWholePipeline,
  kSubset,
  kUndo,
  kTimestamp,
  kSubsetTimestamp,
  kFullRefresh,
  kCheckpointReset,
  kFullRefreshRedefined,
};
inline constexpr RewindScope kAllRewindScopes[] = {RewindScope::kWholePipeline,
                                                   RewindScope::kSubset,
                                                   RewindScope::kUndo,
                                                   RewindScope::kTimestamp,
                                                   RewindScope::kSubsetTimestamp,
                                                   RewindScope::kFullRefresh,
                                                   RewindScope::kCheckpointReset,
                                                   RewindScope::kFullRefreshRedefined};
// "rewind", "rewind-subset", "rewind-undo", "rewind-timestamp",
// "rewind-subset-timestamp", "full-refresh", "checkpoint-reset",
// "full-refresh-redefined": how figures name the workload.
const char* RewindScopeName(RewindScope scope);

StateResult CheckRewindState(RewindScope scope, const CrashState& state);
// Every crash point x every mode; with `crash_recovery`, the retried rewind
// crashed again at each of its first calls after some of them.
CrashFigures EnumerateRewindCrashes(RewindScope scope, bool crash_recovery);
CrashFigures RunRewindCampaign(RewindScope scope, uint64_t first_seed, uint64_t cycles);

}  // namespace spool::crashtest
