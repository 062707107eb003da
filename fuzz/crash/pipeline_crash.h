// Crash enumeration over the pipeline runtime (docs/design.md invariant 6):
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
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "crash_enumerator.h"
#include "spool/rewind/update_request.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"

namespace spool::crashtest {

// The workload's parts, which the rewind crash workload shares.
using CrashTables = std::map<std::string, std::vector<Row>>;  // dataset -> rows in order
// The inputs (files and a topic), written durably to `env`.
Status WriteCrashInputs(Env* env);
// Two more files of orders, after the first.
Status WriteMoreCrashInputs(Env* env);
// Files of orders orders-<first>.jsonl onwards (five orders each), each
// written whole and synced, then their directory: rewriting one gives the
// same bytes.
Status WriteCrashOrderFiles(Env* env, int first, int count);
// `redefined`: the definition a full refresh adopts (revenue's aggregate an
// average: its column, and enriched's, become doubles; their tables and
// revenue's state are created again).
PipelineSpec CrashPipelineSpec(bool redefined = false);
// The store at "/store" on `env`, its LMDB state in `state_dir`.
StoreOptions CrashStoreOptions(Env* env, const std::string& state_dir);
inline constexpr char kCrashStoreDir[] = "/store";
// Opens the store and runs one update (at most `max_batches`, 0: to the
// end); false when the process died or the update failed.
bool RunCrashUpdate(Env* env, const std::string& state_dir, std::string* error, uint64_t max_batches = 0,
                    bool redefined = false);
Status ReadCrashTables(Env* env, const std::string& state_dir, CrashTables* tables);
// Runs an update request once (a crash is not retried in the process).
// Errors: the request's, or Aborted with the update's error unless it
// completed.
Status RunCrashRequest(Store* store, Pipeline* pipeline, const UpdateRequest& request);
// Whether a RESET commit (a full refresh's or a checkpoint reset's) follows
// version `after`: carrying on after a crash runs the request again only
// if not (running a reset twice would reset twice).
Status ResetCommittedSince(Store* store, uint64_t after, bool* reset);
// Visits the log's commits after version `after`, in order. Errors: the
// log's, or `visit`'s (which stops the visit).
Status VisitCommitsSince(Store* store, uint64_t after, const std::function<Status(const LogEntry& entry)>& visit);
Status ReadCrashTables(Store* store, CrashTables* tables);
// What differs between two row lists, as the README's crash-safety section classifies it.
std::string ClassifyRows(const std::vector<Row>& want, const std::vector<Row>& got);
// A new temporary directory (on /dev/shm when there is one); empty on failure.
std::string TempCrashDir();

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
