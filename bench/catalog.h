// What a result means, for readers other than the workload that made it
// (the JSON file, its charts, the report's labels): a workload's title, a
// metric's unit and direction, a row's label, and which metrics headline a
// workload (its bar chart).
#pragma once

#include <string>
#include <string_view>

namespace spool::bench {

struct MetricInfo {
  std::string label;  // the name in words, without its unit: "rewind", "commits per sync"
  std::string unit;   // "commits/s", "µs", "s", "MB", "× payload", … ("" for a count)
  bool higher_is_better = false;
};

// Read off the metric's name: "<what>_per_s" (or "<what>_per_s_<qualifier>")
// is a rate of <what>, "_us" microseconds, "_s" seconds, "_mb" megabytes
// (10^6 bytes), "_per_payload_byte" a multiple of the payload,
// "_per_fresh" a multiple of a fresh store's bytes, "ratio" a factor;
// anything else a count.
MetricInfo DescribeMetric(std::string_view metric);

// The workload's name as the report and the charts title it ("W1: one
// writer, durable commits of one record"); the id itself when unknown.
std::string WorkloadTitle(std::string_view workload);

// Whether `metric` is one of the figures a workload is judged by (its bar
// chart shows them); false for every metric of an unknown workload.
bool IsHeadline(std::string_view workload, std::string_view metric);

// A row's label in `workload`: an engine's display name, or what a row of
// raw measurements or one of Spool's variants is.
std::string RowLabel(std::string_view workload, std::string_view row);

}  // namespace spool::bench
