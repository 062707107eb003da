// Crash enumeration over a rewind (DESIGN.md §6 and §10): the exactly-once
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
#pragma once

#include <cstdint>

#include "crash_enumerator.h"

namespace spool::crashtest {

enum class RewindScope { kWholePipeline, kSubset, kUndo };
// "rewind", "rewind-subset", "rewind-undo": how figures name the workload.
const char* RewindScopeName(RewindScope scope);

StateResult CheckRewindState(RewindScope scope, const CrashState& state);
// Every crash point x every mode; with `crash_recovery`, the retried rewind
// crashed again at each of its first calls after some of them.
CrashFigures EnumerateRewindCrashes(RewindScope scope, bool crash_recovery);
CrashFigures RunRewindCampaign(RewindScope scope, uint64_t first_seed, uint64_t cycles);

}  // namespace spool::crashtest
