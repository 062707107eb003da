// The mixed crash workload (issue 7): the exactly-once pipeline of
// pipeline_crash.h driven through a random sequence of what its operators
// do — updates of a few batches or to the end, rewind points, rewinds of
// the whole pipeline and of some datasets to those points, undos, full
// refreshes and checkpoint resets — with more input arriving between them,
// and a final update to the end. Each cycle draws the sequence from its
// seed, runs it once without a crash (the reference), then again crashed at
// a random I/O call in a random crash mode (sometimes crashed again while
// carrying on). Carrying on after the crash is what an operator does: the
// interrupted operation again (a refresh or reset only if its RESET commit
// is not in the log; a refused one stays refused), then the rest of the
// sequence. Invariants: the store recovers, and every dataset at the end
// equals the reference's, row for row and in order (nothing lost,
// duplicated or reordered, whatever was interrupted).
#pragma once

#include <cstdint>
#include <string>

#include "crash_enumerator.h"

namespace spool::crashtest {

// "mixed-42": the sequence of seed 42, as figures and replay lines name it.
std::string MixedWorkloadName(uint64_t seed);
// Runs and checks one crash state of the sequence of `seed`.
StateResult CheckMixedState(uint64_t seed, const CrashState& state);
// `cycles` sequences from consecutive seeds, each crashed at a random point.
CrashFigures RunMixedCampaign(uint64_t first_seed, uint64_t cycles);

}  // namespace spool::crashtest
