// Crash enumeration over the pipeline runtime (DESIGN.md §10 invariant 6):
// a pipeline with a files and a topic source, a filter, a grouped
// aggregate, a dedup, a lookup join and an AUTO CDC target runs an update on
// a FaultEnv (store log, event log, inputs) with its LMDB state in a real
// temporary directory. It is crashed at one I/O call in one crash mode
// (optionally crashed again during the recovery that follows), reopened,
// and updated again to the end. Every dataset must then equal the one of a
// crash-free run on the same input, row for row and in order; a difference
// is classified as lost, duplicated or reordered rows.
#pragma once

#include <cstdint>

#include "crash_enumerator.h"

namespace spool::crashtest {

// Runs and checks one state ("pipeline call=… mode=… seed=…").
StateResult CheckPipelineState(const CrashState& state);

// Every crash point x every mode; with `crash_recovery`, also the first
// recovery's I/O calls crashed again in the power-loss, reorder and garbage
// modes.
CrashFigures EnumeratePipelineCrashes(bool crash_recovery);

// `cycles` random crash points and modes from consecutive seeds, one in
// five with a second crash during recovery.
CrashFigures RunPipelineCampaign(uint64_t first_seed, uint64_t cycles);

}  // namespace spool::crashtest
