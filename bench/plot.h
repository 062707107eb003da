// The `plot` subcommand: charts of a spool-bench --json file, drawn by
// gnuplot (run as a child process; Debian's gnuplot-nox is enough).
#pragma once

#include <string>
#include <vector>

namespace spool::bench {

struct PlotOptions {
  std::string json_path;       // a file spool-bench --json wrote
  std::string out_dir;         // created with its parents if missing; empty: the current directory
  std::string format = "png";  // "png" (1000×560 pixels) or "svg" (1000×560, resizable)
};

// Reads `options.json_path` and draws into `options.out_dir`, per workload in
// the order workloads first appear in the file:
//   <workload>.<format>           its headline results (x null): a bar per
//                                 row, the median, with a min–max whisker
//   <workload>-latency.<format>   when it has p50_us and p99_us (and maybe
//                                 p999_us) for x null: a cluster per engine
//   <workload>-<metric>.<format>  each scaling series (x not null) of a
//                                 metric with a unit (counts are left out):
//                                 a line per engine over x, min–max whiskers
// Characters other than letters, digits, '.', '-' and '_' in a workload or
// metric become '_' in the file name, and a name taken already gets "-2",
// "-3", …. Each chart's gnuplot script, data inline, is written beside it as
// <name>.gp: `cd out_dir && gnuplot <name>.gp` draws it again. Files of those
// names are overwritten.
//
// Each result needs workload, title, engine, engine_label, metric and unit
// (strings), headline (true or false), x_name (string or null), and x,
// median, min and max (numbers or null); metric_label (a string) is read
// where present, for a series chart's title; other fields are not read. A null
// min or max is taken as the median. Results whose median is null are left
// out; a file with nothing left to draw gives an empty list and writes
// nothing.
//
// Returns the paths of the charts (not of their scripts), in the order above.
// Throws std::runtime_error with a message naming the problem: an unknown
// format; a JSON file missing, unreadable or not JSON; a document without a
// "results" array, or a result lacking a field or holding the wrong type
// (named as results[<index>].<field>); an output directory that cannot be
// created or written; gnuplot not on PATH, failing (its exit status and
// output are in the message) or writing no chart. Input is checked in full
// before anything is written; a gnuplot failure leaves the charts drawn
// before it in place.
//
// Runs gnuplot (fork + exec, `gnuplot` found on PATH) once per chart and waits
// for it; holds no state, so it may be called from any thread.
std::vector<std::string> DrawPlots(const PlotOptions& options);

}  // namespace spool::bench
