// One repetition of an engine workload: every engine in turn.
#pragma once

#include <functional>
#include <string>

#include "config.h"
#include "engine.h"

namespace spool::bench {

// One repetition of a workload on one engine: the engine is open on `dir`,
// a directory no earlier run used.
struct EngineRun {
  Engine& engine;
  const std::string& dir;
  int rep = 0;
};

// A raw measurement of the machine's ceiling for a workload, given an empty
// directory. It takes the first turn in every repetition, so that an
// engine's ratio to it compares figures measured minutes, not tens of
// minutes, apart (the speed of a shared machine's disk drifts).
using Baseline = std::function<void(const std::string& dir)>;

// Runs `body` once for each engine of `config`, after `baseline` (if any):
// repetition `rep` of `workload`. Engines take turns, so that drift hits
// them alike. Before each run: a fresh directory, SyncAll() and an open
// engine; after it: the engine closed (bodies may close it earlier, e.g. to
// measure its files) and the directory removed.
void ForEachEngineRun(const BenchConfig& config, const std::string& workload, int rep, const EngineOptions& options,
                      const std::function<void(EngineRun&)>& body, const Baseline& baseline = nullptr);

}  // namespace spool::bench
