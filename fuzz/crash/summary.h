// The figures of crash runs (the README's crash-safety section: crash points per workload, states
// checked, recoveries, cycles and their rate, media faults, kill points,
// violations), summed per family and workload, printed as a table and
// written and read as JSON — by spool-crashfuzz, and by the crash tests
// when SPOOL_CRASH_FIGURES_DIR names a directory (so CI prints the figures
// of the runs it made, merged, at the end of its log).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "blackbox.h"
#include "crash_enumerator.h"

namespace spool::crashtest {

// Per workload (or campaign), summed over the runs.
struct Summary {
  std::map<std::string, CrashFigures> by_workload;  // key: "family/workload"
  uint64_t cycles = 0;                              // random cycles run
  double seconds = 0;
  std::optional<BlackboxFigures> blackbox;  // --blackbox's own figures
};

// Adds `f`'s counts to `*into`, and its first failures, each after `prefix`.
void Accumulate(const CrashFigures& f, const std::string& prefix, CrashFigures* into);
void AddToSummary(Summary* summary, const std::string& family, const CrashFigures& f);

std::string SummaryToJson(const Summary& summary);
// Adds a summary's JSON to `*summary`. Errors: InvalidArgument.
Status MergeSummaryJson(const std::string& text, Summary* summary);

// Prints the table, media faults, blackbox and kill-point figures, cycles
// and every violation kept; writes the JSON to `json_path` unless empty.
// Returns 0, 1 (violations) or 2 (the JSON could not be written).
int ReportSummary(const Summary& summary, const std::string& json_path);

// With SPOOL_CRASH_FIGURES_DIR set: writes `figures` there as a summary of
// its own (`campaign`: its crash points are random cycles).
void RecordFigures(const std::string& family, const CrashFigures& figures, bool campaign);

}  // namespace spool::crashtest
